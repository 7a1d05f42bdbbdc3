/* Perfetto compressed packets: the input is what a compressed packet
 * decompresses to (a Trace's bytes), compressed here with zlib and with
 * zstd into a trace that is valid around it, then read and written as
 * fuzz_perfetto does.  Padding before the input moves it across the
 * reader's decoding steps of 128 KiB (packet.c), so that its packets and
 * fields are cut there at every place; some inputs have their compressed
 * stream cut short. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "base/pbwire.h"
#include "fuzz.h"

#define STEP ((size_t)128 << 10)

static const uint8_t zeros[STEP];

/* A length in exactly three bytes (a varint may carry more than it needs),
 * so that a field's size is exactly what is asked. */
static void len3(pb_buf *b, size_t v)
{
    uint8_t x[3] = {(uint8_t)(v | 0x80), (uint8_t)((v >> 7) | 0x80), (uint8_t)(v >> 14)};
    pb_raw(b, x, sizeof x);
}

/* The padding, of total bytes (8 to STEP): a packet holding a field this
 * reader does not know, or a Trace field that is not a packet, of zeros. */
static void padding(pb_buf *b, size_t total, int as_packet)
{
    if (total < 8)
        return;
    if (as_packet) {
        pb_tag(b, 1, PB_LEN);
        len3(b, total - 4);
        total -= 4;
    }
    pb_tag(b, as_packet ? 15 : 2, PB_LEN);
    len3(b, total - 4);
    pb_raw(b, zeros, total - 4);
}

static size_t compress_zlib(const pb_buf *src, uint8_t **out)
{
    uLongf n = compressBound(src->len);
    *out = malloc(n);
    if (!*out || compress2(*out, &n, src->data, src->len, 1) != Z_OK)
        return 0;
    return n;
}

static size_t compress_zstd(const pb_buf *src, uint8_t **out)
{
    /* Streamed, so that the frame gives no content size, as Perfetto's
     * compressor writes them. */
    size_t cap = ZSTD_compressBound(src->len) + 64;
    *out = malloc(cap);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    if (!*out || !c) {
        ZSTD_freeCCtx(c);
        return 0;
    }
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
    ZSTD_inBuffer in = {src->data, src->len, 0};
    ZSTD_outBuffer o = {*out, cap, 0};
    size_t left = ZSTD_compressStream2(c, &o, &in, ZSTD_e_continue);
    if (!ZSTD_isError(left))
        left = ZSTD_compressStream2(c, &o, &in, ZSTD_e_end);
    ZSTD_freeCCtx(c);
    return ZSTD_isError(left) || left ? 0 : o.pos;
}

static void one(const uint8_t *trace, size_t n)
{
    pc_profile *p = fuzz_convert(trace, n, 0, NULL);
    if (p) {
        size_t len;
        free(fuzz_write(p, PC_FORMAT_FIREFOX, 0, &len));
        free(fuzz_write(p, PC_FORMAT_PPROF, 0, &len));
    }
    pc_profile_free(p);
}

int fuzz_perfetto_compressed(const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 16777619u;
    /* The step's end falls k bytes into the input, or nowhere near it. */
    pb_buf inner = {0};
    if (h & 3) {
        size_t k = (h >> 2) % ((size < STEP - 8 ? size : STEP - 8) + 1);
        padding(&inner, STEP - k, (h >> 20) & 1);
    }
    pb_raw(&inner, data, size);
    for (int zstd = 0; zstd < 2 && !inner.oom; zstd++) {
        uint8_t *z = NULL;
        size_t zn = zstd ? compress_zstd(&inner, &z) : compress_zlib(&inner, &z);
        if (zn) {
            if (((h >> 21) & 7) == 0)
                zn = (h >> 24) % zn;
            /* A packet of sequence 1 before, the compressed packet, and
             * a packet after. */
            pb_buf t = {0};
            size_t pk = pb_begin(&t, 1);
            pb_uint(&t, 8, 1000);
            pb_uint(&t, 10, 1);
            pb_end(&t, pk);
            pk = pb_begin(&t, 1);
            pb_bytes(&t, zstd ? 133 : 50, z, zn);
            pb_end(&t, pk);
            pk = pb_begin(&t, 1);
            pb_uint(&t, 8, 2000);
            pb_uint(&t, 10, 1);
            pb_end(&t, pk);
            if (!t.oom)
                one(t.data, t.len);
            pb_buf_free(&t);
        }
        free(z);
    }
    pb_buf_free(&inner);
    return 0;
}

PC_FUZZ_TARGET(fuzz_perfetto_compressed)
