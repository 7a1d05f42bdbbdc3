/* Sorting: qsort for any n, and a sort whose comparator gets a context. */
#ifndef PROFCONV_BASE_SORT_H
#define PROFCONV_BASE_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* qsort, for any n: with fewer than two items there is nothing to sort,
 * and the array may not even exist (qsort must not be given NULL). */
static inline void pc_qsort(void *base, size_t n, size_t size,
                            int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

/* Sorts n items of size bytes at base with a comparator that also gets
 * ctx: C11's qsort has no such argument, and a context in a file-scope
 * variable would be shared by conversions and writes on other threads.
 * Not stable (a heapsort: no allocation); comparators that break every
 * tie give the same order as qsort. */
void pc_sort_ctx(void *base, size_t n, size_t size,
                 int (*cmp)(const void *, const void *, const void *ctx), const void *ctx);

/* The same order for a comparator that breaks every tie, faster on many
 * items and on items that come in sorted runs (rows appended dump by dump,
 * say): a merge of the runs the input has, with a buffer of n items.
 * Stable.  Without memory for the buffer, pc_sort_ctx. */
void pc_sort_runs_ctx(void *base, size_t n, size_t size,
                      int (*cmp)(const void *, const void *, const void *ctx), const void *ctx);

/* Sorts n values, each at most max, ascending: a radix sort, 11 bits a
 * pass and only as many passes as max has bits, so a million keys sort
 * in a few sequential sweeps instead of a comparison each way.  Uses a
 * buffer of n values; returns 0, or -1 without memory for it (v is then
 * as it was).  Values above max are a caller's error: they come out in
 * an unspecified order. */
int pc_sort_u64(uint64_t *v, size_t n, uint64_t max);

#endif
