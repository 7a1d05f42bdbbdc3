/* State of the Perfetto reader, shared by its parts, one file per
 * family of packets as in trace_processor:
 *   perfetto.c        the trace: packets streamed from the input, the end
 *   packet.c          TracePacket dispatch, compressed packets
 *   wire.c            field decoding and errors, for every family
 *   sequence.c        sequences, interned data and its resolving
 *   clock_snapshot.c  ClockSnapshot, packet times to trace time
 *   perf_sample.c     traced_perf samples and their events
 *   stack_sample.c    StackSample, the generic sampler's samples
 *   chrome.c          Chrome's StreamingProfilePacket
 *   heapprofd.c       heapprofd's ProfilePacket
 *   heap_graph.c      ART's Java heap graphs (HeapGraph)
 *   process_tree.c    threads, process and thread names
 *   symbols.c         ModuleSymbols and DeobfuscationMapping
 *   names.c           names, symbols and deobfuscation, resolved once the
 *                     whole trace is read
 *   pipe.c            perf samples' stack-tree steps and rows on a second
 *                     thread
 * with clock.c (the clock graph), intern.c (interned tables) and heap.c
 * (heap totals) underneath. */
#ifndef PROFCONV_PERFETTO_READER_H
#define PROFCONV_PERFETTO_READER_H

#include <stddef.h>
#include <stdint.h>

#include "base/pbwire.h"
#include "io/source.h"
#include "java/deobf.h"
#include "model/model.h"
#include "read/read.h"
#include "read/perfetto/clock.h"
#include "read/perfetto/heap.h"
#include "read/perfetto/intern.h"
#include "profconv.h"

#define PF_NO_EVENT UINT16_MAX

/* Expected wire types, in the tables each field reader checks with NEXT. */
#define V PB_VARINT
#define L PB_LEN
#define ANY 0xff

/* TracePacket fields (doc/formats/perfetto-fields.md). */
enum {
    TP_PROCESS_TREE = 2,
    TP_CLOCK_SNAPSHOT = 6,
    TP_TIMESTAMP = 8,
    TP_SEQUENCE_ID = 10,
    TP_TRACK_EVENT = 11,
    TP_INTERNED_DATA = 12,
    TP_SEQUENCE_FLAGS = 13,
    TP_PROFILE_PACKET = 37,
    TP_STATE_CLEARED = 41,
    TP_PACKET_DROPPED = 42,
    TP_PROCESS_DESCRIPTOR = 43,
    TP_THREAD_DESCRIPTOR = 44,
    TP_COMPRESSED = 50,
    TP_STREAMING_PROFILE = 54,
    TP_CLOCK_ID = 58,
    TP_DEFAULTS = 59,
    TP_TRACK_DESCRIPTOR = 60,
    TP_MODULE_SYMBOLS = 61,
    TP_DEOBFUSCATION = 64,
    TP_PERF_SAMPLE = 66,
    TP_STREAMING_ALLOC = 74,
    TP_TRUSTED_PID = 79,
    TP_STREAMING_FREE = 75,
    TP_ZSTD_COMPRESSED = 133,
    TP_STACK_SAMPLE = 135,
    TP_HEAP_GRAPH = 56,
};

/* Follower events of a perf session converted; more are counted. */
#define PF_MAX_FOLLOWERS 15
#define PF_COUNT_SLOTS (1 + PF_MAX_FOLLOWERS)

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
    /* The last conversion of a packet time to trace time: packets of a
     * sequence mostly use one clock and fall between the same two
     * snapshots, and then convert by the same difference. */
    struct {
        uint64_t key, mult, delta;
        pf_clock_span span;      /* len 0: nothing kept */
        /* What the clocks were then: */
        uint64_t trace_clock;
        size_t snapshots, units;
    } tc;
    pf_interned it;          /* InternedData */
    pf_interned local;       /* ProfilePacket's own tables (Android Q) */
    /* The perf session's follower events (PerfSampleDefaults.followers):
     * names (string ids) and units, and their events once made. */
    uint32_t follower_name[PF_MAX_FOLLOWERS];
    uint8_t follower_unit[PF_MAX_FOLLOWERS];
    uint16_t follower_event[PF_MAX_FOLLOWERS];
    uint8_t n_followers;
    /* Last count per CPU of the timebase (slot 0) and each follower
     * (slot 1 + k), at cpu * PF_COUNT_SLOTS + slot, for deltas. */
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
    /* StackSampleDefaults; zero is none, so that a clear is a memset.
     * Ids are stored plus one. */
    struct {
        uint32_t source1;        /* string id + 1 */
        uint32_t n_followers;
        pf_ss_rec followers[PF_MAX_FOLLOWERS];
        uint16_t event1;         /* the primary's event + 1, once made */
        uint16_t uncounted1;     /* its "samples of" event + 1 */
        uint8_t has_primary;
        pf_ss_rec primary;
    } ssd;
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
    uint64_t extra_followers;   /* follower events past PF_MAX_FOLLOWERS */
    uint64_t bare_samples;      /* perf samples with neither callstack nor count */
    uint64_t unresolved_callstacks, no_timestamp, clock_failures;
    uint64_t partial_stacks;  /* samples whose stack lacks a frame's definition */
    uint64_t unwind_errors, needs_state, chrome_no_thread, chrome_bad;
    uint64_t heap_gaps, heap_unresolved, heap_empty, heap_no_clock, heap_flags;
    uint64_t streaming_allocs, streaming_frees, streaming_no_time, streaming_unfreed;
    uint64_t stack_samples, track_events, heap_graphs;
    /* TrackEvent: callstacks made samples; ones without a thread to put
     * them on (a track no TrackDescriptor ties to one). */
    uint64_t te_callstacks, te_no_thread, te_slices, te_unmatched_ends, te_unended;
    uint64_t te_other;          /* TrackEvents neither slice nor callstack */
    uint64_t te_dropped;        /* slice begins past MAX_OPEN_SLICES open */
    /* StackSample: follower counter values, references to interned data
     * the trace does not define, samples of async contexts. */
    uint64_t ss_followers, ss_undefined, ss_async;
    /* Java heap graphs: dumps with a gap in their packet index, objects
     * or packets left out as malformed, dumps the trace ended inside. */
    uint64_t heap_graph_gaps, heap_graph_bad, heap_graph_unfinished;
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
    pc_skips skipped;
    pc_stop stop;
    int in_packet;        /* pf_on_packet is at work on a packet of packet_len */
    size_t packet_len;
    int z_depth;
    uint64_t z_offset;
    uint8_t *zbuf;
    size_t zcap;

    pf_seq *seqs;
    size_t n_seqs, cap_seqs;
    pc_htab seq_idx;
    size_t last_seq;     /* 1 + the index pf_seq_of gave last: packets mostly
                            come in runs of one sequence */

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

    pc_thread_index threads;

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

    /* DeobfuscationMapping packets, read into the deobfuscation model
     * that mapping files also feed (java/deobf.h). */
    pc_deobf deobf;

    uint16_t chrome_event;
    /* Java heap graphs: dumps being read, and the trees of finished
     * ones (heap_graph.c). */
    struct pf_hgraph *hg;
    struct pf_streaming *sh;
    pf_stats st;

    /* StackSample's inline callstack frames by (name, file, line), and
     * the first reference to interned data the trace does not define. */
    struct {
        uint32_t *frame, *name, *file, *line;
        size_t n, cap;
        pc_htab idx;
        uint64_t undef_offset, undef_iid;
        size_t undef_packet;
        const char *undef_what;
        uint32_t no_task1;   /* the thread of samples without a task + 1 */
    } ss;

    /* TrackDescriptor uuids of thread tracks, for TrackEvents. */
    struct {
        uint64_t *uuid;
        int64_t *pid, *tid;
        size_t n, cap;
        pc_htab idx;
        uint16_t event1;      /* the callstacks' event + 1 */
        /* Slices begun and not ended yet: a pool of entries (start,
         * thread, name, category or PC_NONE, and the entry open before
         * on the same track), free ones chained through prev; live
         * marks the open ones. */
        struct {
            uint64_t *start;
            uint32_t *thread, *name, *cat, *prev;
            uint8_t *live;
            size_t n, cap, n_live;
            uint32_t free;
        } open;
        /* Tracks with slices: a uuid, or a sequence's own thread (seq
         * set), the innermost open slice, and begins dropped on it while
         * too many were open, which the next ends close first. */
        struct {
            uint64_t *key;
            uint8_t *seq;
            uint32_t *top, *dropped;
            size_t n, cap;
            pc_htab idx;
        } tracks;
        uint64_t last_time;   /* the latest TrackEvent time */
    } te;

    /* The first frame, mapping or function name a callstack refers to
     * and the trace does not define (what: 0 none yet), for the warning
     * (pf_undef_text). */
    struct {
        uint64_t callstack, frame, ref;
        uint32_t seq;
        int what;
    } undef;

    /* The second thread of perf samples (pipe.c): waiting for enough
     * samples (pipe_count so far), running, or not to be. */
    struct pf_pipe *pipe;
    enum { PF_PIPE_WAITING, PF_PIPE_RUNNING, PF_PIPE_OFF } pipe_state;
    size_t pipe_count;
    /* The thread framing packets ahead of this one (ahead.c), while it
     * runs. */
    struct pf_ahead *ahead;
} pf_reader;

/* Where and when a packet is, for the payload's reader. */
typedef struct pf_packet {
    uint64_t offset;      /* of the packet's first field */
    uint64_t ts;
    int64_t pid;          /* trusted_pid: the writer's process */
    uint32_t clock_id;
    uint8_t has_ts, has_clock, has_pid;
} pf_packet;

/* ---- wire.c ---- */

/* Reports "packet N: MESSAGE" at offset (with the compressed packet's
 * context when inside one) and returns PC_EINPUT. */
int pf_fail(pf_reader *r, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int pf_nomem(pf_reader *r);
int pf_wire_fail(pf_reader *r, const pb_reader *pr, const char *what);
int pf_next(pf_reader *r, pb_reader *pr, pb_field *f, const uint8_t *expect,
            size_t n_expect, const char *what);
#define NEXT(r, pr, f, ex, what) pf_next(r, pr, f, ex, sizeof ex, what)
/* Calls back for each value of a repeated varint field, packed or not. */
typedef int (*pf_each_fn)(pf_reader *r, void *ctx, uint64_t v);
int pf_each_varint(pf_reader *r, pb_reader *pr, const pb_field *f, pf_each_fn fn,
                   void *ctx, const char *what);
int pf_scalar(pf_reader *r, pb_reader *pr, const pb_field *f, const char *what);
/* The values of a repeated varint field, the first PF_MAX_FOLLOWERS kept
 * and all counted (n may exceed what v holds): a pf_each_fn with it as
 * ctx is pf_keep_value. */
typedef struct pf_values {
    uint64_t v[PF_MAX_FOLLOWERS];
    size_t n;
} pf_values;
int pf_keep_value(pf_reader *r, void *ctx, uint64_t v);

/* ---- sequence.c ---- */

pf_seq *pf_seq_of(pf_reader *r, uint32_t id);
void pf_seq_free(pf_seq *s);
void pf_seq_clear(pf_seq *s);
uint32_t pf_build_id_string(pf_reader *r, const uint8_t *b, size_t n);
/* Interned records, into the sequence's InternedData or, for heapprofd,
 * the ProfilePacket's own tables. */
int pf_on_string(pf_reader *r, pb_reader *pr, pf_interned *t, int kind);
int pf_on_frame(pf_reader *r, pb_reader *pr, pf_interned *t);
int pf_on_mapping(pf_reader *r, pb_reader *pr, pf_interned *t);
int pf_on_callstack(pf_reader *r, pb_reader *pr, pf_interned *t);
int pf_on_interned(pf_reader *r, pb_reader *pr, pf_seq *s);
uint32_t pf_named_frame(pf_reader *r, const char *name);
int pf_stack_of(pf_reader *r, pf_seq *s, uint64_t iid, uint32_t root, uint32_t *out);
/* The interned callstack iid of sequence s: its table in *t and its
 * entry (the record index in val), or NULL when the trace does not
 * define it. */
pf_entry *pf_callstack_find(pf_seq *s, uint64_t iid, pf_interned **t);
/* The profile frames of callstack i of table t (iid), root first and
 * under the depth limit, into r->chain[0 .. *n); *partial as
 * pf_stack_of's result 1.  0, or -1 out of memory. */
int pf_callstack_frames(pf_reader *r, pf_seq *s, pf_interned *t, uint32_t i, uint64_t iid,
                        size_t *n, int *partial);
/* Whether profile frame f is named "ERROR ...", the root traced_perf
 * gives a stack whose unwinding failed. */
int pf_frame_is_error(const pf_reader *r, uint32_t f);
/* Whether unresolved callstack i of table t (iid) keeps such a root under
 * the depth limit: 1 or 0, resolving that frame alone; -1 out of memory. */
int pf_callstack_error_root(pf_reader *r, pf_seq *s, pf_interned *t, uint32_t i, uint64_t iid);
/* Describes r->undef into buf, as snprintf does. */
int pf_undef_text(const pf_reader *r, char *buf, size_t cap);
uint32_t pf_root_name(pf_reader *r, pf_seq *s, uint32_t stack);

/* ---- pipe.c ---- */

/* A sample row but its stack; unwind_error: the sample's unwinding
 * failed (its stack needs an ERROR root, unless it has one). */
typedef struct pf_row {
    uint32_t thread;
    uint64_t time;
    int64_t weight;
    uint16_t event, cpu;
    int unwind_error;
} pf_row;
/* Queues the sample of callstack iid on sequence s, to be added with its
 * stack on the second thread (started here once enough samples came, when
 * --threads allows).  1 queued; 0 left to the caller (no second thread, a
 * callstack undefined or empty, an unwinding error whose callstack has
 * no ERROR root): pf_stack_of and pc_add_sample then; -1 out of memory. */
int pf_pipe_sample(pf_reader *r, pf_seq *s, uint64_t iid, const pf_row *row);
/* Waits until everything queued is applied: the stack tree and the
 * sample table are the calling thread's until the next pf_pipe_sample.
 * 0, or -1 out of memory (p->oom set).  Without a pipe, 0 at once. */
int pf_pipe_drain(pf_reader *r);
/* Whether a callstack's res (pf_entry) v is a ticket; its stack, after pf_pipe_drain. */
int pf_pipe_is_ticket(const pf_reader *r, uint32_t v);
uint32_t pf_pipe_ticket_stack(const pf_reader *r, uint32_t v);
/* Drains and stops the second thread (tickets still translate); 0 or -1
 * as pf_pipe_drain. */
int pf_pipe_end(pf_reader *r);
/* Frees the pipe, after pf_pipe_end. */
void pf_pipe_free(pf_reader *r);

/* ---- clock_snapshot.c ---- */

int pf_on_clock_snapshot(pf_reader *r, pb_reader *pr, uint32_t seq);
int pf_to_trace_time(pf_reader *r, uint32_t id, uint32_t seq, uint64_t t, uint64_t *out);
int pf_packet_time(pf_reader *r, pf_seq *s, const pf_packet *pk, uint64_t *t);
/* A sample's packet time on the trace clock into *t: 0, or -1 when the
 * packet has no time or its clock converts to none (counted in r->st;
 * the sample is left out). */
int pf_sample_time(pf_reader *r, pf_seq *s, const pf_packet *pk, uint64_t *t);

/* ---- perf_sample.c ---- */

uint16_t pf_event_named(pf_reader *r, const char *name, int unit);
int pf_on_defaults(pf_reader *r, pb_reader *pr, pf_seq *s);
int pf_on_perf_sample(pf_reader *r, pb_reader *pr, pf_seq *s, const pf_packet *pk);
/* The PerfSample fields a sample is made of. */
typedef struct pf_perf_fields {
    uint64_t cpu, pid, tid, cs, count, err;
    uint8_t has_cpu, has_cs, has_count, has_err;
} pf_perf_fields;
/* The common PerfSample (fields 1 to 6 and 16, varints) decoded from
 * [p, end) in one pass, for packet.c's quick path: 1 with *f filled, 0
 * for any other shape, which pf_on_perf_sample reads.  Touches no state. */
int pf_perf_sample_quick(const uint8_t *p, const uint8_t *end, pf_perf_fields *f);
/* Makes the sample of fields that pf_perf_sample_quick decoded, as
 * pf_on_perf_sample does. */
int pf_perf_sample_add(pf_reader *r, pf_seq *s, const pf_packet *pk, const pf_perf_fields *f);
/* A packet of the common traced_perf shape, as pf_quick_scan found it:
 * the packet's fields, its PerfSample's, and where its interned data
 * lies from the packet's first byte. */
typedef struct pf_quick {
    pf_packet pk;         /* offset left 0: pf_on_scanned is given it */
    pf_perf_fields f;
    uint32_t seq_id, flags;
    uint32_t interned_at, interned_len;
    uint8_t ok, has_interned;
} pf_quick;

/* ---- track_event.c ---- */

/* A TrackEvent: a slice that carries a callstack becomes a sample of the
 * event "TrackEvent callstacks", its stack the callstack with the slice's
 * name as the leaf. */
int pf_on_track_event(pf_reader *r, pb_reader *pr, pf_seq *s, const pf_packet *pk);
/* Notes that track uuid is thread tid of process pid (TrackDescriptor). */
int pf_track_thread(pf_reader *r, uint64_t uuid, int64_t pid, int64_t tid);
void pf_track_event_free(pf_reader *r);
/* Once the trace is read: the slices still open end at the latest
 * TrackEvent time. */
int pf_track_event_end(pf_reader *r);

/* ---- stack_sample.c ---- */

int pf_on_stack_sample(pf_reader *r, pb_reader *pr, pf_seq *s, const pf_packet *pk);
/* The frame of a function known by name (and source file and line; file
 * PC_NONE and line 0 when not), without an address, made once; PC_NONE
 * when out of memory.  Shared by inline callstacks and TrackEvent. */
uint32_t pf_inline_frame(pf_reader *r, uint32_t name, uint32_t file, uint32_t line);
/* The stack of the InlineCallstack message cs of parent, its frames
 * outermost first, into *out.  PC_OK or the error status. */
int pf_inline_stack(pf_reader *r, const pb_reader *parent, const pb_field *cs, uint32_t *out);
int pf_on_stack_sample_defaults(pf_reader *r, pb_reader *pr, pf_seq *s);
/* InternedData fields 48 to 50, into t. */
int pf_on_stack_sample_interned(pf_reader *r, pb_reader *pr, pf_interned *t, uint32_t field);
/* Once names are resolved: source files of inline frames, the name of
 * the thread of samples without a task. */
int pf_stack_sample_finish(pf_reader *r);
void pf_stack_sample_free(pf_reader *r);
/* The log lines of what StackSample packets held and were not converted. */
void pf_stack_sample_report(const pf_reader *r);

/* ---- chrome.c ---- */

int pf_on_streaming_profile(pf_reader *r, pb_reader *pr, pf_seq *s);

/* ---- heapprofd.c ---- */

int pf_on_profile_packet(pf_reader *r, pb_reader *pr, pf_seq *s, const pf_packet *pk);
/* Also for the dump a trace ends inside: what arrived of it is kept. */
int pf_heap_dump_end(pf_reader *r, pf_seq *s);

/* ---- streaming_heap.c ---- */

/* A StreamingAllocation (frees 0) or StreamingFree (frees 1) packet: the
 * bytes of each as a counter value of its process and heap. */
int pf_on_streaming_heap(pf_reader *r, pb_reader *pr, pf_seq *s, const pf_packet *pk,
                         int frees);
void pf_streaming_free(pf_reader *r);

/* ---- heap_graph.c ---- */

int pf_on_heap_graph(pf_reader *r, pb_reader *pr, pf_seq *s, const pf_packet *pk);
/* Once the trace is read (deobfuscation mappings may come after the
 * graphs): ends the dumps still open and adds every dump's heap rows. */
int pf_heap_graph_end(pf_reader *r);
void pf_heap_graph_free(pf_reader *r);

/* ---- process_tree.c ---- */

uint32_t pf_thread_of(pf_reader *r, int64_t pid, int64_t tid);
int pf_on_process_tree(pf_reader *r, pb_reader *pr);
int pf_on_process_descriptor(pf_reader *r, pb_reader *pr);
int pf_on_thread_descriptor(pf_reader *r, pb_reader *pr, pf_seq *s);
int pf_on_track_descriptor(pf_reader *r, pb_reader *pr, pf_seq *s);

/* ---- symbols.c ---- */

int pf_on_module_symbols(pf_reader *r, pb_reader *pr);
int pf_on_deobfuscation(pf_reader *r, pb_reader *pr);

/* ---- packet.c ---- */

/* One TracePacket of len bytes at offset (in the decompressed bytes when
 * inside compressed packets). */
int pf_on_packet(pf_reader *r, const uint8_t *data, size_t len, uint64_t offset);
/* Scans a packet of len bytes for the common traced_perf shape, touching
 * no state (any thread): q->ok set, with the rest of *q filled, for that
 * shape; clear for any other. */
void pf_quick_scan(const uint8_t *data, size_t len, pf_quick *q);
/* pf_on_packet for a packet pf_quick_scan has scanned into *q. */
int pf_on_scanned(pf_reader *r, const uint8_t *data, size_t len, uint64_t offset,
                  const pf_quick *q);

/* ---- perfetto.c: the trace's framing ---- */

/* Where the next top-level field of the trace lies, or why it cannot be
 * framed (fault, told by pf_frame_fail, which names the packets read). */
enum { PF_FAULT_NONE, PF_FAULT_WIRE, PF_FAULT_VARINT, PF_FAULT_HUGE, PF_FAULT_SHORT };
typedef struct pf_frame {
    uint64_t off;         /* of the field's tag in the input */
    uint64_t tag, n;      /* n: the bytes after the header */
    size_t hdr;
    int fault;
    int e;                /* PF_FAULT_VARINT: pb_varint's error */
    size_t remain;        /* PF_FAULT_SHORT: the bytes after the header */
} pf_frame;

/* Frames the next field at src_ptr(in): 1 with its header and n bytes in
 * the window, 0 at the end of the input, or a negative status: with
 * f->fault set for a broken framing, else err filled by the input. */
int pf_frame_next(pc_input *in, pf_frame *f, pc_error *err);
/* Whether pf_frame_next would frame a field without reading more input:
 * a reader ahead hands over what it has before it may wait. */
int pf_frame_ready(const pc_input *in);
/* Fills r->err for f's fault and returns PC_EINPUT. */
int pf_frame_fail(pf_reader *r, const pf_frame *f);
/* What keep_going makes of a packet's status st (a refused packet is
 * skipped: PC_OK) and of the framing's (the trace ends where it breaks:
 * PC_OK); without it, or for other failures, st. */
int pf_packet_refused(pf_reader *r, int st);
int pf_framing_broke(pf_reader *r, int st);
static inline int pf_frame_is_packet(const pf_frame *f)
{
    return (f->tag >> 3) == 1 && (f->tag & 7) == PB_LEN;
}

/* ---- ahead.c ---- */

/* Reads the trace as the single-threaded stream does, to the same model,
 * with packets framed and scanned (pf_quick_scan) on a thread of their
 * own.  Returns a status, or PF_AHEAD_NONE when no thread could be
 * started and nothing has been read. */
#define PF_AHEAD_NONE (-1)
int pf_read_ahead(pf_reader *r);
/* The progress callback in place for the input (see src_get_progress):
 * while packets are read ahead, the reading thread calls it, not the
 * input. */
void pf_progress_get(const pf_reader *r, src_progress_fn *fn, void **ctx);
void pf_progress_set(pf_reader *r, src_progress_fn fn, void *ctx);

/* ---- names.c ---- */

/* Names every frame, applies symbols and deobfuscation mappings, and
 * names threads and processes. */
int pf_resolve_names(pf_reader *r);
void pf_names_free(pf_reader *r);

#endif
