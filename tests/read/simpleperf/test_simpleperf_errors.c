/* Malformed simpleperf input: every case is refused with PC_EINPUT and a
 * message naming the input, the byte offset at fault and what was wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "t.h"
#include "test_util.h"

/* Converts the bytes and checks the refusal; returns the message. */
static const char *expect_error(const void *data, size_t len,
                                unsigned long long offset, const char *what)
{
    static pc_error err;
    pc_profile *p;
    char at[64];
    int st = convert_bytes(data, len, NULL, &p, &err);
    T_EQ_INT(st, PC_EINPUT);
    pc_profile_free(p);
    if (st != PC_EINPUT)
        return "";
    snprintf(at, sizeof at, "fixture: offset %llu", offset);
    T_CONTAINS(err.message, at);
    T_CONTAINS(err.message, what);
    T_CHECK(strchr(err.message, '\n') == NULL);
    return err.message;
}

/* A file with one event type and one File of one symbol, then a sample
 * built by the caller, then the usual tail. */
static void with_sample(spe *e, uint32_t file, int32_t sym, uint32_t event)
{
    static const char *const events[] = {"cpu-clock"};
    static const char *const syms[] = {"main"};
    spe_frame f = {0x10, file, sym, -1};
    spe_begin(e);
    spe_meta(e, events, 1, NULL, NULL, NULL, NULL, 0);
    spe_sample(e, 1000, 7, 1, event, &f, 1, NULL);
    spe_lost(e, 1, 0);
    spe_file(e, 0, "/bin/app", syms, 1);
    spe_thread(e, 7, 7, "app");
    spe_end(e);
}

TEST(err_header)
{
    spe e;
    t_case("err: empty input");
    expect_error("", 0, 0, "the input is empty");

    t_case("err: wrong magic");
    expect_error("SIMPLEPERG\x01\x00\x00\x00\x00\x00", 16, 0, "unknown input format");

    t_case("err: header cut after the magic");
    expect_error("SIMPLEPERF\x01", 11, 11, "inside the header");

    t_case("err: unknown version");
    spe_begin_v(&e, 2);
    spe_end(&e);
    expect_error(e.out.data, e.out.len, 10, "unsupported version 2");
    spe_free(&e);
}

TEST(err_framing)
{
    spe e;
    t_case("err: record size cut short");
    spe_begin(&e);
    pb_raw(&e.out, "\x05\x00", 2);
    expect_error(e.out.data, e.out.len, 12, "inside a record size (2 of 4 bytes)");
    spe_free(&e);

    t_case("err: record longer than the file");
    spe_begin(&e);
    pb_raw(&e.out, "\x64\x00\x00\x00" "abcde", 9);
    expect_error(e.out.data, e.out.len, 12, "claims 100 bytes but only 5 remain");
    spe_free(&e);

    t_case("err: missing terminator");
    fx_android(&e);
    e.out.len -= 4;
    expect_error(e.out.data, e.out.len, e.out.len, "without the terminating zero size");
    spe_free(&e);

    t_case("err: trailing garbage");
    fx_android(&e);
    size_t end = e.out.len;
    pb_raw(&e.out, "xyz", 3);
    expect_error(e.out.data, e.out.len, end, "3 bytes of trailing data");
    spe_free(&e);
}

TEST(err_wire)
{
    spe e;
    /* Record = Sample{time: an 11-byte varint}. */
    static const uint8_t bad_varint[] = {0x0a, 0x0c, 0x08, 0xff, 0xff, 0xff, 0xff,
                                         0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    /* Record = Sample{thread_id as a length-delimited field}. */
    static const uint8_t bad_type[] = {0x0a, 0x03, 0x12, 0x01, 0x41};
    /* Record = Sample{callchain entry longer than the sample}. */
    static const uint8_t bad_len[] = {0x0a, 0x03, 0x1a, 0x09, 0x08};

    t_case("err: malformed varint");
    spe_begin(&e);
    spe_raw_record(&e, bad_varint, sizeof bad_varint);
    spe_end(&e);
    T_CONTAINS(expect_error(e.out.data, e.out.len, 19, "malformed varint"),
               "record 1:");
    spe_free(&e);

    t_case("err: wrong wire type");
    spe_begin(&e);
    spe_raw_record(&e, bad_type, sizeof bad_type);
    spe_end(&e);
    expect_error(e.out.data, e.out.len, 18, "wrong wire type");
    spe_free(&e);

    t_case("err: nested length past its message");
    spe_begin(&e);
    spe_raw_record(&e, bad_len, sizeof bad_len);
    spe_end(&e);
    expect_error(e.out.data, e.out.len, 19, "longer than its message");
    spe_free(&e);
}

TEST(err_references)
{
    spe e;
    const unsigned long long sample_at = 12 + 4 + 15;  /* after the MetaInfo */

    t_case("err: file_id without a File");
    with_sample(&e, 7, 0, 0);
    expect_error(e.out.data, e.out.len, sample_at, "file_id 7, which has no File record");
    spe_free(&e);

    t_case("err: symbol_id out of range");
    with_sample(&e, 0, 5, 0);
    expect_error(e.out.data, e.out.len, sample_at, "symbol_id 5 of file_id 0, which has 1 symbols");
    spe_free(&e);

    t_case("err: negative symbol_id other than -1");
    with_sample(&e, 0, -2, 0);
    expect_error(e.out.data, e.out.len, sample_at, "symbol_id -2");
    spe_free(&e);

    t_case("err: event_type_id out of range");
    with_sample(&e, 0, 0, 3);
    expect_error(e.out.data, e.out.len, sample_at, "event_type_id 3 is out of range (1 event types)");
    spe_free(&e);

    t_case("err: duplicate File id");
    with_sample(&e, 0, 0, 0);
    e.out.len -= 4;
    size_t dup_at = e.out.len;
    spe_file(&e, 0, "/bin/other", NULL, 0);
    spe_end(&e);
    expect_error(e.out.data, e.out.len, dup_at, "File id 0 appears twice");
    spe_free(&e);

    t_case("err: sanity of the fixture these cases start from");
    with_sample(&e, 0, 0, 0);
    pc_profile *p;
    pc_error err;
    T_EQ_INT(convert_bytes(e.out.data, e.out.len, NULL, &p, &err), PC_OK);
    pc_profile_free(p);
    spe_free(&e);
}

TEST(err_gzip)
{
    spe e;
    unsigned char *gz;
    fx_android(&e);
    size_t n = gzip_bytes(e.out.data, e.out.len, &gz);
    pc_profile *p;
    pc_error err;

    t_case("err: truncated gzip");
    T_EQ_INT(convert_bytes(gz, n / 2, NULL, &p, &err), PC_EINPUT);
    T_CONTAINS(err.message, "fixture: compressed offset");
    T_CONTAINS(err.message, "gzip data is truncated");

    t_case("err: corrupt gzip");
    gz[n / 2] ^= 0x55;
    gz[n / 2 + 1] ^= 0x55;
    T_EQ_INT(convert_bytes(gz, n, NULL, &p, &err), PC_EINPUT);
    T_CONTAINS(err.message, "fixture: ");
    T_CONTAINS(err.message, "offset");

    t_case("err: decompressed offsets are marked as such");
    free(gz);
    e.out.len -= 4;  /* drop the terminator, then compress */
    n = gzip_bytes(e.out.data, e.out.len, &gz);
    T_EQ_INT(convert_bytes(gz, n, NULL, &p, &err), PC_EINPUT);
    T_CONTAINS(err.message, "of the decompressed data");
    free(gz);
    spe_free(&e);
}

/* Cut the fixture at every length: each prefix is refused cleanly. */
TEST(err_every_truncation)
{
    spe e;
    fx_android(&e);
    size_t bad = 0;
    for (size_t len = 0; len < e.out.len; len++) {
        pc_profile *p;
        pc_error err;
        int st = convert_bytes(e.out.data, len, NULL, &p, &err);
        pc_profile_free(p);
        if (st != PC_EINPUT || !strstr(err.message, "offset ")) {
            if (bad++ < 5)
                t_fail(__FILE__, __LINE__, "cut at %zu: status %d: %s", len, st,
                       st ? err.message : "accepted");
        }
    }
    T_EQ_INT(bad, 0);
    spe_free(&e);
}
