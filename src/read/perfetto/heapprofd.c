/* heapprofd's heap profiles (ProfilePacket): a dump may span several
 * packets, may bring its own string, frame and callstack tables, and
 * its samples are resolved only when it ends, once the interned data
 * that follows them has arrived.  heap.c keeps the running totals per
 * callsite from dump to dump. */
#include <stdlib.h>

#include "read/perfetto/reader.h"

static int on_profile_tables(pf_reader *r, pb_reader *pr, const pb_field *f, pf_seq *s)
{
    pb_reader sub;
    pb_reader_sub(pr, f, &sub);
    switch (f->number) {
    case 1: return pf_on_string(r, &sub, &s->local, PF_STRING);
    case 2: return pf_on_frame(r, &sub, &s->local);
    case 3: return pf_on_callstack(r, &sub, &s->local);
    case 4: return pf_on_mapping(r, &sub, &s->local);
    }
    return PC_OK;
}

static int heap_sample(pf_reader *r, pb_reader *pr, pf_seq *s, uint32_t dump,
                       int max_count_ok)
{
    static const uint8_t ex[] = {ANY, V, V, V, V, V, V, ANY, V, V};
    pb_field f;
    int got;
    uint64_t cs = 0, alloc = 0, freed = 0, ac = 0, fc = 0, max = 0, max_count = 0;
    int has_alloc = 0, has_max = 0;
    while ((got = NEXT(r, pr, &f, ex, "HeapSample")) > 0) {
        if (f.number < sizeof ex && ex[f.number] == V &&
            pf_scalar(r, pr, &f, "HeapSample") != PC_OK)
            return r->err->status;
        switch (f.number) {
        case 1: cs = f.value; break;
        case 2: alloc = f.value; has_alloc = 1; break;
        case 3: freed = f.value; break;
        case 5: ac = f.value; break;
        case 6: fc = f.value; break;
        case 8: max = f.value; has_max = 1; break;
        case 9: max_count = f.value; break;
        }
    }
    if (got < 0)
        return r->err->status;
    /* In dump_at_max mode the peak is all there is: shown as allocated
     * and never freed.  Its count is only right in dumps that state
     * orig_sampling_interval_bytes (older heapprofd got it wrong). */
    if (!has_alloc && has_max) {
        alloc = max;
        ac = max_count_ok ? max_count : 0;
        freed = fc = 0;
    }
    struct pc_col cols[] = {PC_COL(s->hs.callstack), PC_COL(s->hs.val), PC_COL(s->hs.dump)};
    if (pc_grow_cols(&s->hs.cap, s->hs.n + 1, cols, 3) < 0)
        return pf_nomem(r);
    size_t i = s->hs.n++;
    s->hs.callstack[i] = cs;
    s->hs.val[i] = (pf_heap_values){{alloc, freed, ac, fc}};
    s->hs.dump[i] = dump;
    return PC_OK;
}

static int heap_dump(pf_reader *r, pb_reader *pr, pf_seq *s, const pf_packet *pk)
{
    static const uint8_t ex[] = {ANY, V, L, V, V, L, V, V, V, V, V, L, V, V, V, V};
    pb_field f;
    int got;
    int64_t pid = 0;
    uint64_t ts = 0;
    int has_ts = 0, flagged = 0, max_count_ok = 0;
    uint32_t heap = PC_NONE;
    /* The header fields first: samples may precede them in the bytes. */
    pb_reader scan = *pr;
    while ((got = NEXT(r, &scan, &f, ex, "ProcessHeapSamples")) > 0) {
        if (f.number < sizeof ex && ex[f.number] == V &&
            pf_scalar(r, &scan, &f, "ProcessHeapSamples") != PC_OK)
            return r->err->status;
        switch (f.number) {
        case 1: pid = (int64_t)f.value; break;
        case 4: case 6: case 7: case 8: case 10: case 14: flagged |= f.value != 0; break;
        case 9: ts = f.value; has_ts = 1; break;
        case 13: max_count_ok = f.value != 0; break;
        case 11:
            if ((heap = pc_intern(r->p, f.data, f.len)) == PC_NONE)
                return pf_nomem(r);
            break;
        }
    }
    if (got < 0)
        return r->err->status;
    if (heap == PC_NONE && (heap = pc_intern_cstr(r->p, "unknown")) == PC_NONE)
        return pf_nomem(r);
    r->st.heap_flags += flagged;
    /* Each continued packet repeats the header of the dump it continues. */
    uint32_t dump = PC_NONE;
    for (size_t d = 0; d < s->hd.n; d++)
        if (s->hd.pid[d] == pid && s->hd.heap[d] == heap && s->hd.ts[d] == ts &&
            s->hd.has_ts[d] == has_ts)
            dump = (uint32_t)d;
    if (dump == PC_NONE) {
        struct pc_col cols[] = {PC_COL(s->hd.pid), PC_COL(s->hd.heap), PC_COL(s->hd.ts),
                                PC_COL(s->hd.has_ts), PC_COL(s->hd.pkt_ts),
                                PC_COL(s->hd.has_pkt_ts)};
        if (pc_grow_cols(&s->hd.cap, s->hd.n + 1, cols, 6) < 0)
            return pf_nomem(r);
        dump = (uint32_t)s->hd.n++;
        s->hd.pid[dump] = pid;
        s->hd.heap[dump] = heap;
        s->hd.ts[dump] = ts;
        s->hd.has_ts[dump] = (uint8_t)has_ts;
        s->hd.has_pkt_ts[dump] = !has_ts && pk->has_ts &&
                                 pf_packet_time(r, s, pk, &s->hd.pkt_ts[dump]) == 0;
    }
    while ((got = pb_next(pr, &f)) > 0)
        if (f.number == 2) {
            pb_reader sub;
            pb_reader_sub(pr, &f, &sub);
            if (heap_sample(r, &sub, s, dump, max_count_ok) != PC_OK)
                return r->err->status;
        }
    return got < 0 ? pf_wire_fail(r, pr, "ProcessHeapSamples") : PC_OK;
}

/* A dump is complete: its samples' callstacks can be resolved now that
 * the interned data that followed them has arrived.  The chain's dumps
 * are taken in order, and each states the totals of every callsite its
 * process's heap has had so far. */
int pf_heap_dump_end(pf_reader *r, pf_seq *s)
{
    pc_profile *p = r->p;
    size_t nd = s->hd.n, ns = s->hs.n;
    /* Samples by dump (a counting sort: continued packets interleave the
     * dumps of several processes). */
    size_t *start = calloc(nd + 2, sizeof *start);
    uint32_t *order = malloc((ns + 1) * sizeof *order);
    int status = PC_OK;
    if (!start || !order) {
        status = pf_nomem(r);
        goto done;
    }
    for (size_t i = 0; i < ns; i++)
        start[s->hs.dump[i] + 2]++;
    for (size_t d = 0; d < nd; d++)
        start[d + 2] += start[d + 1];
    for (size_t i = 0; i < ns; i++)
        order[start[s->hs.dump[i] + 1]++] = (uint32_t)i;
    for (size_t d = 0; d < nd && !p->oom; d++) {
        uint64_t when = 0;
        /* Dump times are on CLOCK_MONOTONIC_COARSE; a dump whose time
         * cannot be converted is left out, as trace_processor does. */
        if (s->hd.has_ts[d] &&
            pf_to_trace_time(r, PF_CLOCK_MONOTONIC_COARSE, s->id, s->hd.ts[d], &when) < 0) {
            r->st.heap_no_clock++;
            continue;
        }
        /* Without a time of its own, a dump is placed at its packet's. */
        if (!s->hd.has_ts[d] && s->hd.has_pkt_ts[d])
            when = s->hd.pkt_ts[d];
        int64_t pid = s->hd.pid[d];
        uint32_t heap = s->hd.heap[d];
        for (size_t k = start[d]; k < start[d + 1]; k++) {
            uint32_t i = order[k], stack;
            int res = pf_stack_of(r, s, s->hs.callstack[i], PC_NONE, &stack);
            if (res < 0) {
                if (p->oom)
                    break;
                r->st.heap_unresolved++;
                continue;
            }
            if (res > 0)
                r->st.partial_stacks++;
            /* An allocation with no frames has no callsite to charge it
             * to; trace_processor drops it too. */
            if (stack == PC_NONE) {
                r->st.heap_empty++;
                continue;
            }
            if (pf_heap_totals_add(&s->totals, pid, heap, stack, s->hs.callstack[i],
                                   &s->hs.val[i]) == PC_NONE) {
                status = pf_nomem(r);
                goto done;
            }
        }
        uint32_t thread = pf_thread_of(r, pid, pid);
        uint32_t dump = (uint32_t)p->heap.n_dumps++;
        const pf_heap_totals *h = &s->totals;
        for (uint32_t i = pf_heap_first_site(h, pid, heap); i != PC_NONE && !p->oom;
             i = h->site.next[i]) {
            const uint64_t *v = h->site.total[i].v;
            if (v[PF_ALLOC] | v[PF_FREED] | v[PF_ALLOC_COUNT] | v[PF_FREE_COUNT])
                pc_add_heap(p, thread, heap, dump, when, h->site.stack[i], v[PF_ALLOC],
                            v[PF_FREED], v[PF_ALLOC_COUNT], v[PF_FREE_COUNT]);
        }
    }
    if (p->oom)
        status = pf_nomem(r);
done:
    free(start);
    free(order);
    s->hs.n = 0;
    s->hd.n = 0;
    s->in_dump = 0;
    pf_interned_clear(&s->local);
    return status;
}

int pf_on_profile_packet(pf_reader *r, pb_reader *pr, pf_seq *s, const pf_packet *pk)
{
    static const uint8_t ex[] = {ANY, L, L, L, L, L, V, V};
    pb_field f;
    int got;
    int continued = 0;
    /* Tables and flags first: dumps refer to the tables. */
    pb_reader scan = *pr;
    while ((got = NEXT(r, &scan, &f, ex, "ProfilePacket")) > 0) {
        if ((f.number == 6 || f.number == 7) && pf_scalar(r, &scan, &f, "ProfilePacket") != PC_OK)
            return r->err->status;
        if (f.number >= 1 && f.number <= 4 && on_profile_tables(r, &scan, &f, s) != PC_OK)
            return r->err->status;
        if (f.number == 6)
            continued = f.value != 0;
        if (f.number == 7) {
            if (s->has_index && f.value != s->next_index)
                r->st.heap_gaps++;
            s->has_index = 1;
            s->next_index = f.value + 1;
        }
    }
    if (got < 0)
        return r->err->status;
    if (!s->in_dump)
        s->dump_offset = pk->offset;
    s->in_dump = 1;
    while ((got = pb_next(pr, &f)) > 0)
        if (f.number == 5) {
            pb_reader sub;
            pb_reader_sub(pr, &f, &sub);
            if (heap_dump(r, &sub, s, pk) != PC_OK)
                return r->err->status;
        }
    if (got < 0)
        return pf_wire_fail(r, pr, "ProfilePacket");
    return continued ? PC_OK : pf_heap_dump_end(r, s);
}
