/* A set of byte strings that several threads fill and search at once:
 * the readers' shortcut for what they worked out before from the same
 * bytes (simpleperf's caller paths).  Each distinct string gets an id,
 * dense from 0 in the order strings were first added; which thread adds
 * a string first decides its id, so ids are for keying caches, never for
 * output.
 *
 * Bounded: once max_strings strings or max_bytes of them are held, adding
 * finds only what is there.  Strings are never removed, so an id and its
 * string stay valid until pc_byteset_free; that is what lets a search run
 * without a lock while another thread adds.
 *
 * Threads: pc_byteset_find and pc_byteset_add may be called from any
 * number of threads at once; init and free from one, with no other call
 * running. */
#ifndef PROFCONV_BASE_BYTESET_H
#define PROFCONV_BASE_BYTESET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PC_BYTESET_NONE UINT32_MAX

typedef struct pc_byteset {
    _Atomic uint32_t *slot;  /* 1 + id, 0: empty; published after the entry */
    size_t mask;
    struct pc_byteset_entry {
        uint64_t hash;
        uint32_t at, len;    /* in bytes */
    } *entry;
    uint8_t *bytes;
    /* Under mu: */
    uint32_t n, max_n;
    size_t n_bytes, max_bytes;
    pthread_mutex_t mu;
    _Atomic size_t held;     /* n_bytes, for pc_byteset_held */
} pc_byteset;

/* Sizes the set for max_strings strings (at most 2^30) and max_bytes of
 * them (at most 4 GiB); pages are taken as strings come.  Returns 0, or -1 without
 * memory (s is then empty and pc_byteset_free may still be called). */
int pc_byteset_init(pc_byteset *s, uint32_t max_strings, size_t max_bytes);
void pc_byteset_free(pc_byteset *s);

/* The id of the len bytes at p, whose pc_hash_bytes is hash, or
 * PC_BYTESET_NONE.  Takes no lock. */
uint32_t pc_byteset_find(const pc_byteset *s, uint64_t hash, const void *p, uint32_t len);

/* The id of the len bytes at p, added if they were not there (copied);
 * PC_BYTESET_NONE when the set is full.  Takes the set's lock. */
uint32_t pc_byteset_add(pc_byteset *s, uint64_t hash, const void *p, uint32_t len);

/* The bytes of the strings held, as of a recent add.  Takes no lock. */
size_t pc_byteset_held(const pc_byteset *s);

/* Fetches ahead what pc_byteset_find(s, hash, ...) will read, a step at
 * a time, so that a caller running through many strings overlaps the
 * misses of several: step 0 the slot, step 1 the entry the slot names,
 * step 2 the first bytes of its string, each while the one before it has
 * had time to come.  Reads no more than a search would, and takes no
 * lock. */
void pc_byteset_prefetch(const pc_byteset *s, uint64_t hash, int step);

/* Whether looking strings up pays, judged by one user (a thread) from
 * what its own lookups found: where strings seldom come again, hashing
 * and comparing them costs without paying.  After a window of 4,096
 * tries that found less than one in 16, the next 65,536 tries say no at
 * once.  Zeroed, a gate is open. */
typedef struct pc_hitgate {
    uint32_t tried, found, rest;
} pc_hitgate;

/* 1: look up; 0: do not.  Counts the try toward the window. */
int pc_hitgate_try(pc_hitgate *g);

/* The try found what it looked for. */
static inline void pc_hitgate_found(pc_hitgate *g)
{
    g->found++;
}

#endif
