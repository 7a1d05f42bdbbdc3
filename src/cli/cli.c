/* profconv command line: the only place that prints to the user or exits. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/escape.h"
#include "cli/cli.h"
#include "cli/gate.h"
#include "cli/view.h"
#include "profconv.h"

/* The gate's failure is the usual 1 of a failed check in CI. */
enum { EXIT_USAGE = 1, EXIT_INPUT = 2, EXIT_IO = 3, EXIT_GATE = 1 };

static int quiet, verbose;
/* The input's name as messages show it: escaped (see say()). */
static char input_name[1024];

/* The progress line: redrawn in place on a terminal (and cleared before
 * any other message), a line at a time otherwise; at most 4 a second. */
static struct {
    int on, tty, shown;
    size_t width;  /* the terminal's columns */
    double start, last;
} prog;

/* The terminal's width: what the terminal says, else $COLUMNS, else 80. */
static size_t terminal_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *env = getenv("COLUMNS");
    if (env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (end != env && !*end && v > 0 && v < 10000)
            return (size_t)v;
    }
    return 80;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void clear_progress(void)
{
    if (prog.tty && prog.shown) {
        fputs("\r\033[K", stderr);
        prog.shown = 0;
    }
}

/* One line on standard error: "profconv: " and the message, escaped as
 * the library escapes its own (base/escape.h), since the names it quotes
 * come from the command line or the input: no byte of them that a
 * terminal would act on reaches it.  The library's messages come
 * escaped already, and escaping them again changes nothing. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char raw[4096], line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    clear_progress();
    fprintf(stderr, "profconv: %s\n", pc_escape(line, sizeof line, raw));
}

static void show_progress(void *ctx, const pc_progress *p)
{
    (void)ctx;
    double t = now(), elapsed = t - prog.start;
    int final = p->total && p->bytes >= p->total;
    if (t - prog.last < 0.25 && !final)
        return;
    prog.last = t;
    double mb = (double)p->bytes / 1e6, rate = elapsed > 0 ? mb / elapsed : 0;
    char left[48] = "";
    if (p->total && rate > 0 && p->bytes < p->total)
        snprintf(left, sizeof left, ", %.0f s left", ((double)p->total / 1e6 - mb) / rate);
    char of[48] = "";
    if (p->total)
        snprintf(of, sizeof of, " of %.1f MB (%d%%)", (double)p->total / 1e6,
                 (int)(100.0 * (double)p->bytes / (double)p->total));
    char line[1200];
    snprintf(line, sizeof line, "profconv: %s: read %.1f MB%s, %llu samples, %.0f MB/s%s",
             input_name, mb, of, (unsigned long long)p->samples, rate, left);
    if (prog.tty) {
        /* A line that wraps cannot be redrawn by \r: one column short of
         * the width, so the cursor stays on it too.  The escaped name may
         * hold UTF-8: a column a character, and no character cut. */
        size_t fit = prog.width > 1 ? prog.width - 1 : 1, cols = 0;
        for (size_t i = 0; line[i]; i++)
            if (((unsigned char)line[i] & 0xc0) != 0x80 && cols++ == fit) {
                line[i] = 0;
                break;
            }
        fprintf(stderr, "\r%s\033[K", line);
    } else {
        fprintf(stderr, "%s\n", line);
    }
    prog.shown = 1;
}

/* Interrupted: no partial output stays behind; then the signal's own
 * ending, so the caller sees how the process ended. */
static void on_signal(int sig)
{
    pc_remove_partial_outputs();
    cli_split_remove_staged();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Whether an informational line is shown without -v: only the choice of
 * event when it left other events' samples out, since the output then
 * lacks samples the input has; the other informational lines (samples
 * removed in gaps, filters' counts, packets not converted) are details
 * the summary line's counts already cover. */
static void log_line(void *ctx, int level, const char *message)
{
    (void)ctx;
    /* Notices and warnings by default, details with -v. */
    if (quiet || (level == PC_LOG_INFO && !verbose))
        return;
    char line[2048];
    say("%s%s%s%s", input_name, *input_name ? ": " : "", level == PC_LOG_WARN ? "warning: " : "",
        cli_flag_words(message, line, sizeof line));
}

static int exit_code(int status)
{
    switch (status) {
    case PC_OK: return 0;
    case PC_EUSAGE: return EXIT_USAGE;
    case PC_EINPUT: return EXIT_INPUT;
    default: return EXIT_IO;
    }
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    say("%s", msg);
    fprintf(stderr, "Try 'profconv --help' for more information.\n");
    return EXIT_USAGE;
}

/* The bits of a --folded-prefix value: none, or a comma-separated list
 * of process and thread; -1 if malformed. */
static int parse_prefix(const char *arg)
{
    if (strcmp(arg, "none") == 0)
        return 0;
    int bits = 0;
    for (const char *s = arg; *s;) {
        size_t n = strcspn(s, ",");
        if (n == 7 && strncmp(s, "process", 7) == 0)
            bits |= PC_FOLDED_PROCESS;
        else if (n == 6 && strncmp(s, "thread", 6) == 0)
            bits |= PC_FOLDED_THREAD;
        else
            return -1;
        s += n;
        if (*s == ',' && *++s == 0)
            return -1;
    }
    return bits ? bits : -1;
}

/* The input's name with its extension replaced by the format's:
 * "dir/perf.trace.gz" -> "perf.json.gz" (malloc'd). */
static char *default_output(const char *input, const char *ext)
{
    const char *base = strrchr(input, '/');
    base = base ? base + 1 : input;
    size_t n = strlen(base);
    if (n > 3 && strcmp(base + n - 3, ".gz") == 0)
        n -= 3;
    for (size_t i = n; i > 0; i--) {
        if (base[i - 1] == '.') {
            if (i > 1)
                n = i - 1;
            break;
        }
    }
    size_t size = n + strlen(ext) + 1;
    char *out = malloc(size);
    if (out)
        snprintf(out, size, "%.*s%s", (int)n, base, ext);
    return out;
}

/* name (which ends in ext) with ".diff" before ext, in place of name
 * (freed): "app.json.gz" -> "app.diff.json.gz". */
static char *diff_name(char *name, const char *ext)
{
    size_t n = strlen(name), e = strlen(ext);
    if (e > n || strcmp(name + n - e, ext) != 0)
        e = 0;
    char *out = malloc(n + 6);
    if (out) {
        memcpy(out, name, n - e);
        memcpy(out + n - e, ".diff", 5);
        memcpy(out + n - e + 5, name + n - e, e + 1);
    }
    free(name);
    return out;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return strcmp(a, "-") != 0 && strcmp(b, "-") != 0 && stat(a, &sa) == 0 &&
           stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Growable lists the options collect into; they live until exit. */
typedef struct idlist {
    int64_t *v;
    size_t n, cap;
} idlist;

typedef struct strlist {
    const char **v;
    size_t n, cap;
} strlist;

static void out_of_memory(void)
{
    fprintf(stderr, "profconv: out of memory\n");
    exit(EXIT_IO);
}

static void push_str(strlist *l, const char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        const char **v = realloc(l->v, cap * sizeof *v);
        if (!v)
            out_of_memory();
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
}

/* Adds the comma-separated integers of s to l; -1 if one is malformed. */
static int push_ids(idlist *l, const char *s)
{
    while (*s) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || (*end && *end != ',') || v < 0)
            return -1;
        if (l->n == l->cap) {
            size_t cap = l->cap ? l->cap * 2 : 8;
            int64_t *nv = realloc(l->v, cap * sizeof *nv);
            if (!nv)
                out_of_memory();
            l->v = nv;
            l->cap = cap;
        }
        l->v[l->n++] = v;
        s = *end ? end + 1 : end;
    }
    return 0;
}

/* "12.5" (ms) -> 12500000 (ns); "" -> -1 (open end); -2 if malformed. */
static int64_t parse_ms(const char *s, size_t len)
{
    int64_t ns = 0;
    int frac = -1;
    if (len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '.' && frac < 0) {
            frac = 0;
        } else if (c >= '0' && c <= '9' && frac < 6) {
            if (ns > INT64_MAX / 10 - 10)
                return -2;
            ns = ns * 10 + (c - '0');
            if (frac >= 0)
                frac++;
        } else if (!(c >= '0' && c <= '9')) {
            return -2;
        }
    }
    for (int k = frac < 0 ? 0 : frac; k < 6; k++) {
        if (ns > INT64_MAX / 10)
            return -2;
        ns *= 10;
    }
    return ns;
}

static int parse_offcpu(const char *s)
{
    static const struct {
        const char *name;
        int mode;
    } modes[] = {{"on-cpu", PC_OFFCPU_ON}, {"off-cpu", PC_OFFCPU_OFF},
                 {"on-off-cpu", PC_OFFCPU_ON_OFF}, {"mixed-on-off-cpu", PC_OFFCPU_MIXED}};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
        if (strcmp(s, modes[i].name) == 0)
            return modes[i].mode;
    return -1;
}

enum {
    OPT_GZIP = 256, OPT_NO_GZIP, OPT_REMOVE_GAPS, OPT_EVENT, OPT_OFFCPU,
    OPT_PID, OPT_EXCLUDE_PID, OPT_TID, OPT_EXCLUDE_TID, OPT_PROCESS_NAME,
    OPT_EXCLUDE_PROCESS_NAME, OPT_THREAD_NAME, OPT_EXCLUDE_THREAD_NAME,
    OPT_TIME_RANGE, OPT_FILTER_FILE, OPT_AGGREGATE, OPT_PROGUARD, OPT_ART,
    OPT_REMOVE_METHOD, OPT_MANGLED, OPT_SYMFS, OPT_SYMBOLS, OPT_MARKERS, OPT_NO_MARKERS, OPT_PERCPU,
    OPT_HEAP, OPT_HEAP_DUMP, OPT_HEAP_GRAPH, OPT_FOLDED_PREFIX, OPT_FOLDED_VALUE, OPT_FOLDED_ANNOTATE,
    OPT_PPROF_SPLIT, OPT_PROGRESS, OPT_THREADS, OPT_MAX_MEMORY, OPT_MAX_DEPTH, OPT_KEEP_GOING,
    OPT_OPEN, OPT_NO_OPEN, OPT_PROFILER_URL, OPT_MERGE_RUNS, OPT_FAIL_ABOVE,
};

/* Edit distance of a and b (b at most 63 bytes: a longer a is too far
 * anyway); the one-row dynamic program. */
static size_t edit_distance(const char *a, size_t na, const char *b)
{
    size_t nb = strlen(b), row[64];
    if (nb >= 64 || na > nb + 2)
        return (size_t)-1;
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

/* The long option an unknown "--name[=value]" probably meant: the one
 * within 2 edits, when a single option is closest; else NULL.  (A unique
 * abbreviation needs no hint: getopt_long takes it.) */
static const char *closest_option(const char *arg, const struct option *opts)
{
    if (strncmp(arg, "--", 2) != 0 || !arg[2])
        return NULL;
    arg += 2;
    size_t n = strcspn(arg, "=");
    const char *best = NULL;
    size_t best_d = 3;
    int ties = 0;
    for (const struct option *o = opts; o->name; o++) {
        size_t d = edit_distance(arg, n, o->name);
        if (d < best_d) {
            best = o->name;
            best_d = d;
            ties = 0;
        } else if (d == best_d) {
            ties++;
        }
    }
    return best && !ties ? best : NULL;
}

/* "512M" -> bytes; 0 if malformed. */
static unsigned long long parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return 0;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    else if (*end)
        return 0;
    if (shift && end[1])
        return 0;
    if (v > (~0ULL >> shift))
        return 0;
    return v << shift;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"to", required_argument, NULL, 't'},
        {"gzip", no_argument, NULL, OPT_GZIP},
        {"no-gzip", no_argument, NULL, OPT_NO_GZIP},
        {"remove-gaps", required_argument, NULL, OPT_REMOVE_GAPS},
        {"event", required_argument, NULL, OPT_EVENT},
        {"trace-offcpu", required_argument, NULL, OPT_OFFCPU},
        {"pid", required_argument, NULL, OPT_PID},
        {"include-pid", required_argument, NULL, OPT_PID},
        {"exclude-pid", required_argument, NULL, OPT_EXCLUDE_PID},
        {"tid", required_argument, NULL, OPT_TID},
        {"include-tid", required_argument, NULL, OPT_TID},
        {"exclude-tid", required_argument, NULL, OPT_EXCLUDE_TID},
        {"process-name", required_argument, NULL, OPT_PROCESS_NAME},
        {"include-process-name", required_argument, NULL, OPT_PROCESS_NAME},
        {"exclude-process-name", required_argument, NULL, OPT_EXCLUDE_PROCESS_NAME},
        {"thread-name", required_argument, NULL, OPT_THREAD_NAME},
        {"include-thread-name", required_argument, NULL, OPT_THREAD_NAME},
        {"exclude-thread-name", required_argument, NULL, OPT_EXCLUDE_THREAD_NAME},
        {"time-range", required_argument, NULL, OPT_TIME_RANGE},
        {"filter-file", required_argument, NULL, OPT_FILTER_FILE},
        {"aggregate-threads", required_argument, NULL, OPT_AGGREGATE},
        {"proguard-mapping-file", required_argument, NULL, OPT_PROGUARD},
        {"show-art-frames", no_argument, NULL, OPT_ART},
        {"remove-method", required_argument, NULL, OPT_REMOVE_METHOD},
        {"mangled", no_argument, NULL, OPT_MANGLED},
        {"symfs", required_argument, NULL, OPT_SYMFS},
        {"symbols", required_argument, NULL, OPT_SYMBOLS},
        {"markers", no_argument, NULL, OPT_MARKERS},
        {"no-markers", no_argument, NULL, OPT_NO_MARKERS},
        {"percpu", no_argument, NULL, OPT_PERCPU},
        {"heap", required_argument, NULL, OPT_HEAP},
        {"heap-dump", required_argument, NULL, OPT_HEAP_DUMP},
        {"heap-graph", required_argument, NULL, OPT_HEAP_GRAPH},
        {"folded-prefix", required_argument, NULL, OPT_FOLDED_PREFIX},
        {"folded-value", required_argument, NULL, OPT_FOLDED_VALUE},
        {"folded-annotate", no_argument, NULL, OPT_FOLDED_ANNOTATE},
        {"pprof-split", required_argument, NULL, OPT_PPROF_SPLIT},
        {"progress", no_argument, NULL, OPT_PROGRESS},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
        {"max-depth", required_argument, NULL, OPT_MAX_DEPTH},
        {"keep-going", no_argument, NULL, OPT_KEEP_GOING},
        {"open", no_argument, NULL, OPT_OPEN},
        {"no-open", no_argument, NULL, OPT_NO_OPEN},
        {"profiler-url", required_argument, NULL, OPT_PROFILER_URL},
        {"merge-runs", no_argument, NULL, OPT_MERGE_RUNS},
        {"fail-above", required_argument, NULL, OPT_FAIL_ABOVE},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    pc_options opt;
    pc_write_options wopt;
    const char *output = NULL, *to = NULL;
    int gzip = -1, c, split = 0;
    unsigned long long max_memory = 0;
    /* view: serve the result to the profiler instead of writing a file
     * (view.c); --open: serve it after writing the file. */
    int view = 0, open_after = 0, no_open = 0;
    const char *profiler_url = NULL;
    /* diff: compare two inputs (gate.c checks --fail-above); several
     * inputs otherwise make one profile. */
    int diff = 0, merge_runs = 0;
    static cli_gate gate;
    /* Static: they stay reachable until exit, whatever path main takes. */
    static idlist pids, xpids, tids, xtids;
    static strlist pnames, xpnames, tnames, xtnames;
    static strlist aggregate, proguard, remove_methods, symbols;

#ifdef __GLIBC__
    /* glibc raises the size from which a block gets its own mapping to
     * that of the largest block freed so far, up to 32 MiB.  The tables a
     * big input grows by doubling then sit in the heap, where each old
     * block is left as a hole that is never given back: 60 MB of 272 at
     * the peak for 5M traced_perf samples.  A fixed 1 MiB keeps every
     * large block in a mapping of its own, returned when freed (224 MB
     * there; no slower). */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
    pc_options_init(&opt);
    pc_write_options_init(&wopt);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    opterr = 0;
    /* "view" as the first word is the command: a file of that name is
     * ./view. */
    if (argc > 1 && strcmp(argv[1], "view") == 0) {
        view = 1;
        argv[1] = argv[0];
        argv++;
        argc--;
    } else if (argc > 1 && strcmp(argv[1], "diff") == 0) {
        diff = 1;
        argv[1] = argv[0];
        argv++;
        argc--;
    }
    while ((c = getopt_long(argc, argv, ":o:t:qvhV", longopts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'o': output = optarg; break;
        case 't': to = optarg; break;
        case OPT_GZIP: gzip = 1; break;
        case OPT_NO_GZIP: gzip = 0; break;
        case OPT_REMOVE_GAPS: {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || *end || end == optarg || v < 0 || v > INT_MAX)
                return usage_error("--remove-gaps needs a number >= 0, not '%s'", optarg);
            opt.remove_gaps = (int)v;
            break;
        }
        case OPT_EVENT: opt.event = optarg; break;
        case OPT_OFFCPU:
            if ((opt.offcpu = parse_offcpu(optarg)) < 0)
                return usage_error("--trace-offcpu needs on-cpu, off-cpu, on-off-cpu "
                                   "or mixed-on-off-cpu, not '%s'", optarg);
            break;
        case OPT_PID: bad = push_ids(&pids, optarg); break;
        case OPT_EXCLUDE_PID: bad = push_ids(&xpids, optarg); break;
        case OPT_TID: bad = push_ids(&tids, optarg); break;
        case OPT_EXCLUDE_TID: bad = push_ids(&xtids, optarg); break;
        case OPT_PROCESS_NAME: push_str(&pnames, optarg); break;
        case OPT_EXCLUDE_PROCESS_NAME: push_str(&xpnames, optarg); break;
        case OPT_THREAD_NAME: push_str(&tnames, optarg); break;
        case OPT_EXCLUDE_THREAD_NAME: push_str(&xtnames, optarg); break;
        case OPT_TIME_RANGE: {
            const char *comma = strchr(optarg, ',');
            if (!comma)
                return usage_error("--time-range needs START,END in ms, not '%s'", optarg);
            opt.time_start = parse_ms(optarg, (size_t)(comma - optarg));
            opt.time_end = parse_ms(comma + 1, strlen(comma + 1));
            if (opt.time_start < -1 || opt.time_end < -1)
                return usage_error("--time-range needs START,END in ms, not '%s'", optarg);
            break;
        }
        case OPT_FILTER_FILE: opt.filter_file = optarg; break;
        case OPT_AGGREGATE: push_str(&aggregate, optarg); break;
        case OPT_PROGUARD: push_str(&proguard, optarg); break;
        case OPT_ART: opt.show_art_frames = 1; break;
        case OPT_REMOVE_METHOD: push_str(&remove_methods, optarg); break;
        case OPT_MANGLED: opt.mangled = 1; break;
        case OPT_SYMFS: opt.symfs = optarg; break;
        case OPT_SYMBOLS: push_str(&symbols, optarg); break;
        case OPT_MARKERS: opt.switch_markers = 1; break;
        case OPT_NO_MARKERS: opt.switch_markers = 0; break;
        case OPT_PERCPU: opt.percpu = 1; break;
        case OPT_HEAP:
            if (strcmp(optarg, "unreleased") == 0)
                opt.heap_measure = PC_HEAP_UNRELEASED;
            else if (strcmp(optarg, "allocated") == 0)
                opt.heap_measure = PC_HEAP_ALLOCATED;
            else if (strcmp(optarg, "freed") == 0)
                opt.heap_measure = PC_HEAP_FREED;
            else
                return usage_error("--heap needs unreleased, allocated or freed, not '%s'",
                                   optarg);
            break;
        case OPT_HEAP_GRAPH:
            if (strcmp(optarg, "shallow") == 0)
                opt.heap_graph = 0;
            else if (strcmp(optarg, "retained") == 0)
                opt.heap_graph = 1;
            else
                return usage_error("--heap-graph needs shallow or retained, not '%s'", optarg);
            break;
        case OPT_HEAP_DUMP: {
            /* N, or A..B: what B added since A (B empty: the last). */
            char *end;
            errno = 0;
            long a = 0, v = strtol(optarg, &end, 10);
            if (!errno && end != optarg && end[0] == '.' && end[1] == '.') {
                a = v < 1 ? -1 : v;
                const char *b = end + 2;
                v = *b ? strtol(b, &end, 10) : 0;
                if (*b && (end == b || v <= a))
                    v = -1;
                if (!*b)
                    end = (char *)b;
            }
            if (errno || *end || end == optarg || v < 0 || (v == 0 && !a) || a < 0 ||
                v > INT_MAX || a > INT_MAX)
                return usage_error("--heap-dump needs a number >= 1, or A..B (B later than "
                                   "A, or left out for the last), not '%s'", optarg);
            opt.heap_dump = (int)v;
            opt.heap_dump_base = (int)a;
            break;
        }
        case OPT_FOLDED_PREFIX: {
            int bits = parse_prefix(optarg);
            if (bits < 0)
                return usage_error("--folded-prefix takes none, process, thread or "
                                   "process,thread, not '%s'", optarg);
            wopt.folded_prefix = bits;
            break;
        }
        case OPT_FOLDED_VALUE:
            if (strcmp(optarg, "weight") == 0)
                wopt.folded_counts = 0;
            else if (strcmp(optarg, "count") == 0)
                wopt.folded_counts = 1;
            else
                return usage_error("--folded-value takes weight or count, not '%s'", optarg);
            break;
        case OPT_FOLDED_ANNOTATE: wopt.folded_annotate = 1; break;
        case OPT_PPROF_SPLIT:
            if (strcmp(optarg, "none") == 0)
                split = 0;
            else if (strcmp(optarg, "process") == 0)
                split = 1;
            else
                return usage_error("--pprof-split takes none or process, not '%s'", optarg);
            break;
        case 'q': quiet = 1; break;
        case 'v': verbose = 1; break;
        case OPT_PROGRESS: prog.on = 1; break;
        case OPT_KEEP_GOING: opt.keep_going = 1; break;
        case OPT_OPEN: open_after = 1; break;
        case OPT_NO_OPEN: no_open = 1; break;
        case OPT_MERGE_RUNS: merge_runs = 1; break;
        case OPT_FAIL_ABOVE:
            if (cli_gate_add(&gate, optarg) != 0)
                return usage_error("--fail-above needs a number of percentage points, or "
                                   "NAME:POINTS, not '%s'", optarg);
            break;
        case OPT_PROFILER_URL:
            if (!cli_view_url_ok(optarg))
                return usage_error("--profiler-url needs an http:// or https:// address, "
                                   "not '%s'", optarg);
            profiler_url = optarg;
            break;
        case OPT_MAX_MEMORY:
            if ((max_memory = parse_size(optarg)) < (1ULL << 20))
                return usage_error("--max-memory needs a size of at least 1M (bytes, or "
                                   "with K, M or G), not '%s'", optarg);
            break;
        case OPT_MAX_DEPTH: {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || *end || end == optarg || *optarg == '-' || v > SIZE_MAX)
                return usage_error("--max-depth needs a number of frames (0: no limit), "
                                   "not '%s'", optarg);
            opt.max_depth = (size_t)v;
            break;
        }
        case OPT_THREADS: {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || *end || end == optarg || v < 1 || v > 1024)
                return usage_error("--threads needs a number from 1 to 1024, not '%s'", optarg);
            opt.threads = wopt.threads = (int)v;
            break;
        }
        case 'h': fputs(cli_usage_text, stdout); return 0;
        case 'V': printf("profconv %s\n", PROFCONV_VERSION); return 0;
        case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
        default: {
            char hint[96] = "";
            const char *near = closest_option(argv[optind - 1], longopts);
            if (near)
                snprintf(hint, sizeof hint, " (did you mean --%s?)", near);
            return usage_error("unknown option '%s'%s", argv[optind - 1], hint);
        }
        }
        if (bad)
            return usage_error("'%s' is not a comma-separated list of ids", optarg);
    }
    if (optind >= argc)
        return usage_error("%s", diff ? "diff needs two inputs: BASE NEW"
                                      : "no input file given");
    size_t n_inputs = (size_t)(argc - optind);
    char *const *inputs = argv + optind;
    if (diff && n_inputs != 2)
        return usage_error("diff compares two inputs, BASE and NEW, not %zu", n_inputs);
    if (!diff && gate.n)
        return usage_error("%s", "--fail-above goes with diff");
    if (merge_runs && (diff || n_inputs < 2))
        return usage_error("%s", "--merge-runs goes with several inputs");
    for (size_t i = 0; i + 1 < n_inputs; i++)
        for (size_t j = i + 1; j < n_inputs; j++)
            if (strcmp(inputs[i], "-") == 0 && strcmp(inputs[j], "-") == 0)
                return usage_error("%s", "standard input (-) can be read once only");
    /* The input that names the output, when -o does not. */
    const char *input = inputs[n_inputs - 1];

    opt.pids = (pc_ids){pids.v, pids.n};
    opt.exclude_pids = (pc_ids){xpids.v, xpids.n};
    opt.tids = (pc_ids){tids.v, tids.n};
    opt.exclude_tids = (pc_ids){xtids.v, xtids.n};
    opt.process_names = (pc_strings){pnames.v, pnames.n};
    opt.exclude_process_names = (pc_strings){xpnames.v, xpnames.n};
    opt.thread_names = (pc_strings){tnames.v, tnames.n};
    opt.exclude_thread_names = (pc_strings){xtnames.v, xtnames.n};
    opt.aggregate_threads = (pc_strings){aggregate.v, aggregate.n};
    opt.proguard_mapping_files = (pc_strings){proguard.v, proguard.n};
    opt.symbol_dirs = (pc_strings){symbols.v, symbols.n};
    opt.remove_methods = (pc_strings){remove_methods.v, remove_methods.n};

    char *owned = NULL;
    if (to && (wopt.format = pc_format_by_name(to)) == PC_FORMAT_NONE) {
        char known[128] = "";
        size_t used = 0;
        for (size_t i = 0; pc_format_nth(i) != PC_FORMAT_NONE && used < sizeof known; i++)
            used += (size_t)snprintf(known + used, sizeof known - used, "%s%s",
                                     used ? ", " : "", pc_format_name(pc_format_nth(i)));
        return usage_error("unknown output format '%s' (known: %s)", to, known);
    }
    int serve = view || open_after;
    if (!serve && (no_open || profiler_url))
        return usage_error("%s", "--no-open and --profiler-url go with view or --open");
    if (serve && to && wopt.format != PC_FORMAT_FIREFOX && wopt.format != PC_FORMAT_GECKO)
        return usage_error("%s", "the profiler is shown the firefox or gecko format only: "
                                 "leave out --to");
    if (!output && view) {
        /* Nothing written: the profile goes to the profiler only. */
    } else if (!output && wopt.format == PC_FORMAT_TEXT) {
        output = "-";  /* a summary is read, not kept */
    } else if (!output && n_inputs > 1 && !diff) {
        return usage_error("%s", "several inputs make one profile: give -o FILE");
    } else if (!output) {
        output = strcmp(input, "-") == 0
                     ? "-"
                     : (owned = default_output(input, pc_format_extension(wopt.format)));
        if (!output)
            out_of_memory();
        if (diff && owned && !(output = owned = diff_name(owned, pc_format_extension(wopt.format))))
            out_of_memory();
    }
    if (serve && output && strcmp(output, "-") == 0)
        return usage_error("%s", "view and --open print the profiler's address on standard "
                                 "output: give -o FILE for the output");
    /* Without --to, the name says the format (when it says one). */
    int name_format = output ? pc_format_from_path(output, NULL) : PC_FORMAT_NONE;
    if (!to && name_format != PC_FORMAT_NONE)
        wopt.format = name_format;
    if (serve && wopt.format != PC_FORMAT_FIREFOX && wopt.format != PC_FORMAT_GECKO) {
        free(owned);
        return usage_error("%s", "the profiler is shown the firefox or gecko format only: "
                                 "-o needs a .json or .json.gz name");
    }
    /* Served alone, gzipped as the default file is: a fifth of the bytes
     * to send and to hold. */
    wopt.gzip = gzip >= 0 ? gzip : output ? pc_output_gzip(wopt.format, output) : 1;
    if (output && wopt.format == PC_FORMAT_FIREFOX)
        wopt.container = pc_output_container(output);
    if (split && wopt.format != PC_FORMAT_PPROF) {
        free(owned);
        return usage_error("%s", "--pprof-split needs pprof output (--to pprof or a .pb.gz name)");
    }
    if (split && strcmp(output, "-") == 0) {
        free(owned);
        return usage_error("%s", "--pprof-split writes one file per process: it needs an "
                                 "output name, not standard output");
    }
    /* Compressed or protobuf bytes would garble the terminal, as gzip
     * refuses to do. */
    if (output && strcmp(output, "-") == 0 && isatty(STDOUT_FILENO) &&
        (wopt.gzip || wopt.format == PC_FORMAT_PPROF)) {
        free(owned);
        return usage_error("%s", "the output is binary and standard output is a terminal: "
                                 "give -o FILE or pipe it");
    }
    for (size_t i = 0; i < n_inputs; i++)
        if (output && same_file(inputs[i], output)) {
            say("%s: the output would overwrite the input", output);
            free(owned);
            return EXIT_USAGE;
        }

    if (max_memory) {
        /* The address space, which bounds what malloc can hand out: past
         * it allocations fail and the conversion stops with "out of
         * memory" instead of the system killing the process. */
        struct rlimit rl = {(rlim_t)max_memory, (rlim_t)max_memory};
        if (setrlimit(RLIMIT_AS, &rl) != 0) {
            say("cannot limit memory to %llu bytes: %s", max_memory, strerror(errno));
            free(owned);
            return EXIT_IO;
        }
    }

    pc_error err;
    pc_input *in = NULL;
    pc_profile *prof = NULL;
    opt.log = log_line;
    prog.tty = isatty(STDERR_FILENO);
    prog.width = terminal_width();
    if ((prog.on || prog.tty) && !quiet) {
        prog.on = 1;
        prog.start = prog.last = now();
        opt.progress = show_progress;
    }
    int st = PC_OK;
    pc_profile **profs = calloc(n_inputs, sizeof *profs);
    if (!profs)
        out_of_memory();
    for (size_t i = 0; i < n_inputs && st == PC_OK; i++) {
        pc_escape(input_name, sizeof input_name,
                  strcmp(inputs[i], "-") == 0 ? "<stdin>" : inputs[i]);
        prog.start = prog.last = now();  /* each input's own rate */
        st = pc_input_open(&in, inputs[i], &err);
        if (st == PC_OK)
            st = pc_convert(in, &opt, &profs[i], &err);
        pc_input_close(in);
        in = NULL;
        clear_progress();
    }
    if (n_inputs > 1)
        input_name[0] = 0;  /* what follows is of all of them */
    if (st != PC_OK) {
        for (size_t i = 0; i < n_inputs; i++)
            pc_profile_free(profs[i]);
    } else if (diff) {
        st = pc_profiles_diff(profs[0], profs[1], &opt, &prof, &err);
    } else if (n_inputs > 1) {
        const char **labels = calloc(n_inputs, sizeof *labels);
        if (!labels)
            out_of_memory();
        for (size_t i = 0; i < n_inputs; i++) {
            const char *b = strrchr(inputs[i], '/');
            labels[i] = strcmp(inputs[i], "-") == 0 ? "stdin" : b ? b + 1 : inputs[i];
        }
        st = pc_profiles_combine(profs, labels, n_inputs, merge_runs, &opt, &prof, &err);
        free(labels);
    } else {
        prof = profs[0];
    }
    free(profs);
    char **split_names = NULL;
    size_t n_split = 0;
    wopt.log = log_line;
    if (st == PC_OK && split)
        st = cli_write_split(prof, output, &wopt, &split_names, &n_split, &err);
    else if (st == PC_OK && output)
        st = pc_write(prof, output, &wopt, &err);
    unsigned char *served = NULL;
    size_t served_size = 0;
    /* The served bytes are the file's: the same profile and options
     * always give the same bytes. */
    if (st == PC_OK && serve)
        st = pc_write_memory(prof, &wopt, &served, &served_size, &err);
    if (st != PC_OK) {
        char line[2048];
        cli_flag_words(err.message, line, sizeof line);
        if (st == PC_ENOMEM && max_memory)
            say("%s (the limit set by --max-memory is %llu MiB)", line, max_memory >> 20);
        else
            say("%s", line);
    } else if (!quiet) {
        pc_summary sum;
        pc_profile_summary(prof, &sum);
        char heap[96] = "";
        int n = 0;
        if (sum.heap_rows)
            n = snprintf(heap, sizeof heap, ", %zu heap callsites", sum.heap_rows);
        if (sum.counter_values && n >= 0 && (size_t)n < sizeof heap)
            snprintf(heap + n, sizeof heap - (size_t)n, ", %zu counter values",
                     sum.counter_values);
        for (size_t i = 0; i < n_split; i++)
            say("wrote %s", split_names[i]);
        if (!output && n_inputs > 1)
            say("converted %zu inputs: %zu threads, %zu of %zu samples%s", n_inputs,
                sum.threads, sum.samples, sum.samples_read, heap);
        else if (!output)
            say("converted %s: %zu threads, %zu of %zu samples%s", input_name, sum.threads,
                sum.samples, sum.samples_read, heap);
        else if (split)
            say("wrote %zu profiles, one per process: %zu threads, %zu of %zu samples%s",
                n_split, sum.threads, sum.samples, sum.samples_read, heap);
        else
            say("wrote %s: %zu threads, %zu of %zu samples%s",
                strcmp(output, "-") == 0 ? "<stdout>" : output, sum.threads, sum.samples,
                sum.samples_read, heap);
    }
    cli_split_free(split_names, n_split);
    /* The gate speaks after the output is written: the report is there
     * to look at when the build fails. */
    int gate_failed = 0;
    if (st == PC_OK && gate.n) {
        static char report[4096];
        int g = cli_gate_check(&gate, prof, report, sizeof report);
        if (g < 0) {
            say("%s", "out of memory");
            st = PC_ENOMEM;
        }
        gate_failed = g > 0;
        /* Each line its own message, as every other. */
        for (char *l = report, *nl; g >= 0 && *l; l = nl ? nl + 1 : l + strlen(l)) {
            nl = strchr(l, '\n');
            if (nl)
                *nl = 0;
            if (gate_failed || !quiet)
                say("%s", l);
        }
    }
    pc_profile_free(prof);
    if (st == PC_OK && serve) {
        /* The name the address ends with, for the profiler to show. */
        char *serve_name = output ? NULL
                                  : default_output(strcmp(input, "-") == 0 ? "profile" : input,
                                                   pc_format_extension(wopt.format));
        if (!output && !serve_name)
            out_of_memory();
        cli_view_options vo = {
            .profiler_url = profiler_url ? profiler_url : "https://profiler.firefox.com",
            .name = output ? output : serve_name,
            .gzip = wopt.gzip,
            .open_browser = !no_open,
            .quiet = quiet,
        };
        const char *slash = strrchr(vo.name, '/');
        if (slash)
            vo.name = slash + 1;
        if (cli_view_serve(served, served_size, &vo) != 0)
            st = PC_EIO;
        free(serve_name);
    }
    free(served);
    free(owned);
    if (st == PC_OK && gate_failed)
        return EXIT_GATE;
    return exit_code(st);
}
