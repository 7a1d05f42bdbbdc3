/* One thread per CPU (pc_percpu). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "transform/transform.h"

int pc_percpu(pc_profile *p, const pc_options *o, pc_error *err)
{
    if (!o->percpu)
        return PC_OK;
    /* Samples and counter values with a CPU number move to that CPU's
     * thread: a counter read per CPU is what the CPU did. */
    size_t n_cpu = 0, known = 0, rows = p->sample.n + p->counter.n;
    for (size_t i = 0; i < rows; i++) {
        uint16_t c = i < p->sample.n ? pc_sample_cpu(p, i) : p->counter.cpu[i - p->sample.n];
        if (c != PC_NO_CPU) {
            known++;
            if ((size_t)c + 1 > n_cpu)
                n_cpu = (size_t)c + 1;
        }
    }
    if (!known)
        return pc_fail(err, PC_EINPUT, "options.percpu: this input carries no CPU numbers "
                       "(simpleperf report-sample files and Chrome samples have none)");
    if (known < rows)
        pc_log(o, PC_LOG_WARN, "options.percpu: %zu samples or counter values without a CPU "
               "number stay on their threads", rows - known);
    uint32_t *cpu_thread = malloc(n_cpu * sizeof *cpu_thread);
    if (!cpu_thread)
        return pc_nomem(err);
    for (size_t c = 0; c < n_cpu; c++)
        cpu_thread[c] = PC_NONE;
    /* The CPUs form a process of their own, pid -1, one thread each. */
    uint32_t pname = pc_intern_cstr(p, "CPUs");
    pc_set_process_name(p, -1, pname);
    pc_tally_drop(p);
    /* Room in the thread column for a thread per CPU. */
    if (pc_sample_fit_threads(p, (uint32_t)(p->thread.n + n_cpu)) < 0) {
        free(cpu_thread);
        return pc_nomem(err);
    }
    for (size_t i = 0; i < rows; i++) {
        uint16_t c = i < p->sample.n ? pc_sample_cpu(p, i) : p->counter.cpu[i - p->sample.n];
        if (c == PC_NO_CPU)
            continue;
        if (cpu_thread[c] == PC_NONE) {
            char name[32];
            snprintf(name, sizeof name, "CPU %u", (unsigned)c);
            cpu_thread[c] = pc_add_thread(p, -1, c, pc_intern_cstr(p, name));
        }
        if (i < p->sample.n)
            pc_sample_set_thread(p, i, cpu_thread[c]);
        else
            p->counter.thread[i - p->sample.n] = cpu_thread[c];
    }
    free(cpu_thread);
    if (p->oom)
        return pc_nomem(err);
    /* Threads left with nothing to show go. */
    size_t nt = p->thread.n;
    uint32_t *to = malloc((nt + 1) * sizeof *to);
    uint8_t *busy = calloc(nt + 1, 1);
    if (!to || !busy) {
        free(to);
        free(busy);
        return pc_nomem(err);
    }
    for (size_t i = 0; i < p->sample.n; i++)
        busy[pc_sample_thread(p, i)] = 1;
    for (size_t i = 0; i < p->heap.n; i++)
        busy[p->heap.thread[i]] = 1;
    for (size_t i = 0; i < p->marker.n; i++)
        busy[p->marker.thread[i]] = 1;
    for (size_t i = 0; i < p->counter.n; i++)
        busy[p->counter.thread[i]] = 1;
    for (size_t t = 0; t < nt; t++)
        to[t] = busy[t] ? (uint32_t)t : PC_NONE;
    int st = pc_remap_threads(p, to);
    free(to);
    free(busy);
    return st < 0 ? pc_nomem(err) : PC_OK;
}
