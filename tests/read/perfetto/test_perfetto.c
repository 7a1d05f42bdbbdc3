/* The Perfetto reader on the project's own traces (pf_encode.c): samples
 * and their clocks, weights, stacks and names; incremental state; Chrome
 * and heapprofd packets; symbols and deobfuscation; compression; damaged
 * input. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded_text.h"
#include "jsonmini.h"
#include "pf_encode.h"
#include "processed_valid.h"
#include "t.h"
#include "test_util.h"

enum { BOOTTIME = 6, MONOTONIC = 3, MONO_COARSE = 4 };

/* BOOTTIME runs 1 s ahead of MONOTONIC in the fixtures. */
#define BOOT_AHEAD 1000000000ull

static void snapshot(pb_buf *b, uint64_t mono)
{
    uint32_t ids[] = {BOOTTIME, MONOTONIC, MONO_COARSE};
    uint64_t ts[] = {mono + BOOT_AHEAD, mono, mono};
    pfe_clock_snapshot(b, ids, ts, 3);
}

static void process_tree(pb_buf *b)
{
    static const char *const app[] = {"com.example.app"};
    static const char *const sf[] = {"/system/bin/surfaceflinger --start"};
    size_t pk = pfe_packet(b, 0);
    size_t pt = pb_begin(b, 2);
    pfe_process(b, 100, app, 1);
    pfe_process(b, 200, sf, 1);
    pfe_thread(b, 100, 100, "example.app");
    pfe_thread(b, 101, 100, "RenderThread");
    pb_end(b, pt);
    pb_end(b, pk);
}

/* The interned data of the perf fixture: libc frames main, draw and an
 * unnamed one, a kernel frame, and three callstacks. */
static void perf_interned(pb_buf *b)
{
    static const uint8_t build[] = {0xde, 0xad, 0xbe, 0xef};
    size_t in = pb_begin(b, PFE_INTERNED);
    pfe_str(b, PFE_FUNCTION_NAMES, 1, "main");
    pfe_str(b, PFE_FUNCTION_NAMES, 2, "draw");
    pfe_str(b, PFE_FUNCTION_NAMES, 3, "do_syscall");
    pfe_str(b, PFE_MAPPING_PATHS, 1, "system");
    pfe_str(b, PFE_MAPPING_PATHS, 2, "lib64");
    pfe_str(b, PFE_MAPPING_PATHS, 3, "libc.so");
    pfe_str(b, PFE_MAPPING_PATHS, 4, "kernel");
    pfe_bytes(b, PFE_BUILD_IDS, 1, build, sizeof build);
    uint64_t libc[] = {1, 2, 3}, kernel[] = {4};
    pfe_mapping(b, PFE_MAPPINGS, 1, 1, libc, 3);
    pfe_mapping(b, PFE_MAPPINGS, 2, 0, kernel, 1);
    pfe_frame(b, PFE_FRAMES, 1, 1, 1, 0x100);
    pfe_frame(b, PFE_FRAMES, 2, 2, 1, 0x200);
    pfe_frame(b, PFE_FRAMES, 3, 3, 2, 0xffff);
    pfe_frame(b, PFE_FRAMES, 4, 0, 1, 0x1234);
    uint64_t cs1[] = {1, 2}, cs2[] = {1, 2, 3}, cs3[] = {1, 4};
    pfe_callstack(b, PFE_CALLSTACKS, 1, cs1, 2, 0);
    pfe_callstack(b, PFE_CALLSTACKS, 2, cs2, 3, 0);
    pfe_callstack(b, PFE_CALLSTACKS, 3, cs3, 2, 1);
    pb_end(b, in);
}

/* One traced_perf sample packet at MONOTONIC time ts. */
static void perf_packet(pb_buf *b, uint64_t ts, uint32_t cpu, uint32_t tid, uint64_t cs,
                        int64_t count, int interned)
{
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    pb_uint(b, PFE_TIMESTAMP, ts);
    if (interned)
        perf_interned(b);
    pfe_perf_sample(b, cpu, 100, tid, cs, count);
    pb_end(b, pk);
}

/* A traced_perf trace: 5 samples of process 100 on two CPUs, plus a
 * skipped sample, lost records, a producer event and an unwinding error. */
static void fx_perf(pb_buf *b)
{
    snapshot(b, 500000000);
    process_tree(b);
    pfe_perf_defaults(b, 1, MONOTONIC, 1 /* SW_CPU_CLOCK */, 100);
    perf_packet(b, 600000000, 0, 100, 1, 10000000, 1);
    perf_packet(b, 605000000, 1, 101, 2, 5000000, 0);
    perf_packet(b, 610000000, 0, 100, 3, 20000000, 0);
    perf_packet(b, 615000000, 1, 101, 1, 15000000, 0);
    /* Not samples: skipped (NOT_IN_SCOPE), lost records, producer event. */
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    pb_uint(b, PFE_TIMESTAMP, 616000000);
    size_t ps = pb_begin(b, 66);
    pb_uint(b, 1, 0);
    pb_uint(b, 18, 4);
    pb_end(b, ps);
    pb_end(b, pk);
    pk = pfe_packet(b, 1);
    pb_uint(b, PFE_TIMESTAMP, 617000000);
    ps = pb_begin(b, 66);
    pb_uint(b, 1, 1);
    pb_uint(b, 17, 7);
    pb_end(b, ps);
    pb_end(b, pk);
    pk = pfe_packet(b, 1);
    pb_uint(b, PFE_TIMESTAMP, 618000000);
    ps = pb_begin(b, 66);
    size_t ev = pb_begin(b, 19);
    pb_uint(b, 1, 1);
    pb_end(b, ev);
    pb_end(b, ps);
    pb_end(b, pk);
    /* A partly unwound sample (UNWIND_ERROR_MEMORY_INVALID). */
    pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    pb_uint(b, PFE_TIMESTAMP, 620000000);
    ps = pb_begin(b, 66);
    pb_uint(b, 1, 0);
    pb_uint(b, 2, 100);
    pb_uint(b, 3, 100);
    pb_uint(b, 4, 1);
    pb_uint(b, 6, 25000000);
    pb_uint(b, 16, 2);
    pb_end(b, ps);
    pb_end(b, pk);
}

static pc_profile *convert_buf(const pb_buf *b, const pc_options *o)
{
    pc_profile *p;
    pc_error err;
    if (b->oom) {
        t_fail(__FILE__, __LINE__, "fixture encoder ran out of memory");
        return NULL;
    }
    if (convert_bytes(b->data, b->len, o, &p, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "conversion failed: %s", err.message);
        return NULL;
    }
    return p;
}

static uint32_t thread_of(const pc_profile *p, int64_t pid, int64_t tid)
{
    for (size_t t = 0; t < p->thread.n; t++)
        if (p->thread.pid[t] == pid && p->thread.tid[t] == tid)
            return (uint32_t)t;
    return PC_NONE;
}

/* "time:weight:stack" of thread t's samples, times in µs of BOOTTIME. */
static const char *samples_text(const pc_profile *p, uint32_t t)
{
    static char buf[4096];
    size_t used = 0;
    buf[0] = 0;
    if (t == PC_NONE)
        return "(no thread)";
    for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++)
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%" PRIu64 ":%" PRId64 ":%s",
                                 used ? " " : "", p->sample.time[i] / 1000,
                                 p->sample.weight[i], stack_text(p, p->sample.stack[i]));
    return buf;
}

static const char *str_of(const pc_profile *p, uint32_t id)
{
    return id == PC_NONE ? "(none)" : pc_str(&p->str, id);
}

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
        T_EQ_STR(str_of(p, p->event.name[p->sample.event[0]]), "cpu-clock");
        T_EQ_INT(frame_category(p, "do_syscall"), PC_CAT_KERNEL);
        T_EQ_INT(frame_category(p, "main"), PC_CAT_NATIVE);
        T_EQ_INT(frame_category(p, "ERROR MEMORY_INVALID"), PC_CAT_OTHER);
        /* CPU numbers are kept for --percpu. */
        T_EQ_INT(p->sample.cpu[p->sample.first[render]], 1);
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

/* Interned callstack 1 of sequence 2 names function `name`. */
static void interned_stack(pb_buf *b, const char *name)
{
    size_t in = pb_begin(b, PFE_INTERNED);
    pfe_str(b, PFE_FUNCTION_NAMES, 1, name);
    pfe_frame(b, PFE_FRAMES, 1, 1, 0, 0);
    uint64_t f[] = {1};
    pfe_callstack(b, PFE_CALLSTACKS, 1, f, 1, 0);
    pb_end(b, in);
}

static void seq2_sample(pb_buf *b, uint64_t ts, int dropped, int cleared, const char *define)
{
    size_t pk = pfe_packet(b, 2);
    pb_uint(b, PFE_FLAGS, (cleared ? 1 : 0) | 2);
    if (dropped)
        pb_uint(b, PFE_DROPPED, 1);
    pb_uint(b, PFE_TIMESTAMP, ts);
    if (define)
        interned_stack(b, define);
    pfe_perf_sample(b, 0, 9, 9, 1, -1);
    pb_end(b, pk);
}

TEST(perfetto_incremental_state)
{
    pb_buf b = {0};
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    /* Before any clear the state is invalid: interned data is ignored and
     * the sample, which needs it, dropped. */
    seq2_sample(&b, 1000, 0, 0, "never");
    /* Cleared: valid.  A second definition of iid 1 loses to the first. */
    seq2_sample(&b, 2000, 0, 1, "first");
    seq2_sample(&b, 3000, 0, 0, "second");
    /* Data loss: invalid until the next clear. */
    seq2_sample(&b, 4000, 1, 0, NULL);
    seq2_sample(&b, 5000, 0, 0, NULL);
    seq2_sample(&b, 6000, 0, 1, "third");
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        uint32_t t = thread_of(p, 9, 9);
        T_EQ_INT(p->sample.n, 3);
        T_CHECK(t != PC_NONE);
        if (t != PC_NONE) {
            T_EQ_STR(stack_text(p, p->sample.stack[p->sample.first[t]]), "first");
            T_EQ_STR(stack_text(p, p->sample.stack[p->sample.first[t] + 1]), "first");
            T_EQ_STR(stack_text(p, p->sample.stack[p->sample.first[t] + 2]), "third");
            T_EQ_INT(p->sample.time[p->sample.first[t] + 2], 6000);
        }
        T_CONTAINS(log_capture_text(), "3 packets needed incremental state");
        T_CONTAINS(log_capture_text(), "1 packet sequence(s) lost packets");
        /* Without a timebase or counts, each sample counts one. */
        T_EQ_STR(str_of(p, p->event.name[p->sample.event[0]]), "samples of cpu-clock");
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* A sample of sequence 3 (thread 9) at time ts whose cpu-clock timebase
 * reads count on CPU 0; with clear, the packet starts a new generation of
 * incremental state, as traced_perf's periodic clears do. */
static void seq3_counted(pb_buf *b, uint64_t ts, int64_t count, int clear, int dropped)
{
    size_t pk = pfe_packet(b, 3);
    pb_uint(b, PFE_FLAGS, (clear ? 1 : 0) | 2);
    if (dropped)
        pb_uint(b, PFE_DROPPED, 1);
    pb_uint(b, PFE_TIMESTAMP, ts);
    if (clear) {
        size_t d = pb_begin(b, PFE_DEFAULTS);
        size_t ps = pb_begin(b, 12);
        size_t tb = pb_begin(b, 1);
        pb_uint(b, 4, 1 /* SW_CPU_CLOCK */);
        pb_end(b, tb);
        pb_end(b, ps);
        pb_end(b, d);
        interned_stack(b, "work");
    }
    pfe_perf_sample(b, 0, 9, 9, 1, count);
    pb_end(b, pk);
}

/* An incremental-state clear starts interned data afresh, not the
 * kernel's counters: the sample after it weighs what its CPU counted
 * since the sample before, not the whole count since the session began.
 * Perfetto sets previous_packet_dropped on the first packet of every
 * sequence; only a later one means packets were lost. */
TEST(perfetto_timebase_across_clears)
{
    pb_buf b = {0};
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    /* The sequence's first packet, as a writer with no incremental state
     * sends it. */
    size_t pk = pfe_packet(&b, 3);
    pb_uint(&b, PFE_DROPPED, 1);
    pb_end(&b, pk);
    seq3_counted(&b, 1000000, 5000000000, 1, 0);
    seq3_counted(&b, 2000000, 5000250000, 0, 0);
    seq3_counted(&b, 3000000, 5000500000, 1, 0);
    seq3_counted(&b, 4000000, 5000750000, 0, 0);
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        T_EQ_STR(samples_text(p, thread_of(p, 9, 9)),
                 "1000:5000000000:work 2000:250000:work 3000:250000:work 4000:250000:work");
        T_CHECK(!strstr(log_capture_text(), "lost packets"));
    }
    pc_profile_free(p);
    /* A loss later in the sequence is one. */
    seq3_counted(&b, 5000000, 5001000000, 0, 1);
    p = convert_buf(&b, &o);
    if (p)
        T_CONTAINS(log_capture_text(), "1 packet sequence(s) lost packets");
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
                T_EQ_INT(p->sample.time[i], ref->sample.time[i]);
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

/* A ProfilePacket of sequence 9: open with heap_open, close with
 * heap_close (interned data may go between the two ends). */
typedef struct heap_marks {
    size_t pk, pp;
} heap_marks;

static heap_marks heap_open(pb_buf *b, uint64_t index, int continued)
{
    heap_marks m;
    m.pk = pfe_packet(b, 9);
    if (index == 0)
        pb_uint(b, PFE_CLEARED, 1);
    m.pp = pb_begin(b, 37);
    pb_uint(b, 7, index);
    if (continued)
        pb_uint(b, 6, 1);
    return m;
}

static void heap_dump_header(pb_buf *b, uint64_t ts, size_t *mark)
{
    *mark = pb_begin(b, 5);
    pb_uint(b, 1, 100);
    pb_uint(b, 9, ts);
    pb_string(b, 11, "libc.malloc");
}

static void heap_sample(pb_buf *b, uint64_t cs, uint64_t alloc, uint64_t freed)
{
    size_t s = pb_begin(b, 2);
    pb_uint(b, 1, cs);
    pb_uint(b, 2, alloc);
    pb_uint(b, 3, freed);
    pb_uint(b, 5, alloc / 100);
    pb_uint(b, 6, freed / 100);
    pb_end(b, s);
}

/* Two heapprofd dumps of process 100 (at 1 and 2 ms MONOTONIC_COARSE),
 * each split over continued packets with the interned data after the
 * samples, and a lost packet between them (index 3 is missing). */
static void fx_heap(pb_buf *b)
{
    snapshot(b, 0);
    process_tree(b);
    for (int dump = 0; dump < 2; dump++) {
        uint64_t base = dump ? 4 : 0, ts = dump ? 2000000 : 1000000;
        size_t hd;
        heap_marks m = heap_open(b, base, 1);
        heap_dump_header(b, ts, &hd);
        heap_sample(b, 1, dump ? 3000 : 1000, dump ? 1000 : 400);
        heap_sample(b, 2, 300, 0);
        pb_end(b, hd);
        pb_end(b, m.pp);
        pb_end(b, m.pk);
        /* The dump goes on: the same header, one more sample, then the
         * interned data the callstacks need. */
        m = heap_open(b, base + 1, 1);
        heap_dump_header(b, ts, &hd);
        heap_sample(b, 3, 50, 50);
        pb_end(b, hd);
        pb_end(b, m.pp);
        if (dump == 0)
            pfe_heap_callstacks(b);
        pb_end(b, m.pk);
        /* An empty packet ends the dump. */
        m = heap_open(b, base + 2, 0);
        pb_end(b, m.pp);
        pb_end(b, m.pk);
    }
}

/* Writes p as processed JSON, checks it, and returns the text. */
static char *processed_of(const pc_profile *p)
{
    pc_write_options wo;
    pc_error err;
    unsigned char *out = NULL;
    size_t n = 0;
    char msg[512];
    pc_write_options_init(&wo);
    wo.format = PC_FORMAT_FIREFOX;
    wo.gzip = 0;
    if (pc_write_memory(p, &wo, &out, &n, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "write failed: %s", err.message);
        return NULL;
    }
    if (processed_check_text((const char *)out, n, msg, sizeof msg) != 0)
        t_fail(__FILE__, __LINE__, "invalid processed profile: %s", msg);
    char *s = malloc(n + 1);
    memcpy(s, out, n);
    s[n] = 0;
    free(out);
    return s;
}

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

/* Interned data defining callstack 1 as the single frame "main". */
static void main_callstack(pb_buf *b)
{
    size_t in = pb_begin(b, PFE_INTERNED);
    uint64_t frames[] = {1};
    pfe_str(b, PFE_FUNCTION_NAMES, 1, "main");
    pfe_frame(b, PFE_FRAMES, 1, 1, 0, 1);
    pfe_callstack(b, PFE_CALLSTACKS, 1, frames, 1, 0);
    pb_end(b, in);
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
        T_EQ_INT(p->sample.weight[0], 1000000);
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

/* Every prefix of a trace converts or fails with a message naming the
 * packet; flipped bytes never crash the reader. */
TEST(perfetto_damaged_traces)
{
    pb_buf b = {0};
    fx_perf(&b);
    fx_heap(&b);
    size_t ok = 0, failed = 0;
    for (size_t n = 1; n < b.len; n++) {
        pc_profile *p = NULL;
        pc_error err;
        int st = convert_bytes(b.data, n, NULL, &p, &err);
        if (st == PC_OK) {
            ok++;
        } else {
            failed++;
            /* A prefix without a sample is refused as holding nothing. */
            if (st != PC_EINPUT || (!strstr(err.message, "fixture: offset ") &&
                                    !strstr(err.message, "fixture: nothing to show: ")))
                t_fail(__FILE__, __LINE__, "prefix %zu: status %d: %s", n, st, err.message);
        }
        pc_profile_free(p);
    }
    T_CHECK(ok > 0 && failed > 0);
    uint8_t *copy = malloc(b.len);
    for (size_t i = 0; i < b.len; i++) {
        memcpy(copy, b.data, b.len);
        copy[i] ^= 0xa5;
        pc_profile *p = NULL;
        pc_error err;
        int st = convert_bytes(copy, b.len, NULL, &p, &err);
        if (st != PC_OK && st != PC_EINPUT && st != PC_EUSAGE)
            t_fail(__FILE__, __LINE__, "flip at %zu: status %d: %s", i, st, err.message);
        pc_profile_free(p);
    }
    free(copy);
    pb_buf_free(&b);
}

/* What the Firefox formats say about a Perfetto profile: a date from the
 * first clock snapshot with the wall clock (REALTIME), the cpu-clock's
 * period as the interval, a title naming the process and the input. */
TEST(perfetto_firefox_meta)
{
    pb_buf b = {0};
    /* BOOTTIME 1.5 s was 2026-11-25 12:00:00 UTC; the first sample comes
     * 100 ms later (MONOTONIC 600 ms). */
    uint32_t ids[] = {BOOTTIME, MONOTONIC, 1 /* REALTIME */};
    uint64_t ts[] = {1500000000, 500000000, 1795608000000000000ull};
    pfe_clock_snapshot(&b, ids, ts, 3);
    fx_perf(&b);
    pc_profile *p = convert_buf(&b, NULL);
    if (p) {
        static const int formats[] = {PC_FORMAT_FIREFOX, PC_FORMAT_GECKO};
        for (size_t k = 0; k < 2; k++) {
            size_t len = 0;
            char msg[256], *out = written_text(p, formats[k], &len);
            jv *root = out ? j_parse(out, len, msg, sizeof msg) : NULL;
            const jv *meta = j_get(root, "meta");
            T_EQ_STR(j_num_text(j_get(meta, "startTime")), "1795608000100");
            /* Counter growth per sample: 10, 5, 10, 15 and 25 ms. */
            T_EQ_STR(j_num_text(j_get(meta, "interval")), "10");
            T_EQ_STR(j_str(j_get(meta, "product")), "com.example.app (Perfetto: cpu-clock)");
            j_free(root);
            free(out);
        }
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

static void expect_error(const void *data, size_t len, const char *want)
{
    pc_profile *p = NULL;
    pc_error err;
    int st = convert_bytes(data, len, NULL, &p, &err);
    T_EQ_INT(st, PC_EINPUT);
    if (st != PC_OK)
        T_CONTAINS(err.message, want);
    pc_profile_free(p);
}

TEST(perfetto_error_messages)
{
    pb_buf b = {0};
    fx_perf(&b);
    /* Cut inside the second packet. */
    size_t first = 2 + b.data[1];
    char want[128];
    t_case("perfetto_error_messages: truncated");
    snprintf(want, sizeof want, "fixture: offset %zu: packet 2 claims", first);
    expect_error(b.data, first + 5, want);
    expect_error(b.data, first + 5, "but only 3 remain (truncated trace?)");

    t_case("perfetto_error_messages: wrong wire type");
    pb_buf w = {0};
    size_t pk = pfe_packet(&w, 1);
    pb_uint(&w, 66, 5);   /* perf_sample as a number */
    pb_end(&w, pk);
    expect_error(w.data, w.len, "fixture: offset 4: packet 1: TracePacket:");

    t_case("perfetto_error_messages: bad varint in interned data");
    pb_buf v = {0};
    pk = pfe_packet(&v, 1);
    pb_uint(&v, PFE_CLEARED, 1);
    size_t in = pb_begin(&v, PFE_INTERNED);
    size_t fr = pb_begin(&v, PFE_FRAMES);
    static const uint8_t bad[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    pb_raw(&v, bad, sizeof bad);
    pb_end(&v, fr);
    pb_end(&v, in);
    pb_end(&v, pk);
    expect_error(v.data, v.len, "packet 1: Frame:");

    t_case("perfetto_error_messages: corrupt compressed packets");
    pb_buf z = {0};
    pk = pfe_packet(&z, 0);
    pb_bytes(&z, 50, "not zlib at all", 15);
    pb_end(&z, pk);
    expect_error(z.data, z.len, "fixture: offset 2: packet 1: compressed_packets:");

    t_case("perfetto_error_messages: not a trace");
    expect_error("GIF89a, not a profile", 21, "fixture: offset 0: unknown input format");
    pb_buf_free(&b);
    pb_buf_free(&w);
    pb_buf_free(&v);
    pb_buf_free(&z);
}

/* Perfetto traces through the Firefox writers: a valid processed profile
 * with categories; the Gecko writer leaves the heap out. */
TEST(perfetto_outputs)
{
    pb_buf b = {0};
    fx_perf(&b);
    fx_heap(&b);
    pc_profile *p = convert_buf(&b, NULL);
    if (p) {
        char *json = processed_of(p);
        if (json) {
            T_CONTAINS(json, "\"importedFrom\":\"Perfetto\"");
            T_CONTAINS(json, "\"counters\":[{\"name\":\"libc.malloc\"");
            T_CONTAINS(json, "\"weightType\":\"tracing-ms\"");
        }
        free(json);
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* Formats that cannot carry what the profile holds refuse it; a trace
 * with nothing to show is refused with what it holds and where samples
 * come from. */
TEST(perfetto_refusals)
{
    pb_buf b = {0};
    fx_heap(&b);
    pc_profile *p = convert_buf(&b, NULL);
    if (p) {
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = PC_FORMAT_GECKO;
        unsigned char *out = NULL;
        size_t len = 0;
        pc_error err;
        T_EQ_INT(pc_write_memory(p, &w, &out, &len, &err), PC_EUSAGE);
        T_CONTAINS(err.message, "the Gecko format has no place for heap profiles (this one "
                                "has 3 heap callsites)");
        T_CHECK(!out);
    }
    pc_profile_free(p);
    pb_buf_free(&b);

    /* A Java heap graph, a StackSample and a TrackEvent: none gives a
     * sample yet. */
    static const uint32_t fields[] = {56, 135, 11};
    for (size_t k = 0; k < 3; k++) {
        size_t pk = pfe_packet(&b, 1);
        pb_uint(&b, PFE_TIMESTAMP, 1000 + k);
        size_t m = pb_begin(&b, fields[k]);
        pb_uint(&b, 1, 7);
        pb_end(&b, m);
        pb_end(&b, pk);
    }
    pc_error err;
    T_EQ_INT(convert_bytes(b.data, b.len, NULL, &p, &err), PC_EINPUT);
    T_CONTAINS(err.message, "fixture: nothing to show: the input holds no samples; the trace "
                            "(3 packets) holds 1 Java heap graph packets (android.java_hprof), "
                            "1 StackSample packets, 1 TrackEvent packets (slices); CPU samples "
                            "with callstacks come from the linux.perf data source");
    pb_buf_free(&b);
}

/* A perf trace's start on sequence 1: clocks, processes, defaults, and
 * n functions PREFIX0, PREFIX1... interned with one frame each (iids 1 to
 * n, in that order). */
static void perf_start_with_frames(pb_buf *b, const char *prefix, int n)
{
    snapshot(b, 500000000);
    process_tree(b);
    pfe_perf_defaults(b, 1, MONOTONIC, 1 /* SW_CPU_CLOCK */, 100);
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    size_t in = pb_begin(b, PFE_INTERNED);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s%d", prefix, i);
        pfe_str(b, PFE_FUNCTION_NAMES, (uint64_t)i + 1, name);
        pfe_frame(b, PFE_FRAMES, (uint64_t)i + 1, (uint64_t)i + 1, 0, (uint64_t)i + 1);
    }
    pb_end(b, in);
    pb_end(b, pk);
}

/* A packet of sequence 1 at time t holding one sample of callstack cs in
 * thread 100. */
static void perf_sample_packet(pb_buf *b, uint64_t t, uint64_t cs)
{
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    pb_uint(b, PFE_TIMESTAMP, t);
    pfe_perf_sample(b, 0, 100, 100, cs, 1000);
    pb_end(b, pk);
}

/* Thousands of callstacks, most defined just before their one sample:
 * the space of those resolved is reclaimed as the trace goes on, the
 * others' frames are moved and kept, and callstacks used again
 * afterwards, plain or under an unwinding error's root frame, still give
 * their frames. */
static const char *many_stack_text(int k, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (int j = 0; j < 30; j++)
        used += (size_t)snprintf(buf + used, size - used, "%sf%d", j ? ";" : "", (k + j) % 100);
    return buf;
}

TEST(perfetto_many_callstacks)
{
    enum { N = 3000 };
    pb_buf b = {0};
    perf_start_with_frames(&b, "f", 100);
    uint64_t t = 600000000;
    for (int k = 0; k < N; k++) {
        size_t pk = pfe_packet(&b, 1);
        pb_uint(&b, PFE_FLAGS, 2);
        pb_uint(&b, PFE_TIMESTAMP, t += 1000);
        size_t in = pb_begin(&b, PFE_INTERNED);
        uint64_t frames[30];
        for (int j = 0; j < 30; j++)
            frames[j] = (uint64_t)((k + j) % 100) + 1;
        pfe_callstack(&b, PFE_CALLSTACKS, (uint64_t)k + 1, frames, 30, k & 1);
        pb_end(&b, in);
        /* Every tenth is first used at the end. */
        if (k % 10 != 3)
            pfe_perf_sample(&b, 0, 100, 100, (uint64_t)k + 1, 1000);
        pb_end(&b, pk);
    }
    for (int k = 3; k < N; k += 10)
        perf_sample_packet(&b, t += 1000, (uint64_t)k + 1);
    /* Again, late: callstacks 1, 2 and N, and 5 under an error root. */
    uint64_t again[] = {1, 2, N};
    for (int i = 0; i < 3; i++)
        perf_sample_packet(&b, t += 1000, again[i]);
    size_t pk = pfe_packet(&b, 1);
    pb_uint(&b, PFE_FLAGS, 2);
    pb_uint(&b, PFE_TIMESTAMP, t += 1000);
    size_t ps = pb_begin(&b, 66);
    pb_uint(&b, 1, 0);
    pb_uint(&b, 2, 100);
    pb_uint(&b, 3, 100);
    pb_uint(&b, 4, 5);
    pb_uint(&b, 6, 1000);
    pb_uint(&b, 16, 2);
    pb_end(&b, ps);
    pb_end(&b, pk);

    pc_options o;
    pc_options_init(&o);
    pc_profile *p = convert_buf(&b, &o);
    pb_buf_free(&b);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, N + 4);
    /* In time order: the nine tenths, the deferred tenth, then the four. */
    char want[512];
    size_t i = 0;
    for (int k = 0; k < N; k++)
        if (k % 10 != 3 && strcmp(stack_text(p, p->sample.stack[i++]),
                                  many_stack_text(k, want, sizeof want)) != 0)
            t_fail(__FILE__, __LINE__, "callstack %d: %s", k + 1, stack_text(p, p->sample.stack[i - 1]));
    for (int k = 3; k < N; k += 10)
        if (strcmp(stack_text(p, p->sample.stack[i++]), many_stack_text(k, want, sizeof want)) != 0)
            t_fail(__FILE__, __LINE__, "deferred callstack %d: %s", k + 1,
                   stack_text(p, p->sample.stack[i - 1]));
    T_EQ_STR(stack_text(p, p->sample.stack[N]), many_stack_text(0, want, sizeof want));
    T_EQ_STR(stack_text(p, p->sample.stack[N + 1]), many_stack_text(1, want, sizeof want));
    T_EQ_STR(stack_text(p, p->sample.stack[N + 2]), many_stack_text(N - 1, want, sizeof want));
    const char *err = stack_text(p, p->sample.stack[N + 3]);
    T_CHECK(strncmp(err, "ERROR ", 6) == 0);
    const char *rest = strchr(err, ';');
    T_EQ_STR(rest ? rest + 1 : "", many_stack_text(4, want, sizeof want));
    pc_profile_free(p);
}

/* --keep-going: a damaged packet between good ones is skipped, a cut
 * trace keeps the packets before the cut; both are reported. */
TEST(perfetto_keep_going)
{
    pb_buf b = {0};
    fx_perf(&b);
    size_t full = b.len;
    /* A packet whose own framing holds but whose content does not: a
     * length-delimited field longer than the packet. */
    static const uint8_t bad[] = {0x0a, 0x02, 0x52, 0x05};
    pb_buf c = {0};
    size_t half = 0;
    /* The damaged packet goes in after the first half of the packets. */
    {
        const uint8_t *q = b.data, *end = b.data + full;
        int n = 0;
        while (q < end && n < 6) {
            uint64_t len;
            const uint8_t *r = q + 1;
            if (pb_varint(&r, end, &len) != PB_OK)
                break;
            q = r + len;
            n++;
        }
        half = (size_t)(q - b.data);
    }
    pb_raw(&c, b.data, half);
    pb_raw(&c, bad, sizeof bad);
    pb_raw(&c, b.data + half, full - half);
    pc_options o;
    pc_options_init(&o);
    o.keep_going = 1;
    log_capture_start(&o);
    pc_profile *p = convert_buf(&c, &o);
    if (p) {
        T_EQ_INT(p->sample.n, 5);
        pc_profile_free(p);
    }
    T_CONTAINS(log_capture_text(), "warning: 1 damaged packets skipped (the first: fixture: "
                                   "offset ");
    pc_options strict;
    pc_options_init(&strict);
    pc_profile *q = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(c.data, c.len, &strict, &q, &err), PC_EINPUT);
    pc_profile_free(q);
    /* Cut in the middle of a packet. */
    log_capture_start(&o);
    p = NULL;
    T_EQ_INT(convert_bytes(b.data, full - 3, &o, &p, &err), PC_OK);
    if (p) {
        T_CHECK(p->sample.n >= 3);
        pc_profile_free(p);
    }
    T_CONTAINS(log_capture_text(), "warning: reading stopped early, ");
    T_CONTAINS(log_capture_text(), "(truncated trace?)");
    pb_buf_free(&b);
    pb_buf_free(&c);
}

/* An interned callstack deeper than the limit is cut once, when it is
 * resolved, to its innermost frames (Perfetto lists frames root first). */
TEST(perfetto_depth_limit)
{
    enum { DEPTH = 40 };
    pb_buf b = {0};
    perf_start_with_frames(&b, "d", DEPTH);
    uint64_t frames[DEPTH];
    for (int i = 0; i < DEPTH; i++)
        frames[i] = (uint64_t)i + 1;
    size_t pk = pfe_packet(&b, 1);
    pb_uint(&b, PFE_FLAGS, 2);
    size_t in = pb_begin(&b, PFE_INTERNED);
    pfe_callstack(&b, PFE_CALLSTACKS, 1, frames, DEPTH, 1);
    pfe_callstack(&b, PFE_CALLSTACKS, 2, frames, 3, 0);
    pb_end(&b, in);
    pb_end(&b, pk);
    for (int k = 0; k < 3; k++)
        perf_sample_packet(&b, 600000000 + 1000 * (uint64_t)k, k == 1 ? 2 : 1);
    pc_options o;
    pc_options_init(&o);
    o.max_depth = 5;
    log_capture_start(&o);
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        T_EQ_INT(p->sample.n, 3);
        T_EQ_STR(stack_text(p, p->sample.stack[0]), "d35;d36;d37;d38;d39");
        T_EQ_STR(stack_text(p, p->sample.stack[1]), "d0;d1;d2");
        T_EQ_INT(p->sample.stack[2], p->sample.stack[0]);
    }
    pc_profile_free(p);
    T_CONTAINS(log_capture_text(), "warning: 1 callstacks deeper than 5 frames keep only "
               "their 5 innermost frames (the deepest has 40;");
    /* Without a limit, the whole stack. */
    pc_options_init(&o);
    o.max_depth = 0;
    p = convert_buf(&b, &o);
    if (p) {
        const char *s = stack_text(p, p->sample.stack[0]);
        T_CHECK(strncmp(s, "d0;d1;", 6) == 0 && strstr(s, ";d39") != NULL);
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}
