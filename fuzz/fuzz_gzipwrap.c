/* gzip wrappers around any input, damaged the ways files are: cut short,
 * two members, a wrong CRC or length, bytes after the member, optional
 * header fields, gzip inside gzip.  The first byte chooses the damage
 * (and the second where), the rest is what is wrapped. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz.h"

/* One gzip member of data (malloc'd, *out_len its size), with the header
 * fields flags asks for (FEXTRA 4, FNAME 8, FCOMMENT 16), or NULL. */
static unsigned char *member(const uint8_t *data, size_t len, int flags, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t bound = deflateBound(&z, (uLong)len) + 64;
    unsigned char *out = malloc(bound);
    if (!out) {
        deflateEnd(&z);
        return NULL;
    }
    size_t n = 0;
    static const unsigned char head[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    memcpy(out, head, sizeof head);
    out[3] = (unsigned char)flags;
    n = sizeof head;
    if (flags & 4) {
        static const unsigned char extra[] = {4, 0, 'p', 'c', 0, 0};
        memcpy(out + n, extra, sizeof extra);
        n += sizeof extra;
    }
    if (flags & 8) {
        memcpy(out + n, "name", 5);
        n += 5;
    }
    if (flags & 16) {
        memcpy(out + n, "note", 5);
        n += 5;
    }
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    z.next_out = out + n;
    z.avail_out = (uInt)(bound - n - 8);
    int ret = deflate(&z, Z_FINISH);
    n += z.total_out;
    deflateEnd(&z);
    if (ret != Z_STREAM_END) {
        free(out);
        return NULL;
    }
    uLong crc = crc32(0L, data, (uInt)len);
    for (int i = 0; i < 4; i++)
        out[n++] = (unsigned char)(crc >> (8 * i));
    for (int i = 0; i < 4; i++)
        out[n++] = (unsigned char)(len >> (8 * i));
    *out_len = n;
    return out;
}

static void convert(const unsigned char *data, size_t size)
{
    pc_profile *p = fuzz_convert(data, size, 0, NULL);
    if (p) {
        size_t n;
        free(fuzz_write(p, PC_FORMAT_FOLDED, 0, &n));
    }
    pc_profile_free(p);
}

int fuzz_gzipwrap(const uint8_t *data, size_t size)
{
    if (size < 3 || size > (1 << 20))
        return 0;
    int how = data[0] & 7, flags = data[0] & 0x1c;
    size_t where = data[1];
    const uint8_t *payload = data + 2;
    size_t len = size - 2, n = 0;
    unsigned char *gz = member(payload, len, how == 6 ? flags : 0, &n);
    if (!gz)
        return 0;
    size_t cut = n * where / 256;
    switch (how) {
    case 1: /* cut short */
        convert(gz, cut);
        break;
    case 2: { /* two members: the payload in two halves */
        size_t half = len * where / 256, n1 = 0, n2 = 0;
        unsigned char *a = member(payload, half, 0, &n1);
        unsigned char *b = member(payload + half, len - half, 0, &n2);
        unsigned char *both = a && b ? malloc(n1 + n2) : NULL;
        if (both) {
            memcpy(both, a, n1);
            memcpy(both + n1, b, n2);
            convert(both, n1 + n2);
        }
        free(a);
        free(b);
        free(both);
        break;
    }
    case 3: /* wrong CRC */
        gz[n - 8 + where % 4] ^= 0x5a;
        convert(gz, n);
        break;
    case 4: /* wrong length */
        gz[n - 4 + where % 4] ^= 0x01;
        convert(gz, n);
        break;
    case 5: { /* bytes after the member */
        unsigned char *more = malloc(n + where + 1);
        if (more) {
            memcpy(more, gz, n);
            memset(more + n, (int)where, where + 1);
            convert(more, n + where + 1);
            free(more);
        }
        break;
    }
    case 7: { /* gzip inside gzip */
        size_t nn = 0;
        unsigned char *outer = member(gz, n, 0, &nn);
        if (outer)
            convert(outer, nn);
        free(outer);
        break;
    }
    default: /* whole, with or without header fields */
        convert(gz, n);
    }
    free(gz);
    return 0;
}

PC_FUZZ_TARGET(fuzz_gzipwrap)
