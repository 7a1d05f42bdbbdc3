/* Counting without callstacks in traced_perf traces: the timebase and
 * follower counts of each PerfSample are cumulative per CPU; they become
 * counter values (what each CPU counted since its read before), shown in
 * the Firefox Profiler as counter tracks, per process or, with --percpu,
 * per CPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonmini.h"
#include "pf_fixtures.h"
#include "t.h"
#include "test_util.h"

enum { SEQ = 1, READS = 20 };
#define GAP 10000000ull     /* 10 ms between reads of one CPU */
#define CPU1_LAG 3000000ull /* CPU 1 reads 3 ms after CPU 0 */
#define T0 50000000000ull

/* The perf session's defaults: a cpu-clock timebase at 100 Hz and the
 * cycles and instructions followers; with clear, as the first packet of a
 * new generation of incremental state. */
static void defaults(pb_buf *b, int with_followers)
{
    size_t pk = pfe_packet(b, SEQ);
    pb_uint(b, PFE_FLAGS, 1);
    size_t d = pb_begin(b, PFE_DEFAULTS);
    size_t ps = pb_begin(b, 12);
    size_t tb = pb_begin(b, 1);
    pb_uint(b, 2, 100);
    pb_uint(b, 4, 1 /* SW_CPU_CLOCK */);
    pb_end(b, tb);
    for (int k = 0; with_followers && k < 2; k++) {
        size_t f = pb_begin(b, 4);
        pb_uint(b, 1, k ? 11 /* HW_INSTRUCTIONS */ : 10 /* HW_CPU_CYCLES */);
        pb_end(b, f);
    }
    pb_end(b, ps);
    pb_end(b, d);
    main_callstack(b);
    pb_end(b, pk);
}

/* Read k (from 1) of CPU c: the cumulative counts since the session
 * began.  CPU c runs thread 100 + c of process 100; cycles run at 2 and
 * instructions at 0.5 a ns. */
static void read_at(pb_buf *b, uint32_t c, uint64_t k, uint64_t cs, int skipped, int packed)
{
    size_t pk = pfe_packet(b, SEQ);
    pb_uint(b, PFE_FLAGS, 2);
    pb_uint(b, PFE_TIMESTAMP, T0 + k * GAP + c * CPU1_LAG);
    size_t m = pb_begin(b, 66);
    pb_uint(b, 1, c);
    pb_uint(b, 2, 100);
    pb_uint(b, 3, 100 + c);
    if (cs)
        pb_uint(b, 4, cs);
    pb_uint(b, 6, k * GAP);
    if (packed) {
        pb_buf v = {0};
        pb_put_varint(&v, k * GAP * 2);
        pb_put_varint(&v, k * GAP / 2);
        pb_tag(b, 7, 2);
        pb_put_varint(b, v.len);
        pb_raw(b, v.data, v.len);
        pb_buf_free(&v);
    } else {
        pb_uint(b, 7, k * GAP * 2);
        pb_uint(b, 7, k * GAP / 2);
    }
    if (skipped)
        pb_uint(b, 18, 1 /* PROFILER_SKIP_READ_STAGE */);
    pb_end(b, m);
    pb_end(b, pk);
}

/* Two CPUs counting, READS reads each, with an incremental-state clear
 * halfway (the counts run on through it); cs 0 gives no callstacks. */
static void counting(pb_buf *b, uint64_t cs)
{
    process_tree(b);
    defaults(b, 1);
    for (uint64_t k = 1; k <= READS; k++) {
        if (k == READS / 2)
            defaults(b, 1);
        for (uint32_t c = 0; c < 2; c++)
            read_at(b, c, k, cs, 0, k % 2);
    }
}

/* The counting trace (callstack cs for every sample, 0: none)
 * converted with o; NULL (a failure recorded) when it cannot be. */
static pc_profile *counted(uint64_t cs, const pc_options *o)
{
    pb_buf b = {0};
    counting(&b, cs);
    pc_profile *p = convert_buf(&b, o);
    pb_buf_free(&b);
    return p;
}

static const char *event_of(const pc_profile *p, size_t i)
{
    return str_of(p, p->event.name[p->counter.event[i]]);
}

/* Sum of the values of event name on thread tid (any: -1). */
static long long total(const pc_profile *p, const char *name, int64_t tid)
{
    long long s = 0;
    for (size_t i = 0; i < p->counter.n; i++)
        if (strcmp(event_of(p, i), name) == 0 &&
            (tid < 0 || p->thread.tid[p->counter.thread[i]] == tid))
            s += p->counter.value[i];
    return s;
}

TEST(perfetto_counting_without_callstacks)
{
    pc_profile *p = counted(0, NULL);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, 0);
    T_EQ_INT(p->counter.n, READS * 2 * 3);
    /* Each CPU's values add up to its last read, through the clear. */
    for (int64_t c = 0; c < 2; c++) {
        T_EQ_INT(total(p, "cpu-clock", 100 + c), READS * GAP);
        T_EQ_INT(total(p, "cpu-cycles", 100 + c), READS * GAP * 2);
        T_EQ_INT(total(p, "instructions", 100 + c), READS * GAP / 2);
    }
    /* Every value after a CPU's first is what it counted in one gap. */
    size_t steady = 0;
    for (size_t i = 0; i < p->counter.n; i++) {
        uint64_t k = (p->counter.time[i] - T0 - p->counter.cpu[i] * CPU1_LAG) / GAP;
        T_EQ_INT(p->counter.cpu[i], p->thread.tid[p->counter.thread[i]] - 100);
        if (k > 1 && strcmp(event_of(p, i), "cpu-cycles") == 0) {
            T_EQ_INT(p->counter.value[i], GAP * 2);
            steady++;
        }
    }
    T_EQ_INT(steady, (READS - 1) * 2);
    /* What each event measures is the reader's word, in the model. */
    for (size_t e = 0; e < p->event.n; e++)
        T_EQ_INT(p->event.unit[e],
                 strcmp(str_of(p, p->event.name[e]), "cpu-clock") == 0 ? PC_UNIT_NS
                                                                       : PC_UNIT_COUNT);
    pc_profile_free(p);
}

/* Samples with callstacks weigh their timebase count as before; their
 * followers are counter values, and the timebase is not counted twice. */
TEST(perfetto_followers_beside_samples)
{
    pc_profile *p = counted(1, NULL);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, READS * 2);
    long long w = 0;
    for (size_t i = 0; i < p->sample.n; i++)
        w += pc_sample_weight(p, i);
    T_EQ_INT(w, 2 * READS * GAP);
    T_EQ_INT(total(p, "cpu-clock", -1), 0);
    T_EQ_INT(total(p, "cpu-cycles", -1), 2 * READS * GAP * 2);
    T_EQ_INT(total(p, "instructions", -1), 2 * READS * GAP / 2);
    T_EQ_INT(p->counter.n, READS * 2 * 2);
    pc_profile_free(p);
}

/* A skipped sample has no callstack, but its counts are counted. */
TEST(perfetto_skipped_samples_count)
{
    pb_buf b = {0};
    process_tree(&b);
    defaults(&b, 1);
    for (uint64_t k = 1; k <= 3; k++)
        read_at(&b, 0, k, 1, k == 2, 0);
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    pc_profile *p = convert_buf(&b, &o);
    pb_buf_free(&b);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, 2);
    T_CONTAINS(log_capture_text(), "1 perf samples were skipped");
    /* The read after the skipped one weighs one gap, not two. */
    if (p->sample.n == 2)
        T_EQ_INT(pc_sample_weight(p, 1), GAP);
    T_EQ_INT(total(p, "cpu-clock", -1), GAP);
    T_EQ_INT(total(p, "cpu-cycles", -1), 3 * GAP * 2);
    pc_profile_free(p);
}

/* The counter tracks of the processed output, by name: their summed
 * counts, and the rates the profiler draws (count over the time since
 * the value before), which must not spike where CPUs' reads interleave. */
typedef struct track_facts {
    int found;
    double sum, min_rate, max_rate;
    long long main_thread, pid;
} track_facts;

static track_facts counter_track(const jv *root, const char *name)
{
    track_facts f = {0, 0, INFINITY, 0, -1, -1};
    const jv *cs = j_get(root, "counters");
    for (size_t c = 0; cs && c < j_len(cs); c++) {
        const jv *ct = j_at(cs, c);
        if (strcmp(j_get(ct, "name")->str, name) != 0)
            continue;
        f.found++;
        f.main_thread = (long long)j_num(j_get(ct, "mainThreadIndex"));
        f.pid = atoll(j_get(ct, "pid")->str);
        const jv *s = j_get(ct, "samples");
        const jv *t = j_get(s, "time"), *n = j_get(s, "count");
        T_EQ_INT(j_len(t), (size_t)j_num(j_get(s, "length")));
        for (size_t i = 0; i < j_len(n); i++) {
            f.sum += j_num(j_at(n, i));
            if (i == 0)
                continue;
            double dt = j_num(j_at(t, i)) - j_num(j_at(t, i - 1));
            double r = dt > 0 ? j_num(j_at(n, i)) / dt : INFINITY;
            if (r < f.min_rate)
                f.min_rate = r;
            if (r > f.max_rate)
                f.max_rate = r;
        }
    }
    return f;
}

TEST(perfetto_counters_in_processed_output)
{
    pc_profile *p = counted(0, NULL);
    if (!p)
        return;
    char *text = processed_of(p);
    pc_profile_free(p);
    char msg[256];
    jv *root = text ? j_parse(text, strlen(text), msg, sizeof msg) : NULL;
    T_CHECK(root != NULL);
    if (root) {
        T_EQ_INT(j_len(j_get(root, "counters")), 3);
        track_facts cy = counter_track(root, "cpu-cycles");
        T_EQ_INT(cy.found, 1);
        T_EQ_INT(cy.pid, 100);
        /* The process's main thread carries it. */
        const jv *th = j_at(j_get(root, "threads"), (size_t)cy.main_thread);
        T_CHECK(th && j_num(j_get(th, "tid")) == 100);
        T_CHECK(fabs(cy.sum - 2.0 * READS * GAP * 2) < 1);
        /* Two CPUs at 2 cycles a ns: 4e6 a ms, in every bin. */
        T_CHECK(fabs(cy.min_rate - 4e6) < 1 && fabs(cy.max_rate - 4e6) < 1);
        track_facts ns = counter_track(root, "cpu-clock");
        T_CHECK(fabs(ns.sum - 2.0 * READS * GAP) < 1);
        T_CHECK(fabs(ns.max_rate - 2e6) < 1);
    }
    j_free(root);
    free(text);
}

/* With --percpu the CPUs are the threads, and each has its tracks. */
TEST(perfetto_counters_per_cpu)
{
    pc_options o;
    pc_options_init(&o);
    o.percpu = 1;
    pc_profile *p = counted(0, &o);
    if (!p)
        return;
    char *text = processed_of(p);
    pc_profile_free(p);
    char msg[256];
    jv *root = text ? j_parse(text, strlen(text), msg, sizeof msg) : NULL;
    T_CHECK(root != NULL);
    if (root) {
        T_EQ_INT(j_len(j_get(root, "counters")), 6);
        track_facts c1 = counter_track(root, "cpu-cycles, CPU 1");
        T_EQ_INT(c1.found, 1);
        T_EQ_INT(c1.pid, -1);
        T_CHECK(fabs(c1.sum - 1.0 * READS * GAP * 2) < 1);
        /* One CPU: each read at its own time, 2e6 cycles a ms. */
        T_CHECK(fabs(c1.min_rate - 2e6) < 1 && fabs(c1.max_rate - 2e6) < 1);
        const jv *th = j_at(j_get(root, "threads"), (size_t)c1.main_thread);
        T_CHECK(th && strcmp(j_get(th, "name")->str, "CPU 1") == 0);
    }
    j_free(root);
    free(text);
}

/* Time filters keep the values read in the range. */
TEST(perfetto_counters_time_filter)
{
    pc_options o;
    pc_options_init(&o);
    o.time_start = (int64_t)(5 * GAP);
    o.time_end = (int64_t)(15 * GAP);
    pc_profile *p = counted(0, &o);
    if (!p)
        return;
    /* Reads 5..14 of CPU 0 and 4..13 of CPU 1 (times from its first
     * read, CPU 0's first). */
    T_EQ_INT(p->counter.n, 20 * 3);
    T_EQ_INT(total(p, "cpu-cycles", 100), 10 * GAP * 2);
    pc_profile_free(p);
}

/* Formats without counter tracks refuse a profile of counters alone and
 * leave them out, with a warning, beside samples. */
TEST(perfetto_counters_other_formats)
{
    pc_profile *p = counted(0, NULL);
    if (!p)
        return;
    pc_write_options w;
    pc_write_options_init(&w);
    w.format = PC_FORMAT_FOLDED;
    unsigned char *out = NULL;
    size_t n = 0;
    pc_error err;
    T_EQ_INT(pc_write_memory(p, &w, &out, &n, &err), PC_EUSAGE);
    T_CONTAINS(err.message, "folded stacks has no place for counters, and this profile holds "
                            "nothing else (120 counter values of cpu-clock, cpu-cycles, "
                            "instructions)");
    free(out);
    pc_profile_free(p);

    p = counted(1, NULL);
    if (!p)
        return;
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    w.format = PC_FORMAT_PPROF;
    w.log = o.log;
    w.log_ctx = o.log_ctx;
    out = NULL;
    T_EQ_INT(pc_write_memory(p, &w, &out, &n, &err), PC_OK);
    T_CONTAINS(log_capture_text(), "pprof has no place for counters: 80 counter values of "
                                   "cpu-cycles, instructions are left out");
    free(out);
    pc_profile_free(p);
}

/* The real profiler loads the tracks, and shows the process that has
 * them. */
TEST(perfetto_counters_in_profiler)
{
    const char *shared = t_shared();
    if (!shared || !t_node20()) {
        t_skip("%s: the profiler's validate is not run", shared ? "no Node.js 20"
                                                              : "../shared is absent");
        return;
    }
    pc_profile *p = counted(0, NULL);
    if (!p)
        return;
    jv *root = t_validate_profile(p, "counters.json");
    pc_profile_free(p);
    const jv *r = root ? j_at(root, 0) : NULL;
    T_CHECK(r != NULL);
    if (r) {
        T_CHECK(j_get(r, "ok")->boolean);
        const jv *meta = j_get(r, "meta");
        /* Thread 101's track (no samples, no counters) and the three
         * counter tracks of process 100, none hidden. */
        T_EQ_INT(j_num(j_get(meta, "localTracks")), 4);
        T_EQ_INT(j_num(j_get(meta, "hiddenLocalTracks")), 1);
        T_EQ_INT(j_num(j_get(meta, "hiddenGlobalTracks")), 0);
    }
    j_free(root);
}

/* heapprofd's streaming allocations and frees: the bytes live in each
 * process's heap over time.  Allocations carry MONOTONIC_COARSE times;
 * a free takes its packet's. */
static void streaming(pb_buf *b, int frees, uint64_t ts, const uint64_t *addr,
                      const uint64_t *size, const uint64_t *when, size_t n)
{
    size_t pk = pfe_packet(b, 7);
    pb_uint(b, 79, 100);
    if (frees)
        pb_uint(b, PFE_TIMESTAMP, ts);
    size_t m = pb_begin(b, frees ? 75 : 74);
    for (size_t i = 0; i < n; i++) {
        pb_uint(b, 1, addr[i]);
        if (!frees) {
            pb_uint(b, 2, size[i]);
            pb_uint(b, 4, when[i]);
        }
    }
    pb_end(b, m);
    pb_end(b, pk);
}

TEST(perfetto_streaming_heap)
{
    pb_buf b = {0};
    snapshot(&b, 0);
    process_tree(&b);
    static const uint64_t a[] = {0x1000, 0x2000, 0x3000}, sz[] = {100, 200, 50},
                          t[] = {1000000, 2000000, 3000000};
    streaming(&b, 0, 0, a, sz, t, 3);
    /* 0x9000 was allocated before the recording: its free counts nothing. */
    static const uint64_t f[] = {0x1000, 0x9000};
    streaming(&b, 1, BOOT_AHEAD + 4000000, f, NULL, NULL, 2);
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    pc_profile *p = convert_buf(&b, &o);
    pb_buf_free(&b);
    if (!p)
        return;
    T_EQ_INT(p->counter.n, 4);
    static const long long want_t[] = {1, 2, 3, 4}, want_v[] = {100, 200, 50, -100};
    for (size_t i = 0; i < p->counter.n && i < 4; i++) {
        T_EQ_INT(p->counter.time[i], BOOT_AHEAD + (uint64_t)want_t[i] * 1000000);
        T_EQ_INT(p->counter.value[i], want_v[i]);
        T_EQ_INT(p->thread.pid[p->counter.thread[i]], 100);
    }
    T_EQ_STR(event_of(p, 0), "streaming heap 0");
    T_EQ_INT(p->event.unit[p->counter.event[0]], PC_UNIT_BYTES);
    T_CONTAINS(log_capture_text(), "3 streaming allocations and 2 frees carry no callstacks");
    char *text = processed_of(p);
    pc_profile_free(p);
    char msg[256];
    jv *root = text ? j_parse(text, strlen(text), msg, sizeof msg) : NULL;
    const jv *ct = root ? j_at(j_get(root, "counters"), 0) : NULL;
    T_CHECK(ct != NULL);
    if (ct) {
        T_EQ_STR(j_get(ct, "category")->str, "Memory");
        T_EQ_STR(j_get(j_get(ct, "display"), "graphType")->str, "line-accumulated");
        /* What is live at the end: 200 + 50. */
        track_facts m = counter_track(root, "streaming heap 0");
        T_CHECK(fabs(m.sum - 250) < 1e-9);
    }
    j_free(root);
    free(text);
}

/* With a time range, the live bytes before it are the level it starts
 * from, not zero. */
TEST(perfetto_streaming_heap_time_range)
{
    pb_buf b = {0};
    snapshot(&b, 0);
    process_tree(&b);
    static const uint64_t a[] = {0x1000, 0x2000, 0x3000}, sz[] = {100, 200, 50},
                          t[] = {1000000, 2000000, 3000000};
    streaming(&b, 0, 0, a, sz, t, 3);
    pc_options o;
    pc_options_init(&o);
    o.time_start = 1500000;  /* from the first value at BOOT_AHEAD + 1 ms */
    pc_profile *p = convert_buf(&b, &o);
    pb_buf_free(&b);
    if (!p)
        return;
    /* The 300 bytes allocated before the range, at its start, then the
     * 50 inside it. */
    T_EQ_INT(total(p, "streaming heap 0", -1), 350);
    T_EQ_INT(p->counter.n, 2);
    size_t level = 0;
    for (size_t i = 0; i < p->counter.n; i++)
        level += p->counter.value[i] == 300 && p->counter.time[i] == BOOT_AHEAD + 2500000;
    T_EQ_INT(level, 1);
    pc_profile_free(p);
}

/* Times at the far ends of the clock: the tracks are written without an
 * overflow (the sanitizer build checks), the zero before the first. */
TEST(perfetto_counters_extreme_times)
{
    pb_buf b = {0};
    defaults(&b, 0);
    for (int k = 0; k < 2; k++) {
        size_t pk = pfe_packet(&b, SEQ);
        pb_uint(&b, PFE_FLAGS, 2);
        pb_uint(&b, PFE_TIMESTAMP, k ? (UINT64_C(1) << 63) + 5 : 1);
        size_t m = pb_begin(&b, 66);
        pb_uint(&b, 1, (uint32_t)k);
        pb_uint(&b, 2, k ? 20 : 10);
        pb_uint(&b, 3, k ? 20 : 10);
        pb_uint(&b, 6, 1000);
        pb_end(&b, m);
        pb_end(&b, pk);
    }
    pc_profile *p = convert_buf(&b, NULL);
    pb_buf_free(&b);
    if (!p)
        return;
    T_EQ_INT(p->counter.n, 2);
    char *text = processed_of(p);
    T_CHECK(text != NULL);
    free(text);
    pc_profile_free(p);
}

/* Counter values follow their threads through the thread filters and
 * into a profile they are added to. */
TEST(perfetto_counters_filters_and_merge)
{
    pc_options o;
    pc_options_init(&o);
    int64_t tid = 101;
    o.tids.items = &tid;
    o.tids.n = 1;
    pc_profile *p = counted(0, &o);
    if (p) {
        T_EQ_INT(p->counter.n, READS * 3);
        T_EQ_INT(total(p, "cpu-cycles", 101), READS * GAP * 2);
        pc_profile_free(p);
    }
    p = counted(0, NULL);
    pc_profile *q = counted(0, NULL);
    if (!p || !q) {
        pc_profile_free(p);
        pc_profile_free(q);
        return;
    }
    T_EQ_INT(pc_profile_append(p, q, NULL, 0, PC_PID_SPAN), 0);
    T_EQ_INT(p->counter.n, 2 * READS * 2 * 3);
    T_EQ_INT(total(p, "cpu-cycles", -1), 2 * 2 * READS * GAP * 2);
    /* The appended process moved to a pid of its own, its values with it. */
    size_t moved = 0;
    for (size_t i = 0; i < p->counter.n; i++)
        moved += p->thread.pid[p->counter.thread[i]] == 100 + PC_PID_SPAN;
    T_EQ_INT(moved, READS * 2 * 3);
    pc_profile_free(p);
    pc_profile_free(q);
}
