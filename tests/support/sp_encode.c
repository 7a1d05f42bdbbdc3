#include "sp_encode.h"

#include <string.h>

static void put_le32(pb_buf *b, uint32_t v)
{
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                     (uint8_t)(v >> 24)};
    pb_raw(b, le, 4);
}

void spe_begin_v(spe *e, uint16_t version)
{
    uint8_t v[2] = {(uint8_t)version, (uint8_t)(version >> 8)};
    memset(e, 0, sizeof *e);
    pb_raw(&e->out, "SIMPLEPERF", 10);
    pb_raw(&e->out, v, 2);
}

void spe_begin(spe *e)
{
    spe_begin_v(e, 1);
}

void spe_raw_record(spe *e, const void *data, size_t len)
{
    put_le32(&e->out, (uint32_t)len);
    pb_raw(&e->out, data, len);
}

/* Frames the record built in e->rec and resets it. */
static void flush(spe *e)
{
    spe_raw_record(e, e->rec.data, e->rec.len);
    e->rec.len = 0;
}

void spe_meta(spe *e, const char *const *events, size_t n_events,
              const char *app_package, const char *app_type,
              const char *sdk, const char *build_type, int trace_offcpu)
{
    size_t m = pb_begin(&e->rec, 5);
    for (size_t i = 0; i < n_events; i++)
        pb_string(&e->rec, 1, events[i]);
    if (app_package)
        pb_string(&e->rec, 2, app_package);
    if (app_type)
        pb_string(&e->rec, 3, app_type);
    if (sdk)
        pb_string(&e->rec, 4, sdk);
    if (build_type)
        pb_string(&e->rec, 5, build_type);
    pb_uint(&e->rec, 6, trace_offcpu != 0);
    pb_end(&e->rec, m);
    flush(e);
}

void spe_sample(spe *e, uint64_t time, int32_t tid, uint64_t event_count,
                uint32_t event_type_id, const spe_frame *chain, size_t n,
                const spe_unwind *unwind)
{
    size_t m = pb_begin(&e->rec, 1);
    pb_uint(&e->rec, 1, time);
    pb_int32(&e->rec, 2, tid);
    for (size_t i = 0; i < n; i++) {
        size_t c = pb_begin(&e->rec, 3);
        pb_uint(&e->rec, 1, chain[i].vaddr);
        pb_uint(&e->rec, 2, chain[i].file);
        pb_int32(&e->rec, 3, chain[i].sym);
        if (chain[i].exec >= 0)
            pb_uint(&e->rec, 4, (uint64_t)chain[i].exec);
        pb_end(&e->rec, c);
    }
    pb_uint(&e->rec, 4, event_count);
    pb_uint(&e->rec, 5, event_type_id);
    if (unwind) {
        size_t u = pb_begin(&e->rec, 6);
        pb_uint(&e->rec, 1, unwind->raw_error_code);
        pb_uint(&e->rec, 2, unwind->error_addr);
        pb_uint(&e->rec, 3, unwind->error_code);
        pb_end(&e->rec, u);
    }
    pb_end(&e->rec, m);
    flush(e);
}

void spe_lost(spe *e, uint64_t sample_count, uint64_t lost_count)
{
    size_t m = pb_begin(&e->rec, 2);
    pb_uint(&e->rec, 1, sample_count);
    pb_uint(&e->rec, 2, lost_count);
    pb_end(&e->rec, m);
    flush(e);
}

void spe_file(spe *e, uint32_t id, const char *path, const char *const *syms,
              size_t n_syms)
{
    size_t m = pb_begin(&e->rec, 3);
    pb_uint(&e->rec, 1, id);
    pb_string(&e->rec, 2, path);
    for (size_t i = 0; i < n_syms; i++)
        pb_string(&e->rec, 3, syms[i]);
    for (size_t i = 0; i < n_syms; i++)
        pb_string(&e->rec, 4, syms[i]);
    pb_end(&e->rec, m);
    flush(e);
}

void spe_thread(spe *e, uint32_t tid, uint32_t pid, const char *name)
{
    size_t m = pb_begin(&e->rec, 4);
    pb_uint(&e->rec, 1, tid);
    pb_uint(&e->rec, 2, pid);
    pb_string(&e->rec, 3, name);
    pb_end(&e->rec, m);
    flush(e);
}

void spe_switch(spe *e, int on, uint64_t time, uint32_t tid)
{
    size_t m = pb_begin(&e->rec, 6);
    pb_uint(&e->rec, 1, on != 0);
    pb_uint(&e->rec, 2, time);
    pb_uint(&e->rec, 3, tid);
    pb_end(&e->rec, m);
    flush(e);
}

void spe_end(spe *e)
{
    put_le32(&e->out, 0);
}

void spe_free(spe *e)
{
    pb_buf_free(&e->out);
    pb_buf_free(&e->rec);
}
