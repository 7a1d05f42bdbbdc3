/* The perf.data record loop: the header and attributes, then every record
 * of the data section in time order, then the features; names.c ends the
 * work.  Samples are kept as stacks of raw frames (a dso and where in it),
 * threads and mappings as the records tell them over time. */
#include "read/perfdata/reader.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "base/error.h"
#include "io/source.h"

/* Bytes before the data section (header, ids, attributes) read at once;
 * real files hold a few KiB there. */
#define MAX_PREFIX (64u << 20)
/* The largest feature section read (simpleperf's symbol tables can take
 * tens of MiB). */
#define MAX_FEATURE (1u << 30)
/* Records queued for time ordering before they are sorted and handed on
 * even without a round's end. */
#define MAX_QUEUE (256u << 20)

int pd_fail(pd_build *b, uint64_t off, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return src_fail_at(b->in, b->err, off, "%s", msg);
}

int pd_nomem(pd_build *b)
{
    return pc_fail(b->err, PC_ENOMEM, "%s: out of memory", src_name(b->in));
}

/* A record body the reader cannot use: an error, or with keep_going a
 * skipped record. */
static int damaged(pd_build *b, uint64_t off, const char *why)
{
    int st = pd_fail(b, off, "%s", why);
    if (b->o->keep_going) {
        pc_skips_add(&b->skipped, b->err);
        return PC_OK;
    }
    return st;
}

/* ---- Attributes and ids ---- */

static int add_id(pd_build *b, uint64_t id, uint32_t attr)
{
    pc_probe pr;
    if (pc_htab_reserve(&b->id_idx, b->nids + 1) < 0)
        return -1;
    pc_probe_start(&b->id_idx, pc_mix64(id), &pr);
    for (uint32_t i; (i = pc_probe_next(&b->id_idx, &pr)) != PC_NONE;)
        if (b->ids[i] == id) {
            b->id_attr[i] = attr;
            return 0;
        }
    struct pc_col cols[] = {PC_COL(b->ids), PC_COL(b->id_attr)};
    if (pc_grow_cols(&b->capids, b->nids + 1, cols, 2) < 0)
        return -1;
    b->ids[b->nids] = id;
    b->id_attr[b->nids] = attr;
    pc_htab_insert(&b->id_idx, &pr, (uint32_t)b->nids);
    b->nids++;
    return 0;
}

static uint32_t attr_of_id(const pd_build *b, uint64_t id)
{
    pc_probe pr;
    if (!b->nids)
        return 0;
    pc_probe_start(&b->id_idx, pc_mix64(id), &pr);
    for (uint32_t i; (i = pc_probe_next(&b->id_idx, &pr)) != PC_NONE;)
        if (b->ids[i] == id)
            return b->id_attr[i];
    return 0;
}

/* Adds the attribute whose perf_event_attr is d[0..len). */
static int add_attr(pd_build *b, const uint8_t *d, size_t len, uint64_t off)
{
    if (len < 64)
        return pd_fail(b, off, "an event attribute is %zu bytes, too short", len);
    if (b->nattrs >= PC_MAX_EVENTS)
        return pd_fail(b, off, "more than %d event attributes", PC_MAX_EVENTS);
    if (b->nattrs == b->capattrs) {
        size_t cap = b->capattrs ? b->capattrs * 2 : 4;
        pd_attr *a = realloc(b->attrs, cap * sizeof *a);
        if (!a)
            return pd_nomem(b);
        b->attrs = a;
        b->capattrs = cap;
    }
    pd_attr *a = &b->attrs[b->nattrs++];
    memset(a, 0, sizeof *a);
    a->type = pd_u32(d);
    a->config = pd_u64(d + 8);
    a->period = pd_u64(d + 16);
    a->sample_type = pd_u64(d + 24);
    a->read_format = pd_u64(d + 32);
    a->flags = pd_u64(d + 40);
    if (len >= 80)
        a->branch_sample_type = pd_u64(d + 72);
    if (len >= 88)
        a->regs_user = pd_u64(d + 80);
    a->name = PC_NONE;
    return PC_OK;
}

/* Where the id of each record is: every attribute of a recording places
 * it alike (perf and simpleperf refuse to mix layouts). */
static void id_layout(pd_build *b)
{
    uint64_t t = b->attrs[0].sample_type;
    b->id_pos = -1;
    b->id_rpos = 0;
    if (t & PD_SAMPLE_IDENTIFIER) {
        b->id_pos = 0;
        b->id_rpos = 8;
    } else if (t & PD_SAMPLE_ID) {
        b->id_pos = 8 * (((t & PD_SAMPLE_IP) != 0) + ((t & PD_SAMPLE_TID) != 0) +
                         ((t & PD_SAMPLE_TIME) != 0) + ((t & PD_SAMPLE_ADDR) != 0));
        b->id_rpos = 8 * (1 + ((t & PD_SAMPLE_CPU) != 0) + ((t & PD_SAMPLE_STREAM_ID) != 0));
    }
}

static const pd_attr *attr_of(pd_build *b, int sample, const uint8_t *body, size_t len)
{
    if (b->nattrs <= 1 || b->id_pos < 0)
        return &b->attrs[0];
    if (sample) {
        if ((size_t)b->id_pos + 8 > len)
            return &b->attrs[0];
        return &b->attrs[attr_of_id(b, pd_u64(body + b->id_pos))];
    }
    if (!(b->attrs[0].flags & PD_ATTR_SAMPLE_ID_ALL) || b->id_rpos > len)
        return &b->attrs[0];
    return &b->attrs[attr_of_id(b, pd_u64(body + len - b->id_rpos))];
}

/* ---- Records ---- */

static pd_thread *thread(pd_build *b, int64_t pid, int64_t tid)
{
    pd_thread *t = pd_thread_get(&b->maps, pid, tid);
    if (!t)
        b->p->oom = 1;
    return t;
}

uint32_t pd_model_thread(pd_build *b, pd_thread *t)
{
    /* A tid that went to another process and came back is its first
     * thread again: one model thread per (pid, tid). */
    if (t->model == PC_NONE)
        t->model = pc_thread_find(&b->model_threads, b->p, t->pid, t->tid);
    return t->model;
}

static int on_comm(pd_build *b, uint16_t misc, const uint8_t *d, size_t len, uint64_t off)
{
    if (len < 9)
        return damaged(b, off, "a COMM record is too short");
    int64_t pid = (int32_t)pd_u32(d), tid = (int32_t)pd_u32(d + 4);
    const pd_attr *a = attr_of(b, 0, d, len);
    size_t tail = (a->flags & PD_ATTR_SAMPLE_ID_ALL) ? pd_sample_id_size(a->sample_type) : 0;
    size_t max = len - 8 > tail ? len - 8 - tail : len - 8;
    const char *s = (const char *)d + 8;
    uint32_t name = pc_intern(b->p, s, strnlen(s, max));
    pd_thread *t = thread(b, pid, tid);
    if (!t || name == PC_NONE)
        return pd_nomem(b);
    t->comm = name;
    if (tid == pid) {
        pd_proc *pr = pd_proc_get(&b->maps, pid);
        if (!pr)
            return pd_nomem(b);
        pr->comm = name;
    }
    (void)misc;  /* an exec keeps the mappings: the new ones replace them */
    return PC_OK;
}

static int on_fork(pd_build *b, const uint8_t *d, size_t len, uint64_t off)
{
    if (len < 16)
        return damaged(b, off, "a FORK record is too short");
    int64_t pid = (int32_t)pd_u32(d), ppid = (int32_t)pd_u32(d + 4);
    int64_t tid = (int32_t)pd_u32(d + 8), ptid = (int32_t)pd_u32(d + 12);
    if (tid == ptid)
        return PC_OK;
    pd_thread *parent = thread(b, ppid, ptid);
    if (!parent)
        return pd_nomem(b);
    uint32_t comm = parent->comm;
    pd_thread *child = thread(b, pid, tid);
    if (!child)
        return pd_nomem(b);
    child->comm = comm;
    if (pid != ppid) {
        if (pd_proc_fork(&b->maps, pid, ppid) < 0)
            return pd_nomem(b);
        pd_proc *pr = pd_proc_get(&b->maps, pid);
        if (!pr)
            return pd_nomem(b);
        pr->comm = comm;
    }
    return PC_OK;
}

/* Mappings no file backs, whose code perf names from the JIT map the
 * process wrote (/tmp/perf-PID.map). */
static int anon_path(const char *s, size_t n)
{
    return (n == 6 && memcmp(s, "//anon", 6) == 0) || (n >= 5 && memcmp(s, "[anon", 5) == 0) ||
           (n >= 7 && memcmp(s, "/memfd:", 7) == 0) ||
           (n >= 10 && memcmp(s, "/tmp/perf-", 10) == 0);
}

static int on_mmap(pd_build *b, int type, uint16_t misc, const uint8_t *d, size_t len,
                   uint64_t off)
{
    size_t fixed = type == PD_REC_MMAP ? 32 : 64;
    if (len < fixed + 1)
        return damaged(b, off, type == PD_REC_MMAP ? "an MMAP record is too short"
                                                    : "an MMAP2 record is too short");
    int64_t pid = (int32_t)pd_u32(d), tid = (int32_t)pd_u32(d + 4);
    uint64_t start = pd_u64(d + 8), mlen = pd_u64(d + 16), pgoff = pd_u64(d + 24);
    uint32_t prot = type == PD_REC_MMAP2 ? pd_u32(d + 56) : 0;
    const pd_attr *a = attr_of(b, 0, d, len);
    size_t tail = (a->flags & PD_ATTR_SAMPLE_ID_ALL) ? pd_sample_id_size(a->sample_type) : 0;
    size_t max = len - fixed > tail ? len - fixed - tail : len - fixed;
    const char *s = (const char *)d + fixed;
    size_t n = strnlen(s, max);
    int kernel = (misc & PD_MISC_CPUMODE) == PD_MISC_KERNEL;
    uint32_t dso;
    if (kernel) {
        int main_kernel = n >= 17 && memcmp(s, "[kernel.kallsyms]", 17) == 0;
        uint32_t path = main_kernel ? pc_intern(b->p, s, 17) : pc_intern(b->p, s, n);
        dso = path == PC_NONE ? PC_NONE
                              : pd_dso_find(&b->maps, path, PD_KERNEL_SPACE,
                                            main_kernel ? PD_DSO_KERNEL : PD_DSO_KERNEL_MODULE);
        if (dso == PC_NONE)
            return pd_nomem(b);
        if (pd_map_insert(&b->maps, &b->maps.kernel, start, mlen, pgoff, dso, 0) < 0)
            return pd_nomem(b);
        return PC_OK;
    }
    uint32_t path;
    int64_t owner = -1;
    int dtype = PD_DSO_ELF;
    if (b->simpleperf && n == 6 && memcmp(s, "//anon", 6) == 0) {
        path = pc_intern_cstr(b->p, "[unknown]");
    } else if (!b->simpleperf && anon_path(s, n)) {
        char buf[48];
        snprintf(buf, sizeof buf, "/tmp/perf-%" PRId64 ".map", pid);
        path = pc_intern_cstr(b->p, buf);
        owner = pid;
        dtype = PD_DSO_SYMBOL_MAP;
    } else {
        path = pc_intern(b->p, s, n);
    }
    dso = path == PC_NONE ? PC_NONE : pd_dso_find(&b->maps, path, owner, dtype);
    if (dso == PC_NONE || !thread(b, pid, tid))
        return pd_nomem(b);
    if (type == PD_REC_MMAP2 && (misc & PD_MISC_MMAP_BUILD_ID)) {
        /* perf record --buildid-mmap: the id comes with the mapping. */
        uint8_t blen = d[32] <= 20 ? d[32] : 20;
        pd_dso *ds = &b->maps.dsos[dso];
        memcpy(ds->build_id, d + 36, blen);
        ds->build_id_len = blen;
    }
    pd_proc *pr = pd_proc_get(&b->maps, pid);
    if (!pr || pd_map_insert(&b->maps, &pr->maps, start, mlen, pgoff, dso,
                             b->simpleperf && (prot & 0x4000)) < 0)
        return pd_nomem(b);
    return PC_OK;
}

static int on_switch(pd_build *b, uint16_t misc, const uint8_t *d, size_t len, uint64_t off)
{
    pd_sample_id sid;
    const pd_attr *a = attr_of(b, 0, d, len);
    if (pd_parse_sample_id(a, d, len, &sid) < 0)
        return damaged(b, off, "a context switch record is too short for its sample id");
    if (!sid.has_tid || !sid.has_time)
        return PC_OK;  /* nothing to place it by */
    pd_thread *t = thread(b, sid.pid, sid.tid);
    if (!t)
        return pd_nomem(b);
    uint32_t mt = pd_model_thread(b, t);
    pc_add_switch(b->p, mt, sid.time, !(misc & PD_MISC_SWITCH_OUT));
    return b->p->oom ? pd_nomem(b) : PC_OK;
}

static int on_event_id(pd_build *b, const uint8_t *d, size_t len, uint64_t off)
{
    if (len < 8)
        return damaged(b, off, "an EVENT_ID record is too short");
    uint64_t n = pd_u64(d);
    if (n > (len - 8) / 16)
        return damaged(b, off, "an EVENT_ID record lists more ids than it holds");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t attr = pd_u64(d + 8 + 16 * i), id = pd_u64(d + 16 + 16 * i);
        if (attr >= b->nattrs)
            return damaged(b, off, "an EVENT_ID record names an attribute that does not exist");
        if (add_id(b, id, (uint32_t)attr) < 0)
            return pd_nomem(b);
    }
    return PC_OK;
}

/* One record, in time order. */
static int on_record(pd_build *b, uint32_t type, uint16_t misc, const uint8_t *d, size_t len,
                     uint64_t off)
{
    b->n_records++;
    switch (type) {
    case PD_REC_SAMPLE: {
        pd_sample s;
        const pd_attr *a = attr_of(b, 1, d, len);
        const char *why = pd_parse_sample(a, d, len, &s);
        if (why)
            return damaged(b, off, why);
        return pd_on_sample(b, a, misc, &s, off);
    }
    case PD_REC_MMAP:
    case PD_REC_MMAP2: return on_mmap(b, (int)type, misc, d, len, off);
    case PD_REC_COMM: return on_comm(b, misc, d, len, off);
    case PD_REC_FORK: return on_fork(b, d, len, off);
    case PD_REC_EXIT: return PC_OK;
    case PD_REC_LOST:
        if (len < 16)
            return damaged(b, off, "a LOST record is too short");
        b->lost += pd_u64(d + 8);
        b->has_lost = 1;
        return PC_OK;
    case PD_REC_LOST_SAMPLES:
        if (len < 8)
            return damaged(b, off, "a LOST_SAMPLES record is too short");
        b->lost += pd_u64(d);
        b->has_lost = 1;
        return PC_OK;
    case PD_REC_SWITCH:
    case PD_REC_SWITCH_CPU_WIDE: return on_switch(b, misc, d, len, off);
    case PD_REC_SP_EVENT_ID: return on_event_id(b, d, len, off);
    case PD_REC_SP_UNWINDING_RESULT: return pd_on_unwinding_result(b, d, len, off);
    default:
        if (type >= 64 && type < 128)
            return PC_OK;  /* perf's own bookkeeping (rounds, build ids, ...) */
        if (type < 64 && type > 21)
            b->unknown_records++;
        else if (type > PD_REC_SP_DEBUG)
            b->unknown_records++;
        return PC_OK;
    }
}

/* ---- Time order ----
 *
 * perf writes each CPU's buffer in turn, so records are in time order
 * only within a round; a round's end (FINISHED_ROUND) promises that no
 * later record is older than what the round before it held.  Records are
 * queued and handed on in time order up to that promise, as perf report
 * does, so that a sample sees the mmaps and comms that preceded it.
 * simpleperf sorts its records itself and writes no rounds. */

typedef struct qent {
    uint64_t time, seq;
    size_t at;  /* offset of the record in the arena */
    uint64_t off;
} qent;

static int qcmp(const void *x, const void *y)
{
    const qent *a = x, *c = y;
    if (a->time != c->time)
        return a->time < c->time ? -1 : 1;
    return a->seq < c->seq ? -1 : a->seq > c->seq;
}

static uint64_t record_time(pd_build *b, uint32_t type, const uint8_t *d, size_t len)
{
    if (type == PD_REC_SAMPLE) {
        const pd_attr *a = attr_of(b, 1, d, len);
        uint64_t t = a->sample_type;
        if (!(t & PD_SAMPLE_TIME))
            return b->q.last_time;
        size_t pos = 8 * (((t & PD_SAMPLE_IDENTIFIER) != 0) + ((t & PD_SAMPLE_IP) != 0) +
                          ((t & PD_SAMPLE_TID) != 0));
        return pos + 8 <= len ? pd_u64(d + pos) : b->q.last_time;
    }
    if (type >= 64)
        return b->q.last_time;
    pd_sample_id sid;
    const pd_attr *a = attr_of(b, 0, d, len);
    if (pd_parse_sample_id(a, d, len, &sid) < 0 || !sid.has_time)
        return b->q.last_time;
    /* Records made by perf at its start (the processes already running)
     * carry time 0: they stay where the file has them. */
    return sid.time ? sid.time : b->q.last_time;
}

static int flush(pd_build *b, uint64_t limit, int all)
{
    pd_queue *q = &b->q;
    if (!q->n)
        return PC_OK;
    int sorted = 1;
    for (size_t i = 1; i < q->n && sorted; i++)
        sorted = qcmp(&q->e[i - 1], &q->e[i]) <= 0;
    if (!sorted)
        qsort(q->e, q->n, sizeof *q->e, qcmp);
    size_t k = 0;
    while (k < q->n && (all || q->e[k].time <= limit)) {
        const uint8_t *r = q->arena + q->e[k].at;
        uint32_t type = pd_u32(r);
        uint16_t misc = pd_u16(r + 4);
        size_t size = pd_u16(r + 6);
        int st = on_record(b, type, misc, r + 8, size - 8, q->e[k].off);
        if (st != PC_OK)
            return st;
        k++;
    }
    /* Keep the rest, packed into a fresh arena (in time order now, so
     * moving them within the old one could overwrite one not yet moved). */
    size_t used = 0;
    for (size_t i = k; i < q->n; i++)
        used += pd_u16(q->arena + q->e[i].at + 6);
    uint8_t *fresh = NULL;
    if (used) {
        if (q->spare_cap < q->cap) {
            free(q->spare);
            q->spare = malloc(q->cap);
            q->spare_cap = q->spare ? q->cap : 0;
            if (!q->spare)
                return pd_nomem(b);
        }
        fresh = q->spare;
    }
    used = 0;
    for (size_t i = k; i < q->n; i++) {
        const uint8_t *r = q->arena + q->e[i].at;
        size_t size = pd_u16(r + 6);
        memcpy(fresh + used, r, size);
        q->e[i - k] = q->e[i];
        q->e[i - k].at = used;
        used += size;
    }
    if (fresh) {
        /* The arenas trade places: no allocation per round. */
        size_t fresh_cap = q->spare_cap;
        q->spare = q->arena;
        q->spare_cap = q->cap;
        q->arena = fresh;
        q->cap = fresh_cap;
    }
    q->n -= k;
    q->used = used;
    return PC_OK;
}

static int queue(pd_build *b, const uint8_t *r, size_t size, uint64_t off)
{
    pd_queue *q = &b->q;
    uint32_t type = pd_u32(r);
    if (type == PD_REC_FINISHED_ROUND) {
        int st = flush(b, q->round_limit, 0);
        q->round_limit = q->max_time;
        return st;
    }
    if (q->used + size > MAX_QUEUE) {
        int st = flush(b, 0, 1);
        if (st != PC_OK)
            return st;
    }
    uint64_t t = record_time(b, type, r + 8, size - 8);
    q->last_time = t;
    if (t > q->max_time)
        q->max_time = t;
    if (q->used + size > q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 1u << 20;
        while (cap < q->used + size)
            cap *= 2;
        uint8_t *a = realloc(q->arena, cap);
        if (!a)
            return pd_nomem(b);
        q->arena = a;
        q->cap = cap;
    }
    struct pc_col cols[] = {PC_COL(q->e)};
    if (pc_grow_cols(&q->ecap, q->n + 1, cols, 1) < 0)
        return pd_nomem(b);
    memcpy(q->arena + q->used, r, size);
    q->e[q->n++] = (qent){t, q->seq++, q->used, off};
    q->used += size;
    return PC_OK;
}

static int take_record(pd_build *b, const uint8_t *r, size_t size, uint64_t off);

/* The largest a compressed record may expand to before its records are
 * handed on: zstd's ratio on perf's records stays far below this. */
#define MAX_UNZ (64u << 20)

/* perf record -z: the records inside, decompressed as they come.  They
 * are named by the offset of the compressed record holding them. */
static int uncompress(pd_build *b, const uint8_t *d, size_t len, uint64_t off)
{
    if (!b->zstd && !(b->zstd = ZSTD_createDStream()))
        return pd_nomem(b);
    b->compressed++;
    ZSTD_inBuffer in = {d, len, 0};
    while (in.pos < in.size) {
        if (b->unz.cap - b->unz.used < (1u << 16)) {
            size_t cap = b->unz.cap ? b->unz.cap * 2 : 1u << 20;
            if (cap > MAX_UNZ)
                return pd_fail(b, off, "a compressed record expands past %u MiB", MAX_UNZ >> 20);
            uint8_t *n = realloc(b->unz.buf, cap);
            if (!n)
                return pd_nomem(b);
            b->unz.buf = n;
            b->unz.cap = cap;
        }
        ZSTD_outBuffer out = {b->unz.buf, b->unz.cap, b->unz.used};
        size_t rc = ZSTD_decompressStream(b->zstd, &out, &in);
        if (ZSTD_isError(rc))
            return pd_fail(b, off, "compressed records: %s", ZSTD_getErrorName(rc));
        if (out.pos == b->unz.used && in.pos < in.size && out.pos < out.size)
            return pd_fail(b, off, "compressed records: the stream does not advance");
        b->unz.used = out.pos;
    }
    /* Hand on the whole records; a record cut at the end waits. */
    size_t at = 0;
    while (b->unz.used - at >= 8) {
        const uint8_t *r = b->unz.buf + at;
        size_t size = pd_u16(r + 6);
        uint32_t type = pd_u32(r);
        if (size < 8)
            return pd_fail(b, off, "a compressed record holds a record of size %zu", size);
        if (type == PD_REC_COMPRESSED || type == PD_REC_COMPRESSED2 ||
            type >= PD_REC_SIMPLEPERF)
            return pd_fail(b, off, "a compressed record holds a record of type %" PRIu32
                           ", which perf never compresses", type);
        if (size > b->unz.used - at)
            break;
        int st = take_record(b, r, size, off);
        if (st != PC_OK)
            return st;
        at += size;
    }
    if (at) {
        memmove(b->unz.buf, b->unz.buf + at, b->unz.used - at);
        b->unz.used -= at;
    }
    return PC_OK;
}

/* A record as read: SPLIT pieces joined, then queued or handled. */
static int take_record(pd_build *b, const uint8_t *r, size_t size, uint64_t off)
{
    uint32_t type = pd_u32(r);
    if (type == PD_REC_COMPRESSED)
        return uncompress(b, r + 8, size - 8, off);
    if (type == PD_REC_COMPRESSED2) {
        if (size < 16 || pd_u64(r + 8) > size - 16)
            return damaged(b, off, "a COMPRESSED2 record's data size is out of range");
        return uncompress(b, r + 16, (size_t)pd_u64(r + 8), off);
    }
    if (type == PD_REC_SP_SPLIT) {
        /* simpleperf cuts records over 64 KiB into pieces. */
        if (!b->split.used)
            b->split.off = off;
        if (b->split.used + size - 8 > MAX_FEATURE)
            return damaged(b, b->split.off, "SPLIT pieces add up to more than 1 GiB");
        if (b->split.used + size - 8 > b->split.cap) {
            size_t cap = b->split.cap ? b->split.cap * 2 : 1u << 16;
            while (cap < b->split.used + size - 8)
                cap *= 2;
            uint8_t *n = realloc(b->split.buf, cap);
            if (!n)
                return pd_nomem(b);
            b->split.buf = n;
            b->split.cap = cap;
        }
        memcpy(b->split.buf + b->split.used, r + 8, size - 8);
        b->split.used += size - 8;
        return PC_OK;
    }
    if (type == PD_REC_SP_SPLIT_END) {
        size_t n = b->split.used;
        b->split.used = 0;
        if (n < 8)
            return damaged(b, b->split.off, "records joined from SPLIT pieces are too short");
        uint8_t *j = b->split.buf;
        uint32_t jt = pd_u32(j);
        /* simpleperf splits its own records alone. */
        if (jt < PD_REC_SIMPLEPERF)
            return damaged(b, b->split.off, "records joined from SPLIT pieces are not one of "
                                            "simpleperf's own");
        size_t js = jt >= PD_REC_SIMPLEPERF ? (size_t)pd_u16(j + 4) << 16 | pd_u16(j + 6)
                                           : pd_u16(j + 6);
        if (js != n)
            return damaged(b, b->split.off, "records joined from SPLIT pieces do not "
                                            "make one record");
        return on_record(b, jt, jt >= PD_REC_SIMPLEPERF ? 0 : pd_u16(j + 4), j + 8, n - 8,
                         b->split.off);
    }
    if (type == PD_REC_HEADER_ATTR)
        return pd_on_header_attr(b, r + 8, size - 8, off);
    if (type == PD_REC_HEADER_FEATURE) {
        if (size < 16)
            return damaged(b, off, "a HEADER_FEATURE record is too short");
        const char *why = pd_parse_feature((int)pd_u64(r + 8), r + 16, size - 16, &b->maps,
                                           &b->info, b->o);
        return why ? damaged(b, off, why) : PC_OK;
    }
    if (type == PD_REC_FINISHED_ROUND && !b->ordered)
        return PC_OK;
    if (type < 64 && b->nattrs == 0)
        return damaged(b, off, "a record comes before any event attribute");
    if (b->ordered && type < PD_REC_SIMPLEPERF && (type < 64 || type == PD_REC_FINISHED_ROUND))
        return queue(b, r, size, off);
    return on_record(b, type, type >= PD_REC_SIMPLEPERF ? 0 : pd_u16(r + 4), r + 8, size - 8,
                     off);
}

/* Skips forward to stream offset to. */
static int skip_to(pd_build *b, uint64_t to, const char *what)
{
    uint64_t at = src_offset(b->in);
    if (to < at)
        return pd_fail(b, at, "%s lies at offset %" PRIu64 ", before what was already read",
                       what, to);
    while (at < to) {
        uint64_t chunk = to - at > (1u << 20) ? (1u << 20) : to - at;
        int got = src_need(b->in, (size_t)chunk, b->err);
        if (got < 0)
            return b->err->status;
        if (!got)
            return pd_fail(b, src_offset(b->in) + src_avail(b->in),
                           "the file ends before %s, at offset %" PRIu64, what, to);
        src_skip(b->in, (size_t)chunk);
        at += chunk;
    }
    return PC_OK;
}

/* Reads records from here for size bytes (UINT64_MAX: to the end). */
static int read_records(pd_build *b, uint64_t size)
{
    uint64_t start = src_offset(b->in);
    while (size == UINT64_MAX || src_offset(b->in) - start < size) {
        uint64_t off = src_offset(b->in);
        int got = src_need(b->in, 8, b->err);
        if (got < 0)
            return b->err->status;
        if (!got) {
            if (size == UINT64_MAX && src_avail(b->in) == 0)
                break;
            return pd_fail(b, off + src_avail(b->in), "the file ends inside the data "
                           "section, %" PRIu64 " of its %" PRIu64 " bytes in",
                           off - start + src_avail(b->in), size);
        }
        const uint8_t *h = src_ptr(b->in);
        uint32_t type = pd_u32(h);
        size_t rsize = type >= PD_REC_SIMPLEPERF ? (size_t)pd_u16(h + 4) << 16 | pd_u16(h + 6)
                                                 : pd_u16(h + 6);
        if (rsize < 8 || (size != UINT64_MAX && rsize > size - (off - start))) {
            /* The framing is lost: nothing after can be trusted. */
            int st = pd_fail(b, off, "record of type %" PRIu32 " has size %zu, %s", type,
                             rsize, rsize < 8 ? "less than its header"
                                              : "past the end of the data section");
            if (b->o->keep_going) {
                b->stop.stopped = 1;
                b->stop.why = *b->err;
                return PC_OK;
            }
            return st;
        }
        got = src_need(b->in, rsize, b->err);
        if (got < 0)
            return b->err->status;
        if (!got) {
            int st = pd_fail(b, off, "the file ends inside a record of %zu bytes", rsize);
            if (b->o->keep_going) {
                b->stop.stopped = 1;
                b->stop.why = *b->err;
                return PC_OK;
            }
            return st;
        }
        /* AUXTRACE and, in the pipe form, HEADER_TRACING_DATA records are
         * followed by data outside their size, which they give. */
        uint64_t trailing = 0;
        const uint8_t *r = src_ptr(b->in);
        if (type == PD_REC_AUXTRACE && rsize >= 16)
            trailing = pd_u64(r + 8);
        else if (type == PD_REC_HEADER_TRACING_DATA && rsize >= 12 && !b->simpleperf &&
                 pd_u32(r + 8) > rsize - 12)
            trailing = ((uint64_t)pd_u32(r + 8) + 7) / 8 * 8;
        int st = take_record(b, r, rsize, off);
        if (st != PC_OK)
            return st;
        src_skip(b->in, rsize);
        if (trailing) {
            if (size != UINT64_MAX && trailing > size - (src_offset(b->in) - start))
                return pd_fail(b, off, "the data after a record of type %" PRIu32 " runs past "
                               "the data section", type);
            if ((st = skip_to(b, src_offset(b->in) + trailing, "the end of a record's data")) !=
                PC_OK)
                return st;
        }
        if (b->p->oom)
            return pd_nomem(b);
    }
    return PC_OK;
}

/* ---- Features ---- */

typedef struct feat {
    int bit;
    uint64_t off, size;
} feat;

static int feat_cmp(const void *x, const void *y)
{
    const feat *a = x, *c = y;
    return a->off < c->off ? -1 : a->off > c->off;
}

static int read_features(pd_build *b)
{
    const pd_header *h = &b->h;
    size_t n = 0;
    feat list[256];
    for (int bit = 0; bit < 256; bit++)
        if (h->features[bit / 8] >> (bit % 8) & 1)
            list[n++].bit = bit;
    if (!n)
        return PC_OK;
    uint64_t at = h->data.off + h->data.size;
    int st = skip_to(b, at, "the feature index");
    if (st != PC_OK)
        return st;
    int got = src_need(b->in, n * 16, b->err);
    if (got < 0)
        return b->err->status;
    if (!got) {
        st = pd_fail(b, at, "the file ends inside the feature index (%zu features)", n);
        if (b->o->keep_going) {
            pc_log(b->o, PC_LOG_WARN, "%s", b->err->message);
            return PC_OK;
        }
        return st;
    }
    for (size_t i = 0; i < n; i++) {
        list[i].off = pd_u64(src_ptr(b->in) + 16 * i);
        list[i].size = pd_u64(src_ptr(b->in) + 16 * i + 8);
    }
    src_skip(b->in, n * 16);
    qsort(list, n, sizeof *list, feat_cmp);
    for (size_t i = 0; i < n; i++) {
        if (list[i].size == 0)
            continue;
        const char *why = NULL;
        uint64_t off = list[i].off;
        if (off < src_offset(b->in))
            why = "it overlaps what comes before it";
        else if (list[i].size > MAX_FEATURE)
            why = "it is larger than 1 GiB";
        if (!why) {
            if ((st = skip_to(b, off, "a feature section")) != PC_OK)
                return st;
            got = src_need(b->in, (size_t)list[i].size, b->err);
            if (got < 0)
                return b->err->status;
            if (!got)
                why = "the file ends inside it";
        }
        if (!why) {
            why = pd_parse_feature(list[i].bit, src_ptr(b->in), (size_t)list[i].size,
                                   &b->maps, &b->info, b->o);
            src_skip(b->in, (size_t)list[i].size);
            if (b->p->oom)
                return pd_nomem(b);
        }
        if (why) {
            st = pd_fail(b, off, "feature section %d: %s", list[i].bit, why);
            if (!b->o->keep_going)
                return st;
            pc_skips_add(&b->skipped, b->err);
            if (src_offset(b->in) < off)
                break;  /* cut file: nothing more to read */
        }
    }
    return PC_OK;
}

/* ---- The pipe form ---- */

static int read_pipe(pd_build *b)
{
    /* Attributes and features come as records; the data runs to the end. */
    src_skip(b->in, 16);
    b->ordered = 1;
    return read_records(b, UINT64_MAX);
}

int pd_on_header_attr(pd_build *b, const uint8_t *d, size_t len, uint64_t off)
{
    if (len < 8)
        return damaged(b, off, "a HEADER_ATTR record is too short");
    uint32_t asize = pd_u32(d + 4);
    if (asize < 64 || asize > len)
        return damaged(b, off, "a HEADER_ATTR record's attribute size is out of range");
    int st = add_attr(b, d, asize, off);
    if (st != PC_OK)
        return st;
    for (size_t k = asize; k + 8 <= len; k += 8)
        if (add_id(b, pd_u64(d + k), (uint32_t)(b->nattrs - 1)) < 0)
            return pd_nomem(b);
    id_layout(b);
    return PC_OK;
}

/* ---- Entry ---- */

static int read_file(pd_build *b)
{
    pd_header *h = &b->h;
    if (h->data.off > MAX_PREFIX)
        return pd_fail(b, 40, "the data section starts at offset %" PRIu64 ", past the "
                       "64 MiB this reader reads before it", h->data.off);
    int got = src_need(b->in, (size_t)h->data.off, b->err);
    if (got < 0)
        return b->err->status;
    if (!got)
        return pd_fail(b, src_avail(b->in), "the file ends before its data section, at "
                       "offset %" PRIu64, h->data.off);
    const uint8_t *pre = src_ptr(b->in);
    size_t n = (size_t)(h->attrs.size / h->attr_size);
    if (n == 0)
        return pd_fail(b, 24, "the file has no event attributes");
    for (size_t i = 0; i < n; i++) {
        uint64_t at = h->attrs.off + i * h->attr_size;
        const uint8_t *e = pre + at;
        size_t asize = pd_u32(e + 4);
        if (asize < 64 || asize > h->attr_size - 16)
            asize = (size_t)h->attr_size - 16;  /* trust the entry size */
        int st = add_attr(b, e, asize, at);
        if (st != PC_OK)
            return st;
        uint64_t ioff = pd_u64(e + h->attr_size - 16), isize = pd_u64(e + h->attr_size - 8);
        if (isize % 8 || ioff > h->data.off || isize > h->data.off - ioff)
            return pd_fail(b, at + h->attr_size - 16, "the ids of event attribute %zu lie "
                           "outside the space before the data section", i);
        for (uint64_t k = 0; k < isize; k += 8)
            if (add_id(b, pd_u64(pre + ioff + k), (uint32_t)i) < 0)
                return pd_nomem(b);
    }
    id_layout(b);
    int st = skip_to(b, h->data.off, "the data section");
    if (st != PC_OK)
        return st;
    if (h->data.size == 0) {
        /* A recording whose writer did not finish: read what is there. */
        b->unfinished = 1;
        return read_records(b, UINT64_MAX);
    }
    if ((st = read_records(b, h->data.size)) != PC_OK)
        return st;
    if (b->stop.stopped)
        return PC_OK;
    if ((st = flush(b, 0, 1)) != PC_OK)
        return st;
    return read_features(b);
}

int pc_read_perfdata(pc_input *in, pc_profile *p, const pc_options *o, pc_error *err)
{
    pd_build b;
    memset(&b, 0, sizeof b);
    b.p = p;
    b.o = o;
    b.in = in;
    b.err = err;
    int got = src_need(in, PD_HEADER_SIZE, err);
    if (got < 0)
        return err->status;
    uint64_t at;
    const char *why = pd_parse_header(src_ptr(in), src_avail(in), &b.h, &at);
    if (why)
        return src_fail_at(in, err, at, "%s", why);
    int st = pd_build_init(&b);
    if (st == PC_OK) {
        /* simpleperf's feature bits tell its files apart from the start:
         * they are in time order, and name some mappings its own way. */
        for (int bit = 128; bit < 136; bit++)
            b.simpleperf |= b.h.features[bit / 8] >> (bit % 8) & 1;
        /* Older simpleperf versions wrote none of their own features;
         * perf always writes its version, which simpleperf never does. */
        if (!(b.h.features[PD_FEAT_VERSION / 8] >> (PD_FEAT_VERSION % 8) & 1) && !b.h.pipe)
            b.simpleperf = 1;
        b.ordered = !b.simpleperf;
        st = b.h.pipe ? read_pipe(&b) : read_file(&b);
    }
    if (st == PC_OK && b.ordered)
        st = flush(&b, 0, 1);
    if (st == PC_OK)
        st = pd_finish(&b);
    pd_build_free(&b);
    return st;
}
