/* Processes and threads: the profile's thread for a (pid, tid), and the
 * names from ProcessTree, ProcessDescriptor, ThreadDescriptor and
 * TrackDescriptor packets.  Names come in packets of their own, before
 * or after the samples: process names go to the profile at once, thread
 * names are kept by id and given out in names.c at the end. */
#include <string.h>

#include "read/perfetto/reader.h"

/* ---- Threads ---- */

uint32_t pf_thread_of(pf_reader *r, int64_t pid, int64_t tid)
{
    return pc_thread_find(&r->threads, r->p, pid, tid);
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

int pf_on_process_tree(pf_reader *r, pb_reader *pr)
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
                    if (pf_scalar(r, &sub, &g, "ProcessTree.Process") != PC_OK)
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
                    if (pf_scalar(r, &sub, &g, "ProcessTree.Thread") != PC_OK)
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

int pf_on_process_descriptor(pf_reader *r, pb_reader *pr)
{
    static const uint8_t ex[] = {ANY, V, L, ANY, ANY, V, L};
    pb_field f;
    int got;
    int64_t pid = 0;
    const uint8_t *c0 = NULL, *name = NULL;
    size_t c0n = 0, nn = 0, nargs = 0;
    while ((got = NEXT(r, pr, &f, ex, "ProcessDescriptor")) > 0) {
        if (f.number == 1) {
            if (pf_scalar(r, pr, &f, "ProcessDescriptor") != PC_OK)
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

int pf_on_thread_descriptor(pf_reader *r, pb_reader *pr, pf_seq *s)
{
    static const uint8_t ex[] = {ANY, V, V, ANY, ANY, L, V};
    pb_field f;
    int got;
    int64_t pid = 0, tid = 0, ref = 0;
    const uint8_t *name = NULL;
    size_t nn = 0;
    while ((got = NEXT(r, pr, &f, ex, "ThreadDescriptor")) > 0) {
        if (f.number == 1 || f.number == 2 || f.number == 6)
            if (pf_scalar(r, pr, &f, "ThreadDescriptor") != PC_OK)
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

int pf_on_track_descriptor(pf_reader *r, pb_reader *pr, pf_seq *s)
{
    static const uint8_t ex[] = {ANY, V, ANY, L, L};
    pb_field f;
    pb_reader sub;
    int got, thread = 0;
    uint64_t uuid = 0;
    int has_uuid = 0;
    int64_t pid = 0, tid = 0;
    while ((got = NEXT(r, pr, &f, ex, "TrackDescriptor")) > 0) {
        if (f.number == 1) {
            if (pf_scalar(r, pr, &f, "TrackDescriptor") != PC_OK)
                return r->err->status;
            uuid = f.value;
            has_uuid = 1;
            continue;
        }
        if (f.number != 3 && f.number != 4)
            continue;
        pb_reader_sub(pr, &f, &sub);
        if (f.number == 3 && pf_on_process_descriptor(r, &sub) != PC_OK)
            return r->err->status;
        if (f.number == 4) {
            if (!s->valid) {
                /* Only the names; the sequence's timing needs valid state. */
                pf_seq tmp = *s;
                if (pf_on_thread_descriptor(r, &sub, &tmp) != PC_OK)
                    return r->err->status;
                pid = tmp.pid;
                tid = tmp.tid;
                thread = 1;
                continue;
            }
            if (pf_on_thread_descriptor(r, &sub, s) != PC_OK)
                return r->err->status;
            pid = s->pid;
            tid = s->tid;
            thread = 1;
        }
    }
    if (got < 0)
        return r->err->status;
    /* TrackEvents name their track by uuid. */
    if (has_uuid && thread)
        return pf_track_thread(r, uuid, pid, tid);
    return PC_OK;
}
