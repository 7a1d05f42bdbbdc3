/* A bounded cache of values by byte string: the readers' shortcut for
 * what they worked out before from the same bytes (simpleperf's caller
 * paths).  Direct-mapped by a hash the caller gives; every hit is checked
 * against a copy of the bytes, so a hit is never wrong, only a slot's
 * latest string is kept, and when the copies reach the cache's limit
 * every slot is emptied.  Where strings seldom come again, keeping them
 * costs without paying: after a window of 4,096 tries that found less
 * than one in 16, the next 65,536 tries say no at once.
 *
 * Zeroed, a cache is empty and off: pc_bcache_init sizes it.  Memory is
 * taken at the first keep; a failure only turns the cache off.  One cache
 * is used by one thread at a time. */
#ifndef PROFCONV_BASE_BYTECACHE_H
#define PROFCONV_BASE_BYTECACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct pc_bcache {
    struct pc_bcache_slot {
        uint64_t hash;
        uint32_t at;       /* 1 + where the string starts in bytes; 0: empty */
        uint32_t len, tag, value;
    } *slot;
    size_t n_slots;        /* a power of two */
    uint8_t *bytes;
    size_t n_bytes, cap_bytes, max_bytes;
    uint32_t tried, found, rest;
    int off;
} pc_bcache;

/* n_slots a power of two; max_bytes of copies at most. */
void pc_bcache_init(pc_bcache *c, size_t n_slots, size_t max_bytes);
void pc_bcache_free(pc_bcache *c);

/* Whether to look this string up at all: 0 while the cache rests or is
 * off.  Counts the try toward the window. */
int pc_bcache_try(pc_bcache *c);

/* The value kept for the len bytes at p with this tag (a small key of the
 * caller's beside the bytes) and hash, or UINT32_MAX. */
uint32_t pc_bcache_find(pc_bcache *c, uint64_t hash, const void *p, uint32_t len,
                        uint32_t tag);

/* Keeps value for (p, len, tag), in place of what the slot held.  Strings
 * longer than max_bytes are not kept. */
void pc_bcache_keep(pc_bcache *c, uint64_t hash, const void *p, uint32_t len, uint32_t tag,
                    uint32_t value);

#endif
