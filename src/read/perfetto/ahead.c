/* Packets framed, copied and scanned on a thread of their own, ahead of
 * the reading thread.
 *
 * On traces of traced_perf samples whose callstacks were seen before, the
 * reading thread bounds a conversion, and a third of its time went to
 * finding each packet in the input and decoding its fields (the decoding
 * floor's own work: bench/skim).  None of that needs the reader's state,
 * so a framing thread does it: it frames each packet, copies it into a
 * batch and scans it for the common shape (pf_quick_scan).  The reading
 * thread takes the batches in order and applies each packet as the
 * single-threaded stream would: the scanned ones from their fields, the
 * others by the general path on the copy.  The model, the messages and
 * what keep_going skips are therefore the ones one thread gives.
 *
 * A broken framing is noted in its batch and told by the reading thread
 * once it has applied the packets before it, with the packet count it
 * has then.  The framing thread hands over what it has before it may wait
 * for more input, so a slow pipe's packets are read as they come; and a
 * reading thread that fails interrupts the input (src_interrupt), so a
 * pipe that stays open cannot hold up the error.  Progress is noted by
 * the framing thread and told by the reading thread, once a batch. */
#include "read/perfetto/reader.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/grow.h"
#include "base/thread.h"

/* Batches in flight, and what one holds at most (one packet at least,
 * however big): a few thousand samples, so the threads meet once that
 * many packets, and small enough to stay in the cache between the two. */
enum { N_SLOT = 4, BATCH_PACKETS = 2048, BATCH_BYTES = 128 << 10 };
/* A packet bigger than this is not copied: it ends its batch, and the
 * reading thread reads it where it lies in the input, while the framing
 * thread waits.  Such packets (heap graphs, compressed ones) cost far
 * more to read than to frame, and a copy would double the memory they
 * take. */
#define BIG_PACKET ((size_t)64 << 10)
/* The framing thread's stack: it frames, copies and scans, recursing
 * nowhere. */
#define FRAMER_STACK ((size_t)256 << 10)

typedef struct framed {
    size_t at;            /* in the batch's bytes */
    size_t len;
    uint64_t off;         /* of the packet's first field in the input */
    pf_quick q;
} framed;

typedef struct batch {
    int full;             /* framed, not yet applied */
    uint8_t *bytes;
    size_t n_bytes, cap_bytes;
    framed *pk;
    size_t n_pk, cap_pk;
    int big;              /* then comes a big packet, framed in fr */
    int last;             /* the framing ended after these packets */
    int status;           /* how: PC_OK at the end of the input, else a
                             fault in fr or a failure in err */
    pf_frame fr;
    pc_error err;
} batch;

struct pf_ahead {
    pc_input *in;
    batch b[N_SLOT];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;             /* the reading thread is done */
    pthread_t th;
    src_relay progress;
};

static void end_batch(batch *b, int status)
{
    b->last = 1;
    b->status = status;
}

/* Takes the packet of n bytes at data (offset off in the input) into b:
 * 0, or -1 out of memory.  The bytes are made even for an empty packet,
 * which then lies at a real address. */
static int take(batch *b, const uint8_t *data, size_t n, uint64_t off)
{
    if (pc_grow(&b->pk, &b->cap_pk, b->n_pk + 1, sizeof *b->pk, 256) < 0 ||
        pc_grow(&b->bytes, &b->cap_bytes, b->n_bytes + n + 1, 1, BATCH_BYTES) < 0)
        return -1;
    framed *x = &b->pk[b->n_pk++];
    memcpy(b->bytes + b->n_bytes, data, n);
    x->at = b->n_bytes;
    x->len = n;
    x->off = off;
    /* Scanned from the copy, which the copying brought into the cache. */
    pf_quick_scan(b->bytes + x->at, n, &x->q);
    b->n_bytes += n;
    return 0;
}

static int batch_full(const batch *b)
{
    return b->n_pk >= BATCH_PACKETS || b->n_bytes >= BATCH_BYTES;
}

/* Frames packets into b until it is full, the input ends or the framing
 * fails. */
static void fill(struct pf_ahead *q, batch *b)
{
    pc_input *in = q->in;
    b->n_bytes = b->n_pk = 0;
    b->big = b->last = 0;
    b->status = PC_OK;
    memset(&b->fr, 0, sizeof b->fr);
    while (!batch_full(b)) {
        /* The packets whole in the input's window, framed where they lie
         * (a packet's tag is one byte, 0x0A); the rest, and anything
         * else, field by field through pf_frame_next. */
        const uint8_t *w = src_ptr(in), *p = w, *end = w + src_avail(in);
        uint64_t base = src_offset(in);
        while (!batch_full(b) && end - p >= 2 && p[0] == 0x0A) {
            const uint8_t *data = p + 1;
            uint64_t n;
            if (!pb_varint9(&data, end, &n) || n > (uint64_t)(end - data) || n > BIG_PACKET)
                break;
            if (take(b, data, (size_t)n, base + (uint64_t)(data - w)) < 0)
                goto nomem;
            p = data + n;
        }
        src_skip(in, (size_t)(p - w));
        if (batch_full(b) || (b->n_pk && !pf_frame_ready(in)))
            return;
        int got = pf_frame_next(in, &b->fr, &b->err);
        if (got <= 0) {
            end_batch(b, got < 0 ? -got : PC_OK);
            return;
        }
        size_t n = (size_t)b->fr.n;
        if (pf_frame_is_packet(&b->fr) && n > BIG_PACKET) {
            b->big = 1;
            return;
        }
        if (pf_frame_is_packet(&b->fr) &&
            take(b, src_ptr(in) + b->fr.hdr, n, b->fr.off + b->fr.hdr) < 0)
            goto nomem;
        src_skip(in, b->fr.hdr + n);
    }
    return;
nomem:
    memset(&b->fr, 0, sizeof b->fr);
    end_batch(b, pc_fail(&b->err, PC_ENOMEM, "%s: out of memory", src_name(in)));
}

static void *framer(void *arg)
{
    struct pf_ahead *q = arg;
    for (uint64_t k = 0;; k++) {
        batch *b = &q->b[k % N_SLOT];
        pthread_mutex_lock(&q->mu);
        while (!q->stop && b->full)
            pthread_cond_wait(&q->cv, &q->mu);
        int stop = q->stop;
        pthread_mutex_unlock(&q->mu);
        if (stop)
            break;
        fill(q, b);
        pthread_mutex_lock(&q->mu);
        b->full = 1;
        pthread_cond_broadcast(&q->cv);
        /* The reading thread reads a big packet from the input: until it
         * is done with the batch, the input is its. */
        while (b->big && !q->stop && b->full)
            pthread_cond_wait(&q->cv, &q->mu);
        pthread_mutex_unlock(&q->mu);
        if (b->last)
            break;
    }
    return NULL;
}

/* Applies b's packets, its big packet, then how its framing ended; with
 * keep_going, a refused packet is skipped and a broken framing ends the
 * trace, as in the single-threaded stream. */
static int apply(pf_reader *r, const batch *b)
{
    for (size_t i = 0; i <= b->n_pk; i++) {
        int st;
        if (i < b->n_pk) {
            const framed *x = &b->pk[i];
            st = pf_on_scanned(r, b->bytes + x->at, x->len, x->off, &x->q);
        } else if (b->big) {
            size_t n = (size_t)b->fr.n;
            st = pf_on_packet(r, src_ptr(r->in) + b->fr.hdr, n, b->fr.off + b->fr.hdr);
            src_skip(r->in, b->fr.hdr + n);
        } else {
            break;
        }
        if ((st = pf_packet_refused(r, st)) != PC_OK)
            return st;
    }
    if (!b->last || b->status == PC_OK)
        return PC_OK;
    int st = b->status;
    if (b->fr.fault)
        st = pf_frame_fail(r, &b->fr);
    else
        *r->err = b->err;
    return pf_framing_broke(r, st);
}

static void free_ahead(struct pf_ahead *q)
{
    for (int i = 0; i < N_SLOT; i++) {
        free(q->b[i].bytes);
        free(q->b[i].pk);
    }
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    free(q);
}

int pf_read_ahead(pf_reader *r)
{
    struct pf_ahead *q = calloc(1, sizeof *q);
    if (!q)
        return PF_AHEAD_NONE;
    q->in = r->in;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    src_relay_begin(r->in, &q->progress);
    if (pc_thread_start_sized(&q->th, framer, q, FRAMER_STACK) != 0) {
        src_relay_end(r->in, &q->progress);
        free_ahead(q);
        return PF_AHEAD_NONE;
    }
    r->ahead = q;
    int st = PC_OK;
    for (uint64_t k = 0;; k++) {
        batch *b = &q->b[k % N_SLOT];
        pthread_mutex_lock(&q->mu);
        while (!b->full)
            pthread_cond_wait(&q->cv, &q->mu);
        pthread_mutex_unlock(&q->mu);
        st = apply(r, b);
        int last = b->last;
        pthread_mutex_lock(&q->mu);
        b->full = 0;
        pthread_cond_broadcast(&q->cv);
        pthread_mutex_unlock(&q->mu);
        src_relay_tell(&q->progress);
        if (st != PC_OK || last)
            break;
    }
    pthread_mutex_lock(&q->mu);
    q->stop = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    /* Failed: the framing thread, which may be waiting for a pipe to send
     * more, stops reading now. */
    if (st != PC_OK)
        src_interrupt(r->in);
    pthread_join(q->th, NULL);
    r->ahead = NULL;
    src_relay_end(r->in, &q->progress);
    free_ahead(q);
    return st;
}

void pf_progress_get(const pf_reader *r, src_progress_fn *fn, void **ctx)
{
    if (r->ahead) {
        *fn = r->ahead->progress.fn;
        *ctx = r->ahead->progress.ctx;
    } else {
        src_get_progress(r->in, fn, ctx);
    }
}

void pf_progress_set(pf_reader *r, src_progress_fn fn, void *ctx)
{
    if (r->ahead) {
        r->ahead->progress.fn = fn;
        r->ahead->progress.ctx = ctx;
    } else {
        src_set_progress(r->in, fn, ctx);
    }
}
