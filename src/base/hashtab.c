#include "base/hashtab.h"

#include "base/grow.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

_Atomic uint64_t pc_hash_key_value;

uint64_t pc_hash_key_init(void)
{
    uint64_t k = 0;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd >= 0) {
        if (read(fd, &k, sizeof k) != (ssize_t)sizeof k)
            k = 0;
        close(fd);
    }
    /* Without the device, what differs between runs: time, process id
     * and where the system placed this process. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    k ^= pc_mix64((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^
                  (uint64_t)getpid() << 20 ^ (uint64_t)(uintptr_t)&k);
    if (!k)
        k = 1;
    /* The first key set wins, so every thread hashes alike. */
    uint64_t none = 0;
    if (!atomic_compare_exchange_strong(&pc_hash_key_value, &none, k))
        k = none;
    return k;
}

int pc_htab_grow(pc_htab *t, size_t n)
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
    /* Entries land all over the table, so every page of it is written
     * soon: mapped in one call rather than a fault each. */
    pc_prefault(slot, 0, ncap * sizeof *slot);
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
    uint64_t h = pc_hash_key() ^ len;
    if (len >= 32) {
        /* Four lanes, whose multiplications do not wait on each other:
         * long strings (simpleperf's caller paths) hash at several times
         * the speed of one chain. */
        uint64_t a = h, b = h ^ 0x9e3779b97f4a7c15ULL, c = h ^ 0xbf58476d1ce4e5b9ULL,
                 d = h ^ 0x94d049bb133111ebULL;
        do {
            uint64_t w[4];
            memcpy(w, p, 32);
            a = (a ^ w[0]) * 0xff51afd7ed558ccdULL;
            b = (b ^ w[1]) * 0xff51afd7ed558ccdULL;
            c = (c ^ w[2]) * 0xff51afd7ed558ccdULL;
            d = (d ^ w[3]) * 0xff51afd7ed558ccdULL;
            a ^= a >> 29;
            b ^= b >> 29;
            c ^= c >> 29;
            d ^= d >> 29;
            p += 32;
            len -= 32;
        } while (len >= 32);
        h = pc_mix64(a) ^ pc_mix64(b + 1) * 3 ^ pc_mix64(c + 2) * 5 ^ pc_mix64(d + 3) * 7;
    }
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
