/* The one table of output formats, seen through every public function
 * that answers from it and through the command line's naming rules; and
 * the write options' defaults and range checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "t.h"
#include "pprof_read.h"
#include "test_util.h"

TEST(formats_from_names)
{
    static const struct {
        const char *path;
        int format, gzip;
    } cases[] = {
        {"perf.json", PC_FORMAT_FIREFOX, 0},
        {"dir/perf.json.gz", PC_FORMAT_FIREFOX, 1},
        {"perf.speedscope.json", PC_FORMAT_SPEEDSCOPE, 0},
        {"perf.speedscope.json.gz", PC_FORMAT_SPEEDSCOPE, 1},
        {"perf.folded", PC_FORMAT_FOLDED, 0},
        {"perf.folded.gz", PC_FORMAT_FOLDED, 1},
        {"perf.pb.gz", PC_FORMAT_PPROF, 1},
        {"perf.pb", PC_FORMAT_PPROF, 0},   /* the bare protobuf */
        {"perf.pprof", PC_FORMAT_PPROF, 1}, /* pprof's tools expect gzip */
        {"perf.pprof.gz", PC_FORMAT_PPROF, 1},
        {"perf.svg", PC_FORMAT_SVG, 0},
        {"perf.svg.gz", PC_FORMAT_SVG, 1},
        {"perf.txt", PC_FORMAT_NONE, 0},
        {"perf.txt.gz", PC_FORMAT_NONE, 1},
        {"dir.pb/perf", PC_FORMAT_NONE, 0},
        {".pb", PC_FORMAT_NONE, 0},
        {"-", PC_FORMAT_NONE, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        t_case("formats_from_names: %s", cases[i].path);
        int gzip = -1;
        T_EQ_INT(pc_format_from_path(cases[i].path, &gzip), cases[i].format);
        T_EQ_INT(gzip, cases[i].gzip);
        T_EQ_INT(pc_format_from_path(cases[i].path, NULL), cases[i].format);
    }
}

TEST(formats_compression_and_endings)
{
    /* A name that says nothing takes the format's default: gzip for pprof
     * only, standard output included. */
    T_EQ_INT(pc_output_gzip(PC_FORMAT_PPROF, "-"), 1);
    T_EQ_INT(pc_output_gzip(PC_FORMAT_PPROF, "out.bin"), 1);
    T_EQ_INT(pc_output_gzip(PC_FORMAT_PPROF, "out.pb"), 0);
    T_EQ_INT(pc_output_gzip(PC_FORMAT_FIREFOX, "-"), 0);
    T_EQ_INT(pc_output_gzip(PC_FORMAT_FOLDED, "out.gz"), 1);
    T_EQ_INT(pc_output_gzip(PC_FORMAT_FOLDED, "out.pprof"), 0);
    T_EQ_INT(pc_output_gzip(PC_FORMAT_NONE, NULL), 0);
    T_EQ_INT(pc_format_suffix_len(PC_FORMAT_PPROF, "dir/perf.pb.gz"), 6);
    T_EQ_INT(pc_format_suffix_len(PC_FORMAT_PPROF, "perf.pprof"), 6);
    T_EQ_INT(pc_format_suffix_len(PC_FORMAT_PPROF, "perf.pb"), 3);
    T_EQ_INT(pc_format_suffix_len(PC_FORMAT_PPROF, "perf.json"), 0);
    T_EQ_INT(pc_format_suffix_len(PC_FORMAT_FIREFOX, "a.speedscope.json"), 5);
    T_EQ_INT(pc_format_suffix_len(PC_FORMAT_SPEEDSCOPE, "a.speedscope.json"), 16);
    T_EQ_INT(pc_format_suffix_len(PC_FORMAT_NONE, "a.json"), 0);
}

TEST(formats_table_consistent)
{
    /* Every format is listed once, named, found by its name, and (but for
     * gecko, whose names are the processed format's, and text, which no
     * name selects) found again from the extension of the names made for
     * it. */
    size_t n = 0;
    for (size_t i = 0; pc_format_nth(i) != PC_FORMAT_NONE; i++, n++) {
        int f = pc_format_nth(i);
        const char *name = pc_format_name(f);
        T_CHECK(name != NULL);
        if (!name)
            continue;
        T_EQ_INT(pc_format_by_name(name), f);
        const char *ext = pc_format_extension(f);
        T_CHECK(ext && ext[0] == '.');
        char path[64];
        snprintf(path, sizeof path, "out%s", ext ? ext : "");
        if (f != PC_FORMAT_GECKO && f != PC_FORMAT_TEXT)
            T_EQ_INT(pc_format_from_path(path, NULL), f);
    }
    T_EQ_INT(n, 7);
    T_EQ_STR(pc_format_name(pc_format_nth(0)), "firefox");
    T_CHECK(pc_format_name(PC_FORMAT_NONE) == NULL);
    T_CHECK(pc_format_name(99) == NULL);
    T_CHECK(pc_format_extension(99) == NULL);
    T_EQ_INT(pc_format_by_name("processed"), PC_FORMAT_NONE);
    T_EQ_INT(pc_format_by_name(NULL), PC_FORMAT_NONE);
}

TEST(write_options_null_and_range)
{
    pc_profile *p = convert_fixture(NULL);
    if (!p)
        return;
    unsigned char *out = NULL;
    size_t n = 0;
    pc_error err;
    t_case("write_options_null_and_range: NULL options write the processed format");
    T_EQ_INT(pc_write_memory(p, NULL, &out, &n, &err), PC_OK);
    T_CHECK(n > 100 && out && out[0] == '{');
    if (out)
        T_CHECK(strstr((const char *)out, "\"preprocessedProfileVersion\"") != NULL);
    free(out);

    static const struct {
        const char *what;
        int format, gzip_level, prefix;
        int64_t pid;
        const char *message;
    } bad[] = {
        {"unknown format", 42, 1, PC_FOLDED_THREAD, -1, "write_options.format 42"},
        {"gzip level 10", PC_FORMAT_FIREFOX, 10, PC_FOLDED_THREAD, -1,
         "write_options.gzip_level 10"},
        {"gzip level -1", PC_FORMAT_FIREFOX, -1, PC_FOLDED_THREAD, -1,
         "write_options.gzip_level -1"},
        {"prefix bits", PC_FORMAT_FOLDED, 1, 4, -1, "write_options.folded_prefix 4"},
        {"pprof pid", PC_FORMAT_PPROF, 1, PC_FOLDED_THREAD, -2, "write_options.pprof_pid -2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        t_case("write_options_null_and_range: %s", bad[i].what);
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = bad[i].format;
        w.gzip = 1;
        w.gzip_level = bad[i].gzip_level;
        w.folded_prefix = bad[i].prefix;
        w.pprof_pid = bad[i].pid;
        out = NULL;
        T_EQ_INT(pc_write_memory(p, &w, &out, &n, &err), PC_EUSAGE);
        T_CHECK(out == NULL);
        T_CONTAINS(err.message, bad[i].message);
        char path[512];
        snprintf(path, sizeof path, "%s/refused.out", t_tmpdir());
        T_EQ_INT(pc_write(p, path, &w, &err), PC_EUSAGE);
        struct stat st;
        T_CHECK(stat(path, &st) != 0);
    }
    pc_profile_free(p);
}

TEST(convert_options_range)
{
    static const struct {
        const char *what, *message;
        int remove_gaps, offcpu, heap_dump, heap_measure, threads;
        int64_t time_end;
    } bad[] = {
        {"remove_gaps", "options.remove_gaps -2", -2, 0, 0, 0, 0, -1},
        {"offcpu", "options.offcpu 9", -1, 9, 0, 0, 0, -1},
        {"heap_dump", "options.heap_dump -1", -1, 0, -1, 0, 0, -1},
        {"heap_measure", "options.heap_measure 4", -1, 0, 0, 4, 0, -1},
        {"threads", "options.threads -1", -1, 0, 0, 0, -1, -1},
        {"time_end", "options.time_end -5", -1, 0, 0, 0, 0, -5},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        t_case("convert_options_range: %s", bad[i].what);
        pc_options o;
        pc_options_init(&o);
        o.remove_gaps = bad[i].remove_gaps;
        o.offcpu = bad[i].offcpu;
        o.heap_dump = bad[i].heap_dump;
        o.heap_measure = bad[i].heap_measure;
        o.threads = bad[i].threads;
        o.time_end = bad[i].time_end;
        pc_error err;
        T_EQ_INT(convert_fixture_status(&o, &err), PC_EUSAGE);
        T_CONTAINS(err.message, bad[i].message);
    }
    t_case("convert_options_range: a list without its array");
    pc_options o;
    pc_options_init(&o);
    o.tids.n = 2;
    pc_error err;
    T_EQ_INT(convert_fixture_status(&o, &err), PC_EUSAGE);
    T_CONTAINS(err.message, "has 2 items and no array");
    t_case("convert_options_range: NULL options are the defaults");
    T_EQ_INT(convert_fixture_status(NULL, &err), PC_OK);
}

/* pprof for one process takes any process id, -1 and other negative ones
 * included, when the caller says it wants one process: --percpu's CPU
 * threads and some inputs have them. */
TEST(write_options_pprof_one_process)
{
    pc_profile *p = convert_fixture(NULL);
    if (!p)
        return;
    int64_t *pids = NULL;
    size_t n_pids = 0;
    pc_error err;
    T_EQ_INT(pc_profile_pids(p, &pids, &n_pids, &err), PC_OK);
    T_CHECK(n_pids > 0);
    static const struct {
        int64_t pid;
        int one;
        int status;
        int some;  /* samples expected */
    } cases[] = {
        {-1, 0, PC_OK, 1},   /* every process, as before */
        {-1, 1, PC_OK, 0},   /* process -1 alone: the fixture has none */
        {-7, 1, PC_OK, 0},
        {-7, 0, PC_EUSAGE, 0},
        {0, 1, PC_OK, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        t_case("write_options_pprof_one_process: pid %lld one %d", (long long)cases[i].pid,
               cases[i].one);
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = PC_FORMAT_PPROF;
        w.pprof_pid = cases[i].pid;
        w.pprof_one_process = cases[i].one;
        unsigned char *out = NULL;
        size_t n = 0;
        T_EQ_INT(pc_write_memory(p, &w, &out, &n, &err), cases[i].status);
        if (!out)
            continue;
        pp_profile pp;
        char why[256];
        T_EQ_INT(pp_read(out, n, &pp, why, sizeof why), 0);
        T_EQ_INT(pp.n_sample > 0, cases[i].some);
        pp_free(&pp);
        free(out);
    }
    /* A process of the fixture, asked for by one_process, gives samples. */
    t_case("write_options_pprof_one_process: a real process");
    pc_write_options w;
    pc_write_options_init(&w);
    w.format = PC_FORMAT_PPROF;
    w.pprof_pid = pids ? pids[0] : 0;
    w.pprof_one_process = 1;
    unsigned char *out = NULL;
    size_t n = 0;
    T_EQ_INT(pc_write_memory(p, &w, &out, &n, &err), PC_OK);
    pp_profile pp;
    char why[256];
    if (out && pp_read(out, n, &pp, why, sizeof why) == 0) {
        T_CHECK(pp.n_sample > 0);
        pp_free(&pp);
    }
    free(out);
    free(pids);
    pc_profile_free(p);
}
