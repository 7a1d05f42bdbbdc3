/* The merge of sorted runs gives the order the heapsort gives, for
 * comparators that break every tie, and keeps equal items in their order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "t.h"

typedef struct item {
    uint32_t key, pos;
} item;

/* By key, then by position: a total order. */
static int cmp_total(const void *a, const void *b, const void *ctx)
{
    const item *x = a, *y = b;
    (void)ctx;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* By key alone, counting its calls in ctx. */
static int cmp_key(const void *a, const void *b, const void *ctx)
{
    const item *x = a, *y = b;
    (*(size_t *)ctx)++;
    return (x->key > y->key) - (x->key < y->key);
}

TEST(sort_runs_same_order_as_heapsort)
{
    uint64_t s = 12345;
    static const size_t sizes[] = {0, 1, 2, 3, 17, 1000, 65537};
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z];
        item *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
        /* Runs of random lengths: ascending stretches, as rows appended
         * dump by dump come, with repeated keys. */
        uint32_t key = 0;
        for (size_t i = 0; i < n; i++) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            if ((s >> 60) == 0)
                key = (uint32_t)(s >> 40) % 500;  /* a new run starts somewhere */
            else
                key += (uint32_t)(s >> 62);
            a[i] = (item){key, (uint32_t)(s >> 20) % 100};
            b[i] = a[i];
        }
        pc_sort_ctx(a, n, sizeof *a, cmp_total, NULL);
        pc_sort_runs_ctx(b, n, sizeof *b, cmp_total, NULL);
        T_CHECK(n == 0 || memcmp(a, b, n * sizeof *a) == 0);
        for (size_t i = 1; i < n; i++)
            T_CHECK(cmp_total(&b[i - 1], &b[i], NULL) <= 0);
        free(a);
        free(b);
    }
}

TEST(sort_runs_stable_and_quick_on_sorted_input)
{
    enum { N = 10000 };
    item *v = malloc(N * sizeof *v);
    /* Keys 0..9 repeated in blocks, positions in input order: a stable
     * sort leaves positions ascending within each key. */
    for (uint32_t i = 0; i < N; i++)
        v[i] = (item){(i / 7) % 10, i};
    size_t calls = 0;
    pc_sort_runs_ctx(v, N, sizeof *v, cmp_key, &calls);
    for (size_t i = 1; i < N; i++) {
        T_CHECK(v[i - 1].key <= v[i].key);
        if (v[i - 1].key == v[i].key)
            T_CHECK(v[i - 1].pos < v[i].pos);
    }
    /* Already sorted: one look at each neighbour pair, nothing moved. */
    calls = 0;
    pc_sort_runs_ctx(v, N, sizeof *v, cmp_key, &calls);
    T_EQ_INT(calls, N - 1);
    free(v);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The radix sort gives qsort's order at every width it chooses passes
 * by: one digit, several, all 64 bits, and digits every value shares
 * (skipped) between digits that differ. */
TEST(sort_u64_same_as_qsort)
{
    static const uint64_t maxes[] = {1, 2047, 2048, 5000000, (uint64_t)1 << 40 | 7, UINT64_MAX};
    static const size_t sizes[] = {0, 1, 2, 3, 100, 70001};
    uint64_t s = 99;
    for (size_t mi = 0; mi < sizeof maxes / sizeof *maxes; mi++)
        for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
            size_t n = sizes[z];
            uint64_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
            for (size_t i = 0; i < n; i++) {
                s = s * 6364136223846793005u + 1442695040888963407u;
                uint64_t v = s ^ s >> 29;
                /* Every fourth in a narrow band: digits above it shared. */
                a[i] = maxes[mi] == UINT64_MAX ? v : (i % 4 ? v % (maxes[mi] + 1)
                                                             : (v % 8) << 20);
                if (a[i] > maxes[mi])
                    a[i] = maxes[mi];
                b[i] = a[i];
            }
            T_EQ_INT(pc_sort_u64(a, n, maxes[mi]), 0);
            pc_qsort(b, n, sizeof *b, cmp_u64);
            T_CHECK(n == 0 || memcmp(a, b, n * sizeof *a) == 0);
            free(a);
            free(b);
        }
    /* Digits that differ below and above two that every value shares. */
    enum { N = 5000 };
    uint64_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    for (size_t i = 0; i < N; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        a[i] = b[i] = (s >> 61) << 33 | (s >> 20) % 2048;
    }
    T_EQ_INT(pc_sort_u64(a, N, (uint64_t)7 << 33 | 2047), 0);
    pc_qsort(b, N, sizeof *b, cmp_u64);
    T_CHECK(memcmp(a, b, N * sizeof *a) == 0);
    free(a);
    free(b);
}
