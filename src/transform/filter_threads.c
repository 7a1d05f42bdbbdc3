/* Thread filters and thread aggregation, with simpleperf's semantics
 * (RecordFilter and ThreadReportBuilder in simpleperf's sources; the
 * time filters are in filter_time.c):
 *   - each kind of filter (pid, tid, process name, thread name) keeps a
 *     thread when it matches one of the included values, if any are given,
 *     and none of the excluded ones; kinds combine with "and";
 *   - names are regular expressions searched anywhere in the name; a
 *     process's name is its main thread's (tid == pid), and a process
 *     without one fails every process-name filter;
 *   - aggregation merges the threads whose whole name matches the same
 *     expression into one thread named by the expression, with the pid and
 *     tid of the first of them.
 */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "transform/transform.h"

/* Compiled expressions of one option. */
typedef struct regs {
    regex_t *re;
    size_t n;
} regs;

static void regs_free(regs *r)
{
    for (size_t i = 0; i < r->n; i++)
        regfree(&r->re[i]);
    free(r->re);
    r->re = NULL;
    r->n = 0;
}

static int regs_compile(regs *r, const pc_strings *s, const char *option,
                        int whole, pc_error *err)
{
    r->n = 0;
    r->re = calloc(s->n + 1, sizeof *r->re);
    if (!r->re)
        return pc_nomem(err);
    for (size_t i = 0; i < s->n; i++) {
        char *pattern = NULL;
        const char *src = s->items[i];
        if (whole) {
            size_t n = strlen(src) + 5;
            if (!(pattern = malloc(n)))
                return pc_nomem(err);
            snprintf(pattern, n, "^(%s)$", src);
        }
        int e = regcomp(&r->re[i], whole ? pattern : src, REG_EXTENDED | REG_NOSUB);
        free(pattern);
        if (e) {
            char why[128];
            regerror(e, &r->re[i], why, sizeof why);
            return pc_fail(err, PC_EUSAGE, "%s '%s': %s", option, src, why);
        }
        r->n++;
    }
    return PC_OK;
}

static int regs_search(const regs *r, const char *s)
{
    for (size_t i = 0; i < r->n; i++)
        if (regexec(&r->re[i], s, 0, NULL, 0) == 0)
            return 1;
    return 0;
}

static int has_id(const pc_ids *ids, int64_t v)
{
    for (size_t i = 0; i < ids->n; i++)
        if (ids->items[i] == v)
            return 1;
    return 0;
}

static int id_ok(const pc_ids *inc, const pc_ids *exc, int64_t v)
{
    return (!inc->n || has_id(inc, v)) && !has_id(exc, v);
}

static int name_ok(const regs *inc, const regs *exc, const char *name)
{
    return (!inc->n || regs_search(inc, name)) && !regs_search(exc, name);
}

int pc_filter_threads(pc_profile *p, const pc_options *o, pc_error *err)
{
    int by_name = o->process_names.n || o->exclude_process_names.n ||
                  o->thread_names.n || o->exclude_thread_names.n;
    if (!o->pids.n && !o->exclude_pids.n && !o->tids.n && !o->exclude_tids.n &&
        !by_name)
        return PC_OK;
    regs pinc = {0}, pexc = {0}, tinc = {0}, texc = {0};
    uint32_t *to = malloc((p->thread.n + 1) * sizeof *to);
    uint32_t *order = malloc((p->thread.n + 1) * sizeof *order);
    uint32_t *main_of = malloc((p->thread.n + 1) * sizeof *main_of);
    int st = to && order && main_of ? PC_OK : pc_nomem(err);
    if (st == PC_OK)
        st = regs_compile(&pinc, &o->process_names, "options.process_names", 0, err);
    if (st == PC_OK)
        st = regs_compile(&pexc, &o->exclude_process_names, "options.exclude_process_names", 0, err);
    if (st == PC_OK)
        st = regs_compile(&tinc, &o->thread_names, "options.thread_names", 0, err);
    if (st == PC_OK)
        st = regs_compile(&texc, &o->exclude_thread_names, "options.exclude_thread_names", 0, err);
    if (st == PC_OK) {
        size_t kept = 0;
        pc_thread_order(p, order, main_of);
        for (size_t t = 0; t < p->thread.n; t++) {
            int keep = id_ok(&o->pids, &o->exclude_pids, p->thread.pid[t]) &&
                       id_ok(&o->tids, &o->exclude_tids, p->thread.tid[t]);
            if (keep && (o->process_names.n || o->exclude_process_names.n))
                keep = main_of[t] != PC_NONE &&
                       name_ok(&pinc, &pexc, pc_str(&p->str, p->thread.name[main_of[t]]));
            if (keep && (o->thread_names.n || o->exclude_thread_names.n))
                keep = name_ok(&tinc, &texc, pc_str(&p->str, p->thread.name[t]));
            to[t] = keep ? (uint32_t)t : PC_NONE;
            kept += keep;
        }
        pc_log(o, PC_LOG_INFO, "filters keep %zu of %zu threads", kept, p->thread.n);
        if (pc_remap_threads(p, to) < 0)
            st = pc_nomem(err);
    }
    regs_free(&pinc);
    regs_free(&pexc);
    regs_free(&tinc);
    regs_free(&texc);
    free(to);
    free(order);
    free(main_of);
    return st;
}

int pc_aggregate_threads(pc_profile *p, const pc_options *o, pc_error *err)
{
    if (!o->aggregate_threads.n)
        return PC_OK;
    regs r = {0};
    int st = regs_compile(&r, &o->aggregate_threads, "options.aggregate_threads", 1, err);
    uint32_t *to = malloc((p->thread.n + 1) * sizeof *to);
    uint32_t *first = malloc((r.n + 1) * sizeof *first);
    if (st == PC_OK && (!to || !first))
        st = pc_nomem(err);
    for (size_t k = 0; st == PC_OK && k < r.n; k++)
        first[k] = PC_NONE;
    for (size_t t = 0; st == PC_OK && t < p->thread.n; t++) {
        const char *name = pc_str(&p->str, p->thread.name[t]);
        size_t k = 0;
        while (k < r.n && regexec(&r.re[k], name, 0, NULL, 0) != 0)
            k++;
        to[t] = (uint32_t)t;
        if (k == r.n)
            continue;
        if (first[k] == PC_NONE) {
            /* The merged thread is named by the expression. */
            first[k] = (uint32_t)t;
            p->thread.name[t] = pc_intern_cstr(p, o->aggregate_threads.items[k]);
        }
        to[t] = first[k];
    }
    if (st == PC_OK && (p->oom || pc_remap_threads(p, to) < 0))
        st = pc_nomem(err);
    regs_free(&r);
    free(to);
    free(first);
    return st;
}
