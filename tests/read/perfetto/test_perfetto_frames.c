/* Interned callstacks whose frames, or whose frames' mappings or function
 * names, the trace does not define: the rest of the stack is kept, an
 * undefined frame shows in its place as "[undefined frame iid N]", and the
 * warning counts the samples and names the first reference and its
 * callstack. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded_text.h"
#include "pf_fixtures.h"
#include "t.h"
#include "test_util.h"

/* Frames 1-4 are f0-f3 (perf_start_with_frames); frame 5 is f1 at 0x50
 * in mapping 42, frame 6 at 0x60 named by function name 77, neither
 * defined; frames 7 and 9 are not defined at all. */
enum { CS_HOLE = 1, CS_WHOLE = 2, CS_TWICE = 3, CS_REFS = 4, CS_UNDEFINED = 99 };

static void interned(pb_buf *b)
{
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    size_t in = pb_begin(b, PFE_INTERNED);
    pfe_frame(b, PFE_FRAMES, 5, 2, 42, 0x50);
    pfe_frame(b, PFE_FRAMES, 6, 77, 0, 0x60);
    static const uint64_t hole[] = {1, 9, 2, 3}, whole[] = {1, 2}, twice[] = {1, 7, 3, 7},
                          refs[] = {1, 5, 6};
    pfe_callstack(b, PFE_CALLSTACKS, CS_HOLE, hole, 4, 1);
    pfe_callstack(b, PFE_CALLSTACKS, CS_WHOLE, whole, 2, 0);
    pfe_callstack(b, PFE_CALLSTACKS, CS_TWICE, twice, 4, 0);
    pfe_callstack(b, PFE_CALLSTACKS, CS_REFS, refs, 3, 1);
    pb_end(b, in);
    pb_end(b, pk);
}

/* A perf trace of samples of the callstacks cs, in order. */
static pc_profile *convert_samples(const uint64_t *cs, size_t n, pc_options *o)
{
    pb_buf b = {0};
    perf_start_with_frames(&b, "f", 4);
    interned(&b);
    for (size_t i = 0; i < n; i++)
        perf_sample_packet(&b, 600000000 + 1000 * (uint64_t)i, cs[i]);
    log_capture_start(o);
    pc_profile *p = convert_buf(&b, o);
    pb_buf_free(&b);
    return p;
}

TEST(perfetto_undefined_frames_keep_the_stack)
{
    static const uint64_t cs[] = {CS_HOLE, CS_WHOLE, CS_HOLE, CS_TWICE, CS_REFS, CS_UNDEFINED};
    pc_options o;
    pc_options_init(&o);
    pc_profile *p = convert_samples(cs, 6, &o);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, 6);
    if (p->sample.n == 6) {
        T_EQ_STR(stack_text(p, p->sample.stack[0]), "f0;[undefined frame iid 9];f1;f2");
        T_EQ_STR(stack_text(p, p->sample.stack[1]), "f0;f1");
        /* Resolved again, to the same stack. */
        T_EQ_INT(p->sample.stack[2], p->sample.stack[0]);
        /* One frame for each undefined iid. */
        T_EQ_STR(stack_text(p, p->sample.stack[3]),
                 "f0;[undefined frame iid 7];f2;[undefined frame iid 7]");
        /* Without its mapping, a frame keeps its name; without its name,
         * its address. */
        T_EQ_STR(stack_text(p, p->sample.stack[4]), "f0;f1;0x60");
        /* A callstack the trace does not define at all keeps its sample,
         * with an empty stack, as before. */
        T_EQ_INT(p->sample.stack[5], PC_NONE);
    }
    T_EQ_INT(frame_category(p, "[undefined frame iid 9]"), PC_CAT_OTHER);
    const char *log = log_capture_text();
    T_CONTAINS(log, "warning: 4 samples have a callstack with a frame, mapping or function "
               "name the trace does not define (the first: frame iid 9 of callstack iid 1 "
               "on sequence 1 is not defined); the rest of each stack is kept, an "
               "undefined frame shows as \"[undefined frame iid N]\"");
    T_CONTAINS(log, "1 samples name a callstack the trace does not define; they are kept "
               "with an empty stack");
    pc_profile_free(p);

    /* The written outputs name the frame too. */
    t_case("perfetto_undefined_frames: folded");
    p = convert_samples(cs, 1, &o);
    if (p) {
        char *f = written_text(p, PC_FORMAT_FOLDED, NULL);
        T_CONTAINS(f, "f0;[undefined frame iid 9];f1;f2 ");
        free(f);
    }
    pc_profile_free(p);
}

TEST(perfetto_undefined_references_named)
{
    static const struct {
        uint64_t cs;
        const char *first;
    } cases[] = {
        {CS_REFS, "(the first: frame iid 5 of callstack iid 4 on sequence 1 names mapping "
                  "iid 42, which is not defined)"},
        {CS_TWICE, "(the first: frame iid 7 of callstack iid 3 on sequence 1 is not defined)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        t_case("perfetto_undefined_references: callstack %" PRIu64, cases[i].cs);
        pc_options o;
        pc_options_init(&o);
        pc_profile *p = convert_samples(&cases[i].cs, 1, &o);
        T_CONTAINS(log_capture_text(), "warning: 1 samples have a callstack");
        T_CONTAINS(log_capture_text(), cases[i].first);
        pc_profile_free(p);
    }

    t_case("perfetto_undefined_references: a function name");
    pb_buf b = {0};
    perf_start_with_frames(&b, "f", 4);
    size_t pk = pfe_packet(&b, 1);
    pb_uint(&b, PFE_FLAGS, 2);
    size_t in = pb_begin(&b, PFE_INTERNED);
    pfe_frame(&b, PFE_FRAMES, 6, 77, 0, 0x60);
    static const uint64_t named[] = {2, 6};
    pfe_callstack(&b, PFE_CALLSTACKS, 8, named, 2, 0);
    pb_end(&b, in);
    pb_end(&b, pk);
    perf_sample_packet(&b, 600000000, 8);
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    pc_profile *p = convert_buf(&b, &o);
    if (p && p->sample.n == 1)
        T_EQ_STR(stack_text(p, p->sample.stack[0]), "f1;0x60");
    T_CONTAINS(log_capture_text(), "(the first: frame iid 6 of callstack iid 8 on sequence 1 "
               "names function name iid 77, which is not defined)");
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* heapprofd's rows keep their callsite too (they used to be left out). */
TEST(perfetto_undefined_frames_in_heap_dumps)
{
    pb_buf b = {0};
    snapshot(&b, 0);
    process_tree(&b);
    size_t hd;
    heap_marks m = heap_open(&b, 0, 0);
    heap_dump_header(&b, 1000000, &hd);
    heap_sample(&b, 1, 1000, 400);
    heap_sample(&b, 2, 300, 0);
    pb_end(&b, hd);
    pb_end(&b, m.pp);
    size_t in = pb_begin(&b, PFE_INTERNED);
    pfe_str(&b, PFE_FUNCTION_NAMES, 1, "main");
    pfe_str(&b, PFE_FUNCTION_NAMES, 2, "malloc");
    pfe_frame(&b, PFE_FRAMES, 1, 1, 0, 1);
    pfe_frame(&b, PFE_FRAMES, 2, 2, 0, 2);
    static const uint64_t holed[] = {1, 5, 2}, whole[] = {1, 2};
    pfe_callstack(&b, PFE_CALLSTACKS, 1, holed, 3, 0);
    pfe_callstack(&b, PFE_CALLSTACKS, 2, whole, 2, 0);
    pb_end(&b, in);
    pb_end(&b, m.pk);
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        char *f = folded_heap(p);
        T_EQ_STR(f, "com.example.app;main;[undefined frame iid 5];malloc 600\n"
                    "com.example.app;main;malloc 300\n");
        free(f);
    }
    T_CONTAINS(log_capture_text(), "warning: 1 samples have a callstack");
    T_CONTAINS(log_capture_text(), "(the first: frame iid 5 of callstack iid 1 on sequence 9 "
               "is not defined)");
    pc_profile_free(p);
    pb_buf_free(&b);
}
