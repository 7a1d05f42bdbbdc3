#include "read/perfetto/heap.h"

#include <stdlib.h>

#include "model/model.h"

static uint64_t group_hash(int64_t pid, uint32_t heap)
{
    return pc_mix64((uint64_t)pid * 0x9e3779b97f4a7c15ULL ^ heap);
}

uint32_t pf_heap_first_site(const pf_heap_totals *h, int64_t pid, uint32_t heap)
{
    pc_probe pr;
    if (!h->group.n)
        return PC_NONE;
    pc_probe_start(&h->group.idx, group_hash(pid, heap), &pr);
    for (uint32_t g; (g = pc_probe_next(&h->group.idx, &pr)) != PC_NONE;)
        if (h->group.pid[g] == pid && h->group.heap[g] == heap)
            return h->group.first[g];
    return PC_NONE;
}

/* Appends site i to its (pid, heap) group.  Returns 0, or -1 when out of
 * memory. */
static int group_append(pf_heap_totals *h, uint32_t i)
{
    int64_t pid = h->site.pid[i];
    uint32_t heap = h->site.heap[i];
    pc_probe pr;
    if (pc_htab_reserve(&h->group.idx, h->group.n + 1) < 0)
        return -1;
    pc_probe_start(&h->group.idx, group_hash(pid, heap), &pr);
    uint32_t g;
    while ((g = pc_probe_next(&h->group.idx, &pr)) != PC_NONE)
        if (h->group.pid[g] == pid && h->group.heap[g] == heap)
            break;
    if (g == PC_NONE) {
        struct pc_col cols[] = {PC_COL(h->group.pid), PC_COL(h->group.heap),
                                PC_COL(h->group.first), PC_COL(h->group.last)};
        if (pc_grow_cols(&h->group.cap, h->group.n + 1, cols, 4) < 0)
            return -1;
        g = (uint32_t)h->group.n++;
        h->group.pid[g] = pid;
        h->group.heap[g] = heap;
        h->group.first[g] = i;
        pc_htab_insert(&h->group.idx, &pr, g);
    } else {
        h->site.next[h->group.last[g]] = i;
    }
    h->group.last[g] = i;
    return 0;
}

static uint32_t site_of(pf_heap_totals *h, int64_t pid, uint32_t heap, uint32_t stack)
{
    pc_probe pr;
    if (pc_htab_reserve(&h->site.idx, h->site.n + 1) < 0)
        return PC_NONE;
    uint64_t key = ((uint64_t)heap << 32 | stack) ^ (uint64_t)pid * 0x9e3779b97f4a7c15ULL;
    pc_probe_start(&h->site.idx, pc_mix64(key), &pr);
    for (uint32_t i; (i = pc_probe_next(&h->site.idx, &pr)) != PC_NONE;)
        if (h->site.stack[i] == stack && h->site.heap[i] == heap && h->site.pid[i] == pid)
            return i;
    struct pc_col cols[] = {PC_COL(h->site.pid), PC_COL(h->site.heap), PC_COL(h->site.stack),
                            PC_COL(h->site.total), PC_COL(h->site.next)};
    if (h->site.n >= PC_NONE - 1 || pc_grow_cols(&h->site.cap, h->site.n + 1, cols, 5) < 0)
        return PC_NONE;
    uint32_t i = (uint32_t)h->site.n;
    h->site.pid[i] = pid;
    h->site.heap[i] = heap;
    h->site.stack[i] = stack;
    h->site.total[i] = (pf_heap_values){{0}};
    h->site.next[i] = PC_NONE;
    pc_htab_insert(&h->site.idx, &pr, i);
    h->site.n++;
    if (group_append(h, i) < 0)
        return PC_NONE;
    return i;
}

uint32_t pf_heap_totals_add(pf_heap_totals *h, int64_t pid, uint32_t heap, uint32_t stack,
                            uint64_t iid, const pf_heap_values *v)
{
    uint32_t site = site_of(h, pid, heap, stack);
    pc_probe pr;
    if (site == PC_NONE || pc_htab_reserve(&h->id.idx, h->id.n + 1) < 0)
        return PC_NONE;
    pc_probe_start(&h->id.idx, pc_mix64(iid * 0x9e3779b97f4a7c15ULL ^ site), &pr);
    uint32_t id;
    while ((id = pc_probe_next(&h->id.idx, &pr)) != PC_NONE)
        if (h->id.iid[id] == iid && h->id.site[id] == site)
            break;
    if (id == PC_NONE) {
        struct pc_col cols[] = {PC_COL(h->id.site), PC_COL(h->id.iid), PC_COL(h->id.base)};
        if (h->id.n >= PC_NONE - 1 || pc_grow_cols(&h->id.cap, h->id.n + 1, cols, 3) < 0)
            return PC_NONE;
        id = (uint32_t)h->id.n++;
        h->id.site[id] = site;
        h->id.iid[id] = iid;
        h->id.base[id] = h->site.total[site];
        pc_htab_insert(&h->id.idx, &pr, id);
    }
    for (int k = 0; k < PF_NVALUES; k++) {
        uint64_t sum = h->id.base[id].v[k] + v->v[k];
        h->site.total[site].v[k] = sum < v->v[k] ? UINT64_MAX : sum;
    }
    return site;
}

void pf_heap_totals_free(pf_heap_totals *h)
{
    free(h->site.pid);
    free(h->site.heap);
    free(h->site.stack);
    free(h->site.total);
    free(h->site.next);
    free(h->group.pid);
    free(h->group.heap);
    free(h->group.first);
    free(h->group.last);
    pc_htab_free(&h->group.idx);
    pc_htab_free(&h->site.idx);
    free(h->id.site);
    free(h->id.iid);
    free(h->id.base);
    pc_htab_free(&h->id.idx);
}
