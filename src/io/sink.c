/* renameat2 and RENAME_NOREPLACE (put_in_place). */
#define _GNU_SOURCE
#include "io/sink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/grow.h"
#include "io/gzip.h"

#define BUF_SIZE (1u << 20)
/* The buffer's pages are mapped this many bytes at a time as the first
 * block is written (see map_more). */
#define MAP_STEP (64u << 10)

struct pc_sink {
    struct sink_room room;  /* first: the writers' inline view (sink.h) */
    /* A block's bytes; room.size is less while the buffer's pages are
     * mapped a step at a time, up to mapped bytes (see map_more). */
    size_t block, mapped;
    char *path;        /* target, for messages and the final rename */
    char *tmp;         /* temporary file, NULL for stdout and memory */
    int fd;            /* -1 for memory */
    int close_fd;      /* a device or pipe opened by path */

    int gzip_level;    /* 0: no gzip */
    int threads;       /* for compression: see sink_set_threads() */
    pc_gzip *gz;       /* made at the first flush */

    unsigned char *mem;  /* memory sink: everything written so far */
    size_t mem_len, mem_cap;

    int failed;        /* a pc_status once something went wrong */
    char msg[512];
    uint64_t flushed;  /* uncompressed bytes handed on so far */
    int partial;       /* slot of tmp among the partial outputs, or -1 */
    int discard;       /* a counting sink: bytes are dropped */
};

static void fail_errno(pc_sink *s, int status, const char *what)
{
    if (s->failed)
        return;
    s->failed = status;
    snprintf(s->msg, sizeof s->msg, "%s: %s: %s", s->path, what, strerror(errno));
}

static void emit(pc_sink *s, const uint8_t *p, size_t n)
{
    /* An empty output (folded stacks of no sample) writes nothing, and a
     * memory sink has no buffer to point into yet. */
    if (s->failed || n == 0 || s->discard)
        return;
    if (s->fd < 0) {
        if (s->mem_cap - s->mem_len < n) {
            size_t cap = s->mem_cap ? s->mem_cap : BUF_SIZE;
            while (cap - s->mem_len < n)
                cap *= 2;
            unsigned char *m = realloc(s->mem, cap);
            if (!m) {
                s->failed = PC_ENOMEM;
                snprintf(s->msg, sizeof s->msg, "%s: out of memory for the output", s->path);
                return;
            }
            s->mem = m;
            s->mem_cap = cap;
        }
        memcpy(s->mem + s->mem_len, p, n);
        s->mem_len += n;
        return;
    }
    while (n) {
        ssize_t w = write(s->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            fail_errno(s, PC_EIO, "write failed");
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

static void codec_failed(pc_sink *s)
{
    if (!s->failed) {
        s->failed = PC_EIO;
        snprintf(s->msg, sizeof s->msg, "%s: gzip compression failed", s->path);
    }
}

static void emit_cb(void *ctx, const uint8_t *p, size_t n)
{
    emit(ctx, p, n);
}

/* Hands on the first n bytes of the buffer (all of them at the end) and
 * keeps the rest, which is less than a reservation, at its start.  So
 * compressed blocks hold exactly buf_size bytes each, whatever sizes of
 * room the writer asked for: a gzip output depends on its text alone. */
static void flush_n(pc_sink *s, size_t n, int finish)
{
    size_t kept = s->room.len - n;
    s->flushed += n;
    if (s->gzip_level && !s->failed) {
        if (!s->gz && !(s->gz = gz_new(s->gzip_level, s->threads,
                                       s->block + SINK_RESERVE_MAX, emit_cb, s))) {
            s->failed = PC_ENOMEM;
            snprintf(s->msg, sizeof s->msg, "%s: out of memory starting gzip compression", s->path);
        } else if (gz_block(s->gz, s->room.buf, n, finish) < 0) {
            codec_failed(s);
        }
    } else if (!s->gzip_level) {
        emit(s, s->room.buf, n);
    }
    memmove(s->room.buf, s->room.buf + n, kept);
    s->room.len = kept;
}

static void flush(pc_sink *s, int finish)
{
    flush_n(s, finish || s->room.len < s->block ? s->room.len : s->block, finish);
}

/* Maps the buffer's next pages in one call and lets the writers on to
 * them.  Written page by page, 8 MiB of new pages took 22 ms on the
 * virtual machine the benchmarks run on, 11 ms mapped first.  The first
 * step is mapped when the sink opens; a small output maps no further. */
static void map_more(pc_sink *s)
{
    size_t end = s->block + SINK_RESERVE_MAX;
    size_t to = end - s->mapped > MAP_STEP ? s->mapped + MAP_STEP : end;
    pc_prefault(s->room.buf, s->mapped, to);
    s->mapped = to;
    s->room.size = to == end ? s->block : to - SINK_RESERVE_MAX;
}

void sink_block_full(pc_sink *s)
{
    while (s->room.size < s->block && s->room.len >= s->room.size)
        map_more(s);
    if (s->room.len >= s->room.size)
        flush(s, 0);
}

void sink_write(pc_sink *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len) {
        size_t k = s->room.size - s->room.len;
        if (k > len)
            k = len;
        memcpy(s->room.buf + s->room.len, p, k);
        s->room.len += k;
        p += k;
        len -= k;
        if (s->room.len == s->room.size)
            sink_block_full(s);
    }
}

/* The temporary files being written, for pc_remove_partial_outputs(),
 * which a signal handler may call at any moment, while other threads open
 * and finish outputs of their own.  A slot is claimed by one thread alone
 * (compare-and-swap from FREE), filled, and only then marked READY, the
 * one state the handler acts on; lock-free atomics are safe in a handler,
 * where a mutex is not.  Outputs beyond the slots are written all the
 * same, without the clean-up. */
#define PARTIAL_SLOTS 64
enum { SLOT_FREE, SLOT_FILLING, SLOT_READY };
static char partial_path[PARTIAL_SLOTS][4096];
static atomic_int partial_state[PARTIAL_SLOTS];
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the signal handler needs lock-free atomics");

static int partial_add(const char *tmp)
{
    size_t n = strlen(tmp);
    if (n >= sizeof partial_path[0])
        return -1;
    for (int i = 0; i < PARTIAL_SLOTS; i++) {
        int expect = SLOT_FREE;
        if (atomic_compare_exchange_strong(&partial_state[i], &expect, SLOT_FILLING)) {
            memcpy(partial_path[i], tmp, n + 1);
            atomic_store(&partial_state[i], SLOT_READY);
            return i;
        }
    }
    return -1;
}

static void partial_drop(int slot)
{
    if (slot >= 0)
        atomic_store(&partial_state[slot], SLOT_FREE);
}

void pc_remove_partial_outputs(void)
{
    for (int i = 0; i < PARTIAL_SLOTS; i++)
        if (atomic_load(&partial_state[i]) == SLOT_READY)
            unlink(partial_path[i]);
}

/* The temporary name is "." + the target's name + TMP_SUFFIX. */
#define TMP_SUFFIX ".tmp-XXXXXX"
#define TMP_EXTRA (sizeof "." TMP_SUFFIX - 1)

static int make(pc_sink **out, const char *path, int gzip_level, size_t buf_size,
                pc_error *err)
{
    pc_sink *s = calloc(1, sizeof *s);
    if (!s)
        return pc_fail(err, PC_ENOMEM, "%s: out of memory", path);
    s->fd = -1;
    s->partial = -1;
    s->path = pc_strdup(path);
    s->block = buf_size;
    s->room.buf = malloc(buf_size + SINK_RESERVE_MAX);
    if (!s->path || !s->room.buf) {
        sink_abort(s);
        return pc_fail(err, PC_ENOMEM, "%s: out of memory", path);
    }
    map_more(s);
    s->gzip_level = gzip_level > 0 ? gzip_level : 0;
    *out = s;
    return PC_OK;
}

int sink_open_memory(pc_sink **out, int gzip_level, pc_error *err)
{
    return make(out, "<memory>", gzip_level, BUF_SIZE, err);
}

int sink_open_count(pc_sink **out, pc_error *err)
{
    /* A flush only counts, so a few reserves' worth of buffer does: a
     * JSLB file's first pass opens one for each thread in turn, and a
     * megabyte each time is an allocation and its page faults each. */
    int st = make(out, "<count>", 0, 4 * SINK_RESERVE_MAX, err);
    if (st == PC_OK)
        (*out)->discard = 1;
    return st;
}

int sink_open_file(pc_sink **out, const char *path, int gzip_level,
                   pc_error *err)
{
    pc_sink *s;
    int st;
    if (strcmp(path, "-") == 0) {
        if ((st = make(&s, "<stdout>", gzip_level, BUF_SIZE, err)) != PC_OK)
            return st;
        s->fd = STDOUT_FILENO;
        *out = s;
        return PC_OK;
    }
    struct stat sb;
    int exists = stat(path, &sb) == 0;
    /* The temporary name is cut to fit, so only the rename, after all the
     * writing, would find a name too long. */
    if (!exists && errno == ENAMETOOLONG)
        return pc_fail(err, PC_EIO, "%s: cannot create: %s", path, strerror(errno));
    if (exists && S_ISDIR(sb.st_mode))
        return pc_fail(err, PC_EIO, "%s: is a directory", path);
    if ((st = make(&s, path, gzip_level, BUF_SIZE, err)) != PC_OK)
        return st;
    /* Devices and pipes (/dev/null, a FIFO) are written directly: there
     * is no file to replace, and renaming over them would replace the
     * device itself. */
    if (exists && !S_ISREG(sb.st_mode)) {
        s->fd = open(path, O_WRONLY | O_CLOEXEC);
        if (s->fd < 0) {
            st = pc_fail(err, PC_EIO, "%s: cannot open: %s", path, strerror(errno));
            sink_abort(s);
            return st;
        }
        s->close_fd = 1;
        *out = s;
        return PC_OK;
    }
    /* The temporary file sits beside the target so the rename is atomic.
     * Its name adds TMP_EXTRA bytes to the target's, so a target name near
     * NAME_MAX keeps only the head of its name in the temporary one
     * (cut before a UTF-8 continuation byte, for listings); mkstemp's
     * suffix alone makes it unique. */
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dirlen;
    size_t baselen = strlen(base);
    if (baselen > NAME_MAX - TMP_EXTRA) {
        baselen = NAME_MAX - TMP_EXTRA;
        while (baselen > 0 && ((unsigned char)base[baselen] & 0xc0) == 0x80)
            baselen--;
    }
    size_t n = dirlen + baselen + TMP_EXTRA + 1;
    s->tmp = malloc(n);
    if (!s->tmp) {
        sink_abort(s);
        return pc_fail(err, PC_ENOMEM, "%s: out of memory", path);
    }
    snprintf(s->tmp, n, "%.*s.%.*s" TMP_SUFFIX, (int)dirlen, path, (int)baselen, base);
    /* No interruption between creating the file and registering it for
     * pc_remove_partial_outputs(). */
    sigset_t saved;
    sink_hold_signals(&saved);
    s->fd = mkstemp(s->tmp);
    int mk_errno = errno;
    if (s->fd >= 0)
        s->partial = partial_add(s->tmp);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (s->fd < 0) {
        errno = mk_errno;
        st = pc_fail(err, PC_EIO, "%s: cannot create: %s", path, strerror(errno));
        free(s->tmp);
        s->tmp = NULL;
        sink_abort(s);
        return st;
    }
    *out = s;
    return PC_OK;
}

/* mkstemp creates 0600; give the file the mode a plain open() would: a
 * replaced file keeps its permissions, but not setuid, setgid or sticky,
 * as the kernel drops setuid and setgid from a file written in place: a
 * copied setuid bit would hand new, unreviewed content another user's
 * rights. */
static void set_mode(pc_sink *s)
{
    struct stat sb;
    mode_t mode;
    if (stat(s->path, &sb) == 0) {
        mode = sb.st_mode & 0777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    if (fchmod(s->fd, mode) < 0)
        fail_errno(s, PC_EIO, "cannot set permissions");
}

/* Renames the finished temporary file to the target's name; -1 with
 * errno when it cannot.  A rename over a file makes ext4 write the
 * renamed file's data out first (its guard for files replaced this way,
 * auto_da_alloc): an output written again to the same name took 5 ms
 * longer for 7 MB, and 30 ms for 57 MB, than one to a new name.  So the
 * file there is moved aside first, to a name beside it that nothing
 * holds (renamed without replacing), the new one renamed in, and the old
 * one removed; if the new one cannot go in, the old one goes back.
 * Signals wait meanwhile, so that an interruption cannot leave the old
 * file aside.  Where the old file cannot be moved so (no file there, a
 * system without such a rename), the new one replaces it. */
static int put_in_place(pc_sink *s)
{
#ifdef RENAME_NOREPLACE
    /* The temporary name with its suffix's ".tmp-" made ".old-": the
     * target's own name may hold ".tmp-" too. */
    size_t n = strlen(s->tmp) + 1;
    char *aside = malloc(n);
    if (!aside)
        return rename(s->tmp, s->path);
    memcpy(aside, s->tmp, n);
    memcpy(aside + n - sizeof TMP_SUFFIX, ".old-", 5);
    sigset_t saved;
    sink_hold_signals(&saved);
    int moved = renameat2(AT_FDCWD, s->path, AT_FDCWD, aside, RENAME_NOREPLACE) == 0;
    int st = rename(s->tmp, s->path), e = errno;
    if (moved && st == 0)
        (void)unlink(aside);
    else if (moved)
        (void)rename(aside, s->path);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    free(aside);
    errno = e;
    return st;
#else
    return rename(s->tmp, s->path);
#endif
}

int sink_finish(pc_sink *s, unsigned char **data, size_t *size, pc_error *err)
{
    flush(s, 1);
    if (s->tmp && !s->failed) {
        set_mode(s);
        if (close(s->fd) < 0)
            fail_errno(s, PC_EIO, "write failed");
        s->fd = -2;
        if (!s->failed && put_in_place(s) < 0)
            fail_errno(s, PC_EIO, "cannot rename the finished file into place");
        if (!s->failed) {
            partial_drop(s->partial);
            s->partial = -1;
            free(s->tmp);
            s->tmp = NULL;
        }
    }
    if (s->close_fd) {
        if (close(s->fd) < 0)
            fail_errno(s, PC_EIO, "write failed");
        s->close_fd = 0;
    }
    if (s->failed) {
        int st = pc_fail(err, s->failed, "%s", s->msg);
        sink_abort(s);
        return st;
    }
    if (data) {
        *data = s->mem;
        *size = s->mem_len;
        s->mem = NULL;
    }
    sink_abort(s);
    return PC_OK;
}

void sink_abort(pc_sink *s)
{
    if (!s)
        return;
    gz_free(s->gz);
    if (s->tmp) {
        if (s->fd >= 0)
            close(s->fd);
        unlink(s->tmp);
        partial_drop(s->partial);
    }
    if (s->close_fd)
        close(s->fd);
    free(s->tmp);
    free(s->path);
    free(s->room.buf);
    free(s->mem);
    free(s);
}

void sink_move(pc_sink *from, pc_sink *to)
{
    if (from->failed) {
        /* A memory sink fails only for want of memory. */
        if (!to->failed) {
            to->failed = from->failed;
            snprintf(to->msg, sizeof to->msg, "%s: out of memory for the output", to->path);
        }
    } else {
        sink_write(to, from->mem, from->mem_len);
        sink_write(to, from->room.buf, from->room.len);
    }
    from->failed = 0;
    from->mem_len = 0;
    from->room.len = 0;
    from->flushed = 0;
}

uint64_t sink_bytes(const pc_sink *s)
{
    return s->flushed + s->room.len;
}

void sink_set_threads(pc_sink *s, int threads)
{
    s->threads = threads;
}
