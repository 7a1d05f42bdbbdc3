/* How the command line talks to a person: which lines a run prints by
 * default, under -v and under -q; the hint for a mistyped option; binary
 * output refused on a terminal; the progress line on a terminal of a
 * given width, erased when reading ends.  Terminals are pseudo-terminals
 * opened here. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "fixtures.h"
#include "t.h"

typedef struct result {
    int status;       /* exit code, or -1 if it did not exit */
    char err[8192];   /* standard error (or the terminal's bytes) */
    size_t err_len;
    size_t out_len;   /* bytes on standard output (when not the terminal) */
} result;

static const char *exe_path(void)
{
    return t_profconv_abs();
}

static const char *tmp(const char *name)
{
    static char bufs[4][512];
    static int next;
    next = (next + 1) % 4;
    snprintf(bufs[next], sizeof bufs[next], "%s/%s", t_tmpdir(), name);
    return bufs[next];
}

/* fx_android: two events (11 cpu-cycles samples, 1 cpu-clock), gaps. */
static const char *fixture(void)
{
    static char path[512];
    if (!path[0]) {
        spe e;
        fx_android(&e);
        snprintf(path, sizeof path, "%s", tmp("behaviour.trace"));
        FILE *f = fopen(path, "wb");
        if (f) {
            fwrite(e.out.data, 1, e.out.len, f);
            fclose(f);
        }
        spe_free(&e);
    }
    return path;
}

static void exec_profconv(const char *const *args)
{
    const char *argv[32];
    int n = 0;
    argv[n++] = exe_path();
    for (; args[n - 1] && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    execv(argv[0], (char *const *)argv);
    _exit(127);
}

static void finish(result *r, pid_t pid)
{
    int ws = 0;
    waitpid(pid, &ws, 0);
    r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* Runs profconv with standard error and output to files. */
static void run(result *r, const char *const *args)
{
    const char *out_path = tmp("behaviour.stdout"), *err_path = tmp("behaviour.stderr");
    memset(r, 0, sizeof *r);
    pid_t pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || err < 0)
            _exit(127);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        exec_profconv(args);
    }
    finish(r, pid);
    FILE *f = fopen(err_path, "rb");
    if (f) {
        r->err_len = fread(r->err, 1, sizeof r->err - 1, f);
        fclose(f);
    }
    f = fopen(out_path, "rb");
    if (f) {
        char buf[4096];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, f)) > 0)
            r->out_len += got;
        fclose(f);
    }
}

/* Runs profconv with standard error (and standard output if both) on a
 * new pseudo-terminal of cols columns; the terminal's bytes go to
 * r->err.  0 if no pseudo-terminal could be had. */
static int run_tty(result *r, unsigned short cols, int both, const char *const *args)
{
    memset(r, 0, sizeof *r);
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0)
        return 0;
    char *name = grantpt(master) == 0 && unlockpt(master) == 0 ? ptsname(master) : NULL;
    if (!name) {
        close(master);
        return 0;
    }
    char slave_name[256];
    snprintf(slave_name, sizeof slave_name, "%s", name);
    int slave = open(slave_name, O_RDWR | O_NOCTTY);
    if (slave < 0) {
        close(master);
        return 0;
    }
    struct winsize ws = {.ws_row = 24, .ws_col = cols};
    ioctl(slave, TIOCSWINSZ, &ws);
    const char *out_path = tmp("behaviour.stdout");
    pid_t pid = fork();
    if (pid == 0) {
        close(master);
        int in = open("/dev/null", O_RDONLY);
        int out = both ? slave : open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0)
            _exit(127);
        dup2(in, 0);
        dup2(out, 1);
        dup2(slave, 2);
        /* $COLUMNS must not be what sets the width here. */
        unsetenv("COLUMNS");
        exec_profconv(args);
    }
    close(slave);
    /* Read until the child's side closes (EIO on Linux). */
    for (;;) {
        ssize_t got = read(master, r->err + r->err_len, sizeof r->err - 1 - r->err_len);
        if (got > 0)
            r->err_len += (size_t)got;
        else if (got < 0 && errno == EINTR)
            continue;
        else
            break;
        if (r->err_len == sizeof r->err - 1)
            break;
    }
    close(master);
    finish(r, pid);
    return 1;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

TEST(cli_default_lines_and_verbose)
{
    result r;
    run(&r, (const char *[]){fixture(), "-o", tmp("b.json"), NULL});
    T_EQ_INT(r.status, 0);
    /* A warning (samples lost while recording) and the choice of event,
     * which left samples out, stay; the count of samples removed in gaps
     * is a detail. */
    T_EQ_INT((int)count_lines(r.err), 3);
    T_CONTAINS(r.err, "warning: 2 of 14 samples (14.3%) were lost while recording");
    T_CONTAINS(r.err, "using event: cpu-cycles (11 samples); left out: cpu-clock (1 samples)");
    T_CONTAINS(r.err, "wrote ");
    T_CHECK(!strstr(r.err, "removed "));

    run(&r, (const char *[]){"-v", fixture(), "-o", tmp("b.json"), NULL});
    T_EQ_INT(r.status, 0);
    T_EQ_INT((int)count_lines(r.err), 4);
    T_CONTAINS(r.err, "using event: cpu-cycles");
    T_CONTAINS(r.err, "removed ");
    T_CONTAINS(r.err, "samples in gaps");
    T_CONTAINS(r.err, "wrote ");

    /* What filters kept: a detail, which the summary's counts cover. */
    run(&r, (const char *[]){"--verbose", "--pid", "1000", fixture(), "-o", tmp("b.json"), NULL});
    T_EQ_INT(r.status, 0);
    T_CONTAINS(r.err, "filters keep");
    run(&r, (const char *[]){"--pid", "1000", fixture(), "-o", tmp("b.json"), NULL});
    T_EQ_INT(r.status, 0);
    T_CHECK(!strstr(r.err, "filters keep"));

    run(&r, (const char *[]){"-q", "-v", fixture(), "-o", tmp("b.json"), NULL});
    T_EQ_INT(r.status, 0);
    T_EQ_INT((int)r.err_len, 0);
}

TEST(cli_did_you_mean)
{
    result r;
    run(&r, (const char *[]){"--remov-gaps", "3", fixture(), NULL});
    T_EQ_INT(r.status, 1);
    T_CONTAINS(r.err, "profconv: unknown option '--remov-gaps' (did you mean --remove-gaps?)\n");
    run(&r, (const char *[]){"--folded-anotate", fixture(), NULL});
    T_EQ_INT(r.status, 1);
    T_CONTAINS(r.err, "(did you mean --folded-annotate?)");
    run(&r, (const char *[]){"--time-rnage=1,2", fixture(), NULL});
    T_EQ_INT(r.status, 1);
    T_CONTAINS(r.err, "unknown option '--time-rnage=1,2' (did you mean --time-range?)");
    /* Nothing close: no guess. */
    run(&r, (const char *[]){"--colour", fixture(), NULL});
    T_EQ_INT(r.status, 1);
    T_CONTAINS(r.err, "unknown option '--colour'\n");
    T_CHECK(!strstr(r.err, "did you mean"));
    run(&r, (const char *[]){"-x", fixture(), NULL});
    T_EQ_INT(r.status, 1);
    T_CHECK(!strstr(r.err, "did you mean"));
}

TEST(cli_binary_output_refused_on_a_terminal)
{
    static const struct {
        const char *args[5];
        int refused;
    } cases[] = {
        {{"-o", "-", "--gzip", NULL}, 1},
        {{"-o", "-", "--to", "pprof", NULL}, 1},
        {{"-o", "-", "--to", "folded", NULL}, 0},
        {{"-o", "-", NULL}, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        t_case("%s %s %s", cases[i].args[1], cases[i].args[2] ? cases[i].args[2] : "",
               cases[i].args[3] ? cases[i].args[3] : "");
        const char *args[8] = {"-q", fixture()};
        for (size_t k = 0; cases[i].args[k]; k++)
            args[2 + k] = cases[i].args[k];
        result r;
        if (!run_tty(&r, 80, 1, args)) {
            t_skip("no pseudo-terminal on this machine");
            return;
        }
        r.err[r.err_len] = 0;
        if (cases[i].refused) {
            T_EQ_INT(r.status, 1);
            T_CONTAINS(r.err, "the output is binary and standard output is a terminal: give "
                              "-o FILE or pipe it");
        } else {
            T_EQ_INT(r.status, 0);
            T_CHECK(r.err_len > 100);
        }
    }
    /* Not a terminal: written as asked. */
    result r;
    run(&r, (const char *[]){"-q", fixture(), "-o", "-", "--to", "pprof", NULL});
    T_EQ_INT(r.status, 0);
    T_CHECK(r.out_len > 0);
}

TEST(cli_progress_line_fits_and_is_erased)
{
    result r;
    const char *out = tmp("b.json");
    if (!run_tty(&r, 40, 0, (const char *[]){fixture(), "-o", out, NULL})) {
        t_skip("no pseudo-terminal on this machine");
        return;
    }
    r.err[r.err_len] = 0;
    T_EQ_INT(r.status, 0);
    /* Every drawing of the line: "\r", the text, ESC[K. */
    size_t drawn = 0, last_end = 0;
    for (const char *s = r.err; (s = strstr(s, "\r")) != NULL; s++) {
        const char *k = strstr(s, "\033[K");
        size_t len = k ? (size_t)(k - s - 1) : 0;
        if (!k || memchr(s + 1, '\n', len) || memchr(s + 1, '\r', len))
            continue;
        if (len == 0) {
            last_end = (size_t)(k - r.err) + 3;
            continue;
        }
        drawn++;
        T_CHECK(len <= 39);
        T_CHECK(strncmp(s + 1, "profconv: ", 10) == 0);
    }
    T_CHECK(drawn >= 1);
    /* Erased before the next line: "\r ESC[K" comes after the last
     * drawing, and the summary follows on a clean line. */
    T_CHECK(last_end > 0);
    const char *last_draw = NULL;
    for (const char *s = r.err; (s = strstr(s, "\rprofconv: ")) != NULL; s++)
        last_draw = s;
    T_CHECK(last_draw && (size_t)(last_draw - r.err) < last_end);
    T_CONTAINS(r.err + last_end, "profconv: wrote ");
}
