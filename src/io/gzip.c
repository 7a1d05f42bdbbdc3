/* Block-parallel gzip (see gzip.h).
 *
 * Blocks are numbered as they are handed over and sit in a ring of slots,
 * block k in slot k % n_slot, so a slot is free again once the block
 * n_slot before it has been emitted.  The caller keeps the CRC and the
 * 32 KiB history itself, in order, so the compressing threads only ever
 * see one slot each and never each other.  Where the caller would wait
 * for the oldest block, it compresses one that no thread has taken yet:
 * with a thread for each core, the caller's core would otherwise idle
 * while the text is made faster than it is compressed. */
#include "io/gzip.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include "base/grow.h"
#include "base/thread.h"

#define HIST 32768
/* The bytes compressed alone at the start of a stream (deflate_block). */
#define PRIME_BYTES 8
#define MAX_WORKERS 16

enum { SLOT_FREE, SLOT_QUEUED, SLOT_BUSY, SLOT_DONE };

typedef struct slot {
    uint8_t *in;        /* owned by the slot while queued or busy */
    size_t n_in;
    size_t n_mapped;    /* in's bytes written before (see pc_prefault) */
    uint8_t *dict;      /* HIST bytes: the history before in */
    size_t n_dict;
    uint8_t *out;
    size_t n_out, cap_out;
    int last, state, failed;
    struct isal_zstream iz;
    uint8_t *level_buf;
    z_stream zs;
    int zs_ready;
} slot;

struct pc_gzip {
    int level;
    size_t block;
    gz_emit_fn emit;
    void *ctx;
    int want_workers, n_workers, started;
    pthread_t th[MAX_WORKERS];
    slot *slots;
    size_t n_slot;
    uint64_t next_seq, next_emit;
    uint8_t hist[HIST];
    size_t n_hist;
    uint32_t crc, isize;
    int header_done, failed, quit;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
};

static const uint32_t level_buf_size[] = {
    ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT,
    ISAL_DEF_LVL3_DEFAULT,
};

static int out_room(slot *sl, size_t want)
{
    if (sl->cap_out - sl->n_out >= want)
        return 0;
    size_t cap = sl->cap_out ? sl->cap_out : want;
    while (cap - sl->n_out < want)
        cap *= 2;
    uint8_t *o = realloc(sl->out, cap);
    if (!o)
        return -1;
    sl->out = o;
    sl->cap_out = cap;
    return 0;
}

/* Deflates in[0..n) primed with dict into sl->out: byte-aligned by a sync
 * flush, or final when last.  Returns 0 or -1. */
static int deflate_block(slot *sl, int level, const uint8_t *dict, size_t n_dict,
                         const uint8_t *in, size_t n, int last)
{
    /* Stored blocks bound the output: 5 bytes per 64 KiB beyond the input.
     * The codecs' choices may depend on the room they are given, so the
     * room is the same whatever this slot held before: bound first, then
     * 64 KiB at a time. */
    size_t bound = n + n / 8192 + 1024;
    sl->n_out = 0;
    if (level <= ISAL_DEF_MAX_LEVEL) {
        struct isal_zstream *z = &sl->iz;
        isal_deflate_init(z);
        z->gzip_flag = IGZIP_DEFLATE;
        z->level = (uint32_t)level;
        z->level_buf = sl->level_buf;
        z->level_buf_size = level_buf_size[level];
        if (n_dict && isal_deflate_set_dict(z, (uint8_t *)dict, (uint32_t)n_dict) != COMP_OK)
            return -1;
        if (!n_dict && n > PRIME_BYTES) {
            /* ISA-L (2.30, and its code since 2.24) hashes a stale
             * register, the stream's own address, for the third byte of a
             * stream that starts without history at levels 1 and 2, so
             * that the compressed bytes depended on where the stream lay
             * in memory (one address in a thousand gave others).  Its
             * first bytes, compressed and flushed alone, go through code
             * without that fault and give the stream a history. */
            if (out_room(sl, bound) < 0)
                return -1;
            z->next_in = (uint8_t *)in;
            z->avail_in = PRIME_BYTES;
            z->end_of_stream = 0;
            z->flush = SYNC_FLUSH;
            z->next_out = sl->out;
            z->avail_out = (uint32_t)bound;
            if (isal_deflate(z) != COMP_OK || z->avail_in != 0)
                return -1;
            sl->n_out = (size_t)(z->next_out - sl->out);
            in += PRIME_BYTES;
            n -= PRIME_BYTES;
        }
        z->next_in = (uint8_t *)in;
        z->avail_in = (uint32_t)n;
        z->end_of_stream = (uint16_t)(last != 0);
        z->flush = last ? NO_FLUSH : SYNC_FLUSH;
        for (int first = 1;; first = 0) {
            size_t room = first ? bound : 65536;
            if (out_room(sl, room) < 0)
                return -1;
            z->next_out = sl->out + sl->n_out;
            z->avail_out = (uint32_t)room;
            if (isal_deflate(z) != COMP_OK)
                return -1;
            sl->n_out = (size_t)(z->next_out - sl->out);
            if (z->avail_in == 0 && z->avail_out != 0 &&
                (!last || z->internal_state.state == ZSTATE_END))
                return 0;
        }
    }
    z_stream *z = &sl->zs;
    if (!sl->zs_ready) {
        /* windowBits -15: raw deflate, the gzip wrapper is ours. */
        if (deflateInit2(z, level > 9 ? 9 : level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return -1;
        sl->zs_ready = 1;
    } else if (deflateReset(z) != Z_OK) {
        return -1;
    }
    if (n_dict && deflateSetDictionary(z, dict, (uInt)n_dict) != Z_OK)
        return -1;
    z->next_in = (Bytef *)in;
    z->avail_in = (uInt)n;
    for (;;) {
        size_t room = sl->n_out ? 65536 : bound;
        if (out_room(sl, room) < 0)
            return -1;
        z->next_out = sl->out + sl->n_out;
        z->avail_out = (uInt)room;
        int r = deflate(z, last ? Z_FINISH : Z_SYNC_FLUSH);
        if (r == Z_STREAM_ERROR)
            return -1;
        sl->n_out = (size_t)(z->next_out - sl->out);
        if (last ? r == Z_STREAM_END : z->avail_in == 0 && z->avail_out != 0)
            return 0;
    }
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void emit_out(pc_gzip *g, const slot *sl, int last)
{
    if (!g->header_done) {
        /* No name, no time stamp (the output must not depend on when it
         * was made), no extra flags, OS "Unix". */
        static const uint8_t header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
        g->emit(g->ctx, header, sizeof header);
        g->header_done = 1;
    }
    g->emit(g->ctx, sl->out, sl->n_out);
    if (last) {
        uint8_t trailer[8];
        put_le32(trailer, g->crc);
        put_le32(trailer + 4, g->isize);
        g->emit(g->ctx, trailer, sizeof trailer);
    }
}

/* Keeps the last HIST bytes of everything handed over. */
static void keep_history(pc_gzip *g, const uint8_t *p, size_t n)
{
    if (n >= HIST) {
        memcpy(g->hist, p + n - HIST, HIST);
        g->n_hist = HIST;
        return;
    }
    size_t keep = g->n_hist + n > HIST ? HIST - n : g->n_hist;
    memmove(g->hist, g->hist + g->n_hist - keep, keep);
    memcpy(g->hist + keep, p, n);
    g->n_hist = keep + n;
}

static slot *next_queued(pc_gzip *g)
{
    for (uint64_t k = g->next_emit; k < g->next_seq; k++) {
        slot *sl = &g->slots[k % g->n_slot];
        if (sl->state == SLOT_QUEUED)
            return sl;
    }
    return NULL;
}

/* Compresses the queued block in sl, on the calling thread (g->mu held,
 * and held again on return). */
static void run_slot(pc_gzip *g, slot *sl)
{
    sl->state = SLOT_BUSY;
    pthread_mutex_unlock(&g->mu);
    int bad = deflate_block(sl, g->level, sl->dict, sl->n_dict, sl->in, sl->n_in, sl->last);
    pthread_mutex_lock(&g->mu);
    sl->failed = bad;
    sl->state = SLOT_DONE;
    pthread_cond_broadcast(&g->done);
}

static void *worker(void *arg)
{
    pc_gzip *g = arg;
    pthread_mutex_lock(&g->mu);
    for (;;) {
        slot *sl;
        while (!(sl = next_queued(g)) && !g->quit)
            pthread_cond_wait(&g->work, &g->mu);
        if (!sl)
            break;
        run_slot(g, sl);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

pc_gzip *gz_new(int level, int threads, size_t block_size, gz_emit_fn emit, void *ctx)
{
    pc_gzip *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->level = level < 1 ? 1 : level > 9 ? 9 : level;
    g->block = block_size;
    g->emit = emit;
    g->ctx = ctx;
    threads = pc_thread_count(threads);
    /* The caller's thread, making the bytes, is one of the threads. */
    g->want_workers = threads - 1 > MAX_WORKERS ? MAX_WORKERS : threads - 1;
    g->n_slot = (size_t)g->want_workers + 2;
    g->slots = calloc(g->n_slot, sizeof *g->slots);
    if (!g->slots) {
        free(g);
        return NULL;
    }
    return g;
}

/* Makes slot sl ready to compress: its buffers exist. */
static int slot_ready(pc_gzip *g, slot *sl, int threaded)
{
    if (g->level <= ISAL_DEF_MAX_LEVEL && !sl->level_buf) {
        if (!(sl->level_buf = malloc(level_buf_size[g->level])))
            return -1;
        pc_prefault(sl->level_buf, 0, level_buf_size[g->level]);
    }
    if (threaded && !sl->in && !(sl->in = malloc(g->block)))
        return -1;
    if (threaded && !sl->dict && !(sl->dict = malloc(HIST)))
        return -1;
    return 0;
}

static void start(pc_gzip *g)
{
    g->started = 1;
    if (g->want_workers <= 0)
        return;
    if (pthread_mutex_init(&g->mu, NULL) != 0)
        return;
    if (pthread_cond_init(&g->work, NULL) != 0) {
        pthread_mutex_destroy(&g->mu);
        return;
    }
    if (pthread_cond_init(&g->done, NULL) != 0) {
        pthread_cond_destroy(&g->work);
        pthread_mutex_destroy(&g->mu);
        return;
    }
    for (int i = 0; i < g->want_workers; i++) {
        if (pc_thread_start(&g->th[i], worker, g) != 0)
            break;
        g->n_workers++;
    }
    if (g->n_workers == 0) {
        pthread_cond_destroy(&g->done);
        pthread_cond_destroy(&g->work);
        pthread_mutex_destroy(&g->mu);
    }
}

/* Emits the oldest block handed over, once it is compressed; with wait
 * unset, only if it already is.  Returns 1 when one was emitted. */
static int emit_next(pc_gzip *g, int wait)
{
    if (g->next_emit == g->next_seq)
        return 0;
    slot *sl = &g->slots[g->next_emit % g->n_slot];
    pthread_mutex_lock(&g->mu);
    while (wait && sl->state != SLOT_DONE) {
        slot *q = next_queued(g);
        if (q)
            run_slot(g, q);
        else
            pthread_cond_wait(&g->done, &g->mu);
    }
    int ready = sl->state == SLOT_DONE;
    pthread_mutex_unlock(&g->mu);
    if (!ready)
        return 0;
    if (sl->failed)
        g->failed = 1;
    else if (!g->failed)
        emit_out(g, sl, sl->last);
    /* The workers look for work from next_emit on. */
    pthread_mutex_lock(&g->mu);
    sl->state = SLOT_FREE;
    g->next_emit++;
    pthread_mutex_unlock(&g->mu);
    return 1;
}

int gz_block(pc_gzip *g, const uint8_t *in, size_t n, int last)
{
    if (g->failed || n > g->block) {
        g->failed = 1;
        return -1;
    }
    if (!g->started && !last)
        start(g);
    g->crc = crc32_gzip_refl(g->crc, in, n);
    g->isize += (uint32_t)n;
    if (g->n_workers == 0) {
        slot *sl = &g->slots[0];
        if (slot_ready(g, sl, 0) < 0 ||
            deflate_block(sl, g->level, g->hist, g->n_hist, in, n, last) < 0) {
            g->failed = 1;
            return -1;
        }
        keep_history(g, in, n);
        emit_out(g, sl, last);
        return 0;
    }
    while (g->next_seq - g->next_emit >= g->n_slot)
        emit_next(g, 1);
    slot *sl = &g->slots[g->next_seq % g->n_slot];
    if (g->failed || slot_ready(g, sl, 1) < 0) {
        g->failed = 1;
        return -1;
    }
    memcpy(sl->dict, g->hist, g->n_hist);
    sl->n_dict = g->n_hist;
    keep_history(g, in, n);
    if (sl->n_mapped < n) {
        pc_prefault(sl->in, sl->n_mapped, n);
        sl->n_mapped = n;
    }
    memcpy(sl->in, in, n);
    sl->n_in = n;
    sl->last = last;
    pthread_mutex_lock(&g->mu);
    sl->state = SLOT_QUEUED;
    g->next_seq++;
    pthread_cond_signal(&g->work);
    pthread_mutex_unlock(&g->mu);
    /* Whatever is done goes out now, so the file grows as it is made. */
    while (emit_next(g, last))
        ;
    return g->failed ? -1 : 0;
}

void gz_free(pc_gzip *g)
{
    if (!g)
        return;
    if (g->n_workers) {
        pthread_mutex_lock(&g->mu);
        g->quit = 1;
        for (size_t i = 0; i < g->n_slot; i++)
            if (g->slots[i].state == SLOT_QUEUED)
                g->slots[i].state = SLOT_FREE;
        pthread_cond_broadcast(&g->work);
        pthread_mutex_unlock(&g->mu);
        for (int i = 0; i < g->n_workers; i++)
            pthread_join(g->th[i], NULL);
        pthread_cond_destroy(&g->done);
        pthread_cond_destroy(&g->work);
        pthread_mutex_destroy(&g->mu);
    }
    for (size_t i = 0; i < g->n_slot; i++) {
        slot *sl = &g->slots[i];
        free(sl->in);
        free(sl->dict);
        free(sl->out);
        free(sl->level_buf);
        if (sl->zs_ready)
            deflateEnd(&sl->zs);
    }
    free(g->slots);
    free(g);
}
