/* The Perfetto reader on heapprofd's ProfilePackets of the project's own
 * traces: dumps split over packets, the measures and the dump shown,
 * callsites merged by removed frames, running totals across dumps,
 * dump_at_max dumps, and Android Q's dumps without time and with tables of
 * their own. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded_text.h"
#include "pf_fixtures.h"
#include "t.h"
#include "test_util.h"

static size_t shown_heap_rows(const pc_profile *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->heap.n; i++)
        n += pc_heap_shown(p, i);
    return n;
}

TEST(perfetto_heap_dumps)
{
    static const struct {
        int dump, measure;
        const char *folded, *json;
    } cases[] = {
        /* Samples: per dump, what each callsite's measure changed by since
         * the dump before (main;malloc grows by 1400 unreleased bytes at
         * the second dump); they add up to the dump shown. */
        {0, PC_HEAP_UNRELEASED,
         "com.example.app;main;decode;malloc 300\ncom.example.app;main;malloc 2000\n",
         "\"name\":\"libc.malloc (unreleased bytes)\","},
        {1, PC_HEAP_UNRELEASED,
         "com.example.app;main;decode;malloc 300\ncom.example.app;main;malloc 600\n",
         "\"timeDeltas\":[0,0],\"weight\":[600,300],"},
        {0, PC_HEAP_ALLOCATED, NULL, "\"timeDeltas\":[0,0,0,1],\"weight\":[1000,300,50,2000],"},
        {0, PC_HEAP_FREED, NULL, "\"timeDeltas\":[0,0,1],\"weight\":[400,50,600],"},
    };
    pb_buf b = {0};
    fx_heap(&b);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        t_case("perfetto_heap_dumps: dump %d, measure %d", cases[k].dump, cases[k].measure);
        pc_options o;
        pc_options_init(&o);
        o.heap_dump = cases[k].dump;
        o.heap_measure = cases[k].measure;
        log_capture_start(&o);
        pc_profile *p = convert_buf(&b, &o);
        if (!p)
            continue;
        /* The dump shown, and the one before it. */
        T_EQ_INT(shown_heap_rows(p), 3);
        T_EQ_INT(p->heap.n, cases[k].dump == 1 ? 3 : 6);
        T_EQ_INT(p->sample.n, 0);
        /* MONOTONIC_COARSE 1 or 2 ms, + 1 s. */
        for (size_t i = 0; i < p->heap.n; i++)
            if (pc_heap_shown(p, i))
                T_EQ_INT(p->heap.time[i], cases[k].dump == 1 ? 1001000000 : 1002000000);
        if (cases[k].folded) {
            char *f = folded_heap(p);
            T_EQ_STR(f, cases[k].folded);
            free(f);
        }
        char *json = processed_of(p);
        if (json) {
            T_CONTAINS(json, cases[k].json);
            T_CONTAINS(json, "\"weightType\":\"bytes\"");
            T_CONTAINS(json, "\"processName\":\"com.example.app\"");
            /* The heap's memory track: unreleased bytes from the
             * recording's start, then per dump (900 at the first, 1400
             * more at the second), with the allocations and frees. */
            T_CONTAINS(json, cases[k].dump == 1
                                 ? "\"samples\":{\"time\":[0,0],\"count\":[0,900],"
                                   "\"number\":[0,17],\"length\":2}"
                                 : "\"samples\":{\"time\":[0,0,1],\"count\":[0,900,1400],"
                                   "\"number\":[0,17,26],\"length\":3}");
            T_CONTAINS(json, "\"counters\":[{\"name\":\"libc.malloc\",\"category\":\"Memory\"");
        }
        free(json);
        T_CONTAINS(log_capture_text(), "1 gap(s) in heapprofd's packet index");
        pc_profile_free(p);
    }
    /* The 3rd dump does not exist: the last is shown, with a warning. */
    t_case("perfetto_heap_dumps: --heap-dump past the last");
    pc_options o;
    pc_options_init(&o);
    o.heap_dump = 3;
    log_capture_start(&o);
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        uint64_t alloc = 0;
        for (size_t i = 0; i < p->heap.n; i++)
            alloc += pc_heap_shown(p, i) ? p->heap.alloc[i] : 0;
        T_EQ_INT(shown_heap_rows(p), 3);
        T_EQ_INT(alloc, 3350);
        T_CONTAINS(log_capture_text(), "options.heap_dump 3: process 100 has 2 dump(s)");
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* Callsites made one by removed frames: their rows of each dump are
 * summed before the changes between dumps are taken, so the track still
 * adds up to the dump shown (main;decode;malloc becomes main;malloc:
 * 600 + 300 unreleased bytes at the first dump, 1400 more at the second). */
TEST(perfetto_heap_merged_callsites)
{
    pb_buf b = {0};
    fx_heap(&b);
    pc_options o;
    pc_options_init(&o);
    const char *decode[] = {"^decode$"};
    o.remove_methods = (pc_strings){decode, 1};
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        char *f = folded_heap(p);
        T_EQ_STR(f, "com.example.app;main;malloc 2300\n");
        free(f);
        char *json = processed_of(p);
        T_CONTAINS(json, "\"timeDeltas\":[0,1],\"weight\":[900,1400],");
        T_CONTAINS(json, "\"count\":[0,900,1400],\"number\":[0,17,26]");
        free(json);
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* heapprofd forgets a callstack whose allocations are all freed and gives
 * it a new id, counting from zero, if it allocates again; dumps in between
 * lack it.  Each dump still states every callsite's totals since the
 * start, as trace_processor computes them. */
TEST(perfetto_heap_running_totals)
{
    pb_buf b = {0};
    snapshot(&b, 0);
    process_tree(&b);
    size_t hd;
    /* Dump 1 (1 ms): main;malloc 1000, main;decode 500 allocated and freed. */
    heap_marks m = heap_open(&b, 0, 0);
    heap_dump_header(&b, 1000000, &hd);
    heap_sample(&b, 1, 1000, 0);
    heap_sample(&b, 2, 500, 500);
    pb_end(&b, hd);
    pb_end(&b, m.pp);
    size_t in = pb_begin(&b, PFE_INTERNED);
    pfe_str(&b, PFE_FUNCTION_NAMES, 1, "main");
    pfe_str(&b, PFE_FUNCTION_NAMES, 2, "malloc");
    pfe_str(&b, PFE_FUNCTION_NAMES, 3, "decode");
    pfe_frame(&b, PFE_FRAMES, 1, 1, 0, 1);
    pfe_frame(&b, PFE_FRAMES, 2, 2, 0, 2);
    pfe_frame(&b, PFE_FRAMES, 3, 3, 0, 3);
    uint64_t s1[] = {1, 2}, s2[] = {1, 3};
    pfe_callstack(&b, PFE_CALLSTACKS, 1, s1, 2, 0);
    pfe_callstack(&b, PFE_CALLSTACKS, 2, s2, 2, 0);
    pb_end(&b, in);
    pb_end(&b, m.pk);
    /* Dump 2 (2 ms): callstack 2 is gone; main;decode is back as 3. */
    m = heap_open(&b, 1, 0);
    heap_dump_header(&b, 2000000, &hd);
    heap_sample(&b, 1, 1500, 0);
    heap_sample(&b, 3, 200, 0);
    pb_end(&b, hd);
    pb_end(&b, m.pp);
    in = pb_begin(&b, PFE_INTERNED);
    pfe_callstack(&b, PFE_CALLSTACKS, 3, s2, 2, 0);
    pb_end(&b, in);
    pb_end(&b, m.pk);
    static const char *const want[] = {
        "main;malloc 1000/0 10/0, main;decode 500/500 5/5",
        "main;malloc 1500/0 15/0, main;decode 700/500 7/5",
    };
    for (int dump = 1; dump <= 2; dump++) {
        t_case("perfetto_heap_running_totals: dump %d", dump);
        pc_options o;
        pc_options_init(&o);
        o.heap_dump = dump;
        pc_profile *p = convert_buf(&b, &o);
        if (!p)
            continue;
        char got[512] = "";
        size_t used = 0;
        for (size_t i = 0; i < p->heap.n; i++) {
            if (!pc_heap_shown(p, i))
                continue;
            used += (size_t)snprintf(got + used, sizeof got - used,
                                     "%s%s %" PRIu64 "/%" PRIu64 " %" PRIu64 "/%" PRIu64,
                                     used ? ", " : "", stack_text(p, p->heap.stack[i]),
                                     p->heap.alloc[i], p->heap.freed[i], p->heap.alloc_count[i],
                                     p->heap.free_count[i]);
            T_EQ_INT(p->heap.time[i], BOOT_AHEAD + (uint64_t)dump * 1000000);
        }
        T_EQ_STR(got, want[dump - 1]);
        pc_profile_free(p);
    }
    pb_buf_free(&b);
}

/* dump_at_max dumps give only the peak (self_max, self_max_count): shown
 * as allocated; the count only when orig_sampling_interval_bytes is set. */
TEST(perfetto_heap_dump_at_max)
{
    for (int orig = 0; orig <= 1; orig++) {
        t_case("perfetto_heap_dump_at_max: orig_sampling_interval_bytes %s",
               orig ? "set" : "absent");
        pb_buf b = {0};
        snapshot(&b, 0);
        heap_marks m = heap_open(&b, 0, 0);
        size_t hd;
        heap_dump_header(&b, 1000000, &hd);
        if (orig)
            pb_uint(&b, 13, 4096);
        size_t smp = pb_begin(&b, 2);
        pb_uint(&b, 1, 1);
        pb_uint(&b, 8, 7000);
        pb_uint(&b, 9, 3);
        pb_end(&b, smp);
        pb_end(&b, hd);
        pb_end(&b, m.pp);
        main_callstack(&b);
        pb_end(&b, m.pk);
        pc_profile *p = convert_buf(&b, NULL);
        if (p) {
            T_EQ_INT(p->heap.n, 1);
            if (p->heap.n == 1) {
                T_EQ_INT(p->heap.alloc[0], 7000);
                T_EQ_INT(p->heap.freed[0], 0);
                T_EQ_INT(p->heap.alloc_count[0], orig ? 3 : 0);
            }
        }
        pc_profile_free(p);
        pb_buf_free(&b);
    }
}

/* Android Q's dumps have no time of their own: they take their packet's. */
TEST(perfetto_heap_dump_without_time)
{
    pb_buf b = {0};
    snapshot(&b, 0);
    heap_marks m = heap_open(&b, 0, 0);
    size_t hd = pb_begin(&b, 5);
    pb_uint(&b, 1, 100);
    heap_sample(&b, 1, 64, 0);
    pb_end(&b, hd);
    pb_end(&b, m.pp);
    main_callstack(&b);
    pb_uint(&b, PFE_TIMESTAMP, 1000000123);
    pb_end(&b, m.pk);
    pc_profile *p = convert_buf(&b, NULL);
    if (p) {
        T_EQ_INT(p->heap.n, 1);
        if (p->heap.n == 1)
            T_EQ_INT(p->heap.time[0], 1000000123);
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* Android Q wrote its tables inside the ProfilePacket: one string table
 * for names, paths and build ids. */
TEST(perfetto_heap_packet_tables)
{
    pb_buf b = {0};
    snapshot(&b, 0);
    heap_marks m = heap_open(&b, 0, 0);
    pfe_str(&b, 1, 1, "alloc_buffer");
    pfe_str(&b, 1, 2, "system");
    pfe_str(&b, 1, 3, "libfoo.so");
    pfe_str(&b, 1, 4, "\x12\x34");
    uint64_t path[] = {2, 3}, frames[] = {1};
    pfe_frame(&b, 2, 1, 1, 1, 0x50);
    pfe_callstack(&b, 3, 1, frames, 1, 0);
    pfe_callstack(&b, 3, 2, NULL, 0, 0);
    pfe_mapping(&b, 4, 1, 4, path, 2);
    size_t hd = pb_begin(&b, 5);
    pb_uint(&b, 1, 321);
    pb_uint(&b, 9, 5000);
    heap_sample(&b, 1, 4096, 0);
    /* No frames, no callsite: left out, as trace_processor does. */
    heap_sample(&b, 2, 128, 0);
    pb_end(&b, hd);
    pb_end(&b, m.pp);
    pb_end(&b, m.pk);
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        T_EQ_INT(p->heap.n, 1);
        T_CONTAINS(log_capture_text(), "1 heap samples have an empty callstack");
        T_EQ_STR(stack_text(p, p->heap.stack[0]), "alloc_buffer");
        T_EQ_STR(str_of(p, p->heap.heap[0]), "unknown");
        T_EQ_INT(p->heap.time[0], BOOT_AHEAD + 5000);
        uint32_t f = p->stack.frame[p->heap.stack[0]];
        T_EQ_STR(str_of(p, p->res.name[p->func.res[p->frame.func[f]]]), "/system/libfoo.so");
        T_EQ_INT(p->frame.cat[f], PC_CAT_NATIVE);
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* A dump where everything was freed has nothing unreleased to show: by
 * default the allocated bytes show instead, said so; asked for the
 * unreleased bytes, the conversion says there are none. */
TEST(perfetto_heap_all_freed)
{
    pb_buf b = {0};
    snapshot(&b, 0);
    process_tree(&b);
    size_t hd;
    heap_marks m = heap_open(&b, 0, 0);
    heap_dump_header(&b, 1000000, &hd);
    heap_sample(&b, 1, 1000, 1000);
    heap_sample(&b, 2, 300, 300);
    pb_end(&b, hd);
    pb_end(&b, m.pp);
    pfe_heap_callstacks(&b);
    pb_end(&b, m.pk);
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        T_EQ_INT(p->meta.heap_measure, PC_HEAP_ALLOCATED);
        T_CONTAINS(log_capture_text(), "the heap dumps shown hold no unreleased bytes (all "
                                       "1300 bytes allocated were freed by then): showing the "
                                       "allocated bytes");
        char *text = processed_of(p);
        T_CONTAINS(text ? text : "", "\"name\":\"libc.malloc (allocated bytes)\"");
        free(text);
        pc_profile_free(p);
    }
    o.heap_measure = PC_HEAP_UNRELEASED;
    pc_error err;
    T_EQ_INT(convert_bytes(b.data, b.len, &o, &p, &err), PC_EINPUT);
    T_CONTAINS(err.message, "nothing to show: the heap dumps shown hold no unreleased bytes "
                            "(1300 bytes allocated, 1300 freed by then)");
    pb_buf_free(&b);
}
