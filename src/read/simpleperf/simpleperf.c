/* The simpleperf reader's model builder: records (records.c) into
 * threads, frames, stacks and samples, with File records resolving the
 * frames' names at the end. */
#include "read/simpleperf/simpleperf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/grow.h"
#include "base/pbwire.h"
#include "io/source.h"

typedef struct build {
    pc_profile *p;
    const pc_options *o;
    pc_input *in;
    pc_error *err;

    /* A frame per distinct callchain entry.  Frame ids equal the model's;
     * the file and symbol ids wait here until the Files are read.  The
     * whole entry is kept in one place, key[id], so that a lookup
     * touches one cache line instead of one per column. */
    struct {
        struct fkey {
            uint64_t vaddr;
            uint32_t file;
            int32_t sym;
            uint32_t exec;
        } *key;
        uint64_t *first_off;  /* record where the entry first appeared */
        size_t n, cap;
        pc_htab idx;
    } fr;

    pc_thread_index threads;  /* by tid: pids come later, in Thread records */

    /* The stack above the leaf of each caller path built before, by the
     * path's id (sp_record.sample.path), and the unwinding error it was
     * built under (see on_sample); stack + 1, 0 for none. */
    struct path_stack {
        uint32_t stack1, unwind;
    } *path_stack;
    /* Of the last samples, LEAF_WINDOW at a time: how many stepped to
     * their leaf other than by the stack's last child, and so whether
     * that step is fetched ahead. */
    uint32_t leaf_seen, leaf_steps;
    int fetch_leaf;
    sp_entry *lazy;           /* a callchain the decoder left undecoded */
    size_t lazy_cap;

    /* Files by id: path and a range of syms[] for their symbols. */
    struct {
        uint32_t *id, *path, *nsym;
        size_t *sym0;
        uint64_t *off;
        size_t n, cap;
        pc_htab idx;
    } files;
    uint32_t *syms;
    size_t nsyms, symcap;
    /* Each file's resource + 1 and category + 1 (0: not yet worked out),
     * for the frames that share it (resolve_frames). */
    uint32_t *file_res1;
    int8_t *file_cat1;

    int have_meta;
    size_t unknown_kinds;         /* records of a kind this reader does not know */
    pc_skips refused;             /* with keep_going: records skipped */
    size_t unnamed;               /* frames named by file id or address for want
                                     of names */
    int pre_meta;                 /* samples came before MetaInfo */
    uint32_t max_event;           /* largest event_type_id among them */
    uint64_t max_event_off;
} build;

enum { LEAF_WINDOW = 4096 };

static int nomem(build *b)
{
    return pc_fail(b->err, PC_ENOMEM, "%s: out of memory", src_name(b->in));
}

static int key_is(const struct fkey *k, const sp_entry *e)
{
    return k->vaddr == e->vaddr && k->file == e->file_id && k->sym == e->symbol_id &&
           k->exec == e->exec;
}

static uint32_t frame_of(build *b, const sp_entry *e, uint64_t off)
{
    pc_probe pr;
    if (pc_htab_reserve(&b->fr.idx, b->fr.n + 1) < 0)
        return PC_NONE;
    pc_probe_start_tag(&b->fr.idx, e->tag, &pr);
    for (uint32_t id; (id = pc_probe_next(&b->fr.idx, &pr)) != PC_NONE;)
        if (key_is(&b->fr.key[id], e))
            return id;
    struct pc_col cols[] = {PC_COL(b->fr.key), PC_COL(b->fr.first_off)};
    if (pc_grow_cols(&b->fr.cap, b->fr.n + 1, cols, 2) < 0)
        return PC_NONE;
    /* The name comes with the File record at the end of the file. */
    uint32_t id = pc_add_frame(b->p, PC_NONE, e->vaddr, PC_CAT_USER, e->exec);
    if (id == PC_NONE)
        return PC_NONE;
    b->fr.n++;
    b->fr.key[id] = (struct fkey){e->vaddr, e->file_id, e->symbol_id, e->exec};
    b->fr.first_off[id] = off;
    pc_htab_insert(&b->fr.idx, &pr, id);
    return id;
}

/* Finds or creates the thread of tid; pid and name come from Thread
 * records, usually at the end of the file. */
static uint32_t thread_of(build *b, int64_t tid)
{
    return pc_thread_find(&b->threads, b->p, -1, tid);
}

/* Execution type of the synthetic frames that stand for unwinding errors
 * (real entries have 0-3); their symbol_id holds the error code. */
#define UNWIND_FRAME 0xff

/* "ERROR_NOT_ENOUGH_STACK", or without the "ERROR_" prefix. */
static const char *error_name(uint32_t code, char buf[32], int full)
{
    const char *name = sp_error_code_name(code);
    if (!name) {
        snprintf(buf, 32, "ERROR_%" PRIu32, code);
        name = buf;
    }
    return full ? name : name + 6;
}

static int on_sample(build *b, const sp_record *rec)
{
    pc_profile *p = b->p;
    uint32_t thread = thread_of(b, rec->sample.tid);
    uint32_t stack = PC_NONE;

    if (thread == PC_NONE)
        return nomem(b);
    uint32_t ev = rec->sample.event_type_id;
    if (ev > UINT16_MAX || (b->have_meta && ev >= p->event.n))
        return src_fail_at(b->in, b->err, rec->offset,
                           "record %zu: sample event_type_id %" PRIu32
                           " is out of range (%zu event types)",
                           rec->index, ev, p->event.n);
    if (!b->have_meta && (!b->pre_meta || ev > b->max_event)) {
        /* Checked once MetaInfo has been seen, at the end. */
        b->pre_meta = 1;
        b->max_event = ev;
        b->max_event_off = rec->offset;
    }
    /* A stack whose unwinding stopped early hangs under a root frame that
     * names the reason, so truncated stacks are seen for what they are. */
    int unwind_error = rec->sample.has_unwind && rec->sample.error_code != 0;
    uint32_t unwind = unwind_error ? rec->sample.error_code : 0;
    /* The callchain is leaf first; stacks are built from the root. */
    size_t n_chain = rec->sample.n_chain;
    n_chain -= pc_depth_cut(p, n_chain);
    /* Most samples repeat a caller path seen before, the leaf's address
     * being what varies: then the stack above the leaf is known from the
     * path's id, instead of a frame and a stack-tree step per entry.  It
     * is the stack the steps would reach, as every frame and stack on the
     * path exists already.  A path is known under one unwinding error at
     * a time, the last it was built under. */
    uint32_t path = rec->sample.path;
    struct path_stack *ps = n_chain >= 2 && path < SP_MAX_PATHS && b->path_stack
                                ? &b->path_stack[path]
                                : NULL;
    size_t i = n_chain;
    if (ps && ps->stack1 && ps->unwind == unwind) {
        stack = ps->stack1 - 1;
        i = 1;
        ps = NULL;
    } else if (unwind_error) {
        sp_entry root = {.symbol_id = (int32_t)rec->sample.error_code, .exec = UNWIND_FRAME};
        root.tag = sp_entry_tag(&root);
        uint32_t frame = frame_of(b, &root, rec->offset);
        if (frame == PC_NONE)
            return nomem(b);
        stack = pc_stack(p, PC_NONE, frame);
    }
    const sp_entry *chain = rec->sample.chain;
    if (i > 1 && rec->sample.n_lazy) {
        if (pc_grow(&b->lazy, &b->lazy_cap, rec->sample.n_chain, sizeof *b->lazy, 256) < 0)
            return nomem(b);
        if (sp_decode_lazy(rec, b->lazy) < 0)
            return src_fail_at(b->in, b->err, rec->offset, "record %zu: a callchain decoded "
                               "before does not decode again", rec->index);
        chain = b->lazy;
    }
    /* Where the path is not known, fetch the hash slot of every entry's
     * frame (up to 64, root first), then the key each slot names, so that
     * their cache misses overlap instead of coming two at a time between
     * stack-tree steps.  Where every sample is a new stack, frames are
     * looked up most of the time: 11.7 s to 10.0 s for 1M such samples. */
    if (i > 1 && b->fr.idx.slot) {
        size_t home[64], m = i < 64 ? i : 64;
        for (size_t k = 0; k < m; k++) {
            pc_probe pr;
            pc_probe_start_tag(&b->fr.idx, chain[i - 1 - k].tag, &pr);
            home[k] = pr.i;
            __builtin_prefetch(&b->fr.idx.slot[pr.i]);
        }
        for (size_t k = 0; k < m; k++) {
            uint64_t sl = b->fr.idx.slot[home[k]];
            if (sl)
                __builtin_prefetch(&b->fr.key[(uint32_t)sl - 1]);
        }
    }
    /* When the entry is the frame of the child this stack last had (the
     * previous sample's path, mostly), frame and stack are known without
     * hashing. */
    while (i-- > 0) {
        if (i == 0 && ps && stack != PC_NONE && !p->oom)
            *ps = (struct path_stack){stack + 1, unwind};
        const sp_entry *e = &chain[i];
        uint32_t last = pc_stree_last(&p->stack, stack);
        if (last != PC_NONE) {
            uint32_t f = p->stack.frame[last];
            if (key_is(&b->fr.key[f], e)) {
                stack = last;
                continue;
            }
        }
        if (i == 0)
            b->leaf_steps++;
        uint32_t frame = frame_of(b, e, rec->offset);
        if (frame == PC_NONE)
            return nomem(b);
        stack = pc_stack(p, stack, frame);
    }
    /* Whether the leaf's step is worth fetching ahead (on_record_ahead):
     * where it is mostly the stack's last child, the fetch only costs. */
    if (++b->leaf_seen == LEAF_WINDOW) {
        b->fetch_leaf = b->leaf_steps > LEAF_WINDOW / 8;
        b->leaf_seen = b->leaf_steps = 0;
    }
    /* A count past INT64_MAX is held there, not read as negative. */
    pc_add_sample(p, thread, rec->sample.time, stack,
                  rec->sample.event_count > INT64_MAX ? INT64_MAX
                                                      : (int64_t)rec->sample.event_count,
                  (uint16_t)rec->sample.event_type_id, PC_NO_CPU);
    if (unwind_error) {
        char buf[32];
        pc_add_marker(p, thread, PC_MARK_UNWIND,
                      pc_intern_cstr(p, "Unwind error"), rec->sample.time,
                      rec->sample.time,
                      pc_intern_cstr(p, error_name(rec->sample.error_code, buf, 1)),
                      rec->sample.raw_error_code, rec->sample.error_addr);
    }
    return p->oom ? nomem(b) : PC_OK;
}

/* The frame of e, most likely, if there is one yet: the first whose
 * hash slot matches, its key not read (a guess is enough to fetch by,
 * and the key would be a cache miss of its own). */
static uint32_t frame_guess(const build *b, const sp_entry *e)
{
    if (!b->fr.idx.slot)
        return PC_NONE;
    pc_probe pr;
    pc_probe_start_tag(&b->fr.idx, e->tag, &pr);
    return pc_probe_next(&b->fr.idx, &pr);
}

/* What on_sample will look up for rec, fetched into the cache while the
 * records before it are built.  Stage 0: the slot of its caller path and
 * that of its leaf's frame.  Stage 1, some records later, with those in
 * the cache: the leaf frame's key, and where the stack tree keeps the
 * leaf's step under the caller path's stack (on generated recordings,
 * where most leaves are new steps, that step is a miss or two in tables
 * of 500k stacks). */
static void on_record_ahead(void *ctx, const sp_record *rec, int stage)
{
    build *b = ctx;
    if (rec->kind != SP_SAMPLE || !rec->sample.n_chain)
        return;
    const struct path_stack *ps = rec->sample.path < SP_MAX_PATHS && b->path_stack
                                      ? &b->path_stack[rec->sample.path]
                                      : NULL;
    if (stage == 0) {
        if (ps)
            __builtin_prefetch(ps);
        if (b->fr.idx.slot) {
            pc_probe pr;
            pc_probe_start_tag(&b->fr.idx, rec->sample.chain[0].tag, &pr);
            __builtin_prefetch(&b->fr.idx.slot[pr.i]);
        }
        return;
    }
    uint32_t unwind = rec->sample.has_unwind ? rec->sample.error_code : 0;
    if (!b->fetch_leaf || !ps || !ps->stack1 || ps->unwind != unwind)
        return;
    uint32_t frame = frame_guess(b, &rec->sample.chain[0]);
    if (frame != PC_NONE) {
        __builtin_prefetch(&b->fr.key[frame]);
        pc_stack_prefetch(b->p, ps->stack1 - 1, frame);
    }
}

static int on_file(build *b, const sp_record *rec)
{
    pc_probe pr;
    if (pc_htab_reserve(&b->files.idx, b->files.n + 1) < 0)
        return nomem(b);
    pc_probe_start(&b->files.idx, pc_mix64(rec->file.id), &pr);
    for (uint32_t i; (i = pc_probe_next(&b->files.idx, &pr)) != PC_NONE;)
        if (b->files.id[i] == rec->file.id)
            return src_fail_at(b->in, b->err, rec->offset,
                               "File id %" PRIu32 " appears twice (first at "
                               "offset %" PRIu64 ")",
                               rec->file.id, b->files.off[i]);
    struct pc_col cols[] = {PC_COL(b->files.id), PC_COL(b->files.path),
                            PC_COL(b->files.nsym), PC_COL(b->files.sym0),
                            PC_COL(b->files.off)};
    if (pc_grow_cols(&b->files.cap, b->files.n + 1, cols, 5) < 0)
        return nomem(b);
    if (rec->file.n_symbols > UINT32_MAX ||
        pc_grow_cols(&b->symcap, b->nsyms + rec->file.n_symbols,
                     (struct pc_col[]){PC_COL(b->syms)}, 1) < 0)
        return nomem(b);
    size_t i = b->files.n++;
    b->files.id[i] = rec->file.id;
    b->files.path[i] = pc_intern(b->p, rec->file.path.s, rec->file.path.len);
    b->files.nsym[i] = (uint32_t)rec->file.n_symbols;
    b->files.sym0[i] = b->nsyms;
    b->files.off[i] = rec->offset;
    for (size_t k = 0; k < rec->file.n_symbols; k++) {
        /* The raw names, when asked for and present. */
        const sp_str *sym = b->o->mangled && k < rec->file.n_mangled
                                ? &rec->file.mangled[k] : &rec->file.symbols[k];
        b->syms[b->nsyms++] = pc_intern(b->p, sym->s, sym->len);
    }
    pc_htab_insert(&b->files.idx, &pr, (uint32_t)i);
    return b->p->oom ? nomem(b) : PC_OK;
}

static int on_thread(build *b, const sp_record *rec)
{
    uint32_t t = thread_of(b, rec->thread.tid);
    if (t == PC_NONE)
        return nomem(b);
    /* A later record for the same thread carries its newer name. */
    b->p->thread.pid[t] = rec->thread.pid;
    b->p->thread.name[t] = pc_intern(b->p, rec->thread.name.s, rec->thread.name.len);
    return b->p->oom ? nomem(b) : PC_OK;
}

static uint32_t opt_str(pc_profile *p, int has, sp_str s)
{
    return has ? pc_intern(p, s.s, s.len) : PC_NONE;
}

static int on_meta(build *b, const sp_record *rec)
{
    pc_profile *p = b->p;
    if (b->have_meta) {
        pc_log(b->o, PC_LOG_WARN, "%s: offset %" PRIu64 ": ignoring a second "
                                  "MetaInfo record", src_name(b->in), rec->offset);
        return PC_OK;
    }
    b->have_meta = 1;
    if (rec->meta.n_event_types > PC_MAX_EVENTS)
        return src_fail_at(b->in, b->err, rec->offset, "MetaInfo lists %zu "
                           "event types (at most %d are supported)",
                           rec->meta.n_event_types, PC_MAX_EVENTS);
    /* Clock events count nanoseconds; with --trace-offcpu, the switch
     * samples stand for the time until the thread runs again (pc_offcpu
     * measures it).  Samples name events by their place in this list. */
    for (size_t i = 0; i < rec->meta.n_event_types; i++) {
        uint32_t name = pc_intern(p, rec->meta.event_types[i].s, rec->meta.event_types[i].len);
        if (name == PC_NONE)
            return nomem(b);
        const char *s = pc_str(&p->str, name);
        int off = rec->meta.trace_offcpu && strstr(s, "sched_switch") != NULL;
        int unit = off || pc_perf_clock_event(s) ? PC_UNIT_NS : PC_UNIT_COUNT;
        if (pc_event_append(p, name, unit, off) == PC_NONE)
            return nomem(b);
    }
    p->meta.app_package = opt_str(p, rec->meta.has_app_package, rec->meta.app_package);
    p->meta.app_type = opt_str(p, rec->meta.has_app_type, rec->meta.app_type);
    p->meta.sdk_version = opt_str(p, rec->meta.has_sdk_version, rec->meta.sdk_version);
    p->meta.build_type = opt_str(p, rec->meta.has_build_type, rec->meta.build_type);
    return p->oom ? nomem(b) : PC_OK;
}

static int on_switch(build *b, const sp_record *rec)
{
    uint32_t t = thread_of(b, rec->sw.tid);
    if (t == PC_NONE)
        return nomem(b);
    pc_add_switch(b->p, t, rec->sw.time, rec->sw.on);
    return b->p->oom ? nomem(b) : PC_OK;
}

/* Names each frame from its File record, once all records are read. */
static int resolve_frames(build *b)
{
    pc_profile *p = b->p;
    char name[64];
    uint32_t no_file = PC_NONE;
    b->file_res1 = calloc(b->files.n + 1, sizeof *b->file_res1);
    b->file_cat1 = calloc(b->files.n + 1, sizeof *b->file_cat1);
    if (!b->file_res1 || !b->file_cat1)
        return nomem(b);
    for (size_t id = 0; id < b->fr.n; id++) {
        pc_probe pr;
        uint32_t fi = PC_NONE;
        if (p->frame.exec[id] == UNWIND_FRAME) {
            char buf[32], label[64];
            snprintf(label, sizeof label, "[unwind error: %s]",
                     error_name((uint32_t)b->fr.key[id].sym, buf, 0));
            if (no_file == PC_NONE)
                no_file = pc_resource(p, pc_intern(p, "", 0));
            p->frame.func[id] = pc_func(p, pc_intern_cstr(p, label), no_file);
            p->frame.cat[id] = PC_CAT_OTHER;
            p->frame.exec[id] = PC_EXEC_NATIVE;
            continue;
        }
        pc_probe_start(&b->files.idx, pc_mix64(b->fr.key[id].file), &pr);
        if (b->files.n)
            for (uint32_t i; (i = pc_probe_next(&b->files.idx, &pr)) != PC_NONE;)
                if (b->files.id[i] == b->fr.key[id].file) {
                    fi = i;
                    break;
                }
        if (fi == PC_NONE && b->o->keep_going) {
            /* The Files come last: a cut file may lack them. */
            int n = snprintf(name, sizeof name, "[file %" PRIu32 "]+0x%" PRIx64,
                             b->fr.key[id].file, p->frame.addr[id]);
            if (no_file == PC_NONE)
                no_file = pc_resource(p, pc_intern(p, "", 0));
            p->frame.func[id] = pc_func(p, pc_intern(p, name, (size_t)n), no_file);
            p->frame.cat[id] = PC_CAT_OTHER;
            b->unnamed++;
            continue;
        }
        if (fi == PC_NONE)
            return src_fail_at(b->in, b->err, b->fr.first_off[id],
                               "sample refers to file_id %" PRIu32
                               ", which has no File record", b->fr.key[id].file);
        int32_t sym = b->fr.key[id].sym;
        uint32_t path = b->files.path[fi];
        const char *path_s = pc_str(&p->str, path);
        size_t path_len = pc_str_len(&p->str, path);
        uint32_t fname;
        if (sym != -1 && (sym < 0 || (uint32_t)sym >= b->files.nsym[fi]) && b->o->keep_going) {
            sym = -1;  /* named by address, like unknown code */
            b->unnamed++;
        }
        if (sym == -1) {
            fname = pc_address_name(p, path_s, path_len, p->frame.addr[id]);
            if (fname == PC_NONE)
                return nomem(b);
            /* vaddr_in_file is the ELF's own address: --symbols can name
             * it from the file. */
            p->frame.unnamed[id] = PC_ADDR_VADDR;
        } else if (sym < 0 || (uint32_t)sym >= b->files.nsym[fi]) {
            return src_fail_at(b->in, b->err, b->fr.first_off[id],
                               "sample refers to symbol_id %" PRId32 " of file_id %"
                               PRIu32 ", which has %" PRIu32 " symbols",
                               sym, b->fr.key[id].file, b->files.nsym[fi]);
        } else {
            fname = b->syms[b->files.sym0[fi] + (size_t)sym];
            /* Native code: its binary's DWARF may add lines and inlines. */
            if (p->frame.exec[id] == PC_EXEC_NATIVE)
                p->frame.unnamed[id] = PC_ADDR_VADDR | PC_ADDR_NAMED;
        }
        if (p->oom)
            return nomem(b);
        if (!b->file_res1[fi]) {
            uint32_t res = pc_resource(p, path);
            if (res == PC_NONE)
                return nomem(b);
            /* Interning may have moved the arena: take the path again. */
            path_s = pc_str(&p->str, path);
            b->file_res1[fi] = res + 1;
            b->file_cat1[fi] = (int8_t)(pc_category_of(path_s, path_len) + 1);
        }
        p->frame.func[id] = pc_func(p, fname, b->file_res1[fi] - 1);
        p->frame.cat[id] = (uint8_t)(b->file_cat1[fi] - 1);
    }
    return p->oom ? nomem(b) : PC_OK;
}

/* Threads that had samples but no Thread record: simpleperf takes each
 * for a process of its own (the name comes with every reader's). */
static void orphans_own_process(build *b)
{
    pc_profile *p = b->p;
    for (size_t t = 0; t < p->thread.n; t++)
        if (p->thread.name[t] == PC_NONE)
            p->thread.pid[t] = p->thread.tid[t];
}

static void free_build(build *b)
{
    free(b->path_stack);
    free(b->lazy);
    free(b->fr.key);
    free(b->fr.first_off);
    pc_htab_free(&b->fr.idx);
    pc_thread_index_free(&b->threads);
    free(b->files.id);
    free(b->files.path);
    free(b->files.nsym);
    free(b->files.sym0);
    free(b->files.off);
    pc_htab_free(&b->files.idx);
    free(b->syms);
    free(b->file_res1);
    free(b->file_cat1);
}

static int on_record_strict(build *b, const sp_record *rec);

/* With keep_going, a record the model refuses (an event type out of
 * range, a File id seen twice) is skipped and counted. */
static int on_record(void *ctx, const sp_record *rec)
{
    build *b = ctx;
    int st = on_record_strict(b, rec);
    if (st == PC_EINPUT && b->o->keep_going) {
        pc_skips_add(&b->refused, b->err);
        return PC_OK;
    }
    return st;
}

static int on_record_strict(build *b, const sp_record *rec)
{
    pc_profile *p = b->p;
    switch (rec->kind) {
    case SP_SAMPLE: return on_sample(b, rec);
    case SP_FILE: return on_file(b, rec);
    case SP_THREAD: return on_thread(b, rec);
    case SP_META: return on_meta(b, rec);
    case SP_SWITCH: return on_switch(b, rec);
    case SP_LOST:
        p->meta.has_lost = 1;
        p->meta.lost_sample_count = rec->lost.sample_count;
        p->meta.lost_count = rec->lost.lost_count;
        return PC_OK;
    default:
        /* A kind of record newer than this reader: told of, not fatal. */
        b->unknown_kinds++;
        return PC_OK;
    }
}

int pc_read_simpleperf(pc_input *in, pc_profile *p, const pc_options *o,
                       pc_error *err)
{
    sp_reader r;
    sp_record rec;
    build b;
    int st = PC_OK, got;

    memset(&b, 0, sizeof b);
    b.threads.by_tid = 1;
    b.p = p;
    b.o = o;
    b.in = in;
    b.err = err;
    p->meta.source = pc_intern_cstr(p, "simpleperf");
    /* simpleperf's report scripts drop gaps of up to 3 samples. */
    p->meta.default_gaps = 3;
    if ((st = sp_open(&r, in, err)) != PC_OK)
        return st;
    r.keep_going = o->keep_going;
    r.memo = 1;
    /* Without it, paths are built step by step. */
    b.path_stack = calloc(SP_MAX_PATHS, sizeof *b.path_stack);
    if (o->threads == 1) {
        while ((got = sp_next(&r, &rec, err)) > 0 && (st = on_record(&b, &rec)) == PC_OK)
            ;
        if (got < 0)
            st = err->status;
    } else {
        st = sp_read_threaded(&r, o->threads, on_record, on_record_ahead, &b, err);
    }
    if (st == PC_OK && b.pre_meta && b.max_event >= p->event.n)
        st = src_fail_at(in, err, b.max_event_off, "sample event_type_id %" PRIu32
                         " is out of range (%zu event types%s)", b.max_event,
                         p->event.n, b.have_meta ? "" : ": no MetaInfo record");
    if (st == PC_OK)
        st = resolve_frames(&b);
    if (st == PC_OK)
        orphans_own_process(&b);
    p->sample.read = p->sample.n;
    if (st == PC_OK && b.unknown_kinds)
        pc_log(o, PC_LOG_WARN, "%zu records of a kind this version does not know were "
               "skipped (written by a newer simpleperf?)", b.unknown_kinds);
    if (st == PC_OK && r.unknown.count)
        pc_log(o, PC_LOG_WARN, "%zu fields this version does not know were skipped "
               "(the first: field %" PRIu32 " in record %zu at offset %" PRIu64 "; "
               "written by a newer simpleperf?)", r.unknown.count, r.unknown.number,
               r.unknown.record, r.unknown.offset);
    if (st == PC_OK) {
        pc_skips_report(&r.skipped, o, "damaged records skipped");
        pc_skips_report(&b.refused, o, "records skipped as inconsistent");
        pc_stop_report(&r.stop, o, r.n_records, "records");
    }
    if (st == PC_OK && b.unnamed)
        pc_log(o, PC_LOG_WARN, "%zu frames named by their file and address: their File "
               "record or symbol is missing", b.unnamed);
    if (st == PC_OK && p->meta.has_lost && p->meta.lost_count) {
        uint64_t n = p->meta.lost_count, total = n + p->meta.lost_sample_count;
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " of %" PRIu64 " samples (%.1f%%) were lost "
               "while recording", n, total, 100.0 * (double)n / (double)total);
    }
    /* report-sample's own gap removal is the usual reason a file holds
     * threads but no samples. */
    if (st == PC_OK && !p->sample.n) {
        char hint[320];
        snprintf(hint, sizeof hint, "it has %zu records, %zu of them about threads%s; simpleperf "
                 "report-sample leaves out samples whose callchains are incomplete unless "
                 "run with --remove-gaps 0, and those its filters reject", r.n_records,
                 p->thread.n, b.unknown_kinds ? ", and records of kinds this version "
                 "does not know" : "");
        p->meta.empty_hint = pc_intern_cstr(p, hint);
    }
    /* Unchecked, a hint that could not be interned would leave an empty
     * profile, refused as bad input instead of out of memory. */
    if (st == PC_OK && p->oom)
        st = nomem(&b);
    free_build(&b);
    sp_close(&r);
    return st;
}
