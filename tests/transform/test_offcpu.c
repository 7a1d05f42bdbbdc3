/* Off-CPU time: durations of sched_switch samples, the four modes, and a
 * glibc-ordered recording where every context switch precedes the samples. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "fixtures.h"
#include "jsonmini.h"
#include "t.h"
#include "test_util.h"

#define OFFCPU_INPUT "perf_with_trace_offcpu_v2.callchain.gaps0.trace"

static long long weight_sum(const pc_profile *p)
{
    long long s = 0;
    for (size_t i = 0; i < p->sample.n; i++)
        s += pc_sample_weight(p, i);
    return s;
}

/* (tid, time in ns) of every sample of a reference Gecko profile. */
static size_t reference_samples(const char *rel, long long (*out)[2], size_t cap)
{
    size_t len, n = 0;
    char err[256];
    char *text = (char *)corpus_read(rel, &len);
    jv *root = text ? j_parse(text, len, err, sizeof err) : NULL;
    const jv *threads = j_get(root, "threads");
    for (size_t t = 0; t < j_len(threads); t++) {
        const jv *th = j_at(threads, t);
        const jv *data = j_get(j_get(th, "samples"), "data");
        for (size_t i = 0; i < j_len(data) && n < cap; i++) {
            out[n][0] = j_int(j_get(th, "tid"));
            out[n][1] = (long long)(j_num(j_at(j_at(data, i), 1)) * 1e6 + 0.5);
            n++;
        }
    }
    j_free(root);
    free(text);
    return n;
}

/* simpleperf's own figures for perf_with_trace_offcpu_v2 (AOSP
 * report_lib_test): on-cpu 208 samples / 52,000,000 ns; off-cpu 91 samples
 * / 344,124,304 ns, not counting the 5 still pending at the end, which it
 * drops and we keep. */
TEST(offcpu_corpus_modes)
{
    if (!t_shared()) {
        t_skip("../shared not found (off-CPU corpus file)");
        return;
    }
    pc_options o;
    pc_profile *p;

    t_case("offcpu: on-cpu");
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.offcpu = PC_OFFCPU_ON;
    if ((p = convert_input(OFFCPU_INPUT, &o))) {
        T_EQ_INT(p->sample.n, 208);
        T_EQ_INT(weight_sum(p), 52000000);
        pc_profile_free(p);
    }

    t_case("offcpu: off-cpu");
    o.offcpu = PC_OFFCPU_OFF;
    if ((p = convert_input(OFFCPU_INPUT, &o))) {
        static long long ref[512][2];
        size_t n = reference_samples("reference/perf_with_trace_offcpu_v2.proto.off-cpu.gecko.json",
                                     ref, 512);
        long long matched = 0, pending = 0;
        size_t n_matched = 0;
        T_EQ_INT(n, 91);
        T_EQ_INT(p->sample.n, 96);
        for (size_t i = 0; i < p->sample.n; i++) {
            int found = 0;
            for (size_t k = 0; k < n && !found; k++)
                found = ref[k][0] == p->thread.tid[pc_sample_thread(p, i)] &&
                        llabs(ref[k][1] - (long long)pc_sample_time(p, i)) <= 1000;
            if (found) {
                matched += pc_sample_weight(p, i);
                n_matched++;
            } else {
                pending += pc_sample_weight(p, i);
                T_CHECK(pc_sample_weight(p, i) >= 1);
            }
        }
        T_EQ_INT(n_matched, 91);
        T_EQ_INT(matched, 344124304);
        T_CHECK(pending > 0);
        pc_profile_free(p);
    }

    t_case("offcpu: on-off-cpu");
    o.offcpu = PC_OFFCPU_ON_OFF;
    if ((p = convert_input(OFFCPU_INPUT, &o))) {
        size_t per_event[2] = {0, 0};
        for (size_t i = 0; i < p->sample.n; i++)
            per_event[pc_sample_event(p, i) ? 1 : 0]++;
        T_EQ_INT(per_event[0], 208);
        T_EQ_INT(per_event[1], 96);
        pc_profile_free(p);
    }

    t_case("offcpu: mixed is the default");
    pc_options_init(&o);
    o.remove_gaps = 0;
    if ((p = convert_input(OFFCPU_INPUT, &o))) {
        size_t nonzero = 0;
        for (size_t i = 0; i < p->sample.n; i++)
            nonzero += pc_sample_event(p, i) != 0;
        T_EQ_INT(p->sample.n, 304);
        T_EQ_INT(nonzero, 0);
        T_EQ_INT(p->meta.offcpu_mode, PC_OFFCPU_MIXED);
        T_CHECK(weight_sum(p) > 52000000LL + 344124304LL);
        pc_profile_free(p);
    }

    t_case("offcpu: --event picks one event, with durations");
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.event = "sched:sched_switch";
    if ((p = convert_input(OFFCPU_INPUT, &o))) {
        T_EQ_INT(p->sample.n, 96);
        T_CHECK(weight_sum(p) > 344124304LL);
        pc_profile_free(p);
    }
}

/* glibc order: simpleperf writes every context switch first, then each
 * thread's samples at the end of the file.  Times in ms:
 *   tid 10: cpu@1, switch@2 (out 2, in 5), cpu@6, switch@7 (out 7, in 10),
 *           cpu@9, switch@11 (out 11, never back)
 *   tid 11: cpu@3, switch@4 (out 4, in 8), cpu@20
 * In time order the off-CPU samples last 3, 2 (the sample at 9 comes
 * before the switch in at 10), 9 (pending: until the last event, at 20)
 * and 4 ms.  Pairing in file order, as simpleperf's readers do, would give
 * 4, 2, dropped and 16 ms, since no switch follows a sample in the file. */
static void glibc_ordered(spe *e)
{
    static const char *const events[] = {"cpu-clock", "sched:sched_switch"};
    static const char *const syms[] = {"main", "work"};
    static const struct { uint32_t tid; int on; unsigned ms; } sw[] = {
        {10, 0, 2}, {11, 0, 4}, {10, 1, 5}, {10, 0, 7}, {11, 1, 8},
        {10, 1, 10}, {10, 0, 11}};
    static const struct { int32_t tid; uint32_t ev; unsigned ms; } s[] = {
        {10, 0, 1}, {10, 1, 2}, {10, 0, 6}, {10, 1, 7}, {10, 0, 9}, {10, 1, 11},
        {11, 0, 3}, {11, 1, 4}, {11, 0, 20}};
    spe_frame chain[] = {{0x20, 0, 1, -1}, {0x10, 0, 0, -1}};
    spe_begin(e);
    spe_meta(e, events, 2, NULL, NULL, NULL, NULL, 1);
    for (size_t i = 0; i < sizeof sw / sizeof *sw; i++)
        spe_switch(e, sw[i].on, FX_T0 + sw[i].ms * FX_MS, sw[i].tid);
    for (size_t i = 0; i < sizeof s / sizeof *s; i++)
        spe_sample(e, FX_T0 + s[i].ms * FX_MS, s[i].tid, s[i].ev ? 1 : 1000000,
                   s[i].ev, chain, 2, NULL);
    spe_lost(e, 9, 0);
    spe_file(e, 0, "/usr/bin/app", syms, 2);
    spe_thread(e, 10, 10, "app");
    spe_thread(e, 11, 10, "worker");
    spe_end(e);
}

/* Off-CPU weights in ms of one thread, "a,b,c". */
static const char *off_weights(const pc_profile *p, int64_t tid)
{
    static char buf[256];
    uint32_t t = find_thread(p, tid);
    buf[0] = 0;
    for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++) {
        size_t used = strlen(buf);
        if (pc_sample_event(p, i) == 1)
            snprintf(buf + used, sizeof buf - used, "%s%lld", used ? "," : "",
                     (long long)(pc_sample_weight(p, i) / (int64_t)FX_MS));
    }
    return buf;
}

TEST(offcpu_glibc_order)
{
    spe e;
    pc_options o;
    pc_profile *p;
    pc_error err;
    glibc_ordered(&e);
    pc_options_init(&o);
    o.offcpu = PC_OFFCPU_ON_OFF;
    T_EQ_INT(convert_bytes(e.out.data, e.out.len, &o, &p, &err), PC_OK);
    if (p) {
        T_EQ_STR(off_weights(p, 10), "3,2,9");
        T_EQ_STR(off_weights(p, 11), "4");
        /* On-CPU samples keep their period. */
        T_EQ_INT(pc_sample_weight(p, p->sample.first[find_thread(p, 11)]), 1000000);
        pc_profile_free(p);
    }
    spe_free(&e);
}

/* Off-CPU time is in the off-CPU category because of the sample's event,
 * whatever the leaf's name: in the mixed mode, where on- and off-CPU
 * samples share a timeline, the same function shows in its file's
 * category when the thread ran in it and off-CPU when it waited in it,
 * under the same name.  Where off-CPU samples have tracks or an event of
 * their own, they keep their files' categories, so that their graphs show
 * where the thread waited. */
TEST(offcpu_leaf_category)
{
    spe e;
    pc_options o;
    pc_profile *p;
    pc_error err;
    glibc_ordered(&e);
    static const int modes[] = {PC_OFFCPU_ON_OFF, PC_OFFCPU_MIXED, PC_OFFCPU_OFF};
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        t_case("offcpu leaf category, mode %d", modes[m]);
        pc_options_init(&o);
        o.offcpu = modes[m];
        T_EQ_INT(convert_bytes(e.out.data, e.out.len, &o, &p, &err), PC_OK);
        if (!p)
            continue;
        size_t off = 0, on = 0;
        for (size_t i = 0; i < p->sample.n; i++) {
            uint32_t s = p->sample.stack[i];
            T_EQ_STR(stack_text(p, s), "main;work");
            int cat = p->frame.cat[p->stack.frame[s]];
            off += cat == PC_CAT_OFFCPU;
            on += cat == PC_CAT_USER;
            /* The caller keeps its file's category. */
            T_EQ_INT(p->frame.cat[p->stack.frame[p->stack.prefix[s]]], PC_CAT_USER);
        }
        int mixed = modes[m] == PC_OFFCPU_MIXED;
        T_EQ_INT(off, mixed ? 4 : 0);
        T_EQ_INT(on, mixed ? 5 : modes[m] == PC_OFFCPU_OFF ? 4 : 9);
        /* Off-CPU samples are known either way. */
        size_t known = 0;
        for (size_t i = 0; i < p->sample.n; i++)
            known += pc_sample_offcpu(p, i);
        T_EQ_INT(known, 4);
        pc_profile_free(p);
    }
    spe_free(&e);
}

TEST(offcpu_option_errors)
{
    pc_options o;
    pc_error err;
    pc_options_init(&o);
    o.offcpu = PC_OFFCPU_OFF;
    T_EQ_INT(convert_fixture_status(&o, &err), PC_EUSAGE);
    T_CONTAINS(err.message, "options.offcpu: this recording has no off-CPU samples");

    spe e;
    pc_profile *p;
    glibc_ordered(&e);
    o.event = "cpu-clock";
    T_EQ_INT(convert_bytes(e.out.data, e.out.len, &o, &p, &err), PC_EUSAGE);
    T_CONTAINS(err.message, "options.offcpu and options.event cannot be used together");
    spe_free(&e);
}

/* An off-CPU recording of process 10 where the worker (tid 12) runs most,
 * the main thread (10) runs a little, and tid 11 sleeps for most of the
 * recording: waiting is no activity.  Times in ms. */
static void sleepy(spe *e, const char *app)
{
    static const char *const events[] = {"cpu-clock", "sched:sched_switch"};
    static const char *const syms[] = {"main", "work", "wait"};
    static const struct { int32_t tid; uint32_t ev; unsigned ms; } s[] = {
        {10, 0, 1}, {10, 1, 2}, {10, 0, 150},
        {11, 0, 1}, {11, 1, 2}, {11, 0, 190},
        {12, 0, 1}, {12, 0, 2}, {12, 0, 3}, {12, 0, 4}, {12, 0, 5}};
    spe_frame run[] = {{0x20, 0, 1, -1}, {0x10, 0, 0, -1}};
    spe_frame wait[] = {{0x30, 0, 2, -1}, {0x10, 0, 0, -1}};
    spe_begin(e);
    spe_meta(e, events, 2, app, NULL, NULL, NULL, 1);
    for (size_t i = 0; i < sizeof s / sizeof *s; i++)
        spe_sample(e, FX_T0 + s[i].ms * FX_MS, s[i].tid, s[i].ev ? 1 : 1000000, s[i].ev,
                   s[i].ev ? wait : run, 2, NULL);
    spe_file(e, 0, "/system/bin/app_process64", syms, 3);
    spe_thread(e, 10, 10, "com.example.app");
    spe_thread(e, 11, 10, "Jit thread pool");
    spe_thread(e, 12, 10, "worker");
    spe_end(e);
}

/* The tid of the thread a processed profile selects first. */
static long long selected_tid(const pc_profile *p)
{
    size_t len = 0;
    char msg[256], *out = written_text(p, PC_FORMAT_FIREFOX, &len);
    long long tid = -1;
    if (!out)
        return -2;
    jv *root = j_parse(out, len, msg, sizeof msg);
    const jv *sel = j_get(j_get(root, "meta"), "initialSelectedThreads");
    if (j_len(sel) == 1)
        tid = j_int(j_get(j_at(j_get(root, "threads"), (size_t)j_int(j_at(sel, 0))), "tid"));
    j_free(root);
    free(out);
    return tid;
}

/* The thread shown first is the app's main thread when the recording names
 * the app, else the one that ran most: time off the CPU does not count. */
TEST(offcpu_selected_thread)
{
    static const char *const apps[] = {NULL, "com.example.app"};
    static const long long want[] = {12, 10};
    for (size_t k = 0; k < 2; k++) {
        t_case("offcpu_selected_thread: app %s", apps[k] ? apps[k] : "unknown");
        spe e;
        pc_profile *p;
        pc_error err;
        sleepy(&e, apps[k]);
        T_EQ_INT(convert_bytes(e.out.data, e.out.len, NULL, &p, &err), PC_OK);
        if (p) {
            T_EQ_INT(selected_tid(p), want[k]);
            pc_profile_free(p);
        }
        spe_free(&e);
    }
}

/* Off-CPU leaves are put on the final stacks: with the waiting function's
 * frames removed, the off-CPU samples end in their caller, still Idle, and
 * still count as no activity. */
TEST(offcpu_leaves_after_removed_frames)
{
    spe e;
    pc_profile *p;
    pc_error err;
    pc_options o;
    pc_options_init(&o);
    const char *wait_fn[] = {"^wait$"};
    o.remove_methods = (pc_strings){wait_fn, 1};
    sleepy(&e, NULL);
    T_EQ_INT(convert_bytes(e.out.data, e.out.len, &o, &p, &err), PC_OK);
    if (p) {
        size_t off = 0;
        for (size_t i = 0; i < p->sample.n; i++)
            if (pc_sample_offcpu(p, i)) {
                off++;
                T_EQ_STR(stack_text(p, p->sample.stack[i]), "main");
                T_EQ_INT(p->frame.cat[p->stack.frame[p->sample.stack[i]]], PC_CAT_OFFCPU);
            }
        T_EQ_INT(off, 2);
        T_EQ_INT(selected_tid(p), 12);
        pc_profile_free(p);
    }
    spe_free(&e);
}

/* The events a profile shows are those of the mode chosen. */
TEST(offcpu_events_shown)
{
    static const struct {
        int mode;
        const char *title;
    } cases[] = {
        {PC_OFFCPU_ON, "com.example.app (simpleperf: cpu-clock)"},
        {PC_OFFCPU_OFF, "com.example.app (simpleperf: sched:sched_switch)"},
        {PC_OFFCPU_ON_OFF, "com.example.app (simpleperf: cpu-clock, sched:sched_switch)"},
        {PC_OFFCPU_MIXED, "com.example.app (simpleperf: cpu-clock + sched:sched_switch)"},
    };
    spe e;
    sleepy(&e, NULL);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        t_case("offcpu_events_shown: mode %d", cases[k].mode);
        pc_options o;
        pc_options_init(&o);
        o.offcpu = cases[k].mode;
        pc_profile *p;
        pc_error err;
        T_EQ_INT(convert_bytes(e.out.data, e.out.len, &o, &p, &err), PC_OK);
        char *json = p ? written_text(p, PC_FORMAT_FIREFOX, NULL) : NULL;
        char want[200];
        snprintf(want, sizeof want, "\"product\":\"%s\"", cases[k].title);
        T_CONTAINS(json, want);
        free(json);
        pc_profile_free(p);
    }
    spe_free(&e);
}
