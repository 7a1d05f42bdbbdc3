/* Gzip output is the same bytes however dirty the memory the compressor
 * is given: ISA-L's level buffers hold hash tables it may read before it
 * writes them, so they must start zeroed.  The heap is made to hand the
 * compressor reused blocks, filled with different garbage each time. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

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
