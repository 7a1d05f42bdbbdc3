/* Inputs profconv recognises but does not read, handed to the command
 * line: each is refused in one line, at offset 0, saying what it is and
 * what to do, with exit code 2. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"
#include "test_util.h"

/* Runs `profconv PATH -o PATH.out`; returns the exit code (-1 when it did
 * not exit) with standard error in err. */
static int run_cli(const char *path, char *err, size_t err_size)
{
    char exe[1024], out[700], err_path[600];
    snprintf(exe, sizeof exe, "%s", t_profconv_abs());
    snprintf(out, sizeof out, "%s.out", path);
    snprintf(err_path, sizeof err_path, "%s/wrong.stderr", t_tmpdir());
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0)
            _exit(127);
        dup2(fd, 2);
        execl(exe, exe, path, "-o", out, (char *)NULL);
        _exit(127);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    size_t len = 0;
    unsigned char *e = t_read_file(err_path, &len);
    snprintf(err, err_size, "%s", e ? (char *)e : "");
    free(e);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* Writes data to NAME in the scratch folder, runs the command line on it
 * and checks the one line it prints (whose offset, for gzip, counts the
 * decompressed bytes). */
static void refused(const char *name, const void *data, size_t len, const char *message)
{
    int gz = len >= 2 && ((const unsigned char *)data)[0] == 0x1f &&
             ((const unsigned char *)data)[1] == 0x8b;
    t_case("%s", name);
    char path[600], want[2048], err[4096];
    snprintf(path, sizeof path, "%s/%s", t_tmpdir(), name);
    FILE *f = fopen(path, "wb");
    T_CHECK(f && fwrite(data, 1, len, f) == len);
    if (f)
        fclose(f);
    T_EQ_INT(run_cli(path, err, sizeof err), 2);
    snprintf(want, sizeof want, "profconv: %s: offset 0%s: %s\n", path,
             gz ? " of the decompressed data" : "", message);
    T_EQ_STR(err, want);
}


static const char SP_TEXT[] =
    "this is simpleperf's text report, which profconv does not read: run `simpleperf "
    "report-sample --protobuf --show-callchain -i perf.data -o perf.trace` and give profconv "
    "perf.trace";
static const char CHROME[] =
    "this is a Chrome JSON trace, which profconv does not read: record a Perfetto trace "
    "(protobuf) with the disabled-by-default-cpu_profiler category, or open this one at "
    "https://ui.perfetto.dev";
static const char PPROF[] = "this is a pprof profile, which profconv writes but does not "
                            "read: open it with `go tool pprof -http=: FILE`";

TEST(wrong_inputs_recordings_and_traces)
{
    /* perf.data from a big-endian machine (the magic reads backwards) is
     * refused at its first byte. */
    unsigned char perf[104] = "2ELIFREP";
    perf[15] = 0x68;
    refused("be.data", perf, sizeof perf,
            "this perf.data was recorded on a big-endian machine, which is not supported");

    static const char sp_text[] = "sample:\n"
                                  "  event_type: cpu-clock\n"
                                  "  time: 558358091410043\n"
                                  "  event_count: 1587031\n"
                                  "  thread_id: 26124\n"
                                  "  thread_name: app\n"
                                  "  vaddr_in_file: 4f7\n"
                                  "  file: /system/lib64/libc.so\n"
                                  "  symbol: main\n"
                                  "  callchain:\n"
                                  "    vaddr_in_file: 1c4\n"
                                  "    file: /system/lib64/libc.so\n"
                                  "    symbol: __libc_init\n";
    refused("report.txt", sp_text, sizeof sp_text - 1, SP_TEXT);
    static const char sp_dump[] = "magic: SIMPLEPERF\nversion: 1\nsample 1:\n  time: 5\n";
    refused("dump.txt", sp_dump, sizeof sp_dump - 1, SP_TEXT);

    static const char chrome_obj[] =
        "{\"traceEvents\":[{\"pid\":1,\"tid\":1,\"ts\":0,\"ph\":\"X\",\"name\":\"a\"}],"
        "\"displayTimeUnit\":\"ms\"}";
    refused("trace.json", chrome_obj, sizeof chrome_obj - 1, CHROME);
    static const char chrome_arr[] = "\xEF\xBB\xBF [\n{\"name\":\"a\",\"ph\":\"B\",\"ts\":1}";
    refused("array.json", chrome_arr, sizeof chrome_arr - 1, CHROME);
}

TEST(wrong_inputs_profconv_outputs)
{
    pc_profile *p = convert_fixture(NULL);
    if (!p)
        return;
    static const struct {
        const char *name;
        int format, gzip;
        const char *message;
    } outs[] = {
        {"out.pb.gz", PC_FORMAT_PPROF, 1, PPROF},
        {"out.pb", PC_FORMAT_PPROF, 0, PPROF},
        {"out.json", PC_FORMAT_FIREFOX, 0,
         "this is a Firefox Profiler profile (processed format), which profconv writes but does "
         "not read: open it at https://profiler.firefox.com"},
        {"out.gecko.json", PC_FORMAT_GECKO, 1,
         "this is a Firefox Profiler profile (Gecko format), which profconv writes but does not "
         "read: open it at https://profiler.firefox.com"},
        {"out.speedscope.json", PC_FORMAT_SPEEDSCOPE, 0,
         "this is a speedscope profile, which profconv writes but does not read: open it at "
         "https://www.speedscope.app"},
        {"out.folded", PC_FORMAT_FOLDED, 0,
         "these are folded stacks, which profconv writes but does not read: give them to "
         "flamegraph.pl or inferno-flamegraph, or open them at https://www.speedscope.app"},
    };
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) {
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = outs[i].format;
        w.gzip = outs[i].gzip;
        unsigned char *data = NULL;
        size_t len = 0;
        pc_error err;
        T_EQ_INT(pc_write_memory(p, &w, &data, &len, &err), PC_OK);
        if (data)
            refused(outs[i].name, data, len, outs[i].message);
        free(data);
    }
    pc_profile_free(p);
}

/* Text that merely resembles these is still told it is unknown. */
TEST(wrong_inputs_unknown_stays_unknown)
{
    static const char *const texts[] = {
        "hello world\n",
        "a;b 12\nnot folded\n",
        "{\"name\":\"x\"}\n",
        "sample:\nnothing indented\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        pc_error err;
        pc_profile *p = NULL;
        T_EQ_INT(convert_bytes_unchecked(texts[i], strlen(texts[i]), NULL, &p, &err),
                 PC_EINPUT);
        T_CONTAINS(err.message, "unknown input format");
        pc_profile_free(p);
    }
}
