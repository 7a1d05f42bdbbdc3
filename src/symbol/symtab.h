/* A sorted table of named address ranges, shared by the ELF, kallsyms and
 * JIT-map symbolizers: entries are added in any order, then finished once
 * (sorted, one kept per start address, open ends closed) and looked up by
 * binary search.  Names live in one arena, so a table of a million symbols
 * costs two allocations. */
#ifndef PROFCONV_SYMBOL_SYMTAB_H
#define PROFCONV_SYMBOL_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct pc_symtab_entry {
    uint64_t start;
    /* Exclusive end once finished; before, the size (0: up to the next
     * entry, but never past limit). */
    uint64_t end;
    uint64_t limit;
    uint32_t name;      /* offset in the arena */
    uint32_t rank;      /* among entries at one start, the lowest is kept */
} pc_symtab_entry;

typedef struct pc_symtab {
    pc_symtab_entry *e;
    size_t n, cap;
    char *arena;
    size_t arena_len, arena_cap;
} pc_symtab;

/* Adds name[0..len) (no NUL inside is needed: the name ends at len) over
 * [start, start + size), or up to the next entry and at most limit when
 * size is 0.  -1 when out of memory or past 4 GiB of names. */
int pc_symtab_add(pc_symtab *t, uint64_t start, uint64_t size, uint64_t limit,
                  const char *name, size_t len, uint32_t rank);

/* Sorts and dedupes.  At one start address the entry kept is the one of
 * lowest rank, then of shortest name, then of smallest name in byte order:
 * a rule that depends on the entries alone, not on their order.  A kept
 * entry without a size takes the largest size of the entries it replaced. */
void pc_symtab_finish(pc_symtab *t);

/* The entry covering addr: the one of greatest start <= addr whose range
 * holds addr; when it ends before addr, an earlier one (up to a few back)
 * that encloses it may.  NULL when none does. */
const char *pc_symtab_find(const pc_symtab *t, uint64_t addr, uint64_t *start);

void pc_symtab_free(pc_symtab *t);

#endif
