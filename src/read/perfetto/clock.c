#include "read/perfetto/clock.h"

#include <stdlib.h>
#include <string.h>

static pf_clock_edge *edge(pf_clocks *c, uint64_t from, uint64_t to)
{
    for (size_t i = 0; i < c->n_edges; i++)
        if (c->edges[i].from == from && c->edges[i].to == to)
            return &c->edges[i];
    if (c->n_edges == c->cap_edges) {
        size_t cap = c->cap_edges ? c->cap_edges * 2 : 8;
        pf_clock_edge *e = realloc(c->edges, cap * sizeof *e);
        if (!e)
            return NULL;
        c->edges = e;
        c->cap_edges = cap;
    }
    pf_clock_edge *e = &c->edges[c->n_edges++];
    memset(e, 0, sizeof *e);
    e->from = from;
    e->to = to;
    return e;
}

static int edge_add(pf_clock_edge *e, uint64_t a, uint64_t b)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 8;
        uint64_t *x = realloc(e->ts_from, cap * sizeof *x);
        if (!x)
            return -1;
        e->ts_from = x;
        uint64_t *y = realloc(e->ts_to, cap * sizeof *y);
        if (!y)
            return -1;
        e->ts_to = y;
        e->cap = cap;
    }
    if (e->n && a < e->ts_from[e->n - 1])
        e->unsorted = 1;
    e->ts_from[e->n] = a;
    e->ts_to[e->n] = b;
    e->n++;
    return 0;
}

int pf_clocks_add(pf_clocks *c, const uint64_t *keys, const uint64_t *ts, size_t n)
{
    /* Both directions of every pair, so any clock converts to any other. */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            if (i == j || keys[i] == keys[j])
                continue;
            pf_clock_edge *e = edge(c, keys[i], keys[j]);
            if (!e || edge_add(e, ts[i], ts[j]) < 0)
                return -1;
        }
    c->n_snapshots++;
    return 0;
}

/* One hop: the snapshot with the largest source time not after t (the
 * last of equal ones), else the first. */
static uint64_t hop(pf_clock_edge *e, uint64_t t, size_t *used)
{
    size_t best = 0;
    /* Snapshot i is the hop's when t is at or after it and before the
     * next, for the last of equal times. */
#define HOP_AT(i) (e->ts_from[i] <= t && ((i) + 1 == e->n || e->ts_from[(i) + 1] > t))
    if (!e->unsorted && e->last < e->n && HOP_AT(e->last)) {
        best = e->last;
    } else if (!e->unsorted && e->last + 1 < e->n && HOP_AT(e->last + 1)) {
        best = ++e->last;
    } else if (!e->unsorted) {
        /* The first snapshot after t; the one before it is the hop's. */
        size_t lo = 0, hi = e->n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (e->ts_from[mid] <= t)
                lo = mid + 1;
            else
                hi = mid;
        }
        best = e->last = lo ? lo - 1 : 0;
    } else {
        int found = 0;
        for (size_t i = 0; i < e->n; i++)
            if (e->ts_from[i] <= t && (!found || e->ts_from[i] >= e->ts_from[best])) {
                best = i;
                found = 1;
            }
    }
#undef HOP_AT
    *used = best;
    return t - e->ts_from[best] + e->ts_to[best];
}

/* The shortest chain of edges from key to the trace clock, breadth
 * first (few clocks, few edges), into hops[PF_CLOCK_BFS].  Its length, or
 * -1 when there is none. */
enum { PF_CLOCK_BFS = 64 };
static int find_path(const pf_clocks *c, uint64_t key, uint32_t *hops)
{
    uint64_t node[PF_CLOCK_BFS];
    int prev[PF_CLOCK_BFS], via[PF_CLOCK_BFS];
    size_t n = 1, head = 0;
    node[0] = key;
    prev[0] = -1;
    via[0] = -1;
    while (head < n) {
        uint64_t cur = node[head];
        if (cur == c->trace_clock) {
            int len = 0;
            for (int k = (int)head; k > 0; k = prev[k])
                len++;
            int at = len;
            for (int k = (int)head; k > 0; k = prev[k])
                hops[--at] = (uint32_t)via[k];
            return len;
        }
        for (size_t i = 0; i < c->n_edges && n < PF_CLOCK_BFS; i++) {
            if (c->edges[i].from != cur)
                continue;
            int seen = 0;
            for (size_t k = 0; k < n && !seen; k++)
                seen = node[k] == c->edges[i].to;
            if (seen)
                continue;
            node[n] = c->edges[i].to;
            prev[n] = (int)head;
            via[n] = (int)i;
            n++;
        }
        head++;
    }
    return -1;
}

int pf_clocks_convert(pf_clocks *c, uint64_t key, uint64_t t, uint64_t *out)
{
    return pf_clocks_convert_span(c, key, t, out, NULL);
}

int pf_clocks_convert_span(pf_clocks *c, uint64_t key, uint64_t t, uint64_t *out,
                           pf_clock_span *span)
{
    *out = t;
    if (span)
        *span = (pf_clock_span){0, 0};
    if (key == c->trace_clock) {
        if (span)
            *span = (pf_clock_span){0, UINT64_MAX};
        return 0;
    }
    /* Chains found for another trace clock lead elsewhere. */
    if (c->trace_clock_of_paths != c->trace_clock) {
        memset(c->paths, 0, sizeof c->paths);
        c->trace_clock_of_paths = c->trace_clock;
    }
    const uint32_t *hops = NULL;
    int len = -1;
    uint32_t found[PF_CLOCK_BFS];
    for (size_t i = 0; i < PF_CLOCK_PATHS && !hops; i++)
        if (c->paths[i].n_edges == c->n_edges && c->n_edges && c->paths[i].key == key) {
            hops = c->paths[i].hop;
            len = c->paths[i].len;
        }
    if (!hops) {
        len = find_path(c, key, found);
        hops = found;
        /* Kept when short, as every real chain is. */
        if (len <= PF_CLOCK_HOPS && c->n_edges) {
            pf_clock_path *pa = &c->paths[c->next_path];
            c->next_path = (c->next_path + 1) % PF_CLOCK_PATHS;
            pa->key = key;
            pa->n_edges = c->n_edges;
            pa->len = len;
            if (len > 0)
                memcpy(pa->hop, found, (size_t)len * sizeof *found);
        }
    }
    if (len < 0)
        return -1;
    uint64_t v = t;
    size_t used = 0;
    for (int k = 0; k < len; k++)
        v = hop(&c->edges[hops[k]], v, &used);
    *out = v;
    if (span && len == 1 && !c->edges[hops[0]].unsorted) {
        /* The times that pick the same snapshot: from it (or from 0 for
         * the first, which earlier times use too) to the next one. */
        const pf_clock_edge *e = &c->edges[hops[0]];
        uint64_t lo = used ? e->ts_from[used] : 0;
        uint64_t hi = used + 1 < e->n ? e->ts_from[used + 1] : UINT64_MAX;
        *span = (pf_clock_span){lo, hi - lo};
    }
    return 0;
}

void pf_clocks_free(pf_clocks *c)
{
    for (size_t i = 0; i < c->n_edges; i++) {
        free(c->edges[i].ts_from);
        free(c->edges[i].ts_to);
    }
    free(c->edges);
    memset(c, 0, sizeof *c);
}
