/* Allocation helpers (see grow.h). */
#define _DEFAULT_SOURCE  /* madvise */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/grow.h"

int pc_grow_to(void *items, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : first ? first : 1;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return -1;
        c *= 2;
    }
    if (c > SIZE_MAX / size)
        return -1;
    /* The caller's pointer is read and written as bytes: it may point to
     * any object type. */
    void *old;
    memcpy(&old, items, sizeof old);
    void *grown = realloc(old, c * size);
    if (!grown)
        return -1;
    memcpy(items, &grown, sizeof grown);
    *cap = c;
    return 0;
}

/* The system's page size, asked once (4096 where it does not say): a
 * hint given for pages of the wrong size would reach past the range on
 * 16K- and 64K-page systems, madvise rounding its length up. */
static uintptr_t page_size(void)
{
    static _Atomic uintptr_t size;
    uintptr_t p = atomic_load_explicit(&size, memory_order_relaxed);
    if (!p) {
        long s = sysconf(_SC_PAGESIZE);
        p = s > 0 && ((uintptr_t)s & ((uintptr_t)s - 1)) == 0 ? (uintptr_t)s : 4096;
        atomic_store_explicit(&size, p, memory_order_relaxed);
    }
    return p;
}

void pc_prefault(void *base, size_t from, size_t to)
{
#ifdef MADV_POPULATE_WRITE
    const uintptr_t page = page_size();
    uintptr_t a = ((uintptr_t)base + from + page - 1) & ~(page - 1);
    uintptr_t e = ((uintptr_t)base + to) & ~(page - 1);
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
    (void)base;
    (void)from;
    (void)to;
#endif
}

void pc_release(void *base, size_t from, size_t to)
{
    const uintptr_t page = page_size();
    uintptr_t a = ((uintptr_t)base + from + page - 1) & ~(page - 1);
    uintptr_t e = ((uintptr_t)base + to) & ~(page - 1);
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_DONTNEED);
}

char *pc_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}
