/* Several converted profiles as one (pc_profiles_combine), and the
 * comparison of two (pc_profiles_diff), written the way the Firefox
 * Profiler's own comparison view builds it: both inputs' threads, and a
 * thread whose samples are the base's with their weights negated and the
 * new input's as they are, so that its call tree sums to the change. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/path.h"
#include "base/sort.h"
#include "model/model.h"
#include "profconv.h"
#include "write/changes.h"

static int nomem(pc_error *err)
{
    return pc_fail(err, PC_ENOMEM, "out of memory");
}

/* The offset, added modulo 2^64, that puts a profile's times on
 * another's clock: through both wall clocks when both have one, else
 * start on start.  Unsigned: inputs may give any 64-bit time. */
static uint64_t shift_onto(const pc_profile *dst, const pc_profile *src, int by_wall)
{
    if (by_wall)
        return (src->meta.wall_ns - src->meta.wall_at) - (dst->meta.wall_ns - dst->meta.wall_at);
    return dst->meta.first_time - src->meta.first_time;
}

/* Whether every time of [a, b] stays a time once shifted: neither end
 * wraps past 0 or past the largest. */
static int shift_fits(uint64_t a, uint64_t b, uint64_t shift)
{
    if (!(shift >> 63))
        return b <= UINT64_MAX - shift;
    return a >= (uint64_t)0 - shift;
}

/* Folds the threads of the same name in processes of the same name into
 * the first of them. */
static int merge_runs(pc_profile *p)
{
    size_t nt = p->thread.n;
    uint32_t *to = malloc((nt + 1) * sizeof *to);
    uint32_t *proc = malloc((nt + 1) * sizeof *proc);
    if (!to || !proc) {
        free(to);
        free(proc);
        return -1;
    }
    for (size_t t = 0; t < nt; t++)
        proc[t] = pc_process_name(p, p->thread.pid[t]);
    /* Distinct names are few: the scan is over threads seen so far. */
    for (size_t t = 0; t < nt; t++) {
        to[t] = (uint32_t)t;
        for (size_t u = 0; u < t; u++)
            if (to[u] == u && p->thread.name[u] == p->thread.name[t] && proc[u] == proc[t]) {
                to[t] = (uint32_t)u;
                break;
            }
    }
    int st = pc_remap_threads(p, to);
    free(to);
    free(proc);
    return st;
}

int pc_profiles_combine(pc_profile **in, const char *const *labels, size_t n, int runs,
                        const pc_options *o, pc_profile **out, pc_error *err)
{
    *out = NULL;
    if (!n)
        return pc_fail(err, PC_EUSAGE, "no profile to combine");
    int by_wall = 1;
    for (size_t i = 0; i < n; i++)
        by_wall &= in[i]->meta.has_wall && in[i]->meta.has_time;
    pc_profile *dst = in[0];
    in[0] = NULL;
    int st = PC_OK;
    /* Runs of one program fold into one set of threads: labels would
     * keep them apart. */
    if (!runs && labels && labels[0] && pc_label_processes(dst, labels[0], 0) < 0)
        st = nomem(err);
    /* What the filters showed of each input, on the shared clock. */
    uint64_t shown_lo = dst->meta.shown_first, shown_hi = dst->meta.shown_last;
    for (size_t i = 1; i < n && st == PC_OK; i++) {
        uint64_t a = in[i]->meta.first_time, b = in[i]->meta.last_time;
        uint64_t shift = shift_onto(dst, in[i], by_wall);
        /* A clock that would put the input before time 0 (or past the
         * last) is no clock to share: start on start instead, or leave
         * the times be. */
        if (by_wall && !shift_fits(a, b, shift))
            shift = shift_onto(dst, in[i], 0);
        if (!shift_fits(a, b, shift))
            shift = 0;
        if (in[i]->meta.shown_first + shift < shown_lo)
            shown_lo = in[i]->meta.shown_first + shift;
        if (in[i]->meta.shown_last + shift > shown_hi)
            shown_hi = in[i]->meta.shown_last + shift;
        if (pc_profile_append(dst, in[i], runs || !labels ? NULL : labels[i], shift,
                              runs ? 0 : PC_PID_SPAN) < 0)
            st = nomem(err);
        pc_profile_free(in[i]);
        in[i] = NULL;
    }
    if (st == PC_OK && runs && merge_runs(dst) < 0)
        st = nomem(err);
    if (st == PC_OK && pc_group_samples(dst) < 0)
        st = nomem(err);
    if (st != PC_OK) {
        pc_profile_free(dst);
        for (size_t i = 1; i < n; i++) {
            pc_profile_free(in[i]);
            in[i] = NULL;
        }
        return st;
    }
    /* The extent grows to all the inputs; what is shown stays what the
     * filters (--time-range) kept of each. */
    pc_note_extent(dst);
    dst->meta.shown_first = shown_lo > dst->meta.first_time ? shown_lo : dst->meta.first_time;
    dst->meta.shown_last = shown_hi < dst->meta.last_time ? shown_hi : dst->meta.last_time;
    pc_log(o, PC_LOG_INFO, "%zu profiles combined on %s", n,
           by_wall ? "their wall clocks" : "one timeline from their starts");
    *out = dst;
    return PC_OK;
}

/* The unit of a profile's sample weights when all share one, else -1. */
static int weight_unit(const pc_profile *p, uint32_t *event)
{
    int unit = -1;
    *event = PC_NONE;
    for (size_t i = 0; i < p->sample.n; i++) {
        uint16_t e = pc_sample_event(p, i);
        int u = e < p->event.n ? p->event.unit[e] : PC_UNIT_SAMPLES;
        if (unit == -1) {
            unit = u;
            *event = e;
        } else if (u != unit) {
            return -2;
        }
    }
    return unit;
}

static const char *unit_name(int unit)
{
    switch (unit) {
    case PC_UNIT_NS: return "time";
    case PC_UNIT_COUNT: return "event counts";
    default: return "samples";
    }
}

static int cmp_base_name(const void *a, const void *b, const void *ctx)
{
    const pc_profile *p = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    size_t lx, ly;
    const char *sx = pc_base_name(pc_str(&p->str, p->res.name[x]), pc_str_len(&p->str, p->res.name[x]), &lx);
    const char *sy = pc_base_name(pc_str(&p->str, p->res.name[y]), pc_str_len(&p->str, p->res.name[y]), &ly);
    int c = memcmp(sx, sy, lx < ly ? lx : ly);
    if (c)
        return c;
    if (lx != ly)
        return lx < ly ? -1 : 1;
    return (x > y) - (x < y);
}

/* Two builds of a program seldom live at one path: next's files take the
 * base's path where the base has exactly one file of that name, so that a
 * function of both is one function, and the comparison shows its change
 * rather than one gain and one loss. */
static int same_files(const pc_profile *base, pc_profile *next)
{
    size_t nb = base->res.n;
    uint32_t *by_name = malloc((nb + 1) * sizeof *by_name);
    if (!by_name)
        return -1;
    for (size_t b = 0; b < nb; b++)
        by_name[b] = (uint32_t)b;
    pc_sort_ctx(by_name, nb, sizeof *by_name, cmp_base_name, base);
    for (size_t r = 0; r < next->res.n; r++) {
        size_t ln, lb;
        const char *n = pc_base_name(pc_str(&next->str, next->res.name[r]),
                                  pc_str_len(&next->str, next->res.name[r]), &ln);
        if (!ln)
            continue;
        /* The first of the base's files of that name, by bisection. */
        size_t lo = 0, hi = nb;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            uint32_t m = by_name[mid];
            const char *bn = pc_base_name(pc_str(&base->str, base->res.name[m]),
                                       pc_str_len(&base->str, base->res.name[m]), &lb);
            int c = memcmp(bn, n, lb < ln ? lb : ln);
            if (c < 0 || (c == 0 && lb < ln))
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t count = 0;
        for (size_t k = lo; k < nb && count < 2; k++) {
            const char *bn = pc_base_name(pc_str(&base->str, base->res.name[by_name[k]]),
                                       pc_str_len(&base->str, base->res.name[by_name[k]]), &lb);
            if (lb != ln || memcmp(bn, n, ln) != 0)
                break;
            count++;
        }
        if (count != 1)
            continue;
        uint32_t match = by_name[lo];
        /* Only the name moves: next is read once more, by the append. */
        uint32_t id = pc_intern(next, pc_str(&base->str, base->res.name[match]),
                                pc_str_len(&base->str, base->res.name[match]));
        if (id == PC_NONE) {
            free(by_name);
            return -1;
        }
        next->res.name[r] = id;
    }
    free(by_name);
    return 0;
}

int pc_profiles_diff(pc_profile *base, pc_profile *next, const pc_options *o, pc_profile **out,
                     pc_error *err)
{
    *out = NULL;
    uint32_t be, ne;
    int bu = weight_unit(base, &be), nu = weight_unit(next, &ne);
    int st = PC_OK;
    if (bu == -1 || nu == -1)
        st = pc_fail(err, PC_EINPUT, "a comparison needs samples on both sides: the %s "
                     "holds none (heap dumps are compared with --heap-dump A..B)",
                     bu == -1 ? "base" : "new profile");
    else if (bu == -2 || nu == -2)
        st = pc_fail(err, PC_EINPUT, "the %s mixes events of different units: keep one "
                     "with --event", bu == -2 ? "base" : "new profile");
    else if (bu != nu)
        st = pc_fail(err, PC_EINPUT, "the base's samples measure %s (%s), the new profile's "
                     "%s (%s): they cannot be compared", unit_name(bu),
                     be < base->event.n ? pc_str(&base->str, base->event.name[be]) : "",
                     unit_name(nu),
                     ne < next->event.n ? pc_str(&next->str, next->event.name[ne]) : "");
    if (st != PC_OK) {
        pc_profile_free(base);
        pc_profile_free(next);
        return st;
    }
    if (same_files(base, next) < 0) {
        pc_profile_free(base);
        pc_profile_free(next);
        return nomem(err);
    }
    size_t nt_base = base->thread.n;
    pc_profile *in[2] = {base, next};
    static const char *const labels[2] = {"base", "new"};
    pc_profile *p;
    /* Side by side from their starts, as the profiler's comparison
     * aligns them: the two runs' clocks say nothing of each other. */
    base->meta.has_wall = 0;
    if ((st = pc_profiles_combine(in, labels, 2, 0, o, &p, err)) != PC_OK)
        return st;
    /* A pid no thread has: one above the highest, wrapping as inputs may
     * give any 64-bit id. */
    int64_t pid = 0;
    for (size_t t = 0; t < p->thread.n; t++)
        if (p->thread.pid[t] >= pid)
            pid = (int64_t)((uint64_t)p->thread.pid[t] + 1);
    uint32_t name = pc_intern_cstr(p, "Diff between base and new");
    uint32_t d = name == PC_NONE ? PC_NONE : pc_add_thread(p, pid, pid, name);
    if (d == PC_NONE) {
        pc_profile_free(p);
        return nomem(err);
    }
    p->thread.diff[d] = 1;
    pc_set_process_name(p, pid, pc_intern_cstr(p, "comparison"));
    size_t n = p->sample.n;
    for (size_t i = 0; i < n && !p->oom; i++) {
        /* The sign tells the sides apart: a weightless sample (a period
         * of 0) would count for the new side, and counts for nothing. */
        if (p->sample.stack[i] == PC_NONE || pc_sample_weight(p, i) == 0)
            continue;
        int64_t w = pc_sample_weight(p, i);
        pc_add_sample(p, d, pc_sample_time(p, i), p->sample.stack[i],
                      pc_sample_thread(p, i) < nt_base ? (w == INT64_MIN ? INT64_MAX : -w) : w,
                      pc_sample_event(p, i),
                      pc_sample_cpu(p, i));
    }
    if (p->oom || pc_group_samples(p) < 0) {
        pc_profile_free(p);
        return nomem(err);
    }
    *out = p;
    return PC_OK;
}

int pc_diff_rows(const pc_profile *p, pc_diff_row **rows, size_t *n, pc_error *err)
{
    pc_change *ch = NULL;
    *rows = NULL;
    *n = 0;
    size_t k = 0;
    if (pc_diff_changes(p, &ch, &k) < 0)
        return nomem(err);
    pc_diff_row *r = malloc((k + 1) * sizeof *r);
    if (!r) {
        free(ch);
        return nomem(err);
    }
    for (size_t i = 0; i < k; i++)
        r[i] = (pc_diff_row){pc_str(&p->str, ch[i].name), ch[i].base_self, ch[i].new_self,
                             ch[i].base_total, ch[i].new_total};
    free(ch);
    *rows = r;
    *n = k;
    return PC_OK;
}
