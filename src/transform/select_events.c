/* Choosing the event type whose samples are shown (pc_select_events). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "transform/transform.h"

/* Appends "name (N samples)" items to buf for each event with keep == want. */
static void list_events(const pc_profile *p, const size_t *count,
                        const uint8_t *keep, int want, char *buf, size_t size)
{
    size_t used = strlen(buf);
    int first = 1;
    for (size_t e = 0; e < p->event.n && used + 1 < size; e++) {
        if (keep[e] != want)
            continue;
        int n = snprintf(buf + used, size - used, "%s%s (%zu samples)",
                         first ? "" : ", ", pc_str(&p->str, p->event.name[e]),
                         count[e]);
        if (n < 0)
            break;
        used += (size_t)n;
        first = 0;
    }
}

int pc_select_events(pc_profile *p, const pc_options *o, pc_error *err)
{
    size_t ne = p->event.n;
    if (ne == 0) {
        if (o->event)
            return pc_fail(err, PC_EUSAGE, "options.event %s: the recording names no "
                           "event types", o->event);
        return PC_OK;
    }
    /* No samples, no choice (counters keep every event). */
    if ((pc_has_offcpu_events(p) || !p->sample.n) && !o->event)
        return PC_OK;
    size_t *count = calloc(ne, sizeof *count);
    uint8_t *keep_ev = calloc(ne, 1);
    if (!count || !keep_ev) {
        free(count);
        free(keep_ev);
        return pc_nomem(err);
    }
    /* A column of one event has no block to count through. */
    if (p->sample.event.size == 0) {
        if (p->sample.n)
            count[pc_sample_event(p, 0)] = p->sample.n;
    } else {
        for (size_t i = 0; i < p->sample.n; i++)
            count[pc_sample_event(p, i)]++;
    }

    size_t chosen = ne;
    if (o->event) {
        for (size_t e = 0; e < ne && chosen == ne; e++)
            if (strcmp(pc_str(&p->str, p->event.name[e]), o->event) == 0)
                chosen = e;
        if (chosen == ne) {
            char names[512] = "";
            memset(keep_ev, 1, ne);
            list_events(p, count, keep_ev, 1, names, sizeof names);
            free(count);
            free(keep_ev);
            return pc_fail(err, PC_EUSAGE, "options.event %s: no such event in this "
                           "recording (it has %s)", o->event, names);
        }
    } else {
        chosen = 0;
        for (size_t e = 0; e < ne; e++)
            if (count[e]) {
                chosen = e;
                break;
            }
    }
    keep_ev[chosen] = 1;
    p->meta.kept_events_all = 0;
    p->meta.kept_event = (uint32_t)chosen;

    /* Events with no samples (counters' alone) are no choice: marked 2,
     * neither kept nor left out. */
    for (size_t e = 0; e < ne; e++)
        if (!count[e] && !keep_ev[e])
            keep_ev[e] = 2;

    char msg[1024];
    snprintf(msg, sizeof msg, "using event: ");
    list_events(p, count, keep_ev, 1, msg, sizeof msg);
    int left = 0;
    for (size_t e = 0; e < ne; e++)
        left |= !keep_ev[e];
    if (left) {
        size_t used = strlen(msg);
        snprintf(msg + used, sizeof msg - used, "; left out: ");
        list_events(p, count, keep_ev, 0, msg, sizeof msg);
        used = strlen(msg);
        snprintf(msg + used, sizeof msg - used, " (choose with options.event NAME)");
    }
    pc_log(o, left ? PC_LOG_NOTICE : PC_LOG_INFO, "%s", msg);

    int st = PC_OK;
    if (left) {
        uint8_t *keep = malloc(p->sample.n ? p->sample.n : 1);
        if (!keep) {
            st = pc_nomem(err);
        } else {
            for (size_t i = 0; i < p->sample.n; i++)
                keep[i] = keep_ev[pc_sample_event(p, i)] == 1;
            pc_keep_samples(p, keep);
            free(keep);
        }
    }
    free(count);
    free(keep_ev);
    return st;
}
