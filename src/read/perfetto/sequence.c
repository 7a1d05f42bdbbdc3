/* Packet sequences and their interned data (InternedData, and the
 * tables of heapprofd's own packets), and the resolving of interned ids
 * to the profile's mappings, frames and stacks.  Every family with
 * callstacks goes through here, and the tables live and die with their
 * sequence's incremental state, so both are kept together. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "read/perfetto/reader.h"

/* ---- Sequences ---- */

pf_seq *pf_seq_of(pf_reader *r, uint32_t id)
{
    if (r->last_seq && r->seqs[r->last_seq - 1].id == id)
        return &r->seqs[r->last_seq - 1];
    pc_probe pr;
    if (pc_htab_reserve(&r->seq_idx, r->n_seqs + 1) < 0)
        return NULL;
    pc_probe_start(&r->seq_idx, pc_mix64(id), &pr);
    for (uint32_t i; (i = pc_probe_next(&r->seq_idx, &pr)) != PC_NONE;)
        if (r->seqs[i].id == id) {
            r->last_seq = (size_t)i + 1;
            return &r->seqs[i];
        }
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
    r->last_seq = r->n_seqs;
    return s;
}

void pf_seq_free(pf_seq *s)
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
void pf_seq_clear(pf_seq *s)
{
    pf_interned_clear(&s->it);
    pf_interned_clear(&s->local);
    s->has_clock = 0;
    s->has_perf_defaults = 0;
    s->nominal = 0;
    s->event = s->uncounted_event = PF_NO_EVENT;
    s->event_name = PC_NONE;
    s->n_followers = 0;
    memset(&s->ssd, 0, sizeof s->ssd);
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

/* ---- Interned data ---- */

/* Build ids are raw bytes, shown as lowercase hex, except Chrome's
 * 33-character breakpad module ids, kept as they are. */
uint32_t pf_build_id_string(pf_reader *r, const uint8_t *b, size_t n)
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

int pf_on_string(pf_reader *r, pb_reader *pr, pf_interned *t, int kind)
{
    static const uint8_t ex[] = {ANY, V, L};
    pb_field f;
    int got;
    uint64_t iid = 0;
    const uint8_t *s = (const uint8_t *)"";
    size_t n = 0;
    while ((got = NEXT(r, pr, &f, ex, "InternedString")) > 0) {
        if (f.number == 1 && pf_scalar(r, pr, &f, "InternedString") != PC_OK)
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
    uint32_t sid = kind == PF_BUILD_ID ? pf_build_id_string(r, s, n) : pc_intern(r->p, s, n);
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

/* A Frame of varint fields 1 to 7 alone, read in one pass (each field a
 * call or three in the general reader, and a new callstack brings new
 * frames): 1 with *rec and *iid, 0 for another shape or an unusual
 * encoding (a function name given as a string, a ten-byte varint, an
 * unknown field), which the general reader then reads. */
static int quick_frame(const uint8_t *p, const uint8_t *end, pf_frame_rec *rec, uint64_t *iid)
{
    memset(rec, 0, sizeof *rec);
    *iid = 0;
    while (p < end) {
        uint8_t tag = *p++;
        uint64_t v;
        if ((tag & 7) != PB_VARINT || tag < 0x08 || tag > 0x38 || !pb_varint9(&p, end, &v))
            return 0;
        switch (tag >> 3) {
        case 1: *iid = v; break;
        case 2: rec->name_iid = v; rec->has_name = 1; break;
        case 3: rec->mapping_iid = v; break;
        case 4: rec->rel_pc = v; break;
        case 7: rec->kind = v < 7 ? (uint8_t)v : 0; break;
        }
    }
    return 1;
}

int pf_on_frame(pf_reader *r, pb_reader *pr, pf_interned *t)
{
    static const uint8_t ex[] = {ANY, V, V, V, V, V, V, V, L};
    pb_field f;
    int got;
    pf_frame_rec quick;
    uint64_t quick_iid;
    if (quick_frame(pr->p, pr->end, &quick, &quick_iid)) {
        uint32_t k = pf_interned_new_frame(t);
        if (k == PC_NONE)
            return pf_nomem(r);
        t->frames[k] = quick;
        pr->p = pr->end;
        return put(t, PF_FRAME, quick_iid, k) < 0 ? pf_nomem(r) : PC_OK;
    }
    uint32_t i = pf_interned_new_frame(t);
    if (i == PC_NONE)
        return pf_nomem(r);
    pf_frame_rec rec;
    memset(&rec, 0, sizeof rec);
    uint64_t iid = 0;
    while ((got = NEXT(r, pr, &f, ex, "Frame")) > 0) {
        if (f.number >= 1 && f.number <= 7 && pf_scalar(r, pr, &f, "Frame") != PC_OK)
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

int pf_on_mapping(pf_reader *r, pb_reader *pr, pf_interned *t)
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
            if (pf_each_varint(r, pr, &f, push_pool, t, "Mapping.path_string_ids") != PC_OK)
                return r->err->status;
            continue;
        }
        if (f.number >= 1 && f.number <= 8 && pf_scalar(r, pr, &f, "Mapping") != PC_OK)
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

/* A Callstack of the common shape, its iid and frame ids as varints or
 * packed and nothing else, read in one pass into the pool: a new
 * callstack of 30 frames is 30 fields, each a call or three in the
 * general reader.  1 with *iid, 0 (the pool as it was) for another shape
 * or an unusual encoding, which the general reader then reads; -1 out of
 * memory. */
static int quick_callstack(const uint8_t *p, const uint8_t *end, pf_interned *t, uint64_t *iid)
{
    size_t pool0 = t->n_pool;
    while (p < end) {
        uint64_t v;
        uint8_t tag = *p++;
        if (tag == 0x12) {
            /* frame_ids, packed */
            uint64_t len;
            if (!pb_varint9(&p, end, &len) || len > (uint64_t)(end - p))
                goto general;
            const uint8_t *stop = p + len;
            while (p < stop) {
                if (!pb_varint9(&p, stop, &v))
                    goto general;
                if (pf_interned_pool_add(t, v) < 0)
                    return -1;
            }
            continue;
        }
        if ((tag != 0x08 && tag != 0x10) || !pb_varint9(&p, end, &v))
            goto general;
        if (tag == 0x08)
            *iid = v;
        else if (pf_interned_pool_add(t, v) < 0)
            return -1;
    }
    return 1;
general:
    t->n_pool = pool0;
    *iid = 0;
    return 0;
}

int pf_on_callstack(pf_reader *r, pb_reader *pr, pf_interned *t)
{
    static const uint8_t ex[] = {ANY, V, V};
    pb_field f;
    int got = 0;
    pf_interned_pool_compact(t);
    uint32_t i = pf_interned_new_callstack(t);
    if (i == PC_NONE)
        return pf_nomem(r);
    uint64_t iid = 0;
    int quick = quick_callstack(pr->p, pr->end, t, &iid);
    if (quick < 0)
        return pf_nomem(r);
    while (!quick && (got = NEXT(r, pr, &f, ex, "Callstack")) > 0) {
        if (f.number == 2) {
            if (pf_each_varint(r, pr, &f, push_pool, t, "Callstack.frame_ids") != PC_OK)
                return r->err->status;
        } else if (f.number == 1) {
            if (pf_scalar(r, pr, &f, "Callstack") != PC_OK)
                return r->err->status;
            iid = f.value;
        }
    }
    if (!quick && got < 0)
        return r->err->status;
    pf_callstack_rec *c = &t->callstacks[i];
    c->n_frames = (uint32_t)(t->n_pool - c->frame0);
    return put(t, PF_CALLSTACK, iid, i) < 0 ? pf_nomem(r) : PC_OK;
}

int pf_on_interned(pf_reader *r, pb_reader *pr, pf_seq *s)
{
    pb_field f;
    pb_reader sub;
    int got, st = PC_OK;
    while (st == PC_OK && (got = pb_next(pr, &f)) > 0) {
        int kind;
        switch (f.number) {
        case 2: kind = PF_EVENT_NAME; break;
        case 5: kind = PF_FUNCTION_NAME; break;
        case 6: kind = PF_FRAME; break;
        case 7: kind = PF_CALLSTACK; break;
        case 16: kind = PF_BUILD_ID; break;
        case 17: kind = PF_MAPPING_PATH; break;
        case 18: kind = PF_SOURCE_PATH; break;
        case 19: kind = PF_MAPPING; break;
        case 48: case 49: case 50: kind = PF_SS_TASK; break;
        default: continue;
        }
        if (f.wiretype != L) {
            pb_expect(pr, &f, L);
            return pf_wire_fail(r, pr, "InternedData");
        }
        pb_reader_sub(pr, &f, &sub);
        if (kind == PF_FRAME)
            st = pf_on_frame(r, &sub, &s->it);
        else if (kind == PF_CALLSTACK)
            st = pf_on_callstack(r, &sub, &s->it);
        else if (kind == PF_MAPPING)
            st = pf_on_mapping(r, &sub, &s->it);
        else if (kind == PF_SS_TASK)
            st = pf_on_stack_sample_interned(r, &sub, &s->it, f.number);
        else
            st = pf_on_string(r, &sub, &s->it, kind);
    }
    if (st != PC_OK)
        return st;
    return got < 0 ? pf_wire_fail(r, pr, "InternedData") : PC_OK;
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
            return pf_build_id_string(r, buf, n);
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

/* The reader's frame for (map, name, rel_pc, kind), added when new. */
static uint32_t find_or_add_frame(pf_reader *r, uint32_t map, uint32_t name, uint64_t rel_pc,
                                  uint8_t kind)
{
    pc_profile *p = r->p;
    uint64_t h = pc_mix64((uint64_t)map << 32 | name);
    h = pc_mix64(h ^ rel_pc ^ (uint64_t)kind << 56);
    pc_probe pr;
    if (pc_htab_reserve(&r->fr.idx, r->fr.n + 1) < 0) {
        p->oom = 1;
        return PC_NONE;
    }
    pc_probe_start(&r->fr.idx, h, &pr);
    for (uint32_t id; (id = pc_probe_next(&r->fr.idx, &pr)) != PC_NONE;)
        if (r->fr.map[id] == map && r->fr.name[id] == name &&
            r->fr.kind[id] == kind && p->frame.addr[id] == rel_pc)
            return id;
    struct pc_col cols[] = {PC_COL(r->fr.map), PC_COL(r->fr.name), PC_COL(r->fr.kind)};
    if (pc_grow_cols(&r->fr.cap, r->fr.n + 1, cols, 3) < 0) {
        p->oom = 1;
        return PC_NONE;
    }
    /* Named and categorised at the end, in pf_resolve_names. */
    uint32_t id = pc_add_frame(p, PC_NONE, rel_pc, PC_CAT_USER, PC_EXEC_NATIVE);
    if (id == PC_NONE)
        return PC_NONE;
    r->fr.n++;
    r->fr.map[id] = map;
    r->fr.name[id] = name;
    r->fr.kind[id] = kind;
    pc_htab_insert(&r->fr.idx, &pr, id);
    return id;
}

/* Frame.Kind of the frames the reader makes up (names.c's KIND_SYNTHETIC). */
#define SYNTHETIC 0xff

/* What a frame refers to that the trace does not define (r->undef). */
enum { UNDEF_NONE, UNDEF_FRAME, UNDEF_MAPPING, UNDEF_NAME };

/* The profile frame for an interned frame; frames are shared across
 * sequences by (mapping, rel_pc, name, kind).  The name is part of the
 * key because JIT caches reuse addresses for other methods.  A mapping
 * or function name the trace does not define leaves the frame without
 * it (named by its address or function name), *why and *ref telling; an
 * undefined frame gives PC_NONE with *why UNDEF_FRAME.  Only complete
 * frames are remembered, so a definition arriving later is used. */
static uint32_t frame_of(pf_reader *r, pf_seq *s, uint64_t iid, int *why, uint64_t *ref)
{
    pf_interned *t = &s->local;
    pf_entry *e = pf_interned_entry(t, PF_FRAME, iid);
    if (!e) {
        t = &s->it;
        e = pf_interned_entry(t, PF_FRAME, iid);
    }
    if (!e) {
        *why = UNDEF_FRAME;
        *ref = iid;
        return PC_NONE;
    }
    if (e->res != PF_UNRESOLVED)
        return e->res;
    pf_frame_rec *fr = &t->frames[e->val];
    uint32_t map = PC_NONE, name = PC_NONE;
    int missing = UNDEF_NONE;
    /* mapping_id 0 marks a frame known by name only. */
    if (fr->mapping_iid && (map = mapping_of(r, s, fr->mapping_iid)) == PC_NONE) {
        if (r->p->oom)
            return PC_NONE;
        missing = UNDEF_MAPPING;
        *ref = fr->mapping_iid;
    }
    if (fr->has_name && fr->name_iid) {
        name = lookup_string(r, s, PF_FUNCTION_NAME, fr->name_iid);
        if (name == PC_NONE && !missing) {
            missing = UNDEF_NAME;
            *ref = fr->name_iid;
        }
        if (name != PC_NONE && pc_str_len(&r->p->str, name) == 0)
            name = PC_NONE;
    }
    uint32_t id = find_or_add_frame(r, map, name, fr->rel_pc, fr->kind);
    /* Nothing above adds to t: e is where it was. */
    if (missing)
        *why = missing;
    else if (id != PC_NONE)
        e->res = id;
    return id;
}

/* The frame that stands in a stack for frame iid, which the trace does
 * not define. */
static uint32_t undefined_frame(pf_reader *r, uint64_t iid)
{
    char name[48];
    snprintf(name, sizeof name, "[undefined frame iid %" PRIu64 "]", iid);
    uint32_t sid = pc_intern_cstr(r->p, name);
    if (sid == PC_NONE)
        return PC_NONE;
    return find_or_add_frame(r, PC_NONE, sid, 0, SYNTHETIC);
}

/* A synthetic frame named name (an unwinding error). */
uint32_t pf_named_frame(pf_reader *r, const char *name)
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

pf_entry *pf_callstack_find(pf_seq *s, uint64_t iid, pf_interned **t)
{
    *t = &s->local;
    pf_entry *e = pf_interned_entry(*t, PF_CALLSTACK, iid);
    if (!e) {
        *t = &s->it;
        e = pf_interned_entry(*t, PF_CALLSTACK, iid);
    }
    return e;
}

/* The profile frame of frame iid fiid in callstack iid, an undefined one
 * standing in for a frame the trace does not define (*partial set, and
 * the first such reference noted); PC_NONE out of memory. */
static uint32_t callstack_frame(pf_reader *r, pf_seq *s, uint64_t iid, uint64_t fiid,
                                int *partial)
{
    uint64_t ref = 0;
    int why = UNDEF_NONE;
    uint32_t f = frame_of(r, s, fiid, &why, &ref);
    if (why == UNDEF_FRAME)
        f = undefined_frame(r, fiid);
    if (f == PC_NONE)
        return PC_NONE;
    if (why != UNDEF_NONE) {
        *partial = 1;
        if (!r->undef.what) {
            r->undef.what = why;
            r->undef.seq = s->id;
            r->undef.callstack = iid;
            r->undef.frame = fiid;
            r->undef.ref = ref;
        }
    }
    return f;
}

int pf_frame_is_error(const pf_reader *r, uint32_t f)
{
    uint32_t name = r->fr.name[f];
    return name != PC_NONE && strncmp(pc_str(&r->p->str, name), "ERROR ", 6) == 0;
}

int pf_callstack_error_root(pf_reader *r, pf_seq *s, pf_interned *t, uint32_t i, uint64_t iid)
{
    pf_callstack_rec *c = &t->callstacks[i];
    if (!c->n_frames)
        return 0;
    /* The frame pf_callstack_frames resolves first, without counting a
     * cut: the rest of the callstack is resolved after, or by
     * pf_stack_of, with the same effects. */
    size_t max = r->p->depth.max;
    size_t cut = max && c->n_frames > max ? c->n_frames - max : 0;
    int partial = 0;
    uint32_t f = callstack_frame(r, s, iid, t->pool[c->frame0 + cut], &partial);
    return f == PC_NONE ? -1 : pf_frame_is_error(r, f);
}

int pf_callstack_frames(pf_reader *r, pf_seq *s, pf_interned *t, uint32_t i, uint64_t iid,
                        size_t *n, int *partial)
{
    pf_callstack_rec *c = &t->callstacks[i];
    uint32_t cut = (uint32_t)pc_depth_cut(r->p, c->n_frames);
    *partial = 0;
    if (pc_grow(&r->chain, &r->chain_cap, c->n_frames - cut + 1, sizeof *r->chain, 64) < 0) {
        r->p->oom = 1;
        return -1;
    }
    for (uint32_t k = cut; k < c->n_frames; k++) {
        /* Most frames of a new callstack were resolved for an earlier one:
         * what frame_of finds first, without the call. */
        uint64_t fiid = t->pool[c->frame0 + k];
        pf_entry *e = pf_interned_entry(&s->local, PF_FRAME, fiid);
        if (!e)
            e = pf_interned_entry(&s->it, PF_FRAME, fiid);
        uint32_t f = e && e->res != PF_UNRESOLVED
                         ? e->res
                         : callstack_frame(r, s, iid, fiid, partial);
        if (f == PC_NONE)
            return -1;
        r->chain[k - cut] = f;
    }
    *n = c->n_frames - cut;
    return 0;
}

/* Resolves a callstack to a profile stack in *out (PC_NONE for an empty
 * one), under root when that is not PC_NONE.  Returns 0; 1 when a frame,
 * or a frame's mapping or function name, is not defined: the stack keeps
 * every other frame, an undefined one shows as "[undefined frame iid N]"
 * in its place (dropping it would show its caller calling its callee),
 * and r->undef notes the first such reference; -1 when the callstack is
 * not defined, or out of memory. */
int pf_stack_of(pf_reader *r, pf_seq *s, uint64_t iid, uint32_t root, uint32_t *out)
{
    /* The stack tree is this thread's again (pipe.c). */
    if (pf_pipe_drain(r) < 0)
        return -1;
    pf_interned *t;
    pf_entry *e = pf_callstack_find(s, iid, &t);
    if (!e)
        return -1;
    uint32_t done = e->res, i = e->val;
    if (done != PF_UNRESOLVED && pf_pipe_is_ticket(r, done))
        e->res = done = pf_pipe_ticket_stack(r, done);
    if (done != PF_UNRESOLVED && root == PC_NONE) {
        *out = done;
        return 0;
    }
    uint32_t stack = root == PC_NONE ? PC_NONE : pc_stack(r->p, PC_NONE, root);
    if (done != PF_UNRESOLVED) {
        /* The frame iids are gone: the resolved stack has the frames. */
        size_t n = 0;
        for (uint32_t st = done; st != PC_NONE; st = r->p->stack.prefix[st]) {
            if (pc_grow(&r->chain, &r->chain_cap, n + 1, sizeof *r->chain, 64) < 0) {
                r->p->oom = 1;
                return -1;
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
    /* The frames first, then the stack-tree steps: a frame's lookups do
     * not depend on each other, so their cache misses overlap, where
     * between two steps each would wait for the one before. */
    size_t n;
    int partial;
    if (pf_callstack_frames(r, s, t, i, iid, &n, &partial) < 0)
        return -1;
    for (size_t k = 0; k < n; k++)
        stack = pc_stack(r->p, stack, r->chain[k]);
    /* While tickets are about, a stack id must not read as one. */
    if (!r->p->oom && pf_pipe_is_ticket(r, stack))
        r->p->oom = 1;
    if (r->p->oom)
        return -1;
    /* A stack with something missing is resolved again each time, so that
     * a definition arriving later is used. */
    if (root == PC_NONE && !partial)
        pf_interned_callstack_done(t, e, stack);
    *out = stack;
    return partial;
}

int pf_undef_text(const pf_reader *r, char *buf, size_t cap)
{
    static const char *const what[] = {"", "", "mapping", "function name"};
    if (r->undef.what == UNDEF_FRAME)
        return snprintf(buf, cap, "frame iid %" PRIu64 " of callstack iid %" PRIu64
                        " on sequence %" PRIu32 " is not defined", r->undef.frame,
                        r->undef.callstack, r->undef.seq);
    if (r->undef.what)
        return snprintf(buf, cap, "frame iid %" PRIu64 " of callstack iid %" PRIu64
                        " on sequence %" PRIu32 " names %s iid %" PRIu64 ", which is not "
                        "defined", r->undef.frame, r->undef.callstack, r->undef.seq,
                        what[r->undef.what], r->undef.ref);
    return snprintf(buf, cap, "%s", "");
}

/* The first (root) frame's name of a stack, or PC_NONE. */
uint32_t pf_root_name(pf_reader *r, pf_seq *s, uint32_t stack)
{
    (void)s;
    if (stack == PC_NONE)
        return PC_NONE;
    while (r->p->stack.prefix[stack] != PC_NONE)
        stack = r->p->stack.prefix[stack];
    return r->fr.name[r->p->stack.frame[stack]];
}
