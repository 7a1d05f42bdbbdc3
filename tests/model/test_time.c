/* The profile's nominal interval: the median of the clock periods of
 * on-CPU samples, over every step-th of them where there are more than
 * 65,536, whatever columns the weights and events were stored in. */
#include <stdlib.h>

#include "t.h"
#include "gen_common.h"
#include "model/model.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The rule, row by row: a sample gives its weight where its event is a
 * clock counted in ns, on the CPU, the weight is above 0 and its leaf is
 * no off-CPU frame; every step-th such value (step = count / 65536 + 1,
 * the first taken) is kept, and the middle one of those sorted is the
 * interval. */
static uint64_t interval_by_rule(const pc_profile *p)
{
    size_t count = 0, n = 0;
    uint64_t *v = malloc((p->sample.n + 1) * sizeof *v);
    if (!v)
        return 0;
    for (size_t i = 0; i < p->sample.n; i++) {
        uint16_t e = pc_sample_event(p, i);
        int64_t w = pc_sample_weight(p, i);
        uint32_t s = p->sample.stack[i];
        if (e < p->event.n && p->event.unit[e] == PC_UNIT_NS && !p->event.offcpu[e] && w > 0 &&
            (s == PC_NONE || p->frame.cat[p->stack.frame[s]] != PC_CAT_OFFCPU))
            v[count++] = (uint64_t)w;
    }
    size_t step = count / 65536 + 1;
    for (size_t i = 0; i < count; i += step)
        v[n++] = v[i];
    qsort(v, n, sizeof *v, cmp_u64);
    uint64_t r = n ? v[n / 2] : 1000000;
    free(v);
    return r;
}

/* Layouts: one clock event with 4-byte weights; with 8-byte ones; with
 * one weight for all; two clocks and a count event (an event column);
 * with an off-CPU leaf frame on some stacks (the general path); and with
 * 2-byte weights, which then cannot be below 1 (every row gives one,
 * taken every few rows without a pass to count them). */
TEST(interval_is_the_median_of_clock_periods)
{
    enum { N = 150000 };
    for (int layout = 0; layout < 6; layout++) {
        t_case("layout %d", layout);
        rng_state = 0x6a09e667f3bcc909ULL + (uint64_t)layout;
        pc_profile *p = pc_profile_new();
        T_CHECK(p != NULL);
        if (!p)
            return;
        uint32_t th = pc_add_thread(p, 5, 5, PC_NONE);
        uint32_t clk = pc_event(p, pc_intern_cstr(p, "cpu-clock"), PC_UNIT_NS, 0);
        uint32_t cyc = pc_event(p, pc_intern_cstr(p, "cycles"), PC_UNIT_COUNT, 0);
        uint32_t tck = pc_event(p, pc_intern_cstr(p, "task-clock"), PC_UNIT_NS, 0);
        uint32_t fn = pc_func(p, pc_intern_cstr(p, "f"), PC_NONE);
        uint32_t on = pc_stack(p, PC_NONE, pc_add_frame(p, fn, 1, PC_CAT_NATIVE, 0));
        /* Only this layout has an off-CPU frame: the others' periods are
         * read without looking at frames. */
        uint32_t off = layout == 4
                           ? pc_stack(p, PC_NONE, pc_add_frame(p, fn, 2, PC_CAT_OFFCPU, 0))
                           : PC_NONE;
        for (size_t i = 0; i < N; i++) {
            int64_t w = 200000 + (int64_t)below(100000) - (below(50) == 0 ? 400000 : 0);
            uint32_t ev = clk, stack = on;
            if (layout == 1)
                w += (int64_t)below(3) << 32;
            if (layout == 2)
                w = 250000;
            if (layout == 5)
                w = 250000 + (int64_t)below(20000);
            if (layout == 3) {
                ev = below(2) == 0 ? cyc : below(2) ? tck : clk;
                /* Cycles are no time: counted, they would move the median. */
                if (ev == cyc)
                    w += 10000000;
            }
            if (layout == 4 && below(4) == 0) {
                stack = off;
                w *= 7;
            }
            pc_add_sample(p, th, 1000 * i, stack, w, (uint16_t)ev, PC_NO_CPU);
        }
        T_EQ_INT(p->oom, 0);
        T_CHECK((layout == 1) == (p->sample.weight.size == 8));
        T_CHECK((layout == 2) == (p->sample.weight.size == 0));
        T_CHECK((layout == 3) == (p->sample.event.size != 0));
        T_CHECK((layout == 5) == (p->sample.weight.size == 2));
        uint64_t want = interval_by_rule(p);
        T_CHECK(want > 1000);
        T_EQ_INT(pc_interval_ns(p), want);
        pc_profile_free(p);
    }
}
