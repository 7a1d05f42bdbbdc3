/* Generates a realistic simpleperf report-sample file with the project's
 * own encoder, for the example in the README and for benchmarks.
 *
 * The recording looks like an Android app: one or more processes whose
 * threads run call paths rooted at bionic's __libc_init or __start_thread
 * through Java (boot.oat, framework.jar, the app's dex, JIT code), native
 * libraries and the kernel.  Each thread repeats a set of base paths cut at
 * varying depths, so stacks share prefixes the way real ones do, and leaf
 * addresses vary within their function.  Records come in the order
 * simpleperf writes them: MetaInfo, samples (and context switches) in time
 * order, LostSituation, Files, Threads.  With --perf-script the same
 * recording is written as the text `perf script` prints instead.  Output
 * is deterministic for a given set of options.
 *
 * With --unique every sample is a new stack, the worst case for interning:
 * below the thread's root, each frame is a random symbol, so a sample of
 * depth d adds about d - 1 stack nodes no other sample shares.  Return
 * addresses stay fixed per call site as in real code, so frames stay as
 * few as the code has.
 *
 * With --from FILE a real recording (a report-sample file) is repeated
 * instead: its samples, again and again, each round later by the
 * recording's span, until --samples are written; its other records once.
 * That gives a big input with a real capture's stacks and symbols.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_common.h"
#include "sp_encode.h"

typedef struct opts {
    long samples, threads, processes, depth, symbols, paths, events;
    int offcpu, text, unique;
    unsigned long long seed;
    const char *out, *from;
} opts;


static const char *const libs[] = {
    "/apex/com.android.runtime/lib64/bionic/libc.so",
    "/apex/com.android.art/lib64/libart.so",
    "/system/lib64/libhwui.so",
    "/system/lib64/libgui.so",
    "/system/framework/arm64/boot.oat",
    "/system/framework/arm64/boot-framework.oat",
    "/system/framework/framework.jar",
    "/data/app/~~q1/com.example.app-Zx==/base.apk!/classes.dex",
    "[JIT app cache]",
    "[kernel.kallsyms]",
};
enum { N_LIBS = sizeof libs / sizeof *libs, LIB_LIBC = 0, LIB_KERNEL = 9 };

static const char *const words[] = {
    "draw", "measure", "layout", "onBind", "dispatch", "render", "decode",
    "compute", "flush", "update", "process", "handle", "load", "parse",
    "sync", "queue", "post", "run", "invoke", "resolve",
};

static int usage(void)
{
    fprintf(stderr,
            "usage: gen-simpleperf [--samples N] [--threads N] [--processes N]\n"
            "         [--depth N] [--symbols N] [--paths N] [--events N]\n"
            "         [--offcpu] [--perf-script] [--unique] [--seed N] -o FILE\n"
            "       gen-simpleperf --from REPORT_SAMPLE_FILE [--samples N] -o FILE\n");
    return 1;
}

static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){20000, 6, 1, 40, 500, 400, 1, 0, 0, 0, 1, NULL, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--offcpu")) {
            o->offcpu = 1;
            continue;
        }
        if (!strcmp(a, "--perf-script")) {
            o->text = 1;
            continue;
        }
        if (!strcmp(a, "--unique")) {
            o->unique = 1;
            continue;
        }
        if (i + 1 >= argc)
            return -1;
        if (!strcmp(a, "-o")) {
            o->out = argv[++i];
            continue;
        }
        if (!strcmp(a, "--from")) {
            o->from = argv[++i];
            continue;
        }
        if (!strcmp(a, "--seed")) {
            o->seed = strtoull(argv[++i], NULL, 10);
            continue;
        }
        const gen_numopt nums[] = {
            {"--samples", &o->samples}, {"--threads", &o->threads},
            {"--processes", &o->processes}, {"--depth", &o->depth},
            {"--symbols", &o->symbols}, {"--paths", &o->paths},
            {"--events", &o->events},
        };
        if (gen_number(nums, sizeof nums / sizeof *nums, a, argv[++i]) != 1)
            return -1;
    }
    if (!o->out || o->threads < o->processes || o->depth < 3 || o->symbols < N_LIBS)
        return -1;
    return 0;
}

static void thread_name(const opts *o, long th, char name[32])
{
    if (th < o->processes)
        snprintf(name, 32, "com.example.app%s", th ? ":svc" : "");
    else if (th % 3 == 0)
        snprintf(name, 32, "RenderThread");
    else
        snprintf(name, 32, "worker-%ld", th);
}

/* One sample as perf script prints it: header, frames leaf first, blank. */
static void text_sample(FILE *out, const opts *o, long th, long pid, long tid,
                        unsigned long long t, unsigned long long period, const char *event,
                        const spe_frame *chain, long depth, char **sym_of_lib[])
{
    char name[32];
    thread_name(o, th, name);
    fprintf(out, "%16s %5ld/%-5ld [%03ld] %llu.%09llu: %10llu %s: \n", name, pid, tid,
            th % 8, t / 1000000000ULL, t % 1000000000ULL, period, event);
    for (long d = 0; d < depth; d++) {
        const spe_frame *c = &chain[d];
        fprintf(out, "\t%16llx %s+0x%llx (%s)\n", (unsigned long long)c->vaddr,
                sym_of_lib[c->file][c->sym], (unsigned long long)(c->vaddr & 0x3ff), libs[c->file]);
    }
    fputc('\n', out);
}

static int fail_from(const char *path, const char *what)
{
    fprintf(stderr, "gen-simpleperf: %s: %s\n", path, what);
    return 1;
}

static uint64_t get_varint(const unsigned char **p, const unsigned char *end)
{
    uint64_t v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        unsigned char b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    return v;
}

static size_t put_varint(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        p[n++] = (unsigned char)(v | 0x80);
    p[n++] = (unsigned char)v;
    return n;
}

/* The time (Sample field 1) of the sample in a Record (field 1), or 0. */
static uint64_t sample_time(const unsigned char *rec, size_t n, size_t *body, size_t *body_len)
{
    const unsigned char *p = rec, *end = rec + n;
    if (p >= end || *p != 0x0a)
        return 0;
    p++;
    uint64_t len = get_varint(&p, end);
    if (len > (uint64_t)(end - p))
        return 0;
    *body = (size_t)(p - rec);
    *body_len = (size_t)len;
    if (len && *p == 0x08) {
        p++;
        return get_varint(&p, end);
    }
    return 0;
}

/* Repeats the samples of a report-sample file (see the top). */
static int repeat_file(const opts *o)
{
    FILE *in = fopen(o->from, "rb");
    if (!in)
        return fail_from(o->from, strerror(errno));
    unsigned char *data = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (cap - n < 65536 && !(data = realloc(data, cap = cap ? cap * 2 : 1 << 20)))
            return fail_from(o->from, "out of memory");
        size_t k = fread(data + n, 1, cap - n, in);
        if (k == 0)
            break;
        n += k;
    }
    fclose(in);
    if (n < 12 || memcmp(data, "SIMPLEPERF", 10) != 0)
        return fail_from(o->from, "not a simpleperf report-sample file");
    /* Records: little-endian u32 length, then a Record; length 0 ends. */
    size_t *off = NULL, n_rec = 0, cap_rec = 0, pos = 12;
    uint64_t t_min = UINT64_MAX, t_max = 0;
    size_t n_samples = 0;
    while (pos + 4 <= n) {
        uint32_t len = (uint32_t)data[pos] | (uint32_t)data[pos + 1] << 8 |
                       (uint32_t)data[pos + 2] << 16 | (uint32_t)data[pos + 3] << 24;
        if (len == 0 || len > n - pos - 4)
            break;
        if (n_rec == cap_rec && !(off = realloc(off, (cap_rec = cap_rec ? cap_rec * 2 : 1024) * sizeof *off)))
            return fail_from(o->from, "out of memory");
        off[n_rec++] = pos;
        size_t body, body_len;
        uint64_t t = sample_time(data + pos + 4, len, &body, &body_len);
        if (data[pos + 4] == 0x0a) {
            n_samples++;
            t_min = t < t_min ? t : t_min;
            t_max = t > t_max ? t : t_max;
        }
        pos += 4 + (size_t)len;
    }
    if (!n_samples)
        return fail_from(o->from, "has no samples to repeat");
    FILE *out = fopen(o->out, "wb");
    if (!out)
        return fail_from(o->out, strerror(errno));
    fwrite(data, 1, 12, out);
    /* Records before the first sample (MetaInfo) stay first. */
    size_t first = 0;
    while (data[off[first] + 4] != 0x0a) {
        fwrite(data + off[first], 1, 4 + (size_t)(data[off[first]] | data[off[first] + 1] << 8 |
                                                  data[off[first] + 2] << 16 |
                                                  (uint32_t)data[off[first] + 3] << 24), out);
        first++;
    }
    /* Each round starts a millisecond after the last one ended. */
    uint64_t span = t_max - t_min + 1000000;
    long written = 0;
    unsigned char *buf = NULL;
    size_t buf_cap = 0;
    for (uint64_t round = 0; written < o->samples; round++) {
        for (size_t r = 0; r < n_rec && written < o->samples; r++) {
            const unsigned char *rec = data + off[r] + 4;
            uint32_t len = (uint32_t)(data[off[r]] | data[off[r] + 1] << 8 | data[off[r] + 2] << 16 |
                                      (uint32_t)data[off[r] + 3] << 24);
            if (rec[0] != 0x0a)
                continue;
            size_t body, body_len;
            uint64_t t = sample_time(rec, len, &body, &body_len);
            /* The Sample again with its time moved on: a new time field,
             * then every field but the old time as it was. */
            const unsigned char *p = rec + body, *end = p + body_len;
            if (body_len && *p == 0x08) {
                p++;
                get_varint(&p, end);
            }
            unsigned char head[24];
            size_t hn = 0;
            head[hn++] = 0x08;
            hn += put_varint(head + hn, t + round * span);
            size_t sample_len = hn + (size_t)(end - p);
            if (buf_cap < sample_len + 32 && !(buf = realloc(buf, buf_cap = sample_len * 2 + 64)))
                return fail_from(o->from, "out of memory");
            size_t bn = 4;
            buf[bn++] = 0x0a;
            bn += put_varint(buf + bn, sample_len);
            memcpy(buf + bn, head, hn);
            memcpy(buf + bn + hn, p, (size_t)(end - p));
            bn += sample_len;
            uint32_t rl = (uint32_t)(bn - 4);
            for (int i = 0; i < 4; i++)
                buf[i] = (unsigned char)(rl >> (8 * i));
            fwrite(buf, 1, bn, out);
            written++;
        }
    }
    for (size_t r = first; r < n_rec; r++) {
        uint32_t len = (uint32_t)(data[off[r]] | data[off[r] + 1] << 8 | data[off[r] + 2] << 16 |
                                  (uint32_t)data[off[r] + 3] << 24);
        const unsigned char *rec = data + off[r] + 4;
        if (rec[0] == 0x12) {
            /* LostSituation: its sample count, the samples in the file
             * (the Firefox Profiler checks it), becomes the samples
             * written; the lost ones stay as recorded. */
            const unsigned char *p = rec + 1, *end = rec + len;
            uint64_t body = get_varint(&p, end), lost = 0;
            end = p + body < end ? p + body : end;
            while (p < end) {
                unsigned tag = *p++;
                uint64_t v = get_varint(&p, end);
                if (tag == 0x10)
                    lost = v;
            }
            unsigned char msg[32], whole[48];
            size_t mn = 0, wn = 4;
            msg[mn++] = 0x08;
            mn += put_varint(msg + mn, (uint64_t)written);
            msg[mn++] = 0x10;
            mn += put_varint(msg + mn, lost);
            whole[wn++] = 0x12;
            wn += put_varint(whole + wn, mn);
            memcpy(whole + wn, msg, mn);
            wn += mn;
            for (int i = 0; i < 4; i++)
                whole[i] = (unsigned char)((wn - 4) >> (8 * i));
            fwrite(whole, 1, wn, out);
        } else if (rec[0] != 0x0a) {
            fwrite(data + off[r], 1, 4 + (size_t)len, out);
        }
    }
    static const unsigned char zero[4];
    fwrite(zero, 1, 4, out);
    int bad = ferror(out) | fclose(out);
    free(buf);
    free(off);
    free(data);
    return bad ? fail_from(o->out, "write failed") : 0;
}

int main(int argc, char **argv)
{
    opts o;
    if (parse(argc, argv, &o) < 0)
        return usage();
    if (o.from)
        return repeat_file(&o);
    rng_state = o.seed * 0x9e3779b97f4a7c15ULL + 1;

    /* Symbols: each lives in one library; the first two of libc are the
     * thread entry points. */
    long nsym = o.symbols;
    int *sym_lib = malloc((size_t)nsym * sizeof *sym_lib);
    char **sym_name = malloc((size_t)nsym * sizeof *sym_name);
    long *sym_idx = malloc((size_t)nsym * sizeof *sym_idx);  /* within lib */
    long lib_count[N_LIBS] = {0};
    for (long s = 0; s < nsym; s++) {
        int lib = s < 2 ? LIB_LIBC : (int)(s % N_LIBS);
        char name[128];
        if (s == 0)
            snprintf(name, sizeof name, "__libc_init");
        else if (s == 1)
            snprintf(name, sizeof name, "__start_thread");
        else if (lib == 4 || lib == 5 || lib == 6 || lib == 7 || lib == 8)
            snprintf(name, sizeof name, "com.example.%s.Module%ld.%s", words[s % 7],
                     s % 31, words[(s / 7) % 20]);
        else if (lib == LIB_KERNEL)
            snprintf(name, sizeof name, "%s_kernel_%ld", words[s % 20], s);
        else
            snprintf(name, sizeof name, "android::%s%ld::%s()", words[s % 13], s,
                     words[(s / 3) % 20]);
        sym_lib[s] = lib;
        sym_name[s] = strdup(name);
        sym_idx[s] = lib_count[lib]++;
    }

    /* Base paths per thread: root, then random symbols, kernel last. */
    long paths = o.paths < o.threads ? o.threads : o.paths;
    long per_thread = paths / o.threads;
    long *path = malloc((size_t)(paths * o.depth) * sizeof *path);
    for (long p = 0; p < paths; p++) {
        long *f = path + p * o.depth;
        f[0] = (p / per_thread) % o.threads == 0 ? 0 : 1;
        for (long d = 1; d < o.depth; d++) {
            long s;
            do
                s = 2 + below(nsym - 2);
            while ((sym_lib[s] == LIB_KERNEL) != (d >= o.depth - 2));
            f[d] = s;
        }
    }

    spe e;
    const char *evnames[] = {"cpu-clock", "cpu-cycles", "instructions", "cache-misses"};
    const char *events[4];
    long nev = o.events > 4 ? 4 : o.events;
    for (long i = 0; i < nev; i++)
        events[i] = evnames[i];
    if (o.offcpu) {
        events[0] = "cpu-clock:u";
        events[1] = "sched:sched_switch";
        nev = 2;
    }
    spe_begin(&e);
    spe_meta(&e, events, (size_t)nev, "com.example.app", "debuggable", "34",
             "userdebug", o.offcpu);

    /* Names by (library, index), for text output. */
    char **by_lib[N_LIBS];
    for (int lib = 0; lib < N_LIBS; lib++)
        by_lib[lib] = malloc((size_t)(lib_count[lib] + 1) * sizeof **by_lib);
    for (long s = 0; s < nsym; s++)
        by_lib[sym_lib[s]][sym_idx[s]] = sym_name[s];

    spe_frame *chain = malloc((size_t)o.depth * sizeof *chain);
    const long tid0 = 20000;
    unsigned long long t = 600000000000000ULL;  /* a monotonic clock value */
    FILE *out = fopen(o.out, "wb");
    if (!out) {
        fprintf(stderr, "gen-simpleperf: %s: %s\n", o.out, strerror(errno));
        return 1;
    }
    for (long i = 0; i < o.samples; i++) {
        long th = below(o.threads);
        long p = th * per_thread + below(per_thread) % per_thread;
        /* Skewed toward the first paths, as hot code is. */
        if (below(4))
            p = th * per_thread + below(per_thread / 8 + 1);
        long depth = o.depth / 2 + below(o.depth - o.depth / 2) + 1;
        const long *f = path + p * o.depth;
        for (long d = 0; d < depth; d++) {
            long s = f[d];
            spe_frame *c = &chain[depth - 1 - d];
            if (o.unique && d > 0) {
                /* Any symbol but the kernel's, which stay near the leaf. */
                do
                    s = 2 + below(nsym - 2);
                while ((sym_lib[s] == LIB_KERNEL) != (d >= o.depth - 2));
            }
            c->file = (uint32_t)sym_lib[s];
            c->sym = (int32_t)sym_idx[s];
            /* Return addresses are fixed per call site; the leaf moves. */
            c->vaddr = 0x10000 + (uint64_t)sym_idx[s] * 0x400 + (uint64_t)d * 4 +
                       (d == depth - 1 ? (uint64_t)below(256) * 4 : 0);
            c->exec = -1;
        }
        long pid = tid0 + (th % o.processes) * 1000;
        long tid = th < o.processes ? pid : pid + 1 + th;
        uint32_t ev = (uint32_t)below(nev);
        t += 250000 / (unsigned long long)o.threads + (unsigned long long)below(1000);
        if (o.offcpu && ev == 1) {
            spe_switch(&e, 0, t + 10, (uint32_t)tid);
            spe_switch(&e, 1, t + 100000 + (unsigned long long)below(900000), (uint32_t)tid);
        }
        uint64_t period = ev == 0 ? 250000 : 1 + (uint64_t)below(5000);
        if (o.text) {
            text_sample(out, &o, th, pid, tid, t, period, events[ev], chain, depth, by_lib);
            continue;
        }
        spe_sample(&e, t, (int32_t)tid, period, ev, chain, (size_t)depth, NULL);
        /* Stream out the records so far to bound memory. */
        if (e.out.len > (1u << 22)) {
            fwrite(e.out.data, 1, e.out.len, out);
            e.out.len = 0;
        }
    }
    if (o.text)
        e.out.len = 0;
    spe_lost(&e, (uint64_t)o.samples, 0);
    for (int lib = 0; lib < N_LIBS; lib++) {
        const char **names = malloc((size_t)(lib_count[lib] + 1) * sizeof *names);
        for (long s = 0; s < nsym; s++)
            if (sym_lib[s] == lib)
                names[sym_idx[s]] = sym_name[s];
        spe_file(&e, (uint32_t)lib, libs[lib], names, (size_t)lib_count[lib]);
        free(names);
    }
    for (long th = 0; th < o.threads; th++) {
        long pid = tid0 + (th % o.processes) * 1000;
        long tid = th < o.processes ? pid : pid + 1 + th;
        char name[32];
        thread_name(&o, th, name);
        spe_thread(&e, (uint32_t)tid, (uint32_t)pid, name);
    }
    spe_end(&e);
    if (!o.text)
        fwrite(e.out.data, 1, e.out.len, out);
    int bad = ferror(out) | fclose(out);
    if (bad) {
        fprintf(stderr, "gen-simpleperf: %s: write failed\n", o.out);
        return 1;
    }
    for (long s = 0; s < nsym; s++)
        free(sym_name[s]);
    free(sym_name);
    for (int lib = 0; lib < N_LIBS; lib++)
        free(by_lib[lib]);
    free(sym_lib);
    free(sym_idx);
    free(path);
    free(chain);
    spe_free(&e);
    return 0;
}
