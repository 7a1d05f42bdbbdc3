/* Chrome's sampling profiler (StreamingProfilePacket): callstack ids
 * with time deltas.  Unlike traced_perf's samples these carry neither
 * thread nor time: both come from the sequence's ThreadDescriptor, and
 * the time runs on from packet to packet. */
#include <stdlib.h>

#include "base/grow.h"
#include "read/perfetto/reader.h"

typedef struct u64vec {
    uint64_t *v;
    size_t n, cap;
} u64vec;

static int push_vec(pf_reader *r, void *ctx, uint64_t x)
{
    u64vec *v = ctx;
    if (pc_grow(&v->v, &v->cap, v->n + 1, sizeof *v->v, 64) < 0)
        return pf_nomem(r);
    v->v[v->n++] = x;
    return PC_OK;
}

int pf_on_streaming_profile(pf_reader *r, pb_reader *pr, pf_seq *s)
{
    static const uint8_t ex[] = {ANY, V, V, V};
    u64vec iids = {0}, deltas = {0};
    pb_field f;
    int got, st = PC_OK;
    while (st == PC_OK && (got = NEXT(r, pr, &f, ex, "StreamingProfilePacket")) > 0) {
        if (f.number == 1)
            st = pf_each_varint(r, pr, &f, push_vec, &iids, "callstack_iid");
        else if (f.number == 2)
            st = pf_each_varint(r, pr, &f, push_vec, &deltas, "timestamp_delta_us");
    }
    if (st == PC_OK && got < 0)
        st = r->err->status;
    if (st != PC_OK)
        goto done;
    if (!s->has_thread || !s->has_running) {
        r->st.chrome_no_thread += iids.n;
        goto done;
    }
    if (iids.n > deltas.n) {
        r->st.chrome_bad += iids.n;
        goto done;
    }
    pc_profile *p = r->p;
    if (r->chrome_event == PF_NO_EVENT &&
        (r->chrome_event = pf_event_named(r, "Chrome CPU samples", PC_UNIT_SAMPLES)) == PF_NO_EVENT) {
        st = pf_nomem(r);
        goto done;
    }
    uint32_t thread = pf_thread_of(r, s->pid, s->tid);
    if (thread == PC_NONE) {
        st = pf_nomem(r);
        goto done;
    }
    /* The packet's base time is converted once; its samples follow it by
     * the deltas, which also run on across packets. */
    uint64_t base;
    if (pf_to_trace_time(r, PF_CLOCK_MONOTONIC, s->id, (uint64_t)s->running, &base) < 0)
        base = (uint64_t)s->running;
    int64_t sum = 0;
    for (size_t i = 0; i < deltas.n; i++) {
        int64_t d = (int64_t)deltas.v[i];
        int64_t ns = d > INT64_MAX / 1000 ? INT64_MAX : d < INT64_MIN / 1000 ? INT64_MIN : d * 1000;
        s->running = pc_sat_add(s->running, ns);
        sum = pc_sat_add(sum, ns);
        if (s->running < 0) {
            r->st.chrome_bad += i < iids.n ? iids.n - i : 0;
            break;
        }
        if (i >= iids.n)
            continue;
        uint32_t stack;
        int res = pf_stack_of(r, s, iids.v[i], PC_NONE, &stack);
        if (res < 0) {
            if (p->oom) {
                st = pf_nomem(r);
                goto done;
            }
            r->st.unresolved_callstacks++;
            stack = PC_NONE;
        } else if (res > 0) {
            r->st.partial_stacks++;
        }
        /* base + sum, held within [0, UINT64_MAX]. */
        uint64_t mag = sum < 0 ? 0 - (uint64_t)sum : (uint64_t)sum;
        uint64_t t = sum < 0 ? (mag > base ? 0 : base - mag)
                             : (mag > UINT64_MAX - base ? UINT64_MAX : base + mag);
        pc_add_sample(p, thread, t, stack, 1, r->chrome_event, PC_NO_CPU);
    }
    if (p->oom)
        st = pf_nomem(r);
done:
    free(iids.v);
    free(deltas.v);
    return st;
}
