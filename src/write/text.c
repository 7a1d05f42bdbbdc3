/* A summary for an 80-column terminal (--to text): the profile's events
 * and losses, then the busiest threads with their heaviest functions by
 * self and by total weight, and, for a comparison profile, the functions
 * whose shares changed most.
 *
 * Choices, and why:
 * - Functions are keyed by name, as in changes.h, so the per-thread lists
 *   and the changes section agree with each other and with folded stacks,
 *   where one name is one frame whatever its library.
 * - Shares are of the thread's weight and of the whole profile's: the
 *   first says what the thread did, the second what matters overall.
 * - Names are cut to their column with "..." (ASCII, so it is three
 *   columns on any terminal); control bytes and bytes that are not UTF-8
 *   become '?', since the text goes to a terminal.  A character counts as
 *   one column: wide CJK glyphs may push a line past 80, which is rare in
 *   symbol names and not worth a wcwidth table.
 * - A comparison thread's lists would mix both inputs, so it shows each
 *   side's weight and leaves the functions to the changes section. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/escape.h"
#include "base/sort.h"
#include "write/changes.h"
#include "write/write.h"

#define TOP_THREADS 10
#define TOP_FUNCS 10
#define TOP_CHANGES 20
#define LINE_MAX_COLS 80

typedef struct tstate {
    const pc_profile *p;
    pc_sink *s;
    int heap;            /* heap rows, not samples */
} tstate;

static void out(pc_sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(pc_sink *s, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    sink_write(s, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* name into dst as exactly width columns: cut with "..." or padded with
 * spaces (pad 0: not padded).  dst holds at least 4 * width + 1 bytes. */
static void fit(char *dst, const char *name, size_t width, int pad)
{
    const uint8_t *s = (const uint8_t *)name;
    size_t cols = 0, o = 0;
    /* Columns and byte ends of the text as it would be shown whole. */
    size_t total = 0;
    for (const uint8_t *q = s; *q;) {
        size_t n = *q >= 0x20 && *q < 0x7f ? 1 : pc_utf8_len(q, 4);
        q += n ? n : 1;
        total++;
    }
    size_t keep = total <= width ? total : width >= 3 ? width - 3 : 0;
    while (*s && cols < keep) {
        size_t n = *s >= 0x20 && *s < 0x7f ? 1 : pc_utf8_len(s, 4);
        /* C1 controls are 0xc2 0x80..0x9f. */
        if (n == 0 || (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)) {
            dst[o++] = '?';
            s += n ? n : 1;
        } else {
            memcpy(dst + o, s, n);
            o += n;
            s += n;
        }
        cols++;
    }
    if (total > width) {
        for (size_t i = 0; i < 3 && cols < width; i++, cols++)
            dst[o++] = '.';
    }
    while (pad && cols < width) {
        dst[o++] = ' ';
        cols++;
    }
    dst[o] = 0;
}

static double pct(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Per thread: its weight (each side's for a comparison thread) and items. */
typedef struct tinfo {
    uint32_t t;
    int64_t weight, base, neww;
    size_t items;
    int unit;
} tinfo;

static int cmp_tinfo(const void *a, const void *b)
{
    const tinfo *x = a, *y = b;
    int64_t wx = pc_sat_add(x->weight, pc_sat_add(x->base, x->neww));
    int64_t wy = pc_sat_add(y->weight, pc_sat_add(y->base, y->neww));
    if (wx != wy)
        return wx > wy ? -1 : 1;
    if (x->items != y->items)
        return x->items > y->items ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

/* Names sorted by a column of sums, heaviest first, ties by name. */
typedef struct byval {
    const pc_profile *p;
    const int64_t *v;
} byval;

static int cmp_name_val(const void *a, const void *b, const void *ctx)
{
    const byval *c = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (c->v[x] != c->v[y])
        return c->v[x] > c->v[y] ? -1 : 1;
    int r = strcmp(pc_str(&c->p->str, x), pc_str(&c->p->str, y));
    return r ? r : (x > y) - (x < y);
}

static void feed_thread(const pc_profile *p, int heap, uint32_t t, pc_fsums *f)
{
    if (!heap) {
        for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++)
            pc_fsums_add(f, p->sample.stack[i], pc_sample_weight(p, i));
        return;
    }
    for (size_t i = 0; i < p->heap.n; i++) {
        if (p->heap.thread[i] != t || !pc_heap_shown(p, i))
            continue;
        uint64_t v = pc_heap_value(p, i);
        pc_fsums_add(f, p->heap.stack[i], pc_clamp_i64(v));
    }
}

static void top_list(pc_sink *s, const pc_profile *p, const char *what, const int64_t *v,
                     uint32_t *names, size_t n, int64_t thread_w, int64_t all_w, int unit)
{
    byval c = {p, v};
    pc_sort_ctx(names, n, sizeof *names, cmp_name_val, &c);
    char head[64];
    snprintf(head, sizeof head, "Top by %s", what);
    char name[4 * 48 + 1];
    fit(name, head, 46, 1);
    out(s, "  %s %11s %7s %7s\n", name, what, "thread", "all");
    for (size_t i = 0; i < n && i < TOP_FUNCS && v[names[i]] > 0; i++) {
        char val[32];
        pc_format_weight(val, sizeof val, v[names[i]], unit);
        fit(name, pc_str(&p->str, names[i]), 46, 1);
        out(s, "  %s %11s %6.1f%% %6.1f%%\n", name, val, pct(v[names[i]], thread_w),
            pct(v[names[i]], all_w));
    }
}

static void changes_section(pc_sink *s, const pc_profile *p, const pc_change *c, size_t n)
{
    char name[4 * 30 + 1];
    out(s, "\nChanges (base -> new), shares of each side's weight, in %%:\n");
    out(s, "  %-30s %-21s  %-21s\n", "", "self", "total");
    out(s, "  %-30s %6s %6s %7s  %6s %6s %7s\n", "function", "base", "new", "change", "base",
        "new", "change");
    for (size_t i = 0; i < n && i < TOP_CHANGES; i++) {
        fit(name, pc_str(&p->str, c[i].name), 30, 1);
        out(s, "  %s %6.2f %6.2f %+7.2f  %6.2f %6.2f %+7.2f\n", name, 100 * c[i].base_self,
            100 * c[i].new_self, 100 * (c[i].new_self - c[i].base_self), 100 * c[i].base_total,
            100 * c[i].new_total, 100 * (c[i].new_total - c[i].base_total));
    }
    if (n > TOP_CHANGES)
        out(s, "  and %zu more functions\n", n - TOP_CHANGES);
}

int pc_write_text(const pc_profile *p, const pc_write_options *o, pc_sink *s, pc_error *err)
{
    (void)o;
    size_t nt = p->thread.n;
    int heap = p->sample.n == 0;
    tinfo *ti = calloc(nt + 1, sizeof *ti);
    uint32_t *order = malloc((nt + 1) * sizeof *order);
    uint32_t *main_of = malloc((nt + 1) * sizeof *main_of);
    uint64_t *ev_count = calloc(p->event.n + 1, sizeof *ev_count);
    uint32_t *names = NULL;
    pc_change *changes = NULL;
    size_t n_changes = 0;
    pc_fsums f;
    int have_f = 0, status = PC_OK;
    if (!ti || !order || !main_of || !ev_count)
        goto oom;
    if (pc_fsums_init(&f, p) < 0)
        goto oom;
    have_f = 1;
    if (!(names = malloc((p->str.n + 1) * sizeof *names)))
        goto oom;

    /* Thread weights, units and event counts in one pass over the items. */
    for (size_t t = 0; t < nt; t++) {
        ti[t].t = (uint32_t)t;
        ti[t].unit = heap ? PC_UNIT_BYTES : -3;
    }
    if (!heap) {
        for (size_t t = 0; t < nt && p->sample.first; t++)
            for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++) {
                int64_t w = pc_sample_weight(p, i);
                uint16_t e = pc_sample_event(p, i);
                int unit = e < p->event.n ? p->event.unit[e] : PC_WUNIT_MIXED;
                /* A comparison thread repeats the two sides' samples. */
                if (e < p->event.n && !p->thread.diff[t])
                    ev_count[e]++;
                ti[t].unit = ti[t].unit == -3 || ti[t].unit == unit ? unit : PC_WUNIT_MIXED;
                ti[t].items++;
                if (p->thread.diff && p->thread.diff[t]) {
                    if (w < 0)
                        ti[t].base = pc_sat_add(ti[t].base, w == INT64_MIN ? INT64_MAX : -w);
                    else
                        ti[t].neww = pc_sat_add(ti[t].neww, w);
                } else {
                    ti[t].weight = pc_sat_add(ti[t].weight, w);
                }
            }
    } else {
        for (size_t i = 0; i < p->heap.n; i++) {
            if (!pc_heap_shown(p, i) || p->heap.thread[i] >= nt)
                continue;
            uint64_t v = pc_heap_value(p, i);
            tinfo *x = &ti[p->heap.thread[i]];
            x->items++;
            x->weight = pc_sat_add(x->weight, pc_clamp_i64(v));
        }
    }
    int64_t all_w = 0;
    size_t busy = 0;
    for (size_t t = 0; t < nt; t++) {
        all_w = pc_sat_add(all_w, ti[t].weight);
        busy += ti[t].items > 0;
    }
    pc_qsort(ti, nt, sizeof *ti, cmp_tinfo);

    /* The header: what was recorded. */
    char title[512], line[4 * LINE_MAX_COLS + 1];
    uint32_t focus = PC_NONE;
    pc_thread_order(p, order, main_of);
    if (pc_focus_thread(p, main_of, &focus) < 0 ||
        pc_title(p, main_of, focus, title, sizeof title) < 0)
        goto oom;
    fit(line, title, LINE_MAX_COLS, 0);
    out(s, "%s\n", line);
    if (heap) {
        snprintf(title, sizeof title, "Heap: %s bytes", pc_heap_measure_name(p));
        fit(line, title, LINE_MAX_COLS, 0);
        out(s, "%s\n", line);
    }
    for (size_t e = 0; e < p->event.n; e++) {
        if (!heap && !ev_count[e])
            continue;
        char ev[4 * 24 + 1];
        fit(ev, pc_str(&p->str, p->event.name[e]), 24, 0);
        out(s, "Event %s: %" PRIu64 " samples, in %s%s\n", ev, ev_count[e],
            pc_wunit_name(p->event.unit[e]), p->event.offcpu[e] ? " (off-CPU)" : "");
    }
    if (p->meta.has_lost) {
        uint64_t n = p->meta.lost_count, total = p->meta.lost_sample_count + n;
        out(s, "Lost: %" PRIu64 " of %" PRIu64 " samples (%.1f%%)\n", n, total,
            total ? 100.0 * (double)n / (double)total : 0.0);
    }
    out(s, "Threads: %zu with %s\n", busy, heap ? "heap rows" : "samples");

    for (size_t k = 0; k < nt && k < TOP_THREADS; k++) {
        const tinfo *x = &ti[k];
        if (!x->items)
            break;
        uint32_t t = x->t;
        /* Both names, the ids and the words fit 80 columns. */
        char tname[4 * 32 + 1], pname[4 * 16 + 1], val[32];
        /* The process says which input the thread came from when inputs
         * were combined ("base: app"). */
        uint32_t proc = pc_process_name(p, p->thread.pid[t]);
        int with_proc = proc != PC_NONE && proc != p->thread.name[t];
        fit(tname, pc_str(&p->str, p->thread.name[t]), with_proc ? 24 : 32, 0);
        pname[0] = 0;
        if (with_proc)
            fit(pname, pc_str(&p->str, proc), 16, 0);
        out(s, "\nThread %s%s%s%s (pid %" PRId64 ", tid %" PRId64 ")\n", tname,
            pname[0] ? " [" : "", pname, pname[0] ? "]" : "", p->thread.pid[t],
            p->thread.tid[t]);
        if (p->thread.diff && p->thread.diff[t]) {
            char b[32];
            pc_format_weight(b, sizeof b, x->base, x->unit);
            pc_format_weight(val, sizeof val, x->neww, x->unit);
            out(s, "  comparison of %zu samples, see Changes below\n", x->items);
            out(s, "  base %s%s, new %s%s\n", b, pc_wunit_word(x->unit), val,
                pc_wunit_word(x->unit));
            continue;
        }
        pc_format_weight(val, sizeof val, x->weight, x->unit);
        out(s, "  %zu %s, %s%s, %.1f%% of all\n", x->items, heap ? "heap rows" : "samples",
            val, pc_wunit_word(x->unit), pct(x->weight, all_w));
        pc_fsums_clear(&f);
        feed_thread(p, heap, t, &f);
        pc_fsums_finish(&f);
        memcpy(names, f.names, f.n_names * sizeof *names);
        top_list(s, p, "self", f.self, names, f.n_names, x->weight, all_w, x->unit);
        top_list(s, p, "total", f.total, names, f.n_names, x->weight, all_w, x->unit);
    }
    if (busy > TOP_THREADS) {
        int64_t rest = 0;
        for (size_t k = TOP_THREADS; k < nt; k++)
            rest = pc_sat_add(rest, ti[k].weight);
        out(s, "\nand %zu more threads (%.1f%% of all)\n", busy - TOP_THREADS, pct(rest, all_w));
    }

    if (pc_diff_changes(p, &changes, &n_changes) < 0)
        goto oom;
    if (n_changes)
        changes_section(s, p, changes, n_changes);
    goto done;
oom:
    status = pc_fail(err, PC_ENOMEM, "out of memory writing the text summary");
done:
    free(changes);
    free(names);
    if (have_f)
        pc_fsums_free(&f);
    free(ti);
    free(order);
    free(main_of);
    free(ev_count);
    return status;
}
