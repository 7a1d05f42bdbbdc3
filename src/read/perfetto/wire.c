/* Field decoding shared by every packet family's reader: wire types are
 * checked against what the reader expects, and errors name the packet
 * (and, inside compressed packets, where in the decompressed bytes).
 * Apart, so that the family files only list their fields. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/error.h"
#include "io/source.h"
#include "read/perfetto/reader.h"

int pf_fail(pf_reader *r, uint64_t offset, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->z_depth)
        return src_fail_at(r->in, r->err, r->z_offset,
                           "packet %zu (in the compressed packets here, at "
                           "decompressed byte %" PRIu64 "): %s",
                           r->packet_index, offset, msg);
    return src_fail_at(r->in, r->err, offset, "packet %zu: %s", r->packet_index, msg);
}

int pf_nomem(pf_reader *r)
{
    return pc_fail(r->err, PC_ENOMEM, "%s: out of memory", src_name(r->in));
}

int pf_wire_fail(pf_reader *r, const pb_reader *pr, const char *what)
{
    return pf_fail(r, pb_offset(pr, pr->err_at), "%s: %s", what, pb_strerror(pr->err));
}

/* Next field of pr with known fields' wire types checked against
 * expect[number] (ANY: not checked).  1, 0 at the end, or -1 (err set). */
int pf_next(pf_reader *r, pb_reader *pr, pb_field *f, const uint8_t *expect,
            size_t n_expect, const char *what)
{
    int got = pb_next_checked(pr, f, expect, n_expect, 1);
    if (got < 0)
        pf_wire_fail(r, pr, what);
    return got;
}

/* Calls back for each value of a repeated varint field, packed or not. */
int pf_each_varint(pf_reader *r, pb_reader *pr, const pb_field *f, pf_each_fn fn,
                   void *ctx, const char *what)
{
    if (f->wiretype == V)
        return fn(r, ctx, f->value);
    if (f->wiretype != L) {
        pb_expect(pr, f, V);
        return pf_wire_fail(r, pr, what);
    }
    pb_reader sub;
    uint64_t v;
    int got;
    pb_reader_sub(pr, f, &sub);
    while ((got = pb_packed_varint(&sub, &v)) > 0)
        if (fn(r, ctx, v) != PC_OK)
            return r->err->status;
    if (got < 0)
        return pf_wire_fail(r, &sub, what);
    return PC_OK;
}

int pf_keep_value(pf_reader *r, void *ctx, uint64_t v)
{
    pf_values *k = ctx;
    (void)r;
    if (k->n < PF_MAX_FOLLOWERS)
        k->v[k->n] = v;
    k->n++;
    return PC_OK;
}

/* A varint field that must be a scalar (not packed). */
int pf_scalar(pf_reader *r, pb_reader *pr, const pb_field *f, const char *what)
{
    if (f->wiretype == V)
        return PC_OK;
    pb_expect(pr, f, V);
    return pf_wire_fail(r, pr, what);
}
