/* Running out of memory while reading, on any of a reader's threads,
 * ends in the command line's "out of memory" (exit 3) with no output left
 * behind, whatever the limit: never a crash.  One large record is enough
 * to make the simpleperf decoding thread's copy of it fail (a 20 MiB
 * symbol name, a 300,000-frame callchain), or the Perfetto reader's
 * second thread (a 200,000-frame callstack handed over after thousands
 * of samples, then one of a million frames), so a sweep over limits
 * meets failures in every allocation on the way. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "read/perfetto/pf_fixtures.h"
#include "sp_encode.h"
#include "t.h"
#include "test_util.h"

/* The inputs go from failing to converting between 44 and 84 MiB (the
 * 20 MiB symbol fails at every limit here); the sweep stops 16 MiB past
 * that, not at twice it, or sooner, once a pair of limits in a row both
 * converted: above them nothing an input needs is refused, and such runs,
 * which use all the memory the input takes, were half the sweep's time.
 * A run fails at the same allocation over a stretch of limits (the 20 MiB
 * symbol: the same peak from 52 to 64 MiB, and from 68 to 96), and steps
 * of 6 MiB still meet each of its stretches that steps of 4 did.  Under
 * the address sanitizer a quarter of the limit caps each allocation, so
 * there the steps stay at 4 MiB (caps 1 MiB apart). */
enum {
    FIRST_LIMIT_MB = 16,
    LAST_LIMIT_MB = 100,
#if defined(__SANITIZE_ADDRESS__)
    STEP_MB = 4,
#else
    STEP_MB = 6,
#endif
};

static void begin(spe *e)
{
    const char *ev[] = {"cpu-clock"};
    spe_begin(e);
    spe_meta(e, ev, 1, NULL, NULL, NULL, NULL, 0);
}

/* n samples of a frames each, so that the record that fails is not alone
 * in what the decoding thread hands over. */
static void ordinary_samples(spe *e, uint64_t t0, size_t n, size_t depth)
{
    spe_frame chain[32];
    for (size_t i = 0; i < depth && i < 32; i++)
        chain[i] = (spe_frame){0x10 + 4 * (uint64_t)i, 0, (int32_t)(i & 1), -1};
    for (uint64_t i = 0; i < n; i++)
        spe_sample(e, t0 + i, 7, 1, 0, chain, depth < 32 ? depth : 32, NULL);
}

static int finish(spe *e, const char *path, const char *lib)
{
    const char *syms[] = {"leaf", "root"};
    spe_file(e, 0, lib, syms, 2);
    spe_thread(e, 7, 7, "app");
    spe_end(e);
    FILE *f = fopen(path, "wb");
    int ok = f && !e->out.oom && fwrite(e->out.data, 1, e->out.len, f) == e->out.len;
    if (f && fclose(f) != 0)
        ok = 0;
    spe_free(e);
    return ok ? 0 : -1;
}

/* A File record with a symbol name of len bytes (which the encoder writes
 * twice, as the symbol and as its mangled form). */
static int big_symbol_file(spe *e, size_t len)
{
    char *big = malloc(len + 1);
    if (!big)
        return -1;
    memset(big, 'f', len);
    big[len] = 0;
    const char *syms[] = {big, "root"};
    spe_file(e, 1, "/system/lib64/libbig.so", syms, 2);
    free(big);
    return 0;
}

/* A sample of n frames, each at its own address. */
static int long_sample(spe *e, uint64_t time, size_t n)
{
    spe_frame *chain = malloc(n * sizeof *chain);
    if (!chain)
        return -1;
    for (size_t i = 0; i < n; i++)
        chain[i] = (spe_frame){0x1000 + 4 * (uint64_t)i, 0, -1, -1};
    spe_sample(e, time, 7, 1, 0, chain, n, NULL);
    free(chain);
    return 0;
}

/* The recipes: a 20 MiB symbol name, a 300,000-frame callchain. */
static int write_big_symbol(const char *path)
{
    spe e;
    begin(&e);
    ordinary_samples(&e, 1000, 8, 2);
    if (big_symbol_file(&e, 20 << 20) < 0)
        return -1;
    return finish(&e, path, "/system/lib64/libapp.so");
}

static int write_long_chain(const char *path)
{
    spe e;
    begin(&e);
    ordinary_samples(&e, 1000, 8, 2);
    if (long_sample(&e, 2000, 300000) < 0)
        return -1;
    ordinary_samples(&e, 3000, 8, 2);
    return finish(&e, path, "/system/lib64/libdeep.so");
}

/* The same records after nearly a batch's worth of others, so that the
 * decoding thread's copy of the large record is its largest allocation:
 * twice what the record itself takes in the input window (16 MiB) or in
 * the decoded callchain (6 MiB).  Under the address sanitizer, whose
 * limit is on single allocations, only this fails in that copy. */
static int write_big_symbol_late(const char *path)
{
    spe e;
    begin(&e);
    char name[1001];
    memset(name, 't', 1000);
    name[1000] = 0;
    for (uint32_t i = 0; i < 900; i++)
        spe_thread(&e, 100 + i, 100, name);
    ordinary_samples(&e, 1000, 8, 2);
    if (big_symbol_file(&e, 8000000) < 0)
        return -1;
    return finish(&e, path, "/system/lib64/libapp.so");
}

static int write_long_chain_late(const char *path)
{
    spe e;
    begin(&e);
    ordinary_samples(&e, 1000, 2000, 32);
    if (long_sample(&e, 5000, 200000) < 0)
        return -1;
    return finish(&e, path, "/system/lib64/libdeep.so");
}

/* A traced_perf trace: 2000 samples of short callstacks, then two of one
 * with 200,000 frames (the second a callstack met again), which the second
 * thread may run out of memory on, then one of a million frames, whose
 * interned frames are more than a quarter of the lower limits (what
 * fails under the address sanitizer). */
static int write_perfetto_long_callstack(const char *path)
{
    pb_buf b = {0};
    perf_start_with_frames(&b, "f", 100);
    uint64_t t = 600000000;
    uint64_t frames[8];
    for (uint64_t k = 0; k < 2000; k++) {
        for (int j = 0; j < 8; j++)
            frames[j] = (k * 7 + (uint64_t)j) % 100 + 1;
        callstack_packet(&b, k + 1, frames, 8, 1);
        perf_sample_packet(&b, t += 1000, k + 1);
    }
    enum { DEEP = 1000000 };
    uint64_t *deep = malloc(DEEP * sizeof *deep);
    if (!deep) {
        pb_buf_free(&b);
        return -1;
    }
    for (size_t j = 0; j < DEEP; j++)
        deep[j] = j % 100 + 1;
    static const size_t depths[] = {200000, DEEP};
    for (int i = 0; i < 2; i++) {
        uint64_t iid = 5000 + (uint64_t)i;
        callstack_packet(&b, iid, deep, depths[i], 1);
        perf_sample_packet(&b, t += 1000, iid);
        perf_sample_packet(&b, t += 1000, iid);
    }
    free(deep);
    FILE *f = fopen(path, "wb");
    int ok = f && !b.oom && fwrite(b.data, 1, b.len, f) == b.len;
    if (f && fclose(f) != 0)
        ok = 0;
    pb_buf_free(&b);
    return ok ? 0 : -1;
}

/* The thread sanitizer build skips the sweep (see sweep_input). */
#if !defined(__SANITIZE_THREAD__)
/* Runs the CLI on in with a memory limit of mb MiB (0: none): --max-memory,
 * or under the address sanitizer (which reserves more address space than
 * any such limit) its own limits, with failed allocations returning
 * NULL.  Returns the child's pid, or -1; stderr goes to errf. */
static pid_t start_limited(const char *in, const char *out, const char *errf, unsigned mb)
{
    char limit[32];
    snprintf(limit, sizeof limit, "%uM", mb);
    pid_t pid = fork();
    if (pid == 0) {
        int err = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (err < 0)
            _exit(127);
        dup2(err, 2);
        if (!mb) {
            execl(t_profconv(), "profconv", "-q", in, "-o", out, (char *)NULL);
            _exit(127);
        }
#if defined(__SANITIZE_ADDRESS__)
        /* An allocation larger than a quarter of the limit fails at once
         * (the sweep thus meets each of the large allocations failing);
         * the soft RSS limit, checked by a background thread, makes the
         * others fail in time. */
        const char *was = getenv("ASAN_OPTIONS");
        char opts[512];
        snprintf(opts, sizeof opts, "%s%sallocator_may_return_null=1:"
                 "max_allocation_size_mb=%u:soft_rss_limit_mb=%u",
                 was ? was : "", was && *was ? ":" : "", mb / 4, mb);
        setenv("ASAN_OPTIONS", opts, 1);
        execl(t_profconv(), "profconv", "-q", in, "-o", out, (char *)NULL);
#else
        execl(t_profconv(), "profconv", "-q", "--max-memory", limit, in, "-o", out,
              (char *)NULL);
#endif
        _exit(127);
    }
    return pid;
}

/* The wait status of child pid, or -1. */
static int wait_status(pid_t pid)
{
    int ws = 0;
    if (pid < 0 || waitpid(pid, &ws, 0) != pid)
        return -1;
    return ws;
}

#if defined(__SANITIZE_ADDRESS__)
/* Whether the address sanitizer itself ended a run (wait status ws,
 * messages e): past its soft RSS limit its own allocations fail too, and
 * a thread started then dies in the sanitizer's start-up of it
 * (pthread_getattr_np failing with ENOMEM) before any of the program's
 * code runs there.  The same runs in the normal build, under
 * --max-memory, meet the program's own failures, which the sweep checks
 * there. */
static int sanitizer_ended(int ws, const char *e)
{
    return WIFSIGNALED(ws) && WTERMSIG(ws) == SIGABRT && e &&
           strstr(e, "soft rss limit exhausted") && strstr(e, "pthread_getattr_np");
}

/* Removes the temporary files of out that a run ended so left (no clean-up
 * ran): ".NAME.tmp-XXXXXX" beside it, which other tests look for. */
static void remove_temporaries(const char *out)
{
    const char *slash = strrchr(out, '/');
    char dir[700], head[700];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - out) : 1, slash ? out : ".");
    snprintf(head, sizeof head, ".%s.tmp-", slash ? slash + 1 : out);
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *de; (de = readdir(d));)
        if (!strncmp(de->d_name, head, strlen(head))) {
            char path[1500];
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            unlink(path);
        }
    closedir(d);
}
#endif

/* Checks the run at mb MiB that ended with wait status ws: it converted,
 * leaving out; or it ran out of memory, saying so in errf, leaving no
 * out.  Counts it in *ok or *oom; under the address sanitizer, a run the
 * sanitizer itself ended (sanitizer_ended) in *san, its files removed. */
static void check_run(const char *what, unsigned mb, int ws, const char *out,
                      const char *errf, int *ok, int *oom, int *san)
{
    struct stat sb;
    int left = stat(out, &sb) == 0;
    char *e = read_text(errf);
#if defined(__SANITIZE_ADDRESS__)
    if (sanitizer_ended(ws, e)) {
        ++*san;
        if (left)
            t_fail(__FILE__, __LINE__, "%s at %uM: an output left by a run that did not end",
                   what, mb);
        remove_temporaries(out);
        free(e);
        return;
    }
#else
    (void)san;
#endif
    if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
        ++*ok;
        if (!left)
            t_fail(__FILE__, __LINE__, "%s at %uM: exit 0 without an output", what, mb);
    } else if (WIFEXITED(ws) && WEXITSTATUS(ws) == 3 && e && strstr(e, "out of memory")) {
        ++*oom;
        if (left)
            t_fail(__FILE__, __LINE__, "%s at %uM: an output left after \"%s\"", what, mb, e);
    } else if (WIFSIGNALED(ws)) {
        t_fail(__FILE__, __LINE__, "%s at %uM: killed by signal %d: %s", what, mb,
               WTERMSIG(ws), e ? e : "");
    } else {
        t_fail(__FILE__, __LINE__, "%s at %uM: exit %d: %s", what, mb,
               WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, e ? e : "");
    }
    free(e);
}

/* Runs at every limit, two at a time (a run is mostly one thread's
 * work), until a pair both convert, and checks each run. */
static void sweep(const char *in, const char *what)
{
    enum { AT_ONCE = 2 };
    char outs[AT_ONCE][700], errfs[AT_ONCE][700];
    for (int i = 0; i < AT_ONCE; i++) {
        snprintf(outs[i], sizeof outs[i], "%s/oom-%s.%d.json", t_tmpdir(), what, i);
        snprintf(errfs[i], sizeof errfs[i], "%s/oom-%s.%d.err", t_tmpdir(), what, i);
    }
    int ok = 0, oom = 0, san = 0, pair_ok = 0;
    for (unsigned first = FIRST_LIMIT_MB; first <= LAST_LIMIT_MB && pair_ok < AT_ONCE;
         first += AT_ONCE * STEP_MB) {
        pid_t pid[AT_ONCE];
        int n = 0;
        for (unsigned mb = first; n < AT_ONCE && mb <= LAST_LIMIT_MB; mb += STEP_MB, n++) {
            unlink(outs[n]);
            pid[n] = start_limited(in, outs[n], errfs[n], mb);
        }
        int ok_before = ok;
        for (int i = 0; i < n; i++)
            check_run(what, first + (unsigned)i * STEP_MB, wait_status(pid[i]), outs[i],
                      errfs[i], &ok, &oom, &san);
        pair_ok = ok - ok_before;
    }
    /* Some limits are too low, or the sweep tests nothing; and without a
     * limit the input converts, so those runs did fail for want of
     * memory. */
    if (!oom)
        t_fail(__FILE__, __LINE__, "%s: all %d limits converted", what, ok);
    if (san)
        printf("  note oom_sweep %s: %d of %d runs ended by the address sanitizer starting a "
               "thread past its RSS limit\n", what, san, ok + oom + san);
    int ws = wait_status(start_limited(in, outs[0], errfs[0], 0));
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
        t_fail(__FILE__, __LINE__, "%s: wait status %d without a limit", what, ws);
    for (int i = 0; i < AT_ONCE; i++) {
        unlink(outs[i]);
        unlink(errfs[i]);
    }
}
#endif

/* Writes the input, runs the sweep on it, removes it.  One test per
 * input, so that the runner's processes share them out. */
static void sweep_input(const char *name, const char *what, int (*write)(const char *path))
{
#if defined(__SANITIZE_THREAD__)
    (void)name;
    (void)what;
    (void)write;
    t_skip("the thread sanitizer reserves more address space than any limit: the "
           "sweep runs in the normal and address sanitizer builds");
#else
    t_case("oom_sweep: %s", what);
    char path[700];
    snprintf(path, sizeof path, "%s/oom-%s.trace", t_tmpdir(), name);
    if (write(path) < 0) {
        t_fail(__FILE__, __LINE__, "cannot write %s", path);
        return;
    }
    sweep(path, name);
    unlink(path);
#endif
}

TEST_SLOW(oom_sweep_big_symbol)
{
    sweep_input("big-symbol", "a 20 MiB symbol name", write_big_symbol);
}

TEST_SLOW(oom_sweep_long_chain)
{
    sweep_input("long-chain", "a 300,000-frame callchain", write_long_chain);
}

TEST_SLOW(oom_sweep_big_symbol_late)
{
    sweep_input("big-symbol-late", "an 8 MB symbol name late in a batch",
                write_big_symbol_late);
}

TEST_SLOW(oom_sweep_long_chain_late)
{
    sweep_input("long-chain-late", "a 200,000-frame callchain late in a batch",
                write_long_chain_late);
}

TEST_SLOW(oom_sweep_perfetto_long_callstack)
{
    sweep_input("perfetto-long-callstack",
                "Perfetto callstacks of 200,000 and a million frames after 2000 samples",
                write_perfetto_long_callstack);
}
