#include "base/pbwire.h"

#include <stdlib.h>
#include <string.h>

void pb_reader_init(pb_reader *r, const void *data, size_t len, uint64_t base)
{
    r->start = data;
    r->p = data;
    r->end = r->start + len;
    r->base = base;
    r->err = PB_OK;
    r->err_at = NULL;
}

void pb_reader_sub(const pb_reader *parent, const pb_field *f, pb_reader *child)
{
    child->start = parent->start;
    child->p = f->data;
    child->end = f->data + f->len;
    child->base = parent->base;
    child->err = PB_OK;
    child->err_at = NULL;
}

int pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    return pb_varint_fast(pp, end, out);
}

static int fail(pb_reader *r, int err, const uint8_t *at)
{
    r->err = err;
    r->err_at = at;
    return -1;
}

int pb_next(pb_reader *r, pb_field *f)
{
    const uint8_t *p = r->p;
    uint64_t tag;
    int e;

    if (p >= r->end)
        return 0;
    f->at = p;
    if ((e = pb_varint_fast(&p, r->end, &tag)) != PB_OK)
        return fail(r, e, f->at);
    if ((tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
        return fail(r, PB_EFIELD, f->at);
    f->number = (uint32_t)(tag >> 3);
    f->wiretype = (uint32_t)(tag & 7);
    f->data = NULL;
    f->len = 0;
    f->value = 0;
    switch (f->wiretype) {
    case PB_VARINT:
        if ((e = pb_varint_fast(&p, r->end, &f->value)) != PB_OK)
            return fail(r, e, p);
        break;
    case PB_I64:
        if (r->end - p < 8)
            return fail(r, PB_ETRUNCATED, p);
        for (int i = 7; i >= 0; i--)
            f->value = (f->value << 8) | p[i];
        p += 8;
        break;
    case PB_I32:
        if (r->end - p < 4)
            return fail(r, PB_ETRUNCATED, p);
        f->value = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
                   (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        p += 4;
        break;
    case PB_LEN: {
        uint64_t len;
        const uint8_t *lenat = p;
        if ((e = pb_varint_fast(&p, r->end, &len)) != PB_OK)
            return fail(r, e, lenat);
        if (len > (uint64_t)(r->end - p))
            return fail(r, PB_ELENGTH, lenat);
        f->data = p;
        f->len = (size_t)len;
        p += len;
        break;
    }
    default:
        return fail(r, PB_EWIRETYPE, f->at);
    }
    r->p = p;
    return 1;
}

int pb_expect(pb_reader *r, const pb_field *f, uint32_t wt)
{
    if (f->wiretype == wt)
        return 0;
    return fail(r, PB_EEXPECT, f->at);
}

int pb_next_checked(pb_reader *r, pb_field *f, const uint8_t *expect, size_t n_expect,
                    int packed)
{
    int got = pb_next(r, f);
    if (got <= 0 || f->number >= n_expect || expect[f->number] == PB_ANY ||
        f->wiretype == expect[f->number])
        return got;
    if (packed && expect[f->number] == PB_VARINT && f->wiretype == PB_LEN)
        return got;
    return pb_expect(r, f, expect[f->number]) < 0 ? -1 : got;
}

int pb_packed_varint(pb_reader *r, uint64_t *out)
{
    if (r->p >= r->end)
        return 0;
    const uint8_t *at = r->p;
    int e = pb_varint_fast(&r->p, r->end, out);
    if (e != PB_OK)
        return fail(r, e, at);
    return 1;
}

const char *pb_strerror(int err)
{
    switch (err) {
    case PB_OK: return "no error";
    case PB_ETRUNCATED: return "field runs past the end of its message";
    case PB_EVARINT: return "malformed varint (over 10 bytes or 64 bits)";
    case PB_ELENGTH: return "length-delimited field longer than its message";
    case PB_EWIRETYPE: return "invalid or unsupported wire type";
    case PB_EFIELD: return "invalid field number";
    case PB_EEXPECT: return "field has the wrong wire type";
    }
    return "unknown wire error";
}

/* ---- Encoder ---- */

static int reserve(pb_buf *b, size_t n)
{
    if (b->oom)
        return 0;
    if (b->cap - b->len >= n)
        return 1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n) {
        if (cap > SIZE_MAX / 2) {
            b->oom = 1;
            return 0;
        }
        cap *= 2;
    }
    uint8_t *d = realloc(b->data, cap);
    if (!d) {
        b->oom = 1;
        return 0;
    }
    b->data = d;
    b->cap = cap;
    return 1;
}

void pb_buf_free(pb_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void pb_raw(pb_buf *b, const void *data, size_t len)
{
    if (len && reserve(b, len)) {
        memcpy(b->data + b->len, data, len);
        b->len += len;
    }
}

static size_t varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static void put_varint_at(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p = (uint8_t)v;
}

void pb_put_varint(pb_buf *b, uint64_t v)
{
    size_t n = varint_size(v);
    if (reserve(b, n)) {
        put_varint_at(b->data + b->len, v);
        b->len += n;
    }
}

void pb_tag(pb_buf *b, uint32_t field, uint32_t wt)
{
    pb_put_varint(b, (uint64_t)field << 3 | wt);
}

void pb_uint(pb_buf *b, uint32_t field, uint64_t v)
{
    pb_tag(b, field, PB_VARINT);
    pb_put_varint(b, v);
}

void pb_int32(pb_buf *b, uint32_t field, int32_t v)
{
    pb_uint(b, field, (uint64_t)(int64_t)v);
}

void pb_sint(pb_buf *b, uint32_t field, int64_t v)
{
    pb_uint(b, field, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void pb_fixed32(pb_buf *b, uint32_t field, uint32_t v)
{
    uint8_t le[4];
    for (int i = 0; i < 4; i++)
        le[i] = (uint8_t)(v >> (8 * i));
    pb_tag(b, field, PB_I32);
    pb_raw(b, le, 4);
}

void pb_fixed64(pb_buf *b, uint32_t field, uint64_t v)
{
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(v >> (8 * i));
    pb_tag(b, field, PB_I64);
    pb_raw(b, le, 8);
}

void pb_bytes(pb_buf *b, uint32_t field, const void *data, size_t len)
{
    pb_tag(b, field, PB_LEN);
    pb_put_varint(b, len);
    pb_raw(b, data, len);
}

void pb_string(pb_buf *b, uint32_t field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

/* One byte is reserved for the length: most nested messages are short, and
 * longer ones are moved up once their size is known. */
size_t pb_begin(pb_buf *b, uint32_t field)
{
    pb_tag(b, field, PB_LEN);
    if (!reserve(b, 1))
        return 0;
    b->data[b->len++] = 0;
    return b->len;
}

void pb_end(pb_buf *b, size_t mark)
{
    if (b->oom || mark == 0)
        return;
    size_t len = b->len - mark;
    size_t n = varint_size(len);
    if (n > 1) {
        if (!reserve(b, n - 1))
            return;
        memmove(b->data + mark + n - 1, b->data + mark, len);
        b->len += n - 1;
    }
    put_varint_at(b->data + mark - 1, len);
}
