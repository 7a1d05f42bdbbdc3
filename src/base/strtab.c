#include "base/strtab.h"

#include <stdlib.h>
#include <string.h>

static int grow_arena(pc_strtab *t, size_t need)
{
    size_t cap = t->arena_cap ? t->arena_cap : 1 << 16;
    while (cap - t->arena_len < need) {
        if (cap > SIZE_MAX / 2)
            return -1;
        cap *= 2;
    }
    char *a = realloc(t->arena, cap);
    if (!a)
        return -1;
    t->arena = a;
    t->arena_cap = cap;
    return 0;
}

static int grow_index(pc_strtab *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1024;
    size_t *off = realloc(t->off, cap * sizeof *off);
    if (!off)
        return -1;
    t->off = off;
    uint32_t *len = realloc(t->len, cap * sizeof *len);
    if (!len)
        return -1;
    t->len = len;
    t->cap = cap;
    return 0;
}

uint32_t pc_str_intern(pc_strtab *t, const void *s, size_t len)
{
    pc_probe pr;
    uint64_t h = pc_hash_bytes(s, len);

    if (len >= UINT32_MAX || t->n >= PC_NONE - 1)
        return PC_NONE;
    if (pc_htab_reserve(&t->idx, t->n + 1) < 0)
        return PC_NONE;
    pc_probe_start(&t->idx, h, &pr);
    for (uint32_t id; (id = pc_probe_next(&t->idx, &pr)) != PC_NONE;)
        if (t->len[id] == len && (len == 0 || memcmp(t->arena + t->off[id], s, len) == 0))
            return id;
    if (t->arena_cap - t->arena_len < len + 1) {
        /* A part of a string already in the table (a method name cut
         * from its signature) lies in the arena that growing moves. */
        uintptr_t a = (uintptr_t)t->arena, p = (uintptr_t)s;
        int inside = t->arena && p >= a && p < a + t->arena_len;
        size_t at = inside ? (size_t)(p - a) : 0;
        if (grow_arena(t, len + 1) < 0)
            return PC_NONE;
        if (inside)
            s = t->arena + at;
    }
    if (t->n == t->cap && grow_index(t) < 0)
        return PC_NONE;
    uint32_t id = (uint32_t)t->n++;
    t->off[id] = t->arena_len;
    t->len[id] = (uint32_t)len;
    if (len)
        memcpy(t->arena + t->arena_len, s, len);
    t->arena[t->arena_len + len] = 0;
    t->arena_len += len + 1;
    pc_htab_insert(&t->idx, &pr, id);
    return id;
}

uint32_t pc_str_find(const pc_strtab *t, const void *s, size_t len)
{
    pc_probe pr;
    if (!t->n)
        return PC_NONE;
    pc_probe_start(&t->idx, pc_hash_bytes(s, len), &pr);
    for (uint32_t id; (id = pc_probe_next(&t->idx, &pr)) != PC_NONE;)
        if (t->len[id] == len && (len == 0 || memcmp(t->arena + t->off[id], s, len) == 0))
            return id;
    return PC_NONE;
}

void pc_strtab_free(pc_strtab *t)
{
    free(t->arena);
    free(t->off);
    free(t->len);
    pc_htab_free(&t->idx);
    memset(t, 0, sizeof *t);
}
