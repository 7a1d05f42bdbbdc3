/* Reading on a second thread changes nothing but the time: the same
 * profile, byte for byte, and the same errors, as with one thread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "corpus.h"
#include "fixtures.h"
#include "t.h"
#include "test_util.h"

/* After a conversion of status st: p's processed JSON (malloc'd in
 * *out), or st; p is freed either way. */
static int written(int st, pc_profile *p, unsigned char **out, size_t *n, pc_error *err)
{
    if (st == PC_OK) {
        pc_write_options w;
        pc_write_options_init(&w);
        st = pc_write_memory(p, &w, out, n, err);
    }
    pc_profile_free(p);
    return st;
}

/* What a conversion logged, one line after another. */
typedef struct logbuf {
    char text[4096];
    size_t len;
} logbuf;

static void log_to(void *ctx, int level, const char *message)
{
    logbuf *l = ctx;
    int k = snprintf(l->text + l->len, sizeof l->text - l->len, "%d %s\n", level, message);
    if (k > 0)
        l->len = l->len + (size_t)k < sizeof l->text ? l->len + (size_t)k : sizeof l->text - 1;
}

static int keep_going;

/* Converts with the given thread count and writes the processed JSON
 * (malloc'd in *out) or returns the error; what was logged in *l. */
static int convert_with(const void *data, size_t len, int threads, unsigned char **out,
                        size_t *n, pc_error *err, logbuf *l)
{
    pc_options o;
    pc_options_init(&o);
    o.threads = threads;
    o.keep_going = keep_going;
    l->len = 0;
    l->text[0] = 0;
    o.log = log_to;
    o.log_ctx = l;
    pc_profile *p = NULL;
    *out = NULL;
    *n = 0;
    int st = convert_bytes(data, len, &o, &p, err);
    return written(st, p, out, n, err);
}

static const int counts[] = {0, 4};
enum { N_COUNTS = sizeof counts / sizeof *counts };

/* Same status, same message or same bytes, and the same warnings, with
 * one thread as with counts[from..to): the default and four (the framing
 * thread, two more decoding, and the calling one). */
static void same_with(const void *data, size_t len, const char *what, size_t from, size_t to)
{
    unsigned char *a, *b;
    size_t na, nb;
    pc_error ea, eb;
    static logbuf la, lb;
    int sa = convert_with(data, len, 1, &a, &na, &ea, &la);
    for (size_t c = from; c < to; c++) {
        int sb = convert_with(data, len, counts[c], &b, &nb, &eb, &lb);
        if (sa != sb)
            t_fail(__FILE__, __LINE__, "%s: status %d with one thread, %d with %d", what, sa,
                   sb, counts[c]);
        else if (sa != PC_OK && strcmp(ea.message, eb.message) != 0)
            t_fail(__FILE__, __LINE__, "%s: \"%s\" with one thread, \"%s\" with %d", what,
                   ea.message, eb.message, counts[c]);
        else if (sa == PC_OK && (na != nb || memcmp(a, b, na) != 0))
            t_fail(__FILE__, __LINE__, "%s: outputs differ (%zu and %zu bytes)", what, na, nb);
        else if (strcmp(la.text, lb.text) != 0)
            t_fail(__FILE__, __LINE__, "%s: logged \"%s\" with one thread, \"%s\" with %d",
                   what, la.text, lb.text, counts[c]);
        free(b);
    }
    free(a);
}

static void same_both_ways(const void *data, size_t len, const char *what)
{
    same_with(data, len, what, 0, N_COUNTS);
}

static void corpus_case(const corpus_row *row)
{
    char rel[512];
    snprintf(rel, sizeof rel, "%s", row->col[M_FILE]);
    size_t len;
    unsigned char *data = corpus_read(rel, &len);
    if (!data) {
        t_fail(__FILE__, __LINE__, "%s: unreadable", rel);
        return;
    }
    same_both_ways(data, len, corpus_base(row));
    free(data);
}

TEST(threads_corpus_same_output)
{
    corpus_each("input", NULL, "threads_corpus_same_output", corpus_case);
}

/* Every truncation and a byte flip at every offset of the fixture: the
 * same message (offset, record) either way.  Batches end and begin
 * anywhere, so errors surface at any point of the hand-over.  Each
 * offset meets one thread count when cut there and the other when flipped
 * there: each threaded conversion here starts and stops its threads for a
 * few kilobytes, and with every count for each damage this test alone
 * took 4-5 s of a loaded machine's suite. */
TEST_SLOW(threads_damage_same_errors)
{
    spe e;
    fx_android(&e);
    size_t len = e.out.len;
    unsigned char *buf = malloc(len);
    for (size_t cut = 0; cut < len; cut++)
        same_with(e.out.data, cut, "truncated", cut % N_COUNTS, cut % N_COUNTS + 1);
    for (size_t i = 0; i < len; i++) {
        memcpy(buf, e.out.data, len);
        buf[i] ^= 0x5a;
        same_with(buf, len, "flipped", (i + 1) % N_COUNTS, (i + 1) % N_COUNTS + 1);
    }
    free(buf);
    spe_free(&e);
}

/* A recording of n samples over 5 threads, one event type and one file
 * of 3 symbols: sample i has depth 3 (deep unset) or 12 + i % 12 of 24
 * frames, and event type 7, which MetaInfo does not define, when i is
 * bad_at. */
static void make_recording(spe *e, uint32_t n, int deep, uint32_t bad_at)
{
    spe_begin(e);
    const char *ev[] = {"cpu-clock"};
    spe_meta(e, ev, 1, NULL, NULL, NULL, NULL, 0);
    spe_frame chain[24];
    for (int k = 0; k < 24; k++)
        chain[k] = (spe_frame){0x1000 + 0x10 * (uint64_t)k, 0, k % 3, -1};
    for (uint32_t i = 0; i < n; i++)
        spe_sample(e, 1000 + i, (int32_t)(1 + i % 5), 1 + i % 7, i == bad_at ? 7 : 0, chain,
                   deep ? 12 + i % 12 : 3, NULL);
    const char *syms[] = {"a", "b", "c"};
    spe_file(e, 0, "/lib/x.so", syms, 3);
    spe_end(e);
}

/* Caller paths past what a core's cache holds (6,000 of 35 entries, about
 * 2 MB), each met again: the decoding threads find each sample's path
 * ahead and fetch what its lookup reads; the profile is the same. */
TEST(threads_many_caller_paths_same_output)
{
    spe e;
    spe_begin(&e);
    const char *ev[] = {"cpu-clock"};
    spe_meta(&e, ev, 1, NULL, NULL, NULL, NULL, 0);
    spe_frame chain[36];
    for (uint32_t i = 0; i < 18000; i++) {
        uint32_t path = (i * 7919) % 6000;
        for (int k = 1; k < 36; k++)
            chain[k] = (spe_frame){0x100000 + 0x40 * (uint64_t)path + (uint64_t)k, 0,
                                   (int32_t)((path + (uint32_t)k) % 3), -1};
        chain[0] = (spe_frame){0x9000 + 4 * (uint64_t)(i % 5), 0, 1, -1};
        spe_sample(&e, 1000 + i, (int32_t)(1 + path % 5), 1, 0, chain, 36, NULL);
    }
    const char *syms[] = {"a", "b", "c"};
    spe_file(&e, 0, "/lib/x.so", syms, 3);
    spe_end(&e);
    same_both_ways(e.out.data, e.out.len, "many caller paths");
    spe_free(&e);
}

/* Damaged records skipped with keep_going, in batches all along a long
 * file: the same records skipped, the same count and first message, the
 * same profile. */
TEST(threads_keep_going_same_skips)
{
    spe e;
    make_recording(&e, 6000, 0, UINT32_MAX);
    /* Damage the protobuf of records here and there (never a size prefix:
     * a broken frame ends the file, which the truncations test). */
    unsigned char *buf = malloc(e.out.len);
    memcpy(buf, e.out.data, e.out.len);
    size_t pos = 12, k = 0, damaged = 0;
    while (pos + 4 <= e.out.len) {
        uint32_t size = (uint32_t)buf[pos] | (uint32_t)buf[pos + 1] << 8 |
                        (uint32_t)buf[pos + 2] << 16 | (uint32_t)buf[pos + 3] << 24;
        if (size == 0)
            break;
        if (k++ % 397 == 5) {
            buf[pos + 4] = 0xff;  /* a field number and wire type no record has */
            damaged++;
        }
        pos += 4 + size;
    }
    T_CHECK(damaged > 10);
    keep_going = 1;
    same_both_ways(buf, e.out.len, "damaged, keep going");
    logbuf l;
    unsigned char *out;
    size_t n;
    pc_error err;
    T_EQ_INT(convert_with(buf, e.out.len, 4, &out, &n, &err, &l), PC_OK);
    char want[64];
    snprintf(want, sizeof want, "%zu damaged records skipped", damaged);
    T_CONTAINS(l.text, want);
    free(out);
    keep_going = 0;
    free(buf);
    spe_free(&e);
}

/* gzip input decompressed ahead on a thread of its own: the same profile,
 * and where the compressed data is damaged or cut, the same message, as
 * when it is decompressed in place.  The input spans several of the
 * 1 MiB chunks the decompression hands over. */
TEST(threads_gzip_input_same_output_and_errors)
{
    spe e;
    make_recording(&e, 24000, 1, UINT32_MAX);
    T_CHECK(e.out.len > (3u << 20));
    unsigned char *gz;
    size_t n = gzip_bytes(e.out.data, e.out.len, &gz);
    same_both_ways(gz, n, "gzip");
    unsigned char *bad = malloc(n);
    for (size_t k = 1; k < 12; k++) {
        size_t at = n / 12 * k;
        same_both_ways(gz, at, "gzip cut");
        memcpy(bad, gz, n);
        bad[at] ^= 0x21;
        same_both_ways(bad, n, "gzip damaged");
    }
    /* The trailer's CRC: every byte decompresses, then the check fails. */
    memcpy(bad, gz, n);
    bad[n - 6] ^= 1;
    same_both_ways(bad, n, "gzip CRC");
    free(bad);
    free(gz);
    spe_free(&e);
}

/* More records than one batch holds, with errors in late batches: a
 * sample whose event type is out of range, found by the model builder; a
 * truncation, found by the framing; a damaged record, found by decoding
 * (on whichever thread decodes its batch); and fields this version does
 * not know, first seen in a late batch. */
TEST(threads_many_batches)
{
    spe e;
    make_recording(&e, 20000, 0, 15000);
    same_both_ways(e.out.data, e.out.len, "event out of range");
    same_both_ways(e.out.data, e.out.len * 2 / 3, "truncated late");
    spe_free(&e);
    /* The same without the bad event type. */
    make_recording(&e, 20000, 0, UINT32_MAX);
    /* Record 14000's protobuf: its first byte, the Record's tag, made a
     * wire type no field has (7), and, in another copy, a field number
     * this version does not know (20, a varint, then skipped). */
    unsigned char *buf = malloc(e.out.len);
    size_t pos = 12, k = 0, at = 0;
    while (pos + 4 <= e.out.len) {
        uint32_t size = (uint32_t)e.out.data[pos] | (uint32_t)e.out.data[pos + 1] << 8 |
                        (uint32_t)e.out.data[pos + 2] << 16 | (uint32_t)e.out.data[pos + 3] << 24;
        if (++k == 14000) {
            at = pos + 4;
            break;
        }
        pos += 4 + size;
    }
    T_CHECK(at != 0);
    memcpy(buf, e.out.data, e.out.len);
    buf[at] = 0x0f;
    same_both_ways(buf, e.out.len, "damaged late");
    pc_error err;
    logbuf l;
    unsigned char *out;
    size_t n;
    T_EQ_INT(convert_with(buf, e.out.len, 4, &out, &n, &err, &l), PC_EINPUT);
    T_CONTAINS(err.message, "record 14000");
    free(out);
    /* The sample's tid field (after its time) renumbered 14, a field no
     * version knows: skipped and told of, the same way. */
    memcpy(buf, e.out.data, e.out.len);
    size_t p = at + 1;
    while (buf[p] & 0x80)
        p++;
    p++;
    T_EQ_INT(buf[p], 0x08);
    p++;
    while (buf[p] & 0x80)
        p++;
    p++;
    T_EQ_INT(buf[p], 0x10);
    buf[p] = 0x70;
    same_both_ways(buf, e.out.len, "unknown field late");
    T_EQ_INT(convert_with(buf, e.out.len, 4, &out, &n, &err, &l), PC_OK);
    T_CONTAINS(l.text, "field 14 in record 14000");
    free(out);
    free(buf);
    spe_free(&e);
}

/* Conversions and writes of different profiles on several threads at once
 * share nothing: each gives the bytes it gives alone.  A race shows under
 * ThreadSanitizer (make TSAN=1 check T=threads, which .ci/run runs with
 * halt_on_error). */
typedef struct job {
    const spe *input;
    const unsigned char *want[3];
    size_t want_len[3];
    int bad;
} job;

static const int job_formats[3] = {PC_FORMAT_FIREFOX, PC_FORMAT_GECKO, PC_FORMAT_SPEEDSCOPE};

static int convert_write(const spe *in, int format, unsigned char **out, size_t *n)
{
    pc_profile *p = NULL;
    pc_error err;
    pc_write_options w;
    pc_write_options_init(&w);
    w.format = format;
    int st = convert_bytes(in->out.data, in->out.len, NULL, &p, &err);
    if (st == PC_OK)
        st = pc_write_memory(p, &w, out, n, &err);
    pc_profile_free(p);
    return st;
}

static void *run_job(void *arg)
{
    job *j = arg;
    for (int round = 0; round < 25 && !j->bad; round++)
        for (int f = 0; f < 3; f++) {
            unsigned char *out = NULL;
            size_t n = 0;
            j->bad |= convert_write(j->input, job_formats[f], &out, &n) != PC_OK ||
                      n != j->want_len[f] || memcmp(out, j->want[f], n) != 0;
            free(out);
        }
    return NULL;
}

TEST(threads_concurrent_conversions)
{
    enum { N = 4 };
    spe in[2];
    fx_android(&in[0]);
    fx_android(&in[1]);
    job jobs[N];
    unsigned char *ref[2][3] = {{0}};
    size_t ref_len[2][3] = {{0}};
    for (int k = 0; k < 2; k++)
        for (int f = 0; f < 3; f++)
            T_EQ_INT(convert_write(&in[k], job_formats[f], &ref[k][f], &ref_len[k][f]), PC_OK);
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        jobs[i].input = &in[i % 2];
        for (int f = 0; f < 3; f++) {
            jobs[i].want[f] = ref[i % 2][f];
            jobs[i].want_len[f] = ref_len[i % 2][f];
        }
        jobs[i].bad = 0;
        T_EQ_INT(pthread_create(&th[i], NULL, run_job, &jobs[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        T_EQ_INT(jobs[i].bad, 0);
    }
    for (int k = 0; k < 2; k++) {
        for (int f = 0; f < 3; f++)
            free(ref[k][f]);
        spe_free(&in[k]);
    }
}

/* A damaged record read from a pipe that stays open: the conversion fails
 * at once, as with one thread, instead of waiting for the pipe to send a
 * batch's worth or to close (the framing thread hands over what it has
 * before waiting, and is stopped when the build fails).  Plain and
 * gzipped (decompressed ahead on a thread of its own).  A child converts;
 * an alarm ends it should it wait. */
static void pipe_case(const unsigned char *data, size_t len, const char *what)
{
    t_case("threads_pipe_error_without_waiting: %s", what);
    pipe_fails_at_once(data, len, 0, "record 1:");
}

TEST(threads_pipe_error_without_waiting)
{
    /* The header, a record of 5 bytes whose first field claims more, and
     * the start of a record of 2 GB: past the 4 KiB format detection
     * reads first. */
    static unsigned char bad[8192];
    static const unsigned char head[] = {'S', 'I', 'M', 'P', 'L', 'E', 'P', 'E', 'R', 'F', 1, 0,
                                         5, 0, 0, 0, 0x0a, 0x7f, 0xff, 0xff, 0xff};
    memset(bad, 0x7f, sizeof bad);
    memcpy(bad, head, sizeof head);
    pipe_case(bad, sizeof bad, "plain");
    unsigned char *gz;
    size_t n = gzip_bytes(bad, sizeof bad, &gz);
    pipe_case(gz, n, "gzip");
    free(gz);
}

/* gzip input from a pipe written in small pieces, so that what each read
 * brings, and so how the decompressed chunks fall, is up to timing: the
 * same profile, and for damaged data the same message, as from memory. */
/* Converts in (and closes it); its processed JSON in *out. */
static int convert_opened(pc_input *in, unsigned char **out, size_t *n, pc_error *err)
{
    pc_profile *p = NULL;
    int st = pc_convert(in, NULL, &p, err);
    pc_input_close(in);
    return written(st, p, out, n, err);
}

static int convert_piped(const unsigned char *data, size_t len, unsigned char **out,
                         size_t *n, pc_error *err, char path[64])
{
    int fds[2];
    T_EQ_INT(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        signal(SIGPIPE, SIG_DFL);
        for (size_t at = 0; at < len; at += 997) {
            size_t k = len - at < 997 ? len - at : 997;
            if (write(fds[1], data + at, k) != (ssize_t)k)
                _exit(1);
        }
        _exit(0);
    }
    close(fds[1]);
    snprintf(path, 64, "/dev/fd/%d", fds[0]);
    pc_input *in;
    *out = NULL;
    *n = 0;
    int st = pc_input_open(&in, path, err);
    if (st == PC_OK)
        st = convert_opened(in, out, n, err);
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    return st;
}

TEST(threads_gzip_pipe_same_as_memory)
{
    spe e;
    make_recording(&e, 8000, 1, UINT32_MAX);
    unsigned char *gz;
    size_t n = gzip_bytes(e.out.data, e.out.len, &gz);
    unsigned char *bad = malloc(n);
    for (int round = 0; round < 4; round++) {
        memcpy(bad, gz, n);
        if (round == 1)
            bad[n / 2] ^= 0x21;   /* damaged in the middle */
        else if (round == 2)
            bad[n - 6] ^= 1;      /* the trailer's CRC */
        size_t len = round == 3 ? n * 2 / 3 : n;  /* cut */
        unsigned char *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        pc_error ea, eb;
        char path[64];
        int sb = convert_piped(bad, len, &b, &nb, &eb, path);
        /* From memory under the same name, decompressed in whole chunks. */
        pc_input *in;
        int sa = pc_input_open_memory(&in, bad, len, path, &ea);
        if (sa == PC_OK)
            sa = convert_opened(in, &a, &na, &ea);
        T_EQ_INT(sb, sa);
        if (sa != PC_OK && sb == sa)
            T_EQ_STR(eb.message, ea.message);
        T_CHECK(sa != PC_OK || (na == nb && memcmp(a, b, na) == 0));
        T_CHECK(round == 0 ? sa == PC_OK : sa != PC_OK);
        free(a);
        free(b);
    }
    free(bad);
    free(gz);
    spe_free(&e);
}
