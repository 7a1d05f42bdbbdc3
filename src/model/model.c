/* The profile's tables: creation and release, interning, and the adders
 * readers call for each row.  Stacks are in stack.c, events and the
 * recording's time in event.c and time.c, reordering in order.c. */
#include "model/model.h"

#include "base/grow.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>

#include "base/path.h"

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
    p->meta.object_heap = PC_NONE;
    p->meta.kept_events_all = 1;
    pc_stree_init(&p->stack);
    p->sample.time_lo = UINT64_MAX;
    p->sample.tally.on = 1;
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
    free(p->func.file);
    pc_htab_free(&p->func.idx);
    free(p->frame.func);
    free(p->frame.addr);
    free(p->frame.cat);
    free(p->frame.exec);
    free(p->frame.unnamed);
    free(p->frame.line);
    pc_stree_free(&p->stack);
    free(p->thread.pid);
    free(p->thread.tid);
    free(p->thread.name);
    free(p->thread.diff);
    free(p->sample.thread.p);
    free(p->sample.stack);
    free(p->sample.time);
    free(p->sample.time32);
    free(p->sample.time16);
    free(p->sample.weight.p);
    free(p->sample.event.p);
    free(p->sample.cpu1.p);
    pc_tally_drop(p);
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
    free(p->counter.thread);
    free(p->counter.time);
    free(p->counter.value);
    free(p->counter.event);
    free(p->counter.cpu);
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

uint32_t pc_intern(pc_profile *p, const void *s, size_t len)
{
    if (p->oom)
        return PC_NONE;
    uint32_t id = pc_str_intern(&p->str, s, len);
    return id == PC_NONE ? pc_oom(p) : id;
}

uint32_t pc_intern_cstr(pc_profile *p, const char *s)
{
    return pc_intern(p, s, strlen(s));
}

uint32_t pc_resource(pc_profile *p, uint32_t name)
{
    pc_probe pr;
    if (p->oom || pc_htab_reserve(&p->res.idx, p->res.n + 1) < 0)
        return pc_oom(p);
    pc_probe_start(&p->res.idx, pc_mix64(name), &pr);
    for (uint32_t id; (id = pc_probe_next(&p->res.idx, &pr)) != PC_NONE;)
        if (p->res.name[id] == name)
            return id;
    struct pc_col cols[] = {PC_COL(p->res.name), PC_COL(p->res.build)};
    if (pc_grow_cols(&p->res.cap, p->res.n + 1, cols, 2) < 0)
        return pc_oom(p);
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
        return pc_oom(p);
    pc_probe_start(&p->func.idx, pc_mix64((uint64_t)name << 32 | res), &pr);
    for (uint32_t id; (id = pc_probe_next(&p->func.idx, &pr)) != PC_NONE;)
        if (p->func.name[id] == name && p->func.res[id] == res)
            return id;
    struct pc_col cols[] = {PC_COL(p->func.name), PC_COL(p->func.res), PC_COL(p->func.file)};
    if (pc_grow_cols(&p->func.cap, p->func.n + 1, cols, 3) < 0)
        return pc_oom(p);
    uint32_t id = (uint32_t)p->func.n++;
    p->func.name[id] = name;
    p->func.res[id] = res;
    p->func.file[id] = PC_NONE;
    pc_htab_insert(&p->func.idx, &pr, id);
    return id;
}

uint32_t pc_add_frame(pc_profile *p, uint32_t func, uint64_t addr,
                      uint8_t cat, uint8_t exec)
{
    struct pc_col cols[] = {PC_COL(p->frame.func), PC_COL(p->frame.addr),
                            PC_COL(p->frame.cat), PC_COL(p->frame.exec),
                            PC_COL(p->frame.unnamed), PC_COL(p->frame.line)};
    if (p->oom || p->frame.n >= PC_NONE - 1 ||
        pc_grow_cols(&p->frame.cap, p->frame.n + 1, cols, 6) < 0)
        return pc_oom(p);
    uint32_t id = (uint32_t)p->frame.n++;
    p->frame.func[id] = func;
    p->frame.addr[id] = addr;
    p->frame.cat[id] = cat;
    p->frame.exec[id] = exec;
    p->frame.unnamed[id] = PC_ADDR_NONE;
    p->frame.line[id] = 0;
    return id;
}

uint32_t pc_address_name(pc_profile *p, const char *path, size_t n, uint64_t addr)
{
    char hex[24];
    int hn = snprintf(hex, sizeof hex, "0x%" PRIx64, addr);
    size_t bl;
    const char *b = pc_base_name(path, n, &bl);
    if (!bl)
        return pc_intern(p, hex, (size_t)hn);
    /* A copy: path may lie in the string arena interning moves. */
    char *buf = malloc(bl + 1 + (size_t)hn);
    if (!buf)
        return pc_oom(p);
    memcpy(buf, b, bl);
    buf[bl] = '+';
    memcpy(buf + bl + 1, hex, (size_t)hn);
    uint32_t id = pc_intern(p, buf, bl + 1 + (size_t)hn);
    free(buf);
    return id;
}

uint32_t pc_add_thread(pc_profile *p, int64_t pid, int64_t tid, uint32_t name)
{
    struct pc_col cols[] = {PC_COL(p->thread.pid), PC_COL(p->thread.tid),
                            PC_COL(p->thread.name), PC_COL(p->thread.diff)};
    if (p->oom || p->thread.n >= PC_NONE - 1 ||
        pc_grow_cols(&p->thread.cap, p->thread.n + 1, cols, 4) < 0)
        return pc_oom(p);
    uint32_t id = (uint32_t)p->thread.n++;
    p->thread.pid[id] = pid;
    p->thread.tid[id] = tid;
    p->thread.name[id] = name;
    p->thread.diff[id] = 0;
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
        pc_oom(p);
        return;
    }
    uint32_t id = find_proc(p, pid, &pr);
    if (id != PC_NONE) {
        p->proc.name[id] = name;
        return;
    }
    struct pc_col cols[] = {PC_COL(p->proc.pid), PC_COL(p->proc.name)};
    if (pc_grow_cols(&p->proc.cap, p->proc.n + 1, cols, 2) < 0) {
        pc_oom(p);
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

enum { PREFAULT_ROWS = 1 << 15 };

/* Runs EACH(T) with T the signed type of c's rows, for a column with a
 * block; else NONE. */
#define ICOL_BY_SIZE(c, EACH, NONE)                                            \
    do {                                                                       \
        switch ((c)->size) {                                                   \
        case 1:                                                                \
            EACH(int8_t);                                                      \
            break;                                                             \
        case 2:                                                                \
            EACH(int16_t);                                                     \
            break;                                                             \
        case 4:                                                                \
            EACH(int32_t);                                                     \
            break;                                                             \
        case 8:                                                                \
            EACH(int64_t);                                                     \
            break;                                                             \
        default:                                                               \
            NONE;                                                              \
            break;                                                             \
        }                                                                      \
    } while (0)

#define ICOL_READ(T)                                                           \
    do {                                                                       \
        const T *q_ = (const T *)c->p + lo;                                    \
        for (size_t k = 0; k < n; k++)                                         \
            out[k] = c->base + (uint64_t)(int64_t)q_[k];                       \
    } while (0)

void pc_icol_read(const pc_icol *c, size_t lo, size_t n, uint64_t *out)
{
    ICOL_BY_SIZE(c, ICOL_READ, for (size_t k = 0; k < n; k++) out[k] = c->base);
}
#undef ICOL_READ

#define ICOL_FILL(T)                                                           \
    do {                                                                       \
        T *q_ = (T *)c->p;                                                     \
        T d_ = (T)(int64_t)(v - c->base);                                      \
        for (size_t i = lo; i < hi; i++)                                       \
            q_[i] = d_;                                                        \
    } while (0)

void pc_icol_fill(pc_icol *c, size_t lo, size_t hi, uint64_t v)
{
    ICOL_BY_SIZE(c, ICOL_FILL, (void)0);
}
#undef ICOL_FILL
#undef ICOL_BY_SIZE

/* c's size set to size, its bounds with it. */
static void icol_size(pc_icol *c, uint8_t size)
{
    c->size = size;
    c->half = size == 0 || size == 8 ? 0 : (uint64_t)1 << (8 * size - 1);
    c->mask = size == 8 ? UINT64_MAX : size == 0 ? 0 : ((uint64_t)1 << (8 * size)) - 1;
}

int pc_icol_make(pc_icol *c, uint64_t v, size_t least, size_t n, size_t cap)
{
    if (n == 0 && c->size == 0 && least == 0) {
        c->base = v;
        return 0;
    }
    if (pc_icol_fits(c, v) && c->size >= least)
        return 0;
    pc_icol w = {NULL, c->base, 0, 0, 0};
    icol_size(&w, c->size > least ? c->size : least ? (uint8_t)least : 1);
    while (!pc_icol_fits(&w, v))
        icol_size(&w, (uint8_t)(w.size * 2));
    w.p = malloc((cap ? cap : 1) * w.size);
    if (!w.p)
        return -1;
    for (size_t i = 0; i < n; i++)
        pc_icol_put(&w, i, pc_icol_get(c, i));
    free(c->p);
    *c = w;
    return 0;
}

int pc_sample_own_weights(pc_profile *p)
{
    return pc_icol_make(&p->sample.weight, p->sample.weight.base, 8, p->sample.n,
                        p->sample.cap);
}

int pc_sample_fit_threads(pc_profile *p, uint32_t most)
{
    size_t n = p->sample.n, cap = p->sample.cap;
    return pc_icol_make(&p->sample.thread, 0, 0, n, cap) < 0 ||
                   pc_icol_make(&p->sample.thread, most, 0, n, cap) < 0
               ? -1
               : 0;
}

/* Whether time fits the narrow time columns. */
static int fits_narrow(const pc_profile *p, uint64_t time)
{
    return (time >> 32) - p->sample.time_base <= UINT16_MAX;
}

/* The time column 8 bytes a row, from the narrow ones. */
static int wide_times(pc_profile *p)
{
    if (p->sample.time)
        return 0;
    uint64_t *t = malloc((p->sample.cap ? p->sample.cap : 1) * sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < p->sample.n; i++)
        t[i] = pc_sample_time(p, i);
    free(p->sample.time32);
    free(p->sample.time16);
    p->sample.time32 = NULL;
    p->sample.time16 = NULL;
    p->sample.time = t;
    return 0;
}

/* Makes the columns that row i's values need. */
static int make_cols(pc_profile *p, size_t i, uint32_t thread, uint64_t time, int64_t weight,
                     uint16_t event, uint16_t cpu)
{
    if (i == 0 && !p->sample.time)
        p->sample.time_base = (time >> 32) > 0x8000 ? (time >> 32) - 0x8000 : 0;
    if (!p->sample.time && !fits_narrow(p, time) && wide_times(p) < 0)
        return -1;
    size_t cap = p->sample.cap;
    return pc_icol_make(&p->sample.thread, thread, 0, i, cap) < 0 ||
                   pc_icol_make(&p->sample.weight, (uint64_t)weight, 0, i, cap) < 0 ||
                   pc_icol_make(&p->sample.event, event, 0, i, cap) < 0 ||
                   pc_icol_make(&p->sample.cpu1, (uint16_t)(cpu + 1), 0, i, cap) < 0
               ? -1
               : 0;
}

/* The icol c into cols[*nc] where it has a block. */
static void icol_col(pc_icol *c, struct pc_col *cols, int *nc)
{
    if (c->size)
        cols[(*nc)++] = (struct pc_col){&c->p, c->size};
}

int pc_sample_cols(pc_profile *p, struct pc_col *cols)
{
    int nc = 0;
    if (p->sample.time)
        cols[nc++] = (struct pc_col)PC_COL(p->sample.time);
    cols[nc++] = (struct pc_col)PC_COL(p->sample.stack);
    if (!p->sample.time) {
        cols[nc++] = (struct pc_col)PC_COL(p->sample.time32);
        cols[nc++] = (struct pc_col)PC_COL(p->sample.time16);
    }
    icol_col(&p->sample.weight, cols, &nc);
    icol_col(&p->sample.event, cols, &nc);
    icol_col(&p->sample.cpu1, cols, &nc);
    return nc;
}

/* Every column of the sample table, into cols (room for
 * PC_SAMPLE_COLS + 1); returns their count. */
static int all_sample_cols(pc_profile *p, struct pc_col *cols)
{
    int nc = pc_sample_cols(p, cols);
    icol_col(&p->sample.thread, cols, &nc);
    return nc;
}

/* Makes room for row i, its pages mapped and the columns as wide as its
 * values need; 0, or -1 out of memory. */
static int sample_room(pc_profile *p, size_t i, uint32_t thread, uint64_t time,
                       int64_t weight, uint16_t event, uint16_t cpu)
{
    if (make_cols(p, i, thread, time, weight, event, cpu) < 0)
        return -1;
    struct pc_col cols[PC_SAMPLE_COLS + 1];
    int nc = all_sample_cols(p, cols);
    if (pc_grow_cols(&p->sample.cap, i + 1, cols, nc) < 0)
        return -1;
    if (i >= p->sample.mapped) {
        /* The next rows' pages, a block at a time (see pc_prefault). */
        size_t to = i + PREFAULT_ROWS < p->sample.cap ? i + PREFAULT_ROWS : p->sample.cap;
        for (int c = 0; c < nc; c++)
            pc_prefault(*cols[c].p, i * cols[c].size, to * cols[c].size);
        p->sample.mapped = to;
    }
    return 0;
}

void pc_sample_reserve(pc_profile *p, size_t rows)
{
    struct rlimit as, data;
    if (rows == 0 || rows > SIZE_MAX / 16 - p->sample.n || getrlimit(RLIMIT_AS, &as) != 0 ||
        as.rlim_cur != RLIM_INFINITY || getrlimit(RLIMIT_DATA, &data) != 0 ||
        data.rlim_cur != RLIM_INFINITY)
        return;
    struct pc_col cols[PC_SAMPLE_COLS + 1];
    int nc = all_sample_cols(p, cols);
    size_t cap = p->sample.n + rows;
    if (cap <= p->sample.cap)
        return;
    for (int i = 0; i < nc; i++) {
        /* Columns grown before a failure are only longer: still the
         * table, of the capacity it had. */
        void *q = realloc(*cols[i].p, cap * cols[i].size);
        if (!q)
            return;
        *cols[i].p = q;
    }
    p->sample.cap = cap;
}

void pc_tally_drop(pc_profile *p)
{
    free(p->sample.tally.rows);
    free(p->sample.tally.last);
    free(p->sample.tally.unsorted);
    memset(&p->sample.tally, 0, sizeof p->sample.tally);
}

/* Room in sample.tally for thread t; where there is no memory for it,
 * the tally is dropped, and grouping makes its own pass. */
static void tally_room(pc_profile *p, uint32_t t)
{
    size_t cap = p->sample.tally.cap, want = (size_t)t + 1;
    if (want <= cap)
        return;
    if (want > SIZE_MAX / 2 / sizeof *p->sample.tally.rows) {
        pc_tally_drop(p);
        return;
    }
    size_t ncap = cap ? cap : 16;
    while (ncap < want)
        ncap *= 2;
    size_t *rows = realloc(p->sample.tally.rows, ncap * sizeof *rows);
    if (rows)
        p->sample.tally.rows = rows;
    uint64_t *last = realloc(p->sample.tally.last, ncap * sizeof *last);
    if (last)
        p->sample.tally.last = last;
    uint8_t *unsorted = realloc(p->sample.tally.unsorted, ncap);
    if (unsorted)
        p->sample.tally.unsorted = unsorted;
    if (!rows || !last || !unsorted) {
        pc_tally_drop(p);
        return;
    }
    memset(rows + cap, 0, (ncap - cap) * sizeof *rows);
    memset(last + cap, 0, (ncap - cap) * sizeof *last);
    memset(unsorted + cap, 0, ncap - cap);
    p->sample.tally.cap = ncap;
}

int pc_push_sample(pc_profile *p, uint32_t thread, uint64_t time,
                   uint32_t stack, int64_t weight, uint16_t event, uint16_t cpu)
{
    size_t i = p->sample.n;
    /* Mostly the row has room, its pages are mapped, and its values fit
     * the columns as they are: then it is only stored. */
    int fits = i < p->sample.mapped && i < p->sample.cap && i > 0 &&
               (p->sample.time || fits_narrow(p, time)) &&
               pc_icol_fits(&p->sample.thread, thread) &&
               pc_icol_fits(&p->sample.weight, (uint64_t)weight) &&
               pc_icol_fits(&p->sample.event, event) &&
               pc_icol_fits(&p->sample.cpu1, (uint16_t)(cpu + 1));
    if (!fits && sample_room(p, i, thread, time, weight, event, cpu) < 0)
        return -1;
    pc_icol_put(&p->sample.thread, i, thread);
    p->sample.stack[i] = stack;
    if (p->sample.time) {
        p->sample.time[i] = time;
    } else {
        p->sample.time32[i] = (uint32_t)time;
        p->sample.time16[i] = (uint16_t)((time >> 32) - p->sample.time_base);
    }
    p->sample.time_lo = time < p->sample.time_lo ? time : p->sample.time_lo;
    p->sample.time_hi = time > p->sample.time_hi ? time : p->sample.time_hi;
    pc_icol_put(&p->sample.weight, i, (uint64_t)weight);
    pc_icol_put(&p->sample.event, i, event);
    pc_icol_put(&p->sample.cpu1, i, (uint16_t)(cpu + 1));
    p->sample.n = i + 1;
    if (p->sample.tally.on) {
        if (thread >= p->sample.tally.cap)
            tally_room(p, thread);
        if (p->sample.tally.on && p->sample.tally.upto == i) {
            p->sample.tally.rows[thread]++;
            p->sample.tally.unsorted[thread] |= time < p->sample.tally.last[thread];
            p->sample.tally.last[thread] = time;
            p->sample.tally.upto = i + 1;
        }
    }
    return 0;
}

void pc_add_sample(pc_profile *p, uint32_t thread, uint64_t time,
                   uint32_t stack, int64_t weight, uint16_t event, uint16_t cpu)
{
    if (p->oom || pc_push_sample(p, thread, time, stack, weight, event, cpu) < 0)
        pc_oom(p);
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
        pc_oom(p);
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

void pc_add_counter(pc_profile *p, uint32_t thread, uint64_t time, uint16_t event,
                    uint16_t cpu, int64_t value)
{
    struct pc_col cols[] = {PC_COL(p->counter.thread), PC_COL(p->counter.time),
                            PC_COL(p->counter.value), PC_COL(p->counter.event),
                            PC_COL(p->counter.cpu)};
    if (p->oom || pc_grow_cols(&p->counter.cap, p->counter.n + 1, cols, 5) < 0) {
        pc_oom(p);
        return;
    }
    size_t i = p->counter.n++;
    p->counter.thread[i] = thread;
    p->counter.time[i] = time;
    p->counter.value[i] = value;
    p->counter.event[i] = event;
    p->counter.cpu[i] = cpu;
}

void pc_add_switch(pc_profile *p, uint32_t thread, uint64_t time, int on)
{
    struct pc_col cols[] = {PC_COL(p->sw.thread), PC_COL(p->sw.time),
                            PC_COL(p->sw.on)};
    if (p->oom || pc_grow_cols(&p->sw.cap, p->sw.n + 1, cols, 3) < 0) {
        pc_oom(p);
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
        pc_oom(p);
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

const char *pc_heap_what(const pc_profile *p, uint32_t heap)
{
    if (heap != PC_NONE && heap == p->meta.object_heap)
        return p->meta.object_retained ? "retained" : "shallow";
    switch (p->meta.heap_measure) {
    case PC_HEAP_ALLOCATED: return "allocated";
    case PC_HEAP_FREED: return "freed";
    }
    return "unreleased";
}

/* Heap graphs alone say what their objects are; allocations, or both,
 * what the measure is. */
const char *pc_heap_measure_name(const pc_profile *p)
{
    for (size_t i = 0; i < p->heap.n; i++)
        if (p->heap.heap[i] != p->meta.object_heap)
            return pc_heap_what(p, PC_NONE);
    return pc_heap_what(p, p->meta.object_heap);
}

size_t pc_slice_count(const pc_profile *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->marker.n; i++)
        n += p->marker.type[i] == PC_MARK_SLICE;
    return n;
}
