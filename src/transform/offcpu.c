/* Off-CPU time for recordings made with simpleperf --trace-offcpu
 * (doc/formats/simpleperf.md, "Off-CPU recordings").
 *
 * Such a recording holds on-CPU samples (cpu-clock or task-clock, whose
 * period is their weight) and sched:sched_switch samples taken when a
 * thread leaves the CPU.  An off-CPU sample lasts until the thread's next
 * sample or its next switch back onto a CPU, whichever comes first.
 * simpleperf's readers pair events in file order, which goes wrong when
 * every switch record precedes the samples (glibc recordings), and drop
 * the samples still pending at the end; here each thread's samples and
 * switches are merged by time, and a pending sample lasts until the
 * recording's last event.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "transform/transform.h"

/* is_off[e] is 1 for the off-CPU event types. */
static uint8_t *off_events(const pc_profile *p, size_t *n_off)
{
    uint8_t *is_off = calloc(p->event.n + 1, 1);
    *n_off = 0;
    for (size_t e = 0; is_off && e < p->event.n; e++) {
        is_off[e] = p->event.offcpu[e];
        *n_off += is_off[e];
    }
    return is_off;
}

/* Sets the weight of every off-CPU sample to its duration. */
static int durations(pc_profile *p, const uint8_t *is_off, const pc_options *o,
                     pc_error *err)
{
    size_t nt = p->thread.n, nsw = p->sw.n;
    uint32_t *perm;
    size_t *first;
    if (pc_sample_own_weights(p) < 0 || pc_order_switches(p, &perm, &first) < 0)
        return pc_nomem(err);
    uint64_t end = pc_end_time(p);

    /* next_on[k]: time of the first switch onto a CPU at position k or
     * later in its thread's time order. */
    uint64_t *next_on = malloc((nsw + 1) * sizeof *next_on);
    if (!next_on) {
        free(perm);
        free(first);
        return pc_nomem(err);
    }
    for (size_t t = 0; t < nt; t++) {
        uint64_t next = UINT64_MAX;
        for (size_t k = first[t + 1]; k-- > first[t];) {
            if (p->sw.on[perm[k]])
                next = p->sw.time[perm[k]];
            next_on[k] = next;
        }
    }

    size_t off = 0, pending = 0;
    for (size_t t = 0; t < nt; t++) {
        size_t k = first[t];  /* the first switch of t after the sample */
        for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++) {
            if (!is_off[pc_sample_event(p, i)])
                continue;
            uint64_t t0 = pc_sample_time(p, i);
            /* A switch at the sample's own instant is the switch out. */
            while (k < first[t + 1] && p->sw.time[perm[k]] <= t0)
                k++;
            uint64_t next = k < first[t + 1] ? next_on[k] : UINT64_MAX;
            if (i + 1 < p->sample.first[t + 1] && pc_sample_time(p, i + 1) < next)
                next = pc_sample_time(p, i + 1);
            if (next == UINT64_MAX) {
                next = end;
                pending++;
            }
            /* A wait longer than the weights hold weighs their most. */
            pc_sample_set_weight(p, i, next <= t0                ? 1
                                       : next - t0 > INT64_MAX ? INT64_MAX
                                                                 : (int64_t)(next - t0));
            off++;
        }
    }
    if (pending)
        pc_log(o, PC_LOG_INFO, "%zu of %zu off-CPU samples were still pending at "
               "the end of the recording; they last until its last event", pending,
               off);
    free(next_on);
    free(perm);
    free(first);
    return PC_OK;
}

/* Gives each off-CPU sample a leaf in the off-CPU category: a copy of its
 * leaf frame, so that what the thread waited in keeps its name while the
 * viewers colour and count the time as spent off the CPU.  Kernel symbols
 * (__schedule) are rarely there to tell; the event always is.  The copy
 * runs natively: no JIT folding takes it for its caller's.  The work is
 * per distinct stack, not per sample. */
static int offcpu_leaves(pc_profile *p, const uint8_t *is_off, pc_error *err)
{
    size_t ns = p->stack.n, nf = p->frame.n;
    uint32_t *stack_to = malloc((ns + 1) * sizeof *stack_to);
    uint32_t *frame_to = malloc((nf + 1) * sizeof *frame_to);
    if (!stack_to || !frame_to) {
        free(stack_to);
        free(frame_to);
        return pc_nomem(err);
    }
    memset(stack_to, 0xff, (ns + 1) * sizeof *stack_to);
    memset(frame_to, 0xff, (nf + 1) * sizeof *frame_to);
    for (size_t i = 0; i < p->sample.n && !p->oom; i++) {
        uint32_t s = p->sample.stack[i];
        if (!is_off[pc_sample_event(p, i)] || s == PC_NONE || s >= ns)
            continue;
        if (stack_to[s] == PC_NONE) {
            uint32_t f = p->stack.frame[s], pre = p->stack.prefix[s];
            if (frame_to[f] == PC_NONE)
                frame_to[f] = pc_add_frame(p, p->frame.func[f], p->frame.addr[f],
                                           PC_CAT_OFFCPU, PC_EXEC_NATIVE);
            stack_to[s] = pc_stack(p, pre, frame_to[f]);
        }
        p->sample.stack[i] = stack_to[s];
    }
    free(stack_to);
    free(frame_to);
    return p->oom ? pc_nomem(err) : PC_OK;
}

static const char *mode_name(int mode)
{
    switch (mode) {
    case PC_OFFCPU_ON: return "on-cpu";
    case PC_OFFCPU_OFF: return "off-cpu";
    case PC_OFFCPU_ON_OFF: return "on-off-cpu";
    default: return "mixed-on-off-cpu";
    }
}

int pc_offcpu(pc_profile *p, const pc_options *o, pc_error *err)
{
    size_t n_off;
    if (!pc_has_offcpu_events(p)) {
        if (o->offcpu != PC_OFFCPU_DEFAULT)
            return pc_fail(err, PC_EUSAGE, "options.offcpu: this recording has no "
                           "off-CPU samples (simpleperf record made it without --trace-offcpu)");
        return PC_OK;
    }
    if (o->offcpu != PC_OFFCPU_DEFAULT && o->event)
        return pc_fail(err, PC_EUSAGE, "options.offcpu and options.event cannot be "
                       "used together");
    uint8_t *is_off = off_events(p, &n_off);
    if (!is_off)
        return pc_nomem(err);
    int st = durations(p, is_off, o, err);
    if (st != PC_OK || o->event) {
        free(is_off);
        return st;
    }
    int mode = o->offcpu == PC_OFFCPU_DEFAULT ? PC_OFFCPU_MIXED : o->offcpu;
    size_t kept = 0, left = 0;
    uint8_t *keep = malloc(p->sample.n + 1);
    if (!keep) {
        free(is_off);
        return pc_nomem(err);
    }
    for (size_t i = 0; i < p->sample.n; i++) {
        int off = is_off[pc_sample_event(p, i)];
        keep[i] = mode == PC_OFFCPU_ON ? !off : mode == PC_OFFCPU_OFF ? off : 1;
        kept += keep[i];
        left += !keep[i];
    }
    pc_keep_samples(p, keep);
    p->meta.offcpu_mode = mode;
    /* The events shown: both, or the one the mode keeps. */
    p->meta.kept_events_all = mode == PC_OFFCPU_MIXED || mode == PC_OFFCPU_ON_OFF;
    for (size_t e = 0; e < p->event.n && !p->meta.kept_events_all; e++)
        if (is_off[e] == (mode == PC_OFFCPU_OFF)) {
            p->meta.kept_event = (uint32_t)e;
            break;
        }
    pc_log(o, PC_LOG_INFO, "off-CPU recording, %s: %zu samples kept, %zu left out "
           "(choose with options.offcpu)", mode_name(mode), kept, left);
    free(keep);
    free(is_off);
    return PC_OK;
}

int pc_offcpu_mix(pc_profile *p, pc_error *err)
{
    if (p->meta.offcpu_mode != PC_OFFCPU_MIXED)
        return PC_OK;
    size_t n_off;
    uint8_t *is_off = off_events(p, &n_off);
    if (!is_off)
        return pc_nomem(err);
    int st = offcpu_leaves(p, is_off, err);
    /* One timeline under the first event type. */
    if (st == PC_OK) {
        free(p->sample.event.p);
        p->sample.event = (pc_icol){.p = NULL};
    }
    free(is_off);
    return st;
}
