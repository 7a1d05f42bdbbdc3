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
#include <stdlib.h>
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

int pc_jslb_begin(jw_slabs *sl, size_t root_len, pc_sink *out, pc_error *err)
{
    static const uint8_t magic[8] = {0xDC, 0xDF, 0x4A, 0x53, 0x4C, 0x42, 0x01, 0x00};
    size_t n = sl->n + 1;
    if (sl->oom)
        return pc_fail(err, PC_ENOMEM, "out of memory");
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
    uint64_t *off = malloc(n * sizeof *off), *want = malloc(n * sizeof *want);
    uint32_t *type = malloc(n * sizeof *type);
    if (!off || !want || !type) {
        free(off);
        free(want);
        free(type);
        return pc_fail(err, PC_ENOMEM, "out of memory");
    }
    /* Where the slabs go, checked before anything is written. */
    uint64_t pos = 20 + 12 * (uint64_t)n;
    for (size_t k = 0; k < n; k++) {
        type[k] = k < sl->n ? sl->v[k].type : JW_SLAB_JSON;
        want[k] = k < sl->n ? sl->v[k].len : root_len;
        size_t a = elem_size(type[k]);
        off[k] = (pos + a - 1) / a * a;
        pos = off[k] + want[k];
    }
    if (pos > UINT32_MAX) {
        free(off);
        free(want);
        free(type);
        return pc_fail(err, PC_EUSAGE, "the profile needs %.1f GiB even as a JSLB file, whose "
                       "offsets end at 4 GiB: keep less with options.tids, options.pids or "
                       "options.time_end", (double)pos / (1 << 30));
    }
    uint8_t head[20];
    memcpy(head, magic, 8);
    put_u32(head + 8, 1);
    put_u32(head + 12, n);
    put_u32(head + 16, n - 1);
    sink_write(out, head, sizeof head);
    for (size_t k = 0; k < n; k++) {
        uint8_t e[12];
        put_u32(e, type[k]);
        put_u32(e + 4, off[k]);
        put_u32(e + 8, want[k]);
        sink_write(out, e, sizeof e);
    }
    /* The second pass starts from no slabs, in the same order. */
    jw_slabs_free(sl);
    sl->pass = 2;
    sl->out = out;
    sl->off = off;
    sl->want = want;
    sl->want_type = type;
    sl->n_want = n - 1;
    sl->pos = 20 + 12 * (uint64_t)n;
    return PC_OK;
}

int pc_jslb_end(jw_slabs *sl, const unsigned char *root, size_t root_len, pc_error *err)
{
    if (sl->oom)
        return pc_fail(err, PC_ENOMEM, "out of memory");
    jw_slabs_flush(sl);
    if (sl->differ || sl->n != sl->n_want || sl->next != sl->n || root_len != sl->want[sl->n])
        return pc_fail(err, PC_EIO, "the JSLB file's second pass made other slabs than its "
                       "first measured (%zu of %zu slabs)", sl->n, sl->n_want);
    jw_slabs_pad(sl, sl->off[sl->n]);
    if (root_len)
        sink_write(sl->out, root, root_len);
    return PC_OK;
}
