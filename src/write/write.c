/* The public output entry points: options checked, the format's row found
 * in the table, its writer run into a file or memory sink. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/sink.h"
#include "write/formats.h"
#include "write/write.h"

void pc_write_options_init(pc_write_options *o)
{
    memset(o, 0, sizeof *o);
    o->format = PC_FORMAT_FIREFOX;
    o->gzip_level = 1;
    o->folded_prefix = PC_FOLDED_THREAD;
    o->pprof_pid = -1;
}

/* NULL options mean the defaults; values out of range are the caller's
 * mistake, said rather than clamped or guessed around. */
static int check(const pc_write_options **o, pc_write_options *defaults,
                 const pc_format_desc **d, pc_error *err)
{
    if (!*o) {
        pc_write_options_init(defaults);
        *o = defaults;
    }
    const pc_write_options *w = *o;
    if (!(*d = pc_format_desc_of(w->format)))
        return pc_fail(err, PC_EUSAGE, "write_options.format %d is no output format", w->format);
    if (w->gzip_level < 0 || w->gzip_level > 9)
        return pc_fail(err, PC_EUSAGE, "write_options.gzip_level %d is not a gzip level (1 to 9)",
                       w->gzip_level);
    if (w->folded_prefix & ~(PC_FOLDED_PROCESS | PC_FOLDED_THREAD))
        return pc_fail(err, PC_EUSAGE, "write_options.folded_prefix %d has bits beyond "
                       "process and thread", w->folded_prefix);
    if (w->container < PC_CONTAINER_AUTO || w->container > PC_CONTAINER_JSLB)
        return pc_fail(err, PC_EUSAGE, "write_options.container %d is no enum pc_container",
                       w->container);
    if (w->pprof_pid < -1 && !w->pprof_one_process)
        return pc_fail(err, PC_EUSAGE, "write_options.pprof_pid %lld is neither a process id "
                       "nor -1", (long long)w->pprof_pid);
    return PC_OK;
}

/* 0 means no compression to the sink; a level of 0 is the default, 1. */
static int gzip_level(const pc_write_options *o)
{
    if (!o->gzip)
        return 0;
    return o->gzip_level ? o->gzip_level : 1;
}

/* The --to names of the formats that can carry a comparison (diff) or
 * heap profiles (!diff), "a, b, c", into names. */
static void formats_that(int diff, char *names, size_t size)
{
    size_t n, used = 0;
    const pc_format_desc *t = pc_format_table(&n);
    names[0] = 0;
    for (size_t i = 0; i < n; i++)
        if ((diff ? t[i].diff : t[i].heap) && used < size)
            used += (size_t)snprintf(names + used, size - used, "%s%s", used ? ", " : "",
                                     t[i].name);
}

/* Whether p holds samples or heap rows to write: what is left of it in a
 * format without counters. */
static int has_stacks(const pc_profile *p)
{
    for (size_t i = 0; i < p->sample.n; i++)
        if (p->sample.stack[i] != PC_NONE)
            return 1;
    return p->heap.n > 0;
}

/* Refused rather than written without what the caller asked for.
 * Counters beside samples or heap rows are left out with a warning: the
 * stacks are what those formats are for. */
static int refuse(const pc_profile *p, const pc_format_desc *d, const pc_write_options *o,
                  pc_error *err)
{
    char names[128];
    if (p->counter.n && !d->counters) {
        char events[256];
        size_t used = 0;
        uint8_t *seen = calloc(p->event.n + 1, 1);
        events[0] = 0;
        for (size_t i = 0; seen && i < p->counter.n; i++)
            if (p->counter.event[i] < p->event.n)
                seen[p->counter.event[i]] = 1;
        for (size_t e = 0; seen && e < p->event.n && used + 1 < sizeof events; e++) {
            if (!seen[e])
                continue;
            int n = snprintf(events + used, sizeof events - used, "%s%s", used ? ", " : "",
                             pc_str(&p->str, p->event.name[e]));
            used = n < 0 ? sizeof events : used + (size_t)n;
        }
        free(seen);
        if (!has_stacks(p))
            return pc_fail(err, PC_EUSAGE, "%s has no place for counters, and this profile "
                           "holds nothing else (%zu counter values of %s): write_options.format "
                           "firefox shows them as tracks", d->title, p->counter.n, events);
        if (o->log)
            pc_log_to(o->log, o->log_ctx, PC_LOG_WARN, "%s has no place for counters: %zu "
                      "counter values of %s are left out (write_options.format firefox shows "
                      "them as tracks)", d->title, p->counter.n, events);
    }
    size_t slices = pc_slice_count(p);
    if (slices && !d->markers && !has_stacks(p) && !p->counter.n)
        return pc_fail(err, PC_EUSAGE, "%s has no place for traced slices, and this profile "
                       "holds nothing else (%zu slices): write_options.format firefox shows "
                       "them in the marker chart", d->title, slices);
    if (pc_diff_thread(p) != PC_NONE && !d->diff) {
        formats_that(1, names, sizeof names);
        return pc_fail(err, PC_EUSAGE, "%s cannot show a comparison (the base's samples "
                       "counting against the new's): write one of %s (write_options.format)%s",
                       d->title, names,
                       d->format == PC_FORMAT_PPROF ? ", or convert each input to pprof and "
                       "compare them with go tool pprof -diff_base" : "");
    }
    if (!p->heap.n || d->heap)
        return PC_OK;
    pc_summary sum;
    pc_profile_summary(p, &sum);
    formats_that(0, names, sizeof names);
    return pc_fail(err, PC_EUSAGE, "%s has no place for heap profiles (this one has %zu heap "
                   "callsites): write one of %s (write_options.format)",
                   d->title, sum.heap_rows, names);
}


static void check_size(const pc_sink *s, const char *path, const pc_write_options *o,
                       const pc_format_desc *d)
{
    uint64_t limit = o->json_limit ? o->json_limit : PC_JSON_LIMIT;
    uint64_t n = sink_bytes(s);
    if (!o->log || n <= limit || !d->json)
        return;
    pc_log_to(o->log, o->log_ctx, PC_LOG_WARN,
              "%s: the JSON is %.0f MiB, more than the %.0f MiB a browser reads as one "
              "string, so the profiler will not open it: keep less with options.tids, "
              "options.pids, options.thread_names or options.time_end, or use "
              "write_options.format pprof or write_options.format folded",
              path, (double)n / (1 << 20), (double)limit / (1 << 20));
}

/* Writes p into a sink opened on path, or into memory when path is NULL. */
static int write_sink(const pc_profile *p, const char *path, const pc_write_options *o,
                      unsigned char **data, size_t *size, pc_error *err)
{
    pc_write_options defaults, chosen;
    const pc_format_desc *d;
    int st = check(&o, &defaults, &d, err);
    if (st == PC_OK)
        st = refuse(p, d, o, err);
    /* The firefox format's container, chosen once: JSON unless a JSLB file
     * is asked for, or the JSON would come near what a browser reads as
     * one string (the estimate may be short by a quarter). */
    if (st == PC_OK && d->format == PC_FORMAT_FIREFOX) {
        chosen = *o;
        if (chosen.container == PC_CONTAINER_AUTO) {
            uint64_t limit = o->json_limit ? o->json_limit : PC_JSON_LIMIT;
            uint64_t est = pc_fx_json_estimate(p);
            chosen.container = est < limit / 4 * 3 ? PC_CONTAINER_JSON : PC_CONTAINER_JSLB;
            if (chosen.container == PC_CONTAINER_JSLB && o->log)
                pc_log_to(o->log, o->log_ctx, PC_LOG_WARN, "the JSON would be about %.0f MiB, "
                          "near or past the %.0f MiB a browser reads as one string: the "
                          "profile is written as a JSLB file, which the Firefox Profiler "
                          "reads (name it .jslb; write_options.container json keeps JSON)",
                          (double)est / (1 << 20), (double)limit / (1 << 20));
        }
        o = &chosen;
    }
    pc_sink *s;
    if (st == PC_OK)
        st = path ? sink_open_file(&s, path, gzip_level(o), err)
                  : sink_open_memory(&s, gzip_level(o), err);
    if (st != PC_OK)
        return st;
    sink_set_threads(s, o->threads);
    if ((st = d->write(p, o, s, err)) != PC_OK) {
        sink_abort(s);
        return st;
    }
    if (d->format != PC_FORMAT_FIREFOX || o->container != PC_CONTAINER_JSLB)
        check_size(s, !path ? "<memory>" : strcmp(path, "-") == 0 ? "<stdout>" : path, o, d);
    return sink_finish(s, data, size, err);
}

int pc_write(const pc_profile *p, const char *path, const pc_write_options *o,
             pc_error *err)
{
    if (!path)
        return pc_fail(err, PC_EUSAGE, "no output path given (\"-\" is standard output)");
    return write_sink(p, path, o, NULL, NULL, err);
}

int pc_write_memory(const pc_profile *p, const pc_write_options *o,
                    unsigned char **data, size_t *size, pc_error *err)
{
    return write_sink(p, NULL, o, data, size, err);
}
