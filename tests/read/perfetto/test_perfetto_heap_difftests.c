/* The Perfetto reader against trace_processor's diff tests of heapprofd
 * heap profiles (../shared/corpus/perfetto/difftests): per dump, the
 * callsites' running totals, dump times and retained bytes, deobfuscated
 * and JIT frame names, and the frames a symbolizer would be asked about.
 * The table maps each diff test to its check or to what differs; the
 * manifest check is in test_perfetto_difftests.c.  Expected values are
 * always read from the corpus files, never written here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_corpus.h"
#include "t.h"
#include "test_util.h"

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

/* The expected build id is trace_processor's text of a build id given as
 * a string; the model keeps the bytes' hex (unsymbolized_frames shows the
 * same module's id that way). */
static void ck_candidates_heap(const dt *c)
{
    dt_candidates(c, 0);
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

const dt_case dt_heap_cases[] = {
    {"parser/profiling/Profiling.stack_profile_tracker_empty_callstack", ck_empty_callstack,
     NULL},
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
    {"stdlib/stacks/Stacks.symbolization_candidates_heap_profile", ck_candidates_heap,
     "build ids given as text are kept as hex of their bytes"},
};
const size_t dt_heap_count = sizeof dt_heap_cases / sizeof dt_heap_cases[0];

TEST(perfetto_corpus_heap_difftests)
{
    if (!t_shared()) {
        t_case("perfetto heap difftests");
        t_skip("../shared is absent: the Perfetto heap profile diff tests are not run");
        return;
    }
    dt_run(dt_heap_cases, dt_heap_count);
}
