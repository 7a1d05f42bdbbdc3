/* Rows ordered by thread and time: the order a stable sort gives, whatever
 * the input's runs and ties, and samples regrouped column by column. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/model.h"
#include "gen_common.h"
#include "t.h"


static const uint32_t *sort_thread;
static const uint64_t *sort_time;

/* By thread, time, then input position: a stable order by the first two. */
static int cmp_rows(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (sort_thread[x] != sort_thread[y])
        return sort_thread[x] < sort_thread[y] ? -1 : 1;
    if (sort_time[x] != sort_time[y])
        return sort_time[x] < sort_time[y] ? -1 : 1;
    return (x > y) - (x < y);
}

/* Inputs shaped as recorders write them: each thread's rows in a few
 * interleaved runs in order (per-CPU buffers), with equal times, plus
 * wholly shuffled ones and ones in order. */
TEST(order_by_thread_is_a_stable_sort)
{
    rng_state = 0x2545f4914f6cdd1dULL;
    enum { N = 5000 };
    static uint32_t thread[N], perm[N], want[N];
    static uint64_t time[N];
    size_t first[9];
    for (int round = 0; round < 60; round++) {
        size_t n = 1 + below(N), nt = 1 + below(8);
        int shape = round % 3, runs = 1 + (int)below(6);
        uint64_t clock[8] = {0};
        for (size_t i = 0; i < n; i++) {
            thread[i] = (uint32_t)below((long)nt);
            if (shape == 0) {
                /* A run of each "CPU" in turn, each in time order, few
                 * distinct times so ties abound. */
                int cpu = (int)((i * (size_t)runs) / n);
                clock[cpu] += below(3);
                time[i] = clock[cpu] + (uint64_t)cpu * 2;
            } else if (shape == 1) {
                time[i] = below(50);
            } else {
                time[i] = i / 3;
            }
        }
        T_EQ_INT(pc_order_by_thread(thread, time, n, nt, perm, first), 0);
        for (size_t i = 0; i < n; i++)
            want[i] = (uint32_t)i;
        sort_thread = thread;
        sort_time = time;
        qsort(want, n, sizeof *want, cmp_rows);
        if (memcmp(perm, want, n * sizeof *perm) != 0) {
            t_fail(__FILE__, __LINE__, "round %d (shape %d, %zu rows, %zu threads): "
                   "not the stable order", round, shape, n, nt);
            break;
        }
        for (size_t t = 0; t <= nt; t++) {
            size_t count = 0;
            for (size_t i = 0; i < n; i++)
                count += thread[i] < t;
            T_EQ_INT(first[t], count);
        }
    }
}

/* More runs than the heap that merges them at once holds (65,536): rows
 * in falling time, most a run of their own, times repeating in many
 * runs, two threads.  Thread 0's are merged two runs at a time instead,
 * thread 1's through the heap, each into the stable order. */
TEST(order_by_thread_with_more_runs_than_the_heap)
{
    enum { N = 200000 };
    uint32_t *thread = malloc(N * sizeof *thread), *perm = malloc(N * sizeof *perm);
    uint32_t *want = malloc(N * sizeof *want);
    uint64_t *time = malloc(N * sizeof *time);
    size_t first[3];
    T_CHECK(thread && perm && want && time);
    if (!thread || !perm || !want || !time)
        goto out;
    for (size_t i = 0; i < N; i++) {
        thread[i] = (uint32_t)(i % 7 == 0);
        time[i] = (N - i) / 2 % 1000;
        want[i] = (uint32_t)i;
    }
    T_EQ_INT(pc_order_by_thread(thread, time, N, 2, perm, first), 0);
    sort_thread = thread;
    sort_time = time;
    qsort(want, N, sizeof *want, cmp_rows);
    T_CHECK(memcmp(perm, want, N * sizeof *perm) == 0);
out:
    free(thread);
    free(perm);
    free(want);
    free(time);
}

/* Grouping moves every column with its rows, and leaves room to add more. */
TEST(group_samples_moves_every_column)
{
    pc_profile *p = pc_profile_new();
    T_CHECK(p != NULL);
    if (!p)
        return;
    enum { N = 3000 };
    for (int t = 0; t < 3; t++)
        T_CHECK(pc_add_thread(p, 100 + t, 100 + t, PC_NONE) != PC_NONE);
    for (size_t i = 0; i < N; i++) {
        uint32_t t = (uint32_t)(i % 3);
        /* Thread 2's rows come in two runs out of order. */
        uint64_t time = t == 2 ? (i < N / 2 ? 1000 + i : i) : i;
        pc_add_sample(p, t, time, PC_NONE, (int64_t)i * 7, (uint16_t)(i % 5),
                      (uint16_t)(i % 11));
    }
    T_EQ_INT(pc_group_samples(p), 0);
    for (size_t k = 0; k < N; k++) {
        uint32_t t = pc_sample_thread(p, k);
        T_CHECK(k >= p->sample.first[t] && k < p->sample.first[t + 1]);
        size_t i = (size_t)(pc_sample_weight(p, k) / 7);
        if (pc_sample_event(p, k) != i % 5 || pc_sample_cpu(p, k) != i % 11 || i % 3 != t) {
            t_fail(__FILE__, __LINE__, "row %zu: columns of different samples", k);
            break;
        }
        if (k > p->sample.first[t] && pc_sample_time(p, k) < pc_sample_time(p, k - 1)) {
            t_fail(__FILE__, __LINE__, "row %zu out of time order", k);
            break;
        }
    }
    size_t n = p->sample.n;
    for (size_t i = 0; i < 5000; i++)
        pc_add_sample(p, 0, 99999 + i, PC_NONE, 1, 0, 0);
    T_EQ_INT(p->sample.n, n + 5000);
    T_EQ_INT(p->oom, 0);
    T_CHECK(pc_sample_time(p, n + 4999) == 99999 + 4999);
    pc_profile_free(p);
}

/* Every sample's weight and event read back as added, whichever width
 * the values made their columns: none while they repeat, then 1, 2, 4 and
 * 8 bytes a row as they stray further from the first; and the values
 * travel with their rows through grouping, keeping and
 * pc_sample_own_weights. */
TEST(sample_weight_and_event_columns_made_as_needed)
{
    enum { N = 4000 };
    static int64_t weight[N];
    static uint16_t event[N];
    pc_profile *p = pc_profile_new();
    T_CHECK(p != NULL);
    if (!p)
        return;
    T_CHECK(pc_add_thread(p, 1, 1, PC_NONE) != PC_NONE);
    T_CHECK(pc_add_thread(p, 1, 2, PC_NONE) != PC_NONE);
    for (size_t i = 0; i < N; i++) {
        /* One weight and event, then weights within 100 of the first,
         * within 32K, within 2^31, and past; a second event from row
         * 3000. */
        int64_t k = (int64_t)i;
        weight[i] = i < 1000   ? 100
                    : i < 1500 ? k % 201
                    : i < 2000 ? k - 20000
                    : i < 2500 ? k * -1000
                               : k << 33;
        event[i] = i < 3000 ? 3 : (uint16_t)(i % 4);
        pc_add_sample(p, (uint32_t)(i % 2), N - i, PC_NONE, weight[i], event[i], 0);
        if (i == 999 || i == 1499 || i == 1999 || i == 2499 || i == 2999) {
            t_case("row %zu", i);
            T_EQ_INT(p->sample.weight.size, i == 999 ? 0 : i == 1499 ? 1 : i == 1999 ? 2
                                                       : i == 2499 ? 4 : 8);
            T_EQ_INT(p->sample.event.size, 0);
        }
    }
    T_EQ_INT(p->sample.event.size, 1);
    T_EQ_INT(p->sample.thread.size, 1);
    T_EQ_INT(p->sample.cpu1.size, 0);
    T_EQ_INT(p->oom, 0);
    int bad = 0;
    for (size_t i = 0; i < N && !bad; i++)
        bad = pc_sample_weight(p, i) != weight[i] || pc_sample_event(p, i) != event[i];
    T_CHECK(!bad);
    /* Grouped: thread 0's rows then thread 1's, each latest first added. */
    T_EQ_INT(pc_group_samples(p), 0);
    for (size_t k = 0; k < N && !bad; k++) {
        size_t i = k < N / 2 ? N - 2 - 2 * k : N - 1 - 2 * (k - N / 2);
        bad = pc_sample_thread(p, k) != i % 2 || pc_sample_time(p, k) != N - i ||
              pc_sample_weight(p, k) != weight[i] || pc_sample_event(p, k) != event[i];
    }
    T_CHECK(!bad);
    pc_profile_free(p);

    /* A weight that does not fit first, then another: 8 bytes at once. */
    p = pc_profile_new();
    T_CHECK(p && pc_add_thread(p, 1, 1, PC_NONE) != PC_NONE);
    if (!p)
        return;
    pc_add_sample(p, 0, 1, PC_NONE, INT64_MAX, 0, 0);
    pc_add_sample(p, 0, 2, PC_NONE, 5, 0, 0);
    T_EQ_INT(p->sample.weight.size, 8);
    T_CHECK(pc_sample_weight(p, 0) == INT64_MAX && pc_sample_weight(p, 1) == 5);
    /* 1-byte weights, grouped, kept and dropped rows, then owned: the same
     * values. */
    pc_profile_free(p);
    p = pc_profile_new();
    T_CHECK(p && pc_add_thread(p, 1, 1, PC_NONE) != PC_NONE &&
            pc_add_thread(p, 1, 2, PC_NONE) != PC_NONE);
    if (!p)
        return;
    for (int i = 0; i < 6; i++)
        pc_add_sample(p, (uint32_t)(i % 2), (uint64_t)i, PC_NONE, i < 2 ? 7 : -i, 2, 0);
    T_CHECK(p->sample.weight.size == 1 && p->sample.event.size == 0);
    /* Rows 0, 2, 4 (thread 0), then 1, 3, 5; row 2 and 3 dropped. */
    T_EQ_INT(pc_group_samples(p), 0);
    uint8_t keep[6] = {1, 0, 1, 1, 0, 1};
    pc_keep_samples(p, keep);
    T_EQ_INT(p->sample.n, 4);
    T_EQ_INT(pc_sample_own_weights(p), 0);
    T_CHECK(p->sample.weight.size == 8 && p->sample.event.size == 0);
    const int64_t want[4] = {7, -4, 7, -5};
    for (int i = 0; i < 4; i++) {
        T_CHECK(pc_sample_weight(p, (size_t)i) == want[i]);
        T_EQ_INT(pc_sample_event(p, (size_t)i), 2);
    }
    pc_profile_free(p);
}

/* Grouping split over threads: the same rows in the same order as on
 * one, for 200,000 samples of 5 threads (one of them 60 % of the rows),
 * out of time order as per-CPU buffers leave them, with ties, and every
 * column made (8-byte weights, events). */
TEST(group_samples_threads_same_order)
{
    enum { N = 200000 };
    pc_profile *q[3];
    const int threads[3] = {1, 2, 4};
    for (int k = 0; k < 3; k++) {
        rng_state = 0x9e3779b97f4a7c15ULL;
        q[k] = pc_profile_new();
        T_CHECK(q[k] != NULL);
        if (!q[k])
            return;
        for (int t = 0; t < 5; t++)
            T_CHECK(pc_add_thread(q[k], 7, 7 + t, PC_NONE) != PC_NONE);
        uint64_t clock[4] = {0};
        for (size_t i = 0; i < N; i++) {
            /* Runs of 50 rows from each of 4 "CPUs" in turn. */
            int cpu = (int)(i / 50 % 4);
            clock[cpu] += below(3);
            uint32_t th = below(10) < 6 ? 0 : (uint32_t)(1 + below(4));
            pc_add_sample(q[k], th, clock[cpu], (uint32_t)i, (int64_t)i << 33,
                          (uint16_t)(i % 3), (uint16_t)cpu);
        }
        T_EQ_INT(pc_group_samples_on(q[k], threads[k]), 0);
    }
    for (int k = 1; k < 3; k++) {
        int same = q[k]->sample.n == q[0]->sample.n;
        for (size_t i = 0; same && i < N; i++)
            same = q[k]->sample.stack[i] == q[0]->sample.stack[i] &&
                   pc_sample_thread(q[k], i) == pc_sample_thread(q[0], i) &&
                   pc_sample_time(q[k], i) == pc_sample_time(q[0], i) &&
                   pc_sample_cpu(q[k], i) == pc_sample_cpu(q[0], i) &&
                   pc_sample_weight(q[k], i) == pc_sample_weight(q[0], i) &&
                   pc_sample_event(q[k], i) == pc_sample_event(q[0], i);
        for (int t = 0; same && t <= 5; t++)
            same = q[k]->sample.first[t] == q[0]->sample.first[t];
        if (!same)
            t_fail(__FILE__, __LINE__, "%d threads: not the rows one thread gives", threads[k]);
    }
    /* And that order is by thread, then time, then input (the stack
     * column holds the input position). */
    pc_profile *p = q[0];
    int ordered = 1;
    for (size_t i = 1; ordered && i < N; i++)
        if (pc_sample_thread(p, i) == pc_sample_thread(p, i - 1))
            ordered = pc_sample_time(p, i) > pc_sample_time(p, i - 1) ||
                      (pc_sample_time(p, i) == pc_sample_time(p, i - 1) &&
                       p->sample.stack[i] > p->sample.stack[i - 1]);
        else
            ordered = pc_sample_thread(p, i) > pc_sample_thread(p, i - 1);
    T_CHECK(ordered);
    for (int k = 0; k < 3; k++)
        pc_profile_free(q[k]);
}

/* Samples of threads 0-4 and 40, in per-CPU runs out of time order. */
static pc_profile *tally_profile(size_t n)
{
    rng_state = 0x243f6a8885a308d3ULL;
    pc_profile *p = pc_profile_new();
    if (!p)
        return NULL;
    for (int t = 0; t < 41; t++)
        pc_add_thread(p, 9, 9 + t, PC_NONE);
    uint64_t clock[4] = {0};
    for (size_t i = 0; i < n; i++) {
        int cpu = (int)(i / 40 % 4);
        clock[cpu] += below(3);
        uint32_t th = below(10) < 2 ? 40 : (uint32_t)below(5);
        pc_add_sample(p, th, clock[cpu], (uint32_t)i, 1, 0, (uint16_t)cpu);
    }
    return p;
}

static int same_rows(const pc_profile *a, const pc_profile *b)
{
    if (a->sample.n != b->sample.n || a->thread.n != b->thread.n)
        return 0;
    for (size_t i = 0; i < a->sample.n; i++)
        if (a->sample.stack[i] != b->sample.stack[i] ||
            pc_sample_thread(a, i) != pc_sample_thread(b, i) ||
            pc_sample_time(a, i) != pc_sample_time(b, i) || pc_sample_cpu(a, i) != pc_sample_cpu(b, i))
            return 0;
    return memcmp(a->sample.first, b->sample.first,
                  (a->thread.n + 1) * sizeof *a->sample.first) == 0;
}

/* The first grouping counts threads from the tally pc_add_sample keeps,
 * not from a pass of its own: the same rows either way, on one thread
 * and on two (where the rows are placed from both ends at once), with
 * threads added after the samples that the tally never saw.  The
 * tally is what it reads: told thread 0's rows were in order, it leaves
 * them as they came.  Keeping rows drops the tally, and grouping then
 * counts for itself. */
TEST(group_samples_tally_same_rows_as_a_pass)
{
    enum { N = 150000 };
    for (int threads = 1; threads <= 2; threads++) {
        pc_profile *a = tally_profile(N), *b = tally_profile(N);
        T_CHECK(a && b);
        if (!a || !b) {
            pc_profile_free(a);
            pc_profile_free(b);
            return;
        }
        T_CHECK(a->sample.tally.on && a->sample.tally.upto == N);
        T_CHECK(a->sample.tally.cap >= 41 && a->sample.tally.unsorted[0]);
        /* Threads without samples beyond those the tally knows. */
        for (int t = 0; t < 100; t++) {
            pc_add_thread(a, 9, 1000 + t, PC_NONE);
            pc_add_thread(b, 9, 1000 + t, PC_NONE);
        }
        T_CHECK(a->thread.n > a->sample.tally.cap);
        pc_tally_drop(b);
        T_EQ_INT(pc_group_samples_on(a, threads), 0);
        T_EQ_INT(pc_group_samples_on(b, threads), 0);
        T_CHECK(!a->sample.tally.on && !a->sample.tally.rows);
        if (!same_rows(a, b))
            t_fail(__FILE__, __LINE__, "%d threads: the tally's rows differ from a pass's",
                   threads);
        size_t rows40 = a->sample.first[41] - a->sample.first[40];
        T_CHECK(rows40 > N / 10 && rows40 < N * 3 / 10);
        pc_profile_free(a);
        pc_profile_free(b);
    }

    pc_profile *c = tally_profile(N);
    T_CHECK(c != NULL);
    if (!c)
        return;
    c->sample.tally.unsorted[0] = 0;
    T_EQ_INT(pc_group_samples_on(c, 2), 0);
    int ordered = 1;
    for (size_t i = c->sample.first[0] + 1; ordered && i < c->sample.first[1]; i++)
        ordered = pc_sample_time(c, i) >= pc_sample_time(c, i - 1);
    T_CHECK(!ordered);
    pc_profile_free(c);

    pc_profile *d = tally_profile(N), *e = tally_profile(N);
    T_CHECK(d && e);
    if (d && e) {
        uint8_t *keep = malloc(N);
        T_CHECK(keep != NULL);
        for (size_t i = 0; keep && i < N; i++)
            keep[i] = i % 3 != 0;
        if (keep) {
            pc_keep_samples(d, keep);
            T_CHECK(!d->sample.tally.on);
            T_EQ_INT(pc_group_samples_on(d, 2), 0);
            /* The rows kept, added again, and grouped through the tally. */
            pc_profile *f = pc_profile_new();
            T_CHECK(f != NULL);
            for (int t = 0; f && t < 41; t++)
                pc_add_thread(f, 9, 9 + t, PC_NONE);
            for (size_t i = 0; f && i < N; i++)
                if (keep[i])
                    pc_add_sample(f, pc_sample_thread(e, i), pc_sample_time(e, i),
                                  e->sample.stack[i], 1, 0, pc_sample_cpu(e, i));
            if (f) {
                T_EQ_INT(pc_group_samples_on(f, 2), 0);
                T_CHECK(same_rows(d, f));
            }
            pc_profile_free(f);
        }
        free(keep);
    }
    pc_profile_free(d);
    pc_profile_free(e);
}

/* Room made ahead for samples: the columns then stay where they are as
 * rows come, and hold what was added; with the address space limited
 * (--max-memory) no room is made. */
TEST(sample_reserve_keeps_columns_in_place)
{
    enum { N = 300000 };
    struct rlimit as, data;
    if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur != RLIM_INFINITY ||
        getrlimit(RLIMIT_DATA, &data) != 0 || data.rlim_cur != RLIM_INFINITY) {
        t_skip("the test runs with its memory limited (ulimit -v or -d): no room is made");
        return;
    }
    pc_profile *p = pc_profile_new();
    T_CHECK(p && pc_add_thread(p, 1, 1, PC_NONE) != PC_NONE &&
            pc_add_thread(p, 1, 2, PC_NONE) != PC_NONE);
    if (!p)
        return;
    pc_add_sample(p, 0, 5, 9, 1, 0, 3);
    pc_sample_reserve(p, N);
    T_EQ_INT(p->sample.cap, N + 1);
    /* Room the table has already changes nothing. */
    pc_sample_reserve(p, 10);
    T_EQ_INT(p->sample.cap, N + 1);
    const uint32_t *time = p->sample.time32;
    const uint32_t *stack = p->sample.stack;
    for (size_t i = 1; i <= N; i++)
        pc_add_sample(p, (uint32_t)(i % 2), 5 + i, (uint32_t)i * 3, 1, 0, (uint16_t)(i % 7));
    T_CHECK(!p->oom && p->sample.n == N + 1);
    T_CHECK(p->sample.time32 == time && p->sample.stack == stack);
    int same = pc_sample_time(p, 0) == 5 && p->sample.stack[0] == 9 && pc_sample_cpu(p, 0) == 3;
    for (size_t i = 1; same && i <= N; i++)
        same = pc_sample_time(p, i) == 5 + i && p->sample.stack[i] == i * 3 &&
               pc_sample_thread(p, i) == i % 2 && pc_sample_cpu(p, i) == i % 7;
    T_CHECK(same);
    pc_profile_free(p);

    pid_t child = fork();
    T_CHECK(child >= 0);
    if (child == 0) {
        struct rlimit lim;
        int ok = getrlimit(RLIMIT_AS, &lim) == 0;
        lim.rlim_cur = lim.rlim_max == RLIM_INFINITY ? RLIM_INFINITY - 1 : lim.rlim_max;
        ok = ok && setrlimit(RLIMIT_AS, &lim) == 0;
        pc_profile *q = pc_profile_new();
        ok = ok && q && pc_add_thread(q, 1, 1, PC_NONE) != PC_NONE;
        if (ok) {
            pc_add_sample(q, 0, 5, 9, 1, 0, 3);
            size_t cap = q->sample.cap;
            pc_sample_reserve(q, N);
            ok = q->sample.cap == cap && cap < N;
        }
        pc_profile_free(q);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    T_CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
            WEXITSTATUS(status) == 0);
}

/* One thread whose rows came out of time order: already grouped, they
 * are sorted where they lie, every column with them, the same on one
 * thread and on two. */
TEST(group_samples_one_thread_out_of_order)
{
    enum { N = 100000 };
    pc_profile *q[2];
    for (int k = 0; k < 2; k++) {
        rng_state = 0x853c49e6748fea9bULL;
        q[k] = pc_profile_new();
        T_CHECK(q[k] && pc_add_thread(q[k], 3, 3, PC_NONE) != PC_NONE);
        if (!q[k])
            return;
        uint64_t clock[3] = {0};
        for (size_t i = 0; i < N; i++) {
            int cpu = (int)(i / 30 % 3);
            clock[cpu] += below(4);
            pc_add_sample(q[k], 0, clock[cpu], (uint32_t)i, (int64_t)i << 33,
                          (uint16_t)(i % 5), (uint16_t)cpu);
        }
        T_EQ_INT(pc_group_samples_on(q[k], k + 1), 0);
    }
    pc_profile *p = q[0];
    int ordered = p->sample.n == N && p->sample.first[0] == 0 && p->sample.first[1] == N;
    for (size_t i = 0; ordered && i < N; i++) {
        uint32_t row = p->sample.stack[i];   /* the input position */
        ordered = pc_sample_thread(p, i) == 0 && pc_sample_weight(p, i) == (int64_t)row << 33 &&
                  pc_sample_event(p, i) == row % 5 && pc_sample_cpu(p, i) == row / 30 % 3;
        if (ordered && i > 0)
            ordered = pc_sample_time(p, i) > pc_sample_time(p, i - 1) ||
                      (pc_sample_time(p, i) == pc_sample_time(p, i - 1) &&
                       row > p->sample.stack[i - 1]);
    }
    T_CHECK(ordered);
    int same = q[1]->sample.n == N;
    for (size_t i = 0; same && i < N; i++)
        same = q[1]->sample.stack[i] == p->sample.stack[i] &&
               pc_sample_time(q[1], i) == pc_sample_time(p, i) &&
               pc_sample_cpu(q[1], i) == pc_sample_cpu(p, i);
    T_CHECK(same);
    pc_profile_free(q[0]);
    pc_profile_free(q[1]);
}

/* Adds n samples (thread[i], time[i], stack i), groups them, and checks
 * every row against a stable sort by thread and time, and that only
 * times far from the first make the 8-byte column.  Then keeps every
 * third row and checks the rest again. */
static void check_times(const uint32_t *thread, const uint64_t *time, size_t n, int wide)
{
    pc_profile *p = pc_profile_new();
    T_CHECK(p && pc_add_thread(p, 1, 1, PC_NONE) != PC_NONE &&
            pc_add_thread(p, 1, 2, PC_NONE) != PC_NONE &&
            pc_add_thread(p, 1, 3, PC_NONE) != PC_NONE);
    uint32_t *want = malloc(n * sizeof *want);
    uint8_t *keep = malloc(n);
    if (!p || !want || !keep)
        goto done;
    for (size_t i = 0; i < n; i++) {
        pc_add_sample(p, thread[i], time[i], (uint32_t)i, 1, 0, 0);
        want[i] = (uint32_t)i;
    }
    T_CHECK(!p->oom);
    T_EQ_INT(p->sample.time != NULL, wide);
    T_EQ_INT(p->sample.time32 == NULL, wide);
    sort_thread = thread;
    sort_time = time;
    qsort(want, n, sizeof *want, cmp_rows);
    T_CHECK(pc_group_samples(p) == 0);
    size_t bad = 0;
    for (size_t k = 0; k < n; k++)
        bad += p->sample.stack[k] != want[k] || pc_sample_time(p, k) != time[want[k]] ||
               pc_sample_thread(p, k) != thread[want[k]];
    T_EQ_INT(bad, 0);
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if ((keep[k] = k % 3 != 1))
            want[m++] = want[k];
    pc_keep_samples(p, keep);
    T_EQ_INT(p->sample.n, m);
    for (size_t k = 0; k < m; k++)
        bad += p->sample.stack[k] != want[k] || pc_sample_time(p, k) != time[want[k]];
    T_EQ_INT(bad, 0);
done:
    free(want);
    free(keep);
    pc_profile_free(p);
}

/* Times take two narrow columns while they are within 2^47 - 2^32 ns of the
 * first: rows out of order across many 2^32 ns steps, equal times, and
 * the rows grouped are as a stable sort makes them.  A time further on or
 * further back, or the clock's ends, make the 8-byte column, with the
 * rows before it kept. */
TEST(sample_times_narrow_then_wide)
{
    rng_state = 0x9e3779b97f4a7c15ULL;
    enum { N = 20000 };
    static uint32_t thread[N];
    static uint64_t time[N];
    const uint64_t t0 = 5000000000000000ULL, reach = (uint64_t)1 << 47;
    for (int round = 0; round < 6; round++) {
        for (size_t i = 0; i < N; i++) {
            thread[i] = (uint32_t)below(3);
            /* Mostly near the last, sometimes anywhere in reach. */
            uint64_t off = below(4) ? i * 1000003ULL + (uint64_t)below(3) * 7
                                   : (uint64_t)below(reach / 2 - ((long)1 << 31)) * 2;
            time[i] = below(2) ? t0 + off : t0 - off;
        }
        time[0] = t0;
        int wide = round >= 3;
        if (round == 3)
            time[N / 2] = t0 + reach + ((uint64_t)1 << 33);
        else if (round == 4)
            time[N / 3] = t0 - reach - ((uint64_t)1 << 33);
        else if (round == 5)
            time[N / 4] = UINT64_MAX, time[N / 5] = 0;
        check_times(thread, time, N, wide);
    }
    /* Where the first time is below 2^47 the columns start at 0. */
    for (size_t i = 0; i < N; i++)
        time[i] = below(2) ? (uint64_t)below(reach) : (uint64_t)1 << 47 | (uint64_t)below(reach / 2);
    time[0] = 1000;
    check_times(thread, time, N, 0);
    /* Times falling, some equal: more runs in a thread than the merge's
     * heap takes (65,536), so they are merged two by two. */
    enum { M = 200000 };
    uint32_t *th = malloc(M * sizeof *th);
    uint64_t *tm = malloc(M * sizeof *tm);
    T_CHECK(th && tm);
    if (th && tm) {
        for (size_t i = 0; i < M; i++) {
            th[i] = (uint32_t)(i % 2);
            tm[i] = i >= 4 && !below(7) ? tm[i - 4] : t0 + (uint64_t)(M - i) * 100003;
        }
        check_times(th, tm, M, 0);
    }
    free(th);
    free(tm);
}

/* A narrow column holds every value it is given, at the least width that
 * holds them all around its first value, and widens at most four times:
 * values near the first, either side; the ends of the 64-bit range; and
 * a width asked for (least). */
TEST(icol_values_at_the_least_width)
{
    rng_state = 0x3c6ef372fe94f82bULL;
    enum { N = 3000 };
    static uint64_t v[N];
    const uint64_t firsts[4] = {0, 250000, UINT64_MAX, (uint64_t)INT64_MIN};
    for (int f = 0; f < 4; f++) {
        for (int spread = 0; spread < 5; spread++) {
            t_case("first %d, spread %d", f, spread);
            /* spread 0: one value; then within 100, 30,000, 2^31 - 1 and
             * anywhere; the widest values come last. */
            const uint64_t reach[5] = {0, 100, 30000, INT32_MAX, UINT64_MAX};
            pc_icol c = {0};
            int widened = 0;
            uint8_t last = 0;
            for (size_t i = 0; i < N; i++) {
                uint64_t d = reach[spread] == UINT64_MAX ? (uint64_t)rnd()
                             : reach[spread] == 0        ? (uint64_t)0
                                                         : rnd() % (2 * reach[spread] + 1);
                v[i] = firsts[f] + d - reach[spread] * (reach[spread] != UINT64_MAX);
                if (i == 0)
                    v[i] = firsts[f];
                if (i == N - 1 && spread > 0 && spread < 4)
                    v[i] = firsts[f] - reach[spread];  /* the far end below */
                T_EQ_INT(pc_icol_make(&c, v[i], 0, i, N), 0);
                pc_icol_put(&c, i, v[i]);
                widened += c.size != last;
                last = c.size;
            }
            const uint8_t want[5] = {0, 1, 2, 4, 8};
            T_EQ_INT(c.size, want[spread]);
            T_CHECK(widened <= 4);
            int bad = 0;
            for (size_t i = 0; i < N && !bad; i++)
                bad = pc_icol_get(&c, i) != v[i];
            T_CHECK(!bad);
            /* Made 8 bytes wide on request: the same values. */
            T_EQ_INT(pc_icol_make(&c, v[0], 8, N, N), 0);
            T_EQ_INT(c.size, 8);
            for (size_t i = 0; i < N && !bad; i++)
                bad = pc_icol_get(&c, i) != v[i];
            T_CHECK(!bad);
            free(c.p);
        }
    }
}

/* The edges of each width: the values at the ends of a width's range
 * around the base fit it, one past them do not, either side, and values
 * wrap around 2^64. */
TEST(icol_width_edges)
{
    const uint64_t bases[3] = {5, 1000000, UINT64_MAX - 2};
    const int64_t ends[3] = {INT8_MAX, INT16_MAX, INT32_MAX};
    const uint8_t sizes[3] = {1, 2, 4};
    for (int b = 0; b < 3; b++)
        for (int w = 0; w < 3; w++)
            for (int side = 0; side < 2; side++) {
                t_case("base %d, width %d, side %d", b, sizes[w], side);
                uint64_t base = bases[b];
                /* side 0: base + end; side 1: base - end - 1. */
                uint64_t in = side ? base - (uint64_t)ends[w] - 1 : base + (uint64_t)ends[w];
                uint64_t out = side ? in - 1 : in + 1;
                pc_icol c = {0};
                T_EQ_INT(pc_icol_make(&c, base, 0, 0, 4), 0);
                pc_icol_put(&c, 0, base);
                T_EQ_INT(pc_icol_make(&c, in, 0, 1, 4), 0);
                pc_icol_put(&c, 1, in);
                T_EQ_INT(c.size, sizes[w]);
                T_EQ_INT(pc_icol_fits(&c, out), 0);
                T_EQ_INT(pc_icol_make(&c, out, 0, 2, 4), 0);
                pc_icol_put(&c, 2, out);
                T_EQ_INT(c.size, w == 2 ? 8 : sizes[w + 1]);
                T_CHECK(pc_icol_get(&c, 0) == base && pc_icol_get(&c, 1) == in &&
                        pc_icol_get(&c, 2) == out);
                free(c.p);
            }
    /* Around 0 and 2^64 - 1: one byte each way. */
    pc_icol c = {0};
    T_EQ_INT(pc_icol_make(&c, 1, 0, 0, 2), 0);
    pc_icol_put(&c, 0, 1);
    T_EQ_INT(pc_icol_make(&c, UINT64_MAX, 0, 1, 2), 0);
    pc_icol_put(&c, 1, UINT64_MAX);
    T_EQ_INT(c.size, 1);
    T_CHECK(pc_icol_get(&c, 0) == 1 && pc_icol_get(&c, 1) == UINT64_MAX);
    free(c.p);
}

/* Grouping by a thread column of 1, 2 and 4 bytes (100, 1,000 and 70,000
 * threads), on 1, 3 and 8 threads: a stable sort's order every time, with
 * the CPUs (some unknown) and weights travelling with their rows. */
TEST(group_samples_thread_column_widths)
{
    enum { N = 150000 };
    static uint32_t want[N], thread[N];
    static uint64_t time[N];
    const uint32_t nts[3] = {100, 1000, 70000};
    const uint8_t widths[3] = {1, 2, 4};
    const int threads[3] = {1, 3, 8};
    for (int w = 0; w < 3; w++) {
        for (int k = 0; k < 3; k++) {
            t_case("%u threads, grouped on %d", (unsigned)nts[w], threads[k]);
            rng_state = 0xbb67ae8584caa73bULL + (uint64_t)w;
            pc_profile *p = pc_profile_new();
            T_CHECK(p != NULL);
            if (!p)
                return;
            for (uint32_t t = 0; t < nts[w]; t++)
                pc_add_thread(p, 1, t, PC_NONE);
            uint64_t clock[4] = {0};
            for (size_t i = 0; i < N; i++) {
                int cpu = (int)(i / 40 % 4);
                clock[cpu] += below(3);
                thread[i] = i == 0 ? nts[w] / 2 : (uint32_t)below((long)nts[w]);
                time[i] = clock[cpu];
                uint16_t c16 = i % 9 == 0 ? PC_NO_CPU : (uint16_t)(cpu * 30);
                pc_add_sample(p, thread[i], time[i], (uint32_t)i, 1000 + (int64_t)(i % 77),
                              0, c16);
            }
            T_EQ_INT(p->oom, 0);
            T_EQ_INT(p->sample.thread.size, widths[w]);
            T_EQ_INT(p->sample.cpu1.size, 1);
            T_EQ_INT(p->sample.weight.size, 1);
            T_EQ_INT(pc_group_samples_on(p, threads[k]), 0);
            for (size_t i = 0; i < N; i++)
                want[i] = (uint32_t)i;
            sort_thread = thread;
            sort_time = time;
            qsort(want, N, sizeof *want, cmp_rows);
            int bad = p->sample.n != N;
            for (size_t i = 0; i < N && !bad; i++) {
                uint32_t row = want[i];
                bad = p->sample.stack[i] != row || pc_sample_thread(p, i) != thread[row] ||
                      pc_sample_time(p, i) != time[row] ||
                      pc_sample_weight(p, i) != 1000 + (int64_t)(row % 77) ||
                      pc_sample_cpu(p, i) != (row % 9 == 0 ? PC_NO_CPU : row / 40 % 4 * 30);
            }
            for (uint32_t t = 0; t <= nts[w] && !bad; t++) {
                size_t count = 0;
                while (count < N && thread[want[count]] < t)
                    count++;
                bad = p->sample.first[t] != count;
            }
            T_CHECK(!bad);
            pc_profile_free(p);
        }
    }
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
/* The process's peak resident memory in kB, and its resident memory now
 * (VmHWM, VmRSS), or -1 each where the system does not say. */
static void memory_kb(long *hwm, long *rss)
{
    *hwm = *rss = -1;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmHWM:", 6) == 0)
            *hwm = atol(line + 6);
        if (strncmp(line, "VmRSS:", 6) == 0)
            *rss = atol(line + 6);
    }
    if (f)
        fclose(f);
}
#endif

/* Grouping's moves take hardly more memory than the table: the rows'
 * columns move to blocks of their own as the pages they left are given
 * back.  4M samples of 8 threads interleaved, each thread's in time order
 * (14 bytes a row: 56 MB), with the allocator set as the command line
 * sets it: a spare column of 4 bytes a row would add 16 MB to the peak.
 * Then one thread of 2M rows out of time order: its sort adds at most 5
 * bytes a row (positions and a mark). */
TEST(group_samples_peak_is_the_table)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    t_skip("the sanitizers' allocators keep freed memory");
#else
    enum { N = 4000000, M = 2000000 };
    pid_t child = fork();
    if (child == 0) {
        mallopt(M_MMAP_THRESHOLD, 1 << 20);
        int code = 0;
        for (int round = 0; round < 2 && code == 0; round++) {
            size_t n = round == 0 ? N : M;
            pc_profile *p = pc_profile_new();
            int ok = p != NULL;
            for (uint32_t t = 0; ok && t < 8; t++)
                ok = pc_add_thread(p, 1, t, PC_NONE) != PC_NONE;
            for (size_t i = 0; ok && i < n; i++) {
                /* Round 1: runs of 64 rows from 8 "CPUs" in turn. */
                uint64_t time = round == 0 ? i : (i % 512) / 64 * 100000 + i / 512 * 64 + i % 64;
                uint32_t th = round == 0 ? (uint32_t)(i * 7 / 3 % 8) : 0;
                ok = pc_push_sample(p, th, time, (uint32_t)i, 250000 + (int64_t)(i % 1000), 0,
                                    (uint16_t)(i % 8)) == 0;
            }
            ok = ok && p->sample.thread.size == (round == 0 ? 1 : 0) &&
                 p->sample.weight.size == 2;
            /* The peak from here on (clear_refs 5 resets it). */
            FILE *f = fopen("/proc/self/clear_refs", "w");
            int reset = f && fputs("5", f) >= 0;
            if (f)
                reset = (fclose(f) == 0) && reset;
            long hwm0, rss0, hwm1, rss1;
            memory_kb(&hwm0, &rss0);
            ok = ok && pc_group_samples_on(p, 2) == 0;
            memory_kb(&hwm1, &rss1);
            /* Grouped: each thread's rows in input order (round 0), or
             * the one thread's in time order (round 1). */
            for (size_t i = 1; ok && i < n; i++)
                ok = round == 0 ? pc_sample_thread(p, i) > pc_sample_thread(p, i - 1) ||
                                      p->sample.stack[i] > p->sample.stack[i - 1]
                                : pc_sample_time(p, i) >= pc_sample_time(p, i - 1);
            pc_profile_free(p);
            long most = round == 0 ? 1024 + (long)n / 1024 : 2048 + 5 * (long)n / 1024;
            code = !reset || hwm0 < 0 || hwm1 < 0 ? 2 : !ok ? 3 : hwm1 - rss0 > most ? 1 : 0;
        }
        _exit(code);
    }
    int status = 0;
    T_CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
        t_skip("this system does not reset or report the peak resident memory");
    else
        T_EQ_INT(WEXITSTATUS(status), 0);
#endif
}
