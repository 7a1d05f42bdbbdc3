/* Gzip output compressed in blocks on several threads: the same bytes for
 * every thread count, a member any gunzip reads back to exactly what was
 * written, and a size close to one long stream's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/sink.h"
#include "sp_encode.h"
#include "t.h"
#include "test_util.h"

/* Text like a profile's JSON: repeated keys, numbers that drift, and
 * stretches no earlier block has, so that blocks lean on their history. */
static unsigned char *make_text(size_t n)
{
    unsigned char *t = malloc(n);
    T_CHECK(t != NULL);
    uint64_t x = 88172645463325252u;
    size_t i = 0;
    while (i < n) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        char line[96];
        int k = (x & 3) == 0 ? snprintf(line, sizeof line, "{\"time\":%llu.%03u,\"stack\":%u},\n",
                                           (unsigned long long)(i / 7), (unsigned)(x % 1000),
                                           (unsigned)(x >> 40) % 5000)
                             : snprintf(line, sizeof line, "\"func_%u\",", (unsigned)(x >> 33) % 300);
        for (int j = 0; j < k && i < n; j++)
            t[i++] = (unsigned char)line[j];
    }
    return t;
}

/* Writes text through a gzip memory sink in pieces of changing sizes,
 * some by reserve/advance, in the order pattern picks; the compressed
 * bytes in *out. */
static size_t gzip_in_pieces(const unsigned char *text, size_t n, int level, int threads,
                             unsigned pattern, unsigned char **out)
{
    pc_sink *s;
    pc_error err;
    T_EQ_INT(sink_open_memory(&s, level, &err), PC_OK);
    sink_set_threads(s, threads);
    size_t i = 0, step = 1 + pattern;
    while (i < n) {
        size_t k = step % 5000 + 1;
        if (k > n - i)
            k = n - i;
        if (step % 3 == pattern % 3 && k <= SINK_RESERVE_MAX) {
            /* Room asked for as a writer does: more than it then uses. */
            memcpy(sink_reserve(s, pattern % 2 ? SINK_RESERVE_MAX : k), text + i, k);
            sink_advance(s, k);
        } else {
            sink_write(s, text + i, k);
        }
        i += k;
        step = step * 7 + 3;
    }
    T_EQ_INT(sink_bytes(s), n);
    size_t len = 0;
    T_EQ_INT(sink_finish(s, out, &len, &err), PC_OK);
    return len;
}

static size_t gzip_via_sink(const unsigned char *text, size_t n, int level, int threads,
                            unsigned char **out)
{
    return gzip_in_pieces(text, n, level, threads, 0, out);
}

/* Blocks end every 1 MiB of text, not where a writer's request for room
 * did not fit: the same text gives the same gzip bytes however it was
 * written, so a writer can change how it writes without changing them. */
TEST(gzip_blocks_same_bytes_however_written)
{
    size_t n = (3u << 20) + 777;
    unsigned char *text = make_text(n);
    unsigned char *first;
    size_t n_first = gzip_in_pieces(text, n, 1, 2, 0, &first);
    for (unsigned pattern = 1; pattern < 6; pattern++) {
        t_case("gzip_blocks_same_bytes_however_written: pattern %u", pattern);
        unsigned char *other;
        size_t n_other = gzip_in_pieces(text, n, 1, 2, pattern, &other);
        T_EQ_INT(n_other, n_first);
        T_CHECK(n_other == n_first && memcmp(other, first, n_first) == 0);
        free(other);
    }
    free(first);
    free(text);
}


TEST_SLOW(gzip_blocks_same_bytes_for_every_thread_count)
{
    /* Over five blocks, the last one short. */
    size_t n = (5u << 20) + 12345;
    unsigned char *text = make_text(n);
    static const int levels[] = {1, 3, 6};
    for (size_t l = 0; l < sizeof levels / sizeof *levels; l++) {
        t_case("gzip_blocks_same_bytes_for_every_thread_count: level %d", levels[l]);
        unsigned char *one;
        size_t n_one = gzip_via_sink(text, n, levels[l], 1, &one);
        static const int threads[] = {2, 3, 8, 0};
        for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
            unsigned char *many;
            size_t n_many = gzip_via_sink(text, n, levels[l], threads[t], &many);
            T_EQ_INT(n_many, n_one);
            T_CHECK(n_many == n_one && memcmp(many, one, n_one) == 0);
            free(many);
        }
        size_t n_back = 0;
        unsigned char *back = gunzip_bytes(one, n_one, &n_back);
        T_CHECK(back != NULL);
        T_EQ_INT(n_back, n);
        T_CHECK(back && n_back == n && memcmp(back, text, n) == 0);
        free(back);
        /* One long stream of the same level, for the size: blocks primed
         * with their history lose well under a percent. */
        uLongf n_stream = compressBound((uLong)n);
        unsigned char *stream = malloc(n_stream);
        T_EQ_INT(compress2(stream, &n_stream, text, (uLong)n, levels[l] > 3 ? levels[l] : 1), Z_OK);
        if (levels[l] > 3)
            T_CHECK(n_one < n_stream + n_stream / 100);
        /* Blocks without their history would lose more than that. */
        T_CHECK(n_one < n / 3);
        free(stream);
        free(one);
    }
    free(text);
}

TEST(gzip_blocks_small_and_empty_outputs)
{
    static const size_t sizes[] = {0, 1, 32767, 32768, 32769, 1u << 20, (1u << 20) + 1};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        t_case("gzip_blocks_small_and_empty_outputs: %zu bytes", sizes[i]);
        unsigned char *text = make_text(sizes[i] ? sizes[i] : 1);
        unsigned char *a, *b;
        size_t na = gzip_via_sink(text, sizes[i], 1, 1, &a);
        size_t nb = gzip_via_sink(text, sizes[i], 1, 4, &b);
        T_CHECK(na == nb && memcmp(a, b, na) == 0);
        size_t n_back = 0;
        unsigned char *back = gunzip_bytes(a, na, &n_back);
        T_CHECK(back != NULL);
        T_EQ_INT(n_back, sizes[i]);
        T_CHECK(back && (sizes[i] == 0 || memcmp(back, text, sizes[i]) == 0));
        /* gzip's own header: magic, deflate, no time stamp. */
        T_CHECK(na >= 18 && a[0] == 0x1f && a[1] == 0x8b && a[2] == 8);
        T_CHECK(a[4] == 0 && a[5] == 0 && a[6] == 0 && a[7] == 0);
        free(back);
        free(a);
        free(b);
        free(text);
    }
}

/* A writer abandoned midway, with blocks still being compressed, leaves
 * nothing running and nothing leaked (the sanitizer build checks). */
TEST(gzip_blocks_abort_midway)
{
    size_t n = 4u << 20;
    unsigned char *text = make_text(n);
    pc_sink *s;
    pc_error err;
    T_EQ_INT(sink_open_memory(&s, 1, &err), PC_OK);
    sink_set_threads(s, 4);
    sink_write(s, text, n);
    sink_abort(s);
    free(text);
}

/* The whole path: a profile whose outputs span several blocks, written
 * gzipped with one thread, the default and four, gives the same file, and
 * the same bytes as the plain output once gunzipped. */
TEST_SLOW(gzip_blocks_profile_output_same_for_threads)
{
    /* Every sample a path of its own: frames by address, so the outputs
     * are megabytes. */
    spe e;
    spe_begin(&e);
    const char *ev[] = {"cpu-clock"};
    spe_meta(&e, ev, 1, NULL, NULL, NULL, NULL, 0);
    spe_frame chain[10];
    for (uint32_t i = 0; i < 30000; i++) {
        for (int k = 0; k < 10; k++)
            chain[k] = (spe_frame){0x100000 + (uint64_t)i * 0x40 + (uint64_t)k * 4, 0, -1, -1};
        spe_sample(&e, 1000 + i, (int32_t)(1 + i % 4), 1, 0, chain, 10, NULL);
    }
    spe_file(&e, 0, "/lib/x.so", NULL, 0);
    spe_end(&e);
    pc_profile *p = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(e.out.data, e.out.len, NULL, &p, &err), PC_OK);
    spe_free(&e);
    if (!p)
        return;
    static const int formats[] = {PC_FORMAT_FIREFOX, PC_FORMAT_PPROF, PC_FORMAT_FOLDED};
    for (size_t f = 0; f < sizeof formats / sizeof *formats; f++) {
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = formats[f];
        w.gzip = 1;
        unsigned char *a, *b, *plain, *back;
        size_t na, nb, n_plain;
        w.threads = 1;
        T_EQ_INT(pc_write_memory(p, &w, &a, &na, &err), PC_OK);
        static const int counts[] = {0, 4};
        for (size_t c = 0; c < 2; c++) {
            w.threads = counts[c];
            T_EQ_INT(pc_write_memory(p, &w, &b, &nb, &err), PC_OK);
            T_CHECK(na == nb && memcmp(a, b, na) == 0);
            free(b);
        }
        w.gzip = 0;
        T_EQ_INT(pc_write_memory(p, &w, &plain, &n_plain, &err), PC_OK);
        /* pprof is gzipped whatever the option says. */
        if (formats[f] != PC_FORMAT_PPROF) {
            T_CHECK(n_plain > (2u << 20));
            size_t n_back = 0;
            back = gunzip_bytes(a, na, &n_back);
            T_CHECK(back && n_back == n_plain && memcmp(back, plain, n_plain) == 0);
            free(back);
        }
        free(plain);
        free(a);
    }
    pc_profile_free(p);
}
