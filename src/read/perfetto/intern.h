/* Interned data of one Perfetto packet sequence (doc/formats/perfetto.md,
 * "Sequences and incremental state", "Interned data"): strings, frames,
 * mappings and callstacks by
 * (kind, iid), decoded when they arrive.
 *
 * Strings go straight into the profile's string table, so an entry holds
 * a string id; frames, mappings and callstacks keep their fields, with the
 * iids they refer to, since what they name may arrive later (heapprofd
 * writes the interned data after the samples that use it).  What each
 * resolved to (a profile frame, a reader mapping, a profile stack) is
 * kept once that succeeded: in the mapping's record, and in the frame's
 * and callstack's entry (pf_entry).
 *
 * The first definition of an iid wins; later ones are ignored, as
 * trace_processor does.  pf_interned_clear() starts a new generation
 * (incremental state cleared) and keeps the memory for reuse.
 *
 * Producers number iids from 1 up, kind by kind, so an iid no larger than
 * a few times the entries so far is looked up in a plain array of its
 * kind (one memory access, where a sample's dozens of frame lookups would
 * each miss the cache in a hash table); other iids go to the hash table,
 * so memory stays proportional to the entries whatever the iids.
 */
#ifndef PROFCONV_PERFETTO_INTERN_H
#define PROFCONV_PERFETTO_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashtab.h"

enum pf_kind {
    PF_FUNCTION_NAME,
    PF_BUILD_ID,
    PF_MAPPING_PATH,
    PF_SOURCE_PATH,
    PF_STRING,       /* heapprofd's packet-local string table */
    PF_FRAME,
    PF_MAPPING,
    PF_CALLSTACK,
    PF_EVENT_NAME,   /* TrackEvent names */
    /* StackSample's contexts and counter descriptors (stack_sample.c) */
    PF_SS_TASK,
    PF_SS_EXEC,
    PF_SS_COUNTER,
    PF_N_KINDS
};

/* An iid's entry: its value (a string id, or the index of its record)
 * and, for a frame or callstack, what that resolved to (PF_UNRESOLVED
 * until then; a callstack may resolve to PC_NONE, the empty stack).  The
 * two sit side by side: resolving a new callstack looks up dozens of
 * frames that were resolved long before, and a sample with a known
 * callstack looks up only its stack, each one cache line here where an
 * index and then a result kept by record index would be two that wait
 * on each other. */
typedef struct pf_entry {
    uint32_t val, res;
} pf_entry;

#define PF_UNRESOLVED (PC_NONE - 1)

typedef struct pf_frame_rec {
    uint64_t name_iid, mapping_iid, rel_pc;
    uint8_t kind;        /* Frame.Kind, 0 unknown */
    uint8_t has_name;
} pf_frame_rec;

typedef struct pf_mapping_rec {
    uint64_t build_iid, start, end, start_offset, load_bias, exact_offset;
    uint32_t path0, n_path;   /* iids in pool[path0 ..] */
    uint32_t resolved;        /* reader mapping, or PC_NONE */
    uint8_t has_build;
} pf_mapping_rec;

typedef struct pf_callstack_rec {
    uint32_t frame0, n_frames;  /* frame iids in pool[frame0 ..], root first */
} pf_callstack_rec;

/* An interned StackSample message, by its kind:
 *   task context       a pid, b tid, c async_id
 *   execution context  a cpu
 *   counter descriptor a unit (StackSample.Unit), b unit_multiplier,
 *                      name and str (unit_str) string ids
 * has: a bit per field given (1 a, 2 b, 4 c, 8 name, 16 str). */
typedef struct pf_ss_rec {
    uint64_t a, b, c;
    uint32_t name, str;
    uint16_t event1, uncounted1;   /* a counter's events + 1, once made */
    uint8_t has;
} pf_ss_rec;

typedef struct pf_interned {
    pf_entry *dense[PF_N_KINDS];  /* by iid; val PC_NONE where absent */
    size_t dense_cap[PF_N_KINDS], dense_top[PF_N_KINDS];  /* top: 1 + max set */
    size_t n_dense;
    pc_htab idx;
    struct {
        uint64_t *iid;
        uint8_t *kind;
        pf_entry *ent;
        size_t n, cap;
    } e;
    pf_frame_rec *frames;
    size_t n_frames, cap_frames;
    pf_mapping_rec *mappings;
    size_t n_mappings, cap_mappings;
    pf_callstack_rec *callstacks;
    size_t n_callstacks, cap_callstacks;
    uint64_t *pool;
    size_t n_pool, cap_pool;
    size_t pool_dead;    /* pool entries of callstacks resolved for good */
    /* Callstacks below this index hold no frames in the pool: resolved
     * for good, they are never walked again by a compaction. */
    size_t live_from;
    pf_ss_rec *ss;
    size_t n_ss, cap_ss;
} pf_interned;

/* (kind, iid) in the hash table only; NULL when absent. */
pf_entry *pf_interned_find_hashed(pf_interned *t, int kind, uint64_t iid);

/* The entry of (kind, iid), or NULL.  It stays where it is until the next
 * pf_interned_put() or pf_interned_clear() on t.  Inline: a callstack's
 * frames are looked up one by one, nearly all of them in the dense array,
 * and each first in a packet-local table that is mostly empty, which the
 * check of e.n answers without a call. */
static inline pf_entry *pf_interned_entry(pf_interned *t, int kind, uint64_t iid)
{
    if (iid < t->dense_cap[kind] && t->dense[kind][iid].val != PC_NONE)
        return &t->dense[kind][iid];
    return t->e.n ? pf_interned_find_hashed(t, kind, iid) : NULL;
}

/* The value of (kind, iid): a string id or a record index, or PC_NONE. */
static inline uint32_t pf_interned_find(pf_interned *t, int kind, uint64_t iid)
{
    const pf_entry *e = pf_interned_entry(t, kind, iid);
    return e ? e->val : PC_NONE;
}

/* Adds (kind, iid) -> val unless the key exists.  Returns 1 when added, 0
 * when the key was there already, -1 when out of memory. */
int pf_interned_put(pf_interned *t, int kind, uint64_t iid, uint32_t val);

/* Appends a record of the kind (zeroed; a mapping's not resolved) and returns
 * its index, or PC_NONE when out of memory.  Callers put() it afterwards,
 * and drop it with pf_interned_unappend() when put() says it is a
 * duplicate. */
uint32_t pf_interned_new_frame(pf_interned *t);
uint32_t pf_interned_new_mapping(pf_interned *t);
uint32_t pf_interned_new_callstack(pf_interned *t);
void pf_interned_unappend(pf_interned *t, int kind);

/* Records that callstack e (its entry) resolved to stack for good: its
 * frame iids are no longer needed, and their pool space can be
 * reclaimed. */
void pf_interned_callstack_done(pf_interned *t, pf_entry *e, uint32_t stack);

/* Reclaims the pool space of resolved callstacks once it is most of the
 * pool, moving the rest down.  Call it only between records, never while
 * one is being read. */
void pf_interned_pool_compact(pf_interned *t);

/* Appends v to the iid pool.  Returns 0, or -1 when out of memory. */
int pf_interned_pool_push(pf_interned *t, uint64_t v);
/* The same, inline while the pool has room. */
static inline int pf_interned_pool_add(pf_interned *t, uint64_t v)
{
    if (t->n_pool < t->cap_pool && t->n_pool < UINT32_MAX) {
        t->pool[t->n_pool++] = v;
        return 0;
    }
    return pf_interned_pool_push(t, v);
}

/* Appends a StackSample record (zeroed) and returns its index, or PC_NONE
 * when out of memory; put() and unappend() as for the others. */
uint32_t pf_interned_new_ss(pf_interned *t);

void pf_interned_clear(pf_interned *t);
void pf_interned_free(pf_interned *t);

#endif
