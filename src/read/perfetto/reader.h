/* State of the Perfetto reader, shared by its parts: read_perfetto.c
 * (packets, sequences, samples) and perfetto_names.c (names, symbols and
 * deobfuscation, resolved once the whole trace is read). */
#ifndef PROFCONV_PERFETTO_READER_H
#define PROFCONV_PERFETTO_READER_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "read/perfetto/clock.h"
#include "read/perfetto/heap.h"
#include "read/perfetto/intern.h"
#include "profconv.h"

#define PF_NO_EVENT UINT16_MAX

/* One trusted_packet_sequence_id: a writer's incremental state. */
typedef struct pf_seq {
    uint32_t id;
    uint8_t valid;           /* incremental state usable */
    uint8_t has_clock;       /* trace_packet_defaults.timestamp_clock_id */
    uint8_t has_perf_defaults;
    uint8_t has_thread;      /* a ThreadDescriptor named pid/tid */
    uint8_t has_running;     /* Chrome's running sample clock is set */
    uint8_t in_dump;         /* a heapprofd dump is being continued */
    uint8_t has_index;
    uint8_t seen;            /* a packet of this sequence was read */
    uint32_t clock_id;
    uint16_t event;          /* event of this sequence's perf samples */
    uint16_t uncounted_event;
    /* The timebase's event name (a string id, PC_NONE before one is
     * given); its event is made at its first sample, so that a session
     * whose samples all go to "samples of X" leaves no empty event. */
    uint32_t event_name;
    uint64_t nominal;        /* weight of a sample without a count, or 0 */
    uint8_t event_unit;      /* enum pc_unit of the timebase's counts */
    int64_t pid, tid;
    int64_t running;         /* ns on CLOCK_MONOTONIC */
    uint64_t next_index;     /* expected ProfilePacket.index */
    uint64_t dump_offset;    /* where the current dump began */
    pf_interned it;          /* InternedData */
    pf_interned local;       /* ProfilePacket's own tables (Android Q) */
    /* Last timebase count per CPU, for per-sample deltas. */
    uint64_t *cpu_count;
    uint8_t *cpu_seen;
    size_t n_cpu;
    /* Heap samples of the current dump, kept until it ends, and the dump
     * headers (pid, heap, time) they belong to. */
    struct {
        uint64_t *callstack;
        pf_heap_values *val;
        uint32_t *dump;
        size_t n, cap;
    } hs;
    pf_heap_totals totals;
    struct {
        int64_t *pid;
        uint32_t *heap;
        uint64_t *ts;
        uint8_t *has_ts;
        /* Trace time of the first packet of a dump without a time of its
         * own (Android Q's), with has_pkt_ts. */
        uint64_t *pkt_ts;
        uint8_t *has_pkt_ts;
        size_t n, cap;
    } hd;
} pf_seq;

/* What the input held that does not become samples, for the summary. */
typedef struct pf_stats {
    uint64_t records_lost, lost_packets, skipped_samples, producer_stops;
    uint64_t unresolved_callstacks, no_timestamp, clock_failures;
    uint64_t unwind_errors, needs_state, chrome_no_thread, chrome_bad;
    uint64_t heap_gaps, heap_unresolved, heap_empty, heap_no_clock, heap_flags;
    uint64_t streaming_allocs, streaming_frees;
    uint64_t stack_samples, track_events, heap_graphs;
    uint64_t packets;
} pf_stats;

typedef struct pf_reader {
    uint32_t *chain;      /* scratch: a stack's frames */
    size_t chain_cap;
    pc_profile *p;
    const pc_options *o;
    pc_input *in;
    pc_error *err;
    pf_clocks clocks;
    /* unit_multiplier_ns per clock key */
    struct {
        uint64_t *key, *mult;
        size_t n, cap;
    } units;

    /* Where the packet being decoded is, for error messages.  Inside
     * compressed packets, offsets count in the decompressed bytes and the
     * compressed packet's own offset is z_offset. */
    size_t packet_index;
    /* With keep_going: packets skipped as damaged, and where the framing
     * broke. */
    size_t skipped;
    pc_error first_skip, stop;
    int stopped;
    int in_packet;        /* on_packet is at work on a packet of packet_len */
    size_t packet_len;
    int z_depth;
    uint64_t z_offset;
    uint8_t *zbuf;
    size_t zcap;

    pf_seq *seqs;
    size_t n_seqs, cap_seqs;
    pc_htab seq_idx;

    /* Mappings, deduplicated over the whole trace. */
    struct {
        uint32_t *name, *build, *res;
        uint64_t *start, *end, *start_offset, *load_bias, *exact_offset;
        size_t n, cap;
        pc_htab idx;
    } map;

    /* Frames; ids equal the profile's frame ids.  The name is resolved at
     * the end (symbols and deobfuscation may come last). */
    struct {
        uint32_t *map, *name;
        uint8_t *kind;
        size_t n, cap;
        pc_htab idx;
    } fr;

    pc_htab thread_idx;   /* over p->thread (pid, tid) */

    /* Names from process and thread descriptors, by id. */
    struct {
        int64_t *id, *pid;
        uint32_t *name;
        size_t n, cap;
        pc_htab idx;
    } tname;

    /* ModuleSymbols: modules, then their addresses and inline lines. */
    struct {
        uint32_t *path, *build;
        size_t n, cap;
    } mod;
    struct {
        uint32_t *mod, *line0, *n_lines;
        uint64_t *addr;
        size_t n, cap;
    } sym;
    struct {
        uint32_t *func, *file, *line;
        size_t n, cap;
    } line;

    /* DeobfuscationMapping: classes, and methods of a class. */
    struct {
        uint32_t *pkg, *obf, *deobf;
        size_t n, cap;
    } cls;
    struct {
        uint32_t *cls, *obf, *deobf;
        uint32_t *line_start, *line_end;  /* obfuscated lines; 0, 0: any */
        size_t n, cap;
    } meth;

    uint16_t chrome_event;
    pf_stats st;
} pf_reader;

/* Reports "packet N: MESSAGE" at offset (with the compressed packet's
 * context when inside one) and returns PC_EINPUT. */
int pf_fail(pf_reader *r, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int pf_nomem(pf_reader *r);

/* Names every frame, applies symbols and deobfuscation mappings, and
 * names threads and processes (perfetto_names.c). */
int pf_resolve_names(pf_reader *r);
void pf_names_free(pf_reader *r);

#endif
