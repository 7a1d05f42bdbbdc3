/* Packets framed and scanned on a thread of their own (ahead.c) against
 * the single-threaded stream: the same profile, messages and failures,
 * whatever the framing meets between the samples (compressed packets,
 * whose inner packets count, packets too big to copy, fields of the trace
 * that are no packets), for a damaged packet and a broken framing, strict
 * and with keep_going, from memory and from gzip (read in windows). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_fixtures.h"
#include "read/perfetto/reader.h"
#include "t.h"
#include "test_util.h"

/* A TracePacket field no reader looks at. */
#define UNKNOWN_FIELD 1999

enum { WHOLE, DAMAGED, TRUNCATED, N_ENDS };
static const char *const end_name[] = {"whole", "a damaged packet", "a broken framing"};

/* A trace of n samples on sequence 1.  Every 997 samples come a
 * compressed packet of three samples, a packet of 70,000 bytes (more than
 * the framing thread copies) and a field of the trace that is no packet.
 * DAMAGED: halfway, a packet whose timestamp is length-delimited.
 * TRUNCATED: the trace ends inside a packet. */
static void ahead_trace(pb_buf *b, size_t n, int end)
{
    static uint8_t pad[70000];
    perf_start_with_frames(b, "fn", 3);
    static const uint64_t one[] = {1, 2}, two[] = {1, 2, 3};
    callstack_packet(b, 1, one, 2, 0);
    callstack_packet(b, 2, two, 3, 1);
    uint64_t t = 600000000;
    for (size_t k = 0; k < n; k++) {
        perf_sample_packet(b, t += 100000, 1 + k % 2);
        if (k % 997 == 500) {
            pb_buf inner = {0};
            for (int i = 0; i < 3; i++)
                perf_sample_packet(&inner, t += 1000, 2);
            pfe_compressed(b, &inner, 0);
            pb_buf_free(&inner);
            size_t pk = pfe_packet(b, 1);
            pb_bytes(b, UNKNOWN_FIELD, pad, sizeof pad);
            pb_end(b, pk);
            pb_uint(b, 2, 7);
        }
        if (end == DAMAGED && k == n / 2) {
            size_t pk = pfe_packet(b, 1);
            pb_bytes(b, PFE_TIMESTAMP, "x", 1);
            pb_end(b, pk);
        }
    }
    if (end == TRUNCATED) {
        static const uint8_t cut[] = {0x0a, 100, 0x50, 0x01};
        pb_raw(b, cut, sizeof cut);
    }
}

typedef struct outcome {
    int status;
    char message[sizeof ((pc_error *)0)->message];
    char *json, *log;
} outcome;

static void outcome_free(outcome *o)
{
    free(o->json);
    free(o->log);
}

static void convert_case(const void *data, size_t len, int threads, int keep_going,
                         outcome *out)
{
    pc_options o;
    pc_options_init(&o);
    o.threads = threads;
    o.keep_going = keep_going;
    log_capture_start(&o);
    pc_profile *p = NULL;
    pc_error err = {0};
    memset(out, 0, sizeof *out);
    out->status = convert_bytes(data, len, &o, &p, &err);
    snprintf(out->message, sizeof out->message, "%s", out->status ? err.message : "");
    out->log = strdup(log_capture_text());
    if (p)
        out->json = written_text(p, PC_FORMAT_FIREFOX, NULL);
    pc_profile_free(p);
}

TEST(perfetto_threads_framing_same_as_one)
{
    for (int end = 0; end < N_ENDS; end++) {
        pb_buf b = {0};
        ahead_trace(&b, 12000, end);
        unsigned char *gz = NULL;
        size_t gz_len = gzip_bytes(b.data, b.len, &gz);
        for (int keep_going = 0; keep_going < 2; keep_going++) {
            /* [gzip][threads - 1] */
            outcome r[2][2];
            for (int z = 0; z < 2; z++)
                for (int th = 0; th < 2; th++)
                    convert_case(z ? (const void *)gz : b.data, z ? gz_len : b.len, th + 1,
                                 keep_going, &r[z][th]);
            for (int z = 0; z < 2; z++) {
                t_case("perfetto_threads_framing_same_as_one: %s%s, %s", end_name[end],
                       keep_going ? ", keep going" : "", z ? "gzip" : "plain");
                const outcome *one = &r[z][0], *two = &r[z][1];
                T_EQ_INT(two->status, one->status);
                T_EQ_STR(two->message, one->message);
                T_EQ_STR(two->log, one->log);
                T_CHECK(!one->json == !two->json);
                if (one->json && two->json)
                    T_CHECK(strcmp(one->json, two->json) == 0);
            }
            outcome one = r[0][0];
            /* What each ending is there for shows on one thread. */
            t_case("perfetto_threads_framing_same_as_one: %s%s", end_name[end],
                   keep_going ? ", keep going" : "");
            if (end == WHOLE || keep_going)
                T_EQ_INT(one.status, PC_OK);
            if (end == DAMAGED && !keep_going)
                T_CONTAINS(one.message, "TracePacket");
            if (end == DAMAGED && keep_going)
                T_CONTAINS(one.log, "damaged packets skipped");
            /* The cut packet's two bytes past its header. */
            if (end == TRUNCATED && !keep_going)
                T_CONTAINS(one.message, "claims 100 bytes but only 2 remain");
            if (one.json)
                T_CONTAINS(one.json, "\"fn2\"");
            for (int z = 0; z < 2; z++)
                for (int th = 0; th < 2; th++)
                    outcome_free(&r[z][th]);
        }
        free(gz);
        pb_buf_free(&b);
    }
}

/* The top-level packets of the trace in b. */
static size_t count_packets(const pb_buf *b)
{
    size_t n = 0;
    const uint8_t *p = b->data, *end = b->data + b->len;
    while (p < end) {
        uint64_t tag, len;
        if (pb_varint(&p, end, &tag) != PB_OK || (tag & 7) != PB_LEN ||
            pb_varint(&p, end, &len) != PB_OK || len > (uint64_t)(end - p))
            break;
        n += tag >> 3 == 1;
        p += len;
    }
    return n;
}

/* The packet count in a broken framing's message counts the packets
 * inside compressed ones, which only the reading thread sees: the framing
 * thread leaves the message to it. */
TEST(perfetto_threads_framing_counts_inner_packets)
{
    pb_buf b = {0}, inner = {0};
    perf_start_with_frames(&b, "fn", 3);
    static const uint64_t one[] = {1, 2};
    callstack_packet(&b, 1, one, 2, 0);
    uint64_t t = 600000000;
    for (int i = 0; i < 40; i++)
        perf_sample_packet(&inner, t += 1000, 1);
    pfe_compressed(&b, &inner, 0);
    pb_buf_free(&inner);
    /* The packets before the cut, the compressed one's 40 with them; the
     * cut one is the next. */
    char want[64];
    snprintf(want, sizeof want, "packet %zu claims 100 bytes", count_packets(&b) + 40 + 1);
    static const uint8_t cut[] = {0x0a, 100, 0x50, 0x01};
    pb_raw(&b, cut, sizeof cut);
    for (int threads = 1; threads <= 2; threads++) {
        t_case("perfetto_threads_framing_counts_inner_packets: --threads %d", threads);
        pc_options o;
        pc_options_init(&o);
        o.threads = threads;
        pc_profile *p = NULL;
        pc_error err = {0};
        T_EQ_INT(convert_bytes(b.data, b.len, &o, &p, &err), PC_EINPUT);
        T_CONTAINS(err.message, want);
        pc_profile_free(p);
    }
    pb_buf_free(&b);
}

/* A damaged packet read from a pipe that stays open: the conversion fails
 * at once, as on one thread, instead of waiting for the pipe to send more
 * or close (the framing thread hands over what it has before it waits,
 * and is stopped when the reading thread fails).  A child converts; an
 * alarm ends it should it wait. */
TEST(perfetto_threads_framing_pipe_error_without_waiting)
{
    pb_buf b = {0};
    perf_start_with_frames(&b, "fn", 3);
    static const uint64_t one[] = {1, 2};
    callstack_packet(&b, 1, one, 2, 0);
    uint64_t t = 600000000;
    for (int i = 0; i < 50; i++)
        perf_sample_packet(&b, t += 1000, 1);
    size_t pk = pfe_packet(&b, 1);
    pb_bytes(&b, PFE_TIMESTAMP, "x", 1);
    pb_end(&b, pk);
    /* Past the 4 KiB that format detection reads first. */
    while (b.len < 8192)
        perf_sample_packet(&b, t += 1000, 1);
    pipe_fails_at_once(b.data, b.len, 2, "TracePacket");
    /* The same followed by a field of the trace that is no packet and
     * shorter than the framing's first look (11 bytes): the damaged packet
     * is handed over before that look waits. */
    static const uint8_t tail[] = {0x10, 0x07};
    pb_raw(&b, tail, sizeof tail);
    pipe_fails_at_once(b.data, b.len, 2, "TracePacket");
    pb_buf_free(&b);
}

/* An empty packet as the first of a batch (after a packet too big to
 * copy, so before any bytes of the batch): read as on one thread, at a
 * real address (the sanitizers' build checks that). */
TEST(perfetto_threads_framing_empty_packet_first)
{
    static uint8_t pad[70000];
    static const uint8_t empty[] = {0x0a, 0x00};
    pb_buf b = {0};
    perf_start_with_frames(&b, "fn", 3);
    size_t pk = pfe_packet(&b, 1);
    pb_bytes(&b, UNKNOWN_FIELD, pad, sizeof pad);
    pb_end(&b, pk);
    pb_raw(&b, empty, sizeof empty);
    static const uint64_t one[] = {1, 2};
    callstack_packet(&b, 1, one, 2, 0);
    uint64_t t = 600000000;
    for (int i = 0; i < 100; i++)
        perf_sample_packet(&b, t += 1000, 1);
    outcome r[2];
    for (int th = 0; th < 2; th++)
        convert_case(b.data, b.len, th + 1, 0, &r[th]);
    T_EQ_INT(r[0].status, PC_OK);
    T_EQ_INT(r[1].status, PC_OK);
    T_EQ_STR(r[1].log, r[0].log);
    T_CHECK(r[0].json && r[1].json && strcmp(r[0].json, r[1].json) == 0);
    for (int th = 0; th < 2; th++)
        outcome_free(&r[th]);
    pb_buf_free(&b);
}
