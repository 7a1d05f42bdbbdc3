/* Allocation: growing an array by doubling, copying a string, mapping
 * ahead. */
#ifndef PROFCONV_BASE_GROW_H
#define PROFCONV_BASE_GROW_H

#include <stddef.h>

/* Makes room for need items of size bytes in the array that items points
 * to (a T ** for an array of T, with *cap items allocated), doubling its
 * capacity from first.  Returns 0, or -1 when out of memory or the size
 * overflows; then the array and *cap are as they were.  Inline where
 * there is room already: decoders call it once an item. */
int pc_grow_to(void *items, size_t *cap, size_t need, size_t size, size_t first);

static inline int pc_grow(void *items, size_t *cap, size_t need, size_t size, size_t first)
{
    return need <= *cap ? 0 : pc_grow_to(items, cap, need, size, first);
}

/* Asks the system to map the pages of bytes [from, to) of the block at
 * base now, in one call, rather than one fault at a time as they are
 * first written: a column filled row after row then costs one call per
 * block instead of a fault per page, which on a virtual machine is
 * several microseconds each.  Only a hint: nothing where the system
 * cannot, and never a failure. */
void pc_prefault(void *base, size_t from, size_t to);

/* Gives the whole pages of bytes [from, to) of the block at base back to
 * the system, which reads them as zeros after; the block stays the
 * caller's, to write again or to free.  For a big block read once from
 * one end while another is written: the pages read go as the written ones
 * come, so the two together take little more than one.  Only a hint, as
 * pc_prefault. */
void pc_release(void *base, size_t from, size_t to);

/* A copy of the string s in memory from malloc, or NULL when out of
 * memory.  Used instead of strdup(): the address sanitizer's strdup
 * writes to what its allocation returned without looking, so under a
 * memory limit that lets allocations fail it would crash where this
 * reports out of memory. */
char *pc_strdup(const char *s);

#endif
