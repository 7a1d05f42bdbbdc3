/* Sample filters and thread aggregation, with simpleperf's semantics
 * (RecordFilter and ThreadReportBuilder in simpleperf's sources; the
 * filter file format is its doc/sample_filter.md):
 *   - each kind of filter (pid, tid, process name, thread name) keeps a
 *     thread when it matches one of the included values, if any are given,
 *     and none of the excluded ones; kinds combine with "and";
 *   - names are regular expressions searched anywhere in the name; a
 *     process's name is its main thread's (tid == pid), and a process
 *     without one fails every process-name filter;
 *   - time ranges are half-open [begin, end); a BEGIN without END runs to
 *     the end; when per-process or per-thread ranges are given, samples of
 *     other processes or threads are dropped;
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

static int nomem(pc_error *err)
{
    return pc_fail(err, PC_ENOMEM, "out of memory");
}

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
        return nomem(err);
    for (size_t i = 0; i < s->n; i++) {
        char *pattern = NULL;
        const char *src = s->items[i];
        if (whole) {
            size_t n = strlen(src) + 5;
            if (!(pattern = malloc(n)))
                return nomem(err);
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
    int st = to && order && main_of ? PC_OK : nomem(err);
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
            st = nomem(err);
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

/* ---- Time ranges ---- */

typedef struct range {
    uint64_t begin, end;
} range;

/* The ranges of the whole recording, of one process or of one thread. */
typedef struct ranges {
    int64_t id;          /* pid or tid */
    range *r;
    size_t n, cap;
    int open;            /* a BEGIN waits for its END */
    uint64_t open_at;
} ranges;

typedef struct timefilter {
    ranges global;
    ranges *proc, *thread;
    size_t n_proc, n_thread;
} timefilter;

static void timefilter_free(timefilter *f)
{
    free(f->global.r);
    for (size_t i = 0; i < f->n_proc; i++)
        free(f->proc[i].r);
    for (size_t i = 0; i < f->n_thread; i++)
        free(f->thread[i].r);
    free(f->proc);
    free(f->thread);
}

static ranges *ranges_for(ranges **list, size_t *n, int64_t id)
{
    for (size_t i = 0; i < *n; i++)
        if ((*list)[i].id == id)
            return &(*list)[i];
    ranges *l = realloc(*list, (*n + 1) * sizeof *l);
    if (!l)
        return NULL;
    *list = l;
    memset(&l[*n], 0, sizeof l[*n]);
    l[*n].id = id;
    return &l[(*n)++];
}

static int add_range(ranges *rs, uint64_t begin, uint64_t end)
{
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 8;
        range *r = realloc(rs->r, cap * sizeof *r);
        if (!r)
            return -1;
        rs->r = r;
        rs->cap = cap;
    }
    rs->r[rs->n].begin = begin;
    rs->r[rs->n].end = end;
    rs->n++;
    return 0;
}

static int cmp_range(const void *a, const void *b)
{
    const range *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

/* Closes a BEGIN left open and sorts, once all commands are read. */
static int ranges_finish(ranges *rs)
{
    if (rs->open && add_range(rs, rs->open_at, UINT64_MAX) < 0)
        return -1;
    rs->open = 0;
    pc_qsort(rs->r, rs->n, sizeof *rs->r, cmp_range);
    return 0;
}

static int in_ranges(const ranges *rs, uint64_t t)
{
    /* The last range starting at or before t decides. */
    size_t lo = 0, hi = rs->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (rs->r[mid].begin <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && rs->r[lo - 1].end > t;
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *v = x;
    return 0;
}

/* Reads simpleperf's filter file into f. */
static int read_filter_file(const char *path, timefilter *f, const pc_options *o,
                            pc_error *err)
{
    static const struct {
        const char *cmd;
        int kind;   /* 0 global, 1 process, 2 thread */
        int begin;
    } cmds[] = {
        {"GLOBAL_BEGIN", 0, 1}, {"GLOBAL_END", 0, 0}, {"PROCESS_BEGIN", 1, 1},
        {"PROCESS_END", 1, 0}, {"THREAD_BEGIN", 2, 1}, {"THREAD_END", 2, 0},
    };
    FILE *in = fopen(path, "r");
    char line[1024];
    unsigned lineno = 0;
    if (!in)
        return pc_fail(err, PC_EIO, "%s: cannot open: %s", path, strerror(errno));
    while (fgets(line, sizeof line, in)) {
        char *args[4], *save = NULL, *tok;
        size_t n = 0;
        lineno++;
        for (tok = strtok_r(line, " \t\r\n", &save); tok && n < 4;
             tok = strtok_r(NULL, " \t\r\n", &save))
            args[n++] = tok;
        if (n == 0 || args[0][0] == '#')
            continue;
        if (strcmp(args[0], "CLOCK") == 0) {
            if (n != 2) {
                fclose(in);
                return pc_fail(err, PC_EINPUT, "%s:%u: CLOCK takes one argument", path, lineno);
            }
            if (strcmp(args[1], "monotonic") != 0)
                pc_log(o, PC_LOG_WARN, "%s:%u: clock %s: times are compared with the "
                       "recording's as they are", path, lineno, args[1]);
            continue;
        }
        size_t c = 0;
        while (c < sizeof cmds / sizeof *cmds && strcmp(args[0], cmds[c].cmd) != 0)
            c++;
        if (c == sizeof cmds / sizeof *cmds) {
            fclose(in);
            return pc_fail(err, PC_EINPUT, "%s:%u: unknown command '%s'", path, lineno,
                           args[0]);
        }
        size_t want = cmds[c].kind ? 3 : 2;
        uint64_t id = 0, ts;
        if (n != want || (cmds[c].kind && parse_u64(args[1], &id) < 0) ||
            parse_u64(args[want - 1], &ts) < 0) {
            fclose(in);
            return pc_fail(err, PC_EINPUT, "%s:%u: %s takes %s", path, lineno,
                           cmds[c].cmd, cmds[c].kind ? "an id and a timestamp in ns"
                                                     : "a timestamp in ns");
        }
        ranges *rs = cmds[c].kind == 0 ? &f->global
                     : cmds[c].kind == 1 ? ranges_for(&f->proc, &f->n_proc, (int64_t)id)
                                         : ranges_for(&f->thread, &f->n_thread, (int64_t)id);
        if (!rs) {
            fclose(in);
            return nomem(err);
        }
        if (cmds[c].begin) {
            /* The nearest BEGIN and END make a range. */
            if (!rs->open) {
                rs->open = 1;
                rs->open_at = ts;
            }
        } else if (rs->open) {
            if (rs->open_at >= ts) {
                fclose(in);
                return pc_fail(err, PC_EINPUT, "%s:%u: range ends at %" PRIu64
                               " before it begins at %" PRIu64, path, lineno, ts,
                               rs->open_at);
            }
            if (add_range(rs, rs->open_at, ts) < 0) {
                fclose(in);
                return nomem(err);
            }
            rs->open = 0;
        }
    }
    int bad = ferror(in);
    fclose(in);
    if (bad)
        return pc_fail(err, PC_EIO, "%s: read failed", path);
    int st = ranges_finish(&f->global);
    for (size_t i = 0; i < f->n_proc && !st; i++)
        st = ranges_finish(&f->proc[i]);
    for (size_t i = 0; i < f->n_thread && !st; i++)
        st = ranges_finish(&f->thread[i]);
    return st ? nomem(err) : PC_OK;
}

static int passes(const timefilter *f, int64_t pid, int64_t tid, uint64_t t)
{
    if (f->global.n && !in_ranges(&f->global, t))
        return 0;
    if (f->n_proc) {
        size_t i = 0;
        while (i < f->n_proc && f->proc[i].id != pid)
            i++;
        if (i == f->n_proc || !in_ranges(&f->proc[i], t))
            return 0;
    }
    if (f->n_thread) {
        size_t i = 0;
        while (i < f->n_thread && f->thread[i].id != tid)
            i++;
        if (i == f->n_thread || !in_ranges(&f->thread[i], t))
            return 0;
    }
    return 1;
}

/* Drops markers outside [lo, hi) and cuts the ones that straddle it. */
static void clip_markers(pc_profile *p, uint64_t lo, uint64_t hi)
{
    size_t j = 0;
    for (size_t i = 0; i < p->marker.n; i++) {
        uint64_t s = p->marker.start[i], e = p->marker.end[i];
        if (e < lo || s >= hi)
            continue;
        p->marker.thread[j] = p->marker.thread[i];
        p->marker.name[j] = p->marker.name[i];
        p->marker.s[j] = p->marker.s[i];
        p->marker.start[j] = s < lo ? lo : s;
        p->marker.end[j] = e >= hi ? hi - 1 : e;
        p->marker.a[j] = p->marker.a[i];
        p->marker.b[j] = p->marker.b[i];
        p->marker.type[j] = p->marker.type[i];
        j++;
    }
    p->marker.n = j;
}

static uint64_t sat_add_u64(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int pc_filter_time(pc_profile *p, const pc_options *o, pc_error *err)
{
    timefilter f = {0};
    /* --time-range, relative to the recording's first event (not to what
     * other filters leave, so that a range read off the whole profile
     * selects the same time); the whole time otherwise. */
    uint64_t start = p->meta.first_time;
    uint64_t lo = o->time_start >= 0 ? sat_add_u64(start, (uint64_t)o->time_start) : 0;
    uint64_t hi = o->time_end >= 0 ? sat_add_u64(start, (uint64_t)o->time_end) : UINT64_MAX;
    int ranged = o->time_start >= 0 || o->time_end >= 0;
    if (ranged) {
        if (lo > p->meta.shown_first)
            p->meta.shown_first = lo;
        if (hi < p->meta.shown_last)
            p->meta.shown_last = hi;
    }

    if (ranged && hi <= lo)
        return pc_fail(err, PC_EUSAGE, "options.time_end: the range ends before it begins");
    if (o->filter_file) {
        int st = read_filter_file(o->filter_file, &f, o, err);
        if (st != PC_OK) {
            timefilter_free(&f);
            return st;
        }
    }
    if (!ranged && !f.global.n && !f.n_proc && !f.n_thread) {
        timefilter_free(&f);
        return PC_OK;
    }
    uint8_t *keep = malloc(p->sample.n + 1);
    if (!keep) {
        timefilter_free(&f);
        return nomem(err);
    }
    size_t kept = 0;
    for (size_t i = 0; i < p->sample.n; i++) {
        uint32_t t = p->sample.thread[i];
        uint64_t ts = p->sample.time[i];
        keep[i] = ts >= lo && ts < hi &&
                  passes(&f, p->thread.pid[t], p->thread.tid[t], ts);
        kept += keep[i];
    }
    pc_log(o, PC_LOG_INFO, "time filters keep %zu of %zu samples", kept, p->sample.n);
    pc_keep_samples(p, keep);
    /* Heap dumps are kept by the time they were taken. */
    if (p->heap.n) {
        uint8_t *hk = malloc(p->heap.n);
        if (!hk) {
            free(keep);
            timefilter_free(&f);
            return nomem(err);
        }
        for (size_t i = 0; i < p->heap.n; i++) {
            uint32_t t = p->heap.thread[i];
            uint64_t ts = p->heap.time[i];
            hk[i] = ts >= lo && ts < hi && passes(&f, p->thread.pid[t], p->thread.tid[t], ts);
        }
        pc_keep_heap(p, hk);
        free(hk);
    }
    /* Markers keep to the span the global ranges allow. */
    if (f.global.n) {
        uint64_t end = 0;
        for (size_t k = 0; k < f.global.n; k++)
            if (f.global.r[k].end > end)
                end = f.global.r[k].end;
        if (f.global.r[0].begin > lo)
            lo = f.global.r[0].begin;
        if (end < hi)
            hi = end;
    }
    clip_markers(p, lo, hi);
    free(keep);
    timefilter_free(&f);
    return PC_OK;
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
        st = nomem(err);
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
        st = nomem(err);
    regs_free(&r);
    free(to);
    free(first);
    return st;
}
