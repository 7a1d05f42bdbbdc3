/* The JSLB container (json-slabs' FORMAT.md): the Firefox Profiler reads a
 * profile from it whose JSON could not be one string in a browser.
 *
 *   magic   DC DF 4A 53 4C 42 01 00
 *   u32     version (1)
 *   u32     slab count N
 *   u32     index of the root slab (JSON)
 *   N x     u32 type, u32 offset, u32 length (bytes)
 *   slabs   each at an offset that is a multiple of its element's size
 *
 * All little-endian.  Types 0-9 are typed arrays (Int8 .. BigUint64),
 * 10 JSON, where {"$s": K} stands for slab K.  Offsets are 32-bit, so a
 * file holds at most 4 GiB. */
#include <string.h>

#include "base/error.h"
#include "write/write.h"

static size_t elem_size(uint32_t type)
{
    static const uint8_t size[] = {1, 1, 2, 2, 4, 4, 4, 8, 8, 8, 1};
    return type < sizeof size ? size[type] : 1;
}

static void put_u32(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

int pc_jslb_write(const jw_slabs *sl, const unsigned char *root, size_t root_len,
                  pc_sink *out, pc_error *err)
{
    static const uint8_t magic[8] = {0xDC, 0xDF, 0x4A, 0x53, 0x4C, 0x42, 0x01, 0x00};
    size_t n = sl->n + 1;
    uint64_t pos = 20 + 12 * (uint64_t)n;
    /* A JSON piece is read into one string too: one past what a browser
     * holds makes the file as unreadable as the JSON would be. */
    for (size_t k = 0; k < n; k++) {
        uint64_t len = k < sl->n ? sl->v[k].len : root_len;
        if ((k == n - 1 || sl->v[k].type == JW_SLAB_JSON) && len > PC_JSON_LIMIT)
            return pc_fail(err, PC_EUSAGE, "a part of the profile is %.0f MiB of JSON even in "
                           "a JSLB file, more than the %.0f MiB a browser reads as one "
                           "string: keep less with options.tids, options.pids or "
                           "options.time_end", (double)len / (1 << 20),
                           (double)PC_JSON_LIMIT / (1 << 20));
    }
    /* Where the slabs go, checked before anything is written. */
    for (size_t k = 0; k < n; k++) {
        size_t a = elem_size(k < sl->n ? sl->v[k].type : JW_SLAB_JSON);
        pos = (pos + a - 1) / a * a + (k < sl->n ? sl->v[k].len : root_len);
    }
    if (pos > UINT32_MAX)
        return pc_fail(err, PC_EUSAGE, "the profile needs %.1f GiB even as a JSLB file, whose "
                       "offsets end at 4 GiB: keep less with options.tids, options.pids or "
                       "options.time_end", (double)pos / (1 << 30));
    pos = 20 + 12 * (uint64_t)n;
    uint8_t head[20];
    memcpy(head, magic, 8);
    put_u32(head + 8, 1);
    put_u32(head + 12, n);
    put_u32(head + 16, n - 1);
    sink_write(out, head, sizeof head);
    for (size_t k = 0; k < n; k++) {
        uint32_t type = k < sl->n ? sl->v[k].type : JW_SLAB_JSON;
        uint64_t len = k < sl->n ? sl->v[k].len : root_len;
        size_t a = elem_size(type);
        pos = (pos + a - 1) / a * a;
        uint8_t e[12];
        put_u32(e, type);
        put_u32(e + 4, pos);
        put_u32(e + 8, len);
        sink_write(out, e, sizeof e);
        pos += len;
    }
    static const uint8_t zeros[8] = {0};
    pos = 20 + 12 * (uint64_t)n;
    for (size_t k = 0; k < n; k++) {
        uint32_t type = k < sl->n ? sl->v[k].type : JW_SLAB_JSON;
        size_t a = elem_size(type), pad = (size_t)((a - pos % a) % a);
        sink_write(out, zeros, pad);
        pos += pad;
        const unsigned char *d = k < sl->n ? sl->v[k].data : root;
        size_t len = k < sl->n ? sl->v[k].len : root_len;
        if (len)
            sink_write(out, d, len);
        pos += len;
    }
    return PC_OK;
}
