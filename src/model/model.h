/* The profile model every reader fills and every writer reads.
 *
 * Everything is a table of columns indexed by dense 32-bit ids, in order of
 * creation:
 *   strings    interned (strtab.h);
 *   resources  a library or file, by path, with its build id if known;
 *   funcs      (name, resource), interned;
 *   frames     a code location: func, address, category, execution kind.
 *              Readers decide frame identity themselves, so frames are
 *              added, not interned, and a frame's func may be filled in
 *              after the samples that use it (simpleperf names come last);
 *   stacks     a root-first prefix tree of (prefix, frame), interned; a
 *              stack's prefix id is always lower than its own id;
 *   threads    pid, tid, name;
 *   samples    columns (thread, time, stack, weight, event, cpu) with no
 *              per-sample allocation; stack may be PC_NONE (empty stack);
 *              thread, weight, event and cpu take as few bytes as their
 *              values need (none while they are the same for every
 *              sample), and times 6 while they are within 39 hours of
 *              the first;
 *   switches   context switches (thread, time, on/off);
 *   markers    intervals or instants per thread with a small typed payload;
 *   counters   what an event counted on a thread over time, apart from
 *              any sample (counting without callstacks, follower events).
 * Times are integer nanoseconds on the recording's clock.
 *
 * Adders latch allocation failure in p->oom and then return PC_NONE; a
 * reader checks p->oom once per record instead of after every call.
 */
#ifndef PROFCONV_MODEL_H
#define PROFCONV_MODEL_H

#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>

#include "base/hashtab.h"
#include "base/sort.h"
#include "base/strtab.h"
#include "profconv.h"

/* Frame categories; the numbering is the order of the output category
 * list, kept equal to simpleperf's gecko_profile_generator.py so that
 * profiles from both compare index for index. */
enum pc_category {
    PC_CAT_USER = 0,
    PC_CAT_KERNEL = 1,
    PC_CAT_NATIVE = 2,
    PC_CAT_DEX = 3,
    PC_CAT_OAT = 4,
    PC_CAT_OFFCPU = 5,
    PC_CAT_OTHER = 6,
    PC_CAT_JIT = 7,
    PC_CAT_COUNT
};

typedef struct pc_category_info {
    const char *name;
    const char *color;
    const char *const *subcategories;  /* [0] is "Other" */
    int n_subcategories;
} pc_category_info;

extern const pc_category_info pc_categories[PC_CAT_COUNT];

/* How a frame's code ran (simpleperf's execution types). */
enum pc_exec {
    PC_EXEC_NATIVE = 0,
    PC_EXEC_INTERPRETED = 1,
    PC_EXEC_JIT = 2,
    PC_EXEC_ART = 3,
};

/* What a frame's address is, for the symbolizer (frame.unnamed). */
enum pc_addr {
    PC_ADDR_NONE = 0,    /* named, or nothing to look it up by */
    PC_ADDR_VADDR = 1,   /* a virtual address as the ELF file states it */
    PC_ADDR_OFFSET = 2,  /* an offset in the file */
    /* Or'ed to VADDR or OFFSET: the input named the frame already; its
     * binary's DWARF may still add the inline chain and the line. */
    PC_ADDR_NAMED = 4,
};
#define PC_ADDR_KIND(u) ((u) & 3)

/* What a sample's weight measures. */
enum pc_unit {
    PC_UNIT_COUNT = 0,    /* occurrences of the event: its period (cycles,
                             instructions, faults) */
    PC_UNIT_NS = 1,       /* nanoseconds (clock events, off-CPU time) */
    PC_UNIT_SAMPLES = 2,  /* nothing: each sample counts one */
    PC_UNIT_BYTES = 3,    /* bytes (counter values of memory) */
};

/* Marker payloads; each type has its fixed fields in the writers. */
enum pc_marker_type {
    PC_MARK_OFFCPU,  /* interval the thread spent switched out */
    PC_MARK_ONCPU,   /* interval the thread ran on a CPU */
    PC_MARK_UNWIND,  /* instant: a sample whose unwinding stopped early;
                        s = error name, a = raw code, b = error address */
    PC_MARK_SLICE,   /* interval the input traced (a Perfetto TrackEvent
                        slice; an instant event has end == start);
                        s = its category (string id) or PC_NONE */
};

/* A root-first prefix tree of (prefix, frame) nodes, each interned once;
 * a node's prefix id is always lower than its own.  Used for the model's
 * stacks and wherever stacks are re-interned (merged frames). */
typedef struct pc_stree {
    uint32_t *prefix, *frame;
    /* Children: head[s] (of the root: root_head) is PC_NONE for none,
     * the child for one, and for more, which are in idx, the child of s
     * last asked for or added, with PC_STREE_HASHED set.  Consecutive
     * samples mostly repeat the previous one's path, so callers try
     * that child first (pc_stree_last).  See pc_stree_intern(). */
    uint32_t *head, root_head;
    size_t n, cap, n_hashed;
    /* Nodes whose rows are mapped ahead of use (see pc_stree_intern);
     * a mapping of at least map_async bytes a column (0: none) is made
     * on a thread of its own (map_job while it runs), as
     * PC_STREE_MAP_ASYNC for a conversion on more than one thread. */
    size_t mapped;
    size_t map_async;
    struct pc_map_job *map_job;
    pc_htab idx;
    /* 1 once pc_stree_freeze dropped the means of interning. */
    int frozen;
} pc_stree;

/* A mapping this big a column goes to a thread of its own (map_async):
 * its time (0.12-0.54 s in all for 1M samples each a new path, 27.8M
 * nodes) is then not the interning thread's, which meanwhile fills the
 * rows mapped before.  Smaller ones stay on the interning thread: a
 * thread started for each would be more threads to start where memory
 * runs short, for little. */
#define PC_STREE_MAP_ASYNC ((size_t)4 << 20)

/* The flag in head[] for hashed children: node ids stay below it. */
#define PC_STREE_HASHED 0x80000000u

/* The child of s (PC_NONE: of the root) last asked for or added, or
 * PC_NONE; only while the tree is not frozen. */
static inline uint32_t pc_stree_last(const pc_stree *t, uint32_t s)
{
    uint32_t h = s == PC_NONE ? t->root_head : t->head[s];
    return h == PC_NONE ? PC_NONE : h & ~PC_STREE_HASHED;
}

void pc_stree_init(pc_stree *t);
/* The node (prefix, frame), added when new; PC_NONE when out of memory,
 * when prefix is no node, or past 2^31 - 1 nodes. */
uint32_t pc_stree_intern(pc_stree *t, uint32_t prefix, uint32_t frame);
void pc_stree_free(pc_stree *t);
/* Keeps only the nodes (prefix, frame), at their exact size: what writers
 * read, which is two thirds of what interning keeps per node, its hash
 * table aside.  A later
 * pc_stree_intern builds the rest again first.  Returns 0, or -1 when the
 * arrays could not be shrunk (nothing is lost then). */
int pc_stree_freeze(pc_stree *t);

/* A column of integers as narrow as its values let it be: row i holds its
 * value less base, signed, in size bytes (1, 2, 4 or 8), or no block at
 * all (size 0) while every row is base.  base is the first value given
 * to an empty column (a column emptied keeps its base and width), so
 * values near it fit whichever side they lie; values are taken modulo
 * 2^64, so 8 bytes hold any.  A value that does not fit makes the column
 * wider (pc_icol_make), at most four times in its life.  Read it with
 * pc_icol_get(); write a row that fits with pc_icol_put(). */
typedef struct pc_icol {
    void *p;
    uint64_t base;
    /* v fits where v - base + half <= mask (half: 2^(8 size - 1), mask:
     * 2^(8 size) - 1; both 0 for size 0, mask all ones for 8): one test
     * for any size, on the path of every row added. */
    uint64_t half, mask;
    uint8_t size;
} pc_icol;

static inline uint64_t pc_icol_get(const pc_icol *c, size_t i)
{
    switch (c->size) {
    case 1:
        return c->base + (uint64_t)(int64_t)((const int8_t *)c->p)[i];
    case 2:
        return c->base + (uint64_t)(int64_t)((const int16_t *)c->p)[i];
    case 4:
        return c->base + (uint64_t)(int64_t)((const int32_t *)c->p)[i];
    case 8:
        return c->base + ((const uint64_t *)c->p)[i];
    default:
        return c->base;
    }
}

/* Whether v fits the column as it is. */
static inline int pc_icol_fits(const pc_icol *c, uint64_t v)
{
    return v - c->base + c->half <= c->mask;
}

/* Row i set to v, which must fit (pc_icol_fits). */
static inline void pc_icol_put(pc_icol *c, size_t i, uint64_t v)
{
    int64_t d = (int64_t)(v - c->base);
    switch (c->size) {
    case 1:
        ((int8_t *)c->p)[i] = (int8_t)d;
        break;
    case 2:
        ((int16_t *)c->p)[i] = (int16_t)d;
        break;
    case 4:
        ((int32_t *)c->p)[i] = (int32_t)d;
        break;
    case 8:
        ((uint64_t *)c->p)[i] = (uint64_t)d;
        break;
    default:
        break;
    }
}

/* Copies row from to row to. */
static inline void pc_icol_copy(pc_icol *c, size_t to, size_t from)
{
    pc_icol_put(c, to, pc_icol_get(c, from));
}

/* The values of rows [lo, lo + n) into out: one test of the width for
 * the block rather than one a row, for loops over many rows. */
void pc_icol_read(const pc_icol *c, size_t lo, size_t n, uint64_t *out);

/* Rows [lo, hi) set to v, which must fit. */
void pc_icol_fill(pc_icol *c, size_t lo, size_t hi, uint64_t v);

/* Makes the column of n rows (room for cap) fit v, and at least least
 * bytes wide (0 for as narrow as it can be); with no rows yet, v becomes
 * base.  Returns 0, or -1 out of memory (the column is then as it
 * was). */
int pc_icol_make(pc_icol *c, uint64_t v, size_t least, size_t n, size_t cap);

struct pc_profile {
    pc_strtab str;
    int oom;

    struct {
        uint32_t *name;
        uint32_t *build;   /* build id (hex, or a breakpad id), or PC_NONE */
        size_t n, cap;
        pc_htab idx;
    } res;

    struct {
        uint32_t *name, *res;
        uint32_t *file;    /* source file (string id), or PC_NONE */
        size_t n, cap;
        pc_htab idx;
    } func;

    struct {
        uint32_t *func;
        uint64_t *addr;
        uint8_t *cat, *exec;
        /* enum pc_addr: what addr is in its resource's file, for the
         * symbolizer: for a frame the input could not name (its name is
         * made from the address), or, with PC_ADDR_NAMED, for one it named
         * (DWARF may add lines and inlined functions); PC_ADDR_NONE when
         * there is nothing to look up.  The symbolizer clears it. */
        uint8_t *unnamed;
        uint32_t *line;    /* source line in its function's file, 0: unknown */
        size_t n, cap;
    } frame;

    pc_stree stack;

    struct {
        int64_t *pid, *tid;
        uint32_t *name;
        /* 1 for a comparison thread (pc_diff_profiles): its samples of
         * negative weight are the base's, negated; the others the new
         * input's. */
        uint8_t *diff;
        size_t n, cap;
    } thread;

    /* Process names the input gives apart from its threads' names. */
    struct {
        int64_t *pid;
        uint32_t *name;
        size_t n, cap;
        pc_htab idx;
    } proc;

    struct {
        /* Each row's thread, weight, event and CPU, as narrow as their
         * values let them be (see pc_icol): a Perfetto trace's samples of
         * 8 threads on 8 CPUs, one event and periods within 32K of each
         * other take 4 bytes of the four rather than 10 (a 4-byte thread,
         * 4-byte weights and a 2-byte CPU).  Read them with
         * pc_sample_thread(), pc_sample_weight(), pc_sample_event() and
         * pc_sample_cpu(). */
        pc_icol thread, weight, event;
        /* The CPU plus one, so that PC_NO_CPU is 0 and sits near the
         * first CPUs. */
        pc_icol cpu1;
        uint32_t *stack;
        /* Times take 6 bytes a row rather than 8 while every time is
         * within 2^47 - 2^32 ns (39 hours) of the first one: the low 32
         * bits in time32, the rest less time_base in time16.  A time
         * further away makes the 8-byte column (time) in their place.
         * Read them with pc_sample_time(). */
        uint64_t *time;
        uint32_t *time32;
        uint16_t *time16;
        uint64_t time_base;
        size_t n, cap;
        size_t mapped;     /* rows pc_add_sample prefaulted: a hint only */
        size_t read;       /* samples the input held */
        /* The least and greatest time of every sample added (least
         * UINT64_MAX before one), for pc_note_extent: a pass over a big
         * time column costs milliseconds on a virtual machine's memory. */
        uint64_t time_lo, time_hi;
        /* Per thread, kept by pc_push_sample while rows are only added:
         * its rows, its last time, and whether a row came earlier in time
         * than the one before it.  The first grouping takes them in place
         * of its own pass over the thread and time columns, and they go
         * (pc_tally_drop): anything that changes rows in place drops them
         * first.  Kept for the rows [0, tally.upto) only while tally.on. */
        struct {
            size_t *rows;
            uint64_t *last;
            uint8_t *unsorted;
            size_t cap, upto;
            int on;
        } tally;
        /* After pc_group_samples(): thread t's samples are
         * [first[t], first[t+1]), sorted by time. */
        size_t *first;
    } sample;

    struct {
        uint32_t *thread;
        uint64_t *time;
        uint8_t *on;
        size_t n, cap;
    } sw;

    struct {
        uint32_t *thread, *name, *s;
        uint64_t *start, *end;
        uint64_t *b;
        int64_t *a;
        uint8_t *type;
        size_t n, cap;
    } marker;

    /* Heap profile dumps: per process (its main thread) and callsite, the
     * bytes and allocations since profiling began, as of the dump's time. */
    struct {
        uint32_t *thread, *stack, *heap, *dump;
        uint64_t *time;
        uint64_t *alloc, *freed, *alloc_count, *free_count;
        size_t n, cap;
        size_t n_dumps;
        /* Per dump: 1 for the dump shown of its process and heap, once
         * pc_select_heap has chosen it (NULL before: every dump). */
        uint8_t *shown_dump;
    } heap;

    /* Counter values: at time, what event counted on thread (and cpu,
     * PC_NO_CPU when the input does not say) since the previous value
     * of the same counter, in the event's unit.  Readers add them for
     * counting that has no callstack to go with, so that no count is
     * both a sample's weight and a counter value. */
    struct {
        uint32_t *thread;
        uint64_t *time;
        int64_t *value;
        uint16_t *event, *cpu;
        size_t n, cap;
    } counter;

    /* Event types, in recording order: the name, and what the weights of
     * its samples measure, as the reader that knows the input says. */
    struct {
        uint32_t *name;
        uint8_t *unit;     /* enum pc_unit */
        uint8_t *offcpu;   /* 1: time the thread spent off the CPU */
        size_t n, cap;
    } event;

    /* What the recording says about itself; string ids or PC_NONE. */
    struct {
        /* The recording's extent on its clock, fixed before any filter:
         * times count from first_time (--time-range, the Firefox
         * timeline), whatever the filters keep.  Readers that see times
         * beyond their samples widen it with pc_saw_time(); pc_convert
         * widens it with every time read. */
        uint64_t first_time, last_time;
        int has_time;
        /* What the filters kept of it: [shown_first, shown_last]. */
        uint64_t shown_first, shown_last;
        /* A wall clock, where the input has one: wall_ns (ns since the
         * Unix epoch) was the time at wall_at on the recording's clock. */
        int has_wall;
        uint64_t wall_ns, wall_at;
        uint32_t source;      /* e.g. "simpleperf" */
        /* Runs of incomplete stacks dropped when the options leave it to
         * the input (remove_gaps -1): what the input's own tools do. */
        int default_gaps;
        /* What the input holds besides the samples and heap dumps it
         * gave, and where those come from: for the message of a
         * conversion with nothing to show (PC_NONE: nothing to say). */
        uint32_t empty_hint;
        uint32_t app_package, app_type, sdk_version, build_type;
        int has_lost;
        uint64_t lost_sample_count, lost_count;
        int kept_events_all;  /* 1 when every event type is kept */
        int offcpu_mode;      /* enum pc_offcpu_mode applied, or 0 */
        int heap_measure;     /* enum pc_heap_measure the heap rows show */
        /* The heap (name) whose rows are the objects of Java heap graphs,
         * sizes charged to a path from a GC root rather than allocations
         * (PC_NONE: none), and whether the path is the dominator tree's,
         * so that a node's total is what it retains. */
        uint32_t object_heap;
        int object_retained;
        uint32_t kept_event;  /* index of the kept event otherwise */
    } meta;

    /* Callstacks longer than depth.max frames (0: no limit) keep their
     * depth.max innermost frames; readers ask pc_depth_cut() and the
     * conversion tells how many were cut. */
    struct {
        size_t max;
        uint64_t cut;      /* callstacks cut */
        size_t deepest;    /* frames of the deepest one */
    } depth;
};

typedef struct pc_profile pc_profile;

pc_profile *pc_profile_new(void);

uint32_t pc_intern(pc_profile *p, const void *s, size_t len);
uint32_t pc_intern_cstr(pc_profile *p, const char *s);
uint32_t pc_resource(pc_profile *p, uint32_t name);
uint32_t pc_func(pc_profile *p, uint32_t name, uint32_t res);
uint32_t pc_add_frame(pc_profile *p, uint32_t func, uint64_t addr,
                      uint8_t cat, uint8_t exec);
uint32_t pc_stack(pc_profile *p, uint32_t prefix, uint32_t frame);
/* Fetches into the cache what pc_stack(p, prefix, frame) will look at
 * first, for a caller that knows a few steps ahead; changes nothing. */
void pc_stack_prefetch(const pc_profile *p, uint32_t prefix, uint32_t frame);
uint32_t pc_add_thread(pc_profile *p, int64_t pid, int64_t tid, uint32_t name);
/* The name of code no symbol names, kept apart by address: the file name
 * of path[0..n) and the address, "libfoo.so+0x1a2b" ("0x1a2b" without a
 * path).  PC_NONE when out of memory. */
uint32_t pc_address_name(pc_profile *p, const char *path, size_t n, uint64_t addr);
/* The most event types a profile holds: sample.event has 16 bits, and
 * readers use the top value for "none". */
#define PC_MAX_EVENTS (UINT16_MAX - 1)
/* The event type named name (a string id), added with unit (enum pc_unit)
 * and offcpu when new; an existing one keeps what it was given first.
 * Returns its index, or PC_NONE when out of memory (p->oom) or past
 * PC_MAX_EVENTS types. */
uint32_t pc_event(pc_profile *p, uint32_t name, int unit, int offcpu);
/* The same for a list whose indexes must stay the recording's own
 * (simpleperf's MetaInfo): always a new entry, even for a name seen
 * before. */
uint32_t pc_event_append(pc_profile *p, uint32_t name, int unit, int offcpu);
/* Whether a perf event name (as perf and simpleperf print it, with or
 * without a ":u"-style modifier) is one of the clocks whose period is in
 * nanoseconds: cpu-clock and task-clock. */
int pc_perf_clock_event(const char *name);
/* How many markers are slices the input traced (PC_MARK_SLICE). */
size_t pc_slice_count(const pc_profile *p);
/* Whether any event type measures off-CPU time (simpleperf --trace-offcpu
 * recordings). */
int pc_has_offcpu_events(const pc_profile *p);
/* Names process pid (a later name replaces an earlier one). */
void pc_set_process_name(pc_profile *p, int64_t pid, uint32_t name);
/* The name given to process pid, or PC_NONE. */
uint32_t pc_process_name(const pc_profile *p, int64_t pid);
void pc_add_sample(pc_profile *p, uint32_t thread, uint64_t time,
                   uint32_t stack, int64_t weight, uint16_t event, uint16_t cpu);
/* pc_add_sample that neither reads nor sets p->oom: 0, or -1 out of
 * memory.  For a thread that owns the sample table while another sets
 * p->oom (the Perfetto reader's pipe). */
int pc_push_sample(pc_profile *p, uint32_t thread, uint64_t time,
                   uint32_t stack, int64_t weight, uint16_t event, uint16_t cpu);
/* Makes room for rows more samples in the sample table's columns without
 * mapping their pages, for a reader that can tell from the input's size
 * about how many samples it holds: up to that many, the columns do not
 * move as they grow, where a doubling could copy them into pages mapped
 * anew.  Nothing where the process's memory is limited (RLIMIT_AS, which
 * --max-memory sets, or RLIMIT_DATA): room never used would count against
 * the limit.  A hint: out of memory, the table keeps its capacity (some
 * columns may be longer). */
void pc_sample_reserve(pc_profile *p, size_t rows);
/* Stops keeping sample.tally and frees it; for anything that changes
 * sample rows other than by adding them. */
void pc_tally_drop(pc_profile *p);
/* A heap dump row: cumulative values of one callsite of one heap. */
void pc_add_heap(pc_profile *p, uint32_t thread, uint32_t heap, uint32_t dump,
                 uint64_t time, uint32_t stack, uint64_t alloc, uint64_t freed,
                 uint64_t alloc_count, uint64_t free_count);
void pc_add_switch(pc_profile *p, uint32_t thread, uint64_t time, int on);
/* A counter value (see counter above). */
void pc_add_counter(pc_profile *p, uint32_t thread, uint64_t time, uint16_t event,
                    uint16_t cpu, int64_t value);
/* Drops the counter values whose keep[i] is 0, preserving order. */
void pc_keep_counters(pc_profile *p, const uint8_t *keep);
void pc_add_marker(pc_profile *p, uint32_t thread, uint8_t type,
                   uint32_t name, uint64_t start, uint64_t end, uint32_t s,
                   int64_t a, uint64_t b);

/* Sample i's thread, weight, event and CPU (PC_NO_CPU where the input
 * does not say). */
static inline uint32_t pc_sample_thread(const pc_profile *p, size_t i)
{
    return (uint32_t)pc_icol_get(&p->sample.thread, i);
}
static inline int64_t pc_sample_weight(const pc_profile *p, size_t i)
{
    return (int64_t)pc_icol_get(&p->sample.weight, i);
}
static inline uint16_t pc_sample_event(const pc_profile *p, size_t i)
{
    return (uint16_t)pc_icol_get(&p->sample.event, i);
}
static inline uint16_t pc_sample_cpu(const pc_profile *p, size_t i)
{
    return (uint16_t)(pc_icol_get(&p->sample.cpu1, i) - 1);
}
/* Whether every sample has the same weight, and then which. */
static inline int pc_sample_one_weight(const pc_profile *p, int64_t *w)
{
    *w = (int64_t)p->sample.weight.base;
    return p->sample.weight.size == 0;
}
/* A time from its narrow columns' values (see sample.time32). */
static inline uint64_t pc_time_join(uint64_t base, uint16_t high, uint32_t low)
{
    return (base + high) << 32 | low;
}
/* Sample i's time, whichever columns hold it. */
static inline uint64_t pc_sample_time(const pc_profile *p, size_t i)
{
    if (p->sample.time)
        return p->sample.time[i];
    return pc_time_join(p->sample.time_base, p->sample.time16[i], p->sample.time32[i]);
}
/* Copies sample from's time to sample to. */
static inline void pc_sample_copy_time(pc_profile *p, size_t to, size_t from)
{
    if (p->sample.time) {
        p->sample.time[to] = p->sample.time[from];
    } else {
        p->sample.time32[to] = p->sample.time32[from];
        p->sample.time16[to] = p->sample.time16[from];
    }
}
/* Copies sample from to sample to, but for its thread. */
static inline void pc_sample_copy_row(pc_profile *p, size_t to, size_t from)
{
    p->sample.stack[to] = p->sample.stack[from];
    pc_sample_copy_time(p, to, from);
    pc_icol_copy(&p->sample.weight, to, from);
    pc_icol_copy(&p->sample.event, to, from);
    pc_icol_copy(&p->sample.cpu1, to, from);
}
/* Makes the weight column 8 bytes a row, for a transform that sets
 * weights with pc_sample_set_weight().  Returns 0, or -1 when out of
 * memory (the samples are then as they were). */
int pc_sample_own_weights(pc_profile *p);
static inline void pc_sample_set_weight(pc_profile *p, size_t i, int64_t w)
{
    pc_icol_put(&p->sample.weight, i, (uint64_t)w);
}
/* Makes the thread column hold any thread up to most, for a transform
 * that moves samples to other threads with pc_sample_set_thread().
 * Returns 0, or -1 when out of memory (the samples are then as they
 * were). */
int pc_sample_fit_threads(pc_profile *p, uint32_t most);
static inline void pc_sample_set_thread(pc_profile *p, size_t i, uint32_t t)
{
    pc_icol_put(&p->sample.thread, i, t);
}

/* Sorts samples by thread, then by time (stable), and sets sample.first.
 * Returns 0, or -1 when out of memory (the samples may then be gone). */
int pc_group_samples(pc_profile *p);
/* The same on up to threads threads (options.threads: 0 for every
 * core); the result is the same for any count. */
int pc_group_samples_on(pc_profile *p, int threads);

/* Computes perm, the order of n rows by thread (thread ids < nt) and then
 * by time, stable; first[t] receives the position of thread t's first row
 * (first has nt + 1 entries).  Returns 0, or -1 when out of memory. */
int pc_order_by_thread(const uint32_t *thread, const uint64_t *time,
                       size_t n, size_t nt, uint32_t *perm, size_t *first);

/* Drops the samples whose keep[i] is 0, preserving order (and sample.first
 * when grouped). */
void pc_keep_samples(pc_profile *p, const uint8_t *keep);

/* Drops the heap rows whose keep[i] is 0, preserving order. */
void pc_keep_heap(pc_profile *p, const uint8_t *keep);

/* Category of a frame of the library or file at path (see category.c for
 * the rules).  Off-CPU time is no file's: pc_offcpu gives it its category
 * from the sample's event. */
int pc_category_of(const char *path, size_t path_len);

/* Subcategory, within category cat, of a frame that ran as exec (enum
 * pc_exec): how Java code ran (interpreted, JIT, AOT), or ART's own
 * native frames. */
int pc_subcategory(int cat, int exec);

/* Fills order with every thread id in output order: by pid, the main
 * thread (tid == pid) first, then by sample count (most first), then tid
 * (the CPUs of --percpu, pid -1, by tid alone).
 * When main_of is not NULL, main_of[t] receives the main thread of t's
 * process, or PC_NONE.  Needs grouped samples for the counts. */
void pc_thread_order(const pc_profile *p, uint32_t *order, uint32_t *main_of);

/* The sampling interval: the median period of the on-CPU samples of a
 * clock event (the interval the recording asked for), else the median
 * positive gap between consecutive samples of a thread (grouped samples),
 * else 1 ms. */
uint64_t pc_interval_ns(const pc_profile *p);

/* Moves every row (sample, switch, marker) of thread t to thread to[t],
 * or drops it when to[t] is PC_NONE; to[to[t]] must be to[t].  Threads
 * not mapped onto themselves disappear and the rest are renumbered in
 * order; samples are grouped again.  Returns 0, or -1 when out of
 * memory. */
int pc_remap_threads(pc_profile *p, const uint32_t *to);

/* Frames for the functions inlined at other frames' addresses (symbols
 * that expand one address into a chain): per original frame f, count[f]
 * frames at frames[first[f]...], outermost first.  first and count have
 * one entry per original frame, zeroed; frames grows. */
typedef struct pc_inlines {
    uint32_t *first, *count;
    uint32_t *frames;
    size_t n, cap;
} pc_inlines;

/* Adds a frame of func, at f's address and with its category and
 * execution, as the next function inlined into f.  Returns the new frame,
 * or PC_NONE when out of memory. */
uint32_t pc_inline_add(pc_profile *p, pc_inlines *in, uint32_t f, uint32_t func);

/* Rebuilds every stack with each of the first n_frames frames followed
 * by the frames inlined into it, and moves the samples and heap rows
 * over.  Returns 0, or -1 when out of memory. */
int pc_inline_expand(pc_profile *p, const pc_inlines *in, size_t n_frames);

/* Moves every sample and heap row from stack s to stack to[s], after a
 * rebuild of the stacks. */
void pc_remap_stacks(pc_profile *p, const uint32_t *to);

/* Removes the frames with drop[frame] set from every sample's stack.
 * With merge_jit, a JIT-compiled frame called by its own method's frame
 * (as ART calls from interpreted code into the compiled version) is
 * removed too, once the frames between them are gone.  Returns 0, or -1
 * when out of memory. */
int pc_drop_frames(pc_profile *p, const uint8_t *drop, int merge_jit);

/* Pids of a profile added to another that holds them already move by
 * multiples of this: above any pid Linux gives (2^22), so the original
 * still reads in the last digits. */
#define PC_PID_SPAN INT64_C(10000000)

/* Adds src's threads and their samples, heap rows, switches and markers
 * to dst, with shift ns added to times (modulo 2^64: a shift back is a
 * large value); strings, functions, frames, stacks
 * and events are re-interned in dst.  A pid dst holds already moves by
 * pid_step (0: pids stay as they are).  With a label, src's processes are
 * named "LABEL: name".  dst must be grouped again (pc_group_samples)
 * afterwards.  Returns 0, or -1 when out of memory (dst->oom). */
int pc_profile_append(pc_profile *dst, const pc_profile *src, const char *label, uint64_t shift,
                      int64_t pid_step);

/* Names each process of threads [first_thread, thread.n) "LABEL: name",
 * and its main thread too.  Returns 0, or -1 when out of memory. */
int pc_label_processes(pc_profile *p, const char *label, size_t first_thread);

/* Widens the recording's extent (meta.first_time, last_time) to t. */
void pc_saw_time(pc_profile *p, uint64_t t);
/* Widens the extent to every time the model holds, and shows all of it
 * (meta.shown_first, shown_last). */
void pc_note_extent(pc_profile *p);

/* Latest time of any sample or switch (0 when there are none): where the
 * recording ends as far as the data tells. */
uint64_t pc_end_time(const pc_profile *p);

/* Orders the switches by thread, then time (see pc_order_by_thread) into
 * new arrays *perm and *first, which the caller frees.  Returns 0, or -1
 * when out of memory. */
int pc_order_switches(const pc_profile *p, uint32_t **perm, size_t **first);

/* Grows each column in cols to hold need rows; *cap is the common
 * capacity.  Returns 0, or -1 when out of memory (columns stay valid). */
struct pc_col {
    void **p;
    size_t size;
};
#define PC_NO_CPU UINT16_MAX

#define PC_COL(x) {(void **)&(x), sizeof *(x)}

/* How many outermost frames a callstack of n frames leaves out under the
 * depth limit; a cut is counted.  Keeping the innermost frames keeps what
 * each sample was doing, as perf does with its own stack limit. */
static inline size_t pc_depth_cut(pc_profile *p, size_t n)
{
    if (!p->depth.max || n <= p->depth.max)
        return 0;
    p->depth.cut++;
    if (n > p->depth.deepest)
        p->depth.deepest = n;
    return n - p->depth.max;
}

/* Whether sample i is time its thread spent off the CPU: its event says
 * so, or, where pc_offcpu merged off-CPU samples into the on-CPU event
 * (mixed mode), its leaf is in the off-CPU category. */
static inline int pc_sample_offcpu(const pc_profile *p, size_t i)
{
    uint32_t s = p->sample.stack[i];
    uint16_t e = pc_sample_event(p, i);
    return (e < p->event.n && p->event.offcpu[e]) ||
           (s != PC_NONE && p->frame.cat[p->stack.frame[s]] == PC_CAT_OFFCPU);
}

/* The first comparison thread (thread.diff), or PC_NONE: whether p is a
 * comparison, and which thread writers show first. */
static inline uint32_t pc_diff_thread(const pc_profile *p)
{
    for (size_t t = 0; t < p->thread.n; t++)
        if (p->thread.diff[t])
            return (uint32_t)t;
    return PC_NONE;
}

/* "unreleased", "allocated" or "freed": what the heap rows show
 * (meta.heap_measure). */
const char *pc_heap_measure_name(const pc_profile *p);
/* The same for the rows of one heap: "shallow" or "retained" for the
 * objects of heap graphs. */
const char *pc_heap_what(const pc_profile *p, uint32_t heap);

/* Whether heap row i belongs to the dump shown of its process and heap:
 * what formats with one value per callsite write. */
static inline int pc_heap_shown(const pc_profile *p, size_t i)
{
    return !p->heap.shown_dump || p->heap.shown_dump[p->heap.dump[i]];
}

/* a + b, held at INT64_MAX or INT64_MIN instead of overflowing: sums of
 * weights from damaged or hostile input must not wrap (nor be undefined). */
static inline int64_t pc_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* v as a weight: held at INT64_MAX, as counts from the input can be any
 * 64-bit value. */
static inline int64_t pc_clamp_i64(uint64_t v)
{
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

int pc_grow_cols(size_t *cap, size_t need, const struct pc_col *cols, int n);
/* The sample table's columns there are but the thread's (time and time32
 * are never both made), into cols, room for PC_SAMPLE_COLS; returns their
 * count: what grouping moves. */
enum { PC_SAMPLE_COLS = 6 };
int pc_sample_cols(pc_profile *p, struct pc_col *cols);

/* Latches allocation failure in p (see the adders' contract above) and
 * returns PC_NONE. */
static inline uint32_t pc_oom(pc_profile *p)
{
    p->oom = 1;
    return PC_NONE;
}

#endif
