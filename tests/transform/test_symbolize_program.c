/* One program of the tests' own, seen through every input --symbols
 * serves: a C++ executable with inlined member and template functions,
 * calling a C shared library with inlined and static functions, built with
 * -g, stripped, and recorded as a Perfetto trace (by build id), a
 * report-sample file with unknown symbols (by path), perf script text
 * (callchain lines, and header lines with the mappings of
 * --show-mmap-events), and, where perf can record here, perf.data and the
 * perf script text perf prints of it.  With --symbols pointing at the
 * unstripped files, every frame in the program reads as
 * `addr2line -i -f -C` reads its address in the unstripped file: the
 * same functions and the same inline chain; a copy with another build id
 * names nothing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nm.h"
#include "pf_encode.h"
#include "sp_encode.h"
#include "t.h"
#include "test_util.h"

static const char LIB_SRC[] =
    "static inline __attribute__((always_inline)) unsigned w_leaf(unsigned x)\n"
    "{ return x * 2654435761u ^ (x >> 7); }\n"
    "static inline __attribute__((always_inline)) unsigned w_mid(unsigned x)\n"
    "{ return w_leaf(x) + w_leaf(x + 1); }\n"
    "__attribute__((noinline)) unsigned work_outer(unsigned n)\n"
    "{ unsigned h = 0; for (unsigned i = 0; i < n; i++) h += w_mid(h + i); return h; }\n"
    "static __attribute__((noinline)) unsigned work_hidden(unsigned n)\n"
    "{ unsigned h = 1; for (unsigned i = 0; i < n; i++) h = h * 33 + i; return h; }\n"
    "unsigned work_entry(unsigned n) { return work_outer(n) + work_hidden(n); }\n";

static const char APP_SRC[] =
    "extern \"C\" unsigned work_entry(unsigned);\n"
    "namespace app {\n"
    "template <typename T> inline __attribute__((always_inline)) T mix(T a, T b)\n"
    "{ return a * 31 + (b ^ (a >> 3)); }\n"
    "struct Acc {\n"
    "    unsigned v = 0;\n"
    "    inline __attribute__((always_inline)) void add(unsigned x) { v = mix(v, x); }\n"
    "};\n"
    "__attribute__((noinline)) unsigned spin(unsigned n)\n"
    "{ Acc a; for (unsigned i = 0; i < n; i++) a.add(i ^ a.v); return a.v; }\n"
    "}\n"
    "int main(int argc, char **)\n"
    "{ unsigned s = 0; for (int r = 0; r < 20; r++) s += app::spin(3000000) + "
    "work_entry(3000000);\n"
    "  return (int)(s & 1) + argc - 1; }\n";

enum { LIB, APP, N_FILES };
static const char *const NAMES[N_FILES] = {"libwork.so", "app"};
static const char *const DEVICE[N_FILES] = {"/data/local/tmp/libwork.so", "/data/local/tmp/app"};
static const uint8_t BIDS[N_FILES][20] = {
    {0x3a, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99,
     0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x10, 0x20, 0x30, 0x40},
    {0x3b, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99,
     0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x10, 0x20, 0x30, 0x41}};
#define LIB_BID "3a112233445566778899aabbccddeeff10203040"
#define APP_BID "3b112233445566778899aabbccddeeff10203041"

/* The program's functions whose every address is looked up. */
static const struct {
    int file;
    const char *sym;
} FUNCS[] = {{LIB, "work_outer"}, {LIB, "work_hidden"}, {LIB, "work_entry"},
             {APP, "_ZN3app4spinEj"}, {APP, "main"}};
#define N_FUNCS (sizeof FUNCS / sizeof FUNCS[0])

enum { MAX_ADDRS = 1024 };

typedef struct prog {
    char dir[512];
    char syms[600], rec[600], other[600];  /* with symbols; stripped; other ids */
    /* The executable segment of each file: its file offset and address. */
    uint64_t text_off[N_FILES], text_vaddr[N_FILES], text_size[N_FILES];
    /* Every address of FUNCS, per file. */
    uint64_t addr[MAX_ADDRS];
    int file[MAX_ADDRS];
    size_t n;
} prog;

static int run(const char *cmd)
{
    return system(cmd) == 0;
}

/* perf keeps a copy of every binary it records in $HOME/.debug, which the
 * symbolizer searches by build id: each test has a home of its own, so
 * that what it finds is what it built. */
static char saved_home[1024];
static int had_home;

static void own_home(const prog *g, const char *name)
{
    const char *h = getenv("HOME");
    had_home = h != NULL;
    snprintf(saved_home, sizeof saved_home, "%s", h ? h : "");
    char home[800], cmd[900];
    snprintf(home, sizeof home, "%s/home-%s", g->dir, name);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", home);
    T_CHECK(run(cmd));
    setenv("HOME", home, 1);
}

static void restore_home(void)
{
    if (had_home)
        setenv("HOME", saved_home, 1);
    else
        unsetenv("HOME");
}

/* The R E LOAD segment of path, from readelf. */
static int text_segment(const char *path, uint64_t *off, uint64_t *vaddr, uint64_t *size)
{
    char cmd[800], line[512];
    snprintf(cmd, sizeof cmd, "readelf -lW '%s'", path);
    FILE *f = popen(cmd, "r");
    if (!f)
        return 0;
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long o, v, pa, fs, ms;
        if (!found && strstr(line, "LOAD") && strstr(line, " R E ") &&
            sscanf(line, " LOAD 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx", &o, &v, &pa, &fs, &ms) == 5) {
            *off = o;
            *vaddr = v;
            *size = fs;
            found = 1;
        }
    }
    pclose(f);
    return found;
}

static uint64_t to_offset(const prog *g, int file, uint64_t vaddr)
{
    return vaddr - g->text_vaddr[file] + g->text_off[file];
}

static uint64_t to_vaddr(const prog *g, int file, uint64_t off)
{
    return off - g->text_off[file] + g->text_vaddr[file];
}

static int build(prog *g)
{
    if (!run("command -v cc >/dev/null 2>&1 && command -v c++ >/dev/null 2>&1 && "
             "command -v strip >/dev/null 2>&1 && "
             "command -v addr2line >/dev/null 2>&1 && command -v readelf >/dev/null 2>&1")) {
        t_skip("cc, c++, strip, addr2line or readelf is missing");
        return 0;
    }
    memset(g, 0, sizeof *g);
    snprintf(g->dir, sizeof g->dir, "%s/prog", t_tmpdir());
    snprintf(g->syms, sizeof g->syms, "%s/syms", g->dir);
    snprintf(g->rec, sizeof g->rec, "%s/rec", g->dir);
    snprintf(g->other, sizeof g->other, "%s/other", g->dir);
    static char cmd[8192];
    /* Built in syms/, stripped into rec/, and linked again with other
     * build ids into other/. */
    snprintf(cmd, sizeof cmd,
             "set -e; rm -rf %s; mkdir -p %s/syms %s/rec %s/other && cd %s && "
             "cat > w.c <<'EOF'\n%sEOF\n"
             "cat > a.cpp <<'EOF'\n%sEOF\n"
             "cc -g -O2 -fPIC -fno-omit-frame-pointer -c -o w.o w.c\n"
             "c++ -g -O2 -fno-omit-frame-pointer -c -o a.o a.cpp\n"
             "for d in syms:" LIB_BID ":" APP_BID " other:01:02; do\n"
             "  out=${d%%%%:*}; ids=${d#*:}; lib=${ids%%%%:*}; exe=${ids#*:}\n"
             "  cc -shared -Wl,--build-id=0x$lib -o $out/libwork.so w.o\n"
             "  c++ -Wl,--build-id=0x$exe -o $out/app a.o -L$out -lwork -Wl,-rpath,'$ORIGIN'\n"
             "done\n"
             "cp syms/libwork.so syms/app rec/ && strip --strip-all rec/libwork.so rec/app",
             g->dir, g->dir, g->dir, g->dir, g->dir, LIB_SRC, APP_SRC);
    if (!run(cmd)) {
        t_skip("the program does not build here (cc, c++ with -g)");
        return 0;
    }
    for (int fi = 0; fi < N_FILES; fi++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s", g->syms, NAMES[fi]);
        T_CHECK(text_segment(path, &g->text_off[fi], &g->text_vaddr[fi], &g->text_size[fi]));
    }
    for (size_t k = 0; k < N_FUNCS; k++) {
        char path[700];
        uint64_t start = 0, size = 0;
        snprintf(path, sizeof path, "%s/%s", g->syms, NAMES[FUNCS[k].file]);
        T_CHECK(nm_symbol(path, FUNCS[k].sym, &start, &size));
        T_CHECK(size > 0);
        for (uint64_t a = start; a < start + size && g->n < MAX_ADDRS; a++) {
            g->addr[g->n] = a;
            g->file[g->n++] = FUNCS[k].file;
        }
    }
    return g->n > 0 && !t_case_failures();
}

/* What addr2line -i -f -C says of each address of file (in the unstripped
 * copy): the functions root first, joined by ';', "??" when it knows none. */
static char (*addr2line(const prog *g, int file, const uint64_t *addrs, size_t n))[512]
{
    char (*want)[512] = calloc(n ? n : 1, sizeof *want);
    size_t cap = 200 + n * 20;
    char *cmd = malloc(cap);
    if (!want || !cmd) {
        free(want);
        free(cmd);
        return NULL;
    }
    int used = snprintf(cmd, cap, "addr2line -a -i -f -C -e '%s/%s'", g->syms, NAMES[file]);
    for (size_t i = 0; i < n; i++)
        used += snprintf(cmd + used, cap - (size_t)used, " 0x%" PRIx64, addrs[i]);
    FILE *f = popen(cmd, "r");
    free(cmd);
    if (!f) {
        free(want);
        return NULL;
    }
    char line[1024];
    size_t k = 0;
    int expect_func = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (strncmp(line, "0x", 2) == 0) {
            k++;
            expect_func = 1;
        } else if (expect_func && k && k <= n) {
            char tmp[1100];
            snprintf(tmp, sizeof tmp, "%.300s%s%s", line, want[k - 1][0] ? ";" : "", want[k - 1]);
            snprintf(want[k - 1], sizeof want[k - 1], "%.511s", tmp);
            expect_func = 0;
        } else {
            expect_func = 1;
        }
    }
    pclose(f);
    if (k != n) {
        free(want);
        return NULL;
    }
    return want;
}

/* Which of the program's files a resource is, by its file name; -1. */
static int file_of(const pc_profile *p, uint32_t res)
{
    const char *s = pc_str(&p->str, p->res.name[res]);
    const char *b = strrchr(s, '/');
    b = b ? b + 1 : s;
    for (int fi = 0; fi < N_FILES; fi++)
        if (strcmp(b, NAMES[fi]) == 0)
            return fi;
    return -1;
}

typedef struct seen {
    int file[MAX_ADDRS * 4];
    uint64_t vaddr[MAX_ADDRS * 4];
    char text[MAX_ADDRS * 4][512];
    size_t n;
} seen;

typedef struct tally {
    size_t frames, same, chains, unnamed;
} tally;

/* Checks every frame of the program in p against addr2line: the frames of
 * one address (the frame and those inlined into it) are one group.
 * offsets: the frames' addresses are file offsets (perf script). */
static tally check(const prog *g, const pc_profile *p, int offsets, int expect_same,
                   const char *what)
{
    static seen s;
    tally t = {0, 0, 0, 0};
    s.n = 0;
    uint8_t *done = calloc(p->stack.n + 1, 1);
    if (!done)
        return t;
    for (size_t i = 0; i < p->sample.n; i++) {
        /* Each stack node once: it and its prefixes. */
        for (uint32_t node = p->sample.stack[i]; node != PC_NONE && !done[node];) {
            uint32_t f = p->stack.frame[node];
            uint32_t res = p->func.res[p->frame.func[f]];
            int fi = res == PC_NONE ? -1 : file_of(p, res);
            uint64_t addr = p->frame.addr[f];
            /* The group: this node and its prefixes at the same address. */
            uint32_t chain[64];
            size_t n = 0;
            uint32_t q = node;
            while (q != PC_NONE && n < 64) {
                uint32_t qf = p->stack.frame[q];
                uint32_t qr = p->func.res[p->frame.func[qf]];
                if (qr != res || p->frame.addr[qf] != addr)
                    break;
                done[q] = 1;
                chain[n++] = qf;
                q = p->stack.prefix[q];
            }
            if (fi >= 0 && s.n < MAX_ADDRS * 4) {
                char *text = s.text[s.n];
                size_t used = 0;
                text[0] = 0;
                for (size_t k = n; k-- > 0;) {
                    const char *name = pc_str(&p->str, p->func.name[p->frame.func[chain[k]]]);
                    int w = snprintf(text + used, 512 - used, "%s%s", used ? ";" : "", name);
                    if (w < 0 || (size_t)w >= 512 - used)
                        break;
                    used += (size_t)w;
                }
                s.file[s.n] = fi;
                s.vaddr[s.n] = offsets ? to_vaddr(g, fi, addr) : addr;
                s.n++;
            }
            node = q;
        }
    }
    free(done);
    static uint64_t addrs[MAX_ADDRS * 4];
    static size_t idx[MAX_ADDRS * 4];
    int reported = 0;  /* the first difference only */
    for (int fi = 0; fi < N_FILES; fi++) {
        size_t n = 0;
        for (size_t k = 0; k < s.n; k++)
            if (s.file[k] == fi) {
                idx[n] = k;
                addrs[n++] = s.vaddr[k];
            }
        if (!n)
            continue;
        char(*want)[512] = addr2line(g, fi, addrs, n);
        T_CHECK(want != NULL);
        if (!want)
            continue;
        for (size_t j = 0; j < n; j++) {
            const char *got = s.text[idx[j]];
            /* A sample can land where no tool has a name (a PLT stub the
             * program calls through): not a frame to compare. */
            if (strcmp(want[j], "??") == 0)
                continue;
            t.frames++;
            if (strstr(got, ".so+0x") || strstr(got, "app+0x"))
                t.unnamed++;
            if (strcmp(got, want[j]) == 0) {
                t.same++;
                t.chains += strchr(want[j], ';') != NULL;
            } else if (expect_same && !reported++) {
                t_fail(__FILE__, __LINE__, "%s: %s 0x%" PRIx64 ": ours \"%s\", addr2line \"%s\"",
                       what, NAMES[fi], addrs[j], got, want[j]);
            }
        }
        free(want);
    }
    fprintf(stderr, "symbols (%s): %zu frames of the program, %zu as addr2line gives them, "
            "%zu with an inline chain\n", what, t.frames, t.same, t.chains);
    return t;
}

static pc_profile *convert_with(const void *data, size_t len, const char *dir)
{
    pc_options o;
    pc_options_init(&o);
    const char *dirs[] = {dir};
    if (dir)
        o.symbol_dirs = (pc_strings){dirs, 1};
    pc_profile *p = NULL;
    pc_error err;
    int st = convert_bytes(data, len, &o, &p, &err);
    T_EQ_INT(st, PC_OK);
    if (st != PC_OK)
        t_fail(__FILE__, __LINE__, "%s", err.message);
    return p;
}

/* Every address once, each sample one frame, in a Perfetto trace whose
 * mappings carry the build ids. */
static void perfetto_trace(const prog *g, pb_buf *b)
{
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 1);
    pb_uint(b, PFE_TIMESTAMP, 1000);
    size_t in = pb_begin(b, PFE_INTERNED);
    pfe_str(b, PFE_MAPPING_PATHS, 1, "data");
    pfe_str(b, PFE_MAPPING_PATHS, 2, "local");
    pfe_str(b, PFE_MAPPING_PATHS, 3, "tmp");
    pfe_str(b, PFE_MAPPING_PATHS, 4, "libwork.so");
    pfe_str(b, PFE_MAPPING_PATHS, 5, "app");
    pfe_bytes(b, PFE_BUILD_IDS, 1, BIDS[LIB], 20);
    pfe_bytes(b, PFE_BUILD_IDS, 2, BIDS[APP], 20);
    uint64_t lib_path[] = {1, 2, 3, 4}, app_path[] = {1, 2, 3, 5};
    pfe_mapping(b, PFE_MAPPINGS, 1, 1, lib_path, 4);
    pfe_mapping(b, PFE_MAPPINGS, 2, 2, app_path, 4);
    for (size_t i = 0; i < g->n; i++) {
        pfe_frame(b, PFE_FRAMES, i + 1, 0, g->file[i] == LIB ? 1 : 2, g->addr[i]);
        uint64_t cs[] = {i + 1};
        pfe_callstack(b, PFE_CALLSTACKS, i + 1, cs, 1, 0);
    }
    pb_end(b, in);
    pb_end(b, pk);
    for (size_t i = 0; i < g->n; i++) {
        pk = pfe_packet(b, 1);
        pb_uint(b, PFE_TIMESTAMP, 1000 + i);
        pfe_perf_sample(b, 0, 100, 100, i + 1, 1);
        pb_end(b, pk);
    }
}

static void body_symbolize_program_perfetto_and_report_sample(const prog *g)
{
    /* Perfetto: by build id. */
    pb_buf b = {0};
    perfetto_trace(g, &b);
    pc_profile *p = convert_with(b.data, b.len, g->syms);
    if (p) {
        tally t = check(g, p, 0, 1, "Perfetto");
        T_EQ_INT(t.frames, g->n);
        T_EQ_INT(t.same, t.frames);
        T_EQ_INT(t.unnamed, 0);
        T_CHECK(t.chains > 0);
        /* Both inline chains, C's and C++'s, are among them. */
        int c = 0, cpp = 0;
        for (size_t i = 0; i < p->sample.n; i++) {
            const char *s = stack_text(p, p->sample.stack[i]);
            c |= strcmp(s, "work_outer;w_mid;w_leaf") == 0;
            cpp |= strstr(s, "app::spin(unsigned int);app::Acc::add(unsigned int);") != NULL;
        }
        T_CHECK(c);
        T_CHECK(cpp);
    }
    pc_profile_free(p);
    /* The copies built with other build ids name nothing-> */
    p = convert_with(b.data, b.len, g->other);
    if (p) {
        tally t = check(g, p, 0, 0, "Perfetto, other build ids");
        T_EQ_INT(t.unnamed, t.frames);
        T_EQ_INT(t.same, 0);
    }
    pc_profile_free(p);
    pb_buf_free(&b);

    /* report-sample, symbols unknown: by path (it carries no build id). */
    spe e;
    spe_begin(&e);
    const char *ev[] = {"cpu-clock"};
    spe_meta(&e, ev, 1, NULL, NULL, NULL, NULL, 0);
    for (size_t i = 0; i < g->n; i++) {
        spe_frame fr = {g->addr[i], (uint32_t)g->file[i], -1, -1};
        spe_sample(&e, 1000 + i, 100, 1, 0, &fr, 1, NULL);
    }
    spe_file(&e, LIB, DEVICE[LIB], NULL, 0);
    spe_file(&e, APP, DEVICE[APP], NULL, 0);
    spe_thread(&e, 100, 100, "app");
    spe_end(&e);
    p = convert_with(e.out.data, e.out.len, g->syms);
    if (p) {
        tally t = check(g, p, 0, 1, "report-sample");
        T_EQ_INT(t.frames, g->n);
        T_EQ_INT(t.same, t.frames);
        T_EQ_INT(t.unnamed, 0);
    }
    pc_profile_free(p);
    spe_free(&e);
}

/* Runs body on the program, built once for all the tests, in a home of
 * the test's own.  The first test says why it could not be built; the
 * others skip. */
static void with_program(void (*body)(const prog *), const char *home)
{
    static prog g;
    static int state;  /* 0: not built yet, 1: built, -1: cannot be */
    if (state == 0)
        state = build(&g) ? 1 : -1;
    else if (state < 0)
        t_skip("the program could not be built (the first symbolize_program test says why)");
    if (state < 0)
        return;
    own_home(&g, home);
    body(&g);
    restore_home();
}

TEST(symbolize_program_perfetto_and_report_sample)
{
    with_program(body_symbolize_program_perfetto_and_report_sample, "perfetto_and_report_sample");
}

/* perf script text of every address, each way perf prints one: a
 * callchain line (the offset in the file) and, without callchains, the
 * sample's own line (the address as it ran, under the mapping that
 * --show-mmap-events printed before it, or with the offset that -F +dsoff
 * adds). */
static void body_symbolize_program_perf_script(const prog *g)
{
    size_t cap = 4096 + g->n * 256;
    char *text = malloc(cap);
    T_CHECK(text != NULL);
    if (!text)
        return;
    const uint64_t base[N_FILES] = {0x7f3a12300000, 0x55d0c8a00000};
    for (int mode = 0; mode < 3; mode++) {
        size_t used = 0;
        if (mode == 1)
            for (int fi = 0; fi < N_FILES; fi++)
                used += (size_t)snprintf(
                    text + used, cap - used,
                    "app   100/100   0.500000: PERF_RECORD_MMAP2 100/100: [0x%" PRIx64 "(0x%"
                    PRIx64 ") @ 0x%" PRIx64 " fd:01 123 0]: r-xp %s\n",
                    base[fi] + g->text_off[fi], g->text_size[fi], g->text_off[fi], DEVICE[fi]);
        for (size_t i = 0; i < g->n; i++) {
            int fi = g->file[i];
            uint64_t off = to_offset(g, fi, g->addr[i]);
            if (mode == 0)
                used += (size_t)snprintf(text + used, cap - used,
                                         "app   100/100   1.%06zu:     250000 cpu-clock: \n"
                                         "\t    %" PRIx64 " [unknown] (%s)\n\n",
                                         i, off, DEVICE[fi]);
            else if (mode == 1)
                used += (size_t)snprintf(text + used, cap - used,
                                         "app   100/100   1.%06zu:     250000 cpu-clock:  "
                                         "%16" PRIx64 " [unknown] (%s)\n",
                                         i, base[fi] + off, DEVICE[fi]);
            else  /* -F +dsoff, of newer perf: the offset beside the file */
                used += (size_t)snprintf(text + used, cap - used,
                                         "app   100/100   1.%06zu:     250000 cpu-clock:  "
                                         "%16" PRIx64 " [unknown] (%s+0x%" PRIx64 ")\n",
                                         i, base[fi] + off, DEVICE[fi], off);
        }
        static const char *const whats[3] = {"perf script, callchains",
                                             "perf script, sample lines",
                                             "perf script, sample lines with dsoff"};
        const char *what = whats[mode];
        pc_profile *p = convert_with(text, used, g->syms);
        if (p) {
            tally t = check(g, p, 1, 1, what);
            T_EQ_INT(t.frames, g->n);
            T_EQ_INT(t.same, t.frames);
            T_EQ_INT(t.unnamed, 0);
            T_CHECK(t.chains > 0);
        }
        pc_profile_free(p);
        /* Without --symbols, the addresses in the files. */
        p = convert_with(text, used, NULL);
        if (p) {
            tally t = check(g, p, 1, 0, what);
            T_EQ_INT(t.unnamed, t.frames);
        }
        pc_profile_free(p);
    }
    free(text);
}

TEST(symbolize_program_perf_script)
{
    with_program(body_symbolize_program_perf_script, "perf_script");
}

/* The stripped program run under perf: perf.data, and the perf script
 * text perf prints of it, name its frames as addr2line does. */
static void body_symbolize_program_recorded_by_perf(const prog *g)
{
    if (!run("command -v perf >/dev/null 2>&1")) {
        t_skip("perf is missing");
        return;
    }
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && " T_PERF_RECORD " -e cpu-clock -F 4000 -g -o rec.data rec/app "
             ">/dev/null 2>&1 && perf script -i rec.data > rec.txt 2>/dev/null",
             g->dir);
    if (!run(cmd)) {
        t_skip("perf cannot record here");
        return;
    }
    /* perf's build-id cache now holds the stripped files; the unstripped
     * build of the same ids, run from where it was built, is named from
     * the file at its path without --symbols. */
    snprintf(cmd, sizeof cmd,
             "cd %s && " T_PERF_RECORD " -e cpu-clock -F 4000 -g -o full.data syms/app "
             ">/dev/null 2>&1",
             g->dir);
    if (run(cmd)) {
        char path[700];
        snprintf(path, sizeof path, "%s/full.data", g->dir);
        size_t len;
        unsigned char *data = t_read_file(path, &len);
        pc_profile *p = data ? convert_with(data, len, NULL) : NULL;
        if (p) {
            size_t hidden = 0;
            for (size_t i = 0; i < p->sample.n; i++) {
                const char *st = stack_text(p, p->sample.stack[i]);
                hidden += strstr(st, "app::spin(unsigned int)") || strstr(st, "work_hidden");
            }
            T_CHECK(hidden * 4 >= p->sample.n);
        }
        pc_profile_free(p);
        free(data);
    }
    for (int form = 0; form < 2; form++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s", g->dir, form ? "rec.txt" : "rec.data");
        size_t len;
        unsigned char *data = t_read_file(path, &len);
        T_CHECK(data != NULL);
        if (!data)
            continue;
        const char *what = form ? "perf script of perf.data" : "perf.data";
        pc_profile *p = convert_with(data, len, g->syms);
        if (p) {
            tally t = check(g, p, form == 1, 1, what);
            T_CHECK(t.frames > 0);
            T_EQ_INT(t.same, t.frames);
            T_EQ_INT(t.unnamed, 0);
            /* The hot loops are inlined code. */
            T_CHECK(t.chains > 0);
            /* Most samples are in functions only the unstripped files
             * name: spin is not exported, work_hidden is static. */
            size_t hidden = 0;
            for (size_t i = 0; i < p->sample.n; i++) {
                const char *st = stack_text(p, p->sample.stack[i]);
                hidden += strstr(st, "app::spin(unsigned int)") || strstr(st, "work_hidden");
            }
            T_CHECK(hidden * 4 >= p->sample.n);
        }
        pc_profile_free(p);
        /* Another build of the program names none of what the stripped
         * file lacks. */
        p = convert_with(data, len, g->other);
        if (p) {
            size_t hidden = 0;
            for (size_t i = 0; i < p->sample.n; i++) {
                const char *st = stack_text(p, p->sample.stack[i]);
                hidden += strstr(st, "app::spin") || strstr(st, "work_hidden");
            }
            T_EQ_INT(hidden, 0);
        }
        pc_profile_free(p);
        free(data);
    }
}

TEST_SLOW(symbolize_program_recorded_by_perf)
{
    with_program(body_symbolize_program_recorded_by_perf, "recorded_by_perf");
}
