/* ClockSnapshot packets, and packet times converted through them to
 * trace time.  clock.c keeps the graph of clocks alone, knowing nothing
 * of packets; this is the reader's side, shared by every family with
 * timed samples (the units of a clock, a sequence's default clock). */
#include "read/perfetto/reader.h"

static uint64_t unit_of(const pf_reader *r, uint64_t key)
{
    for (size_t i = 0; i < r->units.n; i++)
        if (r->units.key[i] == key)
            return r->units.mult[i];
    return 1;
}

/* Converts t on clock id (sequence seq) to trace time, and keeps in s->tc
 * (when s is not NULL) the span of times that convert by the same
 * difference.  Returns 0, or -1 when no snapshots join the clocks (a
 * trace without any snapshot keeps its times as they are). */
static int to_trace_time(pf_reader *r, pf_seq *s, uint32_t id, uint32_t seq, uint64_t t,
                         uint64_t *out)
{
    uint64_t key = pf_clock_key(id, seq);
    uint64_t mult = unit_of(r, key);
    if (mult != 1)
        t *= mult;
    pf_clock_span span;
    if (pf_clocks_convert_span(&r->clocks, key, t, out, &span) == 0) {
        if (s) {
            s->tc.key = key;
            s->tc.mult = mult;
            s->tc.delta = *out - t;
            s->tc.span = span;
            s->tc.trace_clock = r->clocks.trace_clock;
            s->tc.snapshots = r->clocks.n_snapshots;
            s->tc.units = r->units.n;
        }
        return 0;
    }
    if (r->clocks.n_snapshots == 0) {
        *out = t;
        return 0;
    }
    return -1;
}

int pf_to_trace_time(pf_reader *r, uint32_t id, uint32_t seq, uint64_t t, uint64_t *out)
{
    return to_trace_time(r, NULL, id, seq, t, out);
}

int pf_on_clock_snapshot(pf_reader *r, pb_reader *pr, uint32_t seq)
{
    static const uint8_t ex[] = {ANY, L, V};
    enum { MAX = 64 };
    uint64_t keys[MAX], ts[MAX];
    size_t n = 0;
    pb_field f;
    int got;
    while ((got = NEXT(r, pr, &f, ex, "ClockSnapshot")) > 0) {
        if (f.number == 2) {
            if (!r->clocks.trace_clock_set && r->clocks.n_snapshots == 0) {
                r->clocks.trace_clock = f.value;
                r->clocks.trace_clock_set = 1;
            }
            continue;
        }
        if (f.number != 1)
            continue;
        static const uint8_t cex[] = {ANY, V, V, V, V};
        pb_reader sub;
        pb_field g;
        uint64_t id = 0, t = 0, mult = 1;
        pb_reader_sub(pr, &f, &sub);
        while ((got = NEXT(r, &sub, &g, cex, "ClockSnapshot.Clock")) > 0) {
            if (g.number >= 1 && g.number <= 4 &&
                pf_scalar(r, &sub, &g, "ClockSnapshot.Clock") != PC_OK)
                return r->err->status;
            if (g.number == 1)
                id = g.value;
            else if (g.number == 2)
                t = g.value;
            else if (g.number == 4 && g.value)
                mult = g.value;
        }
        if (got < 0)
            return r->err->status;
        if (n == MAX || id > UINT32_MAX)
            continue;
        keys[n] = pf_clock_key((uint32_t)id, seq);
        ts[n] = t * mult;
        if (mult != 1 && unit_of(r, keys[n]) == 1) {
            struct pc_col cols[] = {PC_COL(r->units.key), PC_COL(r->units.mult)};
            if (pc_grow_cols(&r->units.cap, r->units.n + 1, cols, 2) < 0)
                return pf_nomem(r);
            r->units.key[r->units.n] = keys[n];
            r->units.mult[r->units.n++] = mult;
        }
        n++;
    }
    if (got < 0)
        return r->err->status;
    if (pf_clocks_add(&r->clocks, keys, ts, n) < 0)
        return pf_nomem(r);
    /* The first snapshot with the wall clock dates the recording. */
    pc_profile *p = r->p;
    for (size_t i = 0; i < n && !p->meta.has_wall; i++) {
        uint64_t at;
        if (keys[i] == pf_clock_key(PF_CLOCK_REALTIME, seq) &&
            pf_clocks_convert(&r->clocks, keys[i], ts[i], &at) == 0) {
            p->meta.has_wall = 1;
            p->meta.wall_ns = ts[i];
            p->meta.wall_at = at;
        }
    }
    return PC_OK;
}

int pf_packet_time(pf_reader *r, pf_seq *s, const pf_packet *pk, uint64_t *t)
{
    if (!pk->has_clock && !s->has_clock) {
        *t = pk->ts;
        return 0;
    }
    uint32_t id = pk->has_clock ? pk->clock_id : s->clock_id;
    /* As the conversion before, while no snapshot or unit came since. */
    if (s->tc.span.len && s->tc.key == pf_clock_key(id, s->id) &&
        s->tc.snapshots == r->clocks.n_snapshots && s->tc.units == r->units.n &&
        s->tc.trace_clock == r->clocks.trace_clock) {
        uint64_t v = pk->ts * s->tc.mult;
        if (v - s->tc.span.from < s->tc.span.len) {
            *t = v + s->tc.delta;
            return 0;
        }
    }
    return to_trace_time(r, s, id, s->id, pk->ts, t);
}

int pf_sample_time(pf_reader *r, pf_seq *s, const pf_packet *pk, uint64_t *t)
{
    if (!pk->has_ts) {
        r->st.no_timestamp++;
        return -1;
    }
    if (pf_packet_time(r, s, pk, t) < 0) {
        r->st.clock_failures++;
        return -1;
    }
    return 0;
}
