/* Dropping short runs of incomplete stacks, as simpleperf's report
 * scripts do (pc_remove_gaps). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "transform/transform.h"

/* Bit s of the result is set when stack s holds a thread entry point.
 * A bit a stack rather than a byte: where every sample is a new stack
 * (27.8M of them), the bytes were 28 MB written for the first time. */
static uint64_t *complete_stacks(const pc_profile *p)
{
    uint8_t *func_start = calloc(p->func.n + 1, 1);
    uint64_t *complete = calloc(p->stack.n / 64 + 1, sizeof *complete);
    if (!func_start || !complete) {
        free(func_start);
        free(complete);
        return NULL;
    }
    for (size_t f = 0; f < p->func.n; f++) {
        const char *name = pc_str(&p->str, p->func.name[f]);
        func_start[f] = strcmp(name, "__libc_init") == 0 ||
                        strcmp(name, "__start_thread") == 0;
    }
    /* Prefixes come before their children, so one pass suffices. */
    for (size_t s = 0; s < p->stack.n; s++) {
        uint32_t pre = p->stack.prefix[s], fn = p->frame.func[p->stack.frame[s]];
        if ((pre != PC_NONE && complete[pre / 64] >> (pre % 64) & 1) ||
            (fn != PC_NONE && func_start[fn]))
            complete[s / 64] |= (uint64_t)1 << (s % 64);
    }
    free(func_start);
    return complete;
}

/* Whether sample i's stack is complete. */
static int sample_complete(const pc_profile *p, const uint64_t *complete, size_t i)
{
    uint32_t s = p->sample.stack[i];
    return s != PC_NONE && complete[s / 64] >> (s % 64) & 1;
}

int pc_remove_gaps(pc_profile *p, int max_gap, const pc_options *o,
                   pc_error *err)
{
    if (max_gap <= 0 || p->sample.n == 0)
        return PC_OK;
    uint64_t *complete = complete_stacks(p);
    uint8_t *keep = malloc(p->sample.n);
    if (!complete || !keep) {
        free(complete);
        free(keep);
        return pc_nomem(err);
    }
    memset(keep, 1, p->sample.n);
    size_t removed = 0, spared = 0;
    for (size_t t = 0; t < p->thread.n; t++) {
        size_t a = p->sample.first[t], b = p->sample.first[t + 1];
        int any = 0;
        for (size_t i = a; i < b && !any; i++)
            any = sample_complete(p, complete, i);
        if (!any) {
            /* glibc programs never reach a bionic entry point: every
             * stack looks incomplete, and none is a gap. */
            spared += b > a;
            continue;
        }
        for (size_t i = a; i < b;) {
            if (sample_complete(p, complete, i)) {
                i++;
                continue;
            }
            size_t j = i;
            while (j < b && !sample_complete(p, complete, j))
                j++;
            if (j - i <= (size_t)max_gap) {
                memset(keep + i, 0, j - i);
                removed += j - i;
            }
            i = j;
        }
    }
    if (removed)
        pc_keep_samples(p, keep);
    pc_log(o, PC_LOG_INFO, "removed %zu samples in gaps of at most %d "
           "incomplete stacks%s", removed, max_gap,
           spared ? " (threads with no complete stack kept whole)" : "");
    free(complete);
    free(keep);
    return PC_OK;
}
