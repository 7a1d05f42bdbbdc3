/* Protobuf wire format: a zero-copy, bounds-checked reader and a small
 * encoder, shared by every protobuf input and output.
 *
 * Reader.  A pb_reader walks the fields of one message held in memory.  It
 * never copies: length-delimited fields point into the caller's buffer,
 * which must outlive the reader.  Every varint and every length is checked
 * against the end of the message, so a reader can be pointed at arbitrary
 * bytes.  On a malformed field pb_next() returns -1 and leaves the error
 * code and the offending position in the reader; offsets are reported
 * relative to the stream the buffer came from (see pb_reader_init's base).
 *
 * Encoder.  A pb_buf is a growable byte buffer.  Allocation failure is
 * latched in pb_buf.oom and later calls do nothing, so callers check once
 * at the end.  Nested messages are written in place: pb_begin() reserves a
 * length prefix and pb_end() fills it in.
 */
#ifndef PROFCONV_PBWIRE_H
#define PROFCONV_PBWIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum pb_wiretype {
    PB_VARINT = 0,
    PB_I64 = 1,
    PB_LEN = 2,
    PB_SGROUP = 3,
    PB_EGROUP = 4,
    PB_I32 = 5,
};

enum pb_error {
    PB_OK = 0,
    PB_ETRUNCATED,  /* a tag, varint or fixed value runs past the end */
    PB_EVARINT,     /* varint longer than 10 bytes or over 64 bits */
    PB_ELENGTH,     /* length-delimited field longer than what remains */
    PB_EWIRETYPE,   /* wire type 6/7, or a group (unsupported) */
    PB_EFIELD,      /* field number 0 */
    PB_EEXPECT,     /* a known field with the wrong wire type (pb_expect) */
};

typedef struct pb_reader {
    const uint8_t *start; /* first byte of the buffer, for offsets */
    const uint8_t *p;     /* next byte to read */
    const uint8_t *end;   /* one past the last byte of this message */
    uint64_t base;        /* stream offset of start */
    int err;              /* enum pb_error after a failed call */
    const uint8_t *err_at;
} pb_reader;

typedef struct pb_field {
    uint32_t number;
    uint32_t wiretype;
    uint64_t value;       /* PB_VARINT, PB_I64 and PB_I32 payloads */
    const uint8_t *data;  /* PB_LEN payload */
    size_t len;
    const uint8_t *at;    /* where the tag starts */
} pb_field;

/* Prepares r to read the message data[0..len); base is the offset of data
 * in the input stream, used only for error positions. */
void pb_reader_init(pb_reader *r, const void *data, size_t len, uint64_t base);

/* Prepares child to read the message carried by the PB_LEN field f of
 * parent; offsets stay relative to the parent's stream. */
void pb_reader_sub(const pb_reader *parent, const pb_field *f, pb_reader *child);

/* Reads the next field into f.  Returns 1 for a field, 0 at the end of the
 * message, -1 on malformed input (r->err, r->err_at set). */
int pb_next(pb_reader *r, pb_field *f);

/* Checks that f has wire type wt; otherwise records PB_EEXPECT at the
 * field's tag and returns -1. */
int pb_expect(pb_reader *r, const pb_field *f, uint32_t wt);

/* In a table of expected wire types by field number: a field whose wire
 * type is not checked. */
#define PB_ANY 0xff

/* The next field of r, its wire type checked when its number is below
 * n_expect and expect[number] is not PB_ANY; with packed, a PB_LEN field
 * passes where PB_VARINT is expected (repeated scalars may come packed).
 * Returns 1, 0 at the end, or -1 with r->err and r->err_at set. */
int pb_next_checked(pb_reader *r, pb_field *f, const uint8_t *expect, size_t n_expect,
                    int packed);

/* Decodes one varint from [*p, end), advancing *p.  Returns 0 or an
 * enum pb_error (and leaves *p unchanged on error). */
int pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *out);

/* pb_varint inline, for the hot loops: the same checks and results. */
static inline int pb_varint_fast(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (p < end && p[0] < 0x80) {
        *out = p[0];
        *pp = p + 1;
        return PB_OK;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (p >= end)
            return PB_ETRUNCATED;
        uint8_t byte = *p++;
        /* The tenth byte may only carry the single top bit of 64. */
        if (shift == 63 && byte > 1)
            return PB_EVARINT;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (byte < 0x80) {
            *out = v;
            *pp = p;
            return PB_OK;
        }
    }
    return PB_EVARINT;
}

/* A varint of at most 9 bytes from [*pp, end) into *v, advancing *pp:
 * 1, or 0 (nothing read) for a longer or cut-short one, which a quick
 * path then leaves to its general reader.  One and two bytes (ids,
 * counts) are tried first; with 8 bytes at hand, any length up to 8 is
 * decoded without a branch per byte. */
static inline int pb_varint9(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    if (p < end && p[0] < 0x80) {
        *v = p[0];
        *pp = p + 1;
        return 1;
    }
    if (end - p >= 2 && p[1] < 0x80) {
        *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        *pp = p + 2;
        return 1;
    }
    if (end - p >= 8) {
        uint64_t w = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(&w, p, 8);
#else
        for (int i = 7; i >= 0; i--)
            w = w << 8 | p[i];
#endif
        uint64_t stops = ~w & 0x8080808080808080ull;
        if (stops) {
            unsigned n = ((unsigned)__builtin_ctzll(stops) >> 3) + 1;
            uint64_t x = (n == 8 ? w : w & ((1ull << (8 * n)) - 1)) & 0x7f7f7f7f7f7f7f7full;
            /* The 7-bit groups side by side: pairs, fours, then eights. */
            x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
            x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
            x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
            *v = x;
            *pp = p + n;
            return 1;
        }
    }
    uint64_t x = 0;
    for (unsigned shift = 0; p < end && shift <= 56; shift += 7) {
        uint8_t b = *p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *v = x;
            *pp = p;
            return 1;
        }
    }
    return 0;
}

/* Field n (below 16, a varint) where it comes next in [*pp, end), its
 * tag one byte: 1 with its value in *v and *pp past it, 0 where the next
 * field is another (*pp as it was), -1 for a varint pb_varint9 refuses.
 * For quick paths that expect a producer's fields in its order: one
 * compare a field, where a loop's jump on each field's number costs a
 * misprediction now and then. */
static inline int pb_next_is(const uint8_t **pp, const uint8_t *end, unsigned n, uint64_t *v)
{
    const uint8_t *p = *pp;
    if (p >= end || *p != (uint8_t)(n << 3 | PB_VARINT))
        return 0;
    p++;
    if (!pb_varint9(&p, end, v))
        return -1;
    *pp = p;
    return 1;
}

/* Reads the next element of a packed repeated varint field held in r
 * (made with pb_reader_sub).  Returns 1, 0 at the end, -1 on error. */
int pb_packed_varint(pb_reader *r, uint64_t *out);

/* Stream offset of a position inside r's buffer. */
static inline uint64_t pb_offset(const pb_reader *r, const uint8_t *at)
{
    return r->base + (uint64_t)(at - r->start);
}

/* A short lowercase description of an enum pb_error. */
const char *pb_strerror(int err);

static inline int64_t pb_zigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* ---- Encoder ---- */

typedef struct pb_buf {
    uint8_t *data;
    size_t len, cap;
    int oom;
} pb_buf;

void pb_buf_free(pb_buf *b);
void pb_raw(pb_buf *b, const void *data, size_t len);
void pb_put_varint(pb_buf *b, uint64_t v);
void pb_tag(pb_buf *b, uint32_t field, uint32_t wt);
void pb_uint(pb_buf *b, uint32_t field, uint64_t v);   /* uint*, int64, bool, enum */
void pb_int32(pb_buf *b, uint32_t field, int32_t v);   /* sign-extended like protoc */
void pb_sint(pb_buf *b, uint32_t field, int64_t v);    /* zigzag */
void pb_fixed32(pb_buf *b, uint32_t field, uint32_t v);
void pb_fixed64(pb_buf *b, uint32_t field, uint64_t v);
void pb_bytes(pb_buf *b, uint32_t field, const void *data, size_t len);
void pb_string(pb_buf *b, uint32_t field, const char *s);

/* Opens a nested message or packed field; returns a mark for pb_end. */
size_t pb_begin(pb_buf *b, uint32_t field);
void pb_end(pb_buf *b, size_t mark);

#endif
