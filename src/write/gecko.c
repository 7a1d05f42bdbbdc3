/* Writer for the Firefox Profiler's Gecko profile format (JSON).
 *
 * Facts used (doc/formats/firefox.md): each thread carries its own
 * string, frame and stack tables; frames are located by the string
 * "symbol (in path)", from which the profiler derives funcs and resources;
 * stacks list parents before children; samples must be sorted by time; a
 * grey category must exist; meta.markerSchema must be present.
 *
 * We write format version 24, the one simpleperf's gecko_profile_generator
 * and the profiler's own perf importer write: every deployed profiler reads
 * it and upgrades it on load, while newer versions would be refused by
 * older deployments for no gain (versions 25-36 add nothing we use).
 *
 * Frames and stacks are written merged (write_common.c), since Gecko
 * frames carry no address.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "model/model.h"
#include "write/write.h"

/* Per-thread renumbering: which merged stacks, frames and strings a thread
 * uses, and their local indexes.  Stamps avoid clearing arrays between
 * threads, so the cost is proportional to what each thread uses. */
typedef struct local {
    uint32_t *stack_stamp, *stack_idx;  /* by merged stack */
    uint32_t *frame_stamp, *frame_idx;  /* by merged frame */
    uint32_t *str_stamp, *str_idx;      /* by model string (marker names) */
    uint32_t *stacks;                   /* merged stacks used, ascending */
    size_t n_stacks;
    uint32_t *frames;                   /* merged frames used, in order */
    size_t n_frames;
    uint32_t *strs;                     /* extra strings after the frames */
    size_t n_strs;
    uint32_t stamp;
} local;

static void local_free(local *l)
{
    free(l->stack_stamp);
    free(l->stack_idx);
    free(l->frame_stamp);
    free(l->frame_idx);
    free(l->str_stamp);
    free(l->str_idx);
    free(l->stacks);
    free(l->frames);
    free(l->strs);
}

static int local_init(local *l, const pc_profile *p, const pc_merged *m)
{
    memset(l, 0, sizeof *l);
    l->stack_stamp = calloc(m->n_gs + 1, sizeof *l->stack_stamp);
    l->stack_idx = malloc((m->n_gs + 1) * sizeof *l->stack_idx);
    l->frame_stamp = calloc(m->n_gf + 1, sizeof *l->frame_stamp);
    l->frame_idx = malloc((m->n_gf + 1) * sizeof *l->frame_idx);
    l->str_stamp = calloc(p->str.n + 1, sizeof *l->str_stamp);
    l->str_idx = malloc((p->str.n + 1) * sizeof *l->str_idx);
    l->stacks = malloc((m->n_gs + 1) * sizeof *l->stacks);
    l->frames = malloc((m->n_gf + 1) * sizeof *l->frames);
    l->strs = malloc((p->str.n + 1) * sizeof *l->strs);
    if (!l->stack_stamp || !l->stack_idx || !l->frame_stamp || !l->frame_idx ||
        !l->str_stamp || !l->str_idx || !l->stacks || !l->frames || !l->strs) {
        local_free(l);
        return -1;
    }
    return 0;
}

/* Collects what thread t uses: stacks of its samples with their ancestors,
 * their frames, and its marker names. */
static void local_collect(local *l, const pc_profile *p, const pc_merged *m,
                          uint32_t t, const uint32_t *markers, size_t n_markers)
{
    uint32_t stamp = ++l->stamp;
    l->n_stacks = l->n_frames = l->n_strs = 0;
    for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++) {
        uint32_t s = p->sample.stack[i];
        if (s == PC_NONE)
            continue;
        for (uint32_t g = pc_gs_of(m, s);
             g != PC_NONE && l->stack_stamp[g] != stamp; g = m->gs_prefix[g]) {
            l->stack_stamp[g] = stamp;
            l->stacks[l->n_stacks++] = g;
        }
    }
    /* Merged ids are topologically ordered, so ascending order keeps
     * parents before children. */
    pc_sort_stamped(l->stacks, l->n_stacks, l->stack_stamp, stamp, m->n_gs);
    for (size_t k = 0; k < l->n_stacks; k++) {
        uint32_t g = l->stacks[k], f = pc_gs_frame(m, g);
        l->stack_idx[g] = (uint32_t)k;
        if (l->frame_stamp[f] != stamp) {
            l->frame_stamp[f] = stamp;
            l->frame_idx[f] = (uint32_t)l->n_frames;
            l->frames[l->n_frames++] = f;
        }
    }
    /* String i is the location of frame i; marker names follow. */
    for (size_t k = 0; k < n_markers; k++) {
        uint32_t name = p->marker.name[markers[k]];
        if (l->str_stamp[name] != stamp) {
            l->str_stamp[name] = stamp;
            l->str_idx[name] = (uint32_t)(l->n_frames + l->n_strs);
            l->strs[l->n_strs++] = name;
        }
    }
}

static void write_markers(jw *w, const pc_profile *p, const local *l,
                          const uint32_t *markers, size_t n, uint64_t start)
{
    jw_key(w, "markers");
    jw_obj(w);
    jw_key(w, "schema");
    jw_raw(w, "{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,"
              "\"category\":4,\"data\":5}");
    jw_key(w, "data");
    jw_arr(w);
    for (size_t k = 0; k < n; k++) {
        uint32_t i = markers[k];
        jw_arr(w);
        jw_uint(w, l->str_idx[p->marker.name[i]]);
        jw_ms(w, p->marker.start[i] - start);
        if (p->marker.type[i] != PC_MARK_UNWIND) {
            int off = p->marker.type[i] == PC_MARK_OFFCPU;
            jw_ms(w, p->marker.end[i] - start);
            jw_int(w, 1);
            jw_int(w, off ? PC_CAT_OFFCPU : PC_CAT_OTHER);
        } else {
            jw_null(w);
            jw_int(w, 0);
            jw_int(w, PC_CAT_OTHER);
        }
        pc_jw_marker_data(w, p, i);
        jw_arr_end(w);
    }
    jw_arr_end(w);
    jw_obj_end(w);
}

static void write_tables(jw *w, const pc_profile *p, const pc_merged *m,
                         const local *l)
{
    jw_key(w, "stackTable");
    jw_obj(w);
    jw_key(w, "schema");
    jw_raw(w, "{\"prefix\":0,\"frame\":1}");
    jw_key(w, "data");
    jw_arr(w);
    for (size_t k = 0; k < l->n_stacks; k++) {
        uint32_t g = l->stacks[k];
        jw_arr(w);
        if (m->gs_prefix[g] == PC_NONE)
            jw_null(w);
        else
            jw_uint(w, l->stack_idx[m->gs_prefix[g]]);
        jw_uint(w, l->frame_idx[pc_gs_frame(m, g)]);
        jw_arr_end(w);
    }
    jw_arr_end(w);
    jw_obj_end(w);

    jw_key(w, "frameTable");
    jw_obj(w);
    jw_key(w, "schema");
    jw_raw(w, "{\"location\":0,\"relevantForJS\":1,\"innerWindowID\":2,"
              "\"implementation\":3,\"line\":4,\"column\":5,\"category\":6,"
              "\"subcategory\":7}");
    jw_key(w, "data");
    jw_arr(w);
    for (size_t k = 0; k < l->n_frames; k++) {
        jw_arr(w);
        jw_uint(w, k);  /* string k is this frame's location */
        jw_raw(w, "false,0,null,null,null");
        jw_int(w, m->gf_cat[l->frames[k]]);
        jw_int(w, m->gf_sub[l->frames[k]]);
        jw_arr_end(w);
    }
    jw_arr_end(w);
    jw_obj_end(w);

    jw_key(w, "stringTable");
    jw_arr(w);
    for (size_t k = 0; k < l->n_frames; k++) {
        uint32_t func = m->gf_func[l->frames[k]];
        uint32_t name = p->func.name[func];
        uint32_t path = p->res.name[p->func.res[func]];
        jw_str_begin(w);
        jw_str_part(w, pc_str(&p->str, name), pc_str_len(&p->str, name));
        /* Synthetic frames have no file and read as labels. */
        if (pc_str_len(&p->str, path)) {
            jw_str_part(w, " (in ", 5);
            jw_str_part(w, pc_str(&p->str, path), pc_str_len(&p->str, path));
            jw_str_part(w, ")", 1);
        }
        jw_str_end(w);
    }
    for (size_t k = 0; k < l->n_strs; k++)
        pc_jw_str_id(w, p, l->strs[k]);
    jw_arr_end(w);
}

static void write_thread(jw *w, const pc_profile *p, const pc_merged *m,
                         const local *l, uint32_t t, const uint32_t *main_of,
                         const uint32_t *markers, size_t n_markers,
                         uint64_t start)
{
    size_t a = p->sample.first[t], b = p->sample.first[t + 1];
    uint64_t first = UINT64_MAX;
    if (a < b)
        first = pc_sample_time(p, a);
    if (n_markers && p->marker.start[markers[0]] < first)
        first = p->marker.start[markers[0]];

    jw_obj(w);
    jw_key(w, "name");
    pc_jw_str_id(w, p, p->thread.name[t]);
    jw_key(w, "processType");
    jw_cstr(w, "default");
    uint32_t pname = pc_process_label(p, t, main_of[t]);
    if (pname != PC_NONE) {
        jw_key(w, "processName");
        pc_jw_str_id(w, p, pname);
    }
    jw_key(w, "pid");
    jw_int(w, p->thread.pid[t]);
    jw_key(w, "tid");
    jw_int(w, p->thread.tid[t]);
    jw_key(w, "registerTime");
    jw_ms(w, first == UINT64_MAX ? 0 : first - start);
    jw_key(w, "unregisterTime");
    jw_null(w);

    jw_key(w, "samples");
    jw_obj(w);
    jw_key(w, "schema");
    jw_raw(w, "{\"stack\":0,\"time\":1,\"eventDelay\":2}");
    jw_key(w, "data");
    jw_arr(w);
    for (size_t i = a; i < b; i++) {
        uint32_t s = p->sample.stack[i];
        jw_arr(w);
        if (s == PC_NONE)
            jw_null(w);
        else
            jw_uint(w, l->stack_idx[pc_gs_of(m, s)]);
        jw_ms(w, pc_sample_time(p, i) - start);
        jw_int(w, 0);
        jw_arr_end(w);
    }
    jw_arr_end(w);
    jw_obj_end(w);

    write_markers(w, p, l, markers, n_markers, start);
    write_tables(w, p, m, l);
    jw_obj_end(w);
}

int pc_write_gecko(const pc_profile *p, const pc_write_options *o, pc_sink *s, pc_error *err)
{
    (void)o;  /* nothing to choose; heap profiles never come here (formats.c) */
    pc_merged m;
    local l;
    size_t nt = p->thread.n, nm = p->marker.n;
    uint32_t *order = malloc((nt + 1) * sizeof *order);
    uint32_t *main_of = malloc((nt + 1) * sizeof *main_of);
    uint32_t *mperm = malloc((nm + 1) * sizeof *mperm);
    size_t *mfirst = malloc((nt + 1) * sizeof *mfirst);
    int st = PC_OK;

    if (!order || !main_of || !mperm || !mfirst ||
        pc_order_by_thread(p->marker.thread, p->marker.start, nm, nt, mperm,
                           mfirst) < 0) {
        free(order);
        free(main_of);
        free(mperm);
        free(mfirst);
        return pc_fail(err, PC_ENOMEM, "out of memory");
    }
    pc_thread_order(p, order, main_of);
    uint32_t focus;
    char title[512];
    if (pc_focus_thread(p, main_of, &focus) < 0 ||
        pc_title(p, main_of, focus, title, sizeof title) < 0 || pc_merge(p, &m) < 0) {
        st = pc_fail(err, PC_ENOMEM, "out of memory");
    } else {
        if (local_init(&l, p, &m) < 0) {
            st = pc_fail(err, PC_ENOMEM, "out of memory");
        } else {
            uint64_t start = pc_fx_zero(p);
            pc_fx_meta fm = {1, main_of, focus, title, NULL, 0, PC_NONE};
            jw w;
            jw_init(&w, s);
            jw_obj(&w);
            pc_jw_fx_meta(&w, p, &fm);
            jw_key(&w, "libs");
            jw_raw(&w, "[]");
            jw_key(&w, "threads");
            jw_arr(&w);
            for (size_t k = 0; k < nt; k++) {
                uint32_t t = order[k];
                const uint32_t *mk = mperm + mfirst[t];
                size_t n = mfirst[t + 1] - mfirst[t];
                local_collect(&l, p, &m, t, mk, n);
                write_thread(&w, p, &m, &l, t, main_of, mk, n, start);
            }
            jw_arr_end(&w);
            jw_key(&w, "processes");
            jw_raw(&w, "[]");
            jw_key(&w, "pausedRanges");
            jw_raw(&w, "[]");
            jw_obj_end(&w);
            sink_write(s, "\n", 1);
            local_free(&l);
        }
        pc_merged_free(&m);
    }
    free(order);
    free(main_of);
    free(mperm);
    free(mfirst);
    return st;
}
