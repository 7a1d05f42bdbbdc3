/* The Perfetto fixtures of the tests in this folder, written with the
 * project's encoder (pf_encode.h): a traced_perf trace, heapprofd dumps
 * and the pieces they are made of; converting them and reading the result
 * back as text. */
#ifndef PROFCONV_TESTS_READ_PERFETTO_PF_FIXTURES_H
#define PROFCONV_TESTS_READ_PERFETTO_PF_FIXTURES_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "pf_encode.h"
#include "profconv.h"

enum { BOOTTIME = 6, MONOTONIC = 3, MONO_COARSE = 4 };

/* BOOTTIME runs 1 s ahead of MONOTONIC in the fixtures. */
#define BOOT_AHEAD 1000000000ull

/* ---- Traces ---- */

/* A clock snapshot: MONOTONIC and MONOTONIC_COARSE at mono, BOOTTIME
 * BOOT_AHEAD later. */
void snapshot(pb_buf *b, uint64_t mono);
/* A process tree: process 100 "com.example.app" with threads 100
 * "example.app" and 101 "RenderThread", process 200 surfaceflinger. */
void process_tree(pb_buf *b);
/* A traced_perf trace: 5 samples of process 100 on two CPUs, plus a
 * skipped sample, lost records, a producer event and an unwinding error. */
void fx_perf(pb_buf *b);

/* A ProfilePacket of sequence 9: open with heap_open, close with pb_end
 * on pp then pk (interned data may go between the two ends). */
typedef struct heap_marks {
    size_t pk, pp;
} heap_marks;

heap_marks heap_open(pb_buf *b, uint64_t index, int continued);
/* Opens a dump of process 100 at ts (MONOTONIC_COARSE) of libc.malloc;
 * close with pb_end(b, *mark). */
void heap_dump_header(pb_buf *b, uint64_t ts, size_t *mark);
/* A callsite's row: bytes allocated and freed, counts a 100th of them. */
void heap_sample(pb_buf *b, uint64_t cs, uint64_t alloc, uint64_t freed);
/* Two heapprofd dumps of process 100 (at 1 and 2 ms MONOTONIC_COARSE),
 * each split over continued packets with the interned data after the
 * samples, and a lost packet between them (index 3 is missing). */
void fx_heap(pb_buf *b);
/* Interned data defining callstack 1 as the single frame "main". */
void main_callstack(pb_buf *b);

/* A perf trace's start on sequence 1: clocks, processes, defaults, and
 * n functions PREFIX0, PREFIX1... interned with one frame each (iids 1 to
 * n, in that order). */
void perf_start_with_frames(pb_buf *b, const char *prefix, int n);
/* A packet of sequence 1 at time t holding one sample of callstack cs in
 * thread 100. */
void perf_sample_packet(pb_buf *b, uint64_t t, uint64_t cs);
/* A packet of sequence 1 whose interned data defines callstack iid as
 * frames[0 .. n), root first (packed or not). */
void callstack_packet(pb_buf *b, uint64_t iid, const uint64_t *frames, size_t n, int packed);

/* ---- Results ---- */

/* Converts the trace in b; records a failure and returns NULL if it
 * fails. */
pc_profile *convert_buf(const pb_buf *b, const pc_options *o);
/* "time:weight:stack" of thread t's samples, times in µs of BOOTTIME (a
 * static buffer). */
const char *samples_text(const pc_profile *p, uint32_t t);
/* Writes p as processed JSON, checks it, and returns the text (malloc'd),
 * or NULL. */
char *processed_of(const pc_profile *p);

#endif
