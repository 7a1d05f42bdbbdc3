/* Interned strings.
 *
 * Each distinct byte string is stored once, NUL-terminated, in one growing
 * arena and named by a dense id from 0 in order of first appearance, so
 * ids are stable and output built from them is deterministic.  Strings may
 * contain NUL bytes; pc_str_len() gives the true length.  Pointers from
 * pc_str() stay valid only until the next pc_str_intern().
 */
#ifndef PROFCONV_STRTAB_H
#define PROFCONV_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashtab.h"

typedef struct pc_strtab {
    char *arena;
    size_t arena_len, arena_cap;
    size_t *off;        /* start of each string in the arena */
    uint32_t *len;
    size_t n, cap;
    pc_htab idx;
} pc_strtab;

/* Returns the id of the string s[0..len), adding it if new; PC_NONE when
 * out of memory or when the table is full (2^32 - 1 strings or 4 GiB
 * strings). */
uint32_t pc_str_intern(pc_strtab *t, const void *s, size_t len);

/* The id of s[0..len) if it was interned, else PC_NONE. */
uint32_t pc_str_find(const pc_strtab *t, const void *s, size_t len);

static inline const char *pc_str(const pc_strtab *t, uint32_t id)
{
    return t->arena + t->off[id];
}

static inline size_t pc_str_len(const pc_strtab *t, uint32_t id)
{
    return t->len[id];
}

void pc_strtab_free(pc_strtab *t);

#endif
