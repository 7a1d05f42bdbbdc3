#include "read/perfetto/perfetto.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "base/error.h"
#include "base/pbwire.h"
#include "read/perfetto/reader.h"
#include "io/source.h"

#define V PB_VARINT
#define L PB_LEN
#define ANY 0xff

/* TracePacket fields (perfetto-fields.md). */
enum {
    TP_PROCESS_TREE = 2,
    TP_CLOCK_SNAPSHOT = 6,
    TP_TIMESTAMP = 8,
    TP_SEQUENCE_ID = 10,
    TP_TRACK_EVENT = 11,
    TP_INTERNED_DATA = 12,
    TP_SEQUENCE_FLAGS = 13,
    TP_PROFILE_PACKET = 37,
    TP_STATE_CLEARED = 41,
    TP_PACKET_DROPPED = 42,
    TP_PROCESS_DESCRIPTOR = 43,
    TP_THREAD_DESCRIPTOR = 44,
    TP_COMPRESSED = 50,
    TP_STREAMING_PROFILE = 54,
    TP_CLOCK_ID = 58,
    TP_DEFAULTS = 59,
    TP_TRACK_DESCRIPTOR = 60,
    TP_MODULE_SYMBOLS = 61,
    TP_DEOBFUSCATION = 64,
    TP_PERF_SAMPLE = 66,
    TP_STREAMING_ALLOC = 74,
    TP_STREAMING_FREE = 75,
    TP_ZSTD_COMPRESSED = 133,
    TP_STACK_SAMPLE = 135,
    TP_HEAP_GRAPH = 56,
};

enum { SEQ_CLEARED = 1, SEQ_NEEDS_STATE = 2 };

/* Decompressed packets may not exceed this (a zip bomb guard). */
#define MAX_DECOMPRESSED ((size_t)1 << 31)

/* ---- Errors ---- */

int pf_fail(pf_reader *r, uint64_t offset, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->z_depth)
        return src_fail_at(r->in, r->err, r->z_offset,
                           "packet %zu (in the compressed packets here, at "
                           "decompressed byte %" PRIu64 "): %s",
                           r->packet_index, offset, msg);
    return src_fail_at(r->in, r->err, offset, "packet %zu: %s", r->packet_index, msg);
}

int pf_nomem(pf_reader *r)
{
    return pc_fail(r->err, PC_ENOMEM, "%s: out of memory", src_name(r->in));
}

static int wire_fail(pf_reader *r, const pb_reader *pr, const char *what)
{
    return pf_fail(r, pb_offset(pr, pr->err_at), "%s: %s", what, pb_strerror(pr->err));
}

/* Next field of pr with known fields' wire types checked against
 * expect[number] (ANY: not checked).  1, 0 at the end, or -1 (err set). */
static int next(pf_reader *r, pb_reader *pr, pb_field *f, const uint8_t *expect,
                size_t n_expect, const char *what)
{
    int got = pb_next(pr, f);
    if (got < 0) {
        wire_fail(r, pr, what);
        return -1;
    }
    if (got && f->number < n_expect && expect[f->number] != ANY &&
        f->wiretype != expect[f->number]) {
        /* Repeated scalars may come packed: LEN where VARINT is declared. */
        if (!(expect[f->number] == V && f->wiretype == L)) {
            pb_expect(pr, f, expect[f->number]);
            wire_fail(r, pr, what);
            return -1;
        }
    }
    return got;
}

#define NEXT(r, pr, f, ex, what) next(r, pr, f, ex, sizeof ex, what)

/* Calls back for each value of a repeated varint field, packed or not. */
typedef int (*each_fn)(pf_reader *r, void *ctx, uint64_t v);

static int each_varint(pf_reader *r, pb_reader *pr, const pb_field *f, each_fn fn,
                       void *ctx, const char *what)
{
    if (f->wiretype == V)
        return fn(r, ctx, f->value);
    pb_reader sub;
    uint64_t v;
    int got;
    pb_reader_sub(pr, f, &sub);
    while ((got = pb_packed_varint(&sub, &v)) > 0)
        if (fn(r, ctx, v) != PC_OK)
            return r->err->status;
    if (got < 0)
        return wire_fail(r, &sub, what);
    return PC_OK;
}

/* A varint field that must be a scalar (not packed). */
static int scalar(pf_reader *r, pb_reader *pr, const pb_field *f, const char *what)
{
    if (f->wiretype == V)
        return PC_OK;
    pb_expect(pr, f, V);
    return wire_fail(r, pr, what);
}

/* ---- Sequences ---- */

static pf_seq *seq_of(pf_reader *r, uint32_t id)
{
    pc_probe pr;
    if (pc_htab_reserve(&r->seq_idx, r->n_seqs + 1) < 0)
        return NULL;
    pc_probe_start(&r->seq_idx, pc_mix64(id), &pr);
    for (uint32_t i; (i = pc_probe_next(&r->seq_idx, &pr)) != PC_NONE;)
        if (r->seqs[i].id == id)
            return &r->seqs[i];
    if (r->n_seqs == r->cap_seqs) {
        size_t cap = r->cap_seqs ? r->cap_seqs * 2 : 16;
        pf_seq *s = realloc(r->seqs, cap * sizeof *s);
        if (!s)
            return NULL;
        r->seqs = s;
        r->cap_seqs = cap;
    }
    pf_seq *s = &r->seqs[r->n_seqs];
    memset(s, 0, sizeof *s);
    s->id = id;
    s->event = s->uncounted_event = PF_NO_EVENT;
    s->event_name = PC_NONE;
    pc_htab_insert(&r->seq_idx, &pr, (uint32_t)r->n_seqs++);
    return s;
}

static void seq_free(pf_seq *s)
{
    pf_interned_free(&s->it);
    pf_interned_free(&s->local);
    free(s->cpu_count);
    free(s->cpu_seen);
    free(s->hs.callstack);
    free(s->hs.val);
    free(s->hs.dump);
    pf_heap_totals_free(&s->totals);
    free(s->hd.pid);
    free(s->hd.heap);
    free(s->hd.ts);
    free(s->hd.has_ts);
    free(s->hd.pkt_ts);
    free(s->hd.has_pkt_ts);
}

/* A new generation of incremental state: interned data, defaults and the
 * per-sequence sample state go; the thread's identity stays. */
static void seq_clear(pf_seq *s)
{
    pf_interned_clear(&s->it);
    pf_interned_clear(&s->local);
    s->has_clock = 0;
    s->has_perf_defaults = 0;
    s->nominal = 0;
    s->event = s->uncounted_event = PF_NO_EVENT;
    s->event_name = PC_NONE;
    s->has_running = 0;
    s->in_dump = 0;
    s->hs.n = 0;
    s->hd.n = 0;
    /* The timebase counts (cpu_count) stay: they belong to the kernel's
     * perf events, which run on through a clear, and forgetting them
     * would give the next sample on each CPU the whole count since the
     * session began as its weight. */
    s->valid = 1;
}

/* ---- Events ---- */

static uint16_t event_named(pf_reader *r, const char *name, int unit)
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

/* The event name of a PerfEvents.Timebase: the counter's perf name, the
 * tracepoint, or the raw event; a user-given name is added in brackets,
 * so that cpu-clock stays recognisable as time. */
static int on_timebase(pf_reader *r, pb_reader *pr, pf_seq *s)
{
    static const uint8_t ex[] = {ANY, V, V, L, V, L, V, ANY, ANY, ANY, L, V};
    pb_field f;
    pb_reader sub;
    int got;
    char name[256] = "", custom[128] = "";
    uint64_t period = 0, freq = 0;
    while ((got = NEXT(r, pr, &f, ex, "PerfEvents.Timebase")) > 0) {
        switch (f.number) {
        case 1: period = f.wiretype == V ? f.value : 0; break;
        case 2: freq = f.wiretype == V ? f.value : 0; break;
        case 3: {
            pb_reader_sub(pr, &f, &sub);
            pb_field g;
            while ((got = pb_next(&sub, &g)) > 0)
                if (g.number == 1 && g.wiretype == L)
                    snprintf(name, sizeof name, "%.*s", (int)g.len, (const char *)g.data);
            if (got < 0)
                return wire_fail(r, &sub, "PerfEvents.Tracepoint");
            break;
        }
        case 4:
            if (scalar(r, pr, &f, "PerfEvents.Timebase") != PC_OK)
                return r->err->status;
            if (counter_name(f.value))
                snprintf(name, sizeof name, "%s", counter_name(f.value));
            else
                snprintf(name, sizeof name, "counter-%" PRIu64, f.value);
            break;
        case 5: {
            uint64_t type = 0, config = 0;
            pb_reader_sub(pr, &f, &sub);
            pb_field g;
            while ((got = pb_next(&sub, &g)) > 0) {
                if (g.number == 1 && g.wiretype == V)
                    type = g.value;
                if (g.number == 2 && g.wiretype == V)
                    config = g.value;
            }
            if (got < 0)
                return wire_fail(r, &sub, "PerfEvents.RawEvent");
            snprintf(name, sizeof name, "raw-%" PRIu64 ":0x%" PRIx64, type, config);
            break;
        }
        case 10:
            snprintf(custom, sizeof custom, "%.*s", (int)(f.len < 120 ? f.len : 120),
                     (const char *)f.data);
            break;
        }
    }
    if (got < 0)
        return r->err->status;
    /* traced_perf's default timebase is the cpu-clock. */
    if (!name[0])
        snprintf(name, sizeof name, "cpu-clock");
    /* What a sample stands for when it carries no counter value: the
     * period, in ns for the clocks. */
    int clock = strcmp(name, "cpu-clock") == 0 || strcmp(name, "task-clock") == 0;
    s->nominal = period ? period : clock && freq ? 1000000000 / freq : 0;
    s->event_unit = clock ? PC_UNIT_NS : PC_UNIT_COUNT;
    if (custom[0] && strcmp(custom, name) != 0) {
        size_t n = strlen(name);
        snprintf(name + n, sizeof name - n, " (%s)", custom);
    }
    s->event = s->uncounted_event = PF_NO_EVENT;
    s->event_name = pc_intern_cstr(r->p, name);
    if (s->event_name == PC_NONE)
        return pf_nomem(r);
    return PC_OK;
}

static int on_defaults(pf_reader *r, pb_reader *pr, pf_seq *s)
{
    static const uint8_t ex[] = {ANY, ANY, ANY, ANY, ANY, ANY, ANY, ANY, ANY, ANY,
                                 ANY, ANY, L};
    pb_field f;
    pb_reader sub;
    int got;
    while ((got = NEXT(r, pr, &f, ex, "TracePacketDefaults")) > 0) {
        if (f.number == TP_CLOCK_ID) {
            if (scalar(r, pr, &f, "TracePacketDefaults") != PC_OK)
                return r->err->status;
            s->has_clock = 1;
            s->clock_id = (uint32_t)f.value;
        } else if (f.number == 12) {
            pb_field g;
            s->has_perf_defaults = 1;
            pb_reader_sub(pr, &f, &sub);
            while ((got = pb_next(&sub, &g)) > 0)
                if (g.number == 1 && g.wiretype == L) {
                    pb_reader tb;
                    pb_reader_sub(&sub, &g, &tb);
                    if (on_timebase(r, &tb, s) != PC_OK)
                        return r->err->status;
                }
            if (got < 0)
                return wire_fail(r, &sub, "PerfSampleDefaults");
        }
    }
    return got < 0 ? r->err->status : PC_OK;
}

/* ---- Interned data ---- */

/* Build ids are raw bytes, shown as lowercase hex, except Chrome's
 * 33-character breakpad module ids, kept as they are. */
static uint32_t build_id_string(pf_reader *r, const uint8_t *b, size_t n)
{
    if (n == 33 || n == 0)
        return pc_intern(r->p, b, n);
    char buf[129];
    if (n > 64)
        n = 64;
    for (size_t i = 0; i < n; i++)
        snprintf(buf + 2 * i, 3, "%02x", b[i]);
    return pc_intern(r->p, buf, 2 * n);
}

static int put(pf_interned *t, int kind, uint64_t iid, uint32_t val)
{
    int got = pf_interned_put(t, kind, iid, val);
    if (got < 0)
        return -1;
    if (got == 0 && (kind == PF_FRAME || kind == PF_MAPPING || kind == PF_CALLSTACK))
        pf_interned_unappend(t, kind);
    return 0;
}

static int on_string(pf_reader *r, pb_reader *pr, pf_interned *t, int kind)
{
    static const uint8_t ex[] = {ANY, V, L};
    pb_field f;
    int got;
    uint64_t iid = 0;
    const uint8_t *s = (const uint8_t *)"";
    size_t n = 0;
    while ((got = NEXT(r, pr, &f, ex, "InternedString")) > 0) {
        if (f.number == 1 && scalar(r, pr, &f, "InternedString") != PC_OK)
            return r->err->status;
        if (f.number == 1)
            iid = f.value;
        if (f.number == 2) {
            s = f.data;
            n = f.len;
        }
    }
    if (got < 0)
        return r->err->status;
    if (pf_interned_find(t, kind, iid) != PC_NONE)
        return PC_OK;
    uint32_t sid = kind == PF_BUILD_ID ? build_id_string(r, s, n) : pc_intern(r->p, s, n);
    if (sid == PC_NONE || put(t, kind, iid, sid) < 0)
        return pf_nomem(r);
    return PC_OK;
}

/* For the Q-style string table, which serves every kind of string, the
 * bytes are kept; build ids are converted when looked up as such. */
static int push_pool(pf_reader *r, void *ctx, uint64_t v)
{
    return pf_interned_pool_push(ctx, v) < 0 ? pf_nomem(r) : PC_OK;
}

static int on_frame(pf_reader *r, pb_reader *pr, pf_interned *t)
{
    static const uint8_t ex[] = {ANY, V, V, V, V, V, V, V, L};
    pb_field f;
    int got;
    uint32_t i = pf_interned_new_frame(t);
    if (i == PC_NONE)
        return pf_nomem(r);
    pf_frame_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.resolved = PC_NONE;
    uint64_t iid = 0;
    while ((got = NEXT(r, pr, &f, ex, "Frame")) > 0) {
        if (f.number >= 1 && f.number <= 7 && scalar(r, pr, &f, "Frame") != PC_OK)
            return r->err->status;
        switch (f.number) {
        case 1: iid = f.value; break;
        case 2: rec.name_iid = f.value; rec.has_name = 1; break;
        case 3: rec.mapping_iid = f.value; break;
        case 4: rec.rel_pc = f.value; break;
        case 7: rec.kind = f.value < 7 ? (uint8_t)f.value : 0; break;
        case 8:
            if (f.len == 6 && memcmp(f.data, "kernel", 6) == 0)
                rec.kind = 2;
            else if (f.len == 3 && memcmp(f.data, "jit", 3) == 0)
                rec.kind = 4;
            else if (f.len == 11 && memcmp(f.data, "interpreted", 11) == 0)
                rec.kind = 3;
            break;
        }
    }
    if (got < 0)
        return r->err->status;
    t->frames[i] = rec;
    return put(t, PF_FRAME, iid, i) < 0 ? pf_nomem(r) : PC_OK;
}

static int on_mapping(pf_reader *r, pb_reader *pr, pf_interned *t)
{
    static const uint8_t ex[] = {ANY, V, V, V, V, V, V, V, V};
    pb_field f;
    int got;
    pf_interned_pool_compact(t);
    uint32_t i = pf_interned_new_mapping(t);
    if (i == PC_NONE)
        return pf_nomem(r);
    uint64_t iid = 0;
    pf_mapping_rec rec = t->mappings[i];
    while ((got = NEXT(r, pr, &f, ex, "Mapping")) > 0) {
        if (f.number == 7) {
            if (each_varint(r, pr, &f, push_pool, t, "Mapping.path_string_ids") != PC_OK)
                return r->err->status;
            continue;
        }
        if (f.number >= 1 && f.number <= 8 && scalar(r, pr, &f, "Mapping") != PC_OK)
            return r->err->status;
        switch (f.number) {
        case 1: iid = f.value; break;
        case 2: rec.build_iid = f.value; rec.has_build = 1; break;
        case 3: rec.start_offset = f.value; break;
        case 4: rec.start = f.value; break;
        case 5: rec.end = f.value; break;
        case 6: rec.load_bias = f.value; break;
        case 8: rec.exact_offset = f.value; break;
        }
    }
    if (got < 0)
        return r->err->status;
    rec.n_path = (uint32_t)(t->n_pool - rec.path0);
    t->mappings[i] = rec;
    return put(t, PF_MAPPING, iid, i) < 0 ? pf_nomem(r) : PC_OK;
}

static int on_callstack(pf_reader *r, pb_reader *pr, pf_interned *t)
{
    static const uint8_t ex[] = {ANY, V, V};
    pb_field f;
    int got;
    pf_interned_pool_compact(t);
    uint32_t i = pf_interned_new_callstack(t);
    if (i == PC_NONE)
        return pf_nomem(r);
    uint64_t iid = 0;
    while ((got = NEXT(r, pr, &f, ex, "Callstack")) > 0) {
        if (f.number == 2) {
            if (each_varint(r, pr, &f, push_pool, t, "Callstack.frame_ids") != PC_OK)
                return r->err->status;
        } else if (f.number == 1) {
            if (scalar(r, pr, &f, "Callstack") != PC_OK)
                return r->err->status;
            iid = f.value;
        }
    }
    if (got < 0)
        return r->err->status;
    pf_callstack_rec *c = &t->callstacks[i];
    c->n_frames = (uint32_t)(t->n_pool - c->frame0);
    return put(t, PF_CALLSTACK, iid, i) < 0 ? pf_nomem(r) : PC_OK;
}

static int on_interned(pf_reader *r, pb_reader *pr, pf_seq *s)
{
    pb_field f;
    pb_reader sub;
    int got, st = PC_OK;
    while (st == PC_OK && (got = pb_next(pr, &f)) > 0) {
        int kind;
        switch (f.number) {
        case 5: kind = PF_FUNCTION_NAME; break;
        case 6: kind = PF_FRAME; break;
        case 7: kind = PF_CALLSTACK; break;
        case 16: kind = PF_BUILD_ID; break;
        case 17: kind = PF_MAPPING_PATH; break;
        case 18: kind = PF_SOURCE_PATH; break;
        case 19: kind = PF_MAPPING; break;
        default: continue;
        }
        if (f.wiretype != L) {
            pb_expect(pr, &f, L);
            return wire_fail(r, pr, "InternedData");
        }
        pb_reader_sub(pr, &f, &sub);
        if (kind == PF_FRAME)
            st = on_frame(r, &sub, &s->it);
        else if (kind == PF_CALLSTACK)
            st = on_callstack(r, &sub, &s->it);
        else if (kind == PF_MAPPING)
            st = on_mapping(r, &sub, &s->it);
        else
            st = on_string(r, &sub, &s->it, kind);
    }
    if (st != PC_OK)
        return st;
    return got < 0 ? wire_fail(r, pr, "InternedData") : PC_OK;
}

/* ---- Resolving interned references ---- */

/* A string of the kind: heapprofd's own table first (where it has one),
 * then the interned data.  PC_NONE when undefined. */
static uint32_t lookup_string(pf_reader *r, pf_seq *s, int kind, uint64_t iid)
{
    uint32_t sid = pf_interned_find(&s->local, PF_STRING, iid);
    if (sid != PC_NONE) {
        if (kind == PF_BUILD_ID) {
            /* Copy: interning may move the bytes. */
            size_t n = pc_str_len(&r->p->str, sid);
            uint8_t buf[64];
            if (n > sizeof buf)
                n = sizeof buf;
            memcpy(buf, pc_str(&r->p->str, sid), n);
            return build_id_string(r, buf, n);
        }
        return sid;
    }
    return pf_interned_find(&s->it, kind, iid);
}

static uint64_t map_hash(uint32_t name, uint32_t build, const pf_mapping_rec *m)
{
    uint64_t h = pc_mix64((uint64_t)name << 32 | build);
    h = pc_mix64(h ^ m->start);
    h = pc_mix64(h ^ m->end);
    h = pc_mix64(h ^ m->exact_offset ^ (m->load_bias << 1) ^ (m->start_offset << 2));
    return h;
}

/* The reader's mapping for an interned one: named "/" + the path
 * components joined by "/" (a missing component ends the name), with a
 * leading "//" made "/", as trace_processor names them. */
static uint32_t mapping_of(pf_reader *r, pf_seq *s, uint64_t iid)
{
    pf_interned *t = &s->local;
    uint32_t i = pf_interned_find(t, PF_MAPPING, iid);
    if (i == PC_NONE) {
        t = &s->it;
        i = pf_interned_find(t, PF_MAPPING, iid);
    }
    if (i == PC_NONE)
        return PC_NONE;
    pf_mapping_rec *m = &t->mappings[i];
    if (m->resolved != PC_NONE)
        return m->resolved;

    pc_profile *p = r->p;
    size_t len = 0, cap = 256;
    char *name = malloc(cap);
    if (!name) {
        p->oom = 1;
        return PC_NONE;
    }
    for (uint32_t k = 0; k < m->n_path; k++) {
        uint32_t c = lookup_string(r, s, PF_MAPPING_PATH, t->pool[m->path0 + k]);
        if (c == PC_NONE)
            break;
        size_t n = pc_str_len(&p->str, c);
        if (len + n + 2 > cap) {
            while (len + n + 2 > cap)
                cap *= 2;
            char *x = realloc(name, cap);
            if (!x) {
                free(name);
                p->oom = 1;
                return PC_NONE;
            }
            name = x;
        }
        name[len++] = '/';
        memcpy(name + len, pc_str(&p->str, c), n);
        len += n;
    }
    size_t skip = len >= 2 && name[0] == '/' && name[1] == '/';
    uint32_t nsid = pc_intern(p, name + skip, len - skip);
    free(name);
    uint32_t bsid = PC_NONE;
    if (m->has_build && m->build_iid)
        bsid = lookup_string(r, s, PF_BUILD_ID, m->build_iid);
    if (nsid == PC_NONE || p->oom)
        return PC_NONE;

    pc_probe pr;
    if (pc_htab_reserve(&r->map.idx, r->map.n + 1) < 0) {
        p->oom = 1;
        return PC_NONE;
    }
    pc_probe_start(&r->map.idx, map_hash(nsid, bsid, m), &pr);
    for (uint32_t id; (id = pc_probe_next(&r->map.idx, &pr)) != PC_NONE;)
        if (r->map.name[id] == nsid && r->map.build[id] == bsid &&
            r->map.start[id] == m->start && r->map.end[id] == m->end &&
            r->map.exact_offset[id] == m->exact_offset &&
            r->map.load_bias[id] == m->load_bias &&
            r->map.start_offset[id] == m->start_offset)
            return m->resolved = id;
    struct pc_col cols[] = {PC_COL(r->map.name), PC_COL(r->map.build), PC_COL(r->map.res),
                            PC_COL(r->map.start), PC_COL(r->map.end),
                            PC_COL(r->map.start_offset), PC_COL(r->map.load_bias),
                            PC_COL(r->map.exact_offset)};
    if (r->map.n >= PC_NONE - 1 || pc_grow_cols(&r->map.cap, r->map.n + 1, cols, 8) < 0) {
        p->oom = 1;
        return PC_NONE;
    }
    uint32_t id = (uint32_t)r->map.n++;
    r->map.name[id] = nsid;
    r->map.build[id] = bsid;
    r->map.res[id] = pc_resource(p, nsid);
    if (r->map.res[id] != PC_NONE && bsid != PC_NONE && pc_str_len(&p->str, bsid))
        p->res.build[r->map.res[id]] = bsid;
    r->map.start[id] = m->start;
    r->map.end[id] = m->end;
    r->map.start_offset[id] = m->start_offset;
    r->map.load_bias[id] = m->load_bias;
    r->map.exact_offset[id] = m->exact_offset;
    pc_htab_insert(&r->map.idx, &pr, id);
    return m->resolved = id;
}

/* The profile frame for an interned frame; frames are shared across
 * sequences by (mapping, rel_pc, name, kind).  The name is part of the
 * key because JIT caches reuse addresses for other methods. */
static uint32_t frame_of(pf_reader *r, pf_seq *s, uint64_t iid)
{
    pf_interned *t = &s->local;
    uint32_t i = pf_interned_find(t, PF_FRAME, iid);
    if (i == PC_NONE) {
        t = &s->it;
        i = pf_interned_find(t, PF_FRAME, iid);
    }
    if (i == PC_NONE)
        return PC_NONE;
    pf_frame_rec *fr = &t->frames[i];
    if (fr->resolved != PC_NONE)
        return fr->resolved;
    uint32_t map = PC_NONE, name = PC_NONE;
    /* mapping_id 0 marks a frame known by name only. */
    if (fr->mapping_iid && (map = mapping_of(r, s, fr->mapping_iid)) == PC_NONE)
        return PC_NONE;
    if (fr->has_name && fr->name_iid) {
        name = lookup_string(r, s, PF_FUNCTION_NAME, fr->name_iid);
        if (name == PC_NONE)
            return PC_NONE;
        if (pc_str_len(&r->p->str, name) == 0)
            name = PC_NONE;
    }
    pc_profile *p = r->p;
    uint64_t h = pc_mix64((uint64_t)map << 32 | name);
    h = pc_mix64(h ^ fr->rel_pc ^ (uint64_t)fr->kind << 56);
    pc_probe pr;
    if (pc_htab_reserve(&r->fr.idx, r->fr.n + 1) < 0) {
        p->oom = 1;
        return PC_NONE;
    }
    pc_probe_start(&r->fr.idx, h, &pr);
    for (uint32_t id; (id = pc_probe_next(&r->fr.idx, &pr)) != PC_NONE;)
        if (r->fr.map[id] == map && r->fr.name[id] == name &&
            r->fr.kind[id] == fr->kind && p->frame.addr[id] == fr->rel_pc)
            return fr->resolved = id;
    struct pc_col cols[] = {PC_COL(r->fr.map), PC_COL(r->fr.name), PC_COL(r->fr.kind)};
    if (pc_grow_cols(&r->fr.cap, r->fr.n + 1, cols, 3) < 0) {
        p->oom = 1;
        return PC_NONE;
    }
    /* Named and categorised at the end, in pf_resolve_names. */
    uint32_t id = pc_add_frame(p, PC_NONE, fr->rel_pc, PC_CAT_USER, PC_EXEC_NATIVE);
    if (id == PC_NONE)
        return PC_NONE;
    r->fr.n++;
    r->fr.map[id] = map;
    r->fr.name[id] = name;
    r->fr.kind[id] = fr->kind;
    pc_htab_insert(&r->fr.idx, &pr, id);
    return fr->resolved = id;
}

/* A synthetic frame named name (an unwinding error). */
static uint32_t named_frame(pf_reader *r, const char *name)
{
    pc_profile *p = r->p;
    uint32_t sid = pc_intern_cstr(p, name);
    for (size_t id = 0; id < r->fr.n; id++)
        if (r->fr.map[id] == PC_NONE && r->fr.name[id] == sid && r->fr.kind[id] == 0xff)
            return (uint32_t)id;
    struct pc_col cols[] = {PC_COL(r->fr.map), PC_COL(r->fr.name), PC_COL(r->fr.kind)};
    if (sid == PC_NONE || pc_grow_cols(&r->fr.cap, r->fr.n + 1, cols, 3) < 0) {
        p->oom = 1;
        return PC_NONE;
    }
    uint32_t id = pc_add_frame(p, PC_NONE, 0, PC_CAT_OTHER, PC_EXEC_NATIVE);
    if (id == PC_NONE)
        return PC_NONE;
    r->fr.n++;
    r->fr.map[id] = PC_NONE;
    r->fr.name[id] = sid;
    r->fr.kind[id] = 0xff;
    /* Not in the index: unwinding errors are few. */
    return id;
}

/* Resolves a callstack to a profile stack in *out (PC_NONE for an empty
 * one), under root when that is not PC_NONE.  Returns 0, or -1 when the
 * callstack or one of its frames is not defined. */
static int stack_of(pf_reader *r, pf_seq *s, uint64_t iid, uint32_t root, uint32_t *out)
{
    pf_interned *t = &s->local;
    uint32_t i = pf_interned_find(t, PF_CALLSTACK, iid);
    if (i == PC_NONE) {
        t = &s->it;
        i = pf_interned_find(t, PF_CALLSTACK, iid);
    }
    if (i == PC_NONE)
        return -1;
    pf_callstack_rec *c = &t->callstacks[i];
    if (c->done && root == PC_NONE) {
        *out = c->resolved;
        return 0;
    }
    uint32_t stack = root == PC_NONE ? PC_NONE : pc_stack(r->p, PC_NONE, root);
    if (c->done) {
        /* The frame iids are gone: the resolved stack has the frames. */
        size_t n = 0;
        for (uint32_t st = c->resolved; st != PC_NONE; st = r->p->stack.prefix[st]) {
            if (n == r->chain_cap) {
                size_t cap = r->chain_cap ? r->chain_cap * 2 : 64;
                uint32_t *nc = realloc(r->chain, cap * sizeof *nc);
                if (!nc) {
                    r->p->oom = 1;
                    return -1;
                }
                r->chain = nc;
                r->chain_cap = cap;
            }
            r->chain[n++] = r->p->stack.frame[st];
        }
        while (n-- > 0)
            stack = pc_stack(r->p, stack, r->chain[n]);
        if (r->p->oom)
            return -1;
        *out = stack;
        return 0;
    }
    for (uint32_t k = (uint32_t)pc_depth_cut(r->p, c->n_frames); k < c->n_frames; k++) {
        uint32_t f = frame_of(r, s, t->pool[c->frame0 + k]);
        if (f == PC_NONE)
            return -1;
        stack = pc_stack(r->p, stack, f);
    }
    if (r->p->oom)
        return -1;
    if (root == PC_NONE)
        pf_interned_callstack_done(t, i, stack);
    *out = stack;
    return 0;
}

/* The first (root) frame's name of a callstack, or PC_NONE. */
static uint32_t root_name(pf_reader *r, pf_seq *s, uint32_t stack)
{
    (void)s;
    if (stack == PC_NONE)
        return PC_NONE;
    while (r->p->stack.prefix[stack] != PC_NONE)
        stack = r->p->stack.prefix[stack];
    return r->fr.name[r->p->stack.frame[stack]];
}

/* ---- Threads ---- */

static uint32_t thread_of(pf_reader *r, int64_t pid, int64_t tid)
{
    pc_profile *p = r->p;
    pc_probe pr;
    if (pc_htab_reserve(&r->thread_idx, p->thread.n + 1) < 0) {
        p->oom = 1;
        return PC_NONE;
    }
    pc_probe_start(&r->thread_idx, pc_mix64((uint64_t)tid * 0x9e3779b97f4a7c15ULL ^ (uint64_t)pid), &pr);
    for (uint32_t id; (id = pc_probe_next(&r->thread_idx, &pr)) != PC_NONE;)
        if (p->thread.tid[id] == tid && p->thread.pid[id] == pid)
            return id;
    uint32_t id = pc_add_thread(p, pid, tid, PC_NONE);
    if (id != PC_NONE)
        pc_htab_insert(&r->thread_idx, &pr, id);
    return id;
}

/* ---- Clocks ---- */

static uint64_t unit_of(const pf_reader *r, uint64_t key)
{
    for (size_t i = 0; i < r->units.n; i++)
        if (r->units.key[i] == key)
            return r->units.mult[i];
    return 1;
}

/* Converts t on clock id (sequence seq) to trace time.  Returns 0, or -1
 * when no snapshots join the clocks (a trace without any snapshot keeps
 * its times as they are). */
static int to_trace_time(pf_reader *r, uint32_t id, uint32_t seq, uint64_t t, uint64_t *out)
{
    uint64_t key = pf_clock_key(id, seq);
    uint64_t mult = unit_of(r, key);
    if (mult != 1)
        t *= mult;
    if (pf_clocks_convert(&r->clocks, key, t, out) == 0)
        return 0;
    if (r->clocks.n_snapshots == 0) {
        *out = t;
        return 0;
    }
    return -1;
}

static int on_clock_snapshot(pf_reader *r, pb_reader *pr, uint32_t seq)
{
    static const uint8_t ex[] = {ANY, L, V};
    enum { MAX = 64 };
    uint64_t keys[MAX], ts[MAX];
    size_t n = 0;
    pb_field f;
    int got;
    while ((got = NEXT(r, pr, &f, ex, "ClockSnapshot")) > 0) {
        if (f.number == 2) {
            if (!r->clocks.trace_clock_set && r->clocks.n_snapshots == 0) {
                r->clocks.trace_clock = f.value;
                r->clocks.trace_clock_set = 1;
            }
            continue;
        }
        if (f.number != 1)
            continue;
        static const uint8_t cex[] = {ANY, V, V, V, V};
        pb_reader sub;
        pb_field g;
        uint64_t id = 0, t = 0, mult = 1;
        pb_reader_sub(pr, &f, &sub);
        while ((got = NEXT(r, &sub, &g, cex, "ClockSnapshot.Clock")) > 0) {
            if (g.number >= 1 && g.number <= 4 &&
                scalar(r, &sub, &g, "ClockSnapshot.Clock") != PC_OK)
                return r->err->status;
            if (g.number == 1)
                id = g.value;
            else if (g.number == 2)
                t = g.value;
            else if (g.number == 4 && g.value)
                mult = g.value;
        }
        if (got < 0)
            return r->err->status;
        if (n == MAX || id > UINT32_MAX)
            continue;
        keys[n] = pf_clock_key((uint32_t)id, seq);
        ts[n] = t * mult;
        if (mult != 1 && unit_of(r, keys[n]) == 1) {
            struct pc_col cols[] = {PC_COL(r->units.key), PC_COL(r->units.mult)};
            if (pc_grow_cols(&r->units.cap, r->units.n + 1, cols, 2) < 0)
                return pf_nomem(r);
            r->units.key[r->units.n] = keys[n];
            r->units.mult[r->units.n++] = mult;
        }
        n++;
    }
    if (got < 0)
        return r->err->status;
    if (pf_clocks_add(&r->clocks, keys, ts, n) < 0)
        return pf_nomem(r);
    /* The first snapshot with the wall clock dates the recording. */
    pc_profile *p = r->p;
    for (size_t i = 0; i < n && !p->meta.has_wall; i++) {
        uint64_t at;
        if (keys[i] == pf_clock_key(PF_CLOCK_REALTIME, seq) &&
            pf_clocks_convert(&r->clocks, keys[i], ts[i], &at) == 0) {
            p->meta.has_wall = 1;
            p->meta.wall_ns = ts[i];
            p->meta.wall_at = at;
        }
    }
    return PC_OK;
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

/* Weight of a sample from the cumulative counter value on its CPU. */
static int counter_delta(pf_reader *r, pf_seq *s, uint32_t cpu, uint64_t count,
                         uint64_t *delta)
{
    if (cpu >= 4096) {
        *delta = count;
        return 0;
    }
    if (cpu >= s->n_cpu) {
        size_t n = cpu + 1u < 64 ? 64 : (size_t)cpu + 1;
        uint64_t *c = realloc(s->cpu_count, n * sizeof *c);
        if (!c)
            return pf_nomem(r);
        s->cpu_count = c;
        uint8_t *seen = realloc(s->cpu_seen, n);
        if (!seen)
            return pf_nomem(r);
        memset(seen + s->n_cpu, 0, n - s->n_cpu);
        s->cpu_seen = seen;
        s->n_cpu = n;
    }
    uint64_t prev = s->cpu_seen[cpu] ? s->cpu_count[cpu] : 0;
    /* A counter that went back was re-enabled: count from zero again. */
    *delta = count >= prev ? count - prev : count;
    s->cpu_count[cpu] = count;
    s->cpu_seen[cpu] = 1;
    return 0;
}

typedef struct packet {
    uint64_t offset;      /* of the packet's first field */
    uint64_t ts;
    uint32_t clock_id;
    uint8_t has_ts, has_clock;
} packet;

static int packet_time(pf_reader *r, pf_seq *s, const packet *pk, uint64_t *t)
{
    if (pk->has_clock)
        return to_trace_time(r, pk->clock_id, s->id, pk->ts, t);
    if (s->has_clock)
        return to_trace_time(r, s->clock_id, s->id, pk->ts, t);
    *t = pk->ts;
    return 0;
}

static int on_perf_sample(pf_reader *r, pb_reader *pr, pf_seq *s, const packet *pk)
{
    static const uint8_t ex[] = {ANY, V, V, V, V, V, V, V, ANY, ANY, ANY, ANY, ANY,
                                 ANY, ANY, ANY, V, V, V, L};
    pb_field f;
    int got;
    uint64_t cpu = 0, pid = 0, tid = 0, cs = 0, count = 0, err = 0;
    int has_cs = 0, has_count = 0, has_err = 0, has_cpu = 0;
    int lost = 0, skipped = 0, event = 0;
    while ((got = NEXT(r, pr, &f, ex, "PerfSample")) > 0) {
        if (f.number == 7)
            continue;
        if (f.number == 19) {
            event = 1;
            continue;
        }
        if (f.number <= 18 && f.number != 0 && ex[f.number] == V &&
            scalar(r, pr, &f, "PerfSample") != PC_OK)
            return r->err->status;
        switch (f.number) {
        case 1: cpu = f.value; has_cpu = 1; break;
        case 2: pid = f.value; break;
        case 3: tid = f.value; break;
        case 4: cs = f.value; has_cs = 1; break;
        case 6: count = f.value; has_count = 1; break;
        case 16: err = f.value; has_err = 1; break;
        case 17: r->st.records_lost += f.value; lost = 1; break;
        case 18: skipped = 1; break;
        }
    }
    if (got < 0)
        return r->err->status;
    /* Records of lost data, producer events (such as a guardrail stop)
     * and skipped samples are reported, not counted as samples. */
    if (lost)
        return PC_OK;
    if (event) {
        r->st.producer_stops++;
        return PC_OK;
    }
    if (skipped) {
        r->st.skipped_samples++;
        return PC_OK;
    }
    uint64_t t;
    if (!pk->has_ts) {
        r->st.no_timestamp++;
        return PC_OK;
    }
    if (packet_time(r, s, pk, &t) < 0) {
        r->st.clock_failures++;
        return PC_OK;
    }
    pc_profile *p = r->p;
    uint16_t ev = PF_NO_EVENT;
    int64_t weight = 1;
    const char *base = s->event_name == PC_NONE ? "cpu-clock" : pc_str(&p->str, s->event_name);
    if (has_count || s->nominal) {
        /* Without a timebase, traced_perf samples its default, the cpu-clock. */
        int unit = s->event_name == PC_NONE ? PC_UNIT_NS : s->event_unit;
        if (s->event == PF_NO_EVENT && (s->event = event_named(r, base, unit)) == PF_NO_EVENT)
            return pf_nomem(r);
        ev = s->event;
    }
    if (has_count) {
        uint64_t d = 0;
        if (counter_delta(r, s, (uint32_t)(cpu > UINT32_MAX ? UINT32_MAX : cpu), count, &d) != 0)
            return r->err->status;
        weight = d > INT64_MAX ? INT64_MAX : (int64_t)d;
    } else if (s->nominal) {
        weight = s->nominal > INT64_MAX ? INT64_MAX : (int64_t)s->nominal;
    } else {
        /* Without counts or a known period each sample stands for one;
         * such samples get an event of their own so that no one reads
         * their weight as time. */
        if (s->uncounted_event == PF_NO_EVENT) {
            char name[300];
            snprintf(name, sizeof name, "samples of %s", base);
            if ((s->uncounted_event = event_named(r, name, PC_UNIT_SAMPLES)) == PF_NO_EVENT)
                return pf_nomem(r);
        }
        ev = s->uncounted_event;
    }
    uint32_t thread = thread_of(r, (int64_t)pid, (int64_t)tid);
    if (thread == PC_NONE)
        return pf_nomem(r);
    uint32_t stack = PC_NONE;
    if (has_cs && stack_of(r, s, cs, PC_NONE, &stack) < 0) {
        if (p->oom)
            return pf_nomem(r);
        r->st.unresolved_callstacks++;
        stack = PC_NONE;
    }
    /* traced_perf puts an "ERROR <reason>" frame at the root of a stack
     * whose unwinding failed; add one when the producer did not. */
    if (has_err && err != 1) {
        r->st.unwind_errors++;
        uint32_t rn = root_name(r, s, stack);
        if (rn == PC_NONE || strncmp(pc_str(&p->str, rn), "ERROR ", 6) != 0) {
            char name[64];
            snprintf(name, sizeof name, "ERROR %s", unwind_error_name(err));
            uint32_t ef = named_frame(r, name);
            if (ef == PC_NONE)
                return pf_nomem(r);
            if (!has_cs || stack_of(r, s, cs, ef, &stack) < 0)
                stack = pc_stack(p, PC_NONE, ef);
        }
    }
    pc_add_sample(p, thread, t, stack, weight, ev,
                  has_cpu && cpu < PC_NO_CPU ? (uint16_t)cpu : PC_NO_CPU);
    return p->oom ? pf_nomem(r) : PC_OK;
}

/* ---- Chrome sampling profiler ---- */

typedef struct u64vec {
    uint64_t *v;
    size_t n, cap;
} u64vec;

static int push_vec(pf_reader *r, void *ctx, uint64_t x)
{
    u64vec *v = ctx;
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        uint64_t *a = realloc(v->v, cap * sizeof *a);
        if (!a)
            return pf_nomem(r);
        v->v = a;
        v->cap = cap;
    }
    v->v[v->n++] = x;
    return PC_OK;
}

static int on_streaming_profile(pf_reader *r, pb_reader *pr, pf_seq *s)
{
    static const uint8_t ex[] = {ANY, V, V, V};
    u64vec iids = {0}, deltas = {0};
    pb_field f;
    int got, st = PC_OK;
    while (st == PC_OK && (got = NEXT(r, pr, &f, ex, "StreamingProfilePacket")) > 0) {
        if (f.number == 1)
            st = each_varint(r, pr, &f, push_vec, &iids, "callstack_iid");
        else if (f.number == 2)
            st = each_varint(r, pr, &f, push_vec, &deltas, "timestamp_delta_us");
    }
    if (st == PC_OK && got < 0)
        st = r->err->status;
    if (st != PC_OK)
        goto done;
    if (!s->has_thread || !s->has_running) {
        r->st.chrome_no_thread += iids.n;
        goto done;
    }
    if (iids.n > deltas.n) {
        r->st.chrome_bad += iids.n;
        goto done;
    }
    pc_profile *p = r->p;
    if (r->chrome_event == PF_NO_EVENT &&
        (r->chrome_event = event_named(r, "Chrome CPU samples", PC_UNIT_SAMPLES)) == PF_NO_EVENT) {
        st = pf_nomem(r);
        goto done;
    }
    uint32_t thread = thread_of(r, s->pid, s->tid);
    if (thread == PC_NONE) {
        st = pf_nomem(r);
        goto done;
    }
    /* The packet's base time is converted once; its samples follow it by
     * the deltas, which also run on across packets. */
    uint64_t base;
    if (to_trace_time(r, PF_CLOCK_MONOTONIC, s->id, (uint64_t)s->running, &base) < 0)
        base = (uint64_t)s->running;
    int64_t sum = 0;
    for (size_t i = 0; i < deltas.n; i++) {
        int64_t d = (int64_t)deltas.v[i];
        int64_t ns = d > INT64_MAX / 1000 ? INT64_MAX : d < INT64_MIN / 1000 ? INT64_MIN : d * 1000;
        s->running = pc_sat_add(s->running, ns);
        sum = pc_sat_add(sum, ns);
        if (s->running < 0) {
            r->st.chrome_bad += i < iids.n ? iids.n - i : 0;
            break;
        }
        if (i >= iids.n)
            continue;
        uint32_t stack;
        if (stack_of(r, s, iids.v[i], PC_NONE, &stack) < 0) {
            if (p->oom) {
                st = pf_nomem(r);
                goto done;
            }
            r->st.unresolved_callstacks++;
            stack = PC_NONE;
        }
        uint64_t t = sum < 0 && (uint64_t)-sum > base ? 0 : base + (uint64_t)sum;
        pc_add_sample(p, thread, t, stack, 1, r->chrome_event, PC_NO_CPU);
    }
    if (p->oom)
        st = pf_nomem(r);
done:
    free(iids.v);
    free(deltas.v);
    return st;
}

/* ---- Process and thread names ---- */

static int set_thread_name(pf_reader *r, int64_t tid, int64_t pid, const uint8_t *s, size_t n)
{
    uint32_t sid = pc_intern(r->p, s, n);
    pc_probe pr;
    if (sid == PC_NONE || pc_htab_reserve(&r->tname.idx, r->tname.n + 1) < 0)
        return pf_nomem(r);
    pc_probe_start(&r->tname.idx, pc_mix64((uint64_t)tid), &pr);
    for (uint32_t i; (i = pc_probe_next(&r->tname.idx, &pr)) != PC_NONE;)
        if (r->tname.id[i] == tid) {
            r->tname.name[i] = sid;
            if (pid >= 0)
                r->tname.pid[i] = pid;
            return PC_OK;
        }
    struct pc_col cols[] = {PC_COL(r->tname.id), PC_COL(r->tname.pid), PC_COL(r->tname.name)};
    if (pc_grow_cols(&r->tname.cap, r->tname.n + 1, cols, 3) < 0)
        return pf_nomem(r);
    uint32_t i = (uint32_t)r->tname.n++;
    r->tname.id[i] = tid;
    r->tname.pid[i] = pid;
    r->tname.name[i] = sid;
    pc_htab_insert(&r->tname.idx, &pr, i);
    return PC_OK;
}

/* A process name from its command line, as trace_processor takes it:
 * argv[0], or when the whole command line is one argument with spaces,
 * its first word. */
static int set_process_cmdline(pf_reader *r, int64_t pid, const uint8_t *s, size_t n,
                               int single)
{
    if (single) {
        const uint8_t *sp = memchr(s, ' ', n);
        if (sp)
            n = (size_t)(sp - s);
    }
    uint32_t sid = pc_intern(r->p, s, n);
    if (sid == PC_NONE)
        return pf_nomem(r);
    pc_set_process_name(r->p, pid, sid);
    return r->p->oom ? pf_nomem(r) : PC_OK;
}

static int on_process_tree(pf_reader *r, pb_reader *pr)
{
    static const uint8_t ex[] = {ANY, L, L};
    pb_field f;
    int got;
    while ((got = NEXT(r, pr, &f, ex, "ProcessTree")) > 0) {
        pb_reader sub;
        pb_field g;
        if (f.number == 1) {
            static const uint8_t pex[] = {ANY, V, V, L};
            int64_t pid = 0;
            const uint8_t *c0 = NULL;
            size_t c0n = 0, nargs = 0;
            pb_reader_sub(pr, &f, &sub);
            while ((got = NEXT(r, &sub, &g, pex, "ProcessTree.Process")) > 0) {
                if (g.number == 1) {
                    if (scalar(r, &sub, &g, "ProcessTree.Process") != PC_OK)
                        return r->err->status;
                    pid = (int64_t)(int32_t)g.value;
                }
                if (g.number == 3) {
                    if (!nargs++) {
                        c0 = g.data;
                        c0n = g.len;
                    }
                }
            }
            if (got < 0)
                return r->err->status;
            if (c0 && set_process_cmdline(r, pid, c0, c0n, nargs == 1) != PC_OK)
                return r->err->status;
        } else if (f.number == 2) {
            static const uint8_t tex[] = {ANY, V, L, V};
            int64_t tid = 0, tgid = -1;
            const uint8_t *name = NULL;
            size_t nn = 0;
            pb_reader_sub(pr, &f, &sub);
            while ((got = NEXT(r, &sub, &g, tex, "ProcessTree.Thread")) > 0) {
                if (g.number == 1 || g.number == 3) {
                    if (scalar(r, &sub, &g, "ProcessTree.Thread") != PC_OK)
                        return r->err->status;
                    if (g.number == 1)
                        tid = (int64_t)(int32_t)g.value;
                    else
                        tgid = (int64_t)(int32_t)g.value;
                }
                if (g.number == 2) {
                    name = g.data;
                    nn = g.len;
                }
            }
            if (got < 0)
                return r->err->status;
            if (name && set_thread_name(r, tid, tgid, name, nn) != PC_OK)
                return r->err->status;
        }
    }
    return got < 0 ? r->err->status : PC_OK;
}

static int on_process_descriptor(pf_reader *r, pb_reader *pr)
{
    static const uint8_t ex[] = {ANY, V, L, ANY, ANY, V, L};
    pb_field f;
    int got;
    int64_t pid = 0;
    const uint8_t *c0 = NULL, *name = NULL;
    size_t c0n = 0, nn = 0, nargs = 0;
    while ((got = NEXT(r, pr, &f, ex, "ProcessDescriptor")) > 0) {
        if (f.number == 1) {
            if (scalar(r, pr, &f, "ProcessDescriptor") != PC_OK)
                return r->err->status;
            pid = (int64_t)(int32_t)f.value;
        } else if (f.number == 2 && !nargs++) {
            c0 = f.data;
            c0n = f.len;
        } else if (f.number == 6) {
            name = f.data;
            nn = f.len;
        }
    }
    if (got < 0)
        return r->err->status;
    if (name)
        return set_process_cmdline(r, pid, name, nn, 0);
    if (c0)
        return set_process_cmdline(r, pid, c0, c0n, nargs == 1);
    return PC_OK;
}

static int on_thread_descriptor(pf_reader *r, pb_reader *pr, pf_seq *s)
{
    static const uint8_t ex[] = {ANY, V, V, ANY, ANY, L, V};
    pb_field f;
    int got;
    int64_t pid = 0, tid = 0, ref = 0;
    const uint8_t *name = NULL;
    size_t nn = 0;
    while ((got = NEXT(r, pr, &f, ex, "ThreadDescriptor")) > 0) {
        if (f.number == 1 || f.number == 2 || f.number == 6)
            if (scalar(r, pr, &f, "ThreadDescriptor") != PC_OK)
                return r->err->status;
        switch (f.number) {
        case 1: pid = (int64_t)(int32_t)f.value; break;
        case 2: tid = (int64_t)(int32_t)f.value; break;
        case 5: name = f.data; nn = f.len; break;
        case 6: ref = (int64_t)f.value; break;
        }
    }
    if (got < 0)
        return r->err->status;
    s->pid = pid;
    s->tid = tid;
    s->has_thread = 1;
    /* Chrome's sample times run on from the reference time. */
    s->running = ref > INT64_MAX / 1000 || ref < INT64_MIN / 1000 ? 0 : ref * 1000;
    s->has_running = 1;
    if (name)
        return set_thread_name(r, tid, pid, name, nn);
    return PC_OK;
}

static int on_track_descriptor(pf_reader *r, pb_reader *pr, pf_seq *s)
{
    static const uint8_t ex[] = {ANY, ANY, ANY, L, L};
    pb_field f;
    pb_reader sub;
    int got;
    while ((got = NEXT(r, pr, &f, ex, "TrackDescriptor")) > 0) {
        if (f.number != 3 && f.number != 4)
            continue;
        pb_reader_sub(pr, &f, &sub);
        if (f.number == 3 && on_process_descriptor(r, &sub) != PC_OK)
            return r->err->status;
        if (f.number == 4) {
            if (!s->valid) {
                /* Only the names; the sequence's timing needs valid state. */
                pf_seq tmp = *s;
                if (on_thread_descriptor(r, &sub, &tmp) != PC_OK)
                    return r->err->status;
                continue;
            }
            if (on_thread_descriptor(r, &sub, s) != PC_OK)
                return r->err->status;
        }
    }
    return got < 0 ? r->err->status : PC_OK;
}

/* ---- heapprofd ---- */

static int on_profile_tables(pf_reader *r, pb_reader *pr, const pb_field *f, pf_seq *s)
{
    pb_reader sub;
    pb_reader_sub(pr, f, &sub);
    switch (f->number) {
    case 1: return on_string(r, &sub, &s->local, PF_STRING);
    case 2: return on_frame(r, &sub, &s->local);
    case 3: return on_callstack(r, &sub, &s->local);
    case 4: return on_mapping(r, &sub, &s->local);
    }
    return PC_OK;
}

static int heap_sample(pf_reader *r, pb_reader *pr, pf_seq *s, uint32_t dump,
                       int max_count_ok)
{
    static const uint8_t ex[] = {ANY, V, V, V, V, V, V, ANY, V, V};
    pb_field f;
    int got;
    uint64_t cs = 0, alloc = 0, freed = 0, ac = 0, fc = 0, max = 0, max_count = 0;
    int has_alloc = 0, has_max = 0;
    while ((got = NEXT(r, pr, &f, ex, "HeapSample")) > 0) {
        if (f.number < sizeof ex && ex[f.number] == V &&
            scalar(r, pr, &f, "HeapSample") != PC_OK)
            return r->err->status;
        switch (f.number) {
        case 1: cs = f.value; break;
        case 2: alloc = f.value; has_alloc = 1; break;
        case 3: freed = f.value; break;
        case 5: ac = f.value; break;
        case 6: fc = f.value; break;
        case 8: max = f.value; has_max = 1; break;
        case 9: max_count = f.value; break;
        }
    }
    if (got < 0)
        return r->err->status;
    /* In dump_at_max mode the peak is all there is: shown as allocated
     * and never freed.  Its count is only right in dumps that state
     * orig_sampling_interval_bytes (older heapprofd got it wrong). */
    if (!has_alloc && has_max) {
        alloc = max;
        ac = max_count_ok ? max_count : 0;
        freed = fc = 0;
    }
    struct pc_col cols[] = {PC_COL(s->hs.callstack), PC_COL(s->hs.val), PC_COL(s->hs.dump)};
    if (pc_grow_cols(&s->hs.cap, s->hs.n + 1, cols, 3) < 0)
        return pf_nomem(r);
    size_t i = s->hs.n++;
    s->hs.callstack[i] = cs;
    s->hs.val[i] = (pf_heap_values){{alloc, freed, ac, fc}};
    s->hs.dump[i] = dump;
    return PC_OK;
}

static int heap_dump(pf_reader *r, pb_reader *pr, pf_seq *s, const packet *pk)
{
    static const uint8_t ex[] = {ANY, V, L, V, V, L, V, V, V, V, V, L, V, V, V, V};
    pb_field f;
    int got;
    int64_t pid = 0;
    uint64_t ts = 0;
    int has_ts = 0, flagged = 0, max_count_ok = 0;
    uint32_t heap = PC_NONE;
    /* The header fields first: samples may precede them in the bytes. */
    pb_reader scan = *pr;
    while ((got = NEXT(r, &scan, &f, ex, "ProcessHeapSamples")) > 0) {
        if (f.number < sizeof ex && ex[f.number] == V &&
            scalar(r, &scan, &f, "ProcessHeapSamples") != PC_OK)
            return r->err->status;
        switch (f.number) {
        case 1: pid = (int64_t)f.value; break;
        case 4: case 6: case 7: case 8: case 10: case 14: flagged |= f.value != 0; break;
        case 9: ts = f.value; has_ts = 1; break;
        case 13: max_count_ok = f.value != 0; break;
        case 11:
            if ((heap = pc_intern(r->p, f.data, f.len)) == PC_NONE)
                return pf_nomem(r);
            break;
        }
    }
    if (got < 0)
        return r->err->status;
    if (heap == PC_NONE && (heap = pc_intern_cstr(r->p, "unknown")) == PC_NONE)
        return pf_nomem(r);
    r->st.heap_flags += flagged;
    /* Each continued packet repeats the header of the dump it continues. */
    uint32_t dump = PC_NONE;
    for (size_t d = 0; d < s->hd.n; d++)
        if (s->hd.pid[d] == pid && s->hd.heap[d] == heap && s->hd.ts[d] == ts &&
            s->hd.has_ts[d] == has_ts)
            dump = (uint32_t)d;
    if (dump == PC_NONE) {
        struct pc_col cols[] = {PC_COL(s->hd.pid), PC_COL(s->hd.heap), PC_COL(s->hd.ts),
                                PC_COL(s->hd.has_ts), PC_COL(s->hd.pkt_ts),
                                PC_COL(s->hd.has_pkt_ts)};
        if (pc_grow_cols(&s->hd.cap, s->hd.n + 1, cols, 6) < 0)
            return pf_nomem(r);
        dump = (uint32_t)s->hd.n++;
        s->hd.pid[dump] = pid;
        s->hd.heap[dump] = heap;
        s->hd.ts[dump] = ts;
        s->hd.has_ts[dump] = (uint8_t)has_ts;
        s->hd.has_pkt_ts[dump] = !has_ts && pk->has_ts &&
                                 packet_time(r, s, pk, &s->hd.pkt_ts[dump]) == 0;
    }
    while ((got = pb_next(pr, &f)) > 0)
        if (f.number == 2) {
            pb_reader sub;
            pb_reader_sub(pr, &f, &sub);
            if (heap_sample(r, &sub, s, dump, max_count_ok) != PC_OK)
                return r->err->status;
        }
    return got < 0 ? wire_fail(r, pr, "ProcessHeapSamples") : PC_OK;
}

/* A dump is complete: its samples' callstacks can be resolved now that
 * the interned data that followed them has arrived.  The chain's dumps
 * are taken in order, and each states the totals of every callsite its
 * process's heap has had so far. */
static int heap_dump_end(pf_reader *r, pf_seq *s)
{
    pc_profile *p = r->p;
    size_t nd = s->hd.n, ns = s->hs.n;
    /* Samples by dump (a counting sort: continued packets interleave the
     * dumps of several processes). */
    size_t *start = calloc(nd + 2, sizeof *start);
    uint32_t *order = malloc((ns + 1) * sizeof *order);
    int status = PC_OK;
    if (!start || !order) {
        status = pf_nomem(r);
        goto done;
    }
    for (size_t i = 0; i < ns; i++)
        start[s->hs.dump[i] + 2]++;
    for (size_t d = 0; d < nd; d++)
        start[d + 2] += start[d + 1];
    for (size_t i = 0; i < ns; i++)
        order[start[s->hs.dump[i] + 1]++] = (uint32_t)i;
    for (size_t d = 0; d < nd && !p->oom; d++) {
        uint64_t when = 0;
        /* Dump times are on CLOCK_MONOTONIC_COARSE; a dump whose time
         * cannot be converted is left out, as trace_processor does. */
        if (s->hd.has_ts[d] &&
            to_trace_time(r, PF_CLOCK_MONOTONIC_COARSE, s->id, s->hd.ts[d], &when) < 0) {
            r->st.heap_no_clock++;
            continue;
        }
        /* Without a time of its own, a dump is placed at its packet's. */
        if (!s->hd.has_ts[d] && s->hd.has_pkt_ts[d])
            when = s->hd.pkt_ts[d];
        int64_t pid = s->hd.pid[d];
        uint32_t heap = s->hd.heap[d];
        for (size_t k = start[d]; k < start[d + 1]; k++) {
            uint32_t i = order[k], stack;
            if (stack_of(r, s, s->hs.callstack[i], PC_NONE, &stack) < 0) {
                if (p->oom)
                    break;
                r->st.heap_unresolved++;
                continue;
            }
            /* An allocation with no frames has no callsite to charge it
             * to; trace_processor drops it too. */
            if (stack == PC_NONE) {
                r->st.heap_empty++;
                continue;
            }
            if (pf_heap_totals_add(&s->totals, pid, heap, stack, s->hs.callstack[i],
                                   &s->hs.val[i]) == PC_NONE) {
                status = pf_nomem(r);
                goto done;
            }
        }
        uint32_t thread = thread_of(r, pid, pid);
        uint32_t dump = (uint32_t)p->heap.n_dumps++;
        const pf_heap_totals *h = &s->totals;
        for (uint32_t i = pf_heap_first_site(h, pid, heap); i != PC_NONE && !p->oom;
             i = h->site.next[i]) {
            const uint64_t *v = h->site.total[i].v;
            if (v[PF_ALLOC] | v[PF_FREED] | v[PF_ALLOC_COUNT] | v[PF_FREE_COUNT])
                pc_add_heap(p, thread, heap, dump, when, h->site.stack[i], v[PF_ALLOC],
                            v[PF_FREED], v[PF_ALLOC_COUNT], v[PF_FREE_COUNT]);
        }
    }
    if (p->oom)
        status = pf_nomem(r);
done:
    free(start);
    free(order);
    s->hs.n = 0;
    s->hd.n = 0;
    s->in_dump = 0;
    pf_interned_clear(&s->local);
    return status;
}

static int on_profile_packet(pf_reader *r, pb_reader *pr, pf_seq *s, const packet *pk)
{
    static const uint8_t ex[] = {ANY, L, L, L, L, L, V, V};
    pb_field f;
    int got;
    int continued = 0;
    /* Tables and flags first: dumps refer to the tables. */
    pb_reader scan = *pr;
    while ((got = NEXT(r, &scan, &f, ex, "ProfilePacket")) > 0) {
        if ((f.number == 6 || f.number == 7) && scalar(r, &scan, &f, "ProfilePacket") != PC_OK)
            return r->err->status;
        if (f.number >= 1 && f.number <= 4 && on_profile_tables(r, &scan, &f, s) != PC_OK)
            return r->err->status;
        if (f.number == 6)
            continued = f.value != 0;
        if (f.number == 7) {
            if (s->has_index && f.value != s->next_index)
                r->st.heap_gaps++;
            s->has_index = 1;
            s->next_index = f.value + 1;
        }
    }
    if (got < 0)
        return r->err->status;
    if (!s->in_dump)
        s->dump_offset = pk->offset;
    s->in_dump = 1;
    while ((got = pb_next(pr, &f)) > 0)
        if (f.number == 5) {
            pb_reader sub;
            pb_reader_sub(pr, &f, &sub);
            if (heap_dump(r, &sub, s, pk) != PC_OK)
                return r->err->status;
        }
    if (got < 0)
        return wire_fail(r, pr, "ProfilePacket");
    return continued ? PC_OK : heap_dump_end(r, s);
}

/* ---- Symbols and deobfuscation (applied at the end) ---- */

static int on_module_symbols(pf_reader *r, pb_reader *pr)
{
    static const uint8_t ex[] = {ANY, L, L, L};
    pc_profile *p = r->p;
    pb_field f;
    int got;
    uint32_t path = PC_NONE, build = PC_NONE;
    pb_reader scan = *pr;
    while ((got = NEXT(r, &scan, &f, ex, "ModuleSymbols")) > 0) {
        if (f.number == 1)
            path = pc_intern(p, f.data, f.len);
        else if (f.number == 2)
            build = build_id_string(r, f.data, f.len);
    }
    if (got < 0)
        return r->err->status;
    if (path == PC_NONE)
        path = pc_intern(p, "", 0);
    if (build == PC_NONE)
        build = pc_intern(p, "", 0);
    struct pc_col mcols[] = {PC_COL(r->mod.path), PC_COL(r->mod.build)};
    if (p->oom || pc_grow_cols(&r->mod.cap, r->mod.n + 1, mcols, 2) < 0)
        return pf_nomem(r);
    uint32_t mod = (uint32_t)r->mod.n++;
    r->mod.path[mod] = path;
    r->mod.build[mod] = build;
    while ((got = pb_next(pr, &f)) > 0) {
        if (f.number != 3 || f.wiretype != L)
            continue;
        static const uint8_t aex[] = {ANY, V, L};
        pb_reader sub;
        pb_field g;
        uint64_t addr = 0;
        uint32_t line0 = (uint32_t)r->line.n;
        pb_reader_sub(pr, &f, &sub);
        while ((got = NEXT(r, &sub, &g, aex, "AddressSymbols")) > 0) {
            if (g.number == 1) {
                if (scalar(r, &sub, &g, "AddressSymbols") != PC_OK)
                    return r->err->status;
                addr = g.value;
                continue;
            }
            if (g.number != 2)
                continue;
            static const uint8_t lex[] = {ANY, L, L, V};
            pb_reader ls;
            pb_field h;
            uint32_t func = PC_NONE, file = PC_NONE, line = 0;
            pb_reader_sub(&sub, &g, &ls);
            while ((got = NEXT(r, &ls, &h, lex, "Line")) > 0) {
                if (h.number == 1)
                    func = pc_intern(p, h.data, h.len);
                else if (h.number == 2)
                    file = pc_intern(p, h.data, h.len);
                else if (h.number == 3) {
                    if (scalar(r, &ls, &h, "Line") != PC_OK)
                        return r->err->status;
                    line = (uint32_t)h.value;
                }
            }
            if (got < 0)
                return r->err->status;
            if (func == PC_NONE)
                continue;
            struct pc_col lcols[] = {PC_COL(r->line.func), PC_COL(r->line.file),
                                     PC_COL(r->line.line)};
            if (p->oom || pc_grow_cols(&r->line.cap, r->line.n + 1, lcols, 3) < 0)
                return pf_nomem(r);
            r->line.func[r->line.n] = func;
            r->line.file[r->line.n] = file;
            r->line.line[r->line.n++] = line;
        }
        if (got < 0)
            return r->err->status;
        if (r->line.n == line0)
            continue;
        struct pc_col scols[] = {PC_COL(r->sym.mod), PC_COL(r->sym.line0),
                                 PC_COL(r->sym.n_lines), PC_COL(r->sym.addr)};
        if (pc_grow_cols(&r->sym.cap, r->sym.n + 1, scols, 4) < 0)
            return pf_nomem(r);
        r->sym.mod[r->sym.n] = mod;
        r->sym.line0[r->sym.n] = line0;
        r->sym.n_lines[r->sym.n] = (uint32_t)r->line.n - line0;
        r->sym.addr[r->sym.n++] = addr;
    }
    return got < 0 ? wire_fail(r, pr, "ModuleSymbols") : PC_OK;
}

static int on_deobfuscation(pf_reader *r, pb_reader *pr)
{
    static const uint8_t ex[] = {ANY, L, V, L};
    pc_profile *p = r->p;
    pb_field f;
    int got;
    uint32_t pkg = PC_NONE;
    pb_reader scan = *pr;
    while ((got = NEXT(r, &scan, &f, ex, "DeobfuscationMapping")) > 0)
        if (f.number == 1)
            pkg = pc_intern(p, f.data, f.len);
    if (got < 0)
        return r->err->status;
    if (pkg == PC_NONE && (pkg = pc_intern(p, "", 0)) == PC_NONE)
        return pf_nomem(r);
    while ((got = pb_next(pr, &f)) > 0) {
        if (f.number != 3 || f.wiretype != L)
            continue;
        static const uint8_t cex[] = {ANY, L, L, L, L};
        pb_reader sub, ms;
        pb_field g, h;
        uint32_t obf = PC_NONE, deobf = PC_NONE;
        pb_reader_sub(pr, &f, &sub);
        pb_reader cscan = sub;
        while ((got = NEXT(r, &cscan, &g, cex, "ObfuscatedClass")) > 0) {
            if (g.number == 1)
                obf = pc_intern(p, g.data, g.len);
            else if (g.number == 2)
                deobf = pc_intern(p, g.data, g.len);
        }
        if (got < 0)
            return r->err->status;
        if (obf == PC_NONE)
            continue;
        if (deobf == PC_NONE)
            deobf = obf;
        struct pc_col ccols[] = {PC_COL(r->cls.pkg), PC_COL(r->cls.obf), PC_COL(r->cls.deobf)};
        if (p->oom || pc_grow_cols(&r->cls.cap, r->cls.n + 1, ccols, 3) < 0)
            return pf_nomem(r);
        uint32_t cls = (uint32_t)r->cls.n++;
        r->cls.pkg[cls] = pkg;
        r->cls.obf[cls] = obf;
        r->cls.deobf[cls] = deobf;
        while ((got = pb_next(&sub, &g)) > 0) {
            if (g.number != 4 || g.wiretype != L)
                continue;
            uint32_t mo = PC_NONE, md = PC_NONE, ls = 0, le = 0;
            pb_reader_sub(&sub, &g, &ms);
            while ((got = pb_next(&ms, &h)) > 0) {
                if (h.number == 1 && h.wiretype == L)
                    mo = pc_intern(p, h.data, h.len);
                else if (h.number == 2 && h.wiretype == L)
                    md = pc_intern(p, h.data, h.len);
                else if (h.number == 3 && h.wiretype == V)
                    ls = (uint32_t)h.value;
                else if (h.number == 4 && h.wiretype == V)
                    le = (uint32_t)h.value;
            }
            if (got < 0)
                return wire_fail(r, &ms, "ObfuscatedMember");
            if (mo == PC_NONE || md == PC_NONE)
                continue;
            struct pc_col mcols[] = {PC_COL(r->meth.cls), PC_COL(r->meth.obf),
                                     PC_COL(r->meth.deobf), PC_COL(r->meth.line_start),
                                     PC_COL(r->meth.line_end)};
            if (p->oom || pc_grow_cols(&r->meth.cap, r->meth.n + 1, mcols, 5) < 0)
                return pf_nomem(r);
            r->meth.cls[r->meth.n] = cls;
            r->meth.obf[r->meth.n] = mo;
            r->meth.deobf[r->meth.n] = md;
            r->meth.line_start[r->meth.n] = ls;
            r->meth.line_end[r->meth.n++] = le;
        }
        if (got < 0)
            return wire_fail(r, &sub, "ObfuscatedClass");
    }
    return got < 0 ? wire_fail(r, pr, "DeobfuscationMapping") : PC_OK;
}

/* ---- Packets ---- */

static int packets(pf_reader *r, const uint8_t *data, size_t len, uint64_t base);

static int on_compressed(pf_reader *r, const pb_field *f, uint64_t offset, int zstd)
{
    if (r->z_depth)
        return pf_fail(r, offset, "compressed packets inside compressed packets");
    size_t n = 0;
    if (zstd) {
        ZSTD_DStream *z = ZSTD_createDStream();
        if (!z)
            return pf_nomem(r);
        ZSTD_inBuffer zin = {f->data, f->len, 0};
        size_t ret = 1;
        while (ret != 0) {
            if (n == r->zcap) {
                size_t cap = r->zcap ? r->zcap * 2 : (size_t)1 << 20;
                uint8_t *b = cap > MAX_DECOMPRESSED ? NULL : realloc(r->zbuf, cap);
                if (!b) {
                    ZSTD_freeDStream(z);
                    return cap > MAX_DECOMPRESSED
                               ? pf_fail(r, offset, "zstd_compressed_packets expand "
                                         "beyond %zu bytes", MAX_DECOMPRESSED)
                               : pf_nomem(r);
                }
                r->zbuf = b;
                r->zcap = cap;
            }
            ZSTD_outBuffer zout = {r->zbuf, r->zcap, n};
            ret = ZSTD_decompressStream(z, &zout, &zin);
            n = zout.pos;
            if (ZSTD_isError(ret)) {
                ZSTD_freeDStream(z);
                return pf_fail(r, offset, "zstd_compressed_packets: %s",
                               ZSTD_getErrorName(ret));
            }
            if (ret != 0 && zin.pos == zin.size && zout.pos < zout.size) {
                ZSTD_freeDStream(z);
                return pf_fail(r, offset, "zstd_compressed_packets: the data ends "
                               "inside the stream");
            }
        }
        ZSTD_freeDStream(z);
    } else {
        z_stream z;
        memset(&z, 0, sizeof z);
        if (inflateInit(&z) != Z_OK)
            return pf_nomem(r);
        z.next_in = (Bytef *)(uintptr_t)f->data;
        int ret = Z_OK;
        size_t left = f->len;
        while (ret != Z_STREAM_END) {
            if (n == r->zcap) {
                size_t cap = r->zcap ? r->zcap * 2 : (size_t)1 << 20;
                uint8_t *b = cap > MAX_DECOMPRESSED ? NULL : realloc(r->zbuf, cap);
                if (!b) {
                    inflateEnd(&z);
                    return cap > MAX_DECOMPRESSED
                               ? pf_fail(r, offset, "compressed_packets expand "
                                         "beyond %zu bytes", MAX_DECOMPRESSED)
                               : pf_nomem(r);
                }
                r->zbuf = b;
                r->zcap = cap;
            }
            uInt in_chunk = left > (1u << 30) ? 1u << 30 : (uInt)left;
            uInt out_chunk = r->zcap - n > (1u << 30) ? 1u << 30 : (uInt)(r->zcap - n);
            z.avail_in = in_chunk;
            z.next_out = r->zbuf + n;
            z.avail_out = out_chunk;
            ret = inflate(&z, Z_NO_FLUSH);
            left -= in_chunk - z.avail_in;
            n += out_chunk - z.avail_out;
            if (ret == Z_BUF_ERROR && left == 0 && z.avail_out > 0) {
                inflateEnd(&z);
                return pf_fail(r, offset, "compressed_packets: the zlib data ends "
                               "inside the stream");
            }
            if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) {
                inflateEnd(&z);
                return pf_fail(r, offset, "compressed_packets: %s",
                               z.msg ? z.msg : "invalid zlib data");
            }
        }
        inflateEnd(&z);
    }
    /* Nesting is refused above, so the buffer stays put while its
     * packets are decoded, and serves the next compressed packet. */
    r->z_depth++;
    r->z_offset = offset;
    int st = packets(r, r->zbuf, n, 0);
    r->z_depth--;
    return st;
}

/* The wire type of the TracePacket fields this reader uses, or -1. */
static int packet_field_type(uint32_t n)
{
    switch (n) {
    case TP_TIMESTAMP: case TP_SEQUENCE_ID: case TP_SEQUENCE_FLAGS:
    case TP_STATE_CLEARED: case TP_PACKET_DROPPED: case TP_CLOCK_ID:
        return V;
    case TP_INTERNED_DATA: case TP_DEFAULTS: case TP_PROCESS_TREE:
    case TP_CLOCK_SNAPSHOT: case TP_PROFILE_PACKET: case TP_PROCESS_DESCRIPTOR:
    case TP_THREAD_DESCRIPTOR: case TP_COMPRESSED: case TP_STREAMING_PROFILE:
    case TP_TRACK_DESCRIPTOR: case TP_MODULE_SYMBOLS: case TP_DEOBFUSCATION:
    case TP_PERF_SAMPLE: case TP_STREAMING_ALLOC: case TP_STREAMING_FREE:
    case TP_ZSTD_COMPRESSED: case TP_STACK_SAMPLE: case TP_TRACK_EVENT:
    case TP_HEAP_GRAPH:
        return L;
    }
    return -1;
}

static int on_packet(pf_reader *r, const uint8_t *data, size_t len, uint64_t offset)
{
    pb_reader pr;
    pb_field f, payload, interned, defaults;
    int got;
    uint32_t seq_id = 0, flags = 0;
    int cleared = 0, dropped = 0, has_payload = 0, has_interned = 0, has_defaults = 0;
    packet pk;
    memset(&pk, 0, sizeof pk);
    pk.offset = offset;
    r->packet_index++;
    r->st.packets++;
    pb_reader_init(&pr, data, len, offset);
    while ((got = pb_next(&pr, &f)) > 0) {
        int type = packet_field_type(f.number);
        if (type < 0)
            continue;
        if (f.wiretype != (uint32_t)type) {
            pb_expect(&pr, &f, (uint32_t)type);
            return wire_fail(r, &pr, "TracePacket");
        }
        switch (f.number) {
        case TP_TIMESTAMP: pk.ts = f.value; pk.has_ts = 1; break;
        case TP_CLOCK_ID: pk.clock_id = (uint32_t)f.value; pk.has_clock = 1; break;
        case TP_SEQUENCE_ID: seq_id = (uint32_t)f.value; break;
        case TP_SEQUENCE_FLAGS: flags = (uint32_t)f.value; break;
        case TP_STATE_CLEARED: cleared = f.value != 0; break;
        case TP_PACKET_DROPPED: dropped = f.value != 0; break;
        case TP_INTERNED_DATA: interned = f; has_interned = 1; break;
        case TP_DEFAULTS: defaults = f; has_defaults = 1; break;
        default: payload = f; has_payload = 1; break;
        }
    }
    if (got < 0)
        return wire_fail(r, &pr, "TracePacket");

    pf_seq *s = seq_of(r, seq_id);
    if (!s)
        return pf_nomem(r);
    /* Perfetto marks the first packet of every sequence as following a
     * loss (its writer starts with nothing before it): not a loss. */
    int first = !s->seen;
    s->seen = 1;

    pb_reader sub;
    if (cleared || (flags & SEQ_CLEARED)) {
        /* A dump in progress cannot be resolved any more. */
        seq_clear(s);
    } else if (dropped && !first) {
        s->valid = 0;
        s->has_running = 0;
        r->st.lost_packets++;
    }
    if (has_defaults && s->valid) {
        pb_reader_sub(&pr, &defaults, &sub);
        if (on_defaults(r, &sub, s) != PC_OK)
            return r->err->status;
    }
    if (has_interned && s->valid) {
        pb_reader_sub(&pr, &interned, &sub);
        if (on_interned(r, &sub, s) != PC_OK)
            return r->err->status;
    }
    /* Times on the trace clock tell where the recording begins and ends,
     * beyond its samples. */
    if (pk.has_ts && !pk.has_clock && !s->has_clock)
        pc_saw_time(r->p, pk.ts);
    if (!has_payload)
        return PC_OK;
    if ((flags & SEQ_NEEDS_STATE) && !s->valid) {
        r->st.needs_state++;
        return PC_OK;
    }
    pb_reader_sub(&pr, &payload, &sub);
    switch (payload.number) {
    case TP_CLOCK_SNAPSHOT: return on_clock_snapshot(r, &sub, seq_id);
    case TP_PROCESS_TREE: return on_process_tree(r, &sub);
    case TP_PROCESS_DESCRIPTOR: return on_process_descriptor(r, &sub);
    case TP_THREAD_DESCRIPTOR: return on_thread_descriptor(r, &sub, s);
    case TP_TRACK_DESCRIPTOR: return on_track_descriptor(r, &sub, s);
    case TP_PERF_SAMPLE: return on_perf_sample(r, &sub, s, &pk);
    case TP_STREAMING_PROFILE: return on_streaming_profile(r, &sub, s);
    case TP_PROFILE_PACKET: return on_profile_packet(r, &sub, s, &pk);
    case TP_MODULE_SYMBOLS: return on_module_symbols(r, &sub);
    case TP_DEOBFUSCATION: return on_deobfuscation(r, &sub);
    case TP_COMPRESSED:
        return on_compressed(r, &payload, pb_offset(&pr, payload.at), 0);
    case TP_ZSTD_COMPRESSED:
        return on_compressed(r, &payload, pb_offset(&pr, payload.at), 1);
    case TP_STREAMING_ALLOC: r->st.streaming_allocs++; return PC_OK;
    case TP_STREAMING_FREE: r->st.streaming_frees++; return PC_OK;
    case TP_STACK_SAMPLE: r->st.stack_samples++; return PC_OK;
    case TP_TRACK_EVENT: r->st.track_events++; return PC_OK;
    case TP_HEAP_GRAPH: r->st.heap_graphs++; return PC_OK;
    }
    return PC_OK;
}

/* The packets of a Trace held in memory (decompressed packets). */
static int packets(pf_reader *r, const uint8_t *data, size_t len, uint64_t base)
{
    pb_reader pr;
    pb_field f;
    int got;
    pb_reader_init(&pr, data, len, base);
    while ((got = pb_next(&pr, &f)) > 0) {
        if (f.number != 1)
            continue;
        if (f.wiretype != L) {
            pb_expect(&pr, &f, L);
            return wire_fail(r, &pr, "Trace");
        }
        int st = on_packet(r, f.data, f.len, pb_offset(&pr, f.data));
        if (st != PC_OK)
            return st;
    }
    return got < 0 ? wire_fail(r, &pr, "Trace") : PC_OK;
}

/* ---- The trace ---- */

int pf_detect(const uint8_t *data, size_t len)
{
    /* Field 1 (packet), length-delimited, whose packet starts with a
     * plausible field tag. */
    if (len < 3 || data[0] != 0x0A)
        return 0;
    const uint8_t *p = data + 1;
    uint64_t n, tag;
    if (pb_varint(&p, data + len, &n) != 0 || n == 0)
        return 0;
    if (pb_varint(&p, data + len, &tag) != 0)
        return 0;
    uint32_t wt = (uint32_t)(tag & 7);
    return (tag >> 3) != 0 && wt != 3 && wt != 4 && wt < 6;
}

/* Streams the packets from the input: each is decoded where it lies in
 * the input window. */
static int stream_strict(pf_reader *r);

/* With keep_going, a packet the reader refuses is skipped, and the trace
 * ends where its framing breaks. */
static int stream(pf_reader *r)
{
    for (;;) {
        int st = stream_strict(r);
        if (st != PC_EINPUT || !r->o->keep_going)
            return st;
        if (r->in_packet) {
            if (!r->skipped++)
                r->first_skip = *r->err;
            r->in_packet = 0;
            src_skip(r->in, r->packet_len);
            continue;
        }
        r->stop = *r->err;
        r->stopped = 1;
        return PC_OK;
    }
}

static int stream_strict(pf_reader *r)
{
    pc_input *in = r->in;
    for (;;) {
        uint64_t off = src_offset(in);
        int got = src_need(in, 11, r->err);
        if (got < 0)
            return -got;
        size_t avail = src_avail(in);
        if (avail == 0)
            return PC_OK;
        const uint8_t *h = src_ptr(in), *p = h, *end = h + (avail < 11 ? avail : 11);
        uint64_t tag, n = 0;
        int e = pb_varint(&p, end, &tag);
        if (e == 0 && (tag & 7) == PB_LEN)
            e = pb_varint(&p, end, &n);
        else if (e == 0 && (tag & 7) == PB_VARINT)
            e = pb_varint(&p, end, &n), n = 0;
        else if (e == 0 && (tag & 7) == PB_I64)
            n = 8;
        else if (e == 0 && (tag & 7) == PB_I32)
            n = 4;
        else if (e == 0)
            return src_fail_at(in, r->err, off, "after packet %zu: field %" PRIu64
                               " has wire type %u, which a trace cannot hold",
                               r->packet_index, tag >> 3, (unsigned)(tag & 7));
        if (e != 0)
            return src_fail_at(in, r->err, off, "after packet %zu: %s (expected a "
                               "packet's tag and length)", r->packet_index, pb_strerror(e));
        size_t hdr = (size_t)(p - h);
        if (n > SIZE_MAX - hdr)
            return src_fail_at(in, r->err, off, "packet %zu claims %" PRIu64 " bytes",
                               r->packet_index + 1, n);
        if ((got = src_need(in, hdr + (size_t)n, r->err)) < 0)
            return -got;
        if (!got)
            return src_fail_at(in, r->err, off, "packet %zu claims %" PRIu64 " bytes but "
                               "only %zu remain (truncated trace?)",
                               r->packet_index + 1, n, src_avail(in) - hdr);
        if ((tag >> 3) == 1 && (tag & 7) == PB_LEN) {
            /* A packet refused is whole: with keep_going, stream() skips
             * it by this length. */
            r->in_packet = 1;
            r->packet_len = hdr + (size_t)n;
            int st = on_packet(r, src_ptr(in) + hdr, (size_t)n, off + hdr);
            if (st != PC_OK)
                return st;
            r->in_packet = 0;
        }
        src_skip(in, hdr + (size_t)n);
    }
}

static void reader_free(pf_reader *r)
{
    for (size_t i = 0; i < r->n_seqs; i++)
        seq_free(&r->seqs[i]);
    free(r->seqs);
    pc_htab_free(&r->seq_idx);
    pf_clocks_free(&r->clocks);
    free(r->units.key);
    free(r->units.mult);
    free(r->zbuf);
    free(r->chain);
    free(r->map.name);
    free(r->map.build);
    free(r->map.res);
    free(r->map.start);
    free(r->map.end);
    free(r->map.start_offset);
    free(r->map.load_bias);
    free(r->map.exact_offset);
    pc_htab_free(&r->map.idx);
    free(r->fr.map);
    free(r->fr.name);
    free(r->fr.kind);
    pc_htab_free(&r->fr.idx);
    pc_htab_free(&r->thread_idx);
    free(r->tname.id);
    free(r->tname.pid);
    free(r->tname.name);
    pc_htab_free(&r->tname.idx);
    pf_names_free(r);
}

/* What the trace holds that gave no samples, for the message of a
 * conversion with nothing to show (meta.empty_hint). */
static void describe_rest(pf_reader *r)
{
    const pf_stats *st = &r->st;
    const struct {
        uint64_t n;
        const char *what;
    } kinds[] = {
        {st->heap_graphs, "Java heap graph packets (android.java_hprof)"},
        {st->stack_samples, "StackSample packets"},
        {st->track_events, "TrackEvent packets (slices)"},
        {st->skipped_samples, "perf samples without a callstack (skipped by traced_perf)"},
        {st->unresolved_callstacks, "samples whose callstack the trace does not define"},
        {st->heap_empty, "heap samples with an empty callstack"},
        {st->streaming_allocs + st->streaming_frees,
         "streaming allocation and free packets (no callstacks)"},
        {st->chrome_no_thread + st->chrome_bad, "Chrome samples without a thread or time"},
        {st->clock_failures + st->heap_no_clock, "samples or heap dumps on an unrelated clock"},
    };
    char buf[768];
    size_t used = (size_t)snprintf(buf, sizeof buf, "the trace (%" PRIu64 " packets) holds ",
                                   st->packets);
    int any = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds && used < sizeof buf; k++)
        if (kinds[k].n) {
            used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%" PRIu64 " %s",
                                     any ? ", " : "", kinds[k].n, kinds[k].what);
            any = 1;
        }
    if (!any && used < sizeof buf)
        snprintf(buf + used, sizeof buf - used, "no profiling data");
    used = strlen(buf);
    if (used < sizeof buf)
        snprintf(buf + used, sizeof buf - used, "; CPU samples with callstacks come from the "
                 "linux.perf data source (or Chrome's sampler), heap profiles from "
                 "android.heapprofd");
    r->p->meta.empty_hint = pc_intern_cstr(r->p, buf);
}

static void report(pf_reader *r)
{
    const pf_stats *st = &r->st;
    const pc_options *o = r->o;
    if (r->skipped)
        pc_log(o, PC_LOG_WARN, "%zu damaged packets skipped (the first: %s)", r->skipped,
               r->first_skip.message);
    if (r->stopped)
        pc_log(o, PC_LOG_WARN, "reading stopped early, %zu packets in: %s", r->packet_index,
               r->stop.message);
    if (st->records_lost)
        pc_log(o, PC_LOG_WARN, "traced_perf lost %" PRIu64 " kernel records (samples "
               "the kernel buffer could not hold)", st->records_lost);
    if (st->lost_packets)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " packet sequence(s) lost packets while "
               "tracing; their samples until the next incremental state are left out",
               st->lost_packets);
    if (st->needs_state)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " packets needed incremental state that was "
               "lost or never sent and were left out", st->needs_state);
    if (st->skipped_samples)
        pc_log(o, PC_LOG_INFO, "%" PRIu64 " perf samples were skipped by the profiler "
               "(no callstack recorded)", st->skipped_samples);
    if (st->producer_stops)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " perf producer event(s) (such as a guardrail "
               "stop) ended sampling early", st->producer_stops);
    if (st->unresolved_callstacks)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " samples name a callstack the trace does not "
               "define; they are kept with an empty stack", st->unresolved_callstacks);
    if (st->no_timestamp)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " perf samples have no timestamp and were "
               "left out", st->no_timestamp);
    if (st->clock_failures)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " samples are on a clock no clock snapshot "
               "relates to the trace clock and were left out", st->clock_failures);
    if (st->unwind_errors)
        pc_log(o, PC_LOG_INFO, "%" PRIu64 " perf samples were only partly unwound "
               "(under an ERROR frame)", st->unwind_errors);
    if (st->chrome_no_thread)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " Chrome samples came before their thread's "
               "descriptor and were left out", st->chrome_no_thread);
    if (st->chrome_bad)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " Chrome samples had missing or negative "
               "timestamps and were left out", st->chrome_bad);
    if (st->heap_gaps)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " gap(s) in heapprofd's packet index: heap "
               "dumps lost packets", st->heap_gaps);
    if (st->heap_unresolved)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " heap samples name a callstack the trace "
               "does not define and were left out", st->heap_unresolved);
    if (st->heap_empty)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " heap samples have an empty callstack and "
               "were left out", st->heap_empty);
    if (st->heap_no_clock)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " heap dumps have a time no clock snapshot "
               "converts and were left out", st->heap_no_clock);
    if (st->heap_flags)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " heap dumps are incomplete (the client "
               "disconnected, overran its buffer or hit a guardrail)", st->heap_flags);
    if (st->streaming_allocs || st->streaming_frees)
        pc_log(o, PC_LOG_INFO, "%" PRIu64 " streaming allocation and %" PRIu64 " free "
               "packets carry no callstacks and were not converted",
               st->streaming_allocs, st->streaming_frees);
    if (st->stack_samples || st->heap_graphs || st->track_events)
        pc_log(o, PC_LOG_INFO, "%" PRIu64 " StackSample, %" PRIu64 " Java heap graph and "
               "%" PRIu64 " TrackEvent packets are not converted", st->stack_samples,
               st->heap_graphs, st->track_events);
    describe_rest(r);
}

int pc_read_perfetto(pc_input *in, pc_profile *p, const pc_options *o, pc_error *err)
{
    pf_reader r;
    memset(&r, 0, sizeof r);
    r.p = p;
    r.o = o;
    r.in = in;
    r.err = err;
    r.clocks.trace_clock = PF_CLOCK_BOOTTIME;
    r.chrome_event = PF_NO_EVENT;
    p->meta.source = pc_intern_cstr(p, "Perfetto");
    int st = stream(&r);
    /* A dump the trace ends inside still has what arrived of it. */
    for (size_t i = 0; st == PC_OK && i < r.n_seqs; i++)
        if (r.seqs[i].in_dump && r.seqs[i].hd.n)
            st = heap_dump_end(&r, &r.seqs[i]);
    if (st == PC_OK)
        st = pf_resolve_names(&r);
    p->sample.read = p->sample.n;
    if (st == PC_OK && p->oom)
        st = pf_nomem(&r);
    if (st == PC_OK)
        report(&r);
    reader_free(&r);
    return st;
}
