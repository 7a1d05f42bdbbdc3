/* simpleperf records framed by one thread, decoded by all, built in order
 * (see sp_read_threaded in simpleperf.h).
 *
 * On real captures decoding each record's protobuf costs more than
 * building the model from it (on generated ones, with fewer repeated
 * paths, less), and framing (finding where each record starts) costs
 * little.  So a
 * framing thread copies records' bytes, as they are, into a batch and
 * notes where each starts; any thread decodes a framed batch in place
 * (strings stay pointers into the batch's bytes, callchains go into the
 * batch's own array); the calling thread builds the model from decoded
 * batches in file order.  The model is therefore the same as with one
 * thread.
 *
 * Batches sit in a ring, batch k in slot k % N_SLOT.  Every thread
 * decodes the oldest framed batch no one has taken: the framing thread
 * once it is a few batches ahead, the calling thread whenever the batch
 * it needs next is not decoded yet, so it never waits while there is
 * work, and more threads all the time.  When building is the slower part
 * the calling thread only builds; when decoding is, both decode.
 *
 * Damaged records, unknown fields and progress are noted per batch and
 * taken into the reader in order by the calling thread, which alone calls
 * back; so are failures, so the error a file gives is the one it gives on
 * one thread.  The framing thread hands over what it has before it waits
 * for more input, and a failed build interrupts the input (src_interrupt),
 * so a pipe that stays open cannot hold up an error. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/grow.h"
#include "base/thread.h"
#include "read/simpleperf/simpleperf.h"
#include "io/source.h"

enum {
    N_SLOT = 4,
    BATCH_RECORDS = 1024,
    BATCH_BYTES = 512 << 10,
    MAX_HELPERS = 15,
    LOOKAHEAD = 2,
    AHEAD = 8,          /* records between the stages of ahead(), and before fn() */
    PEEK_AHEAD = 12,    /* records between finding a caller path and decoding it */
    PEEK_RING = 16,
};
#define PEEK_MIN_BYTES ((size_t)1 << 20)

enum { EMPTY, FRAMING, FRAMED, DECODING, DECODED };

typedef struct framed_rec {
    size_t at;          /* in bytes */
    uint32_t size;
    uint64_t off;
    size_t index;
} framed_rec;

typedef struct skip {
    size_t before;      /* decoded records that come before it */
    pc_error err;
} skip;

typedef struct batch {
    int state;
    uint64_t seq;
    uint8_t *bytes;
    size_t n_bytes, cap_bytes;
    framed_rec *fr;
    size_t n_fr, cap_fr;
    int last;           /* framing ended with this batch; frame_status says how */
    int frame_status;
    pc_error frame_err;
    /* Decoded: */
    sp_record *rec;
    size_t n_rec, cap_rec;
    sp_decoder dc;
    skip *skips;
    size_t n_skips, cap_skips;
    int decode_status;  /* the first failure not skipped ends the batch */
    pc_error decode_err;
} batch;

typedef struct pipeline {
    sp_reader *r;
    batch b[N_SLOT];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_int stop;    /* the calling thread gave up (also read unlocked) */
    int framing_done;
    src_relay progress;
} pipeline;

/* Copies records into b until it is full, the file ends or framing fails. */
static void frame_batch(pipeline *q, batch *b)
{
    sp_reader *r = q->r;
    b->n_bytes = b->n_fr = 0;
    b->last = 0;
    b->frame_status = PC_OK;
    while (b->n_fr < BATCH_RECORDS && b->n_bytes < BATCH_BYTES) {
        /* What is framed is handed over before waiting for more input, so
         * a slow pipe's records are built as they come (and a damaged one
         * is found before the pipe sends more, or ends). */
        if (b->n_fr && !sp_frame_ready(r))
            break;
        const uint8_t *data;
        uint32_t size;
        uint64_t off;
        int got = sp_frame(r, &data, &size, &off, &b->frame_err);
        if (got <= 0) {
            b->last = 1;
            b->frame_status = got < 0 ? b->frame_err.status : PC_OK;
            return;
        }
        if (pc_grow(&b->fr, &b->cap_fr, b->n_fr + 1, sizeof *b->fr, 256) < 0 ||
            pc_grow(&b->bytes, &b->cap_bytes, b->n_bytes + size, 1, 1 << 16) < 0) {
            b->last = 1;
            b->frame_status = pc_fail(&b->frame_err, PC_ENOMEM, "%s: out of memory",
                                      src_name(r->in));
            return;
        }
        memcpy(b->bytes + b->n_bytes, data, size);
        b->fr[b->n_fr++] = (framed_rec){b->n_bytes, size, off, r->n_records};
        b->n_bytes += size;
    }
}

/* Record k's caller path into the ring (none where look is 0), and the
 * first step of fetching what its lookup reads. */
static void peek_at(const batch *b, size_t k, sp_peek *ring, int look)
{
    sp_peek *pk = &ring[k % PEEK_RING];
    pk->at = NULL;
    if (look && sp_peek_path(b->bytes + b->fr[k].at, b->fr[k].size, pk))
        pc_byteset_prefetch(b->dc.paths, pk->hash, 0);
}

/* Decodes b's framed records; their pointers are into b alone. */
static void decode_batch(const pipeline *q, batch *b)
{
    const sp_reader *r = q->r;
    sp_decoder *dc = &b->dc;
    dc->n_chain = dc->n_strs[0] = dc->n_strs[1] = 0;
    dc->unknown.count = 0;
    dc->paths = r->paths;
    b->n_rec = b->n_skips = 0;
    b->decode_status = PC_OK;
    if (pc_grow(&b->rec, &b->cap_rec, b->n_fr, sizeof *b->rec, 256) < 0) {
        b->decode_status = pc_fail(&b->decode_err, PC_ENOMEM, "%s: out of memory",
                                   src_name(r->in));
        return;
    }
    /* Once the caller paths no longer fit a core's cache (8,000 paths of
     * a generated recording, 2.4 MB; a real capture's 1,839 held 0.4 MB),
     * each sample's path is found PEEK_AHEAD records before it is
     * decoded, and what looking it up reads is fetched in three steps
     * (slot, entry, bytes), so that the misses of several lookups overlap
     * rather than come one after another.  Where the paths fit, that
     * costs more than it saves (real capture: 1.29x to 1.39x its skim). */
    sp_peek ring[PEEK_RING];
    int peek = dc->paths && !dc->gate.rest && pc_byteset_held(dc->paths) > PEEK_MIN_BYTES;
    dc->peek.at = NULL;
    if (peek) {
        memset(ring, 0, sizeof ring);
        for (size_t k = 0; k < PEEK_AHEAD && k < b->n_fr; k++)
            peek_at(b, k, ring, 1);
    }
    for (size_t k = 0; k < b->n_fr; k++) {
        const framed_rec *f = &b->fr[k];
        pc_error e;
        if (peek) {
            if (k + PEEK_AHEAD < b->n_fr)
                peek_at(b, k + PEEK_AHEAD, ring, 1);
            for (int step = 1; step <= 2; step++) {
                size_t j = k + (size_t)(PEEK_AHEAD * (3 - step) / 3);
                if (j < b->n_fr && ring[j % PEEK_RING].at)
                    pc_byteset_prefetch(dc->paths, ring[j % PEEK_RING].hash, step);
            }
        }
        if (peek)
            dc->peek = ring[k % PEEK_RING];
        if (sp_decode(r->in, dc, b->bytes + f->at, f->size, f->off, f->index,
                      &b->rec[b->n_rec], &e) == 0) {
            b->n_rec++;
            continue;
        }
        if (r->keep_going && e.status == PC_EINPUT) {
            /* Skipped, as on one thread, when the calling thread gets here. */
            if (pc_grow(&b->skips, &b->cap_skips, b->n_skips + 1, sizeof *b->skips, 4) == 0) {
                b->skips[b->n_skips++] = (skip){b->n_rec, e};
                continue;
            }
            b->decode_status = pc_fail(&b->decode_err, PC_ENOMEM, "%s: out of memory",
                                       src_name(r->in));
            break;
        }
        b->decode_err = e;
        b->decode_status = e.status;
        break;
    }
    for (size_t k = 0; k < b->n_rec; k++)
        sp_decoder_fix(dc, &b->rec[k]);
}

/* The oldest framed batch no one decodes yet, or NULL; *n_framed the
 * number of such.  Called locked. */
static batch *pick_framed(pipeline *q, int *n_framed)
{
    batch *pick = NULL;
    int n = 0;
    for (int i = 0; i < N_SLOT; i++) {
        batch *b = &q->b[i];
        if (b->state == FRAMED) {
            n++;
            if (!pick || b->seq < pick->seq)
                pick = b;
        }
    }
    if (n_framed)
        *n_framed = n;
    return pick;
}

/* Decodes b, a framed batch, or with none waits for a change.  Called
 * locked; unlocked while decoding. */
static void decode_or_wait(pipeline *q, batch *b)
{
    if (!b) {
        pthread_cond_wait(&q->cv, &q->mu);
        return;
    }
    b->state = DECODING;
    pthread_mutex_unlock(&q->mu);
    decode_batch(q, b);
    pthread_mutex_lock(&q->mu);
    b->state = DECODED;
    pthread_cond_broadcast(&q->cv);
}

static void *framer(void *arg)
{
    pipeline *q = arg;
    pthread_mutex_lock(&q->mu);
    for (uint64_t seq = 0;; seq++) {
        batch *b = &q->b[seq % N_SLOT];
        for (;;) {
            if (q->stop) {
                pthread_mutex_unlock(&q->mu);
                return NULL;
            }
            /* Framing runs ahead of decoding by LOOKAHEAD batches, so that
             * a thread with nothing to build finds one to decode. */
            int n_framed;
            batch *d = pick_framed(q, &n_framed);
            if (b->state == EMPTY && n_framed < LOOKAHEAD)
                break;
            decode_or_wait(q, d);
        }
        b->state = FRAMING;
        b->seq = seq;
        pthread_mutex_unlock(&q->mu);
        frame_batch(q, b);
        pthread_mutex_lock(&q->mu);
        b->state = FRAMED;
        pthread_cond_broadcast(&q->cv);
        if (b->last)
            break;
    }
    q->framing_done = 1;
    pthread_cond_broadcast(&q->cv);
    /* Whatever is framed and waiting is decoded by whoever comes first. */
    for (batch *d; !q->stop && (d = pick_framed(q, NULL));)
        decode_or_wait(q, d);
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

static void *helper(void *arg)
{
    pipeline *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        batch *d = pick_framed(q, NULL);
        if (q->stop || (!d && q->framing_done))
            break;
        decode_or_wait(q, d);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* Hands b's records to fn in order, with the skips between them. */
static int build(pipeline *q, batch *b, sp_record_fn fn, sp_ahead_fn ahead, void *ctx,
                 pc_error *err)
{
    sp_reader *r = q->r;
    int st = PC_OK;
    size_t s = 0;
    for (size_t k = 0; ahead && k < 2 * AHEAD && k < b->n_rec; k++)
        ahead(ctx, &b->rec[k], 0);
    for (size_t k = 0; ahead && k < AHEAD && k < b->n_rec; k++)
        ahead(ctx, &b->rec[k], 1);
    for (size_t k = 0; k < b->n_rec && st == PC_OK; k++) {
        for (; s < b->n_skips && b->skips[s].before == k; s++)
            pc_skips_add(&r->skipped, &b->skips[s].err);
        if (ahead && k + 2 * AHEAD < b->n_rec)
            ahead(ctx, &b->rec[k + 2 * AHEAD], 0);
        if (ahead && k + AHEAD < b->n_rec)
            ahead(ctx, &b->rec[k + AHEAD], 1);
        st = fn(ctx, &b->rec[k]);
    }
    if (st != PC_OK)
        return st;
    for (; s < b->n_skips; s++)
        pc_skips_add(&r->skipped, &b->skips[s].err);
    sp_decoder_take_unknown(r, &b->dc);
    if (b->decode_status != PC_OK) {
        *err = b->decode_err;
        return b->decode_status;
    }
    if (b->frame_status != PC_OK) {
        *err = b->frame_err;
        return b->frame_status;
    }
    return PC_OK;
}

static int helpers_wanted(int threads)
{
    threads = pc_thread_count(threads);
    /* The calling thread and the framing thread count. */
    int h = threads - 2;
    return h < 0 ? 0 : h > MAX_HELPERS ? MAX_HELPERS : h;
}

int sp_read_threaded(sp_reader *r, int threads, sp_record_fn fn, sp_ahead_fn ahead, void *ctx,
                     pc_error *err)
{
    pipeline *q = calloc(1, sizeof *q);
    if (!q)
        return pc_fail(err, PC_ENOMEM, "%s: out of memory", src_name(r->in));
    q->r = r;
    /* Made here, before any thread decodes with it. */
    sp_paths(r);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    src_relay_begin(r->in, &q->progress);
    pthread_t th, help[MAX_HELPERS];
    int n_help = 0, started = pc_thread_start(&th, framer, q) == 0;
    for (int i = started ? helpers_wanted(threads) : 0; i > 0; i--)
        if (pc_thread_start(&help[n_help], helper, q) == 0)
            n_help++;
    int st = PC_OK;
    if (!started) {
        /* No second thread to be had: decode here. */
        src_relay_end(r->in, &q->progress);
        sp_record rec;
        int got;
        while ((got = sp_next(r, &rec, err)) > 0 && (st = fn(ctx, &rec)) == PC_OK)
            ;
        if (got < 0)
            st = err->status;
    } else {
        for (uint64_t seq = 0;; seq++) {
            batch *b = &q->b[seq % N_SLOT];
            pthread_mutex_lock(&q->mu);
            while (!(b->seq == seq && b->state == DECODED)) {
                /* Rather than wait, decode: this batch, or a later one. */
                decode_or_wait(q, b->seq == seq && b->state == FRAMED ? b
                                                                     : pick_framed(q, NULL));
            }
            pthread_mutex_unlock(&q->mu);
            st = build(q, b, fn, ahead, ctx, err);
            int last = b->last;
            pthread_mutex_lock(&q->mu);
            b->state = EMPTY;
            if (st != PC_OK)
                q->stop = 1;
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
        /* Failed: the framing thread, which may be waiting for a pipe to
         * send more, stops reading now. */
        if (st != PC_OK)
            src_interrupt(r->in);
        pthread_join(th, NULL);
        for (int i = 0; i < n_help; i++)
            pthread_join(help[i], NULL);
        src_relay_end(r->in, &q->progress);
    }
    for (int i = 0; i < N_SLOT; i++) {
        batch *b = &q->b[i];
        free(b->bytes);
        free(b->fr);
        free(b->rec);
        free(b->skips);
        sp_decoder_free(&b->dc);
    }
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    free(q);
    return st;
}
