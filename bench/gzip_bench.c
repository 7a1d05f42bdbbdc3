/* Measures the gzip encoders packaged in Debian on a real output file, to
 * choose the one the sink uses: zlib (streaming) at several levels, and,
 * when their headers are installed, libdeflate (whole buffer only) and
 * ISA-L's igzip (streaming).  Every result is one gzip member, checked by
 * decompressing it with zlib and comparing with the input.
 *
 * usage: gzip-bench FILE [REPEATS]
 * Prints, per encoder: MB/s of input, compression ratio, output size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#if defined(__has_include)
#if __has_include(<libdeflate.h>)
#include <libdeflate.h>
#define HAVE_LIBDEFLATE 1
#endif
#if __has_include(<isa-l/igzip_lib.h>)
#include <isa-l/igzip_lib.h>
#define HAVE_ISAL 1
#endif
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef size_t (*encoder)(const unsigned char *in, size_t n, unsigned char *out,
                          size_t cap, int level);

/* zlib, fed in 1 MiB pieces as the sink does. */
static size_t enc_zlib(const unsigned char *in, size_t n, unsigned char *out,
                       size_t cap, int level)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return 0;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    for (size_t off = 0; off < n;) {
        size_t k = n - off < (1u << 20) ? n - off : (1u << 20);
        z.next_in = (Bytef *)in + off;
        z.avail_in = (uInt)k;
        off += k;
        deflate(&z, off == n ? Z_FINISH : Z_NO_FLUSH);
    }
    if (n == 0)
        deflate(&z, Z_FINISH);
    size_t got = cap - z.avail_out;
    deflateEnd(&z);
    return got;
}

#ifdef HAVE_LIBDEFLATE
static size_t enc_libdeflate(const unsigned char *in, size_t n, unsigned char *out,
                             size_t cap, int level)
{
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
    size_t got = libdeflate_gzip_compress(c, in, n, out, cap);
    libdeflate_free_compressor(c);
    return got;
}
#endif

#ifdef HAVE_ISAL
static size_t enc_isal(const unsigned char *in, size_t n, unsigned char *out,
                       size_t cap, int level)
{
    struct isal_zstream z;
    static unsigned char level_buf[ISAL_DEF_LVL3_DEFAULT];
    isal_deflate_init(&z);
    z.gzip_flag = IGZIP_GZIP;
    z.level = (uint32_t)level;
    z.level_buf = level_buf;
    z.level_buf_size = sizeof level_buf;
    z.next_out = out;
    z.avail_out = (uint32_t)cap;
    for (size_t off = 0; off < n;) {
        size_t k = n - off < (1u << 20) ? n - off : (1u << 20);
        z.next_in = (unsigned char *)in + off;
        z.avail_in = (uint32_t)k;
        off += k;
        z.end_of_stream = off == n;
        z.flush = NO_FLUSH;
        if (isal_deflate(&z) != COMP_OK)
            return 0;
    }
    return cap - z.avail_out;
}
#endif

static int round_trips(const unsigned char *gz, size_t n, const unsigned char *want,
                       size_t want_n)
{
    unsigned char *back = malloc(want_n + 1);
    z_stream z;
    memset(&z, 0, sizeof z);
    inflateInit2(&z, 16 + 15);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)n;
    z.next_out = back;
    z.avail_out = (uInt)want_n + 1;
    int r = inflate(&z, Z_FINISH);
    /* One member and nothing after it: what browsers accept. */
    int ok = r == Z_STREAM_END && z.avail_in == 0 && z.total_out == want_n &&
             memcmp(back, want, want_n) == 0;
    inflateEnd(&z);
    free(back);
    return ok;
}

static void run(const char *name, encoder enc, int level, const unsigned char *in,
                size_t n, int repeats)
{
    size_t cap = n + n / 8 + (1u << 20);
    unsigned char *out = malloc(cap);
    double best = 1e30;
    size_t got = 0;
    for (int r = 0; r < repeats; r++) {
        double t = now();
        got = enc(in, n, out, cap, level);
        t = now() - t;
        if (t < best)
            best = t;
    }
    int ok = got && round_trips(out, got, in, n);
    printf("%-12s level %d  %8.1f MB/s  ratio %5.2f  %10zu bytes  %s\n", name, level,
           (double)n / 1e6 / best, got ? (double)n / (double)got : 0.0, got,
           ok ? "single member, round trip ok" : "FAILED");
    free(out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gzip-bench FILE [REPEATS]\n");
        return 1;
    }
    int repeats = argc > 2 ? atoi(argv[2]) : 3;
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *in = malloc((size_t)n + 1);
    if (fread(in, 1, (size_t)n, f) != (size_t)n) {
        perror(argv[1]);
        return 1;
    }
    fclose(f);
    printf("%s: %ld bytes, best of %d\n", argv[1], n, repeats);
    run("zlib", enc_zlib, 1, in, (size_t)n, repeats);
    run("zlib", enc_zlib, 2, in, (size_t)n, repeats);
    run("zlib", enc_zlib, 6, in, (size_t)n, repeats);
#ifdef HAVE_LIBDEFLATE
    run("libdeflate", enc_libdeflate, 1, in, (size_t)n, repeats);
    run("libdeflate", enc_libdeflate, 6, in, (size_t)n, repeats);
#else
    printf("libdeflate: not installed (libdeflate-dev)\n");
#endif
#ifdef HAVE_ISAL
    run("isa-l", enc_isal, 1, in, (size_t)n, repeats);
    run("isa-l", enc_isal, 3, in, (size_t)n, repeats);
#else
    printf("isa-l: not installed (libisal-dev)\n");
#endif
    free(in);
    return 0;
}
