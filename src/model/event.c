/* Event types: each with the unit its weights count and whether it is
 * off-CPU time, as the reader that knows says (pc_event). */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

uint32_t pc_event(pc_profile *p, uint32_t name, int unit, int offcpu)
{
    if (p->oom || name == PC_NONE)
        return PC_NONE;
    /* Recordings name a handful of events: a scan is enough. */
    for (size_t e = 0; e < p->event.n; e++)
        if (p->event.name[e] == name)
            return (uint32_t)e;
    return pc_event_append(p, name, unit, offcpu);
}

uint32_t pc_event_append(pc_profile *p, uint32_t name, int unit, int offcpu)
{
    if (p->oom || name == PC_NONE || p->event.n >= PC_MAX_EVENTS)
        return PC_NONE;
    struct pc_col cols[] = {PC_COL(p->event.name), PC_COL(p->event.unit),
                            PC_COL(p->event.offcpu)};
    if (pc_grow_cols(&p->event.cap, p->event.n + 1, cols, 3) < 0)
        return pc_oom(p);
    size_t e = p->event.n++;
    p->event.name[e] = name;
    p->event.unit[e] = (uint8_t)unit;
    p->event.offcpu[e] = offcpu != 0;
    return (uint32_t)e;
}

int pc_perf_clock_event(const char *name)
{
    size_t n = strcspn(name, ":");
    return (n == 9 && memcmp(name, "cpu-clock", 9) == 0) ||
           (n == 10 && memcmp(name, "task-clock", 10) == 0);
}

int pc_has_offcpu_events(const pc_profile *p)
{
    for (size_t e = 0; e < p->event.n; e++)
        if (p->event.offcpu[e])
            return 1;
    return 0;
}
