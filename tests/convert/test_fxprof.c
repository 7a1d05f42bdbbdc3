/* What users see, through the real Firefox Profiler: every corpus input
 * (and a perf script text of our own) converted to the processed and Gecko
 * formats, then loaded by ../shared/fxprof/validate, which runs the
 * profiler's own import, upgraders, store and selectors and reports what
 * each thread shows.  The facts below are asserted from that report:
 * every file loads with something to show (or the input is refused as
 * holding nothing), no 1970 date, the thread selected first has samples,
 * the call tree holds every sample's weight, no thread has more CPU time
 * than the recording lasted, titles name the input, and, for known
 * recordings, the interval, the selected thread and the off-CPU colour.
 * Skipped with a message where ../shared or Node.js 20+ is missing. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "corpus.h"
#include "jsonmini.h"
#include "t.h"
#include "test_util.h"

enum { K_SIMPLEPERF, K_PERFETTO, K_PERFSCRIPT };

typedef struct fxcase {
    char name[160];
    char input[512];      /* a file, or "" for perf_text */
    int kind;
    int format;           /* PC_FORMAT_FIREFOX or PC_FORMAT_GECKO */
    int offcpu, heap_measure, percpu;
    int must_convert;     /* 1: has samples; 0: nothing to show; -1: either */
    size_t cpus;          /* CPUs the samples name (0: the input names none) */
    char out[600];
    int st;               /* conversion and write status */
    char err[1024];
    const jv *report;     /* validate's report on out */
} fxcase;

typedef struct cases {
    fxcase *v;
    size_t n, cap;
} cases;

/* A perf script text: two threads of one process, 250 µs cpu-clock. */
static const char perf_text[] =
    "app 200/200 [000] 10.000000: 250000 cpu-clock:\n"
    "\t    1000 main+0x0 (/usr/bin/app)\n\n"
    "app 200/201 [001] 10.000100: 250000 cpu-clock:\n"
    "\t    2000 work+0x0 (/usr/bin/app)\n\t    1000 main+0x0 (/usr/bin/app)\n\n"
    "app 200/201 [001] 10.000350: 250000 cpu-clock:\n"
    "\t    2010 work+0x10 (/usr/bin/app)\n\t    1000 main+0x0 (/usr/bin/app)\n\n"
    "app 200/201 [001] 10.000600: 250000 cpu-clock:\n"
    "\t    2000 work+0x0 (/usr/bin/app)\n\t    1000 main+0x0 (/usr/bin/app)\n\n"
    "app 200/200 [000] 10.000250: 250000 cpu-clock:\n"
    "\t    1000 main+0x0 (/usr/bin/app)\n\n";

static fxcase *add(cases *c, const char *name, const char *input, int kind, int format,
                   int must_convert)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 256;
        c->v = realloc(c->v, c->cap * sizeof *c->v);
    }
    fxcase *k = &c->v[c->n];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s (%s)", name,
             format == PC_FORMAT_GECKO ? "gecko" : "firefox");
    snprintf(k->input, sizeof k->input, "%s", input);
    k->kind = kind;
    k->format = format;
    k->must_convert = must_convert;
    snprintf(k->out, sizeof k->out, "%s/fx-%zu.json", t_tmpdir(), c->n);
    c->n++;
    return k;
}

static void add_both(cases *c, const char *name, const char *input, int kind, int must)
{
    add(c, name, input, kind, PC_FORMAT_FIREFOX, must);
    add(c, name, input, kind, PC_FORMAT_GECKO, must);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every .pb and .pftrace under dir, sorted. */
static void find_traces(const char *dir, char ***paths, size_t *n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d))) {
        char path[1024];
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0)
            continue;
        size_t len = strlen(path);
        if (S_ISDIR(st.st_mode)) {
            find_traces(path, paths, n);
        } else if ((len > 3 && strcmp(path + len - 3, ".pb") == 0) ||
                   (len > 8 && strcmp(path + len - 8, ".pftrace") == 0)) {
            *paths = realloc(*paths, (*n + 1) * sizeof **paths);
            (*paths)[(*n)++] = strdup(path);
        }
    }
    closedir(d);
}

static void collect(cases *c, const char *shared)
{
    corpus_row *rows;
    size_t n = corpus_manifest(&rows);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].col[M_KIND], "input") != 0)
            continue;
        add_both(c, corpus_base(&rows[i]), corpus_path(rows[i].col[M_FILE]), K_SIMPLEPERF,
                 atoll(rows[i].col[M_SAMPLES]) > 0);
    }
    corpus_free(rows, n);
    fxcase *k = add(c, "perf_with_trace_offcpu_v2 on-off-cpu",
                    corpus_path("inputs/perf_with_trace_offcpu_v2.callchain.trace"),
                    K_SIMPLEPERF, PC_FORMAT_FIREFOX, 1);
    k->offcpu = PC_OFFCPU_ON_OFF;

    char dir[600], **paths = NULL;
    size_t np = 0;
    snprintf(dir, sizeof dir, "%s/corpus/perfetto", shared);
    find_traces(dir, &paths, &np);
    qsort(paths, np, sizeof *paths, cmp_str);
    for (size_t i = 0; i < np; i++) {
        add_both(c, paths[i] + strlen(dir) + 1, paths[i], K_PERFETTO, -1);
        free(paths[i]);
    }
    free(paths);
    /* One track per CPU: no CPU can have run longer than the recording
     * (this trace's generator samples a little more often than its clock
     * allows, hence some slack; counting a counter's whole history again
     * doubles it). */
    char perf[700];
    snprintf(perf, sizeof perf, "%s/synthetic/scale/small_perf.pftrace", dir);
    k = add(c, "small_perf --percpu", perf, K_PERFETTO, PC_FORMAT_FIREFOX, 1);
    k->percpu = 1;
    char heap[700];
    snprintf(heap, sizeof heap, "%s/synthetic/scale/small_heap.pftrace", dir);
    k = add(c, "small_heap --heap allocated", heap, K_PERFETTO, PC_FORMAT_FIREFOX, 1);
    k->heap_measure = PC_HEAP_ALLOCATED;
    add_both(c, "perf script text", "", K_PERFSCRIPT, 1);
}

/* Converts and writes one case; records the status and message. */
static void run_case(fxcase *k)
{
    size_t len = 0;
    unsigned char *data = k->input[0] ? t_read_file(k->input, &len) : NULL;
    const void *bytes = k->input[0] ? (const void *)data : perf_text;
    if (!k->input[0])
        len = sizeof perf_text - 1;
    pc_options o;
    pc_options_init(&o);
    o.offcpu = k->offcpu;
    o.heap_measure = k->heap_measure;
    o.percpu = k->percpu;
    pc_profile *p = NULL;
    pc_error err = {0};
    if (!bytes) {
        k->st = -1;
        snprintf(k->err, sizeof k->err, "cannot read %s", k->input);
        return;
    }
    k->st = convert_bytes(bytes, len, &o, &p, &err);
    if (k->st == PC_OK) {
        uint8_t seen[PC_NO_CPU + 1] = {0};
        for (size_t i = 0; i < p->sample.n; i++)
            if (pc_sample_cpu(p, i) != PC_NO_CPU && !seen[pc_sample_cpu(p, i)]++)
                k->cpus++;
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = k->format;
        k->st = pc_write(p, k->out, &w, &err);
    }
    if (k->st != PC_OK)
        snprintf(k->err, sizeof k->err, "%s", err.message);
    pc_profile_free(p);
    free(data);
}

/* Runs validate on every written file; returns its parsed report. */
static jv *validate(const char *shared, cases *c)
{
    char report[600];
    snprintf(report, sizeof report, "%s/fx-report.json", t_tmpdir());
    size_t cap = 1024 + c->n * 620, used = 0;
    char *cmd = malloc(cap);
    used += (size_t)snprintf(cmd, cap, "%s/fxprof/validate --quiet --json %s", shared, report);
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].st == PC_OK)
            used += (size_t)snprintf(cmd + used, cap - used, " %s", c->v[i].out);
    snprintf(cmd + used, cap - used, " >/dev/null 2>&1");
    int rc = system(cmd);
    (void)rc;  /* 1 when a file fails to load: the report says which */
    free(cmd);
    size_t len;
    char msg[256];
    char *text = (char *)t_read_file(report, &len);
    jv *root = text ? j_parse(text, len, msg, sizeof msg) : NULL;
    free(text);
    for (size_t i = 0; root && i < j_len(root); i++) {
        const char *file = j_str(j_get(j_at(root, i), "file"));
        for (size_t k = 0; file && k < c->n; k++)
            if (strcmp(c->v[k].out, file) == 0)
                c->v[k].report = j_at(root, i);
    }
    return root;
}

static const jv *thread_at(const jv *r, size_t i)
{
    return j_at(j_get(r, "threads"), i);
}

/* Counter tracks of a processed file with a value other than zero. */
static size_t counter_tracks(const char *path)
{
    size_t len, n = 0;
    char msg[256];
    char *text = (char *)t_read_file(path, &len);
    jv *root = text ? j_parse(text, len, msg, sizeof msg) : NULL;
    const jv *cs = j_get(root, "counters");
    for (size_t i = 0; cs && i < j_len(cs); i++) {
        const jv *count = j_get(j_get(j_at(cs, i), "samples"), "count");
        int any = 0;
        for (size_t j = 0; count && j < j_len(count); j++)
            any |= j_num(j_at(count, j)) != 0;
        n += any;
    }
    j_free(root);
    free(text);
    return n;
}

/* The facts every loaded file must show. */
static void check_loaded(const fxcase *k)
{
    const jv *r = k->report, *meta = j_get(r, "meta");
    if (!r) {
        t_fail(__FILE__, __LINE__, "no report from the profiler on %s", k->out);
        return;
    }
    if (!j_get(r, "ok")->boolean) {
        t_fail(__FILE__, __LINE__, "the profiler refused it: %s", j_str(j_get(r, "error")));
        return;
    }
    /* No date from a boot-time clock: none at all, or a real one. */
    double start = j_num(j_get(meta, "startTime"));
    if (start != 0 && start < 946684800000.0)
        t_fail(__FILE__, __LINE__, "dated %s", j_str(j_get(meta, "startTimeISO")));
    const jv *range = j_get(meta, "rootRange");
    double span = j_num(j_get(range, "end")) - j_num(j_get(range, "start"));
    double interval = j_num(j_get(meta, "interval"));
    T_CHECK(interval > 0);
    int shows = 0;
    double time = 0;
    for (size_t i = 0; i < j_len(j_get(r, "threads")); i++) {
        const jv *t = thread_at(r, i);
        double samples = j_num(j_get(t, "samples")), weight = j_num(j_get(t, "weight"));
        double total = j_num(j_get(t, "callTreeRootTotal"));
        shows |= (samples > 0 && total != 0) || j_num(j_get(t, "nativeAllocations")) > 0;
        /* The call tree holds every sample the timeline spans. */
        if (samples > 0 && fabs(total - weight) > 1e-6 * fabs(weight) + 1e-3)
            t_fail(__FILE__, __LINE__, "thread %s: call tree total %g of weight %g",
                   j_str(j_get(t, "name")), total, weight);
        /* Without CPU numbers, a thread is on or off a CPU at a time, and
         * with --percpu a track is a CPU: its time fits in the recording. */
        if (strcmp(j_str(j_get(t, "weightType")), "tracing-ms") != 0)
            continue;
        time += weight;
        double slack = k->percpu ? 0.1 * span : 0;
        if ((!k->cpus || k->percpu) && weight > span + slack + 2 * interval)
            t_fail(__FILE__, __LINE__, "thread %s: %.3f ms of time in a %.3f ms recording",
                   j_str(j_get(t, "name")), weight, span);
    }
    /* CPU time fits in the recording's duration on its CPUs; but for the
     * StackSample diff tests' trace, whose samples weigh milliseconds a
     * microsecond apart: a weight is the producer's word. */
    if (k->cpus && !k->percpu && !strstr(k->input, "stack_sample") &&
        time > (span + 2 * interval) * (double)k->cpus)
        t_fail(__FILE__, __LINE__, "%.3f ms of CPU time in a %.3f ms recording on %zu CPUs",
               time, span, k->cpus);
    /* Counting without callstacks shows as counter tracks, of the
     * process whose track is selected: for a profile with no samples. */
    int sampled = 0;
    for (size_t i = 0; i < j_len(j_get(r, "threads")); i++)
        sampled |= j_num(j_get(thread_at(r, i), "samples")) > 0;
    int counted = !sampled && k->format == PC_FORMAT_FIREFOX && counter_tracks(k->out) > 0 &&
                  j_num(j_get(meta, "localTracks")) > j_num(j_get(meta, "hiddenLocalTracks"));
    /* Traced slices alone show in the marker chart of their thread. */
    const jv *sel = j_get(meta, "selectedThreads");
    T_EQ_INT(j_len(sel), 1);
    const jv *st = thread_at(r, (size_t)j_int(j_at(sel, 0)));
    int marked = !sampled && j_num(j_get(st, "markers")) > 0;
    T_CHECK(shows || counted || marked);
    /* The thread shown first has something to show. */
    T_CHECK(j_num(j_get(st, "samples")) > 0 || j_num(j_get(st, "nativeAllocations")) > 0 ||
            counted || marked);
    /* The title names the input, and only it. */
    const char *product = j_str(j_get(meta, "product"));
    static const char *const source[] = {"(simpleperf", "(Perfetto", "(perf script"};
    T_CONTAINS(product, source[k->kind]);
    if (k->kind != K_SIMPLEPERF)
        T_CHECK(!strstr(product, "simpleperf"));
}

/* What our own processed file says besides: no Firefox build banner, no
 * symbolication that cannot work. */
static void check_processed_meta(const fxcase *k)
{
    size_t len;
    char msg[256];
    char *text = (char *)t_read_file(k->out, &len);
    jv *root = text ? j_parse(text, len, msg, sizeof msg) : NULL;
    const jv *meta = j_get(root, "meta");
    T_CHECK(meta && !j_get(meta, "debug"));
    const jv *ns = j_get(meta, "symbolicationNotSupported");
    T_CHECK(ns && ns->boolean);
    j_free(root);
    free(text);
}

static const fxcase *find(const cases *c, const char *name, int format)
{
    char want[200];
    snprintf(want, sizeof want, "%s (%s)", name, format == PC_FORMAT_GECKO ? "gecko" : "firefox");
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i].name, want) == 0)
            return c->v[i].report ? &c->v[i] : NULL;
    return NULL;
}

static const jv *thread_named(const jv *r, const char *name)
{
    for (size_t i = 0; i < j_len(j_get(r, "threads")); i++)
        if (strcmp(j_str(j_get(thread_at(r, i), "name")), name) == 0)
            return thread_at(r, i);
    return NULL;
}

static double category_pct(const jv *thread, const char *name, const char **color)
{
    const jv *cats = j_get(thread, "categories");
    for (size_t i = 0; i < j_len(cats); i++)
        if (strcmp(j_str(j_get(j_at(cats, i), "name")), name) == 0) {
            if (color)
                *color = j_str(j_get(j_at(cats, i), "color"));
            return j_num(j_get(j_at(cats, i), "pct"));
        }
    return 0;
}

static const char *selected_name(const jv *r)
{
    const jv *sel = j_get(j_get(r, "meta"), "selectedThreads");
    return j_str(j_get(thread_at(r, (size_t)j_int(j_at(sel, 0))), "name"));
}

/* Facts of known recordings. */
static void check_known(const cases *c, const char *shared)
{
    const fxcase *k;
    t_case("fxprof: an Android Studio-style off-CPU capture");
    if ((k = find(c, "perf_with_trace_offcpu_v2.callchain.trace", PC_FORMAT_FIREFOX))) {
        const jv *r = k->report;
        /* The app's main thread, not the thread that slept most. */
        T_EQ_STR(selected_name(r), "com.google.samples.apps.sunflower");
        /* 4000 Hz cpu-clock: 250 µs, not the median gap between samples. */
        T_EQ_STR(j_num_text(j_get(j_get(r, "meta"), "interval")), "0.25");
        /* Waiting is Idle (left out of the activity graph), not Kernel:
         * there are no kernel symbols in such a capture. */
        const jv *main = thread_named(r, "com.google.samples.apps.sunflower");
        const char *color = NULL;
        T_CHECK(category_pct(main, "Idle", &color) > 50);
        T_EQ_STR(color, "transparent");
        T_CHECK(category_pct(main, "Kernel", NULL) == 0);
    }
    t_case("fxprof: on-off-cpu selects an on-CPU track");
    if ((k = find(c, "perf_with_trace_offcpu_v2 on-off-cpu", PC_FORMAT_FIREFOX)))
        T_CHECK(!strstr(selected_name(k->report), "(off-CPU)"));
    t_case("fxprof: a cpu-clock capture's interval");
    if ((k = find(c, "perf_display_bitmaps.callchain.trace", PC_FORMAT_FIREFOX)))
        T_EQ_STR(j_num_text(j_get(j_get(k->report, "meta"), "interval")), "0.25");
    t_case("fxprof: a Perfetto CPU profile");
    if ((k = find(c, "synthetic/scale/small_perf.pftrace", PC_FORMAT_FIREFOX))) {
        const char *product = j_str(j_get(j_get(k->report, "meta"), "product"));
        T_EQ_STR(product, "com.example.game and 1 other process (Perfetto: cpu-clock)");
        T_EQ_STR(j_num_text(j_get(j_get(k->report, "meta"), "interval")), "10");
    }
    /* Heap tracks: over the whole recording the call tree shows the last
     * dump's unreleased bytes; the recording is 3 s long, not 1 ms. */
    t_case("fxprof: a Perfetto heap profile");
    char exp[700];
    snprintf(exp, sizeof exp, "%s/corpus/perfetto/synthetic/scale/small_heap.pftrace.expected.json",
             shared);
    size_t len;
    char msg[256];
    char *text = (char *)t_read_file(exp, &len);
    jv *want = text ? j_parse(text, len, msg, sizeof msg) : NULL;
    if ((k = find(c, "synthetic/scale/small_heap.pftrace", PC_FORMAT_FIREFOX)) && want) {
        const jv *r = k->report, *dumps = j_get(want, "dumps");
        const jv *range = j_get(j_get(r, "meta"), "rootRange");
        T_CHECK(j_num(j_get(range, "end")) - j_num(j_get(range, "start")) > 3000);
        T_CONTAINS(j_str(j_get(j_get(r, "meta"), "product")), "(Perfetto: heap, unreleased bytes)");
        size_t checked = 0;
        for (size_t i = 0; i < j_len(j_get(r, "threads")); i++) {
            const jv *t = thread_at(r, i);
            T_EQ_STR(j_str(j_get(t, "weightType")), "bytes");
            /* The last dump of the thread's process. */
            long long unreleased = -1;
            for (size_t d = 0; d < j_len(dumps); d++)
                if (j_int(j_get(j_at(dumps, d), "pid")) == atoll(j_str(j_get(t, "pid"))))
                    unreleased = j_int(j_get(j_at(dumps, d), "unreleased_bytes"));
            T_EQ_INT((long long)j_num(j_get(t, "callTreeRootTotal")), unreleased);
            checked++;
        }
        T_EQ_INT(checked, 2);
    }
    j_free(want);
    free(text);
    t_case("fxprof: perf script text");
    if ((k = find(c, "perf script text", PC_FORMAT_FIREFOX))) {
        T_EQ_STR(j_str(j_get(j_get(k->report, "meta"), "product")),
                 "app (perf script: cpu-clock)");
        T_EQ_STR(j_num_text(j_get(j_get(k->report, "meta"), "interval")), "0.25");
        T_EQ_STR(selected_name(k->report), "app");
    }
}

TEST_SLOW(fxprof_what_users_see)
{
    const char *shared = t_shared();
    char validate_path[600];
    if (!shared) {
        t_skip("../shared not found: the Firefox Profiler checks are skipped");
        return;
    }
    snprintf(validate_path, sizeof validate_path, "%s/fxprof/validate.cjs", shared);
    struct stat st;
    if (stat(validate_path, &st) != 0) {
        t_skip("../shared/fxprof not found: the Firefox Profiler checks are skipped");
        return;
    }
    if (!t_node20()) {
        t_skip("Node.js 20 or newer not found: the Firefox Profiler checks are skipped");
        return;
    }
    cases c = {0};
    collect(&c, shared);
    for (size_t i = 0; i < c.n; i++)
        run_case(&c.v[i]);
    jv *report = validate(shared, &c);
    if (!report)
        t_fail(__FILE__, __LINE__, "validate gave no report");
    size_t loaded = 0, refused = 0;
    for (size_t i = 0; report && i < c.n; i++) {
        fxcase *k = &c.v[i];
        t_case("fxprof: %s", k->name);
        if (k->st == PC_OK) {
            loaded++;
            T_CHECK(k->must_convert != 0);
            check_loaded(k);
            if (k->format == PC_FORMAT_FIREFOX)
                check_processed_meta(k);
        } else if (k->st == PC_EUSAGE && k->format == PC_FORMAT_GECKO) {
            /* A heap profile or counters alone: refused, not written
             * without them. */
            if (!strstr(k->err, "the Gecko format has no place for counters, and this "
                                "profile holds nothing else"))
                T_CONTAINS(k->err, "the Gecko format has no place for heap profiles");
        } else {
            /* Nothing to show: refused, saying what the input holds. */
            refused++;
            T_EQ_INT(k->st, PC_EINPUT);
            T_CHECK(k->must_convert != 1);
            T_CONTAINS(k->err, ": nothing to show: ");
        }
    }
    printf("  note fxprof: %zu files loaded in the Firefox Profiler, %zu inputs refused as "
           "holding nothing to show\n", loaded, refused);
    if (report)
        check_known(&c, shared);
    j_free(report);
    free(c.v);
}
