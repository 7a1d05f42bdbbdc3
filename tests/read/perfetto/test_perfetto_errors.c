/* Damaged Perfetto traces: every prefix and flipped byte of the fixtures
 * converts or is refused with a message naming the packet; the messages of
 * each kind of damage; --keep-going past a damaged packet and a cut. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_fixtures.h"
#include "t.h"
#include "test_util.h"

/* Every prefix of a trace converts or fails with a message naming the
 * packet; flipped bytes never crash the reader. */
TEST(perfetto_damaged_traces)
{
    pb_buf b = {0};
    fx_perf(&b);
    fx_heap(&b);
    size_t ok = 0, failed = 0;
    for (size_t n = 1; n < b.len; n++) {
        pc_profile *p = NULL;
        pc_error err;
        int st = convert_bytes(b.data, n, NULL, &p, &err);
        if (st == PC_OK) {
            ok++;
        } else {
            failed++;
            /* A prefix without a sample is refused as holding nothing. */
            if (st != PC_EINPUT || (!strstr(err.message, "fixture: offset ") &&
                                    !strstr(err.message, "fixture: nothing to show: ")))
                t_fail(__FILE__, __LINE__, "prefix %zu: status %d: %s", n, st, err.message);
        }
        pc_profile_free(p);
    }
    T_CHECK(ok > 0 && failed > 0);
    uint8_t *copy = malloc(b.len);
    for (size_t i = 0; i < b.len; i++) {
        memcpy(copy, b.data, b.len);
        copy[i] ^= 0xa5;
        pc_profile *p = NULL;
        pc_error err;
        int st = convert_bytes(copy, b.len, NULL, &p, &err);
        if (st != PC_OK && st != PC_EINPUT && st != PC_EUSAGE)
            t_fail(__FILE__, __LINE__, "flip at %zu: status %d: %s", i, st, err.message);
        pc_profile_free(p);
    }
    free(copy);
    pb_buf_free(&b);
}

static void expect_error(const void *data, size_t len, const char *want)
{
    pc_profile *p = NULL;
    pc_error err;
    int st = convert_bytes(data, len, NULL, &p, &err);
    T_EQ_INT(st, PC_EINPUT);
    if (st != PC_OK)
        T_CONTAINS(err.message, want);
    pc_profile_free(p);
}

TEST(perfetto_error_messages)
{
    pb_buf b = {0};
    fx_perf(&b);
    /* Cut inside the second packet. */
    size_t first = 2 + b.data[1];
    char want[128];
    t_case("perfetto_error_messages: truncated");
    snprintf(want, sizeof want, "fixture: offset %zu: packet 2 claims", first);
    expect_error(b.data, first + 5, want);
    expect_error(b.data, first + 5, "but only 3 remain (truncated trace?)");

    t_case("perfetto_error_messages: wrong wire type");
    pb_buf w = {0};
    size_t pk = pfe_packet(&w, 1);
    pb_uint(&w, 66, 5);   /* perf_sample as a number */
    pb_end(&w, pk);
    expect_error(w.data, w.len, "fixture: offset 4: packet 1: TracePacket:");

    t_case("perfetto_error_messages: bad varint in interned data");
    pb_buf v = {0};
    pk = pfe_packet(&v, 1);
    pb_uint(&v, PFE_CLEARED, 1);
    size_t in = pb_begin(&v, PFE_INTERNED);
    size_t fr = pb_begin(&v, PFE_FRAMES);
    static const uint8_t bad[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    pb_raw(&v, bad, sizeof bad);
    pb_end(&v, fr);
    pb_end(&v, in);
    pb_end(&v, pk);
    expect_error(v.data, v.len, "packet 1: Frame:");

    t_case("perfetto_error_messages: corrupt compressed packets");
    pb_buf z = {0};
    pk = pfe_packet(&z, 0);
    pb_bytes(&z, 50, "not zlib at all", 15);
    pb_end(&z, pk);
    expect_error(z.data, z.len, "fixture: offset 2: packet 1: compressed_packets:");

    t_case("perfetto_error_messages: not a trace");
    expect_error("GIF89a, not a profile", 21, "fixture: offset 0: unknown input format");
    pb_buf_free(&b);
    pb_buf_free(&w);
    pb_buf_free(&v);
    pb_buf_free(&z);
}

/* --keep-going: a damaged packet between good ones is skipped, a cut
 * trace keeps the packets before the cut; both are reported. */
TEST(perfetto_keep_going)
{
    pb_buf b = {0};
    fx_perf(&b);
    size_t full = b.len;
    /* A packet whose own framing holds but whose content does not: a
     * length-delimited field longer than the packet. */
    static const uint8_t bad[] = {0x0a, 0x02, 0x52, 0x05};
    pb_buf c = {0};
    size_t half = 0;
    /* The damaged packet goes in after the first half of the packets. */
    {
        const uint8_t *q = b.data, *end = b.data + full;
        int n = 0;
        while (q < end && n < 6) {
            uint64_t len;
            const uint8_t *r = q + 1;
            if (pb_varint(&r, end, &len) != PB_OK)
                break;
            q = r + len;
            n++;
        }
        half = (size_t)(q - b.data);
    }
    pb_raw(&c, b.data, half);
    pb_raw(&c, bad, sizeof bad);
    pb_raw(&c, b.data + half, full - half);
    pc_options o;
    pc_options_init(&o);
    o.keep_going = 1;
    log_capture_start(&o);
    pc_profile *p = convert_buf(&c, &o);
    if (p) {
        T_EQ_INT(p->sample.n, 5);
        pc_profile_free(p);
    }
    T_CONTAINS(log_capture_text(), "warning: 1 damaged packets skipped (the first: fixture: "
                                   "offset ");
    pc_options strict;
    pc_options_init(&strict);
    pc_profile *q = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(c.data, c.len, &strict, &q, &err), PC_EINPUT);
    pc_profile_free(q);
    /* Cut in the middle of a packet. */
    log_capture_start(&o);
    p = NULL;
    T_EQ_INT(convert_bytes(b.data, full - 3, &o, &p, &err), PC_OK);
    if (p) {
        T_CHECK(p->sample.n >= 3);
        pc_profile_free(p);
    }
    T_CONTAINS(log_capture_text(), "warning: reading stopped early, ");
    T_CONTAINS(log_capture_text(), "(truncated trace?)");
    pb_buf_free(&b);
    pb_buf_free(&c);
}
