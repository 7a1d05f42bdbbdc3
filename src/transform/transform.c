#include "transform/transform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

static int nomem(pc_error *err)
{
    return pc_fail(err, PC_ENOMEM, "out of memory");
}

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
    if (pc_has_offcpu_events(p) && !o->event)
        return PC_OK;
    size_t *count = calloc(ne, sizeof *count);
    uint8_t *keep_ev = calloc(ne, 1);
    if (!count || !keep_ev) {
        free(count);
        free(keep_ev);
        return nomem(err);
    }
    for (size_t i = 0; i < p->sample.n; i++)
        count[p->sample.event[i]]++;

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
    pc_log(o, PC_LOG_INFO, "%s", msg);

    int st = PC_OK;
    if (left) {
        uint8_t *keep = malloc(p->sample.n ? p->sample.n : 1);
        if (!keep) {
            st = nomem(err);
        } else {
            for (size_t i = 0; i < p->sample.n; i++)
                keep[i] = keep_ev[p->sample.event[i]];
            pc_keep_samples(p, keep);
            free(keep);
        }
    }
    free(count);
    free(keep_ev);
    return st;
}

/* complete[s] is 1 when stack s holds a thread entry point. */
static uint8_t *complete_stacks(const pc_profile *p)
{
    uint8_t *func_start = calloc(p->func.n + 1, 1);
    uint8_t *complete = malloc(p->stack.n + 1);
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
        complete[s] = (pre != PC_NONE && complete[pre]) ||
                      (fn != PC_NONE && func_start[fn]);
    }
    free(func_start);
    return complete;
}

int pc_remove_gaps(pc_profile *p, int max_gap, const pc_options *o,
                   pc_error *err)
{
    if (max_gap <= 0 || p->sample.n == 0)
        return PC_OK;
    uint8_t *complete = complete_stacks(p);
    uint8_t *keep = malloc(p->sample.n);
    if (!complete || !keep) {
        free(complete);
        free(keep);
        return nomem(err);
    }
    memset(keep, 1, p->sample.n);
    size_t removed = 0, spared = 0;
    for (size_t t = 0; t < p->thread.n; t++) {
        size_t a = p->sample.first[t], b = p->sample.first[t + 1];
        int any = 0;
        for (size_t i = a; i < b && !any; i++)
            any = p->sample.stack[i] != PC_NONE && complete[p->sample.stack[i]];
        if (!any) {
            /* glibc programs never reach a bionic entry point: every
             * stack looks incomplete, and none is a gap. */
            spared += b > a;
            continue;
        }
        for (size_t i = a; i < b;) {
            if (p->sample.stack[i] != PC_NONE && complete[p->sample.stack[i]]) {
                i++;
                continue;
            }
            size_t j = i;
            while (j < b && !(p->sample.stack[j] != PC_NONE &&
                              complete[p->sample.stack[j]]))
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

int pc_switch_markers(pc_profile *p, const pc_options *o, pc_error *err)
{
    size_t n = p->sw.n, nt = p->thread.n;
    if (!n || !o->switch_markers)
        return PC_OK;
    uint32_t *perm;
    size_t *first;
    if (pc_order_switches(p, &perm, &first) < 0)
        return nomem(err);
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
    return p->oom ? nomem(err) : PC_OK;
}

int pc_percpu(pc_profile *p, const pc_options *o, pc_error *err)
{
    if (!o->percpu)
        return PC_OK;
    size_t n_cpu = 0, known = 0;
    for (size_t i = 0; i < p->sample.n; i++)
        if (p->sample.cpu[i] != PC_NO_CPU) {
            known++;
            if ((size_t)p->sample.cpu[i] + 1 > n_cpu)
                n_cpu = (size_t)p->sample.cpu[i] + 1;
        }
    if (!known)
        return pc_fail(err, PC_EINPUT, "options.percpu: this input carries no CPU numbers "
                       "(simpleperf report-sample files and Chrome samples have none)");
    if (known < p->sample.n)
        pc_log(o, PC_LOG_WARN, "options.percpu: %zu samples without a CPU number stay on "
               "their threads", p->sample.n - known);
    uint32_t *cpu_thread = malloc(n_cpu * sizeof *cpu_thread);
    if (!cpu_thread)
        return nomem(err);
    for (size_t c = 0; c < n_cpu; c++)
        cpu_thread[c] = PC_NONE;
    /* The CPUs form a process of their own, pid -1, one thread each. */
    uint32_t pname = pc_intern_cstr(p, "CPUs");
    pc_set_process_name(p, -1, pname);
    for (size_t i = 0; i < p->sample.n; i++) {
        uint16_t c = p->sample.cpu[i];
        if (c == PC_NO_CPU)
            continue;
        if (cpu_thread[c] == PC_NONE) {
            char name[32];
            snprintf(name, sizeof name, "CPU %u", (unsigned)c);
            cpu_thread[c] = pc_add_thread(p, -1, c, pc_intern_cstr(p, name));
        }
        p->sample.thread[i] = cpu_thread[c];
    }
    free(cpu_thread);
    if (p->oom)
        return nomem(err);
    /* Threads left with nothing to show go. */
    size_t nt = p->thread.n;
    uint32_t *to = malloc((nt + 1) * sizeof *to);
    uint8_t *busy = calloc(nt + 1, 1);
    if (!to || !busy) {
        free(to);
        free(busy);
        return nomem(err);
    }
    for (size_t i = 0; i < p->sample.n; i++)
        busy[p->sample.thread[i]] = 1;
    for (size_t i = 0; i < p->heap.n; i++)
        busy[p->heap.thread[i]] = 1;
    for (size_t i = 0; i < p->marker.n; i++)
        busy[p->marker.thread[i]] = 1;
    for (size_t t = 0; t < nt; t++)
        to[t] = busy[t] ? (uint32_t)t : PC_NONE;
    int st = pc_remap_threads(p, to);
    free(to);
    free(busy);
    return st < 0 ? nomem(err) : PC_OK;
}
