#include "read/perfetto/intern.h"

#include <stdlib.h>
#include <string.h>

#include "model/model.h"

static uint64_t key_hash(int kind, uint64_t iid)
{
    return pc_mix64(iid * 8 + (uint64_t)kind);
}

/* Dense arrays reach this far: a few times the entries, plus a margin. */
static uint64_t dense_limit(const pf_interned *t)
{
    return 4 * (uint64_t)(t->n_dense + t->e.n) + 65536;
}

pf_entry *pf_interned_find_hashed(pf_interned *t, int kind, uint64_t iid)
{
    if (!t->e.n)
        return NULL;
    pc_probe pr;
    pc_probe_start(&t->idx, key_hash(kind, iid), &pr);
    for (uint32_t id; (id = pc_probe_next(&t->idx, &pr)) != PC_NONE;)
        if (t->e.iid[id] == iid && t->e.kind[id] == kind)
            return &t->e.ent[id];
    return NULL;
}

int pf_interned_put(pf_interned *t, int kind, uint64_t iid, uint32_t val)
{
    pf_entry ent = {val, PF_UNRESOLVED};
    if (iid < t->dense_cap[kind] && t->dense[kind][iid].val != PC_NONE)
        return 0;
    if (iid < dense_limit(t)) {
        if (pf_interned_find_hashed(t, kind, iid))
            return 0;
        if (iid >= t->dense_cap[kind]) {
            size_t cap = t->dense_cap[kind] ? t->dense_cap[kind] : 1024;
            while (cap <= iid)
                cap *= 2;
            pf_entry *d = realloc(t->dense[kind], cap * sizeof *d);
            if (!d)
                return -1;
            for (size_t i = t->dense_cap[kind]; i < cap; i++)
                d[i].val = PC_NONE;
            t->dense[kind] = d;
            t->dense_cap[kind] = cap;
        }
        t->dense[kind][iid] = ent;
        if (iid >= t->dense_top[kind])
            t->dense_top[kind] = (size_t)iid + 1;
        t->n_dense++;
        return 1;
    }
    pc_probe pr;
    if (pc_htab_reserve(&t->idx, t->e.n + 1) < 0)
        return -1;
    pc_probe_start(&t->idx, key_hash(kind, iid), &pr);
    for (uint32_t id; (id = pc_probe_next(&t->idx, &pr)) != PC_NONE;)
        if (t->e.iid[id] == iid && t->e.kind[id] == kind)
            return 0;
    struct pc_col cols[] = {PC_COL(t->e.iid), PC_COL(t->e.kind), PC_COL(t->e.ent)};
    if (pc_grow_cols(&t->e.cap, t->e.n + 1, cols, 3) < 0)
        return -1;
    uint32_t id = (uint32_t)t->e.n++;
    t->e.iid[id] = iid;
    t->e.kind[id] = (uint8_t)kind;
    t->e.ent[id] = ent;
    pc_htab_insert(&t->idx, &pr, id);
    return 1;
}

/* Grows an array of records of size `size` to hold one more. */
static int grow(void **a, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 64;
    void *x = realloc(*a, c * size);
    if (!x)
        return -1;
    *a = x;
    *cap = c;
    return 0;
}

uint32_t pf_interned_new_frame(pf_interned *t)
{
    if (t->n_frames >= PC_NONE - 1 ||
        grow((void **)&t->frames, &t->cap_frames, t->n_frames, sizeof *t->frames) < 0)
        return PC_NONE;
    memset(&t->frames[t->n_frames], 0, sizeof *t->frames);
    return (uint32_t)t->n_frames++;
}

uint32_t pf_interned_new_mapping(pf_interned *t)
{
    if (t->n_mappings >= PC_NONE - 1 ||
        grow((void **)&t->mappings, &t->cap_mappings, t->n_mappings,
             sizeof *t->mappings) < 0)
        return PC_NONE;
    pf_mapping_rec *r = &t->mappings[t->n_mappings];
    memset(r, 0, sizeof *r);
    r->resolved = PC_NONE;
    r->path0 = (uint32_t)t->n_pool;
    return (uint32_t)t->n_mappings++;
}

uint32_t pf_interned_new_callstack(pf_interned *t)
{
    if (t->n_callstacks >= PC_NONE - 1 ||
        grow((void **)&t->callstacks, &t->cap_callstacks, t->n_callstacks,
             sizeof *t->callstacks) < 0)
        return PC_NONE;
    pf_callstack_rec *r = &t->callstacks[t->n_callstacks];
    r->frame0 = (uint32_t)t->n_pool;
    r->n_frames = 0;
    return (uint32_t)t->n_callstacks++;
}

void pf_interned_unappend(pf_interned *t, int kind)
{
    /* The record's pool entries were the last ones pushed. */
    if (kind == PF_FRAME && t->n_frames) {
        t->n_frames--;
    } else if (kind == PF_MAPPING && t->n_mappings) {
        t->n_pool = t->mappings[--t->n_mappings].path0;
    } else if (kind == PF_CALLSTACK && t->n_callstacks) {
        t->n_pool = t->callstacks[--t->n_callstacks].frame0;
    } else if ((kind == PF_SS_TASK || kind == PF_SS_EXEC || kind == PF_SS_COUNTER) && t->n_ss) {
        t->n_ss--;
    }
}

void pf_interned_callstack_done(pf_interned *t, pf_entry *e, uint32_t stack)
{
    pf_callstack_rec *c = &t->callstacks[e->val];
    e->res = stack;
    t->pool_dead += c->n_frames;
    c->n_frames = 0;
}

void pf_interned_pool_compact(pf_interned *t)
{
    /* Compaction walks every record: it waits for as many dead entries,
     * so that its cost is paid for by what it reclaims. */
    if (t->pool_dead < 65536 || t->pool_dead * 2 < t->n_pool ||
        t->pool_dead < t->n_callstacks - t->live_from + t->n_mappings)
        return;
    /* Mappings and callstacks each hold their slices in pool order:
     * merge the two lists by offset and move the live slices down.  A
     * traced_perf callstack is resolved in the packet that brings it, so
     * nearly all are dead: those below live_from are not walked again
     * (with 1M samples, 480,000 callstacks walked about 50 times). */
    size_t w = 0, m = 0, c = t->live_from, live = t->n_callstacks;
    while (m < t->n_mappings || c < t->n_callstacks) {
        int take_map = c == t->n_callstacks ||
                       (m < t->n_mappings && t->mappings[m].path0 < t->callstacks[c].frame0);
        uint32_t *off, n;
        if (take_map) {
            off = &t->mappings[m].path0;
            n = t->mappings[m++].n_path;
        } else {
            off = &t->callstacks[c].frame0;
            n = t->callstacks[c].n_frames;
            if (n && live == t->n_callstacks)
                live = c;
            c++;
        }
        if (n && *off != w)
            memmove(t->pool + w, t->pool + *off, n * sizeof *t->pool);
        *off = (uint32_t)w;
        w += n;
    }
    t->n_pool = w;
    t->pool_dead = 0;
    t->live_from = live;
}

int pf_interned_pool_push(pf_interned *t, uint64_t v)
{
    if (t->n_pool >= UINT32_MAX ||
        grow((void **)&t->pool, &t->cap_pool, t->n_pool, sizeof *t->pool) < 0)
        return -1;
    t->pool[t->n_pool++] = v;
    return 0;
}

void pf_interned_clear(pf_interned *t)
{
    if (t->idx.slot && t->idx.used)
        memset(t->idx.slot, 0, (t->idx.mask + 1) * sizeof *t->idx.slot);
    t->idx.used = 0;
    t->e.n = 0;
    for (int k = 0; k < PF_N_KINDS; k++) {
        for (size_t i = 0; i < t->dense_top[k]; i++)
            t->dense[k][i].val = PC_NONE;
        t->dense_top[k] = 0;
    }
    t->n_dense = 0;
    t->n_frames = t->n_mappings = t->n_callstacks = t->n_pool = t->n_ss = 0;
    t->pool_dead = 0;
    t->live_from = 0;
}

void pf_interned_free(pf_interned *t)
{
    for (int k = 0; k < PF_N_KINDS; k++)
        free(t->dense[k]);
    pc_htab_free(&t->idx);
    free(t->e.iid);
    free(t->e.kind);
    free(t->e.ent);
    free(t->frames);
    free(t->mappings);
    free(t->callstacks);
    free(t->pool);
    free(t->ss);
    memset(t, 0, sizeof *t);
}

uint32_t pf_interned_new_ss(pf_interned *t)
{
    if (t->n_ss >= PC_NONE - 1 || grow((void **)&t->ss, &t->cap_ss, t->n_ss, sizeof *t->ss) < 0)
        return PC_NONE;
    memset(&t->ss[t->n_ss], 0, sizeof *t->ss);
    return (uint32_t)t->n_ss++;
}
