/* StackSample (packet field 135): the generic sampler's samples, from
 * profilers other than traced_perf (language runtimes, wall-clock
 * samplers).  A sample names its task (pid, tid, async context), its
 * execution context (CPU), its callstack (interned, as traced_perf's, or
 * inline: function names with source locations) and the counter it is
 * measured against; each may be given inline or by an iid of the
 * sequence's interned data, and the counter may come from the
 * sequence's StackSampleDefaults.  Follower weights, measured against
 * counters given the same ways, are counter values. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "read/perfetto/reader.h"

/* StackSample.Unit values this reader gives a meaning to. */
enum { UNIT_NANOSECONDS = 1 };

enum { HAS_A = 1, HAS_B = 2, HAS_C = 4, HAS_NAME = 8, HAS_STR = 16 };

/* Interned messages, and their `iid` in *iid. */
static int on_task(pf_reader *r, pb_reader *pr, pf_ss_rec *t, uint64_t *iid)
{
    static const uint8_t ex[] = {ANY, V, V, V, V};
    pb_field f;
    int got;
    while ((got = NEXT(r, pr, &f, ex, "StackSample.TaskContext")) > 0) {
        if (f.number < 1 || f.number > 4)
            continue;
        if (pf_scalar(r, pr, &f, "StackSample.TaskContext") != PC_OK)
            return r->err->status;
        switch (f.number) {
        case 1: *iid = f.value; break;
        /* uint32 on the wire; a longer varint keeps its low bits, as
         * protobuf's own decoders do. */
        case 2: t->a = (uint32_t)f.value; t->has |= HAS_A; break;
        case 3: t->b = (uint32_t)f.value; t->has |= HAS_B; break;
        case 4: t->c = f.value; t->has |= f.value ? HAS_C : 0; break;
        }
    }
    return got < 0 ? r->err->status : PC_OK;
}

static int on_exec(pf_reader *r, pb_reader *pr, pf_ss_rec *e, uint64_t *iid)
{
    static const uint8_t ex[] = {ANY, V, V, V};
    pb_field f;
    int got;
    while ((got = NEXT(r, pr, &f, ex, "StackSample.ExecutionContext")) > 0) {
        if (f.number < 1 || f.number > 3)
            continue;
        if (pf_scalar(r, pr, &f, "StackSample.ExecutionContext") != PC_OK)
            return r->err->status;
        if (f.number == 1)
            *iid = f.value;
        else if (f.number == 2) {
            e->a = (uint32_t)f.value;
            e->has |= HAS_A;
        }
    }
    return got < 0 ? r->err->status : PC_OK;
}

static int on_counter(pf_reader *r, pb_reader *pr, pf_ss_rec *c, uint64_t *iid)
{
    static const uint8_t ex[] = {ANY, V, L, V, L, V, L, V};
    pb_field f;
    int got;
    while ((got = NEXT(r, pr, &f, ex, "StackSample.CounterDescriptor")) > 0) {
        if ((f.number == 1 || f.number == 3 || f.number == 5 || f.number == 7) &&
            pf_scalar(r, pr, &f, "StackSample.CounterDescriptor") != PC_OK)
            return r->err->status;
        switch (f.number) {
        case 1: *iid = f.value; break;
        case 2:
            if ((c->name = pc_intern(r->p, f.data, f.len)) == PC_NONE)
                return pf_nomem(r);
            c->has |= HAS_NAME;
            break;
        /* unit and unit_str are a oneof: the last one given wins. */
        case 3: c->a = f.value; c->has = (uint8_t)((c->has | HAS_A) & ~HAS_STR); break;
        case 4:
            if ((c->str = pc_intern(r->p, f.data, f.len)) == PC_NONE)
                return pf_nomem(r);
            c->has = (uint8_t)((c->has | HAS_STR) & ~HAS_A);
            break;
        case 5: c->b = f.value; c->has |= HAS_B; break;
        }
    }
    return got < 0 ? r->err->status : PC_OK;
}

int pf_on_stack_sample_interned(pf_reader *r, pb_reader *pr, pf_interned *t, uint32_t field)
{
    int kind = field == 48 ? PF_SS_TASK : field == 49 ? PF_SS_EXEC : PF_SS_COUNTER;
    uint32_t i = pf_interned_new_ss(t);
    if (i == PC_NONE)
        return pf_nomem(r);
    pf_ss_rec rec;
    memset(&rec, 0, sizeof rec);
    uint64_t iid = 0;
    int st = kind == PF_SS_TASK ? on_task(r, pr, &rec, &iid)
             : kind == PF_SS_EXEC ? on_exec(r, pr, &rec, &iid)
                                  : on_counter(r, pr, &rec, &iid);
    if (st != PC_OK)
        return st;
    t->ss[i] = rec;
    int got = pf_interned_put(t, kind, iid, i);
    if (got < 0)
        return pf_nomem(r);
    /* The first definition wins, as for every interned kind. */
    if (got == 0)
        pf_interned_unappend(t, kind);
    return PC_OK;
}

int pf_on_stack_sample_defaults(pf_reader *r, pb_reader *pr, pf_seq *s)
{
    static const uint8_t ex[] = {ANY, L, L, L};
    pb_field f;
    pb_reader sub;
    int got;
    memset(&s->ssd, 0, sizeof s->ssd);
    /* Events cached by interned counters were named after the source
     * these defaults may change. */
    for (size_t i = 0; i < s->it.n_ss; i++)
        s->it.ss[i].event1 = s->it.ss[i].uncounted1 = 0;
    while ((got = NEXT(r, pr, &f, ex, "StackSampleDefaults")) > 0) {
        if (f.number == 1) {
            uint32_t sid = f.len ? pc_intern(r->p, f.data, f.len) : PC_NONE;
            if (f.len && sid == PC_NONE)
                return pf_nomem(r);
            s->ssd.source1 = f.len ? sid + 1 : 0;
        } else if (f.number == 2) {
            uint64_t iid = 0;
            memset(&s->ssd.primary, 0, sizeof s->ssd.primary);
            pb_reader_sub(pr, &f, &sub);
            if (on_counter(r, &sub, &s->ssd.primary, &iid) != PC_OK)
                return r->err->status;
            s->ssd.has_primary = 1;
        } else if (f.number == 3 && s->ssd.n_followers < PF_MAX_FOLLOWERS) {
            uint64_t iid = 0;
            pf_ss_rec *d = &s->ssd.followers[s->ssd.n_followers++];
            pb_reader_sub(pr, &f, &sub);
            if (on_counter(r, &sub, d, &iid) != PC_OK)
                return r->err->status;
        }
    }
    return got < 0 ? r->err->status : PC_OK;
}

/* ---- Events ---- */

static const char *unit_name(uint64_t u)
{
    static const char *const names[] = {
        NULL, "ns", "cycles", "instructions", "bytes", "page-faults", "cache-misses",
        "cache-references", "branch-misses", "count",
    };
    return u < sizeof names / sizeof *names ? names[u] : NULL;
}

/* The event of samples measured against counter d (NULL: none given):
 * the counter's name, with the sequence's source in brackets, so that
 * "wall-time (python.wall)" says both what was counted and by whom.
 * Weighed samples count in the counter's unit, ns for a clock; without a
 * weight or a counter each sample counts one, under "samples of ...". */
static uint16_t event_of(pf_reader *r, pf_seq *s, const pf_ss_rec *d, int weighed)
{
    pc_profile *p = r->p;
    const char *source = s->ssd.source1 ? pc_str(&p->str, s->ssd.source1 - 1) : NULL;
    const char *base = NULL;
    if (d && (d->has & HAS_NAME) && pc_str_len(&p->str, d->name))
        base = pc_str(&p->str, d->name);
    else if (d && (d->has & HAS_A))
        base = unit_name(d->a);
    else if (d && (d->has & HAS_STR) && pc_str_len(&p->str, d->str))
        base = pc_str(&p->str, d->str);
    char name[320];
    size_t n = 0;
    if (!d || !weighed)
        n = (size_t)snprintf(name, sizeof name, "samples of ");
    if (base && source && strcmp(base, source) != 0)
        snprintf(name + n, sizeof name - n, "%.150s (%.150s)", base, source);
    else
        snprintf(name + n, sizeof name - n, "%.150s",
                 base ? base : source ? source : "stack samples");
    int unit = PC_UNIT_SAMPLES;
    if (d && weighed) {
        int ns = ((d->has & HAS_A) && d->a == UNIT_NANOSECONDS) ||
                 ((d->has & HAS_STR) && pc_str_len(&p->str, d->str) == 2 &&
                  memcmp(pc_str(&p->str, d->str), "ns", 2) == 0);
        unit = ns ? PC_UNIT_NS : PC_UNIT_COUNT;
    }
    uint16_t ev = pf_event_named(r, name, unit);
    /* A name given before with another unit: the unit tells them apart,
     * so that ns and counts never add up in one event. */
    if (ev != PF_NO_EVENT && p->event.unit[ev] != unit) {
        static const char *const units[] = {"count", "ns", "samples"};
        size_t len = strlen(name);
        snprintf(name + len, sizeof name - len, " [%s]", units[unit]);
        ev = pf_event_named(r, name, unit);
    }
    return ev;
}

/* Through a cache of ids + 1, where there is one. */
static uint16_t cached_event(pf_reader *r, pf_seq *s, const pf_ss_rec *d, int weighed,
                             uint16_t *cache1)
{
    if (cache1 && *cache1)
        return (uint16_t)(*cache1 - 1);
    uint16_t ev = event_of(r, s, d, weighed);
    if (cache1 && ev != PF_NO_EVENT)
        *cache1 = (uint16_t)(ev + 1);
    return ev;
}

/* ---- Inline callstacks ---- */

static uint64_t inline_hash(uint32_t name, uint32_t file, uint32_t line)
{
    return pc_mix64(pc_mix64((uint64_t)name << 32 | file) ^ line);
}

/* The frame of an inline callstack's function at file:line (PC_NONE:
 * unknown), made when new.  Such frames have no mapping; their line is
 * the model's, their file is given to their function once it exists
 * (pf_stack_sample_finish). */
uint32_t pf_inline_frame(pf_reader *r, uint32_t name, uint32_t file, uint32_t line)
{
    pc_profile *p = r->p;
    pc_probe pr;
    if (pc_htab_reserve(&r->ss.idx, r->ss.n + 1) < 0) {
        p->oom = 1;
        return PC_NONE;
    }
    pc_probe_start(&r->ss.idx, inline_hash(name, file, line), &pr);
    for (uint32_t i; (i = pc_probe_next(&r->ss.idx, &pr)) != PC_NONE;)
        if (r->ss.name[i] == name && r->ss.file[i] == file && r->ss.line[i] == line)
            return r->ss.frame[i];
    struct pc_col cols[] = {PC_COL(r->ss.frame), PC_COL(r->ss.name), PC_COL(r->ss.file),
                            PC_COL(r->ss.line)};
    struct pc_col fcols[] = {PC_COL(r->fr.map), PC_COL(r->fr.name), PC_COL(r->fr.kind)};
    if (r->ss.n >= PC_NONE - 1 || pc_grow_cols(&r->ss.cap, r->ss.n + 1, cols, 4) < 0 ||
        pc_grow_cols(&r->fr.cap, r->fr.n + 1, fcols, 3) < 0) {
        p->oom = 1;
        return PC_NONE;
    }
    /* Named and categorised with every frame in pf_resolve_names; not
     * in the reader's frame index, whose frames have an address. */
    uint32_t id = pc_add_frame(p, PC_NONE, 0, PC_CAT_USER, PC_EXEC_NATIVE);
    if (id == PC_NONE)
        return PC_NONE;
    r->fr.n++;
    r->fr.map[id] = PC_NONE;
    r->fr.name[id] = name;
    r->fr.kind[id] = 0;
    p->frame.line[id] = line;
    uint32_t i = (uint32_t)r->ss.n++;
    r->ss.frame[i] = id;
    r->ss.name[i] = name;
    r->ss.file[i] = file;
    r->ss.line[i] = line;
    pc_htab_insert(&r->ss.idx, &pr, i);
    return id;
}

/* One InlineCallstack.Frame's profile frame.  A frame without a function
 * name is named by its location, so that it stays told apart. */
static int inline_frame_of(pf_reader *r, pb_reader *pr, uint32_t *out)
{
    static const uint8_t ex[] = {ANY, L, L, V};
    pb_field f;
    int got;
    const uint8_t *fn = NULL, *file = NULL;
    size_t fn_len = 0, file_len = 0;
    uint32_t line = 0;
    while ((got = NEXT(r, pr, &f, ex, "InlineCallstack.Frame")) > 0) {
        if (f.number == 1) {
            fn = f.data;
            fn_len = f.len;
        } else if (f.number == 2) {
            file = f.data;
            file_len = f.len;
        } else if (f.number == 3) {
            if (pf_scalar(r, pr, &f, "InlineCallstack.Frame") != PC_OK)
                return r->err->status;
            line = (uint32_t)f.value;
        }
    }
    if (got < 0)
        return r->err->status;
    pc_profile *p = r->p;
    uint32_t fsid = file_len ? pc_intern(p, file, file_len) : PC_NONE;
    uint32_t name;
    if (fn_len) {
        name = pc_intern(p, fn, fn_len);
    } else {
        char buf[300];
        if (file_len && line)
            snprintf(buf, sizeof buf, "%.*s:%" PRIu32, (int)(file_len > 256 ? 256 : file_len),
                     (const char *)file, line);
        else if (file_len)
            snprintf(buf, sizeof buf, "%.*s", (int)(file_len > 256 ? 256 : file_len),
                     (const char *)file);
        else
            snprintf(buf, sizeof buf, "[unknown]");
        name = pc_intern_cstr(p, buf);
    }
    if (name == PC_NONE || p->oom)
        return pf_nomem(r);
    *out = pf_inline_frame(r, name, fsid, line);
    return *out == PC_NONE ? pf_nomem(r) : PC_OK;
}

/* The stack of an InlineCallstack, its frames outermost first. */
int pf_inline_stack(pf_reader *r, const pb_reader *parent, const pb_field *cs,
                        uint32_t *out)
{
    static const uint8_t ex[] = {ANY, L};
    pb_reader pr, sub;
    pb_field f;
    int got;
    size_t n = 0;
    pb_reader_sub(parent, cs, &pr);
    while ((got = NEXT(r, &pr, &f, ex, "InlineCallstack")) > 0)
        n += f.number == 1;
    if (got < 0)
        return r->err->status;
    /* Under the depth limit the outermost frames go. */
    size_t skip = pc_depth_cut(r->p, n), k = 0;
    uint32_t stack = PC_NONE;
    pb_reader_sub(parent, cs, &pr);
    while ((got = NEXT(r, &pr, &f, ex, "InlineCallstack")) > 0) {
        if (f.number != 1 || k++ < skip)
            continue;
        uint32_t fr;
        pb_reader_sub(&pr, &f, &sub);
        if (inline_frame_of(r, &sub, &fr) != PC_OK)
            return r->err->status;
        stack = pc_stack(r->p, stack, fr);
    }
    if (got < 0)
        return r->err->status;
    if (r->p->oom)
        return pf_nomem(r);
    *out = stack;
    return PC_OK;
}

/* ---- Samples ---- */

/* A reference to interned data the trace does not define: the sample is
 * kept without what it names; the first one is reported with where it
 * is. */
static void undefined(pf_reader *r, const pf_packet *pk, const char *what, uint64_t iid)
{
    r->st.ss_undefined++;
    if (r->ss.undef_what)
        return;
    r->ss.undef_what = what;
    r->ss.undef_iid = iid;
    r->ss.undef_packet = r->packet_index;
    r->ss.undef_offset = pk->offset;
}

static const pf_ss_rec *find_rec(pf_seq *s, int kind, uint64_t iid)
{
    uint32_t i = pf_interned_find(&s->it, kind, iid);
    return i == PC_NONE ? NULL : &s->it.ss[i];
}

/* A sample's follower weights, and the counters it names for them
 * (inline, or by iid), in order. */
typedef struct ss_followers {
    pf_values weight, iid;
    pf_ss_rec inline_d[PF_MAX_FOLLOWERS];
    size_t n_inline;
} ss_followers;

/* The pid a tid belongs to, as the process tree or descriptors say;
 * else the tid's own, as the main thread of a process of its own. */
static int64_t pid_of_tid(const pf_reader *r, int64_t tid)
{
    pc_probe pr;
    if (!r->tname.n)
        return tid;
    pc_probe_start(&r->tname.idx, pc_mix64((uint64_t)tid), &pr);
    for (uint32_t i; (i = pc_probe_next(&r->tname.idx, &pr)) != PC_NONE;)
        if (r->tname.id[i] == tid)
            return r->tname.pid[i] >= 0 ? r->tname.pid[i] : tid;
    return tid;
}

static uint32_t thread_of_task(pf_reader *r, const pf_ss_rec *t)
{
    if (t && (t->has & HAS_C))
        r->st.ss_async++;
    if (t && (t->has & HAS_B))
        return pf_thread_of(r, (t->has & HAS_A) ? (int64_t)t->a : pid_of_tid(r, (int64_t)t->b),
                            (int64_t)t->b);
    /* A process alone, or an async context in it without a thread: the
     * process's main thread stands for it. */
    if (t && (t->has & HAS_A))
        return pf_thread_of(r, (int64_t)t->a, (int64_t)t->a);
    /* No task: one thread of its own, named in pf_stack_sample_finish. */
    if (r->ss.no_task1)
        return r->ss.no_task1 - 1;
    uint32_t th = pf_thread_of(r, 0, 0);
    if (th != PC_NONE)
        r->ss.no_task1 = th + 1;
    return th;
}

/* Follower weight k is measured against the sample's k-th counter: given
 * inline, else by iid, else by the defaults; one with none is counted. */
static int add_followers(pf_reader *r, pf_seq *s, const pf_packet *pk, const ss_followers *fw,
                         uint32_t thread, uint64_t t, uint16_t cpu)
{
    size_t n = fw->weight.n < PF_MAX_FOLLOWERS ? fw->weight.n : PF_MAX_FOLLOWERS;
    r->st.ss_followers += fw->weight.n - n;
    for (size_t k = 0; k < n; k++) {
        const pf_ss_rec *d = NULL;
        uint16_t *cache = NULL;
        if (fw->n_inline) {
            d = k < fw->n_inline ? &fw->inline_d[k] : NULL;
        } else if (fw->iid.n) {
            uint32_t i = k < fw->iid.n && fw->iid.v[k]
                         ? pf_interned_find(&s->it, PF_SS_COUNTER, fw->iid.v[k]) : PC_NONE;
            if (i != PC_NONE) {
                d = &s->it.ss[i];
                cache = &s->it.ss[i].event1;
            } else if (k < fw->iid.n && fw->iid.v[k]) {
                undefined(r, pk, "follower_descriptor_iids", fw->iid.v[k]);
            }
        } else if (k < s->ssd.n_followers) {
            d = &s->ssd.followers[k];
            cache = &s->ssd.followers[k].event1;
        }
        if (!d) {
            r->st.ss_followers++;
            continue;
        }
        uint16_t ev = cached_event(r, s, d, 1, cache);
        if (ev == PF_NO_EVENT)
            return r->p->oom ? pf_nomem(r) : pf_fail(r, pk->offset, "StackSample: more than "
                                                     "%d event types (counters and sources)",
                                                     PC_MAX_EVENTS);
        uint64_t mult = (d->has & HAS_B) && d->b ? d->b : 1;
        int64_t v = fw->weight.v[k] > (uint64_t)INT64_MAX / mult ? INT64_MAX
                                                              : (int64_t)(fw->weight.v[k] * mult);
        pc_add_counter(r->p, thread, t, ev, cpu, v);
    }
    return r->p->oom ? pf_nomem(r) : PC_OK;
}

int pf_on_stack_sample(pf_reader *r, pb_reader *pr, pf_seq *s, const pf_packet *pk)
{
    static const uint8_t ex[] = {ANY, L, V, L, V, L, V, L, V, L, V, V, L, ANY, ANY};
    pb_field f, cs_inline;
    pb_reader sub;
    int got;
    pf_ss_rec task, exec, prim;
    const pf_ss_rec *task_p = NULL, *exec_p = NULL, *prim_p = NULL;
    uint16_t *prim_cache = NULL, *prim_uncache = NULL;
    uint64_t cs_iid = 0, weight = 0;
    int has_cs = 0, has_inline = 0, weighed = 0;
    ss_followers fw;
    fw.weight.n = fw.iid.n = fw.n_inline = 0;
    r->st.stack_samples++;
    memset(&cs_inline, 0, sizeof cs_inline);
    while ((got = NEXT(r, pr, &f, ex, "StackSample")) > 0) {
        if (f.number <= 11 && f.number != 0 && ex[f.number] == V &&
            pf_scalar(r, pr, &f, "StackSample") != PC_OK)
            return r->err->status;
        uint64_t iid = 0;
        switch (f.number) {
        case 1:
            memset(&task, 0, sizeof task);
            pb_reader_sub(pr, &f, &sub);
            if (on_task(r, &sub, &task, &iid) != PC_OK)
                return r->err->status;
            task_p = &task;
            break;
        case 2:
            /* iid 0 is "not set". */
            if (f.value && !(task_p = find_rec(s, PF_SS_TASK, f.value)))
                undefined(r, pk, "task_context_iid", f.value);
            break;
        case 3:
            memset(&exec, 0, sizeof exec);
            pb_reader_sub(pr, &f, &sub);
            if (on_exec(r, &sub, &exec, &iid) != PC_OK)
                return r->err->status;
            exec_p = &exec;
            break;
        case 4:
            if (f.value && !(exec_p = find_rec(s, PF_SS_EXEC, f.value)))
                undefined(r, pk, "execution_context_iid", f.value);
            break;
        case 5: cs_inline = f; has_inline = 1; has_cs = 0; break;
        case 6: cs_iid = f.value; has_cs = f.value != 0; has_inline = 0; break;
        case 9:
            memset(&prim, 0, sizeof prim);
            pb_reader_sub(pr, &f, &sub);
            if (on_counter(r, &sub, &prim, &iid) != PC_OK)
                return r->err->status;
            prim_p = &prim;
            prim_cache = prim_uncache = NULL;
            break;
        case 10: {
            prim_p = NULL;
            prim_cache = prim_uncache = NULL;
            uint32_t i = f.value ? pf_interned_find(&s->it, PF_SS_COUNTER, f.value) : PC_NONE;
            if (i != PC_NONE) {
                prim_p = &s->it.ss[i];
                prim_cache = &s->it.ss[i].event1;
                prim_uncache = &s->it.ss[i].uncounted1;
            } else if (f.value) {
                undefined(r, pk, "primary_descriptor_iid", f.value);
            }
            break;
        }
        case 11: weight = f.value; weighed = 1; break;
        case 12:
            if (fw.n_inline < PF_MAX_FOLLOWERS) {
                pf_ss_rec *d = &fw.inline_d[fw.n_inline++];
                memset(d, 0, sizeof *d);
                pb_reader_sub(pr, &f, &sub);
                if (on_counter(r, &sub, d, &iid) != PC_OK)
                    return r->err->status;
            }
            break;
        case 13:
            if (pf_each_varint(r, pr, &f, pf_keep_value, &fw.iid, "StackSample.follower_descriptor_iids") !=
                PC_OK)
                return r->err->status;
            break;
        case 14:
            if (pf_each_varint(r, pr, &f, pf_keep_value, &fw.weight, "StackSample.follower_weights") !=
                PC_OK)
                return r->err->status;
            break;
        }
    }
    if (got < 0)
        return r->err->status;
    if (!prim_p && s->ssd.has_primary) {
        prim_p = &s->ssd.primary;
        prim_cache = &s->ssd.event1;
        prim_uncache = &s->ssd.uncounted1;
    }

    uint64_t t;
    if (pf_sample_time(r, s, pk, &t) < 0)
        return PC_OK;
    pc_profile *p = r->p;
    int counted = prim_p && weighed;
    uint16_t ev = cached_event(r, s, prim_p, counted, counted ? prim_cache : prim_uncache);
    if (ev == PF_NO_EVENT && !p->oom)
        return pf_fail(r, pk->offset, "StackSample: more than %d event types (counters and "
                       "sources)", PC_MAX_EVENTS);
    if (ev == PF_NO_EVENT)
        return pf_nomem(r);
    int64_t w = 1;
    if (counted) {
        /* unit_multiplier scales weights to the unit; absent means 1. */
        uint64_t mult = (prim_p->has & HAS_B) && prim_p->b ? prim_p->b : 1;
        w = weight > (uint64_t)INT64_MAX / mult ? INT64_MAX : (int64_t)(weight * mult);
    }
    uint32_t thread = thread_of_task(r, task_p);
    if (thread == PC_NONE)
        return pf_nomem(r);
    uint32_t stack = PC_NONE;
    if (has_inline) {
        if (pf_inline_stack(r, pr, &cs_inline, &stack) != PC_OK)
            return r->err->status;
    } else if (has_cs) {
        int res = pf_stack_of(r, s, cs_iid, PC_NONE, &stack);
        if (res < 0) {
            if (p->oom)
                return pf_nomem(r);
            r->st.unresolved_callstacks++;
            undefined(r, pk, "callstack_iid", cs_iid);
            stack = PC_NONE;
        } else if (res > 0) {
            r->st.partial_stacks++;
        }
    }
    uint16_t cpu = exec_p && (exec_p->has & HAS_A) && exec_p->a < PC_NO_CPU
                   ? (uint16_t)exec_p->a : PC_NO_CPU;
    pc_add_sample(p, thread, t, stack, w, ev, cpu);
    if (fw.weight.n && add_followers(r, s, pk, &fw, thread, t, cpu) != PC_OK)
        return r->err->status;
    return p->oom ? pf_nomem(r) : PC_OK;
}

/* ---- The end ---- */

int pf_stack_sample_finish(pf_reader *r)
{
    pc_profile *p = r->p;
    for (size_t i = 0; i < r->ss.n; i++) {
        uint32_t fn = p->frame.func[r->ss.frame[i]];
        /* A function's first file stays, as the symbolizer keeps it. */
        if (r->ss.file[i] != PC_NONE && fn != PC_NONE && p->func.file[fn] == PC_NONE)
            p->func.file[fn] = r->ss.file[i];
    }
    if (r->ss.no_task1 && p->thread.name[r->ss.no_task1 - 1] == PC_NONE) {
        uint32_t name = pc_intern_cstr(p, "[no task]");
        if (name == PC_NONE)
            return pf_nomem(r);
        p->thread.name[r->ss.no_task1 - 1] = name;
    }
    return PC_OK;
}

void pf_stack_sample_report(const pf_reader *r)
{
    const pf_stats *st = &r->st;
    const pc_options *o = r->o;
    if (st->ss_undefined)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " references of StackSample packets to interned "
               "data the trace does not define were left out (the first: packet %zu at byte "
               "%" PRIu64 ", %s %" PRIu64 "); their samples are kept without it",
               st->ss_undefined, r->ss.undef_packet, r->ss.undef_offset, r->ss.undef_what,
               r->ss.undef_iid);
    if (st->ss_followers)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " follower weights of StackSample packets name no "
               "counter (or one past the first %d) and are left out", st->ss_followers,
               PF_MAX_FOLLOWERS);
    if (st->ss_async)
        pc_log(o, PC_LOG_INFO, "%" PRIu64 " StackSample samples belong to async contexts "
               "(goroutines, fibers), which are not shown: they are on their thread, or "
               "their process's main thread", st->ss_async);
}

void pf_stack_sample_free(pf_reader *r)
{
    free(r->ss.frame);
    free(r->ss.name);
    free(r->ss.file);
    free(r->ss.line);
    pc_htab_free(&r->ss.idx);
}
