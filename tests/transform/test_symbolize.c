/* --symbols: frames an input leaves unnamed get their names from the
 * binaries in the folders given, matched by build id (Perfetto) or by path
 * and file name (report-sample files, which carry no build id); a file
 * whose build id differs names nothing; without --symbols no file is
 * looked at.  The binaries are built here; names are checked against
 * their symbol tables (readelf). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jsonmini.h"
#include "nm.h"
#include "pf_encode.h"
#include "sp_encode.h"
#include "t.h"
#include "test_util.h"

static const char SRC[] =
    "__attribute__((noinline)) int sym_alpha(int x) { return x * 3 + 1; }\n"
    "__attribute__((noinline)) int sym_beta(int x) { return sym_alpha(x) ^ 7; }\n"
    "__attribute__((noinline)) int sym_gamma(int x) { return sym_beta(x) + x; }\n";

/* The build id the library is linked with (--build-id=0x...). */
static const uint8_t BID[20] = {0x5e, 0x1f, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01, 0x02};
#define BID_HEX "5e1f00112233445566778899aabbccddeeff0102"

typedef struct fixture {
    char dir[512];     /* holds libsym.so (with symbols) and other/ */
    uint64_t addr[3];  /* sym_alpha, sym_beta, sym_gamma, from the symbol table */
} fixture;

static int run(const char *cmd)
{
    return system(cmd) == 0;
}

/* Builds libsym.so with symbols in DIR, a stripped copy, and one with
 * another build id in DIR/other; reads the functions' addresses from its
 * symbol table. */
static int build(fixture *fx)
{
    if (!run("command -v cc >/dev/null 2>&1 && command -v readelf >/dev/null 2>&1 && "
             "command -v strip >/dev/null 2>&1")) {
        t_skip("cc, readelf or strip is missing");
        return 0;
    }
    snprintf(fx->dir, sizeof fx->dir, "%s/sym", t_tmpdir());
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/other %s/stripped && cd %s && cat > sym.c <<'EOF'\n%sEOF\n"
             "cc -O1 -fPIC -shared -Wl,--build-id=0x" BID_HEX " -o libsym.so sym.c && "
             "cp libsym.so stripped/libsym.so && strip --strip-all stripped/libsym.so && "
             "cc -O1 -fPIC -shared -Wl,--build-id=0x0102 -o other/libsym.so sym.c",
             fx->dir, fx->dir, fx->dir, SRC);
    T_CHECK(run(cmd));
    char lib[600];
    snprintf(lib, sizeof lib, "%s/libsym.so", fx->dir);
    static const char *const names[3] = {"sym_alpha", "sym_beta", "sym_gamma"};
    int found = 0;
    for (int i = 0; i < 3; i++) {
        uint64_t size;
        if (nm_symbol(lib, names[i], &fx->addr[i], &size))
            found |= 1 << i;
    }
    T_EQ_INT(found, 7);
    return found == 7;
}

/* A Perfetto trace of one sample gamma <- beta <- alpha (root first) in
 * /data/app/lib/libsym.so, with the library's build id and no names. */
static void trace(pb_buf *b, const fixture *fx)
{
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 1);
    pb_uint(b, PFE_TIMESTAMP, 1000);
    size_t in = pb_begin(b, PFE_INTERNED);
    pfe_str(b, PFE_MAPPING_PATHS, 1, "data");
    pfe_str(b, PFE_MAPPING_PATHS, 2, "app");
    pfe_str(b, PFE_MAPPING_PATHS, 3, "lib");
    pfe_str(b, PFE_MAPPING_PATHS, 4, "libsym.so");
    pfe_bytes(b, PFE_BUILD_IDS, 1, BID, sizeof BID);
    uint64_t path[] = {1, 2, 3, 4};
    pfe_mapping(b, PFE_MAPPINGS, 1, 1, path, 4);
    for (int i = 0; i < 3; i++)
        pfe_frame(b, PFE_FRAMES, (uint64_t)i + 1, 0, 1, fx->addr[i] + 2);
    uint64_t cs[] = {3, 2, 1};
    pfe_callstack(b, PFE_CALLSTACKS, 1, cs, 3, 0);
    pb_end(b, in);
    pfe_perf_sample(b, 0, 100, 100, 1, 1);
    pb_end(b, pk);
}

static char *leaf_first(const fixture *fx, const char *const *dirs, size_t n, char *out,
                        size_t cap, int simpleperf)
{
    pc_options o;
    pc_options_init(&o);
    o.symbol_dirs = (pc_strings){dirs, n};
    pc_profile *p = NULL;
    pc_error err;
    int st;
    if (simpleperf) {
        spe e;
        spe_begin(&e);
        const char *ev[] = {"cpu-clock"};
        spe_meta(&e, ev, 1, NULL, NULL, NULL, NULL, 0);
        spe_frame chain[3];
        for (int i = 0; i < 3; i++)
            chain[i] = (spe_frame){fx->addr[i] + 2, 0, -1, -1};
        spe_sample(&e, 1000, 100, 1, 0, chain, 3, NULL);
        spe_file(&e, 0, "/system/lib64/libsym.so", NULL, 0);
        spe_thread(&e, 100, 100, "app");
        spe_end(&e);
        st = convert_bytes(e.out.data, e.out.len, &o, &p, &err);
        spe_free(&e);
    } else {
        pb_buf b = {0};
        trace(&b, fx);
        st = convert_bytes(b.data, b.len, &o, &p, &err);
        pb_buf_free(&b);
    }
    T_EQ_INT(st, PC_OK);
    if (st != PC_OK) {
        t_fail(__FILE__, __LINE__, "%s", err.message);
        return NULL;
    }
    snprintf(out, cap, "%s", p->sample.n ? stack_text(p, p->sample.stack[0]) : "");
    pc_profile_free(p);
    return out;
}

TEST(symbolize_perfetto_by_build_id)
{
    fixture fx;
    if (!build(&fx))
        return;
    char s[1024], other[600], stripped[600];
    snprintf(other, sizeof other, "%s/other", fx.dir);
    snprintf(stripped, sizeof stripped, "%s/stripped", fx.dir);
    /* Without --symbols: the addresses, as before. */
    leaf_first(&fx, NULL, 0, s, sizeof s, 0);
    T_CONTAINS(s, "libsym.so+0x");
    /* With the folder holding the library: the symbol table's names, root
     * first. */
    const char *dirs[] = {fx.dir};
    leaf_first(&fx, dirs, 1, s, sizeof s, 0);
    T_EQ_STR(s, "sym_gamma;sym_beta;sym_alpha");
    /* Another build of the same file names nothing. */
    const char *wrong[] = {other};
    leaf_first(&fx, wrong, 1, s, sizeof s, 0);
    T_CONTAINS(s, "libsym.so+0x");
    /* The stripped copy keeps the exported functions in .dynsym. */
    const char *str[] = {stripped};
    leaf_first(&fx, str, 1, s, sizeof s, 0);
    T_EQ_STR(s, "sym_gamma;sym_beta;sym_alpha");
}

TEST(symbolize_simpleperf_by_path)
{
    fixture fx;
    if (!build(&fx))
        return;
    char s[1024], cache[600], cmd[2048];
    /* simpleperf's binary_cache keeps the device's paths. */
    snprintf(cache, sizeof cache, "%s/binary_cache", fx.dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/system/lib64 && cp %s/libsym.so %s/system/lib64/",
             cache, fx.dir, cache);
    T_CHECK(run(cmd));
    const char *dirs[] = {cache};
    leaf_first(&fx, dirs, 1, s, sizeof s, 1);
    T_EQ_STR(s, "sym_gamma;sym_beta;sym_alpha");
    leaf_first(&fx, NULL, 0, s, sizeof s, 1);
    T_CONTAINS(s, "libsym.so+0x");
}

/* An address in inlined code is the chain addr2line -i gives, root first:
 * the out-of-line function, then each function inlined into it. */
static const char INL[] =
    "static inline __attribute__((always_inline)) int inl_leaf(int x) { return x * x + 3; }\n"
    "static inline __attribute__((always_inline)) int inl_mid(int x) {\n"
    "    return inl_leaf(x) + inl_leaf(x + 1);\n}\n"
    "__attribute__((noinline)) int inl_outer(int x) { return inl_mid(x) * 7 + x; }\n";

TEST(symbolize_inline_chains_as_addr2line)
{
    if (!run("command -v cc >/dev/null 2>&1 && command -v readelf >/dev/null 2>&1 && "
             "command -v addr2line >/dev/null 2>&1")) {
        t_skip("cc, readelf or addr2line is missing");
        return;
    }
    char dir[512], cmd[4096];
    snprintf(dir, sizeof dir, "%s/inl", t_tmpdir());
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s && cd %s && cat > inl.c <<'EOF'\n%sEOF\n"
             "cc -g -O2 -fPIC -shared -Wl,--build-id=0x" BID_HEX " -o libinl.so inl.c",
             dir, dir, INL);
    T_CHECK(run(cmd));
    /* inl_outer's range, from the symbol table. */
    char lib[600];
    snprintf(lib, sizeof lib, "%s/libinl.so", dir);
    uint64_t start = 0, size = 0;
    T_CHECK(nm_symbol(lib, "inl_outer", &start, &size));
    if (!size)
        return;
    /* What addr2line says of each address: "0xADDR" then (function, place)
     * pairs innermost first. */
    snprintf(cmd, sizeof cmd, "cd %s && addr2line -a -i -f -C -e libinl.so", dir);
    for (uint64_t a = start; a < start + size && strlen(cmd) < sizeof cmd - 32; a++)
        snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), " 0x%llx", (unsigned long long)a);
    FILE *f = popen(cmd, "r");
    T_CHECK(f != NULL);
    if (!f)
        return;
    enum { MAXA = 512 };
    static char want[MAXA][256];
    static unsigned long long addrs[MAXA];
    size_t n = 0;
    char line[512];
    int expect_func = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (strncmp(line, "0x", 2) == 0) {
            if (n == MAXA)
                break;
            addrs[n] = strtoull(line, NULL, 16);
            want[n++][0] = 0;
            expect_func = 1;
        } else if (expect_func && n) {
            /* Innermost first: each outer function goes in front. */
            char tmp[1024];
            snprintf(tmp, sizeof tmp, "%.200s%s%s", line, want[n - 1][0] ? ";" : "",
                     want[n - 1]);
            snprintf(want[n - 1], sizeof want[n - 1], "%.255s", tmp);
            expect_func = 0;
        } else {
            expect_func = 1;  /* the place line; a function may follow */
        }
    }
    pclose(f);
    T_CHECK(n > 4);
    /* One sample per address, each its own one-frame callstack. */
    pb_buf b = {0};
    size_t pk = pfe_packet(&b, 1);
    pb_uint(&b, PFE_FLAGS, 1);
    pb_uint(&b, PFE_TIMESTAMP, 1000);
    size_t it = pb_begin(&b, PFE_INTERNED);
    pfe_str(&b, PFE_MAPPING_PATHS, 1, "libinl.so");
    pfe_bytes(&b, PFE_BUILD_IDS, 1, BID, sizeof BID);
    uint64_t path[] = {1};
    pfe_mapping(&b, PFE_MAPPINGS, 1, 1, path, 1);
    for (size_t i = 0; i < n; i++) {
        pfe_frame(&b, PFE_FRAMES, i + 1, 0, 1, addrs[i]);
        uint64_t cs[] = {i + 1};
        pfe_callstack(&b, PFE_CALLSTACKS, i + 1, cs, 1, 0);
    }
    pb_end(&b, it);
    pb_end(&b, pk);
    for (size_t i = 0; i < n; i++) {
        pk = pfe_packet(&b, 1);
        pb_uint(&b, PFE_TIMESTAMP, 1000 + i);
        pfe_perf_sample(&b, 0, 100, 100, i + 1, 1);
        pb_end(&b, pk);
    }
    pc_options o;
    pc_options_init(&o);
    const char *dirs[] = {dir};
    o.symbol_dirs = (pc_strings){dirs, 1};
    pc_profile *p = NULL;
    pc_error err;
    int st = convert_bytes(b.data, b.len, &o, &p, &err);
    pb_buf_free(&b);
    T_EQ_INT(st, PC_OK);
    if (st != PC_OK)
        return;
    size_t same = 0, chains = 0;
    for (size_t i = 0; i < p->sample.n && i < n; i++) {
        size_t k = (size_t)(pc_sample_time(p, i) - 1000);
        const char *got = stack_text(p, p->sample.stack[i]);
        chains += strchr(want[k], ';') != NULL;
        if (strcmp(got, want[k]) == 0)
            same++;
        else if (same == i)
            T_EQ_STR(got, want[k]);  /* the first difference */
    }
    T_EQ_INT(p->sample.n, n);
    T_EQ_INT(same, n);
    T_CHECK(chains > 0);

    /* The Firefox output carries the positions: a source per file, the
     * functions in it, lines on the frames, as addr2line gives them. */
    char *json = written_text(p, PC_FORMAT_FIREFOX, NULL);
    char msg[128];
    jv *root = json ? j_parse(json, strlen(json), msg, sizeof msg) : NULL;
    T_CHECK(root != NULL);
    const jv *shared = j_get(root, "shared");
    const jv *strs = j_get(shared, "stringArray");
    const jv *src = j_get(shared, "sources");
    T_CHECK(j_int(j_get(src, "length")) >= 1);
    const char *file = j_str(j_at(strs, (size_t)j_int(j_at(j_get(src, "filename"), 0))));
    T_CHECK(file && strlen(file) >= 5 && strcmp(file + strlen(file) - 5, "inl.c") == 0);
    const jv *lines = j_get(j_get(shared, "frameTable"), "line");
    size_t with_line = 0;
    for (size_t i = 0; i < j_len(lines); i++)
        with_line += j_is_int(j_at(lines, i)) && j_int(j_at(lines, i)) > 0;
    T_CHECK(with_line > 0 && with_line == j_len(lines));
    /* Every line is one of the source's (1 to 5). */
    for (size_t i = 0; i < j_len(lines); i++)
        T_CHECK(j_int(j_at(lines, i)) >= 1 && j_int(j_at(lines, i)) <= 5);
    /* And the real profiler loads it. */
    const char *sh = t_shared();
    if (sh && json && t_node20()) {
        char jpath[600], cmd2[1400];
        snprintf(jpath, sizeof jpath, "%s/inl.json", t_tmpdir());
        FILE *out = fopen(jpath, "w");
        if (out) {
            fputs(json, out);
            fclose(out);
        }
        snprintf(cmd2, sizeof cmd2, "%s/fxprof/validate --quiet %s >/dev/null 2>&1", sh, jpath);
        T_EQ_INT(system(cmd2), 0);
    }
    j_free(root);
    free(json);
    pc_profile_free(p);
}

/* perf.data of a stripped program: its static functions have no names in
 * what was recorded (nor in perf's build-id cache, which keeps the stripped
 * file), and --symbols names them from a copy with symbols, by build id. */
static const char BURN[] =
    "static __attribute__((noinline)) long burn_static(long n) {\n"
    "    volatile long x = 0; for (long i = 0; i < n; i++) x += i; return x; }\n"
    "int main(void) { long s = 0; for (int i = 0; i < 40; i++) s += burn_static(2000000);\n"
    "    return (int)(s & 1); }\n";

static int count_in(const pc_profile *p, const char *name)
{
    int n = 0;
    for (size_t i = 0; i < p->sample.n; i++)
        n += p->sample.stack[i] != PC_NONE && strstr(stack_text(p, p->sample.stack[i]), name);
    return n;
}

TEST_SLOW(symbolize_perf_data_of_a_stripped_program)
{
    if (!run("command -v cc >/dev/null 2>&1 && command -v strip >/dev/null 2>&1 && "
             "command -v perf >/dev/null 2>&1")) {
        t_skip("cc, strip or perf is missing");
        return;
    }
    char dir[512], cmd[4096];
    snprintf(dir, sizeof dir, "%s/burn", t_tmpdir());
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/full %s/rec && cd %s && cat > burn.c <<'EOF'\n%sEOF\n"
             "cc -O1 -g -fno-omit-frame-pointer -o full/burn burn.c && cp full/burn rec/burn && "
             "strip --strip-all rec/burn",
             dir, dir, dir, BURN);
    T_CHECK(run(cmd));
    snprintf(cmd, sizeof cmd,
             "cd %s && " T_PERF_RECORD " -e cpu-clock -F 2000 -g -o rec.data rec/burn "
             ">/dev/null 2>&1",
             dir);
    if (!run(cmd)) {
        t_skip("perf record cannot record here");
        return;
    }
    char path[600];
    snprintf(path, sizeof path, "%s/rec.data", dir);
    size_t len;
    unsigned char *data = t_read_file(path, &len);
    T_CHECK(data != NULL);
    if (!data)
        return;
    char full[600];
    snprintf(full, sizeof full, "%s/full", dir);
    const char *dirs[] = {full};
    pc_options o;
    pc_profile *plain = NULL, *named = NULL;
    pc_error err;
    pc_options_init(&o);
    T_EQ_INT(convert_bytes(data, len, &o, &plain, &err), PC_OK);
    o.symbol_dirs = (pc_strings){dirs, 1};
    T_EQ_INT(convert_bytes(data, len, &o, &named, &err), PC_OK);
    if (plain && named) {
        T_EQ_INT(count_in(plain, "burn_static"), 0);
        /* Nearly every sample is in burn_static, under main. */
        T_CHECK(count_in(named, "main;burn_static") * 10 >= (int)named->sample.n * 8);
    }
    pc_profile_free(plain);
    pc_profile_free(named);
    free(data);
}
