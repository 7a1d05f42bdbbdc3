/* The floor for any decoder of an input: read it through the same input
 * layer as profconv (file, gzip), walk its framing and decode every varint
 * of every message a reader must look into, building nothing.  Prints
 * bytes, records, varints and a checksum (so nothing is optimised away).
 *
 *   skim FILE
 *
 * simpleperf: records and, inside samples, the callchain entries and the
 * unwinding result.  Perfetto: packets and, inside them, the messages the
 * reader decodes (perf samples, interned data, heap dumps, Chrome samples,
 * process trees, clock snapshots), three levels deep (heap samples).  perf script text: the
 * lines, split at their first space. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pbwire.h"
#include "profconv.h"
#include "read/perfetto/perfetto.h"
#include "read/perfscript/perfscript.h"
#include "read/simpleperf/simpleperf.h"
#include "io/source.h"

typedef struct tally {
    uint64_t records, varints, sum, bytes;
} tally;

/* A varint, inline and with the one check a floor needs: the end. */
static inline int varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (unsigned shift = 0; p < end && shift < 64; shift += 7) {
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *out = v;
            *pp = p;
            return PB_OK;
        }
    }
    return PB_EVARINT;
}

/* Walks the fields of [p, end): varints summed; a LEN field whose number
 * has its bit in sub[0..3] is walked as a message, with sub + 4 for its
 * own members, depth levels down at most.  Returns 0, or -1 on malformed
 * input. */
static int walk(const uint8_t *p, const uint8_t *end, const uint64_t *sub, int depth, tally *t)
{
    while (p < end) {
        uint64_t tag, v;
        if (varint(&p, end, &tag) != PB_OK)
            return -1;
        uint32_t num = (uint32_t)(tag >> 3);
        switch (tag & 7) {
        case PB_VARINT:
            if (varint(&p, end, &v) != PB_OK)
                return -1;
            t->varints++;
            t->sum += v;
            break;
        case PB_I64:
            if (end - p < 8)
                return -1;
            p += 8;
            break;
        case PB_I32:
            if (end - p < 4)
                return -1;
            p += 4;
            break;
        case PB_LEN:
            if (varint(&p, end, &v) != PB_OK || v > (uint64_t)(end - p))
                return -1;
            /* A member that is bytes after all (a name) is left as it is. */
            if (depth > 0 && num < 64 * 4 && (sub[num / 64] >> (num % 64) & 1))
                (void)walk(p, p + v, sub + 4, depth - 1, t);
            p += v;
            break;
        default:
            return -1;
        }
    }
    return 0;
}

#define BIT(n) (1ULL << ((n) % 64))

static int skim_simpleperf(pc_input *in, tally *t, pc_error *err)
{
    /* Level 0: Record (every member a message); level 1: Sample's
     * callchain (3) and unwinding result (6), and the others' fields;
     * level 2: the entries. */
    static const uint64_t sub[] = {
        BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6), 0, 0, 0,
        BIT(3) | BIT(6), 0, 0, 0,
        0, 0, 0, 0,
    };
    if (src_need(in, SP_MAGIC_LEN + 2, err) != 1)
        return -1;
    src_skip(in, SP_MAGIC_LEN + 2);
    for (;;) {
        if (src_need(in, 4, err) != 1)
            return -1;
        const uint8_t *h = src_ptr(in);
        uint32_t size = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 |
                        (uint32_t)h[3] << 24;
        src_skip(in, 4);
        if (size == 0)
            return 0;
        if (src_need(in, size, err) != 1)
            return -1;
        const uint8_t *p = src_ptr(in);
        if (walk(p, p + size, sub, 2, t) < 0)
            return -1;
        t->records++;
        t->bytes += size + 4;
        src_skip(in, size);
    }
}

static int skim_perfetto(pc_input *in, tally *t, pc_error *err)
{
    /* Level 0: TracePacket: interned_data 12, profile_packet 37,
     * streaming_profile_packet 54, perf_sample 66, process_tree 2,
     * clock_snapshot 6, trace_packet_defaults 59, thread/process
     * descriptors 44/43, module_symbols 61.  Levels 1 and 2: their
     * members, and theirs (a member that is bytes fails and is left). */
    static const uint64_t sub[] = {
        BIT(2) | BIT(6) | BIT(12) | BIT(37) | BIT(43) | BIT(44) | BIT(54) | BIT(59) | BIT(61),
        BIT(66), 0, 0,
        ~0ULL, ~0ULL, 0, 0,
        ~0ULL, ~0ULL, 0, 0,
        0, 0, 0, 0,
    };
    for (;;) {
        int got = src_need(in, 11, err);
        if (got < 0)
            return -1;
        size_t avail = src_avail(in);
        if (avail == 0)
            return 0;
        const uint8_t *h = src_ptr(in), *p = h + 1;
        uint64_t len;
        if (h[0] != 0x0a || pb_varint(&p, h + (avail < 11 ? avail : 11), &len) != PB_OK)
            return -1;
        size_t head = (size_t)(p - h);
        if (src_need(in, head + len, err) != 1)
            return -1;
        h = src_ptr(in);
        if (walk(h + head, h + head + len, sub, 3, t) < 0)
            return -1;
        t->records++;
        t->bytes += head + len;
        src_skip(in, head + len);
    }
}

static int skim_text(pc_input *in, tally *t, pc_error *err)
{
    for (;;) {
        int got = src_need(in, 1 << 16, err);
        if (got < 0)
            return -1;
        size_t avail = src_avail(in);
        if (avail == 0)
            return 0;
        const uint8_t *p = src_ptr(in), *end = p + avail, *nl;
        while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
            const uint8_t *sp = memchr(p, ' ', (size_t)(nl - p));
            t->records++;
            t->sum += sp ? (uint64_t)(sp - p) : 0;
            p = nl + 1;
        }
        if (p == src_ptr(in) && got == 0)
            p = end;  /* a last line without its newline */
        t->bytes += (uint64_t)(p - src_ptr(in));
        src_skip(in, (size_t)(p - src_ptr(in)));
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: skim FILE\n");
        return 1;
    }
    pc_input *in;
    pc_error err;
    tally t = {0};
    if (pc_input_open(&in, argv[1], &err) != PC_OK) {
        fprintf(stderr, "skim: %s\n", err.message);
        return 1;
    }
    int st = src_need(in, PS_DETECT_LEN, &err);
    const char *kind = "unknown";
    if (st >= 0 && sp_detect(src_ptr(in), src_avail(in))) {
        kind = "simpleperf";
        st = skim_simpleperf(in, &t, &err);
    } else if (st >= 0 && ps_detect(src_ptr(in), src_avail(in))) {
        kind = "perf script";
        st = skim_text(in, &t, &err);
    } else if (st >= 0 && pf_detect(src_ptr(in), src_avail(in))) {
        kind = "perfetto";
        st = skim_perfetto(in, &t, &err);
    } else {
        st = -1;
    }
    pc_input_close(in);
    if (st < 0) {
        fprintf(stderr, "skim: %s: cannot skim (%s input)\n", argv[1], kind);
        return 1;
    }
    printf("%s: %" PRIu64 " bytes, %" PRIu64 " records, %" PRIu64 " varints, sum %" PRIu64 "\n",
           kind, t.bytes, t.records, t.varints, t.sum);
    return 0;
}
