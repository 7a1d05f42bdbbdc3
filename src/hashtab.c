#include "hashtab.h"

#include <stdlib.h>
#include <string.h>

int pc_htab_reserve(pc_htab *t, size_t n)
{
    size_t cap = t->slot ? t->mask + 1 : 0;
    if (n <= cap / 2)
        return 0;
    size_t ncap = cap ? cap : 16;
    while (n > ncap / 2) {
        if (ncap > SIZE_MAX / 2 / sizeof(uint64_t))
            return -1;
        ncap *= 2;
    }
    uint64_t *slot = calloc(ncap, sizeof *slot);
    if (!slot)
        return -1;
    size_t mask = ncap - 1;
    for (size_t i = 0; i < cap; i++) {
        uint64_t s = t->slot[i];
        if (!s)
            continue;
        size_t j = (uint32_t)(s >> 32) & mask;
        while (slot[j])
            j = (j + 1) & mask;
        slot[j] = s;
    }
    free(t->slot);
    t->slot = slot;
    t->mask = mask;
    return 0;
}

void pc_htab_free(pc_htab *t)
{
    free(t->slot);
    memset(t, 0, sizeof *t);
}

uint64_t pc_hash_bytes(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ len;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 29;
        p += 8;
        len -= 8;
    }
    uint64_t w = 0;
    if (len)
        memcpy(&w, p, len);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    return pc_mix64(h);
}
