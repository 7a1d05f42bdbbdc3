/* The quick paths for traced_perf sample packets (packet.c, pf_quick_scan),
 * interned callstacks and frames (sequence.c, quick_callstack,
 * quick_frame) against the general ones: every sample packet below is
 * written twice, once as it is and once with unknown fields (in the
 * packet, and in each Callstack and Frame it defines) that the quick
 * paths leave to the general ones, and the two
 * traces must convert to the same profile, messages and all, on one
 * thread and on two (the samples are enough to start the second thread
 * of pipe.c). */
#include <stdlib.h>
#include <string.h>

#include "pf_fixtures.h"
#include "read/perfetto/reader.h"
#include "t.h"
#include "test_util.h"

enum { TP_TRUSTED_UID = 3, PERF_SAMPLE = 66 };

/* An unknown TracePacket field no reader looks at. */
#define UNKNOWN_FIELD 1999

enum {
    V_PLAIN, V_REORDERED, V_REPEATED, V_OWN_CLOCK, V_TRUSTED_PID, V_UNWIND_ERROR,
    V_UNWIND_NONE, V_COUNT_9_BYTES, V_COUNT_10_BYTES, V_UNKNOWN_PACKET_FIELD,
    V_UNKNOWN_SAMPLE_FIELD, V_COUNT_ONLY, V_BARE, V_CPU_BEYOND, V_NO_CPU, V_LONG_TID,
    V_WIDE_PID, V_UNDEFINED_CALLSTACK, V_STATE_NEEDED, V_NEW_SEQUENCE, V_NO_TIME,
    V_NEW_CALLSTACK, V_NEW_PACKED, V_NEW_IID_LAST, V_NEW_EMPTY, V_NEW_LONG_FRAME,
    V_NEW_FRAME, V_NEW_FRAME_KIND, V_PRODUCER_ORDER, V_COUNT
};

/* A varint written in n bytes, its value v (n at least what v needs). */
static void padded_varint(pb_buf *b, uint64_t v, int n)
{
    uint8_t bytes[10];
    for (int i = 0; i < n && i < 10; i++) {
        bytes[i] = (uint8_t)((v & 0x7f) | (i + 1 < n ? 0x80 : 0));
        v >>= 7;
    }
    pb_raw(b, bytes, (size_t)n);
}

static void sample_of(pb_buf *b, int v, uint64_t k)
{
    size_t m = pb_begin(b, PERF_SAMPLE);
    if (v == V_PRODUCER_ORDER) {
        /* traced_perf's order: the callstack after the count. */
        pb_uint(b, 1, k % 3);
        pb_uint(b, 2, 100);
        pb_uint(b, 3, 100 + k % 2);
        pb_uint(b, 5, 2);
        pb_uint(b, 6, 1000 * k);
        pb_uint(b, 4, 1 + k % 2);
        pb_end(b, m);
        return;
    }
    if (v != V_NO_CPU)
        pb_uint(b, 1, v == V_CPU_BEYOND ? 5000 : k % 3);
    pb_uint(b, 2, v == V_WIDE_PID ? 3000000000u : 100);
    if (v == V_REPEATED)
        pb_uint(b, 3, 101);
    if (v == V_LONG_TID) {
        pb_tag(b, 3, PB_VARINT);
        padded_varint(b, 100 + k % 2, 3);
    } else {
        pb_uint(b, 3, 100 + k % 2);
    }
    if (v == V_UNKNOWN_SAMPLE_FIELD)
        pb_uint(b, 9, 7);
    if (v == V_UNDEFINED_CALLSTACK)
        pb_uint(b, 4, 99);
    else if (v >= V_NEW_CALLSTACK)
        pb_uint(b, 4, 1000 + k);
    else if (v != V_COUNT_ONLY && v != V_BARE)
        pb_uint(b, 4, 1 + k % 2);
    pb_uint(b, 5, 2); /* cpu_mode: user */
    if (v == V_COUNT_9_BYTES) {
        pb_uint(b, 6, ((uint64_t)1 << 62) + k);
    } else if (v == V_COUNT_10_BYTES) {
        pb_uint(b, 6, ((uint64_t)1 << 63) + k);
    } else if (v != V_BARE) {
        pb_uint(b, 6, 1000 * k);
    }
    if (v == V_UNWIND_ERROR || v == V_UNWIND_NONE)
        pb_uint(b, 16, v == V_UNWIND_ERROR ? 3 : 1);
    pb_end(b, m);
}

/* Interned data defining callstack 1000 + k in the shape of variant v,
 * its frames (of fn0 to fn2) varying with k; with forced, an unknown
 * field in the Callstack. */
static void new_callstack(pb_buf *b, int v, uint64_t k, int forced)
{
    size_t in = pb_begin(b, PFE_INTERNED);
    if (v == V_NEW_FRAME || v == V_NEW_FRAME_KIND) {
        /* Frame 100 + k, of a function of the first packet, which the
         * callstack below has second; with forced, an unknown field. */
        size_t fr = pb_begin(b, PFE_FRAMES);
        if (v == V_NEW_FRAME_KIND)
            pb_uint(b, 7, k % 4);  /* kind: none, user, kernel, interpreted */
        pb_uint(b, 4, 0x40 + k);
        pb_uint(b, 2, 1 + k % 3);
        pb_uint(b, 1, 100 + k);
        pb_uint(b, 5, 3);  /* a field the readers pass over */
        if (forced)
            pb_uint(b, 9, 1);
        pb_end(b, fr);
    }
    size_t cs = pb_begin(b, PFE_CALLSTACKS);
    if (v != V_NEW_IID_LAST)
        pb_uint(b, 1, 1000 + k);
    size_t n = v == V_NEW_EMPTY ? 0 : 2 + k % 5;
    if (v == V_NEW_PACKED && n) {
        size_t m = pb_begin(b, 2);
        for (size_t i = 0; i < n; i++)
            pb_put_varint(b, 1 + (k + i * i) % 3);
        pb_end(b, m);
    }
    for (size_t i = 0; v != V_NEW_PACKED && i < n; i++) {
        if ((v == V_NEW_FRAME || v == V_NEW_FRAME_KIND) && i == 1) {
            pb_uint(b, 2, 100 + k);
        } else if (v == V_NEW_LONG_FRAME && i == 1) {
            /* A frame iid in ten bytes: left to the general reader. */
            pb_tag(b, 2, PB_VARINT);
            padded_varint(b, 1 + (k + i * i) % 3, 10);
        } else {
            pb_uint(b, 2, 1 + (k + i * i) % 3);
        }
    }
    if (v == V_NEW_IID_LAST)
        pb_uint(b, 1, 1000 + k);
    if (forced)
        pb_uint(b, 9, 1);
    pb_end(b, cs);
    pb_end(b, in);
}

/* Sample packet k in the shape of variant v at time t; with forced, an
 * unknown field the quick path refuses and the general one passes over. */
static void variant_packet(pb_buf *b, int v, uint64_t k, uint64_t t, int forced)
{
    size_t pk = pb_begin(b, 1);
    if (v >= V_NEW_CALLSTACK)
        new_callstack(b, v, k, forced);
    uint32_t seq = v == V_STATE_NEEDED ? 7 : v == V_NEW_SEQUENCE ? 8 : 1;
    if (v == V_PRODUCER_ORDER) {
        /* As traced_perf writes a packet (its interned data empty) and
         * the service adds its trusted uid and sequence after. */
        pb_uint(b, PFE_FLAGS, 2);
        pb_uint(b, PFE_TIMESTAMP, t);
        pb_end(b, pb_begin(b, 12));
        sample_of(b, v, k);
        pb_uint(b, TP_TRUSTED_UID, 10000);
        pb_uint(b, PFE_SEQ, seq);
    } else if (v == V_REORDERED) {
        sample_of(b, v, k);
        pb_uint(b, PFE_TIMESTAMP, t);
        pb_uint(b, PFE_FLAGS, 2);
        pb_uint(b, PFE_SEQ, seq);
    } else {
        pb_uint(b, PFE_SEQ, seq);
        if (v != V_NEW_SEQUENCE)
            pb_uint(b, PFE_FLAGS, 2);
        if (v == V_REPEATED)
            pb_uint(b, PFE_TIMESTAMP, t - 5000);
        if (v == V_OWN_CLOCK)
            pb_uint(b, PFE_CLOCK_ID, BOOTTIME);
        if (v != V_NO_TIME)
            pb_uint(b, PFE_TIMESTAMP, v == V_OWN_CLOCK ? t + BOOT_AHEAD : t);
        if (v == V_TRUSTED_PID)
            pb_uint(b, 79, 100);
        if (v == V_UNKNOWN_PACKET_FIELD)
            pb_uint(b, TP_TRUSTED_UID, 10000);
        sample_of(b, v, k);
    }
    if (forced)
        pb_string(b, UNKNOWN_FIELD, "general path");
    pb_end(b, pk);
}

static void trace(pb_buf *b, int forced)
{
    perf_start_with_frames(b, "fn", 3);
    static const uint64_t one[] = {1, 2}, two[] = {1, 2, 3};
    callstack_packet(b, 1, one, 2, 0);
    callstack_packet(b, 2, two, 3, 1);
    uint64_t t = 600000000, k = 0;
    for (int round = 0; round < 120; round++)
        for (int v = 0; v < V_COUNT; v++, k++)
            variant_packet(b, v, k, t += 100000 + 37 * (k % 11), forced);
}

/* The profile's processed Firefox output and its messages. */
static int convert_to_text(const pb_buf *b, int threads, char **json, char **log)
{
    pc_options o;
    pc_options_init(&o);
    o.threads = threads;
    log_capture_start(&o);
    pc_profile *p = convert_buf(b, &o);
    if (!p)
        return -1;
    *log = strdup(log_capture_text());
    *json = written_text(p, PC_FORMAT_FIREFOX, NULL);
    pc_profile_free(p);
    return *json ? 0 : -1;
}

TEST(perfetto_quick_path_same_as_general)
{
    pb_buf quick = {0}, general = {0};
    trace(&quick, 0);
    trace(&general, 1);
    for (int threads = 1; threads <= 2; threads++) {
        t_case("perfetto_quick_path_same_as_general: --threads %d", threads);
        char *qj = NULL, *ql = NULL, *gj = NULL, *gl = NULL;
        T_EQ_INT(convert_to_text(&quick, threads, &qj, &ql), 0);
        T_EQ_INT(convert_to_text(&general, threads, &gj, &gl), 0);
        if (qj && gj) {
            T_EQ_INT(strlen(qj), strlen(gj));
            T_CHECK(strcmp(qj, gj) == 0);
            T_EQ_STR(ql, gl);
            /* What the variants are there for shows in the messages. */
            T_CONTAINS(ql, "perf samples were only partly unwound");
            T_CONTAINS(ql, "name a callstack the trace does not define");
            T_CONTAINS(ql, "needed incremental state");
            T_CONTAINS(ql, "have no timestamp");
            T_CONTAINS(ql, "neither a callstack nor a count");
        }
        free(qj);
        free(ql);
        free(gj);
        free(gl);
    }
    pb_buf_free(&quick);
    pb_buf_free(&general);
}

/* Which PerfSample encodings the quick decoder takes, and what it reads. */
TEST(perfetto_quick_sample_decoder)
{
    pf_perf_fields f;
    pb_buf b = {0};
    pb_uint(&b, 1, 3);
    pb_uint(&b, 2, 1234);
    pb_uint(&b, 3, 1235);
    pb_uint(&b, 4, 77);
    pb_uint(&b, 5, 1);
    pb_uint(&b, 6, ((uint64_t)1 << 62) + 5);
    pb_uint(&b, 16, 4);
    pb_uint(&b, 3, 1236); /* the last of a repeated field */
    T_EQ_INT(pf_perf_sample_quick(b.data, b.data + b.len, &f), 1);
    T_EQ_INT(f.cpu, 3);
    T_EQ_INT(f.pid, 1234);
    T_EQ_INT(f.tid, 1236);
    T_EQ_INT(f.cs, 77);
    T_CHECK(f.count == ((uint64_t)1 << 62) + 5);
    T_EQ_INT(f.err, 4);
    T_CHECK(f.has_cpu && f.has_cs && f.has_count && f.has_err);
    /* traced_perf's order, the callstack after the count; and a
     * callstack in both places, the later one kept. */
    for (int twice = 0; twice < 2; twice++) {
        b.len = 0;
        pb_uint(&b, 1, 2);
        pb_uint(&b, 2, 10);
        pb_uint(&b, 3, 11);
        if (twice)
            pb_uint(&b, 4, 5);
        pb_uint(&b, 5, 1);
        pb_uint(&b, 6, 300);
        pb_uint(&b, 4, 6);
        pb_uint(&b, 16, 3);
        T_EQ_INT(pf_perf_sample_quick(b.data, b.data + b.len, &f), 1);
        T_CHECK(f.cpu == 2 && f.pid == 10 && f.tid == 11 && f.count == 300 && f.cs == 6 &&
                f.err == 3);
        T_CHECK(f.has_cpu && f.has_cs && f.has_count && f.has_err);
    }
    b.len = 0;
    pb_uint(&b, 2, 1);
    T_EQ_INT(pf_perf_sample_quick(b.data, b.data + b.len, &f), 1);
    T_CHECK(!f.has_cpu && !f.has_cs && !f.has_count && !f.has_err);
    /* Left to the general reader: follower counts, lost records, a
     * skipped sample, a producer event, an unknown field, a field of
     * another wire type, a ten-byte varint, field 0, a value cut short. */
    static const uint8_t refused[][12] = {
        {0x38, 0x01},                   /* 7: follower_counts */
        {0x88, 0x01, 0x01},             /* 17: kernel_records_lost */
        {0x90, 0x01, 0x01},             /* 18: sample_skipped_reason */
        {0x9a, 0x01, 0x00},             /* 19: producer_event */
        {0x48, 0x01},                   /* 9: unknown */
        {0x0a, 0x01, 0x00},             /* 1 as a length-delimited field */
        {0x30, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
        {0x00, 0x01},                   /* field 0 */
        {0x30, 0x80},                   /* cut short */
    };
    static const size_t refused_len[] = {2, 3, 3, 3, 2, 3, 11, 2, 2};
    for (size_t i = 0; i < sizeof refused_len / sizeof *refused_len; i++) {
        t_case("perfetto_quick_sample_decoder: refused %zu", i);
        T_EQ_INT(pf_perf_sample_quick(refused[i], refused[i] + refused_len[i], &f), 0);
    }
    pb_buf_free(&b);
}
