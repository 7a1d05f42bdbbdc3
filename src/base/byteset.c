/* A set of byte strings shared by threads (see byteset.h).
 *
 * Open addressing with linear probing over slots that are only ever
 * filled, never emptied or moved: an adder writes the string and its
 * entry, then publishes the slot with a release store, so a searcher
 * that reads the slot (acquire) sees the entry whole, and one that reads
 * it still empty only misses a string that was being added.  The table
 * is at most half full, so every probe ends at an empty slot. */
#include "base/byteset.h"

#include <stdlib.h>
#include <string.h>

enum { WINDOW = 4096, REST = 1 << 16 };

int pc_byteset_init(pc_byteset *s, uint32_t max_strings, size_t max_bytes)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    /* Offsets into the bytes are 32 bits. */
    if (max_strings > 1u << 30)
        max_strings = 1u << 30;
    if (max_bytes > UINT32_MAX)
        max_bytes = UINT32_MAX;
    size_t slots = 16;
    while (slots < 2 * (size_t)max_strings)
        slots *= 2;
    s->slot = calloc(slots, sizeof *s->slot);
    s->entry = malloc((max_strings ? max_strings : 1) * sizeof *s->entry);
    s->bytes = malloc(max_bytes ? max_bytes : 1);
    if (!s->slot || !s->entry || !s->bytes) {
        free(s->slot);
        free(s->entry);
        free(s->bytes);
        s->slot = NULL;
        s->entry = NULL;
        s->bytes = NULL;
        return -1;
    }
    s->mask = slots - 1;
    s->max_n = max_strings;
    s->max_bytes = max_bytes;
    return 0;
}

void pc_byteset_free(pc_byteset *s)
{
    free(s->slot);
    free(s->entry);
    free(s->bytes);
    pthread_mutex_destroy(&s->mu);
    memset(s, 0, sizeof *s);
}

/* The slot where probing for hash stops: the string's, or the empty one
 * where it would go; *id its id, or PC_BYTESET_NONE. */
static size_t probe(const pc_byteset *s, uint64_t hash, const void *p, uint32_t len,
                    uint32_t *id)
{
    size_t i = (size_t)hash & s->mask;
    for (;; i = (i + 1) & s->mask) {
        uint32_t v = atomic_load_explicit(&s->slot[i], memory_order_acquire);
        if (!v) {
            *id = PC_BYTESET_NONE;
            return i;
        }
        const struct pc_byteset_entry *e = &s->entry[v - 1];
        if (e->hash == hash && e->len == len && memcmp(s->bytes + e->at, p, len) == 0) {
            *id = v - 1;
            return i;
        }
    }
}

size_t pc_byteset_held(const pc_byteset *s)
{
    return atomic_load_explicit(&s->held, memory_order_relaxed);
}

void pc_byteset_prefetch(const pc_byteset *s, uint64_t hash, int step)
{
    if (!s->slot)
        return;
    _Atomic uint32_t *slot = &s->slot[(size_t)hash & s->mask];
    if (step == 0) {
        __builtin_prefetch(slot);
        return;
    }
    uint32_t v = atomic_load_explicit(slot, memory_order_acquire);
    if (!v)
        return;
    const struct pc_byteset_entry *e = &s->entry[v - 1];
    if (step == 1) {
        __builtin_prefetch(e);
        return;
    }
    if (e->hash != hash)
        return;
    const uint8_t *b = s->bytes + e->at;
    for (uint32_t k = 0; k < e->len && k < 256; k += 64)
        __builtin_prefetch(b + k);
}

uint32_t pc_byteset_find(const pc_byteset *s, uint64_t hash, const void *p, uint32_t len)
{
    uint32_t id = PC_BYTESET_NONE;
    if (s->slot)
        probe(s, hash, p, len, &id);
    return id;
}

uint32_t pc_byteset_add(pc_byteset *s, uint64_t hash, const void *p, uint32_t len)
{
    if (!s->slot)
        return PC_BYTESET_NONE;
    pthread_mutex_lock(&s->mu);
    uint32_t id;
    size_t i = probe(s, hash, p, len, &id);
    if (id == PC_BYTESET_NONE && s->n < s->max_n && len <= s->max_bytes - s->n_bytes) {
        id = s->n++;
        memcpy(s->bytes + s->n_bytes, p, len);
        s->entry[id] = (struct pc_byteset_entry){hash, (uint32_t)s->n_bytes, len};
        s->n_bytes += len;
        atomic_store_explicit(&s->held, s->n_bytes, memory_order_relaxed);
        atomic_store_explicit(&s->slot[i], id + 1, memory_order_release);
    }
    pthread_mutex_unlock(&s->mu);
    return id;
}

int pc_hitgate_try(pc_hitgate *g)
{
    if (g->rest) {
        g->rest--;
        return 0;
    }
    if (++g->tried == WINDOW) {
        if (g->found < WINDOW / 16)
            g->rest = REST;
        g->tried = g->found = 0;
    }
    return 1;
}
