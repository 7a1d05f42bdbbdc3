/* The Perfetto reader on the project's own traces (pf_fixtures.c):
 * traced_perf samples and their clocks, weights, stacks and names, Chrome's
 * sampler, symbols and deobfuscation, compressed packets, per-CPU threads
 * and filters.  Interned data is tested in test_perfetto_interning.c,
 * heapprofd in test_perfetto_heap.c, damaged input in
 * test_perfetto_errors.c, the writers' view in test_perfetto_outputs.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded_text.h"
#include "pf_fixtures.h"
#include "t.h"
#include "test_util.h"

TEST(perfetto_perf_samples)
{
    pb_buf b = {0};
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    fx_perf(&b);
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        /* MONOTONIC times become BOOTTIME (+1 s); weights are the counter's
         * growth on each CPU; stacks are root first. */
        uint32_t main_t = thread_of(p, 100, 100), render = thread_of(p, 100, 101);
        T_EQ_STR(samples_text(p, main_t),
                 "1600000:10000000:main;draw 1610000:10000000:main;libc.so+0x1234 "
                 "1620000:5000000:ERROR MEMORY_INVALID;main;draw");
        T_EQ_STR(samples_text(p, render),
                 "1605000:5000000:main;draw;do_syscall 1615000:10000000:main;draw");
        T_EQ_INT(p->sample.n, 5);
        T_EQ_STR(str_of(p, p->thread.name[main_t]), "example.app");
        T_EQ_STR(str_of(p, p->thread.name[render]), "RenderThread");
        T_EQ_STR(str_of(p, pc_process_name(p, 100)), "com.example.app");
        /* One argument with spaces: its first word. */
        T_EQ_STR(str_of(p, pc_process_name(p, 200)), "/system/bin/surfaceflinger");
        T_EQ_STR(str_of(p, p->event.name[pc_sample_event(p, 0)]), "cpu-clock");
        T_EQ_INT(frame_category(p, "do_syscall"), PC_CAT_KERNEL);
        T_EQ_INT(frame_category(p, "main"), PC_CAT_NATIVE);
        T_EQ_INT(frame_category(p, "ERROR MEMORY_INVALID"), PC_CAT_OTHER);
        /* CPU numbers are kept for --percpu. */
        T_EQ_INT(pc_sample_cpu(p, p->sample.first[render]), 1);
        const char *log = log_capture_text();
        T_CONTAINS(log, "lost 7 kernel records");
        T_CONTAINS(log, "1 perf samples were skipped");
        T_CONTAINS(log, "1 perf producer event");
        T_CONTAINS(log, "1 perf samples were only partly unwound");
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

TEST(perfetto_mapping_and_frame_names)
{
    pb_buf b = {0};
    pfe_perf_defaults(&b, 1, 0, 0, 0);
    size_t pk = pfe_packet(&b, 1);
    pb_uint(&b, PFE_TIMESTAMP, 1000);
    size_t in = pb_begin(&b, PFE_INTERNED);
    /* Chrome puts the whole path in one component: "//" becomes "/". */
    pfe_str(&b, PFE_MAPPING_PATHS, 1, "/opt/chrome/libchrome.so");
    pfe_str(&b, PFE_MAPPING_PATHS, 2, "data");
    uint64_t chrome[] = {1}, cut[] = {2, 99, 1};
    pfe_mapping(&b, PFE_MAPPINGS, 1, 0, chrome, 1);
    /* Component 99 is not defined: the name stops before it. */
    pfe_mapping(&b, PFE_MAPPINGS, 2, 0, cut, 3);
    pfe_frame(&b, PFE_FRAMES, 1, 0, 1, 0xabc);
    pfe_frame(&b, PFE_FRAMES, 2, 0, 2, 0x10);
    pfe_frame(&b, PFE_FRAMES, 3, 0, 0, 0x42);
    uint64_t cs[] = {1, 2, 3};
    pfe_callstack(&b, PFE_CALLSTACKS, 1, cs, 3, 0);
    pb_end(&b, in);
    pfe_perf_sample(&b, 0, 5, 6, 1, 100);
    pb_end(&b, pk);
    pc_profile *p = convert_buf(&b, NULL);
    if (p) {
        T_EQ_INT(p->sample.n, 1);
        T_EQ_STR(stack_text(p, p->sample.stack[0]), "libchrome.so+0xabc;data+0x10;0x42");
        uint32_t f = p->stack.frame[p->stack.prefix[p->stack.prefix[p->sample.stack[0]]]];
        T_EQ_STR(str_of(p, p->res.name[p->func.res[p->frame.func[f]]]),
                 "/opt/chrome/libchrome.so");
        T_EQ_INT(frame_category(p, "libchrome.so+0xabc"), PC_CAT_NATIVE);
        /* No name known for the thread. */
        T_EQ_STR(str_of(p, p->thread.name[0]), "thread 6");
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* The same profile whether the packets come plain, in zlib or zstd
 * compressed_packets, or in a gzipped file. */
TEST(perfetto_compressed_packets)
{
    pb_buf plain = {0};
    fx_perf(&plain);
    pc_profile *ref = convert_buf(&plain, NULL);
    char *want = ref ? folded_samples(ref) : NULL;
    for (int mode = 0; mode < 3 && want; mode++) {
        t_case("perfetto_compressed_packets: %s", mode == 0 ? "zlib" : mode == 1 ? "zstd" : "gzip file");
        pb_buf b = {0};
        pc_profile *p = NULL;
        if (mode < 2) {
            /* The clock snapshot stays outside, the rest goes inside. */
            pb_buf first = {0}, rest = {0};
            snapshot(&first, 500000000);
            pb_raw(&b, first.data, first.len);
            pb_raw(&rest, plain.data + first.len, plain.len - first.len);
            pfe_compressed(&b, &rest, mode == 1);
            T_CHECK(b.len < plain.len);
            p = convert_buf(&b, NULL);
            pb_buf_free(&first);
            pb_buf_free(&rest);
        } else {
            unsigned char *gz;
            size_t n = gzip_bytes(plain.data, plain.len, &gz);
            pc_error err;
            if (convert_bytes(gz, n, NULL, &p, &err) != PC_OK)
                t_fail(__FILE__, __LINE__, "%s", err.message);
            free(gz);
        }
        if (p) {
            char *got = folded_samples(p);
            T_EQ_STR(got, want);
            T_EQ_INT(p->sample.n, ref->sample.n);
            for (size_t i = 0; i < p->sample.n && i < ref->sample.n; i++)
                T_EQ_INT(pc_sample_time(p, i), pc_sample_time(ref, i));
            free(got);
        }
        pc_profile_free(p);
        pb_buf_free(&b);
    }
    free(want);
    pc_profile_free(ref);
    pb_buf_free(&plain);
}

/* Chrome: sample times run on from the thread descriptor's reference time
 * by the deltas, across packets, signed; the base of each packet is
 * converted from CLOCK_MONOTONIC. */
TEST(perfetto_chrome_samples)
{
    pb_buf b = {0};
    snapshot(&b, 0);
    size_t pk = pfe_packet(&b, 5);
    pb_uint(&b, PFE_CLEARED, 1);
    size_t td = pb_begin(&b, 44);
    pb_uint(&b, 1, 15);
    pb_uint(&b, 2, 16);
    pb_string(&b, 5, "CrBrowserMain");
    pb_uint(&b, 6, 1);   /* 1 µs */
    pb_end(&b, td);
    size_t in = pb_begin(&b, PFE_INTERNED);
    pfe_str(&b, PFE_FUNCTION_NAMES, 1, "RunLoop");
    pfe_str(&b, PFE_FUNCTION_NAMES, 2, "Paint");
    pfe_frame(&b, PFE_FRAMES, 1, 1, 0, 1);
    pfe_frame(&b, PFE_FRAMES, 2, 2, 0, 2);
    uint64_t a[] = {1}, c[] = {1, 2};
    pfe_callstack(&b, PFE_CALLSTACKS, 1, a, 1, 0);
    pfe_callstack(&b, PFE_CALLSTACKS, 42, c, 2, 1);
    pb_end(&b, in);
    pb_end(&b, pk);
    static const int64_t deltas[][3] = {{10, 15, 0}, {42, 0, 0}, {-5, 0, 0}};
    static const uint64_t iids[][3] = {{42, 1, 0}, {42, 0, 0}, {1, 0, 0}};
    static const int n[] = {2, 1, 1};
    for (int k = 0; k < 3; k++) {
        pk = pfe_packet(&b, 5);
        pb_uint(&b, PFE_FLAGS, 2);
        size_t sp = pb_begin(&b, 54);
        for (int i = 0; i < n[k]; i++) {
            pb_uint(&b, 1, iids[k][i]);
            pb_uint(&b, 2, (uint64_t)deltas[k][i]);
        }
        pb_end(&b, sp);
        pb_end(&b, pk);
    }
    pc_profile *p = convert_buf(&b, NULL);
    if (p) {
        uint32_t t = thread_of(p, 15, 16);
        /* 1 + 10, 1 + 25, 26 + 42, 68 - 5 µs on MONOTONIC, + 1 s. */
        T_EQ_STR(samples_text(p, t), "1000011:1:RunLoop;Paint 1000026:1:RunLoop "
                                     "1000063:1:RunLoop 1000068:1:RunLoop;Paint");
        T_EQ_STR(str_of(p, t == PC_NONE ? PC_NONE : p->thread.name[t]), "CrBrowserMain");
        T_EQ_STR(str_of(p, p->event.name[0]), "Chrome CPU samples");
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* ModuleSymbols and DeobfuscationMapping packets after the samples name
 * the frames, inline chains included. */
TEST(perfetto_symbols_and_deobfuscation)
{
    pb_buf b = {0};
    snapshot(&b, 0);
    static const char *const cmd[] = {"com.example.app"};
    size_t pk = pfe_packet(&b, 0);
    size_t pt = pb_begin(&b, 2);
    pfe_process(&b, 100, cmd, 1);
    pb_end(&b, pt);
    pb_end(&b, pk);
    pfe_perf_defaults(&b, 1, 0, 1, 1000);
    pk = pfe_packet(&b, 1);
    pb_uint(&b, PFE_FLAGS, 2);
    pb_uint(&b, PFE_TIMESTAMP, 5000);
    size_t in = pb_begin(&b, PFE_INTERNED);
    pfe_str(&b, PFE_MAPPING_PATHS, 1, "data");
    pfe_str(&b, PFE_MAPPING_PATHS, 2, "app");
    pfe_str(&b, PFE_MAPPING_PATHS, 3, "com.example.app-Xy==");
    pfe_str(&b, PFE_MAPPING_PATHS, 4, "base.apk");
    pfe_str(&b, PFE_MAPPING_PATHS, 5, "libnative.so");
    pfe_str(&b, PFE_BUILD_IDS, 1, "\x01\x02");
    pfe_str(&b, PFE_FUNCTION_NAMES, 1, "a.b");
    uint64_t apk[] = {1, 2, 3, 4}, so[] = {5};
    pfe_mapping(&b, PFE_MAPPINGS, 1, 0, apk, 4);
    pfe_mapping(&b, PFE_MAPPINGS, 2, 1, so, 1);
    pfe_frame(&b, PFE_FRAMES, 1, 1, 1, 0x10);
    pfe_frame(&b, PFE_FRAMES, 2, 0, 2, 0x20);
    pfe_frame(&b, PFE_FRAMES, 3, 0, 2, 0x30);
    uint64_t cs[] = {1, 2, 3};
    pfe_callstack(&b, PFE_CALLSTACKS, 1, cs, 3, 0);
    pb_end(&b, in);
    pfe_perf_sample(&b, 0, 100, 100, 1, -1);
    pb_end(&b, pk);
    /* Symbols for libnative.so (build id 0102): 0x20 holds an inlined
     * call (most inlined first), 0x30 is unknown to them. */
    pk = pfe_packet(&b, 0);
    size_t ms = pb_begin(&b, 61);
    pb_string(&b, 1, "/libnative.so");
    pb_string(&b, 2, "\x01\x02");
    size_t as = pb_begin(&b, 3);
    pb_uint(&b, 1, 0x20);
    size_t l = pb_begin(&b, 2);
    pb_string(&b, 1, "inlined_helper");
    pb_end(&b, l);
    l = pb_begin(&b, 2);
    pb_string(&b, 1, "outer_function");
    pb_end(&b, l);
    pb_end(&b, as);
    pb_end(&b, ms);
    pb_end(&b, pk);
    pk = pfe_packet(&b, 0);
    size_t dm = pb_begin(&b, 64);
    pb_string(&b, 1, "com.example.app");
    size_t oc = pb_begin(&b, 3);
    pb_string(&b, 1, "a");
    pb_string(&b, 2, "com.example.Foo");
    size_t om = pb_begin(&b, 4);
    pb_string(&b, 1, "b");
    pb_string(&b, 2, "bar");
    pb_end(&b, om);
    pb_end(&b, oc);
    pb_end(&b, dm);
    pb_end(&b, pk);
    pc_profile *p = convert_buf(&b, NULL);
    if (p) {
        T_EQ_INT(p->sample.n, 1);
        T_EQ_STR(stack_text(p, p->sample.stack[0]),
                 "com.example.Foo.bar;outer_function;inlined_helper;libnative.so+0x30");
        /* 1 s per 1000 Hz. */
        T_EQ_INT(pc_sample_weight(p, 0), 1000000);
        T_EQ_INT(frame_category(p, "com.example.Foo.bar"), PC_CAT_DEX);
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

TEST(perfetto_percpu_and_filters)
{
    pb_buf b = {0};
    fx_perf(&b);
    pc_options o;
    pc_options_init(&o);
    o.percpu = 1;
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        T_EQ_INT(p->thread.n, 2);
        uint32_t c0 = thread_of(p, -1, 0), c1 = thread_of(p, -1, 1);
        T_EQ_STR(str_of(p, c0 == PC_NONE ? PC_NONE : p->thread.name[c0]), "CPU 0");
        T_EQ_INT(c0 == PC_NONE ? 0 : thread_samples(p, c0), 3);
        T_EQ_INT(c1 == PC_NONE ? 0 : thread_samples(p, c1), 2);
        T_EQ_STR(str_of(p, pc_process_name(p, -1)), "CPUs");
    }
    pc_profile_free(p);

    pc_options_init(&o);
    static const char *const names[] = {"Render"};
    o.thread_names = (pc_strings){names, 1};
    o.time_start = 0;
    o.time_end = 10000000;  /* the first 10 ms */
    p = convert_buf(&b, &o);
    if (p) {
        T_EQ_INT(p->sample.n, 1);
        T_EQ_STR(samples_text(p, thread_of(p, 100, 101)), "1605000:5000000:main;draw;do_syscall");
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}
