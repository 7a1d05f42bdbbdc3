/* heapprofd's running totals per callsite, kept across dumps.
 *
 * A heapprofd dump gives, per callstack id, what was allocated and freed
 * since profiling began.  heapprofd forgets a callstack once its
 * allocations are all freed; if the stack allocates again it comes back
 * under a new id with counters from zero, and dumps in between lack it.
 * trace_processor keeps each callsite's totals across this: an id new to a
 * callsite (a process, heap and stack) counts on from the callsite's
 * totals so far, and a callsite missing from a dump keeps its totals.
 * These tables do the same, so that every dump states every callsite.
 *
 * Sites are numbered in the order they first appear, which is the order
 * the reader emits them in.  Nothing here is tied to incremental state:
 * the totals outlive interned data.
 */
#ifndef PROFCONV_PERFETTO_HEAP_H
#define PROFCONV_PERFETTO_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashtab.h"

/* Values of a callsite or of a sample: bytes and counts. */
enum { PF_ALLOC, PF_FREED, PF_ALLOC_COUNT, PF_FREE_COUNT, PF_NVALUES };

typedef struct pf_heap_values {
    uint64_t v[PF_NVALUES];
} pf_heap_values;

typedef struct pf_heap_totals {
    struct {
        int64_t *pid;
        uint32_t *heap, *stack;
        pf_heap_values *total;
        uint32_t *next;       /* the next site of the same process and heap */
        size_t n, cap;
        pc_htab idx;
    } site;
    /* (pid, heap) -> its sites, in order of appearance. */
    struct {
        int64_t *pid;
        uint32_t *heap, *first, *last;
        size_t n, cap;
        pc_htab idx;
    } group;
    /* (site, callstack id) -> the site's totals when the id first
     * appeared for it, added to what the id reports. */
    struct {
        uint32_t *site;
        uint64_t *iid;
        pf_heap_values *base;
        size_t n, cap;
        pc_htab idx;
    } id;
} pf_heap_totals;

/* Records that callstack iid, resolved to the profile stack `stack`,
 * reports *v for (pid, heap) in the dump being read, and sets the site's
 * totals.  Returns the site's index, or PC_NONE when out of memory. */
uint32_t pf_heap_totals_add(pf_heap_totals *h, int64_t pid, uint32_t heap, uint32_t stack,
                            uint64_t iid, const pf_heap_values *v);

/* The first site of (pid, heap), or PC_NONE; site.next[] leads on. */
uint32_t pf_heap_first_site(const pf_heap_totals *h, int64_t pid, uint32_t heap);

void pf_heap_totals_free(pf_heap_totals *h);

#endif
