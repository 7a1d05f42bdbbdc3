/* Gzip output is the same bytes wherever the compressor's state lies in
 * memory and whatever that memory held before.  ISA-L 2.30 (and since
 * 2.24) hashes a stale register, the address of its stream, for the third
 * byte of a stream without history at levels 1 and 2, so the first block
 * of an output came out differently for about one address in a thousand
 * (gzip.c works around it); the heap is also made to hand the compressor
 * reused blocks, filled with different garbage each time. */
#define _DEFAULT_SOURCE  /* MAP_ANONYMOUS */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "io/sink.h"
#include "t.h"
#include "test_util.h"

/* Leaves freed blocks of the sizes the compressor asks for, full of
 * fill, for the next allocations to reuse. */
static void dirty_heap(unsigned char fill)
{
    enum { N = 8 };
    void *blocks[N];
    for (int i = 0; i < N; i++) {
        size_t size = (size_t)(64 + 64 * i) << 10;
        blocks[i] = malloc(size);
        if (blocks[i])
            memset(blocks[i], fill + i, size);
    }
    for (int i = N; i-- > 0;)
        free(blocks[i]);
}

static size_t first_difference(const unsigned char *a, size_t na, const unsigned char *b,
                               size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i])
        i++;
    return i;
}

/* Says where two gzip outputs part: in their text, or in the compressed
 * bytes of the same text, so that a rare failure says which layer it is. */
static void report_difference(int round, const unsigned char *a, size_t na,
                              const unsigned char *b, size_t nb)
{
    size_t ta = 0, tb = 0;
    unsigned char *xa = gunzip_bytes(a, na, &ta), *xb = gunzip_bytes(b, nb, &tb);
    if (!xa || !xb)
        t_fail(__FILE__, __LINE__, "round %d: an output does not inflate", round);
    else if (ta != tb || memcmp(xa, xb, ta) != 0)
        t_fail(__FILE__, __LINE__, "round %d: the text differs at byte %zu of %zu and %zu",
               round, first_difference(xa, ta, xb, tb), ta, tb);
    else
        t_fail(__FILE__, __LINE__,
               "round %d: the same %zu bytes of text compress differently from byte %zu "
               "(%zu and %zu bytes)", round, ta, first_difference(a, na, b, nb), na, nb);
    free(xa);
    free(xb);
}

TEST(gzip_output_independent_of_dirty_memory)
{
    /* Large blocks from the heap, not fresh zeroed pages. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    pc_profile *p = convert_fixture(NULL);
    if (!p)
        return;
    static const int formats[] = {PC_FORMAT_FOLDED, PC_FORMAT_FIREFOX, PC_FORMAT_PPROF};
    for (size_t f = 0; f < sizeof formats / sizeof *formats; f++) {
        t_case("gzip_output_independent_of_dirty_memory: %s", pc_format_name(formats[f]));
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = formats[f];
        w.gzip = 1;
        unsigned char *first = NULL;
        size_t first_len = 0;
        pc_error err;
        int differ = 0;
        for (int round = 0; round < 16; round++) {
            dirty_heap((unsigned char)(0x11 * round + 3));
            unsigned char *out = NULL;
            size_t n = 0;
            T_EQ_INT(pc_write_memory(p, &w, &out, &n, &err), PC_OK);
            if (!first) {
                first = out;
                first_len = n;
                continue;
            }
            if (n != first_len || memcmp(out, first, n) != 0) {
                if (!differ)
                    report_difference(round, first, first_len, out, n);
                differ++;
            }
            free(out);
        }
        T_EQ_INT(differ, 0);
        free(first);
    }
    mallopt(M_MMAP_THRESHOLD, 128 << 10);
    pc_profile_free(p);
}

/* Compresses text[0..n) at level through a memory sink on one thread. */
static size_t gzip_text(const unsigned char *text, size_t n, int level, unsigned char **out)
{
    pc_sink *s;
    pc_error err;
    if (sink_open_memory(&s, level, &err) != PC_OK)
        return 0;
    sink_set_threads(s, 1);
    sink_write(s, text, n);
    size_t len = 0;
    if (sink_finish(s, out, &len, &err) != PC_OK)
        return 0;
    return len;
}

TEST(gzip_output_independent_of_where_the_compressor_lies)
{
    /* The folded stacks of the fixture, and their first bytes: texts that
     * the fault changed at a few addresses in a thousand. */
    pc_profile *p = convert_fixture(NULL);
    if (!p)
        return;
    size_t n_text = 0;
    unsigned char *text = (unsigned char *)written_text(p, PC_FORMAT_FOLDED, &n_text);
    pc_profile_free(p);
    if (!text)
        return;
    /* The compressor's state (over 128 KiB) is mapped on its own: a
     * 64 KiB mapping kept before each output moves it 64 KiB down. */
    mallopt(M_MMAP_THRESHOLD, 128 << 10);
    enum { PLACES = 512 };
    void **spacer = calloc(PLACES, sizeof *spacer);
    static const size_t sizes[] = {48, 64, 100, 200, 0};
    unsigned char *first[3][5] = {{0}};
    size_t first_len[3][5] = {{0}};
    int differ = 0, places = 0;
    for (int k = 0; spacer && k < PLACES && !differ; k++, places++) {
        spacer[k] = mmap(NULL, 64 << 10, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        for (int level = 1; level <= 3; level++) {
            for (int i = 0; i < 5; i++) {
                size_t n = sizes[i] && sizes[i] < n_text ? sizes[i] : n_text;
                unsigned char *out = NULL;
                size_t len = gzip_text(text, n, level, &out);
                T_CHECK(len > 0);
                if (!first[level - 1][i]) {
                    first[level - 1][i] = out;
                    first_len[level - 1][i] = len;
                    continue;
                }
                if (len != first_len[level - 1][i] ||
                    memcmp(out, first[level - 1][i], len) != 0) {
                    t_fail(__FILE__, __LINE__, "level %d, %zu bytes of text: other "
                           "compressed bytes at the %d-th place", level, n, k + 1);
                    differ = 1;
                }
                free(out);
            }
        }
    }
    T_EQ_INT(places, PLACES);
    for (int k = 0; spacer && k < PLACES; k++)
        if (spacer[k] && spacer[k] != MAP_FAILED)
            munmap(spacer[k], 64 << 10);
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < 5; i++)
            free(first[l][i]);
    free(spacer);
    free(text);
}
