/* Extreme values from the input through every transform and every output
 * format: ids of INT64_MIN and INT64_MAX, times near UINT64_MAX, weights
 * and heap bytes at the top of their range.  Under the sanitizer build
 * (make SAN=1) any signed overflow or bad shift aborts; everywhere the
 * outputs must stay valid, deterministic and self-consistent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonmini.h"
#include "pf_encode.h"
#include "pprof_read.h"
#include "processed_valid.h"
#include "gecko_valid.h"
#include "sp_encode.h"
#include "t.h"
#include "test_util.h"

#define U64_TOP 0xffffffffffffffffULL

/* ---- Inputs ---- */

/* A PerfSample packet on sequence 1 with every field given as a raw
 * varint, so that ids can take any 64-bit value. */
static void pf_sample(pb_buf *b, uint64_t ts, uint64_t pid, uint64_t tid, uint64_t cpu,
                      uint64_t cs, uint64_t count)
{
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_TIMESTAMP, ts);
    size_t m = pb_begin(b, 66);
    pb_uint(b, 1, cpu);
    pb_uint(b, 2, pid);
    pb_uint(b, 3, tid);
    pb_uint(b, 4, cs);
    pb_uint(b, 6, count);
    pb_end(b, m);
    pb_end(b, pk);
}

/* One heapprofd dump of process pid at ts, with rows of callstacks 1 to
 * 3 (pfe_heap_callstacks) holding the given bytes. */
static void pf_heap_dump(pb_buf *b, uint64_t index, uint64_t pid, uint64_t ts,
                         uint64_t alloc, uint64_t freed)
{
    size_t pk = pfe_packet(b, 9);
    if (index == 0)
        pb_uint(b, PFE_CLEARED, 1);
    size_t pp = pb_begin(b, 37);
    pb_uint(b, 7, index);
    size_t hd = pb_begin(b, 5);
    pb_uint(b, 1, pid);
    pb_uint(b, 9, ts);
    pb_string(b, 11, "libc.malloc");
    for (uint64_t cs = 1; cs <= 3; cs++) {
        size_t s = pb_begin(b, 2);
        pb_uint(b, 1, cs);
        pb_uint(b, 2, alloc);
        pb_uint(b, 3, freed);
        pb_uint(b, 5, alloc);
        pb_uint(b, 6, freed);
        pb_end(b, s);
    }
    pb_end(b, hd);
    pb_end(b, pp);
    if (index == 0)
        pfe_heap_callstacks(b);
    pb_end(b, pk);
}

/* Samples of threads at both ends of the id range, at times from 1 to
 * near UINT64_MAX, with counter deltas at the top of the range. */
static void trace_samples(pb_buf *b)
{
    pfe_perf_defaults(b, 1, 0, 1 /* cpu-clock */, 0);
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_TIMESTAMP, 1);
    pfe_heap_callstacks(b);
    pb_end(b, pk);
    const uint64_t max = INT64_MAX, min = (uint64_t)INT64_MIN;
    const uint64_t ids[][2] = {{max, max}, {min, min}, {max, min}, {min, max},
                               {U64_TOP, U64_TOP}, {0, 0}, {max, max - 1}};
    const uint64_t times[] = {1, U64_TOP - 1, U64_TOP, 2, U64_TOP / 2, U64_TOP - 7, 3};
    const uint64_t counts[] = {0, U64_TOP, 1, U64_TOP - 1, max, 0, U64_TOP};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
        for (size_t k = 0; k < sizeof times / sizeof *times; k++)
            pf_sample(b, times[(i + k) % 7], ids[i][0], ids[i][1], k % 2 ? 65535 : k % 3,
                      1 + k % 3, counts[(i * 3 + k) % 7]);
}

/* The samples and heap dumps of the processes INT64_MAX and INT64_MIN,
 * bytes at the top of the range. */
static void trace_heap(pb_buf *b)
{
    trace_samples(b);
    pf_heap_dump(b, 0, INT64_MAX, 5, U64_TOP, 0);
    pf_heap_dump(b, 1, INT64_MAX, U64_TOP - 3, U64_TOP, U64_TOP - 1);
    pf_heap_dump(b, 2, (uint64_t)INT64_MIN, U64_TOP, (uint64_t)INT64_MAX + 1, 1);
    pf_heap_dump(b, 3, (uint64_t)INT64_MIN, 0, 1, U64_TOP);
}

/* Heap dumps alone: one-value formats write the heap. */
static void trace_heap_only(pb_buf *b)
{
    pf_heap_dump(b, 0, INT64_MAX, 5, U64_TOP, 0);
    pf_heap_dump(b, 1, INT64_MAX, U64_TOP - 3, U64_TOP, U64_TOP - 1);
    pf_heap_dump(b, 2, (uint64_t)INT64_MIN, U64_TOP, (uint64_t)INT64_MAX + 1, 1);
    pf_heap_dump(b, 3, U64_TOP, 0, 1, U64_TOP);
}

/* perf script: the largest ids, times and periods the text can say. */
static const char perf_text[] =
    "big 9223372036854775807/9223372036854775807 [000] 18446744073.709551614: "
    "18446744073709551615 cycles:\n"
    "\tffffffffffffffff main (/bin/big)\n"
    "\n"
    "big 9223372036854775807/9223372036854775807 [001] 0.000000001: "
    "9223372036854775807 cycles:\n"
    "\t1 main (/bin/big)\n"
    "\n"
    "big 9223372036854775807/9223372036854775806 [002] 18446744073.709551615: "
    "9223372036854775808 cycles:\n"
    "\t1 main (/bin/big)\n"
    "\n"
    "zero 0/0 [003] 9223372036.854775807: 1 cycles:\n"
    "\t2 zero (/bin/zero)\n"
    "\n";

/* perf script: a time past what 64 bits of nanoseconds hold is no
 * header, whatever its digits. */
static const char perf_text_too_late[] =
    "big 1/1 [000] 18446744073.709551616: 1 cycles:\n"
    "\t1 main (/bin/big)\n";

/* simpleperf --trace-offcpu: an off-CPU sample whose wait lasts from the
 * recording's first nanosecond to near UINT64_MAX, weights at the top. */
static void simpleperf_offcpu(spe *e)
{
    static const char *const events[] = {"cpu-clock", "sched:sched_switch"};
    static const char *const syms[] = {"main", "wait"};
    const spe_frame run[] = {{0x10, 0, 0, -1}}, wait[] = {{0x20, 0, 1, -1}, {0x10, 0, 0, -1}};
    spe_begin(e);
    spe_meta(e, events, 2, NULL, NULL, NULL, NULL, 1);
    spe_sample(e, 1, INT32_MAX, U64_TOP, 0, run, 1, NULL);
    spe_sample(e, 2, INT32_MAX, 1, 1, wait, 2, NULL);
    spe_sample(e, U64_TOP - 1, INT32_MAX, INT64_MAX, 0, run, 1, NULL);
    spe_sample(e, 3, INT32_MIN, U64_TOP, 1, wait, 2, NULL);
    spe_sample(e, U64_TOP, INT32_MIN, U64_TOP, 0, run, 1, NULL);
    spe_switch(e, 0, 2, INT32_MAX);
    spe_switch(e, 1, U64_TOP - 2, INT32_MAX);
    spe_file(e, 0, "/bin/app", syms, 2);
    spe_thread(e, INT32_MAX, INT32_MAX, "max");
    spe_thread(e, (uint32_t)INT32_MIN, (uint32_t)INT32_MIN, "min");
    spe_end(e);
}

/* ---- Checks ---- */

static const int formats[] = {PC_FORMAT_FIREFOX, PC_FORMAT_GECKO, PC_FORMAT_PPROF,
                              PC_FORMAT_FOLDED, PC_FORMAT_SPEEDSCOPE};

/* Heap tracks of the processed profile take tids no other track has,
 * even past INT64_MAX.  (Other tracks can share one: a tid the input
 * gives to two processes, the two halves of a thread in on-off-cpu
 * mode.) */
static void heap_tids_apart(const char *json, size_t len)
{
    char msg[256];
    jv *root = j_parse(json, len, msg, sizeof msg);
    if (!root) {
        t_fail(__FILE__, __LINE__, "processed JSON unreadable: %s", msg);
        return;
    }
    const jv *threads = j_get(root, "threads");
    size_t n = j_len(threads);
    for (size_t i = 0; i < n; i++) {
        const char *name = j_str(j_get(j_at(threads, i), "name"));
        if (!name || !strstr(name, " bytes)"))
            continue;
        for (size_t k = 0; k < n; k++) {
            const char *a = j_num_text(j_get(j_at(threads, i), "tid"));
            const char *b = j_num_text(j_get(j_at(threads, k), "tid"));
            if (k != i && a && b && strcmp(a, b) == 0)
                t_fail(__FILE__, __LINE__, "heap track %zu and track %zu share tid %s", i, k,
                       a);
        }
    }
    j_free(root);
}

/* Writes p in every format, twice (the same bytes), each output checked
 * by the validator its format has; pprof once per process too. */
static void write_all(const pc_profile *p, const char *what)
{
    for (size_t f = 0; f < sizeof formats / sizeof *formats; f++) {
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = formats[f];
        if (formats[f] == PC_FORMAT_FOLDED)
            w.folded_prefix = PC_FOLDED_PROCESS | PC_FOLDED_THREAD;
        unsigned char *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        pc_error err;
        int st = pc_write_memory(p, &w, &a, &na, &err);
        /* Heap profiles have no place in the Gecko format. */
        if (st == PC_EUSAGE && formats[f] == PC_FORMAT_GECKO && p->heap.n)
            continue;
        if (st != PC_OK) {
            t_fail(__FILE__, __LINE__, "%s, format %d: %s", what, formats[f], err.message);
            continue;
        }
        T_EQ_INT(pc_write_memory(p, &w, &b, &nb, &err), PC_OK);
        T_CHECK(na == nb && b && memcmp(a, b, na) == 0);
        char msg[512];
        if (formats[f] == PC_FORMAT_FIREFOX) {
            if (processed_check_text((const char *)a, na, msg, sizeof msg))
                t_fail(__FILE__, __LINE__, "%s: processed: %s", what, msg);
            heap_tids_apart((const char *)a, na);
        } else if (formats[f] == PC_FORMAT_GECKO) {
            if (gecko_check_text((const char *)a, na, msg, sizeof msg))
                t_fail(__FILE__, __LINE__, "%s: gecko: %s", what, msg);
        } else if (formats[f] == PC_FORMAT_SPEEDSCOPE) {
            jv *doc = j_parse((const char *)a, na, msg, sizeof msg);
            if (!doc)
                t_fail(__FILE__, __LINE__, "%s: speedscope: %s", what, msg);
            j_free(doc);
        } else if (formats[f] == PC_FORMAT_PPROF) {
            pp_profile pp;
            if (pp_read(a, na, &pp, msg, sizeof msg) != 0)
                t_fail(__FILE__, __LINE__, "%s: pprof: %s", what, msg);
            else
                pp_free(&pp);
        }
        free(a);
        free(b);
    }
    /* One pprof profile per process, as --pprof-split writes them. */
    int64_t *pids = NULL;
    size_t n = 0;
    pc_error err;
    T_EQ_INT(pc_profile_pids(p, &pids, &n, &err), PC_OK);
    for (size_t i = 0; i < n; i++) {
        if (pids[i] < -1)
            continue;  /* not a value write_options.pprof_pid takes */
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = PC_FORMAT_PPROF;
        w.pprof_pid = pids[i];
        unsigned char *a = NULL;
        size_t na = 0;
        T_EQ_INT(pc_write_memory(p, &w, &a, &na, &err), PC_OK);
        free(a);
    }
    free(pids);
}

/* Option sets every input goes through. */
enum { OPT_DEFAULT, OPT_PERCPU, OPT_RANGE, OPT_AGGREGATE, OPT_GAPS, OPT_FILTERS,
       OPT_ALLOCATED, OPT_FREED, OPT_N };

static const char *const opt_names[OPT_N] = {"defaults", "percpu", "time range", "aggregate",
                                             "remove gaps", "id filters", "heap allocated",
                                             "heap freed"};

static void set_options(pc_options *o, int which)
{
    static const char *const all[] = {".*"};
    static int64_t ids[] = {INT64_MAX, 0};
    pc_options_init(o);
    switch (which) {
    case OPT_PERCPU: o->percpu = 1; break;
    case OPT_RANGE:
        o->time_start = 1;
        o->time_end = INT64_MAX;
        break;
    case OPT_AGGREGATE: o->aggregate_threads = (pc_strings){all, 1}; break;
    case OPT_GAPS: o->remove_gaps = 1000; break;
    case OPT_FILTERS:
        o->pids = (pc_ids){ids, 2};
        o->exclude_tids = (pc_ids){ids + 1, 1};
        break;
    case OPT_ALLOCATED:
        o->heap_measure = PC_HEAP_ALLOCATED;
        o->heap_dump = 1;
        break;
    case OPT_FREED: o->heap_measure = PC_HEAP_FREED; break;
    }
}

/* Converts len bytes with every option set and writes every format.
 * Returns how many option sets gave a profile. */
static int through_everything(const void *data, size_t len, const char *name)
{
    int converted = 0;
    for (int which = 0; which < OPT_N; which++) {
        t_case("%s, %s", name, opt_names[which]);
        pc_options o;
        set_options(&o, which);
        pc_profile *p = NULL;
        pc_error err;
        int st = convert_bytes(data, len, &o, &p, &err);
        if (st != PC_OK) {
            /* Nothing to show (the filters, or no CPU numbers) is fine;
             * anything else is not. */
            if (st != PC_EINPUT && st != PC_EUSAGE)
                t_fail(__FILE__, __LINE__, "%s", err.message);
            continue;
        }
        converted++;
        write_all(p, name);
        pc_profile_free(p);
    }
    return converted;
}

TEST(overflow_perfetto_ids_times_weights)
{
    pb_buf b = {0};
    trace_samples(&b);
    T_EQ_INT(through_everything(b.data, b.len, "perfetto samples"), OPT_N);
    /* The thread of tid INT64_MAX is there, under its own number. */
    pc_profile *p = NULL;
    pc_error err;
    if (convert_bytes(b.data, b.len, NULL, &p, &err) == PC_OK) {
        T_CHECK(thread_of(p, INT64_MAX, INT64_MAX) != PC_NONE);
        T_CHECK(thread_of(p, INT64_MIN, INT64_MIN) != PC_NONE);
        /* Weights summed to the top stay at the top in pprof. */
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = PC_FORMAT_PPROF;
        w.pprof_pid = INT64_MAX;
        unsigned char *out = NULL;
        size_t n = 0;
        pp_profile pp;
        char msg[256];
        if (pc_write_memory(p, &w, &out, &n, &err) == PC_OK &&
            pp_read(out, n, &pp, msg, sizeof msg) == 0) {
            for (size_t i = 0; i < pp.n_sample; i++)
                for (size_t v = 0; v < pp.n_sample_type; v++)
                    T_CHECK(pp.sample[i].value[v] >= 0);
            pp_free(&pp);
        }
        free(out);
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

TEST(overflow_perfetto_heap)
{
    pb_buf b = {0};
    trace_heap(&b);
    T_CHECK(through_everything(b.data, b.len, "perfetto samples and heap") > 0);
    pb_buf_free(&b);
    trace_heap_only(&b);
    T_CHECK(through_everything(b.data, b.len, "perfetto heap") > 0);
    pb_buf_free(&b);
}

TEST(overflow_perf_script)
{
    T_EQ_INT(through_everything(perf_text, sizeof perf_text - 1, "perf script"), OPT_N);
    pc_profile *p = NULL;
    pc_error err;
    if (convert_bytes(perf_text, sizeof perf_text - 1, NULL, &p, &err) == PC_OK) {
        T_CHECK(thread_of(p, INT64_MAX, INT64_MAX) != PC_NONE);
        uint64_t last = 0;
        for (size_t i = 0; i < p->sample.n; i++)
            if (pc_sample_time(p, i) > last)
                last = pc_sample_time(p, i);
        T_EQ_INT(last == U64_TOP, 1);
        for (size_t i = 0; i < p->sample.n; i++)
            T_CHECK(pc_sample_weight(p, i) > 0);
    }
    pc_profile_free(p);
    /* Past 2^64 - 1 ns the line is no header (here, no perf script at
     * all): an error, no wrapped time. */
    T_EQ_INT(convert_bytes(perf_text_too_late, sizeof perf_text_too_late - 1, NULL, &p, &err),
             PC_EINPUT);
    T_CONTAINS(err.message, "offset 0: ");
}

TEST(overflow_simpleperf_offcpu)
{
    spe e = {0};
    simpleperf_offcpu(&e);
    T_CHECK(through_everything(e.out.data, e.out.len, "simpleperf") > 0);
    static const int modes[] = {PC_OFFCPU_ON, PC_OFFCPU_OFF, PC_OFFCPU_ON_OFF, PC_OFFCPU_MIXED};
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        t_case("simpleperf off-CPU mode %d", modes[m]);
        pc_options o;
        pc_options_init(&o);
        o.offcpu = modes[m];
        pc_profile *p = NULL;
        pc_error err;
        if (convert_bytes(e.out.data, e.out.len, &o, &p, &err) != PC_OK) {
            t_fail(__FILE__, __LINE__, "%s", err.message);
            continue;
        }
        /* A wait of more than INT64_MAX ns weighs INT64_MAX, not less
         * than nothing. */
        for (size_t i = 0; i < p->sample.n; i++)
            if (pc_sample_offcpu(p, i))
                T_CHECK(pc_sample_weight(p, i) > 0);
        write_all(p, "simpleperf off-CPU");
        pc_profile_free(p);
    }
    spe_free(&e);
}

TEST(overflow_filter_file_ids)
{
    /* An id past INT64_MAX names no thread: refused, not wrapped to a
     * negative id. */
    char path[600];
    snprintf(path, sizeof path, "%s/overflow-filter.txt", t_tmpdir());
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fputs("THREAD_BEGIN 18446744073709551615 0\n", f);
    fclose(f);
    pc_options o;
    pc_options_init(&o);
    o.filter_file = path;
    pc_profile *p = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(perf_text, sizeof perf_text - 1, &o, &p, &err), PC_EINPUT);
    T_CONTAINS(err.message, "overflow-filter.txt:1: THREAD_BEGIN takes an id");
    pc_profile_free(p);
    f = fopen(path, "w");
    if (!f)
        return;
    fputs("THREAD_BEGIN 9223372036854775807 0\nTHREAD_END 9223372036854775807 "
          "18446744073709551615\n", f);
    fclose(f);
    T_EQ_INT(convert_bytes(perf_text, sizeof perf_text - 1, &o, &p, &err), PC_OK);
    if (p)
        T_CHECK(p->sample.n >= 2);
    pc_profile_free(p);
}
