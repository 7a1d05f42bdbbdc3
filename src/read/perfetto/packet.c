/* TracePacket dispatch: a packet's sequence and its incremental state
 * (cleared, lost, defaults, interned data), then its payload handed to
 * the reader of its family; compressed packets are decoded as they are
 * decompressed, their packets dispatched the same way.  The one place
 * that knows every packet kind. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "read/perfetto/reader.h"

enum { SEQ_CLEARED = 1, SEQ_NEEDS_STATE = 2 };

/* Compressed packets are decoded as they are decompressed: zbuf holds
 * one decoding step's output and the packet it ends inside, never the
 * whole, so that memory follows the packets and not what the compressed
 * bytes expand to (a megabyte of zlib is a gigabyte of zeros, of zstd
 * far more). */
#define Z_STEP ((size_t)128 << 10)
/* A packet inside compressed packets is held whole to be decoded, so its
 * size bounds the buffer.  Outside, a packet is bounded by the input it
 * lies in; inside, a few bytes claim a gigabyte.  Perfetto's writers keep
 * their packets far smaller (heapprofd and the Java heap dumper cut
 * theirs near 400 kB, for consumers that take 500 kB chunks): 16 MiB
 * leaves them room and keeps a conversion's peak to tens of MB. */
#define MAX_INNER_PACKET ((size_t)16 << 20)
/* A packet with its tag and length (10 bytes each at most), and a step. */
#define Z_MAX_BUF (MAX_INNER_PACKET + 20 + Z_STEP)
/* The zstd window a frame may ask for: every level up to 20 fits, the
 * ultra levels do not (zstd's own limit is 128 MiB).  Without a content
 * size, as Perfetto's streaming compressor leaves it, the decoder holds
 * the whole window. */
#define ZSTD_WINDOW_LOG_MAX 25
/* What one compressed packet may decompress to: memory no longer depends
 * on it, time still does. */
#define MAX_DECOMPRESSED ((uint64_t)1 << 31)

/* The decoder of one compressed packet's stream. */
typedef struct zstream {
    int zstd, end;
    z_stream z;
    ZSTD_DStream *zd;
    ZSTD_inBuffer zin;
    size_t left;          /* zlib input not yet handed to inflate */
    uint64_t total;       /* bytes decompressed */
} zstream;

/* Where the decoding of the decompressed bytes is: zbuf[0] is at
 * decompressed byte base and holds have bytes, decoded up to pos; need
 * is the size of the packet begun at pos (0 while unknown).  A Trace
 * field other than a packet is passed over as it comes: skip bytes of it
 * are still to come, its length at decompressed byte skip_at. */
typedef struct zcursor {
    size_t have, pos, need;
    uint64_t base, skip, skip_at;
} zcursor;

/* Errors of the compressed stream itself name the compressed packet, at
 * its offset in the input, whatever packets of it were read. */
static int stream_fail(pf_reader *r, size_t outer, uint64_t offset, const char *what,
                       const char *detail)
{
    size_t index = r->packet_index;
    int depth = r->z_depth;
    r->packet_index = outer;
    r->z_depth = 0;
    int st = pf_fail(r, offset, "%s%s", what, detail);
    r->packet_index = index;
    r->z_depth = depth;
    return st;
}

/* Decompresses up to room bytes into out (*got of them). */
static int decompress(pf_reader *r, zstream *s, uint8_t *out, size_t room, size_t *got,
                      size_t outer, uint64_t offset)
{
    if (s->zstd) {
        ZSTD_outBuffer zout = {out, room, 0};
        size_t ret = ZSTD_decompressStream(s->zd, &zout, &s->zin);
        *got = zout.pos;
        if (ZSTD_isError(ret)) {
            char msg[160];
            int window = ZSTD_getErrorCode(ret) == ZSTD_error_frameParameter_windowTooLarge;
            snprintf(msg, sizeof msg, ": %s", ZSTD_getErrorName(ret));
            if (window)
                snprintf(msg + strlen(msg), sizeof msg - strlen(msg), " (a window over %u MiB)",
                         1u << (ZSTD_WINDOW_LOG_MAX - 20));
            return stream_fail(r, outer, offset, "zstd_compressed_packets", msg);
        }
        if (ret == 0)
            s->end = 1;
        else if (s->zin.pos == s->zin.size && zout.pos < zout.size)
            return stream_fail(r, outer, offset, "zstd_compressed_packets",
                               ": the data ends inside the stream");
        return PC_OK;
    }
    uInt in_chunk = s->left > (1u << 30) ? 1u << 30 : (uInt)s->left;
    uInt out_chunk = room > (1u << 30) ? 1u << 30 : (uInt)room;
    s->z.avail_in = in_chunk;
    s->z.next_out = out;
    s->z.avail_out = out_chunk;
    int ret = inflate(&s->z, Z_NO_FLUSH);
    s->left -= in_chunk - s->z.avail_in;
    *got = out_chunk - s->z.avail_out;
    if (ret == Z_STREAM_END)
        s->end = 1;
    else if (ret == Z_BUF_ERROR && s->left == 0 && s->z.avail_out > 0)
        return stream_fail(r, outer, offset, "compressed_packets",
                           ": the zlib data ends inside the stream");
    else if (ret != Z_OK && ret != Z_BUF_ERROR)
        return stream_fail(r, outer, offset, "compressed_packets: ",
                           s->z.msg ? s->z.msg : "invalid zlib data");
    return PC_OK;
}

/* Decodes the packets that are whole in zbuf; with end, the stream is
 * over and what remains must be whole too. */
static int decode_whole(pf_reader *r, zcursor *c, int end)
{
    if (c->skip) {
        size_t n = c->have - c->pos;
        if (n > c->skip)
            n = (size_t)c->skip;
        c->pos += n;
        c->skip -= n;
        if (c->skip)
            return end ? pf_fail(r, c->skip_at, "Trace: %s", pb_strerror(PB_ELENGTH)) : PC_OK;
    }
    if (c->pos == c->have || (c->have - c->pos < c->need && !end))
        return PC_OK;
    c->need = 0;
    pb_reader pr;
    pb_field f;
    int got;
    pb_reader_init(&pr, r->zbuf, c->have, c->base);
    pr.p = r->zbuf + c->pos;
    while ((got = pb_next(&pr, &f)) > 0) {
        if (f.number != 1)
            continue;
        if (f.wiretype != L) {
            pb_expect(&pr, &f, L);
            return pf_wire_fail(r, &pr, "Trace");
        }
        int st = pf_on_packet(r, f.data, f.len, pb_offset(&pr, f.data));
        if (st != PC_OK)
            return st;
        /* An empty packet after an empty packet changes nothing but the
         * count: a run of them, which a few bytes of zstd make a
         * gigabyte of, is counted without decoding each. */
        if (f.len == 0) {
            const uint8_t *p = pr.p;
            while (pr.end - p >= 2 && p[0] == 0x0a && p[1] == 0)
                p += 2;
            r->packet_index += (size_t)(p - pr.p) / 2;
            r->st.packets += (uint64_t)(p - pr.p) / 2;
            pr.p = p;
        }
    }
    c->pos = (size_t)(pr.p - r->zbuf);
    if (got == 0)
        return PC_OK;
    if (end || (pr.err != PB_ETRUNCATED && pr.err != PB_ELENGTH))
        return pf_wire_fail(r, &pr, "Trace");
    /* The bytes end inside a field: wait for the rest, or pass over it
     * as it comes when it is not a packet. */
    const uint8_t *p = pr.p, *stop = r->zbuf + c->have;
    uint64_t tag, len;
    if (pb_varint(&p, stop, &tag) != PB_OK || (tag & 7) != PB_LEN)
        return PC_OK;
    const uint8_t *len_at = p;
    if (pb_varint(&p, stop, &len) != PB_OK)
        return PC_OK;
    size_t hdr = (size_t)(p - pr.p);
    if ((tag >> 3) != 1) {
        c->skip = len - (uint64_t)(stop - p);
        c->skip_at = pb_offset(&pr, len_at);
        c->pos = c->have;
        return PC_OK;
    }
    if (len > MAX_INNER_PACKET) {
        r->packet_index++;
        r->st.packets++;
        return pf_fail(r, pb_offset(&pr, pr.p), "the packet claims %" PRIu64 " bytes, more "
                       "than the %zu MiB a packet inside compressed packets may hold",
                       len, MAX_INNER_PACKET >> 20);
    }
    c->need = hdr + (size_t)len;
    return PC_OK;
}

static int decompress_packets(pf_reader *r, uint64_t offset, zstream *s)
{
    size_t outer = r->packet_index;
    zcursor c = {0};
    for (;;) {
        int st = decode_whole(r, &c, s->end);
        if (st != PC_OK || s->end)
            return st;
        /* Only the packet the bytes end inside is kept. */
        if (c.pos) {
            memmove(r->zbuf, r->zbuf + c.pos, c.have - c.pos);
            c.base += c.pos;
            c.have -= c.pos;
            c.pos = 0;
        }
        if (r->zcap - c.have < Z_STEP) {
            /* What is held is less than a packet and its header, so
             * this stays within MAX_INNER_PACKET and a step. */
            size_t cap = r->zcap + r->zcap / 2;
            if (cap < c.have + Z_STEP)
                cap = c.have + Z_STEP;
            if (cap > Z_MAX_BUF)
                cap = Z_MAX_BUF;
            uint8_t *b = realloc(r->zbuf, cap);
            if (!b)
                return pf_nomem(r);
            r->zbuf = b;
            r->zcap = cap;
        }
        /* One byte past the limit tells a stream that goes beyond. */
        size_t room = r->zcap - c.have;
        if (room > Z_STEP)
            room = Z_STEP;
        if (room > MAX_DECOMPRESSED + 1 - s->total)
            room = (size_t)(MAX_DECOMPRESSED + 1 - s->total);
        size_t got = 0;
        st = decompress(r, s, r->zbuf + c.have, room, &got, outer, offset);
        if (st != PC_OK)
            return st;
        c.have += got;
        s->total += got;
        if (s->total > MAX_DECOMPRESSED) {
            char msg[64];
            snprintf(msg, sizeof msg, " expand beyond %" PRIu64 " bytes", MAX_DECOMPRESSED);
            return stream_fail(r, outer, offset, s->zstd ? "zstd_compressed_packets"
                               : "compressed_packets", msg);
        }
    }
}

static int on_compressed(pf_reader *r, const pb_field *f, uint64_t offset, int zstd)
{
    /* The packets inside are decoded from zbuf, which one stream uses at
     * a time. */
    if (r->z_depth)
        return pf_fail(r, offset, "compressed packets inside compressed packets");
    zstream s;
    memset(&s, 0, sizeof s);
    s.zstd = zstd;
    if (zstd) {
        s.zd = ZSTD_createDStream();
        if (!s.zd || ZSTD_isError(ZSTD_DCtx_setParameter(s.zd, ZSTD_d_windowLogMax,
                                                         ZSTD_WINDOW_LOG_MAX))) {
            ZSTD_freeDStream(s.zd);
            return pf_nomem(r);
        }
        s.zin = (ZSTD_inBuffer){f->data, f->len, 0};
    } else {
        if (inflateInit(&s.z) != Z_OK)
            return pf_nomem(r);
        s.z.next_in = (Bytef *)(uintptr_t)f->data;
        s.left = f->len;
    }
    r->z_depth++;
    r->z_offset = offset;
    int st = decompress_packets(r, offset, &s);
    r->z_depth--;
    if (zstd)
        ZSTD_freeDStream(s.zd);
    else
        inflateEnd(&s.z);
    return st;
}

/* The wire type of the TracePacket fields this reader uses, or -1. */
static int packet_field_type(uint32_t n)
{
    switch (n) {
    case TP_TIMESTAMP: case TP_SEQUENCE_ID: case TP_SEQUENCE_FLAGS:
    case TP_STATE_CLEARED: case TP_PACKET_DROPPED: case TP_CLOCK_ID: case TP_TRUSTED_PID:
        return V;
    case TP_INTERNED_DATA: case TP_DEFAULTS: case TP_PROCESS_TREE:
    case TP_CLOCK_SNAPSHOT: case TP_PROFILE_PACKET: case TP_PROCESS_DESCRIPTOR:
    case TP_THREAD_DESCRIPTOR: case TP_COMPRESSED: case TP_STREAMING_PROFILE:
    case TP_TRACK_DESCRIPTOR: case TP_MODULE_SYMBOLS: case TP_DEOBFUSCATION:
    case TP_PERF_SAMPLE: case TP_STREAMING_ALLOC: case TP_STREAMING_FREE:
    case TP_ZSTD_COMPRESSED: case TP_STACK_SAMPLE: case TP_TRACK_EVENT:
    case TP_HEAP_GRAPH:
        return L;
    }
    return -1;
}

/* A length-delimited field where it comes next, its tag the bytes t0
 * and t1 (t1 0 for a tag of one byte): 1 with its bytes at *at, *n of
 * them, and *pp past them; 0 where the next field is another; -1 where
 * its length is broken or runs past end. */
static inline int len_next(const uint8_t **pp, const uint8_t *end, uint8_t t0, uint8_t t1,
                           const uint8_t **at, uint64_t *n)
{
    const uint8_t *p = *pp;
    size_t tag_len = t1 ? 2 : 1;
    if ((size_t)(end - p) < tag_len || p[0] != t0 || (t1 && p[1] != t1))
        return 0;
    p += tag_len;
    if (!pb_varint9(&p, end, n) || *n > (uint64_t)(end - p))
        return -1;
    *at = p;
    *pp = p + *n;
    return 1;
}

/* Nearly every packet of a CPU profile is a traced_perf sample: a time,
 * its sequence and flags (perhaps a clock and the writer's pid), a
 * PerfSample of the common shape, and where a callstack is new, the
 * interned data that defines it.  Such a packet is scanned in one pass,
 * to the same result as the general path, at a fraction of the calls per
 * field.  The scan touches no state, so the thread that frames packets
 * ahead of the reading thread (ahead.c) does it for a whole batch.  Any
 * other packet (defaults, a cleared or lost state, another payload, a
 * wire type out of place, an unusual encoding) leaves q->ok clear, and
 * the general path reads it.
 *
 * scan is pf_quick_scan's pass: 1 for the common shape, *q filled, or
 * 0; the sample's fields are filled by its decoder, which clears them
 * first. */
static int scan(const uint8_t *data, size_t len, pf_quick *q)
{
    const uint8_t *p = data, *end = data + len, *sample = NULL, *at;
    uint64_t sample_len = 0, v, n;
    /* The fields as producers write them, each tag checked where it
     * comes: traced_perf writes 13, 8, 12 (its interned data, perhaps
     * empty) and 66, and the service adds 3 and 10 after them; the
     * project's own encoder writes 10, 13, 8, 12 (where a callstack is
     * new) and 66.  The loop below reads whatever comes otherwise, as it
     * reads any order. */
    int got;
    if ((got = pb_next_is(&p, end, TP_SEQUENCE_ID, &v)) > 0)
        q->seq_id = (uint32_t)v;
    if (got >= 0 && (got = pb_next_is(&p, end, TP_SEQUENCE_FLAGS, &v)) > 0)
        q->flags = (uint32_t)v;
    if (got >= 0 && (got = pb_next_is(&p, end, TP_TIMESTAMP, &v)) > 0) {
        q->pk.ts = v;
        q->pk.has_ts = 1;
    }
    if (got >= 0 && (got = len_next(&p, end, TP_INTERNED_DATA << 3 | PB_LEN, 0, &at, &n)) > 0) {
        q->interned_at = (uint32_t)(at - data);
        q->interned_len = (uint32_t)n;
        q->has_interned = 1;
    }
    /* 66 << 3 | 2 is 530: two bytes of varint, 0x92 0x04. */
    if (got >= 0 && (got = len_next(&p, end, 0x92, 0x04, &at, &n)) > 0) {
        sample = at;
        sample_len = n;
    }
    if (got >= 0)
        got = pb_next_is(&p, end, 3, &v);  /* trusted_uid: not read */
    if (got >= 0 && (got = pb_next_is(&p, end, TP_SEQUENCE_ID, &v)) > 0)
        q->seq_id = (uint32_t)v;
    if (got < 0)
        return 0;
    while (p < end) {
        uint64_t tag;
        if (!pb_varint9(&p, end, &tag) || tag >> 3 == 0 || tag >> 32)
            return 0;
        uint32_t number = (uint32_t)(tag >> 3);
        if ((tag & 7) == PB_LEN && (number == TP_PERF_SAMPLE || number == TP_INTERNED_DATA)) {
            if (!pb_varint9(&p, end, &n) || n > (uint64_t)(end - p))
                return 0;
            if (number == TP_PERF_SAMPLE) {
                sample = p;
                sample_len = n;
            } else {
                q->interned_at = (uint32_t)(p - data);
                q->interned_len = (uint32_t)n;
                q->has_interned = 1;
            }
            p += n;
            continue;
        }
        if ((tag & 7) != PB_VARINT || !pb_varint9(&p, end, &v))
            return 0;
        switch (number) {
        case TP_TIMESTAMP: q->pk.ts = v; q->pk.has_ts = 1; break;
        case TP_CLOCK_ID: q->pk.clock_id = (uint32_t)v; q->pk.has_clock = 1; break;
        case TP_TRUSTED_PID: q->pk.pid = (int32_t)v; q->pk.has_pid = 1; break;
        case TP_SEQUENCE_ID: q->seq_id = (uint32_t)v; break;
        case TP_SEQUENCE_FLAGS: q->flags = (uint32_t)v; break;
        default:
            /* Unknown fields are passed over; a known one is another
             * kind of packet (or a cleared or lost state). */
            if (packet_field_type(number) >= 0)
                return 0;
        }
    }
    return sample && !(q->flags & SEQ_CLEARED) && len <= UINT32_MAX &&
           pf_perf_sample_quick(sample, sample + sample_len, &q->f);
}

void pf_quick_scan(const uint8_t *data, size_t len, pf_quick *q)
{
    /* Each field cleared once: the sample's by its decoder, where the
     * scan reaches it, else here.  A memset of the whole and a second of
     * the sample's took 7 % of the scan. */
    memset(&q->pk, 0, sizeof q->pk);
    q->seq_id = q->flags = q->interned_at = q->interned_len = 0;
    q->has_interned = 0;
    q->ok = (uint8_t)scan(data, len, q);
    if (!q->ok)
        memset(&q->f, 0, sizeof q->f);
}

/* The state a scanned packet changes, as the general path would. */
static int quick_apply(pf_reader *r, const uint8_t *data, size_t len, uint64_t offset,
                       const pf_quick *q)
{
    pf_packet pk = q->pk;
    pk.offset = offset;
    r->packet_index++;
    r->st.packets++;
    pf_seq *s = pf_seq_of(r, q->seq_id);
    if (!s)
        return pf_nomem(r);
    s->seen = 1;
    if (q->has_interned && s->valid) {
        /* As the general path reads it: offsets from the packet's start. */
        pb_reader sub;
        pb_reader_init(&sub, data, len, offset);
        sub.p = data + q->interned_at;
        sub.end = sub.p + q->interned_len;
        if (pf_on_interned(r, &sub, s) != PC_OK)
            return r->err->status;
    }
    if (pk.has_ts && !pk.has_clock && !s->has_clock)
        pc_saw_time(r->p, pk.ts);
    if ((q->flags & SEQ_NEEDS_STATE) && !s->valid) {
        r->st.needs_state++;
        return PC_OK;
    }
    return pf_perf_sample_add(r, s, &pk, &q->f);
}

int pf_on_packet(pf_reader *r, const uint8_t *data, size_t len, uint64_t offset)
{
    pf_quick q;
    pf_quick_scan(data, len, &q);
    return pf_on_scanned(r, data, len, offset, &q);
}

int pf_on_scanned(pf_reader *r, const uint8_t *data, size_t len, uint64_t offset,
                  const pf_quick *q)
{
    if (q->ok)
        return quick_apply(r, data, len, offset, q);
    pb_reader pr;
    pb_field f, payload, interned, defaults;
    int got;
    uint32_t seq_id = 0, flags = 0;
    int cleared = 0, dropped = 0, has_payload = 0, has_interned = 0, has_defaults = 0;
    pf_packet pk;
    memset(&pk, 0, sizeof pk);
    pk.offset = offset;
    r->packet_index++;
    r->st.packets++;
    pb_reader_init(&pr, data, len, offset);
    while ((got = pb_next(&pr, &f)) > 0) {
        int type = packet_field_type(f.number);
        if (type < 0)
            continue;
        if (f.wiretype != (uint32_t)type) {
            pb_expect(&pr, &f, (uint32_t)type);
            return pf_wire_fail(r, &pr, "TracePacket");
        }
        switch (f.number) {
        case TP_TIMESTAMP: pk.ts = f.value; pk.has_ts = 1; break;
        case TP_CLOCK_ID: pk.clock_id = (uint32_t)f.value; pk.has_clock = 1; break;
        case TP_TRUSTED_PID: pk.pid = (int32_t)f.value; pk.has_pid = 1; break;
        case TP_SEQUENCE_ID: seq_id = (uint32_t)f.value; break;
        case TP_SEQUENCE_FLAGS: flags = (uint32_t)f.value; break;
        case TP_STATE_CLEARED: cleared = f.value != 0; break;
        case TP_PACKET_DROPPED: dropped = f.value != 0; break;
        case TP_INTERNED_DATA: interned = f; has_interned = 1; break;
        case TP_DEFAULTS: defaults = f; has_defaults = 1; break;
        default: payload = f; has_payload = 1; break;
        }
    }
    if (got < 0)
        return pf_wire_fail(r, &pr, "TracePacket");

    pf_seq *s = pf_seq_of(r, seq_id);
    if (!s)
        return pf_nomem(r);
    /* Perfetto marks the first packet of every sequence as following a
     * loss (its writer starts with nothing before it): not a loss. */
    int first = !s->seen;
    s->seen = 1;

    pb_reader sub;
    if (cleared || (flags & SEQ_CLEARED)) {
        /* A dump in progress cannot be resolved any more. */
        pf_seq_clear(s);
    } else if (dropped && !first) {
        s->valid = 0;
        s->has_running = 0;
        r->st.lost_packets++;
    }
    if (has_defaults && s->valid) {
        pb_reader_sub(&pr, &defaults, &sub);
        if (pf_on_defaults(r, &sub, s) != PC_OK)
            return r->err->status;
    }
    if (has_interned && s->valid) {
        pb_reader_sub(&pr, &interned, &sub);
        if (pf_on_interned(r, &sub, s) != PC_OK)
            return r->err->status;
    }
    /* Times on the trace clock tell where the recording begins and ends,
     * beyond its samples. */
    if (pk.has_ts && !pk.has_clock && !s->has_clock)
        pc_saw_time(r->p, pk.ts);
    if (!has_payload)
        return PC_OK;
    if ((flags & SEQ_NEEDS_STATE) && !s->valid) {
        r->st.needs_state++;
        return PC_OK;
    }
    /* Packets that touch neither the stack tree nor the sample table
     * leave the perf samples queued (pipe.c); the others wait for them. */
    switch (payload.number) {
    case TP_PERF_SAMPLE: case TP_CLOCK_SNAPSHOT: case TP_PROCESS_TREE:
    case TP_PROCESS_DESCRIPTOR: case TP_THREAD_DESCRIPTOR: case TP_TRACK_DESCRIPTOR:
    case TP_MODULE_SYMBOLS: case TP_DEOBFUSCATION: case TP_COMPRESSED:
    case TP_ZSTD_COMPRESSED: case TP_STREAMING_ALLOC: case TP_STREAMING_FREE:
        break;
    default:
        if (pf_pipe_drain(r) < 0)
            return pf_nomem(r);
    }
    pb_reader_sub(&pr, &payload, &sub);
    switch (payload.number) {
    case TP_CLOCK_SNAPSHOT: return pf_on_clock_snapshot(r, &sub, seq_id);
    case TP_PROCESS_TREE: return pf_on_process_tree(r, &sub);
    case TP_PROCESS_DESCRIPTOR: return pf_on_process_descriptor(r, &sub);
    case TP_THREAD_DESCRIPTOR: return pf_on_thread_descriptor(r, &sub, s);
    case TP_TRACK_DESCRIPTOR: return pf_on_track_descriptor(r, &sub, s);
    case TP_PERF_SAMPLE: return pf_on_perf_sample(r, &sub, s, &pk);
    case TP_STREAMING_PROFILE: return pf_on_streaming_profile(r, &sub, s);
    case TP_PROFILE_PACKET: return pf_on_profile_packet(r, &sub, s, &pk);
    case TP_MODULE_SYMBOLS: return pf_on_module_symbols(r, &sub);
    case TP_DEOBFUSCATION: return pf_on_deobfuscation(r, &sub);
    case TP_COMPRESSED:
        return on_compressed(r, &payload, pb_offset(&pr, payload.at), 0);
    case TP_ZSTD_COMPRESSED:
        return on_compressed(r, &payload, pb_offset(&pr, payload.at), 1);
    case TP_STREAMING_ALLOC: return pf_on_streaming_heap(r, &sub, s, &pk, 0);
    case TP_STREAMING_FREE: return pf_on_streaming_heap(r, &sub, s, &pk, 1);
    case TP_STACK_SAMPLE: return pf_on_stack_sample(r, &sub, s, &pk);
    case TP_TRACK_EVENT: return pf_on_track_event(r, &sub, s, &pk);
    case TP_HEAP_GRAPH: return pf_on_heap_graph(r, &sub, s, &pk);
    }
    return PC_OK;
}
