/* TrackEvent packets (field 11): Chrome's and the Perfetto SDK's slices
 * on thread tracks.
 *
 * Each slice is a marker of its thread: a begin opens it on its track, the
 * next end on the track closes the innermost one, and an instant event is
 * a slice of no length; one still open when the trace ends lasts to the
 * last TrackEvent.
 *
 * A slice can also record the stack where it began or ended, inline
 * (callstack, 55: an InlineCallstack) or interned (callstack_iid, 56).
 * Each such stack becomes a sample of the event "TrackEvent callstacks"
 * on the slice's thread, at the event's time, the slice's name as its
 * leaf, so the call tree tells which code starts which slices.  A weight
 * (callstack_weight, 57, a double) is not kept: each callstack counts
 * one. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "read/perfetto/reader.h"

enum { TE_SLICE_BEGIN = 1, TE_SLICE_END = 2, TE_INSTANT = 3 };

int pf_track_thread(pf_reader *r, uint64_t uuid, int64_t pid, int64_t tid)
{
    pc_probe pr;
    if (pc_htab_reserve(&r->te.idx, r->te.n + 1) < 0)
        return pf_nomem(r);
    pc_probe_start(&r->te.idx, pc_mix64(uuid), &pr);
    for (uint32_t i; (i = pc_probe_next(&r->te.idx, &pr)) != PC_NONE;)
        if (r->te.uuid[i] == uuid) {
            /* A track's thread is its latest description's. */
            r->te.pid[i] = pid;
            r->te.tid[i] = tid;
            return PC_OK;
        }
    struct pc_col cols[] = {PC_COL(r->te.uuid), PC_COL(r->te.pid), PC_COL(r->te.tid)};
    if (r->te.n >= PC_NONE - 1 || pc_grow_cols(&r->te.cap, r->te.n + 1, cols, 3) < 0)
        return pf_nomem(r);
    uint32_t i = (uint32_t)r->te.n++;
    r->te.uuid[i] = uuid;
    r->te.pid[i] = pid;
    r->te.tid[i] = tid;
    pc_htab_insert(&r->te.idx, &pr, i);
    return PC_OK;
}

/* The index of track uuid's thread, or PC_NONE. */
static uint32_t track_of(const pf_reader *r, uint64_t uuid)
{
    pc_probe pr;
    if (!r->te.n)
        return PC_NONE;
    pc_probe_start(&r->te.idx, pc_mix64(uuid), &pr);
    for (uint32_t i; (i = pc_probe_next(&r->te.idx, &pr)) != PC_NONE;)
        if (r->te.uuid[i] == uuid)
            return i;
    return PC_NONE;
}

void pf_track_event_free(pf_reader *r)
{
    free(r->te.uuid);
    free(r->te.pid);
    free(r->te.tid);
    pc_htab_free(&r->te.idx);
    free(r->te.open.start);
    free(r->te.open.thread);
    free(r->te.open.name);
    free(r->te.open.cat);
    free(r->te.open.prev);
    free(r->te.open.live);
    free(r->te.tracks.key);
    free(r->te.tracks.seq);
    free(r->te.tracks.top);
    free(r->te.tracks.dropped);
    pc_htab_free(&r->te.tracks.idx);
}

int pf_track_event_end(pf_reader *r)
{
    for (size_t i = 0; i < r->te.open.n; i++) {
        if (!r->te.open.live[i])
            continue;
        pc_add_marker(r->p, r->te.open.thread[i], PC_MARK_SLICE, r->te.open.name[i],
                      r->te.open.start[i], r->te.last_time, r->te.open.cat[i], 0, 0);
        r->st.te_unended++;
    }
    r->te.open.n = r->te.open.n_live = 0;
    return r->p->oom ? pf_nomem(r) : PC_OK;
}

/* The slot of track (key, seq), added when new and add is set; PC_NONE
 * when absent, or out of memory (latched). */
static uint32_t slice_track(pf_reader *r, uint64_t key, uint8_t seq, int add)
{
    pc_probe pr;
    if (pc_htab_reserve(&r->te.tracks.idx, r->te.tracks.n + 1) < 0) {
        r->p->oom = 1;
        return PC_NONE;
    }
    pc_probe_start(&r->te.tracks.idx, pc_mix64(key) ^ seq, &pr);
    for (uint32_t i; (i = pc_probe_next(&r->te.tracks.idx, &pr)) != PC_NONE;)
        if (r->te.tracks.key[i] == key && r->te.tracks.seq[i] == seq)
            return i;
    if (!add)
        return PC_NONE;
    struct pc_col cols[] = {PC_COL(r->te.tracks.key), PC_COL(r->te.tracks.seq),
                            PC_COL(r->te.tracks.top), PC_COL(r->te.tracks.dropped)};
    if (r->te.tracks.n >= PC_NONE - 1 ||
        pc_grow_cols(&r->te.tracks.cap, r->te.tracks.n + 1, cols, 4) < 0) {
        r->p->oom = 1;
        return PC_NONE;
    }
    uint32_t i = (uint32_t)r->te.tracks.n++;
    r->te.tracks.key[i] = key;
    r->te.tracks.seq[i] = seq;
    r->te.tracks.top[i] = PC_NONE;
    r->te.tracks.dropped[i] = 0;
    pc_htab_insert(&r->te.tracks.idx, &pr, i);
    return i;
}

/* Slices nest a few deep on a few tracks: more open at once is damage. */
#define MAX_OPEN_SLICES (1u << 16)

/* The slice's marker: a begin opens it on its track, an end closes the
 * innermost one open there, an instant is one of no length. */
static int slice_marker(pf_reader *r, int type, uint64_t key, uint8_t seq, uint32_t thread,
                        uint32_t name, uint32_t cat, uint64_t t)
{
    pc_profile *p = r->p;
    if (t > r->te.last_time)
        r->te.last_time = t;
    if (type == TE_INSTANT) {
        r->st.te_slices++;
        pc_add_marker(p, thread, PC_MARK_SLICE, name, t, t, cat, 0, 0);
        return p->oom ? pf_nomem(r) : PC_OK;
    }
    uint32_t k = slice_track(r, key, seq, type == TE_SLICE_BEGIN);
    if (p->oom)
        return pf_nomem(r);
    if (type == TE_SLICE_BEGIN) {
        if (r->te.open.n_live >= MAX_OPEN_SLICES) {
            r->te.tracks.dropped[k]++;
            r->st.te_dropped++;
            return PC_OK;
        }
        /* The pool starts empty, with no free entry. */
        if (!r->te.open.n)
            r->te.open.free = PC_NONE;
        uint32_t i = r->te.open.free;
        if (i != PC_NONE) {
            r->te.open.free = r->te.open.prev[i];
        } else {
            struct pc_col cols[] = {PC_COL(r->te.open.start), PC_COL(r->te.open.thread),
                                    PC_COL(r->te.open.name), PC_COL(r->te.open.cat),
                                    PC_COL(r->te.open.prev), PC_COL(r->te.open.live)};
            if (pc_grow_cols(&r->te.open.cap, r->te.open.n + 1, cols, 6) < 0)
                return pf_nomem(r);
            i = (uint32_t)r->te.open.n++;
        }
        r->te.open.start[i] = t;
        r->te.open.thread[i] = thread;
        r->te.open.name[i] = name;
        r->te.open.cat[i] = cat;
        r->te.open.prev[i] = r->te.tracks.top[k];
        r->te.open.live[i] = 1;
        r->te.open.n_live++;
        r->te.tracks.top[k] = i;
        return PC_OK;
    }
    if (type != TE_SLICE_END)
        return PC_OK;
    if (k != PC_NONE && r->te.tracks.dropped[k]) {
        r->te.tracks.dropped[k]--;
        return PC_OK;
    }
    uint32_t i = k == PC_NONE ? PC_NONE : r->te.tracks.top[k];
    if (i == PC_NONE) {
        r->st.te_unmatched_ends++;
        return PC_OK;
    }
    r->st.te_slices++;
    uint64_t start = r->te.open.start[i];
    pc_add_marker(p, r->te.open.thread[i], PC_MARK_SLICE, r->te.open.name[i], start,
                  t < start ? start : t, r->te.open.cat[i], 0, 0);
    r->te.tracks.top[k] = r->te.open.prev[i];
    r->te.open.live[i] = 0;
    r->te.open.n_live--;
    r->te.open.prev[i] = r->te.open.free;
    r->te.open.free = i;
    return p->oom ? pf_nomem(r) : PC_OK;
}

int pf_on_track_event(pf_reader *r, pb_reader *pr, pf_seq *s, const pf_packet *pk)
{
    pb_field f, cs;
    int got, type = 0, has_inline = 0, has_uuid = 0;
    uint64_t uuid = 0, name_iid = 0, cs_iid = 0;
    const uint8_t *name = NULL, *cat = NULL;
    size_t name_len = 0, cat_len = 0;
    memset(&cs, 0, sizeof cs);
    r->st.track_events++;
    while ((got = pb_next(pr, &f)) > 0) {
        /* The fields read must have their wire types; others pass. */
        int want = f.number == 22 || f.number == 23 || f.number == 55 ? L
                   : f.number == 9 || f.number == 10 || f.number == 11 || f.number == 56 ? V
                                                                                          : -1;
        if (want >= 0 && (int)f.wiretype != want) {
            pb_expect(pr, &f, (uint8_t)want);
            return pf_wire_fail(r, pr, "TrackEvent");
        }
        switch (f.number) {
        case 9: type = (int)f.value; break;
        case 10: name_iid = f.value; break;
        case 11: uuid = f.value; has_uuid = 1; break;
        case 22:
            if (!cat) {
                cat = f.data;
                cat_len = f.len;
            }
            break;
        case 23: name = f.data; name_len = f.len; break;
        case 55: cs = f; has_inline = 1; cs_iid = 0; break;
        case 56: cs_iid = f.value; has_inline = 0; break;
        }
    }
    if (got < 0)
        return pf_wire_fail(r, pr, "TrackEvent");
    int slice = type == TE_SLICE_BEGIN || type == TE_SLICE_END || type == TE_INSTANT;
    if (!slice && !has_inline && !cs_iid) {
        r->st.te_other++;
        return PC_OK;
    }
    /* The thread: the track's, else the sequence's own. */
    int64_t pid, tid;
    uint32_t k = has_uuid ? track_of(r, uuid) : PC_NONE;
    if (k != PC_NONE) {
        pid = r->te.pid[k];
        tid = r->te.tid[k];
    } else if (!has_uuid && s->has_thread) {
        pid = s->pid;
        tid = s->tid;
    } else {
        r->st.te_no_thread++;
        return PC_OK;
    }
    uint64_t t;
    if (pf_sample_time(r, s, pk, &t) < 0)
        return PC_OK;
    pc_profile *p = r->p;
    uint32_t thread = pf_thread_of(r, pid, tid);
    if (thread == PC_NONE)
        return pf_nomem(r);
    uint32_t sid = PC_NONE;
    if (name_len)
        sid = pc_intern(p, name, name_len);
    else if (name_iid)
        sid = pf_interned_find(&s->it, PF_EVENT_NAME, name_iid);
    if (sid == PC_NONE)
        sid = pc_intern_cstr(p, "[unnamed slice]");
    uint32_t cid = cat_len ? pc_intern(p, cat, cat_len) : PC_NONE;
    if (sid == PC_NONE || p->oom)
        return pf_nomem(r);
    /* An end names no slice: the one it closes has the name. */
    if (slice && slice_marker(r, type, has_uuid ? uuid : s->id, (uint8_t)!has_uuid, thread,
                              sid, cid, t) != PC_OK)
        return r->err->status;
    if (!has_inline && !cs_iid)
        return PC_OK;
    uint32_t stack = PC_NONE;
    if (has_inline) {
        if (pf_inline_stack(r, pr, &cs, &stack) != PC_OK)
            return r->err->status;
    } else {
        int res = pf_stack_of(r, s, cs_iid, PC_NONE, &stack);
        if (res < 0) {
            if (p->oom)
                return pf_nomem(r);
            r->st.unresolved_callstacks++;
            return PC_OK;
        }
        r->st.partial_stacks += res > 0;
    }
    /* The slice's name as the leaf; an end's is marked so. */
    if (type == TE_SLICE_END) {
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s (end)", (int)(pc_str_len(&p->str, sid) > 400
                                                         ? 400 : pc_str_len(&p->str, sid)),
                 pc_str(&p->str, sid));
        sid = pc_intern_cstr(p, buf);
    }
    uint32_t leaf = sid == PC_NONE ? PC_NONE : pf_inline_frame(r, sid, PC_NONE, 0);
    if (leaf == PC_NONE)
        return pf_nomem(r);
    stack = pc_stack(p, stack, leaf);
    if (!r->te.event1) {
        uint16_t ev = pf_event_named(r, "TrackEvent callstacks", PC_UNIT_SAMPLES);
        if (ev == PF_NO_EVENT)
            return pf_nomem(r);
        r->te.event1 = (uint16_t)(ev + 1);
    }
    if (stack == PC_NONE)
        return pf_nomem(r);
    pc_add_sample(p, thread, t, stack, 1, (uint16_t)(r->te.event1 - 1), PC_NO_CPU);
    r->st.te_callstacks++;
    return p->oom ? pf_nomem(r) : PC_OK;
}
