/* Sorting with a context pointer (see sort.h). */
#include "base/sort.h"

#include <string.h>

#include "base/grow.h"

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

/* Merges the sorted a[0..na) and b[0..nb) into out, a first on ties. */
static void merge(const unsigned char *a, size_t na, const unsigned char *b, size_t nb,
                  unsigned char *out, size_t size,
                  int (*cmp)(const void *, const void *, const void *), const void *ctx)
{
    while (na && nb) {
        if (cmp(b, a, ctx) < 0) {
            memcpy(out, b, size);
            b += size;
            nb--;
        } else {
            memcpy(out, a, size);
            a += size;
            na--;
        }
        out += size;
    }
    memcpy(out, a, na * size);
    memcpy(out + na * size, b, nb * size);
}

void pc_sort_runs_ctx(void *base, size_t n, size_t size,
                      int (*cmp)(const void *, const void *, const void *ctx), const void *ctx)
{
    if (n < 2)
        return;
    /* The runs: where each ascending stretch ends (run[k] is the end of
     * run k), found once; each pass merges neighbours and halves them. */
    size_t n_run = 1;
    for (size_t i = 1; i < n; i++)
        n_run += cmp((unsigned char *)base + (i - 1) * size, (unsigned char *)base + i * size,
                     ctx) > 0;
    if (n_run == 1)
        return;
    size_t *run = malloc(n_run * sizeof *run);
    unsigned char *tmp = malloc(n * size);
    if (!run || !tmp) {
        free(run);
        free(tmp);
        pc_sort_ctx(base, n, size, cmp, ctx);
        return;
    }
    unsigned char *src = base, *dst = tmp;
    size_t k = 0;
    /* Bounded: a comparator that answers otherwise the second time costs
     * the order, not memory. */
    for (size_t i = 1; i < n && k + 1 < n_run; i++)
        if (cmp(src + (i - 1) * size, src + i * size, ctx) > 0)
            run[k++] = i;
    n_run = k + 1;
    run[k] = n;
    while (n_run > 1) {
        size_t out = 0, start = 0;
        for (size_t r = 0; r < n_run; r += 2) {
            size_t mid = run[r], end = r + 1 < n_run ? run[r + 1] : mid;
            merge(src + start * size, mid - start, src + mid * size, end - mid,
                  dst + start * size, size, cmp, ctx);
            run[out++] = end;
            start = end;
        }
        n_run = out;
        unsigned char *t = src;
        src = dst;
        dst = t;
    }
    if (src != base)
        memcpy(base, src, n * size);
    free(run);
    free(tmp);
}

int pc_sort_u64(uint64_t *v, size_t n, uint64_t max)
{
    enum { BITS = 11, BUCKETS = 1 << BITS };
    if (n < 2 || !max)
        return 0;
    if (n > SIZE_MAX / sizeof(uint64_t))
        return -1;
    uint64_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return -1;
    pc_prefault(tmp, 0, n * sizeof *tmp);
    uint64_t *src = v, *dst = tmp;
    size_t count[BUCKETS];
    for (unsigned shift = 0; shift < 64 && max >> shift; shift += BITS) {
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++)
            count[src[i] >> shift & (BUCKETS - 1)]++;
        /* A digit all values share moves nothing. */
        if (count[src[0] >> shift & (BUCKETS - 1)] == n)
            continue;
        size_t at = 0;
        for (size_t d = 0; d < BUCKETS; d++) {
            size_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[src[i] >> shift & (BUCKETS - 1)]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, n * sizeof *v);
    free(tmp);
    return 0;
}
