#include "sp_dump.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/simpleperf/simpleperf.h"

typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap * 2 : 1 << 16;
        while (n >= 0 && cap - t->len <= (size_t)n)
            cap *= 2;
        t->s = realloc(t->s, cap);
        t->cap = cap;
    }
}

static void put_str(text *t, const char *key, sp_str s)
{
    put(t, "%s%.*s\n", key, (int)s.len, s.s);
}

static const char *exec_name(int exec)
{
    static const char *const names[] = {"native_method", "interpreted_jvm_method",
                                        "jit_jvm_method", "art_method"};
    return names[exec & 3];
}

char *sp_dump(pc_input *in, size_t *len, pc_error *err)
{
    sp_reader r;
    sp_record rec;
    text t = {0};
    size_t n_samples = 0;
    int got;

    if (sp_open(&r, in, err) != PC_OK)
        return NULL;
    put(&t, "magic: SIMPLEPERF\nversion: %u\n", r.version);
    while ((got = sp_next(&r, &rec, err)) > 0) {
        switch (rec.kind) {
        case SP_META:
            put(&t, "meta_info:\n");
            for (size_t i = 0; i < rec.meta.n_event_types; i++)
                put_str(&t, "  event_type: ", rec.meta.event_types[i]);
            if (rec.meta.has_app_package)
                put_str(&t, "  app_package_name: ", rec.meta.app_package);
            if (rec.meta.has_app_type)
                put_str(&t, "  app_type: ", rec.meta.app_type);
            if (rec.meta.has_sdk_version)
                put_str(&t, "  android_sdk_version: ", rec.meta.sdk_version);
            if (rec.meta.has_build_type)
                put_str(&t, "  android_build_type: ", rec.meta.build_type);
            put(&t, "  trace_offcpu: %s\n", rec.meta.trace_offcpu ? "true" : "false");
            break;
        case SP_SAMPLE:
            put(&t, "sample %zu:\n  event_type_id: %" PRIu32 "\n  time: %" PRIu64
                    "\n  event_count: %" PRIu64 "\n  thread_id: %" PRId32
                    "\n  callchain:\n", ++n_samples, rec.sample.event_type_id,
                rec.sample.time, rec.sample.event_count, rec.sample.tid);
            for (size_t i = 0; i < rec.sample.n_chain; i++) {
                const sp_entry *e = &rec.sample.chain[i];
                put(&t, "    vaddr_in_file: %" PRIx64 "\n    file_id: %" PRIu32
                        "\n    symbol_id: %" PRId32 "\n", e->vaddr, e->file_id,
                    e->symbol_id);
                if (e->has_exec)
                    put(&t, "    execution_type: %s\n", exec_name(e->exec));
            }
            if (rec.sample.has_unwind) {
                const char *name = sp_error_code_name(rec.sample.error_code);
                put(&t, "  unwinding_result:\n    raw_error_code: %" PRIu32
                        "\n    error_addr: 0x%" PRIx64 "\n    error_code: %s\n",
                    rec.sample.raw_error_code, rec.sample.error_addr,
                    name ? name : "?");
            }
            break;
        case SP_SWITCH:
            put(&t, "context_switch:\n  switch_on: %s\n  time: %" PRIu64
                    "\n  thread_id: %" PRIu32 "\n",
                rec.sw.on ? "true" : "false", rec.sw.time, rec.sw.tid);
            break;
        case SP_LOST:
            put(&t, "lost_situation:\n  sample_count: %" PRIu64
                    "\n  lost_count: %" PRIu64 "\n",
                rec.lost.sample_count, rec.lost.lost_count);
            break;
        case SP_FILE:
            put(&t, "file:\n  id: %" PRIu32 "\n", rec.file.id);
            put_str(&t, "  path: ", rec.file.path);
            for (size_t i = 0; i < rec.file.n_symbols; i++)
                put_str(&t, "  symbol: ", rec.file.symbols[i]);
            for (size_t i = 0; i < rec.file.n_mangled; i++)
                put_str(&t, "  mangled_symbol: ", rec.file.mangled[i]);
            break;
        case SP_THREAD:
            put(&t, "thread:\n  thread_id: %" PRIu32 "\n  process_id: %" PRIu32 "\n",
                rec.thread.tid, rec.thread.pid);
            put_str(&t, "  thread_name: ", rec.thread.name);
            break;
        default:
            break;
        }
    }
    sp_close(&r);
    if (got < 0) {
        free(t.s);
        return NULL;
    }
    *len = t.len;
    return t.s;
}
