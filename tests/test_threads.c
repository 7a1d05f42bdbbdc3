/* Reading on a second thread changes nothing but the time: the same
 * profile, byte for byte, and the same errors, as with one thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "fixtures.h"
#include "t.h"
#include "test_util.h"

/* Converts with the given thread count and writes the processed JSON
 * (malloc'd in *out) or returns the error. */
static int convert_with(const void *data, size_t len, int threads, unsigned char **out,
                        size_t *n, pc_error *err)
{
    pc_options o;
    pc_options_init(&o);
    o.threads = threads;
    pc_profile *p = NULL;
    *out = NULL;
    *n = 0;
    int st = convert_bytes(data, len, &o, &p, err);
    if (st == PC_OK) {
        pc_write_options w;
        pc_write_options_init(&w);
        st = pc_write_memory(p, &w, out, n, err);
    }
    pc_profile_free(p);
    return st;
}

/* Same status, same message or same bytes. */
static void same_both_ways(const void *data, size_t len, const char *what)
{
    unsigned char *a, *b;
    size_t na, nb;
    pc_error ea, eb;
    int sa = convert_with(data, len, 1, &a, &na, &ea);
    int sb = convert_with(data, len, 0, &b, &nb, &eb);
    if (sa != sb)
        t_fail(__FILE__, __LINE__, "%s: status %d with one thread, %d with two", what, sa, sb);
    else if (sa != PC_OK && strcmp(ea.message, eb.message) != 0)
        t_fail(__FILE__, __LINE__, "%s: \"%s\" with one thread, \"%s\" with two", what,
               ea.message, eb.message);
    else if (sa == PC_OK && (na != nb || memcmp(a, b, na) != 0))
        t_fail(__FILE__, __LINE__, "%s: outputs differ (%zu and %zu bytes)", what, na, nb);
    free(a);
    free(b);
}

static void corpus_case(const corpus_row *row)
{
    char rel[512];
    snprintf(rel, sizeof rel, "%s", row->col[M_FILE]);
    size_t len;
    unsigned char *data = corpus_read(rel, &len);
    if (!data) {
        t_fail(__FILE__, __LINE__, "%s: unreadable", rel);
        return;
    }
    same_both_ways(data, len, corpus_base(row));
    free(data);
}

TEST(threads_corpus_same_output)
{
    corpus_each("input", NULL, "threads_corpus_same_output", corpus_case);
}

/* Every truncation and a byte flip at every offset of the fixture: the
 * same message (offset, record) either way.  Batches end and begin
 * anywhere, so errors surface at any point of the hand-over. */
TEST(threads_damage_same_errors)
{
    spe e;
    fx_android(&e);
    size_t len = e.out.len;
    unsigned char *buf = malloc(len);
    for (size_t cut = 0; cut < len; cut++)
        same_both_ways(e.out.data, cut, "truncated");
    for (size_t i = 0; i < len; i++) {
        memcpy(buf, e.out.data, len);
        buf[i] ^= 0x5a;
        same_both_ways(buf, len, "flipped");
    }
    free(buf);
    spe_free(&e);
}

/* More records than one batch holds, with errors in late batches: a
 * sample whose event type is out of range, found by the model builder,
 * and a truncation, found by the decoder. */
TEST(threads_many_batches)
{
    spe e;
    spe_begin(&e);
    const char *ev[] = {"cpu-clock"};
    spe_meta(&e, ev, 1, NULL, NULL, NULL, NULL, 0);
    spe_frame chain[3] = {{0x10, 0, 0, -1}, {0x20, 0, 1, -1}, {0x30, 0, 2, -1}};
    for (uint32_t i = 0; i < 20000; i++)
        spe_sample(&e, 1000 + i, (int32_t)(1 + i % 3), 1, i == 15000 ? 7 : 0, chain, 3, NULL);
    const char *syms[] = {"a", "b", "c"};
    spe_file(&e, 0, "/lib/x.so", syms, 3);
    spe_end(&e);
    same_both_ways(e.out.data, e.out.len, "event out of range");
    same_both_ways(e.out.data, e.out.len * 2 / 3, "truncated late");
    spe_free(&e);
}
