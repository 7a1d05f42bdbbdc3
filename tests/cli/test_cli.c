/* The command line, run as a separate process: exit codes, messages,
 * output files (created, replaced whole or left alone), standard input and
 * output, gzip framing. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "fixtures.h"
#include "t.h"
#include "test_util.h"

typedef struct run_result {
    int status;             /* exit code, or -1 if it did not exit */
    char err[4096];         /* standard error */
    unsigned char *out;     /* standard output (malloc'd) */
    size_t out_len;
} run_result;

/* Callers keep up to 8 of these at once. */
static char *tmp_path(const char *name)
{
    static char bufs[8][512];
    static int next;
    next = (next + 1) % 8;
    snprintf(bufs[next], sizeof bufs[next], "%s/%s", t_tmpdir(), name);
    return bufs[next];
}

static int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(data, 1, len, f);
    return fclose(f) == 0 && n == len ? 0 : -1;
}

/* Runs profconv with args (NULL-terminated) in dir (NULL: here), feeding
 * stdin_file (NULL: /dev/null). */
static void run(run_result *r, const char *dir, const char *stdin_file,
                const char *const *args)
{
    const char *argv[32];
    char exe[1024];
    int n = 0;
    snprintf(exe, sizeof exe, "%s", t_profconv_abs());
    argv[n++] = exe;
    while (args[n - 1] && n < 31) {
        argv[n] = args[n - 1];
        n++;
    }
    argv[n] = NULL;

    char out_path[600], err_path[600];
    snprintf(out_path, sizeof out_path, "%s/run.stdout", t_tmpdir());
    snprintf(err_path, sizeof err_path, "%s/run.stderr", t_tmpdir());
    pid_t pid = fork();
    if (pid == 0) {
        int in = open(stdin_file ? stdin_file : "/dev/null", O_RDONLY);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || err < 0 || (dir && chdir(dir) < 0))
            _exit(127);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    size_t len = 0;
    unsigned char *e = t_read_file(err_path, &len);
    snprintf(r->err, sizeof r->err, "%s", e ? (char *)e : "");
    free(e);
    r->out = t_read_file(out_path, &r->out_len);
}

/* Reads a file without gunzipping it. */
static unsigned char *raw_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *d = malloc((size_t)n + 1);
    *len = fread(d, 1, (size_t)n, f);
    fclose(f);
    d[*len] = 0;
    return d;
}

/* 1 when data is exactly one gzip member whose content equals want. */
static int one_gzip_member(const unsigned char *data, size_t len,
                           const unsigned char *want, size_t want_len)
{
    unsigned char *back = malloc(want_len + 16);
    z_stream z;
    memset(&z, 0, sizeof z);
    inflateInit2(&z, 16 + 15);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    z.next_out = back;
    z.avail_out = (uInt)want_len + 16;
    int r = inflate(&z, Z_FINISH);
    int ok = r == Z_STREAM_END && z.avail_in == 0 && z.total_out == want_len &&
             memcmp(back, want, want_len) == 0;
    inflateEnd(&z);
    free(back);
    return ok;
}

static const char *fixture_file(void)
{
    static char *path;
    if (!path) {
        spe e;
        fx_android(&e);
        path = strdup(tmp_path("fx.trace"));
        write_file(path, e.out.data, e.out.len);
        spe_free(&e);
    }
    return path;
}

static size_t leftover_temp_files(void)
{
    size_t n = 0;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c '\\.tmp-'", t_tmpdir());
    FILE *p = popen(cmd, "r");
    if (p) {
        if (fscanf(p, "%zu", &n) != 1)
            n = 0;
        pclose(p);
    }
    return n;
}

TEST(cli_help_and_version)
{
    run_result r;
    run(&r, NULL, NULL, (const char *[]){"--version", NULL});
    T_EQ_INT(r.status, 0);
    T_CHECK(r.out && strncmp((char *)r.out, "profconv " PROFCONV_VERSION "\n",
                             strlen(PROFCONV_VERSION) + 10) == 0);
    free(r.out);

    run(&r, NULL, NULL, (const char *[]){"--help", NULL});
    T_EQ_INT(r.status, 0);
    static const char *const documented[] = {
        "usage: profconv", "--output", "--to", "--gzip", "--no-gzip",
        "--remove-gaps", "--event", "--quiet", "--help", "--version",
        "Examples:", "profiler.firefox.com", "Exit status: 0 success, 1 invalid "
        "usage, 2 malformed or unsupported input\n(or one that holds nothing to show",
        "3 input/output error"};
    for (size_t i = 0; i < sizeof documented / sizeof *documented; i++)
        T_CONTAINS((char *)r.out, documented[i]);
    free(r.out);
}

TEST(cli_usage_errors)
{
    static const struct {
        const char *args[6];
        const char *message;
    } cases[] = {
        {{NULL}, "profconv: no input file given\n"},
        {{"--bogus", "x", NULL}, "profconv: unknown option '--bogus'\n"},
        {{"-o", NULL}, "profconv: option '-o' needs a value\n"},
        {{"--remove-gaps", "-1", "x", NULL}, "--remove-gaps needs a number >= 0, not '-1'"},
        {{"--remove-gaps", "3x", "x", NULL}, "not '3x'"},
        {{"--to", "png", "x", NULL}, "unknown output format 'png' (known: firefox, gecko, folded, pprof, speedscope, svg, text)"},
        {{"--folded-prefix", "pid", "x", NULL},
         "--folded-prefix takes none, process, thread or process,thread, not 'pid'"},
        {{"--folded-prefix", "process,", "x", NULL}, "not 'process,'"},
        {{"--folded-value", "bytes", "x", NULL}, "--folded-value takes weight or count, not 'bytes'"},
        {{"a", "b", NULL}, "several inputs make one profile: give -o FILE"},
        {{"diff", "a", NULL}, "diff compares two inputs, BASE and NEW, not 1"},
        {{"a", "--fail-above", "5", NULL}, "--fail-above goes with diff"},
        {{"diff", "a", "b", "--fail-above", "x", NULL}, "--fail-above needs a number of percentage points"},
        {{"--heap-dump", "3..2", "x", NULL}, "--heap-dump needs a number >= 1, or A..B"},
        {{"a", "--merge-runs", NULL}, "--merge-runs goes with several inputs"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        run_result r;
        t_case("cli_usage_errors: %s", cases[i].message);
        run(&r, NULL, NULL, cases[i].args);
        T_EQ_INT(r.status, 1);
        T_CONTAINS(r.err, cases[i].message);
        T_CONTAINS(r.err, "Try 'profconv --help'");
        free(r.out);
    }
}

TEST(cli_converts_file)
{
    run_result r;
    const char *out = tmp_path("conv.json");
    run(&r, NULL, NULL, (const char *[]){fixture_file(), "-o", out, NULL});
    T_EQ_INT(r.status, 0);
    T_CONTAINS(r.err, "using event: cpu-cycles (11 samples); left out: cpu-clock (1 samples)");
    T_CONTAINS(r.err, ": 5 threads, 8 of 12 samples\n");
    free(r.out);
    size_t len;
    unsigned char *json = raw_file(out, &len);
    /* .json means the processed format. */
    static const char head[] = "{\"meta\":{\"version\":24,\"preprocessedProfileVersion\":70,";
    T_CHECK(json && len > 100 && memcmp(json, head, sizeof head - 1) == 0);
    T_CHECK(json && json[len - 1] == '\n');

    /* -q: silent on success; same bytes again (deterministic). */
    const char *again = tmp_path("conv2.json");
    run(&r, NULL, NULL, (const char *[]){"-q", fixture_file(), "-o", again, NULL});
    T_EQ_INT(r.status, 0);
    T_EQ_STR(r.err, "");
    free(r.out);
    size_t len2;
    unsigned char *json2 = raw_file(again, &len2);
    T_CHECK(json2 && len2 == len && memcmp(json, json2, len) == 0);

    /* .gz: one gzip member holding the same JSON. */
    const char *gz = tmp_path("conv.json.gz");
    run(&r, NULL, NULL, (const char *[]){"-q", fixture_file(), "-o", gz, NULL});
    T_EQ_INT(r.status, 0);
    free(r.out);
    size_t gz_len;
    unsigned char *gzd = raw_file(gz, &gz_len);
    T_CHECK(gzd && gz_len > 18 && gzd[0] == 0x1f && gzd[1] == 0x8b);
    T_CHECK(gzd && one_gzip_member(gzd, gz_len, json, len));

    /* --no-gzip wins over the name; --gzip compresses standard output. */
    const char *plain = tmp_path("plain.json.gz");
    run(&r, NULL, NULL, (const char *[]){"-q", "--no-gzip", fixture_file(), "-o", plain, NULL});
    free(r.out);
    size_t plain_len;
    unsigned char *pd = raw_file(plain, &plain_len);
    T_CHECK(pd && plain_len == len && memcmp(pd, json, len) == 0);
    run(&r, NULL, NULL, (const char *[]){"-q", "--gzip", fixture_file(), "-o", "-", NULL});
    T_EQ_INT(r.status, 0);
    /* t_read_file gunzips what it reads, so stdout compares equal. */
    T_CHECK(r.out && r.out_len == len && memcmp(r.out, json, len) == 0);
    free(r.out);

    T_EQ_INT(leftover_temp_files(), 0);
    free(json);
    free(json2);
    free(gzd);
    free(pd);
}

TEST(cli_stdin_and_default_name)
{
    run_result r;
    run(&r, NULL, fixture_file(), (const char *[]){"-q", "-", NULL});
    T_EQ_INT(r.status, 0);
    T_CHECK(r.out && memcmp(r.out, "{\"meta\":", 8) == 0);
    free(r.out);

    /* Compressed standard input. */
    spe e;
    unsigned char *gz;
    fx_android(&e);
    size_t n = gzip_bytes(e.out.data, e.out.len, &gz);
    const char *gz_in = tmp_path("fx-in.trace.gz");
    write_file(gz_in, gz, n);
    run(&r, NULL, gz_in, (const char *[]){"-", "-o", "-", NULL});
    T_EQ_INT(r.status, 0);
    T_CONTAINS(r.err, "profconv: wrote <stdout>: 5 threads, 8 of 12 samples");
    free(r.out);

    /* Without -o: the input's base name with .json.gz, here. */
    run(&r, t_tmpdir(), NULL, (const char *[]){"-q", gz_in, NULL});
    T_EQ_INT(r.status, 0);
    free(r.out);
    size_t len;
    unsigned char *d = raw_file(tmp_path("fx-in.json.gz"), &len);
    T_CHECK(d && len > 2 && d[0] == 0x1f && d[1] == 0x8b);
    free(d);
    free(gz);
    spe_free(&e);
}

TEST(cli_bad_input_leaves_no_output)
{
    run_result r;
    spe e;
    fx_android(&e);
    const char *bad = tmp_path("bad.trace");
    write_file(bad, e.out.data, e.out.len - 7);
    spe_free(&e);

    /* No output file appears... */
    const char *out = tmp_path("never.json");
    run(&r, NULL, NULL, (const char *[]){bad, "-o", out, NULL});
    T_EQ_INT(r.status, 2);
    T_CONTAINS(r.err, "profconv: ");
    T_CONTAINS(r.err, "bad.trace: offset ");
    T_CHECK(strchr(r.err, '\n') == r.err + strlen(r.err) - 1);  /* one line */
    T_CHECK(access(out, F_OK) != 0);
    free(r.out);

    /* ...and an existing one is left as it was. */
    const char *keep = tmp_path("keep.json");
    write_file(keep, "old content", 11);
    run(&r, NULL, NULL, (const char *[]){bad, "-o", keep, NULL});
    T_EQ_INT(r.status, 2);
    free(r.out);
    size_t len;
    unsigned char *d = raw_file(keep, &len);
    T_CHECK(d && len == 11 && memcmp(d, "old content", 11) == 0);
    free(d);

    /* A good conversion replaces it whole and keeps its permissions. */
    chmod(keep, 0640);
    run(&r, NULL, NULL, (const char *[]){"-q", fixture_file(), "-o", keep, NULL});
    T_EQ_INT(r.status, 0);
    free(r.out);
    struct stat st;
    T_CHECK(stat(keep, &st) == 0 && (st.st_mode & 0777) == 0640 && st.st_size > 1000);
    T_EQ_INT(leftover_temp_files(), 0);
}

/* Filters that keep nothing: exit 2, one line saying what there is, no
 * output file, an existing one untouched. */
TEST(cli_nothing_to_show)
{
    run_result r;
    const char *out = tmp_path("empty.json");
    run(&r, NULL, NULL, (const char *[]){fixture_file(), "--tid", "4242", "-o", out, NULL});
    T_EQ_INT(r.status, 2);
    T_CONTAINS(r.err, ": nothing to show: the options kept none of the 12 samples of a "
                      "recording of 5.0 ms; threads with samples (tid, name, pid, samples): "
                      "1000 com.example (pid 1000, 7), 1001 RenderThread (pid 1000, 2), "
                      "2000 glibc_prog (pid 2000, 2), 1002 thread 1002 (pid 1002, 1)\n");
    T_CHECK(access(out, F_OK) != 0);
    free(r.out);
    const char *keep = tmp_path("keep-empty.json");
    write_file(keep, "old content", 11);
    run(&r, NULL, NULL, (const char *[]){"-q", fixture_file(), "--tid", "4242", "-o", keep, NULL});
    T_EQ_INT(r.status, 2);
    T_CONTAINS(r.err, "nothing to show");
    T_CHECK(strchr(r.err, '\n') == r.err + strlen(r.err) - 1);  /* one line */
    free(r.out);
    size_t len;
    unsigned char *d = raw_file(keep, &len);
    T_CHECK(d && len == 11 && memcmp(d, "old content", 11) == 0);
    free(d);
}

TEST(cli_gecko_format)
{
    run_result r;
    run(&r, NULL, NULL, (const char *[]){"-q", "--to", "gecko", fixture_file(), "-o", "-", NULL});
    T_EQ_INT(r.status, 0);
    T_CHECK(r.out && strstr((char *)r.out, "\"stringTable\":[") &&
            !strstr((char *)r.out, "preprocessedProfileVersion"));
    free(r.out);
}

/* Folded stacks: --to folded names its default output .folded; a
 * .folded name asks for them; the options reach the writer. */
TEST(cli_folded_format)
{
    run_result r;
    run(&r, t_tmpdir(), NULL, (const char *[]){"-q", "--to", "folded", fixture_file(), NULL});
    T_EQ_INT(r.status, 0);
    free(r.out);
    size_t len;
    /* fx.trace gives fx.folded. */
    char *text = (char *)t_read_file(tmp_path("fx.folded"), &len);
    text = text ? realloc(text, len + 1) : NULL;
    if (text)
        text[len] = 0;
    T_CONTAINS(text, "\nglibc_prog;java.lang.Thread.run;libc.so.6+0x99 1998\n");
    free(text);
    unsigned char *d;
    run(&r, NULL, NULL, (const char *[]){"-q", fixture_file(), "-o", tmp_path("x.folded.gz"),
                                         "--folded-prefix", "none", "--folded-value", "count",
                                         "--folded-annotate", NULL});
    T_EQ_INT(r.status, 0);
    free(r.out);
    d = raw_file(tmp_path("x.folded.gz"), &len);
    T_CHECK(d && len > 2 && d[0] == 0x1f && d[1] == 0x8b);
    free(d);
    run(&r, NULL, NULL, (const char *[]){"-q", fixture_file(), "-o", "-", "--to", "folded",
                                         "--folded-prefix", "none", "--folded-value", "count",
                                         "--folded-annotate", NULL});
    T_EQ_INT(r.status, 0);
    T_CHECK(r.out && strstr((char *)r.out, "\njava.lang.String.equals_[j];libc.so.6+0x1a2b 1\n"));
    free(r.out);
}

/* pprof: --to pprof names its output .pb.gz and gzips it; a .pb name
 * gets the raw proto. */
TEST(cli_pprof_format)
{
    run_result r;
    run(&r, t_tmpdir(), NULL, (const char *[]){"-q", "--to", "pprof", fixture_file(), NULL});
    T_EQ_INT(r.status, 0);
    free(r.out);
    size_t len;
    unsigned char *d = raw_file(tmp_path("fx.pb.gz"), &len);
    T_CHECK(d && len > 2 && d[0] == 0x1f && d[1] == 0x8b);
    free(d);
    run(&r, NULL, NULL, (const char *[]){"-q", fixture_file(), "--to", "pprof", "-o",
                                         tmp_path("fx.pb"), NULL});
    T_EQ_INT(r.status, 0);
    free(r.out);
    d = raw_file(tmp_path("fx.pb"), &len);
    /* Field 1 (sample_type), length-delimited. */
    T_CHECK(d && len > 2 && d[0] == 0x0a);
    free(d);
}

TEST(cli_io_errors)
{
    run_result r;
    run(&r, NULL, NULL, (const char *[]){"/nonexistent/in.trace", NULL});
    T_EQ_INT(r.status, 3);
    T_CONTAINS(r.err, "profconv: /nonexistent/in.trace: cannot open: No such file or directory");
    free(r.out);

    run(&r, NULL, NULL, (const char *[]){fixture_file(), "-o", "/nonexistent/dir/out.json", NULL});
    T_EQ_INT(r.status, 3);
    T_CONTAINS(r.err, "profconv: /nonexistent/dir/out.json: cannot create: No such file or directory");
    free(r.out);

    run(&r, NULL, NULL, (const char *[]){fixture_file(), "-o", t_tmpdir(), NULL});
    T_EQ_INT(r.status, 3);
    T_CONTAINS(r.err, "is a directory");
    free(r.out);

    run(&r, NULL, NULL, (const char *[]){fixture_file(), "-o", fixture_file(), NULL});
    T_EQ_INT(r.status, 1);
    T_CONTAINS(r.err, "the output would overwrite the input");
    free(r.out);

    run(&r, NULL, NULL, (const char *[]){"--event", "nope", fixture_file(), "-o", "-", NULL});
    T_EQ_INT(r.status, 1);
    T_CONTAINS(r.err, "--event nope: no such event in this recording");
    free(r.out);
}

TEST(cli_help_documents_every_option)
{
    static const char *const options[] = {
        "--trace-offcpu", "--pid", "--exclude-pid", "--tid", "--exclude-tid",
        "--process-name", "--exclude-process-name", "--thread-name",
        "--exclude-thread-name", "--time-range", "--filter-file",
        "--aggregate-threads", "--percpu", "--proguard-mapping-file",
        "--show-art-frames", "--remove-method", "--mangled", "--markers",
        "--no-markers", "--max-depth", "--keep-going", "--max-memory", "--threads",
        "e.g. --trace-offcpu off-cpu", "e.g. --pid 1234,5678",
        "e.g. --time-range 500,", "e.g. --aggregate-threads 'Binder:.*'"};
    run_result r;
    run(&r, NULL, NULL, (const char *[]){"--help", NULL});
    for (size_t i = 0; i < sizeof options / sizeof *options; i++)
        T_CONTAINS((char *)r.out, options[i]);
    free(r.out);
}

/* Options reach the library: the fixture's main thread (see fixtures.c)
 * keeps the samples at 1 and 4 ms within 0.9-4.5 ms. */
TEST(cli_filter_options)
{
    run_result r;
    run(&r, NULL, NULL, (const char *[]){"-v", "--pid", "1000,3", "--exclude-tid", "1001",
                                         "--time-range", "0.9,4.5",
                                         fixture_file(), "-o", "-", NULL});
    T_EQ_INT(r.status, 0);
    T_CONTAINS(r.err, "filters keep 2 of 5 threads");
    T_CONTAINS(r.err, "wrote <stdout>: 2 threads, 2 of 12 samples");
    free(r.out);

    /* RenderThread's context switches become markers unless asked not to. */
    run(&r, NULL, NULL, (const char *[]){fixture_file(), "-o", "-", NULL});
    T_CHECK(r.out && strstr((char *)r.out, "{\"type\":\"OffCPU\"}"));
    free(r.out);
    run(&r, NULL, NULL, (const char *[]){"--no-markers", fixture_file(), "-o", "-", NULL});
    T_CHECK(r.out && !strstr((char *)r.out, "{\"type\":\"OffCPU\"}"));
    free(r.out);

    static const struct {
        const char *args[4];
        const char *message;
    } bad[] = {
        {{"--trace-offcpu", "sometimes", NULL}, "--trace-offcpu needs on-cpu, off-cpu"},
        {{"--time-range", "5", NULL}, "--time-range needs START,END in ms, not '5'"},
        {{"--time-range", "a,b", NULL}, "not 'a,b'"},
        {{"--pid", "12,x", NULL}, "'12,x' is not a comma-separated list of ids"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *args[6] = {bad[i].args[0], bad[i].args[1], fixture_file(), NULL};
        t_case("cli_filter_options: %s", bad[i].message);
        run(&r, NULL, NULL, args);
        T_EQ_INT(r.status, 1);
        T_CONTAINS(r.err, bad[i].message);
        free(r.out);
    }
}

/* A FIFO (like /dev/null or any device) is written to, never replaced by a
 * regular file. */
TEST(cli_writes_to_a_pipe)
{
    char fifo[600], copy[600];
    snprintf(fifo, sizeof fifo, "%s/out.fifo", t_tmpdir());
    snprintf(copy, sizeof copy, "%s/fifo-copy.json", t_tmpdir());
    T_EQ_INT(mkfifo(fifo, 0600), 0);
    pid_t reader = fork();
    if (reader == 0) {
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "cat '%s' > '%s'", fifo, copy);
        _exit(system(cmd) == 0 ? 0 : 1);
    }
    run_result r;
    run(&r, NULL, NULL, (const char *[]){"-q", fixture_file(), "-o", fifo, NULL});
    int ws = 0;
    waitpid(reader, &ws, 0);
    T_EQ_INT(r.status, 0);
    free(r.out);
    struct stat st;
    T_CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    size_t len;
    unsigned char *d = raw_file(copy, &len);
    T_CHECK(d && len > 1000 && memcmp(d, "{\"meta\":", 8) == 0);
    free(d);
    T_EQ_INT(leftover_temp_files(), 0);
}

/* --max-depth reaches the library: the fixture's deepest stacks are cut,
 * with a warning; a value that is not a count is a usage error. */
TEST(cli_max_depth)
{
    run_result r;
    run(&r, NULL, NULL, (const char *[]){"--max-depth", "2", "--to", "folded",
                                         fixture_file(), "-o", "-", NULL});
    T_EQ_INT(r.status, 0);
    T_CONTAINS(r.err, "callstacks deeper than 2 frames keep only their 2 innermost frames");
    /* Every folded line is THREAD;FRAME;FRAME COUNT at most, and one is cut. */
    int lines = 0, too_deep = 0;
    for (char *s = (char *)r.out; s && *s;) {
        char *nl = strchr(s, '\n');
        int semis = 0;
        for (char *c = s; c < (nl ? nl : s + strlen(s)); c++)
            semis += *c == ';';
        /* A root frame naming an unwinding error stays above the cut. */
        int err_root = strncmp(strchr(s, ';') ? strchr(s, ';') : s, ";[unwind error: ", 16) == 0;
        too_deep += semis > 2 + err_root;
        lines++;
        s = nl ? nl + 1 : s + strlen(s);
    }
    T_CHECK(lines > 0);
    T_EQ_INT(too_deep, 0);
    free(r.out);
    static const char *const bad[] = {"-1", "x", "", "3k"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        run(&r, NULL, NULL, (const char *[]){"--max-depth", bad[i], fixture_file(), NULL});
        T_EQ_INT(r.status, 1);
        T_CONTAINS(r.err, "--max-depth needs a number of frames (0: no limit)");
        free(r.out);
    }
}

/* Every format, twice, in two processes: each draws its own hash key, and
 * the bytes must not depend on it. */
TEST(cli_same_bytes_across_processes)
{
    static const char *const formats[] = {"firefox", "gecko", "folded", "pprof", "speedscope"};
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        unsigned char *out[2];
        size_t len[2];
        for (int k = 0; k < 2; k++) {
            run_result r;
            run(&r, NULL, NULL, (const char *[]){"-q", "--to", formats[i], fixture_file(),
                                                 "-o", "-", NULL});
            T_EQ_INT(r.status, 0);
            out[k] = r.out;
            len[k] = r.out_len;
        }
        t_case("cli_same_bytes_across_processes: %s", formats[i]);
        T_CHECK(out[0] && len[0] > 100 && len[0] == len[1] && memcmp(out[0], out[1], len[0]) == 0);
        free(out[0]);
        free(out[1]);
    }
}
