/* The Perfetto reader against trace_processor's diff tests of samples,
 * counters, stacks and symbols (../shared/corpus/perfetto/difftests): every
 * diff test that has a trace and no heap profile, against the figures of its
 * expected output.  The table maps each diff test to its check or to the
 * reason it cannot apply; test_perfetto_heap_difftests.c holds the heap
 * profiles' table.  Expected values are always read from the corpus files,
 * never written here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonmini.h"
#include "pf_corpus.h"
#include "t.h"
#include "test_util.h"

/* Each expected name (column col) is the name of a frame the samples or
 * heap rows reach; each obfuscated name (column old, if given) is not. */
static void names_present(const dt *c, const char *col, const char *old)
{
    T_CHECK(c->want.rows > 0);
    for (size_t r = 0; r < c->want.rows; r++) {
        const char *name = csv_get(&c->want, r, col);
        if (name && count_frames(c->p, name, -1) == 0)
            t_fail(__FILE__, __LINE__, "no frame named \"%s\"", name);
        const char *o = old ? csv_get(&c->want, r, old) : NULL;
        if (o && count_frames(c->p, o, -1) != 0)
            t_fail(__FILE__, __LINE__, "frame \"%s\" kept its obfuscated name", o);
    }
}

static void ck_deobfuscated(const dt *c)
{
    names_present(c, "deobfuscated_name", "name");
}

/* R8 inline positions: the rows list each obfuscated frame's chain leaf
 * first, ending with the outer (not inlined) method; each chain is one
 * run of frames in some stack. */
static void ck_inline_positions(const dt *c)
{
    char *stacks = all_stacks(c->p);
    char chain[1024] = "";
    T_CHECK(c->want.rows > 0);
    for (size_t r = 0; r < c->want.rows; r++) {
        char tmp[2048];
        const char *name = csv_get(&c->want, r, "deobfuscated_name");
        if ((size_t)snprintf(tmp, sizeof tmp, "%s%s%s", name ? name : "", chain[0] ? ";" : "",
                             chain) >= sizeof chain) {
            t_fail(__FILE__, __LINE__, "chain too long");
            break;
        }
        memcpy(chain, tmp, strlen(tmp) + 1);
        if (csv_int(&c->want, r, "inlined") == 0) {
            if (!strstr(stacks, chain))
                t_fail(__FILE__, __LINE__, "no stack holds the chain %s", chain);
            chain[0] = 0;
        }
    }
    free(stacks);
}

/* Frames of an interpreter stack by depth from the root: name, mapping
 * and category. */
static void ck_annotations(const dt *c)
{
    const pc_profile *p = c->p;
    T_CHECK(c->want.rows > 0);
    T_EQ_INT(p->sample.n, 1);
    if (p->sample.n != 1)
        return;
    uint32_t chain[64];
    size_t depth = 0;
    for (uint32_t s = p->sample.stack[0]; s != PC_NONE && depth < 64; s = p->stack.prefix[s])
        chain[depth++] = s;
    T_EQ_INT(depth, c->want.rows);
    {
        for (size_t r = 0; r < c->want.rows && r < depth; r++) {
            uint32_t f = p->stack.frame[chain[depth - 1 - r]];
            T_EQ_STR(frame_name(p, f), csv_get(&c->want, r, "frame_name"));
            T_EQ_STR(frame_module(p, f), csv_get(&c->want, r, "map_name"));
            /* The interpreted managed frame is Java; ART's own are native. */
            const char *a = csv_get(&c->want, r, "annotation");
            if (a && strcmp(a, "interp") == 0)
                T_EQ_INT(p->frame.cat[f], PC_CAT_DEX);
            else
                T_EQ_INT(p->frame.cat[f], PC_CAT_NATIVE);
        }
    }
}

/* The expected counter table, row for row: each row is one counter
 * value here, at its time (ts_col), of its value, on its CPU (cpu_col) and
 * of its counter's name (name_col), where the query gives them; and no
 * other value.  The diff tests' traces read each counter once, so a
 * value is the counter's reading. */
static void ck_counter_rows(const dt *c, const char *ts_col, const char *value_col,
                            const char *cpu_col, const char *name_col)
{
    const pc_profile *p = c->p;
    T_EQ_INT(p->counter.n, c->want.rows);
    for (size_t r = 0; r < c->want.rows; r++) {
        const char *v = csv_get(&c->want, r, value_col);
        long long want = v ? (long long)strtod(v, NULL) : -1;
        size_t found = 0;
        for (size_t i = 0; i < p->counter.n; i++)
            found += p->counter.value[i] == want &&
                     (!ts_col || p->counter.time[i] == (uint64_t)csv_int(&c->want, r, ts_col)) &&
                     (!cpu_col || p->counter.cpu[i] == csv_int(&c->want, r, cpu_col)) &&
                     (!name_col || strcmp(str_of(p, p->event.name[p->counter.event[i]]),
                                          csv_get(&c->want, r, name_col)) == 0);
        if (found != 1)
            t_fail(__FILE__, __LINE__, "row %zu: %zu counter values of %lld", r, found, want);
    }
}

/* Skipped samples are reported, not kept; their count is a counter
 * value. */
static void ck_counter_only_excluded(const dt *c)
{
    T_EQ_INT(c->p->sample.n, csv_int(&c->want, 0, "profiling_samples"));
    T_EQ_INT(c->p->counter.n, csv_int(&c->want, 0, "perf_samples"));
    char want[64];
    snprintf(want, sizeof want, "%lld perf samples were skipped",
             csv_int(&c->want, 0, "perf_samples"));
    T_CONTAINS(c->log, want);
}

/* Of two sessions, the one with callstacks: one sample at its time. */
static void ck_timebase_filter(const dt *c)
{
    const pc_profile *p = c->p;
    size_t stacked = 0;
    for (size_t i = 0; i < p->sample.n; i++)
        if (p->sample.stack[i] != PC_NONE) {
            stacked++;
            T_EQ_INT(pc_sample_time(p, i), csv_int(&c->want, 0, "profiling_ts"));
        }
    T_EQ_INT(stacked, csv_int(&c->want, 0, "profiling_samples"));
    /* One session per timebase: different events. */
    T_EQ_INT(p->event.n, csv_int(&c->want, 0, "ns_sessions") +
                                   csv_int(&c->want, 0, "count_sessions"));
}

/* A skipped counter-only sample: not a sample here, but reported, and
 * its count a counter value at its time. */
static void ck_counter_only(const dt *c)
{
    T_EQ_INT(c->p->sample.n, csv_int(&c->want, 0, "stack_sample_count"));
    T_CONTAINS(c->log, "1 perf samples were skipped");
    ck_counter_rows(c, "ts", "value", NULL, NULL);
}

/* The counted sample's count is a counter value; the next, with neither
 * a count nor a callstack, is left out, said so. */
static void ck_timebase_count(const dt *c)
{
    T_EQ_INT(c->p->sample.n, 0);
    ck_counter_rows(c, "ts", "value", NULL, NULL);
    T_CONTAINS(c->log, "1 perf samples carry neither a callstack nor a count");
}

/* The timebase and both followers of the sample's counter set. */
static void ck_counter_set(const dt *c)
{
    T_EQ_INT(c->p->sample.n, 0);
    ck_counter_rows(c, NULL, "value", NULL, NULL);
}

/* The timebase and followers at the sample's time, on its CPU; the
 * timebase's is the session's timebase event. */
static void ck_followers(const dt *c)
{
    T_EQ_INT(csv_int(&c->want, 0, "is_timebase"), 1);
    T_EQ_INT(c->p->sample.n, 0);
    ck_counter_rows(c, "ts", "value", "cpu", NULL);
    for (size_t i = 0; i < c->p->counter.n; i++)
        if (c->p->counter.value[i] == (int64_t)strtod(csv_get(&c->want, 0, "value"), NULL))
            T_EQ_STR(str_of(c->p, c->p->event.name[c->p->counter.event[i]]), "cpu-clock");
}

/* Each counter by its name. */
static void ck_counters_view(const dt *c)
{
    ck_counter_rows(c, "ts", "counter_value", NULL, "counter_name");
}

/* unknown-name frames: named ones keep their name, the others are
 * named from their mapping and rel_pc. */
static void ck_unknown_frame_name(const dt *c)
{
    size_t named = 0;
    for (size_t r = 0; r < c->want.rows; r++) {
        const char *n = csv_get(&c->want, r, "name");
        if (strcmp(n, "unknown") == 0)
            continue;
        named++;
        T_EQ_INT(count_frames(c->p, n, -1), 1);
    }
    T_EQ_INT(named + 1, c->want.rows);
    T_EQ_INT(count_frames(c->p, "libc.so+0x7b", 123), 1);
}

static void ck_unsymbolized_metric(const dt *c)
{
    char path[600];
    dt_path(c, "expected.textproto", path, sizeof path);
    char *text = read_text(path);
    char module[256] = "", build[256] = "";
    size_t frames = 0;
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        long long pc;
        if (sscanf(line, " module: \"%255[^\"]\"", module) == 1)
            continue;
        if (sscanf(line, " build_id: \"%255[^\"]\"", build) == 1)
            continue;
        if (sscanf(line, " address: %lld", &pc) == 1) {
            frame_at(c->p, module, build, pc);
            frames++;
        }
    }
    T_CHECK(frames > 0);
    free(text);
}

static void ck_candidates_perf(const dt *c)
{
    dt_candidates(c, 1);
}

/* The symbolizer's "no build id" stat counts the modules without one;
 * every module is named by its full path. */
static void ck_no_build_id(const dt *c)
{
    uint8_t *used = frames_used(c->p);
    uint8_t *seen = calloc(c->p->res.n + 1, 1);
    size_t modules = 0, without = 0;
    for (size_t f = 0; f < c->p->frame.n; f++) {
        uint32_t res = c->p->func.res[c->p->frame.func[f]];
        if (!used[f] || res == PC_NONE || seen[res])
            continue;
        seen[res] = 1;
        modules++;
        without += c->p->res.build[res] == PC_NONE;
        T_CHECK(frame_module(c->p, (uint32_t)f)[0] == '/');
    }
    T_EQ_INT(without, csv_int(&c->want, 0, "value"));
    T_CHECK(modules > without);
    free(seen);
    free(used);
}

/* ---- StackSample ---- */

/* The one sample at time ts, or -1 (a failure recorded). */
static long long ss_at(const pc_profile *p, long long ts)
{
    long long at = -1;
    size_t n = 0;
    for (size_t i = 0; i < p->sample.n; i++)
        if (pc_sample_time(p, i) == (uint64_t)ts) {
            at = (long long)i;
            n++;
        }
    if (n != 1)
        t_fail(__FILE__, __LINE__, "%zu samples at %lld", n, ts);
    return n == 1 ? at : -1;
}

static const char *ss_leaf(const pc_profile *p, size_t i)
{
    uint32_t s = p->sample.stack[i];
    return s == PC_NONE ? "(none)" : frame_name(p, p->stack.frame[s]);
}

/* The sample's CPU: the row's, or none for [NULL]. */
static void ss_cpu(const dt *c, size_t r, size_t i)
{
    const char *cpu = csv_get(&c->want, r, "cpu");
    T_EQ_INT(pc_sample_cpu(c->p, i), cpu ? csv_int(&c->want, r, "cpu") : PC_NO_CPU);
}

/* Each row's sample: time, CPU, weight, the timebase as its event (ns
 * as the unit says) and the leaf frame. */
static void ck_ss_samples(const dt *c)
{
    const pc_profile *p = c->p;
    T_EQ_INT(p->sample.n, c->want.rows);
    for (size_t r = 0; r < c->want.rows; r++) {
        long long i = ss_at(p, csv_int(&c->want, r, "ts"));
        if (i < 0)
            continue;
        ss_cpu(c, r, (size_t)i);
        T_EQ_INT(pc_sample_weight(p, i), csv_int(&c->want, r, "weight"));
        T_EQ_STR(ss_leaf(p, (size_t)i), csv_get(&c->want, r, "frame_name"));
        uint16_t ev = pc_sample_event(p, i);
        T_CONTAINS(str_of(p, p->event.name[ev]), csv_get(&c->want, r, "timebase_name"));
        T_CONTAINS(str_of(p, p->event.name[ev]), csv_get(&c->want, r, "source"));
        if (strcmp(csv_get(&c->want, r, "unit"), "ns") == 0)
            T_EQ_INT(p->event.unit[ev], PC_UNIT_NS);
    }
}

/* Each row's sample in its process (none for [NULL]) on its CPU. */
static void ck_ss_contexts(const dt *c)
{
    const pc_profile *p = c->p;
    T_EQ_INT(p->sample.n, c->want.rows);
    for (size_t r = 0; r < c->want.rows; r++) {
        long long i = ss_at(p, csv_int(&c->want, r, "ts"));
        if (i < 0)
            continue;
        int64_t pid = p->thread.pid[pc_sample_thread(p, i)];
        const char *want = csv_get(&c->want, r, "process_name");
        if (want)
            T_EQ_STR(str_of(p, pc_process_name(p, pid)), want);
        else
            T_CHECK(pc_process_name(p, pid) == PC_NONE);
        if (csv_has(&c->want, "cpu"))
            ss_cpu(c, r, (size_t)i);
    }
}

/* The async context's sample in its process; the context is reported. */
static void ck_ss_async(const dt *c)
{
    const pc_profile *p = c->p;
    T_CHECK(c->want.rows > 0);
    for (size_t r = 0; r < c->want.rows; r++) {
        long long i = ss_at(p, csv_int(&c->want, r, "ts"));
        if (i >= 0)
            T_EQ_STR(str_of(p, pc_process_name(p, p->thread.pid[pc_sample_thread(p, i)])),
                     csv_get(&c->want, r, "process_name"));
    }
    char want[64];
    snprintf(want, sizeof want, "%zu StackSample samples belong to async contexts",
             c->want.rows);
    T_CONTAINS(c->log, want);
}

/* Samples per source: those of the event its name is in brackets of. */
static void ck_ss_per_source(const dt *c)
{
    const pc_profile *p = c->p;
    long long total = 0;
    for (size_t r = 0; r < c->want.rows; r++) {
        char tag[256];
        snprintf(tag, sizeof tag, "(%s)", csv_get(&c->want, r, "source"));
        long long n = 0;
        for (size_t i = 0; i < p->sample.n; i++)
            n += strstr(str_of(p, p->event.name[pc_sample_event(p, i)]), tag) != NULL;
        T_EQ_INT(n, csv_int(&c->want, r, "cnt"));
        total += n;
    }
    T_EQ_INT(total, p->sample.n);
}

/* A follower weight is a counter value at its sample's time, of its
 * counter's event; the sample weighs its primary weight, not the
 * follower's. */
static void ck_ss_followers(const dt *c)
{
    const pc_profile *p = c->p;
    T_EQ_INT(p->counter.n, c->want.rows);
    for (size_t r = 0; r < c->want.rows; r++) {
        long long i = ss_at(p, csv_int(&c->want, r, "ts"));
        if (i >= 0)
            T_CHECK(pc_sample_weight(p, i) != csv_int(&c->want, r, "weight"));
        size_t found = 0;
        for (size_t k = 0; k < p->counter.n; k++) {
            const char *name = str_of(p, p->event.name[p->counter.event[k]]);
            const char *want = csv_get(&c->want, r, "counter_name");
            found += p->counter.time[k] == (uint64_t)csv_int(&c->want, r, "ts") &&
                     p->counter.value[k] == csv_int(&c->want, r, "weight") &&
                     strncmp(name, want, strlen(want)) == 0 &&
                     p->event.unit[p->counter.event[k]] == PC_UNIT_COUNT;
        }
        T_EQ_INT(found, 1);
    }
}

/* The inline callstack from the root: each frame's name, its function's
 * file and its line. */
static void ck_ss_inline(const dt *c)
{
    const pc_profile *p = c->p;
    size_t found = 0;
    T_CHECK(c->want.rows > 0);
    for (size_t i = 0; i < p->sample.n; i++) {
        uint32_t chain[64];
        size_t depth = 0;
        for (uint32_t s = p->sample.stack[i]; s != PC_NONE && depth < 64; s = p->stack.prefix[s])
            chain[depth++] = p->stack.frame[s];
        if (depth != c->want.rows)
            continue;
        size_t r = 0;
        while (r < depth && strcmp(frame_name(p, chain[depth - 1 - r]),
                                   csv_get(&c->want, r, "frame_name")) == 0)
            r++;
        if (r < depth)
            continue;
        found++;
        for (r = 0; r < depth; r++) {
            uint32_t f = chain[depth - 1 - r];
            T_EQ_STR(str_of(p, p->func.file[p->frame.func[f]]),
                     csv_get(&c->want, r, "source_file"));
            T_EQ_INT(p->frame.line[f], csv_int(&c->want, r, "line_number"));
        }
    }
    T_EQ_INT(found, 1);
}

static void ck_ss_interned(const dt *c)
{
    T_CHECK(c->want.rows > 0);
    for (size_t r = 0; r < c->want.rows; r++) {
        long long i = ss_at(c->p, csv_int(&c->want, r, "ts"));
        if (i >= 0)
            T_EQ_STR(ss_leaf(c->p, (size_t)i), csv_get(&c->want, r, "frame_name"));
    }
}

/* One session: one event, named after the source the query asks for,
 * in ns; no perf session, so no perf event. */
static void ck_ss_session(const dt *c)
{
    const pc_profile *p = c->p;
    char path[600], source[128] = "";
    dt_path(c, "query.sql", path, sizeof path);
    char *q = read_text(path);
    const char *at = q ? strstr(q, "source = '") : NULL;
    if (at)
        sscanf(at + 10, "%127[^']", source);
    free(q);
    T_CHECK(source[0] != 0);
    /* The events of samples; followers' are counters'. */
    uint8_t used[64] = {0};
    size_t n = 0;
    for (size_t i = 0; i < p->sample.n; i++)
        if (pc_sample_event(p, i) < 64 && !used[pc_sample_event(p, i)]++)
            n++;
    T_EQ_INT(n, csv_int(&c->want, 0, "stack_sample_sessions") +
                    csv_int(&c->want, 0, "perf_sessions"));
    for (size_t e = 0; e < p->event.n && e < 64; e++) {
        if (!used[e])
            continue;
        T_CONTAINS(str_of(p, p->event.name[e]), source);
        T_EQ_INT(p->event.unit[e], PC_UNIT_NS);
    }
}

/* Each frame named once; the interpreted one runs interpreted. */
static void ck_frame_types(const dt *c)
{
    const pc_profile *p = c->p;
    T_CHECK(c->want.rows > 0);
    for (size_t r = 0; r < c->want.rows; r++) {
        const char *name = csv_get(&c->want, r, "name");
        const char *type = csv_get(&c->want, r, "type");
        T_EQ_INT(count_frames(p, name, -1), 1);
        for (size_t f = 0; f < p->frame.n; f++)
            if (strcmp(frame_name(p, (uint32_t)f), name) == 0)
                T_EQ_INT(p->frame.exec[f] == PC_EXEC_INTERPRETED,
                         type && strcmp(type, "interpreted") == 0);
    }
}

/* The sample whose leaf is the frame named leaf: the frame under it, or
 * PC_NONE; *count says how many samples have that leaf. */
static uint32_t under_leaf(const pc_profile *p, const char *leaf, size_t *count)
{
    uint32_t found = PC_NONE;
    *count = 0;
    for (size_t i = 0; i < p->sample.n; i++) {
        uint32_t st = p->sample.stack[i];
        if (st == PC_NONE)
            continue;
        uint32_t f = p->stack.frame[st];
        if (strcmp(pc_str(&p->str, p->func.name[p->frame.func[f]]), leaf) != 0)
            continue;
        (*count)++;
        uint32_t up = p->stack.prefix[st];
        found = up == PC_NONE ? PC_NONE : p->stack.frame[up];
    }
    return found;
}

/* A TrackEvent slice's callstack is a sample on its thread: the slice's
 * name the leaf, under it the callstack's leaf frame, with its source
 * file and line where the callstack gives them. */
static void ck_track_event_callstacks(const dt *c)
{
    for (size_t r = 0; r < c->want.rows; r++) {
        const char *slice = csv_get(&c->want, r, "name");
        size_t n;
        uint32_t f = under_leaf(c->p, slice, &n);
        T_EQ_INT(n, 1);
        T_CHECK(f != PC_NONE);
        if (f == PC_NONE)
            continue;
        uint32_t fn = c->p->frame.func[f];
        T_EQ_STR(pc_str(&c->p->str, c->p->func.name[fn]), csv_get(&c->want, r, "leaf_frame"));
        /* csv_get gives NULL for trace_processor's [NULL]. */
        uint32_t fs = c->p->func.file[fn];
        const char *file = csv_get(&c->want, r, "source_file");
        T_EQ_STR(fs == PC_NONE ? "[NULL]" : pc_str(&c->p->str, fs), file ? file : "[NULL]");
        T_EQ_INT(c->p->frame.line[f], csv_int(&c->want, r, "line_number"));
    }
}

/* Each callstack, at a slice's begin or end, is one sample; the weights
 * trace_processor lists are not carried (each counts one). */
static void ck_track_event_weights(const dt *c)
{
    for (size_t r = 0; r < c->want.rows; r++) {
        char leaf[300];
        int end = strcmp(csv_get(&c->want, r, "event_type"), "end") == 0;
        snprintf(leaf, sizeof leaf, "%s%s", csv_get(&c->want, r, "name"), end ? " (end)" : "");
        size_t n;
        under_leaf(c->p, leaf, &n);
        T_EQ_INT(n, 1);
    }
    T_EQ_INT(c->p->sample.n, c->want.rows);
}

const dt_case dt_sample_cases[] = {
    {"metrics/profiling/ProfilingMetrics.java_heap_class_stats_no_heap_graph", NULL,
     "a Java heap graph metric; the trace has no heap graph and the expected metric is empty"},
    {"metrics/profiling/ProfilingMetrics.unsymbolized_frames", ck_unsymbolized_metric, NULL},
    {"parser/profiling/Deobfuscation.profile_deobfuscation_default_package", ck_deobfuscated,
     NULL},
    {"parser/profiling/Profiling.annotations_switch_interpreter", ck_annotations, NULL},
    {"parser/profiling/Profiling.cpu_profiling_samples_counter_only_excluded",
     ck_counter_only_excluded, NULL},
    {"parser/profiling/Profiling.cpu_profiling_samples_timebase_filter", ck_timebase_filter,
     NULL},
    {"parser/profiling/Profiling.frame_types", ck_frame_types,
     "the kinds other than interpreted (gc, a custom kind_str) are not carried"},
    {"parser/profiling/Profiling.perf_sample_counter_only", ck_counter_only, NULL},
    {"parser/profiling/Profiling.perf_sample_counter_set", ck_counter_set, NULL},
    {"parser/profiling/Profiling.perf_sample_followers", ck_followers, NULL},
    {"parser/profiling/Profiling.perf_sample_timebase_count", ck_timebase_count, NULL},
    {"parser/profiling/Profiling.stack_sample", ck_ss_samples,
     "the CPU mode (user, kernel) is not carried"},
    {"parser/profiling/Profiling.stack_sample_async", ck_ss_async,
     "async contexts (name, kind, parent) are not carried: only reported"},
    {"parser/profiling/Profiling.stack_sample_contexts", ck_ss_contexts,
     "the CPU mode is not carried"},
    {"parser/profiling/Profiling.stack_sample_cpu_profiling_samples", ck_ss_per_source, NULL},
    {"parser/profiling/Profiling.stack_sample_followers", ck_ss_followers, NULL},
    {"parser/profiling/Profiling.stack_sample_inline_callstack", ck_ss_inline, NULL},
    {"parser/profiling/Profiling.stack_sample_interned_callstack", ck_ss_interned, NULL},
    {"parser/profiling/Profiling.stack_sample_session_source", ck_ss_session, NULL},
    {"parser/profiling/ProfilingLlvmSymbolizer.no_build_id", ck_no_build_id, NULL},
    {"parser/profiling/r8_retrace_compat/R8RetraceCompat.horizontal_class_merging",
     ck_deobfuscated, NULL},
    {"parser/profiling/r8_retrace_compat/R8RetraceCompat.inline_positions",
     ck_inline_positions,
     "each distinct chain is checked; trace_processor lists fewer rows for one frame"},
    {"parser/profiling/r8_retrace_compat/R8RetraceCompat.method_overload", ck_deobfuscated,
     NULL},
    {"parser/profiling/r8_retrace_compat/R8RetraceCompat.removed_argument", ck_deobfuscated,
     NULL},
    {"parser/profiling/r8_retrace_compat/R8RetraceCompat.staticized_method", ck_deobfuscated,
     NULL},
    {"parser/profiling/r8_retrace_compat/R8RetraceCompat.vertical_class_merging",
     ck_deobfuscated, NULL},
    {"parser/track_event/TrackEvent.streaming_profile_timestamp_delta_overflow", NULL,
     "its Chrome packets carry no callstacks, so there is no sample to check; the expected "
     "figures are slices and error stats"},
    {"parser/track_event/TrackEvent.track_event_callstack_weights", ck_track_event_weights,
     "callstack weights are not carried: each callstack counts one"},
    {"parser/track_event/TrackEvent.track_event_callstacks", ck_track_event_callstacks, NULL},
    {"stdlib/linux/LinuxTests.perf_sample_with_counters_view", ck_counters_view, NULL},
    {"stdlib/stacks/Stacks.stack_profile_unknown_frame_name", ck_unknown_frame_name,
     "an unnamed frame is \"libc.so+0x7b\" here, \"unknown\" in trace_processor"},
    {"stdlib/stacks/Stacks.symbolization_candidates_perf_profile", ck_candidates_perf, NULL},
};
const size_t dt_sample_count = sizeof dt_sample_cases / sizeof dt_sample_cases[0];

TEST(perfetto_corpus_difftests)
{
    const char *shared = t_shared();
    if (!shared) {
        t_case("perfetto difftests");
        t_skip("../shared is absent: the Perfetto diff tests are not run");
        return;
    }
    dt_run(dt_sample_cases, dt_sample_count);
    /* Every diff test with a trace is in one of the tables. */
    t_case("perfetto difftests all listed");
    char manifest[600];
    snprintf(manifest, sizeof manifest, "%s/corpus/perfetto/difftests/manifest.json", shared);
    char *json = read_text(manifest);
    char err[256];
    jv *root = json ? j_parse(json, strlen(json), err, sizeof err) : NULL;
    size_t with_trace = 0;
    for (size_t i = 0; root && i < j_len(root); i++) {
        const jv *e = j_at(root, i);
        if (!j_get(e, "trace_textproto"))
            continue;
        with_trace++;
        int listed = 0;
        for (size_t k = 0; k < dt_sample_count; k++)
            listed |= strcmp(dt_sample_cases[k].dir, j_str(j_get(e, "dir"))) == 0;
        for (size_t k = 0; k < dt_heap_count; k++)
            listed |= strcmp(dt_heap_cases[k].dir, j_str(j_get(e, "dir"))) == 0;
        if (!listed)
            t_fail(__FILE__, __LINE__, "diff test %s is not in the table",
                   j_str(j_get(e, "dir")));
    }
    T_EQ_INT(with_trace, dt_sample_count + dt_heap_count);
    size_t checked = 0, skipped = 0;
    for (size_t k = 0; k < dt_sample_count; k++)
        dt_sample_cases[k].check ? checked++ : skipped++;
    for (size_t k = 0; k < dt_heap_count; k++)
        dt_heap_cases[k].check ? checked++ : skipped++;
    printf("  note Perfetto diff tests with a trace: %zu checked, %zu skipped\n", checked,
           skipped);
    j_free(root);
    free(json);
}
