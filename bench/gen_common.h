/* What the input generators share: random numbers (xorshift64*, fast and
 * the same sequence on every machine, so a generator's output depends on
 * its options alone; each generator is one file, with its own state) and
 * their numeric options. */
#ifndef PROFCONV_BENCH_GEN_COMMON_H
#define PROFCONV_BENCH_GEN_COMMON_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long rng_state;

static inline unsigned long long rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

/* Uniform in [0, n), n > 0. */
static inline long below(long n)
{
    return (long)(rnd() % (unsigned long long)n);
}

/* A numeric option: --name N, with N >= 1. */
typedef struct gen_numopt {
    const char *name;
    long *target;
} gen_numopt;

/* Sets the option named arg from value: 1 when done, 0 when arg is none
 * of them, -1 when the value is no number >= 1. */
static inline int gen_number(const gen_numopt *opts, size_t n, const char *arg,
                             const char *value)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(arg, opts[i].name) != 0)
            continue;
        char *end;
        errno = 0;
        long v = strtol(value, &end, 10);
        if (errno || *end || end == value || v < 1)
            return -1;
        *opts[i].target = v;
        return 1;
    }
    return 0;
}

#endif
