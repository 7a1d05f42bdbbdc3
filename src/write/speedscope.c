/* speedscope's JSON file format (its file-format-spec.ts, with a published
 * JSON schema): a shared list of frames, {name, file}, and a list of
 * profiles, each a unit and, for the "sampled" kind used here, one stack
 * per sample (frame indexes, root first) with a parallel list of weights.
 *
 * Choices, and why:
 * - One sampled profile per thread, in the order the other writers use,
 *   since speedscope shows one profile at a time and a thread is what a
 *   reader wants to look at.  Samples keep their time order: speedscope's
 *   "Time Order" view lays samples end to end by weight, which with
 *   durations as weights reads as the thread's timeline.
 * - A profile has a single unit, so when the samples carry more than one
 *   event type (both halves of --trace-offcpu on-off-cpu, say), each
 *   (thread, event) pair becomes its own profile, named after the event:
 *   adding cycles to nanoseconds, or on-CPU to off-CPU time, would mislead.
 *   The mixed off-CPU mode puts everything under one event, hence one
 *   profile per thread, as intended by that mode.
 * - Clock and off-CPU events weigh their duration in ns ("nanoseconds");
 *   any other event weighs its period, the count of events the sample
 *   stands for ("none"), which is what the folded and pprof writers sum
 *   too, so all formats agree on proportions.
 * - speedscope rejects a negative weight (it throws on import), so one is
 *   written as 0; a sample with no stack is an empty array, which it
 *   accepts.
 * - Frames carry no address: model frames of one function at different
 *   addresses become one speedscope frame.  Funcs are interned on
 *   (name, resource) already, so a func id is exactly that key and a dense
 *   func -> frame table does the deduplication.  Only frames some written
 *   stack reaches are listed, in stack-table order, which is deterministic.
 * - Heap profiles (no samples, heap rows) give one "bytes" profile per
 *   (process, heap), each callsite a sample weighing the measure shown.
 * - startValue/endValue: for time units, the span of the profile's
 *   samples (last sample's duration included) from the recording's start,
 *   so profiles of one file line up; otherwise 0 and the total weight.
 *   speedscope computes its own totals from the weights, so these are for
 *   other readers of the file.
 * - activeProfileIndex opens the heaviest profile (the first on ties), as
 *   the Firefox writers select the busiest thread.
 *
 * Writing streams through the JSON emitter: each sample's stack is walked
 * leaf to root into one buffer sized by the deepest stack and written
 * reversed; nothing is allocated per sample.  A thread with several event
 * types is scanned once per event type it has, which stays linear in the
 * samples times the (few) event types. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/grow.h"
#include "write/write.h"

/* One output profile: thread t's samples of event ev (PC_NONE: all of
 * them), or heap rows perm[begin, end) of one (process, heap). */
typedef struct ss_prof {
    uint32_t thread, event, heap;
    size_t begin, end;
    uint64_t total;
} ss_prof;

typedef struct ss_state {
    const pc_profile *p;
    uint32_t *order, *main_of, *rank;
    uint32_t *depth, *chain;
    uint8_t *used;           /* per stack: some written sample reaches it */
    uint32_t *sf_of_func;    /* func -> speedscope frame, or PC_NONE */
    uint32_t *sf_func;       /* speedscope frame -> func */
    size_t n_sf;
    uint8_t *is_time;        /* per event */
    uint32_t *ev_stamp;      /* per event: last thread + 1 seen with it */
    uint16_t *ev_list;
    uint32_t *heap_perm;     /* heap rows written, grouped by profile */
    size_t n_heap_rows;
    ss_prof *prof;
    size_t n_prof, cap_prof;
    int split_events;
} ss_state;

static void ss_free(ss_state *st)
{
    free(st->order);
    free(st->main_of);
    free(st->rank);
    free(st->depth);
    free(st->chain);
    free(st->used);
    free(st->sf_of_func);
    free(st->sf_func);
    free(st->is_time);
    free(st->ev_stamp);
    free(st->ev_list);
    free(st->heap_perm);
    free(st->prof);
}

static int add_prof(ss_state *st, uint32_t thread, uint32_t event, uint32_t heap,
                    size_t begin, size_t end)
{
    if (pc_grow(&st->prof, &st->cap_prof, st->n_prof + 1, sizeof *st->prof, 16) < 0)
        return -1;
    ss_prof *pr = &st->prof[st->n_prof++];
    pr->thread = thread;
    pr->event = event;
    pr->heap = heap;
    pr->begin = begin;
    pr->end = end;
    pr->total = 0;
    return 0;
}

static uint64_t sample_weight(const pc_profile *p, size_t i)
{
    return pc_sample_weight(p, i) > 0 ? (uint64_t)pc_sample_weight(p, i) : 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* Whether sample i belongs to profile pr. */
static int in_prof(const ss_prof *pr, const pc_profile *p, size_t i)
{
    return pr->event == PC_NONE || pc_sample_event(p, i) == pr->event;
}

static int ev_cmp(const void *a, const void *b)
{
    uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;
    return (x > y) - (x < y);
}

/* The profiles of the samples: per thread in output order, per event type
 * when several are present. */
static int plan_samples(ss_state *st)
{
    const pc_profile *p = st->p;
    size_t ne = p->event.n;
    /* Event numbers the recording does not name get profiles too. */
    size_t n_ev = ne;
    for (size_t i = 0; i < p->sample.n; i++)
        if (pc_sample_event(p, i) >= n_ev)
            n_ev = (size_t)pc_sample_event(p, i) + 1;
    if (!(st->ev_stamp = calloc(n_ev + 1, sizeof *st->ev_stamp)) ||
        !(st->ev_list = malloc((n_ev + 1) * sizeof *st->ev_list)) ||
        !(st->is_time = calloc(ne + 1, 1)))
        return -1;
    for (size_t e = 0; e < ne; e++)
        st->is_time[e] = (uint8_t)(pc_is_time_event(p, e) != 0);
    for (size_t i = 1; i < p->sample.n && !st->split_events; i++)
        st->split_events = pc_sample_event(p, i) != pc_sample_event(p, 0);
    for (size_t k = 0; k < p->thread.n; k++) {
        uint32_t t = st->order[k];
        size_t b = p->sample.first[t], e = p->sample.first[t + 1];
        if (b == e)
            continue;
        if (!st->split_events) {
            if (add_prof(st, t, PC_NONE, PC_NONE, b, e) < 0)
                return -1;
            continue;
        }
        size_t n = 0;
        for (size_t i = b; i < e; i++) {
            uint16_t ev = pc_sample_event(p, i);
            if (st->ev_stamp[ev] != t + 1) {
                st->ev_stamp[ev] = t + 1;
                st->ev_list[n++] = ev;
            }
        }
        pc_qsort(st->ev_list, n, sizeof *st->ev_list, ev_cmp);
        for (size_t j = 0; j < n; j++)
            if (add_prof(st, t, st->ev_list[j], PC_NONE, b, e) < 0)
                return -1;
    }
    for (size_t k = 0; k < st->n_prof; k++) {
        ss_prof *pr = &st->prof[k];
        for (size_t i = pr->begin; i < pr->end; i++)
            if (in_prof(pr, p, i)) {
                pr->total = sat_add(pr->total, sample_weight(p, i));
                st->used[p->sample.stack[i] == PC_NONE ? p->stack.n : p->sample.stack[i]] = 1;
            }
    }
    return 0;
}

static int heap_cmp(const void *a, const void *b, const void *ctx)
{
    const ss_state *st = ctx;
    const pc_profile *p = st->p;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t rx = st->rank[p->heap.thread[x]], ry = st->rank[p->heap.thread[y]];
    if (rx != ry)
        return rx < ry ? -1 : 1;
    if (p->heap.heap[x] != p->heap.heap[y])
        return p->heap.heap[x] < p->heap.heap[y] ? -1 : 1;
    return (x > y) - (x < y);
}

/* The profiles of a heap profile: per process (in thread output order)
 * and heap, the callsites of the dump shown in row order; rows with
 * nothing to show are left out, as speedscope would ignore them anyway. */
static int plan_heap(ss_state *st)
{
    const pc_profile *p = st->p;
    if (!(st->heap_perm = malloc((p->heap.n + 1) * sizeof *st->heap_perm)))
        return -1;
    for (size_t i = 0; i < p->heap.n; i++)
        if (pc_heap_shown(p, i) && pc_heap_value(p, i) != 0)
            st->heap_perm[st->n_heap_rows++] = (uint32_t)i;
    pc_sort_ctx(st->heap_perm, st->n_heap_rows, sizeof *st->heap_perm, heap_cmp, st);
    for (size_t k = 0; k < st->n_heap_rows;) {
        uint32_t r = st->heap_perm[k];
        size_t j = k;
        while (j < st->n_heap_rows && p->heap.thread[st->heap_perm[j]] == p->heap.thread[r] &&
               p->heap.heap[st->heap_perm[j]] == p->heap.heap[r])
            j++;
        if (add_prof(st, p->heap.thread[r], PC_NONE, p->heap.heap[r], k, j) < 0)
            return -1;
        ss_prof *pr = &st->prof[st->n_prof - 1];
        for (size_t m = k; m < j; m++) {
            uint32_t row = st->heap_perm[m];
            pr->total = sat_add(pr->total, pc_heap_value(p, row));
            st->used[p->heap.stack[row] == PC_NONE ? p->stack.n : p->heap.stack[row]] = 1;
        }
        k = j;
    }
    return 0;
}

/* Numbers the functions of the frames the written stacks reach. */
static int plan_frames(ss_state *st)
{
    const pc_profile *p = st->p;
    size_t ns = p->stack.n;
    if (!(st->sf_of_func = malloc((p->func.n + 1) * sizeof *st->sf_of_func)) ||
        !(st->sf_func = malloc((p->func.n + 1) * sizeof *st->sf_func)))
        return -1;
    for (size_t f = 0; f < p->func.n; f++)
        st->sf_of_func[f] = PC_NONE;
    /* Prefixes have lower ids than their stacks. */
    for (size_t s = ns; s-- > 0;)
        if (st->used[s] && p->stack.prefix[s] != PC_NONE)
            st->used[p->stack.prefix[s]] = 1;
    for (size_t s = 0; s < ns; s++) {
        if (!st->used[s])
            continue;
        uint32_t func = p->frame.func[p->stack.frame[s]];
        if (st->sf_of_func[func] == PC_NONE) {
            st->sf_of_func[func] = (uint32_t)st->n_sf;
            st->sf_func[st->n_sf++] = func;
        }
    }
    return 0;
}

static void name_part(jw *w, const char *s)
{
    jw_str_part(w, s, strlen(s));
}

static void name_id(jw *w, const pc_profile *p, uint32_t id)
{
    jw_str_part(w, pc_str(&p->str, id), pc_str_len(&p->str, id));
}

/* "NAME (pid N)" of thread t's process, or "pid N"; the CPUs of --percpu
 * (pid -1) by name alone. */
static void process_part(jw *w, const ss_state *st, uint32_t t)
{
    const pc_profile *p = st->p;
    char buf[48];
    uint32_t name = pc_process_label(p, t, st->main_of[t]);
    int64_t pid = p->thread.pid[t];
    if (name != PC_NONE) {
        name_id(w, p, name);
        if (pid < 0)
            return;
        snprintf(buf, sizeof buf, " (pid %" PRId64 ")", pid);
    } else {
        snprintf(buf, sizeof buf, "pid %" PRId64, pid);
    }
    name_part(w, buf);
}

static void prof_name(jw *w, const ss_state *st, const ss_prof *pr)
{
    const pc_profile *p = st->p;
    char buf[48];
    uint32_t t = pr->thread;
    jw_str_begin(w);
    if (pr->heap != PC_NONE) {
        process_part(w, st, t);
        name_part(w, " - ");
        name_id(w, p, pr->heap);
        name_part(w, " (");
        name_part(w, pc_heap_what(p, pr->heap));
        name_part(w, " bytes)");
        jw_str_end(w);
        return;
    }
    int64_t tid = p->thread.tid[t];
    if (p->thread.name[t] != PC_NONE) {
        name_id(w, p, p->thread.name[t]);
        snprintf(buf, sizeof buf, " (tid %" PRId64 ")", tid);
        if (p->thread.pid[t] >= 0)
            name_part(w, buf);
    } else {
        snprintf(buf, sizeof buf, "tid %" PRId64, tid);
        name_part(w, buf);
    }
    name_part(w, " - ");
    process_part(w, st, t);
    if (pr->event != PC_NONE) {
        name_part(w, " - ");
        if (pr->event < p->event.n) {
            name_id(w, p, p->event.name[pr->event]);
        } else {
            snprintf(buf, sizeof buf, "event %" PRIu32, pr->event);
            name_part(w, buf);
        }
    }
    jw_str_end(w);
}

/* Writes stack as an array of speedscope frames, root first. */
static void write_stack(jw *w, const ss_state *st, uint32_t stack)
{
    const pc_profile *p = st->p;
    size_t n = 0;
    for (uint32_t s = stack; s != PC_NONE; s = p->stack.prefix[s])
        st->chain[n++] = p->stack.frame[s];
    jw_arr(w);
    while (n-- > 0)
        jw_uint(w, st->sf_of_func[p->frame.func[st->chain[n]]]);
    jw_arr_end(w);
}

static void write_prof(jw *w, const ss_state *st, const ss_prof *pr, uint64_t origin)
{
    const pc_profile *p = st->p;
    int heap = pr->heap != PC_NONE;
    /* The event of the profile's samples, for its unit. */
    uint32_t ev = pr->event;
    if (!heap && ev == PC_NONE)
        ev = pc_sample_event(p, pr->begin);
    int timed = !heap && ev < p->event.n && st->is_time[ev];
    uint64_t start = 0, end = pr->total;
    if (timed) {
        int any = 0;
        for (size_t i = pr->begin; i < pr->end; i++) {
            if (!in_prof(pr, p, i))
                continue;
            uint64_t a = pc_sample_time(p, i) - origin;
            uint64_t b = sat_add(a, sample_weight(p, i));
            if (!any || a < start)
                start = a;
            if (!any || b > end)
                end = b;
            any = 1;
        }
    }
    jw_obj(w);
    jw_key(w, "type");
    jw_cstr(w, "sampled");
    jw_key(w, "name");
    prof_name(w, st, pr);
    jw_key(w, "unit");
    jw_cstr(w, heap ? "bytes" : timed ? "nanoseconds" : "none");
    jw_key(w, "startValue");
    jw_uint(w, start);
    jw_key(w, "endValue");
    jw_uint(w, end);
    jw_key(w, "samples");
    jw_arr(w);
    for (size_t i = pr->begin; i < pr->end; i++) {
        if (heap)
            write_stack(w, st, p->heap.stack[st->heap_perm[i]]);
        else if (in_prof(pr, p, i))
            write_stack(w, st, p->sample.stack[i]);
    }
    jw_arr_end(w);
    jw_key(w, "weights");
    jw_arr(w);
    for (size_t i = pr->begin; i < pr->end; i++) {
        if (heap)
            jw_uint(w, pc_heap_value(p, st->heap_perm[i]));
        else if (in_prof(pr, p, i))
            jw_uint(w, sample_weight(p, i));
    }
    jw_arr_end(w);
    jw_obj_end(w);
}

int pc_write_speedscope(const pc_profile *p, const pc_write_options *o, pc_sink *s,
                        pc_error *err)
{
    (void)o;  /* nothing to choose */
    ss_state st = {0};
    size_t nt = p->thread.n, ns = p->stack.n;
    st.p = p;
    st.order = malloc((nt + 1) * sizeof *st.order);
    st.main_of = malloc((nt + 1) * sizeof *st.main_of);
    st.rank = malloc((nt + 1) * sizeof *st.rank);
    st.depth = malloc((ns + 1) * sizeof *st.depth);
    /* One more for empty stacks, so that marking them needs no test. */
    st.used = calloc(ns + 1, 1);
    if (!st.order || !st.main_of || !st.rank || !st.depth || !st.used)
        goto oom;
    pc_thread_order(p, st.order, st.main_of);
    for (size_t k = 0; k < nt; k++)
        st.rank[st.order[k]] = (uint32_t)k;
    uint32_t max_depth = 0;
    for (size_t i = 0; i < ns; i++) {
        uint32_t pre = p->stack.prefix[i];
        st.depth[i] = pre == PC_NONE ? 1 : st.depth[pre] + 1;
        if (st.depth[i] > max_depth)
            max_depth = st.depth[i];
    }
    if (!(st.chain = malloc(((size_t)max_depth + 1) * sizeof *st.chain)))
        goto oom;
    if (p->sample.n ? plan_samples(&st) < 0 : plan_heap(&st) < 0)
        goto oom;
    if (plan_frames(&st) < 0)
        goto oom;

    size_t active = 0;
    for (size_t k = 1; k < st.n_prof; k++)
        if (st.prof[k].total > st.prof[active].total)
            active = k;
    /* Times count from the recording's start, whatever the filters. */
    uint64_t origin = p->meta.first_time;
    uint32_t focus;
    char title[512];
    if (pc_focus_thread(p, st.main_of, &focus) < 0 ||
        pc_title(p, st.main_of, focus, title, sizeof title) < 0)
        goto oom;

    jw w;
    jw_init(&w, s);
    jw_obj(&w);
    jw_key(&w, "$schema");
    jw_cstr(&w, "https://www.speedscope.app/file-format-schema.json");
    jw_key(&w, "shared");
    jw_obj(&w);
    jw_key(&w, "frames");
    jw_arr(&w);
    for (size_t k = 0; k < st.n_sf; k++) {
        uint32_t func = st.sf_func[k], res = p->func.res[func];
        jw_obj(&w);
        jw_key(&w, "name");
        pc_jw_str_id(&w, p, p->func.name[func]);
        if (res != PC_NONE) {
            jw_key(&w, "file");
            pc_jw_str_id(&w, p, p->res.name[res]);
        }
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_key(&w, "profiles");
    jw_arr(&w);
    for (size_t k = 0; k < st.n_prof; k++)
        write_prof(&w, &st, &st.prof[k], origin);
    jw_arr_end(&w);
    jw_key(&w, "name");
    jw_cstr(&w, title);
    if (st.n_prof) {
        jw_key(&w, "activeProfileIndex");
        jw_uint(&w, active);
    }
    jw_key(&w, "exporter");
    jw_cstr(&w, "profconv " PROFCONV_VERSION);
    jw_obj_end(&w);
    ss_free(&st);
    return PC_OK;
oom:
    ss_free(&st);
    return pc_fail(err, PC_ENOMEM, "out of memory writing speedscope JSON");
}
