/* Perfetto clock snapshots and conversion to the trace clock
 * (doc/formats/perfetto.md, "Clocks").
 *
 * Every ClockSnapshot lists the same instant on several clocks.  A time on
 * clock A becomes trace time by walking the shortest chain of clocks that
 * appear together in snapshots; on each hop the snapshot used is the one
 * with the largest time on the source clock not after the value (or the
 * first one when the value precedes them all).  Like trace_processor,
 * conversion uses the snapshots seen so far in the file, so a packet is
 * converted the same way wherever the file is cut.  Clock ids 64-127 are
 * private to a packet sequence.
 */
#ifndef PROFCONV_PERFETTO_CLOCK_H
#define PROFCONV_PERFETTO_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#define PF_CLOCK_REALTIME 1
#define PF_CLOCK_MONOTONIC 3
#define PF_CLOCK_MONOTONIC_COARSE 4
#define PF_CLOCK_MONOTONIC_RAW 5
#define PF_CLOCK_BOOTTIME 6

typedef struct pf_clock_edge {
    uint64_t from, to;        /* clock keys */
    uint64_t *ts_from, *ts_to;
    size_t n, cap;
    /* Snapshots come in time order, so the hop's snapshot is found by
     * bisection, unless one came out of order. */
    int unsorted;
    /* The snapshot the last hop used: packets come in nearly time order,
     * so the next hop mostly uses it or the one after, and a long trace's
     * thousands of snapshots cost no more than a short one's few. */
    size_t last;
} pf_clock_edge;

/* A clock's chain of hops to the trace clock, found once: conversion runs
 * per packet, and the chain changes only when a new pair of clocks (an
 * edge) appears. */
#define PF_CLOCK_PATHS 16
#define PF_CLOCK_HOPS 8
typedef struct pf_clock_path {
    uint64_t key;
    size_t n_edges;           /* the edge count it was found with; 0: empty */
    int len;                  /* hops, or -1: no chain */
    uint32_t hop[PF_CLOCK_HOPS];
} pf_clock_path;

typedef struct pf_clocks {
    uint64_t trace_clock;     /* key of the trace clock */
    int trace_clock_set;      /* fixed by a snapshot's primary_trace_clock */
    pf_clock_edge *edges;
    size_t n_edges, cap_edges;
    size_t n_snapshots;
    pf_clock_path paths[PF_CLOCK_PATHS];
    uint64_t trace_clock_of_paths;  /* the trace clock the paths lead to */
    size_t next_path;         /* the entry a new chain replaces */
} pf_clocks;

/* The key of clock id seen on sequence seq (ids 64-127 are per sequence). */
static inline uint64_t pf_clock_key(uint32_t id, uint32_t seq)
{
    return id >= 64 && id < 128 ? (uint64_t)seq << 32 | id : id;
}

/* Adds one snapshot: n (clock key, time in ns) pairs.  Returns 0, or -1
 * when out of memory. */
int pf_clocks_add(pf_clocks *c, const uint64_t *keys, const uint64_t *ts, size_t n);

/* Converts t on clock key to trace time.  Returns 0, or -1 when no chain
 * of snapshots joins the clocks (*out is then t unchanged). */
int pf_clocks_convert(pf_clocks *c, uint64_t key, uint64_t t, uint64_t *out);

/* The times u with u - from < len (unsigned) that convert as t did, by the
 * same difference, while no snapshot is added: len is 0 where that is not
 * known (a chain of more than one hop, snapshots out of order). */
typedef struct pf_clock_span {
    uint64_t from, len;
} pf_clock_span;

/* pf_clocks_convert, and *span (when not NULL) for t. */
int pf_clocks_convert_span(pf_clocks *c, uint64_t key, uint64_t t, uint64_t *out,
                           pf_clock_span *span);

void pf_clocks_free(pf_clocks *c);

#endif
