/* Damaged perf.data files: each gives PC_EINPUT with one line naming the
 * input and the byte offset at fault, or with keep_going what is valid,
 * the damage counted; the command line exits 2 and writes nothing.  The
 * files are written with the project's encoder (tests/support/pd_encode.h)
 * and then broken. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include "pd_encode.h"
#include "t.h"
#include "test_util.h"

#define STYPE (PDE_S_IP | PDE_S_TID | PDE_S_TIME | PDE_S_PERIOD | PDE_S_CALLCHAIN)

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* A valid perf recording: a comm, an mmap, n samples, rounds, VERSION. */
static void good_begin(pde *e, int opts)
{
    pde_begin(e, opts);
    pde_attr_spec a = {.type = 1, .sample_period = 1000000, .sample_type = STYPE,
                       .flags = PDE_F_SAMPLE_ID_ALL | PDE_F_MMAP | PDE_F_COMM,
                       .name = "cpu-clock"};
    pde_attr(e, &a);
    e->sid.pid = 42;
    e->sid.tid = 42;
    e->sid.time = 10;
    pde_comm(e, 42, 42, "broken", 0);
    pde_mmap(e, PDE_MISC_USER, 42, 42, 0x400000, 0x10000, 0, "/nonexistent/pd/broken");
}

static void good_sample(pde *e, uint64_t time)
{
    uint64_t chain[] = {PDE_CONTEXT_USER, 0x400100, 0x400200};
    pde_sample s = {.ip = 0x400100, .pid = 42, .tid = 42, .time = time, .period = 1,
                    .callchain = chain, .n_callchain = 3};
    pde_sample_rec(e, 0, PDE_MISC_USER, &s);
}

static uint8_t *good_finish(pde *e, size_t *len)
{
    pde_feat_version(e, "6.1.pdtest");
    pde_feat_osrelease(e, "0.0-pdtest");
    uint8_t *f = pde_finish(e, len);
    T_CHECK(f != NULL);
    return f;
}

static uint8_t *good_file(size_t *len)
{
    pde e;
    good_begin(&e, 0);
    for (int i = 0; i < 4; i++)
        good_sample(&e, 1000 + 100 * (uint64_t)i);
    pde_finished_round(&e);
    return good_finish(&e, len);
}

/* Offsets of the data section. */
static uint64_t data_off(const uint8_t *f)
{
    return le64(f + 40);
}

static uint64_t data_size(const uint8_t *f)
{
    return le64(f + 48);
}

/* Converts len bytes of f with keep_going; expects PC_EINPUT with a message
 * naming "offset <off>" (off < 0: any offset) and containing what (NULL:
 * anything). */
static void expect_einput(const uint8_t *f, size_t len, long long off, const char *what)
{
    pc_options o;
    pc_options_init(&o);
    pc_profile *p = NULL;
    pc_error err;
    int st = convert_bytes_unchecked(f, len, &o, &p, &err);
    T_EQ_INT(st, PC_EINPUT);
    pc_profile_free(p);
    if (st != PC_EINPUT)
        return;
    T_CHECK(strchr(err.message, '\n') == NULL);
    if (off >= 0) {
        char at[64];
        snprintf(at, sizeof at, "offset %lld:", off);
        T_CONTAINS(err.message, at);
    } else {
        T_CONTAINS(err.message, "offset ");
    }
    if (what)
        T_CONTAINS(err.message, what);
}

TEST(perfdata_errors_truncated_header)
{
    size_t len;
    uint8_t *f = good_file(&len);
    if (!f)
        return;
    /* Inside the 104-byte header (the offset where it ends), and inside
     * its first 16 bytes. */
    expect_einput(f, 60, 60, "header");
    expect_einput(f, 12, -1, NULL);
    free(f);
}

TEST(perfdata_errors_truncated_attrs)
{
    size_t len;
    uint8_t *f = good_file(&len);
    if (!f)
        return;
    uint64_t attrs = le64(f + 24);
    expect_einput(f, (size_t)attrs + 20, (long long)attrs + 20, NULL);
    free(f);
}

/* The header's sizes pointing outside the file. */
TEST(perfdata_errors_bad_header_fields)
{
    size_t len;
    uint8_t *f = good_file(&len);
    if (!f)
        return;
    uint8_t *g = malloc(len);
    memcpy(g, f, len);
    g[16] = 7;                      /* attr_size 7 */
    memset(g + 17, 0, 7);
    expect_einput(g, len, 16, NULL);
    memcpy(g, f, len);
    memset(g + 40, 0xff, 8);        /* data offset past everything */
    expect_einput(g, len, -1, NULL);
    free(g);
    free(f);
}

/* Record i's offset in the file (records from the data section's start). */
static uint64_t record_off(const uint8_t *f, int i)
{
    uint64_t off = data_off(f);
    while (i-- > 0)
        off += (uint64_t)f[off + 6] | (uint64_t)f[off + 7] << 8;
    return off;
}

TEST(perfdata_errors_record_size_too_small)
{
    size_t len;
    uint8_t *f = good_file(&len);
    if (!f)
        return;
    uint64_t r = record_off(f, 3);  /* the second sample */
    f[r + 6] = 4;
    f[r + 7] = 0;
    expect_einput(f, len, (long long)r, "less than its header");
    f[r + 6] = 0;
    expect_einput(f, len, (long long)r, NULL);
    free(f);
}

TEST(perfdata_errors_record_past_data_section)
{
    size_t len;
    uint8_t *f = good_file(&len);
    if (!f)
        return;
    uint64_t r = record_off(f, 5);  /* the last sample */
    uint64_t end = data_off(f) + data_size(f);
    uint64_t size = end - r + 8;
    f[r + 6] = (uint8_t)size;
    f[r + 7] = (uint8_t)(size >> 8);
    expect_einput(f, len, (long long)r, "past the end of the data section");
    free(f);
}

TEST(perfdata_errors_truncated_data)
{
    size_t len;
    uint8_t *f = good_file(&len);
    if (!f)
        return;
    uint64_t r = record_off(f, 4);
    /* Cut inside a record, then between records, then inside a header. */
    expect_einput(f, (size_t)r + 20, -1, "ends inside");
    expect_einput(f, (size_t)r, -1, "ends inside");
    expect_einput(f, (size_t)r + 4, -1, "ends inside");
    free(f);
}

TEST(perfdata_errors_big_endian)
{
    pde e;
    good_begin(&e, PDE_BIG_ENDIAN);
    good_sample(&e, 1000);
    size_t len;
    uint8_t *f = good_finish(&e, &len);
    if (!f)
        return;
    T_CHECK(memcmp(f, "2ELIFREP", 8) == 0);
    expect_einput(f, len, 0, "big-endian");
    free(f);
}

/* A callchain whose nr says more than the record holds. */
TEST(perfdata_errors_callchain_too_long)
{
    pde e;
    good_begin(&e, 0);
    good_sample(&e, 1000);
    uint8_t body[8 * 6];
    uint64_t v[] = {0x400100, 42 | (uint64_t)42 << 32, 1100, 1000000, 0x400100, 0x400200};
    /* ip, pid/tid, time, callchain nr (huge), then two ips; PERIOD comes
     * after the chain and is missing. */
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 8; k++)
            body[8 * i + k] = (uint8_t)(v[i] >> (8 * k));
    pde_raw_record(&e, PDE_SAMPLE, PDE_MISC_USER, body, sizeof body);
    good_sample(&e, 1200);
    size_t len;
    uint8_t *f = good_finish(&e, &len);
    if (!f)
        return;
    uint64_t r = record_off(f, 3);
    T_EQ_INT(f[r], PDE_SAMPLE);
    expect_einput(f, len, (long long)r, NULL);
    /* With keep_going the record is skipped and counted. */
    pc_options o;
    pc_options_init(&o);
    o.keep_going = 1;
    log_capture_start(&o);
    pc_profile *p = NULL;
    pc_error err;
    int st = convert_bytes_unchecked(f, len, &o, &p, &err);
    T_EQ_INT(st, PC_OK);
    if (p)
        T_EQ_INT(p->sample.n, 2);
    T_CONTAINS(log_capture_text(), "1 damaged record");
    pc_profile_free(p);
    free(f);
}

/* keep_going: damaged records are skipped and counted, the rest read. */
TEST(perfdata_errors_keep_going_skips)
{
    pde e;
    good_begin(&e, 0);
    good_sample(&e, 1000);
    static const uint8_t short_body[8] = {42, 0, 0, 0, 42, 0, 0, 0};
    pde_raw_record(&e, PDE_MMAP, PDE_MISC_USER, short_body, sizeof short_body);
    good_sample(&e, 1100);
    pde_raw_record(&e, PDE_LOST, 0, short_body, 4);
    good_sample(&e, 1200);
    pde_finished_round(&e);
    size_t len;
    uint8_t *f = good_finish(&e, &len);
    if (!f)
        return;
    uint64_t first = record_off(f, 3);
    expect_einput(f, len, (long long)first, "MMAP");
    pc_options o;
    pc_options_init(&o);
    o.keep_going = 1;
    log_capture_start(&o);
    pc_profile *p = NULL;
    pc_error err;
    int st = convert_bytes_unchecked(f, len, &o, &p, &err);
    T_EQ_INT(st, PC_OK);
    if (p)
        T_EQ_INT(p->sample.n, 3);
    const char *log = log_capture_text();
    T_CONTAINS(log, "2 damaged records skipped");
    char at[64];
    snprintf(at, sizeof at, "offset %llu:", (unsigned long long)first);
    T_CONTAINS(log, at);
    pc_profile_free(p);
    free(f);
}

/* keep_going where the framing breaks: what came before is kept. */
TEST(perfdata_errors_keep_going_framing)
{
    size_t len;
    uint8_t *f = good_file(&len);
    if (!f)
        return;
    uint64_t r = record_off(f, 4);  /* the third sample */
    f[r + 6] = 3;
    f[r + 7] = 0;
    pc_options o;
    pc_options_init(&o);
    o.keep_going = 1;
    log_capture_start(&o);
    pc_profile *p = NULL;
    pc_error err;
    int st = convert_bytes_unchecked(f, len, &o, &p, &err);
    T_EQ_INT(st, PC_OK);
    if (p)
        T_EQ_INT(p->sample.n, 2);
    T_CONTAINS(log_capture_text(), "reading stopped early");
    pc_profile_free(p);
    /* Truncated inside the data section: the same. */
    pc_options_init(&o);
    o.keep_going = 1;
    p = NULL;
    st = convert_bytes_unchecked(f, (size_t)r + 12, &o, &p, &err);
    T_EQ_INT(st, PC_OK);
    if (p)
        T_EQ_INT(p->sample.n, 2);
    pc_profile_free(p);
    free(f);
}

/* Every prefix of a valid file is refused with an offset or read: never a
 * crash, never a message of more than one line. */
TEST(perfdata_errors_every_prefix)
{
    size_t len;
    uint8_t *f = good_file(&len);
    if (!f)
        return;
    for (size_t n = 8; n < len; n++) {
        uint8_t *g = malloc(n);
        memcpy(g, f, n);
        pc_options o;
        pc_options_init(&o);
        pc_profile *p = NULL;
        pc_error err;
        int st = convert_bytes_unchecked(g, n, &o, &p, &err);
        if (st != PC_OK) {
            if (st != PC_EINPUT || !strstr(err.message, "offset ") ||
                strchr(err.message, '\n'))
                t_fail(__FILE__, __LINE__, "prefix of %zu bytes: status %d: %s", n, st,
                       err.message);
        }
        pc_profile_free(p);
        free(g);
    }
    free(f);
}

/* ---- The command line ---- */

typedef struct run_result {
    int status;      /* exit code, or -1 when killed */
    char err[4096];
} run_result;

static void run(run_result *r, const char *const *args)
{
    const char *argv[16];
    int n = 0;
    argv[n++] = t_profconv_abs();
    for (; args[n - 1] && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    char err_path[600];
    snprintf(err_path, sizeof err_path, "%s/pd_errors.stderr", t_tmpdir());
    pid_t pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int out = open("/dev/null", O_WRONLY);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || err < 0)
            _exit(127);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    size_t len = 0;
    unsigned char *e = t_read_file(err_path, &len);
    snprintf(r->err, sizeof r->err, "%s", e ? (char *)e : "");
    free(e);
}

static int write_bytes(const char *path, const void *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(d, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

TEST(perfdata_errors_cli)
{
    size_t len;
    uint8_t *f = good_file(&len);
    if (!f)
        return;
    uint64_t r = record_off(f, 4);
    f[r + 6] = 2;
    f[r + 7] = 0;
    char in[600], out[600];
    snprintf(in, sizeof in, "%s/pd_bad.data", t_tmpdir());
    snprintf(out, sizeof out, "%s/pd_bad.json", t_tmpdir());
    unlink(out);
    T_CHECK(write_bytes(in, f, len) == 0);
    run_result rr;
    const char *args[] = {in, "-o", out, NULL};
    run(&rr, args);
    T_EQ_INT(rr.status, 2);
    /* One line naming the file and the offset. */
    size_t nl = 0;
    for (const char *c = rr.err; *c; c++)
        nl += *c == '\n';
    T_EQ_INT(nl, 1);
    T_CONTAINS(rr.err, in);
    char at[64];
    snprintf(at, sizeof at, "offset %llu:", (unsigned long long)r);
    T_CONTAINS(rr.err, at);
    struct stat st;
    T_CHECK(stat(out, &st) != 0);
    free(f);
}

/* --max-memory: a file whose header promises far more than it holds, and
 * a valid one, under tight limits: an error or a result, never a crash. */
TEST(perfdata_errors_cli_max_memory)
{
#if defined(__SANITIZE_ADDRESS__)
    t_skip("the address sanitizer reserves more address space than any limit: "
           "--max-memory is tested in the normal build");
#else
    size_t len;
    uint8_t *f = good_file(&len);
    if (!f)
        return;
    char in[600], in2[600], out[600];
    snprintf(in, sizeof in, "%s/pd_mem.data", t_tmpdir());
    snprintf(in2, sizeof in2, "%s/pd_mem_big.data", t_tmpdir());
    snprintf(out, sizeof out, "%s/pd_mem.json", t_tmpdir());
    T_CHECK(write_bytes(in, f, len) == 0);
    /* The data section's start at 60 MiB (under the reader's 64 MiB), the
     * file a few hundred bytes long. */
    uint8_t *g = malloc(len);
    memcpy(g, f, len);
    uint64_t big = 60u << 20;
    for (int k = 0; k < 8; k++)
        g[40 + k] = (uint8_t)(big >> (8 * k));
    T_CHECK(write_bytes(in2, g, len) == 0);
    static const char *const limits[] = {"1M", "8M", "32M", "64M"};
    for (size_t i = 0; i < 4; i++) {
        const char *files[] = {in, in2};
        for (int k = 0; k < 2; k++) {
            run_result rr;
            unlink(out);
            const char *args[] = {files[k], "--max-memory", limits[i], "-o", out, NULL};
            run(&rr, args);
            if (rr.status != 0 && rr.status != 2 && rr.status != 3)
                t_fail(__FILE__, __LINE__, "--max-memory %s on %s: status %d: %s",
                       limits[i], files[k], rr.status, rr.err);
            if (k == 1 && rr.status == 0)
                t_fail(__FILE__, __LINE__, "--max-memory %s: a cut file was read", limits[i]);
            if (rr.status == 3)
                T_CONTAINS(rr.err, "out of memory");
            if (rr.status == 2)
                T_CONTAINS(rr.err, "offset ");
            if (rr.status != 0) {
                struct stat sb;
                T_CHECK(stat(out, &sb) != 0);
            }
        }
    }
    free(g);
    free(f);
#endif
}

/* Little-endian record headers written by hand, for the two forms the
 * encoder does not build: simpleperf's 32-bit sizes and nested
 * compression. */
static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> 8 * i);
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> 8 * i);
}

/* A perf record of type, misc 0 and size 8 + len. */
static size_t put_rec(uint8_t *p, uint32_t type, const uint8_t *body, size_t len)
{
    put_u32(p, type);
    p[4] = p[5] = 0;
    p[6] = (uint8_t)((len + 8) & 0xff);
    p[7] = (uint8_t)((len + 8) >> 8);
    if (len)
        memcpy(p + 8, body, len);
    return len + 8;
}

static int convert_status(const uint8_t *d, size_t n, pc_error *err)
{
    pc_profile *p = NULL;
    int st = convert_bytes_unchecked(d, n, NULL, &p, err);
    pc_profile_free(p);
    return st;
}

/* SPLIT pieces joined into a sample before any attribute (the pipe form
 * sends its attributes as records): refused, since simpleperf splits only
 * its own records, instead of a sample read by an attribute not there. */
TEST(perfdata_errors_split_before_attributes)
{
    uint8_t f[64] = "PERFILE2";
    put_u64(f + 8, 16);
    size_t n = 16;
    /* SPLIT (32772), size 16 in simpleperf's split header, holding the
     * header of an 8-byte SAMPLE; then SPLIT_END (32773). */
    put_u32(f + n, 32772);
    f[n + 4] = 0, f[n + 5] = 0, f[n + 6] = 16, f[n + 7] = 0;
    put_u32(f + n + 8, 9);
    f[n + 12] = 0, f[n + 13] = 0, f[n + 14] = 8, f[n + 15] = 0;
    n += 16;
    put_u32(f + n, 32773);
    f[n + 4] = 0, f[n + 5] = 0, f[n + 6] = 8, f[n + 7] = 0;
    n += 8;
    pc_error err;
    T_EQ_INT(convert_status(f, n, &err), PC_EINPUT);
    T_CONTAINS(err.message, "offset 16: records joined from SPLIT pieces are not one of "
                            "simpleperf's own");
}

/* A COMPRESSED record whose data holds another COMPRESSED record (perf
 * never nests them): refused with the outer record's offset, instead of
 * decompressing into the buffer being read. */
TEST(perfdata_errors_nested_compressed)
{
    uint8_t inner[64], outer[256], f[512] = "PERFILE2";
    uint8_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    size_t ni = put_rec(inner, 81, junk, sizeof junk);
    size_t nz = ZSTD_compress(outer, sizeof outer, inner, ni, 1);
    T_CHECK(!ZSTD_isError(nz));
    if (ZSTD_isError(nz))
        return;
    /* A COMPRESSED record's size is its data's, unaligned, as perf
     * writes it (COMPRESSED2 adds a data size to allow padding). */
    put_u64(f + 8, 16);
    size_t n = 16 + put_rec(f + 16, 81, outer, nz);
    pc_error err;
    T_EQ_INT(convert_status(f, n, &err), PC_EINPUT);
    T_CONTAINS(err.message, "offset 16: a compressed record holds a record of type 81");
}
