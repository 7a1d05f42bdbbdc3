/* The public entry points: detect the input format, read, transform,
 * write. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "base/error.h"
#include "base/thread.h"
#include "model/model.h"
#include "read/read.h"
#include "io/source.h"
#include "transform/transform.h"
#include "write/write.h"

void pc_options_init(pc_options *o)
{
    memset(o, 0, sizeof *o);
    o->remove_gaps = -1;
    o->time_start = -1;
    o->time_end = -1;
    o->switch_markers = 1;
    o->max_depth = PC_MAX_DEPTH_DEFAULT;
    o->heap_measure = PC_HEAP_DEFAULT;
}

typedef struct progress_bridge {
    const pc_options *o;
    const pc_profile *p;
} progress_bridge;

static void tell_progress(void *ctx, uint64_t done, uint64_t total)
{
    const progress_bridge *b = ctx;
    pc_progress pr = {done, total, b->p->sample.n};
    b->o->progress(b->o->progress_ctx, &pr);
}


static int read_any(pc_input *in, pc_profile *p, const pc_options *o, pc_error *err)
{
    progress_bridge b = {o, p};
    if (o->progress)
        src_set_progress(in, tell_progress, &b);
    int st = pc_read_input(in, p, o, err);
    if (st == PC_OK)
        src_report_end(in);
    src_set_progress(in, NULL, NULL);
    return st;
}

/* The options', or else what the input's reader said its tools do. */
static int gaps_of(const pc_profile *p, const pc_options *o)
{
    return o->remove_gaps >= 0 ? o->remove_gaps : p->meta.default_gaps;
}

/* A thread and its sample count, to list the busiest first (then by
 * tid); the comparator needs nothing else, so conversions on several
 * threads do not share state. */
typedef struct busy {
    size_t n;
    int64_t tid;
    uint32_t t;
} busy;

static int by_samples(const void *a, const void *b)
{
    const busy *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

/* "tid name (pid P, N samples), ..." for the busiest threads of a grouped
 * profile, in a new string; NULL when out of memory. */
static char *threads_text(const pc_profile *p)
{
    enum { SHOWN = 8, SIZE = 1024 };
    size_t nt = p->thread.n, k = 0;
    busy *t = malloc((nt + 1) * sizeof *t);
    char *buf = malloc(SIZE);
    if (!t || !buf) {
        free(t);
        free(buf);
        return NULL;
    }
    for (size_t i = 0; i < nt; i++)
        if (p->sample.first[i + 1] > p->sample.first[i])
            t[k++] = (busy){p->sample.first[i + 1] - p->sample.first[i], p->thread.tid[i],
                            (uint32_t)i};
    pc_qsort(t, k, sizeof *t, by_samples);
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < k && i < SHOWN && used < SIZE; i++) {
        uint32_t x = t[i].t;
        int n = snprintf(buf + used, SIZE - used, "%s%" PRId64 " %.40s (pid %" PRId64 ", %zu)",
                         i ? ", " : "", p->thread.tid[x], pc_str(&p->str, p->thread.name[x]),
                         p->thread.pid[x], t[i].n);
        used = n < 0 ? SIZE : used + (size_t)n;
    }
    if (k > SHOWN && used < SIZE)
        snprintf(buf + used, SIZE - used, " and %zu more", k - SHOWN);
    free(t);
    return buf;
}

/* A result with nothing to show is an error that says what the input held
 * and what would have given samples: an empty profile would only make the
 * viewers refuse it or draw empty tracks. */
static int nothing_to_show(pc_profile *p, pc_input *in, const char *threads,
                           size_t heap_read, pc_error *err)
{
    int has_stack = 0;
    for (size_t i = 0; i < p->sample.n && !has_stack; i++)
        has_stack = p->sample.stack[i] != PC_NONE;
    /* Traced slices are something to look at in the marker chart. */
    if (has_stack || p->counter.n || pc_slice_count(p))
        return PC_OK;
    uint64_t alloc = 0, freed = 0, shown = 0, earlier = 0;
    for (size_t i = 0; i < p->heap.n; i++) {
        if (!pc_heap_shown(p, i)) {
            earlier |= pc_heap_value(p, i);
            continue;
        }
        shown |= pc_heap_value(p, i);
        alloc = alloc > UINT64_MAX - p->heap.alloc[i] ? UINT64_MAX : alloc + p->heap.alloc[i];
        freed = freed > UINT64_MAX - p->heap.freed[i] ? UINT64_MAX : freed + p->heap.freed[i];
    }
    if (shown)
        return PC_OK;
    const char *name = src_name(in);
    double span = (double)(p->meta.last_time - p->meta.first_time) / 1e6;
    if (p->sample.n)
        return pc_fail(err, PC_EINPUT, "%s: nothing to show: none of the %zu samples kept "
                       "has a callstack", name, p->sample.n);
    if (p->heap.n)
        return pc_fail(err, PC_EINPUT, "%s: nothing to show: the heap dumps shown hold no "
                       "%s bytes (%" PRIu64 " bytes allocated, %" PRIu64 " freed by then); "
                       "options.heap_measure allocated or options.heap_measure freed shows "
                       "what they hold%s",
                       name, pc_heap_measure_name(p), alloc, freed,
                       earlier ? ", options.heap_dump N an earlier dump that holds some" : "");
    if (p->sample.read)
        return pc_fail(err, PC_EINPUT, "%s: nothing to show: the options kept none of the "
                       "%zu samples of a recording of %.1f ms; threads with samples (tid, "
                       "name, pid, samples): %s", name, p->sample.read, span,
                       threads ? threads : "");
    if (heap_read)
        return pc_fail(err, PC_EINPUT, "%s: nothing to show: the options kept none of the "
                       "%zu heap callsites of a recording of %.1f ms", name, heap_read, span);
    return pc_fail(err, PC_EINPUT, "%s: nothing to show: the input holds no samples%s%s", name,
                   p->meta.empty_hint != PC_NONE ? "; " : "",
                   p->meta.empty_hint != PC_NONE ? pc_str(&p->str, p->meta.empty_hint) : "");
}

/* Values out of range are the caller's mistake, said rather than clamped
 * or guessed around. */
static int check_options(const pc_options *o, pc_error *err)
{
    if (o->remove_gaps < -1)
        return pc_fail(err, PC_EUSAGE, "options.remove_gaps %d is below -1 (the default)",
                       o->remove_gaps);
    if (o->offcpu < PC_OFFCPU_DEFAULT || o->offcpu > PC_OFFCPU_MIXED)
        return pc_fail(err, PC_EUSAGE, "options.offcpu %d is no enum pc_offcpu_mode",
                       o->offcpu);
    if (o->time_start < -1 || o->time_end < -1)
        return pc_fail(err, PC_EUSAGE, "options.time_start %lld or options.time_end %lld is "
                       "below -1 (open)", (long long)o->time_start, (long long)o->time_end);
    if (o->heap_dump < 0)
        return pc_fail(err, PC_EUSAGE, "options.heap_dump %d is below 0 (the last)",
                       o->heap_dump);
    if (o->heap_dump_base < 0 || (o->heap_dump_base && o->heap_dump &&
                                  o->heap_dump <= o->heap_dump_base))
        return pc_fail(err, PC_EUSAGE, "options.heap_dump_base %d must be a dump before "
                       "options.heap_dump %d", o->heap_dump_base, o->heap_dump);
    if (o->heap_measure < PC_HEAP_UNRELEASED || o->heap_measure > PC_HEAP_DEFAULT)
        return pc_fail(err, PC_EUSAGE, "options.heap_measure %d is no enum pc_heap_measure",
                       o->heap_measure);
    if (o->threads < 0)
        return pc_fail(err, PC_EUSAGE, "options.threads %d is below 0 (the default)",
                       o->threads);
    const pc_strings *lists[] = {&o->process_names, &o->exclude_process_names,
                                 &o->thread_names, &o->exclude_thread_names,
                                 &o->aggregate_threads, &o->proguard_mapping_files,
                                 &o->remove_methods, &o->symbol_dirs};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        if (lists[i]->n && !lists[i]->items)
            return pc_fail(err, PC_EUSAGE, "an options list has %zu items and no array",
                           lists[i]->n);
    const pc_ids *ids[] = {&o->pids, &o->exclude_pids, &o->tids, &o->exclude_tids};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
        if (ids[i]->n && !ids[i]->items)
            return pc_fail(err, PC_EUSAGE, "an options id list has %zu items and no array",
                           ids[i]->n);
    return PC_OK;
}

static int convert(pc_input *in, const pc_options *o, pc_profile **out, pc_error *err,
                   int refuse_empty)
{
    pc_options defaults;
    if (!o) {
        pc_options_init(&defaults);
        o = &defaults;
    }
    int checked = check_options(o, err);
    if (checked != PC_OK)
        return checked;
    if (!src_claim(in))
        return pc_fail(err, PC_EUSAGE, "%s: the input was converted already",
                       src_name(in));
    pc_profile *p = pc_profile_new();
    if (!p)
        return pc_fail(err, PC_ENOMEM, "%s: out of memory", src_name(in));
    p->depth.max = o->max_depth;
    p->stack.map_async = pc_thread_count(o->threads) > 1 ? PC_STREE_MAP_ASYNC : 0;
    src_set_threads(in, o->threads);
    int st = read_any(in, p, o, err);
    src_done(in);
    if (st == PC_OK) {
        pc_note_extent(p);
        pc_name_unnamed_threads(p);
    }
    if (st == PC_OK && p->depth.cut)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " callstacks deeper than %zu frames keep only "
               "their %zu innermost frames (the deepest has %zu; options.max_depth sets the limit)",
               p->depth.cut, p->depth.max, p->depth.max, p->depth.deepest);
    if (st == PC_OK && pc_group_samples_on(p, o->threads) < 0)
        st = pc_fail(err, PC_ENOMEM, "%s: out of memory", src_name(in));
    /* What the options could have kept, should they keep nothing. */
    char *threads = NULL;
    size_t heap_read = p->heap.n;
    if (st == PC_OK && p->sample.n && !(threads = threads_text(p)))
        st = pc_fail(err, PC_ENOMEM, "%s: out of memory", src_name(in));
    /* Names first: filters and Java frames go by them. */
    if (st == PC_OK)
        st = pc_symbolize(p, o, err);
    /* Off-CPU durations and markers need every event, before filters. */
    if (st == PC_OK)
        st = pc_offcpu(p, o, err);
    if (st == PC_OK)
        st = pc_select_events(p, o, err);
    if (st == PC_OK)
        st = pc_switch_markers(p, o, err);
    if (st == PC_OK)
        st = pc_filter_threads(p, o, err);
    if (st == PC_OK)
        st = pc_filter_time(p, o, err);
    if (st == PC_OK)
        st = pc_java_frames(p, o, err);
    /* One thread per CPU once the threads to look at are chosen. */
    if (st == PC_OK)
        st = pc_percpu(p, o, err);
    /* simpleperf aggregates threads before it removes gaps. */
    if (st == PC_OK)
        st = pc_aggregate_threads(p, o, err);
    if (st == PC_OK)
        st = pc_select_heap(p, o, err);
    if (st == PC_OK)
        st = pc_remove_gaps(p, gaps_of(p, o), o, err);
    /* Off-CPU leaves go on the final stacks, which removed frames and
     * folded JIT frames no longer change. */
    if (st == PC_OK)
        st = pc_offcpu_mix(p, err);
    if (st == PC_OK && refuse_empty)
        st = nothing_to_show(p, in, threads, heap_read, err);
    /* Writers only read the stacks: what interning needs goes, before the
     * writers' own tables come. */
    if (st == PC_OK)
        pc_stree_freeze(&p->stack);
    free(threads);
    if (st != PC_OK) {
        pc_profile_free(p);
        return st;
    }
    *out = p;
    return PC_OK;
}

int pc_convert(pc_input *in, const pc_options *o, pc_profile **out, pc_error *err)
{
    return convert(in, o, out, err, 1);
}

int pc_convert_unchecked(pc_input *in, const pc_options *o, pc_profile **out,
                         pc_error *err)
{
    return convert(in, o, out, err, 0);
}

void pc_profile_summary(const pc_profile *p, pc_summary *s)
{
    memset(s, 0, sizeof *s);
    s->threads = p->thread.n;
    /* A comparison thread repeats the samples of the two inputs.  Grouped,
     * each thread's rows are one range. */
    if (p->sample.first)
        for (size_t t = 0; t < p->thread.n; t++)
            s->samples += p->thread.diff[t] ? 0 : p->sample.first[t + 1] - p->sample.first[t];
    else
        for (size_t i = 0; i < p->sample.n; i++)
            s->samples += !p->thread.diff[pc_sample_thread(p, i)];
    s->samples_read = p->sample.read;
    s->stacks = p->stack.n;
    s->frames = p->frame.n;
    for (size_t i = 0; i < p->heap.n; i++)
        s->heap_rows += pc_heap_shown(p, i);
    s->counter_values = p->counter.n;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int pc_profile_pids(const pc_profile *p, int64_t **pids, size_t *n, pc_error *err)
{
    /* Threads are few: collect one pid per thread, sort, deduplicate. */
    size_t nt = p->thread.n, k = 0;
    uint8_t *used = calloc(nt + 1, 1);
    int64_t *v = malloc((nt + 1) * sizeof *v);
    if (!used || !v) {
        free(used);
        free(v);
        return pc_fail(err, PC_ENOMEM, "out of memory");
    }
    if (p->sample.first)
        for (size_t t = 0; t < nt; t++)
            used[t] = p->sample.first[t + 1] > p->sample.first[t];
    else
        for (size_t i = 0; i < p->sample.n; i++)
            used[pc_sample_thread(p, i)] = 1;
    for (size_t i = 0; i < p->heap.n; i++)
        used[p->heap.thread[i]] = 1;
    for (size_t i = 0; i < p->counter.n; i++)
        used[p->counter.thread[i]] = 1;
    for (size_t t = 0; t < nt; t++)
        if (used[t])
            v[k++] = p->thread.pid[t];
    pc_qsort(v, k, sizeof *v, cmp_i64);
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        if (m == 0 || v[m - 1] != v[i])
            v[m++] = v[i];
    free(used);
    *pids = v;
    *n = m;
    return PC_OK;
}
