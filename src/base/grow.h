/* Growing an array by doubling. */
#ifndef PROFCONV_BASE_GROW_H
#define PROFCONV_BASE_GROW_H

#include <stddef.h>

/* Makes room for need items of size bytes in the array that items points
 * to (a T ** for an array of T, with *cap items allocated), doubling its
 * capacity from first.  Returns 0, or -1 when out of memory or the size
 * overflows; then the array and *cap are as they were. */
int pc_grow(void *items, size_t *cap, size_t need, size_t size, size_t first);

#endif
