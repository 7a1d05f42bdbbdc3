/* What a user sees of a long conversion: progress while reading (library
 * callback and the command line's line), and the warning for a JSON
 * output too large for the Firefox Profiler. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sp_encode.h"
#include "t.h"
#include "test_util.h"

typedef struct seen {
    size_t calls, bad_order;
    pc_progress last;
} seen;

static void record(void *ctx, const pc_progress *p)
{
    seen *s = ctx;
    if (s->calls && (p->bytes < s->last.bytes || p->samples < s->last.samples))
        s->bad_order++;
    s->last = *p;
    s->calls++;
}

TEST(progress_callback)
{
    char path[600];
    snprintf(path, sizeof path, "%s/big.trace", t_tmpdir());
    size_t size = write_simpleperf_file(path, 20000, 0);
    T_CHECK(size > 4u << 20);
    pc_options o;
    pc_options_init(&o);
    seen s = {0};
    o.progress = record;
    o.progress_ctx = &s;
    /* One thread: a call a MiB exactly.  (With two, the reading thread
     * runs ahead and the calls, made between batches, come fewer.) */
    o.threads = 1;
    pc_input *in;
    pc_profile *p = NULL;
    pc_error err;
    int st = pc_input_open(&in, path, &err);
    if (st == PC_OK) {
        st = pc_convert(in, &o, &p, &err);
        pc_input_close(in);
    }
    T_EQ_INT(st, PC_OK);
    /* About one call a MiB, then the last one: all of it, all samples. */
    T_CHECK(s.calls >= size >> 20);
    T_CHECK(s.calls <= (size >> 20) + 2);
    T_EQ_INT(s.bad_order, 0);
    T_EQ_INT(s.last.bytes, size);
    T_EQ_INT(s.last.total, size);
    T_EQ_INT(s.last.samples, 20000);
    pc_profile_free(p);

    /* Two threads: fewer calls, still in order, the last one complete. */
    o.threads = 0;
    memset(&s, 0, sizeof s);
    st = pc_input_open(&in, path, &err);
    if (st == PC_OK) {
        st = pc_convert(in, &o, &p, &err);
        pc_input_close(in);
    }
    T_EQ_INT(st, PC_OK);
    T_CHECK(s.calls >= 2);
    T_EQ_INT(s.bad_order, 0);
    T_EQ_INT(s.last.bytes, size);
    T_EQ_INT(s.last.samples, 20000);
    pc_profile_free(p);

    /* Gzip input counts the compressed bytes, against the file's size. */
    char gz[700];
    snprintf(gz, sizeof gz, "%s.gz", path);
    size_t n;
    unsigned char *raw = t_read_file(path, &n), *z = NULL;
    size_t zn = raw ? gzip_bytes(raw, n, &z) : 0;
    FILE *f = fopen(gz, "wb");
    if (f) {
        fwrite(z, 1, zn, f);
        fclose(f);
    }
    free(raw);
    free(z);
    memset(&s, 0, sizeof s);
    st = pc_input_open(&in, gz, &err);
    if (st == PC_OK) {
        st = pc_convert(in, &o, &p, &err);
        pc_input_close(in);
    }
    T_EQ_INT(st, PC_OK);
    T_EQ_INT(s.last.bytes, zn);
    T_EQ_INT(s.last.total, zn);
    T_EQ_INT(s.last.samples, 20000);
    T_EQ_INT(s.bad_order, 0);
    pc_profile_free(p);
}

static char *run_capture(const char *args)
{
    char cmd[2048], errf[700];
    snprintf(errf, sizeof errf, "%s/progress.err", t_tmpdir());
    snprintf(cmd, sizeof cmd, "%s %s 2> '%s'", t_profconv(), args, errf);
    if (system(cmd) != 0)
        t_fail(__FILE__, __LINE__, "%s failed", cmd);
    return read_text(errf);
}

TEST(progress_cli)
{
    char path[600], args[1600];
    snprintf(path, sizeof path, "%s/big-cli.trace", t_tmpdir());
    if (!write_simpleperf_file(path, 20000, 0))
        return;
    /* Not a terminal: no progress unless asked; asked, whole lines. */
    snprintf(args, sizeof args, "'%s' -o '%s/big.json.gz'", path, t_tmpdir());
    char *e = run_capture(args);
    T_CHECK(e && !strstr(e, " MB/s"));
    free(e);
    snprintf(args, sizeof args, "--progress '%s' -o '%s/big.json.gz'", path, t_tmpdir());
    e = run_capture(args);
    T_CONTAINS(e, "big-cli.trace: read ");
    T_CONTAINS(e, " MB (100%), 20000 samples, ");
    T_CHECK(e && !strchr(e, '\r'));
    free(e);
    /* -q silences it. */
    snprintf(args, sizeof args, "-q --progress '%s' -o '%s/big.json.gz'", path, t_tmpdir());
    e = run_capture(args);
    T_EQ_STR(e, "");
    free(e);
}

TEST(json_too_large_warning)
{
    pc_profile *p = convert_fixture(NULL);
    if (!p)
        return;
    pc_options lo;
    pc_options_init(&lo);
    log_capture_start(&lo);
    int formats[] = {PC_FORMAT_FIREFOX, PC_FORMAT_GECKO, PC_FORMAT_SPEEDSCOPE, PC_FORMAT_FOLDED};
    for (size_t f = 0; f < 4; f++) {
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = formats[f];
        w.log = lo.log;
        w.log_ctx = lo.log_ctx;
        w.json_limit = 1000;
        /* JSON asked for: a firefox profile is not made a JSLB file. */
        w.container = PC_CONTAINER_JSON;
        unsigned char *out = NULL;
        size_t n;
        pc_error err;
        log_capture_start(&lo);
        T_EQ_INT(pc_write_memory(p, &w, &out, &n, &err), PC_OK);
        /* Written whole all the same. */
        T_CHECK(n > 1000 || formats[f] == PC_FORMAT_FOLDED);
        if (formats[f] == PC_FORMAT_FOLDED) {
            T_EQ_STR(log_capture_text(), "");
        } else {
            T_CONTAINS(log_capture_text(), "<memory>: the JSON is 0 MiB, more than the 0 MiB");
            T_CONTAINS(log_capture_text(), "options.time_end, or use write_options.format pprof or write_options.format folded");
        }
        free(out);
        /* Under the default limit: nothing. */
        w.json_limit = 0;
        log_capture_start(&lo);
        T_EQ_INT(pc_write_memory(p, &w, &out, &n, &err), PC_OK);
        T_EQ_STR(log_capture_text(), "");
        free(out);
    }
    pc_profile_free(p);
}
