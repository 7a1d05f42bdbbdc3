/* Clock conversion (read/perfetto/clock.h) against a plain reference: the
 * chain of clocks found by breadth-first search, each hop through the
 * snapshot with the largest source time not after the value (the last of
 * equal ones; the first snapshot when the value precedes them all).  The
 * conversion keeps each clock's chain and bisects the snapshots; its
 * results must not change, whatever the order snapshots come in. */
#include <stdlib.h>
#include <string.h>

#include "gen_common.h"
#include "read/perfetto/clock.h"
#include "t.h"


/* The reference hop, by a scan of every snapshot. */
static uint64_t ref_hop(const pf_clock_edge *e, uint64_t t)
{
    size_t best = 0;
    int found = 0;
    for (size_t i = 0; i < e->n; i++)
        if (e->ts_from[i] <= t && (!found || e->ts_from[i] >= e->ts_from[best])) {
            best = i;
            found = 1;
        }
    return t - e->ts_from[best] + e->ts_to[best];
}

static const pf_clock_edge *find_edge(const pf_clocks *c, uint64_t a, uint64_t b)
{
    for (size_t i = 0; i < c->n_edges; i++)
        if (c->edges[i].from == a && c->edges[i].to == b)
            return &c->edges[i];
    return NULL;
}

TEST(perfetto_clock_conversion_matches_a_scan)
{
    rng_state = 12345;
    for (int round = 0; round < 2; round++) {
        pf_clocks c;
        memset(&c, 0, sizeof c);
        c.trace_clock = PF_CLOCK_BOOTTIME;
        /* A chain: private clock 64 of sequence 1 -> monotonic -> boottime;
         * snapshots every 100 ms, in order (round 0) or shuffled a little
         * (round 1: some come late). */
        uint64_t k64 = pf_clock_key(64, 1);
        for (int i = 0; i < 3000; i++) {
            uint64_t base = (uint64_t)(round && i % 7 == 3 ? i - 2 : i) * 100000000u;
            uint64_t keys1[2] = {k64, PF_CLOCK_MONOTONIC};
            uint64_t ts1[2] = {base + 5, base + 1000 + (uint64_t)i};
            uint64_t keys2[2] = {PF_CLOCK_MONOTONIC, PF_CLOCK_BOOTTIME};
            uint64_t ts2[2] = {base + 1000 + (uint64_t)i, base * 2 + 77};
            T_EQ_INT(pf_clocks_add(&c, keys1, ts1, 2), 0);
            T_EQ_INT(pf_clocks_add(&c, keys2, ts2, 2), 0);
        }
        const pf_clock_edge *a = find_edge(&c, k64, PF_CLOCK_MONOTONIC);
        const pf_clock_edge *b = find_edge(&c, PF_CLOCK_MONOTONIC, PF_CLOCK_BOOTTIME);
        T_CHECK(a && b);
        if (!a || !b)
            return;
        T_EQ_INT(a->unsorted, round);
        size_t same = 0, n = 20000;
        for (size_t i = 0; i < n; i++) {
            uint64_t t = rnd() % (3001ull * 100000000u);
            uint64_t got, want = ref_hop(b, ref_hop(a, t));
            T_EQ_INT(pf_clocks_convert(&c, k64, t, &got), 0);
            same += got == want;
        }
        T_EQ_INT(same, n);
        /* A clock no snapshot joins stays as it was, and says so. */
        uint64_t out;
        T_EQ_INT(pf_clocks_convert(&c, PF_CLOCK_REALTIME, 42, &out), -1);
        T_EQ_INT(out, 42);
        /* A new pair of clocks may shorten a chain: the kept one is
         * found again.  Realtime now joins boottime directly. */
        uint64_t keys3[2] = {PF_CLOCK_REALTIME, PF_CLOCK_BOOTTIME};
        uint64_t ts3[2] = {1000, 5000};
        T_EQ_INT(pf_clocks_add(&c, keys3, ts3, 2), 0);
        T_EQ_INT(pf_clocks_convert(&c, PF_CLOCK_REALTIME, 1500, &out), 0);
        T_EQ_INT(out, 5500);
        pf_clocks_free(&c);
    }
}

/* Snapshot i of a series on the clocks keys, 1 us apart; returns its
 * time on the first clock.  Every fifth repeats the time of the one
 * before it, with another offset: the later one is the hop's. */
static uint64_t add_snapshot(pf_clocks *c, const uint64_t keys[2], int i)
{
    uint64_t at = (uint64_t)(i - (i % 5 == 4)) * 1000 + 100;
    uint64_t ts[2] = {at, at * 3 + (uint64_t)i};
    T_EQ_INT(pf_clocks_add(c, keys, ts, 2), 0);
    return at;
}

/* Packets come in nearly time order, and the hop remembers the snapshot
 * it used last: that memory must give the scan's answer whether a time
 * falls on the same snapshot, the next, far ahead or back, on a run of
 * snapshots of equal time, or before them all, and while snapshots are
 * still being added. */
TEST(perfetto_clock_remembered_snapshot_matches_a_scan)
{
    rng_state = 12345;
    pf_clocks c;
    memset(&c, 0, sizeof c);
    c.trace_clock = PF_CLOCK_BOOTTIME;
    uint64_t keys[2] = {PF_CLOCK_MONOTONIC, PF_CLOCK_BOOTTIME};
    size_t same = 0, n = 0;
    uint64_t t = 50;
    for (int i = 0; i < 4000; i++) {
        uint64_t at = add_snapshot(&c, keys, i);
        const pf_clock_edge *e = find_edge(&c, PF_CLOCK_MONOTONIC, PF_CLOCK_BOOTTIME);
        T_CHECK(e != NULL);
        if (!e)
            break;
        for (int k = 0; k < 3; k++, n++) {
            uint64_t r = rnd() % 100;
            if (r < 70)
                t += rnd() % 700;            /* on, or just past */
            else if (r < 85)
                t = at;                       /* exactly on the newest */
            else if (r < 95)
                t = rnd() % (at + 2000);     /* anywhere, back or ahead */
            else
                t = rnd() % 100;             /* before every snapshot */
            uint64_t got;
            T_EQ_INT(pf_clocks_convert(&c, PF_CLOCK_MONOTONIC, t, &got), 0);
            same += got == ref_hop(e, t);
        }
    }
    T_EQ_INT(same, n);
    T_CHECK(n == 12000);
    pf_clocks_free(&c);
}

/* A sequence's packets convert by the span of times the last conversion
 * gave (pf_clocks_convert_span): every time in it must convert as the
 * scan does, by the one difference, both ends included; the span must
 * end at the next snapshot, or what lies past it would convert wrongly
 * once a later one is used.  A chain of two hops and snapshots out of
 * order give no span. */
TEST(perfetto_clock_span_converts_as_a_scan)
{
    rng_state = 777;
    pf_clocks c;
    memset(&c, 0, sizeof c);
    c.trace_clock = PF_CLOCK_BOOTTIME;
    uint64_t keys[2] = {PF_CLOCK_MONOTONIC, PF_CLOCK_BOOTTIME};
    for (int i = 0; i < 200; i++)
        add_snapshot(&c, keys, i);
    const pf_clock_edge *e = find_edge(&c, PF_CLOCK_MONOTONIC, PF_CLOCK_BOOTTIME);
    T_CHECK(e != NULL);
    if (!e)
        return;
    size_t same = 0, n = 0, spans = 0;
    for (int k = 0; k < 3000; k++) {
        uint64_t t = rnd() % 202000, out;
        pf_clock_span sp;
        T_EQ_INT(pf_clocks_convert_span(&c, PF_CLOCK_MONOTONIC, t, &out, &sp), 0);
        if (!sp.len)
            continue;
        spans += t - sp.from < sp.len;
        uint64_t d = out - t, last = sp.from + (sp.len - 1);
        uint64_t probe[4] = {sp.from, last, sp.from + rnd() % sp.len, t};
        for (int j = 0; j < 4; j++, n++)
            same += probe[j] + d == ref_hop(e, probe[j]);
        /* The time after the span is the next snapshot's. */
        if (last != UINT64_MAX - 1) {
            n++;
            same += e->ts_from[0] <= last + 1 && ref_hop(e, last + 1) != last + 1 + d;
        }
    }
    T_EQ_INT(spans, 3000);
    T_EQ_INT(same, n);
    /* The trace clock itself: every time, unchanged. */
    uint64_t out;
    pf_clock_span sp;
    T_EQ_INT(pf_clocks_convert_span(&c, PF_CLOCK_BOOTTIME, 5, &out, &sp), 0);
    T_CHECK(out == 5 && sp.from == 0 && sp.len == UINT64_MAX);
    /* Two hops: no span, the time still converted. */
    uint64_t keys2[2] = {PF_CLOCK_REALTIME, PF_CLOCK_MONOTONIC};
    uint64_t ts2[2] = {10000, 500};
    T_EQ_INT(pf_clocks_add(&c, keys2, ts2, 2), 0);
    e = find_edge(&c, PF_CLOCK_MONOTONIC, PF_CLOCK_BOOTTIME);
    T_EQ_INT(pf_clocks_convert_span(&c, PF_CLOCK_REALTIME, 10100, &out, &sp), 0);
    T_CHECK(sp.len == 0 && out == ref_hop(e, 600));
    /* A snapshot out of order: no span. */
    uint64_t ts3[2] = {150, 7};
    T_EQ_INT(pf_clocks_add(&c, keys, ts3, 2), 0);
    T_EQ_INT(pf_clocks_convert_span(&c, PF_CLOCK_MONOTONIC, 160, &out, &sp), 0);
    T_CHECK(sp.len == 0 && out == 160 - 150 + 7);
    pf_clocks_free(&c);
}
