/* The perf.data reader on recordings of Linux perf made by the test
 * itself: small programs built here (cc) with known shares of CPU time in
 * distinct functions are recorded with the real `perf record`, and what
 * profconv makes of each file is compared with perf's own tools:
 *   - the top self functions (leaf frame -> share of the total weight)
 *     of profconv's folded output against `perf report --stdio
 *     --no-children --sort sym`, each within 0.1 percentage points;
 *   - the number of samples per tid, and each thread's name, against
 *     `perf script`;
 *   - for --call-graph dwarf, that the samples in f1..f3 were unwound up
 *     to main.
 * Recordings: (a) frame pointers (-g), (b) -O2 -fomit-frame-pointer with
 * --call-graph dwarf, (c) pthreads named with pthread_setname_np, (d) two
 * events, (e) a library built here and dlopen'ed, then an exec of another
 * program.  Each program burns 0.2-0.25 s of CPU (350-500 samples).
 * Skipped when cc or perf is missing or perf record fails
 * (perf_event_paranoid, no PMU in a VM...). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "t.h"
#include "test_util.h"

/* A function burning CPU time for SECS seconds, checking the clock
 * rarely so that clock_gettime is a negligible share. */
#define BURN_MACRO                                                              \
    "#include <time.h>\n"                                                       \
    "static double now(void)\n"                                                 \
    "{ struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);\n"                \
    "  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9; }\n"                 \
    "volatile unsigned long sink;\n"                                            \
    "#define BURN(name, secs) __attribute__((noinline)) void name(void) {\\\n"  \
    "    double e = now() + (secs); unsigned long x = sink;\\\n"                \
    "    do { for (int i = 0; i < 20000; i++) x = x * 6364136223846793005UL + (unsigned)i; }\\\n" \
    "    while (now() < e); sink = x; }\n"

/* (a), (b), (d): f1 60%, f2 30%, f3 10%.  main reads sink after f3 so
 * that f3 is not a tail call. */
static const char prog_burn[] =
    BURN_MACRO
    "BURN(f1, 0.12)\n"
    "BURN(f2, 0.06)\n"
    "BURN(f3, 0.02)\n"
    "int main(void) { f1(); f2(); f3(); return sink == 42; }\n";

/* (c): the main thread, then two named threads on the two cores. */
static const char prog_threads[] =
    "#define _GNU_SOURCE\n"
    "#include <pthread.h>\n"
    BURN_MACRO
    "BURN(main_burn, 0.04)\n"
    "BURN(alpha_burn, 0.125)\n"
    "BURN(beta_burn, 0.075)\n"
    "static void *alpha(void *a) { (void)a; pthread_setname_np(pthread_self(), \"lp-alpha\");\n"
    "    alpha_burn(); return 0; }\n"
    "static void *beta(void *a) { (void)a; pthread_setname_np(pthread_self(), \"lp-beta\");\n"
    "    beta_burn(); return 0; }\n"
    "int main(void) {\n"
    "    pthread_setname_np(pthread_self(), \"lp-main\");\n"
    "    main_burn();\n"
    "    pthread_t a, b;\n"
    "    pthread_create(&a, 0, alpha, 0); pthread_create(&b, 0, beta, 0);\n"
    "    pthread_join(a, 0); pthread_join(b, 0);\n"
    "    return sink == 42;\n"
    "}\n";

/* (e): the library, the program that dlopens it then execs the next. */
static const char prog_lib[] =
    BURN_MACRO
    "BURN(lib_burn, 0.075)\n";

static const char prog_dl[] =
    "#include <dlfcn.h>\n"
    "#include <unistd.h>\n"
    BURN_MACRO
    "BURN(dl_burn, 0.025)\n"
    "int main(int argc, char **argv) {\n"
    "    if (argc < 3) return 2;\n"
    "    void *h = dlopen(argv[1], RTLD_NOW);\n"
    "    if (!h) return 3;\n"
    "    void (*f)(void) = (void (*)(void))dlsym(h, \"lib_burn\");\n"
    "    if (!f) return 4;\n"
    "    f();\n"
    "    dl_burn();\n"
    "    execl(argv[2], argv[2], (char *)0);\n"
    "    return 5;\n"
    "}\n";

static const char prog_after[] =
    BURN_MACRO
    "BURN(after_burn, 0.075)\n"
    "int main(void) { after_burn(); return sink == 42; }\n";

/* ---- running commands ---- */

/* Output of a shell command (stdout), NUL-terminated; NULL if it could
 * not run.  *rc gets its exit status. */
static char *run_capture(int *rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *run_capture(int *rc, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *f = popen(cmd, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n < 4096) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int st = pclose(f);
    if (rc)
        *rc = st;
    if (buf)
        buf[n] = 0;
    return buf;
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* The test's directory for recordings, made once. */
static const char *lp_dir(void)
{
    static char dir[1024];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/linux_perf", t_tmpdir());
        mkdir(dir, 0755);
    }
    return dir;
}

/* Why these tests cannot run here, or NULL: cc, perf, perf record. */
static const char *lp_unavailable(void)
{
    static int checked;
    static char why[512];
    if (checked)
        return why[0] ? why : NULL;
    checked = 1;
    if (run("command -v cc >/dev/null 2>&1") != 0) {
        snprintf(why, sizeof why, "no cc to build the programs to record");
        return why;
    }
    if (run("perf --version >/dev/null 2>&1") != 0) {
        snprintf(why, sizeof why, "perf is not installed (Debian: linux-perf)");
        return why;
    }
    int rc = 0;
    char *out = run_capture(&rc, "cd '%s' && " T_PERF_RECORD " -e cpu-clock -o probe.data true 2>&1",
                            lp_dir());
    if (rc != 0) {
        snprintf(why, sizeof why, "perf record fails here (perf_event_paranoid?): %.300s",
                 out ? out : "");
        free(out);
        return why;
    }
    free(out);
    return NULL;
}

/* Builds src as dir/name with cflags; 0 on success. */
static int build(const char *name, const char *src, const char *cflags)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.c", lp_dir(), name);
    if (write_text(path, src) != 0)
        return -1;
    return run("cd '%s' && cc %s -o '%s' '%s.c' >/dev/null 2>&1", lp_dir(), cflags, name, name);
}

/* Records "cmd" (run in the test's directory) to dir/<data>; 0 on
 * success, else the case is skipped with perf's message. */
static int record(const char *data, const char *args, const char *cmd)
{
    int rc = 0;
    char *out = run_capture(&rc, "cd '%s' && " T_PERF_RECORD " %s -o '%s' %s 2>&1", lp_dir(), args,
                            data, cmd);
    if (rc != 0) {
        t_skip("perf record %s failed: %.300s", args, out ? out : "");
        free(out);
        return -1;
    }
    free(out);
    return 0;
}

/* ---- shares of self time ---- */

typedef struct share {
    char name[256];
    double pct;
} share;

typedef struct shares {
    share *s;
    size_t n, cap;
} shares;

/* perf names some libc symbols with their version: clock_gettime@@GLIBC_2.17. */
static void norm_name(char *d, size_t cap, const char *s, size_t len)
{
    const char *at = memchr(s, '@', len);
    if (at && at > s)
        len = (size_t)(at - s);
    if (len >= cap)
        len = cap - 1;
    memcpy(d, s, len);
    d[len] = 0;
}

static share *shares_get(shares *sh, const char *name)
{
    for (size_t i = 0; i < sh->n; i++)
        if (strcmp(sh->s[i].name, name) == 0)
            return &sh->s[i];
    if (sh->n == sh->cap) {
        sh->cap = sh->cap ? sh->cap * 2 : 64;
        sh->s = realloc(sh->s, sh->cap * sizeof *sh->s);
    }
    share *s = &sh->s[sh->n++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->pct = 0;
    return s;
}

static double shares_pct(const shares *sh, const char *name)
{
    for (size_t i = 0; i < sh->n; i++)
        if (strcmp(sh->s[i].name, name) == 0)
            return sh->s[i].pct;
    return 0;
}

static int by_pct(const void *a, const void *b)
{
    double x = ((const share *)a)->pct, y = ((const share *)b)->pct;
    return x < y ? 1 : x > y ? -1 : strcmp(((const share *)a)->name, ((const share *)b)->name);
}

/* perf report's self shares for the event named event (NULL: the first
 * section). */
static int perf_report_shares(const char *data, const char *event, shares *out)
{
    int rc = 0;
    char *txt = run_capture(&rc,
                            "cd '%s' && perf report -i '%s' --stdio --no-children --sort sym "
                            "-g none 2>/dev/null",
                            lp_dir(), data);
    if (!txt || rc != 0) {
        free(txt);
        return -1;
    }
    int section = 0, in = 0;
    for (char *line = strtok(txt, "\n"); line; line = strtok(NULL, "\n")) {
        const char *ev = strstr(line, " of event '");
        if (line[0] == '#' && ev) {
            section++;
            ev += strlen(" of event '");
            size_t len = strcspn(ev, "'");
            in = event ? (strlen(event) == len && strncmp(ev, event, len) == 0) : section == 1;
            continue;
        }
        if (!in || line[0] == '#')
            continue;
        double pct;
        char kind;
        int at = 0;
        if (sscanf(line, " %lf%% [%c] %n", &pct, &kind, &at) < 2 || !at)
            continue;
        char *name = line + at;
        size_t len = strlen(name);
        while (len && name[len - 1] == ' ')
            len--;
        char nm[256];
        norm_name(nm, sizeof nm, name, len);
        shares_get(out, nm)->pct += pct;
    }
    free(txt);
    qsort(out->s, out->n, sizeof *out->s, by_pct);
    return 0;
}

/* profconv's folded output (no prefix): leaf frame -> share of the total. */
static int profconv_shares(const char *data, const char *extra, shares *out)
{
    int rc = 0;
    char *txt = run_capture(&rc,
                            "cd '%s' && '%s' %s --folded-prefix none '%s' -o - --to folded "
                            "2>/dev/null",
                            lp_dir(), t_profconv_abs(), extra, data);
    if (!txt || rc != 0) {
        free(txt);
        return -1;
    }
    double total = 0;
    for (char *line = strtok(txt, "\n"); line; line = strtok(NULL, "\n")) {
        char *sp = strrchr(line, ' ');
        if (!sp)
            continue;
        double w = strtod(sp + 1, NULL);
        *sp = 0;
        char *semi = strrchr(line, ';');
        const char *leaf = semi ? semi + 1 : line;
        char nm[256];
        norm_name(nm, sizeof nm, leaf, strlen(leaf));
        shares_get(out, nm)->pct += w;
        total += w;
    }
    free(txt);
    for (size_t i = 0; i < out->n; i++)
        out->s[i].pct = total > 0 ? 100.0 * out->s[i].pct / total : 0;
    qsort(out->s, out->n, sizeof *out->s, by_pct);
    return 0;
}

/* The top self functions of perf report (at least 1% each, at most 8)
 * must have the same share in profconv's output to 0.1 percentage
 * points; so must profconv's top 3.  The functions named in must[]
 * must be among perf's top. */
static void compare_shares(const char *data, const char *event, const char *extra,
                           const char *const *must)
{
    shares pr = { 0 }, pc = { 0 };
    if (perf_report_shares(data, event, &pr) != 0 || pr.n == 0) {
        t_fail(__FILE__, __LINE__, "perf report on %s gave no shares", data);
        goto done;
    }
    if (profconv_shares(data, extra, &pc) != 0 || pc.n == 0) {
        t_fail(__FILE__, __LINE__, "profconv %s %s -o - --to folded failed", extra, data);
        goto done;
    }
    char line[4096];
    size_t at = 0;
    at += (size_t)snprintf(line + at, sizeof line - at, "%s%s%s: perf report / profconv:", data,
                           event ? " " : "", event ? event : "");
    for (size_t i = 0; i < pr.n && i < 8 && pr.s[i].pct >= 1.0; i++) {
        double mine = shares_pct(&pc, pr.s[i].name);
        if (at < sizeof line - 100)
            at += (size_t)snprintf(line + at, sizeof line - at, " %s %.2f/%.2f", pr.s[i].name,
                                   pr.s[i].pct, mine);
        if (mine < pr.s[i].pct - 0.1 || mine > pr.s[i].pct + 0.1)
            t_fail(__FILE__, __LINE__, "%s%s%s: self share of %s: perf report %.2f%%, profconv %.2f%%",
                   data, event ? " " : "", event ? event : "", pr.s[i].name, pr.s[i].pct, mine);
    }
    for (size_t i = 0; i < pc.n && i < 3; i++) {
        double theirs = shares_pct(&pr, pc.s[i].name);
        if (pc.s[i].pct >= 1.0 && (theirs < pc.s[i].pct - 0.1 || theirs > pc.s[i].pct + 0.1))
            t_fail(__FILE__, __LINE__,
                   "%s: profconv's top function %s has %.2f%%, perf report %.2f%%", data,
                   pc.s[i].name, pc.s[i].pct, theirs);
    }
    for (size_t k = 0; must && must[k]; k++)
        if (shares_pct(&pr, must[k]) < 1.0)
            t_fail(__FILE__, __LINE__, "%s: %s has %.2f%% in perf report (the program burns it)",
                   data, must[k], shares_pct(&pr, must[k]));
    if (getenv("TEST_VERBOSE"))
        fprintf(stderr, "%s\n", line);
done:
    free(pr.s);
    free(pc.s);
}

/* ---- per-thread counts and names from perf script ---- */

typedef struct tid_row {
    long tid;
    long n;
    char comm[64];  /* of its last sample */
} tid_row;

typedef struct tid_rows {
    tid_row r[64];
    size_t n;
    long total;
} tid_rows;

/* perf script's samples of event (NULL: every event) per tid. */
static int perf_script_tids(const char *data, const char *event, tid_rows *out)
{
    memset(out, 0, sizeof *out);
    int rc = 0;
    char *txt = run_capture(&rc, "cd '%s' && perf script -i '%s' -F comm,tid,event 2>/dev/null",
                            lp_dir(), data);
    if (!txt || rc != 0) {
        free(txt);
        return -1;
    }
    for (char *line = strtok(txt, "\n"); line; line = strtok(NULL, "\n")) {
        /* "COMM TID EVENT:" with COMM possibly holding spaces. */
        size_t len = strlen(line);
        while (len && line[len - 1] == ' ')
            line[--len] = 0;
        char *ev = strrchr(line, ' ');
        if (!ev || len < 2 || line[len - 1] != ':')
            continue;
        line[len - 1] = 0;
        ev++;
        if (event && strcmp(ev, event) != 0)
            continue;
        char *p = ev - 1;
        while (p > line && *p == ' ')
            *p-- = 0;
        char *tidp = strrchr(line, ' ');
        if (!tidp)
            continue;
        long tid = strtol(tidp + 1, NULL, 10);
        while (tidp > line && *tidp == ' ')
            *tidp-- = 0;
        const char *comm = line;
        while (*comm == ' ')
            comm++;
        size_t i;
        for (i = 0; i < out->n; i++)
            if (out->r[i].tid == tid)
                break;
        if (i == out->n) {
            if (out->n == 64)
                continue;
            out->n++;
            out->r[i].tid = tid;
        }
        out->r[i].n++;
        snprintf(out->r[i].comm, sizeof out->r[i].comm, "%s", comm);
        out->total++;
    }
    free(txt);
    return 0;
}

/* Converts dir/data with the library (event NULL: the default). */
static pc_profile *convert_recording(const char *data, const char *event)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", lp_dir(), data);
    size_t len = 0;
    unsigned char *bytes = t_read_file(path, &len);
    if (!bytes) {
        t_fail(__FILE__, __LINE__, "cannot read %s", path);
        return NULL;
    }
    pc_options o;
    pc_options_init(&o);
    o.event = event;
    pc_profile *p = NULL;
    pc_error err;
    memset(&err, 0, sizeof err);
    int st = convert_bytes(bytes, len, &o, &p, &err);
    free(bytes);
    if (st != 0 || !p) {
        t_fail(__FILE__, __LINE__, "converting %s failed: status %d", path, st);
        return NULL;
    }
    return p;
}

/* The samples of p per tid and the threads' names against perf script's. */
static void compare_tids(const char *data, const char *event, const pc_profile *p)
{
    tid_rows ps;
    if (perf_script_tids(data, event, &ps) != 0 || ps.total == 0) {
        t_fail(__FILE__, __LINE__, "perf script on %s gave no samples", data);
        return;
    }
    if ((long)p->sample.n != ps.total)
        t_fail(__FILE__, __LINE__, "%s%s%s: profconv has %zu samples, perf script %ld", data,
               event ? " " : "", event ? event : "", p->sample.n, ps.total);
    for (size_t i = 0; i < ps.n; i++) {
        long mine = 0;
        int named = 0;
        const char *names = "";
        for (size_t t = 0; t < p->thread.n; t++) {
            if (p->thread.tid[t] != ps.r[i].tid)
                continue;
            mine += (long)thread_samples(p, (uint32_t)t);
            names = str_of(p, p->thread.name[t]);
            if (strcmp(names, ps.r[i].comm) == 0)
                named = 1;
        }
        if (mine != ps.r[i].n)
            t_fail(__FILE__, __LINE__, "%s: tid %ld has %ld samples in profconv, %ld in perf script",
                   data, ps.r[i].tid, mine, ps.r[i].n);
        if (!named)
            t_fail(__FILE__, __LINE__,
                   "%s: tid %ld is named \"%s\" by profconv, \"%s\" by perf script (last sample)",
                   data, ps.r[i].tid, names, ps.r[i].comm);
    }
}

/* Name of the leaf frame of sample i. */
static const char *leaf_of(const pc_profile *p, size_t i)
{
    const char *s = stack_text(p, p->sample.stack[i]);
    const char *semi = strrchr(s, ';');
    return semi ? semi + 1 : s;
}

/* Of the samples whose leaf is f1, f2 or f3, the share whose stack reads
 * "main;fN" (the caller found): percent. */
static double unwound_pct(const pc_profile *p, size_t *in_f)
{
    size_t n = 0, ok = 0;
    for (size_t i = 0; i < p->sample.n; i++) {
        const char *s = stack_text(p, p->sample.stack[i]);
        const char *semi = strrchr(s, ';');
        const char *leaf = semi ? semi + 1 : s;
        if (strcmp(leaf, "f1") != 0 && strcmp(leaf, "f2") != 0 && strcmp(leaf, "f3") != 0)
            continue;
        n++;
        char want[16];
        snprintf(want, sizeof want, "main;%s", leaf);
        size_t wl = strlen(want), sl = strlen(s);
        if (sl >= wl && strcmp(s + sl - wl, want) == 0 && (sl == wl || s[sl - wl - 1] == ';'))
            ok++;
    }
    *in_f = n;
    return n ? 100.0 * (double)ok / (double)n : 0;
}

static const char *const f123[] = { "f1", "f2", "f3", NULL };

static const char *arch_skip(void)
{
#if defined(__x86_64__)
    return NULL;
#else
    return "--call-graph dwarf is tested on x86_64 only";
#endif
}

TEST_SLOW(linux_perf_fp)
{
    const char *why = lp_unavailable();
    if (why) {
        t_skip("%s", why);
        return;
    }
    if (build("lp_fp", prog_burn, "-O1 -fno-omit-frame-pointer -g0") != 0) {
        t_fail(__FILE__, __LINE__, "the program to record does not build");
        return;
    }
    if (record("fp.data", "-e cpu-clock -F 2000 -g", "./lp_fp") != 0)
        return;
    compare_shares("fp.data", NULL, "", f123);
    pc_profile *p = convert_recording("fp.data", NULL);
    if (!p)
        return;
    compare_tids("fp.data", NULL, p);
    /* Frame pointers walk up to main too. */
    size_t n = 0;
    double pct = unwound_pct(p, &n);
    T_CHECK(n > 0);
    if (pct < 95)
        t_fail(__FILE__, __LINE__, "fp: %.1f%% of %zu samples in f1..f3 reach main", pct, n);
    pc_profile_free(p);
}

TEST_SLOW(linux_perf_dwarf)
{
    const char *why = lp_unavailable();
    if (!why)
        why = arch_skip();
    if (why) {
        t_skip("%s", why);
        return;
    }
    if (build("lp_dwarf", prog_burn, "-O2 -fomit-frame-pointer -g0") != 0) {
        t_fail(__FILE__, __LINE__, "the program to record does not build");
        return;
    }
    if (record("dwarf.data", "-e cpu-clock -F 2000 --call-graph dwarf", "./lp_dwarf") != 0)
        return;
    compare_shares("dwarf.data", NULL, "", f123);
    pc_profile *p = convert_recording("dwarf.data", NULL);
    if (!p)
        return;
    compare_tids("dwarf.data", NULL, p);
    size_t n = 0;
    double pct = unwound_pct(p, &n);
    T_CHECK(n > 0);
    if (pct < 90)
        t_fail(__FILE__, __LINE__, "dwarf: only %.1f%% of %zu samples in f1..f3 unwound to main",
               pct, n);
    if (getenv("TEST_VERBOSE"))
        fprintf(stderr, "dwarf: %.1f%% of %zu samples in f1..f3 unwound to main\n", pct, n);
    pc_profile_free(p);
}

TEST_SLOW(linux_perf_threads)
{
    const char *why = lp_unavailable();
    if (why) {
        t_skip("%s", why);
        return;
    }
    if (build("lp_threads", prog_threads, "-O1 -fno-omit-frame-pointer -g0 -pthread") != 0) {
        t_fail(__FILE__, __LINE__, "the program to record does not build");
        return;
    }
    if (record("threads.data", "-e cpu-clock -F 2000 -g", "./lp_threads") != 0)
        return;
    static const char *const must[] = { "main_burn", "alpha_burn", "beta_burn", NULL };
    compare_shares("threads.data", NULL, "", must);
    pc_profile *p = convert_recording("threads.data", NULL);
    if (!p)
        return;
    compare_tids("threads.data", NULL, p);
    /* Each burner's samples are on the thread of its name. */
    static const char *const pairs[][2] = {
        { "main_burn", "lp-main" }, { "alpha_burn", "lp-alpha" }, { "beta_burn", "lp-beta" }
    };
    for (size_t k = 0; k < 3; k++) {
        size_t n = 0, on = 0;
        for (size_t i = 0; i < p->sample.n; i++) {
            if (strcmp(leaf_of(p, i), pairs[k][0]) != 0)
                continue;
            n++;
            on += strcmp(str_of(p, p->thread.name[pc_sample_thread(p, i)]), pairs[k][1]) == 0;
        }
        T_CHECK(n > 0);
        if (on != n)
            t_fail(__FILE__, __LINE__, "threads: %zu of %zu samples in %s are on a thread named %s",
                   on, n, pairs[k][0], pairs[k][1]);
    }
    pc_profile_free(p);
}

TEST_SLOW(linux_perf_two_events)
{
    const char *why = lp_unavailable();
    if (why) {
        t_skip("%s", why);
        return;
    }
    if (build("lp_ev", prog_burn, "-O1 -fno-omit-frame-pointer -g0") != 0) {
        t_fail(__FILE__, __LINE__, "the program to record does not build");
        return;
    }
    /* instructions where the machine counts them (not in most VMs). */
    int rc = 0;
    char *st = run_capture(&rc, "perf stat -x, -e instructions true 2>&1");
    int has_ins = rc == 0 && st && !strstr(st, "not supported") && !strstr(st, "not counted");
    free(st);
    const char *second = has_ins ? "instructions" : "task-clock";
    char args[256];
    snprintf(args, sizeof args, "-e cpu-clock,%s -F 2000 -g", second);
    if (record("ev.data", args, "./lp_ev") != 0)
        return;

    t_case("linux_perf_two_events: the first event (default)");
    compare_shares("ev.data", "cpu-clock", "", f123);
    pc_profile *p = convert_recording("ev.data", NULL);
    if (p) {
        compare_tids("ev.data", "cpu-clock", p);
        pc_profile_free(p);
    }

    t_case("linux_perf_two_events: --event %s", second);
    char extra[64];
    snprintf(extra, sizeof extra, "--event %s", second);
    compare_shares("ev.data", second, extra, f123);
    p = convert_recording("ev.data", second);
    if (p) {
        compare_tids("ev.data", second, p);
        pc_profile_free(p);
    }
}

TEST_SLOW(linux_perf_dlopen_exec)
{
    const char *why = lp_unavailable();
    if (why) {
        t_skip("%s", why);
        return;
    }
    char lib[1200], after[1200], cmd[4096];
    snprintf(lib, sizeof lib, "%s/liblp.so", lp_dir());
    snprintf(after, sizeof after, "%s/lp_after", lp_dir());
    if (build("liblp.so", prog_lib, "-O1 -fno-omit-frame-pointer -g0 -shared -fPIC") != 0 ||
        build("lp_dl", prog_dl, "-O1 -fno-omit-frame-pointer -g0 -ldl") != 0 ||
        build("lp_after", prog_after, "-O1 -fno-omit-frame-pointer -g0") != 0) {
        t_fail(__FILE__, __LINE__, "the programs to record do not build");
        return;
    }
    snprintf(cmd, sizeof cmd, "./lp_dl '%s' '%s'", lib, after);
    if (record("dl.data", "-e cpu-clock -F 2000 -g", cmd) != 0)
        return;
    static const char *const must[] = { "lib_burn", "dl_burn", "after_burn", NULL };
    compare_shares("dl.data", NULL, "", must);
    pc_profile *p = convert_recording("dl.data", NULL);
    if (!p)
        return;
    compare_tids("dl.data", NULL, p);
    /* The library's frames are named, under main; after the exec the
     * samples are named from the new binary.  exec keeps the pid and tid,
     * and the reader shows a thread with the name it had at its last
     * sample (as compare_tids checks against perf script): so every one
     * of these samples is on one thread, named after the exec'd program. */
    static const char *const pairs[][2] = {
        { "lib_burn", "lp_after" }, { "dl_burn", "lp_after" }, { "after_burn", "lp_after" }
    };
    int64_t tid = -1;
    for (size_t k = 0; k < 3; k++) {
        size_t n = 0, on = 0, under_main = 0;
        for (size_t i = 0; i < p->sample.n; i++) {
            if (strcmp(leaf_of(p, i), pairs[k][0]) != 0)
                continue;
            n++;
            int64_t t = p->thread.tid[pc_sample_thread(p, i)];
            if (tid < 0)
                tid = t;
            if (t != tid)
                t_fail(__FILE__, __LINE__, "dlopen_exec: a sample in %s is on tid %lld, not %lld",
                       pairs[k][0], (long long)t, (long long)tid);
            on += strcmp(str_of(p, p->thread.name[pc_sample_thread(p, i)]), pairs[k][1]) == 0;
            char want[64];
            snprintf(want, sizeof want, "main;%s", pairs[k][0]);
            under_main += strstr(stack_text(p, p->sample.stack[i]), want) != NULL;
        }
        if (n == 0) {
            t_fail(__FILE__, __LINE__, "dlopen_exec: no sample has %s as its leaf", pairs[k][0]);
            continue;
        }
        if (on != n)
            t_fail(__FILE__, __LINE__,
                   "dlopen_exec: %zu of %zu samples in %s are on a thread named %s", on, n,
                   pairs[k][0], pairs[k][1]);
        if (under_main * 100 < n * 95)
            t_fail(__FILE__, __LINE__, "dlopen_exec: %zu of %zu samples in %s are under main",
                   under_main, n, pairs[k][0]);
    }
    pc_profile_free(p);
}
