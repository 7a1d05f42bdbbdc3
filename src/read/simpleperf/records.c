/* The record layer of the simpleperf reader: the file's framing (magic,
 * version, length-prefixed records) and each record's protobuf decoded
 * into an sp_record, with wire types checked field by field.  The model is
 * built from the records in simpleperf.c. */
#include "base/grow.h"
#include "read/simpleperf/simpleperf.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashtab.h"
#include "base/pbwire.h"
#include "io/source.h"

/* The longest caller path (a sample's entries past the leaf, decoded
 * without fault or unknown field) the reader's set keeps. */
enum { MEMO_MAX_RUN = 64 << 10 };

int sp_detect(const uint8_t *data, size_t len)
{
    return len >= SP_MAGIC_LEN && memcmp(data, SP_MAGIC, SP_MAGIC_LEN) == 0;
}

int sp_open(sp_reader *r, pc_input *in, pc_error *err)
{
    memset(r, 0, sizeof *r);
    r->in = in;
    int got = src_need(in, SP_MAGIC_LEN + 2, err);
    if (got < 0)
        return -got;
    if (!sp_detect(src_ptr(in), src_avail(in)))
        return src_fail_at(in, err, 0, "not a simpleperf report-sample file "
                                       "(no SIMPLEPERF magic)");
    if (!got)
        return src_fail_at(in, err, src_avail(in),
                           "file ends inside the header (expected a 2-byte version)");
    const uint8_t *h = src_ptr(in);
    r->version = (uint16_t)(h[10] | h[11] << 8);
    if (r->version != 1)
        return src_fail_at(in, err, SP_MAGIC_LEN,
                           "unsupported version %u (expected 1)", r->version);
    src_skip(in, SP_MAGIC_LEN + 2);
    return PC_OK;
}

pc_byteset *sp_paths(sp_reader *r)
{
    if (r->memo && !r->paths) {
        r->paths = malloc(sizeof *r->paths);
        if (!r->paths || pc_byteset_init(r->paths, SP_MAX_PATHS, SP_PATH_BYTES) < 0) {
            if (r->paths)
                pc_byteset_free(r->paths);
            free(r->paths);
            r->paths = NULL;
            r->memo = 0;
        }
    }
    return r->paths;
}

void sp_close(sp_reader *r)
{
    sp_decoder_free(&r->dc);
    if (r->paths) {
        pc_byteset_free(r->paths);
        free(r->paths);
    }
    memset(r, 0, sizeof *r);
}

void sp_decoder_free(sp_decoder *dc)
{
    free(dc->chain);
    free(dc->strs[0]);
    free(dc->strs[1]);
    memset(dc, 0, sizeof *dc);
}

const char *sp_error_code_name(uint32_t code)
{
    static const char *const names[] = {
        "ERROR_NONE", "ERROR_UNKNOWN", "ERROR_NOT_ENOUGH_STACK",
        "ERROR_MEMORY_INVALID", "ERROR_UNWIND_INFO", "ERROR_INVALID_MAP",
        "ERROR_MAX_FRAME_EXCEEDED", "ERROR_REPEATED_FRAME", "ERROR_INVALID_ELF",
    };
    return code < sizeof names / sizeof *names ? names[code] : NULL;
}

/* Context for decoding one record: failures name the record. */
typedef struct dec {
    const pc_input *in;
    sp_decoder *dc;
    size_t index;      /* the record's number, 1 for the first */
    pc_error *err;
} dec;

static int wire_fail(dec *d, const pb_reader *pr)
{
    src_fail_at(d->in, d->err, pb_offset(pr, pr->err_at),
                "record %zu: %s", d->index, pb_strerror(pr->err));
    return -1;
}

/* The next field of pr, known fields' wire types checked against
 * expect[number].  Returns 1, 0 at the end, -1 on error. */
static int next_any_field(dec *d, pb_reader *pr, pb_field *f,
                          const uint8_t *expect, size_t n_expect)
{
    int got = pb_next_checked(pr, f, expect, n_expect, 0);
    return got < 0 ? wire_fail(d, pr) : got;
}

/* next_any_field, counting the fields past expect[]: a newer simpleperf
 * may add some, which are skipped as protobuf says, but told of. */
static int next_field(dec *d, pb_reader *pr, pb_field *f,
                      const uint8_t *expect, size_t n_expect)
{
    int got = next_any_field(d, pr, f, expect, n_expect);
    if (got > 0 && f->number >= n_expect && !d->dc->unknown.count++) {
        d->dc->unknown.number = f->number;
        d->dc->unknown.record = d->index;
        d->dc->unknown.offset = pb_offset(pr, f->at);
    }
    return got;
}

/* Offsets stand in for pointers into the decoder's arrays, which may
 * move, until sp_decoder_fix(). */
#define AS_PTR(off) ((void *)(uintptr_t)(off))
#define AS_OFF(ptr) ((size_t)(uintptr_t)(ptr))

/* Appends f's string to the decoder's list which; a record's strings are
 * the n from its first. */
static int push_str(dec *d, int which, size_t *n, const pb_field *f)
{
    sp_decoder *dc = d->dc;
    if (pc_grow(&dc->strs[which], &dc->strs_cap[which], dc->n_strs[which] + 1,
                sizeof *dc->strs[which], 64) < 0) {
        pc_fail(d->err, PC_ENOMEM, "%s: out of memory", src_name(d->in));
        return -1;
    }
    dc->strs[which][dc->n_strs[which]].s = (const char *)f->data;
    dc->strs[which][dc->n_strs[which]].len = f->len;
    dc->n_strs[which]++;
    (*n)++;
    return 0;
}

static sp_str as_str(const pb_field *f)
{
    sp_str s = {(const char *)f->data, f->len};
    return s;
}

#define V PB_VARINT
#define L PB_LEN
#define ANY PB_ANY

static int dec_entry(dec *d, pb_reader *pr, sp_entry *e)
{
    static const uint8_t expect[] = {ANY, V, V, V, V};
    pb_field f;
    int got;
    memset(e, 0, sizeof *e);
    /* Fast path for the entries as simpleperf writes them (one-byte tags
     * of the four varint fields); anything else, errors included, is left
     * to the general loop below from where this one stopped. */
    const uint8_t *p = pr->p, *end = pr->end;
    while (p < end) {
        uint8_t tag = *p;
        uint64_t v;
        const uint8_t *q = p + 1;
        /* A symbol_id of -1 (unknown code) is a ten-byte varint. */
        if ((tag != 0x08 && tag != 0x10 && tag != 0x18 && tag != 0x20) ||
            (!pb_varint9(&q, end, &v) && pb_varint_fast(&q, end, &v) != PB_OK))
            break;
        if (tag == 0x08)
            e->vaddr = v;
        else if (tag == 0x10)
            e->file_id = (uint32_t)v;
        else if (tag == 0x18)
            e->symbol_id = (int32_t)(uint32_t)v;
        else if (v <= PC_EXEC_ART) {
            e->exec = (uint8_t)v;
            e->has_exec = 1;
        }
        p = q;
    }
    pr->p = p;
    if (p == end) {
        e->tag = sp_entry_tag(e);
        return 0;
    }
    while ((got = next_field(d, pr, &f, expect, sizeof expect)) > 0) {
        switch (f.number) {
        case 1: e->vaddr = f.value; break;
        case 2: e->file_id = (uint32_t)f.value; break;
        case 3: e->symbol_id = (int32_t)(uint32_t)f.value; break;
        case 4:
            /* proto2 keeps an unknown enum value as an unknown field, so
             * the entry reads as if the type were absent. */
            if (f.value <= PC_EXEC_ART) {
                e->exec = (uint8_t)f.value;
                e->has_exec = 1;
            }
            break;
        }
    }
    e->tag = sp_entry_tag(e);
    return got;
}

static int dec_unwind(dec *d, pb_reader *pr, sp_record *rec)
{
    static const uint8_t expect[] = {ANY, V, V, V};
    pb_field f;
    int got;
    rec->sample.has_unwind = 1;
    while ((got = next_field(d, pr, &f, expect, sizeof expect)) > 0) {
        switch (f.number) {
        case 1: rec->sample.raw_error_code = (uint32_t)f.value; break;
        case 2: rec->sample.error_addr = f.value; break;
        case 3: rec->sample.error_code = (uint32_t)f.value; break;
        }
    }
    return got;
}

/* From at, a run of callchain fields as simpleperf writes them (a 0x1a
 * tag, a length that fits): its end, and *n its fields. */
static inline __attribute__((always_inline)) const uint8_t *
chain_run(const uint8_t *at, const uint8_t *end, uint32_t *n)
{
    const uint8_t *q = at;
    *n = 0;
    while (q < end && *q == 0x1a) {
        const uint8_t *r = q + 1;
        uint64_t len;
        if (pb_varint_fast(&r, end, &len) != PB_OK || len > (uint64_t)(end - r))
            break;
        q = r + len;
        ++*n;
    }
    return q;
}

/* Decodes a run of callchain fields that decoded without fault before
 * into out, n entries at most.  Returns the entries decoded: n, unless
 * the bytes are not what they were (a broken promise, told as an error
 * rather than a wrong stack). */
static size_t decode_run(const uint8_t *p, size_t len, sp_entry *out, size_t n)
{
    sp_decoder scratch = {0};
    pc_error err;
    dec d = {NULL, &scratch, 0, &err};
    pb_reader run, sub;
    pb_field f;
    size_t k = 0;
    pb_reader_init(&run, p, len, 0);
    while (k < n && pb_next(&run, &f) > 0) {
        if (f.number != 3 || f.wiretype != PB_LEN)
            return k;
        pb_reader_sub(&run, &f, &sub);
        /* A damaged entry would have kept the run out of the memo, and
         * dec_entry fails only on one (its d.in is never read then). */
        if (dec_entry(&d, &sub, &out[k]) < 0)
            return k;
        k++;
    }
    return run.p == run.end && scratch.unknown.count == 0 ? k : 0;
}

int sp_peek_path(const uint8_t *data, uint32_t size, sp_peek *pk)
{
    const uint8_t *p = data, *end = data + size;
    uint64_t v;
    pk->at = NULL;
    /* A Record whose first field is its Sample. */
    if (p == end || *p++ != 0x0a || !pb_varint9(&p, end, &v) || v > (uint64_t)(end - p))
        return 0;
    end = p + v;
    /* Its varints as simpleperf writes them, up to the leaf entry. */
    while (p < end && (*p == 0x08 || *p == 0x10 || *p == 0x20 || *p == 0x28)) {
        p++;
        if (!pb_varint9(&p, end, &v))
            return 0;
    }
    if (p == end || *p++ != 0x1a || pb_varint_fast(&p, end, &v) != PB_OK ||
        v > (uint64_t)(end - p))
        return 0;
    p += v;
    uint32_t n;
    const uint8_t *e = chain_run(p, end, &n);
    if (!n || e - p > MEMO_MAX_RUN)
        return 0;
    *pk = (sp_peek){p, e, end, pc_hash_bytes(p, (size_t)(e - p)), n};
    return 1;
}

int sp_decode_lazy(const sp_record *rec, sp_entry *out)
{
    out[0] = rec->sample.chain[0];
    size_t n = rec->sample.n_lazy;
    return decode_run(rec->sample.raw, rec->sample.raw_len, out + 1, n) == n ? 0 : -1;
}

static int dec_sample(dec *d, pb_reader *pr, sp_record *rec)
{
    static const uint8_t expect[] = {ANY, V, V, L, V, V, L};
    sp_decoder *dc = d->dc;
    pb_field f;
    pb_reader sub;
    int got = 0;
    size_t first = dc->n_chain;
    /* [raw0, raw1): the entries past the leaf while they are one run. */
    const uint8_t *raw0 = NULL, *raw1 = NULL;
    int raw_ok = 1;
    size_t unknown0 = 0;
    uint32_t n_lazy = 0, path = SP_NO_PATH;
    /* The run from the first entry past the leaf, hashed when it was
     * looked up: its end and hash. */
    const uint8_t *run_end = NULL;
    uint64_t run_hash = 0;
    int use_memo = 0;
    memset(&rec->sample, 0, sizeof rec->sample);
    for (;;) {
        /* Fast paths for callchain entries, most of a sample (the tag
         * byte, a short length that fits, no pb_field), and for its
         * one-byte-tag varints. */
        const uint8_t *at = pr->p, *q = at < pr->end ? at + 1 : at;
        uint8_t tag = at < pr->end ? *at : 0;
        uint64_t len;
        if (tag == 0x1a && pb_varint_fast(&q, pr->end, &len) == PB_OK &&
            len <= (uint64_t)(pr->end - q)) {
            f.data = q;
            f.len = (size_t)len;
            pr->p = q + len;
        } else if ((tag == 0x08 || tag == 0x10 || tag == 0x20 || tag == 0x28) &&
                   pb_varint9(&q, pr->end, &len)) {
            /* The sample's varints as simpleperf writes them: what the
             * switch below does with them, without the general reader. */
            switch (tag) {
            case 0x08: rec->sample.time = len; break;
            case 0x10: rec->sample.tid = (int32_t)(uint32_t)len; break;
            case 0x20: rec->sample.event_count = len; break;
            default: rec->sample.event_type_id = (uint32_t)len; break;
            }
            pr->p = q;
            continue;
        } else if ((got = next_field(d, pr, &f, expect, sizeof expect)) <= 0) {
            break;
        } else if (f.number != 3) {
            switch (f.number) {
            case 1: rec->sample.time = f.value; break;
            case 2: rec->sample.tid = (int32_t)(uint32_t)f.value; break;
            case 4: rec->sample.event_count = f.value; break;
            case 5: rec->sample.event_type_id = (uint32_t)f.value; break;
            case 6:
                pb_reader_sub(pr, &f, &sub);
                if (dec_unwind(d, &sub, rec) < 0)
                    return -1;
                break;
            }
            continue;
        }
        if (n_lazy) {
            /* More entries after a run left undecoded (an encoding other
             * than simpleperf's): the run is decoded after all. */
            if (pc_grow(&dc->chain, &dc->chain_cap, dc->n_chain + n_lazy, sizeof *dc->chain,
                        256) < 0) {
                pc_fail(d->err, PC_ENOMEM, "%s: out of memory", src_name(d->in));
                return -1;
            }
            if (decode_run(raw0, (size_t)(raw1 - raw0), &dc->chain[dc->n_chain], n_lazy) !=
                n_lazy) {
                src_fail_at(d->in, d->err, pb_offset(pr, raw0),
                            "record %zu: a callchain decoded before does not decode again",
                            d->index);
                return -1;
            }
            dc->n_chain += n_lazy;
            n_lazy = 0;
        }
        if (pc_grow(&dc->chain, &dc->chain_cap, dc->n_chain + 1, sizeof *dc->chain, 256) < 0) {
            pc_fail(d->err, PC_ENOMEM, "%s: out of memory", src_name(d->in));
            return -1;
        }
        if (dc->n_chain - first == 1) {
            /* The first entry past the leaf: a run met before is left as
             * it is. */
            raw0 = at;
            unknown0 = dc->unknown.count;
            use_memo = dc->paths && pc_hitgate_try(&dc->gate);
            if (use_memo) {
                /* The run found ahead (sp_peek_path) where it is this one. */
                const sp_peek *pk = &dc->peek;
                int peeked = pk->at == at && pk->limit == pr->end;
                uint32_t n = pk->n;
                const uint8_t *e = peeked ? pk->end : chain_run(at, pr->end, &n);
                if (n && e - at <= MEMO_MAX_RUN) {
                    run_end = e;
                    run_hash = peeked ? pk->hash : pc_hash_bytes(at, (size_t)(e - at));
                    path = pc_byteset_find(dc->paths, run_hash, at, (uint32_t)(e - at));
                    if (path != SP_NO_PATH) {
                        pc_hitgate_found(&dc->gate);
                        n_lazy = n;
                        raw1 = pr->p = e;
                        continue;
                    }
                }
            }
        } else if (raw0 && at != raw1) {
            raw_ok = 0;
        }
        pb_reader_sub(pr, &f, &sub);
        if (dec_entry(d, &sub, &dc->chain[dc->n_chain++]) < 0)
            return -1;
        raw1 = pr->p;
    }
    rec->sample.chain = AS_PTR(first);
    rec->sample.n_chain = dc->n_chain - first + n_lazy;
    rec->sample.path = SP_NO_PATH;
    if (n_lazy) {
        rec->sample.raw = raw0;
        rec->sample.raw_len = (uint32_t)(raw1 - raw0);
        rec->sample.path = path;
        rec->sample.n_lazy = n_lazy;
    } else if (raw0 && raw_ok && raw1 - raw0 <= MEMO_MAX_RUN) {
        rec->sample.raw = raw0;
        rec->sample.raw_len = (uint32_t)(raw1 - raw0);
        if (use_memo && dc->unknown.count == unknown0) {
            /* The run looked up is most often the whole path. */
            uint64_t h = run_end == raw1 ? run_hash : pc_hash_bytes(raw0, rec->sample.raw_len);
            rec->sample.path = pc_byteset_add(dc->paths, h, raw0, rec->sample.raw_len);
        }
    }
    return got;
}

static int dec_lost(dec *d, pb_reader *pr, sp_record *rec)
{
    static const uint8_t expect[] = {ANY, V, V};
    pb_field f;
    int got;
    memset(&rec->lost, 0, sizeof rec->lost);
    while ((got = next_field(d, pr, &f, expect, sizeof expect)) > 0) {
        if (f.number == 1)
            rec->lost.sample_count = f.value;
        else if (f.number == 2)
            rec->lost.lost_count = f.value;
    }
    return got;
}

static int dec_file(dec *d, pb_reader *pr, sp_record *rec)
{
    static const uint8_t expect[] = {ANY, V, L, L, L};
    pb_field f;
    int got;
    memset(&rec->file, 0, sizeof rec->file);
    size_t first_symbol = d->dc->n_strs[0], first_mangled = d->dc->n_strs[1];
    while ((got = next_field(d, pr, &f, expect, sizeof expect)) > 0) {
        switch (f.number) {
        case 1: rec->file.id = (uint32_t)f.value; break;
        case 2: rec->file.path = as_str(&f); break;
        case 3:
            if (push_str(d, 0, &rec->file.n_symbols, &f) < 0)
                return -1;
            break;
        case 4:
            if (push_str(d, 1, &rec->file.n_mangled, &f) < 0)
                return -1;
            break;
        }
    }
    rec->file.symbols = AS_PTR(first_symbol);
    rec->file.mangled = AS_PTR(first_mangled);
    return got;
}

static int dec_thread(dec *d, pb_reader *pr, sp_record *rec)
{
    static const uint8_t expect[] = {ANY, V, V, L};
    pb_field f;
    int got;
    memset(&rec->thread, 0, sizeof rec->thread);
    while ((got = next_field(d, pr, &f, expect, sizeof expect)) > 0) {
        switch (f.number) {
        case 1: rec->thread.tid = (uint32_t)f.value; break;
        case 2: rec->thread.pid = (uint32_t)f.value; break;
        case 3: rec->thread.name = as_str(&f); break;
        }
    }
    return got;
}

static int dec_meta(dec *d, pb_reader *pr, sp_record *rec)
{
    static const uint8_t expect[] = {ANY, L, L, L, L, L, V};
    pb_field f;
    int got;
    memset(&rec->meta, 0, sizeof rec->meta);
    size_t first_type = d->dc->n_strs[0];
    while ((got = next_field(d, pr, &f, expect, sizeof expect)) > 0) {
        switch (f.number) {
        case 1:
            if (push_str(d, 0, &rec->meta.n_event_types, &f) < 0)
                return -1;
            break;
        case 2:
            rec->meta.app_package = as_str(&f);
            rec->meta.has_app_package = 1;
            break;
        case 3:
            rec->meta.app_type = as_str(&f);
            rec->meta.has_app_type = 1;
            break;
        case 4:
            rec->meta.sdk_version = as_str(&f);
            rec->meta.has_sdk_version = 1;
            break;
        case 5:
            rec->meta.build_type = as_str(&f);
            rec->meta.has_build_type = 1;
            break;
        case 6: rec->meta.trace_offcpu = f.value != 0; break;
        }
    }
    rec->meta.event_types = AS_PTR(first_type);
    return got;
}

static int dec_switch(dec *d, pb_reader *pr, sp_record *rec)
{
    static const uint8_t expect[] = {ANY, V, V, V};
    pb_field f;
    int got;
    memset(&rec->sw, 0, sizeof rec->sw);
    while ((got = next_field(d, pr, &f, expect, sizeof expect)) > 0) {
        switch (f.number) {
        case 1: rec->sw.on = f.value != 0; break;
        case 2: rec->sw.time = f.value; break;
        case 3: rec->sw.tid = (uint32_t)f.value; break;
        }
    }
    return got;
}

#undef V
#undef L

static int dec_record(dec *d, pb_reader *pr, sp_record *rec)
{
    static const uint8_t expect[] = {ANY, PB_LEN, PB_LEN, PB_LEN, PB_LEN, PB_LEN, PB_LEN};
    static int (*const member[])(dec *, pb_reader *, sp_record *) = {
        NULL, dec_sample, dec_lost, dec_file, dec_thread, dec_meta, dec_switch,
    };
    pb_field f;
    pb_reader sub;
    int got;
    rec->kind = SP_NONE;
    /* Record is a oneof: when several members are present, as protobuf
     * parsers do, the last one wins.  A member past these is a newer kind
     * of record, counted as such by the caller. */
    while ((got = next_any_field(d, pr, &f, expect, sizeof expect)) > 0) {
        if (f.number >= 1 && f.number <= 6) {
            pb_reader_sub(pr, &f, &sub);
            if (member[f.number](d, &sub, rec) < 0)
                return -1;
            rec->kind = (int)f.number;
        }
    }
    return got;
}

#undef ANY

void sp_decoder_fix(const sp_decoder *dc, sp_record *rec)
{
    switch (rec->kind) {
    case SP_SAMPLE:
        rec->sample.chain = dc->chain ? dc->chain + AS_OFF(rec->sample.chain) : NULL;
        break;
    case SP_FILE:
        rec->file.symbols = dc->strs[0] ? dc->strs[0] + AS_OFF(rec->file.symbols) : NULL;
        rec->file.mangled = dc->strs[1] ? dc->strs[1] + AS_OFF(rec->file.mangled) : NULL;
        break;
    case SP_META:
        rec->meta.event_types = dc->strs[0] ? dc->strs[0] + AS_OFF(rec->meta.event_types) : NULL;
        break;
    }
}

void sp_decoder_take_unknown(sp_reader *r, sp_decoder *dc)
{
    size_t before = r->unknown.count;
    if (dc->unknown.count && !before)
        r->unknown = dc->unknown;
    else
        r->unknown.count += dc->unknown.count;
    dc->unknown.count = 0;
}

int sp_decode(const pc_input *in, sp_decoder *dc, const uint8_t *data, uint32_t size,
              uint64_t off, size_t index, sp_record *rec, pc_error *err)
{
    pb_reader pr;
    dec d = {in, dc, index, err};
    pb_reader_init(&pr, data, size, off + 4);
    rec->offset = off;
    rec->size = size;
    rec->index = index;
    return dec_record(&d, &pr, rec) < 0 ? -1 : 0;
}

int sp_next(sp_reader *r, sp_record *rec, pc_error *err)
{
    for (;;) {
        const uint8_t *data;
        uint32_t size;
        uint64_t off;
        int got = sp_frame(r, &data, &size, &off, err);
        if (got <= 0)
            return got;
        sp_decoder *dc = &r->dc;
        dc->n_chain = dc->n_strs[0] = dc->n_strs[1] = 0;
        dc->paths = sp_paths(r);
        int bad = sp_decode(r->in, dc, data, size, off, r->n_records, rec, err) < 0;
        sp_decoder_take_unknown(r, dc);
        if (!bad) {
            sp_decoder_fix(dc, rec);
            return 1;
        }
        if (!r->keep_going || err->status != PC_EINPUT)
            return -1;
        /* The record's frame holds: skip it, read on. */
        pc_skips_add(&r->skipped, err);
    }
}

static int frame_strict(sp_reader *r, const uint8_t **data, uint32_t *size_out,
                        uint64_t *off_out, pc_error *err);

int sp_frame_ready(const sp_reader *r)
{
    size_t avail = src_avail(r->in);
    if (r->done)
        return 1;
    if (avail < r->consumed + 4)
        return 0;
    const uint8_t *h = src_ptr(r->in) + r->consumed;
    uint32_t size = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 |
                    (uint32_t)h[3] << 24;
    /* The terminator is followed by a check that nothing follows, which
     * waits for the end of the input. */
    return size && avail - r->consumed - 4 >= size;
}

int sp_frame(sp_reader *r, const uint8_t **data, uint32_t *size, uint64_t *off,
             pc_error *err)
{
    int got = frame_strict(r, data, size, off, err);
    if (got >= 0 || !r->keep_going || err->status != PC_EINPUT)
        return got;
    /* The framing is broken: the file ends here. */
    r->stop.why = *err;
    r->stop.stopped = 1;
    r->done = 1;
    return 0;
}

static int frame_strict(sp_reader *r, const uint8_t **data, uint32_t *size_out,
                        uint64_t *off_out, pc_error *err)
{    pc_input *in = r->in;
    src_skip(in, r->consumed);
    r->consumed = 0;
    if (r->done)
        return 0;

    uint64_t off = src_offset(in);
    int got = src_need(in, 4, err);
    if (got < 0)
        return -1;
    if (!got) {
        if (src_avail(in) == 0)
            src_fail_at(in, err, off,
                        "file ends after %zu records without the terminating "
                        "zero size (truncated file?)", r->n_records);
        else
            src_fail_at(in, err, off, "file ends inside a record size "
                                      "(%zu of 4 bytes)", src_avail(in));
        return -1;
    }
    const uint8_t *h = src_ptr(in);
    uint32_t size = (uint32_t)h[0] | (uint32_t)h[1] << 8 |
                    (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
    src_skip(in, 4);
    if (size == 0) {
        r->done = 1;
        if ((got = src_need(in, 1, err)) < 0)
            return -1;
        if (got) {
            src_fail_at(in, err, off + 4, "%zu bytes of trailing data after "
                                          "the terminating zero size",
                        src_avail(in));
            return -1;
        }
        return 0;
    }
    if ((got = src_need(in, size, err)) < 0)
        return -1;
    if (!got) {
        src_fail_at(in, err, off, "record %zu claims %" PRIu32 " bytes but "
                                  "only %zu remain (truncated file?)",
                    r->n_records + 1, size, src_avail(in));
        return -1;
    }
    *data = src_ptr(in);
    *size_out = size;
    *off_out = off;
    r->consumed = size;
    r->n_records++;
    return 1;
}
