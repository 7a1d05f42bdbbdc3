/* Samples summed per (thread, stack, key), for the writers that show
 * totals rather than a timeline: pprof (key: the event) and folded stacks
 * (key: the heap, or PC_NONE).  Entries keep the order they were first
 * added in, so output built from them is deterministic. */
#ifndef PROFCONV_WRITE_SUMS_H
#define PROFCONV_WRITE_SUMS_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashtab.h"

typedef struct pc_sums {
    uint32_t *thread, *stack, *key;
    int64_t *count, *weight;   /* saturating sums */
    size_t n, cap;
    pc_htab idx;
} pc_sums;

/* Adds count and weight to the entry (thread, stack, key), made when new;
 * s starts zeroed.  Returns 0, or -1 when out of memory. */
int pc_sums_add(pc_sums *s, uint32_t thread, uint32_t stack, uint32_t key, int64_t count,
                int64_t weight);

void pc_sums_free(pc_sums *s);

#endif
