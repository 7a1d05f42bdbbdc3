/* traced_perf samples finished on a second thread (pipe.c) give the
 * profile one thread gives, sample for sample and node for node, with
 * every case the second thread must hand back to the first in the mix:
 * callstacks new and met again, partly undefined ones, empty and
 * undefined ones, unwinding errors under an ERROR frame, a heap dump
 * and StackSample packets (another thread's samples) whose stacks go into
 * the same tree in between, and a cleared sequence that redefines the
 * same iids.  A long stretch comes first with little that empties the
 * queue, so that the two threads run at once (and under the thread
 * sanitizer, meet), with progress told meanwhile: its unwinding errors
 * are on callstacks whose producer gave them an ERROR root, as
 * traced_perf does, which the second thread takes as they are.  The mix
 * is also read alone: its queue is emptied every few dozen samples, so
 * the second thread is stopped partway and the rest read on one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/source.h"
#include "pf_fixtures.h"
#include "read/perfetto/perfetto.h"
#include "t.h"
#include "test_util.h"

/* LONG samples of the plain kind (or none), then MIX of the mix. */
/* The frame iid of the producer's ERROR root. */
enum { ERROR_FRAME = 101 };

enum { LONG = 60000, MIX = 6000, N = LONG + MIX, N_FUNCS = 100, MAX_CS = N + 16 };


/* What the test expects of each sample, in time order. */
typedef struct expect {
    char (*text)[400];     /* per sample: its stack's text */
    size_t n;
} expect;

/* The frames of the callstack defined k-th (before or after the clear):
 * depth 3 to 22, functions picked from k. */
static size_t cs_frames(int k, uint64_t *frames)
{
    size_t depth = 3 + (size_t)(k % 20);
    for (size_t j = 0; j < depth; j++)
        frames[j] = (uint64_t)((k * 7 + (int)j * 13) % N_FUNCS) + 1;
    return depth;
}

static void frames_text(const char *prefix, const uint64_t *frames, size_t n, char *out,
                        size_t cap)
{
    size_t used = 0;
    out[0] = 0;
    for (size_t j = 0; j < n && used < cap; j++) {
        if (frames[j] == ERROR_FRAME)
            used += (size_t)snprintf(out + used, cap - used, "%sERROR MEMORY_INVALID",
                                     j ? ";" : "");
        else if (frames[j] > N_FUNCS)
            used += (size_t)snprintf(out + used, cap - used, "%s[undefined frame iid %llu]",
                                     j ? ";" : "", (unsigned long long)frames[j]);
        else
            used += (size_t)snprintf(out + used, cap - used, "%s%s%llu", j ? ";" : "", prefix,
                                     (unsigned long long)frames[j] - 1);
    }
}

static void sample_packet(pb_buf *b, uint64_t t, uint64_t cs, int64_t count, int unwind_err)
{
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    pb_uint(b, PFE_TIMESTAMP, t);
    size_t ps = pb_begin(b, 66);
    pb_uint(b, 1, 0);
    pb_uint(b, 2, 100);
    pb_uint(b, 3, 100);
    if (cs)
        pb_uint(b, 4, cs);
    pb_uint(b, 6, (uint64_t)count);
    if (unwind_err)
        pb_uint(b, 16, (uint64_t)unwind_err);
    pb_end(b, ps);
    pb_end(b, pk);
}

/* The trace of long_n plain samples and the mix, and into *e the text
 * expected of each sample. */
static void build(pb_buf *b, expect *e, int long_n)
{
    static char texts[MAX_CS + 1][400];   /* by callstack iid, this generation */
    static uint8_t error_root[MAX_CS + 1];  /* the same: under an ERROR root */
    memset(texts, 0, sizeof texts);
    memset(error_root, 0, sizeof error_root);
    const char *prefix = "f";
    perf_start_with_frames(b, prefix, N_FUNCS);
    pfe_ss_defaults(b, 3, "python.wall", NULL, 0);
    size_t epk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    size_t ein = pb_begin(b, PFE_INTERNED);
    pfe_str(b, PFE_FUNCTION_NAMES, ERROR_FRAME, "ERROR MEMORY_INVALID");
    pfe_frame(b, PFE_FRAMES, ERROR_FRAME, ERROR_FRAME, 0, ERROR_FRAME);
    pb_end(b, ein);
    pb_end(b, epk);
    uint64_t t = 600000000, count = 0;
    uint64_t next_iid = 1;
    e->n = 0;
    for (int k = 0; k < long_n + MIX; k++) {
        t += 1000;
        count += 1000;
        if (k == long_n + MIX / 2) {
            /* The sequence starts over: the same iids name other functions
             * and other callstacks. */
            prefix = "g";
            pfe_perf_defaults(b, 1, MONOTONIC, 1, 100);
            size_t pk = pfe_packet(b, 1);
            pb_uint(b, PFE_FLAGS, 2);
            size_t in = pb_begin(b, PFE_INTERNED);
            for (int i = 0; i < N_FUNCS; i++) {
                char name[16];
                snprintf(name, sizeof name, "g%d", i);
                pfe_str(b, PFE_FUNCTION_NAMES, (uint64_t)i + 1, name);
                pfe_frame(b, PFE_FRAMES, (uint64_t)i + 1, (uint64_t)i + 1, 0, (uint64_t)i + 1);
            }
            pb_end(b, in);
            pb_end(b, pk);
            next_iid = 1;
            count = 1000;
            memset(texts, 0, sizeof texts);
            memset(error_root, 0, sizeof error_root);
        }
        if (k < long_n) {
            /* Now and then an unwinding error without a callstack, whose
             * ERROR frame is a stack of its own. */
            if (k % 5000 == 4999) {
                sample_packet(b, t, 0, (int64_t)count, 2);
                strcpy(e->text[e->n++], "ERROR MEMORY_INVALID");
                continue;
            }
            uint64_t iid;
            if (next_iid < 8 || k % 2 == 0) {
                uint64_t frames[32];
                size_t n = cs_frames(k, frames);
                iid = next_iid++;
                /* Every seventh unwound partly, under the producer's root. */
                error_root[iid] = k % 7 == 0;
                if (error_root[iid])
                    frames[0] = ERROR_FRAME;
                callstack_packet(b, iid, frames, n, k & 1);
                frames_text(prefix, frames, n, texts[iid], sizeof texts[iid]);
            } else {
                iid = 1 + (uint64_t)(k * 31 % (int)(next_iid - 1));
            }
            sample_packet(b, t, iid, (int64_t)count, error_root[iid] ? 2 : 0);
            strcpy(e->text[e->n++], texts[iid]);
            continue;
        }
        if (k == long_n + 2000) {
            /* A heap dump: its stacks go into the tree in between. */
            size_t hd;
            heap_marks m = heap_open(b, 0, 0);
            heap_dump_header(b, 1000000, &hd);
            heap_sample(b, 2, 4096, 0);
            pb_end(b, hd);
            pb_end(b, m.pp);
            pfe_heap_callstacks(b);
            pb_end(b, m.pk);
        }
        if (k % 500 == 250) {
            /* A StackSample of thread 101, which steps down the tree
             * itself. */
            size_t pk = pfe_packet(b, 3);
            pb_uint(b, PFE_TIMESTAMP, t - 500 - BOOT_AHEAD);
            size_t ss = pb_begin(b, PFE_STACK_SAMPLE);
            pfe_ss_task(b, 1, 0, 100, 101);
            static const char *const names[] = {"py_main", "py_work"};
            pfe_ss_inline(b, names, NULL, NULL, 2);
            pb_end(b, ss);
            pb_end(b, pk);
        }
        int defined = (int)next_iid - 1;
        int new_cs = defined < 8 || k % 3 == 0;
        if (k % 211 == 5) {
            /* An empty callstack with a count: a counter value. */
            callstack_packet(b, MAX_CS + 100 + (uint64_t)k, NULL, 0, 0);
            sample_packet(b, t, MAX_CS + 100 + (uint64_t)k, (int64_t)count, 0);
            continue;
        }
        if (k % 307 == 7) {
            /* An undefined callstack: a sample with an empty stack. */
            sample_packet(b, t, MAX_CS + 9, (int64_t)count, 0);
            strcpy(e->text[e->n++], "");
            continue;
        }
        uint64_t iid;
        if (new_cs || k % 101 == 1) {
            uint64_t frames[32];
            size_t n = cs_frames(k, frames);
            /* Now and then a frame the trace does not define. */
            if (k % 101 == 1)
                frames[n / 2] = 5000;
            iid = next_iid++;
            callstack_packet(b, iid, frames, n, k & 1);
            frames_text(prefix, frames, n, texts[iid], sizeof texts[iid]);
        } else {
            iid = 1 + (uint64_t)(k * 31 % defined);
        }
        int err = k % 97 == 3 ? 2 : 0;
        sample_packet(b, t, iid, (int64_t)count, err);
        /* An ERROR root is added where the producer gave none. */
        if (err && !error_root[iid])
            snprintf(e->text[e->n++], sizeof e->text[0], "ERROR MEMORY_INVALID;%.378s",
                     texts[iid]);
        else
            strcpy(e->text[e->n++], texts[iid]);
    }
}

/* Progress as told: calls, and the sample counts never going back. */
typedef struct told {
    size_t calls, last, backwards;
} told;

static void on_progress(void *ctx, const pc_progress *pr)
{
    told *t = ctx;
    t->calls++;
    t->backwards += pr->samples < t->last;
    t->last = pr->samples;
}

static void on_input_progress(void *ctx, uint64_t done, uint64_t total)
{
    (void)ctx;
    (void)done;
    (void)total;
}

/* The profile as the reader leaves the file at path: samples in the
 * order read, every event's.  The input tells progress as pc_convert has
 * it do (a file's, read a piece at a time). */
static pc_profile *read_raw(const char *path, const pc_options *o)
{
    pc_input *in;
    pc_error err;
    pc_profile *p = pc_profile_new();
    if (!p || pc_input_open(&in, path, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "cannot open the fixture");
        pc_profile_free(p);
        return NULL;
    }
    src_set_progress(in, on_input_progress, NULL);
    int st = pc_read_perfetto(in, p, o, &err);
    pc_input_close(in);
    if (st != PC_OK) {
        t_fail(__FILE__, __LINE__, "reading failed: %s", err.message);
        pc_profile_free(p);
        return NULL;
    }
    return p;
}

static int same_profile(const pc_profile *a, const pc_profile *b)
{
    if (a->sample.n != b->sample.n || a->stack.n != b->stack.n || a->frame.n != b->frame.n ||
        a->heap.n != b->heap.n || a->counter.n != b->counter.n)
        return 0;
    size_t n = a->sample.n, ns = a->stack.n, nc = a->counter.n;
    if (a->event.n != b->event.n)
        return 0;
    /* Columns of no rows may be NULL, which memcmp must not be given. */
#define SAME(x, y, k) ((k) == 0 || memcmp(x, y, (k) * sizeof *(x)) == 0)
    for (size_t i = 0; i < n; i++)
        if (pc_sample_weight(a, i) != pc_sample_weight(b, i) ||
            pc_sample_event(a, i) != pc_sample_event(b, i) ||
            pc_sample_time(a, i) != pc_sample_time(b, i) ||
            pc_sample_cpu(a, i) != pc_sample_cpu(b, i) ||
            pc_sample_thread(a, i) != pc_sample_thread(b, i))
            return 0;
    int same = SAME(a->sample.stack, b->sample.stack, n) &&
               SAME(a->counter.value, b->counter.value, nc) &&
               SAME(a->counter.event, b->counter.event, nc) &&
               SAME(a->stack.prefix, b->stack.prefix, ns) &&
               SAME(a->stack.frame, b->stack.frame, ns) &&
               SAME(a->heap.stack, b->heap.stack, a->heap.n) &&
               SAME(a->counter.time, b->counter.time, nc);
#undef SAME
    return same;
}

/* Writes the trace in b (and frees it) to name in the test's directory,
 * its path into path; 1 when written whole. */
static int write_trace(pb_buf *b, const char *name, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", t_tmpdir(), name);
    FILE *f = fopen(path, "wb");
    int written = f && !b->oom && fwrite(b->data, 1, b->len, f) == b->len;
    if (f && fclose(f) != 0)
        written = 0;
    pb_buf_free(b);
    return written;
}

static void same_at_any_threads(int long_n)
{
    pb_buf b = {0};
    expect e;
    e.text = malloc(N * sizeof *e.text);
    if (!e.text) {
        t_fail(__FILE__, __LINE__, "out of memory");
        return;
    }
    build(&b, &e, long_n);
    char path[700];
    if (!write_trace(&b, "pipe.pftrace", path, sizeof path)) {
        t_fail(__FILE__, __LINE__, "cannot write %s", path);
        free(e.text);
        return;
    }
    pc_profile *one = NULL;
    char *one_log = NULL;
    for (int threads = 1; threads <= 4; threads *= 2) {
        t_case("perfetto_threads_same_profile: %d plain samples first, --threads %d", long_n,
               threads);
        pc_options o;
        pc_options_init(&o);
        o.threads = threads;
        told progress = {0, 0, 0};
        o.progress = on_progress;
        o.progress_ctx = &progress;
        log_capture_start(&o);
        pc_profile *p = read_raw(path, &o);
        if (!p)
            break;
        /* Thread 100's samples, with thread 101's between. */
        size_t j = 0, wrong = 0, py = 0;
        for (size_t i = 0; i < p->sample.n; i++) {
            const char *got = stack_text(p, p->sample.stack[i]);
            if (p->thread.tid[pc_sample_thread(p, i)] == 101) {
                py += strcmp(got, "py_main;py_work") == 0;
                continue;
            }
            if (j < e.n && strcmp(got, e.text[j]) != 0 && wrong++ < 3)
                t_fail(__FILE__, __LINE__, "sample %zu: %s, expected %s", j, got, e.text[j]);
            j++;
        }
        T_EQ_INT(j, e.n);
        T_EQ_INT(wrong, 0);
        T_EQ_INT(py, MIX / 500);
        T_CHECK(p->heap.n > 0);
        T_CHECK(p->counter.n > 0);
        T_CONTAINS(log_capture_text(), "[undefined frame iid N]");
        T_CONTAINS(log_capture_text(), "samples name a callstack the trace does not define");
        /* Told while reading a long file, by the pipe (on one thread, the
         * input's own callback here does not relay), never more than the
         * samples read. */
        if (threads > 1 && long_n)
            T_CHECK(progress.calls > 0);
        T_EQ_INT(progress.backwards, 0);
        T_CHECK(progress.last <= p->sample.n);
        if (!one) {
            one = p;
            one_log = strdup(log_capture_text());
        } else {
            /* The same warnings, counts included. */
            if (one_log)
                T_EQ_STR(log_capture_text(), one_log);
            if (!same_profile(one, p))
                t_fail(__FILE__, __LINE__, "--threads %d: not the profile of --threads 1",
                       threads);
            pc_profile_free(p);
        }
    }
    pc_profile_free(one);
    free(one_log);
    unlink(path);
    free(e.text);
}

TEST(perfetto_threads_same_profile)
{
    same_at_any_threads(LONG);
    same_at_any_threads(0);
}

/* The second thread remembers the caller paths of new callstacks, and
 * stops once most are new to it.  10,000 new callstacks on 1,000 caller
 * paths (each path found 9 times in 10), then 60,000 each on a path of
 * its own (so that, of the first 65,536 lookups, too few find theirs),
 * then 10,000 on paths met before, under leaves of their own.  Every
 * sample's stack is its frames, and the profile is the one a single
 * thread reads. */
TEST(perfetto_threads_caller_paths_met_then_new)
{
    enum { MET = 10000, NEW = 60000, AGAIN = 10000, ALL = MET + NEW + AGAIN };
    pb_buf b = {0};
    perf_start_with_frames(&b, "f", N_FUNCS);
    static char want[ALL][64];
    uint64_t t = 600000000;
    for (int k = 0; k < ALL; k++) {
        int path = k < MET ? k % 1000 : k < MET + NEW ? k : (k - MET - NEW) * 7 % (MET + NEW);
        uint64_t frames[6] = {(uint64_t)(path % 100) + 1, (uint64_t)(path / 100 % 100) + 1,
                              (uint64_t)(path / 10000 % 100) + 1, 7, 8,
                              (uint64_t)(k * 13 % 100) + 1};
        callstack_packet(&b, (uint64_t)k + 1, frames, 6, 0);
        sample_packet(&b, t += 1000, (uint64_t)k + 1, 1000, 0);
        frames_text("f", frames, 6, want[k], sizeof want[k]);
    }
    char path[700];
    int written = write_trace(&b, "paths.pftrace", path, sizeof path);
    T_CHECK(written);
    if (!written)
        return;
    pc_profile *p[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        pc_options o;
        pc_options_init(&o);
        o.threads = k + 1;
        p[k] = read_raw(path, &o);
    }
    if (p[0] && p[1]) {
        T_EQ_INT(p[1]->sample.n, ALL);
        size_t wrong = 0;
        for (size_t i = 0; i < p[1]->sample.n && i < ALL; i++)
            if (strcmp(stack_text(p[1], p[1]->sample.stack[i]), want[i]) != 0 && wrong++ < 3)
                t_fail(__FILE__, __LINE__, "sample %zu: %s, expected %s", i,
                       stack_text(p[1], p[1]->sample.stack[i]), want[i]);
        T_EQ_INT(wrong, 0);
        T_CHECK(same_profile(p[0], p[1]));
    }
    pc_profile_free(p[0]);
    pc_profile_free(p[1]);
    unlink(path);
}
