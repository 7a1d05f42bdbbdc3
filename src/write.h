/* Output writers: one function per format, each serializing a grouped
 * profile (pc_group_samples done) into a sink, and what they share. */
#ifndef PROFCONV_WRITE_H
#define PROFCONV_WRITE_H

#include "json_out.h"
#include "model.h"
#include "profconv.h"
#include "sink.h"

int pc_write_gecko(const pc_profile *p, pc_sink *s, pc_error *err);
int pc_write_processed(const pc_profile *p, pc_sink *s, pc_error *err);
/* pid >= 0 keeps that process's samples alone. */
int pc_write_pprof(const pc_profile *p, int64_t pid, pc_sink *s, pc_error *err);
int pc_write_speedscope(const pc_profile *p, pc_sink *s, pc_error *err);
int pc_write_folded(const pc_profile *p, const pc_write_options *o, pc_sink *s, pc_error *err);

/* Model frames and stacks merged into what the Firefox Profiler's formats
 * express: its frames carry no address, so model frames of one function
 * at different addresses become one frame, keyed by (func, category,
 * subcategory), and stacks are re-interned over the merged frames.  Merged
 * ids keep parents before children. */
typedef struct pc_merged {
    uint32_t *gf_of_frame;          /* model frame -> merged frame */
    uint32_t *gf_func;
    uint8_t *gf_cat, *gf_sub;
    size_t n_gf;
    uint32_t *gs_of_stack;          /* model stack -> merged stack */
    uint32_t *gs_prefix, *gs_frame;
    size_t n_gs;
} pc_merged;

int pc_merge(const pc_profile *p, pc_merged *m);
void pc_merged_free(pc_merged *m);

/* Sorts ids[0..n), distinct values below universe, ascending.  When they
 * are a good part of the universe, a pass over it that picks the marked
 * ones (mark[id] != PC_NONE, or stamp[id] == stamp) beats sorting. */
void pc_sort_ids(uint32_t *ids, size_t n, const uint32_t *mark, size_t universe);
void pc_sort_stamped(uint32_t *ids, size_t n, const uint32_t *stamp_of, uint32_t stamp,
                     size_t universe);

/* JSON pieces both Firefox formats write. */
void pc_jw_str_id(jw *w, const pc_profile *p, uint32_t id);
void pc_jw_categories(jw *w);
/* "misc": build type and sample loss, if any. */
void pc_jw_misc(jw *w, const pc_profile *p);
/* The product (title): the app package, else the input format. */
void pc_jw_product(jw *w, const pc_profile *p);

/* The name of thread t's process: the name the input gave it, else its
 * main thread's (main is main_of[t] from pc_thread_order), or PC_NONE. */
uint32_t pc_process_label(const pc_profile *p, uint32_t t, uint32_t main);

/* Whether event e's weights are durations in ns (clocks, off-CPU). */
int pc_is_time_event(const pc_profile *p, size_t e);

/* Heap row i's bytes, and its allocation count, under the measure the
 * profile shows (meta.heap_measure). */
uint64_t pc_heap_value(const pc_profile *p, size_t i);
uint64_t pc_heap_count(const pc_profile *p, size_t i);

/* First and last time of each thread's samples and markers (UINT64_MAX and
 * 0 for a thread with neither). */
int pc_thread_span(const pc_profile *p, uint64_t **first, uint64_t **last);

#endif
