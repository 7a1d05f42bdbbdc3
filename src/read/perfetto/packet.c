/* TracePacket dispatch: a packet's sequence and its incremental state
 * (cleared, lost, defaults, interned data), then its payload handed to
 * the reader of its family; compressed packets are inflated and their
 * packets dispatched the same way.  The one place that knows every
 * packet kind. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "read/perfetto/reader.h"

enum { SEQ_CLEARED = 1, SEQ_NEEDS_STATE = 2 };

/* Decompressed packets may not exceed this (a zip bomb guard). */
#define MAX_DECOMPRESSED ((size_t)1 << 31)

static int packets(pf_reader *r, const uint8_t *data, size_t len, uint64_t base);

static int on_compressed(pf_reader *r, const pb_field *f, uint64_t offset, int zstd)
{
    if (r->z_depth)
        return pf_fail(r, offset, "compressed packets inside compressed packets");
    size_t n = 0;
    if (zstd) {
        ZSTD_DStream *z = ZSTD_createDStream();
        if (!z)
            return pf_nomem(r);
        ZSTD_inBuffer zin = {f->data, f->len, 0};
        size_t ret = 1;
        while (ret != 0) {
            if (n == r->zcap) {
                size_t cap = r->zcap ? r->zcap * 2 : (size_t)1 << 20;
                uint8_t *b = cap > MAX_DECOMPRESSED ? NULL : realloc(r->zbuf, cap);
                if (!b) {
                    ZSTD_freeDStream(z);
                    return cap > MAX_DECOMPRESSED
                               ? pf_fail(r, offset, "zstd_compressed_packets expand "
                                         "beyond %zu bytes", MAX_DECOMPRESSED)
                               : pf_nomem(r);
                }
                r->zbuf = b;
                r->zcap = cap;
            }
            ZSTD_outBuffer zout = {r->zbuf, r->zcap, n};
            ret = ZSTD_decompressStream(z, &zout, &zin);
            n = zout.pos;
            if (ZSTD_isError(ret)) {
                ZSTD_freeDStream(z);
                return pf_fail(r, offset, "zstd_compressed_packets: %s",
                               ZSTD_getErrorName(ret));
            }
            if (ret != 0 && zin.pos == zin.size && zout.pos < zout.size) {
                ZSTD_freeDStream(z);
                return pf_fail(r, offset, "zstd_compressed_packets: the data ends "
                               "inside the stream");
            }
        }
        ZSTD_freeDStream(z);
    } else {
        z_stream z;
        memset(&z, 0, sizeof z);
        if (inflateInit(&z) != Z_OK)
            return pf_nomem(r);
        z.next_in = (Bytef *)(uintptr_t)f->data;
        int ret = Z_OK;
        size_t left = f->len;
        while (ret != Z_STREAM_END) {
            if (n == r->zcap) {
                size_t cap = r->zcap ? r->zcap * 2 : (size_t)1 << 20;
                uint8_t *b = cap > MAX_DECOMPRESSED ? NULL : realloc(r->zbuf, cap);
                if (!b) {
                    inflateEnd(&z);
                    return cap > MAX_DECOMPRESSED
                               ? pf_fail(r, offset, "compressed_packets expand "
                                         "beyond %zu bytes", MAX_DECOMPRESSED)
                               : pf_nomem(r);
                }
                r->zbuf = b;
                r->zcap = cap;
            }
            uInt in_chunk = left > (1u << 30) ? 1u << 30 : (uInt)left;
            uInt out_chunk = r->zcap - n > (1u << 30) ? 1u << 30 : (uInt)(r->zcap - n);
            z.avail_in = in_chunk;
            z.next_out = r->zbuf + n;
            z.avail_out = out_chunk;
            ret = inflate(&z, Z_NO_FLUSH);
            left -= in_chunk - z.avail_in;
            n += out_chunk - z.avail_out;
            if (ret == Z_BUF_ERROR && left == 0 && z.avail_out > 0) {
                inflateEnd(&z);
                return pf_fail(r, offset, "compressed_packets: the zlib data ends "
                               "inside the stream");
            }
            if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) {
                inflateEnd(&z);
                return pf_fail(r, offset, "compressed_packets: %s",
                               z.msg ? z.msg : "invalid zlib data");
            }
        }
        inflateEnd(&z);
    }
    /* Nesting is refused above, so the buffer stays put while its
     * packets are decoded, and serves the next compressed packet. */
    r->z_depth++;
    r->z_offset = offset;
    int st = packets(r, r->zbuf, n, 0);
    r->z_depth--;
    return st;
}

/* The wire type of the TracePacket fields this reader uses, or -1. */
static int packet_field_type(uint32_t n)
{
    switch (n) {
    case TP_TIMESTAMP: case TP_SEQUENCE_ID: case TP_SEQUENCE_FLAGS:
    case TP_STATE_CLEARED: case TP_PACKET_DROPPED: case TP_CLOCK_ID:
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

int pf_on_packet(pf_reader *r, const uint8_t *data, size_t len, uint64_t offset)
{
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
    case TP_STREAMING_ALLOC: r->st.streaming_allocs++; return PC_OK;
    case TP_STREAMING_FREE: r->st.streaming_frees++; return PC_OK;
    case TP_STACK_SAMPLE: r->st.stack_samples++; return PC_OK;
    case TP_TRACK_EVENT: r->st.track_events++; return PC_OK;
    case TP_HEAP_GRAPH: r->st.heap_graphs++; return PC_OK;
    }
    return PC_OK;
}

/* The packets of a Trace held in memory (decompressed packets). */
static int packets(pf_reader *r, const uint8_t *data, size_t len, uint64_t base)
{
    pb_reader pr;
    pb_field f;
    int got;
    pb_reader_init(&pr, data, len, base);
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
    }
    return got < 0 ? pf_wire_fail(r, &pr, "Trace") : PC_OK;
}
