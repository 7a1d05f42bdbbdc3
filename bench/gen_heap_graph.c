/* gen-heap-graph: a Perfetto trace holding one Java heap graph dump of
 * N objects, written as perfetto_hprof writes one: continued packets of a
 * few thousand objects each with ids as deltas, the types and their names
 * in the last packet.
 *
 *   gen-heap-graph [--objects N] [--types N] [--roots N] [--seed N] -o FILE
 *
 * The graph is mostly a tree (each object is referenced by one object
 * before it, so paths are some twenty deep, as a heap's shortest paths
 * are) with one more reference per object to anywhere, so that
 * dominators differ from parents and cycles exist; every 64th object has
 * no tree parent and may be unreachable.  An object's class mostly
 * follows from its parent's (one of the two its fields hold), so that a
 * class path stands for many objects, as in a real heap. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_common.h"
#include "pf_encode.h"

/* Objects per packet: about 150 kB each, under the 400 kB ART keeps to. */
#define PER_PACKET 4000

static int flush(pb_buf *b, FILE *f)
{
    if (b->oom || fwrite(b->data, 1, b->len, f) != b->len)
        return -1;
    b->len = 0;
    return 0;
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    long objects = 10000000, types = 2000, roots = 1000, seed = 1;
    const gen_numopt opts[] = {{"--objects", &objects}, {"--types", &types},
                               {"--roots", &roots}, {"--seed", &seed}};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int got = v ? gen_number(opts, sizeof opts / sizeof *opts, a, v) : 0;
        if (got > 0) {
            i++;
        } else if (!strcmp(a, "-o") && v) {
            out = v;
            i++;
        } else {
            fprintf(stderr, "usage: gen-heap-graph [--objects N] [--types N] [--roots N] "
                            "[--seed N] -o FILE\n");
            return 2;
        }
    }
    if (!out)
        return 2;
    rng_state = 0x9e3779b97f4a7c15ULL ^ (unsigned long long)seed;
    FILE *f = fopen(out, "wb");
    if (!f) {
        perror(out);
        return 1;
    }
    /* Each object's tree children are listed with it, so the tree edges
     * are drawn first: child c of parent[c]. */
    uint32_t *first = calloc((size_t)objects + 1, sizeof *first);
    uint32_t *kids = malloc((size_t)objects * sizeof *kids);
    uint32_t *parent = malloc((size_t)objects * sizeof *parent);
    uint32_t *type = malloc((size_t)objects * sizeof *type);
    if (!first || !kids || !parent || !type)
        return 1;
    type[0] = 0;
    for (long c = 1; c < objects; c++) {
        parent[c] = c % 64 == 0 ? UINT32_MAX : (uint32_t)below(c);
        uint32_t pt = parent[c] == UINT32_MAX ? (uint32_t)below(types) : type[parent[c]];
        type[c] = below(16) ? (uint32_t)((pt * 7 + 1 + (uint32_t)below(2)) % (uint64_t)types)
                            : (uint32_t)below(types);
        if (parent[c] != UINT32_MAX)
            first[parent[c] + 1]++;
    }
    for (long i = 0; i < objects; i++)
        first[i + 1] += first[i];
    for (long c = 1; c < objects; c++)
        if (parent[c] != UINT32_MAX)
            kids[first[parent[c]]++] = (uint32_t)c;
    for (long i = objects; i > 0; i--)
        first[i] = first[i - 1];
    first[0] = 0;
    free(parent);

    pb_buf b = {0};
    uint64_t *refs = NULL;
    size_t refs_cap = 0;
    uint64_t index = 0;
    long done = 0;
    while (done < objects || index == 0) {
        size_t pk = pfe_packet(&b, 1);
        pb_uint(&b, PFE_TIMESTAMP, 1000000000);
        long end = done + PER_PACKET < objects ? done + PER_PACKET : objects;
        int last = end == objects;
        size_t hg = pfe_heap_graph(&b, 4242, index++, !last);
        if (done == 0) {
            /* Roots: the first objects, of several kinds. */
            static const int kinds[] = {1, 3, 5, 8};
            uint64_t *ids = malloc((size_t)roots * sizeof *ids);
            for (int k = 0; ids && k < 4; k++) {
                size_t n = 0;
                for (long r = k; r < roots && r < objects; r += 4)
                    ids[n++] = 1 + (uint64_t)r;
                pfe_hg_root(&b, kinds[k], ids, n, 0);
            }
            free(ids);
        }
        for (long i = done; i < end; i++) {
            size_t n = first[i + 1] - first[i] + 1;
            if (n > refs_cap) {
                refs_cap = n * 2;
                refs = realloc(refs, refs_cap * sizeof *refs);
                if (!refs)
                    return 1;
            }
            for (size_t k = 0; k + 1 < n; k++)
                refs[k] = 1 + (uint64_t)kids[first[i] + k];
            refs[n - 1] = 1 + (uint64_t)below(objects);
            pfe_hg_obj o = {0};
            if (i == done)
                o.id = 1 + (uint64_t)i;
            else
                o.id_delta = 1;
            o.type_id = 1 + (uint64_t)type[i];
            o.self_size = 16 + 8 * (uint64_t)below(16);
            o.refs = refs;
            o.n_refs = n;
            pfe_hg_object(&b, &o);
        }
        if (last) {
            pfe_str(&b, PFE_HG_LOCATIONS, 1, "/data/app/~~abc==/com.example.bench-xyz==/base.apk");
            for (long t = 0; t < types; t++) {
                char name[64];
                snprintf(name, sizeof name, "com.example.bench.Class%ld", t);
                pfe_hg_type(&b, 1 + (uint64_t)t, name, 0, 0, 1, NULL, 0, 1);
            }
        }
        pb_end(&b, hg);
        pb_end(&b, pk);
        if (flush(&b, f) < 0) {
            fprintf(stderr, "%s: write failed\n", out);
            return 1;
        }
        done = end;
    }
    free(refs);
    free(first);
    free(kids);
    free(type);
    pb_buf_free(&b);
    if (fclose(f) != 0) {
        perror(out);
        return 1;
    }
    return 0;
}
