/* The Perfetto fixtures of the tests in this folder (pf_fixtures.h). */
#include "pf_fixtures.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "processed_valid.h"
#include "t.h"
#include "test_util.h"

/* ---- Traces ---- */

void snapshot(pb_buf *b, uint64_t mono)
{
    uint32_t ids[] = {BOOTTIME, MONOTONIC, MONO_COARSE};
    uint64_t ts[] = {mono + BOOT_AHEAD, mono, mono};
    pfe_clock_snapshot(b, ids, ts, 3);
}

void process_tree(pb_buf *b)
{
    static const char *const app[] = {"com.example.app"};
    static const char *const sf[] = {"/system/bin/surfaceflinger --start"};
    size_t pk = pfe_packet(b, 0);
    size_t pt = pb_begin(b, 2);
    pfe_process(b, 100, app, 1);
    pfe_process(b, 200, sf, 1);
    pfe_thread(b, 100, 100, "example.app");
    pfe_thread(b, 101, 100, "RenderThread");
    pb_end(b, pt);
    pb_end(b, pk);
}

/* The interned data of the perf fixture: libc frames main, draw and an
 * unnamed one, a kernel frame, and three callstacks. */
static void perf_interned(pb_buf *b)
{
    static const uint8_t build[] = {0xde, 0xad, 0xbe, 0xef};
    size_t in = pb_begin(b, PFE_INTERNED);
    pfe_str(b, PFE_FUNCTION_NAMES, 1, "main");
    pfe_str(b, PFE_FUNCTION_NAMES, 2, "draw");
    pfe_str(b, PFE_FUNCTION_NAMES, 3, "do_syscall");
    pfe_str(b, PFE_MAPPING_PATHS, 1, "system");
    pfe_str(b, PFE_MAPPING_PATHS, 2, "lib64");
    pfe_str(b, PFE_MAPPING_PATHS, 3, "libc.so");
    pfe_str(b, PFE_MAPPING_PATHS, 4, "kernel");
    pfe_bytes(b, PFE_BUILD_IDS, 1, build, sizeof build);
    uint64_t libc[] = {1, 2, 3}, kernel[] = {4};
    pfe_mapping(b, PFE_MAPPINGS, 1, 1, libc, 3);
    pfe_mapping(b, PFE_MAPPINGS, 2, 0, kernel, 1);
    pfe_frame(b, PFE_FRAMES, 1, 1, 1, 0x100);
    pfe_frame(b, PFE_FRAMES, 2, 2, 1, 0x200);
    pfe_frame(b, PFE_FRAMES, 3, 3, 2, 0xffff);
    pfe_frame(b, PFE_FRAMES, 4, 0, 1, 0x1234);
    uint64_t cs1[] = {1, 2}, cs2[] = {1, 2, 3}, cs3[] = {1, 4};
    pfe_callstack(b, PFE_CALLSTACKS, 1, cs1, 2, 0);
    pfe_callstack(b, PFE_CALLSTACKS, 2, cs2, 3, 0);
    pfe_callstack(b, PFE_CALLSTACKS, 3, cs3, 2, 1);
    pb_end(b, in);
}

/* One traced_perf sample packet at MONOTONIC time ts. */
static void perf_packet(pb_buf *b, uint64_t ts, uint32_t cpu, uint32_t tid, uint64_t cs,
                        int64_t count, int interned)
{
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    pb_uint(b, PFE_TIMESTAMP, ts);
    if (interned)
        perf_interned(b);
    pfe_perf_sample(b, cpu, 100, tid, cs, count);
    pb_end(b, pk);
}

void fx_perf(pb_buf *b)
{
    snapshot(b, 500000000);
    process_tree(b);
    pfe_perf_defaults(b, 1, MONOTONIC, 1 /* SW_CPU_CLOCK */, 100);
    perf_packet(b, 600000000, 0, 100, 1, 10000000, 1);
    perf_packet(b, 605000000, 1, 101, 2, 5000000, 0);
    perf_packet(b, 610000000, 0, 100, 3, 20000000, 0);
    perf_packet(b, 615000000, 1, 101, 1, 15000000, 0);
    /* Not samples: skipped (NOT_IN_SCOPE), lost records, producer event. */
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    pb_uint(b, PFE_TIMESTAMP, 616000000);
    size_t ps = pb_begin(b, 66);
    pb_uint(b, 1, 0);
    pb_uint(b, 18, 4);
    pb_end(b, ps);
    pb_end(b, pk);
    pk = pfe_packet(b, 1);
    pb_uint(b, PFE_TIMESTAMP, 617000000);
    ps = pb_begin(b, 66);
    pb_uint(b, 1, 1);
    pb_uint(b, 17, 7);
    pb_end(b, ps);
    pb_end(b, pk);
    pk = pfe_packet(b, 1);
    pb_uint(b, PFE_TIMESTAMP, 618000000);
    ps = pb_begin(b, 66);
    size_t ev = pb_begin(b, 19);
    pb_uint(b, 1, 1);
    pb_end(b, ev);
    pb_end(b, ps);
    pb_end(b, pk);
    /* A partly unwound sample (UNWIND_ERROR_MEMORY_INVALID). */
    pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    pb_uint(b, PFE_TIMESTAMP, 620000000);
    ps = pb_begin(b, 66);
    pb_uint(b, 1, 0);
    pb_uint(b, 2, 100);
    pb_uint(b, 3, 100);
    pb_uint(b, 4, 1);
    pb_uint(b, 6, 25000000);
    pb_uint(b, 16, 2);
    pb_end(b, ps);
    pb_end(b, pk);
}

heap_marks heap_open(pb_buf *b, uint64_t index, int continued)
{
    heap_marks m;
    m.pk = pfe_packet(b, 9);
    if (index == 0)
        pb_uint(b, PFE_CLEARED, 1);
    m.pp = pb_begin(b, 37);
    pb_uint(b, 7, index);
    if (continued)
        pb_uint(b, 6, 1);
    return m;
}

void heap_dump_header(pb_buf *b, uint64_t ts, size_t *mark)
{
    *mark = pb_begin(b, 5);
    pb_uint(b, 1, 100);
    pb_uint(b, 9, ts);
    pb_string(b, 11, "libc.malloc");
}

void heap_sample(pb_buf *b, uint64_t cs, uint64_t alloc, uint64_t freed)
{
    size_t s = pb_begin(b, 2);
    pb_uint(b, 1, cs);
    pb_uint(b, 2, alloc);
    pb_uint(b, 3, freed);
    pb_uint(b, 5, alloc / 100);
    pb_uint(b, 6, freed / 100);
    pb_end(b, s);
}

void fx_heap(pb_buf *b)
{
    snapshot(b, 0);
    process_tree(b);
    for (int dump = 0; dump < 2; dump++) {
        uint64_t base = dump ? 4 : 0, ts = dump ? 2000000 : 1000000;
        size_t hd;
        heap_marks m = heap_open(b, base, 1);
        heap_dump_header(b, ts, &hd);
        heap_sample(b, 1, dump ? 3000 : 1000, dump ? 1000 : 400);
        heap_sample(b, 2, 300, 0);
        pb_end(b, hd);
        pb_end(b, m.pp);
        pb_end(b, m.pk);
        /* The dump goes on: the same header, one more sample, then the
         * interned data the callstacks need. */
        m = heap_open(b, base + 1, 1);
        heap_dump_header(b, ts, &hd);
        heap_sample(b, 3, 50, 50);
        pb_end(b, hd);
        pb_end(b, m.pp);
        if (dump == 0)
            pfe_heap_callstacks(b);
        pb_end(b, m.pk);
        /* An empty packet ends the dump. */
        m = heap_open(b, base + 2, 0);
        pb_end(b, m.pp);
        pb_end(b, m.pk);
    }
}

void main_callstack(pb_buf *b)
{
    size_t in = pb_begin(b, PFE_INTERNED);
    uint64_t frames[] = {1};
    pfe_str(b, PFE_FUNCTION_NAMES, 1, "main");
    pfe_frame(b, PFE_FRAMES, 1, 1, 0, 1);
    pfe_callstack(b, PFE_CALLSTACKS, 1, frames, 1, 0);
    pb_end(b, in);
}

void perf_start_with_frames(pb_buf *b, const char *prefix, int n)
{
    snapshot(b, 500000000);
    process_tree(b);
    pfe_perf_defaults(b, 1, MONOTONIC, 1 /* SW_CPU_CLOCK */, 100);
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    size_t in = pb_begin(b, PFE_INTERNED);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s%d", prefix, i);
        pfe_str(b, PFE_FUNCTION_NAMES, (uint64_t)i + 1, name);
        pfe_frame(b, PFE_FRAMES, (uint64_t)i + 1, (uint64_t)i + 1, 0, (uint64_t)i + 1);
    }
    pb_end(b, in);
    pb_end(b, pk);
}

void perf_sample_packet(pb_buf *b, uint64_t t, uint64_t cs)
{
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    pb_uint(b, PFE_TIMESTAMP, t);
    pfe_perf_sample(b, 0, 100, 100, cs, 1000);
    pb_end(b, pk);
}

void callstack_packet(pb_buf *b, uint64_t iid, const uint64_t *frames, size_t n, int packed)
{
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    size_t in = pb_begin(b, PFE_INTERNED);
    pfe_callstack(b, PFE_CALLSTACKS, iid, frames, n, packed);
    pb_end(b, in);
    pb_end(b, pk);
}

/* ---- Results ---- */

pc_profile *convert_buf(const pb_buf *b, const pc_options *o)
{
    pc_profile *p;
    pc_error err;
    if (b->oom) {
        t_fail(__FILE__, __LINE__, "fixture encoder ran out of memory");
        return NULL;
    }
    if (convert_bytes(b->data, b->len, o, &p, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "conversion failed: %s", err.message);
        return NULL;
    }
    return p;
}

const char *samples_text(const pc_profile *p, uint32_t t)
{
    static char buf[4096];
    size_t used = 0;
    buf[0] = 0;
    if (t == PC_NONE)
        return "(no thread)";
    for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++)
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%" PRIu64 ":%" PRId64 ":%s",
                                 used ? " " : "", pc_sample_time(p, i) / 1000,
                                 pc_sample_weight(p, i), stack_text(p, p->sample.stack[i]));
    return buf;
}

char *processed_of(const pc_profile *p)
{
    pc_write_options wo;
    pc_error err;
    unsigned char *out = NULL;
    size_t n = 0;
    char msg[512];
    pc_write_options_init(&wo);
    wo.format = PC_FORMAT_FIREFOX;
    wo.gzip = 0;
    if (pc_write_memory(p, &wo, &out, &n, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "write failed: %s", err.message);
        return NULL;
    }
    if (processed_check_text((const char *)out, n, msg, sizeof msg) != 0)
        t_fail(__FILE__, __LINE__, "invalid processed profile: %s", msg);
    char *s = malloc(n + 1);
    memcpy(s, out, n);
    s[n] = 0;
    free(out);
    return s;
}
