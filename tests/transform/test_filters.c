/* Filters and thread aggregation on corpus files, against counts taken
 * from simpleperf's own dumps and from report-sample's own filtering. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "dump_parse.h"
#include "fixtures.h"
#include "t.h"
#include "test_util.h"

/* Samples of the dump that pass keep(). */
static size_t dump_count(const dump *d, int (*keep)(const dump *, const dump_sample *))
{
    size_t n = 0;
    for (size_t i = 0; i < d->n_samples; i++)
        n += keep(d, &d->samples[i]);
    return n;
}

static int64_t want_pid;
static int of_pid(const dump *d, const dump_sample *s)
{
    return dump_pid(d, s->tid) == want_pid;
}
static int not_of_pid(const dump *d, const dump_sample *s)
{
    return dump_pid(d, s->tid) != want_pid;
}

static regex_t want_name;
static int name_matches(const dump *d, const dump_sample *s)
{
    return regexec(&want_name, dump_name(d, s->tid), 0, NULL, 0) == 0;
}
static int name_differs(const dump *d, const dump_sample *s)
{
    return !name_matches(d, s);
}

static uint64_t lo_ns, hi_ns;
static int in_time(const dump *d, const dump_sample *s)
{
    (void)d;
    return s->time >= lo_ns && s->time < hi_ns;
}

static uint64_t first_time(const dump *d)
{
    uint64_t t = UINT64_MAX;
    for (size_t i = 0; i < d->n_samples; i++)
        if (d->samples[i].time < t)
            t = d->samples[i].time;
    return t;
}

TEST(filter_pid_and_names)
{
    static const char *const base = "perf_with_multiple_pids_and_tids.callchain.trace";
    dump d;
    if (!t_shared() || dump_load(base, &d) != 0) {
        t_skip("../shared not found (simpleperf corpus)");
        return;
    }
    pc_options o;
    pc_profile *p;
    int64_t pid = d.threads[0].pid;
    want_pid = pid;

    t_case("filter: --pid");
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.pids = (pc_ids){&pid, 1};
    if ((p = convert_input(base, &o))) {
        T_CHECK(p->sample.n > 0);
        T_EQ_INT(p->sample.n, dump_count(&d, of_pid));
        for (size_t t = 0; t < p->thread.n; t++)
            T_EQ_INT(p->thread.pid[t], pid);
        pc_profile_free(p);
    }

    t_case("filter: --exclude-pid");
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.exclude_pids = (pc_ids){&pid, 1};
    if ((p = convert_input(base, &o))) {
        T_EQ_INT(p->sample.n, dump_count(&d, not_of_pid));
        pc_profile_free(p);
    }
    dump_free(&d);

    static const char *const db = "display_bitmaps.proto_data";
    if (dump_load(db, &d) != 0)
        return;
    const char *names[] = {"AsyncTask"};
    regcomp(&want_name, "AsyncTask", REG_EXTENDED | REG_NOSUB);

    t_case("filter: --thread-name");
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.thread_names = (pc_strings){names, 1};
    if ((p = convert_input(db, &o))) {
        T_CHECK(p->sample.n > 0);
        T_EQ_INT(p->sample.n, dump_count(&d, name_matches));
        T_EQ_INT(p->thread.n, 2);  /* AsyncTask #3 and #4 */
        pc_profile_free(p);
    }

    t_case("filter: --exclude-thread-name");
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.exclude_thread_names = (pc_strings){names, 1};
    if ((p = convert_input(db, &o))) {
        T_EQ_INT(p->sample.n, dump_count(&d, name_differs));
        pc_profile_free(p);
    }
    regfree(&want_name);

    /* Every thread of display_bitmaps is in the app's process, whose main
     * thread is named after the package. */
    t_case("filter: --process-name");
    const char *proc[] = {"displayingbitmaps$"}, *other[] = {"^system_server$"};
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.process_names = (pc_strings){proc, 1};
    if ((p = convert_input(db, &o))) {
        T_EQ_INT(p->sample.n, d.n_samples);
        pc_profile_free(p);
    }
    /* Nothing kept: an error that names the threads there are. */
    o.process_names = (pc_strings){other, 1};
    pc_error err;
    T_EQ_INT(convert_input_status(db, &o, &err), PC_EINPUT);
    T_CONTAINS(err.message, "nothing to show: the options kept none of the 525 samples of a "
                            "recording of 134.4 ms; threads with samples (tid, name, pid, "
                            "samples): 31881 RenderThread (pid 31850, 271), 31850 "
                            "com.example.android.displayingbitmaps (pid 31850, 164)");
    dump_free(&d);
}

/* report-sample's own --include-tid 31881 against ours on the same
 * recording: the same samples, at the same times, with the same stacks. */
TEST(filter_tid_matches_report_sample)
{
    if (!t_shared()) {
        t_skip("../shared not found (simpleperf corpus)");
        return;
    }
    pc_options o;
    int64_t tid = 31881;
    pc_options_init(&o);
    o.remove_gaps = 0;
    pc_profile *theirs = convert_input("perf_display_bitmaps.tid31881.trace", &o);
    o.tids = (pc_ids){&tid, 1};
    pc_profile *ours = convert_input("perf_display_bitmaps.callchain.trace", &o);
    if (theirs && ours) {
        T_EQ_INT(ours->thread.n, 1);
        T_EQ_INT(ours->sample.n, theirs->sample.n);
        size_t same = 0;
        for (size_t i = 0; i < ours->sample.n && i < theirs->sample.n; i++)
            same += pc_sample_time(ours, i) == pc_sample_time(theirs, i) &&
                    strcmp(stack_text(ours, ours->sample.stack[i]),
                           stack_text(theirs, theirs->sample.stack[i])) == 0;
        T_EQ_INT(same, theirs->sample.n);
        T_CHECK(theirs->sample.n > 200);
    }
    pc_profile_free(theirs);
    pc_profile_free(ours);
}

TEST(filter_time)
{
    static const char *const db = "display_bitmaps.proto_data";
    dump d;
    if (!t_shared() || dump_load(db, &d) != 0) {
        t_skip("../shared not found (simpleperf corpus)");
        return;
    }
    uint64_t t0 = first_time(&d);
    pc_options o;
    pc_profile *p;

    t_case("filter: --time-range 100,350 (ms)");
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.time_start = 100 * 1000000LL;
    o.time_end = 350 * 1000000LL;
    lo_ns = t0 + 100000000ULL;
    hi_ns = t0 + 350000000ULL;
    if ((p = convert_input(db, &o))) {
        size_t want = dump_count(&d, in_time);
        T_CHECK(want > 0 && want < d.n_samples);
        T_EQ_INT(p->sample.n, want);
        pc_profile_free(p);
    }

    t_case("filter: --time-range 100, (open end)");
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.time_start = 100 * 1000000LL;
    lo_ns = t0 + 100000000ULL;
    hi_ns = UINT64_MAX;
    if ((p = convert_input(db, &o))) {
        T_CHECK(dump_count(&d, in_time) > 0);
        T_EQ_INT(p->sample.n, dump_count(&d, in_time));
        pc_profile_free(p);
    }

    /* A filter file in simpleperf's format, with absolute times: one global
     * range, and thread ranges that leave only the main thread. */
    t_case("filter: --filter-file");
    int64_t main_tid = 31850;
    char path[600], text[512];
    snprintf(path, sizeof path, "%s/filter.txt", t_tmpdir());
    snprintf(text, sizeof text,
             "CLOCK monotonic\n"
             "GLOBAL_BEGIN %llu\nGLOBAL_END %llu\n"
             "THREAD_BEGIN %lld %llu\n",
             (unsigned long long)(t0 + 50000000ULL), (unsigned long long)(t0 + 400000000ULL),
             (long long)main_tid, (unsigned long long)t0);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.filter_file = path;
    lo_ns = t0 + 50000000ULL;
    hi_ns = t0 + 400000000ULL;
    if ((p = convert_input(db, &o))) {
        size_t want = 0;
        for (size_t i = 0; i < d.n_samples; i++)
            want += in_time(&d, &d.samples[i]) && d.samples[i].tid == main_tid;
        T_CHECK(want > 0);
        T_EQ_INT(p->sample.n, want);
        pc_profile_free(p);
    }
    dump_free(&d);
}

TEST(filter_errors)
{
    static const struct {
        const char *file_text, *message;
    } bad[] = {
        {"GLOBAL_BEGIN 10\nGLOBAL_END 5\n", ":2: range ends at 5 before it begins at 10"},
        {"GLOBAL_BEGIN x\n", ":1: GLOBAL_BEGIN takes a timestamp in ns"},
        {"THREAD_BEGIN 5\n", ":1: THREAD_BEGIN takes an id and a timestamp in ns"},
        {"\n\nSTART 5\n", ":3: unknown command 'START'"},
    };
    char path[600];
    snprintf(path, sizeof path, "%s/bad-filter.txt", t_tmpdir());
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pc_options o;
        pc_error err;
        t_case("filter_errors: %s", bad[i].message);
        FILE *f = fopen(path, "w");
        fputs(bad[i].file_text, f);
        fclose(f);
        pc_options_init(&o);
        o.filter_file = path;
        T_EQ_INT(convert_fixture_status(&o, &err), PC_EINPUT);
        T_CONTAINS(err.message, "bad-filter.txt");
        T_CONTAINS(err.message, bad[i].message);
    }

    pc_options o;
    pc_error err;
    const char *regex[] = {"(unclosed"};
    t_case("filter_errors: bad regular expression");
    pc_options_init(&o);
    o.thread_names = (pc_strings){regex, 1};
    T_EQ_INT(convert_fixture_status(&o, &err), PC_EUSAGE);
    T_CONTAINS(err.message, "options.thread_names '(unclosed': ");

    t_case("filter_errors: missing filter file");
    pc_options_init(&o);
    o.filter_file = "/nonexistent/filter.txt";
    T_EQ_INT(convert_fixture_status(&o, &err), PC_EIO);
    T_CONTAINS(err.message, "/nonexistent/filter.txt: cannot open");

    t_case("filter_errors: empty time range");
    pc_options_init(&o);
    o.time_start = 5000000;
    o.time_end = 5000000;
    T_EQ_INT(convert_fixture_status(&o, &err), PC_EUSAGE);
    T_CONTAINS(err.message, "options.time_end: the range ends before it begins");
}

/* Filters combine on the fixture, with values worked out by hand (see
 * fixtures.c): process 1000 without RenderThread, from 0.6 ms on. */
TEST(filter_combined_fixture)
{
    pc_options o;
    int64_t pid = 1000;
    const char *no_render[] = {"^Render"};
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.pids = (pc_ids){&pid, 1};
    o.exclude_thread_names = (pc_strings){no_render, 1};
    o.time_start = 600000;
    pc_profile *p = convert_fixture(&o);
    if (!p)
        return;
    /* main: 1,2,3,4,5 ms; thread 1002 is its own process (no Thread
     * record); idle has no samples. */
    T_EQ_STR(thread_times_us(p, find_thread(p, 1000)), "1000,2000,3000,4000,5000");
    T_EQ_INT(find_thread(p, 1001), PC_NONE);
    T_EQ_INT(find_thread(p, 1002), PC_NONE);
    T_EQ_INT(find_thread(p, 2000), PC_NONE);
    T_CHECK(find_thread(p, 1003) != PC_NONE);
    T_EQ_INT(p->sample.n, 5);
    pc_profile_free(p);
}

TEST(aggregate_threads)
{
    static const char *const db = "display_bitmaps.proto_data";
    dump d;
    if (!t_shared() || dump_load(db, &d) != 0) {
        t_skip("../shared not found (simpleperf corpus)");
        return;
    }
    pc_options o;
    const char *pattern[] = {"AsyncTask #.*"};
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.aggregate_threads = (pc_strings){pattern, 1};
    pc_profile *p = convert_input(db, &o);
    if (p) {
        size_t want = 0, merged = 0;
        for (size_t i = 0; i < d.n_samples; i++)
            want += strncmp(dump_name(&d, d.samples[i].tid), "AsyncTask #", 11) == 0;
        T_EQ_INT(p->thread.n, d.n_threads - 1);
        for (size_t t = 0; t < p->thread.n; t++) {
            if (strcmp(pc_str(&p->str, p->thread.name[t]), "AsyncTask #.*") != 0)
                continue;
            merged++;
            T_EQ_INT(thread_samples(p, (uint32_t)t), want);
            /* Sorted by time again after merging. */
            for (size_t i = p->sample.first[t] + 1; i < p->sample.first[t + 1]; i++)
                T_CHECK(pc_sample_time(p, i) >= pc_sample_time(p, i - 1));
        }
        T_EQ_INT(merged, 1);
        T_EQ_INT(p->sample.n, d.n_samples);
        pc_profile_free(p);
    }
    dump_free(&d);
}

/* --time-range counts from the recording's first event, not from the
 * first one the thread filters leave: a window read off the whole profile
 * selects the same time whatever else is filtered, and the output keeps
 * the recording's time frame (RenderThread's sample at 2.2 ms stays at
 * 2.2 ms). */
TEST(filter_time_range_ignores_thread_filters)
{
    pc_options o;
    int64_t tid = 1001;
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.tids = (pc_ids){&tid, 1};
    o.time_start = 2000000;
    o.time_end = 3000000;
    pc_profile *p = convert_fixture(&o);
    if (!p)
        return;
    T_EQ_STR(thread_times_us(p, find_thread(p, 1001)), "2200");
    T_EQ_INT(p->sample.n, 1);
    char *text = written_text(p, PC_FORMAT_FIREFOX, NULL);
    /* The timeline spans the window (and an interval more, for a sample at
     * its end); the one sample is 2.2 ms in. */
    T_CONTAINS(text, "\"profilingStartTime\":2,\"profilingEndTime\":4,");
    T_CONTAINS(text, "\"timeDeltas\":[2.2]");
    free(text);
    pc_profile_free(p);
}
