/* The record layer of the simpleperf reader: the file's framing (magic,
 * version, length-prefixed records) and each record's protobuf decoded
 * into an sp_record, with wire types checked field by field.  The model is
 * built from the records in simpleperf.c. */
#include "base/grow.h"
#include "read/simpleperf/simpleperf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/pbwire.h"
#include "io/source.h"

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

void sp_close(sp_reader *r)
{
    free(r->chain);
    free(r->strs[0]);
    free(r->strs[1]);
    memset(r, 0, sizeof *r);
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
    sp_reader *r;
    pc_error *err;
} dec;

static int wire_fail(dec *d, const pb_reader *pr)
{
    src_fail_at(d->r->in, d->err, pb_offset(pr, pr->err_at),
                "record %zu: %s", d->r->n_records + 1, pb_strerror(pr->err));
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
    if (got > 0 && f->number >= n_expect && !d->r->unknown_fields++) {
        d->r->first_unknown.number = f->number;
        d->r->first_unknown.record = d->r->n_records + 1;
        d->r->first_unknown.offset = pb_offset(pr, f->at);
    }
    return got;
}

static int push_str(dec *d, int which, size_t *n, const pb_field *f)
{
    sp_reader *r = d->r;
    if (*n == r->strs_cap[which]) {
        size_t cap = r->strs_cap[which] ? r->strs_cap[which] * 2 : 64;
        sp_str *s = realloc(r->strs[which], cap * sizeof *s);
        if (!s) {
            pc_fail(d->err, PC_ENOMEM, "%s: out of memory", src_name(r->in));
            return -1;
        }
        r->strs[which] = s;
        r->strs_cap[which] = cap;
    }
    r->strs[which][*n].s = (const char *)f->data;
    r->strs[which][*n].len = f->len;
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
        if ((tag != 0x08 && tag != 0x10 && tag != 0x18 && tag != 0x20) ||
            pb_varint_fast(&q, end, &v) != PB_OK)
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

static int dec_sample(dec *d, pb_reader *pr, sp_record *rec)
{
    static const uint8_t expect[] = {ANY, V, V, L, V, V, L};
    sp_reader *r = d->r;
    pb_field f;
    pb_reader sub;
    int got = 0;
    size_t n = 0;
    memset(&rec->sample, 0, sizeof rec->sample);
    for (;;) {
        /* Fast path for callchain entries, most of a sample: the tag
         * byte, a short length that fits, no pb_field. */
        const uint8_t *q = pr->p;
        uint64_t len;
        if (q < pr->end && *q++ == 0x1a && pb_varint_fast(&q, pr->end, &len) == PB_OK &&
            len <= (uint64_t)(pr->end - q)) {
            f.data = q;
            f.len = (size_t)len;
            pr->p = q + len;
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
        {
            if (pc_grow(&r->chain, &r->chain_cap, n + 1, sizeof *r->chain, 256) < 0) {
                pc_fail(d->err, PC_ENOMEM, "%s: out of memory", src_name(r->in));
                return -1;
            }
            pb_reader_sub(pr, &f, &sub);
            if (dec_entry(d, &sub, &r->chain[n++]) < 0)
                return -1;
        }
    }
    rec->sample.chain = r->chain;
    rec->sample.n_chain = n;
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
    rec->file.symbols = d->r->strs[0];
    rec->file.mangled = d->r->strs[1];
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
    rec->meta.event_types = d->r->strs[0];
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

static int sp_next_strict(sp_reader *r, sp_record *rec, pc_error *err, int *framed);

int sp_next(sp_reader *r, sp_record *rec, pc_error *err)
{
    for (;;) {
        int framed = 0;
        int got = sp_next_strict(r, rec, err, &framed);
        if (got >= 0 || !r->keep_going || err->status != PC_EINPUT)
            return got;
        if (framed) {
            /* The record's frame holds: skip it, read on. */
            pc_skips_add(&r->skipped, err);
            continue;
        }
        /* The framing is broken: the file ends here. */
        r->stop.why = *err;
        r->stop.stopped = 1;
        r->done = 1;
        return 0;
    }
}

/* sp_next without keep_going; *framed tells a damaged record whose size
 * prefix was sound (the next record can still be found). */
static int sp_next_strict(sp_reader *r, sp_record *rec, pc_error *err, int *framed)
{
    pc_input *in = r->in;
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
    pb_reader pr;
    dec d = {r, err};
    pb_reader_init(&pr, src_ptr(in), size, off + 4);
    rec->offset = off;
    rec->size = size;
    rec->index = r->n_records + 1;
    r->consumed = size;
    int bad = dec_record(&d, &pr, rec) < 0;
    r->n_records++;
    if (bad) {
        *framed = 1;
        return -1;
    }
    return 1;
}
