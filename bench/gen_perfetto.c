/* Generates a realistic Perfetto trace with the project's own encoder
 * (tests/support/pf_encode.h), for benchmarks.
 *
 *   --kind perf    traced_perf (linux.perf): a clock snapshot, a process
 *                  tree, then per sequence a packet with trace_packet_defaults
 *                  (MONOTONIC timestamps, cpu-clock timebase) and one of fixed
 *                  interning, then one PerfSample packet per sample with the
 *                  InternedData (function names, build ids, mapping paths,
 *                  mappings, frames, callstacks) it is the first to need.
 *                  Samples are written per read tick (100 ms) grouped by CPU,
 *                  as traced_perf reads its per-CPU ring buffers, so the file
 *                  is not in time order; timebase_count is the cumulative
 *                  cpu-clock count (ns) per CPU.  Clock snapshots every 10 s,
 *                  or every --snapshot-ms, written at the read tick after
 *                  their time.
 *   --kind chrome  Chrome's sampling profiler: a sequence per thread opened
 *                  by a ThreadDescriptor (reference time), ProcessDescriptors,
 *                  and StreamingProfilePackets of 1-16 samples each
 *                  (callstack_iid and timestamp_delta_us, packed) with their
 *                  interned data; no kernel frames.
 *   --kind heap    heapprofd: --dumps rounds of ProfilePackets on one
 *                  sequence, each stating for every process the cumulative
 *                  allocated and freed bytes and counts of every callsite so
 *                  far (--samples allocations in all), split into continued
 *                  packets at 400,000 bytes, the interned data of new
 *                  callstacks after the samples, and an empty packet ending
 *                  each round.
 *
 * The call paths are those of gen_simpleperf.c: threads rooted at bionic's
 * __libc_init or __start_thread repeat base paths cut at varying depths
 * through native code, Java (boot.oat, framework.jar, the app's dex, JIT
 * code) and the kernel near the leaf, and leaf addresses vary within their
 * function.  Native names are mangled, as traced_perf writes them.  Output
 * is deterministic for a given set of options and is written as it is
 * made; memory follows the distinct frames and callstacks (held as 64-bit
 * hashes), not the samples.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_common.h"
#include "pf_encode.h"

enum { KIND_PERF, KIND_CHROME, KIND_HEAP };

typedef struct opts {
    long samples, threads, processes, depth, symbols, paths, sequences, dumps;
    long reuse;   /* samples per callstack, about (1: as the paths fall) */
    long snapshot_ms;   /* clock snapshots this far apart (perf) */
    int kind;
    unsigned long long seed;
    const char *out;
} opts;


static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* ---- Libraries and symbols ---- */

typedef struct lib {
    const char *path;   /* as traced_perf splits it into components */
    int build;          /* has a build id */
    int java;           /* Java names rather than mangled C++ */
} lib;

static const lib android_libs[] = {
    {"/apex/com.android.runtime/lib64/bionic/libc.so", 1, 0},
    {"/apex/com.android.art/lib64/libart.so", 1, 0},
    {"/system/lib64/libhwui.so", 1, 0},
    {"/system/lib64/libgui.so", 1, 0},
    {"/system/framework/arm64/boot.oat", 1, 1},
    {"/system/framework/arm64/boot-framework.oat", 1, 1},
    {"/system/framework/framework.jar", 0, 1},
    {"/data/app/~~q1/com.example.app-Zx==/base.apk", 0, 1},
    {"/memfd:jit-cache (deleted)", 0, 1},
    {"kernel", 0, 0},
};
enum { N_ANDROID = sizeof android_libs / sizeof *android_libs, LIB_KERNEL = 9 };

/* Chrome writes each module's whole path as one component, with a
 * breakpad module id for a build id. */
static const lib chrome_libs[] = {
    {"/system/lib64/libc.so", 1, 0},
    {"/data/app/~~c3/com.android.chrome-Qw==/base.apk!lib/arm64-v8a/libmonochrome_64.so", 1, 0},
    {"/system/lib64/libEGL.so", 1, 0},
    {"/vendor/lib64/egl/libGLESv2_adreno.so", 1, 0},
};
enum { N_CHROME = sizeof chrome_libs / sizeof *chrome_libs };

static const char *const words[] = {
    "draw", "measure", "layout", "onBind", "dispatch", "render", "decode",
    "compute", "flush", "update", "process", "handle", "load", "parse",
    "sync", "queue", "post", "run", "invoke", "resolve",
};

typedef struct world {
    const opts *o;
    const lib *libs;
    int n_libs, has_kernel;
    long nsym;              /* symbols, with malloc and operator new last */
    int *sym_lib;
    long *sym_idx;          /* within its library */
    char **sym_name;
    long paths, per_thread;
    long *path;             /* paths x depth symbols, root first */
} world;

static void make_symbols(world *w)
{
    const opts *o = w->o;
    long n = o->symbols + 2;
    long count[16] = {0};
    w->nsym = n;
    w->sym_lib = malloc((size_t)n * sizeof *w->sym_lib);
    w->sym_idx = malloc((size_t)n * sizeof *w->sym_idx);
    w->sym_name = malloc((size_t)n * sizeof *w->sym_name);
    for (long s = 0; s < n; s++) {
        int l = s < 2 || s >= o->symbols ? 0 : (int)(s % w->n_libs);
        char name[160];
        const char *a = words[s % 13], *b = words[(s / 3) % 20];
        char inner[48];
        snprintf(inner, sizeof inner, "%s%ld", a, s);
        if (s == 0)
            snprintf(name, sizeof name, "__libc_init");
        else if (s == 1)
            snprintf(name, sizeof name, "__start_thread");
        else if (s == o->symbols)
            snprintf(name, sizeof name, "malloc");
        else if (s == o->symbols + 1)
            snprintf(name, sizeof name, "_Znwm");   /* operator new(unsigned long) */
        else if (o->kind == KIND_CHROME)
            snprintf(name, sizeof name, "_ZN%s%zu%s%zu%sEv", l == 1 ? "7content" : "4base",
                     strlen(inner), inner, strlen(b), b);
        else if (l == LIB_KERNEL)
            snprintf(name, sizeof name, "%s_kernel_%ld", words[s % 20], s);
        else if (w->libs[l].java)
            snprintf(name, sizeof name, "com.example.%s.Module%ld.%s", words[s % 7], s % 31,
                     words[(s / 7) % 20]);
        else
            snprintf(name, sizeof name, "_ZN7android%zu%s%zu%sEv", strlen(inner), inner,
                     strlen(b), b);
        w->sym_lib[s] = l;
        w->sym_idx[s] = count[l]++;
        w->sym_name[s] = strdup(name);
    }
}

/* Base paths per thread: root, then random symbols, the kernel's last
 * (where the kind has kernel frames). */
static void make_paths(world *w)
{
    const opts *o = w->o;
    w->paths = o->paths < o->threads ? o->threads : o->paths;
    w->per_thread = w->paths / o->threads;
    w->path = malloc((size_t)(w->paths * o->depth) * sizeof *w->path);
    for (long p = 0; p < w->paths; p++) {
        long *f = w->path + p * o->depth;
        f[0] = (p / w->per_thread) % o->threads == 0 ? 0 : 1;
        for (long d = 1; d < o->depth; d++) {
            long s;
            int want_kernel = w->has_kernel && d >= o->depth - 2;
            do
                s = 2 + below(o->symbols - 2);
            while ((w->sym_lib[s] == LIB_KERNEL && w->has_kernel) != want_kernel);
            f[d] = s;
        }
    }
}

/* A sample's path, as gen_simpleperf picks it: a thread, one of its base
 * paths (skewed toward the first, as hot code is), a depth and a leaf
 * offset. */
typedef struct pick {
    long th, p, depth, leaf;
} pick;

/* Recent picks, for --reuse: a callstack sampled again soon after, as a
 * hot loop is. */
enum { RECENT = 4096 };
static pick recent[RECENT];
static long n_recent;

static pick new_path(const world *w);

static pick pick_path(const world *w)
{
    long reuse = w->o->reuse;
    if (reuse > 1 && n_recent && below(reuse) != 0)
        return recent[below(n_recent < RECENT ? n_recent : RECENT)];
    pick k = new_path(w);
    recent[n_recent++ % RECENT] = k;
    return k;
}

static pick new_path(const world *w)
{
    const opts *o = w->o;
    pick k;
    k.th = below(o->threads);
    k.p = k.th * w->per_thread + below(w->per_thread) % w->per_thread;
    if (below(4))
        k.p = k.th * w->per_thread + below(w->per_thread / 8 + 1);
    k.depth = o->depth / 2 + below(o->depth - o->depth / 2) + 1;
    k.leaf = below(256);
    return k;
}

static long pid_of(const opts *o, long th)
{
    return 20000 + (th % o->processes) * 1000;
}

static long tid_of(const opts *o, long th)
{
    long pid = pid_of(o, th);
    return th < o->processes ? pid : pid + 1 + th;
}

static void thread_name(const opts *o, long th, char name[48])
{
    if (o->kind == KIND_CHROME) {
        static const char *const names[] = {"ThreadPoolForegroundWorker", "Chrome_IOThread",
                                            "VizCompositorThread", "Compositor"};
        if (th < o->processes)
            snprintf(name, 48, "%s", th ? "CrRendererMain" : "CrBrowserMain");
        else
            snprintf(name, 48, "%s", names[th % 4]);
    } else if (th < o->processes) {
        snprintf(name, 48, "com.example.app%s", th ? ":svc" : "");
    } else if (th % 3 == 0) {
        snprintf(name, 48, "RenderThread");
    } else {
        snprintf(name, 48, "worker-%ld", th);
    }
}

static void process_name(const opts *o, long pr, char name[64])
{
    if (o->kind == KIND_CHROME && pr)
        snprintf(name, 64, "com.android.chrome:sandboxed_process%ld", pr - 1);
    else if (o->kind == KIND_CHROME)
        snprintf(name, 64, "com.android.chrome");
    else
        snprintf(name, 64, "com.example.app%s", pr ? ":svc" : "");
}

/* ---- Interning: each sequence has its own ---- */

enum { K_FUNC, K_FRAME, K_CALLSTACK, K_BUILD, K_PATH, K_MAPPING, K_N };

typedef struct table {
    uint64_t *key;      /* 0: empty */
    uint64_t *val;
    size_t cap, n;
} table;

static table tab;
static uint64_t *next_iid;      /* per (sequence index, kind) */
static pb_buf ib;               /* the InternedData being built */

/* The slot of key, created (with value 0) when absent. */
static uint64_t *slot(uint64_t key)
{
    if (key == 0)
        key = 1;
    if (2 * (tab.n + 1) > tab.cap) {
        table t = {0};
        t.cap = tab.cap ? tab.cap * 2 : 1 << 16;
        t.key = calloc(t.cap, sizeof *t.key);
        t.val = malloc(t.cap * sizeof *t.val);
        if (!t.key || !t.val) {
            fprintf(stderr, "gen-perfetto: out of memory\n");
            exit(1);
        }
        for (size_t i = 0; i < tab.cap; i++) {
            if (!tab.key[i])
                continue;
            size_t j = tab.key[i] & (t.cap - 1);
            while (t.key[j])
                j = (j + 1) & (t.cap - 1);
            t.key[j] = tab.key[i];
            t.val[j] = tab.val[i];
        }
        t.n = tab.n;
        free(tab.key);
        free(tab.val);
        tab = t;
    }
    size_t j = key & (tab.cap - 1);
    while (tab.key[j] && tab.key[j] != key)
        j = (j + 1) & (tab.cap - 1);
    if (!tab.key[j]) {
        tab.key[j] = key;
        tab.val[j] = 0;
        tab.n++;
    }
    return &tab.val[j];
}

static uint64_t hkey(int kind, long seq, uint64_t a, uint64_t b)
{
    return mix(mix(((uint64_t)kind << 56 | (uint64_t)seq << 40) ^ a) ^ b);
}

/* The iid of a thing of kind in sequence seq; *fresh says it is new. */
static uint64_t iid_of(int kind, long seq, uint64_t a, uint64_t b, int *fresh)
{
    uint64_t *v = slot(hkey(kind, seq, a, b));
    *fresh = *v == 0;
    if (*fresh)
        *v = ++next_iid[seq * K_N + kind];
    return *v;
}

static uint64_t str_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static uint64_t intern_mapping(const world *w, long seq, int l)
{
    int fresh;
    uint64_t iid = iid_of(K_MAPPING, seq, (uint64_t)l, 0, &fresh);
    if (!fresh)
        return iid;
    const lib *li = &w->libs[l];
    uint64_t comps[16];
    size_t n = 0;
    if (w->o->kind == KIND_CHROME) {
        int f;
        comps[n] = iid_of(K_PATH, seq, str_hash(li->path, strlen(li->path)), 0, &f);
        if (f)
            pfe_str(&ib, PFE_MAPPING_PATHS, comps[n], li->path);
        n++;
    } else {
        /* "/system/lib64/libc.so" is "system", "lib64", "libc.so". */
        const char *p = li->path;
        while (*p && n < 16) {
            while (*p == '/')
                p++;
            const char *e = strchr(p, '/');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            int f;
            comps[n] = iid_of(K_PATH, seq, str_hash(p, len), len, &f);
            if (f)
                pfe_bytes(&ib, PFE_MAPPING_PATHS, comps[n], p, len);
            n++;
            p += len;
        }
    }
    uint64_t build = 0;
    if (li->build) {
        int f;
        build = iid_of(K_BUILD, seq, (uint64_t)l, 0, &f);
        if (f && w->o->kind == KIND_CHROME) {
            char id[34];
            snprintf(id, sizeof id, "%08X%08X%08X%08X0", (unsigned)(mix(l) >> 32),
                     (unsigned)mix(l), (unsigned)(mix(l + 99) >> 32), (unsigned)mix(l + 99));
            pfe_bytes(&ib, PFE_BUILD_IDS, build, id, 33);
        } else if (f) {
            uint8_t id[20];
            for (int i = 0; i < 20; i++)
                id[i] = (uint8_t)(mix((uint64_t)l * 131 + (uint64_t)i) >> 24);
            pfe_bytes(&ib, PFE_BUILD_IDS, build, id, sizeof id);
        }
    }
    if (l == LIB_KERNEL && w->has_kernel)
        pfe_mapping(&ib, PFE_MAPPINGS, iid, 0, comps, n);   /* the magic kernel mapping */
    else
        pfe_mapping_range(&ib, PFE_MAPPINGS, iid, build, comps, n,
                          0x7000000000ULL + (uint64_t)l * 0x10000000ULL,
                          0x7000000000ULL + (uint64_t)l * 0x10000000ULL + 0x4000000ULL,
                          0x1000);
    return iid;
}

/* A frame of symbol s at relative pc. */
static uint64_t intern_frame(const world *w, long seq, long s, uint64_t pc)
{
    int fresh;
    uint64_t iid = iid_of(K_FRAME, seq, (uint64_t)s, pc, &fresh);
    if (!fresh)
        return iid;
    int f;
    uint64_t name = iid_of(K_FUNC, seq, (uint64_t)s, 0, &f);
    if (f)
        pfe_str(&ib, PFE_FUNCTION_NAMES, name, w->sym_name[s]);
    uint64_t map = intern_mapping(w, seq, w->sym_lib[s]);
    pfe_frame(&ib, PFE_FRAMES, iid, name, map, pc);
    return iid;
}

static uint64_t frame_pc(const world *w, long s, long d, long leaf)
{
    uint64_t base = w->sym_lib[s] == LIB_KERNEL && w->has_kernel ? 0xffffffc008010000ULL : 0x10000;
    /* Return addresses are fixed per call site; the leaf moves. */
    return base + (uint64_t)w->sym_idx[s] * 0x400 + (uint64_t)d * 4 + (uint64_t)leaf * 4;
}

/* The callstack of a path cut at depth (root first), with a leaf offset
 * (-1: none) and extra leaf symbols appended (heap: operator new, malloc). */
static uint64_t intern_callstack(const world *w, long seq, const long *f, long depth, long leaf,
                                 const long *extra, int n_extra)
{
    static uint64_t frames[1100];
    size_t n = 0;
    uint64_t h = 0x51ed27b3ULL;
    for (long d = 0; d < depth; d++) {
        long s = f[d];
        if (!w->has_kernel && w->sym_lib[s] == LIB_KERNEL)
            continue;
        frames[n] = intern_frame(w, seq, s, frame_pc(w, s, d, d == depth - 1 && leaf >= 0 ? leaf : 0));
        h = mix(h ^ frames[n]);
        n++;
    }
    for (int i = 0; i < n_extra; i++) {
        frames[n] = intern_frame(w, seq, extra[i], frame_pc(w, extra[i], depth + i, 0));
        h = mix(h ^ frames[n]);
        n++;
    }
    int fresh;
    uint64_t iid = iid_of(K_CALLSTACK, seq, h, n, &fresh);
    if (fresh)
        pfe_callstack(&ib, PFE_CALLSTACKS, iid, frames, n, 0);
    return iid;
}

/* Moves the interned data built so far into the open packet. */
static void put_interned(pb_buf *b)
{
    if (ib.len)
        pb_bytes(b, PFE_INTERNED, ib.data, ib.len);
    ib.len = 0;
}

/* ---- Common packets ---- */

enum { CLK_REALTIME = 1, CLK_MONOTONIC = 3, CLK_MONO_COARSE = 4, CLK_MONO_RAW = 5,
       CLK_BOOTTIME = 6 };
#define BOOT_AHEAD 3500000000ULL   /* suspended time: BOOTTIME runs ahead */
/* The wall clock when MONOTONIC was 0, as traced's snapshots carry it:
 * 2026-11-20 09:00 UTC, less the generator's starting time. */
#define WALL_AT_BOOT (1795165200000000000ULL - 600000000000000ULL)

static void snapshot(pb_buf *b, uint64_t mono)
{
    uint32_t ids[] = {CLK_BOOTTIME, CLK_REALTIME, CLK_MONOTONIC, CLK_MONO_COARSE, CLK_MONO_RAW};
    uint64_t ts[] = {mono + BOOT_AHEAD, mono + WALL_AT_BOOT, mono, mono - mono % 4000000,
                     mono - 1234567};
    pfe_clock_snapshot(b, ids, ts, 5);
}

static void process_tree(pb_buf *b, const opts *o)
{
    size_t pk = pfe_packet(b, 1);
    size_t pt = pb_begin(b, 2);
    for (long pr = 0; pr < o->processes; pr++) {
        char name[64];
        process_name(o, pr, name);
        const char *argv[] = {name};
        pfe_process(b, (int32_t)pid_of(o, pr), argv, 1);
    }
    for (long th = 0; th < o->threads; th++) {
        char name[48];
        thread_name(o, th, name);
        pfe_thread(b, (int32_t)tid_of(o, th), (int32_t)pid_of(o, th), name);
    }
    pb_end(b, pt);
    pb_end(b, pk);
}

static FILE *out;
static pb_buf buf;

static void flush(int force)
{
    if (buf.oom) {
        fprintf(stderr, "gen-perfetto: out of memory\n");
        exit(1);
    }
    if (force || buf.len > (1u << 22)) {
        fwrite(buf.data, 1, buf.len, out);
        buf.len = 0;
    }
}

/* ---- traced_perf ---- */

enum { N_CPU = 8 };
#define TICK_NS 100000000ULL

typedef struct perf_sample {
    uint64_t t, period;
    pick k;
    int cpu;
} perf_sample;

static void perf_tick(const world *w, perf_sample *v, size_t n, uint64_t *counter)
{
    const opts *o = w->o;
    /* A read tick: CPU by CPU, each in time order. */
    for (int cpu = 0; cpu < N_CPU; cpu++)
        for (size_t i = 0; i < n; i++) {
            const perf_sample *x = &v[i];
            if (x->cpu != cpu)
                continue;
            long seq = x->k.th % o->sequences;
            const long *f = w->path + x->k.p * o->depth;
            uint64_t cs = intern_callstack(w, seq, f, x->k.depth, x->k.leaf, NULL, 0);
            uint64_t *c = &counter[seq * N_CPU + cpu];
            *c += x->period;
            size_t pk = pfe_packet(&buf, (uint32_t)(3 + seq));
            pb_uint(&buf, PFE_FLAGS, 2);
            pb_uint(&buf, PFE_TIMESTAMP, x->t);
            put_interned(&buf);
            size_t ps = pb_begin(&buf, 66);
            pb_uint(&buf, 1, (uint64_t)cpu);
            pb_uint(&buf, 2, (uint64_t)pid_of(o, x->k.th));
            pb_uint(&buf, 3, (uint64_t)tid_of(o, x->k.th));
            pb_uint(&buf, 4, cs);
            /* MODE_KERNEL when the leaf is in the kernel, else MODE_USER. */
            pb_uint(&buf, 5, w->sym_lib[f[x->k.depth - 1]] == LIB_KERNEL ? 1 : 2);
            pb_uint(&buf, 6, *c);
            pb_end(&buf, ps);
            pb_end(&buf, pk);
            flush(0);
        }
}

static void gen_perf(const world *w)
{
    const opts *o = w->o;
    uint64_t t = 600000000000000ULL;
    snapshot(&buf, t - 1000000);
    process_tree(&buf, o);
    for (long seq = 0; seq < o->sequences; seq++) {
        /* SEQ_INCREMENTAL_STATE_CLEARED, MONOTONIC, SW_CPU_CLOCK at 4 kHz. */
        pfe_perf_defaults(&buf, (uint32_t)(3 + seq), CLK_MONOTONIC, 1, 4000);
        /* The fixed interning: iid 0 is "" for names, build ids and paths. */
        size_t pk = pfe_packet(&buf, (uint32_t)(3 + seq));
        pb_uint(&buf, PFE_FLAGS, 2);
        size_t in = pb_begin(&buf, PFE_INTERNED);
        pfe_str(&buf, PFE_FUNCTION_NAMES, 0, "");
        pfe_str(&buf, PFE_BUILD_IDS, 0, "");
        pfe_str(&buf, PFE_MAPPING_PATHS, 0, "");
        pb_end(&buf, in);
        pb_end(&buf, pk);
    }
    uint64_t *counter = calloc((size_t)(o->sequences * N_CPU), sizeof *counter);
    size_t cap = 1024, n = 0;
    perf_sample *v = malloc(cap * sizeof *v);
    const uint64_t every = (uint64_t)o->snapshot_ms * 1000000;
    uint64_t tick_end = t + TICK_NS, next_snapshot = t + every;
    for (long i = 0; i < o->samples; i++) {
        perf_sample x;
        x.k = pick_path(w);
        t += 250000 / (unsigned long long)o->threads + (unsigned long long)below(1000);
        x.t = t;
        /* Threads stay on a CPU, and now and then migrate. */
        x.cpu = below(16) ? (int)(x.k.th % N_CPU) : (int)below(N_CPU);
        x.period = 250000 + (uint64_t)below(1000);
        if (t >= tick_end) {
            perf_tick(w, v, n, counter);
            n = 0;
            while (tick_end <= t)
                tick_end += TICK_NS;
            /* Those due since the last tick, each at its own time. */
            for (; next_snapshot <= t; next_snapshot += every)
                snapshot(&buf, next_snapshot);
        }
        if (n == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof *v);
        }
        v[n++] = x;
    }
    perf_tick(w, v, n, counter);
    snapshot(&buf, t + 1000000);
    free(v);
    free(counter);
}

/* ---- Chrome ---- */

typedef struct chrome_thread {
    uint64_t last_us;
    long n;
    pick k[16];
    uint64_t t_us[16];
    long batch;
} chrome_thread;

static void chrome_flush(const world *w, long th, chrome_thread *c)
{
    long seq = th;   /* a sequence per thread */
    uint64_t cs[16];
    const opts *o = w->o;
    for (long i = 0; i < c->n; i++)
        cs[i] = intern_callstack(w, seq, w->path + c->k[i].p * o->depth, c->k[i].depth,
                                 c->k[i].leaf, NULL, 0);
    size_t pk = pfe_packet(&buf, (uint32_t)(100 + seq));
    pb_uint(&buf, PFE_FLAGS, 2);
    put_interned(&buf);
    size_t sp = pb_begin(&buf, 54);
    size_t m = pb_begin(&buf, 1);
    for (long i = 0; i < c->n; i++)
        pb_put_varint(&buf, cs[i]);
    pb_end(&buf, m);
    m = pb_begin(&buf, 2);
    for (long i = 0; i < c->n; i++) {
        pb_put_varint(&buf, c->t_us[i] - c->last_us);
        c->last_us = c->t_us[i];
    }
    pb_end(&buf, m);
    pb_end(&buf, sp);
    pb_end(&buf, pk);
    c->n = 0;
    c->batch = 1 + below(16);
    flush(0);
}

static void gen_chrome(const world *w)
{
    const opts *o = w->o;
    uint64_t t = 600000000000000ULL;
    snapshot(&buf, t - 1000000);
    chrome_thread *ct = calloc((size_t)o->threads, sizeof *ct);
    for (long th = 0; th < o->threads; th++) {
        char name[48];
        thread_name(o, th, name);
        ct[th].last_us = (t - 1000000) / 1000;
        ct[th].batch = 1 + below(16);
        size_t pk = pfe_packet(&buf, (uint32_t)(100 + th));
        pb_uint(&buf, PFE_FLAGS, 1);
        size_t td = pb_begin(&buf, 44);
        pb_uint(&buf, 1, (uint64_t)pid_of(o, th));
        pb_uint(&buf, 2, (uint64_t)tid_of(o, th));
        pb_string(&buf, 5, name);
        pb_uint(&buf, 6, ct[th].last_us);
        pb_end(&buf, td);
        pb_end(&buf, pk);
        if (th < o->processes) {
            char pname[64];
            process_name(o, th, pname);
            pk = pfe_packet(&buf, (uint32_t)(100 + th));
            pb_uint(&buf, PFE_FLAGS, 2);
            size_t pd = pb_begin(&buf, 43);
            pb_uint(&buf, 1, (uint64_t)pid_of(o, th));
            pb_string(&buf, 6, pname);
            pb_end(&buf, pd);
            pb_end(&buf, pk);
        }
    }
    for (long i = 0; i < o->samples; i++) {
        pick k = pick_path(w);
        t += 250000 / (unsigned long long)o->threads + (unsigned long long)below(1000);
        chrome_thread *c = &ct[k.th];
        c->k[c->n] = k;
        c->t_us[c->n++] = t / 1000;
        if (c->n == c->batch)
            chrome_flush(w, k.th, c);
    }
    for (long th = 0; th < o->threads; th++)
        if (ct[th].n)
            chrome_flush(w, th, &ct[th]);
    free(ct);
}

/* ---- heapprofd ---- */

typedef struct callsites {
    long *pr, *p, *depth, *extra;
    uint64_t *alloc, *freed, *ac, *fc, *cs;
    size_t n, cap;
} callsites;

#define HEAP_SPLIT 400000

static size_t heap_open(long index, int first, uint64_t t, size_t *pp)
{
    size_t pk = pfe_packet(&buf, 7);
    if (first)
        pb_uint(&buf, PFE_FLAGS, 1);
    pb_uint(&buf, PFE_TIMESTAMP, t + BOOT_AHEAD);
    *pp = pb_begin(&buf, 37);
    pb_uint(&buf, 7, (uint64_t)index);
    return pk;
}

static size_t heap_header(const opts *o, long pr, uint64_t ts, uint64_t start)
{
    size_t m = pb_begin(&buf, 5);
    pb_uint(&buf, 1, (uint64_t)pid_of(o, pr));
    pb_uint(&buf, 9, ts);
    pb_uint(&buf, 15, start);
    pb_uint(&buf, 12, 4096);
    pb_string(&buf, 11, "libc.malloc");
    return m;
}

static void heap_round(const world *w, callsites *c, long *index, uint64_t t, uint64_t prev)
{
    const opts *o = w->o;
    long extra[2] = {o->symbols + 1, o->symbols};   /* operator new, malloc */
    uint64_t ts = t - t % 4000000, start = prev - prev % 4000000;
    size_t pp, pk = heap_open(*index, *index == 0, t, &pp);
    size_t start_len = buf.len;
    for (long pr = 0; pr < o->processes; pr++) {
        size_t hd = heap_header(o, pr, ts, start);
        for (size_t i = 0; i < c->n; i++) {
            if (c->pr[i] != pr)
                continue;
            if (!c->cs[i])
                c->cs[i] = intern_callstack(w, 0, w->path + c->p[i] * o->depth, c->depth[i],
                                            -1, extra + (c->extra[i] ? 0 : 1),
                                            c->extra[i] ? 2 : 1);
            size_t s = pb_begin(&buf, 2);
            pb_uint(&buf, 1, c->cs[i]);
            pb_uint(&buf, 2, c->alloc[i]);
            pb_uint(&buf, 3, c->freed[i]);
            pb_uint(&buf, 5, c->ac[i]);
            pb_uint(&buf, 6, c->fc[i]);
            pb_end(&buf, s);
            if (buf.len - start_len > HEAP_SPLIT) {
                /* Continued in the next packet, with the header again. */
                pb_end(&buf, hd);
                pb_uint(&buf, 6, 1);
                pb_end(&buf, pp);
                pb_end(&buf, pk);
                flush(0);
                ++*index;
                pk = heap_open(*index, 0, t, &pp);
                start_len = buf.len;
                hd = heap_header(o, pr, ts, start);
            }
        }
        pb_end(&buf, hd);
    }
    /* The last packet of samples carries the interned data they need. */
    pb_uint(&buf, 6, 1);
    pb_end(&buf, pp);
    put_interned(&buf);
    pb_end(&buf, pk);
    ++*index;
    /* An empty packet ends the dump. */
    pk = heap_open(*index, 0, t, &pp);
    pb_end(&buf, pp);
    pb_end(&buf, pk);
    ++*index;
    flush(0);
}

static void gen_heap(const world *w)
{
    const opts *o = w->o;
    uint64_t t = 600000000000000ULL, prev = t - 1000000;
    snapshot(&buf, t - 1000000);
    process_tree(&buf, o);
    callsites c = {0};
    long index = 0, per_dump = o->samples / o->dumps + 1;
    for (long i = 0; i < o->samples; i++) {
        pick k = pick_path(w);
        t += 250000 / (unsigned long long)o->threads + (unsigned long long)below(1000);
        long pr = k.th % o->processes, extra = (k.p + k.depth) % 3 == 0;
        uint64_t *v = slot(hkey(K_N, pr, (uint64_t)k.p << 16 | (uint64_t)k.depth, 0x4ea9));
        if (!*v) {
            if (c.n == c.cap) {
                c.cap = c.cap ? c.cap * 2 : 1024;
                c.pr = realloc(c.pr, c.cap * sizeof *c.pr);
                c.p = realloc(c.p, c.cap * sizeof *c.p);
                c.depth = realloc(c.depth, c.cap * sizeof *c.depth);
                c.extra = realloc(c.extra, c.cap * sizeof *c.extra);
                c.alloc = realloc(c.alloc, c.cap * sizeof *c.alloc);
                c.freed = realloc(c.freed, c.cap * sizeof *c.freed);
                c.ac = realloc(c.ac, c.cap * sizeof *c.ac);
                c.fc = realloc(c.fc, c.cap * sizeof *c.fc);
                c.cs = realloc(c.cs, c.cap * sizeof *c.cs);
            }
            c.pr[c.n] = pr;
            c.p[c.n] = k.p;
            c.depth[c.n] = k.depth;
            c.extra[c.n] = extra;
            c.alloc[c.n] = c.freed[c.n] = c.ac[c.n] = c.fc[c.n] = c.cs[c.n] = 0;
            *v = ++c.n;
        }
        size_t s = *v - 1;
        /* heapprofd samples every 4 KiB on average: sizes 16 B to 64 KiB,
         * about half of them freed again. */
        uint64_t size = (uint64_t)16 << below(13);
        c.alloc[s] += size;
        c.ac[s]++;
        if (below(2)) {
            c.freed[s] += size;
            c.fc[s]++;
        }
        if ((i + 1) % per_dump == 0 || i + 1 == o->samples) {
            heap_round(w, &c, &index, t, prev);
            prev = t;
        }
    }
    free(c.pr);
    free(c.p);
    free(c.depth);
    free(c.extra);
    free(c.alloc);
    free(c.freed);
    free(c.ac);
    free(c.fc);
    free(c.cs);
}

/* ---- Main ---- */

static int usage(void)
{
    fprintf(stderr,
            "usage: gen-perfetto [--kind perf|chrome|heap] [--samples N] [--threads N]\n"
            "         [--processes N] [--depth N] [--symbols N] [--paths N]\n"
            "         [--sequences N] [--dumps N] [--reuse N] [--snapshot-ms N]\n"
            "         [--seed N] -o FILE\n"
            "  --sequences: traced_perf sequences (perf); --dumps: heap dump rounds (heap)\n"
            "  --reuse: about N samples per callstack, from recent ones (default 1: each\n"
            "           sample picks a path afresh)\n"
            "  --snapshot-ms: clock snapshots N ms apart (perf; default 10000)\n");
    return 1;
}

static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){20000, 6, 1, 40, 500, 400, 1, 10, 1, 10000, KIND_PERF, 1, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            return -1;
        if (!strcmp(a, "-o")) {
            o->out = argv[++i];
            continue;
        }
        if (!strcmp(a, "--seed")) {
            o->seed = strtoull(argv[++i], NULL, 10);
            continue;
        }
        if (!strcmp(a, "--kind")) {
            const char *k = argv[++i];
            if (!strcmp(k, "perf"))
                o->kind = KIND_PERF;
            else if (!strcmp(k, "chrome"))
                o->kind = KIND_CHROME;
            else if (!strcmp(k, "heap"))
                o->kind = KIND_HEAP;
            else
                return -1;
            continue;
        }
        const gen_numopt nums[] = {
            {"--samples", &o->samples}, {"--threads", &o->threads},
            {"--processes", &o->processes}, {"--depth", &o->depth},
            {"--symbols", &o->symbols}, {"--paths", &o->paths},
            {"--sequences", &o->sequences}, {"--dumps", &o->dumps},
            {"--reuse", &o->reuse}, {"--snapshot-ms", &o->snapshot_ms},
        };
        if (gen_number(nums, sizeof nums / sizeof *nums, a, argv[++i]) != 1)
            return -1;
    }
    if (!o->out || o->threads < o->processes || o->depth < 3 || o->depth > 1000 ||
        o->symbols < N_ANDROID || o->sequences > 1000 || o->threads > 100000 || o->reuse < 1 ||
        o->snapshot_ms < 1 || o->snapshot_ms > 1000000000)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    opts o;
    if (parse(argc, argv, &o) < 0)
        return usage();
    rng_state = o.seed * 0x9e3779b97f4a7c15ULL + 1;
    world w = {0};
    w.o = &o;
    if (o.kind == KIND_CHROME) {
        w.libs = chrome_libs;
        w.n_libs = N_CHROME;
    } else {
        w.libs = android_libs;
        w.n_libs = N_ANDROID;
        /* heapprofd unwinds user space only. */
        w.has_kernel = o.kind == KIND_PERF;
    }
    make_symbols(&w);
    make_paths(&w);
    long nseq = o.kind == KIND_CHROME ? o.threads : o.kind == KIND_PERF ? o.sequences : 1;
    next_iid = calloc((size_t)nseq * K_N, sizeof *next_iid);
    out = fopen(o.out, "wb");
    if (!out || !next_iid) {
        fprintf(stderr, "gen-perfetto: %s: %s\n", o.out, strerror(errno));
        return 1;
    }
    if (o.kind == KIND_PERF)
        gen_perf(&w);
    else if (o.kind == KIND_CHROME)
        gen_chrome(&w);
    else
        gen_heap(&w);
    flush(1);
    int bad = ferror(out) | fclose(out);
    if (bad) {
        fprintf(stderr, "gen-perfetto: %s: write failed\n", o.out);
        return 1;
    }
    for (long s = 0; s < w.nsym; s++)
        free(w.sym_name[s]);
    free(w.sym_name);
    free(w.sym_lib);
    free(w.sym_idx);
    free(w.path);
    free(next_iid);
    free(tab.key);
    free(tab.val);
    pb_buf_free(&buf);
    pb_buf_free(&ib);
    return 0;
}
