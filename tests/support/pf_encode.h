/* A Perfetto trace encoder for the tests' own fixtures, on the project's
 * protobuf encoder (pbwire.h).  Field numbers are those of
 * doc/formats/perfetto-fields.md.
 *
 * A packet is opened with pfe_packet() and closed with pb_end(); inside
 * it, the helpers write interned entries, payloads and packet fields. */
#ifndef PROFCONV_TESTS_PF_ENCODE_H
#define PROFCONV_TESTS_PF_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "base/pbwire.h"

/* TracePacket fields. */
enum {
    PFE_TIMESTAMP = 8,
    PFE_SEQ = 10,
    PFE_INTERNED = 12,
    PFE_FLAGS = 13,
    PFE_CLEARED = 41,
    PFE_DROPPED = 42,
    PFE_CLOCK_ID = 58,
    PFE_DEFAULTS = 59,
};

/* InternedData fields. */
enum {
    PFE_FUNCTION_NAMES = 5,
    PFE_FRAMES = 6,
    PFE_CALLSTACKS = 7,
    PFE_BUILD_IDS = 16,
    PFE_MAPPING_PATHS = 17,
    PFE_MAPPINGS = 19,
};

/* Opens a packet on sequence seq (0: no sequence id field). */
size_t pfe_packet(pb_buf *b, uint32_t seq);

/* A whole packet: a ClockSnapshot of n clocks. */
void pfe_clock_snapshot(pb_buf *b, const uint32_t *ids, const uint64_t *ts, size_t n);

/* A whole packet: the first of a sequence (incremental state cleared),
 * with trace_packet_defaults giving the timestamp clock (0: none) and a
 * perf timebase counter (0: none) with a frequency (0: none). */
void pfe_perf_defaults(pb_buf *b, uint32_t seq, uint32_t clock_id, uint32_t counter,
                       uint64_t frequency);

/* Interned entries, written in the current InternedData (or ProfilePacket
 * for the packet-local tables, whose field numbers the caller passes). */
void pfe_str(pb_buf *b, uint32_t field, uint64_t iid, const char *s);
void pfe_bytes(pb_buf *b, uint32_t field, uint64_t iid, const void *s, size_t n);
void pfe_mapping(pb_buf *b, uint32_t field, uint64_t iid, uint64_t build_iid,
                 const uint64_t *paths, size_t n_paths);
/* The same with the mapped range: start, end and exact_offset (0: none). */
void pfe_mapping_range(pb_buf *b, uint32_t field, uint64_t iid, uint64_t build_iid,
                       const uint64_t *paths, size_t n_paths, uint64_t start, uint64_t end,
                       uint64_t exact_offset);
/* name_iid 0 writes no name; mapping_iid 0 writes no mapping. */
void pfe_frame(pb_buf *b, uint32_t field, uint64_t iid, uint64_t name_iid,
               uint64_t mapping_iid, uint64_t rel_pc);
void pfe_callstack(pb_buf *b, uint32_t field, uint64_t iid, const uint64_t *frames,
                   size_t n, int packed);

/* A whole InternedData: functions main, malloc and decode (iids 1-3),
 * one frame each (iids 1-3, no mapping), and callstacks 1 main;malloc,
 * 2 main;decode;malloc and 3 main, as the heap fixtures use them. */
void pfe_heap_callstacks(pb_buf *b);

/* A PerfSample payload; count < 0 writes no timebase_count, cs 0 no
 * callstack. */
void pfe_perf_sample(pb_buf *b, uint32_t cpu, uint32_t pid, uint32_t tid, uint64_t cs,
                     int64_t count);

/* ProcessTree payload pieces: open with pb_begin(b, 2). */
void pfe_process(pb_buf *b, int32_t pid, const char *const *cmdline, size_t n);
void pfe_thread(pb_buf *b, int32_t tid, int32_t tgid, const char *name);

/* Compresses the packets in src (a Trace) into one packet holding
 * compressed_packets (zlib) or zstd_compressed_packets, appended to b. */
void pfe_compressed(pb_buf *b, const pb_buf *src, int zstd);

/* ---- StackSample (packet field 135) ---- */

enum {
    PFE_STACK_SAMPLE = 135,
    /* InternedData fields. */
    PFE_SS_TASKS = 48,
    PFE_SS_EXECS = 49,
    PFE_SS_COUNTERS = 50,
};

/* A whole packet: the first of a sequence (incremental state cleared),
 * with stack_sample_defaults naming the source (NULL: none) and a primary
 * counter (name NULL: none) in StackSample.Unit unit. */
void pfe_ss_defaults(pb_buf *b, uint32_t seq, const char *source, const char *counter,
                     uint32_t unit);
/* A TaskContext as field `field` (1 inline, or an InternedData field);
 * iid 0 and pid or tid < 0 are left out. */
void pfe_ss_task(pb_buf *b, uint32_t field, uint64_t iid, int64_t pid, int64_t tid);
/* An ExecutionContext; iid 0 is left out. */
void pfe_ss_exec(pb_buf *b, uint32_t field, uint64_t iid, uint32_t cpu);
/* A CounterDescriptor; iid 0 and multiplier 0 are left out. */
void pfe_ss_counter(pb_buf *b, uint32_t field, uint64_t iid, const char *name, uint32_t unit,
                    uint64_t multiplier);
/* An InlineCallstack (StackSample field 5) of n frames, outermost first;
 * a NULL name or file, or a line 0, is left out. */
void pfe_ss_inline(pb_buf *b, const char *const *names, const char *const *files,
                   const uint32_t *lines, size_t n);

/* ---- Java heap graphs (HeapGraph, TracePacket field 56) ---- */

enum { PFE_HEAP_GRAPH = 56, PFE_HG_FIELD_NAMES = 4, PFE_HG_LOCATIONS = 8 };

/* Opens a HeapGraph of process pid inside an open packet; its objects,
 * roots, types and strings (pfe_str with PFE_HG_FIELD_NAMES or
 * PFE_HG_LOCATIONS) go inside; close with pb_end. */
size_t pfe_heap_graph(pb_buf *b, int32_t pid, uint64_t index, int continued);

/* A HeapGraphObject; zero fields are left out.  References are packed
 * unless unpacked is set. */
typedef struct pfe_hg_obj {
    uint64_t id, id_delta, type_id, self_size, ref_base;
    const uint64_t *refs;
    size_t n_refs;
    const uint64_t *fields;    /* reference_field_id, one per reference */
    size_t n_fields;
    int heap_type;             /* HeapType; 0: left out */
    int unpacked;
} pfe_hg_obj;
void pfe_hg_object(pb_buf *b, const pfe_hg_obj *o);

/* A HeapGraphRoot of root_type over n object ids (packed unless
 * unpacked). */
void pfe_hg_root(pb_buf *b, int root_type, const uint64_t *ids, size_t n, int unpacked);

/* A HeapGraphType; location_id 0 is left out, as are zero fields. */
void pfe_hg_type(pb_buf *b, uint64_t id, const char *name, uint64_t object_size,
                 uint64_t superclass_id, int kind, const uint64_t *fields, size_t n_fields,
                 uint64_t location_id);

#endif
