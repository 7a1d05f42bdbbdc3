/* The Perfetto reader on ../shared/corpus/perfetto/synthetic: the scale
 * traces against their expected counts, timestamps and folded stacks
 * (<trace>.expected.json and .expected.folded), the streaming profiles
 * against what synthetic/EXPECTED.md says of them.  One table of cases
 * (trace, options, what to check and the expected figures), run by one
 * loop.  trace_processor's diff tests are in test_perfetto_difftests.c and
 * test_perfetto_heap_difftests.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded_text.h"
#include "jsonmini.h"
#include "pf_corpus.h"
#include "t.h"
#include "test_util.h"

typedef struct synth_case synth_case;

/* How a trace is checked: against its expected files (scale traces) or
 * the row's figures. */
typedef void synth_check(const char *path, const pc_options *o, const synth_case *k);

struct synth_case {
    const char *name;        /* the case's name */
    const char *file;        /* under corpus/perfetto/synthetic/ */
    synth_check *check;
    int keep_gaps;           /* options: remove_gaps off */
    /* check_thread: the thread pid/tid, the profile's sample count (-1:
     * any), the times (ns) and leaf frames of the thread's samples (NULL:
     * not checked), a build id some module carries (NULL: none). */
    int64_t pid, tid;
    long long samples;
    const char *times, *leaves, *build_id;
};

/* Per-thread sample counts and first and last times, then the folded
 * stacks, of a scale trace. */
static void check_scale_samples(const char *path, const pc_options *o, const synth_case *row)
{
    char exp[1100];
    snprintf(exp, sizeof exp, "%s.expected.json", path);
    char *json = read_text(exp);
    char err[256];
    jv *root = json ? j_parse(json, strlen(json), err, sizeof err) : NULL;
    pc_profile *p = root ? convert_path(path, o) : NULL;
    if (!root)
        t_fail(__FILE__, __LINE__, "cannot read %s", exp);
    if (p) {
        const jv *threads = j_get(root, "per_thread");
        size_t total = 0;
        T_EQ_INT(p->thread.n, j_len(threads));
        for (size_t i = 0; i < j_len(threads); i++) {
            long long pid, tid;
            sscanf(j_key_at(threads, i), "%lld/%lld", &pid, &tid);
            const jv *want = j_at(threads, i);
            uint32_t t = thread_of(p, pid, tid);
            if (t == PC_NONE) {
                t_fail(__FILE__, __LINE__, "no thread %s", j_key_at(threads, i));
                continue;
            }
            size_t a = p->sample.first[t], b = p->sample.first[t + 1];
            T_EQ_INT(b - a, j_int(j_get(want, "samples")));
            if (b > a) {
                T_EQ_INT(pc_sample_time(p, a), j_int(j_get(want, "first_ts")));
                T_EQ_INT(pc_sample_time(p, b - 1), j_int(j_get(want, "last_ts")));
            }
            total += b - a;
        }
        T_EQ_INT(total, p->sample.n);
        snprintf(exp, sizeof exp, "%s.expected.folded", path);
        char *want = read_text(exp), *got = folded_samples(p);
        char *want_sorted = want ? sort_lines(want) : NULL;
        if (!want_sorted || strcmp(got, want_sorted) != 0)
            t_fail(__FILE__, __LINE__, "%s: folded stacks differ from %s", row->file, exp);
        free(want);
        free(want_sorted);
        free(got);
    }
    pc_profile_free(p);
    j_free(root);
    free(json);
}

/* Every dump of every process: sizes, counts, callsites and the time;
 * then the last dumps' folded stacks. */
static void check_scale_heap(const char *path, const pc_options *o, const synth_case *row)
{
    char exp[1100];
    (void)row;
    snprintf(exp, sizeof exp, "%s.expected.json", path);
    char *json = read_text(exp);
    char err[256];
    jv *root = json ? j_parse(json, strlen(json), err, sizeof err) : NULL;
    if (!root) {
        t_fail(__FILE__, __LINE__, "cannot read %s", exp);
        free(json);
        return;
    }
    const jv *dumps = j_get(root, "dumps");
    T_CHECK(j_len(dumps) > 0);
    /* The n-th dump of a pid is the n-th entry of that pid in the list. */
    for (int n = 1; n <= 16; n++) {
        pc_profile *p = NULL;
        size_t checked = 0;
        for (size_t i = 0; i < j_len(dumps); i++) {
            const jv *d = j_at(dumps, i);
            long long pid = j_int(j_get(d, "pid"));
            int nth = 0;
            for (size_t k = 0; k <= i; k++)
                nth += j_int(j_get(j_at(dumps, k), "pid")) == pid;
            if (nth != n)
                continue;
            if (!p && !(p = convert_dump(path, n)))
                break;
            heap_sum s = heap_sums(p, NULL, pid);
            T_EQ_INT(s.dumps, 1);
            T_EQ_INT(s.rows, j_int(j_get(d, "callsites")));
            T_EQ_INT(s.alloc, j_int(j_get(d, "total_alloc_bytes")));
            T_EQ_INT(s.freed, j_int(j_get(d, "total_freed_bytes")));
            T_EQ_INT(s.alloc_count, j_int(j_get(d, "total_alloc_count")));
            T_EQ_INT(s.alloc - s.freed, j_int(j_get(d, "unreleased_bytes")));
            T_EQ_INT(s.alloc_count - s.free_count, j_int(j_get(d, "unreleased_count")));
            T_EQ_INT(s.time, j_int(j_get(d, "ts_end_boottime_ns")));
            checked++;
        }
        pc_profile_free(p);
        if (!checked)
            break;
    }
    pc_profile *p = convert_path(path, o);
    if (p) {
        snprintf(exp, sizeof exp, "%s.expected.folded", path);
        char *want = read_text(exp), *got = folded_heap(p);
        char *want_sorted = want ? sort_lines(want) : NULL;
        if (!want_sorted || strcmp(got, want_sorted) != 0)
            t_fail(__FILE__, __LINE__, "heap folded stacks differ from %s", exp);
        free(want);
        free(want_sorted);
        free(got);
    }
    pc_profile_free(p);
    j_free(root);
    free(json);
}

/* One thread's samples, their times and leaf frames, and a module's
 * build id, as synthetic/EXPECTED.md lists them. */
static void check_thread(const char *path, const pc_options *o, const synth_case *k)
{
    pc_profile *p = convert_path(path, o);
    if (!p)
        return;
    if (k->samples >= 0)
        T_EQ_INT(p->sample.n, k->samples);
    uint32_t t = thread_of(p, k->pid, k->tid);
    T_CHECK(t != PC_NONE);
    if (t != PC_NONE) {
        char times[256] = "", leaves[256] = "";
        size_t nt = 0, nl = 0;
        for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++) {
            uint32_t leaf = p->stack.frame[p->sample.stack[i]];
            if (nt < sizeof times)
                nt += (size_t)snprintf(times + nt, sizeof times - nt, "%s%" PRIu64,
                                       nt ? " " : "", pc_sample_time(p, i));
            if (nl < sizeof leaves)
                nl += (size_t)snprintf(leaves + nl, sizeof leaves - nl, "%s%s", nl ? " " : "",
                                       frame_name(p, leaf));
        }
        T_EQ_STR(times, k->times);
        if (k->leaves)
            T_EQ_STR(leaves, k->leaves);
    }
    if (k->build_id) {
        int found = 0;
        for (size_t r = 0; r < p->res.n; r++)
            found |= p->res.build[r] != PC_NONE &&
                     strcmp(str_of(p, p->res.build[r]), k->build_id) == 0;
        T_CHECK(found);
    }
    pc_profile_free(p);
}

static const synth_case synth_cases[] = {
    {.name = "perfetto scale small_perf", .file = "scale/small_perf.pftrace",
     .check = check_scale_samples, .keep_gaps = 1},
    {.name = "perfetto scale small_chrome", .file = "scale/small_chrome.pftrace",
     .check = check_scale_samples, .keep_gaps = 1},
    {.name = "perfetto scale small_heap", .file = "scale/small_heap.pftrace",
     .check = check_scale_heap},
    /* Chrome samples from a 1 µs reference plus deltas accumulated across
     * packets; a breakpad build id verbatim. */
    {.name = "perfetto streaming_profile_basic", .file = "streaming_profile_basic.pb",
     .check = check_thread, .pid = 15, .tid = 16, .samples = -1,
     .times = "11000 26000 68000", .leaves = "0x4242 0x42 0x4242",
     .build_id = "3BBCFBD372448A727265C3E7C4D954F91"},
    /* One sample at 10015000 ns of BOOTTIME. */
    {.name = "perfetto streaming_profile_clock_monotonic",
     .file = "streaming_profile_clock_monotonic.pb", .check = check_thread, .pid = 15,
     .tid = 16, .samples = 1, .times = "10015000"},
};

TEST(perfetto_corpus_synthetic)
{
    const char *shared = t_shared();
    for (size_t i = 0; i < sizeof synth_cases / sizeof synth_cases[0]; i++) {
        const synth_case *k = &synth_cases[i];
        t_case("%s", k->name);
        if (!shared) {
            t_skip("../shared is absent: the Perfetto corpus cases are not run");
            return;
        }
        char path[1024];
        snprintf(path, sizeof path, "%s/corpus/perfetto/synthetic/%s", shared, k->file);
        pc_options o;
        pc_options_init(&o);
        if (k->keep_gaps)
            o.remove_gaps = 0;
        k->check(path, &o, k);
    }
}
