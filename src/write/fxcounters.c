/* The Firefox Profiler's counter tracks for the model's counter values
 * (pc_fx_event_counters): one track per process and event, or per CPU
 * when the threads are the CPUs of --percpu; counts are drawn as a rate,
 * bytes as their running sum (what is live).
 *
 * The profiler draws a rate as each value over the time since the value
 * before on the same track.  A process's values come from every CPU its
 * threads ran on, each counting since that CPU's previous read, so read
 * times from several CPUs interleave and a value read just after another
 * CPU's would show as a spike.  Such tracks are therefore summed into
 * bins as wide as the typical time between reads on one CPU: the totals
 * stay exact and the rate stays what the CPUs counted per millisecond. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "write/write.h"

typedef struct ckey {
    uint32_t track, row;
    uint64_t time;  /* since the profile's zero */
    uint16_t event;
} ckey;

/* By track, event, time, then row. */
static int cmp_ckey(const void *a, const void *b)
{
    const ckey *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    if (x->event != y->event)
        return x->event < y->event ? -1 : 1;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The median time between consecutive reads of one CPU (or of the
 * track, where the rows say no CPU) for rows k[0..n) of one track and
 * event, 0 when no CPU was read twice; *cpus receives how many CPUs the
 * rows come from.  last and gaps are scratch space: last has an entry per
 * CPU number, all UINT64_MAX, and is left so. */
static uint64_t read_gap(const pc_profile *p, const ckey *k, size_t n, uint64_t *last,
                         uint64_t *gaps, int *cpus_out)
{
    size_t ng = 0;
    int cpus = 0;
    for (size_t j = 1; j < n; j++)
        if (p->counter.cpu[k[j].row] == PC_NO_CPU && k[j].time > k[j - 1].time)
            gaps[ng++] = k[j].time - k[j - 1].time;
    for (size_t j = 0; j < n; j++) {
        uint16_t c = p->counter.cpu[k[j].row];
        if (c == PC_NO_CPU)
            continue;
        if (last[c] == UINT64_MAX)
            cpus++;
        else if (k[j].time > last[c])
            gaps[ng++] = k[j].time - last[c];
        last[c] = k[j].time;
    }
    for (size_t j = 0; j < n; j++)
        if (p->counter.cpu[k[j].row] != PC_NO_CPU)
            last[p->counter.cpu[k[j].row]] = UINT64_MAX;
    *cpus_out = cpus;
    if (!ng)
        return 0;
    pc_qsort(gaps, ng, sizeof *gaps, cmp_u64);
    return gaps[ng / 2];
}

/* One track's samples: each value, or with bins of width each bin's sum
 * at its end, after a zero one read gap before: the first value counts
 * since the counter began, which is about a read gap earlier (the
 * profiler draws a value over the time since the one before). */
static void write_samples(jw *w, const pc_profile *p, const ckey *k, size_t n, uint64_t width,
                          uint64_t gap)
{
    size_t len = 1;
    /* Where the zero goes, before the profile's zero when the first
     * value comes sooner than a gap after it; held within int64. */
    uint64_t t0 = k[0].time, first = width ? t0 / width * width : t0 >= gap ? t0 - gap : 0;
    int64_t before = !width && t0 < gap ? -pc_clamp_i64(gap - t0)
                                        : 0;
    jw_key(w, "samples");
    jw_obj(w);
    for (int col = 0; col < 3; col++) {
        jw_key(w, col == 0 ? "time" : col == 1 ? "count" : "number");
        /* Times are a typed column in a JSLB file; counts stay JSON. */
        if (col == 0) {
            jw_col_begin(w, JW_SLAB_F64);
            if (before)
                jw_col_ms_signed(w, before);
            else
                jw_col_ms(w, first);
        } else {
            jw_arr(w);
            jw_int(w, 0);
        }
        for (size_t j = 0; j < n;) {
            size_t e = j + 1;
            uint64_t end = k[j].time;
            if (width) {
                uint64_t bin = k[j].time / width;
                end = bin + 1 > UINT64_MAX / width ? UINT64_MAX : (bin + 1) * width;
                while (e < n && k[e].time / width == bin)
                    e++;
            }
            int64_t sum = 0;
            for (size_t i = j; i < e; i++)
                sum = pc_sat_add(sum, p->counter.value[k[i].row]);
            if (col == 0)
                jw_col_ms(w, end);
            else if (col == 1)
                jw_int(w, sum);
            else
                jw_uint(w, e - j);
            len += col == 0;
            j = e;
        }
        if (col == 0)
            jw_col_end(w);
        else
            jw_arr_end(w);
    }
    jw_key(w, "length");
    jw_uint(w, len);
    jw_obj_end(w);
}

void pc_jw_tooltip_row(jw *w, const char *source, const char *unit, const char *label,
                       int selection)
{
    jw_obj(w);
    jw_key(w, "type");
    jw_cstr(w, "value");
    jw_key(w, "source");
    jw_cstr(w, source);
    jw_key(w, "format");
    jw_obj(w);
    jw_key(w, "unit");
    jw_cstr(w, unit);
    jw_obj_end(w);
    jw_key(w, "label");
    jw_cstr(w, label);
    if (selection) {
        jw_key(w, "requiresPreviewSelection");
        jw_bool(w, 1);
    }
    jw_obj_end(w);
}

/* Memory in bytes is drawn as its running sum (what is live); other
 * counts as a rate. */
static void write_display(jw *w, const pc_profile *p, uint16_t event, const char *label)
{
    int bytes = p->event.unit[event] == PC_UNIT_BYTES, ns = p->event.unit[event] == PC_UNIT_NS;
    const char *what = pc_str(&p->str, p->event.name[event]);
    char row[320];
    jw_key(w, "display");
    jw_obj(w);
    jw_key(w, "graphType");
    jw_cstr(w, bytes ? "line-accumulated" : "line-rate");
    jw_key(w, "unit");
    jw_cstr(w, bytes ? "bytes" : ns ? "ns" : "");
    jw_key(w, "color");
    jw_cstr(w, bytes ? "orange" : ns ? "blue" : "teal");
    jw_key(w, "markerSchemaLocation");
    jw_null(w);
    jw_key(w, "sortWeight");
    jw_int(w, bytes ? 20 : 50);
    jw_key(w, "label");
    jw_cstr(w, label);
    jw_key(w, "tooltipRows");
    jw_arr(w);
    if (bytes) {
        snprintf(row, sizeof row, "%s: live bytes, from the recording's start", what);
        pc_jw_tooltip_row(w, "accumulated", "bytes", row, 0);
        pc_jw_tooltip_row(w, "count", "bytes", "allocated less freed since the value before", 0);
        pc_jw_tooltip_row(w, "count-range", "bytes", "range in the graph", 0);
        pc_jw_tooltip_row(w, "sample-number", "number", "allocations and frees in this value",
                          0);
        pc_jw_tooltip_row(w, "selection-total", "bytes", "change over the selection", 1);
        jw_arr_end(w);
        jw_obj_end(w);
        return;
    }
    static const struct {
        const char *source, *what;
        int selection;
    } rows[] = {
        {"count", "%s counted since the value before", 0},
        {"rate", "%s per ms", 0},
        {"sample-number", "counter reads in this value", 0},
        {"selection-total", "%s in the selection", 1},
        {"committed-range-total", "%s in the visible range", 0},
    };
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        snprintf(row, sizeof row, rows[r].what, what);
        if (ns && strcmp(rows[r].source, "sample-number") != 0) {
            size_t u = strlen(row);
            snprintf(row + u, sizeof row - u, " (ns)");
        }
        pc_jw_tooltip_row(w, rows[r].source, "number", row, rows[r].selection);
    }
    jw_arr_end(w);
    jw_obj_end(w);
}

int pc_fx_event_counters(jw *w, const pc_profile *p, const uint32_t *owner_track,
                         uint64_t start)
{
    uint64_t interval = pc_interval_ns(p);
    size_t n = 0, nc = p->counter.n;
    ckey *k = malloc((nc + 1) * sizeof *k);
    uint64_t *gaps = malloc((nc + 1) * sizeof *gaps);
    uint64_t *last = malloc(((size_t)PC_NO_CPU + 1) * sizeof *last);
    if (!k || !gaps || !last) {
        free(k);
        free(gaps);
        free(last);
        return -1;
    }
    memset(last, 0xff, ((size_t)PC_NO_CPU + 1) * sizeof *last);
    /* Times count from start; nothing the filters kept is earlier. */
    for (size_t i = 0; i < nc; i++) {
        uint32_t tr = owner_track[p->counter.thread[i]];
        uint64_t t = p->counter.time[i] > start ? p->counter.time[i] - start : 0;
        if (tr != PC_NONE && p->counter.event[i] < p->event.n)
            k[n++] = (ckey){tr, (uint32_t)i, t, p->counter.event[i]};
    }
    pc_qsort(k, n, sizeof *k, cmp_ckey);
    for (size_t j = 0; j < n;) {
        size_t e = j;
        while (e < n && k[e].track == k[j].track && k[e].event == k[j].event)
            e++;
        uint32_t t = p->counter.thread[k[j].row];
        uint16_t ev = k[j].event;
        const char *name = pc_str(&p->str, p->event.name[ev]);
        char label[320], pid[24];
        /* A CPU's track says which CPU: they share one process. */
        if (p->thread.pid[t] == -1)
            snprintf(label, sizeof label, "%s, %s", name, pc_str(&p->str, p->thread.name[t]));
        else
            snprintf(label, sizeof label, "%s", name);
        snprintf(pid, sizeof pid, "%lld", (long long)p->thread.pid[t]);
        jw_obj(w);
        jw_key(w, "name");
        jw_cstr(w, label);
        jw_key(w, "category");
        jw_cstr(w, p->event.unit[ev] == PC_UNIT_BYTES ? "Memory" : "CPU");
        jw_key(w, "description");
        jw_str_begin(w);
        jw_str_part(w, name, strlen(name));
        const char *by = p->event.unit[ev] == PC_UNIT_BYTES ? ": bytes allocated and not freed"
                         : p->thread.pid[t] == -1 ? " counted by this CPU"
                                                  : " counted by the CPUs while this process ran";
        jw_str_part(w, by, strlen(by));
        jw_str_end(w);
        jw_key(w, "pid");
        jw_cstr(w, pid);
        jw_key(w, "mainThreadIndex");
        jw_uint(w, k[j].track);
        /* Several CPUs' reads interleave: bins (see the top). */
        int cpus = 0;
        uint64_t gap = read_gap(p, k + j, e - j, last, gaps, &cpus);
        write_samples(w, p, k + j, e - j, cpus > 1 ? gap : 0, gap ? gap : interval);
        write_display(w, p, ev, label);
        jw_obj_end(w);
        j = e;
    }
    free(k);
    free(gaps);
    free(last);
    return 0;
}
