/* The protobuf wire reader and encoder, on hand-encoded bytes. */
#include "base/pbwire.h"
#include "t.h"

static int read_one(const uint8_t *data, size_t len, pb_field *f, pb_reader *r)
{
    pb_reader_init(r, data, len, 100);
    return pb_next(r, f);
}

TEST(pbwire_varint_fields)
{
    /* field 1 varint 150 (the protobuf documentation's example), field 2
     * varint 0, field 3 varint 2^64-1 in ten bytes. */
    static const uint8_t msg[] = {0x08, 0x96, 0x01, 0x10, 0x00, 0x18,
                                  0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                  0xff, 0xff, 0xff, 0x01};
    pb_reader r;
    pb_field f;
    pb_reader_init(&r, msg, sizeof msg, 0);
    T_EQ_INT(pb_next(&r, &f), 1);
    T_EQ_INT(f.number, 1);
    T_EQ_INT(f.wiretype, PB_VARINT);
    T_EQ_INT(f.value, 150);
    T_EQ_INT(pb_next(&r, &f), 1);
    T_EQ_INT(f.number, 2);
    T_EQ_INT(f.value, 0);
    T_EQ_INT(pb_next(&r, &f), 1);
    T_EQ_INT(f.number, 3);
    T_CHECK(f.value == UINT64_MAX);
    T_EQ_INT(pb_next(&r, &f), 0);
}

TEST(pbwire_fixed_and_length_fields)
{
    static const uint8_t msg[] = {
        0x0d, 0x78, 0x56, 0x34, 0x12,                         /* 1: fixed32 */
        0x11, 1, 2, 3, 4, 5, 6, 7, 8,                         /* 2: fixed64 */
        0x1a, 0x03, 'a', 'b', 'c',                            /* 3: "abc" */
        0x22, 0x00,                                           /* 4: "" */
    };
    pb_reader r;
    pb_field f;
    pb_reader_init(&r, msg, sizeof msg, 0);
    T_EQ_INT(pb_next(&r, &f), 1);
    T_EQ_INT(f.wiretype, PB_I32);
    T_EQ_INT(f.value, 0x12345678);
    T_EQ_INT(pb_next(&r, &f), 1);
    T_EQ_INT(f.wiretype, PB_I64);
    T_CHECK(f.value == 0x0807060504030201ULL);
    T_EQ_INT(pb_next(&r, &f), 1);
    T_EQ_INT(f.len, 3);
    T_CHECK(memcmp(f.data, "abc", 3) == 0);
    T_CHECK(f.data == msg + 16);  /* zero copy */
    T_EQ_INT(pb_next(&r, &f), 1);
    T_EQ_INT(f.number, 4);
    T_EQ_INT(f.len, 0);
    T_EQ_INT(pb_next(&r, &f), 0);
}

TEST(pbwire_malformed)
{
    static const struct {
        const char *what;
        uint8_t bytes[16];
        size_t len;
        int err;
        size_t err_at;  /* offset within the message */
    } cases[] = {
        {"varint cut short", {0x08, 0x96}, 2, PB_ETRUNCATED, 1},
        {"tag cut short", {0x80}, 1, PB_ETRUNCATED, 0},
        {"eleven-byte varint", {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                0xff, 0xff, 0xff, 0xff, 0x01}, 12, PB_EVARINT, 1},
        {"varint over 64 bits", {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                 0xff, 0xff, 0xff, 0x02}, 11, PB_EVARINT, 1},
        {"length past the end", {0x0a, 0x05, 'a', 'b'}, 4, PB_ELENGTH, 1},
        {"huge length", {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, 6, PB_ELENGTH, 1},
        {"fixed32 cut short", {0x0d, 1, 2}, 3, PB_ETRUNCATED, 1},
        {"fixed64 cut short", {0x09, 1, 2, 3, 4, 5, 6, 7}, 8, PB_ETRUNCATED, 1},
        {"start group", {0x0b}, 1, PB_EWIRETYPE, 0},
        {"end group", {0x0c}, 1, PB_EWIRETYPE, 0},
        {"wire type 6", {0x0e}, 1, PB_EWIRETYPE, 0},
        {"wire type 7", {0x0f}, 1, PB_EWIRETYPE, 0},
        {"field number 0", {0x00, 0x01}, 2, PB_EFIELD, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pb_reader r;
        pb_field f;
        t_case("pbwire_malformed: %s", cases[i].what);
        T_EQ_INT(read_one(cases[i].bytes, cases[i].len, &f, &r), -1);
        T_EQ_INT(r.err, cases[i].err);
        T_EQ_INT(pb_offset(&r, r.err_at), 100 + cases[i].err_at);
        T_CHECK(pb_strerror(r.err)[0] != 0);
    }
}

TEST(pbwire_expect_and_submessages)
{
    /* field 1 = {field 2 = 7}, field 3 = packed [1, 300, 2] */
    static const uint8_t msg[] = {0x0a, 0x02, 0x10, 0x07,
                                  0x1a, 0x04, 0x01, 0xac, 0x02, 0x02};
    pb_reader r, sub;
    pb_field f;
    uint64_t v;
    pb_reader_init(&r, msg, sizeof msg, 1000);
    T_EQ_INT(pb_next(&r, &f), 1);
    T_EQ_INT(pb_expect(&r, &f, PB_LEN), 0);
    pb_reader_sub(&r, &f, &sub);
    T_EQ_INT(pb_next(&sub, &f), 1);
    T_EQ_INT(f.number, 2);
    T_EQ_INT(f.value, 7);
    T_EQ_INT(pb_offset(&sub, f.at), 1002);
    T_EQ_INT(pb_next(&sub, &f), 0);

    T_EQ_INT(pb_next(&r, &f), 1);
    pb_reader_sub(&r, &f, &sub);
    T_EQ_INT(pb_packed_varint(&sub, &v), 1);
    T_EQ_INT(v, 1);
    T_EQ_INT(pb_packed_varint(&sub, &v), 1);
    T_EQ_INT(v, 300);
    T_EQ_INT(pb_packed_varint(&sub, &v), 1);
    T_EQ_INT(v, 2);
    T_EQ_INT(pb_packed_varint(&sub, &v), 0);

    /* A varint where a message is expected. */
    static const uint8_t bad[] = {0x08, 0x01};
    pb_reader_init(&r, bad, sizeof bad, 50);
    T_EQ_INT(pb_next(&r, &f), 1);
    T_EQ_INT(pb_expect(&r, &f, PB_LEN), -1);
    T_EQ_INT(r.err, PB_EEXPECT);
    T_EQ_INT(pb_offset(&r, r.err_at), 50);
}

TEST(pbwire_encoder_round_trip)
{
    pb_buf b = {0};
    char long_text[300];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = 0;

    pb_uint(&b, 1, 150);
    pb_int32(&b, 2, -1);
    pb_sint(&b, 3, -2);
    pb_fixed32(&b, 4, 0xdeadbeef);
    pb_fixed64(&b, 5, 0x0123456789abcdefULL);
    size_t m = pb_begin(&b, 6);
    pb_string(&b, 1, long_text);  /* forces a two-byte length prefix */
    size_t inner = pb_begin(&b, 2);
    pb_uint(&b, 1, 9);
    pb_end(&b, inner);
    pb_end(&b, m);
    T_CHECK(!b.oom);
    /* protoc writes the first field as 08 96 01, and int32 -1 as ten bytes. */
    T_CHECK(b.len > 3 && b.data[0] == 0x08 && b.data[1] == 0x96 && b.data[2] == 0x01);

    pb_reader r, sub, sub2;
    pb_field f;
    pb_reader_init(&r, b.data, b.len, 0);
    T_EQ_INT(pb_next(&r, &f), 1);
    T_EQ_INT(f.value, 150);
    T_EQ_INT(pb_next(&r, &f), 1);
    T_EQ_INT((int32_t)(uint32_t)f.value, -1);
    T_EQ_INT(f.at[0], 0x10);
    T_EQ_INT(pb_next(&r, &f), 1);
    T_EQ_INT(pb_zigzag(f.value), -2);
    T_EQ_INT(pb_next(&r, &f), 1);
    T_EQ_INT(f.value, 0xdeadbeef);
    T_EQ_INT(pb_next(&r, &f), 1);
    T_CHECK(f.value == 0x0123456789abcdefULL);
    T_EQ_INT(pb_next(&r, &f), 1);
    T_EQ_INT(f.number, 6);
    pb_reader_sub(&r, &f, &sub);
    T_EQ_INT(pb_next(&sub, &f), 1);
    T_EQ_INT(f.len, strlen(long_text));
    T_CHECK(memcmp(f.data, long_text, f.len) == 0);
    T_EQ_INT(pb_next(&sub, &f), 1);
    pb_reader_sub(&sub, &f, &sub2);
    T_EQ_INT(pb_next(&sub2, &f), 1);
    T_EQ_INT(f.value, 9);
    T_EQ_INT(pb_next(&sub, &f), 0);
    T_EQ_INT(pb_next(&r, &f), 0);
    pb_buf_free(&b);
}

/* pb_varint9 agrees with pb_varint on every length it takes, whether the
 * varint ends the buffer or bytes follow it (the word-at-a-time path),
 * and takes nothing longer than 9 bytes or cut short. */
TEST(pbwire_varint9)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int n = 1; n <= 10; n++) {
        for (int round = 0; round < 2000; round++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint8_t buf[24];
            /* n bytes, the last without its continuation bit; one round
             * in four non-minimal (a zero last group). */
            uint64_t r = seed;
            for (int i = 0; i < n; i++) {
                buf[i] = (uint8_t)((r >> (i * 5 % 57)) & 0x7f) | (i + 1 < n ? 0x80 : 0);
            }
            if (round % 4 == 0 && n > 1)
                buf[n - 1] = 0;
            if (n == 10)
                buf[9] &= 1;
            for (int i = n; i < (int)sizeof buf; i++)
                buf[i] = (uint8_t)(0x80 | i);
            for (int follow = 0; follow <= 1; follow++) {
                const uint8_t *end = buf + (follow ? sizeof buf : (size_t)n);
                const uint8_t *p = buf, *q = buf;
                uint64_t want = 0, got = 0;
                T_EQ_INT(pb_varint(&q, end, &want), PB_OK);
                int took = pb_varint9(&p, end, &got);
                if (n <= 9) {
                    if (!took || got != want || p != buf + n) {
                        t_fail(__FILE__, __LINE__, "length %d, %s: %d, 0x%llx against 0x%llx",
                               n, follow ? "bytes after" : "at the end", took,
                               (unsigned long long)got, (unsigned long long)want);
                        return;
                    }
                } else {
                    T_EQ_INT(took, 0);
                    T_CHECK(p == buf);
                }
            }
            /* Cut short: every prefix is refused, nothing read. */
            for (int cut = 0; cut < n && n <= 9; cut++) {
                const uint8_t *p = buf;
                uint64_t v;
                T_EQ_INT(pb_varint9(&p, buf + cut, &v), 0);
                T_CHECK(p == buf);
            }
        }
    }
}
