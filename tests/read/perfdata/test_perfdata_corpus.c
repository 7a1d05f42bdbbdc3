/* The oracle for the perf.data reader: every recording in the corpus's
 * perf_data/ against the report-sample file simpleperf made from it.
 * Both are converted with the same options; each sample is compared as
 * (tid, time, event, weight, root-first frame names), and the threads by
 * (pid, tid, name).  The differences that remain are listed below with
 * their reasons; a difference not listed fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "t.h"
#include "test_util.h"

typedef struct pair {
    const char *data;    /* perf_data/<data>.data */
    const char *trace;   /* inputs/<trace> */
    int gaps0;           /* the trace was made with --remove-gaps 0 */
    int art;             /* ... and with --show-art-frames */
    int linux_perf;      /* recorded by Linux perf: events as perf names them */
} pair;

static const pair pairs[] = {
    /* Recorded by Linux perf, whose own tools are the oracle: listed
     * differences with report-sample are
     *   - the event: perf names it "cycles" (the recording's event
     *     description), simpleperf "cpu-cycles" from its own table;
     *   - frames in files not on this machine: "libc-2.19.so+0x372ed" by
     *     file offset, as perf, where simpleperf counts from the mapping's
     *     start, and JIT code under the process's perf-PID.map;
     *   - report-sample leaves out 2 of the 156 samples that perf script
     *     prints (tid 2728 at 349390.281117 and one more); profconv keeps
     *     all 156.
     * So for this file only (tid, time, weight) are compared, and
     * report-sample's samples must all be there. */
    {"generated_by_linux_perf", "generated_by_linux_perf.callchain.trace", 0, 0, 1},
    {"perf", "perf.callchain.gaps0.trace", 1, 0, 0},
    {"perf_b", "perf_b.callchain.trace", 0, 0, 0},
    {"perf_display_bitmaps", "perf_display_bitmaps.callchain.gaps0.trace", 1, 0, 0},
    {"perf_display_bitmaps", "perf_display_bitmaps.callchain.trace", 0, 0, 0},
    {"perf_g_fp", "perf_g_fp.callchain.trace", 0, 0, 0},
    {"perf_need_proguard_mapping", "perf_need_proguard_mapping.callchain.gaps0.trace", 1, 0, 0},
    {"perf_test_vmlinux", "perf_test_vmlinux.callchain.gaps0.trace", 1, 0, 0},
    {"perf_with_callchain_record", "perf_with_callchain_record.callchain.trace", 0, 0, 0},
    {"perf_with_failed_unwinding_debug_info",
     "perf_with_failed_unwinding_debug_info.callchain.gaps0.trace", 1, 0, 0},
    /* Files with execution types: the JIT frames are known as such on both
     * sides (the java frames transform merges a JIT frame into its caller
     * of the same method only when it knows). */
    {"perf_with_interpreter_frames", "perf_with_interpreter_frames.exectype.trace", 0, 0, 0},
    {"perf_with_interpreter_frames", "perf_with_interpreter_frames.artframes.exectype.trace", 1,
     1, 0},
    {"perf_with_ip_zero_in_callchain", "perf_with_ip_zero_in_callchain.callchain.gaps0.trace",
     1, 0, 0},
    {"perf_with_jit_symbol", "perf_with_jit_symbol.exectype.trace", 0, 0, 0},
    {"perf_with_kernel_symbols_available_false",
     "perf_with_kernel_symbols_available_false.callchain.trace", 0, 0, 0},
    {"perf_with_kernel_symbols_available_true",
     "perf_with_kernel_symbols_available_true.callchain.trace", 0, 0, 0},
    {"perf_with_long_callchain", "perf_with_long_callchain.callchain.trace", 0, 0, 0},
    {"perf_with_meta_info", "perf_with_meta_info.callchain.gaps0.trace", 1, 0, 0},
    {"perf_with_multiple_pids_and_tids", "perf_with_multiple_pids_and_tids.callchain.trace", 0, 0, 0},
    {"perf_with_symbols", "perf_with_symbols.callchain.trace", 0, 0, 0},
    {"perf_with_trace_offcpu_v2", "perf_with_trace_offcpu_v2.callchain.gaps0.trace", 1, 0, 0},
    {"perf_with_trace_offcpu_v2", "perf_with_trace_offcpu_v2.callchain.trace", 0, 0, 0},
    {"perf_with_tracepoint_event", "perf_with_tracepoint_event.callchain.trace", 0, 0, 0},
    {"perf_with_two_event_types", "perf_with_two_event_types.callchain.trace", 0, 0, 0},
    {"runtest_two_functions_arm64_perf", "runtest_two_functions_arm64_perf.callchain.trace", 0, 0, 0},
    {"two_process_perf", "two_process_perf.callchain.trace", 0, 0, 0},
};

/* One line per sample, sorted: the two conversions are compared as
 * multisets, so that samples of equal time may come in any order. */
static char **sample_lines(const pc_profile *p, size_t *n, int no_event)
{
    char **v = calloc(p->sample.n + 1, sizeof *v);
    for (size_t i = 0; i < p->sample.n; i++) {
        uint32_t t = pc_sample_thread(p, i);
        const char *stack = p->sample.stack[i] == PC_NONE ? "" : stack_text(p, p->sample.stack[i]);
        size_t len = strlen(stack) + 128;
        v[i] = malloc(len);
        if (no_event)
            stack = "";
        snprintf(v[i], len, "tid %lld time %llu event %s weight %lld: %s",
                 (long long)p->thread.tid[t], (unsigned long long)pc_sample_time(p, i),
                 no_event ? "-" : str_of(p, p->event.name[pc_sample_event(p, i)]),
                 (long long)pc_sample_weight(p, i),
                 stack);
        /* Listed difference: the names were demangled by simpleperf's
         * demangler (LLVM's), which closes nested templates as ">>"; the
         * C++ runtime's, which profconv uses, writes "> >". */
        char *q;
        while ((q = strstr(v[i], "> >")) != NULL)
            memmove(q + 1, q + 2, strlen(q + 2) + 1);
    }
    *n = p->sample.n;
    return v;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_lines(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static pc_profile *convert_file(const char *rel, const pc_options *o)
{
    size_t len;
    pc_profile *p = NULL;
    pc_error err;
    unsigned char *data = corpus_read(rel, &len);
    if (!data) {
        t_fail(__FILE__, __LINE__, "%s: unreadable", rel);
        return NULL;
    }
    if (convert_bytes_unchecked(data, len, o, &p, &err) != PC_OK)
        t_fail(__FILE__, __LINE__, "%s: %s", rel, err.message);
    free(data);
    return p;
}

static void compare_pair(const pair *pr)
{
    char rel[256];
    pc_options o;
    pc_options_init(&o);
    if (pr->gaps0)
        o.remove_gaps = 0;
    o.show_art_frames = pr->art;
    /* Raw symbol names on both sides: the two demanglers format some
     * names apart ("> >", "[clone ...]"), which says nothing of the
     * reader. */
    o.mangled = 1;
    snprintf(rel, sizeof rel, "perf_data/%s.data", pr->data);
    pc_profile *a = convert_file(rel, &o);
    snprintf(rel, sizeof rel, "inputs/%s", pr->trace);
    pc_profile *b = convert_file(rel, &o);
    if (!a || !b) {
        pc_profile_free(a);
        pc_profile_free(b);
        return;
    }
    size_t na, nb;
    char **la = sample_lines(a, &na, pr->linux_perf), **lb = sample_lines(b, &nb, pr->linux_perf);
    qsort(la, na, sizeof *la, cmp_str);
    qsort(lb, nb, sizeof *lb, cmp_str);
    size_t i = 0, j = 0, only_a = 0, only_b = 0;
    char first_a[600] = "", first_b[600] = "";
    const char *fa = NULL, *fb = NULL;
    while (i < na || j < nb) {
        int c = i == na ? 1 : j == nb ? -1 : strcmp(la[i], lb[j]);
        if (c == 0) {
            i++;
            j++;
        } else if (c < 0) {
            if (!only_a++)
                fa = la[i];
            i++;
        } else {
            if (!only_b++)
                fb = lb[j];
            j++;
        }
    }
    if (fa && fb) {
        /* Where the first two unmatched lines part. */
        size_t k = 0;
        while (fa[k] && fa[k] == fb[k])
            k++;
        size_t from = k > 120 ? k - 120 : 0;
        snprintf(first_a, sizeof first_a, "...%.300s", fa + from);
        snprintf(first_b, sizeof first_b, "...%.300s", fb + from);
    } else {
        snprintf(first_a, sizeof first_a, "%.300s", fa ? fa : "");
        snprintf(first_b, sizeof first_b, "%.300s", fb ? fb : "");
    }
    if (pr->linux_perf) {
        T_EQ_INT(na, 156);
        T_EQ_INT(only_a, 2);
        T_EQ_INT(only_b, 0);
    } else if (only_a || only_b)
        t_fail(__FILE__, __LINE__, "%s vs %s: %zu samples only from perf.data (first: %s), "
               "%zu only from report-sample (first: %s)", pr->data, pr->trace, only_a, first_a,
               only_b, first_b);
    /* Threads: every thread with samples, by pid, tid and name. */
    for (size_t t = 0; t < b->thread.n; t++) {
        if (!thread_samples(b, (uint32_t)t))
            continue;
        uint32_t u = thread_of(a, b->thread.pid[t], b->thread.tid[t]);
        if (u == PC_NONE) {
            t_fail(__FILE__, __LINE__, "%s: thread %lld/%lld missing", pr->data,
                   (long long)b->thread.pid[t], (long long)b->thread.tid[t]);
            continue;
        }
        /* Listed difference: a thread the recording never named is
         * "unknown" to simpleperf and "thread TID" to profconv, as in
         * every input. */
        char unnamed[64];
        snprintf(unnamed, sizeof unnamed, "thread %lld", (long long)b->thread.tid[t]);
        const char *want = str_of(b, b->thread.name[t]);
        if (strcmp(want, "unknown") == 0)
            want = unnamed;
        T_EQ_STR(str_of(a, a->thread.name[u]), want);
    }
    free_lines(la, na);
    free_lines(lb, nb);
    pc_profile_free(a);
    pc_profile_free(b);
}

TEST(perfdata_corpus_equals_report_sample)
{
    if (!t_shared()) {
        t_skip("the shared corpus is absent");
        return;
    }
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        t_case("%s", pairs[i].trace);
        compare_pair(&pairs[i]);
    }
}
