/* pprof's profile.proto (github.com/google/pprof, proto/profile.proto),
 * written with the shared wire encoder one top-level message at a time.
 *
 * Samples are summed per (thread, stack, event): pprof has no time axis,
 * and labels (pid, tid, thread, process) keep threads apart.  Each event
 * has two sample types, its sample count and its weight (nanoseconds for
 * clocks and off-CPU time, else a count).  A profile without samples but
 * with a heap profile gives the heap's callsites instead, with the space
 * and object types pprof's tools know (alloc_*, free_*, inuse_*).
 *
 * Ids are the model's indexes plus one: a location per frame (its
 * address), a function per function, a mapping per library.  Strings are
 * numbered as first used and written last; string 0 is "". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashtab.h"
#include "base/pbwire.h"
#include "base/grow.h"
#include "write/sums.h"
#include "write/write.h"

enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE, PROFILE_MAPPING, PROFILE_LOCATION,
    PROFILE_FUNCTION, PROFILE_STRING_TABLE, PROFILE_DURATION_NANOS = 10,
    PROFILE_PERIOD_TYPE, PROFILE_PERIOD, PROFILE_COMMENT, PROFILE_DEFAULT_SAMPLE_TYPE,
};

typedef struct strings {
    const char **s;       /* index -> text (borrowed or in owned) */
    size_t n, cap;
    int64_t *of_sid;      /* model string id -> index, or 0 */
    char **owned;
    size_t n_owned;
    int oom;
} strings;

/* Appends s to the table; its index, or 0 when out of memory. */
static int64_t push_text(strings *t, const char *s)
{
    if (pc_grow(&t->s, &t->cap, t->n + 1, sizeof *t->s, 64) < 0) {
        t->oom = 1;
        return 0;
    }
    t->s[t->n] = s;
    return (int64_t)t->n++;
}

static int64_t add_text(strings *t, const char *s)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->s[i], s) == 0)
            return (int64_t)i;
    return push_text(t, s);
}

/* A literal: literals are few and looked up once each, by scanning. */
static int64_t str_lit(strings *t, const char *s)
{
    return add_text(t, s);
}

static int64_t str_sid(strings *t, const pc_profile *p, uint32_t sid)
{
    if (sid == PC_NONE)
        return 0;
    if (t->of_sid[sid])
        return t->of_sid[sid];
    return t->of_sid[sid] = push_text(t, pc_str(&p->str, sid));
}

/* A formatted string, owned by the table. */
static int64_t str_own(strings *t, char *s)
{
    if (!s) {
        t->oom = 1;
        return 0;
    }
    char **no = realloc(t->owned, (t->n_owned + 1) * sizeof *no);
    if (!no) {
        free(s);
        t->oom = 1;
        return 0;
    }
    t->owned = no;
    t->owned[t->n_owned++] = s;
    return add_text(t, s);
}

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s", a, b);
    return s;
}

/* Writes the scratch buffer's bytes to the sink and empties it. */
static void flush(pb_buf *b, pc_sink *s)
{
    sink_write(s, b->data, b->len);
    b->len = 0;
}

static void value_type(pb_buf *b, pc_sink *s, uint32_t field, int64_t type, int64_t unit)
{
    size_t m = pb_begin(b, field);
    pb_uint(b, 1, (uint64_t)type);
    pb_uint(b, 2, (uint64_t)unit);
    pb_end(b, m);
    flush(b, s);
}

/* The heap's six values of row i, in the order of heap_types. */
static const char *const heap_types[6][2] = {
    {"alloc_objects", "count"}, {"alloc_space", "bytes"}, {"free_objects", "count"},
    {"free_space", "bytes"},    {"inuse_objects", "count"}, {"inuse_space", "bytes"},
};

static void heap_values(const pc_profile *p, size_t i, int64_t v[6])
{
    uint64_t a = p->heap.alloc[i], f = p->heap.freed[i];
    uint64_t ac = p->heap.alloc_count[i], fc = p->heap.free_count[i];
    uint64_t u[6] = {ac, a, fc, f, ac > fc ? ac - fc : 0, a > f ? a - f : 0};
    for (int k = 0; k < 6; k++)
        v[k] = pc_clamp_i64(u[k]);
}

/* The label keys' string indexes. */
typedef struct keys {
    int64_t pid, process, tid, thread, heap;
} keys;

/* One Sample: leaf-first locations, values, and the thread's labels. */
static void sample(pb_buf *b, pc_sink *s, strings *t, const keys *k, const pc_profile *p,
                   uint32_t thread, uint32_t stack, const int64_t *values, size_t nv,
                   const uint32_t *main_of, int64_t heap_name)
{
    size_t m = pb_begin(b, PROFILE_SAMPLE);
    size_t l = pb_begin(b, 1);
    for (uint32_t st = stack; st != PC_NONE; st = p->stack.prefix[st])
        pb_put_varint(b, (uint64_t)p->stack.frame[st] + 1);
    pb_end(b, l);
    l = pb_begin(b, 2);
    for (size_t v = 0; v < nv; v++)
        pb_put_varint(b, (uint64_t)values[v]);
    pb_end(b, l);
    l = pb_begin(b, 3);
    pb_uint(b, 1, (uint64_t)k->pid);
    pb_uint(b, 3, (uint64_t)p->thread.pid[thread]);
    pb_end(b, l);
    uint32_t process = pc_process_label(p, thread, main_of[thread]);
    if (process != PC_NONE) {
        l = pb_begin(b, 3);
        pb_uint(b, 1, (uint64_t)k->process);
        pb_uint(b, 2, (uint64_t)str_sid(t, p, process));
        pb_end(b, l);
    }
    if (heap_name) {
        l = pb_begin(b, 3);
        pb_uint(b, 1, (uint64_t)k->heap);
        pb_uint(b, 2, (uint64_t)heap_name);
        pb_end(b, l);
    } else {
        l = pb_begin(b, 3);
        pb_uint(b, 1, (uint64_t)k->tid);
        pb_uint(b, 3, (uint64_t)p->thread.tid[thread]);
        pb_end(b, l);
        if (p->thread.name[thread] != PC_NONE) {
            l = pb_begin(b, 3);
            pb_uint(b, 1, (uint64_t)k->thread);
            pb_uint(b, 2, (uint64_t)str_sid(t, p, p->thread.name[thread]));
            pb_end(b, l);
        }
    }
    pb_end(b, m);
    flush(b, s);
}

/* Whether thread t belongs in the profile: every thread's, or with one
 * set, process pid's alone. */
static int in_process(const pc_profile *p, uint32_t t, int one, int64_t pid)
{
    return !one || p->thread.pid[t] == pid;
}

int pc_write_pprof(const pc_profile *p, const pc_write_options *o, pc_sink *s, pc_error *err)
{
    size_t nt = p->thread.n, ne = p->event.n;
    int64_t pid = o->pprof_pid;
    int one = o->pprof_one_process || pid >= 0;
    strings t = {0};
    pc_sums a = {0};
    pb_buf b = {0};
    uint32_t *order = malloc((nt + 1) * sizeof *order);
    uint32_t *main_of = malloc((nt + 1) * sizeof *main_of);
    uint8_t *used_frame = calloc(p->frame.n + 1, 1);
    uint8_t *used_stack = calloc(p->stack.n + 1, 1);
    uint8_t *ev_used = calloc(ne + 1, 1);
    int64_t *ev_index = calloc(ne + 1, sizeof *ev_index);
    int64_t *values = malloc((2 * ne + 8) * sizeof *values);
    t.of_sid = calloc(p->str.n + 1, sizeof *t.of_sid);
    int status = PC_OK;
    if (!order || !main_of || !used_frame || !used_stack || !ev_used || !ev_index || !values ||
        !t.of_sid)
        goto oom;
    pc_thread_order(p, order, main_of);
    str_lit(&t, "");
    keys k = {str_lit(&t, "pid"), str_lit(&t, "process"), str_lit(&t, "tid"),
              str_lit(&t, "thread"), str_lit(&t, "heap")};
    int heap = p->sample.n == 0 && p->heap.n > 0;

    /* Sample types. */
    size_t nv = 0;
    int64_t default_type = 0;
    if (heap) {
        for (int v = 0; v < 6; v++)
            value_type(&b, s, PROFILE_SAMPLE_TYPE, str_lit(&t, heap_types[v][0]),
                       str_lit(&t, heap_types[v][1]));
        nv = 6;
        default_type = str_lit(&t, p->meta.heap_measure == PC_HEAP_ALLOCATED ? "alloc_space"
                                   : p->meta.heap_measure == PC_HEAP_FREED ? "free_space"
                                                                          : "inuse_space");
    } else {
        for (size_t i = 0; i < p->sample.n; i++)
            if (pc_sample_event(p, i) < ne && in_process(p, pc_sample_thread(p, i), one, pid))
                ev_used[pc_sample_event(p, i)] = 1;
        for (size_t e = 0; e < ne; e++) {
            if (!ev_used[e])
                continue;
            const char *name = pc_str(&p->str, p->event.name[e]);
            ev_index[e] = (int64_t)nv;
            value_type(&b, s, PROFILE_SAMPLE_TYPE, str_own(&t, join(name, "_samples")),
                       str_lit(&t, "count"));
            int64_t type = str_sid(&t, p, p->event.name[e]);
            value_type(&b, s, PROFILE_SAMPLE_TYPE, type,
                       str_lit(&t, pc_is_time_event(p, e) ? "nanoseconds" : "count"));
            if (!default_type)
                default_type = type;
            nv += 2;
        }
    }

    /* Samples. */
    if (heap) {
        for (size_t i = 0; i < p->heap.n; i++) {
            if (!in_process(p, p->heap.thread[i], one, pid) || !pc_heap_shown(p, i))
                continue;
            heap_values(p, i, values);
            int any = 0;
            for (int v = 0; v < 6; v++)
                any |= values[v] != 0;
            if (!any)
                continue;
            for (uint32_t st = p->heap.stack[i]; st != PC_NONE && !used_stack[st];
                 st = p->stack.prefix[st])
                used_stack[st] = 1;
            sample(&b, s, &t, &k, p, p->heap.thread[i], p->heap.stack[i], values, nv, main_of,
                   str_sid(&t, p, p->heap.heap[i]));
        }
    } else {
        for (size_t i = 0; i < p->sample.n; i++)
            if (pc_sample_event(p, i) < ne && in_process(p, pc_sample_thread(p, i), one, pid) &&
                pc_sums_add(&a, pc_sample_thread(p, i), p->sample.stack[i], pc_sample_event(p, i), 1,
                        pc_sample_weight(p, i)) < 0)
                goto oom;
        for (size_t i = 0; i < a.n; i++) {
            for (size_t v = 0; v < nv; v++)
                values[v] = 0;
            values[ev_index[a.key[i]]] = a.count[i];
            values[ev_index[a.key[i]] + 1] = a.weight[i];
            for (uint32_t st = a.stack[i]; st != PC_NONE && !used_stack[st];
                 st = p->stack.prefix[st])
                used_stack[st] = 1;
            sample(&b, s, &t, &k, p, a.thread[i], a.stack[i], values, nv, main_of, 0);
        }
    }

    /* Mappings, locations and functions that the samples reach. */
    for (size_t st = 0; st < p->stack.n; st++)
        if (used_stack[st])
            used_frame[p->stack.frame[st]] = 1;
    uint8_t *used_func = calloc(p->func.n + 1, 1), *used_res = calloc(p->res.n + 1, 1);
    if (!used_func || !used_res) {
        free(used_func);
        free(used_res);
        goto oom;
    }
    for (size_t f = 0; f < p->frame.n; f++)
        if (used_frame[f]) {
            uint32_t fn = p->frame.func[f];
            used_func[fn] = 1;
            if (p->func.res[fn] != PC_NONE)
                used_res[p->func.res[fn]] = 1;
        }
    for (size_t r = 0; r < p->res.n; r++) {
        if (!used_res[r])
            continue;
        size_t m = pb_begin(&b, PROFILE_MAPPING);
        pb_uint(&b, 1, r + 1);
        pb_uint(&b, 5, (uint64_t)str_sid(&t, p, p->res.name[r]));
        if (p->res.build[r] != PC_NONE)
            pb_uint(&b, 6, (uint64_t)str_sid(&t, p, p->res.build[r]));
        pb_uint(&b, 7, 1);
        pb_end(&b, m);
        flush(&b, s);
    }
    for (size_t f = 0; f < p->frame.n; f++) {
        if (!used_frame[f])
            continue;
        uint32_t fn = p->frame.func[f];
        size_t m = pb_begin(&b, PROFILE_LOCATION);
        pb_uint(&b, 1, f + 1);
        if (p->func.res[fn] != PC_NONE)
            pb_uint(&b, 2, (uint64_t)p->func.res[fn] + 1);
        if (p->frame.addr[f])
            pb_uint(&b, 3, p->frame.addr[f]);
        size_t l = pb_begin(&b, 4);
        pb_uint(&b, 1, (uint64_t)fn + 1);
        pb_end(&b, l);
        pb_end(&b, m);
        flush(&b, s);
    }
    for (size_t fn = 0; fn < p->func.n; fn++) {
        if (!used_func[fn])
            continue;
        int64_t name = str_sid(&t, p, p->func.name[fn]);
        size_t m = pb_begin(&b, PROFILE_FUNCTION);
        pb_uint(&b, 1, fn + 1);
        pb_uint(&b, 2, (uint64_t)name);
        pb_uint(&b, 3, (uint64_t)name);
        if (p->func.res[fn] != PC_NONE)
            pb_uint(&b, 4, (uint64_t)str_sid(&t, p, p->res.name[p->func.res[fn]]));
        pb_end(&b, m);
        flush(&b, s);
    }
    free(used_func);
    free(used_res);

    /* How long, and the sampling period. */
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < p->sample.n; i++) {
        if (!in_process(p, pc_sample_thread(p, i), one, pid))
            continue;
        if (pc_sample_time(p, i) < first)
            first = pc_sample_time(p, i);
        if (pc_sample_time(p, i) > last)
            last = pc_sample_time(p, i);
    }
    for (size_t i = 0; i < p->heap.n; i++) {
        if (!in_process(p, p->heap.thread[i], one, pid) || !pc_heap_shown(p, i))
            continue;
        if (p->heap.time[i] < first)
            first = p->heap.time[i];
        if (p->heap.time[i] > last)
            last = p->heap.time[i];
    }
    /* No time_nanos: the inputs' clocks (boot time, monotonic) are not
     * wall-clock time, and pprof would print them as a date in 1970. */
    int64_t comment = str_lit(&t, "converted by profconv");
    if (first <= last)
        pb_uint(&b, PROFILE_DURATION_NANOS, last - first);
    if (!heap && default_type) {
        size_t e0 = 0;
        while (e0 < ne && !ev_used[e0])
            e0++;
        int time = e0 < ne && pc_is_time_event(p, e0);
        size_t m = pb_begin(&b, PROFILE_PERIOD_TYPE);
        pb_uint(&b, 1, (uint64_t)str_sid(&t, p, p->event.name[e0]));
        pb_uint(&b, 2, (uint64_t)str_lit(&t, time ? "nanoseconds" : "count"));
        pb_end(&b, m);
        if (time)
            pb_uint(&b, PROFILE_PERIOD, pc_interval_ns(p));
    }
    pb_uint(&b, PROFILE_COMMENT, (uint64_t)comment);
    if (default_type)
        pb_uint(&b, PROFILE_DEFAULT_SAMPLE_TYPE, (uint64_t)default_type);
    flush(&b, s);
    if (t.oom || b.oom)
        goto oom;
    /* The strings, last: every message above has numbered its own. */
    for (size_t i = 0; i < t.n; i++) {
        pb_bytes(&b, PROFILE_STRING_TABLE, t.s[i], strlen(t.s[i]));
        if (b.len > 1 << 16)
            flush(&b, s);
    }
    flush(&b, s);
    if (b.oom)
        goto oom;
    goto done;
oom:
    status = pc_fail(err, PC_ENOMEM, "out of memory writing the pprof profile");
done:
    for (size_t i = 0; i < t.n_owned; i++)
        free(t.owned[i]);
    free(t.owned);
    free(t.s);
    free(t.of_sid);
    pc_sums_free(&a);
    pb_buf_free(&b);
    free(order);
    free(main_of);
    free(used_frame);
    free(used_stack);
    free(ev_used);
    free(ev_index);
    free(values);
    return status;
}
