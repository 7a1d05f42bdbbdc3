/* The processed Firefox format: the validator itself, the fixture's output
 * value by value, weights, off-CPU time, and agreement with the Gecko
 * output and the model on every corpus input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "corpus.h"
#include "fixtures.h"
#include "gecko_valid.h"
#include "hand_profile.h"
#include "jsonmini.h"
#include "processed_valid.h"
#include "t.h"
#include "test_util.h"

/* Writes p in format and returns the parsed output after checking it. */
static jv *written(const pc_profile *p, int format)
{
    pc_write_options w;
    pc_error err;
    unsigned char *text;
    size_t len;
    char msg[1024];
    pc_write_options_init(&w);
    w.format = format;
    if (pc_write_memory(p, &w, &text, &len, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "write failed: %s", err.message);
        return NULL;
    }
    jv *root = j_parse((const char *)text, len, msg, sizeof msg);
    free(text);
    if (!root) {
        t_fail(__FILE__, __LINE__, "not JSON: %s", msg);
        return NULL;
    }
    int problems = format == PC_FORMAT_FIREFOX ? processed_check(root, msg, sizeof msg)
                                               : gecko_check(root, msg, sizeof msg);
    if (problems)
        t_fail(__FILE__, __LINE__, "invalid %s output: %s",
               format == PC_FORMAT_FIREFOX ? "processed" : "Gecko", msg);
    return root;
}

static const char *string_at(const jv *root, const jv *index)
{
    return j_str(j_at(j_get(j_get(root, "shared"), "stringArray"), (size_t)j_int(index)));
}

/* Sum of a thread's sample weights in ns (tracing-ms), or its count. */
static long long weight_ns(const jv *thread)
{
    const jv *s = j_get(thread, "samples"), *w = j_get(s, "weight");
    if (!w || w->type == J_NULL)
        return j_int(j_get(s, "length"));
    long long ns = 0;
    for (size_t i = 0; i < j_len(w); i++)
        ns += (long long)(j_num(j_at(w, i)) * 1e6 + 0.5);
    return ns;
}

TEST(processed_fixture)
{
    pc_profile *p = convert_fixture(NULL);
    jv *root = p ? written(p, PC_FORMAT_FIREFOX) : NULL;
    pc_profile_free(p);
    if (!root)
        return;
    const jv *meta = j_get(root, "meta");
    T_EQ_INT(j_int(j_get(meta, "preprocessedProfileVersion")), 70);
    T_EQ_STR(j_str(j_get(meta, "product")), "com.example (simpleperf: cpu-cycles)");
    /* No wall clock: no date (not one in 1970); the timeline spans the
     * recording (5 ms) and its last sample's interval. */
    T_EQ_STR(j_num_text(j_get(meta, "startTime")), "0");
    T_EQ_STR(j_num_text(j_get(meta, "profilingStartTime")), "0");
    T_EQ_STR(j_num_text(j_get(meta, "profilingEndTime")), "6");
    T_EQ_STR(j_str(j_get(meta, "importedFrom")), "simpleperf");
    /* No Firefox build-type banner, no symbolication button that fails. */
    T_CHECK(!j_get(meta, "debug"));
    T_CHECK(j_get(meta, "symbolicationNotSupported") &&
            j_get(meta, "symbolicationNotSupported")->boolean);
    /* The recording's details, for the profile information panel. */
    const jv *entries = j_get(j_at(j_get(meta, "extra"), 0), "entries");
    char seen[512] = "";
    for (size_t i = 0; i < j_len(entries); i++) {
        const jv *e = j_at(entries, i), *v = j_get(e, "value");
        size_t used = strlen(seen);
        if (j_str(v))
            snprintf(seen + used, sizeof seen - used, "%s=%s;", j_str(j_get(e, "label")), j_str(v));
        else
            snprintf(seen + used, sizeof seen - used, "%s=%lld;", j_str(j_get(e, "label")), j_int(v));
    }
    T_EQ_STR(seen, "Recorded with=simpleperf;App=com.example;App type=debuggable;"
                   "Android SDK=33;Build type=userdebug;Event shown=cpu-cycles;"
                   "Samples shown=8;Samples recorded=12;Samples lost while recording=2;");

    /* Threads in process order, main thread first, busiest next. */
    const jv *threads = j_get(root, "threads");
    static const long long tids[] = {1000, 1001, 1003, 1002, 2000};
    T_EQ_INT(j_len(threads), 5);
    for (size_t i = 0; i < 5 && i < j_len(threads); i++)
        T_EQ_INT(j_int(j_get(j_at(threads, i), "tid")), tids[i]);
    const jv *main = j_at(threads, 0), *render = j_at(threads, 1), *idle = j_at(threads, 2);
    T_EQ_STR(j_str(j_get(main, "pid")), "1000");
    T_CHECK(j_get(main, "isMainThread")->boolean && !j_get(render, "isMainThread")->boolean);
    T_EQ_STR(j_str(j_get(render, "processName")), "com.example");
    /* Activity spans: RenderThread from its first sample (1.2 ms) to its
     * last marker (the On-CPU interval ends at 5 ms); its process starts
     * with the main thread at 0. */
    T_EQ_STR(j_num_text(j_get(render, "registerTime")), "1.2");
    T_EQ_STR(j_num_text(j_get(render, "unregisterTime")), "5");
    T_EQ_STR(j_num_text(j_get(render, "processStartupTime")), "0");
    T_CHECK(j_get(idle, "unregisterTime")->type == J_NULL);
    /* cpu-cycles counts events, not time: plain sample counts. */
    const jv *s = j_get(main, "samples");
    T_EQ_STR(j_str(j_get(s, "weightType")), "samples");
    T_CHECK(j_get(s, "weight")->type == J_NULL);
    const jv *d = j_get(s, "timeDeltas");
    T_EQ_INT(j_len(d), 3);
    T_EQ_STR(j_num_text(j_at(d, 0)), "0");
    T_EQ_STR(j_num_text(j_at(d, 1)), "1");
    T_EQ_STR(j_num_text(j_at(d, 2)), "3");
    /* Only threads with samples are shown at first; the busiest is
     * selected. */
    const jv *visible = j_get(meta, "initialVisibleThreads");
    T_EQ_INT(j_len(visible), 4);
    T_EQ_INT(j_int(j_at(j_get(meta, "initialSelectedThreads"), 0)), 0);

    /* Markers: names in the shared strings, schema fields. */
    const jv *m = j_get(render, "markers");
    T_EQ_INT(j_int(j_get(m, "length")), 2);
    T_EQ_STR(string_at(root, j_at(j_get(m, "name"), 0)), "Off-CPU");
    T_EQ_STR(j_num_text(j_at(j_get(m, "startTime"), 0)), "2.3");
    T_EQ_STR(j_num_text(j_at(j_get(m, "endTime"), 0)), "4");
    const jv *schema = j_get(meta, "markerSchema");
    int unwind_fields = 0;
    for (size_t i = 0; i < j_len(schema); i++)
        if (strcmp(j_str(j_get(j_at(schema, i), "name")), "UnwindError") == 0)
            unwind_fields = (int)j_len(j_get(j_at(schema, i), "fields"));
    T_EQ_INT(unwind_fields, 3);

    /* Funcs keyed by (name, resource): "draw" from two File records of the
     * same library is one func; the unwinding error's root frame has no
     * resource. */
    const jv *shared = j_get(root, "shared"), *funcs = j_get(shared, "funcTable");
    int draws = 0, unwind_resource = 0;
    for (size_t f = 0; f < j_len(j_get(funcs, "name")); f++) {
        const char *name = string_at(root, j_at(j_get(funcs, "name"), f));
        draws += strcmp(name, "draw") == 0;
        if (strncmp(name, "[unwind error", 13) == 0)
            unwind_resource = (int)j_int(j_at(j_get(funcs, "resource"), f));
    }
    T_EQ_INT(draws, 1);
    T_EQ_INT(unwind_resource, 0);  /* G@3 was removed as a gap: not written */
    j_free(root);

    /* With every sample kept, the unwind root is written, resource -1. */
    pc_options o;
    pc_options_init(&o);
    o.remove_gaps = 0;
    p = convert_fixture(&o);
    root = p ? written(p, PC_FORMAT_FIREFOX) : NULL;
    pc_profile_free(p);
    if (!root)
        return;
    funcs = j_get(j_get(root, "shared"), "funcTable");
    unwind_resource = 0;
    for (size_t f = 0; f < j_len(j_get(funcs, "name")); f++)
        if (strcmp(string_at(root, j_at(j_get(funcs, "name"), f)),
                   "[unwind error: NOT_ENOUGH_STACK]") == 0)
            unwind_resource = (int)j_int(j_at(j_get(funcs, "resource"), f));
    T_EQ_INT(unwind_resource, -1);
    j_free(root);
}

/* cpu-clock periods become tracing-ms weights. */
TEST(processed_time_weights)
{
    pc_options o;
    pc_options_init(&o);
    o.event = "cpu-clock";
    pc_profile *p = convert_fixture(&o);
    jv *root = p ? written(p, PC_FORMAT_FIREFOX) : NULL;
    pc_profile_free(p);
    if (!root)
        return;
    const jv *s = j_get(j_at(j_get(root, "threads"), 0), "samples");
    T_EQ_STR(j_str(j_get(s, "weightType")), "tracing-ms");
    T_EQ_STR(j_num_text(j_at(j_get(s, "weight"), 0)), "0.25");
    T_EQ_STR(j_str(j_get(j_get(root, "meta"), "product")), "com.example (simpleperf: cpu-clock)");
    j_free(root);
}

/* On- and off-CPU time in ms, on the off-CPU corpus file: totals equal the
 * recorded periods and the computed durations. */
TEST(processed_offcpu_totals)
{
    if (!t_shared()) {
        t_skip("../shared not found (off-CPU corpus file)");
        return;
    }
    pc_options o;
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.offcpu = PC_OFFCPU_ON_OFF;
    pc_profile *p = convert_input("perf_with_trace_offcpu_v2.callchain.gaps0.trace", &o);
    if (!p)
        return;
    long long model_on = 0, model_off = 0;
    for (size_t i = 0; i < p->sample.n; i++) {
        if (pc_sample_event(p, i) == 0)
            model_on += pc_sample_weight(p, i);
        else
            model_off += pc_sample_weight(p, i);
    }
    jv *root = written(p, PC_FORMAT_FIREFOX);
    pc_profile_free(p);
    if (!root)
        return;
    long long on = 0, off = 0;
    size_t off_tracks = 0;
    const jv *threads = j_get(root, "threads");
    for (size_t t = 0; t < j_len(threads); t++) {
        const jv *th = j_at(threads, t);
        const char *name = j_str(j_get(th, "name"));
        size_t n = strlen(name);
        int is_off = n > 10 && strcmp(name + n - 10, " (off-CPU)") == 0;
        T_EQ_STR(j_str(j_get(j_get(th, "samples"), "weightType")), "tracing-ms");
        if (is_off) {
            off += weight_ns(th);
            off_tracks++;
        } else {
            on += weight_ns(th);
        }
    }
    /* simpleperf's figures: 52,000,000 ns on CPU; 344,124,304 ns off CPU
     * for the 91 samples it closes, plus the 5 it drops at the end. */
    T_EQ_INT(on, 52000000);
    T_EQ_INT(model_on, 52000000);
    T_EQ_INT(off, model_off);
    T_CHECK(off > 344124304LL);
    T_CHECK(off_tracks == 6);
    T_CONTAINS(j_str(j_get(j_get(root, "meta"), "product")),
               "(simpleperf: cpu-clock:u, sched:sched_switch)");
    j_free(root);
}

/* Both formats, on every corpus input: valid, with the model's sample
 * counts per thread, and the model's weights in the processed format. */
static void formats_agree(const corpus_row *row)
{
    pc_options o;
    pc_options_init(&o);
    /* report-sample files without samples have nothing to show. */
    if (atoll(row->col[M_SAMPLES]) == 0) {
        pc_error err;
        T_EQ_INT(convert_input_status(corpus_base(row), &o, &err), PC_EINPUT);
        T_CONTAINS(err.message, ": nothing to show: the input holds no samples");
        return;
    }
    pc_profile *p = convert_input(corpus_base(row), &o);
    if (!p)
        return;
    jv *processed = written(p, PC_FORMAT_FIREFOX), *gecko = written(p, PC_FORMAT_GECKO);
    if (processed && gecko) {
        const jv *pt = j_get(processed, "threads"), *gt = j_get(gecko, "threads");
        T_EQ_INT(j_len(gt), p->thread.n);
        T_EQ_INT(j_len(pt), p->thread.n);
        for (size_t t = 0; t < p->thread.n; t++) {
            long long tid = p->thread.tid[t], weights = 0;
            size_t in_gecko = 0, in_processed = 0;
            for (size_t k = 0; k < j_len(gt); k++)
                if (j_int(j_get(j_at(gt, k), "tid")) == tid)
                    in_gecko += j_len(j_get(j_get(j_at(gt, k), "samples"), "data"));
            for (size_t k = 0; k < j_len(pt); k++)
                if (j_int(j_get(j_at(pt, k), "tid")) == tid) {
                    in_processed += (size_t)j_int(j_get(j_get(j_at(pt, k), "samples"), "length"));
                    weights += weight_ns(j_at(pt, k));
                }
            size_t n = p->sample.first[t + 1] - p->sample.first[t];
            long long model = 0;
            for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++)
                model += pc_sample_weight(p, i);
            T_EQ_INT(in_gecko, n);
            T_EQ_INT(in_processed, n);
            const jv *w = j_get(j_get(j_at(pt, 0), "samples"), "weight");
            T_EQ_INT(weights, w && w->type != J_NULL ? model : (long long)n);
        }
    }
    j_free(processed);
    j_free(gecko);
    pc_profile_free(p);
}

TEST(processed_and_gecko_agree)
{
    corpus_each("input", NULL, "formats agree", formats_agree);
}

/* A small valid processed profile; each fault below breaks one thing. */
static const char valid[] =
    "{\"meta\":{\"version\":24,\"preprocessedProfileVersion\":70,\"interval\":1,"
    "\"startTime\":0,\"processType\":0,\"product\":\"p\",\"stackwalk\":1,"
    "\"categories\":[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]}],"
    "\"markerSchema\":[{\"name\":\"M\",\"display\":[],\"fields\":[]}],"
    "\"initialSelectedThreads\":[0]},\"libs\":[],"
    "\"shared\":{\"stackTable\":{\"frame\":[0,1],\"prefixOffset\":[0,1],\"length\":2},"
    "\"frameTable\":{\"address\":[-1,-1],\"lib\":[-1,-1],\"inlineDepth\":[0,0],"
    "\"category\":[0,0],\"subcategory\":[0,0],\"func\":[0,1],\"nativeSymbol\":[null,null],"
    "\"innerWindowID\":[null,null],\"line\":[null,null],\"column\":[null,null],"
    "\"originalLocation\":[null,null],\"length\":2},"
    "\"funcTable\":{\"name\":[0,1],\"isJS\":[false,false],\"relevantForJS\":[false,false],"
    "\"resource\":[0,-1],\"source\":[null,null],\"lineNumber\":[null,null],"
    "\"columnNumber\":[null,null],\"originalLocation\":[null,null],\"length\":2},"
    "\"resourceTable\":{\"name\":[2],\"host\":[null],\"type\":[1],\"length\":1},"
    "\"nativeSymbols\":{\"libIndex\":[],\"address\":[],\"name\":[],\"functionSize\":[],\"length\":0},"
    "\"sources\":{\"id\":[],\"filename\":[],\"startLine\":[],\"startColumn\":[],"
    "\"sourceMapURL\":[],\"content\":[],\"length\":0},"
    "\"sourceLocationTable\":{\"source\":[],\"line\":[],\"column\":[],\"length\":0},"
    "\"stringArray\":[\"a\",\"b\",\"lib.so\",\"mark\"]},"
    "\"threads\":[{\"name\":\"t\",\"isMainThread\":true,\"processType\":\"default\","
    "\"pid\":\"1\",\"tid\":1,\"processStartupTime\":0,\"processShutdownTime\":null,"
    "\"registerTime\":0,\"unregisterTime\":null,\"pausedRanges\":[],"
    "\"samples\":{\"stack\":[1,0],\"timeDeltas\":[0,1.5],\"weight\":[0.25,0.5],"
    "\"weightType\":\"tracing-ms\",\"length\":2},"
    "\"markers\":{\"data\":[{\"type\":\"M\"}],\"name\":[3],\"startTime\":[1],"
    "\"endTime\":[2],\"phase\":[1],\"category\":[0],\"length\":1}}]}";

static char *variant(const char *from, const char *to)
{
    const char *at = strstr(valid, from);
    if (!at)
        return NULL;
    size_t n = strlen(valid) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - valid), valid, to, at + strlen(from));
    return out;
}

TEST(processed_validator)
{
    static const struct {
        const char *fault, *from, *to, *where;
    } faults[] = {
        {"version 69", "\"preprocessedProfileVersion\":70", "\"preprocessedProfileVersion\":69",
         "meta.preprocessedProfileVersion"},
        {"column shorter than length", "\"frame\":[0,1]", "\"frame\":[0]",
         "shared.stackTable.frame: 1 entries for length 2"},
        {"prefix offset forward", "\"prefixOffset\":[0,1]", "\"prefixOffset\":[0,2]",
         "shared.stackTable.prefixOffset[1]"},
        {"frame's func out of range", "\"func\":[0,1]", "\"func\":[0,2]",
         "shared.frameTable.func[1]"},
        {"bad subcategory", "\"subcategory\":[0,0]", "\"subcategory\":[0,1]",
         "shared.frameTable.category[1]"},
        {"resource out of range", "\"resource\":[0,-1]", "\"resource\":[0,1]",
         "shared.funcTable.resource[1]"},
        {"name not a string index", "\"name\":[0,1],\"isJS\"", "\"name\":[0,9],\"isJS\"",
         "shared.funcTable.name[1]"},
        {"numeric pid", "\"pid\":\"1\"", "\"pid\":1", "threads[0].pid"},
        {"sample stack out of range", "\"stack\":[1,0]", "\"stack\":[1,2]",
         "threads[0].samples.stack[1]"},
        {"tracing-ms without weights", "\"weight\":[0.25,0.5]", "\"weight\":null",
         "threads[0].samples.weight: tracing-ms samples need weights"},
        {"negative delta", "\"timeDeltas\":[0,1.5]", "\"timeDeltas\":[0,-1.5]",
         "threads[0].samples.timeDeltas[1]"},
        {"marker schema with data", "\"fields\":[]", "\"data\":[]", "no fields array"},
        {"unknown marker type", "{\"type\":\"M\"}", "{\"type\":\"N\"}",
         "threads[0].markers.data[0]"},
        {"selected thread out of range", "\"initialSelectedThreads\":[0]",
         "\"initialSelectedThreads\":[3]", "meta.initialSelectedThreads[0]"},
    };
    char msg[1024];
    t_case("processed_validator: the valid profile");
    T_EQ_INT(processed_check_text(valid, strlen(valid), msg, sizeof msg), 0);
    T_EQ_STR(msg, "");
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++) {
        t_case("processed_validator: %s", faults[i].fault);
        char *text = variant(faults[i].from, faults[i].to);
        T_CHECK(text != NULL);
        if (!text)
            continue;
        T_CHECK(processed_check_text(text, strlen(text), msg, sizeof msg) > 0);
        T_CONTAINS(msg, faults[i].where);
        free(text);
    }
}

/* Sample i's stack in thread 0, as "root;...;leaf" from the shared
 * tables (a prefix offset of 0 is a root). */
static void sample_path(const jv *root, size_t i, char *out, size_t cap)
{
    const jv *sh = j_get(root, "shared"), *st = j_get(sh, "stackTable");
    const jv *fr = j_get(j_get(sh, "frameTable"), "func");
    const jv *fn = j_get(j_get(sh, "funcTable"), "name");
    long long k = j_int(j_at(j_get(j_get(j_at(j_get(root, "threads"), 0), "samples"), "stack"), i));
    const char *names[16];
    size_t n = 0;
    for (long long guard = 0; k >= 0 && n < 16 && guard < 16; guard++) {
        long long f = j_int(j_at(j_get(st, "frame"), (size_t)k));
        names[n++] = string_at(root, j_at(fn, (size_t)j_int(j_at(fr, (size_t)f))));
        long long off = j_int(j_at(j_get(st, "prefixOffset"), (size_t)k));
        k = off ? k - off : -1;
    }
    out[0] = 0;
    while (n--) {
        size_t used = strlen(out);
        snprintf(out + used, cap - used, "%s%s", used ? ";" : "", names[n] ? names[n] : "?");
    }
}

/* The stack table holds the stacks samples reach and no others, parents
 * first: where a filter left some unreached (a kept list of them), and
 * where every stack is reached and no frames merge (then the writer reads
 * the model's own columns). */
TEST(processed_stack_table_keeps_reached_stacks)
{
    static const hand_sample gap[] = {{"T", "a;b;c", 1}, {"T", "a;x;y", 1}, {"T", "a;d", 1}};
    pc_profile *p = hand_profile(gap, 3, PC_UNIT_NS, NULL);
    T_CHECK(p != NULL);
    if (!p)
        return;
    static const uint8_t keep[] = {1, 0, 1};
    pc_keep_samples(p, keep);
    jv *root = written(p, PC_FORMAT_FIREFOX);
    pc_profile_free(p);
    if (!root)
        return;
    char path[128];
    T_EQ_INT(j_int(j_get(j_get(j_get(root, "shared"), "stackTable"), "length")), 4);
    sample_path(root, 0, path, sizeof path);
    T_EQ_STR(path, "a;b;c");
    sample_path(root, 1, path, sizeof path);
    T_EQ_STR(path, "a;d");
    j_free(root);

    static const hand_sample all[] = {{"T", "p;q", 1}, {"T", "r;s;t", 1}, {"T", "u", 1}};
    p = hand_profile(all, 3, PC_UNIT_NS, NULL);
    T_CHECK(p != NULL);
    if (!p)
        return;
    root = written(p, PC_FORMAT_FIREFOX);
    pc_profile_free(p);
    if (!root)
        return;
    T_EQ_INT(j_int(j_get(j_get(j_get(root, "shared"), "stackTable"), "length")), 6);
    static const char *const want[] = {"p;q", "r;s;t", "u"};
    for (size_t i = 0; i < 3; i++) {
        sample_path(root, i, path, sizeof path);
        T_EQ_STR(path, want[i]);
    }
    j_free(root);
}

/* The same over many words of the writer's marks (a bit a stack): paths
 * that part at every depth, a third of them kept, so that stacks are
 * reached through parents in the word below, in the same word, and only
 * as ancestors.  The table must hold exactly the kept paths' prefixes. */
TEST(processed_stack_table_keeps_reached_stacks_many)
{
    enum { N = 60, DEPTH = 12 };
    static char paths[N][DEPTH * 8];
    hand_sample s[N];
    for (size_t i = 0; i < N; i++) {
        size_t len = 0, depth = 2 + i % (DEPTH - 1);
        for (size_t d = 0; d < depth; d++)
            /* Frame d of path i: shared with the paths before it down to
             * a depth that varies, then its own. */
            len += (size_t)snprintf(paths[i] + len, sizeof paths[i] - len, "%sf%zu_%zu",
                                    d ? ";" : "", d, d < i % 5 ? (size_t)0 : i);
        s[i] = (hand_sample){"T", paths[i], 1};
    }
    pc_profile *p = hand_profile(s, N, PC_UNIT_NS, NULL);
    T_CHECK(p != NULL);
    if (!p)
        return;
    T_CHECK(p->stack.n > 128);
    uint8_t keep[N];
    for (size_t i = 0; i < N; i++)
        keep[i] = i % 3 == 1;
    pc_keep_samples(p, keep);
    /* The kept paths' distinct prefixes, counted from their text. */
    size_t want = 0;
    static char seen[N * DEPTH][DEPTH * 8];
    for (size_t i = 0; i < N; i++) {
        if (!keep[i])
            continue;
        for (const char *c = paths[i];; c++) {
            if (*c != ';' && *c != 0)
                continue;
            char pre[DEPTH * 8];
            snprintf(pre, sizeof pre, "%.*s", (int)(c - paths[i]), paths[i]);
            size_t k = 0;
            while (k < want && strcmp(seen[k], pre) != 0)
                k++;
            if (k == want)
                memcpy(seen[want++], pre, sizeof pre);
            if (!*c)
                break;
        }
    }
    jv *root = written(p, PC_FORMAT_FIREFOX);
    pc_profile_free(p);
    if (!root)
        return;
    T_EQ_INT(j_int(j_get(j_get(j_get(root, "shared"), "stackTable"), "length")), (long long)want);
    char path[DEPTH * 8];
    for (size_t i = 0, k = 0; i < N; i++) {
        if (!keep[i])
            continue;
        sample_path(root, k++, path, sizeof path);
        T_EQ_STR(path, paths[i]);
    }
    j_free(root);
}

/* Trees grown mostly as chains (a stack under the one before it), with
 * branches, over hundreds of words of the writer's marks, a few stacks
 * sampled: the stack table holds exactly those stacks and their
 * ancestors, counted here by walking up from each. */
TEST(processed_stack_table_keeps_ancestors_of_chains)
{
    uint64_t rng = 7;
    for (int round = 0; round < 6; round++) {
        pc_profile *p = pc_profile_new();
        T_CHECK(p != NULL);
        if (!p)
            return;
        uint32_t res = pc_resource(p, pc_intern_cstr(p, "libc.so"));
        uint32_t frame[40];
        for (size_t f = 0; f < 40; f++) {
            char name[16];
            snprintf(name, sizeof name, "fn%zu", f);
            frame[f] = pc_add_frame(p, pc_func(p, pc_intern_cstr(p, name), res),
                                    0x1000 + 16 * f, PC_CAT_NATIVE, PC_EXEC_NATIVE);
        }
        uint32_t ev = pc_event(p, pc_intern_cstr(p, "cpu-clock"), PC_UNIT_NS, 0);
        uint32_t t = pc_add_thread(p, 1, 1, pc_intern_cstr(p, "main"));
        /* Chains break about every 2-34 stacks (round 5: at each one), to a
         * random stack or the root. */
        size_t every = round == 5 ? 1 : 2 + (size_t)round * 8;
        while (p->stack.n < 20000 && !p->oom) {
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            uint32_t n = (uint32_t)p->stack.n, pre = n ? n - 1 : PC_NONE;
            if ((rng >> 20) % every == 0)
                pre = (rng >> 40) % 5 == 0 || !n ? PC_NONE : (uint32_t)((rng >> 8) % n);
            pc_stack(p, pre, frame[(rng >> 33) % 40]);
        }
        size_t ns = p->stack.n;
        uint8_t *mark = calloc(ns, 1);
        T_CHECK(mark != NULL);
        size_t want = 0;
        for (size_t k = 0; mark && k < 300; k++) {
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            uint32_t st = (uint32_t)((rng >> 16) % ns);
            pc_add_sample(p, t, 1000 * k, st, 1, (uint16_t)ev, PC_NO_CPU);
            for (uint32_t a = st; a != PC_NONE && !mark[a]; a = p->stack.prefix[a]) {
                mark[a] = 1;
                want++;
            }
        }
        free(mark);
        pc_note_extent(p);
        T_CHECK(!p->oom && pc_group_samples(p) == 0);
        jv *root = written(p, PC_FORMAT_FIREFOX);
        pc_profile_free(p);
        if (!root)
            return;
        T_EQ_INT(j_int(j_get(j_get(j_get(root, "shared"), "stackTable"), "length")),
                 (long long)want);
        j_free(root);
    }
}

/* A profile of columns long enough for the writer's helpers (more than
 * two chunks of JW_POOL_ROWS rows): a thread of N_LONG samples on a
 * clock, each a stack of its own below one root (some samples have
 * none), and a comparison thread whose weights count against. */
enum { N_LONG = 3 * JW_POOL_ROWS + 123, N_CMP = 2 * JW_POOL_ROWS + 7 };

static pc_profile *long_profile(void)
{
    pc_profile *p = pc_profile_new();
    if (!p)
        return NULL;
    uint32_t res = pc_resource(p, pc_intern_cstr(p, "liblong.so"));
    uint32_t ev = pc_event(p, pc_intern_cstr(p, "cpu-clock"), PC_UNIT_NS, 0);
    uint32_t ta = pc_add_thread(p, 100, 100, pc_intern_cstr(p, "main"));
    uint32_t tb = pc_add_thread(p, 100, 101, pc_intern_cstr(p, "base"));
    if (tb != PC_NONE)
        p->thread.diff[tb] = 1;
    uint32_t frame[1 + 211 + 257];
    for (size_t f = 0; f < sizeof frame / sizeof *frame; f++) {
        char name[32];
        snprintf(name, sizeof name, "fn%zu", f);
        frame[f] = pc_add_frame(p, pc_func(p, pc_intern_cstr(p, name), res),
                                0x1000 + 16 * f, PC_CAT_NATIVE, PC_EXEC_NATIVE);
    }
    uint32_t root = pc_stack(p, PC_NONE, frame[0]);
    for (size_t i = 0; i < N_LONG; i++) {
        /* (i % 211, i / 211 % 257) differ for every i below 54,227. */
        uint32_t s = pc_stack(p, pc_stack(p, root, frame[1 + i % 211]),
                              frame[212 + i / 211 % 257]);
        pc_add_sample(p, ta, 1000000 * (uint64_t)i + i % 7 * 13, i % 50 ? s : PC_NONE,
                      250000 + (int64_t)(i % 1000), (uint16_t)ev, PC_NO_CPU);
        if (i < N_CMP)
            pc_add_sample(p, tb, 1000000 * (uint64_t)i + 500, s, -1000 * (int64_t)(i % 3 + 1),
                          (uint16_t)ev, PC_NO_CPU);
    }
    pc_note_extent(p);
    if (p->oom || ta == PC_NONE || tb == PC_NONE || pc_group_samples(p) < 0) {
        pc_profile_free(p);
        return NULL;
    }
    return p;
}

static unsigned char *write_long(const pc_profile *p, int threads, int gzip, int container,
                                 size_t *len)
{
    pc_write_options w;
    pc_error err;
    unsigned char *out = NULL;
    pc_write_options_init(&w);
    w.format = PC_FORMAT_FIREFOX;
    w.threads = threads;
    w.gzip = gzip;
    w.container = container;
    if (pc_write_memory(p, &w, &out, len, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "--threads %d: write failed: %s", threads, err.message);
        return NULL;
    }
    return out;
}

/* Long columns made a chunk at a time on every core are the bytes one
 * thread writes: plain, gzipped and in a JSLB container. */
TEST(processed_long_columns_threads_same_bytes)
{
    pc_profile *p = long_profile();
    T_CHECK(p != NULL);
    if (!p)
        return;
    jv *root = written(p, PC_FORMAT_FIREFOX);
    if (root) {
        const jv *threads = j_get(root, "threads");
        T_EQ_INT(j_len(threads), 2);
        const jv *main = j_at(threads, 0), *s = j_get(main, "samples");
        T_EQ_INT(j_len(j_get(s, "stack")), N_LONG);
        T_CHECK(j_at(j_get(s, "stack"), 50)->type == J_NULL);
        T_CHECK(j_int(j_get(j_get(j_get(root, "shared"), "stackTable"), "length")) >
                2 * JW_POOL_ROWS);
        long long want = 0;
        for (size_t i = 0; i < N_LONG; i++)
            want += 250000 + (long long)(i % 1000);
        T_EQ_INT(weight_ns(main), want);
        /* Every delta is exact: their sum is the last sample's time. */
        const jv *d = j_get(s, "timeDeltas");
        double sum = 0;
        for (size_t i = 0; i < j_len(d); i++)
            sum += j_num(j_at(d, i));
        T_CHECK(sum > (N_LONG - 1) * 1.0 - 0.01 && sum < (N_LONG - 1) * 1.0 + 0.01);
        T_EQ_INT(weight_ns(j_at(threads, 1)) < 0, 1);
    }
    j_free(root);
    static const struct {
        int gzip, container;
    } kinds[] = {{0, PC_CONTAINER_JSON}, {1, PC_CONTAINER_JSON}, {0, PC_CONTAINER_JSLB}};
    for (size_t k = 0; k < 3; k++) {
        size_t one_len = 0;
        unsigned char *one = write_long(p, 1, kinds[k].gzip, kinds[k].container, &one_len);
        static const int counts[] = {2, 3, 8};
        for (size_t c = 0; one && c < 3; c++) {
            t_case("processed_long_columns_threads_same_bytes: gzip %d, container %d, "
                   "--threads %d", kinds[k].gzip, kinds[k].container, counts[c]);
            size_t len = 0;
            unsigned char *out = write_long(p, counts[c], kinds[k].gzip, kinds[k].container,
                                            &len);
            T_EQ_INT(len, one_len);
            T_CHECK(out && len == one_len && memcmp(out, one, len) == 0);
            free(out);
        }
        free(one);
    }
    pc_profile_free(p);
}
