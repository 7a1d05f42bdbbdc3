/* Samples summed per (thread, stack, key) (see sums.h). */
#include <stdlib.h>

#include "model/model.h"
#include "write/sums.h"

int pc_sums_add(pc_sums *s, uint32_t thread, uint32_t stack, uint32_t key, int64_t count,
                int64_t weight)
{
    pc_probe pr;
    if (pc_htab_reserve(&s->idx, s->n + 1) < 0)
        return -1;
    uint64_t h = ((uint64_t)thread << 32 | stack) ^ (uint64_t)key * 0x9e3779b97f4a7c15ULL;
    pc_probe_start(&s->idx, pc_mix64(h), &pr);
    for (uint32_t i; (i = pc_probe_next(&s->idx, &pr)) != PC_NONE;)
        if (s->stack[i] == stack && s->thread[i] == thread && s->key[i] == key) {
            s->count[i] = pc_sat_add(s->count[i], count);
            s->weight[i] = pc_sat_add(s->weight[i], weight);
            return 0;
        }
    struct pc_col cols[] = {PC_COL(s->thread), PC_COL(s->stack), PC_COL(s->key),
                            PC_COL(s->count), PC_COL(s->weight)};
    if (pc_grow_cols(&s->cap, s->n + 1, cols, 5) < 0)
        return -1;
    s->thread[s->n] = thread;
    s->stack[s->n] = stack;
    s->key[s->n] = key;
    s->count[s->n] = count;
    s->weight[s->n] = weight;
    pc_htab_insert(&s->idx, &pr, (uint32_t)s->n++);
    return 0;
}

void pc_sums_free(pc_sums *s)
{
    free(s->thread);
    free(s->stack);
    free(s->key);
    free(s->count);
    free(s->weight);
    pc_htab_free(&s->idx);
}
