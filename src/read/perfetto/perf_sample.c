/* traced_perf's CPU samples (PerfSample) and the events they count: the
 * timebase, from the sequence's TracePacketDefaults, says what a
 * sample's counter measures and so what its weight means.  The only
 * family whose samples carry counters, CPUs and unwinding errors. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/perfetto/reader.h"

/* ---- Events ---- */

uint16_t pf_event_named(pf_reader *r, const char *name, int unit)
{
    uint32_t e = pc_event(r->p, pc_intern_cstr(r->p, name), unit, 0);
    return e == PC_NONE ? PF_NO_EVENT : (uint16_t)e;
}

/* perf's names for PerfEvents.Counter values. */
static const char *counter_name(uint64_t c)
{
    static const char *const names[] = {
        NULL, "cpu-clock", "page-faults", "task-clock", "context-switches",
        "cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
        "emulation-faults", "cpu-cycles", "instructions", "cache-references",
        "cache-misses", "branch-instructions", "branch-misses", "bus-cycles",
        "stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles", "dummy",
    };
    return c < sizeof names / sizeof *names ? names[c] : NULL;
}

/* Fields that name a perf event, in PerfEvents.Timebase and FollowerEvent
 * alike; their numbers differ. */
enum { EV_COUNTER, EV_TRACEPOINT, EV_RAW, EV_CUSTOM };

/* Reads field f, of kind (EV_*), into the event's name or, for the
 * user's own name, into custom. */
static int event_part(pf_reader *r, pb_reader *pr, pb_field *f, int kind, char *name,
                      size_t size, char *custom, size_t csize, const char *what)
{
    pb_reader sub;
    pb_field g;
    int got;
    switch (kind) {
    case EV_COUNTER:
        if (pf_scalar(r, pr, f, what) != PC_OK)
            return r->err->status;
        if (counter_name(f->value))
            snprintf(name, size, "%s", counter_name(f->value));
        else
            snprintf(name, size, "counter-%" PRIu64, f->value);
        return PC_OK;
    case EV_TRACEPOINT:
        if (f->wiretype != L)
            return PC_OK;
        pb_reader_sub(pr, f, &sub);
        while ((got = pb_next(&sub, &g)) > 0)
            if (g.number == 1 && g.wiretype == L)
                snprintf(name, size, "%.*s", (int)(g.len < 200 ? g.len : 200),
                         (const char *)g.data);
        return got < 0 ? pf_wire_fail(r, &sub, "PerfEvents.Tracepoint") : PC_OK;
    case EV_RAW: {
        uint64_t type = 0, config = 0;
        if (f->wiretype != L)
            return PC_OK;
        pb_reader_sub(pr, f, &sub);
        while ((got = pb_next(&sub, &g)) > 0) {
            if (g.number == 1 && g.wiretype == V)
                type = g.value;
            if (g.number == 2 && g.wiretype == V)
                config = g.value;
        }
        if (got < 0)
            return pf_wire_fail(r, &sub, "PerfEvents.RawEvent");
        snprintf(name, size, "raw-%" PRIu64 ":0x%" PRIx64, type, config);
        return PC_OK;
    }
    default:
        if (f->wiretype == L)
            snprintf(custom, csize, "%.*s", (int)(f->len < 120 ? f->len : 120),
                     (const char *)f->data);
        return PC_OK;
    }
}

/* A user-given name is added in brackets, so that cpu-clock stays
 * recognisable as time. */
static void add_custom(char *name, size_t size, const char *custom)
{
    if (custom[0] && strcmp(custom, name) != 0) {
        size_t n = strlen(name);
        snprintf(name + n, size - n, " (%s)", custom);
    }
}

/* The units of an event by its name: the clocks count ns. */
static int unit_of(const char *name)
{
    return pc_perf_clock_event(name) ? PC_UNIT_NS : PC_UNIT_COUNT;
}

/* The event name of a PerfEvents.Timebase: the counter's perf name, the
 * tracepoint, or the raw event, with the user's name. */
static int on_timebase(pf_reader *r, pb_reader *pr, pf_seq *s)
{
    static const uint8_t ex[] = {ANY, V, V, L, V, L, V, ANY, ANY, ANY, L, V};
    static const int8_t kind[] = {-1, -1, -1, EV_TRACEPOINT, EV_COUNTER, EV_RAW, -1, -1, -1,
                                  -1, EV_CUSTOM};
    pb_field f;
    int got;
    char name[256] = "", custom[128] = "";
    uint64_t period = 0, freq = 0;
    while ((got = NEXT(r, pr, &f, ex, "PerfEvents.Timebase")) > 0) {
        if (f.number == 1)
            period = f.wiretype == V ? f.value : 0;
        else if (f.number == 2)
            freq = f.wiretype == V ? f.value : 0;
        else if (f.number < sizeof kind && kind[f.number] >= 0 &&
                 event_part(r, pr, &f, kind[f.number], name, sizeof name, custom,
                            sizeof custom, "PerfEvents.Timebase") != PC_OK)
            return r->err->status;
    }
    if (got < 0)
        return r->err->status;
    /* traced_perf's default timebase is the cpu-clock. */
    if (!name[0])
        snprintf(name, sizeof name, "cpu-clock");
    /* What a sample stands for when it carries no counter value: the
     * period, in ns for the clocks. */
    int clock = pc_perf_clock_event(name);
    s->nominal = period ? period : clock && freq ? 1000000000 / freq : 0;
    s->event_unit = (uint8_t)unit_of(name);
    add_custom(name, sizeof name, custom);
    s->event = s->uncounted_event = PF_NO_EVENT;
    s->event_name = pc_intern_cstr(r->p, name);
    if (s->event_name == PC_NONE)
        return pf_nomem(r);
    return PC_OK;
}

/* A FollowerEvent: an event counted beside the timebase, whose values
 * each sample carries (follower_counts, in this order). */
static int on_follower(pf_reader *r, pb_reader *pr, pf_seq *s)
{
    static const uint8_t ex[] = {ANY, V, L, L, L};
    static const int8_t kind[] = {-1, EV_COUNTER, EV_TRACEPOINT, EV_RAW, EV_CUSTOM};
    pb_field f;
    int got;
    char name[256] = "", custom[128] = "";
    while ((got = NEXT(r, pr, &f, ex, "FollowerEvent")) > 0)
        if (f.number < sizeof kind && kind[f.number] >= 0 &&
            event_part(r, pr, &f, kind[f.number], name, sizeof name, custom, sizeof custom,
                       "FollowerEvent") != PC_OK)
            return r->err->status;
    if (got < 0)
        return r->err->status;
    if (s->n_followers == PF_MAX_FOLLOWERS) {
        r->st.extra_followers++;
        return PC_OK;
    }
    if (!name[0])
        snprintf(name, sizeof name, "%s", custom[0] ? custom : "follower");
    int unit = unit_of(name);
    add_custom(name, sizeof name, custom);
    uint8_t k = s->n_followers++;
    s->follower_unit[k] = (uint8_t)unit;
    s->follower_event[k] = PF_NO_EVENT;
    s->follower_name[k] = pc_intern_cstr(r->p, name);
    return s->follower_name[k] == PC_NONE ? pf_nomem(r) : PC_OK;
}

int pf_on_defaults(pf_reader *r, pb_reader *pr, pf_seq *s)
{
    static const uint8_t ex[] = {ANY, ANY, ANY, ANY, ANY, ANY, ANY, ANY, ANY, ANY,
                                 ANY, ANY, L};
    pb_field f;
    pb_reader sub;
    int got;
    while ((got = NEXT(r, pr, &f, ex, "TracePacketDefaults")) > 0) {
        if (f.number == TP_CLOCK_ID) {
            if (pf_scalar(r, pr, &f, "TracePacketDefaults") != PC_OK)
                return r->err->status;
            s->has_clock = 1;
            s->clock_id = (uint32_t)f.value;
        } else if (f.number == 12) {
            pb_field g;
            s->has_perf_defaults = 1;
            pb_reader_sub(pr, &f, &sub);
            s->n_followers = 0;
            while ((got = pb_next(&sub, &g)) > 0)
                if ((g.number == 1 || g.number == 4) && g.wiretype == L) {
                    pb_reader tb;
                    pb_reader_sub(&sub, &g, &tb);
                    if ((g.number == 1 ? on_timebase(r, &tb, s) : on_follower(r, &tb, s)) !=
                        PC_OK)
                        return r->err->status;
                }
            if (got < 0)
                return pf_wire_fail(r, &sub, "PerfSampleDefaults");
        } else if (f.number == 100 && f.wiretype == L) {
            pb_reader_sub(pr, &f, &sub);
            if (pf_on_stack_sample_defaults(r, &sub, s) != PC_OK)
                return r->err->status;
        }
    }
    return got < 0 ? r->err->status : PC_OK;
}

/* ---- traced_perf samples ---- */

static const char *unwind_error_name(uint64_t e)
{
    static const char *const names[] = {
        "UNKNOWN", "NONE", "MEMORY_INVALID", "UNWIND_INFO", "UNSUPPORTED",
        "INVALID_MAP", "MAX_FRAMES_EXCEEDED", "REPEATED_FRAME", "INVALID_ELF",
        "SYSTEM_CALL", "THREAD_TIMEOUT", "THREAD_DOES_NOT_EXIST", "BAD_ARCH",
        "MAPS_PARSE", "INVALID_PARAMETER", "PTRACE_CALL",
    };
    return e < sizeof names / sizeof *names ? names[e] : "UNKNOWN";
}

/* What a counter (slot 0: the timebase, 1 + k: follower k) counted on
 * a CPU since its value before there. */
static int counter_delta(pf_reader *r, pf_seq *s, uint32_t cpu, unsigned slot, uint64_t count,
                         uint64_t *delta)
{
    if (cpu >= 4096) {
        *delta = count;
        return 0;
    }
    if (cpu >= s->n_cpu) {
        size_t n = cpu + 1u < 64 ? 64 : (size_t)cpu + 1;
        uint64_t *c = realloc(s->cpu_count, n * PF_COUNT_SLOTS * sizeof *c);
        if (!c)
            return pf_nomem(r);
        s->cpu_count = c;
        uint8_t *seen = realloc(s->cpu_seen, n * PF_COUNT_SLOTS);
        if (!seen)
            return pf_nomem(r);
        memset(seen + s->n_cpu * PF_COUNT_SLOTS, 0, (n - s->n_cpu) * PF_COUNT_SLOTS);
        s->cpu_seen = seen;
        s->n_cpu = n;
    }
    size_t at = (size_t)cpu * PF_COUNT_SLOTS + slot;
    uint64_t prev = s->cpu_seen[at] ? s->cpu_count[at] : 0;
    /* A counter that went back was re-enabled: count from zero again. */
    *delta = count >= prev ? count - prev : count;
    s->cpu_count[at] = count;
    s->cpu_seen[at] = 1;
    return 0;
}

/* The follower values of a sample, as counter values of their events. */
static int add_followers(pf_reader *r, pf_seq *s, const pf_values *fc, uint32_t thread,
                         uint64_t t, uint32_t cpu, uint16_t cpu16)
{
    size_t n = fc->n < s->n_followers ? fc->n : s->n_followers;
    r->st.extra_followers += fc->n - n;
    for (size_t k = 0; k < n; k++) {
        uint64_t d;
        if (counter_delta(r, s, cpu, 1 + (unsigned)k, fc->v[k], &d) != 0)
            return r->err->status;
        if (s->follower_event[k] == PF_NO_EVENT) {
            uint32_t e = pc_event(r->p, s->follower_name[k], s->follower_unit[k], 0);
            if (e == PC_NONE)
                return pf_nomem(r);
            s->follower_event[k] = (uint16_t)e;
        }
        pc_add_counter(r->p, thread, t, s->follower_event[k], cpu16, pc_clamp_i64(d));
    }
    return r->p->oom ? pf_nomem(r) : PC_OK;
}

/* The event of the sequence's samples, made at its first use: the
 * timebase's when they are counted or of a known period, else "samples
 * of X", so that no one reads a weight of one as time.  Without a
 * timebase, traced_perf samples its default, the cpu-clock.  PF_NO_EVENT
 * when out of memory. */
static uint16_t sample_event(pf_reader *r, pf_seq *s, int counted)
{
    uint16_t known = counted ? s->event : s->uncounted_event;
    if (known != PF_NO_EVENT)
        return known;
    const char *base =
        s->event_name == PC_NONE ? "cpu-clock" : pc_str(&r->p->str, s->event_name);
    if (counted) {
        int unit = s->event_name == PC_NONE ? PC_UNIT_NS : s->event_unit;
        if (s->event == PF_NO_EVENT)
            s->event = pf_event_named(r, base, unit);
        return s->event;
    }
    if (s->uncounted_event == PF_NO_EVENT) {
        char name[300];
        snprintf(name, sizeof name, "samples of %s", base);
        s->uncounted_event = pf_event_named(r, name, PC_UNIT_SAMPLES);
    }
    return s->uncounted_event;
}

/* What a decoded PerfSample becomes: a sample row (queued for the second
 * thread when there is one), counter values, or only a count in r->st. */
static int finish_sample(pf_reader *r, pf_seq *s, const pf_packet *pk,
                         const pf_perf_fields *pf, const pf_values *fc, int skipped)
{
    uint64_t cpu = pf->cpu, pid = pf->pid, tid = pf->tid, cs = pf->cs, count = pf->count;
    uint64_t err = pf->err;
    int has_cs = pf->has_cs, has_count = pf->has_count, has_err = pf->has_err;
    int has_cpu = pf->has_cpu;
    /* The callstack's entry is a cache miss where callstacks are many:
     * fetched now, it arrives while the time and thread are worked out. */
    if (has_cs && cs < s->it.dense_cap[PF_CALLSTACK])
        __builtin_prefetch(&s->it.dense[PF_CALLSTACK][cs]);
    uint64_t t;
    if (pf_sample_time(r, s, pk, &t) < 0)
        return PC_OK;
    pc_profile *p = r->p;
    int64_t weight = 1;
    uint32_t ucpu = (uint32_t)(cpu > UINT32_MAX ? UINT32_MAX : cpu);
    uint16_t cpu16 = has_cpu && cpu < PC_NO_CPU ? (uint16_t)cpu : PC_NO_CPU;
    if (has_count) {
        uint64_t d = 0;
        if (counter_delta(r, s, ucpu, 0, count, &d) != 0)
            return r->err->status;
        weight = pc_clamp_i64(d);
    } else if (s->nominal) {
        weight = pc_clamp_i64(s->nominal);
    }
    uint32_t thread = pf_thread_of(r, (int64_t)pid, (int64_t)tid);
    if (thread == PC_NONE)
        return pf_nomem(r);
    /* A count is shown, as a weight or a counter value: its event comes
     * before the followers', as the session lists them. */
    if (has_count && sample_event(r, s, 1) == PF_NO_EVENT)
        return pf_nomem(r);
    if (add_followers(r, s, fc, thread, t, ucpu, cpu16) != PC_OK)
        return r->err->status;
    /* A sample with a callstack is finished on the second thread when
     * there is one.  Whatever this sample then becomes (a sample, or a
     * counter value where its callstack is empty), the event is the one
     * made here. */
    if (has_cs && !skipped) {
        pf_row row = {thread, t, weight, sample_event(r, s, has_count || s->nominal), cpu16,
                      has_err && err != 1};
        if (row.event == PF_NO_EVENT)
            return pf_nomem(r);
        int queued = pf_pipe_sample(r, s, cs, &row);
        if (queued < 0)
            return pf_nomem(r);
        if (queued) {
            r->st.unwind_errors += row.unwind_error;
            return PC_OK;
        }
    }
    uint32_t stack = PC_NONE;
    int res = has_cs && !skipped ? pf_stack_of(r, s, cs, PC_NONE, &stack) : 0;
    if (res < 0) {
        if (p->oom)
            return pf_nomem(r);
        r->st.unresolved_callstacks++;
        stack = PC_NONE;
    } else if (res > 0) {
        r->st.partial_stacks++;
    }
    /* traced_perf puts an "ERROR <reason>" frame at the root of a stack
     * whose unwinding failed; add one when the producer did not. */
    if (has_err && err != 1 && !skipped) {
        r->st.unwind_errors++;
        /* The stack tree is this thread's again (pipe.c). */
        if (pf_pipe_drain(r) < 0)
            return pf_nomem(r);
        uint32_t rn = pf_root_name(r, s, stack);
        if (rn == PC_NONE || strncmp(pc_str(&p->str, rn), "ERROR ", 6) != 0) {
            char name[64];
            snprintf(name, sizeof name, "ERROR %s", unwind_error_name(err));
            uint32_t ef = pf_named_frame(r, name);
            if (ef == PC_NONE)
                return pf_nomem(r);
            if (!has_cs || pf_stack_of(r, s, cs, ef, &stack) < 0)
                stack = pc_stack(p, PC_NONE, ef);
        }
    }
    /* A count without a callstack (counting without unwinding, or a
     * skipped sample) is a counter value; an undefined callstack stays
     * a sample, whose weight is still the CPU's. */
    if (has_count && stack == PC_NONE && res == 0) {
        uint16_t ev = sample_event(r, s, 1);
        if (ev == PF_NO_EVENT)
            return pf_nomem(r);
        pc_add_counter(p, thread, t, ev, cpu16, weight);
        return p->oom ? pf_nomem(r) : PC_OK;
    }
    if (skipped)
        return PC_OK;
    /* Neither a callstack nor a count: nothing to show of it. */
    if (!has_cs && !has_count && stack == PC_NONE) {
        r->st.bare_samples++;
        return PC_OK;
    }
    if (pf_pipe_drain(r) < 0)
        return pf_nomem(r);
    uint16_t ev = sample_event(r, s, has_count || s->nominal);
    if (ev == PF_NO_EVENT)
        return pf_nomem(r);
    pc_add_sample(p, thread, t, stack, weight, ev, cpu16);
    return p->oom ? pf_nomem(r) : PC_OK;
}

/* Decodes a PerfSample of the common shape in one pass, without the
 * general reader's per-field calls: only fields 1 to 6 and 16, each a
 * varint of at most 9 bytes, the rest of the shapes left to
 * pf_on_perf_sample.  Pure: 1 with *f filled, 0 for another shape. */
int pf_perf_sample_quick(const uint8_t *p, const uint8_t *end, pf_perf_fields *f)
{
    memset(f, 0, sizeof *f);
    /* The fields as producers write them, each tag checked where it comes:
     * traced_perf writes 1, 2, 3, 5, 6 and then the callstack, 4 (and 16
     * after an unwinding error); others write them by number.  A jump on
     * each field's number, for every sample, was a quarter of this
     * function's time.  Whatever comes otherwise, the loop below reads,
     * as it reads any order. */
    uint64_t v;
    int got;
    if ((got = pb_next_is(&p, end, 1, &v)) > 0) {
        f->cpu = v;
        f->has_cpu = 1;
    }
    if (got >= 0 && (got = pb_next_is(&p, end, 2, &v)) > 0)
        f->pid = v;
    if (got >= 0 && (got = pb_next_is(&p, end, 3, &v)) > 0)
        f->tid = v;
    if (got >= 0 && (got = pb_next_is(&p, end, 4, &v)) > 0) {
        f->cs = v;
        f->has_cs = 1;
    }
    if (got >= 0)
        got = pb_next_is(&p, end, 5, &v);
    if (got >= 0 && (got = pb_next_is(&p, end, 6, &v)) > 0) {
        f->count = v;
        f->has_count = 1;
    }
    if (got >= 0 && (got = pb_next_is(&p, end, 4, &v)) > 0) {
        f->cs = v;
        f->has_cs = 1;
    }
    if (got < 0)
        return 0;
    while (p < end) {
        uint64_t tag;
        if (!pb_varint9(&p, end, &tag) || (tag & 7) != PB_VARINT || !pb_varint9(&p, end, &v))
            return 0;
        switch (tag >> 3) {
        case 1: f->cpu = v; f->has_cpu = 1; break;
        case 2: f->pid = v; break;
        case 3: f->tid = v; break;
        case 4: f->cs = v; f->has_cs = 1; break;
        case 5: break;
        case 6: f->count = v; f->has_count = 1; break;
        case 16: f->err = v; f->has_err = 1; break;
        default: return 0;
        }
    }
    return 1;
}

int pf_on_perf_sample(pf_reader *r, pb_reader *pr, pf_seq *s, const pf_packet *pk)
{
    static const uint8_t ex[] = {ANY, V, V, V, V, V, V, ANY, ANY, ANY, ANY, ANY, ANY,
                                 ANY, ANY, ANY, V, V, V, L};
    pb_field f;
    int got;
    pf_perf_fields pf;
    memset(&pf, 0, sizeof pf);
    int lost = 0, skipped = 0, event = 0;
    pf_values fc;
    fc.n = 0;  /* values are kept as they come: no per-sample clearing */
    while ((got = NEXT(r, pr, &f, ex, "PerfSample")) > 0) {
        if (f.number == 7) {
            if (pf_each_varint(r, pr, &f, pf_keep_value, &fc, "PerfSample.follower_counts") !=
                PC_OK)
                return r->err->status;
            continue;
        }
        if (f.number == 19) {
            event = 1;
            continue;
        }
        if (f.number <= 18 && f.number != 0 && ex[f.number] == V &&
            pf_scalar(r, pr, &f, "PerfSample") != PC_OK)
            return r->err->status;
        switch (f.number) {
        case 1: pf.cpu = f.value; pf.has_cpu = 1; break;
        case 2: pf.pid = f.value; break;
        case 3: pf.tid = f.value; break;
        case 4: pf.cs = f.value; pf.has_cs = 1; break;
        case 6: pf.count = f.value; pf.has_count = 1; break;
        case 16: pf.err = f.value; pf.has_err = 1; break;
        case 17: r->st.records_lost += f.value; lost = 1; break;
        case 18: skipped = 1; break;
        }
    }
    if (got < 0)
        return r->err->status;
    /* Records of lost data and producer events (such as a guardrail
     * stop) are reported, not counted as samples. */
    if (lost)
        return PC_OK;
    if (event) {
        r->st.producer_stops++;
        return PC_OK;
    }
    /* A skipped sample has no callstack, but its counts are what the
     * CPU counted: counter values, as in counting without callstacks. */
    if (skipped) {
        r->st.skipped_samples++;
        if (!pf.has_count && !fc.n)
            return PC_OK;
    }
    return finish_sample(r, s, pk, &pf, &fc, skipped);
}

int pf_perf_sample_add(pf_reader *r, pf_seq *s, const pf_packet *pk, const pf_perf_fields *f)
{
    pf_values none;
    none.n = 0;
    return finish_sample(r, s, pk, f, &none, 0);
}
