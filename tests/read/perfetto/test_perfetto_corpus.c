/* The Perfetto reader on ../shared/corpus/perfetto: the synthetic traces
 * against their expected counts, timestamps and folded stacks, and every
 * trace_processor diff test that has a trace against the figures of its
 * expected output.  The table at the end maps each diff test to its check
 * or to the reason it cannot apply.  Expected values are always read from
 * the corpus files, never written here. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded_text.h"
#include "jsonmini.h"
#include "t.h"
#include "test_util.h"

/* ---- Reading the corpus ---- */

/* What the reader decodes, even where it gives nothing to show (samples
 * without callstacks, heap dumps with nothing unreleased); the profiler
 * tests (test_fxprof.c) check what users get of these traces. */
static pc_profile *convert_path(const char *path, const pc_options *o)
{
    size_t n;
    unsigned char *d = t_read_file(path, &n);
    if (!d) {
        t_fail(__FILE__, __LINE__, "cannot read %s", path);
        return NULL;
    }
    pc_profile *p;
    pc_error err;
    if (convert_bytes_unchecked(d, n, o, &p, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "%s: conversion failed: %s", path, err.message);
        p = NULL;
    }
    free(d);
    return p;
}

/* An expected.csv of trace_processor: a header row and rows of cells,
 * quoted or bare; "[NULL]" reads as NULL. */
typedef struct csv {
    char **cell;
    size_t cols, rows;
} csv;

static void csv_free(csv *c)
{
    for (size_t i = 0; i < c->cols * (c->rows + 1); i++)
        free(c->cell[i]);
    free(c->cell);
    memset(c, 0, sizeof *c);
}

/* Parses one line's cells into a malloc'd array; returns the count. */
static size_t csv_line(const char *s, char ***out)
{
    size_t n = 0;
    char **v = NULL;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s)
        return 0;
    for (;;) {
        char buf[1024];
        size_t k = 0;
        if (*s == '"') {
            for (s++; *s && !(*s == '"' && s[1] != '"'); s++) {
                if (*s == '"')
                    s++;
                if (k + 1 < sizeof buf)
                    buf[k++] = *s;
            }
            if (*s == '"')
                s++;
        } else {
            for (; *s && *s != ','; s++)
                if (k + 1 < sizeof buf)
                    buf[k++] = *s;
        }
        buf[k] = 0;
        v = realloc(v, (n + 1) * sizeof *v);
        v[n++] = strcmp(buf, "[NULL]") == 0 ? NULL : strdup(buf);
        if (*s != ',')
            break;
        s++;
    }
    *out = v;
    return n;
}

static int csv_read(const char *path, csv *c)
{
    memset(c, 0, sizeof *c);
    char *text = read_text(path);
    if (!text)
        return -1;
    size_t lines = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char **v;
        size_t n = csv_line(line, &v);
        if (n == 0)
            continue;
        if (lines == 0)
            c->cols = n;
        c->cell = realloc(c->cell, (lines + 1) * c->cols * sizeof *c->cell);
        for (size_t i = 0; i < c->cols; i++)
            c->cell[lines * c->cols + i] = i < n ? v[i] : NULL;
        for (size_t i = c->cols; i < n; i++)
            free(v[i]);
        free(v);
        lines++;
    }
    c->rows = lines ? lines - 1 : 0;
    free(text);
    return lines ? 0 : -1;
}

static size_t csv_col(const csv *c, const char *name)
{
    for (size_t i = 0; i < c->cols; i++)
        if (c->cell[i] && strcmp(c->cell[i], name) == 0)
            return i;
    t_fail(__FILE__, __LINE__, "expected.csv has no column %s", name);
    return (size_t)-1;
}

static int csv_has(const csv *c, const char *name)
{
    for (size_t i = 0; i < c->cols; i++)
        if (c->cell[i] && strcmp(c->cell[i], name) == 0)
            return 1;
    return 0;
}

/* Row r's cell in column name (NULL when [NULL] or missing). */
static const char *csv_get(const csv *c, size_t r, const char *name)
{
    size_t i = csv_col(c, name);
    return i == (size_t)-1 || r >= c->rows ? NULL : c->cell[(r + 1) * c->cols + i];
}

static long long csv_int(const csv *c, size_t r, const char *name)
{
    const char *s = csv_get(c, r, name);
    return s ? strtoll(s, NULL, 10) : 0;
}

/* ---- Reading the profile ---- */

static const char *str_of(const pc_profile *p, uint32_t id)
{
    return id == PC_NONE ? "(none)" : pc_str(&p->str, id);
}

static const char *frame_name(const pc_profile *p, uint32_t f)
{
    return str_of(p, p->func.name[p->frame.func[f]]);
}

static const char *frame_module(const pc_profile *p, uint32_t f)
{
    uint32_t res = p->func.res[p->frame.func[f]];
    return res == PC_NONE ? "(none)" : str_of(p, p->res.name[res]);
}

static const char *frame_build(const pc_profile *p, uint32_t f)
{
    uint32_t res = p->func.res[p->frame.func[f]];
    return res == PC_NONE ? "(none)" : str_of(p, p->res.build[res]);
}

/* Marks in used[] every frame some sample or heap row reaches. */
static uint8_t *frames_used(const pc_profile *p)
{
    uint8_t *used = calloc(p->frame.n + 1, 1);
    uint8_t *seen = calloc(p->stack.n + 1, 1);
    for (size_t pass = 0; pass < 2; pass++) {
        size_t n = pass ? p->heap.n : p->sample.n;
        const uint32_t *stacks = pass ? p->heap.stack : p->sample.stack;
        for (size_t i = 0; i < n; i++)
            for (uint32_t s = stacks[i]; s != PC_NONE && !seen[s]; s = p->stack.prefix[s]) {
                seen[s] = 1;
                used[p->stack.frame[s]] = 1;
            }
    }
    free(seen);
    return used;
}

/* The number of frames reached by samples or heap rows named name (at
 * rel_pc addr unless addr is -1). */
static size_t count_frames(const pc_profile *p, const char *name, long long addr)
{
    uint8_t *used = frames_used(p);
    size_t n = 0;
    for (size_t f = 0; f < p->frame.n; f++)
        if (used[f] && strcmp(frame_name(p, (uint32_t)f), name) == 0 &&
            (addr < 0 || p->frame.addr[f] == (uint64_t)addr))
            n++;
    free(used);
    return n;
}

/* Every sample and heap stack as "root;...;leaf", one per line. */
static char *all_stacks(const pc_profile *p)
{
    size_t cap = 1, len = 0;
    for (size_t pass = 0; pass < 2; pass++) {
        size_t n = pass ? p->heap.n : p->sample.n;
        const uint32_t *stacks = pass ? p->heap.stack : p->sample.stack;
        for (size_t i = 0; i < n; i++)
            cap += strlen(stack_text(p, stacks[i])) + 1;
    }
    char *out = malloc(cap);
    out[0] = 0;
    for (size_t pass = 0; pass < 2; pass++) {
        size_t n = pass ? p->heap.n : p->sample.n;
        const uint32_t *stacks = pass ? p->heap.stack : p->sample.stack;
        for (size_t i = 0; i < n; i++)
            len += (size_t)snprintf(out + len, cap - len, "%s\n", stack_text(p, stacks[i]));
    }
    return out;
}

static uint32_t thread_of(const pc_profile *p, int64_t pid, int64_t tid)
{
    for (size_t t = 0; t < p->thread.n; t++)
        if (p->thread.pid[t] == pid && p->thread.tid[t] == tid)
            return (uint32_t)t;
    return PC_NONE;
}

/* Sums of the heap rows of one heap (any when heap is NULL). */
typedef struct heap_sum {
    uint64_t alloc, freed, alloc_count, free_count;
    size_t rows, dumps;
    uint64_t time;   /* of the last row */
} heap_sum;

static heap_sum heap_sums(const pc_profile *p, const char *heap, int64_t pid)
{
    heap_sum s = {0};
    uint32_t last_dump = PC_NONE;
    for (size_t i = 0; i < p->heap.n; i++) {
        if (!pc_heap_shown(p, i))
            continue;
        if (heap && strcmp(str_of(p, p->heap.heap[i]), heap) != 0)
            continue;
        if (pid >= 0 && p->thread.pid[p->heap.thread[i]] != pid)
            continue;
        s.alloc += p->heap.alloc[i];
        s.freed += p->heap.freed[i];
        s.alloc_count += p->heap.alloc_count[i];
        s.free_count += p->heap.free_count[i];
        s.rows++;
        s.time = p->heap.time[i];
        if (p->heap.dump[i] != last_dump) {
            s.dumps++;
            last_dump = p->heap.dump[i];
        }
    }
    return s;
}

/* The profile showing dump n (1-based) of each heap. */
static pc_profile *convert_dump(const char *path, int n)
{
    pc_options o;
    pc_options_init(&o);
    o.heap_dump = n;
    return convert_path(path, &o);
}

/* ---- Synthetic traces ---- */

/* Per-thread sample counts and first and last times, then the folded
 * stacks, of a scale trace. */
static void check_scale_samples(const char *dir, const char *name)
{
    char path[1024], exp[1100];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(exp, sizeof exp, "%s.expected.json", path);
    char *json = read_text(exp);
    char err[256];
    jv *root = json ? j_parse(json, strlen(json), err, sizeof err) : NULL;
    pc_options o;
    pc_options_init(&o);
    o.remove_gaps = 0;
    pc_profile *p = root ? convert_path(path, &o) : NULL;
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
                T_EQ_INT(p->sample.time[a], j_int(j_get(want, "first_ts")));
                T_EQ_INT(p->sample.time[b - 1], j_int(j_get(want, "last_ts")));
            }
            total += b - a;
        }
        T_EQ_INT(total, p->sample.n);
        snprintf(exp, sizeof exp, "%s.expected.folded", path);
        char *want = read_text(exp), *got = folded_samples(p);
        char *want_sorted = want ? sort_lines(want) : NULL;
        if (!want_sorted || strcmp(got, want_sorted) != 0)
            t_fail(__FILE__, __LINE__, "%s: folded stacks differ from %s", name, exp);
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
static void check_scale_heap(const char *dir)
{
    char path[1024], exp[1100];
    snprintf(path, sizeof path, "%s/small_heap.pftrace", dir);
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
    pc_profile *p = convert_path(path, NULL);
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

TEST(perfetto_corpus_synthetic)
{
    const char *shared = t_shared();
    char dir[512];
    t_case("perfetto scale small_perf");
    if (!shared) {
        t_skip("../shared is absent: the Perfetto corpus cases are not run");
        return;
    }
    snprintf(dir, sizeof dir, "%s/corpus/perfetto/synthetic/scale", shared);
    check_scale_samples(dir, "small_perf.pftrace");
    t_case("perfetto scale small_chrome");
    check_scale_samples(dir, "small_chrome.pftrace");
    t_case("perfetto scale small_heap");
    check_scale_heap(dir);

    /* synthetic/EXPECTED.md: Chrome samples from a 1 µs reference plus
     * deltas accumulated across packets; a breakpad build id verbatim. */
    t_case("perfetto streaming_profile_basic");
    snprintf(dir, sizeof dir, "%s/corpus/perfetto/synthetic/streaming_profile_basic.pb", shared);
    pc_profile *p = convert_path(dir, NULL);
    if (p) {
        uint32_t t = thread_of(p, 15, 16);
        T_CHECK(t != PC_NONE);
        if (t != PC_NONE) {
            char got[256] = "";
            size_t used = 0;
            for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++) {
                uint32_t leaf = p->stack.frame[p->sample.stack[i]];
                used += (size_t)snprintf(got + used, sizeof got - used, "%s%" PRIu64 ":%s",
                                         used ? " " : "", p->sample.time[i],
                                         frame_name(p, leaf));
            }
            T_EQ_STR(got, "11000:0x4242 26000:0x42 68000:0x4242");
        }
        int found = 0;
        for (size_t r = 0; r < p->res.n; r++)
            found |= p->res.build[r] != PC_NONE &&
                     strcmp(str_of(p, p->res.build[r]), "3BBCFBD372448A727265C3E7C4D954F91") == 0;
        T_CHECK(found);
    }
    pc_profile_free(p);

    t_case("perfetto streaming_profile_clock_monotonic");
    snprintf(dir, sizeof dir, "%s/corpus/perfetto/synthetic/streaming_profile_clock_monotonic.pb",
             shared);
    p = convert_path(dir, NULL);
    if (p) {
        T_EQ_INT(p->sample.n, 1);
        uint32_t t = thread_of(p, 15, 16);
        T_CHECK(t != PC_NONE);
        if (p->sample.n == 1) {
            T_EQ_INT(p->sample.time[0], 10015000);
            T_EQ_INT(p->sample.thread[0], t);
        }
    }
    pc_profile_free(p);
}

/* ---- Diff tests ---- */

typedef struct dt {
    const char *dir;       /* the test's folder */
    pc_profile *p;         /* the trace converted with default options */
    const char *log;       /* what the conversion logged */
    csv want;              /* expected.csv, when the test has one */
} dt;

static void dt_path(const dt *c, const char *file, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", c->dir, file);
}

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

/* One frame per row: its name (or deobfuscated name) at its rel_pc. */
static void ck_names_at_pc(const dt *c)
{
    T_CHECK(c->want.rows > 0);
    for (size_t r = 0; r < c->want.rows; r++) {
        const char *name = csv_get(&c->want, r, csv_has(&c->want, "name") ? "name"
                                                                         : "deobfuscated_name");
        long long pc = csv_int(&c->want, r, "rel_pc");
        if (count_frames(c->p, name, pc) != 1)
            t_fail(__FILE__, __LINE__, "%zu frames \"%s\" at 0x%llx, expected 1",
                   count_frames(c->p, name, pc), name, pc);
    }
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

/* Samples skipped by the profiler are reported, not kept. */
static void ck_counter_only_excluded(const dt *c)
{
    T_EQ_INT(c->p->sample.n, csv_int(&c->want, 0, "profiling_samples"));
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
            T_EQ_INT(p->sample.time[i], csv_int(&c->want, 0, "profiling_ts"));
        }
    T_EQ_INT(stacked, csv_int(&c->want, 0, "profiling_samples"));
    /* One session per timebase: different events. */
    T_EQ_INT(p->event.n, csv_int(&c->want, 0, "ns_sessions") +
                                   csv_int(&c->want, 0, "count_sessions"));
}

/* A skipped counter-only sample: not a sample here, but reported. */
static void ck_counter_only(const dt *c)
{
    T_EQ_INT(c->p->sample.n, csv_int(&c->want, 0, "stack_sample_count"));
    T_CONTAINS(c->log, "1 perf samples were skipped");
}

/* The sample's time and timebase weight (the first row is the timebase;
 * follower counters are not converted). */
static void ck_timebase_value(const dt *c, const char *ts_col, const char *value_col)
{
    const pc_profile *p = c->p;
    size_t at = 0, n = 0;
    for (size_t i = 0; i < p->sample.n; i++)
        if (!ts_col || p->sample.time[i] == (uint64_t)csv_int(&c->want, 0, ts_col)) {
            at = i;
            n++;
        }
    T_EQ_INT(n, 1);
    if (n == 1) {
        const char *v = csv_get(&c->want, 0, value_col);
        T_EQ_INT(p->sample.weight[at], v ? (long long)strtod(v, NULL) : -1);
    }
}

/* The counted sample weighs its count; the next, without one, weighs
 * the nominal period (1 ms at 1000 Hz) instead of appearing in the
 * counter table. */
static void ck_timebase_count(const dt *c)
{
    ck_timebase_value(c, "ts", "value");
    T_EQ_INT(c->p->sample.n, 2);
    if (c->p->sample.n == 2)
        T_EQ_INT(c->p->sample.weight[1], 1000000);
}

static void ck_counter_set(const dt *c)
{
    T_EQ_INT(c->p->sample.n, 1);
    ck_timebase_value(c, NULL, "value");
}

static void ck_followers(const dt *c)
{
    T_EQ_INT(csv_int(&c->want, 0, "is_timebase"), 1);
    T_EQ_INT(c->p->sample.n, 1);
    if (c->p->sample.n)
        T_EQ_INT(c->p->sample.cpu[0], csv_int(&c->want, 0, "cpu"));
    ck_timebase_value(c, "ts", "value");
}

static void ck_counters_view(const dt *c)
{
    ck_timebase_value(c, "ts", "counter_value");
    T_EQ_INT(c->p->sample.n, 1);
    if (c->p->sample.n == 1)
        T_EQ_STR(str_of(c->p, c->p->event.name[c->p->sample.event[0]]),
                 csv_get(&c->want, 0, "counter_name"));
}

static void ck_empty_callstack(const dt *c)
{
    T_EQ_INT(c->p->heap.n, csv_int(&c->want, 0, "count"));
    T_CONTAINS(c->log, "have an empty callstack and were left out");
}

/* heap_profile_allocation rows are per-dump changes of each callsite
 * (allocations positive, frees negative); the model keeps each dump's
 * running totals.  So the totals of dump n of a heap are the sums of its
 * rows up to its n-th timestamp, and the callsites are the same. */
static void ck_heap_allocations(const dt *c)
{
    char path[600];
    dt_path(c, "trace.pb", path, sizeof path);
    const csv *w = &c->want;
    T_CHECK(w->rows > 0);
    for (size_t r = 0; r < w->rows; r++) {
        const char *heap = csv_get(w, r, "heap_name");
        const char *ts = csv_get(w, r, "ts");
        /* Work on the last row of each (heap, ts) run. */
        int later = 0, nth = 1;
        for (size_t k = r + 1; k < w->rows; k++)
            later |= strcmp(csv_get(w, k, "heap_name"), heap) == 0 &&
                     strcmp(csv_get(w, k, "ts"), ts) == 0;
        if (later)
            continue;
        long long alloc = 0, freed = 0, nalloc = 0, nfree = 0;
        const char *prev_ts = NULL;
        for (size_t k = 0; k <= r; k++) {
            if (strcmp(csv_get(w, k, "heap_name"), heap) != 0)
                continue;
            if (prev_ts && strcmp(prev_ts, csv_get(w, k, "ts")) != 0)
                nth++;
            prev_ts = csv_get(w, k, "ts");
            long long size = csv_int(w, k, "size"), count = csv_int(w, k, "count");
            if (size >= 0)
                alloc += size;
            else
                freed -= size;
            if (count >= 0)
                nalloc += count;
            else
                nfree -= count;
        }
        pc_profile *p = convert_dump(path, nth);
        if (!p)
            continue;
        heap_sum s = heap_sums(p, heap, -1);
        T_EQ_INT(s.dumps, 1);
        T_EQ_INT(s.alloc, alloc);
        T_EQ_INT(s.freed, freed);
        T_EQ_INT(s.alloc_count, nalloc);
        T_EQ_INT(s.free_count, nfree);
        pc_profile_free(p);
    }
    /* Callsites: distinct callsite ids, distinct stacks. */
    size_t callsites = 0;
    for (size_t r = 0; r < w->rows; r++) {
        int seen = 0;
        for (size_t k = 0; k < r; k++)
            seen |= csv_int(w, k, "callsite_id") == csv_int(w, r, "callsite_id");
        callsites += !seen;
    }
    size_t stacks = 0;
    for (size_t i = 0; i < c->p->heap.n; i++) {
        int seen = 0;
        for (size_t k = 0; k < i; k++)
            seen |= c->p->heap.stack[k] == c->p->heap.stack[i];
        stacks += !seen;
    }
    T_EQ_INT(stacks, callsites);
}

/* _android_heap_profile_intervals: one row per dump in time order; the
 * retained bytes are the dump's unreleased bytes. */
static void ck_heap_intervals(const dt *c)
{
    char path[600];
    dt_path(c, "trace.pb", path, sizeof path);
    T_CHECK(c->want.rows > 0);
    for (size_t r = 0; r < c->want.rows; r++) {
        pc_profile *p = convert_dump(path, (int)r + 1);
        if (!p)
            continue;
        heap_sum s = heap_sums(p, csv_get(&c->want, r, "heap_name"), -1);
        T_EQ_INT(s.alloc - s.freed, csv_int(&c->want, r, "retained"));
        pc_profile_free(p);
    }
    /* No dump beyond the rows. */
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    o.heap_dump = (int)c->want.rows + 1;
    pc_profile_free(convert_path(path, &o));
    char want[64];
    snprintf(want, sizeof want, "has %zu dump(s)", c->want.rows);
    T_CONTAINS(log_capture_text(), want);
}

/* Dumps end at ts_end (or ts + dur): the model's dump times. */
static void ck_heap_dump_times(const dt *c)
{
    char path[600];
    dt_path(c, "trace.pb", path, sizeof path);
    T_CHECK(c->want.rows > 0);
    for (size_t r = 0; r < c->want.rows; r++) {
        pc_profile *p = convert_dump(path, (int)r + 1);
        if (!p)
            continue;
        const char *end = csv_has(&c->want, "ts_end") ? csv_get(&c->want, r, "ts_end") : NULL;
        long long want = end ? strtoll(end, NULL, 10)
                             : csv_int(&c->want, r, "ts") + csv_int(&c->want, r, "dur");
        heap_sum s = heap_sums(p, NULL, -1);
        T_EQ_INT(s.dumps, 1);
        T_EQ_INT(s.time, want);
        if (csv_has(&c->want, "size"))
            T_EQ_INT(s.alloc, csv_int(&c->want, r, "size"));
        pc_profile_free(p);
    }
}

/* A dump without a time of its own: one dump, sized as its rows say
 * (1090 bytes), at its packet's time. */
static void ck_heap_one_dump(const dt *c)
{
    heap_sum s = heap_sums(c->p, NULL, -1);
    T_EQ_INT(s.dumps, c->want.rows);
    T_EQ_INT(s.alloc, 1090);
    T_EQ_INT(s.time, 10);
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

/* Frames a symbolizer would be asked about: a frame of the module (its
 * full path) at rel_pc, with the build id when one is given. */
static void frame_at(const pc_profile *p, const char *module, const char *build, long long pc)
{
    int found = 0;
    for (size_t f = 0; f < p->frame.n; f++) {
        if (p->frame.addr[f] != (uint64_t)pc || strcmp(frame_module(p, (uint32_t)f), module) != 0)
            continue;
        found = 1;
        if (build)
            T_EQ_STR(frame_build(p, (uint32_t)f), build);
    }
    if (!found)
        t_fail(__FILE__, __LINE__, "no frame of %s at 0x%llx", module, pc);
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

static void ck_candidates(const dt *c, int with_build)
{
    T_CHECK(c->want.rows > 0);
    for (size_t r = 0; r < c->want.rows; r++)
        frame_at(c->p, csv_get(&c->want, r, "module"),
                 with_build ? csv_get(&c->want, r, "build_id") : NULL,
                 csv_int(&c->want, r, "rel_pc"));
}

static void ck_candidates_perf(const dt *c)
{
    ck_candidates(c, 1);
}

/* The expected build id is trace_processor's text of a build id given as
 * a string; the model keeps the bytes' hex (unsymbolized_frames shows the
 * same module's id that way). */
static void ck_candidates_heap(const dt *c)
{
    ck_candidates(c, 0);
    /* Per process: as many heap processes as upids. */
    size_t upids = 0, procs = 0;
    for (size_t r = 0; r < c->want.rows; r++) {
        int seen = 0;
        for (size_t k = 0; k < r; k++)
            seen |= csv_int(&c->want, k, "upid") == csv_int(&c->want, r, "upid");
        upids += !seen;
    }
    for (size_t i = 0; i < c->p->heap.n; i++) {
        int seen = 0;
        for (size_t k = 0; k < i; k++)
            seen |= c->p->thread.pid[c->p->heap.thread[k]] ==
                    c->p->thread.pid[c->p->heap.thread[i]];
        procs += !seen;
    }
    T_EQ_INT(procs, upids);
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

typedef struct dt_case {
    const char *dir;                /* under difftests/ */
    void (*check)(const dt *c);
    const char *why;                /* a skip's reason, or what differs */
} dt_case;

#define STACK_SAMPLE                                                       \
    "StackSample packets (the newer generic sampler, left for later in formats/perfetto.md) " \
    "are not converted"

static const dt_case cases[] = {
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
    {"parser/profiling/Profiling.frame_types", NULL, STACK_SAMPLE},
    {"parser/profiling/Profiling.perf_sample_counter_only", ck_counter_only, NULL},
    {"parser/profiling/Profiling.perf_sample_counter_set", ck_counter_set,
     "follower counters are not converted"},
    {"parser/profiling/Profiling.perf_sample_followers", ck_followers,
     "follower counters are not converted"},
    {"parser/profiling/Profiling.perf_sample_timebase_count", ck_timebase_count, NULL},
    {"parser/profiling/Profiling.stack_profile_tracker_empty_callstack", ck_empty_callstack,
     NULL},
    {"parser/profiling/Profiling.stack_sample", NULL, STACK_SAMPLE},
    {"parser/profiling/Profiling.stack_sample_async", NULL, STACK_SAMPLE},
    {"parser/profiling/Profiling.stack_sample_contexts", NULL, STACK_SAMPLE},
    {"parser/profiling/Profiling.stack_sample_cpu_profiling_samples", NULL, STACK_SAMPLE},
    {"parser/profiling/Profiling.stack_sample_followers", NULL, STACK_SAMPLE},
    {"parser/profiling/Profiling.stack_sample_inline_callstack", NULL, STACK_SAMPLE},
    {"parser/profiling/Profiling.stack_sample_interned_callstack", NULL, STACK_SAMPLE},
    {"parser/profiling/Profiling.stack_sample_session_source", NULL, STACK_SAMPLE},
    {"parser/profiling/ProfilingHeapGraph.heap_profile_tracker_new_stack", ck_heap_allocations,
     NULL},
    {"parser/profiling/ProfilingHeapGraph.heap_profile_tracker_twoheaps", ck_heap_allocations,
     NULL},
    {"parser/profiling/ProfilingHeapProfiling.heap_profile_deobfuscate", ck_names_at_pc, NULL},
    {"parser/profiling/ProfilingHeapProfiling.heap_profile_deobfuscate_2", ck_names_at_pc, NULL},
    {"parser/profiling/ProfilingHeapProfiling.heap_profile_dump_max", ck_heap_allocations,
     "the dump has no time of its own: trace_processor puts it at -10 (0 on its clock), "
     "here it takes its packet's time (10)"},
    {"parser/profiling/ProfilingHeapProfiling.heap_profile_dump_max_legacy", ck_heap_allocations,
     "the dump time differs as in heap_profile_dump_max"},
    {"parser/profiling/ProfilingHeapProfiling.heap_profile_intervals", ck_heap_intervals, NULL},
    {"parser/profiling/ProfilingHeapProfiling.heap_profile_intervals_frees", ck_heap_intervals,
     NULL},
    {"parser/profiling/ProfilingHeapProfiling.heap_profile_intervals_legacy",
     ck_heap_dump_times, NULL},
    {"parser/profiling/ProfilingHeapProfiling.heap_profile_intervals_window",
     ck_heap_dump_times, "the window's start is not kept, only the dump time"},
    {"parser/profiling/ProfilingHeapProfiling.heap_profile_jit", ck_names_at_pc, NULL},
    {"parser/profiling/ProfilingHeapProfiling.heap_profile_window", ck_heap_dump_times,
     "the window's start is not kept, only the dump time"},
    {"parser/profiling/ProfilingHeapProfiling.heap_profile_window_legacy", ck_heap_one_dump,
     "the dump has no time of its own: trace_processor puts it at -10 (0 on its clock), "
     "here it takes its packet's time (10)"},
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
    {"parser/track_event/TrackEvent.track_event_callstack_weights", NULL,
     "TrackEvent callstacks belong to slices, not samples"},
    {"parser/track_event/TrackEvent.track_event_callstacks", NULL,
     "TrackEvent callstacks belong to slices, not samples"},
    {"stdlib/linux/LinuxTests.perf_sample_with_counters_view", ck_counters_view,
     "follower counters are not converted"},
    {"stdlib/stacks/Stacks.stack_profile_unknown_frame_name", ck_unknown_frame_name,
     "an unnamed frame is \"libc.so+0x7b\" here, \"unknown\" in trace_processor"},
    {"stdlib/stacks/Stacks.symbolization_candidates_heap_profile", ck_candidates_heap,
     "build ids given as text are kept as hex of their bytes"},
    {"stdlib/stacks/Stacks.symbolization_candidates_perf_profile", ck_candidates_perf, NULL},
};

TEST(perfetto_corpus_difftests)
{
    const char *shared = t_shared();
    size_t checked = 0, skipped = 0;
    if (!shared) {
        t_case("perfetto difftests");
        t_skip("../shared is absent: the Perfetto diff tests are not run");
        return;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const dt_case *k = &cases[i];
        const char *name = strrchr(k->dir, '/') + 1;
        t_case("perfetto difftest %s", name);
        char dir[600], path[700];
        snprintf(dir, sizeof dir, "%s/corpus/perfetto/difftests/%s", shared, k->dir);
        snprintf(path, sizeof path, "%s/trace.pb", dir);
        if (!k->check) {
            t_skip("%s", k->why);
            skipped++;
            continue;
        }
        dt c = {dir, NULL, NULL, {0}};
        pc_options o;
        pc_options_init(&o);
        log_capture_start(&o);
        c.p = convert_path(path, &o);
        c.log = log_capture_text();
        snprintf(path, sizeof path, "%s/expected.csv", dir);
        FILE *f = fopen(path, "r");
        if (f) {
            fclose(f);
            if (csv_read(path, &c.want) < 0)
                t_fail(__FILE__, __LINE__, "cannot read %s", path);
        }
        if (k->why)
            printf("  note %s: %s\n", name, k->why);
        if (c.p) {
            char log[4096];
            /* Checks that convert again replace the captured log. */
            snprintf(log, sizeof log, "%s", c.log);
            c.log = log;
            k->check(&c);
        }
        checked++;
        pc_profile_free(c.p);
        csv_free(&c.want);
    }
    /* Every diff test with a trace is in the table. */
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
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            listed |= strcmp(cases[k].dir, j_str(j_get(e, "dir"))) == 0;
        if (!listed)
            t_fail(__FILE__, __LINE__, "diff test %s is not in the table",
                   j_str(j_get(e, "dir")));
    }
    T_EQ_INT(with_trace, sizeof cases / sizeof cases[0]);
    T_EQ_INT(checked + skipped, sizeof cases / sizeof cases[0]);
    printf("  note Perfetto diff tests with a trace: %zu checked, %zu skipped\n", checked,
           skipped);
    j_free(root);
    free(json);
}
