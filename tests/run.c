/* Test runner: runs every registered test (or those whose name contains
 * argv[1]) and ends with the summary line CI reads.
 *
 * The tests are laid out like the source; each TEST() registers itself
 * and the Makefile compiles every .c file under tests/, so a file moves
 * or is added without a line changing here:
 *   base/ io/ java/ transform/ write/ cli/   as in src/
 *   read/simpleperf/ read/perfetto/ read/perfscript/   each reader, on
 *            the project's own fixtures and on the shared corpus
 *   convert/ whole conversions: the corpus against simpleperf's own
 *            converter and the real Firefox Profiler, damaged and hostile
 *            input, the fuzzers' saved inputs, the archive's exports
 *   docs/    the documentation against the binary
 *   support/ what tests share: the harness (t.h), fixtures and the
 *            encoders that make them, the corpus, readers and validators
 *            of every output format, and the tests of those tools
 * Tests are in the test_*.c files (but for support/test_util.c, helpers
 * every test uses); the other files help them, read/perfetto/pf_*.c that
 * folder's tests alone. */
#define _DEFAULT_SOURCE  /* MAP_ANONYMOUS */
#include "t.h"

#include <malloc.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_TESTS 512

static struct {
    const char *name;
    t_fn fn;
    int slow;
} tests[MAX_TESTS];
static int ntests;

static int passed, failed, skipped;
static char case_name[256];
static int case_open, case_fails, case_skipped;
static int case_implicit;  /* the case named after the test itself */

void t_register(const char *name, t_fn fn, int slow)
{
    if (ntests < MAX_TESTS) {
        tests[ntests].name = name;
        tests[ntests].fn = fn;
        tests[ntests].slow = slow;
        ntests++;
    }
}

/* The slow tests first, each group in the order registered: a slow test
 * taken last would run alone while the other processes have finished. */
static void slow_first(void)
{
    static __typeof__(tests[0]) sorted[MAX_TESTS];
    int n = 0;
    for (int pass = 1; pass >= 0; pass--)
        for (int i = 0; i < ntests; i++)
            if (tests[i].slow == pass)
                sorted[n++] = tests[i];
    memcpy(tests, sorted, (size_t)ntests * sizeof *tests);
}

static void case_end(void)
{
    if (!case_open)
        return;
    if (case_skipped && !case_fails) {
        skipped++;
    } else if (case_fails) {
        failed++;
        printf("FAIL %s\n", case_name);
    } else {
        passed++;
        if (getenv("TEST_VERBOSE"))
            printf("ok %s\n", case_name);
    }
    case_open = 0;
}

static void case_begin(const char *name)
{
    case_end();
    case_implicit = 0;
    snprintf(case_name, sizeof case_name, "%s", name);
    case_open = 1;
    case_fails = 0;
    case_skipped = 0;
}

void t_case(const char *fmt, ...)
{
    char buf[256];
    /* A test that names its cases is counted by them alone. */
    if (case_implicit && !case_fails && !case_skipped)
        case_open = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    case_begin(buf);
}

void t_skip(const char *fmt, ...)
{
    va_list ap;
    printf("SKIP %s: ", case_name);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    case_skipped = 1;
}

void t_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    printf("  %s:%d: [%s] ", file, line, case_name);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    case_fails++;
}

int t_case_failures(void)
{
    return case_fails;
}

const char *t_shared(void)
{
    static int probed;
    static const char *path;
    if (!probed) {
        struct stat st;
        probed = 1;
        if (stat("../shared/corpus", &st) == 0 && S_ISDIR(st.st_mode))
            path = "../shared";
    }
    return path;
}

static char tmp_dir[64];

const char *t_tmpdir(void)
{
    char *dir = tmp_dir;
    if (!dir[0]) {
        snprintf(dir, sizeof tmp_dir, "/tmp/profconv-test-XXXXXX");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            exit(2);
        }
    }
    return dir;
}

const char *t_profconv(void)
{
    const char *p = getenv("PROFCONV");
    return p ? p : "build/profconv";
}

const char *t_profconv_abs(void)
{
    static char exe[1024];
    if (exe[0])
        return exe;
    if (t_profconv()[0] == '/')
        snprintf(exe, sizeof exe, "%s", t_profconv());
    else if (getcwd(exe, sizeof exe - 256))
        snprintf(exe + strlen(exe), 256, "/%s", t_profconv());
    return exe;
}

unsigned char *t_read_file(const char *path, size_t *size)
{
    gzFile f = gzopen(path, "rb");
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (cap - len < 65536) {
            size_t ncap = cap ? cap * 2 : 1 << 20;
            unsigned char *n = realloc(buf, ncap + 1);
            if (!n) {
                free(buf);
                gzclose(f);
                return NULL;
            }
            buf = n;
            cap = ncap;
        }
        int r = gzread(f, buf + len, (unsigned)(cap - len));
        if (r < 0) {
            free(buf);
            gzclose(f);
            return NULL;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    gzclose(f);
    buf[len] = 0;
    *size = len;
    return buf;
}

static void remove_tree(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

static void run_test(int i)
{
    case_begin(tests[i].name);
    case_implicit = 1;
    tests[i].fn();
    case_end();
}

/* Tests run in this many processes (TEST_JOBS, else the machine's cores,
 * at most MAX_JOBS): most of the suite waits on the programs it runs, and
 * one process at a time took longer than a machine gives a change to be
 * checked. */
enum { MAX_JOBS = 8 };

static int jobs_wanted(void)
{
    const char *e = getenv("TEST_JOBS");
    long n = e && *e ? atol(e) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_JOBS ? MAX_JOBS : (int)n;
}

/* What the processes share: the next test to take, and each one's counts. */
typedef struct shared {
    atomic_int next;
    int current[MAX_JOBS];  /* the test each process runs */
    int passed[MAX_JOBS], failed[MAX_JOBS], skipped[MAX_JOBS];
} shared;

/* Runs the tests in jobs processes, each taking the next test not taken
 * yet, its output kept in a file of its own and printed whole once all
 * are done, so that no two tests' lines mix.  A process that dies counts
 * as a failure. */
static void run_parallel(const char *filter, int jobs)
{
    shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                      -1, 0);
    FILE *out[MAX_JOBS] = {0};
    pid_t pid[MAX_JOBS];
    if (sh == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    atomic_init(&sh->next, 0);
    fflush(stdout);
    for (int j = 0; j < jobs; j++) {
        if (!(out[j] = tmpfile())) {
            perror("tmpfile");
            exit(2);
        }
        pid[j] = fork();
        if (pid[j] < 0) {
            perror("fork");
            exit(2);
        }
        if (pid[j] == 0) {
            dup2(fileno(out[j]), STDOUT_FILENO);
            for (int i; (i = atomic_fetch_add(&sh->next, 1)) < ntests;) {
                sh->current[j] = i;
                if (!filter || strstr(tests[i].name, filter))
                    run_test(i);
            }
            fflush(stdout);
            if (tmp_dir[0])
                remove_tree(tmp_dir);
            sh->passed[j] = passed;
            sh->failed[j] = failed;
            sh->skipped[j] = skipped;
            _exit(0);
        }
    }
    for (int j = 0; j < jobs; j++) {
        int ws = 0;
        waitpid(pid[j], &ws, 0);
        char buf[65536];
        size_t n;
        rewind(out[j]);
        while ((n = fread(buf, 1, sizeof buf, out[j])) > 0)
            fwrite(buf, 1, n, stdout);
        fclose(out[j]);
        passed += sh->passed[j];
        failed += sh->failed[j];
        skipped += sh->skipped[j];
        if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
            printf("FAIL %s: its test process ended %s %d (the counts of the tests it "
                   "ran are lost)\n", tests[sh->current[j]].name,
                   WIFSIGNALED(ws) ? "by signal" : "with status",
                   WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
            failed++;
        }
    }
    munmap(sh, sizeof *sh);
}

int main(int argc, char **argv)
{
    const char *filter = argc > 1 ? argv[1] : NULL;
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* Thousands of conversions run in these processes.  With glibc's
     * defaults each one's blocks were mapped afresh or trimmed back to the
     * system, and faulted in again, several microseconds a page on a
     * virtual machine: a fifth of the suite's time (63 s against 52 s
     * here).  As the program does for itself (cli.c), the process that
     * runs the library sets how its memory is kept. */
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    if (!t_shared())
        printf("SKIP: ../shared not found (corpus tests are skipped)\n");
    int jobs = jobs_wanted();
    if (jobs > 1) {
        slow_first();
        run_parallel(filter, jobs);
    } else {
        for (int i = 0; i < ntests; i++)
            if (!filter || strstr(tests[i].name, filter))
                run_test(i);
        if (tmp_dir[0])
            remove_tree(tmp_dir);
    }
    if (skipped)
        printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    else
        printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
