/* The Perfetto reader's entry point: detection, the packets streamed
 * from the input (with keep_going, damaged ones skipped), what ends
 * with the trace, and the summary of what was not converted.  Each
 * family of packets is read in a file of its own; packet.c hands them
 * out. */
#include "read/perfetto/perfetto.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/thread.h"
#include "io/source.h"
#include "read/perfetto/reader.h"

int pf_detect(const uint8_t *data, size_t len)
{
    /* Field 1 (packet), length-delimited, whose packet starts with a
     * plausible field tag. */
    if (len < 3 || data[0] != 0x0A)
        return 0;
    const uint8_t *p = data + 1;
    uint64_t n, tag;
    if (pb_varint(&p, data + len, &n) != 0 || n == 0)
        return 0;
    if (pb_varint(&p, data + len, &tag) != 0)
        return 0;
    uint32_t wt = (uint32_t)(tag & 7);
    return (tag >> 3) != 0 && wt != 3 && wt != 4 && wt < 6;
}

/* Reads a field's header, its tag and length, from the bytes [h, end):
 * f->hdr and f->n, or f->fault for a header a trace cannot hold. */
static void frame_header(const uint8_t *h, const uint8_t *end, pf_frame *f)
{
    const uint8_t *p = h;
    int e = pb_varint(&p, end, &f->tag);
    if (e == 0 && (f->tag & 7) == PB_LEN)
        e = pb_varint(&p, end, &f->n);
    else if (e == 0 && (f->tag & 7) == PB_VARINT)
        e = pb_varint(&p, end, &f->n), f->n = 0;
    else if (e == 0 && (f->tag & 7) == PB_I64)
        f->n = 8;
    else if (e == 0 && (f->tag & 7) == PB_I32)
        f->n = 4;
    else if (e == 0)
        f->fault = PF_FAULT_WIRE;
    if (e != 0) {
        f->fault = PF_FAULT_VARINT;
        f->e = e;
    }
    f->hdr = (size_t)(p - h);
    if (!f->fault && f->n > SIZE_MAX - f->hdr)
        f->fault = PF_FAULT_HUGE;
}

int pf_frame_next(pc_input *in, pf_frame *f, pc_error *err)
{
    memset(f, 0, sizeof *f);
    f->off = src_offset(in);
    int got = src_need(in, 11, err);
    if (got < 0)
        return got;
    size_t avail = src_avail(in);
    if (avail == 0)
        return 0;
    const uint8_t *h = src_ptr(in);
    frame_header(h, h + (avail < 11 ? avail : 11), f);
    if (f->fault)
        return -PC_EINPUT;
    if ((got = src_need(in, f->hdr + (size_t)f->n, err)) < 0)
        return got;
    if (!got) {
        f->fault = PF_FAULT_SHORT;
        f->remain = src_avail(in) - f->hdr;
        return -PC_EINPUT;
    }
    return 1;
}

int pf_frame_ready(const pc_input *in)
{
    /* pf_frame_next asks for 11 bytes first, then for the field whole:
     * either may wait for more input.  A field it would refuse is told
     * without waiting. */
    size_t avail = src_avail(in);
    if (avail < 11)
        return 0;
    pf_frame f;
    memset(&f, 0, sizeof f);
    frame_header(src_ptr(in), src_ptr(in) + 11, &f);
    return f.fault || f.n <= avail - f.hdr;
}

int pf_frame_fail(pf_reader *r, const pf_frame *f)
{
    switch (f->fault) {
    case PF_FAULT_WIRE:
        return src_fail_at(r->in, r->err, f->off, "after packet %zu: field %" PRIu64
                           " has wire type %u, which a trace cannot hold",
                           r->packet_index, f->tag >> 3, (unsigned)(f->tag & 7));
    case PF_FAULT_VARINT:
        return src_fail_at(r->in, r->err, f->off, "after packet %zu: %s (expected a "
                           "packet's tag and length)", r->packet_index, pb_strerror(f->e));
    case PF_FAULT_HUGE:
        return src_fail_at(r->in, r->err, f->off, "packet %zu claims %" PRIu64 " bytes",
                           r->packet_index + 1, f->n);
    default:
        return src_fail_at(r->in, r->err, f->off, "packet %zu claims %" PRIu64 " bytes but "
                           "only %zu remain (truncated trace?)",
                           r->packet_index + 1, f->n, f->remain);
    }
}

int pf_packet_refused(pf_reader *r, int st)
{
    if (st != PC_EINPUT || !r->o->keep_going)
        return st;
    pc_skips_add(&r->skipped, r->err);
    return PC_OK;
}

int pf_framing_broke(pf_reader *r, int st)
{
    if (st != PC_EINPUT || !r->o->keep_going)
        return st;
    r->stop.why = *r->err;
    r->stop.stopped = 1;
    return PC_OK;
}

/* Streams the packets from the input: each is decoded where it lies in
 * the input window. */
static int stream_strict(pf_reader *r);

/* With keep_going, a packet the reader refuses is skipped, and the trace
 * ends where its framing breaks. */
static int stream(pf_reader *r)
{
    if (pc_thread_count(r->o->threads) >= 2) {
        int st = pf_read_ahead(r);
        if (st != PF_AHEAD_NONE)
            return st;
    }
    for (;;) {
        int st = stream_strict(r);
        if (!r->in_packet)
            return pf_framing_broke(r, st);
        if ((st = pf_packet_refused(r, st)) != PC_OK)
            return st;
        r->in_packet = 0;
        src_skip(r->in, r->packet_len);
    }
}

static int stream_strict(pf_reader *r)
{
    pc_input *in = r->in;
    for (;;) {
        pf_frame f;
        int got = pf_frame_next(in, &f, r->err);
        if (got == 0)
            return PC_OK;
        if (got < 0)
            return f.fault ? pf_frame_fail(r, &f) : -got;
        if (pf_frame_is_packet(&f)) {
            /* A packet refused is whole: with keep_going, stream() skips
             * it by this length. */
            r->in_packet = 1;
            r->packet_len = f.hdr + (size_t)f.n;
            int st = pf_on_packet(r, src_ptr(in) + f.hdr, (size_t)f.n, f.off + f.hdr);
            if (st != PC_OK)
                return st;
            r->in_packet = 0;
        }
        src_skip(in, f.hdr + (size_t)f.n);
    }
}

static void reader_free(pf_reader *r)
{
    pf_pipe_free(r);
    for (size_t i = 0; i < r->n_seqs; i++)
        pf_seq_free(&r->seqs[i]);
    free(r->seqs);
    pc_htab_free(&r->seq_idx);
    pf_clocks_free(&r->clocks);
    free(r->units.key);
    free(r->units.mult);
    free(r->zbuf);
    free(r->chain);
    free(r->map.name);
    free(r->map.build);
    free(r->map.res);
    free(r->map.start);
    free(r->map.end);
    free(r->map.start_offset);
    free(r->map.load_bias);
    free(r->map.exact_offset);
    pc_htab_free(&r->map.idx);
    free(r->fr.map);
    free(r->fr.name);
    free(r->fr.kind);
    pc_htab_free(&r->fr.idx);
    pc_thread_index_free(&r->threads);
    free(r->tname.id);
    free(r->tname.pid);
    free(r->tname.name);
    pc_htab_free(&r->tname.idx);
    pf_names_free(r);
    pf_stack_sample_free(r);
    pf_track_event_free(r);
    pf_heap_graph_free(r);
    pf_streaming_free(r);
}

/* What the trace holds that gave no samples, for the message of a
 * conversion with nothing to show (meta.empty_hint). */
static void describe_rest(pf_reader *r)
{
    const pf_stats *st = &r->st;
    const struct {
        uint64_t n;
        const char *what;
    } kinds[] = {
        {st->heap_graphs, "Java heap graph packets (android.java_hprof)"},
        {st->te_no_thread, "TrackEvents on tracks of no thread"},
        {st->te_other, "TrackEvent packets that are no slice (counters, legacy events)"},
        {st->skipped_samples, "perf samples without a callstack (skipped by traced_perf)"},
        {st->bare_samples, "perf samples with neither a callstack nor a count"},
        {st->unresolved_callstacks, "samples whose callstack the trace does not define"},
        {st->heap_empty, "heap samples with an empty callstack"},
        {st->streaming_no_time, "streaming allocations or frees without a time"},
        {st->chrome_no_thread + st->chrome_bad, "Chrome samples without a thread or time"},
        {st->clock_failures + st->heap_no_clock, "samples or heap dumps on an unrelated clock"},
    };
    char buf[768];
    size_t used = (size_t)snprintf(buf, sizeof buf, "the trace (%" PRIu64 " packets) holds ",
                                   st->packets);
    int any = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds && used < sizeof buf; k++)
        if (kinds[k].n) {
            used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%" PRIu64 " %s",
                                     any ? ", " : "", kinds[k].n, kinds[k].what);
            any = 1;
        }
    if (!any && used < sizeof buf)
        snprintf(buf + used, sizeof buf - used, "no profiling data");
    used = strlen(buf);
    if (used < sizeof buf)
        snprintf(buf + used, sizeof buf - used, "; CPU samples with callstacks come from the "
                 "linux.perf data source (or Chrome's sampler, or a profiler writing "
                 "StackSample packets), heap profiles from android.heapprofd, Java heap "
                 "graphs (with objects) from android.java_hprof");
    r->p->meta.empty_hint = pc_intern_cstr(r->p, buf);
}

static void report(pf_reader *r)
{
    const pf_stats *st = &r->st;
    const pc_options *o = r->o;
    pc_skips_report(&r->skipped, o, "damaged packets skipped");
    pc_stop_report(&r->stop, o, r->packet_index, "packets");
    if (st->records_lost)
        pc_log(o, PC_LOG_WARN, "traced_perf lost %" PRIu64 " kernel records (samples "
               "the kernel buffer could not hold)", st->records_lost);
    if (st->lost_packets)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " packet sequence(s) lost packets while "
               "tracing; their samples until the next incremental state are left out",
               st->lost_packets);
    if (st->needs_state)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " packets needed incremental state that was "
               "lost or never sent and were left out", st->needs_state);
    if (st->skipped_samples)
        pc_log(o, PC_LOG_INFO, "%" PRIu64 " perf samples were skipped by the profiler "
               "(no callstack recorded)", st->skipped_samples);
    if (st->bare_samples)
        pc_log(o, PC_LOG_NOTICE, "%" PRIu64 " perf samples carry neither a callstack nor a "
               "count and are left out", st->bare_samples);
    if (st->extra_followers)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " follower events or counts of perf samples "
               "are not converted: past the first %d of their session, or without a "
               "follower event it defines", st->extra_followers, PF_MAX_FOLLOWERS);
    if (st->producer_stops)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " perf producer event(s) (such as a guardrail "
               "stop) ended sampling early", st->producer_stops);
    if (st->unresolved_callstacks)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " samples name a callstack the trace does not "
               "define; they are kept with an empty stack", st->unresolved_callstacks);
    if (st->partial_stacks) {
        char first[160];
        pf_undef_text(r, first, sizeof first);
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " samples have a callstack with a frame, mapping "
               "or function name the trace does not define (the first: %s); the rest of "
               "each stack is kept, an undefined frame shows as \"[undefined frame iid N]\"",
               st->partial_stacks, first);
    }
    if (st->no_timestamp)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " perf samples have no timestamp and were "
               "left out", st->no_timestamp);
    if (st->clock_failures)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " samples are on a clock no clock snapshot "
               "relates to the trace clock and were left out", st->clock_failures);
    if (st->unwind_errors)
        pc_log(o, PC_LOG_INFO, "%" PRIu64 " perf samples were only partly unwound "
               "(under an ERROR frame)", st->unwind_errors);
    if (st->chrome_no_thread)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " Chrome samples came before their thread's "
               "descriptor and were left out", st->chrome_no_thread);
    if (st->chrome_bad)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " Chrome samples had missing or negative "
               "timestamps and were left out", st->chrome_bad);
    if (st->heap_gaps)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " gap(s) in heapprofd's packet index: heap "
               "dumps lost packets", st->heap_gaps);
    if (st->heap_unresolved)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " heap samples name a callstack the trace "
               "does not define and were left out", st->heap_unresolved);
    if (st->heap_empty)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " heap samples have an empty callstack and "
               "were left out", st->heap_empty);
    if (st->heap_no_clock)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " heap dumps have a time no clock snapshot "
               "converts and were left out", st->heap_no_clock);
    if (st->heap_flags)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " heap dumps are incomplete (the client "
               "disconnected, overran its buffer or hit a guardrail)", st->heap_flags);
    if (st->streaming_allocs || st->streaming_frees)
        pc_log(o, PC_LOG_INFO, "%" PRIu64 " streaming allocations and %" PRIu64 " frees "
               "carry no callstacks: they are memory counters of their process",
               st->streaming_allocs, st->streaming_frees);
    if (st->streaming_unfreed)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " streaming allocations reuse an address whose free "
               "the trace lacks: its bytes count as freed then", st->streaming_unfreed);
    if (st->streaming_no_time)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " streaming allocations or frees have no time on "
               "the trace's clock and were left out", st->streaming_no_time);
    pf_stack_sample_report(r);
    if (st->heap_graph_gaps)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " Java heap graph dump(s) lost packets (a gap "
               "in their packet index); their trees lack what those held",
               st->heap_graph_gaps);
    if (st->heap_graph_bad)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " Java heap graph objects or packets were "
               "malformed or belonged to another dump and were left out",
               st->heap_graph_bad);
    if (st->heap_graph_unfinished)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " Java heap graph dump(s) were cut short by the "
               "end of the trace; what arrived of them is shown", st->heap_graph_unfinished);
    if (st->te_callstacks)
        pc_log(o, PC_LOG_NOTICE, "%" PRIu64 " TrackEvent callstacks are samples of the event "
               "\"TrackEvent callstacks\", each with its slice's name as the leaf",
               st->te_callstacks);
    if (st->te_no_thread)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " TrackEvents (slices or callstacks) were left out: "
               "their track is no thread's", st->te_no_thread);
    if (st->te_other)
        pc_log(o, PC_LOG_INFO, "%" PRIu64 " TrackEvent packets that are no slice (counters, "
               "legacy events) are not converted", st->te_other);
    if (st->te_slices)
        pc_log(o, PC_LOG_INFO, "%" PRIu64 " TrackEvent slices and instants are markers of "
               "their threads", st->te_slices);
    if (st->te_unended)
        pc_log(o, PC_LOG_NOTICE, "%" PRIu64 " TrackEvent slices did not end: they last to "
               "the trace's last TrackEvent", st->te_unended);
    if (st->te_unmatched_ends)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " TrackEvent slice ends matched no begin on their "
               "track and were left out", st->te_unmatched_ends);
    if (st->te_dropped)
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " TrackEvent slices were left out: more than 65536 "
               "were open at once", st->te_dropped);
    describe_rest(r);
}

/* About the fewest bytes a traced_perf sample takes in a trace: its
 * packet's tag and length, timestamp, sequence id, and a PerfSample of
 * CPU, pid, tid, callstack iid and counter.  Its traces run 35 to 90 bytes
 * a sample (reused callstacks to 47 % new ones), so a trace of S bytes
 * holds at most about S / 32 of them, the room the sample table is given.
 * Chrome's packed samples and compressed packets can hold more; the table
 * then grows from there as it would have from nothing. */
#define PF_SAMPLE_BYTES_MIN 32

int pc_read_perfetto(pc_input *in, pc_profile *p, const pc_options *o, pc_error *err)
{
    pf_reader r;
    memset(&r, 0, sizeof r);
    r.p = p;
    r.o = o;
    r.in = in;
    r.err = err;
    r.clocks.trace_clock = PF_CLOCK_BOOTTIME;
    r.chrome_event = PF_NO_EVENT;
    p->meta.source = pc_intern_cstr(p, "Perfetto");
    uint64_t most = src_size_hint(in) / PF_SAMPLE_BYTES_MIN;
    pc_sample_reserve(p, most > SIZE_MAX ? SIZE_MAX : (size_t)most);
    int st = stream(&r);
    if (pf_pipe_end(&r) < 0 && st == PC_OK)
        st = pf_nomem(&r);
    /* A dump the trace ends inside still has what arrived of it. */
    for (size_t i = 0; st == PC_OK && i < r.n_seqs; i++)
        if (r.seqs[i].in_dump && r.seqs[i].hd.n)
            st = pf_heap_dump_end(&r, &r.seqs[i]);
    if (st == PC_OK)
        st = pf_heap_graph_end(&r);
    if (st == PC_OK)
        st = pf_track_event_end(&r);
    if (st == PC_OK)
        st = pf_resolve_names(&r);
    if (st == PC_OK)
        st = pf_stack_sample_finish(&r);
    p->sample.read = p->sample.n;
    if (st == PC_OK && p->oom)
        st = pf_nomem(&r);
    if (st == PC_OK)
        report(&r);
    reader_free(&r);
    return st;
}
