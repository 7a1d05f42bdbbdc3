/* StackSample packets (the generic sampler, packet field 135), from traces
 * of our own encoder: tasks with and without pid and tid, interned and
 * inline contexts and callstacks, the counter a sample is measured
 * against, follower counters, references to interned data the trace does
 * not define, and the output loading in the Firefox Profiler. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonmini.h"
#include "pf_encode.h"
#include "pf_corpus.h"
#include "t.h"
#include "test_util.h"

enum { SEQ = 3, UNIT_NS = 1, UNIT_BYTES = 4 };

/* Interned data: functions main and work, frames on a mapping /app,
 * callstack 1 main;work, and a task (pid 100, tid 101), a CPU (3) and a
 * counter "alloc-size" in bytes as iid 1 each. */
static void interned(pb_buf *b)
{
    size_t in = pb_begin(b, PFE_INTERNED);
    pfe_str(b, PFE_FUNCTION_NAMES, 1, "main");
    pfe_str(b, PFE_FUNCTION_NAMES, 2, "work");
    pfe_str(b, PFE_MAPPING_PATHS, 1, "app");
    static const uint64_t path[] = {1};
    pfe_mapping(b, PFE_MAPPINGS, 1, 0, path, 1);
    pfe_frame(b, PFE_FRAMES, 1, 1, 1, 0x10);
    pfe_frame(b, PFE_FRAMES, 2, 2, 1, 0x20);
    static const uint64_t frames[] = {1, 2};
    pfe_callstack(b, PFE_CALLSTACKS, 1, frames, 2, 0);
    pfe_ss_task(b, PFE_SS_TASKS, 1, 100, 101);
    pfe_ss_exec(b, PFE_SS_EXECS, 1, 3);
    pfe_ss_counter(b, PFE_SS_COUNTERS, 1, "alloc-size", UNIT_BYTES, 0);
    pb_end(b, in);
}

/* A sample packet at ts, opened: close with pb_end on the two marks. */
typedef struct ss_marks {
    size_t pk, ss;
} ss_marks;

static ss_marks sample_open(pb_buf *b, uint64_t ts)
{
    ss_marks m;
    m.pk = pfe_packet(b, SEQ);
    pb_uint(b, PFE_TIMESTAMP, ts);
    m.ss = pb_begin(b, PFE_STACK_SAMPLE);
    return m;
}

static void sample_close(pb_buf *b, ss_marks m)
{
    pb_end(b, m.ss);
    pb_end(b, m.pk);
}

static const char *const py_names[] = {"main", "handle", NULL};
static const char *const py_files[] = {"/src/app.py", "/src/handler.py", "/src/lib.py"};
static const uint32_t py_lines[] = {10, 42, 7};

/* A trace of python.wall samples, wall-time in ns:
 *   1000  task 100/101 interned, CPU 3 interned, callstack 1, 1 ms
 *   2000  task 100/102 inline, CPU 1 inline, inline callstack, 2 ms,
 *         two follower values, the first's counter inline (instructions,
 *         multiplier 2), the second's not given
 *   3000  task pid 100 only, callstack 1, 3 ms
 *   4000  task tid 200 only (process tree: pid 300), callstack 1, 4 ms
 *   5000  no task, the inline callstack, 5 ms
 *   6000  the interned counter (bytes, multiplier 1), 6 bytes
 *   7000  no weight: one sample of wall-time */
static void trace(pb_buf *b)
{
    size_t pk = pfe_packet(b, 0);
    size_t pt = pb_begin(b, 2);
    static const char *const cmd[] = {"com.example.py"};
    pfe_process(b, 100, cmd, 1);
    pfe_thread(b, 200, 300, "worker");
    pb_end(b, pt);
    pb_end(b, pk);
    pfe_ss_defaults(b, SEQ, "python.wall", "wall-time", UNIT_NS);

    ss_marks m = sample_open(b, 1000);
    pb_uint(b, 2, 1);
    pb_uint(b, 4, 1);
    pb_uint(b, 6, 1);
    pb_uint(b, 11, 1000000);
    pb_end(b, m.ss);
    interned(b);
    pb_end(b, m.pk);

    m = sample_open(b, 2000);
    pfe_ss_task(b, 1, 0, 100, 102);
    pfe_ss_exec(b, 3, 0, 1);
    pfe_ss_inline(b, py_names, py_files, py_lines, 3);
    pb_uint(b, 11, 2000000);
    static const uint8_t followers[] = {0x72, 0x02, 0x05, 0x06};  /* 14: packed {5, 6} */
    pb_raw(b, followers, sizeof followers);
    pfe_ss_counter(b, 12, 0, "instructions", 3 /* UNIT_INSTRUCTIONS */, 2);
    sample_close(b, m);

    m = sample_open(b, 3000);
    pfe_ss_task(b, 1, 0, 100, -1);
    pb_uint(b, 6, 1);
    pb_uint(b, 11, 3000000);
    sample_close(b, m);

    m = sample_open(b, 4000);
    pfe_ss_task(b, 1, 0, -1, 200);
    pb_uint(b, 6, 1);
    pb_uint(b, 11, 4000000);
    sample_close(b, m);

    m = sample_open(b, 5000);
    pfe_ss_inline(b, py_names, py_files, py_lines, 3);
    pb_uint(b, 11, 5000000);
    sample_close(b, m);

    m = sample_open(b, 6000);
    pb_uint(b, 2, 1);
    pb_uint(b, 10, 1);
    pb_uint(b, 6, 1);
    pb_uint(b, 11, 6);
    sample_close(b, m);

    m = sample_open(b, 7000);
    pb_uint(b, 2, 1);
    pb_uint(b, 6, 1);
    sample_close(b, m);
}

static pc_profile *convert_trace(const pb_buf *b, pc_options *o, const char **log)
{
    pc_options local;
    if (!o) {
        pc_options_init(&local);
        o = &local;
    }
    log_capture_start(o);
    pc_profile *p = NULL;
    pc_error err;
    if (convert_bytes(b->data, b->len, o, &p, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "conversion failed: %s", err.message);
        return NULL;
    }
    if (log)
        *log = log_capture_text();
    return p;
}

static long long at_time(const pc_profile *p, uint64_t ts)
{
    for (size_t i = 0; i < p->sample.n; i++)
        if (pc_sample_time(p, i) == ts)
            return (long long)i;
    t_fail(__FILE__, __LINE__, "no sample at %" PRIu64, ts);
    return -1;
}

TEST(perfetto_stack_sample_samples)
{
    pb_buf b = {0};
    trace(&b);
    const char *log = NULL;
    pc_profile *p = convert_trace(&b, NULL, &log);
    pb_buf_free(&b);
    if (!p)
        return;
    /* The other events' samples are shown when chosen (below). */
    T_EQ_INT(p->sample.n, 5);
    long long i;

    t_case("stack_sample: interned task, CPU and callstack");
    if ((i = at_time(p, 1000)) >= 0) {
        uint32_t t = pc_sample_thread(p, i);
        T_EQ_INT(p->thread.pid[t], 100);
        T_EQ_INT(p->thread.tid[t], 101);
        T_EQ_INT(pc_sample_cpu(p, i), 3);
        T_EQ_STR(stack_text(p, p->sample.stack[i]), "main;work");
        T_EQ_INT(pc_sample_weight(p, i), 1000000);
        uint16_t ev = pc_sample_event(p, i);
        T_EQ_STR(str_of(p, p->event.name[ev]), "wall-time (python.wall)");
        T_EQ_INT(p->event.unit[ev], PC_UNIT_NS);
    }

    t_case("stack_sample: inline task, CPU and callstack, with files and lines");
    if ((i = at_time(p, 2000)) >= 0) {
        uint32_t t = pc_sample_thread(p, i);
        T_EQ_INT(p->thread.pid[t], 100);
        T_EQ_INT(p->thread.tid[t], 102);
        T_EQ_INT(pc_sample_cpu(p, i), 1);
        /* The frame without a function name is named by its location. */
        T_EQ_STR(stack_text(p, p->sample.stack[i]), "main;handle;/src/lib.py:7");
        uint32_t s = p->sample.stack[i];
        for (size_t k = 3; k-- > 0 && s != PC_NONE; s = p->stack.prefix[s]) {
            uint32_t f = p->stack.frame[s];
            T_EQ_STR(str_of(p, p->func.file[p->frame.func[f]]), py_files[k]);
            T_EQ_INT(p->frame.line[f], py_lines[k]);
        }
        T_EQ_INT(pc_sample_weight(p, i), 2000000);
    }

    t_case("stack_sample: a process without a thread, a thread without a process");
    if ((i = at_time(p, 3000)) >= 0) {
        uint32_t t = pc_sample_thread(p, i);
        T_EQ_INT(p->thread.pid[t], 100);
        T_EQ_INT(p->thread.tid[t], 100);
        T_EQ_STR(str_of(p, p->thread.name[t]), "com.example.py");
    }
    if ((i = at_time(p, 4000)) >= 0) {
        uint32_t t = pc_sample_thread(p, i);
        T_EQ_INT(p->thread.pid[t], 300);
        T_EQ_INT(p->thread.tid[t], 200);
        T_EQ_STR(str_of(p, p->thread.name[t]), "worker");
    }

    t_case("stack_sample: no task");
    if ((i = at_time(p, 5000)) >= 0) {
        uint32_t t = pc_sample_thread(p, i);
        T_EQ_STR(str_of(p, p->thread.name[t]), "[no task]");
        T_EQ_INT(pc_sample_cpu(p, i), PC_NO_CPU);
        /* The same inline frames as at 2000. */
        long long j = at_time(p, 2000);
        if (j >= 0)
            T_EQ_INT(p->sample.stack[i], p->sample.stack[j]);
    }

    t_case("stack_sample: follower weights are counter values");
    T_EQ_INT(p->counter.n, 1);
    if (p->counter.n == 1) {
        T_EQ_INT(p->counter.time[0], 2000);
        T_EQ_INT(p->counter.value[0], 10);
        T_EQ_INT(p->counter.cpu[0], 1);
        T_EQ_STR(str_of(p, p->event.name[p->counter.event[0]]), "instructions (python.wall)");
        T_EQ_INT(p->thread.tid[p->counter.thread[0]], 102);
    }
    T_CONTAINS(log, "1 follower weights of StackSample packets name no counter");
    pc_profile_free(p);

    t_case("stack_sample: an interned counter in bytes");
    pc_options o;
    pc_options_init(&o);
    o.event = "alloc-size (python.wall)";
    pb_buf c = {0};
    trace(&c);
    p = convert_trace(&c, &o, NULL);
    if (p && (i = at_time(p, 6000)) >= 0) {
        uint16_t ev = pc_sample_event(p, i);
        T_EQ_STR(str_of(p, p->event.name[ev]), "alloc-size (python.wall)");
        T_EQ_INT(p->event.unit[ev], PC_UNIT_COUNT);
        T_EQ_INT(pc_sample_weight(p, i), 6);
    }
    pc_profile_free(p);

    t_case("stack_sample: a sample without a weight");
    o.event = "samples of wall-time (python.wall)";
    p = convert_trace(&c, &o, NULL);
    pb_buf_free(&c);
    if (p && (i = at_time(p, 7000)) >= 0) {
        uint16_t ev = pc_sample_event(p, i);
        T_EQ_STR(str_of(p, p->event.name[ev]), "samples of wall-time (python.wall)");
        T_EQ_INT(p->event.unit[ev], PC_UNIT_SAMPLES);
        T_EQ_INT(pc_sample_weight(p, i), 1);
    }
    pc_profile_free(p);
}

/* Without defaults nor a counter, samples count one each under the
 * source-less "samples of stack samples". */
TEST(perfetto_stack_sample_no_defaults)
{
    pb_buf b = {0};
    ss_marks m = sample_open(&b, 500);
    pb_uint(&b, PFE_CLEARED, 1);
    pfe_ss_task(&b, 1, 0, 7, 8);
    pfe_ss_inline(&b, py_names, NULL, NULL, 2);
    pb_uint(&b, 11, 99);
    sample_close(&b, m);
    pc_profile *p = convert_trace(&b, NULL, NULL);
    pb_buf_free(&b);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, 1);
    if (p->sample.n == 1) {
        T_EQ_STR(str_of(p, p->event.name[pc_sample_event(p, 0)]), "samples of stack samples");
        T_EQ_INT(p->event.unit[pc_sample_event(p, 0)], PC_UNIT_SAMPLES);
        T_EQ_INT(pc_sample_weight(p, 0), 1);
        T_EQ_STR(stack_text(p, p->sample.stack[0]), "main;handle");
    }
    pc_profile_free(p);
}

/* References to interned data the trace does not define: the samples
 * are kept without it, and the first is named with its packet and byte
 * offset. */
TEST(perfetto_stack_sample_undefined)
{
    pb_buf b = {0};
    pfe_ss_defaults(&b, SEQ, "python.wall", "wall-time", UNIT_NS);
    size_t offset = b.len;
    ss_marks m = sample_open(&b, 1000);
    pb_uint(&b, 2, 9);
    pb_uint(&b, 4, 9);
    pb_uint(&b, 6, 9);
    pb_uint(&b, 10, 9);
    pb_uint(&b, 11, 5);
    sample_close(&b, m);
    /* A sample with a stack, so that there is something to show. */
    m = sample_open(&b, 2000);
    pfe_ss_inline(&b, py_names, NULL, NULL, 1);
    pb_uint(&b, 11, 5);
    sample_close(&b, m);
    const char *log = NULL;
    pc_profile *p = convert_trace(&b, NULL, &log);
    pb_buf_free(&b);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, 2);
    long long i = at_time(p, 1000);
    if (i >= 0) {
        T_EQ_INT(p->sample.stack[i], PC_NONE);
        T_EQ_INT(pc_sample_cpu(p, i), PC_NO_CPU);
        T_EQ_STR(str_of(p, p->thread.name[pc_sample_thread(p, i)]), "[no task]");
        /* The defaults' counter stands in for the undefined one. */
        T_EQ_STR(str_of(p, p->event.name[pc_sample_event(p, i)]), "wall-time (python.wall)");
    }
    char want[160];
    /* The packet's first field follows its tag and length (2 bytes). */
    snprintf(want, sizeof want, "4 references of StackSample packets to interned data the "
             "trace does not define were left out (the first: packet 2 at byte %zu, "
             "task_context_iid 9)", offset + 2);
    T_CONTAINS(log, want);
    pc_profile_free(p);
}

/* Damaged StackSample packets are refused with the packet named; no
 * prefix or flipped byte crashes the reader. */
TEST(perfetto_stack_sample_damaged)
{
    pb_buf b = {0};
    pfe_ss_defaults(&b, SEQ, "python.wall", "wall-time", UNIT_NS);
    ss_marks m = sample_open(&b, 1000);
    pb_uint(&b, 1, 5);   /* task_context as a number */
    sample_close(&b, m);
    pc_profile *p = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(b.data, b.len, NULL, &p, &err), PC_EINPUT);
    T_CONTAINS(err.message, "packet 2: StackSample:");
    pc_profile_free(p);
    pb_buf_free(&b);

    pb_buf t = {0};
    trace(&t);
    uint8_t *copy = malloc(t.len);
    for (size_t n = 1; n <= t.len; n++) {
        p = NULL;
        int st = convert_bytes(t.data, n, NULL, &p, &err);
        if (st != PC_OK && st != PC_EINPUT)
            t_fail(__FILE__, __LINE__, "prefix %zu: status %d: %s", n, st, err.message);
        pc_profile_free(p);
    }
    for (size_t i = 0; i < t.len; i++) {
        memcpy(copy, t.data, t.len);
        copy[i] ^= 0x5a;
        p = NULL;
        int st = convert_bytes(copy, t.len, NULL, &p, &err);
        if (st != PC_OK && st != PC_EINPUT && st != PC_EUSAGE)
            t_fail(__FILE__, __LINE__, "flip at %zu: status %d: %s", i, st, err.message);
        pc_profile_free(p);
    }
    free(copy);
    pb_buf_free(&t);
}

/* The processed output loads in the real profiler, every thread there. */
TEST(perfetto_stack_sample_in_profiler)
{
    const char *shared = t_shared();
    if (!shared || !t_node20()) {
        t_skip("%s: the profiler's validate is not run", shared ? "no Node.js 20"
                                                              : "../shared is absent");
        return;
    }
    pb_buf b = {0};
    trace(&b);
    pc_profile *p = convert_trace(&b, NULL, NULL);
    pb_buf_free(&b);
    if (!p)
        return;
    size_t threads = p->thread.n;
    jv *root = t_validate_profile(p, "stack_sample.json");
    pc_profile_free(p);
    const jv *r = root ? j_at(root, 0) : NULL;
    T_CHECK(r != NULL);
    if (r) {
        T_CHECK(j_get(r, "ok")->boolean);
        T_EQ_INT(j_len(j_get(r, "threads")), threads);
        /* The samples that name no task are not what the profile is
         * about: a process's thread is selected. */
        const jv *sel = j_get(j_get(r, "meta"), "selectedThreads");
        const jv *th = sel ? j_at(j_get(r, "threads"), (size_t)j_num(j_at(sel, 0))) : NULL;
        T_CHECK(th != NULL);
        if (th)
            T_CHECK(strcmp(j_get(th, "name")->str, "[no task]") != 0);
    }
    j_free(root);
}

/* A counter named as another of another unit is an event of its own. */
TEST(perfetto_stack_sample_unit_clash)
{
    pb_buf b = {0};
    pfe_ss_defaults(&b, SEQ, "python.wall", "wall-time", UNIT_NS);
    for (int k = 0; k < 2; k++) {
        ss_marks m = sample_open(&b, 1000 + (uint64_t)k);
        pfe_ss_task(&b, 1, 0, 5, 5);
        pfe_ss_inline(&b, py_names, NULL, NULL, 1);
        if (k)
            pfe_ss_counter(&b, 9, 0, "wall-time", UNIT_BYTES, 0);
        pb_uint(&b, 11, 10);
        sample_close(&b, m);
    }
    pc_options o;
    pc_options_init(&o);
    o.event = "wall-time (python.wall) [count]";
    pc_profile *p = convert_trace(&b, &o, NULL);
    pb_buf_free(&b);
    if (!p)
        return;
    T_EQ_INT(p->event.n, 2);
    T_EQ_INT(p->sample.n, 1);
    if (p->sample.n == 1) {
        T_EQ_INT(pc_sample_time(p, 0), 1001);
        T_EQ_INT(p->event.unit[pc_sample_event(p, 0)], PC_UNIT_COUNT);
    }
    pc_profile_free(p);
}
