/* Sorting with a context pointer (see sort.h). */
#include "base/sort.h"

static void swap_items(unsigned char *a, unsigned char *b, size_t size)
{
    for (size_t k = 0; k < size; k++) {
        unsigned char t = a[k];
        a[k] = b[k];
        b[k] = t;
    }
}

/* Moves item root down the heap v[0..n) until no child is greater. */
static void sift_down(unsigned char *v, size_t root, size_t n, size_t size,
                      int (*cmp)(const void *, const void *, const void *), const void *ctx)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && cmp(v + child * size, v + (child + 1) * size, ctx) < 0)
            child++;
        if (cmp(v + root * size, v + child * size, ctx) >= 0)
            return;
        swap_items(v + root * size, v + child * size, size);
        root = child;
    }
}

void pc_sort_ctx(void *base, size_t n, size_t size,
                 int (*cmp)(const void *, const void *, const void *ctx), const void *ctx)
{
    unsigned char *v = base;
    if (n < 2)
        return;
    /* Input in strictly increasing order has one sorted order, itself:
     * rows often come so, and heapsort would take n log n to say so. */
    size_t k = 1;
    while (k < n && cmp(v + (k - 1) * size, v + k * size, ctx) < 0)
        k++;
    if (k == n)
        return;
    for (size_t i = n / 2; i-- > 0;)
        sift_down(v, i, n, size, cmp, ctx);
    for (size_t end = n - 1; end > 0; end--) {
        swap_items(v, v + end * size, size);
        sift_down(v, 0, end, size, cmp, ctx);
    }
}
