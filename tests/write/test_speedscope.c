/* speedscope output: valid against the JSON schema speedscope publishes
 * (fetched by tests/tools/get-speedscope-schema.sh), and right about what
 * the schema cannot see (speedscope_valid.c): one profile per thread with
 * the model's samples, stacks root first, frame indexes in range, the
 * folded writer's sums; heap profiles; and the command line.  The schema
 * validator itself is tested in support/test_jschema.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "fixtures.h"
#include "folded_text.h"
#include "jsonmini.h"
#include "pf_encode.h"
#include "speedscope_valid.h"
#include "t.h"
#include "test_util.h"

/* Threads with samples, in output order. */
static size_t sampled_threads(const pc_profile *p, uint32_t *out)
{
    uint32_t *order = malloc((p->thread.n + 1) * sizeof *order);
    size_t n = 0;
    pc_thread_order(p, order, NULL);
    for (size_t k = 0; k < p->thread.n; k++)
        if (thread_samples(p, order[k]))
            out[n++] = order[k];
    free(order);
    return n;
}

TEST(speedscope_fixture)
{
    jv *schema = speedscope_schema_or_skip();
    if (!schema)
        return;
    pc_profile *p = convert_fixture(NULL);
    jv *doc = p ? speedscope_check_profile(schema, p) : NULL;
    if (doc) {
        const jv *profs = speedscope_profiles(doc);
        /* One profile per thread with samples, in output order, each
         * with that thread's samples. */
        uint32_t th[16];
        size_t nth = sampled_threads(p, th);
        T_EQ_INT(nth, 4);
        T_EQ_INT(j_len(profs), nth);
        char *prefix[16];
        for (size_t k = 0; k < nth && k < j_len(profs); k++) {
            T_EQ_INT(j_len(j_get(j_at(profs, k), "samples")), thread_samples(p, th[k]));
            char buf[64];
            snprintf(buf, sizeof buf, "thread %lld", (long long)p->thread.tid[th[k]]);
            prefix[k] = strdup(p->thread.name[th[k]] != PC_NONE
                                   ? pc_str(&p->str, p->thread.name[th[k]]) : buf);
        }
        static const char *const names[] = {
            "com.example (tid 1000) - com.example (pid 1000)",
            "RenderThread (tid 1001) - com.example (pid 1000)",
            /* No Thread record: a process of its own, named by the reader. */
            "thread 1002 (tid 1002) - thread 1002 (pid 1002)",
            "glibc_prog (tid 2000) - glibc_prog (pid 2000)",
        };
        static const long long totals[] = {3000000, 14, 5, 1998};
        for (size_t k = 0; k < 4 && k < j_len(profs); k++) {
            const jv *pr = j_at(profs, k);
            T_EQ_STR(j_str(j_get(pr, "name")), names[k]);
            /* cpu-cycles is no clock: its periods, from 0 to their sum. */
            T_EQ_STR(j_str(j_get(pr, "unit")), "none");
            T_EQ_INT(speedscope_total(pr), totals[k]);
            T_EQ_INT(j_int(j_get(pr, "startValue")), 0);
            T_EQ_INT(j_int(j_get(pr, "endValue")), totals[k]);
        }
        T_EQ_INT(j_int(j_get(doc, "activeProfileIndex")), 0);
        T_EQ_STR(j_str(j_get(doc, "name")), "com.example (simpleperf: cpu-cycles)");
        /* Per thread, the folded writer's stacks and weights. */
        if (j_len(profs) == nth) {
            size_t m;
            char *folded = folded_written(p, PC_FOLDED_THREAD, &m);
            char *want = folded ? sum_folded(folded) : NULL, *got = speedscope_folded(doc, prefix);
            T_EQ_STR(got, want);
            free(folded);
            free(want);
            free(got);
        }
        for (size_t k = 0; k < nth && k < j_len(profs); k++)
            free(prefix[k]);
        /* Root first: RenderThread's stack starts at __start_thread. */
        char *s = speedscope_stack_names(doc, j_at(j_get(j_at(profs, 1), "samples"), 0));
        T_EQ_STR(s, "__start_thread;android::RenderThread::threadLoop();draw;do_syscall_64;"
                    "__schedule");
        free(s);
        /* A frame per function used, with its library as the file. */
        const jv *frames = j_get(j_get(doc, "shared"), "frames");
        int found = 0;
        for (size_t f = 0; f < j_len(frames); f++)
            if (strcmp(j_str(j_get(j_at(frames, f), "name")), "malloc") == 0) {
                found++;
                T_EQ_STR(j_str(j_get(j_at(frames, f), "file")),
                         "/apex/com.android.runtime/lib64/bionic/libc.so");
            }
        T_EQ_INT(found, 1);
        uint8_t *used = calloc(p->func.n + 1, 1);
        size_t funcs = 0;
        for (size_t i = 0; i < p->sample.n; i++)
            for (uint32_t st = p->sample.stack[i]; st != PC_NONE; st = p->stack.prefix[st]) {
                uint32_t fn = p->frame.func[p->stack.frame[st]];
                funcs += !used[fn];
                used[fn] = 1;
            }
        T_EQ_INT(j_len(frames), funcs);
        free(used);
    }
    /* Same profile, same bytes. */
    if (p) {
        size_t n1, n2;
        char *a = speedscope_of(p, &n1), *b = speedscope_of(p, &n2);
        T_CHECK(a && b && n1 == n2 && memcmp(a, b, n1) == 0);
        free(a);
        free(b);
    }
    j_free(doc);
    pc_profile_free(p);
    j_free(schema);
}

/* A clock event: durations in ns, placed from the recording's start. */
TEST(speedscope_fixture_clock)
{
    jv *schema = speedscope_schema_or_skip();
    if (!schema)
        return;
    pc_options o;
    pc_options_init(&o);
    o.event = "cpu-clock";
    pc_profile *p = convert_fixture(&o);
    jv *doc = p ? speedscope_check_profile(schema, p) : NULL;
    if (doc) {
        const jv *profs = speedscope_profiles(doc);
        T_EQ_INT(j_len(profs), 1);
        const jv *pr = j_at(profs, 0);
        T_EQ_STR(j_str(j_get(pr, "unit")), "nanoseconds");
        T_EQ_INT(speedscope_total(pr), 250000);
        /* The recording starts with its first event of any kind, not the
         * first one --event keeps. */
        long long start = (long long)(pc_sample_time(p, 0) - p->meta.first_time);
        T_CHECK(p->meta.first_time < pc_sample_time(p, 0));
        T_EQ_INT(j_int(j_get(pr, "startValue")), start);
        T_EQ_INT(j_int(j_get(pr, "endValue")), start + 250000);
        char *s = speedscope_stack_names(doc, j_at(j_get(pr, "samples"), 0));
        T_EQ_STR(s, "__libc_init;android.os.Looper.loop;com.example.Foo.bar;malloc");
        free(s);
    }
    j_free(doc);
    pc_profile_free(p);
    j_free(schema);
}

/* Converts a corpus file given by its path under ../shared/corpus. */
static pc_profile *convert_shared(const char *rel, const pc_options *o)
{
    char path[512];
    size_t n;
    pc_profile *p = NULL;
    pc_error err;
    snprintf(path, sizeof path, "%s/corpus/%s", t_shared(), rel);
    unsigned char *data = t_read_file(path, &n);
    if (!data || convert_bytes(data, n, o, &p, &err) != PC_OK)
        t_fail(__FILE__, __LINE__, "cannot convert %s: %s", path, data ? err.message : "unreadable");
    free(data);
    return p;
}

TEST(speedscope_corpus)
{
    static const char *const files[] = {
        "simpleperf/inputs/perf_with_jit_symbol.callchain.gaps0.trace",
        "simpleperf/inputs/two_process_perf.callchain.trace",
        "simpleperf/inputs/perf_with_two_event_types.callchain.trace",
        "simpleperf/inputs/perf_with_long_callchain.callchain.trace",
        "simpleperf/inputs/perf_with_trace_offcpu_v2.callchain.trace",
        "simpleperf/inputs/perf_display_bitmaps.callchain.trace",
        "simpleperf/inputs/perf_with_interpreter_frames.callchain.trace",
        "perfetto/synthetic/scale/small_perf.pftrace",
        "perfetto/synthetic/scale/small_chrome.pftrace",
        "perfetto/synthetic/scale/small_heap.pftrace",
    };
    jv *schema = NULL;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        t_case("speedscope_corpus %s", strrchr(files[i], '/') + 1);
        if (!t_shared()) {
            t_skip("../shared is absent: corpus files are not converted to speedscope");
            continue;
        }
        if (!schema && !(schema = speedscope_schema_or_skip()))
            continue;
        pc_profile *p = convert_shared(files[i], NULL);
        jv *doc = p ? speedscope_check_profile(schema, p) : NULL;
        if (doc && p->sample.n) {
            /* Every sample once: the profiles of a thread hold its samples. */
            size_t total = 0;
            for (size_t k = 0; k < j_len(speedscope_profiles(doc)); k++)
                total += j_len(j_get(j_at(speedscope_profiles(doc), k), "samples"));
            T_EQ_INT(total, p->sample.n);
        }
        j_free(doc);
        pc_profile_free(p);
    }
    j_free(schema);
}

/* --trace-offcpu on-off-cpu keeps two event types: a profile per thread
 * and event, named after the event; the mixed default, one per thread. */
TEST(speedscope_offcpu_events)
{
    if (!t_shared()) {
        t_skip("../shared is absent: the off-CPU recording is not converted");
        return;
    }
    jv *schema = speedscope_schema_or_skip();
    if (!schema)
        return;
    static const char *const rel = "simpleperf/inputs/perf_with_trace_offcpu_v2.callchain.trace";
    for (int mode = 0; mode < 2; mode++) {
        t_case("speedscope_offcpu_events %s", mode ? "on-off-cpu" : "mixed");
        pc_options o;
        pc_options_init(&o);
        o.offcpu = mode ? PC_OFFCPU_ON_OFF : PC_OFFCPU_MIXED;
        pc_profile *p = convert_shared(rel, &o);
        jv *doc = p ? speedscope_check_profile(schema, p) : NULL;
        if (doc) {
            const jv *profs = speedscope_profiles(doc);
            uint32_t *th = malloc((p->thread.n + 1) * sizeof *th);
            size_t nth = sampled_threads(p, th);
            size_t off = 0, on = 0;
            for (size_t k = 0; k < j_len(profs); k++) {
                const char *name = j_str(j_get(j_at(profs, k), "name"));
                T_EQ_STR(j_str(j_get(j_at(profs, k), "unit")), "nanoseconds");
                /* The events are cpu-clock:u and sched:sched_switch. */
                const char *ev = strstr(name, ") - ");
                ev = ev ? strstr(ev + 4, " - ") : NULL;
                off += ev && strcmp(ev, " - sched:sched_switch") == 0;
                on += ev && strncmp(ev, " - cpu-clock", 12) == 0;
            }
            if (mode) {
                T_CHECK(off > 0 && on > 0);
                T_EQ_INT(off + on, j_len(profs));
                T_CHECK(j_len(profs) > nth);
            } else {
                T_EQ_INT(off + on, 0);
                T_EQ_INT(j_len(profs), nth);
            }
            free(th);
        }
        j_free(doc);
        pc_profile_free(p);
    }
    j_free(schema);
}

/* ---- A heapprofd trace of two processes ---- */

enum { BOOTTIME = 6, MONOTONIC = 3, MONO_COARSE = 4 };

static void heap_dump(pb_buf *b, uint64_t pid, const uint64_t (*rows)[3], size_t n)
{
    size_t hd = pb_begin(b, 5);
    pb_uint(b, 1, pid);
    pb_uint(b, 9, 2000000);
    pb_string(b, 11, "libc.malloc");
    for (size_t i = 0; i < n; i++) {
        size_t s = pb_begin(b, 2);
        pb_uint(b, 1, rows[i][0]);
        pb_uint(b, 2, rows[i][1]);
        pb_uint(b, 3, rows[i][2]);
        pb_uint(b, 5, rows[i][1] / 100);
        pb_uint(b, 6, rows[i][2] / 100);
        pb_end(b, s);
    }
    pb_end(b, hd);
}

/* Process 100 "com.example.app": main;malloc 1000 allocated, 400 freed;
 * main;decode;malloc 300; main 50 allocated and freed.  Process 200
 * (surfaceflinger): main;malloc 5000.  One dump at 2 ms. */
static void heap_trace(pb_buf *b)
{
    uint32_t ids[] = {BOOTTIME, MONOTONIC, MONO_COARSE};
    uint64_t ts[] = {1000000000, 0, 0};
    pfe_clock_snapshot(b, ids, ts, 3);
    static const char *const app[] = {"com.example.app"};
    static const char *const sf[] = {"/system/bin/surfaceflinger"};
    size_t pk = pfe_packet(b, 0);
    size_t pt = pb_begin(b, 2);
    pfe_process(b, 100, app, 1);
    pfe_process(b, 200, sf, 1);
    pfe_thread(b, 100, 100, "example.app");
    pb_end(b, pt);
    pb_end(b, pk);
    pk = pfe_packet(b, 9);
    pb_uint(b, PFE_CLEARED, 1);
    pfe_heap_callstacks(b);
    size_t pp = pb_begin(b, 37);
    pb_uint(b, 7, 0);
    static const uint64_t app_rows[][3] = {{1, 1000, 400}, {2, 300, 0}, {3, 50, 50}};
    static const uint64_t sf_rows[][3] = {{1, 5000, 0}};
    heap_dump(b, 100, app_rows, 3);
    heap_dump(b, 200, sf_rows, 1);
    pb_end(b, pp);
    pb_end(b, pk);
}

TEST(speedscope_heap)
{
    jv *schema = speedscope_schema_or_skip();
    if (!schema)
        return;
    pb_buf b = {0};
    heap_trace(&b);
    static const struct {
        int measure;
        const char *app_name, *app_weights;
    } cases[] = {
        {PC_HEAP_UNRELEASED, "com.example.app (pid 100) - libc.malloc (unreleased bytes)",
         "600,300"},
        {PC_HEAP_ALLOCATED, "com.example.app (pid 100) - libc.malloc (allocated bytes)",
         "1000,300,50"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        t_case("speedscope_heap measure %d", cases[c].measure);
        pc_options o;
        pc_options_init(&o);
        o.heap_measure = cases[c].measure;
        pc_profile *p = NULL;
        pc_error err;
        if (b.oom || convert_bytes(b.data, b.len, &o, &p, &err) != PC_OK) {
            t_fail(__FILE__, __LINE__, "heap fixture conversion failed: %s",
                   b.oom ? "out of memory" : err.message);
            continue;
        }
        T_EQ_INT(p->sample.n, 0);
        jv *doc = speedscope_check_profile(schema, p);
        if (doc) {
            const jv *profs = speedscope_profiles(doc);
            T_EQ_INT(j_len(profs), 2);
            const jv *app = j_at(profs, 0), *sf = j_at(profs, 1);
            T_EQ_STR(j_str(j_get(app, "name")), cases[c].app_name);
            T_EQ_STR(j_str(j_get(app, "unit")), "bytes");
            T_EQ_STR(j_str(j_get(sf, "unit")), "bytes");
            char w[64] = "";
            const jv *ws = j_get(app, "weights");
            for (size_t i = 0; i < j_len(ws); i++)
                snprintf(w + strlen(w), sizeof w - strlen(w), "%s%lld", i ? "," : "",
                         j_int(j_at(ws, i)));
            T_EQ_STR(w, cases[c].app_weights);
            char *s = speedscope_stack_names(doc, j_at(j_get(app, "samples"), 1));
            T_EQ_STR(s, "main;decode;malloc");
            free(s);
            T_EQ_INT(j_int(j_get(app, "startValue")), 0);
            T_EQ_INT(j_int(j_get(app, "endValue")), speedscope_total(app));
            /* surfaceflinger's 5000 bytes outweigh the app's. */
            T_EQ_INT(speedscope_total(sf), 5000);
            T_EQ_INT(j_int(j_get(doc, "activeProfileIndex")), 1);
            T_CONTAINS(j_str(j_get(sf, "name")), "(pid 200) - libc.malloc");
        }
        j_free(doc);
        pc_profile_free(p);
    }
    pb_buf_free(&b);
    j_free(schema);
}

/* ---- The command line ---- */

static int run_cli(const char *args, const char *out_file)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s >%s 2>%s/speedscope.stderr", t_profconv(), args, out_file,
             t_tmpdir());
    int ws = system(cmd);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

TEST(speedscope_cli)
{
    jv *schema = speedscope_schema_or_skip();
    if (!schema)
        return;
    const char *dir = t_tmpdir();
    char in[600], a[600], b[600], c[600], out[600], args[4096];
    snprintf(in, sizeof in, "%s/ss_fixture.trace", dir);
    snprintf(a, sizeof a, "%s/ss_a.speedscope.json", dir);
    snprintf(b, sizeof b, "%s/ss_b.out", dir);
    snprintf(c, sizeof c, "%s/ss_c.speedscope.json.gz", dir);
    snprintf(out, sizeof out, "%s/ss.stdout", dir);
    spe e;
    fx_android(&e);
    FILE *f = fopen(in, "wb");
    T_CHECK(f != NULL);
    if (f) {
        fwrite(e.out.data, 1, e.out.len, f);
        fclose(f);
    }
    spe_free(&e);
    /* The name says speedscope. */
    snprintf(args, sizeof args, "-q %s -o %s", in, a);
    T_EQ_INT(run_cli(args, "/dev/null"), 0);
    size_t na = 0, nb = 0, nc = 0, nout = 0;
    char *ta = (char *)t_read_file(a, &na);
    T_CHECK(ta && strncmp(ta, "{\"$schema\":\"https://www.speedscope.app/", 39) == 0);
    jv *doc = ta ? speedscope_check_doc(schema, ta, na) : NULL;
    T_CHECK(doc && j_len(speedscope_profiles(doc)) == 4);
    j_free(doc);
    /* --to says it whatever the name; to standard output too. */
    snprintf(args, sizeof args, "-q --to speedscope %s -o %s", in, b);
    T_EQ_INT(run_cli(args, "/dev/null"), 0);
    char *tb = (char *)t_read_file(b, &nb);
    T_CHECK(ta && tb && na == nb && memcmp(ta, tb, na) == 0);
    snprintf(args, sizeof args, "-q -t speedscope %s -o -", in);
    T_EQ_INT(run_cli(args, out), 0);
    char *tout = (char *)t_read_file(out, &nout);
    T_CHECK(ta && tout && na == nout && memcmp(ta, tout, na) == 0);
    /* .speedscope.json.gz: gzipped speedscope. */
    snprintf(args, sizeof args, "-q %s -o %s", in, c);
    T_EQ_INT(run_cli(args, "/dev/null"), 0);
    FILE *gz = fopen(c, "rb");
    unsigned char magic[2] = {0, 0};
    if (gz) {
        T_EQ_INT(fread(magic, 1, 2, gz), 2);
        fclose(gz);
    }
    T_CHECK(magic[0] == 0x1f && magic[1] == 0x8b);
    char *tc = (char *)t_read_file(c, &nc);
    T_CHECK(ta && tc && na == nc && memcmp(ta, tc, na) == 0);
    free(ta);
    free(tb);
    free(tc);
    free(tout);
    j_free(schema);
}
