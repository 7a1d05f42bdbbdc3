/* One profile from several (pc_profile_append): strings, resources,
 * functions, frames and stacks are re-interned in the destination, and
 * every row follows its thread.  Processes stay apart: a pid the
 * destination holds already is moved by a multiple of PC_PID_SPAN, so the
 * original still reads in its last digits. */
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "model/model.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int has_pid(const int64_t *sorted, size_t n, int64_t pid)
{
    return n && bsearch(&pid, sorted, n, sizeof *sorted, cmp_i64) != NULL;
}

/* A string of src in dst; PC_NONE stays. */
static uint32_t str_in(pc_profile *dst, const pc_profile *src, uint32_t *map, uint32_t id)
{
    if (id == PC_NONE || id >= src->str.n)
        return PC_NONE;
    if (map[id] == PC_NONE)
        map[id] = pc_intern(dst, pc_str(&src->str, id), pc_str_len(&src->str, id));
    return map[id];
}

/* "LABEL: name". */
static uint32_t labelled(pc_profile *dst, const char *label, const char *name, size_t n)
{
    size_t ln = strlen(label);
    char *buf = malloc(ln + 2 + n + 1);
    if (!buf) {
        dst->oom = 1;
        return PC_NONE;
    }
    memcpy(buf, label, ln);
    memcpy(buf + ln, ": ", 2);
    memcpy(buf + ln + 2, name, n);
    uint32_t id = pc_intern(dst, buf, ln + 2 + n);
    free(buf);
    return id;
}

int pc_label_processes(pc_profile *p, const char *label, size_t first_thread)
{
    /* Each process once: by its name, else its main thread's, else its
     * first thread's. */
    for (size_t t = first_thread; t < p->thread.n && !p->oom; t++) {
        int64_t pid = p->thread.pid[t];
        int seen = 0;
        for (size_t u = first_thread; u < t && !seen; u++)
            seen = p->thread.pid[u] == pid;
        if (seen)
            continue;
        uint32_t name = pc_process_name(p, pid);
        for (size_t u = t; u < p->thread.n && name == PC_NONE; u++)
            if (p->thread.pid[u] == pid && p->thread.tid[u] == pid)
                name = p->thread.name[u];
        if (name == PC_NONE)
            name = p->thread.name[t];
        const char *s = name == PC_NONE ? "" : pc_str(&p->str, name);
        size_t n = name == PC_NONE ? 0 : pc_str_len(&p->str, name);
        uint32_t l = labelled(p, label, s, n);
        if (l != PC_NONE)
            pc_set_process_name(p, pid, l);
    }
    /* A process's track in the Firefox Profiler bears its main thread's
     * name: that one says the input too. */
    for (size_t t = first_thread; t < p->thread.n && !p->oom; t++) {
        if (p->thread.tid[t] != p->thread.pid[t] || p->thread.name[t] == PC_NONE)
            continue;
        uint32_t l = labelled(p, label, pc_str(&p->str, p->thread.name[t]),
                              pc_str_len(&p->str, p->thread.name[t]));
        if (l != PC_NONE)
            p->thread.name[t] = l;
    }
    return p->oom ? -1 : 0;
}

int pc_profile_append(pc_profile *dst, const pc_profile *src, const char *label, uint64_t shift,
                      int64_t pid_step)
{
    size_t nt0 = dst->thread.n, nh0 = dst->heap.n_dumps;
    uint32_t *smap = malloc((src->str.n + 1) * sizeof *smap);
    uint32_t *rmap = malloc((src->res.n + 1) * sizeof *rmap);
    uint32_t *fnmap = malloc((src->func.n + 1) * sizeof *fnmap);
    uint32_t *frmap = malloc((src->frame.n + 1) * sizeof *frmap);
    uint32_t *stmap = malloc((src->stack.n + 1) * sizeof *stmap);
    uint32_t *thmap = malloc((src->thread.n + 1) * sizeof *thmap);
    uint16_t *evmap = malloc((src->event.n + 1) * sizeof *evmap);
    int64_t *pids = malloc((dst->thread.n + 1) * sizeof *pids);
    int st = -1;
    if (!smap || !rmap || !fnmap || !frmap || !stmap || !thmap || !evmap || !pids)
        goto out;
    memset(smap, 0xff, (src->str.n + 1) * sizeof *smap);
#define S(id) str_in(dst, src, smap, (id))
    for (size_t i = 0; i < src->res.n; i++) {
        rmap[i] = pc_resource(dst, S(src->res.name[i]));
        /* A file two inputs share keeps the first input's build id. */
        if (rmap[i] != PC_NONE && src->res.build[i] != PC_NONE &&
            dst->res.build[rmap[i]] == PC_NONE)
            dst->res.build[rmap[i]] = S(src->res.build[i]);
    }
    for (size_t i = 0; i < src->func.n; i++) {
        uint32_t r = src->func.res[i];
        fnmap[i] = pc_func(dst, S(src->func.name[i]), r == PC_NONE ? PC_NONE : rmap[r]);
        if (fnmap[i] != PC_NONE && src->func.file[i] != PC_NONE &&
            dst->func.file[fnmap[i]] == PC_NONE)
            dst->func.file[fnmap[i]] = S(src->func.file[i]);
    }
    for (size_t i = 0; i < src->frame.n && !dst->oom; i++) {
        uint32_t fn = src->frame.func[i];
        frmap[i] = pc_add_frame(dst, fn == PC_NONE ? PC_NONE : fnmap[fn], src->frame.addr[i],
                                src->frame.cat[i], src->frame.exec[i]);
        if (frmap[i] != PC_NONE) {
            dst->frame.unnamed[frmap[i]] = src->frame.unnamed[i];
            dst->frame.line[frmap[i]] = src->frame.line[i];
        }
    }
    /* A node's prefix comes before it. */
    for (size_t i = 0; i < src->stack.n && !dst->oom; i++) {
        uint32_t pre = src->stack.prefix[i];
        stmap[i] = pc_stack(dst, pre == PC_NONE ? PC_NONE : stmap[pre],
                            frmap[src->stack.frame[i]]);
    }
    for (size_t e = 0; e < src->event.n && !dst->oom; e++) {
        uint32_t id = pc_event(dst, S(src->event.name[e]), src->event.unit[e],
                               src->event.offcpu[e]);
        evmap[e] = id == PC_NONE ? 0 : (uint16_t)id;
    }
    if (dst->oom)
        goto out;
    /* Pids of the destination, to keep the new processes apart from. */
    for (size_t t = 0; t < nt0; t++)
        pids[t] = dst->thread.pid[t];
    qsort(pids, nt0, sizeof *pids, cmp_i64);
    for (size_t t = 0; t < src->thread.n; t++) {
        int64_t pid = src->thread.pid[t], tid = src->thread.tid[t];
        /* Wrapping arithmetic: an input may give any 64-bit id. */
        int64_t to = pid;
        while (pid_step && has_pid(pids, nt0, to))
            to = (int64_t)((uint64_t)to + (uint64_t)pid_step);
        thmap[t] = pc_add_thread(dst, to, tid == pid ? to : tid,
                                 S(src->thread.name[t]));
        if (thmap[t] == PC_NONE)
            goto out;
        dst->thread.diff[thmap[t]] = src->thread.diff[t];
        uint32_t pname = pc_process_name(src, pid);
        if (pname != PC_NONE)
            pc_set_process_name(dst, to, S(pname));
    }
    for (size_t i = 0; i < src->sample.n && !dst->oom; i++) {
        uint32_t s = src->sample.stack[i];
        uint16_t e = pc_sample_event(src, i);
        pc_add_sample(dst, thmap[pc_sample_thread(src, i)], pc_sample_time(src, i) + shift,
                      s == PC_NONE ? PC_NONE : stmap[s], pc_sample_weight(src, i),
                      e < src->event.n ? evmap[e] : e, pc_sample_cpu(src, i));
    }
    dst->sample.read += src->sample.read;
    for (size_t i = 0; i < src->heap.n && !dst->oom; i++) {
        uint32_t s = src->heap.stack[i];
        pc_add_heap(dst, thmap[src->heap.thread[i]], S(src->heap.heap[i]),
                    (uint32_t)(src->heap.dump[i] + nh0),
                    src->heap.time[i] + shift,
                    s == PC_NONE ? PC_NONE : stmap[s], src->heap.alloc[i], src->heap.freed[i],
                    src->heap.alloc_count[i], src->heap.free_count[i]);
    }
    if (src->heap.n_dumps && (dst->heap.shown_dump || src->heap.shown_dump)) {
        size_t n = nh0 + src->heap.n_dumps;
        uint8_t *shown = realloc(dst->heap.shown_dump, n + 1);
        if (!shown)
            goto out;
        if (!dst->heap.shown_dump)
            memset(shown, 1, nh0);
        for (size_t d = 0; d < src->heap.n_dumps; d++)
            shown[nh0 + d] = src->heap.shown_dump ? src->heap.shown_dump[d] : 1;
        dst->heap.shown_dump = shown;
    }
    dst->heap.n_dumps = nh0 + src->heap.n_dumps;
    for (size_t i = 0; i < src->counter.n && !dst->oom; i++) {
        uint16_t e = src->counter.event[i];
        pc_add_counter(dst, thmap[src->counter.thread[i]], src->counter.time[i] + shift,
                       e < src->event.n ? evmap[e] : e, src->counter.cpu[i],
                       src->counter.value[i]);
    }
    for (size_t i = 0; i < src->sw.n && !dst->oom; i++)
        pc_add_switch(dst, thmap[src->sw.thread[i]],
                      src->sw.time[i] + shift, src->sw.on[i]);
    for (size_t i = 0; i < src->marker.n && !dst->oom; i++) {
        uint32_t s = src->marker.s[i];
        /* Only an unwinding error's s (its name) and a slice's (its
         * category) are strings. */
        if (src->marker.type[i] == PC_MARK_UNWIND ||
            (src->marker.type[i] == PC_MARK_SLICE && s != PC_NONE))
            s = S(s);
        pc_add_marker(dst, thmap[src->marker.thread[i]], src->marker.type[i],
                      S(src->marker.name[i]), src->marker.start[i] + shift,
                      src->marker.end[i] + shift, s, src->marker.a[i],
                      src->marker.b[i]);
    }
    if (src->meta.object_heap != PC_NONE) {
        dst->meta.object_heap = S(src->meta.object_heap);
        dst->meta.object_retained = src->meta.object_retained;
    }
    if (src->meta.has_lost) {
        dst->meta.has_lost = 1;
        dst->meta.lost_count += src->meta.lost_count;
        dst->meta.lost_sample_count += src->meta.lost_sample_count;
    }
    dst->depth.cut += src->depth.cut;
    if (src->depth.deepest > dst->depth.deepest)
        dst->depth.deepest = src->depth.deepest;
    if (src->meta.has_time) {
        pc_saw_time(dst, src->meta.first_time + shift);
        pc_saw_time(dst, src->meta.last_time + shift);
    }
#undef S
    if (!dst->oom && label && pc_label_processes(dst, label, nt0) < 0)
        goto out;
    st = dst->oom ? -1 : 0;
out:
    free(smap);
    free(rmap);
    free(fnmap);
    free(frmap);
    free(stmap);
    free(thmap);
    free(evmap);
    free(pids);
    if (st < 0)
        dst->oom = 1;
    return st;
}
