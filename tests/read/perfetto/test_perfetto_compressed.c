/* Compressed packets are decoded as they are decompressed: memory holds
 * the packet being read, not what the compressed data expands to.  Zip
 * bombs of both codecs go through the command line under a watch of its
 * peak memory and time; the same profile comes out however the packets
 * are split among compressed packets and decoding steps; the errors of a
 * damaged stream and of the packets inside it; the fuzz target's seeds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "pf_fixtures.h"
#include "fuzz.h"
#include "t.h"
#include "test_util.h"


/* ---- Zip bombs ---- */

enum { UNIT_CHUNK = 1 << 20 };

static void deflate_into(z_stream *z, const void *in, size_t n, int flush, pb_buf *out)
{
    uint8_t buf[16384];
    z->next_in = (Bytef *)(uintptr_t)in;
    z->avail_in = (uInt)n;
    do {
        z->next_out = buf;
        z->avail_out = sizeof buf;
        deflate(z, flush);
        pb_raw(out, buf, sizeof buf - z->avail_out);
    } while (z->avail_out == 0 || z->avail_in);
}

/* A zlib stream of prefix then total bytes repeating unit (which divides
 * UNIT_CHUNK), at zlib's best ratio (about 1000 to 1).  Compressing a
 * gigabyte takes seconds, so only the first chunks are compressed: each
 * chunk ends with a full flush, after which nothing refers back, and the
 * chunks after the second repeat its bytes; the checksum at the end is
 * patched to that of the whole.  Returns 0, or -1 when the repeat does
 * not hold. */
static int zlib_bomb(pb_buf *out, const void *prefix, size_t np, const uint8_t *unit,
                     size_t nu, uint64_t total)
{
    uint8_t *chunk = malloc(UNIT_CHUNK);
    if (!chunk)
        return -1;
    for (size_t i = 0; i < UNIT_CHUNK; i++)
        chunk[i] = unit[i % nu];
    uLong chunk_sum = adler32(adler32(0, NULL, 0), chunk, UNIT_CHUNK);
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit(&z, 9);
    uLong sum = adler32(adler32(0, NULL, 0), prefix, (uInt)np);
    deflate_into(&z, prefix, np, Z_NO_FLUSH, out);
    uint64_t left = total;
    size_t rep_at = 0, rep_len = 0;
    int st = 0;
    for (int i = 0; left > UNIT_CHUNK; i++) {
        if (i < 3) {
            size_t at = out->len;
            deflate_into(&z, chunk, UNIT_CHUNK, Z_FULL_FLUSH, out);
            if (i == 1) {
                rep_at = at;
                rep_len = out->len - at;
            } else if (i == 2 && (out->len - at != rep_len ||
                                  memcmp(out->data + at, out->data + rep_at, rep_len))) {
                st = -1;
                break;
            }
        } else {
            uint8_t *copy = malloc(rep_len);
            if (!copy) {
                st = -1;
                break;
            }
            memcpy(copy, out->data + rep_at, rep_len);
            pb_raw(out, copy, rep_len);
            free(copy);
        }
        sum = adler32_combine(sum, chunk_sum, UNIT_CHUNK);
        left -= UNIT_CHUNK;
    }
    if (st == 0) {
        deflate_into(&z, chunk, (size_t)left, Z_FINISH, out);
        sum = adler32_combine(sum, adler32(adler32(0, NULL, 0), chunk, (uInt)left), (z_off_t)left);
        for (int k = 0; k < 4 && out->len >= 4; k++)
            out->data[out->len - 4 + k] = (uint8_t)(sum >> (24 - 8 * k));
    }
    deflateEnd(&z);
    free(chunk);
    return out->oom ? -1 : st;
}

/* The same as one zstd frame of unknown size, as Perfetto's streaming
 * compressor writes them (zstd compresses a gigabyte of a repeated unit
 * in a fraction of a second, to some 30 kB), with a window of 2^wlog
 * bytes (0: the level's). */
static int zstd_bomb(pb_buf *out, const void *prefix, size_t np, const uint8_t *unit,
                     size_t nu, uint64_t total, int wlog)
{
    uint8_t *chunk = malloc(UNIT_CHUNK), buf[65536];
    ZSTD_CCtx *c = ZSTD_createCCtx();
    if (!chunk || !c) {
        free(chunk);
        ZSTD_freeCCtx(c);
        return -1;
    }
    for (size_t i = 0; i < UNIT_CHUNK; i++)
        chunk[i] = unit[i % nu];
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
    if (wlog)
        ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, wlog);
    int st = 0;
    uint64_t left = total;
    for (int first = 1; st == 0; first = 0) {
        ZSTD_inBuffer in = {chunk, left < UNIT_CHUNK ? (size_t)left : UNIT_CHUNK, 0};
        if (first)
            in = (ZSTD_inBuffer){prefix, np, 0};
        else
            left -= in.size;
        ZSTD_EndDirective how = !first && left == 0 ? ZSTD_e_end : ZSTD_e_continue;
        size_t more;
        do {
            ZSTD_outBuffer o = {buf, sizeof buf, 0};
            more = ZSTD_compressStream2(c, &o, &in, how);
            if (ZSTD_isError(more)) {
                st = -1;
                break;
            }
            pb_raw(out, buf, o.pos);
        } while (in.pos < in.size || (how == ZSTD_e_end && more));
        if (how == ZSTD_e_end)
            break;
    }
    ZSTD_freeCCtx(c);
    free(chunk);
    return out->oom ? -1 : st;
}

typedef struct run_result {
    int exit;          /* exit status, or -1 when killed by a signal */
    double cpu_s;      /* user and system time */
} run_result;

/* Runs profconv with args (NULL-terminated), stderr to errf.  A helper
 * process waits for it alone, so that the children's time getrusage
 * gives is that run's.  (Not their peak memory: a child forked from this
 * process starts with its peak.) */
static int run_measured(char *const args[], const char *errf, run_result *res)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t helper = fork();
    if (helper < 0)
        return -1;
    if (helper == 0) {
        close(fd[0]);
        pid_t pid = fork();
        if (pid == 0) {
            /* A conversion that runs away is stopped rather than waited
             * for. */
            struct rlimit cpu = {60, 60};
            setrlimit(RLIMIT_CPU, &cpu);
            if (!freopen(errf, "w", stderr))
                _exit(126);
            execv(t_profconv(), args);
            _exit(127);
        }
        int ws = 0;
        waitpid(pid, &ws, 0);
        struct rusage ru;
        getrusage(RUSAGE_CHILDREN, &ru);
        run_result r = {WIFEXITED(ws) ? WEXITSTATUS(ws) : -1,
                        (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                            (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6};
        ssize_t w = write(fd[1], &r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], res, sizeof *res);
    close(fd[0]);
    waitpid(helper, NULL, 0);
    return got == (ssize_t)sizeof *res ? 0 : -1;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        p[n++] = (uint8_t)(v | 0x80);
    p[n++] = (uint8_t)v;
    return n;
}

/* The sanitizers reserve more address space than any limit and take
 * several times the time: there the bombs are only checked to end with
 * their verdict. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif
#define BOMB_CPU_S 5.0

/* A megabyte of zlib (or a few kB of zstd) that decompresses to a
 * gigabyte: zeros, which are no Trace; empty packets (a quarter of a
 * gigabyte, four times the limit: each of its 134 million packets is
 * read, 1.6 s for the whole gigabyte); a valid packet then zeros; one
 * packet claiming the gigabyte; a Trace field holding it (passed over).
 * Then the most a conversion holds by design: a packet of 16 MiB in a
 * zstd stream with a 32 MiB window.  Each is converted by the
 * command line with --max-memory 64M (so its peak stays below 64 MB) in
 * a few seconds, to a verdict: the error, or nothing to show. */
TEST_SLOW(perfetto_compressed_bombs)
{
    static const uint8_t zeros[2] = {0, 0}, empty[2] = {0x0a, 0x00};
    pb_buf snap = {0};
    snapshot(&snap, 500000000);
    const uint64_t gig = (uint64_t)1 << 30, big = (uint64_t)16 << 20;
    uint8_t huge_packet[16], huge_field[16], big_packet[16];
    huge_packet[0] = 0x0a;
    size_t n_huge = 1 + put_varint(huge_packet + 1, gig);
    huge_field[0] = 0x12;
    size_t n_field = 1 + put_varint(huge_field + 1, gig);
    /* A packet of 16 MiB holding one field this reader does not know. */
    big_packet[0] = 0x0a;
    size_t n_big = 1 + put_varint(big_packet + 1, big);
    big_packet[n_big++] = 0x7a;
    n_big += put_varint(big_packet + n_big, big - 5);
    const struct {
        const char *name;
        int codecs;           /* 1 zlib, 2 zstd */
        const uint8_t *prefix;
        size_t np;
        const uint8_t *unit;
        uint64_t total;
        int wlog;
        /* What the conversion says: in its error, or nothing to show. */
        const char *want;
    } bombs[] = {
        {"zeros", 3, NULL, 0, zeros, gig, 0,
         "(in the compressed packets here, at decompressed byte 0): Trace: "},
        {"empty packets", 3, NULL, 0, empty, gig / 4, 0, ": nothing to show: "},
        {"a packet, then zeros", 3, snap.data, snap.len, zeros, gig, 0,
         "packet 2 (in the compressed packets here, at decompressed byte 34): Trace: "},
        {"one packet of a gigabyte", 3, huge_packet, n_huge, zeros, gig, 0,
         "packet 2 (in the compressed packets here, at decompressed byte 0): the packet "
         "claims 1073741824 bytes"},
        /* zlib inflates a gigabyte in two seconds; the field passed over
         * is the same with zstd. */
        {"a gigabyte outside packets", 2, huge_field, n_field, zeros, gig, 0,
         ": nothing to show: "},
        {"a packet of 16 MiB in a window of 32 MiB", 2, big_packet, n_big, zeros, big - 5, 25,
         ": nothing to show: "},
    };
    char path[600], errf[700], out[700];
    snprintf(path, sizeof path, "%s/bomb.trace", t_tmpdir());
    snprintf(errf, sizeof errf, "%s/bomb.err", t_tmpdir());
    snprintf(out, sizeof out, "%s/bomb.json", t_tmpdir());
    for (int zstd = 0; zstd < 2; zstd++)
        for (size_t i = 0; i < sizeof bombs / sizeof *bombs; i++) {
            if (!(bombs[i].codecs & (1 << zstd)))
                continue;
            t_case("perfetto_compressed_bombs: %s, %s", zstd ? "zstd" : "zlib", bombs[i].name);
            pb_buf z = {0}, trace = {0};
            int made = zstd ? zstd_bomb(&z, bombs[i].prefix, bombs[i].np, bombs[i].unit, 2,
                                        bombs[i].total, bombs[i].wlog)
                            : zlib_bomb(&z, bombs[i].prefix, bombs[i].np, bombs[i].unit, 2,
                                        bombs[i].total);
            if (made != 0) {
                t_fail(__FILE__, __LINE__, "cannot make the compressed data");
                pb_buf_free(&z);
                continue;
            }
            size_t pk = pfe_packet(&trace, 0);
            pb_bytes(&trace, zstd ? 133 : 50, z.data, z.len);
            pb_end(&trace, pk);
            pb_buf_free(&z);
            /* zlib's gigabyte fits in about a megabyte. */
            T_CHECK(trace.len < ((size_t)3 << 20) / 2);
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(trace.data, 1, trace.len, f) != trace.len) {
                t_fail(__FILE__, __LINE__, "cannot write %s", path);
                if (f)
                    fclose(f);
                pb_buf_free(&trace);
                continue;
            }
            fclose(f);
            pb_buf_free(&trace);

            char *plain[] = {"profconv", "-q", path, "-o", out, NULL};
            char *limited[] = {"profconv", "-q", "--max-memory", "64M", path, "-o", out, NULL};
            run_result res;
            if (run_measured(SANITIZED ? plain : limited, errf, &res) != 0) {
                t_fail(__FILE__, __LINE__, "cannot run %s", t_profconv());
                continue;
            }
            char *e = read_text(errf);
            if (res.exit != 0 && res.exit != 2)
                t_fail(__FILE__, __LINE__, "exit %d: %s", res.exit, e ? e : "");
            T_CONTAINS(e, bombs[i].want);
            if (!SANITIZED && res.cpu_s > BOMB_CPU_S)
                t_fail(__FILE__, __LINE__, "took %.1f s, over %.0f s", res.cpu_s, BOMB_CPU_S);
            if (getenv("PROFCONV_TEST_VERBOSE"))
                printf("  %s: exit %d, %.2f s: %s", bombs[i].name, res.exit, res.cpu_s,
                       e ? e : "\n");
            free(e);
        }
    pb_buf_free(&snap);
}

/* ---- The same profile however the packets come ---- */

/* The packets of a trace: where each begins, and the end. */
static size_t packet_starts(const pb_buf *b, size_t *at, size_t cap)
{
    size_t n = 0, pos = 0;
    while (pos < b->len && n < cap) {
        const uint8_t *p = b->data + pos + 1;
        uint64_t len;
        if (pb_varint(&p, b->data + b->len, &len) != PB_OK)
            break;
        at[n++] = pos;
        pos = (size_t)(p - b->data) + (size_t)len;
    }
    at[n] = pos;
    return n;
}

/* A length in exactly three bytes, so that a field's size is exactly
 * what is asked. */
static void len3(pb_buf *b, size_t v)
{
    uint8_t x[3] = {(uint8_t)(v | 0x80), (uint8_t)((v >> 7) | 0x80), (uint8_t)(v >> 14)};
    pb_raw(b, x, sizeof x);
}

/* total bytes (8 to 2 MiB) of padding: a packet holding only a field the
 * reader does not know, or a Trace field that is not a packet. */
static void padding(pb_buf *b, size_t total, int as_packet)
{
    static const uint8_t zeros[4096];
    if (as_packet) {
        pb_tag(b, 1, PB_LEN);
        len3(b, total - 4);
        total -= 4;
    }
    pb_tag(b, as_packet ? 15 : 2, PB_LEN);
    len3(b, total - 4);
    for (size_t left = total - 4; left;) {
        size_t n = left < sizeof zeros ? left : sizeof zeros;
        pb_raw(b, zeros, n);
        left -= n;
    }
}

/* A packet of total bytes whose one field holds bytes from a fixed
 * pseudo-random sequence, which compression cannot shrink. */
static void noise_packet(pb_buf *b, size_t total)
{
    pb_tag(b, 1, PB_LEN);
    len3(b, total - 4);
    pb_tag(b, 15, PB_LEN);
    len3(b, total - 8);
    uint32_t x = 12345;
    for (size_t i = 0; i < total - 8; i++) {
        x = x * 1103515245u + 12345u;
        uint8_t byte = (uint8_t)(x >> 16);
        pb_raw(b, &byte, 1);
    }
}

static char *processed_of_bytes(const pb_buf *b)
{
    pc_profile *p = convert_buf(b, NULL);
    char *s = p ? processed_of(p) : NULL;
    pc_profile_free(p);
    return s;
}

/* The fixtures' perf and heap trace gives the same processed profile
 * plain, in one compressed packet or one per packet, and with padding
 * that puts the end of the reader's first decoding step (128 KiB) at
 * every place of the first packets, in a packet or in a Trace field that
 * is not one, or a padding packet of several steps before them. */
TEST(perfetto_compressed_same_profile)
{
    pb_buf plain = {0};
    fx_perf(&plain);
    fx_heap(&plain);
    size_t at[64];
    size_t n = packet_starts(&plain, at, 63);
    char *want = processed_of_bytes(&plain);
    if (!want)
        return;
    const size_t step = (size_t)128 << 10;
    for (int zstd = 0; zstd < 2; zstd++) {
        t_case("perfetto_compressed_same_profile: %s, one per packet", zstd ? "zstd" : "zlib");
        pb_buf b = {0};
        for (size_t i = 0; i < n; i++) {
            pb_buf one = {0};
            pb_raw(&one, plain.data + at[i], at[i + 1] - at[i]);
            pfe_compressed(&b, &one, zstd);
            pb_buf_free(&one);
        }
        char *got = processed_of_bytes(&b);
        T_EQ_STR(got, want);
        free(got);
        pb_buf_free(&b);
    }
    /* Where the step ends: so many bytes into the packets (0: none
     * padding), or, past the end of the table, a padding packet of
     * several steps. */
    static const size_t into[] = {0, 1, 2, 3, 4, 5, 7, 9, 12, 20, 33, 50, 64, 90, 120, 160, 200, 300};
    for (size_t k = 0; k <= sizeof into / sizeof *into; k++)
        for (int as_packet = 0; as_packet < 2; as_packet++) {
            int zstd = (int)(k + (size_t)as_packet) % 2;
            int big = k == sizeof into / sizeof *into;
            size_t pad = big ? 3 * step + 17 : into[k] ? step - into[k] : 0;
            t_case("perfetto_compressed_same_profile: %s, %zu bytes of padding %s",
                   zstd ? "zstd" : "zlib", pad, as_packet ? "in a packet" : "outside packets");
            pb_buf inner = {0}, b = {0};
            if (pad)
                padding(&inner, pad, as_packet);
            pb_raw(&inner, plain.data, plain.len);
            pfe_compressed(&b, &inner, zstd);
            char *got = processed_of_bytes(&b);
            T_EQ_STR(got, want);
            free(got);
            pb_buf_free(&inner);
            pb_buf_free(&b);
        }
    /* A Trace field that is a number, cut by the step's end between its
     * tag and its value. */
    t_case("perfetto_compressed_same_profile: a number across the step's end");
    {
        static const uint8_t number[] = {0x18, 0x96, 0x01};
        pb_buf inner = {0}, b = {0};
        padding(&inner, step - 1, 0);
        pb_raw(&inner, number, sizeof number);
        pb_raw(&inner, plain.data, plain.len);
        pfe_compressed(&b, &inner, 0);
        char *got = processed_of_bytes(&b);
        T_EQ_STR(got, want);
        free(got);
        pb_buf_free(&inner);
        pb_buf_free(&b);
    }
    /* Half the packets compressed, with a packet of noise as long as
     * several steps between them, the rest plain. */
    t_case("perfetto_compressed_same_profile: half compressed");
    pb_buf inner = {0}, b = {0};
    pb_raw(&inner, plain.data, at[n / 2]);
    noise_packet(&inner, 2 * step + 5);
    pfe_compressed(&b, &inner, 0);
    pb_raw(&b, plain.data + at[n / 2], plain.len - at[n / 2]);
    char *got = processed_of_bytes(&b);
    T_EQ_STR(got, want);
    free(got);
    pb_buf_free(&inner);
    pb_buf_free(&b);
    free(want);
    pb_buf_free(&plain);
}

/* ---- Errors ---- */

/* Where the first field of the packet at byte at of b is: the offset
 * errors of the compressed stream in that packet name. */
static size_t payload_offset(const pb_buf *b, size_t at)
{
    const uint8_t *p = b->data + at + 1;
    uint64_t len;
    pb_varint(&p, b->data + b->len, &len);
    return (size_t)(p - b->data);
}

static void expect_error(const pb_buf *b, const char *want)
{
    pc_profile *p = NULL;
    pc_error err;
    int st = convert_bytes(b->data, b->len, NULL, &p, &err);
    T_EQ_INT(st, PC_EINPUT);
    if (st != PC_OK)
        T_CONTAINS(err.message, want);
    pc_profile_free(p);
}

/* The compressed packet alone, of inner compressed by zlib or zstd, to
 * clen bytes of the compressed data (0: all). */
static void compressed_alone(pb_buf *b, const pb_buf *inner, int zstd, size_t clen)
{
    pb_buf whole = {0};
    pfe_compressed(&whole, inner, zstd);
    const uint8_t *p = whole.data + 1;
    uint64_t len, tag, n;
    pb_varint(&p, whole.data + whole.len, &len);
    pb_varint(&p, whole.data + whole.len, &tag);
    pb_varint(&p, whole.data + whole.len, &n);
    size_t pk = pfe_packet(b, 0);
    pb_bytes(b, (uint32_t)(tag >> 3), p, clen ? clen : (size_t)n);
    pb_end(b, pk);
    pb_buf_free(&whole);
}

/* The errors of a compressed stream name the compressed packet, those of
 * the packets inside it where in the decompressed bytes they are. */
TEST(perfetto_compressed_errors)
{
    pb_buf plain = {0};
    fx_perf(&plain);
    for (int zstd = 0; zstd < 2; zstd++) {
        /* A stream cut after packets were read: the compressed packet
         * is named, where it is in the input. */
        t_case("perfetto_compressed_errors: %s cut short", zstd ? "zstd" : "zlib");
        pb_buf inner = {0}, b = {0}, whole = {0};
        pb_raw(&inner, plain.data, plain.len);
        noise_packet(&inner, 100000);
        pfe_compressed(&whole, &inner, zstd);
        compressed_alone(&b, &inner, zstd, whole.len - 2000);
        char want[160];
        snprintf(want, sizeof want, "fixture: offset %zu: packet 1: %s", payload_offset(&b, 0),
                 zstd ? "zstd_compressed_packets: the data ends inside the stream"
                      : "compressed_packets: the zlib data ends inside the stream");
        expect_error(&b, want);
        pb_buf_free(&inner);
        pb_buf_free(&b);
        pb_buf_free(&whole);
    }

    t_case("perfetto_compressed_errors: a packet cut by the end of the stream");
    static const uint8_t cut[] = {0x0a, 0x05, 0x08, 0x01};
    pb_buf inner = {0}, b = {0};
    pb_raw(&inner, cut, sizeof cut);
    compressed_alone(&b, &inner, 0, 0);
    expect_error(&b, "fixture: offset 2: packet 1 (in the compressed packets here, at "
                     "decompressed byte 1): Trace: length-delimited field longer than its message");
    pb_buf_free(&inner);
    pb_buf_free(&b);

    /* A Trace field that is not a packet is passed over as it comes,
     * over several steps, and the end of the stream inside it is where
     * its length is. */
    t_case("perfetto_compressed_errors: a field cut by the end of the stream");
    static const uint8_t empty_packet[] = {0x0a, 0x02, 0x08, 0x01};
    pb_raw(&inner, empty_packet, sizeof empty_packet);
    pb_tag(&inner, 2, PB_LEN);
    len3(&inner, 1000000);
    padding(&inner, 400000, 0);
    compressed_alone(&b, &inner, 1, 0);
    expect_error(&b, "fixture: offset 2: packet 2 (in the compressed packets here, at "
                     "decompressed byte 5): Trace: length-delimited field longer than its message");
    pb_buf_free(&inner);
    pb_buf_free(&b);

    t_case("perfetto_compressed_errors: a packet that is a number");
    static const uint8_t number[] = {0x08, 0x01};
    pb_raw(&inner, number, sizeof number);
    compressed_alone(&b, &inner, 0, 0);
    expect_error(&b, "fixture: offset 2: packet 1 (in the compressed packets here, at "
                     "decompressed byte 0): Trace: field has the wrong wire type");
    pb_buf_free(&inner);
    pb_buf_free(&b);

    t_case("perfetto_compressed_errors: compressed packets inside compressed packets");
    size_t pk = pfe_packet(&inner, 0);
    pb_bytes(&inner, 50, "zz", 2);
    pb_end(&inner, pk);
    compressed_alone(&b, &inner, 0, 0);
    expect_error(&b, "packet 2 (in the compressed packets here, at decompressed byte 2): "
                     "compressed packets inside compressed packets");
    pb_buf_free(&inner);
    pb_buf_free(&b);

    /* The window a zstd frame asks for: up to 32 MiB. */
    for (int log = 25; log <= 26; log++) {
        t_case("perfetto_compressed_errors: a zstd window of 2^%d bytes", log);
        ZSTD_CCtx *c = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, log);
        size_t cap = ZSTD_compressBound(plain.len) + 64;
        uint8_t *z = malloc(cap);
        ZSTD_inBuffer in = {plain.data, plain.len, 0};
        ZSTD_outBuffer out = {z, cap, 0};
        ZSTD_compressStream2(c, &out, &in, ZSTD_e_continue);
        T_EQ_INT(ZSTD_compressStream2(c, &out, &in, ZSTD_e_end), 0);
        ZSTD_freeCCtx(c);
        pk = pfe_packet(&b, 0);
        pb_bytes(&b, 133, z, out.pos);
        pb_end(&b, pk);
        free(z);
        if (log == 25) {
            pc_profile *p = convert_buf(&b, NULL);
            T_CHECK(p && p->sample.n == 5);
            pc_profile_free(p);
        } else {
            char want[200];
            snprintf(want, sizeof want, "fixture: offset %zu: packet 1: zstd_compressed_packets: "
                     "Frame requires too much memory for decoding (a window over 32 MiB)",
                     payload_offset(&b, 0));
            expect_error(&b, want);
        }
        pb_buf_free(&b);
    }

    /* More than 2 GiB from one compressed packet: zstd makes them of a
     * few kB, in a field passed over. */
    t_case("perfetto_compressed_errors: beyond 2 GiB");
    uint8_t claim[16] = {0x12};
    size_t nc = 1 + put_varint(claim + 1, (uint64_t)3 << 30);
    pb_buf z = {0};
    static const uint8_t zero[2];
    if (zstd_bomb(&z, claim, nc, zero, 2, ((uint64_t)2 << 30) + 2, 0) == 0) {
        pk = pfe_packet(&b, 0);
        pb_bytes(&b, 133, z.data, z.len);
        pb_end(&b, pk);
        expect_error(&b, "packet 1: zstd_compressed_packets expand beyond 2147483648 bytes");
    }
    pb_buf_free(&z);
    pb_buf_free(&b);
    pb_buf_free(&plain);
}

/* A packet inside compressed packets may hold 16 MiB. */
TEST(perfetto_compressed_packet_bound)
{
    pb_buf plain = {0};
    fx_perf(&plain);
    for (int over = 0; over < 2; over++) {
        t_case("perfetto_compressed_packet_bound: 16 MiB%s", over ? " and a byte" : "");
        size_t len = ((size_t)16 << 20) + (size_t)over;
        pb_buf inner = {0}, b = {0};
        pb_tag(&inner, 1, PB_LEN);
        pb_put_varint(&inner, len);
        /* A field of the reader does not know, its length in 4 bytes. */
        pb_tag(&inner, 15, PB_LEN);
        pb_put_varint(&inner, len - 5);
        uint8_t *zeros = calloc(1, len - 5);
        if (zeros)
            pb_raw(&inner, zeros, len - 5);
        free(zeros);
        pfe_compressed(&b, &inner, over);
        pb_raw(&b, plain.data, plain.len);
        if (!over) {
            pc_profile *p = convert_buf(&b, NULL);
            T_CHECK(p && p->sample.n == 5);
            pc_profile_free(p);
        } else {
            expect_error(&b, "packet 2 (in the compressed packets here, at decompressed byte 0): "
                             "the packet claims 16777217 bytes, more than the 16 MiB a packet "
                             "inside compressed packets may hold");
        }
        pb_buf_free(&inner);
        pb_buf_free(&b);
    }
    pb_buf_free(&plain);
}

/* --keep-going: a compressed packet whose stream breaks is one damaged
 * packet, skipped; the packets read from it before the break count, as
 * those of a gzipped trace before its damage do. */
TEST(perfetto_compressed_keep_going)
{
    pb_buf plain = {0};
    fx_perf(&plain);
    size_t at[32];
    size_t n = packet_starts(&plain, at, 31);
    T_EQ_INT(n, 11);
    if (n != 11)
        return;
    /* Packets 1 to 6 plain (3 samples), 7 (a sample) and noise in a
     * compressed packet cut inside the noise, then 8 to 11 (1 sample). */
    pb_buf inner = {0}, whole = {0}, b = {0};
    pb_raw(&inner, plain.data + at[6], at[7] - at[6]);
    noise_packet(&inner, 100000);
    pfe_compressed(&whole, &inner, 0);
    pb_raw(&b, plain.data, at[6]);
    compressed_alone(&b, &inner, 0, whole.len - 2000);
    size_t offset = payload_offset(&b, at[6]);
    pb_raw(&b, plain.data + at[7], plain.len - at[7]);
    pc_options o;
    pc_options_init(&o);
    o.keep_going = 1;
    log_capture_start(&o);
    pc_profile *p = convert_buf(&b, &o);
    T_CHECK(p && p->sample.n == 5);
    pc_profile_free(p);
    char want[200];
    snprintf(want, sizeof want, "warning: 1 damaged packets skipped (the first: fixture: offset "
             "%zu: packet 7: compressed_packets: the zlib data ends inside the stream)",
             offset);
    T_CONTAINS(log_capture_text(), want);
    pb_buf_free(&inner);
    pb_buf_free(&whole);
    pb_buf_free(&b);
    pb_buf_free(&plain);
}

/* ---- The fuzz target ---- */

/* The seeds of fuzz/corpus/perfetto_compressed, what compressed packets
 * decompress to: the fixtures' traces, a run of empty packets, compressed
 * packets inside, a packet the end cuts.  Each goes through the target;
 * with PROFCONV_FUZZ_SEEDS naming a folder, they are written there. */
TEST(perfetto_compressed_fuzz_seeds)
{
    pb_buf seeds[5] = {{0}};
    static const char *const names[5] = {"perf", "heap", "empty-packets", "nested", "cut"};
    fx_perf(&seeds[0]);
    fx_heap(&seeds[1]);
    snapshot(&seeds[2], 500000000);
    static const uint8_t empties[] = {0x0a, 0x00, 0x0a, 0x00, 0x0a, 0x00, 0x0a, 0x00};
    pb_raw(&seeds[2], empties, sizeof empties);
    main_callstack(&seeds[2]);
    pb_buf one = {0};
    snapshot(&one, 500000000);
    pfe_compressed(&seeds[3], &one, 0);
    pb_buf_free(&one);
    snapshot(&seeds[4], 500000000);
    static const uint8_t cut[] = {0x0a, 0x05, 0x08, 0x01};
    pb_raw(&seeds[4], cut, sizeof cut);
    const char *dir = getenv("PROFCONV_FUZZ_SEEDS");
    for (size_t i = 0; i < 5; i++) {
        t_case("perfetto_compressed_fuzz_seeds: %s", names[i]);
        fuzz_perfetto_compressed(seeds[i].data, seeds[i].len);
        if (dir) {
            char path[1024];
            snprintf(path, sizeof path, "%s/seed-%s", dir, names[i]);
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(seeds[i].data, 1, seeds[i].len, f) != seeds[i].len)
                t_fail(__FILE__, __LINE__, "cannot write %s", path);
            if (f)
                fclose(f);
        }
        pb_buf_free(&seeds[i]);
    }
}
