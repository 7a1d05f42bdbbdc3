#include "model/model.h"

#include <stdlib.h>
#include <string.h>

static const char *const sub_other[] = {"Other"};
static const char *const sub_java[] = {"Other", "Interpreted", "JIT", "AOT"};
static const char *const sub_native[] = {"Other", "ART"};
static const char *const sub_offcpu[] = {"Off-CPU"};
#define SUBS(x) x, (int)(sizeof x / sizeof *x)

const pc_category_info pc_categories[PC_CAT_COUNT] = {
    [PC_CAT_USER] = {"User", "yellow", SUBS(sub_other)},
    [PC_CAT_KERNEL] = {"Kernel", "orange", SUBS(sub_other)},
    [PC_CAT_NATIVE] = {"Native", "yellow", SUBS(sub_native)},
    [PC_CAT_DEX] = {"DEX", "green", SUBS(sub_java)},
    [PC_CAT_OAT] = {"OAT", "green", SUBS(sub_java)},
    /* Off-CPU time.  The Firefox Profiler knows a category named "Idle":
     * it leaves it out of the activity graph (which then shows the CPU
     * use), draws it lighter in the stack graphs, and offers "Include idle
     * samples" to see the on-CPU call tree alone; its subcategory says why
     * the thread was idle. */
    [PC_CAT_OFFCPU] = {"Idle", "transparent", SUBS(sub_offcpu)},
    /* The Firefox Profiler falls back to the first grey category. */
    [PC_CAT_OTHER] = {"Other", "grey", SUBS(sub_other)},
    [PC_CAT_JIT] = {"JIT", "green", SUBS(sub_java)},
};

int pc_grow_cols(size_t *cap, size_t need, const struct pc_col *cols, int n)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 256;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 16)
            return -1;
        ncap *= 2;
    }
    for (int i = 0; i < n; i++) {
        void *q = realloc(*cols[i].p, ncap * cols[i].size);
        if (!q)
            return -1;
        *cols[i].p = q;
    }
    *cap = ncap;
    return 0;
}

pc_profile *pc_profile_new(void)
{
    pc_profile *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->meta.source = p->meta.app_package = p->meta.app_type = PC_NONE;
    p->meta.sdk_version = p->meta.build_type = p->meta.empty_hint = PC_NONE;
    p->meta.kept_events_all = 1;
    pc_stree_init(&p->stack);
    return p;
}

void pc_profile_free(pc_profile *p)
{
    if (!p)
        return;
    pc_strtab_free(&p->str);
    free(p->res.name);
    free(p->res.build);
    pc_htab_free(&p->res.idx);
    free(p->func.name);
    free(p->func.res);
    pc_htab_free(&p->func.idx);
    free(p->frame.func);
    free(p->frame.addr);
    free(p->frame.cat);
    free(p->frame.exec);
    pc_stree_free(&p->stack);
    free(p->thread.pid);
    free(p->thread.tid);
    free(p->thread.name);
    free(p->sample.thread);
    free(p->sample.stack);
    free(p->sample.time);
    free(p->sample.weight);
    free(p->sample.event);
    free(p->sample.cpu);
    free(p->proc.pid);
    free(p->proc.name);
    pc_htab_free(&p->proc.idx);
    free(p->heap.thread);
    free(p->heap.stack);
    free(p->heap.heap);
    free(p->heap.dump);
    free(p->heap.time);
    free(p->heap.alloc);
    free(p->heap.freed);
    free(p->heap.alloc_count);
    free(p->heap.free_count);
    free(p->heap.shown_dump);
    free(p->sample.first);
    free(p->sw.thread);
    free(p->sw.time);
    free(p->sw.on);
    free(p->marker.thread);
    free(p->marker.name);
    free(p->marker.s);
    free(p->marker.start);
    free(p->marker.end);
    free(p->marker.a);
    free(p->marker.b);
    free(p->marker.type);
    free(p->event.name);
    free(p->event.unit);
    free(p->event.offcpu);
    free(p);
}

static uint32_t oom(pc_profile *p)
{
    p->oom = 1;
    return PC_NONE;
}

uint32_t pc_intern(pc_profile *p, const void *s, size_t len)
{
    if (p->oom)
        return PC_NONE;
    uint32_t id = pc_str_intern(&p->str, s, len);
    return id == PC_NONE ? oom(p) : id;
}

uint32_t pc_intern_cstr(pc_profile *p, const char *s)
{
    return pc_intern(p, s, strlen(s));
}

uint32_t pc_event(pc_profile *p, uint32_t name, int unit, int offcpu)
{
    if (p->oom || name == PC_NONE)
        return PC_NONE;
    /* Recordings name a handful of events: a scan is enough. */
    for (size_t e = 0; e < p->event.n; e++)
        if (p->event.name[e] == name)
            return (uint32_t)e;
    return pc_event_append(p, name, unit, offcpu);
}

uint32_t pc_event_append(pc_profile *p, uint32_t name, int unit, int offcpu)
{
    if (p->oom || name == PC_NONE || p->event.n >= PC_MAX_EVENTS)
        return PC_NONE;
    struct pc_col cols[] = {PC_COL(p->event.name), PC_COL(p->event.unit),
                            PC_COL(p->event.offcpu)};
    if (pc_grow_cols(&p->event.cap, p->event.n + 1, cols, 3) < 0)
        return oom(p);
    size_t e = p->event.n++;
    p->event.name[e] = name;
    p->event.unit[e] = (uint8_t)unit;
    p->event.offcpu[e] = offcpu != 0;
    return (uint32_t)e;
}

int pc_perf_clock_event(const char *name)
{
    size_t n = strcspn(name, ":");
    return (n == 9 && memcmp(name, "cpu-clock", 9) == 0) ||
           (n == 10 && memcmp(name, "task-clock", 10) == 0);
}

int pc_has_offcpu_events(const pc_profile *p)
{
    for (size_t e = 0; e < p->event.n; e++)
        if (p->event.offcpu[e])
            return 1;
    return 0;
}

uint32_t pc_resource(pc_profile *p, uint32_t name)
{
    pc_probe pr;
    if (p->oom || pc_htab_reserve(&p->res.idx, p->res.n + 1) < 0)
        return oom(p);
    pc_probe_start(&p->res.idx, pc_mix64(name), &pr);
    for (uint32_t id; (id = pc_probe_next(&p->res.idx, &pr)) != PC_NONE;)
        if (p->res.name[id] == name)
            return id;
    struct pc_col cols[] = {PC_COL(p->res.name), PC_COL(p->res.build)};
    if (pc_grow_cols(&p->res.cap, p->res.n + 1, cols, 2) < 0)
        return oom(p);
    uint32_t id = (uint32_t)p->res.n++;
    p->res.name[id] = name;
    p->res.build[id] = PC_NONE;
    pc_htab_insert(&p->res.idx, &pr, id);
    return id;
}

uint32_t pc_func(pc_profile *p, uint32_t name, uint32_t res)
{
    pc_probe pr;
    if (p->oom || pc_htab_reserve(&p->func.idx, p->func.n + 1) < 0)
        return oom(p);
    pc_probe_start(&p->func.idx, pc_mix64((uint64_t)name << 32 | res), &pr);
    for (uint32_t id; (id = pc_probe_next(&p->func.idx, &pr)) != PC_NONE;)
        if (p->func.name[id] == name && p->func.res[id] == res)
            return id;
    struct pc_col cols[] = {PC_COL(p->func.name), PC_COL(p->func.res)};
    if (pc_grow_cols(&p->func.cap, p->func.n + 1, cols, 2) < 0)
        return oom(p);
    uint32_t id = (uint32_t)p->func.n++;
    p->func.name[id] = name;
    p->func.res[id] = res;
    pc_htab_insert(&p->func.idx, &pr, id);
    return id;
}

uint32_t pc_add_frame(pc_profile *p, uint32_t func, uint64_t addr,
                      uint8_t cat, uint8_t exec)
{
    struct pc_col cols[] = {PC_COL(p->frame.func), PC_COL(p->frame.addr),
                            PC_COL(p->frame.cat), PC_COL(p->frame.exec)};
    if (p->oom || p->frame.n >= PC_NONE - 1 ||
        pc_grow_cols(&p->frame.cap, p->frame.n + 1, cols, 4) < 0)
        return oom(p);
    uint32_t id = (uint32_t)p->frame.n++;
    p->frame.func[id] = func;
    p->frame.addr[id] = addr;
    p->frame.cat[id] = cat;
    p->frame.exec[id] = exec;
    return id;
}

/* A stack's children are found through a list while they are few, and
 * through the hash table once they are many: most stacks have one child
 * or none, and a list makes adding a child to a new stack (a sample's
 * path that is new below some point) cost no hash table miss. */
#define STACK_LIST_MAX 16
#define STACK_HASHED (PC_NONE - 1)  /* head value: children are hashed */

static uint64_t stack_key(uint32_t prefix, uint32_t frame)
{
    return pc_mix64((uint64_t)prefix << 32 | frame);
}

static int stack_hash_add(pc_stree *t, uint32_t id)
{
    pc_probe pr;
    if (pc_htab_reserve(&t->idx, t->n_hashed + 1) < 0)
        return -1;
    pc_probe_start(&t->idx, stack_key(t->prefix[id], t->frame[id]), &pr);
    while (pc_probe_next(&t->idx, &pr) != PC_NONE)
        ;
    pc_htab_insert(&t->idx, &pr, id);
    t->n_hashed++;
    return 0;
}

void pc_stree_init(pc_stree *t)
{
    memset(t, 0, sizeof *t);
    t->root_child = t->root_head = PC_NONE;
}

void pc_stree_free(pc_stree *t)
{
    free(t->prefix);
    free(t->frame);
    free(t->child);
    free(t->head);
    free(t->next);
    pc_htab_free(&t->idx);
    pc_stree_init(t);
}

uint32_t pc_stree_intern(pc_stree *t, uint32_t prefix, uint32_t frame)
{
    if (prefix != PC_NONE && prefix >= t->n)
        return PC_NONE;
    uint32_t last = prefix == PC_NONE ? t->root_child : t->child[prefix];
    if (last != PC_NONE && t->frame[last] == frame)
        return last;
    uint32_t head = prefix == PC_NONE ? t->root_head : t->head[prefix];
    uint32_t found = PC_NONE;
    size_t listed = 0;
    if (head == STACK_HASHED) {
        pc_probe pr;
        pc_probe_start(&t->idx, stack_key(prefix, frame), &pr);
        for (uint32_t id; (id = pc_probe_next(&t->idx, &pr)) != PC_NONE;)
            if (t->prefix[id] == prefix && t->frame[id] == frame) {
                found = id;
                break;
            }
    } else {
        for (uint32_t c = head; c != PC_NONE; c = t->next[c], listed++)
            if (t->frame[c] == frame) {
                found = c;
                break;
            }
    }
    if (found == PC_NONE) {
        if (t->n >= PC_NONE - 2)
            return PC_NONE;
        struct pc_col cols[] = {PC_COL(t->prefix), PC_COL(t->frame), PC_COL(t->child),
                                PC_COL(t->head), PC_COL(t->next)};
        if (pc_grow_cols(&t->cap, t->n + 1, cols, 5) < 0)
            return PC_NONE;
        found = (uint32_t)t->n++;
        t->prefix[found] = prefix;
        t->frame[found] = frame;
        t->child[found] = PC_NONE;
        t->head[found] = PC_NONE;
        t->next[found] = PC_NONE;
        if (head == STACK_HASHED) {
            if (stack_hash_add(t, found) < 0)
                return PC_NONE;
        } else if (listed + 1 > STACK_LIST_MAX) {
            /* Many children: from now on they are hashed. */
            t->next[found] = head;
            for (uint32_t c = found; c != PC_NONE; c = t->next[c])
                if (stack_hash_add(t, c) < 0)
                    return PC_NONE;
            head = STACK_HASHED;
        } else {
            t->next[found] = head;
            head = found;
        }
        if (prefix == PC_NONE)
            t->root_head = head;
        else
            t->head[prefix] = head;
    }
    if (prefix == PC_NONE)
        t->root_child = found;
    else
        t->child[prefix] = found;
    return found;
}

uint32_t pc_stack(pc_profile *p, uint32_t prefix, uint32_t frame)
{
    if (p->oom)
        return PC_NONE;
    uint32_t id = pc_stree_intern(&p->stack, prefix, frame);
    return id == PC_NONE ? oom(p) : id;
}

uint32_t pc_add_thread(pc_profile *p, int64_t pid, int64_t tid, uint32_t name)
{
    struct pc_col cols[] = {PC_COL(p->thread.pid), PC_COL(p->thread.tid),
                            PC_COL(p->thread.name)};
    if (p->oom || p->thread.n >= PC_NONE - 1 ||
        pc_grow_cols(&p->thread.cap, p->thread.n + 1, cols, 3) < 0)
        return oom(p);
    uint32_t id = (uint32_t)p->thread.n++;
    p->thread.pid[id] = pid;
    p->thread.tid[id] = tid;
    p->thread.name[id] = name;
    return id;
}

static uint32_t find_proc(const pc_profile *p, int64_t pid, pc_probe *pr)
{
    pc_probe_start(&p->proc.idx, pc_mix64((uint64_t)pid), pr);
    for (uint32_t id; (id = pc_probe_next(&p->proc.idx, pr)) != PC_NONE;)
        if (p->proc.pid[id] == pid)
            return id;
    return PC_NONE;
}

void pc_set_process_name(pc_profile *p, int64_t pid, uint32_t name)
{
    pc_probe pr;
    if (p->oom || pc_htab_reserve(&p->proc.idx, p->proc.n + 1) < 0) {
        oom(p);
        return;
    }
    uint32_t id = find_proc(p, pid, &pr);
    if (id != PC_NONE) {
        p->proc.name[id] = name;
        return;
    }
    struct pc_col cols[] = {PC_COL(p->proc.pid), PC_COL(p->proc.name)};
    if (pc_grow_cols(&p->proc.cap, p->proc.n + 1, cols, 2) < 0) {
        oom(p);
        return;
    }
    id = (uint32_t)p->proc.n++;
    p->proc.pid[id] = pid;
    p->proc.name[id] = name;
    pc_htab_insert(&p->proc.idx, &pr, id);
}

uint32_t pc_process_name(const pc_profile *p, int64_t pid)
{
    pc_probe pr;
    if (!p->proc.n)
        return PC_NONE;
    uint32_t id = find_proc(p, pid, &pr);
    return id == PC_NONE ? PC_NONE : p->proc.name[id];
}

void pc_add_sample(pc_profile *p, uint32_t thread, uint64_t time,
                   uint32_t stack, int64_t weight, uint16_t event, uint16_t cpu)
{
    struct pc_col cols[] = {PC_COL(p->sample.thread), PC_COL(p->sample.stack),
                            PC_COL(p->sample.time), PC_COL(p->sample.weight),
                            PC_COL(p->sample.event), PC_COL(p->sample.cpu)};
    if (p->oom || pc_grow_cols(&p->sample.cap, p->sample.n + 1, cols, 6) < 0) {
        oom(p);
        return;
    }
    size_t i = p->sample.n++;
    p->sample.thread[i] = thread;
    p->sample.stack[i] = stack;
    p->sample.time[i] = time;
    p->sample.weight[i] = weight;
    p->sample.event[i] = event;
    p->sample.cpu[i] = cpu;
}

void pc_add_heap(pc_profile *p, uint32_t thread, uint32_t heap, uint32_t dump,
                 uint64_t time, uint32_t stack, uint64_t alloc, uint64_t freed,
                 uint64_t alloc_count, uint64_t free_count)
{
    struct pc_col cols[] = {PC_COL(p->heap.thread), PC_COL(p->heap.stack),
                            PC_COL(p->heap.heap), PC_COL(p->heap.dump),
                            PC_COL(p->heap.time), PC_COL(p->heap.alloc),
                            PC_COL(p->heap.freed), PC_COL(p->heap.alloc_count),
                            PC_COL(p->heap.free_count)};
    if (p->oom || pc_grow_cols(&p->heap.cap, p->heap.n + 1, cols, 9) < 0) {
        oom(p);
        return;
    }
    size_t i = p->heap.n++;
    p->heap.thread[i] = thread;
    p->heap.heap[i] = heap;
    p->heap.dump[i] = dump;
    p->heap.time[i] = time;
    p->heap.stack[i] = stack;
    p->heap.alloc[i] = alloc;
    p->heap.freed[i] = freed;
    p->heap.alloc_count[i] = alloc_count;
    p->heap.free_count[i] = free_count;
}

void pc_add_switch(pc_profile *p, uint32_t thread, uint64_t time, int on)
{
    struct pc_col cols[] = {PC_COL(p->sw.thread), PC_COL(p->sw.time),
                            PC_COL(p->sw.on)};
    if (p->oom || pc_grow_cols(&p->sw.cap, p->sw.n + 1, cols, 3) < 0) {
        oom(p);
        return;
    }
    size_t i = p->sw.n++;
    p->sw.thread[i] = thread;
    p->sw.time[i] = time;
    p->sw.on[i] = (uint8_t)(on != 0);
}

void pc_add_marker(pc_profile *p, uint32_t thread, uint8_t type,
                   uint32_t name, uint64_t start, uint64_t end, uint32_t s,
                   int64_t a, uint64_t b)
{
    struct pc_col cols[] = {PC_COL(p->marker.thread), PC_COL(p->marker.name),
                            PC_COL(p->marker.s),
                            PC_COL(p->marker.start), PC_COL(p->marker.end),
                            PC_COL(p->marker.a), PC_COL(p->marker.b),
                            PC_COL(p->marker.type)};
    if (p->oom || pc_grow_cols(&p->marker.cap, p->marker.n + 1, cols, 8) < 0) {
        oom(p);
        return;
    }
    size_t i = p->marker.n++;
    p->marker.thread[i] = thread;
    p->marker.type[i] = type;
    p->marker.name[i] = name;
    p->marker.start[i] = start;
    p->marker.end[i] = end;
    p->marker.s[i] = s;
    p->marker.a[i] = a;
    p->marker.b[i] = b;
}

/* Reorders one column by perm (new row i takes old row perm[i]). */
static void permute(void *col, size_t size, const uint32_t *perm, size_t n,
                    void *scratch)
{
    unsigned char *src = col, *dst = scratch;
    if (!n)
        return;
    for (size_t i = 0; i < n; i++)
        memcpy(dst + i * size, src + (size_t)perm[i] * size, size);
    memcpy(src, dst, n * size);
}

/* Stable merge sort of sample indices by time; tmp holds n indices. */
static void sort_by_time(uint32_t *idx, uint32_t *tmp, size_t n,
                         const uint64_t *time)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_by_time(idx, tmp, h, time);
    sort_by_time(idx + h, tmp, n - h, time);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = time[idx[j]] < time[idx[i]] ? idx[j++] : idx[i++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

int pc_order_by_thread(const uint32_t *thread, const uint64_t *time,
                       size_t n, size_t nt, uint32_t *perm, size_t *first)
{
    size_t *next = malloc((nt + 1) * sizeof *next);
    uint32_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!next || !tmp) {
        free(next);
        free(tmp);
        return -1;
    }
    /* Counting sort by thread keeps input order within a thread... */
    memset(first, 0, (nt + 1) * sizeof *first);
    for (size_t i = 0; i < n; i++)
        first[thread[i] + 1]++;
    for (size_t t = 0; t < nt; t++)
        first[t + 1] += first[t];
    memcpy(next, first, (nt + 1) * sizeof *next);
    for (size_t i = 0; i < n; i++)
        perm[next[thread[i]]++] = (uint32_t)i;
    /* ...and a thread's rows need sorting only when the input had them out
     * of order. */
    for (size_t t = 0; t < nt; t++) {
        size_t a = first[t], b = first[t + 1];
        for (size_t i = a + 1; i < b; i++) {
            if (time[perm[i]] < time[perm[i - 1]]) {
                sort_by_time(perm + a, tmp, b - a, time);
                break;
            }
        }
    }
    free(next);
    free(tmp);
    return 0;
}

/* Sets sample.first[t] to the index of thread t's first sample, for rows
 * already grouped by thread. */
static void count_threads(pc_profile *p)
{
    size_t *first = p->sample.first, nt = p->thread.n;
    memset(first, 0, (nt + 1) * sizeof *first);
    for (size_t i = 0; i < p->sample.n; i++)
        first[p->sample.thread[i] + 1]++;
    for (size_t t = 0; t < nt; t++)
        first[t + 1] += first[t];
}

int pc_group_samples(pc_profile *p)
{
    size_t n = p->sample.n, nt = p->thread.n;
    size_t *first = realloc(p->sample.first, (nt + 1) * sizeof *first);
    uint32_t *perm = malloc((n ? n : 1) * sizeof *perm);
    void *scratch = malloc((n ? n : 1) * sizeof(uint64_t));
    if (first)
        p->sample.first = first;
    if (!first || !perm || !scratch ||
        pc_order_by_thread(p->sample.thread, p->sample.time, n, nt, perm, first) < 0) {
        free(perm);
        free(scratch);
        return -1;
    }
    permute(p->sample.thread, sizeof *p->sample.thread, perm, n, scratch);
    permute(p->sample.stack, sizeof *p->sample.stack, perm, n, scratch);
    permute(p->sample.time, sizeof *p->sample.time, perm, n, scratch);
    permute(p->sample.weight, sizeof *p->sample.weight, perm, n, scratch);
    permute(p->sample.event, sizeof *p->sample.event, perm, n, scratch);
    permute(p->sample.cpu, sizeof *p->sample.cpu, perm, n, scratch);
    free(perm);
    free(scratch);
    return 0;
}

void pc_keep_samples(pc_profile *p, const uint8_t *keep)
{
    size_t j = 0;
    for (size_t i = 0; i < p->sample.n; i++) {
        if (!keep[i])
            continue;
        p->sample.thread[j] = p->sample.thread[i];
        p->sample.stack[j] = p->sample.stack[i];
        p->sample.time[j] = p->sample.time[i];
        p->sample.weight[j] = p->sample.weight[i];
        p->sample.event[j] = p->sample.event[i];
        p->sample.cpu[j] = p->sample.cpu[i];
        j++;
    }
    p->sample.n = j;
    if (p->sample.first)
        count_threads(p);
}

void pc_keep_heap(pc_profile *p, const uint8_t *keep)
{
    size_t j = 0;
    for (size_t i = 0; i < p->heap.n; i++) {
        if (!keep[i])
            continue;
        p->heap.thread[j] = p->heap.thread[i];
        p->heap.stack[j] = p->heap.stack[i];
        p->heap.heap[j] = p->heap.heap[i];
        p->heap.dump[j] = p->heap.dump[i];
        p->heap.time[j] = p->heap.time[i];
        p->heap.alloc[j] = p->heap.alloc[i];
        p->heap.freed[j] = p->heap.freed[i];
        p->heap.alloc_count[j] = p->heap.alloc_count[i];
        p->heap.free_count[j] = p->heap.free_count[i];
        j++;
    }
    p->heap.n = j;
}

void pc_saw_time(pc_profile *p, uint64_t t)
{
    if (!p->meta.has_time || t < p->meta.first_time)
        p->meta.first_time = t;
    if (!p->meta.has_time || t > p->meta.last_time)
        p->meta.last_time = t;
    p->meta.has_time = 1;
}

void pc_note_extent(pc_profile *p)
{
    for (size_t i = 0; i < p->sample.n; i++)
        pc_saw_time(p, p->sample.time[i]);
    for (size_t i = 0; i < p->sw.n; i++)
        pc_saw_time(p, p->sw.time[i]);
    for (size_t i = 0; i < p->marker.n; i++) {
        pc_saw_time(p, p->marker.start[i]);
        pc_saw_time(p, p->marker.end[i]);
    }
    for (size_t i = 0; i < p->heap.n; i++)
        pc_saw_time(p, p->heap.time[i]);
    p->meta.shown_first = p->meta.first_time;
    p->meta.shown_last = p->meta.last_time;
}

/* Thread order for output: by process, the main thread (tid == pid) first,
 * then busiest first, then by tid. */
static size_t samples_of(const pc_profile *p, uint32_t t)
{
    return p->sample.first ? p->sample.first[t + 1] - p->sample.first[t] : 0;
}

static int thread_cmp(const void *a, const void *b, const void *ctx)
{
    const pc_profile *p = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int64_t px = p->thread.pid[x], py = p->thread.pid[y];
    if (px != py)
        return px < py ? -1 : 1;
    int mx = p->thread.tid[x] == px, my = p->thread.tid[y] == py;
    if (mx != my)
        return my - mx;
    /* The CPUs of --percpu (pid -1) come in CPU order. */
    if (px == -1 && p->thread.tid[x] != p->thread.tid[y])
        return p->thread.tid[x] < p->thread.tid[y] ? -1 : 1;
    size_t sx = samples_of(p, x), sy = samples_of(p, y);
    if (sx != sy)
        return sx > sy ? -1 : 1;
    if (p->thread.tid[x] != p->thread.tid[y])
        return p->thread.tid[x] < p->thread.tid[y] ? -1 : 1;
    return (x > y) - (x < y);
}

void pc_thread_order(const pc_profile *p, uint32_t *order, uint32_t *main_of)
{
    size_t n = p->thread.n;
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    /* The comparator is total: the result does not depend on stability. */
    pc_sort_ctx(order, n, sizeof *order, thread_cmp, p);
    if (!main_of)
        return;
    for (size_t k = 0; k < n;) {
        size_t j = k;
        int64_t pid = p->thread.pid[order[k]];
        uint32_t main = p->thread.tid[order[k]] == pid ? order[k] : PC_NONE;
        while (j < n && p->thread.pid[order[j]] == pid)
            main_of[order[j++]] = main;
        k = j;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The median of the values that pick() gives for each sample (0: none),
 * taken over an evenly spread subset: as good as the exact one for a
 * nominal interval, and the sorting work stays bounded.  0 when no sample
 * gives one. */
static uint64_t median_of(const pc_profile *p, uint64_t (*pick)(const pc_profile *, size_t))
{
    enum { MAX_KEPT = 1 << 16 };
    size_t count = 0, n = 0;
    for (size_t i = 0; i < p->sample.n; i++)
        count += pick(p, i) != 0;
    if (!count)
        return 0;
    size_t step = count / MAX_KEPT + 1, seen = 0;
    uint64_t *d = malloc((count / step + 1) * sizeof *d);
    if (!d)
        return 0;
    for (size_t i = 0; i < p->sample.n; i++) {
        uint64_t v = pick(p, i);
        if (v && seen++ % step == 0)
            d[n++] = v;
    }
    pc_qsort(d, n, sizeof *d, cmp_u64);
    uint64_t median = d[n / 2];
    free(d);
    return median;
}

/* The period of an on-CPU sample of a clock event. */
static uint64_t clock_period(const pc_profile *p, size_t i)
{
    uint16_t e = p->sample.event[i];
    if (e >= p->event.n || p->event.unit[e] != PC_UNIT_NS || p->sample.weight[i] <= 0 ||
        pc_sample_offcpu(p, i))
        return 0;
    return (uint64_t)p->sample.weight[i];
}

/* The time since the previous sample of the same thread (grouped samples). */
static uint64_t sample_gap(const pc_profile *p, size_t i)
{
    if (i == 0 || p->sample.thread[i] != p->sample.thread[i - 1] ||
        p->sample.time[i] <= p->sample.time[i - 1])
        return 0;
    return p->sample.time[i] - p->sample.time[i - 1];
}

uint64_t pc_interval_ns(const pc_profile *p)
{
    /* A clock event's period is the interval the recording asked for;
     * gaps between samples are longer wherever threads slept. */
    uint64_t v = median_of(p, clock_period);
    if (!v && p->sample.first)
        v = median_of(p, sample_gap);
    return v ? v : 1000000;
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

int pc_remap_threads(pc_profile *p, const uint32_t *to)
{
    size_t nt = p->thread.n;
    uint32_t *idx = malloc((nt + 1) * sizeof *idx);
    if (!idx)
        return -1;
    /* Threads that stay are those mapped onto themselves, in order. */
    size_t kept = 0;
    for (size_t t = 0; t < nt; t++) {
        idx[t] = to[t] == t ? (uint32_t)kept : PC_NONE;
        if (to[t] == t) {
            p->thread.pid[kept] = p->thread.pid[t];
            p->thread.tid[kept] = p->thread.tid[t];
            p->thread.name[kept] = p->thread.name[t];
            kept++;
        }
    }
    /* Rows follow their thread to its new index, or go with it. */
#define REMAP(table, ncols_move)                                           \
    do {                                                                   \
        size_t j = 0;                                                      \
        for (size_t i = 0; i < p->table.n; i++) {                          \
            uint32_t t = p->table.thread[i];                               \
            uint32_t nt_ = to[t] == PC_NONE ? PC_NONE : idx[to[t]];        \
            if (nt_ == PC_NONE)                                            \
                continue;                                                  \
            p->table.thread[j] = nt_;                                      \
            ncols_move;                                                    \
            j++;                                                           \
        }                                                                  \
        p->table.n = j;                                                    \
    } while (0)
    REMAP(sample, (p->sample.stack[j] = p->sample.stack[i],
                   p->sample.time[j] = p->sample.time[i],
                   p->sample.weight[j] = p->sample.weight[i],
                   p->sample.event[j] = p->sample.event[i],
                   p->sample.cpu[j] = p->sample.cpu[i]));
    REMAP(heap, (p->heap.stack[j] = p->heap.stack[i],
                 p->heap.heap[j] = p->heap.heap[i],
                 p->heap.dump[j] = p->heap.dump[i],
                 p->heap.time[j] = p->heap.time[i],
                 p->heap.alloc[j] = p->heap.alloc[i],
                 p->heap.freed[j] = p->heap.freed[i],
                 p->heap.alloc_count[j] = p->heap.alloc_count[i],
                 p->heap.free_count[j] = p->heap.free_count[i]));
    REMAP(sw, (p->sw.time[j] = p->sw.time[i], p->sw.on[j] = p->sw.on[i]));
    REMAP(marker, (p->marker.name[j] = p->marker.name[i],
                   p->marker.s[j] = p->marker.s[i],
                   p->marker.start[j] = p->marker.start[i],
                   p->marker.end[j] = p->marker.end[i],
                   p->marker.a[j] = p->marker.a[i],
                   p->marker.b[j] = p->marker.b[i],
                   p->marker.type[j] = p->marker.type[i]));
#undef REMAP
    p->thread.n = kept;
    free(idx);
    /* Merged threads interleave in time: sort again. */
    return p->sample.first ? pc_group_samples(p) : 0;
}

int pc_drop_frames(pc_profile *p, const uint8_t *drop, int merge_jit)
{
    size_t n = p->stack.n;
    uint32_t *to = malloc((n + 1) * sizeof *to);
    if (!to)
        return -1;
    /* Parents come first, so each prefix is rebuilt before its children;
     * new stacks are added after the old ones, which stay unused. */
    for (size_t s = 0; s < n; s++) {
        uint32_t pre = p->stack.prefix[s], frame = p->stack.frame[s];
        uint32_t new_pre = pre == PC_NONE ? PC_NONE : to[pre];
        int merged = merge_jit && p->frame.exec[frame] == PC_EXEC_JIT &&
                     new_pre != PC_NONE &&
                     p->frame.func[p->stack.frame[new_pre]] == p->frame.func[frame];
        to[s] = drop[frame] || merged ? new_pre : pc_stack(p, new_pre, frame);
    }
    for (size_t i = 0; i < p->sample.n; i++)
        if (p->sample.stack[i] != PC_NONE)
            p->sample.stack[i] = to[p->sample.stack[i]];
    for (size_t i = 0; i < p->heap.n; i++)
        if (p->heap.stack[i] != PC_NONE)
            p->heap.stack[i] = to[p->heap.stack[i]];
    free(to);
    return p->oom ? -1 : 0;
}

uint64_t pc_end_time(const pc_profile *p)
{
    uint64_t t = 0;
    for (size_t i = 0; i < p->sample.n; i++)
        if (p->sample.time[i] > t)
            t = p->sample.time[i];
    for (size_t i = 0; i < p->sw.n; i++)
        if (p->sw.time[i] > t)
            t = p->sw.time[i];
    return t;
}

int pc_order_switches(const pc_profile *p, uint32_t **perm, size_t **first)
{
    *perm = malloc((p->sw.n + 1) * sizeof **perm);
    *first = malloc((p->thread.n + 1) * sizeof **first);
    if (*perm && *first &&
        pc_order_by_thread(p->sw.thread, p->sw.time, p->sw.n, p->thread.n, *perm,
                           *first) == 0)
        return 0;
    free(*perm);
    free(*first);
    return -1;
}

static void swap_items(unsigned char *a, unsigned char *b, size_t size)
{
    for (size_t k = 0; k < size; k++) {
        unsigned char t = a[k];
        a[k] = b[k];
        b[k] = t;
    }
}

/* Moves item root down the heap v[0..n) until no child is greater. */
static void sift_down(unsigned char *v, size_t root, size_t n, size_t size,
                      int (*cmp)(const void *, const void *, const void *), const void *ctx)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && cmp(v + child * size, v + (child + 1) * size, ctx) < 0)
            child++;
        if (cmp(v + root * size, v + child * size, ctx) >= 0)
            return;
        swap_items(v + root * size, v + child * size, size);
        root = child;
    }
}

void pc_sort_ctx(void *base, size_t n, size_t size,
                 int (*cmp)(const void *, const void *, const void *ctx), const void *ctx)
{
    unsigned char *v = base;
    if (n < 2)
        return;
    for (size_t i = n / 2; i-- > 0;)
        sift_down(v, i, n, size, cmp, ctx);
    for (size_t end = n - 1; end > 0; end--) {
        swap_items(v, v + end * size, size);
        sift_down(v, 0, end, size, cmp, ctx);
    }
}
