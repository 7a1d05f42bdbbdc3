/* Transforms that work on the profile model after reading, whatever the
 * input format, listed in the order pc_convert() runs them, each with the
 * file it lives in.  Each returns 0 or a pc_status with err filled. */
#ifndef PROFCONV_TRANSFORM_H
#define PROFCONV_TRANSFORM_H

#include "model/model.h"
#include "profconv.h"

/* symbolize.c */
/* Names the frames the input left unnamed (frame.unnamed) from the
 * binaries in o->symbol_dirs and under o->symfs, and says in one line how
 * many it named; does nothing, and touches no file, without either. */
int pc_symbolize(pc_profile *p, const pc_options *o, pc_error *err);

/* offcpu.c */
/* For off-CPU recordings: sets each off-CPU sample's weight to its
 * duration, then keeps the samples o->offcpu asks for (unless o->event
 * chooses one event type instead) and records the mode and the events
 * shown.  Needs grouped samples. */
int pc_offcpu(pc_profile *p, const pc_options *o, pc_error *err);

/* select_events.c */
/* Keeps the samples of one event type (o->event, else the first event type
 * that has samples), and logs which were kept and which left out; off-CPU
 * recordings are left to pc_offcpu unless o->event is given.  An unknown
 * o->event is a usage error. */
int pc_select_events(pc_profile *p, const pc_options *o, pc_error *err);

/* switch_markers.c */
/* Adds On-CPU and Off-CPU interval markers to each thread from its
 * context switches, when o->switch_markers is set. */
int pc_switch_markers(pc_profile *p, const pc_options *o, pc_error *err);

/* filter_threads.c */
/* Drops the threads that the pid, tid and name filters of o reject. */
int pc_filter_threads(pc_profile *p, const pc_options *o, pc_error *err);

/* filter_time.c */
/* Drops the samples outside o's --time-range and filter-file ranges, and
 * cuts markers to them. */
int pc_filter_time(pc_profile *p, const pc_options *o, pc_error *err);

/* java_frames.c */
/* Java frames: deobfuscates them with o's mapping files, hides ART's
 * frames unless o->show_art_frames, removes frames named by
 * o->remove_methods. */
int pc_java_frames(pc_profile *p, const pc_options *o, pc_error *err);

/* percpu.c */
/* With o->percpu, moves every sample that has a CPU number to a thread
 * of that CPU ("CPU 3", in a process of pid -1 named "CPUs"); threads
 * left empty are dropped.  A usage error when no sample has a CPU. */
int pc_percpu(pc_profile *p, const pc_options *o, pc_error *err);

/* filter_threads.c */
/* Merges the threads whose names match the same expression of
 * o->aggregate_threads. */
int pc_aggregate_threads(pc_profile *p, const pc_options *o, pc_error *err);

/* heap_dump.c */
/* Heap profiles: keeps, per process and heap, the dump o->heap_dump asks
 * for (the last by default) and records o->heap_measure for the writers.
 * A process with fewer dumps keeps its last, with a warning. */
int pc_select_heap(pc_profile *p, const pc_options *o, pc_error *err);

/* remove_gaps.c */
/* In each thread (samples grouped and sorted), drops every run of at most
 * max_gap consecutive samples whose stack is incomplete, meaning it holds
 * no frame of __libc_init or __start_thread.  Threads without any complete
 * stack are left alone.  max_gap <= 0 does nothing. */
int pc_remove_gaps(pc_profile *p, int max_gap, const pc_options *o,
                   pc_error *err);

/* symbolize.c */
/* Names the frames the input left unnamed (frame.unnamed) from the
 * binaries in o->symbol_dirs and under o->symfs, and says in one line how
 * many it named; does nothing, and touches no file, without either. */
int pc_symbolize(pc_profile *p, const pc_options *o, pc_error *err);

/* offcpu.c */
/* Mixed on- and off-CPU recordings (after pc_offcpu chose that mode), once
 * the stacks are final: ends each off-CPU sample in a copy of its leaf
 * frame in the off-CPU category, then puts every sample under the first
 * event type, one timeline. */
int pc_offcpu_mix(pc_profile *p, pc_error *err);

#endif
