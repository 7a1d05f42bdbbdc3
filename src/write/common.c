/* What the writers share: frames merged for the Firefox formats, the
 * thread to show first, the profile's title, heap values. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/sort.h"
#include "write/write.h"

void pc_merged_free(pc_merged *m)
{
    free(m->gf_of_frame);
    free(m->gf_func);
    free(m->gf_line);
    free(m->gf_cat);
    free(m->gf_sub);
    free(m->gs_of_stack);
    free(m->own_prefix);
    free(m->own_frame);
    memset(m, 0, sizeof *m);
}

/* Whether no two model stacks merge: stacks of one prefix never have
 * frames that merge into one.  Then each model stack is a merged stack
 * of its own, with its id (parents first, each new), and no second tree
 * is needed.  Only siblings can collide.  A stack whose prefix is the
 * stack just before it is its prefix's first child (children come after
 * their prefix), and in trees where this check matters (paths that part
 * and never meet again) most stacks are such a child.  So every other
 * stack gives a key, (prefix, merged frame), in one pass; sorted, the
 * keys of one prefix lie side by side, where two equal ones are a merge,
 * and each prefix with keys has its first child's frame looked up among
 * them.  Sorted rather than hashed, the keys are read in sweeps instead
 * of a cache miss each.  For 1M samples each on a new path (27.8M
 * stacks, 1.0M keys) the check took about 60 ms, where counting every
 * stack's children first, in a byte a stack, took 190-210 ms.  1, 0, or
 * -1 when out of memory. */
static int merges_none(const pc_profile *p, const pc_merged *m)
{
    size_t ns = p->stack.n, n_key = 0, cap = 0;
    const uint32_t *prefix = p->stack.prefix, *frame = p->stack.frame;
    uint64_t *key = NULL, n_gf = m->n_gf;
    /* The root's children stand under prefix ns. */
    for (size_t s = 0; s < ns; s++) {
        uint32_t pre = prefix[s];
        if (pre != PC_NONE && (size_t)pre + 1 == s)
            continue;
        if (n_key == cap && pc_grow(&key, &cap, n_key + 1, sizeof *key, 1 << 12) < 0) {
            free(key);
            return -1;
        }
        key[n_key++] = (uint64_t)(pre == PC_NONE ? ns : pre) * n_gf + m->gf_of_frame[frame[s]];
    }
    if (pc_sort_u64(key, n_key, (uint64_t)ns * n_gf + n_gf - 1) < 0) {
        free(key);
        return -1;
    }
    int none = 1;
    for (size_t i = 0; i < n_key && none;) {
        uint64_t pre = key[i] / n_gf, end = (pre + 1) * n_gf;
        size_t j = i + 1;
        for (; j < n_key && key[j] < end; j++)
            none &= key[j] != key[j - 1];
        /* The first child, when the stack after the prefix is it. */
        if (pre + 1 < ns && prefix[pre + 1] == pre) {
            uint64_t first = pre * n_gf + m->gf_of_frame[frame[pre + 1]];
            for (size_t k = i; k < j; k++)
                none &= key[k] != first;
        }
        i = j;
    }
    free(key);
    return none;
}

int pc_merge(const pc_profile *p, pc_merged *m)
{
    pc_htab idx = {0};
    size_t nf = p->frame.n, ns = p->stack.n;
    int ok = 1;

    memset(m, 0, sizeof *m);
    m->gf_of_frame = malloc((nf + 1) * sizeof *m->gf_of_frame);
    m->gf_func = malloc((nf + 1) * sizeof *m->gf_func);
    m->gf_line = malloc((nf + 1) * sizeof *m->gf_line);
    m->gf_cat = malloc(nf + 1);
    m->gf_sub = malloc(nf + 1);
    if (!m->gf_of_frame || !m->gf_func || !m->gf_line || !m->gf_cat || !m->gf_sub ||
        pc_htab_reserve(&idx, nf) < 0)
        ok = 0;
    for (size_t f = 0; ok && f < nf; f++) {
        pc_probe pr;
        uint32_t func = p->frame.func[f], g, line = p->frame.line[f];
        uint8_t cat = p->frame.cat[f];
        uint8_t sub = (uint8_t)pc_subcategory(cat, p->frame.exec[f]);
        /* Frames at different source lines stay apart, for the source
         * view; without lines a function is one frame. */
        pc_probe_start(&idx, pc_mix64((uint64_t)func << 16 | (uint64_t)cat << 8 | sub) ^ line,
                       &pr);
        while ((g = pc_probe_next(&idx, &pr)) != PC_NONE)
            if (m->gf_func[g] == func && m->gf_cat[g] == cat && m->gf_sub[g] == sub &&
                m->gf_line[g] == line)
                break;
        if (g == PC_NONE) {
            g = (uint32_t)m->n_gf++;
            m->gf_func[g] = func;
            m->gf_line[g] = line;
            m->gf_cat[g] = cat;
            m->gf_sub[g] = sub;
            pc_htab_insert(&idx, &pr, g);
        }
        m->gf_of_frame[f] = g;
    }
    pc_htab_free(&idx);
    /* Where frames differ only in address along paths that never meet
     * again, the worst case for memory, no stacks merge: the second tree
     * and the map would be two thirds of the conversion's peak. */
    /* Stacks only merge where frames do: two model frames that are one
     * merged frame under one prefix. */
    int none = !ok ? -1 : m->n_gf == nf ? 1 : merges_none(p, m);
    if (none < 0)
        ok = 0;
    if (none == 1 && ns) {
        /* The model's stacks are the merged ones, read where they are. */
        m->n_gs = ns;
        m->gs_prefix = p->stack.prefix;
        m->gs_model_frame = p->stack.frame;
        return 0;
    }
    /* Model stacks come parents first, so each prefix is mapped already. */
    pc_stree tree;
    pc_stree_init(&tree);
    m->gs_of_stack = malloc((ns + 1) * sizeof *m->gs_of_stack);
    if (!m->gs_of_stack)
        ok = 0;
    for (size_t s = 0; ok && s < ns; s++) {
        uint32_t pre = p->stack.prefix[s];
        uint32_t gp = pre == PC_NONE ? PC_NONE : m->gs_of_stack[pre];
        uint32_t g = pc_stree_intern(&tree, gp, m->gf_of_frame[p->stack.frame[s]]);
        if (g == PC_NONE)
            ok = 0;
        m->gs_of_stack[s] = g;
    }
    /* The tree's node columns are the merged stacks; the rest goes. */
    m->gs_prefix = m->own_prefix = tree.prefix;
    m->gs_frame = m->own_frame = tree.frame;
    m->n_gs = tree.n;
    tree.prefix = tree.frame = NULL;
    if (ok && (!m->gs_prefix || !m->gs_frame)) {
        /* No stacks at all: empty columns still, for the writers. */
        free(m->own_prefix);
        free(m->own_frame);
        m->gs_prefix = m->own_prefix = malloc(sizeof *m->own_prefix);
        m->gs_frame = m->own_frame = malloc(sizeof *m->own_frame);
        ok = m->gs_prefix && m->gs_frame;
    }
    pc_stree_free(&tree);
    if (!ok)
        pc_merged_free(m);
    return ok ? 0 : -1;
}

void pc_jw_str_id(jw *w, const pc_profile *p, uint32_t id)
{
    jw_str(w, pc_str(&p->str, id), pc_str_len(&p->str, id));
}

void pc_format_hex(char *buf, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[16];
    size_t n = 0;
    do {
        tmp[n++] = digits[v & 15];
        v >>= 4;
    } while (v);
    buf[0] = '0';
    buf[1] = 'x';
    for (size_t i = 0; i < n; i++)
        buf[2 + i] = tmp[n - 1 - i];
    buf[2 + n] = 0;
}

void pc_jw_marker_data(jw *w, const pc_profile *p, uint32_t i)
{
    if (p->marker.type[i] == PC_MARK_SLICE) {
        jw_obj(w);
        jw_key(w, "type");
        jw_cstr(w, "TrackEvent");
        if (p->marker.s[i] != PC_NONE) {
            jw_key(w, "category");
            pc_jw_str_id(w, p, p->marker.s[i]);
        }
        jw_obj_end(w);
        return;
    }
    if (p->marker.type[i] != PC_MARK_UNWIND) {
        jw_raw(w, p->marker.type[i] == PC_MARK_OFFCPU ? "{\"type\":\"OffCPU\"}"
                                                        : "{\"type\":\"OnCPU\"}");
        return;
    }
    char addr[24];
    jw_obj(w);
    jw_key(w, "type");
    jw_cstr(w, "UnwindError");
    jw_key(w, "error");
    pc_jw_str_id(w, p, p->marker.s[i]);
    jw_key(w, "rawCode");
    jw_int(w, p->marker.a[i]);
    jw_key(w, "address");
    pc_format_hex(addr, p->marker.b[i]);
    jw_cstr(w, addr);
    jw_obj_end(w);
}

int pc_thread_span(const pc_profile *p, uint64_t **first, uint64_t **last)
{
    size_t nt = p->thread.n;
    *first = malloc((nt + 1) * sizeof **first);
    *last = calloc(nt + 1, sizeof **last);
    if (!*first || !*last) {
        free(*first);
        free(*last);
        *first = *last = NULL;
        return -1;
    }
    for (size_t t = 0; t < nt; t++)
        (*first)[t] = UINT64_MAX;
    if (p->sample.first) {
        /* Grouped: each thread's samples in time order, so its first and
         * last rows say it, without a pass over every sample. */
        for (size_t t = 0; t < nt; t++)
            if (p->sample.first[t + 1] > p->sample.first[t]) {
                (*first)[t] = pc_sample_time(p, p->sample.first[t]);
                (*last)[t] = pc_sample_time(p, p->sample.first[t + 1] - 1);
            }
    } else {
        for (size_t i = 0; i < p->sample.n; i++) {
            uint32_t t = pc_sample_thread(p, i);
            if (pc_sample_time(p, i) < (*first)[t])
                (*first)[t] = pc_sample_time(p, i);
            if (pc_sample_time(p, i) > (*last)[t])
                (*last)[t] = pc_sample_time(p, i);
        }
    }
    for (size_t i = 0; i < p->counter.n; i++) {
        uint32_t t = p->counter.thread[i];
        if (p->counter.time[i] < (*first)[t])
            (*first)[t] = p->counter.time[i];
        if (p->counter.time[i] > (*last)[t])
            (*last)[t] = p->counter.time[i];
    }
    for (size_t i = 0; i < p->marker.n; i++) {
        uint32_t t = p->marker.thread[i];
        if (p->marker.start[i] < (*first)[t])
            (*first)[t] = p->marker.start[i];
        if (p->marker.end[i] > (*last)[t])
            (*last)[t] = p->marker.end[i];
    }
    return 0;
}

uint32_t pc_process_label(const pc_profile *p, uint32_t t, uint32_t main)
{
    uint32_t name = pc_process_name(p, p->thread.pid[t]);
    if (name == PC_NONE && main != PC_NONE)
        name = p->thread.name[main];
    return name;
}

uint64_t pc_heap_value(const pc_profile *p, size_t i)
{
    switch (p->meta.heap_measure) {
    case PC_HEAP_ALLOCATED: return p->heap.alloc[i];
    case PC_HEAP_FREED: return p->heap.freed[i];
    }
    return p->heap.alloc[i] > p->heap.freed[i] ? p->heap.alloc[i] - p->heap.freed[i] : 0;
}

uint64_t pc_heap_count(const pc_profile *p, size_t i)
{
    switch (p->meta.heap_measure) {
    case PC_HEAP_ALLOCATED: return p->heap.alloc_count[i];
    case PC_HEAP_FREED: return p->heap.free_count[i];
    }
    return p->heap.alloc_count[i] > p->heap.free_count[i]
               ? p->heap.alloc_count[i] - p->heap.free_count[i] : 0;
}

int pc_is_time_event(const pc_profile *p, size_t e)
{
    return e < p->event.n && p->event.unit[e] == PC_UNIT_NS;
}

static int cmp_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

void pc_sort_stamped(uint32_t *ids, size_t n, const uint32_t *stamp_of, uint32_t stamp,
                     size_t universe)
{
    if (n * 8 < universe) {
        pc_qsort(ids, n, sizeof *ids, cmp_id);
        return;
    }
    size_t k = 0;
    for (size_t g = 0; g < universe && k < n; g++)
        if (stamp_of[g] == stamp)
            ids[k++] = (uint32_t)g;
}

/* Whether thread t's process is the app the recording names: its name is
 * the package, or the package cut to the 15 bytes of a kernel task name. */
static int is_app(const pc_profile *p, uint32_t t, const uint32_t *main_of)
{
    uint32_t app = p->meta.app_package, name = pc_process_label(p, t, main_of[t]);
    if (app == PC_NONE || name == PC_NONE)
        return 0;
    size_t an = pc_str_len(&p->str, app), nn = pc_str_len(&p->str, name);
    const char *a = pc_str(&p->str, app), *n = pc_str(&p->str, name);
    if (nn == an)
        return memcmp(a, n, nn) == 0;
    /* Kernel task names keep 15 bytes: the start of the name, or, as
     * Android names dotted ones, the end. */
    return nn >= 15 && nn < an && (memcmp(a, n, nn) == 0 || memcmp(a + an - nn, n, nn) == 0);
}

int pc_focus_thread(const pc_profile *p, const uint32_t *main_of, uint32_t *out)
{
    size_t nt = p->thread.n;
    /* A comparison is what its profile is for. */
    if ((*out = pc_diff_thread(p)) != PC_NONE)
        return 0;
    uint64_t *on = calloc(nt + 1, sizeof *on), *any = calloc(nt + 1, sizeof *any);
    *out = PC_NONE;
    if (!on || !any) {
        free(on);
        free(any);
        return -1;
    }
    /* Whether any sample can be off the CPU: an off-CPU event, or a frame
     * of that category (a leaf one marks its sample). */
    int off = 0;
    for (size_t e = 0; e < p->event.n && !off; e++)
        off = p->event.offcpu[e];
    for (size_t f = 0; f < p->frame.n && !off; f++)
        off = p->frame.cat[f] == PC_CAT_OFFCPU;
    int64_t w1;
    if (!off && p->sample.first && pc_sample_one_weight(p, &w1)) {
        /* Every sample on the CPU with one weight: counts by thread. */
        uint64_t w = w1 > 0 ? (uint64_t)w1 : 1;
        for (size_t t = 0; t < nt; t++) {
            uint64_t n = p->sample.first[t + 1] - p->sample.first[t];
            any[t] = n;
            on[t] = n > UINT64_MAX / w ? UINT64_MAX : n * w;
        }
    } else if (!off && p->sample.first) {
        /* Grouped, each thread's rows are one range: its weights are read
         * a block at a time, with no thread column. */
        uint64_t v[256];
        for (size_t t = 0; t < nt; t++)
            for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i += 256) {
                size_t m = p->sample.first[t + 1] - i < 256 ? p->sample.first[t + 1] - i : 256;
                pc_icol_read(&p->sample.weight, i, m, v);
                for (size_t k = 0; k < m; k++) {
                    uint64_t w = (int64_t)v[k] > 0 ? v[k] : 1;
                    on[t] = on[t] > UINT64_MAX - w ? UINT64_MAX : on[t] + w;
                }
                any[t] += m;
            }
    } else {
        for (size_t i = 0, t = 0; i < p->sample.n; i++) {
            if (!p->sample.first)
                t = pc_sample_thread(p, i);
            else
                while (i >= p->sample.first[t + 1])
                    t++;
            int64_t sw = pc_sample_weight(p, i);
            uint64_t w = sw > 0 ? (uint64_t)sw : 1;
            any[t]++;
            if (!off || !pc_sample_offcpu(p, i))
                on[t] = on[t] > UINT64_MAX - w ? UINT64_MAX : on[t] + w;
        }
    }
    /* Process 0 (the idle task, or samples that name no task) is the
     * focus only when no other process has samples. */
    int others = 0;
    for (size_t t = 0; t < nt; t++)
        others |= p->thread.pid[t] != 0 && any[t];
    for (size_t t = 0; t < nt && others; t++)
        if (p->thread.pid[t] == 0)
            on[t] = any[t] = 0;
    for (size_t i = 0; i < p->heap.n; i++)
        any[p->heap.thread[i]] += pc_heap_shown(p, i) && pc_heap_value(p, i);
    for (size_t i = 0; i < p->counter.n; i++)
        any[p->counter.thread[i]] += p->counter.value[i] != 0;
    for (size_t i = 0; i < p->marker.n; i++)
        any[p->marker.thread[i]] += p->marker.type[i] == PC_MARK_SLICE;
    uint32_t app = PC_NONE, busiest = PC_NONE, most = PC_NONE;
    for (size_t t = 0; t < nt; t++) {
        if (on[t] && p->thread.tid[t] == p->thread.pid[t] && app == PC_NONE &&
            is_app(p, (uint32_t)t, main_of))
            app = (uint32_t)t;
        if (on[t] && (busiest == PC_NONE || on[t] > on[busiest]))
            busiest = (uint32_t)t;
        if (any[t] && (most == PC_NONE || any[t] > any[most]))
            most = (uint32_t)t;
    }
    *out = app != PC_NONE ? app : busiest != PC_NONE ? busiest : most;
    free(on);
    free(any);
    return 0;
}

/* Appends printf-style text to buf, which holds *used bytes of size. */
static void append(char *buf, size_t size, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    va_list ap;
    if (*used + 1 >= size)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used = *used + (size_t)n < size ? *used + (size_t)n : size - 1;
}

void pc_events_label(const pc_profile *p, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    if (!p->event.n || !p->sample.n)
        return;
    if (!p->meta.kept_events_all) {
        append(buf, size, &used, "%s", pc_str(&p->str, p->event.name[p->meta.kept_event]));
        return;
    }
    const char *sep = p->meta.offcpu_mode == PC_OFFCPU_MIXED ? " + " : ", ";
    for (size_t e = 0; e < p->event.n; e++)
        append(buf, size, &used, "%s%s", e ? sep : "", pc_str(&p->str, p->event.name[e]));
}

int pc_title(const pc_profile *p, const uint32_t *main_of, uint32_t focus, char *buf,
             size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    uint32_t subject = p->meta.app_package;
    if (subject == PC_NONE && focus != PC_NONE)
        subject = pc_process_label(p, focus, main_of[focus]);
    if (subject != PC_NONE) {
        append(buf, size, &used, "%s", pc_str(&p->str, subject));
    } else if (focus != PC_NONE) {
        append(buf, size, &used, "process %" PRId64, p->thread.pid[focus]);
    } else {
        append(buf, size, &used, "profile");
    }
    /* Other processes with samples, when the title names one process. */
    if (p->meta.app_package == PC_NONE && focus != PC_NONE) {
        size_t others = 0;
        int64_t *pids = NULL;
        size_t n = 0;
        pc_error e;
        if (pc_profile_pids(p, &pids, &n, &e) != PC_OK)
            return -1;
        for (size_t k = 0; k < n; k++)
            others += pids[k] != p->thread.pid[focus];
        free(pids);
        if (others)
            append(buf, size, &used, " and %zu other process%s", others,
                   others == 1 ? "" : "es");
    }
    char events[256];
    pc_events_label(p, events, sizeof events);
    const char *source = p->meta.source != PC_NONE ? pc_str(&p->str, p->meta.source) : NULL;
    if (!source && !events[0] && !p->heap.n)
        return 0;
    append(buf, size, &used, " (");
    if (source)
        append(buf, size, &used, "%s%s", source, events[0] || p->heap.n ? ": " : "");
    if (events[0])
        append(buf, size, &used, "%s%s", events, p->heap.n ? "; " : "");
    if (p->heap.n)
        append(buf, size, &used, "heap, %s bytes", pc_heap_measure_name(p));
    append(buf, size, &used, ")");
    return 0;
}
