#include "pd_encode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every integer goes through here so that one flag turns the whole file
 * big-endian. */
static void put(const pde *e, pb_buf *b, uint64_t v, unsigned n)
{
    uint8_t bytes[8];
    for (unsigned i = 0; i < n; i++) {
        unsigned shift = e->big ? 8 * (n - 1 - i) : 8 * i;
        bytes[i] = (uint8_t)(v >> shift);
    }
    pb_raw(b, bytes, n);
}

static void put8(const pde *e, pb_buf *b, uint64_t v) { put(e, b, v, 8); }
static void put4(const pde *e, pb_buf *b, uint32_t v) { put(e, b, v, 4); }

static void zeros(pb_buf *b, size_t n)
{
    static const uint8_t z[64];
    while (n > 0) {
        size_t k = n < sizeof z ? n : sizeof z;
        pb_raw(b, z, k);
        n -= k;
    }
}

/* s with its NUL, then zeros up to a multiple of 8 (filenames, comms). */
static void padded_str(pb_buf *b, const char *s)
{
    size_t n = strlen(s) + 1;
    pb_raw(b, s, n);
    zeros(b, (8 - n % 8) % 8);
}

/* perf's string: u32 length (here strlen + 1 rounded up to 8), then the
 * NUL-padded bytes. */
static void perf_str(const pde *e, pb_buf *b, const char *s)
{
    size_t n = strlen(s) + 1;
    put4(e, b, (uint32_t)((n + 7) / 8 * 8));
    padded_str(b, s);
}

static uint8_t revbits(uint8_t x)
{
    uint8_t r = 0;
    for (int i = 0; i < 8; i++)
        r |= (uint8_t)(((x >> i) & 1) << (7 - i));
    return r;
}

void pde_begin(pde *e, int opts)
{
    memset(e, 0, sizeof *e);
    e->big = (opts & PDE_BIG_ENDIAN) != 0;
}

int pde_attr(pde *e, const pde_attr_spec *a)
{
    if (e->n_attrs == PDE_MAX_ATTRS)
        return -1;
    pde_attr_slot *slot = &e->attrs[e->n_attrs];
    slot->spec = *a;
    if (!slot->spec.size)
        slot->spec.size = PDE_ATTR_SIZE;
    if (a->n_ids) {
        slot->ids = malloc(a->n_ids * sizeof *slot->ids);
        if (!slot->ids) {
            e->failed = 1;
            return -1;
        }
        memcpy(slot->ids, a->ids, a->n_ids * sizeof *slot->ids);
    }
    const char *name = a->name ? a->name : "";
    slot->name = malloc(strlen(name) + 1);
    if (!slot->name) {
        free(slot->ids);
        slot->ids = NULL;
        e->failed = 1;
        return -1;
    }
    strcpy(slot->name, name);
    slot->spec.ids = slot->ids;
    slot->spec.name = slot->name;
    return (int)e->n_attrs++;
}

/* The perf_event_attr bytes of a, at its own size. */
static void attr_bytes(const pde *e, pb_buf *b, const pde_attr_spec *a)
{
    pb_buf t = {0};
    put4(e, &t, a->type);
    put4(e, &t, a->size);
    put8(e, &t, a->config);
    put8(e, &t, a->sample_period);
    put8(e, &t, a->sample_type);
    put8(e, &t, a->read_format);
    /* The flags are C bitfields, not an integer: a big-endian compiler
     * allocates them from each byte's top bit, so the little-endian bytes
     * are written with their bits reversed (what perf's swap_bitfield
     * undoes). */
    for (int i = 0; i < 8; i++) {
        uint8_t byte = (uint8_t)(a->flags >> (8 * i));
        if (e->big)
            byte = revbits(byte);
        pb_raw(&t, &byte, 1);
    }
    put4(e, &t, 0);  /* wakeup_events */
    put4(e, &t, 0);  /* bp_type */
    put8(e, &t, 0);  /* config1 */
    put8(e, &t, 0);  /* config2 */
    put8(e, &t, a->branch_sample_type);
    put8(e, &t, a->sample_regs_user);
    put4(e, &t, a->sample_stack_user);
    put4(e, &t, (uint32_t)a->clockid);
    put8(e, &t, a->sample_regs_intr);
    put4(e, &t, 0);  /* aux_watermark */
    put(e, &t, a->sample_max_stack, 2);
    put(e, &t, 0, 2);
    put4(e, &t, 0);  /* aux_sample_size */
    put4(e, &t, 0);
    put8(e, &t, 0);  /* sig_data */
    put8(e, &t, 0);  /* config3 */
    if (t.oom) {
        b->oom = 1;
    } else if (a->size <= t.len) {
        pb_raw(b, t.data, a->size);
    } else {
        pb_raw(b, t.data, t.len);
        zeros(b, a->size - t.len);
    }
    pb_buf_free(&t);
}

/* ---- Records ---- */

static const pde_attr_slot *sid_attr(const pde *e)
{
    if (e->sid_attr >= e->n_attrs)
        return NULL;
    const pde_attr_slot *a = &e->attrs[e->sid_attr];
    return (a->spec.flags & PDE_F_SAMPLE_ID_ALL) ? a : NULL;
}

/* Appends the sample_id_all trailer to e->rec; pid and tid override
 * e->sid's when the record names its own (have_pid). */
static void trailer(pde *e, int have_pid, uint32_t pid, uint32_t tid)
{
    const pde_attr_slot *a = sid_attr(e);
    if (!a)
        return;
    uint64_t st = a->spec.sample_type;
    pb_buf *b = &e->rec;
    uint64_t id = e->sid.id;
    if (!id && a->spec.n_ids)
        id = a->spec.ids[0];
    if (st & PDE_S_TID) {
        put4(e, b, have_pid ? pid : e->sid.pid);
        put4(e, b, have_pid ? tid : e->sid.tid);
    }
    if (st & PDE_S_TIME)
        put8(e, b, e->sid.time);
    if (st & PDE_S_ID)
        put8(e, b, id);
    if (st & PDE_S_STREAM_ID)
        put8(e, b, e->sid.stream_id);
    if (st & PDE_S_CPU) {
        put4(e, b, e->sid.cpu);
        put4(e, b, 0);
    }
    if (st & PDE_S_IDENTIFIER)
        put8(e, b, e->sid.identifier ? e->sid.identifier : id);
}

/* Frames the body in e->rec as one record and resets it. */
static void emit(pde *e, uint32_t type, uint16_t misc)
{
    size_t size = 8 + e->rec.len;
    if (size > 0xffff) {
        e->failed = 1;
    } else {
        put4(e, &e->data, type);
        put(e, &e->data, misc, 2);
        put(e, &e->data, size, 2);
        pb_raw(&e->data, e->rec.data, e->rec.len);
    }
    if (e->rec.oom)
        e->failed = 1;
    e->rec.len = 0;
}

static unsigned popcount64(uint64_t v)
{
    unsigned n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

void pde_sample_rec(pde *e, size_t attr, uint16_t misc, const pde_sample *s)
{
    if (attr >= e->n_attrs) {
        e->failed = 1;
        return;
    }
    const pde_attr_spec *a = &e->attrs[attr].spec;
    uint64_t st = a->sample_type;
    pb_buf *b = &e->rec;
    if (st & PDE_S_IDENTIFIER)
        put8(e, b, s->identifier);
    if (st & PDE_S_IP)
        put8(e, b, s->ip);
    if (st & PDE_S_TID) {
        put4(e, b, s->pid);
        put4(e, b, s->tid);
    }
    if (st & PDE_S_TIME)
        put8(e, b, s->time);
    if (st & PDE_S_ADDR)
        put8(e, b, s->addr);
    if (st & PDE_S_ID)
        put8(e, b, s->id);
    if (st & PDE_S_STREAM_ID)
        put8(e, b, s->stream_id);
    if (st & PDE_S_CPU) {
        put4(e, b, s->cpu);
        put4(e, b, s->cpu_res);
    }
    if (st & PDE_S_PERIOD)
        put8(e, b, s->period);
    if (st & PDE_S_READ)
        for (size_t i = 0; i < s->n_read; i++)
            put8(e, b, s->read[i]);
    if (st & PDE_S_CALLCHAIN) {
        put8(e, b, s->n_callchain);
        for (size_t i = 0; i < s->n_callchain; i++)
            put8(e, b, s->callchain[i]);
    }
    if (st & PDE_S_RAW) {
        put4(e, b, s->raw_size);
        if (s->raw_size)
            pb_raw(b, s->raw, s->raw_size);
        zeros(b, (8 - (4 + s->raw_size) % 8) % 8);
    }
    if (st & PDE_S_BRANCH_STACK) {
        put8(e, b, s->n_branches);
        /* With PERF_SAMPLE_BRANCH_HW_INDEX the kernel adds hw_idx; -1
         * says it is unknown. */
        if (a->branch_sample_type & (1u << 17))
            put8(e, b, (uint64_t)-1);
        for (size_t i = 0; i < 3 * s->n_branches; i++)
            put8(e, b, s->branches[i]);
    }
    if (st & PDE_S_REGS_USER) {
        put8(e, b, s->regs_abi);
        if (s->regs_abi) {
            unsigned n = popcount64(a->sample_regs_user);
            for (unsigned i = 0; i < n; i++)
                put8(e, b, s->regs ? s->regs[i] : 0);
        }
    }
    if (st & PDE_S_STACK_USER) {
        put8(e, b, s->stack_size);
        if (s->stack_size) {
            if (s->stack)
                pb_raw(b, s->stack, s->stack_size);
            else
                zeros(b, s->stack_size);
            put8(e, b, s->stack_dyn_size);
        }
    }
    if (st & PDE_S_WEIGHT)
        put8(e, b, s->weight);
    if (st & PDE_S_DATA_SRC)
        put8(e, b, s->data_src);
    if (st & PDE_S_TRANSACTION)
        put8(e, b, s->transaction);
    emit(e, PDE_SAMPLE, misc);
}

static void mmap_head(pde *e, uint32_t pid, uint32_t tid, uint64_t addr,
                      uint64_t len, uint64_t pgoff)
{
    put4(e, &e->rec, pid);
    put4(e, &e->rec, tid);
    put8(e, &e->rec, addr);
    put8(e, &e->rec, len);
    put8(e, &e->rec, pgoff);
}

void pde_mmap(pde *e, uint16_t misc, uint32_t pid, uint32_t tid, uint64_t addr,
              uint64_t len, uint64_t pgoff, const char *filename)
{
    mmap_head(e, pid, tid, addr, len, pgoff);
    padded_str(&e->rec, filename);
    trailer(e, 1, pid, tid);
    emit(e, PDE_MMAP, misc);
}

void pde_mmap2(pde *e, uint16_t misc, uint32_t pid, uint32_t tid, uint64_t addr,
               uint64_t len, uint64_t pgoff, uint32_t maj, uint32_t min,
               uint64_t ino, uint64_t ino_generation, uint32_t prot,
               uint32_t flags, const char *filename)
{
    mmap_head(e, pid, tid, addr, len, pgoff);
    put4(e, &e->rec, maj);
    put4(e, &e->rec, min);
    put8(e, &e->rec, ino);
    put8(e, &e->rec, ino_generation);
    put4(e, &e->rec, prot);
    put4(e, &e->rec, flags);
    padded_str(&e->rec, filename);
    trailer(e, 1, pid, tid);
    emit(e, PDE_MMAP2, (uint16_t)(misc & ~PDE_MISC_MMAP_BUILD_ID));
}

void pde_mmap2_build_id(pde *e, uint16_t misc, uint32_t pid, uint32_t tid,
                        uint64_t addr, uint64_t len, uint64_t pgoff,
                        const uint8_t *build_id, uint8_t bid_size,
                        uint32_t prot, uint32_t flags, const char *filename)
{
    uint8_t bid[24] = {0};
    if (bid_size > 20)
        bid_size = 20;
    bid[0] = bid_size;
    if (bid_size)
        memcpy(bid + 4, build_id, bid_size);
    mmap_head(e, pid, tid, addr, len, pgoff);
    pb_raw(&e->rec, bid, sizeof bid);
    put4(e, &e->rec, prot);
    put4(e, &e->rec, flags);
    padded_str(&e->rec, filename);
    trailer(e, 1, pid, tid);
    emit(e, PDE_MMAP2, (uint16_t)(misc | PDE_MISC_MMAP_BUILD_ID));
}

void pde_comm(pde *e, uint32_t pid, uint32_t tid, const char *comm, int exec)
{
    put4(e, &e->rec, pid);
    put4(e, &e->rec, tid);
    padded_str(&e->rec, comm);
    trailer(e, 1, pid, tid);
    emit(e, PDE_COMM, exec ? PDE_MISC_COMM_EXEC : 0);
}

static void task(pde *e, uint32_t type, uint32_t pid, uint32_t ppid,
                 uint32_t tid, uint32_t ptid, uint64_t time)
{
    put4(e, &e->rec, pid);
    put4(e, &e->rec, ppid);
    put4(e, &e->rec, tid);
    put4(e, &e->rec, ptid);
    put8(e, &e->rec, time);
    trailer(e, 1, pid, tid);
    emit(e, type, 0);
}

void pde_fork(pde *e, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
              uint64_t time)
{
    task(e, PDE_FORK, pid, ppid, tid, ptid, time);
}

void pde_exit(pde *e, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
              uint64_t time)
{
    task(e, PDE_EXIT, pid, ppid, tid, ptid, time);
}

void pde_lost(pde *e, uint64_t id, uint64_t lost)
{
    put8(e, &e->rec, id);
    put8(e, &e->rec, lost);
    trailer(e, 0, 0, 0);
    emit(e, PDE_LOST, 0);
}

void pde_lost_samples(pde *e, uint64_t lost)
{
    put8(e, &e->rec, lost);
    trailer(e, 0, 0, 0);
    emit(e, PDE_LOST_SAMPLES, 0);
}

void pde_switch(pde *e, int out)
{
    trailer(e, 0, 0, 0);
    emit(e, PDE_SWITCH, out ? PDE_MISC_SWITCH_OUT : 0);
}

void pde_switch_cpu_wide(pde *e, int out, uint32_t next_prev_pid,
                         uint32_t next_prev_tid)
{
    put4(e, &e->rec, next_prev_pid);
    put4(e, &e->rec, next_prev_tid);
    trailer(e, 0, 0, 0);
    emit(e, PDE_SWITCH_CPU_WIDE, out ? PDE_MISC_SWITCH_OUT : 0);
}

void pde_finished_round(pde *e)
{
    /* perf synthesizes it in user space: it has no sample_id. */
    emit(e, PDE_FINISHED_ROUND, 0);
}

void pde_raw_record(pde *e, uint32_t type, uint16_t misc, const void *body,
                    size_t len)
{
    if (len)
        pb_raw(&e->rec, body, len);
    emit(e, type, misc);
}

void pde_raw_data(pde *e, const void *data, size_t len)
{
    if (len)
        pb_raw(&e->data, data, len);
}

/* ---- Features ---- */

static pb_buf *feat(pde *e, unsigned bit, int replace)
{
    e->have_feat[bit] = 1;
    if (replace)
        e->feat[bit].len = 0;
    return &e->feat[bit];
}

void pde_feat_build_id(pde *e, uint16_t misc, int32_t pid,
                       const uint8_t *build_id, uint8_t bid_size,
                       const char *filename)
{
    pb_buf *b = feat(e, PDE_FEAT_BUILD_ID, 0);
    uint8_t bid[24] = {0};
    if (bid_size > 20)
        bid_size = 20;
    if (bid_size)
        memcpy(bid, build_id, bid_size);
    bid[20] = bid_size;
    size_t name = strlen(filename) + 1;
    name = (name + 7) / 8 * 8;
    put4(e, b, 0);
    /* Bit 15 (PERF_RECORD_MISC_BUILD_ID_SIZE): the size byte is set. */
    put(e, b, (uint16_t)(misc | 0x8000u), 2);
    put(e, b, 8 + 4 + sizeof bid + name, 2);
    put4(e, b, (uint32_t)pid);
    pb_raw(b, bid, sizeof bid);
    padded_str(b, filename);
}

static void feat_str(pde *e, unsigned bit, const char *s)
{
    perf_str(e, feat(e, bit, 1), s);
}

void pde_feat_hostname(pde *e, const char *s) { feat_str(e, PDE_FEAT_HOSTNAME, s); }
void pde_feat_osrelease(pde *e, const char *s) { feat_str(e, PDE_FEAT_OSRELEASE, s); }
void pde_feat_version(pde *e, const char *s) { feat_str(e, PDE_FEAT_VERSION, s); }
void pde_feat_arch(pde *e, const char *s) { feat_str(e, PDE_FEAT_ARCH, s); }

void pde_feat_nrcpus(pde *e, uint32_t available, uint32_t online)
{
    pb_buf *b = feat(e, PDE_FEAT_NRCPUS, 1);
    put4(e, b, available);
    put4(e, b, online);
}

void pde_feat_cmdline(pde *e, const char *const *argv, size_t argc)
{
    pb_buf *b = feat(e, PDE_FEAT_CMDLINE, 1);
    put4(e, b, (uint32_t)argc);
    for (size_t i = 0; i < argc; i++)
        perf_str(e, b, argv[i]);
}

void pde_feat_event_desc(pde *e)
{
    pb_buf *b = feat(e, PDE_FEAT_EVENT_DESC, 1);
    uint32_t size = e->n_attrs ? e->attrs[0].spec.size : PDE_ATTR_SIZE;
    put4(e, b, (uint32_t)e->n_attrs);
    put4(e, b, size);
    for (size_t i = 0; i < e->n_attrs; i++) {
        /* One size for every attr here, as the section has one. */
        pde_attr_spec a = e->attrs[i].spec;
        a.size = size;
        attr_bytes(e, b, &a);
        put4(e, b, (uint32_t)a.n_ids);
        perf_str(e, b, a.name);
        for (size_t j = 0; j < a.n_ids; j++)
            put8(e, b, a.ids[j]);
    }
}

void pde_feat_sp_file(pde *e, const pde_sp_file *f)
{
    pb_buf *b = feat(e, PDE_FEAT_SP_FILE, 0);
    pb_buf t = {0};
    pb_raw(&t, f->path, strlen(f->path) + 1);
    put4(e, &t, f->type);
    put8(e, &t, f->min_vaddr);
    put4(e, &t, (uint32_t)f->n_syms);
    for (size_t i = 0; i < f->n_syms; i++) {
        put8(e, &t, f->syms[i].vaddr);
        put4(e, &t, f->syms[i].len);
        pb_raw(&t, f->syms[i].name, strlen(f->syms[i].name) + 1);
    }
    if (f->type == 3) {
        put4(e, &t, (uint32_t)f->n_extra);
        for (size_t i = 0; i < f->n_extra; i++)
            put8(e, &t, f->extra[i]);
    } else if (f->type == 2 || f->type == 1) {
        put8(e, &t, f->n_extra ? f->extra[0] : 0);
    }
    put4(e, b, (uint32_t)t.len);
    pb_raw(b, t.data, t.len);
    if (t.oom)
        e->failed = 1;
    pb_buf_free(&t);
}

void pde_feat_sp_file2(pde *e, const pde_sp_file *f)
{
    pb_buf *b = feat(e, PDE_FEAT_SP_FILE2, 0);
    pb_buf t = {0};
    pb_string(&t, 1, f->path);
    pb_uint(&t, 2, f->type);
    pb_uint(&t, 3, f->min_vaddr);
    for (size_t i = 0; i < f->n_syms; i++) {
        size_t m = pb_begin(&t, 4);
        pb_uint(&t, 1, f->syms[i].vaddr);
        pb_uint(&t, 2, f->syms[i].len);
        pb_string(&t, 3, f->syms[i].name);
        pb_end(&t, m);
    }
    if (f->type == 3) {
        size_t m = pb_begin(&t, 5);
        if (f->n_extra) {
            /* proto3 packs repeated scalars. */
            size_t p = pb_begin(&t, 1);
            for (size_t i = 0; i < f->n_extra; i++)
                pb_put_varint(&t, f->extra[i]);
            pb_end(&t, p);
        }
        pb_end(&t, m);
    } else if (f->type == 2 || f->type == 1) {
        size_t m = pb_begin(&t, f->type == 2 ? 6 : 7);
        pb_uint(&t, 1, f->n_extra ? f->extra[0] : 0);
        pb_end(&t, m);
    }
    put4(e, b, (uint32_t)t.len);
    pb_raw(b, t.data, t.len);
    if (t.oom)
        e->failed = 1;
    pb_buf_free(&t);
}

void pde_feat_sp_meta(pde *e, const char *key, const char *value)
{
    pb_buf *b = feat(e, PDE_FEAT_SP_META_INFO, 0);
    pb_raw(b, key, strlen(key) + 1);
    pb_raw(b, value, strlen(value) + 1);
}

void pde_feat_raw(pde *e, unsigned bit, const void *data, size_t len)
{
    if (bit >= 256) {
        e->failed = 1;
        return;
    }
    pb_buf *b = feat(e, bit, 1);
    if (len)
        pb_raw(b, data, len);
}

/* ---- The file ---- */

void pde_free(pde *e)
{
    for (size_t i = 0; i < e->n_attrs; i++) {
        free(e->attrs[i].ids);
        free(e->attrs[i].name);
    }
    e->n_attrs = 0;
    pb_buf_free(&e->data);
    pb_buf_free(&e->rec);
    for (int i = 0; i < 256; i++)
        pb_buf_free(&e->feat[i]);
}

uint8_t *pde_finish(pde *e, size_t *len)
{
    pb_buf o = {0};
    const uint64_t header_size = 104;
    uint64_t entry = e->n_attrs ? e->attrs[0].spec.size + 16 : PDE_ATTR_SIZE + 16;
    uint64_t attr_size = e->attr_size ? e->attr_size : entry;

    /* Offsets first: ids, attrs, data, features follow one another. */
    uint64_t ids_off[PDE_MAX_ATTRS];
    uint64_t at = header_size;
    for (size_t i = 0; i < e->n_attrs; i++) {
        ids_off[i] = at;
        at += 8 * e->attrs[i].spec.n_ids;
    }
    uint64_t attrs_off = at, attrs_len = 0;
    for (size_t i = 0; i < e->n_attrs; i++)
        attrs_len += e->attrs[i].spec.size + 16;
    uint64_t data_off = attrs_off + attrs_len, data_len = e->data.len;

    pb_raw(&o, e->big ? "2ELIFREP" : "PERFILE2", 8);
    put8(e, &o, header_size);
    put8(e, &o, attr_size);
    put8(e, &o, attrs_off);
    put8(e, &o, attrs_len);
    put8(e, &o, data_off);
    put8(e, &o, data_len);
    put8(e, &o, 0);  /* event_types */
    put8(e, &o, 0);
    for (int w = 0; w < 4; w++) {
        uint64_t bits = 0;
        for (int i = 0; i < 64; i++)
            if (e->have_feat[64 * w + i])
                bits |= (uint64_t)1 << i;
        put8(e, &o, bits);
    }
    for (size_t i = 0; i < e->n_attrs; i++)
        for (size_t j = 0; j < e->attrs[i].spec.n_ids; j++)
            put8(e, &o, e->attrs[i].spec.ids[j]);
    for (size_t i = 0; i < e->n_attrs; i++) {
        attr_bytes(e, &o, &e->attrs[i].spec);
        put8(e, &o, ids_off[i]);
        put8(e, &o, 8 * e->attrs[i].spec.n_ids);
    }
    if (e->data.len)
        pb_raw(&o, e->data.data, e->data.len);

    size_t n_feat = 0;
    for (int i = 0; i < 256; i++)
        n_feat += e->have_feat[i];
    uint64_t feat_at = data_off + data_len + 16 * n_feat;
    for (int i = 0; i < 256; i++) {
        if (!e->have_feat[i])
            continue;
        put8(e, &o, feat_at);
        put8(e, &o, e->feat[i].len);
        feat_at += e->feat[i].len;
    }
    for (int i = 0; i < 256; i++)
        if (e->have_feat[i] && e->feat[i].len)
            pb_raw(&o, e->feat[i].data, e->feat[i].len);

    int failed = e->failed || o.oom || e->data.oom;
    for (int i = 0; i < 256; i++)
        failed |= e->feat[i].oom;
    pde_free(e);
    if (failed) {
        pb_buf_free(&o);
        return NULL;
    }
    *len = o.len;
    return o.data;
}

int pde_finish_file(pde *e, const char *path)
{
    size_t len = 0;
    uint8_t *bytes = pde_finish(e, &len);
    if (!bytes)
        return -1;
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(bytes, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = 0;
    free(bytes);
    return ok ? 0 : -1;
}
