/* Writer for the Firefox Profiler's processed profile format.
 *
 * The processed format is what the profiler works on internally: shared
 * string, stack, frame, func and resource tables, columnar samples with
 * weights, and explicit processes and thread order.  The profiler loads it
 * without rebuilding anything, and it is the only Firefox format that can
 * carry sample weights (doc/formats/firefox.md, "Processed layout").
 *
 * The version is pinned at 70, the newest of the profiler at the snapshot
 * this writer was checked against (firefox-devtools/profiler, 2026-08).
 * Every change since version 60 (tables shared across threads) either only
 * allows typed arrays in binary JSLB files (65, 67, 68) or moves columns
 * (66: stack prefix offsets, 70: a frame's lib); writing the newest means
 * the profiler loads the file with no upgrader at all, and the file matches
 * the profiler's current type definitions column for column.  A profiler
 * older than version 70 refuses it with a version error; `--to gecko` is
 * the format every version reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/thread.h"
#include "write/write.h"

/* What the profile uses of the merged tables, renumbered in order of first
 * use so that the output is deterministic and holds nothing unused. */
typedef struct used {
    /* Merged stack -> output index (PC_NONE if unused), and the output
     * order; both NULL where every merged stack is used, each at its own
     * index (a profile of millions of distinct stacks: 8 bytes a stack
     * less).  Read with stack_out() and stack_at(). */
    uint32_t *stack_idx;
    uint32_t *stacks;
    size_t n_stacks;
    uint32_t *frame_idx, *frames;
    size_t n_frames;
    uint32_t *func_idx, *funcs;
    size_t n_funcs;
    uint32_t *res_idx, *res;
    size_t n_res;
    uint32_t *str_idx, *strs;
    size_t n_strs;
    /* Source files of the functions, by their name's string id. */
    uint32_t *src_idx, *srcs;
    size_t n_srcs;
} used;

static inline uint32_t stack_out(const used *u, uint32_t g)
{
    return u->stack_idx ? u->stack_idx[g] : g;
}

static inline uint32_t stack_at(const used *u, size_t k)
{
    return u->stacks ? u->stacks[k] : (uint32_t)k;
}

static void used_free(used *u)
{
    free(u->stack_idx);
    free(u->stacks);
    free(u->frame_idx);
    free(u->frames);
    free(u->func_idx);
    free(u->funcs);
    free(u->res_idx);
    free(u->res);
    free(u->str_idx);
    free(u->strs);
    free(u->src_idx);
    free(u->srcs);
}

static uint32_t *all_none(size_t n)
{
    uint32_t *a = malloc((n + 1) * sizeof *a);
    if (a)
        memset(a, 0xff, (n + 1) * sizeof *a);
    return a;
}

/* Gives string id s an output index if it has none yet. */
static void use_str(used *u, uint32_t s)
{
    if (u->str_idx[s] == PC_NONE) {
        u->str_idx[s] = (uint32_t)u->n_strs;
        u->strs[u->n_strs++] = s;
    }
}

/* Marks in bit the n model stacks (PC_NONE: none), their own bits only:
 * mark_ancestors then marks the rest. */
static void mark_stacks(const uint32_t *stack, size_t n, uint64_t *bit)
{
    for (size_t i = 0; i < n; i++)
        if (stack[i] != PC_NONE)
            bit[stack[i] >> 6] |= 1ull << (stack[i] & 63);
}

/* The marks of w, each carried down to the bit below while chain has
 * the bit it is at set: 2^k bits at a time, six steps for a word. */
static uint64_t carry_down(uint64_t w, uint64_t chain)
{
    for (unsigned d = 1; d < 64; d *= 2) {
        w |= (w & chain) >> d;
        chain &= chain << d;
    }
    return w;
}

/* Marks the ancestors of the stacks marked in bit (the ns stacks' bits)
 * and returns how many stacks are marked then.  Parents come first, so
 * one pass over the words from the highest down, each word's marked
 * stacks marking their parents, marks them all, going through memory in
 * order.  A stack whose parent is the stack before it (most, where paths
 * are new) passes its mark down within the word with the others of its
 * kind, as a carry (carry_down); the others mark their parents one by
 * one.  For 1M samples each on a new path of its own (27.8M stacks) this
 * takes about 40 ms, where a bit at a time took 120 ms, and walking up
 * from each sample's stack, which lie anywhere, 380-530 ms.  A parent
 * whose id were above its child's would be passed already: the rest
 * above it is then marked at once, up to a stack marked before (whose own
 * parent is marked, or will be). */
static size_t mark_ancestors(const uint32_t *prefix, uint64_t *bit, size_t ns)
{
    size_t nw = ns / 64 + 1;
    for (size_t i = nw; i-- > 0;) {
        uint64_t w = bit[i];
        if (!w)
            continue;
        size_t g0 = i * 64, m = ns - g0 < 64 ? ns - g0 : 64;
        const uint32_t *pre = prefix + g0;
        /* chain: the stacks whose parent is the one before, in the word. */
        uint64_t chain = 0, done = 0;
        for (size_t b = 1; b < m; b++)
            chain |= (uint64_t)(pre[b] == (uint32_t)(g0 + b - 1)) << b;
        for (;;) {
            w = carry_down(w, chain);
            uint64_t rest = w & ~chain & ~done, add = 0;
            if (!rest)
                break;
            done |= rest;
            for (; rest; rest &= rest - 1) {
                unsigned b = (unsigned)__builtin_ctzll(rest);
                uint32_t g = (uint32_t)(g0 + b), up = pre[b];
                if (up == PC_NONE)
                    continue;
                if (up < g && up >> 6 == i) {
                    add |= 1ull << (up & 63);
                } else if (up < g) {
                    bit[up >> 6] |= 1ull << (up & 63);
                } else {
                    bit[i] = w;
                    for (; up != PC_NONE && !(bit[up >> 6] >> (up & 63) & 1); up = prefix[up])
                        bit[up >> 6] |= 1ull << (up & 63);
                    w = bit[i];
                }
            }
            w |= add;
        }
        bit[i] = w;
    }
    size_t marked = 0;
    for (size_t i = 0; i < nw; i++)
        marked += (size_t)__builtin_popcountll(bit[i]);
    return marked;
}

/* The model stacks the samples and heap samples reach, with their
 * ancestors, as bits (NULL when out of memory).  Merging maps the model's
 * tree onto the merged one, parents to parents, so the merged stacks
 * reached are those these map to, ancestors and all: the marking needs
 * no merged stack, and runs on a thread of its own while the stacks are
 * merged: for 1M samples each on a new path (27.8M stacks), merging and
 * collecting took 0.27-0.31 s instead of 0.37-0.44 s. */
typedef struct marks {
    const pc_profile *p;
    uint64_t *bit;
    size_t nw, marked;
} marks;

static void *mark_model(void *arg)
{
    marks *k = arg;
    const pc_profile *p = k->p;
    k->nw = p->stack.n / 64 + 1;
    k->bit = calloc(k->nw, sizeof *k->bit);
    if (k->bit) {
        mark_stacks(p->sample.stack, p->sample.n, k->bit);
        mark_stacks(p->heap.stack, p->heap.n, k->bit);
        k->marked = mark_ancestors(p->stack.prefix, k->bit, p->stack.n);
    }
    return NULL;
}

/* What the profile uses of the merged tables, the model stacks reached
 * given in mk (whose bits it takes). */
static int collect(const pc_profile *p, const pc_merged *m, marks *mk, used *u)
{
    memset(u, 0, sizeof *u);
    if (!mk->bit)
        return -1;
    uint64_t *bit = mk->bit;
    size_t nw = mk->nw;
    mk->bit = NULL;
    u->n_stacks = mk->marked;
    if (m->gs_of_stack) {
        /* Stacks merged: the merged stacks of those reached. */
        nw = m->n_gs / 64 + 1;
        uint64_t *gbit = calloc(nw, sizeof *gbit);
        if (!gbit) {
            free(bit);
            return -1;
        }
        for (size_t i = 0; i < mk->nw; i++)
            for (uint64_t b = bit[i]; b; b &= b - 1) {
                uint32_t g = m->gs_of_stack[i * 64 + (size_t)__builtin_ctzll(b)];
                gbit[g >> 6] |= 1ull << (g & 63);
            }
        free(bit);
        bit = gbit;
        u->n_stacks = 0;
        for (size_t i = 0; i < nw; i++)
            u->n_stacks += (size_t)__builtin_popcountll(bit[i]);
    }
    if (u->n_stacks < m->n_gs) {
        /* Ascending merged ids keep parents first. */
        u->stack_idx = all_none(m->n_gs);
        u->stacks = malloc((u->n_stacks + 1) * sizeof *u->stacks);
        if (u->stack_idx && u->stacks) {
            size_t k = 0;
            for (size_t i = 0; i < nw; i++)
                for (uint64_t b = bit[i]; b; b &= b - 1) {
                    uint32_t g = (uint32_t)(i * 64 + (size_t)__builtin_ctzll(b));
                    u->stack_idx[g] = (uint32_t)k;
                    u->stacks[k++] = g;
                }
        }
    }
    free(bit);
    u->frame_idx = all_none(m->n_gf);
    u->frames = malloc((m->n_gf + 1) * sizeof *u->frames);
    u->func_idx = all_none(p->func.n);
    u->funcs = malloc((p->func.n + 1) * sizeof *u->funcs);
    u->res_idx = all_none(p->res.n);
    u->res = malloc((p->res.n + 1) * sizeof *u->res);
    u->str_idx = all_none(p->str.n);
    u->strs = malloc((p->str.n + 1) * sizeof *u->strs);
    u->src_idx = all_none(p->str.n);
    u->srcs = malloc((p->str.n + 1) * sizeof *u->srcs);
    if ((u->n_stacks < m->n_gs && (!u->stack_idx || !u->stacks)) || !u->frame_idx ||
        !u->frames || !u->func_idx ||
        !u->funcs || !u->res_idx || !u->res || !u->str_idx || !u->strs || !u->src_idx ||
        !u->srcs)
        return -1;
    for (size_t k = 0; k < u->n_stacks; k++) {
        uint32_t f = pc_gs_frame(m, stack_at(u, k));
        if (u->frame_idx[f] == PC_NONE) {
            u->frame_idx[f] = (uint32_t)u->n_frames;
            u->frames[u->n_frames++] = f;
        }
    }
    for (size_t k = 0; k < u->n_frames; k++) {
        uint32_t fn = m->gf_func[u->frames[k]];
        if (u->func_idx[fn] != PC_NONE)
            continue;
        u->func_idx[fn] = (uint32_t)u->n_funcs;
        u->funcs[u->n_funcs++] = fn;
        use_str(u, p->func.name[fn]);
        uint32_t file = p->func.file[fn];
        if (file != PC_NONE && u->src_idx[file] == PC_NONE) {
            u->src_idx[file] = (uint32_t)u->n_srcs;
            u->srcs[u->n_srcs++] = file;
            use_str(u, file);
        }
        uint32_t r = p->func.res[fn];
        /* Synthetic frames have a nameless resource: none for the profiler. */
        if (u->res_idx[r] == PC_NONE && pc_str_len(&p->str, p->res.name[r])) {
            u->res_idx[r] = (uint32_t)u->n_res;
            u->res[u->n_res++] = r;
            use_str(u, p->res.name[r]);
        }
    }
    for (size_t i = 0; i < p->marker.n; i++)
        use_str(u, p->marker.name[i]);
    return 0;
}

/* ---- Events and weights ---- */

static int is_off_event(const pc_profile *p, size_t e)
{
    return p->meta.offcpu_mode == PC_OFFCPU_ON_OFF && e < p->event.n && p->event.offcpu[e];
}

/* Weights are durations in ms when every kept sample's event measures
 * time; otherwise each sample counts one. */
static int time_weighted(const pc_profile *p)
{
    uint8_t seen[256] = {0};
    int any = 0;
    /* A column of one event: that event says it. */
    size_t n = p->sample.event.size == 0 && p->sample.n ? 1 : p->sample.n;
    for (size_t i = 0; i < n; i++) {
        uint16_t e = pc_sample_event(p, i);
        if (e < 256 && seen[e])
            continue;
        if (e >= p->event.n || !pc_is_time_event(p, e))
            return 0;
        if (e < 256)
            seen[e] = 1;
        any = 1;
    }
    return any;
}

/* ---- Tracks: output threads ---- */

/* A track is a model thread, or in on-off-cpu mode one of its two halves
 * (on-CPU samples, off-CPU samples), since a samples table has one kind of
 * event. */
typedef struct track {
    uint32_t thread;
    int off;        /* 1: the off-CPU half */
    size_t samples; /* samples, or a heap track's callsites */
    uint32_t heap;  /* a heap track's heap name, else PC_NONE */
    size_t h0, hn;  /* a heap track's rows in the heap order */
    int64_t tid;
} track;

/* Heap tracks need tids of their own, numbers no thread has: those above
 * every thread's, from 0 up.  An input can name a thread INT64_MAX; then
 * the lowest numbers no thread has are taken instead, found in the tids
 * sorted. */
typedef struct fresh {
    int64_t next;       /* the next candidate */
    int64_t *sorted;    /* NULL while counting up from the highest tid */
    size_t n, at;
} fresh;

static int cmp_tid(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* For up to wanted tids; -1 when out of memory. */
static int fresh_init(fresh *f, const pc_profile *p, size_t wanted)
{
    size_t nt = p->thread.n;
    int64_t top = -1;
    memset(f, 0, sizeof *f);
    for (size_t t = 0; t < nt; t++)
        if (p->thread.tid[t] > top)
            top = p->thread.tid[t];
    /* Room above top, in unsigned arithmetic: top may be -1. */
    if ((uint64_t)INT64_MAX - (uint64_t)top >= wanted) {
        f->next = top < INT64_MAX ? top + 1 : top;
        return 0;
    }
    if (!(f->sorted = malloc((nt + 1) * sizeof *f->sorted)))
        return -1;
    for (size_t t = 0; t < nt; t++)
        f->sorted[t] = p->thread.tid[t];
    pc_qsort(f->sorted, nt, sizeof *f->sorted, cmp_tid);
    f->n = nt;
    f->next = INT64_MIN;
    return 0;
}

static int64_t fresh_tid(fresh *f)
{
    for (; f->sorted && f->at < f->n && f->sorted[f->at] <= f->next; f->at++)
        if (f->sorted[f->at] == f->next)
            f->next++;  /* fewer tids than numbers below INT64_MAX */
    int64_t v = f->next;
    if (v < INT64_MAX)
        f->next = v + 1;
    return v;
}

static int track_has(const pc_profile *p, const track *k, size_t i)
{
    return p->meta.offcpu_mode != PC_OFFCPU_ON_OFF ||
           is_off_event(p, pc_sample_event(p, i)) == k->off;
}

/* ---- JSON ---- */

static void write_index_or_null(jw *w, uint32_t v)
{
    if (v == PC_NONE)
        jw_null(w);
    else
        jw_uint(w, v);
}

/* The stack table's columns, for jw_rows: they have the most rows of
 * the shared tables, and are written a run of values at a time. */
typedef struct stack_cols {
    const pc_merged *m;
    const used *u;
} stack_cols;

enum { RUN = 1024 };

static void stack_frame_rows(jw *w, const void *ctx, size_t lo, size_t hi)
{
    const stack_cols *c = ctx;
    uint32_t run[RUN];
    for (size_t k0 = lo; k0 < hi; k0 += RUN) {
        size_t n = hi - k0 < RUN ? hi - k0 : RUN;
        for (size_t i = 0; i < n; i++)
            run[i] = c->u->frame_idx[pc_gs_frame(c->m, stack_at(c->u, k0 + i))];
        jw_col_u32s(w, run, n);
    }
}

static void stack_prefix_rows(jw *w, const void *ctx, size_t lo, size_t hi)
{
    const stack_cols *c = ctx;
    uint32_t run[RUN];
    for (size_t k0 = lo; k0 < hi; k0 += RUN) {
        size_t n = hi - k0 < RUN ? hi - k0 : RUN;
        for (size_t i = 0; i < n; i++) {
            size_t k = k0 + i;
            uint32_t pre = c->m->gs_prefix[stack_at(c->u, k)];
            run[i] = pre == PC_NONE ? 0 : (uint32_t)(k - stack_out(c->u, pre));
        }
        jw_col_u32s(w, run, n);
    }
}

static void write_shared(jw *w, const pc_profile *p, const pc_merged *m,
                         const used *u)
{
    jw_key(w, "shared");
    jw_obj(w);

    jw_key(w, "stackTable");
    jw_obj(w);
    stack_cols sc = {m, u};
    jw_key(w, "frame");
    jw_rows(w, JW_SLAB_I32, u->n_stacks, stack_frame_rows, &sc);
    jw_key(w, "prefixOffset");
    jw_rows(w, JW_SLAB_I32, u->n_stacks, stack_prefix_rows, &sc);
    jw_key(w, "length");
    jw_uint(w, u->n_stacks);
    jw_obj_end(w);

    /* The frame and function tables and the strings are slabs of their
     * own in a JSLB file, as the profiler writes them: no one JSON text
     * then holds them all. */
    jw_key(w, "frameTable");
    jw_sub_begin(w);
    jw_obj(w);
    /* The columns a JSLB file may hold as typed arrays. */
    static const struct {
        const char *name;
        int type, value;
    } typed_cols[] = {{"address", JW_SLAB_I32, -1}, {"lib", JW_SLAB_I32, -1},
                      {"inlineDepth", JW_SLAB_U8, 0}};
    for (size_t c = 0; c < sizeof typed_cols / sizeof *typed_cols; c++) {
        jw_key(w, typed_cols[c].name);
        jw_col_begin(w, typed_cols[c].type);
        for (size_t k = 0; k < u->n_frames; k++)
            jw_col_int(w, typed_cols[c].value);
        jw_col_end(w);
    }
    static const char *const const_cols[][2] = {
        {"nativeSymbol", "null"}, {"innerWindowID", "null"}, {"column", "null"},
        {"originalLocation", "null"}};
    for (size_t c = 0; c < sizeof const_cols / sizeof *const_cols; c++) {
        jw_key(w, const_cols[c][0]);
        jw_arr(w);
        for (size_t k = 0; k < u->n_frames; k++)
            jw_raw(w, const_cols[c][1]);
        jw_arr_end(w);
    }
    /* Source lines, where symbols gave them (--symbols with DWARF). */
    jw_key(w, "line");
    jw_arr(w);
    for (size_t k = 0; k < u->n_frames; k++) {
        uint32_t line = m->gf_line[u->frames[k]];
        if (line)
            jw_uint(w, line);
        else
            jw_null(w);
    }
    jw_arr_end(w);
    jw_key(w, "category");
    jw_arr(w);
    for (size_t k = 0; k < u->n_frames; k++)
        jw_uint(w, m->gf_cat[u->frames[k]]);
    jw_arr_end(w);
    jw_key(w, "subcategory");
    jw_arr(w);
    for (size_t k = 0; k < u->n_frames; k++)
        jw_uint(w, m->gf_sub[u->frames[k]]);
    jw_arr_end(w);
    jw_key(w, "func");
    jw_col_begin(w, JW_SLAB_I32);
    for (size_t k = 0; k < u->n_frames; k++)
        jw_col_int(w, u->func_idx[m->gf_func[u->frames[k]]]);
    jw_col_end(w);
    jw_key(w, "length");
    jw_uint(w, u->n_frames);
    jw_obj_end(w);
    jw_sub_end(w);

    jw_key(w, "funcTable");
    jw_sub_begin(w);
    jw_obj(w);
    jw_key(w, "name");
    jw_arr(w);
    for (size_t k = 0; k < u->n_funcs; k++)
        jw_uint(w, u->str_idx[p->func.name[u->funcs[k]]]);
    jw_arr_end(w);
    static const char *const func_cols[][2] = {
        {"isJS", "false"}, {"relevantForJS", "false"}, {"lineNumber", "null"},
        {"columnNumber", "null"}, {"originalLocation", "null"}};
    for (size_t c = 0; c < sizeof func_cols / sizeof *func_cols; c++) {
        jw_key(w, func_cols[c][0]);
        jw_arr(w);
        for (size_t k = 0; k < u->n_funcs; k++)
            jw_raw(w, func_cols[c][1]);
        jw_arr_end(w);
    }
    jw_key(w, "source");
    jw_arr(w);
    for (size_t k = 0; k < u->n_funcs; k++) {
        uint32_t file = p->func.file[u->funcs[k]];
        if (file == PC_NONE)
            jw_null(w);
        else
            jw_uint(w, u->src_idx[file]);
    }
    jw_arr_end(w);
    jw_key(w, "resource");
    jw_arr(w);
    for (size_t k = 0; k < u->n_funcs; k++) {
        uint32_t r = u->res_idx[p->func.res[u->funcs[k]]];
        if (r == PC_NONE)
            jw_int(w, -1);
        else
            jw_uint(w, r);
    }
    jw_arr_end(w);
    jw_key(w, "length");
    jw_uint(w, u->n_funcs);
    jw_obj_end(w);
    jw_sub_end(w);

    jw_key(w, "resourceTable");
    jw_obj(w);
    jw_key(w, "name");
    jw_arr(w);
    for (size_t k = 0; k < u->n_res; k++)
        jw_uint(w, u->str_idx[p->res.name[u->res[k]]]);
    jw_arr_end(w);
    jw_key(w, "host");
    jw_arr(w);
    for (size_t k = 0; k < u->n_res; k++)
        jw_null(w);
    jw_arr_end(w);
    /* Every resource is a library or file of code: ResourceType.Library. */
    jw_key(w, "type");
    jw_arr(w);
    for (size_t k = 0; k < u->n_res; k++)
        jw_int(w, 1);
    jw_arr_end(w);
    jw_key(w, "length");
    jw_uint(w, u->n_res);
    jw_obj_end(w);

    jw_key(w, "nativeSymbols");
    jw_raw(w, "{\"libIndex\":[],\"address\":[],\"name\":[],\"functionSize\":[],\"length\":0}");
    /* One source per file the functions are in; the profiler's own
     * importers fill the other columns this way for files without ids. */
    jw_key(w, "sources");
    jw_obj(w);
    static const char *const src_cols[][2] = {{"id", "null"}, {"startLine", "1"},
                                              {"startColumn", "1"}, {"sourceMapURL", "null"},
                                              {"content", "null"}};
    for (size_t c = 0; c < sizeof src_cols / sizeof *src_cols; c++) {
        jw_key(w, src_cols[c][0]);
        jw_arr(w);
        for (size_t k = 0; k < u->n_srcs; k++)
            jw_raw(w, src_cols[c][1]);
        jw_arr_end(w);
    }
    jw_key(w, "filename");
    jw_arr(w);
    for (size_t k = 0; k < u->n_srcs; k++)
        jw_uint(w, u->str_idx[u->srcs[k]]);
    jw_arr_end(w);
    jw_key(w, "length");
    jw_uint(w, u->n_srcs);
    jw_obj_end(w);
    jw_key(w, "sourceLocationTable");
    jw_raw(w, "{\"source\":[],\"line\":[],\"column\":[],\"length\":0}");

    jw_key(w, "stringArray");
    jw_sub_begin(w);
    jw_arr(w);
    for (size_t k = 0; k < u->n_strs; k++)
        pc_jw_str_id(w, p, u->strs[k]);
    jw_arr_end(w);
    jw_sub_end(w);
    jw_obj_end(w);
}

/* What a track's sample columns are made from, for jw_rows: rows count
 * from the thread's first sample, a. */
typedef struct sample_rows {
    const pc_profile *p;
    const pc_merged *m;
    const used *u;
    const track *k;
    size_t a;
    uint64_t start;
    int weighted;
} sample_rows;

static void stack_rows(jw *w, const void *ctx, size_t lo, size_t hi)
{
    const sample_rows *r = ctx;
    const pc_profile *p = r->p;
    for (size_t i = r->a + lo; i < r->a + hi; i++)
        if (track_has(p, r->k, i))
            write_index_or_null(w, p->sample.stack[i] == PC_NONE
                                       ? PC_NONE
                                       : stack_out(r->u, pc_gs_of(r->m, p->sample.stack[i])));
}

/* Deltas are short numbers and exact: times come from integers.  A
 * chunk after the first (lo > 0) starts from the row before it, which
 * is the track's own where rows are chunked at all (see write_samples). */
static void delta_rows(jw *w, const void *ctx, size_t lo, size_t hi)
{
    const sample_rows *r = ctx;
    const pc_profile *p = r->p;
    uint64_t prev = lo ? pc_sample_time(p, r->a + lo - 1) : r->start;
    for (size_t i = r->a + lo; i < r->a + hi; i++)
        if (track_has(p, r->k, i)) {
            uint64_t t = pc_sample_time(p, i);
            jw_col_ms(w, t - prev);
            prev = t;
        }
}

static void weight_rows(jw *w, const void *ctx, size_t lo, size_t hi)
{
    const sample_rows *r = ctx;
    const pc_profile *p = r->p;
    if (p->thread.diff[r->k->thread]) {
        /* The comparison thread: the base's samples count against. */
        for (size_t i = r->a + lo; i < r->a + hi; i++) {
            if (!track_has(p, r->k, i))
                continue;
            int64_t v = pc_sample_weight(p, i);
            if (r->weighted)
                jw_ms_signed(w, v);
            else
                jw_int(w, v < 0 ? -1 : 1);
        }
    } else {
        for (size_t i = r->a + lo; i < r->a + hi; i++)
            if (track_has(p, r->k, i))
                jw_ms(w, pc_sample_weight(p, i) > 0 ? (uint64_t)pc_sample_weight(p, i) : 0);
    }
}

static void write_samples(jw *w, const pc_profile *p, const pc_merged *m,
                          const used *u, const track *k, uint64_t start,
                          int weighted)
{
    size_t a = p->sample.first[k->thread], b = p->sample.first[k->thread + 1];
    sample_rows r = {p, m, u, k, a, start, weighted};
    /* A track of half its thread's rows has fewer values than rows: it
     * is made on this thread alone, in one go. */
    jw_pool *pool = w->pool;
    if (p->meta.offcpu_mode == PC_OFFCPU_ON_OFF)
        w->pool = NULL;
    jw_key(w, "samples");
    jw_obj(w);
    jw_key(w, "stack");
    jw_rows(w, 0, b - a, stack_rows, &r);
    jw_key(w, "timeDeltas");
    jw_rows(w, JW_SLAB_F64, b - a, delta_rows, &r);
    jw_key(w, "weight");
    if (p->thread.diff[k->thread] || weighted)
        jw_rows(w, 0, b - a, weight_rows, &r);
    else
        jw_null(w);
    jw_key(w, "weightType");
    jw_cstr(w, weighted ? "tracing-ms" : "samples");
    jw_key(w, "length");
    jw_uint(w, k->samples);
    jw_obj_end(w);
    w->pool = pool;
}

static void write_markers(jw *w, const pc_profile *p, const used *u,
                          const uint32_t *mk, size_t n, uint64_t start)
{
    jw_key(w, "markers");
    jw_obj(w);
    jw_key(w, "data");
    jw_arr(w);
    for (size_t k = 0; k < n; k++) {
        pc_jw_marker_data(w, p, mk[k]);
    }
    jw_arr_end(w);
    jw_key(w, "name");
    jw_arr(w);
    for (size_t k = 0; k < n; k++)
        jw_uint(w, u->str_idx[p->marker.name[mk[k]]]);
    jw_arr_end(w);
    jw_key(w, "startTime");
    jw_col_begin(w, JW_SLAB_F64);
    for (size_t k = 0; k < n; k++)
        jw_col_ms(w, p->marker.start[mk[k]] - start);
    jw_col_end(w);
    /* An instant has no end: null in JSON; a typed column holds 0, as
     * the profiler itself stores it (the phase says it is an instant). */
    jw_key(w, "endTime");
    if (w->slabs) {
        jw_col_begin(w, JW_SLAB_F64);
        for (size_t k = 0; k < n; k++)
            jw_col_ms(w, p->marker.type[mk[k]] == PC_MARK_UNWIND ? 0
                                                                 : p->marker.end[mk[k]] - start);
        jw_col_end(w);
    } else {
        jw_arr(w);
        for (size_t k = 0; k < n; k++) {
            if (p->marker.type[mk[k]] == PC_MARK_UNWIND)
                jw_null(w);
            else
                jw_ms(w, p->marker.end[mk[k]] - start);
        }
        jw_arr_end(w);
    }
    jw_key(w, "phase");
    jw_arr(w);
    for (size_t k = 0; k < n; k++)
        jw_int(w, p->marker.type[mk[k]] == PC_MARK_UNWIND ? 0 : 1);
    jw_arr_end(w);
    jw_key(w, "category");
    jw_arr(w);
    for (size_t k = 0; k < n; k++)
        jw_int(w, p->marker.type[mk[k]] == PC_MARK_OFFCPU ? PC_CAT_OFFCPU : PC_CAT_OTHER);
    jw_arr_end(w);
    jw_key(w, "length");
    jw_uint(w, n);
    jw_obj_end(w);
}

/* ---- Heap tracks ---- */

/* A heap track shows how one heap of a process got to the dump shown:
 * at each dump, a sample per callsite weighing what its measure
 * (unreleased, allocated or freed bytes) changed by since the dump
 * before.  Over the whole timeline the weights add up to the dump shown,
 * as in the other formats; a selection between two dumps shows what grew
 * (or shrank) in between.  A memory counter track draws the heap's
 * unreleased bytes over time. */
typedef struct heap_series {
    uint32_t *order;   /* rows by thread, heap, time and dump */
    size_t *first;     /* thread t's rows: order[first[t]..first[t+1]) */
    int64_t *delta;    /* by row: change of the measure since the callsite's
                          previous dump (unreleased bytes can shrink) */
    int64_t *unreleased; /* by row: the same for unreleased bytes */
    uint64_t *ops;     /* by row: allocations and frees since then */
} heap_series;

/* A heap row's sort key: comparators need nothing but the keys, so
 * profiles written on several threads share no state. */
typedef struct heap_key {
    uint32_t thread, heap, stack, dump, row;
    uint64_t time;
} heap_key;

/* By thread, heap, time, dump, then row. */
static int cmp_heap_time(const void *a, const void *b)
{
    const heap_key *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->heap != y->heap)
        return x->heap < y->heap ? -1 : 1;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->dump != y->dump)
        return x->dump < y->dump ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* By thread, heap, callsite, then as above: each callsite's dumps in a
 * run, to take differences. */
static int cmp_heap_site(const void *a, const void *b)
{
    const heap_key *x = a, *y = b;
    if (x->thread != y->thread || x->heap != y->heap || x->stack == y->stack)
        return cmp_heap_time(a, b);
    return x->stack < y->stack ? -1 : 1;
}

/* A heap row's values: bytes and counts allocated and freed. */
enum { HEAP_VALUES = 4 };

static void heap_series_free(heap_series *h)
{
    free(h->order);
    free(h->first);
    free(h->delta);
    free(h->unreleased);
    free(h->ops);
}

/* A cumulative counter's growth from prev to cur; one that went back was
 * counting afresh. */
static uint64_t growth(uint64_t prev, uint64_t cur)
{
    return cur >= prev ? cur - prev : cur;
}

static int heap_series_init(const pc_profile *p, heap_series *h)
{
    size_t n = p->heap.n, nt = p->thread.n;
    memset(h, 0, sizeof *h);
    heap_key *key = malloc((n + 1) * sizeof *key);
    h->order = malloc((n + 1) * sizeof *h->order);
    h->first = calloc(nt + 2, sizeof *h->first);
    h->delta = malloc((n + 1) * sizeof *h->delta);
    h->unreleased = malloc((n + 1) * sizeof *h->unreleased);
    h->ops = malloc((n + 1) * sizeof *h->ops);
    if (!key || !h->order || !h->first || !h->delta || !h->unreleased || !h->ops) {
        free(key);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        key[i] = (heap_key){p->heap.thread[i], p->heap.heap[i], p->heap.stack[i],
                            p->heap.dump[i], (uint32_t)i, p->heap.time[i]};
    pc_qsort(key, n, sizeof *key, cmp_heap_site);
    /* Rows of one dump can share a stack (callsites that removed frames
     * or merged threads made one): each group's totals are summed, and
     * the group's change goes to its first row. */
    uint64_t prev[HEAP_VALUES] = {0}, cur[HEAP_VALUES];
    for (size_t k = 0; k < n;) {
        size_t e = k;
        memset(cur, 0, sizeof cur);
        for (; e < n && key[e].thread == key[k].thread && key[e].heap == key[k].heap &&
               key[e].stack == key[k].stack && key[e].dump == key[k].dump;
             e++) {
            uint32_t i = key[e].row;
            const uint64_t v[HEAP_VALUES] = {p->heap.alloc[i], p->heap.freed[i],
                                           p->heap.alloc_count[i], p->heap.free_count[i]};
            for (int c = 0; c < HEAP_VALUES; c++)
                cur[c] = cur[c] > UINT64_MAX - v[c] ? UINT64_MAX : cur[c] + v[c];
            h->delta[i] = h->unreleased[i] = 0;
            h->ops[i] = 0;
        }
        int same = k && key[k - 1].thread == key[k].thread && key[k - 1].heap == key[k].heap &&
                   key[k - 1].stack == key[k].stack;
        uint64_t d[HEAP_VALUES];
        for (int c = 0; c < HEAP_VALUES; c++)
            d[c] = growth(same ? prev[c] : 0, cur[c]);
        uint32_t i = key[k].row;
        h->unreleased[i] = pc_sat_add(pc_clamp_i64(d[0]), -pc_clamp_i64(d[1]));
        h->delta[i] = p->meta.heap_measure == PC_HEAP_ALLOCATED ? pc_clamp_i64(d[0])
                      : p->meta.heap_measure == PC_HEAP_FREED   ? pc_clamp_i64(d[1])
                                                                : h->unreleased[i];
        h->ops[i] = d[2] > UINT64_MAX - d[3] ? UINT64_MAX : d[2] + d[3];
        memcpy(prev, cur, sizeof prev);
        k = e;
    }
    pc_qsort(key, n, sizeof *key, cmp_heap_time);
    for (size_t k = 0; k < n; k++)
        h->order[k] = key[k].row;
    free(key);
    for (size_t i = 0; i < n; i++)
        h->first[p->heap.thread[i] + 1]++;
    for (size_t t = 0; t < nt; t++)
        h->first[t + 1] += h->first[t];
    return 0;
}

/* The track's samples: per dump, the callsites whose measure changed. */
static void write_heap_samples(jw *w, const pc_profile *p, const pc_merged *m, const used *u,
                               const track *k, const heap_series *h, uint64_t start)
{
    const uint32_t *rows = h->order + k->h0;
    jw_key(w, "samples");
    jw_obj(w);
    jw_key(w, "stack");
    jw_arr(w);
    for (size_t j = 0; j < k->hn; j++)
        if (h->delta[rows[j]]) {
            uint32_t st = p->heap.stack[rows[j]];
            write_index_or_null(w, st == PC_NONE ? PC_NONE : stack_out(u, pc_gs_of(m, st)));
        }
    jw_arr_end(w);
    jw_key(w, "timeDeltas");
    jw_col_begin(w, JW_SLAB_F64);
    uint64_t prev = start;
    for (size_t j = 0; j < k->hn; j++)
        if (h->delta[rows[j]]) {
            jw_col_ms(w, p->heap.time[rows[j]] - prev);
            prev = p->heap.time[rows[j]];
        }
    jw_col_end(w);
    jw_key(w, "weight");
    jw_arr(w);
    for (size_t j = 0; j < k->hn; j++)
        if (h->delta[rows[j]])
            jw_int(w, h->delta[rows[j]]);
    jw_arr_end(w);
    jw_key(w, "weightType");
    jw_cstr(w, "bytes");
    jw_key(w, "length");
    jw_uint(w, k->samples);
    jw_obj_end(w);
    jw_key(w, "markers");
    jw_raw(w, "{\"data\":[],\"name\":[],\"startTime\":[],\"endTime\":[],"
              "\"phase\":[],\"category\":[],\"length\":0}");
}

/* A memory counter per heap track: the unreleased bytes at each dump, as
 * changes from the recording's start (the profiler draws their running
 * sum), and the allocations and frees in between. */
static void write_counters(jw *w, const pc_profile *p, const track *tracks, size_t n_tracks,
                           const heap_series *h, uint64_t start)
{
    for (size_t k = 0; k < n_tracks; k++) {
        const track *tr = &tracks[k];
        if (tr->heap == PC_NONE)
            continue;
        const uint32_t *rows = h->order + tr->h0;
        char pid[24];
        snprintf(pid, sizeof pid, "%lld", (long long)p->thread.pid[tr->thread]);
        jw_obj(w);
        jw_key(w, "name");
        pc_jw_str_id(w, p, tr->heap);
        jw_key(w, "category");
        jw_cstr(w, "Memory");
        jw_key(w, "description");
        jw_cstr(w, tr->heap == p->meta.object_heap
                       ? "Bytes of the heap graph's objects, at each heap graph"
                       : "Bytes allocated and not freed yet, at each heap dump");
        jw_key(w, "pid");
        jw_cstr(w, pid);
        jw_key(w, "mainThreadIndex");
        jw_uint(w, k);
        /* From zero at the recording's start, then one sample per dump. */
        jw_key(w, "samples");
        jw_obj(w);
        jw_key(w, "time");
        jw_col_begin(w, JW_SLAB_F64);
        jw_col_ms(w, 0);
        size_t n = 1;
        for (size_t j = 0; j < tr->hn; j++)
            if (j + 1 == tr->hn || p->heap.dump[rows[j + 1]] != p->heap.dump[rows[j]]) {
                jw_col_ms(w, p->heap.time[rows[j]] - start);
                n++;
            }
        jw_col_end(w);
        for (int col = 0; col < 2; col++) {
            jw_key(w, col ? "number" : "count");
            jw_arr(w);
            jw_int(w, 0);
            int64_t bytes = 0;
            uint64_t ops = 0;
            for (size_t j = 0; j < tr->hn; j++) {
                bytes = pc_sat_add(bytes, h->unreleased[rows[j]]);
                ops = ops > UINT64_MAX - h->ops[rows[j]] ? UINT64_MAX : ops + h->ops[rows[j]];
                if (j + 1 == tr->hn || p->heap.dump[rows[j + 1]] != p->heap.dump[rows[j]]) {
                    if (col)
                        jw_uint(w, ops);
                    else
                        jw_int(w, bytes);
                    bytes = 0;
                    ops = 0;
                }
            }
            jw_arr_end(w);
        }
        jw_key(w, "length");
        jw_uint(w, n);
        jw_obj_end(w);
        int objects = tr->heap == p->meta.object_heap;
        jw_key(w, "display");
        jw_obj(w);
        jw_key(w, "graphType");
        jw_cstr(w, "line-accumulated");
        jw_key(w, "unit");
        jw_cstr(w, "bytes");
        jw_key(w, "color");
        jw_cstr(w, "orange");
        jw_key(w, "markerSchemaLocation");
        jw_null(w);
        jw_key(w, "sortWeight");
        jw_int(w, 20);
        jw_key(w, "label");
        jw_cstr(w, "Memory");
        jw_key(w, "tooltipRows");
        jw_arr(w);
        pc_jw_tooltip_row(w, "accumulated", "bytes",
                          objects ? "bytes of the heap graph's objects at this dump"
                                  : "unreleased bytes at this dump, from the recording's start",
                          0);
        pc_jw_tooltip_row(w, "count-range", "bytes", "range in the graph", 0);
        pc_jw_tooltip_row(w, "sample-number", "number",
                          objects ? "objects since the dump before"
                                  : "allocations and frees since the dump before",
                          0);
        jw_arr_end(w);
        jw_obj_end(w);
        jw_obj_end(w);
    }
}

/* Digits of v in decimal. */
static uint64_t digits(uint64_t v)
{
    uint64_t d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

uint64_t pc_fx_json_estimate(const pc_profile *p)
{
    uint64_t n = 0, ds = digits(p->stack.n) + 1, df = digits(p->frame.n) + 1;
    n += p->stack.n * (df + 3);
    n += p->frame.n * (digits(p->func.n) + 60);
    n += p->func.n * 50;
    n += p->str.arena_len + 3 * p->str.n;
    n += p->sample.n * (ds + 18);
    n += p->marker.n * 80;
    n += p->heap.n * (ds + 30);
    n += p->counter.n * 30;
    return n;
}

/* What the document is made of, for each pass over it (a JSLB container
 * makes it twice, see jw_slabs). */
typedef struct doc_in {
    const pc_profile *p;
    const pc_fx_meta *fm;
    const pc_merged *m;
    const used *u;
    const heap_series *hs;
    const track *tracks;
    size_t n_tracks;
    const uint32_t *main_of, *owner, *mperm;
    const size_t *mfirst;
    const uint64_t *proc_start, *first, *last;
    uint64_t start;
    int weighted;
    jw_pool *pool;   /* helpers for the long columns, or NULL */
} doc_in;

/* Writes the document to doc, its columns and JSON pieces to slabs when
 * given.  0, or -1 when out of memory for the event counters; a slab out
 * of memory is latched in slabs->oom instead. */
static int write_doc(const doc_in *d, pc_sink *doc, jw_slabs *slabs)
{
    const pc_profile *p = d->p;
    const pc_merged *m = d->m;
    const used *u = d->u;
    const heap_series *hs = d->hs;
    const track *tracks = d->tracks;
    size_t n_tracks = d->n_tracks;
    const uint32_t *main_of = d->main_of, *owner = d->owner, *mperm = d->mperm;
    const size_t *mfirst = d->mfirst;
    const uint64_t *proc_start = d->proc_start, *first = d->first, *last = d->last;
    uint64_t start = d->start;
    int weighted = d->weighted;
    jw w;
    int st = 0;
    jw_init(&w, doc);
    w.slabs = slabs;
    w.pool = d->pool;
    jw_obj(&w);
    pc_jw_fx_meta(&w, p, d->fm);
    jw_key(&w, "libs");
    jw_raw(&w, "[]");
    write_shared(&w, p, m, u);
    jw_key(&w, "threads");
    jw_arr(&w);
    for (size_t k = 0; k < n_tracks; k++) {
        const track *tr = &tracks[k];
        uint32_t t = tr->thread, mt = main_of[t];
        char pid[24];
        snprintf(pid, sizeof pid, "%lld", (long long)p->thread.pid[t]);
        /* Each thread is a JSON piece of its own in a JSLB file: the
         * biggest thread, not all of them, meets the string limit. */
        jw_sub_begin(&w);
        jw_obj(&w);
        jw_key(&w, "name");
        jw_str_begin(&w);
        if (tr->heap != PC_NONE) {
            const char *what = pc_heap_what(p, tr->heap);
            jw_str_part(&w, pc_str(&p->str, tr->heap), pc_str_len(&p->str, tr->heap));
            jw_str_part(&w, " (", 2);
            jw_str_part(&w, what, strlen(what));
            jw_str_part(&w, " bytes)", 7);
        } else {
            jw_str_part(&w, pc_str(&p->str, p->thread.name[t]),
                        pc_str_len(&p->str, p->thread.name[t]));
        }
        if (tr->off)
            jw_str_part(&w, " (off-CPU)", 10);
        jw_str_end(&w);
        jw_key(&w, "isMainThread");
        jw_bool(&w, tr->tid == p->thread.pid[t] && !tr->off);
        jw_key(&w, "processType");
        jw_cstr(&w, p->thread.diff[t] ? "comparison" : "default");
        uint32_t pname = pc_process_label(p, t, mt);
        if (pname != PC_NONE) {
            jw_key(&w, "processName");
            pc_jw_str_id(&w, p, pname);
        }
        jw_key(&w, "pid");
        jw_cstr(&w, pid);
        jw_key(&w, "tid");
        jw_int(&w, tr->tid);
        jw_key(&w, "processStartupTime");
        jw_ms(&w, proc_start[t] == UINT64_MAX ? 0 : proc_start[t] - start);
        jw_key(&w, "processShutdownTime");
        jw_null(&w);
        jw_key(&w, "registerTime");
        jw_ms(&w, first[t] == UINT64_MAX ? 0 : first[t] - start);
        jw_key(&w, "unregisterTime");
        if (first[t] == UINT64_MAX)
            jw_null(&w);
        else
            jw_ms(&w, last[t] - start);
        jw_key(&w, "pausedRanges");
        jw_raw(&w, "[]");
        if (tr->heap != PC_NONE) {
            write_heap_samples(&w, p, m, u, tr, hs, start);
        } else {
            write_samples(&w, p, m, u, tr, start, weighted);
            /* Markers stay with the thread's first track. */
            write_markers(&w, p, u, mperm + mfirst[t],
                          tr->off ? 0 : mfirst[t + 1] - mfirst[t], start);
        }
        jw_obj_end(&w);
        jw_sub_end(&w);
    }
    jw_arr_end(&w);
    if (p->heap.n || p->counter.n) {
        jw_key(&w, "counters");
        jw_arr(&w);
        write_counters(&w, p, tracks, n_tracks, hs, start);
        if (pc_fx_event_counters(&w, p, owner, start) < 0)
            st = -1;
        jw_arr_end(&w);
    }
    jw_obj_end(&w);
    sink_write(doc, "\n", 1);
    return st;
}

/* Merges frames and stacks while the stacks reached are marked (on the
 * thread started, when *marking, which is then joined; else here). */
static int merge_marked(const pc_profile *p, pc_merged *m, marks *mk, const pthread_t *th,
                        int *marking)
{
    int st = pc_merge(p, m);
    if (*marking)
        pthread_join(*th, NULL);
    else
        mark_model(mk);
    *marking = 0;
    return st;
}

int pc_write_firefox(const pc_profile *p, const pc_write_options *o, pc_sink *s,
                     pc_error *err)
{
    size_t nt = p->thread.n, nm = p->marker.n;
    uint32_t *order = malloc((nt + 1) * sizeof *order);
    uint32_t *main_of = malloc((nt + 1) * sizeof *main_of);
    uint32_t *mperm = malloc((nm + 1) * sizeof *mperm);
    size_t *mfirst = malloc((nt + 1) * sizeof *mfirst);
    track *tracks = malloc((2 * nt + p->heap.n + 1) * sizeof *tracks);
    uint8_t *visible = malloc(2 * nt + p->heap.n + 1);
    uint64_t *first = NULL, *last = NULL, *proc_start = malloc((nt + 1) * sizeof *proc_start);
    heap_series hs = {0};
    pc_merged m = {0};
    used u = {0};
    marks mk = {p, NULL, 0, 0};
    pthread_t mark_th;
    int marking = o->threads != 1 && pc_thread_start_sized(&mark_th, mark_model, &mk,
                                                            (size_t)64 << 10) == 0;
    fresh ft = {0};
    int st = PC_OK;

    if (!order || !main_of || !mperm || !mfirst || !tracks || !visible || !proc_start ||
        heap_series_init(p, &hs) < 0 ||
        pc_order_by_thread(p->marker.thread, p->marker.start, nm, nt, mperm, mfirst) < 0 ||
        pc_thread_span(p, &first, &last) < 0 || merge_marked(p, &m, &mk, &mark_th, &marking) < 0 ||
        collect(p, &m, &mk, &u) < 0 || fresh_init(&ft, p, p->heap.n) < 0) {
        st = pc_fail(err, PC_ENOMEM, "out of memory");
        goto done;
    }
    pc_thread_order(p, order, main_of);

    size_t n_tracks = 0;
    for (size_t k = 0; k < nt; k++) {
        uint32_t t = order[k];
        size_t h0 = hs.first[t], h1 = hs.first[t + 1];
        /* A thread that only stands for its process's heap gives its
         * place to the heap track. */
        int own = h0 == h1 || p->sample.first[t + 1] > p->sample.first[t] ||
                  mfirst[t + 1] > mfirst[t];
        for (int off = 0; own && off <= (p->meta.offcpu_mode == PC_OFFCPU_ON_OFF); off++) {
            track tr = {t, off, 0, PC_NONE, 0, 0, p->thread.tid[t]};
            if (p->meta.offcpu_mode != PC_OFFCPU_ON_OFF)
                tr.samples = p->sample.first[t + 1] - p->sample.first[t];
            else
                for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++)
                    tr.samples += track_has(p, &tr, i);
            /* The off-CPU half exists only when it has samples. */
            if (!off || tr.samples)
                tracks[n_tracks++] = tr;
        }
        for (size_t j = h0; j < h1;) {
            uint32_t h = p->heap.heap[hs.order[j]];
            size_t e = j, changes = 0;
            for (; e < h1 && p->heap.heap[hs.order[e]] == h; e++)
                changes += hs.delta[hs.order[e]] != 0;
            track tr = {t, 0, changes, h, j, e - j, own ? fresh_tid(&ft) : p->thread.tid[t]};
            own = 1;
            tracks[n_tracks++] = tr;
            j = e;
        }
    }
    /* A process starts with the first activity of any of its threads;
     * order groups each process's threads together. */
    for (size_t k = 0; k < nt;) {
        size_t j = k;
        uint64_t earliest = UINT64_MAX;
        while (j < nt && p->thread.pid[order[j]] == p->thread.pid[order[k]])
            if (first[order[j++]] < earliest)
                earliest = first[order[j - 1]];
        while (k < j)
            proc_start[order[k++]] = earliest;
    }

    /* Show the tracks that have samples (all of them when none has, as
     * the profiler needs a thread to select), and select the focus
     * thread's first track. */
    uint32_t focus;
    char title[512];
    if (pc_focus_thread(p, main_of, &focus) < 0 ||
        pc_title(p, main_of, focus, title, sizeof title) < 0) {
        st = pc_fail(err, PC_ENOMEM, "out of memory");
        goto done;
    }
    /* Counter values go to their process's first track (its main
     * thread's, when it has one), a CPU's to its own; that track shows. */
    uint32_t *owner = all_none(nt);
    uint8_t *counted = calloc(n_tracks + 1, 1);
    if (!owner || !counted) {
        free(owner);
        free(counted);
        st = pc_fail(err, PC_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t k = 0, proc = 0; k < n_tracks; k++) {
        uint32_t t = tracks[k].thread;
        if (p->thread.pid[t] != p->thread.pid[tracks[proc].thread])
            proc = k;
        if (owner[t] == PC_NONE)
            owner[t] = (uint32_t)(p->thread.pid[t] == -1 ? k : proc);
    }
    for (size_t i = 0; i < p->counter.n; i++) {
        uint32_t k = owner[p->counter.thread[i]];
        if (k != PC_NONE)
            counted[k] = 1;
    }
    /* A thread's traced slices show on its first track, which shows too. */
    for (size_t k = 0, prev = PC_NONE; k < n_tracks; k++) {
        uint32_t t = tracks[k].thread;
        if (t == prev || tracks[k].heap != PC_NONE || tracks[k].off)
            continue;
        prev = t;
        for (size_t j = mfirst[t]; j < mfirst[t + 1] && !counted[k]; j++)
            counted[k] = p->marker.type[mperm[j]] == PC_MARK_SLICE;
    }
    size_t with_samples = 0, selected = PC_NONE;
    for (size_t k = 0; k < n_tracks; k++) {
        visible[k] = tracks[k].samples > 0 || counted[k];
        with_samples += visible[k];
        if (selected == PC_NONE && visible[k] && tracks[k].thread == focus)
            selected = k;
    }
    for (size_t k = 0; k < n_tracks && !with_samples; k++)
        visible[k] = 1;
    for (size_t k = 0; k < n_tracks && selected == PC_NONE; k++)
        if (visible[k])
            selected = k;
    pc_fx_meta fm = {0, main_of, focus, title, visible, n_tracks, selected};

    /* Helpers where a column is long enough to be made a chunk at a
     * time (see jw_pool_new): the samples of a thread, the stacks. */
    size_t most = u.n_stacks;
    for (size_t t = 0; t < nt; t++)
        if (p->sample.first[t + 1] - p->sample.first[t] > most)
            most = p->sample.first[t + 1] - p->sample.first[t];
    doc_in d = {p, &fm, &m, &u, &hs, tracks, n_tracks, main_of, owner, mperm, mfirst,
                proc_start, first, last, pc_fx_zero(p), time_weighted(p),
                most > 2 * JW_POOL_ROWS ? jw_pool_new(pc_thread_count(o->threads), 0)
                                     : NULL};
    jw_slabs sl = {0};
    if (o->container != PC_CONTAINER_JSLB) {
        if (write_doc(&d, s, NULL) < 0)
            st = pc_fail(err, PC_ENOMEM, "out of memory");
    } else {
        /* A JSLB container: the document is measured, then made again
         * and written slab by slab, its root document last. */
        pc_sink *doc = NULL;
        unsigned char *data = NULL;
        size_t size = 0;
        sl.pass = 1;
        st = sink_open_count(&doc, err);
        if (st == PC_OK && write_doc(&d, doc, &sl) < 0)
            st = pc_fail(err, PC_ENOMEM, "out of memory");
        if (st == PC_OK)
            st = pc_jslb_begin(&sl, (size_t)sink_bytes(doc), s, err);
        sink_abort(doc);
        doc = NULL;
        if (st == PC_OK)
            st = sink_open_memory(&doc, 0, err);
        if (st == PC_OK && write_doc(&d, doc, &sl) < 0)
            st = pc_fail(err, PC_ENOMEM, "out of memory");
        if (doc && st != PC_OK)
            sink_abort(doc);
        else if (doc)
            st = sink_finish(doc, &data, &size, err);
        if (st == PC_OK)
            st = pc_jslb_end(&sl, data, size, err);
        free(data);
    }
    jw_pool_free(d.pool);
    free(owner);
    free(counted);
    jw_slabs_free(&sl);
done:
    if (marking)
        pthread_join(mark_th, NULL);
    free(mk.bit);
    free(ft.sorted);
    used_free(&u);
    pc_merged_free(&m);
    free(order);
    free(main_of);
    free(mperm);
    free(mfirst);
    free(tracks);
    free(visible);
    free(first);
    free(last);
    free(proc_start);
    heap_series_free(&hs);
    return st;
}
