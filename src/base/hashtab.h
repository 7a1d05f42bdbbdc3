/* Open-addressing hash index over ids, shared by every interning table.
 *
 * The index stores only (tag, id) pairs: the keys live in the owner's own
 * arrays, and the owner confirms a candidate by comparing keys.  A slot is
 * a 64-bit word: the upper half is a 32-bit tag taken from the key's hash,
 * the lower half is id + 1 (0 marks an empty slot).  Tags filter out most
 * non-matching candidates without touching the keys, and they also give
 * each entry's home slot, so growing needs no rehashing callback.
 *
 * Usage, for a table whose keys are in key[]:
 *
 *     pc_probe pr;
 *     if (pc_htab_reserve(&t, count + 1)) -> out of memory
 *     pc_probe_start(&t, hash, &pr);
 *     for (uint32_t id; (id = pc_probe_next(&t, &pr)) != PC_NONE;)
 *         if (key[id] == wanted) return id;
 *     id = count++; key[id] = wanted;
 *     pc_htab_insert(&t, &pr, id);
 *
 * Capacity is a power of two kept at least twice the entry count, or
 * four thirds of it for a table reserved with pc_htab_reserve_full.
 */
#ifndef PROFCONV_HASHTAB_H
#define PROFCONV_HASHTAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PC_NONE UINT32_MAX

typedef struct pc_htab {
    uint64_t *slot;
    size_t mask;   /* capacity - 1, or 0 when empty */
    size_t used;
} pc_htab;

typedef struct pc_probe {
    size_t i;
    uint32_t tag;
} pc_probe;

/* Makes room for n entries in total.  Returns 0, or -1 when out of memory. */
int pc_htab_grow(pc_htab *t, size_t n);
/* The same, inline where there is room already, as there nearly always is:
 * interning calls it before every lookup. */
static inline int pc_htab_reserve(pc_htab *t, size_t n)
{
    if (t->slot && n <= (t->mask + 1) / 2)
        return 0;
    return pc_htab_grow(t, n);
}
/* pc_htab_reserve for a table kept up to three quarters full rather
 * than half: for one big enough that its memory counts more than the few
 * more slots a lookup reads.  The stack tree's index so takes 16 MiB
 * rather than 32 for the 1.1M stacks of a 5M-sample Perfetto trace, and
 * interning is as fast. */
static inline int pc_htab_reserve_full(pc_htab *t, size_t n)
{
    if (t->slot && n <= (t->mask + 1) / 4 * 3)
        return 0;
    /* Room for two thirds of n at half full is room for n at three
     * quarters. */
    return pc_htab_grow(t, n - n / 3);
}
void pc_htab_free(pc_htab *t);

/* Spreads the bits of a 64-bit value (a fixed-point mixer); use it on keys
 * that are not already well-distributed hashes. */
static inline uint64_t pc_mix64(uint64_t x)
{
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ULL;
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ULL;
    x ^= x >> 32;
    return x;
}

/* The process's secret hash key, never 0 once set.  Keys come from the
 * input, and with a fixed hash a crafted input can send them all to one
 * slot, making interning quadratic; with a key drawn from the system's
 * random source at first use, it cannot.  Only where entries sit depends
 * on it, never which id an entry gets, so outputs do not change. */
extern _Atomic uint64_t pc_hash_key_value;
uint64_t pc_hash_key_init(void);

static inline uint64_t pc_hash_key(void)
{
    uint64_t k = atomic_load_explicit(&pc_hash_key_value, memory_order_relaxed);
    return k ? k : pc_hash_key_init();
}

/* Hash of a byte string (word at a time, then mixed), keyed. */
uint64_t pc_hash_bytes(const void *data, size_t len);

/* The tag of a key whose hash is hash, which may be any function of the
 * key, even one an input can invert (pc_mix64): it is mixed again with
 * the process key here.  Any thread may work tags out ahead, for
 * pc_probe_start_tag on another. */
static inline uint32_t pc_hash_tag(uint64_t hash)
{
    return (uint32_t)(pc_mix64(hash ^ pc_hash_key()) >> 32);
}

static inline void pc_probe_start_tag(const pc_htab *t, uint32_t tag, pc_probe *p)
{
    p->tag = tag;
    p->i = tag & t->mask;
}

static inline void pc_probe_start(const pc_htab *t, uint64_t hash, pc_probe *p)
{
    pc_probe_start_tag(t, pc_hash_tag(hash), p);
}

/* Returns the id of the next slot whose tag matches, or PC_NONE once an
 * empty slot is reached; p then designates that slot for pc_htab_insert. */
static inline uint32_t pc_probe_next(const pc_htab *t, pc_probe *p)
{
    for (;;) {
        uint64_t s = t->slot[p->i];
        if (!s)
            return PC_NONE;
        p->i = (p->i + 1) & t->mask;
        if ((uint32_t)(s >> 32) == p->tag)
            return (uint32_t)s - 1;
    }
}

/* Stores id in the empty slot that ended the probe. */
static inline void pc_htab_insert(pc_htab *t, const pc_probe *p, uint32_t id)
{
    t->slot[p->i] = (uint64_t)p->tag << 32 | ((uint64_t)id + 1);
    t->used++;
}

#endif
