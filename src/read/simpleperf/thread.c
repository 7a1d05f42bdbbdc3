/* simpleperf records decoded on a second thread (see read_simpleperf.h).
 *
 * Reading and decoding (input layer, gunzip, protobuf) take about as long
 * as building the model from what they give, so the two run side by side:
 * the decoding thread copies each record out of the input window into a
 * batch, the calling thread builds the model from full batches, in file
 * order.  The model is therefore the same as with one thread.
 *
 * A batch's pointers are offsets while it fills (its arrays may move) and
 * become pointers when it is handed over.  Three batches circulate, so
 * memory stays at a few MiB whatever the input's size.
 *
 * Progress and log callbacks stay on the calling thread: the decoding
 * thread only notes how far the input has been read, and the calling
 * thread reports it between batches. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/grow.h"
#include "read/simpleperf/simpleperf.h"
#include "io/source.h"

enum {
    N_BATCH = 3,
    BATCH_RECORDS = 4096,
    BATCH_ENTRIES = 1 << 16,
    BATCH_BYTES = 1 << 20,
};

typedef struct batch {
    sp_record *rec;
    sp_entry *ent;
    sp_str *strs;
    char *bytes;
    size_t n_rec, n_ent, n_strs, n_bytes;
    size_t cap_rec, cap_ent, cap_strs, cap_bytes;
    int full;      /* handed over: the calling thread's to read */
    int last;      /* decoding ended with these records; status says how */
    int status;
    pc_error err;
} batch;

typedef struct pipeline {
    sp_reader *r;
    batch b[N_BATCH];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;      /* the calling thread gave up */
    _Atomic uint64_t done, total;
} pipeline;

/* Offsets stand in for pointers until the batch is sealed. */
#define AS_PTR(off) ((const void *)(uintptr_t)(off))
#define AS_OFF(ptr) ((size_t)(uintptr_t)(ptr))

static int put_str(batch *b, sp_str *dst, sp_str src)
{
    if (pc_grow(&b->bytes, &b->cap_bytes, b->n_bytes + src.len + 1, 1, 256) < 0)
        return -1;
    if (src.len)
        memcpy(b->bytes + b->n_bytes, src.s, src.len);
    dst->s = AS_PTR(b->n_bytes);
    dst->len = src.len;
    b->n_bytes += src.len;
    return 0;
}

static int put_strs(batch *b, const sp_str **dst, const sp_str *src, size_t n)
{
    if (pc_grow(&b->strs, &b->cap_strs, b->n_strs + n, sizeof *b->strs, 256) < 0)
        return -1;
    size_t first = b->n_strs;
    b->n_strs += n;
    for (size_t i = 0; i < n; i++)
        if (put_str(b, &b->strs[first + i], src[i]) < 0)
            return -1;
    *dst = AS_PTR(first);
    return 0;
}

/* Copies what c points to into b, c's pointers becoming offsets. */
static int copy_out(batch *b, sp_record *c)
{
    switch (c->kind) {
    case SP_SAMPLE:
        if (pc_grow(&b->ent, &b->cap_ent, b->n_ent + c->sample.n_chain, sizeof *b->ent,
                    256) < 0)
            return -1;
        if (c->sample.n_chain)
            memcpy(b->ent + b->n_ent, c->sample.chain, c->sample.n_chain * sizeof *b->ent);
        c->sample.chain = AS_PTR(b->n_ent);
        b->n_ent += c->sample.n_chain;
        return 0;
    case SP_FILE:
        return put_str(b, &c->file.path, c->file.path) ||
               put_strs(b, &c->file.symbols, c->file.symbols, c->file.n_symbols) ||
               put_strs(b, &c->file.mangled, c->file.mangled, c->file.n_mangled)
                   ? -1 : 0;
    case SP_THREAD:
        return put_str(b, &c->thread.name, c->thread.name);
    case SP_META:
        return put_strs(b, &c->meta.event_types, c->meta.event_types,
                        c->meta.n_event_types) ||
               put_str(b, &c->meta.app_package, c->meta.app_package) ||
               put_str(b, &c->meta.app_type, c->meta.app_type) ||
               put_str(b, &c->meta.sdk_version, c->meta.sdk_version) ||
               put_str(b, &c->meta.build_type, c->meta.build_type)
                   ? -1 : 0;
    default:
        return 0;
    }
}

/* Copies rec, and what it points to, into b.  The record joins the batch
 * only once all of it is copied: when memory runs out, b is left as it
 * was, so that the records handed over are whole and their offsets
 * valid. */
static int add(batch *b, const sp_record *rec)
{
    size_t n_ent = b->n_ent, n_strs = b->n_strs, n_bytes = b->n_bytes;
    sp_record c = *rec;
    if (pc_grow(&b->rec, &b->cap_rec, b->n_rec + 1, sizeof *b->rec, 256) < 0 ||
        copy_out(b, &c) < 0) {
        b->n_ent = n_ent;
        b->n_strs = n_strs;
        b->n_bytes = n_bytes;
        return -1;
    }
    b->rec[b->n_rec++] = c;
    return 0;
}

static void fix_str(const batch *b, sp_str *s)
{
    s->s = b->bytes ? b->bytes + AS_OFF(s->s) : "";
}

/* Turns the batch's offsets into pointers: its arrays no longer move. */
static void seal(batch *b)
{
    for (size_t i = 0; i < b->n_strs; i++)
        fix_str(b, &b->strs[i]);
    for (size_t i = 0; i < b->n_rec; i++) {
        sp_record *c = &b->rec[i];
        switch (c->kind) {
        case SP_SAMPLE:
            c->sample.chain = b->ent ? b->ent + AS_OFF(c->sample.chain) : NULL;
            break;
        case SP_FILE:
            fix_str(b, &c->file.path);
            c->file.symbols = b->strs ? b->strs + AS_OFF(c->file.symbols) : NULL;
            c->file.mangled = b->strs ? b->strs + AS_OFF(c->file.mangled) : NULL;
            break;
        case SP_THREAD:
            fix_str(b, &c->thread.name);
            break;
        case SP_META:
            c->meta.event_types = b->strs ? b->strs + AS_OFF(c->meta.event_types) : NULL;
            fix_str(b, &c->meta.app_package);
            fix_str(b, &c->meta.app_type);
            fix_str(b, &c->meta.sdk_version);
            fix_str(b, &c->meta.build_type);
            break;
        }
    }
}

static void note_progress(void *ctx, uint64_t done, uint64_t total)
{
    pipeline *q = ctx;
    atomic_store_explicit(&q->total, total, memory_order_relaxed);
    atomic_store_explicit(&q->done, done, memory_order_relaxed);
}

static void *decode(void *arg)
{
    pipeline *q = arg;
    for (size_t i = 0;; i = (i + 1) % N_BATCH) {
        batch *b = &q->b[i];
        pthread_mutex_lock(&q->mu);
        while (b->full && !q->stop)
            pthread_cond_wait(&q->cv, &q->mu);
        int stop = q->stop;
        pthread_mutex_unlock(&q->mu);
        if (stop)
            return NULL;
        b->n_rec = b->n_ent = b->n_strs = b->n_bytes = 0;
        int got = 1;
        sp_record rec;
        while (b->n_rec < BATCH_RECORDS && b->n_ent < BATCH_ENTRIES &&
               b->n_bytes < BATCH_BYTES) {
            if ((got = sp_next(q->r, &rec, &b->err)) <= 0)
                break;
            if (add(b, &rec) < 0) {
                pc_fail(&b->err, PC_ENOMEM, "%s: out of memory", src_name(q->r->in));
                got = -1;
                break;
            }
        }
        b->last = got <= 0;
        b->status = got < 0 ? b->err.status : PC_OK;
        seal(b);
        pthread_mutex_lock(&q->mu);
        b->full = 1;
        pthread_cond_broadcast(&q->cv);
        pthread_mutex_unlock(&q->mu);
        if (b->last)
            return NULL;
    }
}

int sp_read_threaded(sp_reader *r, sp_record_fn fn, void *ctx, pc_error *err)
{
    pipeline *q = calloc(1, sizeof *q);
    if (!q)
        return pc_fail(err, PC_ENOMEM, "%s: out of memory", src_name(r->in));
    q->r = r;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    src_progress_fn report;
    void *report_ctx;
    src_get_progress(r->in, &report, &report_ctx);
    if (report)
        src_set_progress(r->in, note_progress, q);
    pthread_t th;
    int st = PC_OK;
    if (pthread_create(&th, NULL, decode, q) != 0) {
        /* No second thread to be had: decode here. */
        src_set_progress(r->in, report, report_ctx);
        sp_record rec;
        int got;
        while ((got = sp_next(r, &rec, err)) > 0 && (st = fn(ctx, &rec)) == PC_OK)
            ;
        if (got < 0)
            st = err->status;
    } else {
        uint64_t reported = 0;
        for (size_t i = 0;; i = (i + 1) % N_BATCH) {
            batch *b = &q->b[i];
            pthread_mutex_lock(&q->mu);
            while (!b->full)
                pthread_cond_wait(&q->cv, &q->mu);
            pthread_mutex_unlock(&q->mu);
            for (size_t k = 0; k < b->n_rec && st == PC_OK; k++)
                st = fn(ctx, &b->rec[k]);
            if (st == PC_OK && b->status != PC_OK) {
                *err = b->err;
                st = b->status;
            }
            int last = b->last;
            pthread_mutex_lock(&q->mu);
            b->full = 0;
            if (st != PC_OK)
                q->stop = 1;
            pthread_cond_broadcast(&q->cv);
            pthread_mutex_unlock(&q->mu);
            uint64_t done = atomic_load_explicit(&q->done, memory_order_relaxed);
            if (report && done > reported) {
                reported = done;
                report(report_ctx, done, atomic_load_explicit(&q->total, memory_order_relaxed));
            }
            if (st != PC_OK || last)
                break;
        }
        pthread_join(th, NULL);
        src_set_progress(r->in, report, report_ctx);
    }
    for (int i = 0; i < N_BATCH; i++) {
        free(q->b[i].rec);
        free(q->b[i].ent);
        free(q->b[i].strs);
        free(q->b[i].bytes);
    }
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    free(q);
    return st;
}
