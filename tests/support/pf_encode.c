#include "pf_encode.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

size_t pfe_packet(pb_buf *b, uint32_t seq)
{
    size_t m = pb_begin(b, 1);
    if (seq)
        pb_uint(b, PFE_SEQ, seq);
    return m;
}

void pfe_clock_snapshot(pb_buf *b, const uint32_t *ids, const uint64_t *ts, size_t n)
{
    size_t pk = pfe_packet(b, 0);
    size_t cs = pb_begin(b, 6);
    for (size_t i = 0; i < n; i++) {
        size_t c = pb_begin(b, 1);
        pb_uint(b, 1, ids[i]);
        pb_uint(b, 2, ts[i]);
        pb_end(b, c);
    }
    pb_end(b, cs);
    pb_end(b, pk);
}

void pfe_perf_defaults(pb_buf *b, uint32_t seq, uint32_t clock_id, uint32_t counter,
                       uint64_t frequency)
{
    size_t pk = pfe_packet(b, seq);
    pb_uint(b, PFE_FLAGS, 1);
    size_t d = pb_begin(b, PFE_DEFAULTS);
    if (clock_id)
        pb_uint(b, 58, clock_id);
    if (counter) {
        size_t ps = pb_begin(b, 12);
        size_t tb = pb_begin(b, 1);
        if (frequency)
            pb_uint(b, 2, frequency);
        pb_uint(b, 4, counter);
        pb_end(b, tb);
        pb_end(b, ps);
    }
    pb_end(b, d);
    pb_end(b, pk);
}

void pfe_str(pb_buf *b, uint32_t field, uint64_t iid, const char *s)
{
    pfe_bytes(b, field, iid, s, strlen(s));
}

void pfe_bytes(pb_buf *b, uint32_t field, uint64_t iid, const void *s, size_t n)
{
    size_t m = pb_begin(b, field);
    pb_uint(b, 1, iid);
    pb_bytes(b, 2, s, n);
    pb_end(b, m);
}

void pfe_mapping(pb_buf *b, uint32_t field, uint64_t iid, uint64_t build_iid,
                 const uint64_t *paths, size_t n_paths)
{
    size_t m = pb_begin(b, field);
    pb_uint(b, 1, iid);
    if (build_iid)
        pb_uint(b, 2, build_iid);
    for (size_t i = 0; i < n_paths; i++)
        pb_uint(b, 7, paths[i]);
    pb_end(b, m);
}

void pfe_mapping_range(pb_buf *b, uint32_t field, uint64_t iid, uint64_t build_iid,
                       const uint64_t *paths, size_t n_paths, uint64_t start, uint64_t end,
                       uint64_t exact_offset)
{
    size_t m = pb_begin(b, field);
    pb_uint(b, 1, iid);
    if (build_iid)
        pb_uint(b, 2, build_iid);
    if (start)
        pb_uint(b, 4, start);
    if (end)
        pb_uint(b, 5, end);
    for (size_t i = 0; i < n_paths; i++)
        pb_uint(b, 7, paths[i]);
    if (exact_offset)
        pb_uint(b, 8, exact_offset);
    pb_end(b, m);
}

void pfe_frame(pb_buf *b, uint32_t field, uint64_t iid, uint64_t name_iid,
               uint64_t mapping_iid, uint64_t rel_pc)
{
    size_t m = pb_begin(b, field);
    pb_uint(b, 1, iid);
    if (name_iid)
        pb_uint(b, 2, name_iid);
    if (mapping_iid)
        pb_uint(b, 3, mapping_iid);
    pb_uint(b, 4, rel_pc);
    pb_end(b, m);
}

void pfe_heap_callstacks(pb_buf *b)
{
    size_t in = pb_begin(b, PFE_INTERNED);
    pfe_str(b, PFE_FUNCTION_NAMES, 1, "main");
    pfe_str(b, PFE_FUNCTION_NAMES, 2, "malloc");
    pfe_str(b, PFE_FUNCTION_NAMES, 3, "decode");
    pfe_frame(b, PFE_FRAMES, 1, 1, 0, 1);
    pfe_frame(b, PFE_FRAMES, 2, 2, 0, 2);
    pfe_frame(b, PFE_FRAMES, 3, 3, 0, 3);
    /* Frames are listed root first here, as the trace format has them. */
    uint64_t s1[] = {1, 2}, s2[] = {1, 3, 2}, s3[] = {1};
    pfe_callstack(b, PFE_CALLSTACKS, 1, s1, 2, 0);
    pfe_callstack(b, PFE_CALLSTACKS, 2, s2, 3, 0);
    pfe_callstack(b, PFE_CALLSTACKS, 3, s3, 1, 0);
    pb_end(b, in);
}

void pfe_callstack(pb_buf *b, uint32_t field, uint64_t iid, const uint64_t *frames,
                   size_t n, int packed)
{
    size_t m = pb_begin(b, field);
    pb_uint(b, 1, iid);
    if (packed && n) {
        size_t p = pb_begin(b, 2);
        for (size_t i = 0; i < n; i++)
            pb_put_varint(b, frames[i]);
        pb_end(b, p);
    } else {
        for (size_t i = 0; i < n; i++)
            pb_uint(b, 2, frames[i]);
    }
    pb_end(b, m);
}

void pfe_perf_sample(pb_buf *b, uint32_t cpu, uint32_t pid, uint32_t tid, uint64_t cs,
                     int64_t count)
{
    size_t m = pb_begin(b, 66);
    pb_uint(b, 1, cpu);
    pb_uint(b, 2, pid);
    pb_uint(b, 3, tid);
    if (cs)
        pb_uint(b, 4, cs);
    if (count >= 0)
        pb_uint(b, 6, (uint64_t)count);
    pb_end(b, m);
}

void pfe_process(pb_buf *b, int32_t pid, const char *const *cmdline, size_t n)
{
    size_t m = pb_begin(b, 1);
    pb_int32(b, 1, pid);
    for (size_t i = 0; i < n; i++)
        pb_string(b, 3, cmdline[i]);
    pb_end(b, m);
}

void pfe_thread(pb_buf *b, int32_t tid, int32_t tgid, const char *name)
{
    size_t m = pb_begin(b, 2);
    pb_int32(b, 1, tid);
    if (name)
        pb_string(b, 2, name);
    pb_int32(b, 3, tgid);
    pb_end(b, m);
}

void pfe_compressed(pb_buf *b, const pb_buf *src, int zstd)
{
    size_t cap = zstd ? ZSTD_compressBound(src->len) : compressBound(src->len);
    unsigned char *out = malloc(cap ? cap : 1);
    if (!out) {
        b->oom = 1;
        return;
    }
    size_t n = cap;
    if (zstd) {
        n = ZSTD_compress(out, cap, src->data, src->len, 3);
        if (ZSTD_isError(n))
            n = 0;
    } else {
        uLongf zn = cap;
        if (compress2(out, &zn, src->data, src->len, 6) != Z_OK)
            zn = 0;
        n = zn;
    }
    size_t pk = pfe_packet(b, 0);
    pb_bytes(b, zstd ? 133 : 50, out, n);
    pb_end(b, pk);
    free(out);
}

void pfe_ss_defaults(pb_buf *b, uint32_t seq, const char *source, const char *counter,
                     uint32_t unit)
{
    size_t pk = pfe_packet(b, seq);
    pb_uint(b, PFE_FLAGS, 1);
    size_t d = pb_begin(b, PFE_DEFAULTS);
    size_t ss = pb_begin(b, 100);
    if (source)
        pb_string(b, 1, source);
    if (counter)
        pfe_ss_counter(b, 2, 0, counter, unit, 0);
    pb_end(b, ss);
    pb_end(b, d);
    pb_end(b, pk);
}

void pfe_ss_task(pb_buf *b, uint32_t field, uint64_t iid, int64_t pid, int64_t tid)
{
    size_t m = pb_begin(b, field);
    if (iid)
        pb_uint(b, 1, iid);
    if (pid >= 0)
        pb_uint(b, 2, (uint64_t)pid);
    if (tid >= 0)
        pb_uint(b, 3, (uint64_t)tid);
    pb_end(b, m);
}

void pfe_ss_exec(pb_buf *b, uint32_t field, uint64_t iid, uint32_t cpu)
{
    size_t m = pb_begin(b, field);
    if (iid)
        pb_uint(b, 1, iid);
    pb_uint(b, 2, cpu);
    pb_end(b, m);
}

void pfe_ss_counter(pb_buf *b, uint32_t field, uint64_t iid, const char *name, uint32_t unit,
                    uint64_t multiplier)
{
    size_t m = pb_begin(b, field);
    if (iid)
        pb_uint(b, 1, iid);
    pb_string(b, 2, name);
    pb_uint(b, 3, unit);
    if (multiplier)
        pb_uint(b, 5, multiplier);
    pb_end(b, m);
}

void pfe_ss_inline(pb_buf *b, const char *const *names, const char *const *files,
                   const uint32_t *lines, size_t n)
{
    size_t cs = pb_begin(b, 5);
    for (size_t i = 0; i < n; i++) {
        size_t f = pb_begin(b, 1);
        if (names && names[i])
            pb_string(b, 1, names[i]);
        if (files && files[i])
            pb_string(b, 2, files[i]);
        if (lines && lines[i])
            pb_uint(b, 3, lines[i]);
        pb_end(b, f);
    }
    pb_end(b, cs);
}

/* ---- Java heap graphs ---- */

size_t pfe_heap_graph(pb_buf *b, int32_t pid, uint64_t index, int continued)
{
    size_t m = pb_begin(b, PFE_HEAP_GRAPH);
    pb_int32(b, 1, pid);
    if (continued)
        pb_uint(b, 5, 1);
    pb_uint(b, 6, index);
    return m;
}

static void put_ids(pb_buf *b, uint32_t field, const uint64_t *v, size_t n, int unpacked)
{
    if (!n)
        return;
    if (unpacked) {
        for (size_t i = 0; i < n; i++)
            pb_uint(b, field, v[i]);
        return;
    }
    size_t m = pb_begin(b, field);
    for (size_t i = 0; i < n; i++)
        pb_put_varint(b, v[i]);
    pb_end(b, m);
}

void pfe_hg_object(pb_buf *b, const pfe_hg_obj *o)
{
    size_t m = pb_begin(b, 2);
    if (o->id_delta)
        pb_uint(b, 7, o->id_delta);
    else
        pb_uint(b, 1, o->id);
    if (o->type_id)
        pb_uint(b, 2, o->type_id);
    if (o->self_size)
        pb_uint(b, 3, o->self_size);
    put_ids(b, 4, o->fields, o->n_fields, o->unpacked);
    put_ids(b, 5, o->refs, o->n_refs, o->unpacked);
    if (o->ref_base)
        pb_uint(b, 6, o->ref_base);
    if (o->heap_type)
        pb_uint(b, 9, (uint64_t)o->heap_type);
    pb_end(b, m);
}

void pfe_hg_root(pb_buf *b, int root_type, const uint64_t *ids, size_t n, int unpacked)
{
    size_t m = pb_begin(b, 7);
    put_ids(b, 1, ids, n, unpacked);
    pb_uint(b, 2, (uint64_t)root_type);
    pb_end(b, m);
}

void pfe_hg_type(pb_buf *b, uint64_t id, const char *name, uint64_t object_size,
                 uint64_t superclass_id, int kind, const uint64_t *fields, size_t n_fields,
                 uint64_t location_id)
{
    size_t m = pb_begin(b, 9);
    pb_uint(b, 1, id);
    if (location_id)
        pb_uint(b, 2, location_id);
    pb_string(b, 3, name);
    if (object_size)
        pb_uint(b, 4, object_size);
    if (superclass_id)
        pb_uint(b, 5, superclass_id);
    put_ids(b, 6, fields, n_fields, 0);
    if (kind)
        pb_uint(b, 7, (uint64_t)kind);
    pb_end(b, m);
}
