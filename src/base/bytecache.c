/* A bounded cache of values by byte string (see bytecache.h). */
#include "base/bytecache.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

enum { WINDOW = 4096, REST = 1 << 16 };

void pc_bcache_init(pc_bcache *c, size_t n_slots, size_t max_bytes)
{
    memset(c, 0, sizeof *c);
    c->n_slots = n_slots;
    c->max_bytes = max_bytes;
}

void pc_bcache_free(pc_bcache *c)
{
    free(c->slot);
    free(c->bytes);
    memset(c, 0, sizeof *c);
}

int pc_bcache_try(pc_bcache *c)
{
    if (c->off || !c->n_slots)
        return 0;
    if (c->rest) {
        c->rest--;
        return 0;
    }
    if (++c->tried == WINDOW) {
        if (c->found < WINDOW / 16)
            c->rest = REST;
        c->tried = c->found = 0;
    }
    return 1;
}

uint32_t pc_bcache_find(pc_bcache *c, uint64_t hash, const void *p, uint32_t len,
                        uint32_t tag)
{
    if (!c->slot)
        return UINT32_MAX;
    const struct pc_bcache_slot *s = &c->slot[hash & (c->n_slots - 1)];
    if (!s->at || s->hash != hash || s->len != len || s->tag != tag ||
        memcmp(c->bytes + s->at - 1, p, len) != 0)
        return UINT32_MAX;
    c->found++;
    return s->value;
}

void pc_bcache_keep(pc_bcache *c, uint64_t hash, const void *p, uint32_t len, uint32_t tag,
                    uint32_t value)
{
    if (c->off || len > c->max_bytes)
        return;
    if (!c->slot && !(c->slot = calloc(c->n_slots, sizeof *c->slot))) {
        c->off = 1;
        return;
    }
    if (c->n_bytes + len > c->max_bytes) {
        memset(c->slot, 0, c->n_slots * sizeof *c->slot);
        c->n_bytes = 0;
    }
    if (pc_grow(&c->bytes, &c->cap_bytes, c->n_bytes + len, 1, 64 << 10) < 0) {
        c->off = 1;
        return;
    }
    memcpy(c->bytes + c->n_bytes, p, len);
    c->slot[hash & (c->n_slots - 1)] =
        (struct pc_bcache_slot){hash, (uint32_t)c->n_bytes + 1, len, tag, value};
    c->n_bytes += len;
}
