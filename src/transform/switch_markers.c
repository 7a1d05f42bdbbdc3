/* On- and off-CPU interval markers from context switches
 * (pc_switch_markers). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "transform/transform.h"

int pc_switch_markers(pc_profile *p, const pc_options *o, pc_error *err)
{
    size_t n = p->sw.n, nt = p->thread.n;
    if (!n || !o->switch_markers)
        return PC_OK;
    uint32_t *perm;
    size_t *first;
    if (pc_order_switches(p, &perm, &first) < 0)
        return pc_nomem(err);
    uint64_t end = pc_end_time(p);
    uint32_t names[2] = {pc_intern_cstr(p, "On-CPU"), pc_intern_cstr(p, "Off-CPU")};
    for (size_t t = 0; t < nt; t++) {
        /* Each switch ends the interval the previous one began; repeated
         * switches the same way extend it. */
        int state = -1;  /* 1 on, 0 off, -1 unknown */
        uint64_t since = 0;
        for (size_t k = first[t]; k < first[t + 1]; k++) {
            size_t i = perm[k];
            int on = p->sw.on[i];
            if (on == state)
                continue;
            if (state >= 0 && p->sw.time[i] > since)
                pc_add_marker(p, (uint32_t)t, state ? PC_MARK_ONCPU : PC_MARK_OFFCPU,
                              names[!state], since, p->sw.time[i], PC_NONE, 0, 0);
            state = on;
            since = p->sw.time[i];
        }
        /* The last interval lasts until the recording ends. */
        if (state >= 0 && end > since)
            pc_add_marker(p, (uint32_t)t, state ? PC_MARK_ONCPU : PC_MARK_OFFCPU,
                          names[!state], since, end, PC_NONE, 0, 0);
    }
    free(perm);
    free(first);
    return p->oom ? pc_nomem(err) : PC_OK;
}
