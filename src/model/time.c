/* The recording's time: its extent, seen before any filter, the sampling
 * interval, and the end of what is shown. */
#include "model/model.h"

#include "base/sort.h"

#include <stdlib.h>
#include <string.h>

void pc_saw_time(pc_profile *p, uint64_t t)
{
    if (!p->meta.has_time || t < p->meta.first_time)
        p->meta.first_time = t;
    if (!p->meta.has_time || t > p->meta.last_time)
        p->meta.last_time = t;
    p->meta.has_time = 1;
}

/* pc_saw_time for each of n times, in a loop the compiler can keep in
 * registers (and vectorize): millions of samples. */
static void saw_times(pc_profile *p, const uint64_t *t, size_t n)
{
    if (!n)
        return;
    uint64_t lo = t[0], hi = t[0];
    for (size_t i = 1; i < n; i++) {
        lo = t[i] < lo ? t[i] : lo;
        hi = t[i] > hi ? t[i] : hi;
    }
    pc_saw_time(p, lo);
    pc_saw_time(p, hi);
}

void pc_note_extent(pc_profile *p)
{
    /* The samples' times as they were added: filters only take samples
     * away, and the extent is that of what was read. */
    if (p->sample.n) {
        pc_saw_time(p, p->sample.time_lo);
        pc_saw_time(p, p->sample.time_hi);
    }
    saw_times(p, p->sw.time, p->sw.n);
    saw_times(p, p->marker.start, p->marker.n);
    saw_times(p, p->marker.end, p->marker.n);
    saw_times(p, p->heap.time, p->heap.n);
    saw_times(p, p->counter.time, p->counter.n);
    p->meta.shown_first = p->meta.first_time;
    p->meta.shown_last = p->meta.last_time;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The k-th smallest of d[0..n) (k < n), reordering d: what a sort would
 * put at d[k].  Hoare's selection with the middle of three as pivot, in
 * time linear in n as a rule; values chosen against it (they come from
 * the input) could make it quadratic, so past twice the rounds a sort
 * would take, the rest is sorted. */
static uint64_t kth_smallest(uint64_t *d, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1, rounds = 0, limit = 8;
    for (size_t m = n; m > 1; m /= 2)
        limit += 2;
    while (lo < hi) {
        if (++rounds > limit) {
            pc_qsort(d + lo, hi - lo + 1, sizeof *d, cmp_u64);
            break;
        }
        uint64_t a = d[lo], b = d[lo + (hi - lo) / 2], c = d[hi];
        uint64_t pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        size_t i = lo, j = hi;
        for (;;) {
            while (d[i] < pivot)
                i++;
            while (d[j] > pivot)
                j--;
            if (i >= j)
                break;
            uint64_t t = d[i];
            d[i] = d[j];
            d[j] = t;
            i++;
            j--;
        }
        /* [lo, j] holds values <= pivot, (j, hi] values >= pivot. */
        if (k <= j)
            hi = j;
        else
            lo = j + 1;
    }
    return d[k];
}

/* What pick() looks at beside the sample: whether any frame is an off-CPU
 * one, without which no sample's leaf need be read (a cache miss a
 * sample in a big stack table). */
typedef struct pick_ctx {
    const pc_profile *p;
    int offcpu_frames;
    const uint8_t *clock;  /* per event: an on-CPU event counted in ns */
} pick_ctx;

/* Whether event e is an on-CPU event counted in ns: a clock. */
static int is_clock(const pc_profile *p, size_t e)
{
    return p->event.unit[e] == PC_UNIT_NS && !p->event.offcpu[e];
}

/* The period of an on-CPU sample of a clock event (pc_sample_offcpu
 * tells off-CPU ones: an off-CPU event, or an off-CPU leaf frame). */
static inline uint64_t clock_period(const pick_ctx *c, size_t i)
{
    const pc_profile *p = c->p;
    uint16_t e = pc_sample_event(p, i);
    if (e >= p->event.n || !(c->clock ? c->clock[e] : is_clock(p, e)))
        return 0;
    int64_t w = pc_sample_weight(p, i);
    if (w <= 0)
        return 0;
    uint32_t s = p->sample.stack[i];
    if (c->offcpu_frames && s != PC_NONE && p->frame.cat[p->stack.frame[s]] == PC_CAT_OFFCPU)
        return 0;
    return (uint64_t)w;
}

/* The time since the previous sample of the same thread (grouped samples). */
static inline uint64_t sample_gap(const pick_ctx *c, size_t i)
{
    const pc_profile *p = c->p;
    if (i == 0 || pc_sample_thread(p, i) != pc_sample_thread(p, i - 1) ||
        pc_sample_time(p, i) <= pc_sample_time(p, i - 1))
        return 0;
    return pc_sample_time(p, i) - pc_sample_time(p, i - 1);
}

enum { CLOCK_PERIOD, SAMPLE_GAP };

static inline uint64_t pick(const pick_ctx *c, int what, size_t i)
{
    return what == CLOCK_PERIOD ? clock_period(c, i) : sample_gap(c, i);
}

enum { BLOCK = 1024 };

/* pick(c, what, i) for the rows [lo, lo + n) into v, n at most BLOCK.
 * The common case, a clock period where no frame is off the CPU, reads
 * the weight and event columns a block at a time (pc_icol_read): two
 * passes over a million rows otherwise cost 10 ms of the writing, in the
 * calls and tests the general pick makes for each row. */
static void pick_block(const pick_ctx *c, int what, size_t lo, size_t n, uint64_t *v)
{
    const pc_profile *p = c->p;
    if (what != CLOCK_PERIOD || c->offcpu_frames || !c->clock) {
        for (size_t k = 0; k < n; k++)
            v[k] = pick(c, what, lo + k);
        return;
    }
    const uint8_t *clock = c->clock;
    size_t ne = p->event.n;
    pc_icol_read(&p->sample.weight, lo, n, v);
    if (p->sample.event.size == 0) {
        uint16_t e = pc_sample_event(p, 0);
        int on = e < ne && clock[e];
        for (size_t k = 0; k < n; k++)
            v[k] = on && (int64_t)v[k] > 0 ? v[k] : 0;
        return;
    }
    uint64_t ev[BLOCK];
    pc_icol_read(&p->sample.event, lo, n, ev);
    for (size_t k = 0; k < n; k++) {
        uint16_t e = (uint16_t)ev[k];
        v[k] = e < ne && clock[e] && (int64_t)v[k] > 0 ? v[k] : 0;
    }
}

/* Whether pick(c, what, i) gives every row a value (none 0), known
 * without reading the rows: clock periods where every row is of one
 * on-CPU clock event, no frame is an off-CPU one, and the weight column's
 * width leaves no room for a weight below 1 (a row holds its base plus
 * an offset in [-half, half)).  Then the median's subset is every few
 * rows, with no pass to count them: two passes over the weights of a
 * million samples took 5 ms of the writing, on its one thread. */
static int every_row_picks(const pick_ctx *c, int what)
{
    const pc_profile *p = c->p;
    const pc_icol *w = &p->sample.weight;
    if (what != CLOCK_PERIOD || c->offcpu_frames || !c->clock || p->sample.event.size ||
        !p->sample.n || w->size == 8)
        return 0;
    uint16_t e = pc_sample_event(p, 0);
    int64_t base = (int64_t)w->base, half = (int64_t)w->half;
    return e < p->event.n && c->clock[e] && base > half && base <= INT64_MAX - half;
}

/* The median of the values that pick() gives for each sample (0: none),
 * taken over an evenly spread subset: as good as the exact one for a
 * nominal interval, and the sorting work stays bounded.  0 when no sample
 * gives one. */
static uint64_t median_of(const pick_ctx *c, int what)
{
    enum { MAX_KEPT = 1 << 16 };
    const pc_profile *p = c->p;
    uint64_t v[BLOCK];
    size_t count = 0, n = 0;
    int every = every_row_picks(c, what);
    for (size_t lo = 0; lo < p->sample.n && !every; lo += BLOCK) {
        size_t m = p->sample.n - lo < BLOCK ? p->sample.n - lo : BLOCK;
        pick_block(c, what, lo, m, v);
        for (size_t k = 0; k < m; k++)
            count += v[k] != 0;
    }
    if (every)
        count = p->sample.n;
    if (!count)
        return 0;
    size_t step = count / MAX_KEPT + 1, skip = 0;
    uint64_t *d = malloc((count / step + 1) * sizeof *d);
    if (!d)
        return 0;
    /* Every step-th value: the first, then step - 1 passed over; where
     * every row has one, every step-th row. */
    for (size_t i = 0; every && i < p->sample.n; i += step)
        d[n++] = pick(c, what, i);
    for (size_t lo = 0; lo < p->sample.n && !every; lo += BLOCK) {
        size_t m = p->sample.n - lo < BLOCK ? p->sample.n - lo : BLOCK;
        pick_block(c, what, lo, m, v);
        for (size_t k = 0; k < m; k++)
            if (v[k] && skip-- == 0) {
                d[n++] = v[k];
                skip = step - 1;
            }
    }
    uint64_t median = kth_smallest(d, n, n / 2);
    free(d);
    return median;
}

uint64_t pc_interval_ns(const pc_profile *p)
{
    /* A clock event's period is the interval the recording asked for;
     * gaps between samples are longer wherever threads slept. */
    uint8_t *clock = malloc(p->event.n + 1);
    pick_ctx c = {p, 0, clock};
    int any_clock = !clock;  /* without the table, looked for sample by sample */
    for (size_t e = 0; clock && e < p->event.n; e++) {
        clock[e] = (uint8_t)is_clock(p, e);
        any_clock |= clock[e];
    }
    for (size_t f = 0; any_clock && f < p->frame.n && !c.offcpu_frames; f++)
        c.offcpu_frames = p->frame.cat[f] == PC_CAT_OFFCPU;
    uint64_t v = any_clock ? median_of(&c, CLOCK_PERIOD) : 0;
    free(clock);
    c.clock = NULL;
    if (!v && p->sample.first)
        v = median_of(&c, SAMPLE_GAP);
    return v ? v : 1000000;
}

uint64_t pc_end_time(const pc_profile *p)
{
    uint64_t t = 0;
    for (size_t i = 0; i < p->sample.n; i++)
        if (pc_sample_time(p, i) > t)
            t = pc_sample_time(p, i);
    for (size_t i = 0; i < p->sw.n; i++)
        if (p->sw.time[i] > t)
            t = p->sw.time[i];
    return t;
}
