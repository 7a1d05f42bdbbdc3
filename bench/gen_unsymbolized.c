/* gen-unsymbolized: a Perfetto traced_perf trace whose frames carry no
 * names, only rel_pc in one real library named by its build id, as
 * traced_perf writes on user builds; what --symbols has to name.
 *
 *   gen-unsymbolized --build-id HEX --text START:END [--frames N]
 *                    [--samples N] [--depth N] [--seed N] -o FILE
 *
 * Frames are N distinct addresses spread over [START, END) (the library's
 * executable segment, as readelf gives it); each sample's callstack is
 * `depth` of them, chosen from a fixed set of callstacks so that the
 * trace is what a real recording's size and reuse look like. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_encode.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int hex_bytes(const char *s, uint8_t *out, size_t cap)
{
    size_t n = strlen(s);
    if (n % 2 || n / 2 > cap)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return (int)(n / 2);
}

int main(int argc, char **argv)
{
    const char *out = NULL, *bid_hex = NULL;
    unsigned long long start = 0, end = 0;
    long frames = 10000, samples = 1000000, depth = 12, stacks = 20000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-o") && v)
            out = v, i++;
        else if (!strcmp(a, "--build-id") && v)
            bid_hex = v, i++;
        else if (!strcmp(a, "--text") && v && sscanf(v, "%llx:%llx", &start, &end) == 2)
            i++;
        else if (!strcmp(a, "--frames") && v)
            frames = atol(v), i++;
        else if (!strcmp(a, "--samples") && v)
            samples = atol(v), i++;
        else if (!strcmp(a, "--depth") && v)
            depth = atol(v), i++;
        else if (!strcmp(a, "--seed") && v)
            rng = strtoull(v, NULL, 10) | 1, i++;
        else {
            fprintf(stderr, "usage: gen-unsymbolized --build-id HEX --text START:END "
                            "[--frames N] [--samples N] [--depth N] [--seed N] -o FILE\n");
            return 2;
        }
    }
    uint8_t bid[64];
    int blen = bid_hex ? hex_bytes(bid_hex, bid, sizeof bid) : -1;
    if (!out || blen <= 0 || end <= start || frames < 1 || depth < 1 || samples < 1) {
        fprintf(stderr, "gen-unsymbolized: -o, --build-id and --text START:END are needed\n");
        return 2;
    }
    pb_buf b = {0};
    size_t pk = pfe_packet(&b, 1);
    pb_uint(&b, PFE_FLAGS, 1);
    pb_uint(&b, PFE_TIMESTAMP, 1000);
    size_t in = pb_begin(&b, PFE_INTERNED);
    pfe_str(&b, PFE_MAPPING_PATHS, 1, "system");
    pfe_str(&b, PFE_MAPPING_PATHS, 2, "lib64");
    pfe_str(&b, PFE_MAPPING_PATHS, 3, "libbench.so");
    pfe_bytes(&b, PFE_BUILD_IDS, 1, bid, (size_t)blen);
    uint64_t path[] = {1, 2, 3};
    pfe_mapping(&b, PFE_MAPPINGS, 1, 1, path, 3);
    for (long f = 0; f < frames; f++)
        pfe_frame(&b, PFE_FRAMES, (uint64_t)f + 1, 0, 1, start + next() % (end - start));
    uint64_t *cs = malloc((size_t)depth * sizeof *cs);
    if (!cs)
        return 1;
    for (long s = 0; s < stacks; s++) {
        for (long d = 0; d < depth; d++)
            cs[d] = 1 + next() % (uint64_t)frames;
        pfe_callstack(&b, PFE_CALLSTACKS, (uint64_t)s + 1, cs, (size_t)depth, 1);
    }
    free(cs);
    pb_end(&b, in);
    pb_end(&b, pk);
    for (long i = 0; i < samples; i++) {
        pk = pfe_packet(&b, 1);
        pb_uint(&b, PFE_TIMESTAMP, 1000 + (uint64_t)i * 1000);
        pfe_perf_sample(&b, (uint32_t)(i % 2), 100, 100 + (uint32_t)(i % 4),
                        1 + next() % (uint64_t)stacks, 1);
        pb_end(&b, pk);
    }
    FILE *f = fopen(out, "wb");
    if (!f || fwrite(b.data, 1, b.len, f) != b.len || fclose(f) != 0) {
        fprintf(stderr, "gen-unsymbolized: cannot write %s\n", out);
        return 1;
    }
    pb_buf_free(&b);
    return 0;
}
