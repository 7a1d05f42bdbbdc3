/* Sorted symbol ranges (see symtab.h). */
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/sort.h"
#include "symbol/symtab.h"

int pc_symtab_add(pc_symtab *t, uint64_t start, uint64_t size, uint64_t limit,
                  const char *name, size_t len, uint32_t rank)
{
    if (len >= UINT32_MAX || t->arena_len > UINT32_MAX - 1 - len)
        return -1;
    if (pc_grow(&t->arena, &t->arena_cap, t->arena_len + len + 1, 1, 4096) < 0 ||
        pc_grow(&t->e, &t->cap, t->n + 1, sizeof *t->e, 256) < 0)
        return -1;
    memcpy(t->arena + t->arena_len, name, len);
    t->arena[t->arena_len + len] = 0;
    t->e[t->n++] = (pc_symtab_entry){ .start = start, .end = size, .limit = limit,
                                      .name = (uint32_t)t->arena_len, .rank = rank };
    t->arena_len += len + 1;
    return 0;
}

static int cmp_entry(const void *pa, const void *pb, const void *ctx)
{
    const pc_symtab_entry *a = pa, *b = pb;
    const char *arena = ctx;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    size_t la = strlen(arena + a->name), lb = strlen(arena + b->name);
    if (la != lb)
        return la < lb ? -1 : 1;
    int c = strcmp(arena + a->name, arena + b->name);
    if (c)
        return c;
    /* Identical names: the rest decides, so the order never depends on
     * the sort's own. */
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1;
    if (a->limit != b->limit)
        return a->limit > b->limit ? -1 : 1;
    return 0;
}

void pc_symtab_finish(pc_symtab *t)
{
    pc_sort_ctx(t->e, t->n, sizeof *t->e, cmp_entry, t->arena);
    size_t kept = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (kept && t->e[kept - 1].start == t->e[i].start) {
            pc_symtab_entry *k = &t->e[kept - 1];
            if (k->end == 0 && t->e[i].end > k->end)
                k->end = t->e[i].end;
            continue;
        }
        t->e[kept++] = t->e[i];
    }
    t->n = kept;
    for (size_t i = 0; i < t->n; i++) {
        pc_symtab_entry *k = &t->e[i];
        if (k->end) {
            k->end = k->start + k->end < k->start ? UINT64_MAX : k->start + k->end;
        } else {
            uint64_t end = k->limit;
            if (i + 1 < t->n && t->e[i + 1].start < end)
                end = t->e[i + 1].start;
            /* A limit below the start (a damaged section table) still
             * leaves the symbol its own first byte. */
            k->end = end > k->start ? end : k->start + 1;
        }
    }
}

/* How far back a lookup looks for an entry enclosing a shorter one: nested
 * ranges are rare (JIT maps that reuse memory, aliases of different sizes)
 * and a bound keeps lookups logarithmic. */
#define LOOK_BACK 16

const char *pc_symtab_find(const pc_symtab *t, uint64_t addr, uint64_t *start)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->e[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, back = 0; i > 0 && back < LOOK_BACK; i--, back++) {
        const pc_symtab_entry *k = &t->e[i - 1];
        if (addr < k->end) {
            if (start)
                *start = k->start;
            return t->arena + k->name;
        }
    }
    return NULL;
}

void pc_symtab_free(pc_symtab *t)
{
    free(t->e);
    free(t->arena);
    memset(t, 0, sizeof *t);
}
