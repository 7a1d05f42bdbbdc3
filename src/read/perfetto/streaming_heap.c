/* heapprofd's streaming mode (StreamingAllocation, StreamingFree): every
 * allocation and free of a process as it happens, with no callstack.
 * They become counter values in bytes, per process and heap: an
 * allocation adds its size at its time, a free takes back the size last
 * allocated at its address, so that the counter draws the heap's live
 * bytes over time.  Allocations carry CLOCK_MONOTONIC_COARSE times; frees
 * carry none and take their packet's time, or the latest allocation's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "read/perfetto/reader.h"

/* Live allocations by (pid, heap, address); an entry is never removed,
 * its size is 0 once freed. */
struct pf_streaming {
    int64_t *pid;
    uint64_t *addr, *size;
    uint32_t *heap;
    size_t n, cap;
    pc_htab idx;
    uint64_t last_time;
    int has_time;
    /* Events by heap id, + 1 (0: not made yet). */
    uint16_t *event1;
    size_t n_events;
};

/* A packet's repeated fields, packed or not, in order. */
typedef struct column {
    uint64_t *v;
    size_t n, cap;
} column;

static int push(pf_reader *r, void *ctx, uint64_t v)
{
    column *c = ctx;
    if (pc_grow(&c->v, &c->cap, c->n + 1, sizeof *c->v, 64) < 0)
        return pf_nomem(r);
    c->v[c->n++] = v;
    return PC_OK;
}

static struct pf_streaming *state(pf_reader *r)
{
    if (!r->sh)
        r->sh = calloc(1, sizeof *r->sh);
    return r->sh;
}

void pf_streaming_free(pf_reader *r)
{
    struct pf_streaming *h = r->sh;
    if (!h)
        return;
    free(h->pid);
    free(h->addr);
    free(h->size);
    free(h->heap);
    free(h->event1);
    pc_htab_free(&h->idx);
    free(h);
    r->sh = NULL;
}

/* The entry of (pid, heap, addr), added with size 0 when new; PC_NONE when
 * out of memory. */
static uint32_t entry(struct pf_streaming *h, int64_t pid, uint32_t heap, uint64_t addr)
{
    pc_probe pr;
    if (h->n >= PC_NONE - 1 || pc_htab_reserve(&h->idx, h->n + 1) < 0)
        return PC_NONE;
    pc_probe_start(&h->idx, pc_mix64(pc_mix64(addr ^ (uint64_t)pid) ^ heap), &pr);
    for (uint32_t i; (i = pc_probe_next(&h->idx, &pr)) != PC_NONE;)
        if (h->addr[i] == addr && h->pid[i] == pid && h->heap[i] == heap)
            return i;
    struct pc_col cols[] = {PC_COL(h->pid), PC_COL(h->addr), PC_COL(h->size), PC_COL(h->heap)};
    if (pc_grow_cols(&h->cap, h->n + 1, cols, 4) < 0)
        return PC_NONE;
    uint32_t i = (uint32_t)h->n++;
    h->pid[i] = pid;
    h->addr[i] = addr;
    h->size[i] = 0;
    h->heap[i] = heap;
    pc_htab_insert(&h->idx, &pr, i);
    return i;
}

/* The counter event of heap id ("streaming heap N", in bytes). */
static uint16_t event_of(pf_reader *r, struct pf_streaming *h, uint64_t heap)
{
    if (heap >= 1024)
        heap = 1023;
    if (heap >= h->n_events) {
        size_t n = (size_t)heap + 1;
        uint16_t *e = realloc(h->event1, n * sizeof *e);
        if (!e)
            return PF_NO_EVENT;
        memset(e + h->n_events, 0, (n - h->n_events) * sizeof *e);
        h->event1 = e;
        h->n_events = n;
    }
    if (!h->event1[heap]) {
        char name[48];
        snprintf(name, sizeof name, "streaming heap %" PRIu64, heap);
        uint16_t ev = pf_event_named(r, name, PC_UNIT_BYTES);
        if (ev == PF_NO_EVENT)
            return PF_NO_EVENT;
        h->event1[heap] = (uint16_t)(ev + 1);
    }
    return (uint16_t)(h->event1[heap] - 1);
}

static void free_columns(column *c, size_t n)
{
    for (size_t k = 0; k < n; k++)
        free(c[k].v);
}

/* The packet's columns: for allocations address 1, size 2, timestamp 4,
 * heap 5; for frees address 1, heap 2. */
static int read_columns(pf_reader *r, pb_reader *pr, column *c, size_t nc, const char *what)
{
    pb_field f;
    int got;
    while ((got = pb_next(pr, &f)) > 0)
        if (f.number >= 1 && f.number <= nc &&
            pf_each_varint(r, pr, &f, push, &c[f.number - 1], what) != PC_OK)
            return r->err->status;
    return got < 0 ? pf_wire_fail(r, pr, what) : PC_OK;
}

int pf_on_streaming_heap(pf_reader *r, pb_reader *pr, pf_seq *s, const pf_packet *pk,
                         int frees)
{
    struct pf_streaming *h = state(r);
    if (!h)
        return pf_nomem(r);
    const char *what = frees ? "StreamingFree" : "StreamingAllocation";
    column c[6];
    memset(c, 0, sizeof c);
    int st = read_columns(r, pr, c, frees ? 3 : 6, what);
    if (st != PC_OK) {
        free_columns(c, 6);
        return st;
    }
    const column *addr = &c[0], *size = &c[1], *ts = &c[3];
    const column *heap = frees ? &c[1] : &c[4];
    int64_t pid = pk->has_pid ? pk->pid : 0;
    uint32_t thread = pf_thread_of(r, pid, pid);
    if (thread == PC_NONE) {
        free_columns(c, 6);
        return pf_nomem(r);
    }
    if (frees)
        r->st.streaming_frees += addr->n;
    else
        r->st.streaming_allocs += addr->n;
    /* A free's time: its packet's, else the latest allocation's. */
    uint64_t free_time = h->last_time;
    int has_free_time = h->has_time;
    if (frees && pk->has_ts && pf_packet_time(r, s, pk, &free_time) == 0)
        has_free_time = 1;
    for (size_t i = 0; i < addr->n; i++) {
        uint64_t hid = i < heap->n ? heap->v[i] : 0, t = free_time;
        if (!frees) {
            if (i >= ts->n || pf_to_trace_time(r, PF_CLOCK_MONOTONIC_COARSE, s->id, ts->v[i],
                                               &t) < 0) {
                r->st.streaming_no_time++;
                continue;
            }
            if (!h->has_time || t > h->last_time)
                h->last_time = t;
            h->has_time = 1;
        } else if (!has_free_time) {
            r->st.streaming_no_time++;
            continue;
        }
        uint32_t e = entry(h, pid, (uint32_t)(hid > UINT32_MAX ? UINT32_MAX : hid), addr->v[i]);
        uint16_t ev = event_of(r, h, hid);
        if (e == PC_NONE || ev == PF_NO_EVENT) {
            free_columns(c, 6);
            return pf_nomem(r);
        }
        /* A free of an address with no allocation known counts nothing:
         * the allocation was before the recording. */
        /* An address allocated again without a free seen (one lost with
         * its packet): its bytes are taken back first, so that the
         * counter does not drift up. */
        if (!frees && h->size[e]) {
            int64_t old = pc_clamp_i64(h->size[e]);
            pc_add_counter(r->p, thread, t, ev, PC_NO_CPU, -old);
            r->st.streaming_unfreed++;
        }
        uint64_t bytes = frees ? h->size[e] : i < size->n ? size->v[i] : 0;
        h->size[e] = frees ? 0 : bytes;
        if (!bytes)
            continue;
        int64_t v = pc_clamp_i64(bytes);
        pc_add_counter(r->p, thread, t, ev, PC_NO_CPU, frees ? -v : v);
    }
    free_columns(c, 6);
    return r->p->oom ? pf_nomem(r) : PC_OK;
}
