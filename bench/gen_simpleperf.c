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
    const char *out;
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
            "         [--offcpu] [--perf-script] [--unique] [--seed N] -o FILE\n");
    return 1;
}

static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){20000, 6, 1, 40, 500, 400, 1, 0, 0, 0, 1, NULL};
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

int main(int argc, char **argv)
{
    opts o;
    if (parse(argc, argv, &o) < 0)
        return usage();
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
