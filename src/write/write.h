/* Output writers: one function per format, each serializing a grouped
 * profile (pc_group_samples done) into a sink, and what they share.  The
 * format table (formats.h) says which writes what. */
#ifndef PROFCONV_WRITE_H
#define PROFCONV_WRITE_H

#include "base/json.h"
#include "model/model.h"
#include "profconv.h"
#include "io/sink.h"

/* One per row of the format table (formats.c), each in the file named
 * after its --to name; the signature is formats.h's pc_writer_fn. */
int pc_write_firefox(const pc_profile *p, const pc_write_options *o, pc_sink *s,
                     pc_error *err);
int pc_write_gecko(const pc_profile *p, const pc_write_options *o, pc_sink *s, pc_error *err);
int pc_write_pprof(const pc_profile *p, const pc_write_options *o, pc_sink *s, pc_error *err);
int pc_write_folded(const pc_profile *p, const pc_write_options *o, pc_sink *s, pc_error *err);
int pc_write_speedscope(const pc_profile *p, const pc_write_options *o, pc_sink *s,
                        pc_error *err);
int pc_write_svg(const pc_profile *p, const pc_write_options *o, pc_sink *s, pc_error *err);
int pc_write_text(const pc_profile *p, const pc_write_options *o, pc_sink *s, pc_error *err);

/* Model frames and stacks merged into what the Firefox Profiler's formats
 * express: its frames carry no address, so model frames of one function
 * at different addresses become one frame, keyed by (func, category,
 * subcategory), and stacks are re-interned over the merged frames.  Merged
 * ids keep parents before children. */
typedef struct pc_merged {
    uint32_t *gf_of_frame;          /* model frame -> merged frame */
    uint32_t *gf_func;
    uint32_t *gf_line;              /* source line, 0: unknown */
    uint8_t *gf_cat, *gf_sub;
    size_t n_gf;
    /* model stack -> merged stack; NULL when each model stack is a merged
     * stack of its own, with the same id (read it with pc_gs_of) */
    uint32_t *gs_of_stack;
    /* Merged stacks' prefixes and frames (read the frames with
     * pc_gs_frame).  Where no stacks merge, the model's own columns (the
     * worst case for memory, 27.8M stacks, took 222 MB for two copies):
     * its frames then become merged ones through gf_of_frame (gs_frame
     * NULL); else the columns of a tree of their own, in own_prefix and
     * own_frame. */
    const uint32_t *gs_prefix, *gs_frame, *gs_model_frame;
    uint32_t *own_prefix, *own_frame;
    size_t n_gs;
} pc_merged;

static inline uint32_t pc_gs_of(const pc_merged *m, uint32_t stack)
{
    return m->gs_of_stack ? m->gs_of_stack[stack] : stack;
}

static inline uint32_t pc_gs_frame(const pc_merged *m, uint32_t g)
{
    return m->gs_frame ? m->gs_frame[g] : m->gf_of_frame[m->gs_model_frame[g]];
}

int pc_merge(const pc_profile *p, pc_merged *m);
void pc_merged_free(pc_merged *m);

/* Sorts ids[0..n), distinct values below universe, ascending.  When they
 * are a good part of the universe, a pass over it that picks the stamped
 * ones (stamp_of[id] == stamp) beats sorting. */
void pc_sort_stamped(uint32_t *ids, size_t n, const uint32_t *stamp_of, uint32_t stamp,
                     size_t universe);

void pc_jw_str_id(jw *w, const pc_profile *p, uint32_t id);

/* Writes v as "0x..." (at least "0x0") into buf[19]. */
void pc_format_hex(char *buf, uint64_t v);

/* Marker i's "data" object, as both Firefox formats carry it: an
 * UnwindError with its code and address, or the OnCPU/OffCPU type. */
void pc_jw_marker_data(jw *w, const pc_profile *p, uint32_t i);

/* The Firefox Profiler's "meta" object (write_fxmeta.c), one writer for
 * both formats.  The processed format also says which output threads to
 * show (visible[k] for its n_threads threads) and which to select. */
typedef struct pc_fx_meta {
    int gecko;                /* 1: the Gecko format's meta */
    const uint32_t *main_of;  /* from pc_thread_order */
    uint32_t focus;           /* from pc_focus_thread */
    const char *title;        /* from pc_title */
    const uint8_t *visible;   /* processed only */
    size_t n_threads, selected;
} pc_fx_meta;
void pc_jw_fx_meta(jw *w, const pc_profile *p, const pc_fx_meta *m);
/* The recording time of the Firefox timeline's zero. */
uint64_t pc_fx_zero(const pc_profile *p);

/* The thread a viewer shows first: the app's main thread when the
 * recording names the app and that thread ran on a CPU; else the thread
 * with the most on-CPU weight; else the one with the most samples or heap
 * rows with bytes to show; PC_NONE in a profile with neither.  main_of is from
 * pc_thread_order.  Returns 0, or -1 when out of memory. */
int pc_focus_thread(const pc_profile *p, const uint32_t *main_of, uint32_t *out);

/* The profile's title, "SUBJECT (SOURCE: EVENTS)": the app, else the
 * focus thread's process (and how many other processes have samples); the
 * input's kind; the events shown, and the heap measure when there is a
 * heap profile.  Cut to size bytes.  Returns 0, or -1 when out of
 * memory. */
int pc_title(const pc_profile *p, const uint32_t *main_of, uint32_t focus, char *buf,
             size_t size);
/* The event(s) the samples show, "a" or "a + b" (mixed on- and off-CPU),
 * or "" when there are none. */
void pc_events_label(const pc_profile *p, char *buf, size_t size);

/* The name of thread t's process: the name the input gave it, else its
 * main thread's (main is main_of[t] from pc_thread_order), or PC_NONE. */
uint32_t pc_process_label(const pc_profile *p, uint32_t t, uint32_t main);

/* Whether event e's weights are durations in ns (clocks, off-CPU). */
int pc_is_time_event(const pc_profile *p, size_t e);

/* Heap row i's bytes, and its allocation count, under the measure the
 * profile shows (meta.heap_measure). */
uint64_t pc_heap_value(const pc_profile *p, size_t i);
uint64_t pc_heap_count(const pc_profile *p, size_t i);

/* Browsers cap a string at 2^29 - 24 characters (V8; 2^30 in
 * SpiderMonkey), and the profiler reads a JSON file into one string. */
#define PC_JSON_LIMIT (512ull << 20)

/* About how many bytes the firefox format's JSON of p would take: its
 * big columns at their usual widths, from the model's sizes. */
uint64_t pc_fx_json_estimate(const pc_profile *p);

/* A JSLB container (jslb.c) is written in two passes over the document
 * (see jw_slabs).  After the first, which measured the slabs of sl and
 * the root document's root_len bytes, pc_jslb_begin places them, writes
 * the container's index to out and readies sl for the second; after the
 * second, pc_jslb_end writes what still waits and then root, the root
 * document.  PC_OK; PC_EUSAGE when the file would pass the container's
 * 4 GiB or a JSON piece what a browser reads as one string; PC_ENOMEM. */
int pc_jslb_begin(jw_slabs *sl, size_t root_len, pc_sink *out, pc_error *err);
int pc_jslb_end(jw_slabs *sl, const unsigned char *root, size_t root_len, pc_error *err);

/* A row of a counter track's tooltip: the value of source (the
 * profiler's CounterTooltipDataSource) in unit ("bytes", "number"),
 * labelled; with selection, shown only over a preview selection. */
void pc_jw_tooltip_row(jw *w, const char *source, const char *unit, const char *label,
                       int selection);

/* Writes the counter tracks of the profile's counter values, as elements
 * of the open "counters" array: the values of thread t go to the track
 * owner_track[t] (an index in "threads"), or nowhere when PC_NONE; times
 * count from start.  Returns 0, or -1 when out of memory (nothing is
 * written then). */
int pc_fx_event_counters(jw *w, const pc_profile *p, const uint32_t *owner_track,
                         uint64_t start);

/* First and last time of each thread's samples, counter values and
 * markers (UINT64_MAX and 0 for a thread with none).  Returns 0, or -1
 * when out of memory, with *first and *last NULL. */
int pc_thread_span(const pc_profile *p, uint64_t **first, uint64_t **last);

#endif
