/* The Perfetto reader's interned data and incremental state, on the
 * project's own traces: clears, data loss, the perf timebase across clears,
 * thousands of callstacks defined as the trace goes on, and the depth limit
 * applied when a callstack is resolved. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_fixtures.h"
#include "read/perfetto/intern.h"
#include "t.h"
#include "test_util.h"

/* Interned callstack 1 of sequence 2 names function `name`. */
static void interned_stack(pb_buf *b, const char *name)
{
    size_t in = pb_begin(b, PFE_INTERNED);
    pfe_str(b, PFE_FUNCTION_NAMES, 1, name);
    pfe_frame(b, PFE_FRAMES, 1, 1, 0, 0);
    uint64_t f[] = {1};
    pfe_callstack(b, PFE_CALLSTACKS, 1, f, 1, 0);
    pb_end(b, in);
}

static void seq2_sample(pb_buf *b, uint64_t ts, int dropped, int cleared, const char *define)
{
    size_t pk = pfe_packet(b, 2);
    pb_uint(b, PFE_FLAGS, (cleared ? 1 : 0) | 2);
    if (dropped)
        pb_uint(b, PFE_DROPPED, 1);
    pb_uint(b, PFE_TIMESTAMP, ts);
    if (define)
        interned_stack(b, define);
    pfe_perf_sample(b, 0, 9, 9, 1, -1);
    pb_end(b, pk);
}

TEST(perfetto_incremental_state)
{
    pb_buf b = {0};
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    /* Before any clear the state is invalid: interned data is ignored and
     * the sample, which needs it, dropped. */
    seq2_sample(&b, 1000, 0, 0, "never");
    /* Cleared: valid.  A second definition of iid 1 loses to the first. */
    seq2_sample(&b, 2000, 0, 1, "first");
    seq2_sample(&b, 3000, 0, 0, "second");
    /* Data loss: invalid until the next clear. */
    seq2_sample(&b, 4000, 1, 0, NULL);
    seq2_sample(&b, 5000, 0, 0, NULL);
    seq2_sample(&b, 6000, 0, 1, "third");
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        uint32_t t = thread_of(p, 9, 9);
        T_EQ_INT(p->sample.n, 3);
        T_CHECK(t != PC_NONE);
        if (t != PC_NONE) {
            T_EQ_STR(stack_text(p, p->sample.stack[p->sample.first[t]]), "first");
            T_EQ_STR(stack_text(p, p->sample.stack[p->sample.first[t] + 1]), "first");
            T_EQ_STR(stack_text(p, p->sample.stack[p->sample.first[t] + 2]), "third");
            T_EQ_INT(pc_sample_time(p, p->sample.first[t] + 2), 6000);
        }
        T_CONTAINS(log_capture_text(), "3 packets needed incremental state");
        T_CONTAINS(log_capture_text(), "1 packet sequence(s) lost packets");
        /* Without a timebase or counts, each sample counts one. */
        T_EQ_STR(str_of(p, p->event.name[pc_sample_event(p, 0)]), "samples of cpu-clock");
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* A sample of sequence 3 (thread 9) at time ts whose cpu-clock timebase
 * reads count on CPU 0; with clear, the packet starts a new generation of
 * incremental state, as traced_perf's periodic clears do. */
static void seq3_counted(pb_buf *b, uint64_t ts, int64_t count, int clear, int dropped)
{
    size_t pk = pfe_packet(b, 3);
    pb_uint(b, PFE_FLAGS, (clear ? 1 : 0) | 2);
    if (dropped)
        pb_uint(b, PFE_DROPPED, 1);
    pb_uint(b, PFE_TIMESTAMP, ts);
    if (clear) {
        size_t d = pb_begin(b, PFE_DEFAULTS);
        size_t ps = pb_begin(b, 12);
        size_t tb = pb_begin(b, 1);
        pb_uint(b, 4, 1 /* SW_CPU_CLOCK */);
        pb_end(b, tb);
        pb_end(b, ps);
        pb_end(b, d);
        interned_stack(b, "work");
    }
    pfe_perf_sample(b, 0, 9, 9, 1, count);
    pb_end(b, pk);
}

/* An incremental-state clear starts interned data afresh, not the
 * kernel's counters: the sample after it weighs what its CPU counted
 * since the sample before, not the whole count since the session began.
 * Perfetto sets previous_packet_dropped on the first packet of every
 * sequence; only a later one means packets were lost. */
TEST(perfetto_timebase_across_clears)
{
    pb_buf b = {0};
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    /* The sequence's first packet, as a writer with no incremental state
     * sends it. */
    size_t pk = pfe_packet(&b, 3);
    pb_uint(&b, PFE_DROPPED, 1);
    pb_end(&b, pk);
    seq3_counted(&b, 1000000, 5000000000, 1, 0);
    seq3_counted(&b, 2000000, 5000250000, 0, 0);
    seq3_counted(&b, 3000000, 5000500000, 1, 0);
    seq3_counted(&b, 4000000, 5000750000, 0, 0);
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        T_EQ_STR(samples_text(p, thread_of(p, 9, 9)),
                 "1000:5000000000:work 2000:250000:work 3000:250000:work 4000:250000:work");
        T_CHECK(!strstr(log_capture_text(), "lost packets"));
    }
    pc_profile_free(p);
    /* A loss later in the sequence is one. */
    seq3_counted(&b, 5000000, 5001000000, 0, 1);
    p = convert_buf(&b, &o);
    if (p)
        T_CONTAINS(log_capture_text(), "1 packet sequence(s) lost packets");
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* Thousands of callstacks, most defined just before their one sample:
 * the space of those resolved is reclaimed as the trace goes on, the
 * others' frames are moved and kept, and callstacks used again
 * afterwards, plain or under an unwinding error's root frame, still give
 * their frames. */
static const char *many_stack_text(int k, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (int j = 0; j < 30; j++)
        used += (size_t)snprintf(buf + used, size - used, "%sf%d", j ? ";" : "", (k + j) % 100);
    return buf;
}

TEST(perfetto_many_callstacks)
{
    enum { N = 3000 };
    pb_buf b = {0};
    perf_start_with_frames(&b, "f", 100);
    uint64_t t = 600000000;
    for (int k = 0; k < N; k++) {
        size_t pk = pfe_packet(&b, 1);
        pb_uint(&b, PFE_FLAGS, 2);
        pb_uint(&b, PFE_TIMESTAMP, t += 1000);
        size_t in = pb_begin(&b, PFE_INTERNED);
        uint64_t frames[30];
        for (int j = 0; j < 30; j++)
            frames[j] = (uint64_t)((k + j) % 100) + 1;
        pfe_callstack(&b, PFE_CALLSTACKS, (uint64_t)k + 1, frames, 30, k & 1);
        pb_end(&b, in);
        /* Every tenth is first used at the end. */
        if (k % 10 != 3)
            pfe_perf_sample(&b, 0, 100, 100, (uint64_t)k + 1, 1000);
        pb_end(&b, pk);
    }
    for (int k = 3; k < N; k += 10)
        perf_sample_packet(&b, t += 1000, (uint64_t)k + 1);
    /* Again, late: callstacks 1, 2 and N, and 5 under an error root. */
    uint64_t again[] = {1, 2, N};
    for (int i = 0; i < 3; i++)
        perf_sample_packet(&b, t += 1000, again[i]);
    size_t pk = pfe_packet(&b, 1);
    pb_uint(&b, PFE_FLAGS, 2);
    pb_uint(&b, PFE_TIMESTAMP, t += 1000);
    size_t ps = pb_begin(&b, 66);
    pb_uint(&b, 1, 0);
    pb_uint(&b, 2, 100);
    pb_uint(&b, 3, 100);
    pb_uint(&b, 4, 5);
    pb_uint(&b, 6, 1000);
    pb_uint(&b, 16, 2);
    pb_end(&b, ps);
    pb_end(&b, pk);

    pc_options o;
    pc_options_init(&o);
    pc_profile *p = convert_buf(&b, &o);
    pb_buf_free(&b);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, N + 4);
    /* In time order: the nine tenths, the deferred tenth, then the four. */
    char want[512];
    size_t i = 0;
    for (int k = 0; k < N; k++)
        if (k % 10 != 3 && strcmp(stack_text(p, p->sample.stack[i++]),
                                  many_stack_text(k, want, sizeof want)) != 0)
            t_fail(__FILE__, __LINE__, "callstack %d: %s", k + 1, stack_text(p, p->sample.stack[i - 1]));
    for (int k = 3; k < N; k += 10)
        if (strcmp(stack_text(p, p->sample.stack[i++]), many_stack_text(k, want, sizeof want)) != 0)
            t_fail(__FILE__, __LINE__, "deferred callstack %d: %s", k + 1,
                   stack_text(p, p->sample.stack[i - 1]));
    T_EQ_STR(stack_text(p, p->sample.stack[N]), many_stack_text(0, want, sizeof want));
    T_EQ_STR(stack_text(p, p->sample.stack[N + 1]), many_stack_text(1, want, sizeof want));
    T_EQ_STR(stack_text(p, p->sample.stack[N + 2]), many_stack_text(N - 1, want, sizeof want));
    const char *err = stack_text(p, p->sample.stack[N + 3]);
    T_CHECK(strncmp(err, "ERROR ", 6) == 0);
    const char *rest = strchr(err, ';');
    T_EQ_STR(rest ? rest + 1 : "", many_stack_text(4, want, sizeof want));
    pc_profile_free(p);
}

/* An interned callstack deeper than the limit is cut once, when it is
 * resolved, to its innermost frames (Perfetto lists frames root first). */
TEST(perfetto_depth_limit)
{
    enum { DEPTH = 40 };
    pb_buf b = {0};
    perf_start_with_frames(&b, "d", DEPTH);
    uint64_t frames[DEPTH];
    for (int i = 0; i < DEPTH; i++)
        frames[i] = (uint64_t)i + 1;
    size_t pk = pfe_packet(&b, 1);
    pb_uint(&b, PFE_FLAGS, 2);
    size_t in = pb_begin(&b, PFE_INTERNED);
    pfe_callstack(&b, PFE_CALLSTACKS, 1, frames, DEPTH, 1);
    pfe_callstack(&b, PFE_CALLSTACKS, 2, frames, 3, 0);
    pb_end(&b, in);
    pb_end(&b, pk);
    for (int k = 0; k < 3; k++)
        perf_sample_packet(&b, 600000000 + 1000 * (uint64_t)k, k == 1 ? 2 : 1);
    pc_options o;
    pc_options_init(&o);
    o.max_depth = 5;
    log_capture_start(&o);
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        T_EQ_INT(p->sample.n, 3);
        T_EQ_STR(stack_text(p, p->sample.stack[0]), "d35;d36;d37;d38;d39");
        T_EQ_STR(stack_text(p, p->sample.stack[1]), "d0;d1;d2");
        T_EQ_INT(p->sample.stack[2], p->sample.stack[0]);
    }
    pc_profile_free(p);
    T_CONTAINS(log_capture_text(), "warning: 1 callstacks deeper than 5 frames keep only "
               "their 5 innermost frames (the deepest has 40;");
    /* Without a limit, the whole stack. */
    pc_options_init(&o);
    o.max_depth = 0;
    p = convert_buf(&b, &o);
    if (p) {
        const char *s = stack_text(p, p->sample.stack[0]);
        T_CHECK(strncmp(s, "d0;d1;", 6) == 0 && strstr(s, ";d39") != NULL);
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* The pool of frame iids is compacted as callstacks are resolved for good,
 * and compaction walks only the callstacks from the first that still has
 * frames (live_from).  Whatever is still live, a callstack left
 * unresolved early, others resolved out of order, mappings' paths, keeps
 * its iids through every compaction. */
TEST(perfetto_pool_compaction_keeps_live_slices)
{
    enum { N = 12000, DEPTH = 24, MAPS = 5 };
    pf_interned t;
    memset(&t, 0, sizeof t);
    /* The iid a callstack or mapping holds at position j. */
#define CS_IID(k, j) ((uint64_t)(k) * 1000 + (uint64_t)(j) + 7)
#define MAP_IID(m, j) ((uint64_t)(m) * 77 + (uint64_t)(j) + 1000000)
    uint32_t map_rec[MAPS];
    for (int m = 0; m < MAPS; m++) {
        map_rec[m] = pf_interned_new_mapping(&t);
        for (int j = 0; j < 3; j++)
            T_EQ_INT(pf_interned_pool_push(&t, MAP_IID(m, j)), 0);
        t.mappings[map_rec[m]].n_path = 3;
    }
    static uint32_t rec[N];
    static uint8_t done[N];
    size_t compactions = 0, checked = 0, bad = 0;
    for (int k = 0; k < N; k++) {
        size_t before = t.n_pool;
        pf_interned_pool_compact(&t);
        compactions += t.n_pool < before;
        rec[k] = pf_interned_new_callstack(&t);
        for (int j = 0; j < DEPTH; j++)
            T_EQ_INT(pf_interned_pool_push(&t, CS_IID(k, j)), 0);
        t.callstacks[rec[k]].n_frames = DEPTH;
        T_EQ_INT(pf_interned_put(&t, PF_CALLSTACK, (uint64_t)k + 1, rec[k]), 1);
        /* Most are resolved at once; callstack 2 only at the end, every
         * 97th a while later. */
        int later = k == 2 || k % 97 == 5;
        if (!later) {
            pf_interned_callstack_done(&t, pf_interned_entry(&t, PF_CALLSTACK, (uint64_t)k + 1),
                                       (uint32_t)k);
            done[k] = 1;
        }
        if (k >= 600 && (k - 600) % 97 == 5 && !done[k - 600]) {
            pf_interned_callstack_done(&t, pf_interned_entry(&t, PF_CALLSTACK,
                                                             (uint64_t)(k - 600) + 1),
                                       (uint32_t)(k - 600));
            done[k - 600] = 1;
        }
        /* Every live slice as it was pushed. */
        if (k % 500 == 499) {
            for (int c = 0; c <= k; c++) {
                const pf_callstack_rec *r = &t.callstacks[rec[c]];
                if (done[c]) {
                    bad += r->n_frames != 0;
                    continue;
                }
                for (int j = 0; j < DEPTH; j++, checked++)
                    bad += r->n_frames != DEPTH || t.pool[r->frame0 + (uint32_t)j] != CS_IID(c, j);
            }
            for (int m = 0; m < MAPS; m++)
                for (int j = 0; j < 3; j++, checked++)
                    bad += t.pool[t.mappings[map_rec[m]].path0 + (uint32_t)j] != MAP_IID(m, j);
        }
    }
#undef CS_IID
#undef MAP_IID
    T_EQ_INT(bad, 0);
    T_CHECK(checked > 2000);
    /* Several compactions, the pool kept small, and the walk started past
     * the callstacks resolved for good but not past callstack 2. */
    T_CHECK(compactions >= 3);
    T_CHECK(t.n_pool < (size_t)N * DEPTH / 2);
    T_EQ_INT(t.live_from, rec[2]);
    pf_interned_free(&t);
}
