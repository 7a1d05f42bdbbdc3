#include "io/source.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/error.h"
#include "base/grow.h"
#include "base/thread.h"

#define CHUNK (1u << 20)

/* gzip input is decompressed a chunk at a time (up to CHUNK bytes; from a
 * pipe, what has arrived), on a thread of its own when threads are
 * allowed: a ring of RING chunks made ahead.  A reader sees every byte
 * that decompressed before a failure of the compressed data, and the
 * failure when it asks for more, so what it sees does not depend on how
 * the chunks fall, nor on that thread. */
#define RING 4

typedef struct chunk {
    uint8_t *data;
    size_t len, pos;
    int status;          /* 0, or the negative pc_status the chunk ends in */
    pc_error err;
    int eof;             /* the stream ends with this chunk */
    uint64_t raw_read;   /* input read once it was made */
    int full;            /* made, not yet used up (the ring's state) */
} chunk;

struct pc_input {
    char *name;
    int fd;               /* -1 for memory input */
    int close_fd;
    const uint8_t *mem;   /* memory input: the raw bytes */
    size_t mem_size, mem_pos;

    uint8_t *buf;         /* decoded window; == mem for plain memory input */
    size_t pos, len, cap;
    int owns_buf;
    uint64_t base;        /* stream offset of buf[0] */
    int eof;              /* no more decoded bytes will arrive */
    int claimed;

    int gzip;
    z_stream zs;
    uint8_t *zin;         /* compressed staging for fd input */
    size_t zin_cap;
    int zs_ready;         /* inflateInit2 done */
    int member_done;      /* the current gzip member has ended */

    /* Chunks of gzip input: one made in place, or RING made ahead. */
    chunk ring[RING];
    size_t take;          /* the chunk being used (ring index) */
    int taking;           /* take is a chunk from the thread */
    int threads;          /* see src_set_threads */
    int regular;          /* fd is a regular file: reads never wait */
    atomic_int ahead;     /* a thread makes the chunks */
    /* Set by src_interrupt: every wait for input ends ("reading stopped").
     * A pipe or terminal is read through poll() with wake[0], which
     * src_interrupt writes to, so that a read waiting for more does not
     * keep the conversion from ending. */
    atomic_int stop;
    int wake[2];
    uint64_t ahead_raw;   /* that thread's count of input read */
    pthread_t ahead_th;
    pthread_mutex_t mu;
    pthread_cond_t cv;

    uint64_t raw_read;    /* bytes read from the file or memory so far */
    uint64_t raw_size;    /* the file's size, or 0 when unknown */
    uint64_t next_report; /* raw_read at which to call progress next */
    src_progress_fn progress;
    void *progress_ctx;
};

/* Progress is told at most once a MiB of input read. */
#define REPORT_EVERY (1u << 20)

static void count_read(pc_input *in, size_t n)
{
    if (in->ahead) {
        /* On the read-ahead thread: told when the chunk is taken. */
        in->ahead_raw += n;
        return;
    }
    in->raw_read += n;
    if (in->progress && in->raw_read >= in->next_report) {
        while (in->next_report <= in->raw_read)
            in->next_report += REPORT_EVERY;
        in->progress(in->progress_ctx, in->raw_read, in->raw_size);
    }
}

static int io_fail(pc_input *in, pc_error *err, const char *what)
{
    return -pc_fail(err, PC_EIO, "%s: %s: %s", in->name, what, strerror(errno));
}

/* Reads raw (possibly compressed) bytes.  Returns the count, 0 at end of
 * input, -1 on error. */
static ssize_t raw_read(pc_input *in, uint8_t *dst, size_t n)
{
    if (in->fd < 0) {
        size_t left = in->mem_size - in->mem_pos;
        if (n > left)
            n = left;
        memcpy(dst, in->mem + in->mem_pos, n);
        in->mem_pos += n;
        count_read(in, n);
        return (ssize_t)n;
    }
    for (;;) {
        if (atomic_load_explicit(&in->stop, memory_order_relaxed)) {
            errno = ECANCELED;
            return -1;
        }
        if (in->wake[0] >= 0) {
            struct pollfd pf[2] = {{in->fd, POLLIN, 0}, {in->wake[0], POLLIN, 0}};
            if (poll(pf, 2, -1) < 0) {
                if (errno == EINTR)
                    continue;
                return -1;
            }
            if (pf[1].revents)
                continue;  /* stopped: said at the top */
        }
        ssize_t r = read(in->fd, dst, n);
        if (r < 0 && errno == EAGAIN && in->wake[0] >= 0)
            continue;  /* another reader took it: wait again */
        if (r > 0)
            count_read(in, (size_t)r);
        if (r >= 0 || errno != EINTR)
            return r;
    }
}

static int alloc_input(pc_input **out, const char *name, pc_error *err)
{
    pc_input *in = calloc(1, sizeof *in);
    if (in)
        in->name = pc_strdup(name);
    if (!in || !in->name) {
        free(in);
        return pc_fail(err, PC_ENOMEM, "%s: out of memory", name);
    }
    in->fd = -1;
    in->wake[0] = in->wake[1] = -1;
    in->threads = 1;  /* pc_convert allows more */
    *out = in;
    return PC_OK;
}

static int grow_window(pc_input *in, pc_error *err)
{
    size_t cap = in->cap ? in->cap * 2 : CHUNK;
    if (cap < in->cap) {
        errno = ENOMEM;
        return -pc_fail(err, PC_ENOMEM, "%s: out of memory (the input window cannot grow)", in->name);
    }
    uint8_t *b = realloc(in->buf, cap);
    if (!b)
        return -pc_fail(err, PC_ENOMEM, "%s: out of memory", in->name);
    in->buf = b;
    in->cap = cap;
    return 0;
}

static int start_gzip(pc_input *in, pc_error *err)
{
    memset(&in->zs, 0, sizeof in->zs);
    /* 16 + MAX_WBITS: gzip wrapper only, so a zlib stream is not mistaken
     * for one. */
    if (inflateInit2(&in->zs, 16 + MAX_WBITS) != Z_OK)
        return -pc_fail(err, PC_ENOMEM, "%s: cannot start gzip decoder", in->name);
    in->zs_ready = 1;
    in->gzip = 1;
    return 0;
}

/* Supplies the decoder with more compressed bytes; 0 at end of input. */
static int feed_gzip(pc_input *in, pc_error *err)
{
    if (in->zs.avail_in)
        return 1;
    if (in->fd < 0) {
        size_t left = in->mem_size - in->mem_pos;
        if (!left)
            return 0;
        if (left > UINT32_MAX / 2)
            left = UINT32_MAX / 2;
        in->zs.next_in = (Bytef *)(in->mem + in->mem_pos);
        in->zs.avail_in = (uInt)left;
        in->mem_pos += left;
        count_read(in, left);
        return 1;
    }
    ssize_t r = raw_read(in, in->zin, in->zin_cap);
    if (r < 0)
        return io_fail(in, err, "read failed");
    in->zs.next_in = in->zin;
    in->zs.avail_in = (uInt)r;
    return r > 0;
}

static int fill_gzip(pc_input *in, chunk *c, pc_error *err);

/* Decodes into c until it is full, the stream ends (c->eof) or fails
 * (c->status). */
static void make_chunk(pc_input *in, chunk *c)
{
    c->len = c->pos = 0;
    c->status = 0;
    c->eof = 0;
    /* A pipe's reader is not kept waiting for a whole chunk. */
    int stream = in->fd >= 0 && in->raw_size == 0;
    while (c->len < CHUNK && !c->eof && !c->status && !(stream && c->len)) {
        if (atomic_load_explicit(&in->stop, memory_order_relaxed)) {
            c->status = -pc_fail(&c->err, PC_EIO, "%s: reading stopped", in->name);
            break;
        }
        int r = fill_gzip(in, c, &c->err);
        if (r < 0)
            c->status = r;
    }
    c->raw_read = in->ahead ? in->ahead_raw : in->raw_read;
}

/* Decodes until at least one more byte is in c or the stream ends. */
static int fill_gzip(pc_input *in, chunk *c, pc_error *err)
{
    size_t before = c->len;
    while (c->len == before) {
        int more;
        if (in->member_done) {
            if ((more = feed_gzip(in, err)) < 0)
                return more;
            if (!more) {
                c->eof = 1;
                return 0;
            }
            /* Another member may follow (as `cat a.gz b.gz` makes); anything
             * else after the stream is corrupt. */
            if (in->zs.next_in[0] != 0x1f)
                return -pc_fail(err, PC_EINPUT,
                                "%s: compressed offset %lu: trailing data after the gzip stream",
                                in->name, in->zs.total_in);
            inflateReset(&in->zs);
            in->member_done = 0;
        }
        if ((more = feed_gzip(in, err)) < 0)
            return more;
        if (!more)
            return -pc_fail(err, PC_EINPUT,
                            "%s: compressed offset %lu: gzip data is truncated",
                            in->name, in->zs.total_in);
        in->zs.next_out = c->data + c->len;
        in->zs.avail_out = (uInt)(CHUNK - c->len);
        int z = inflate(&in->zs, Z_NO_FLUSH);
        c->len = (size_t)(in->zs.next_out - c->data);
        if (z == Z_STREAM_END)
            in->member_done = 1;
        else if (z != Z_OK && z != Z_BUF_ERROR)
            return -pc_fail(err, PC_EINPUT,
                            "%s: compressed offset %lu: corrupt gzip data (%s)",
                            in->name, in->zs.total_in,
                            in->zs.msg ? in->zs.msg : "inflate failed");
    }
    return 0;
}

static void *read_ahead(void *arg)
{
    pc_input *in = arg;
    pthread_mutex_lock(&in->mu);
    for (size_t k = 0;; k = (k + 1) % RING) {
        chunk *c = &in->ring[k];
        while (c->full && !atomic_load(&in->stop))
            pthread_cond_wait(&in->cv, &in->mu);
        if (atomic_load(&in->stop))
            break;
        pthread_mutex_unlock(&in->mu);
        make_chunk(in, c);
        pthread_mutex_lock(&in->mu);
        c->full = 1;
        pthread_cond_broadcast(&in->cv);
        if (c->eof || c->status)
            break;
    }
    pthread_mutex_unlock(&in->mu);
    return NULL;
}

/* Starts the read-ahead thread, when allowed and to be had. */
static void start_ahead(pc_input *in)
{
    for (int i = 0; i < RING; i++)
        if (!in->ring[i].data && !(in->ring[i].data = malloc(CHUNK)))
            return;
    if (pthread_mutex_init(&in->mu, NULL) != 0)
        return;
    if (pthread_cond_init(&in->cv, NULL) != 0) {
        pthread_mutex_destroy(&in->mu);
        return;
    }
    in->ahead_raw = in->raw_read;
    in->ahead = 1;
    if (pc_thread_start(&in->ahead_th, read_ahead, in) != 0) {
        in->ahead = 0;
        pthread_cond_destroy(&in->cv);
        pthread_mutex_destroy(&in->mu);
    }
}

static void stop_ahead(pc_input *in)
{
    if (!in->ahead)
        return;
    src_interrupt(in);
    pthread_join(in->ahead_th, NULL);
    pthread_cond_destroy(&in->cv);
    pthread_mutex_destroy(&in->mu);
    in->ahead = 0;
}

/* Moves decompressed bytes from the current chunk into the window (which
 * has room), taking the next chunk when it is used up; a failure comes
 * once the bytes before it are taken. */
static int take_gzip(pc_input *in, pc_error *err)
{
    chunk *c = &in->ring[in->take];
    /* With the thread, a chunk is this thread's to read only once taken. */
    if ((in->ahead && !in->taking) || (c->pos == c->len && !c->eof && !c->status)) {
        if (in->ahead) {
            /* The chunk used up goes back to the thread; the next comes. */
            pthread_mutex_lock(&in->mu);
            if (in->taking) {
                c->full = 0;
                pthread_cond_broadcast(&in->cv);
                in->take = (in->take + 1) % RING;
                c = &in->ring[in->take];
            }
            while (!c->full && !atomic_load(&in->stop))
                pthread_cond_wait(&in->cv, &in->mu);
            /* Taken only once made: a call after a stop finds none. */
            int full = c->full;
            in->taking = full;
            pthread_mutex_unlock(&in->mu);
            if (!full)
                return -pc_fail(err, PC_EIO, "%s: reading stopped", in->name);
        } else {
            if (!c->data && !(c->data = malloc(CHUNK)))
                return -pc_fail(err, PC_ENOMEM, "%s: out of memory", in->name);
            make_chunk(in, c);
        }
        if (c->raw_read > in->raw_read) {
            in->raw_read = c->raw_read;
            if (in->progress && in->raw_read >= in->next_report) {
                while (in->next_report <= in->raw_read)
                    in->next_report += REPORT_EVERY;
                in->progress(in->progress_ctx, in->raw_read, in->raw_size);
            }
        }
    }
    size_t k = c->len - c->pos, room = in->cap - in->len;
    if (k > room)
        k = room;
    if (k)
        memcpy(in->buf + in->len, c->data + c->pos, k);
    c->pos += k;
    in->len += k;
    if (k)
        return 0;
    if (c->status) {
        *err = c->err;
        return c->status;
    }
    if (c->eof)
        in->eof = 1;
    return 0;
}

static int fill_plain(pc_input *in, pc_error *err)
{
    ssize_t r = raw_read(in, in->buf + in->len, in->cap - in->len);
    if (r < 0)
        return io_fail(in, err, "read failed");
    if (r == 0)
        in->eof = 1;
    in->len += (size_t)r;
    return 0;
}

int src_need(pc_input *in, size_t n, pc_error *err)
{
    if (in->len - in->pos >= n)
        return 1;
    if (!in->owns_buf)
        return 0;
    if (in->pos) {
        memmove(in->buf, in->buf + in->pos, in->len - in->pos);
        in->base += in->pos;
        in->len -= in->pos;
        in->pos = 0;
    }
    while (in->len < n && !in->eof) {
        int r;
        /* Grow only when the window is full of real data. */
        if (in->len == in->cap && (r = grow_window(in, err)) < 0)
            return r;
        if (in->gzip && !in->ahead && in->threads != 1 && !in->ring[0].data &&
            !in->ring[0].eof && (in->fd < 0 || in->regular || in->wake[0] >= 0))
            start_ahead(in);
        r = in->gzip ? take_gzip(in, err) : fill_plain(in, err);
        if (r < 0)
            return r;
    }
    return in->len >= n;
}

const uint8_t *src_ptr(const pc_input *in)
{
    return in->buf + in->pos;
}

size_t src_avail(const pc_input *in)
{
    return in->len - in->pos;
}

void src_skip(pc_input *in, size_t n)
{
    in->pos += n;
}

uint64_t src_offset(const pc_input *in)
{
    return in->base + in->pos;
}

uint64_t src_size_hint(const pc_input *in)
{
    return in->gzip ? 0 : in->raw_size;
}

const char *src_name(const pc_input *in)
{
    return in->name;
}

int src_fail_at(const pc_input *in, pc_error *err, uint64_t offset,
                const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return pc_fail(err, PC_EINPUT, "%s: offset %llu%s: %s", in->name,
                   (unsigned long long)offset,
                   in->gzip ? " of the decompressed data" : "", what);
}

int src_claim(pc_input *in)
{
    if (in->claimed)
        return 0;
    in->claimed = 1;
    return 1;
}

/* Looks at the first bytes to choose between plain and gzip decoding. */
static int detect(pc_input *in, pc_error *err)
{
    static const uint8_t magic[3] = {0x1f, 0x8b, 0x08};
    if (in->fd < 0) {
        if (in->mem_size >= 3 && memcmp(in->mem, magic, 3) == 0) {
            in->owns_buf = 1;
            return start_gzip(in, err);
        }
        in->buf = (uint8_t *)in->mem;
        in->len = in->mem_size;
        in->eof = 1;
        in->raw_read = in->mem_size;  /* all of it is at hand already */
        return 0;
    }
    in->owns_buf = 1;
    int r = grow_window(in, err);
    if (r < 0)
        return r;
    while (in->len < 3 && !in->eof)
        if ((r = fill_plain(in, err)) < 0)
            return r;
    if (in->len < 3 || memcmp(in->buf, magic, 3) != 0)
        return 0;
    /* Move what was read into the compressed staging area. */
    in->zin_cap = CHUNK;
    in->zin = malloc(in->zin_cap);
    if (!in->zin)
        return -pc_fail(err, PC_ENOMEM, "%s: out of memory", in->name);
    memcpy(in->zin, in->buf, in->len);
    if ((r = start_gzip(in, err)) < 0)
        return r;
    in->zs.next_in = in->zin;
    in->zs.avail_in = (uInt)in->len;
    in->len = 0;
    in->eof = 0;
    return 0;
}

int pc_input_open(pc_input **out, const char *path, pc_error *err)
{
    pc_input *in;
    int is_stdin = strcmp(path, "-") == 0;
    int st = alloc_input(&in, is_stdin ? "<stdin>" : path, err);
    if (st)
        return st;
    if (is_stdin) {
        in->fd = STDIN_FILENO;
    } else {
        in->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (in->fd < 0) {
            st = pc_fail(err, PC_EIO, "%s: cannot open: %s", path, strerror(errno));
            pc_input_close(in);
            return st;
        }
        in->close_fd = 1;
        struct stat sb;
        if (fstat(in->fd, &sb) == 0 && S_ISREG(sb.st_mode))
            in->raw_size = (uint64_t)sb.st_size;
    }
    if ((st = detect(in, err)) < 0) {
        pc_input_close(in);
        return -st;
    }
    *out = in;
    return PC_OK;
}

int pc_input_open_memory(pc_input **out, const void *data, size_t size,
                         const char *name, pc_error *err)
{
    pc_input *in;
    int st = alloc_input(&in, name ? name : "<memory>", err);
    if (st)
        return st;
    in->mem = data;
    in->mem_size = size;
    in->raw_size = size;
    if ((st = detect(in, err)) < 0) {
        pc_input_close(in);
        return -st;
    }
    *out = in;
    return PC_OK;
}

void pc_input_close(pc_input *in)
{
    if (!in)
        return;
    stop_ahead(in);
    for (int i = 0; i < RING; i++)
        free(in->ring[i].data);
    for (int i = 0; i < 2; i++)
        if (in->wake[i] >= 0)
            close(in->wake[i]);
    if (in->zs_ready)
        inflateEnd(&in->zs);
    if (in->close_fd)
        close(in->fd);
    if (in->owns_buf)
        free(in->buf);
    free(in->zin);
    free(in->name);
    free(in);
}

void src_get_progress(const pc_input *in, src_progress_fn *fn, void **ctx)
{
    *fn = in->progress;
    *ctx = in->progress_ctx;
}

static void relay_note(void *ctx, uint64_t done, uint64_t total)
{
    src_relay *r = ctx;
    atomic_store_explicit(&r->total, total, memory_order_relaxed);
    atomic_store_explicit(&r->done, done, memory_order_relaxed);
}

void src_relay_begin(pc_input *in, src_relay *r)
{
    atomic_init(&r->done, 0);
    atomic_init(&r->total, 0);
    r->told = 0;
    src_get_progress(in, &r->fn, &r->ctx);
    if (r->fn)
        src_set_progress(in, relay_note, r);
}

void src_relay_tell(src_relay *r)
{
    uint64_t done = atomic_load_explicit(&r->done, memory_order_relaxed);
    if (r->fn && done > r->told) {
        r->told = done;
        r->fn(r->ctx, done, atomic_load_explicit(&r->total, memory_order_relaxed));
    }
}

void src_relay_end(pc_input *in, src_relay *r)
{
    src_set_progress(in, r->fn, r->ctx);
}

void src_set_progress(pc_input *in, src_progress_fn fn, void *ctx)
{
    in->progress = fn;
    in->progress_ctx = ctx;
    in->next_report = (in->raw_read / REPORT_EVERY + 1) * REPORT_EVERY;
}

void src_report_end(pc_input *in)
{
    if (in->progress)
        in->progress(in->progress_ctx, in->raw_read, in->raw_size);
}

void src_set_threads(pc_input *in, int threads)
{
    in->threads = threads;
    /* With other threads reading, a pipe or terminal is read through
     * poll(), so that src_interrupt can end a wait for it.  Without a
     * wake-up pipe it is read as before. */
    struct stat sb;
    in->regular = in->fd >= 0 && fstat(in->fd, &sb) == 0 && S_ISREG(sb.st_mode);
    if (threads != 1 && in->fd >= 0 && !in->regular && in->wake[0] < 0 &&
        pipe(in->wake) == 0) {
        for (int i = 0; i < 2; i++)
            fcntl(in->wake[i], F_SETFD, FD_CLOEXEC);
    }
}

void src_interrupt(pc_input *in)
{
    /* Once: the wake-up pipe gets one byte, and is never drained. */
    if (atomic_exchange(&in->stop, 1))
        return;
    if (in->wake[1] >= 0) {
        ssize_t w = write(in->wake[1], "x", 1);
        (void)w;
    }
    if (in->ahead) {
        pthread_mutex_lock(&in->mu);
        pthread_cond_broadcast(&in->cv);
        pthread_mutex_unlock(&in->mu);
    }
}

void src_done(pc_input *in)
{
    stop_ahead(in);
}
