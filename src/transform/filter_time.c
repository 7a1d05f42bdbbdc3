/* Time filters with simpleperf's semantics (its doc/sample_filter.md):
 * ranges are half-open [begin, end); a BEGIN without END runs to the end;
 * when per-process or per-thread ranges are given, samples of other
 * processes or threads are dropped.  --time-range counts from the
 * recording's first event. */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/grow.h"
#include "transform/transform.h"

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
    if (pc_grow(&rs->r, &rs->cap, rs->n + 1, sizeof *rs->r, 8) < 0)
        return -1;
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
        /* Ids past INT64_MAX name no thread: refused rather than read as
         * negative ones. */
        if (n != want || (cmds[c].kind && (parse_u64(args[1], &id) < 0 || id > INT64_MAX)) ||
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
            return pc_nomem(err);
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
                return pc_nomem(err);
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
    return st ? pc_nomem(err) : PC_OK;
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
        return pc_nomem(err);
    }
    size_t kept = 0;
    for (size_t i = 0; i < p->sample.n; i++) {
        uint32_t t = pc_sample_thread(p, i);
        uint64_t ts = pc_sample_time(p, i);
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
            return pc_nomem(err);
        }
        for (size_t i = 0; i < p->heap.n; i++) {
            uint32_t t = p->heap.thread[i];
            uint64_t ts = p->heap.time[i];
            hk[i] = ts >= lo && ts < hi && passes(&f, p->thread.pid[t], p->thread.tid[t], ts);
        }
        pc_keep_heap(p, hk);
        free(hk);
    }
    /* Counter values are kept by the time they were read, as samples. */
    if (p->counter.n) {
        uint8_t *ck = malloc(p->counter.n);
        if (!ck) {
            free(keep);
            timefilter_free(&f);
            return pc_nomem(err);
        }
        /* Bytes counters are drawn as a running sum: what came before the
         * range is its starting level, one value at the range's start. */
        size_t ne = p->event.n, nt = p->thread.n;
        int64_t *level = NULL;
        for (size_t i = 0; i < p->counter.n; i++) {
            uint32_t t = p->counter.thread[i];
            uint64_t ts = p->counter.time[i];
            uint16_t e = p->counter.event[i];
            ck[i] = ts >= lo && ts < hi && passes(&f, p->thread.pid[t], p->thread.tid[t], ts);
            if (!ck[i] && ts < lo && e < ne && p->event.unit[e] == PC_UNIT_BYTES) {
                if (!level && !(level = calloc(nt * ne + 1, sizeof *level))) {
                    free(ck);
                    free(keep);
                    timefilter_free(&f);
                    return pc_nomem(err);
                }
                level[t * ne + e] = pc_sat_add(level[t * ne + e], p->counter.value[i]);
            }
        }
        pc_keep_counters(p, ck);
        free(ck);
        for (size_t k = 0; level && k < nt * ne; k++)
            if (level[k])
                pc_add_counter(p, (uint32_t)(k / ne), lo, (uint16_t)(k % ne), PC_NO_CPU,
                               level[k]);
        free(level);
        if (p->oom) {
            free(keep);
            timefilter_free(&f);
            return pc_nomem(err);
        }
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
