/* Source positions and inline chains from DWARF, checked against binutils'
 * addr2line.
 *
 * Programs with static inline functions inlined a few levels deep (C, and
 * C++ when g++ is there: namespaces, member functions, templates) and a
 * shared library are built here with -g -O2; every address of each of
 * their functions (in the symbol table) is looked up and compared with what
 * `addr2line -a -i -f -C -e FILE` prints: the same number of levels, the
 * same function names (ours demangled with pc_demangle), the same file
 * basenames and lines.  Then a stripped copy found through its
 * .gnu_debuglink, a file without DWARF, and damaged copies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/demangle.h"
#include "symbol/dwarf.h"
#include "nm.h"
#include "t.h"

static const char inl_c[] =
    "#include <stdio.h>\n"
    "static inline __attribute__((always_inline)) int leaf(int x)\n"
    "{\n"
    "    int r = x * 3;\n"
    "    if (r & 1)\n"
    "        r += 7;\n"
    "    return r ^ (x >> 2);\n"
    "}\n"
    "static inline __attribute__((always_inline)) int middle(int x)\n"
    "{\n"
    "    int s = 0;\n"
    "    for (int i = 0; i < x; i++)\n"
    "        s += leaf(i + x) * (i | 1);\n"
    "    return s;\n"
    "}\n"
    "static inline __attribute__((always_inline)) int top(int x)\n"
    "{\n"
    "    int m = middle(x);\n"
    "    return m + leaf(x * 5);\n"
    "}\n"
    "__attribute__((noinline)) int pc_t_outer(int x)\n"
    "{\n"
    "    int a = top(x);\n"
    "    if (a > 100)\n"
    "        a -= middle(a & 15);\n"
    "    return a + 1;\n"
    "}\n"
    "__attribute__((noinline)) int pc_t_sum(const int *v, int n)\n"
    "{\n"
    "    int s = 0;\n"
    "    for (int i = 0; i < n; i++)\n"
    "        s += top(v[i]);\n"
    "    return s;\n"
    "}\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    (void)argv;\n"
    "    int v[3] = { argc, argc + 1, argc + 2 };\n"
    "    printf(\"%d %d\\n\", pc_t_outer(argc), pc_t_sum(v, 3));\n"
    "    return 0;\n"
    "}\n";

static const char inl_cc[] =
    "#include <cstdio>\n"
    "namespace pc_ns {\n"
    "struct Acc {\n"
    "    int v;\n"
    "    inline __attribute__((always_inline)) void add(int x)\n"
    "    {\n"
    "        v += x * 3;\n"
    "        if (v & 1)\n"
    "            v ^= 5;\n"
    "    }\n"
    "};\n"
    "template <typename T> inline __attribute__((always_inline)) T twice(T x)\n"
    "{\n"
    "    Acc a{0};\n"
    "    a.add((int)x);\n"
    "    a.add((int)x + 1);\n"
    "    return (T)a.v;\n"
    "}\n"
    "__attribute__((noinline)) int compute(int n)\n"
    "{\n"
    "    int s = 0;\n"
    "    for (int i = 0; i < n; i++)\n"
    "        s += twice(i) + (int)twice((long)i * 7);\n"
    "    return s;\n"
    "}\n"
    "}\n"
    "int main(int argc, char **)\n"
    "{\n"
    "    std::printf(\"%d\\n\", pc_ns::compute(argc));\n"
    "    return 0;\n"
    "}\n";

static const char lib_c[] =
    "static inline __attribute__((always_inline)) unsigned mix(unsigned h, unsigned c)\n"
    "{\n"
    "    h ^= c;\n"
    "    h *= 16777619u;\n"
    "    return h;\n"
    "}\n"
    "static inline __attribute__((always_inline)) unsigned hash_str(const char *s)\n"
    "{\n"
    "    unsigned h = 2166136261u;\n"
    "    while (*s)\n"
    "        h = mix(h, (unsigned char)*s++);\n"
    "    return h;\n"
    "}\n"
    "unsigned pc_t_lib_hash(const char *s, const char *t)\n"
    "{\n"
    "    return hash_str(s) ^ mix(hash_str(t), 3);\n"
    "}\n";

static char dir[1024];
static int built = -1, have_cxx;

static int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(data, 1, len, f);
    return fclose(f) == 0 && n == len ? 0 : -1;
}

static void path_of(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

static int build(char *why, size_t why_size)
{
    if (built >= 0)
        return built;
    built = 0;
    if (system("command -v cc >/dev/null 2>&1 && command -v readelf >/dev/null 2>&1 && "
               "command -v addr2line >/dev/null 2>&1 && command -v objcopy >/dev/null 2>&1 && "
               "command -v strip >/dev/null 2>&1") != 0) {
        snprintf(why, why_size,
                 "cc, readelf, addr2line, objcopy or strip is absent: the DWARF tests are skipped");
        return 0;
    }
    snprintf(dir, sizeof dir, "%s/dwarf", t_tmpdir());
    mkdir(dir, 0755);
    char p[1200], cmd[8192];
    path_of(p, sizeof p, "inl.c");
    write_file(p, inl_c, strlen(inl_c));
    path_of(p, sizeof p, "lib.c");
    write_file(p, lib_c, strlen(lib_c));
    path_of(p, sizeof p, "inl.cc");
    write_file(p, inl_cc, strlen(inl_cc));
    snprintf(cmd, sizeof cmd,
             "cd '%s' && cc -g -O2 -o inl inl.c && "
             "cc -g -O2 -shared -fPIC -o libinl.so lib.c && "
             "cc -O2 -o nodwarf inl.c && "
             "mkdir -p split dotdebug/.debug && "
             "objcopy --only-keep-debug inl split/inl.debug && "
             "strip -g -o split/inl inl && "
             "objcopy --add-gnu-debuglink=split/inl.debug split/inl && "
             "cp split/inl.debug dotdebug/.debug/inl.debug && "
             "cp split/inl dotdebug/inl && "
             "strip -g -o stripped-nolink inl",
             dir);
    if (system(cmd) != 0) {
        snprintf(why, why_size, "cc could not build the test binaries: the DWARF tests are skipped");
        return 0;
    }
    snprintf(cmd, sizeof cmd, "command -v g++ >/dev/null 2>&1 && cd '%s' && g++ -g -O2 -o inlcc inl.cc", dir);
    have_cxx = system(cmd) == 0;
    built = 1;
    return 1;
}

#define NEED_BUILD()                         \
    do {                                     \
        char why_[256];                      \
        if (!build(why_, sizeof why_)) {     \
            t_skip("%s", why_);              \
            return;                          \
        }                                    \
    } while (0)

/* p's last component. */
static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : p;
}

/* One level as addr2line prints it. */
typedef struct a2l_level {
    char function[512];
    char file[512]; /* basename, "??" when unknown */
    uint32_t line;  /* 0 for "?" */
} a2l_level;

#define MAX_LEVELS 32

/* Counts over every comparison, for the test's own checks. */
static size_t n_compared, n_matched, n_deep;

/* Compares every address of [start, start + size) in file (looked up in
 * d) with addr2line. */
static void compare_range(pc_dwarf *d, const char *file, uint64_t start, uint64_t size)
{
    char addrs[1200], cmd[4096];
    snprintf(addrs, sizeof addrs, "%s/addrs.txt", dir);
    FILE *f = fopen(addrs, "w");
    if (!f) {
        t_fail(__FILE__, __LINE__, "cannot write %s", addrs);
        return;
    }
    for (uint64_t a = start; a < start + size; a++)
        fprintf(f, "0x%llx\n", (unsigned long long)a);
    fclose(f);
    snprintf(cmd, sizeof cmd, "addr2line -a -i -f -C -e '%s' < '%s'", file, addrs);
    FILE *p = popen(cmd, "r");
    if (!p) {
        t_fail(__FILE__, __LINE__, "cannot run addr2line");
        return;
    }
    char line[2048];
    uint64_t addr = 0;
    int have_addr = 0;
    a2l_level lv[MAX_LEVELS];
    size_t n = 0;
    int want_pos = 0;
    int reported = 0;
    for (;;) {
        char *got = fgets(line, sizeof line, p);
        if (got)
            line[strcspn(line, "\n")] = 0;
        /* An address line, or the end: compare the one before. */
        if (!got || (line[0] == '0' && line[1] == 'x' && !want_pos)) {
            if (have_addr) {
                pc_inline out[MAX_LEVELS];
                size_t m = pc_dwarf_lookup(d, addr, out, MAX_LEVELS);
                int ok = 1;
                /* addr2line's "??:0" is our nothing: its name then, if
                 * any, is the ELF symbol's, which callers get from
                 * pc_elf_symbol(). */
                size_t expect = (n == 1 && strcmp(lv[0].file, "??") == 0 && lv[0].line == 0) ? 0 : n;
                if (m != expect)
                    ok = 0;
                for (size_t i = 0; ok && i < m; i++) {
                    char *dem = out[i].function ? pc_demangle(out[i].function) : NULL;
                    const char *fn = dem ? dem : out[i].function ? out[i].function : "??";
                    const char *fb = out[i].file ? base_name(out[i].file) : "??";
                    if (strcmp(fn, lv[i].function) != 0 || strcmp(fb, lv[i].file) != 0 ||
                        out[i].line != lv[i].line)
                        ok = 0;
                    free(dem);
                }
                n_compared++;
                if (ok) {
                    n_matched++;
                    if (m >= 3)
                        n_deep++;
                } else if (reported++ < 5) {
                    char mine[2048] = "", theirs[2048] = "";
                    size_t lm = 0, lt = 0;
                    for (size_t i = 0; i < m && lm < sizeof mine - 600; i++) {
                        char *dem = out[i].function ? pc_demangle(out[i].function) : NULL;
                        lm += (size_t)snprintf(mine + lm, sizeof mine - lm, " | %.200s %.200s:%u",
                                               dem ? dem : out[i].function ? out[i].function : "??",
                                               out[i].file ? base_name(out[i].file) : "??", out[i].line);
                        free(dem);
                    }
                    for (size_t i = 0; i < n && lt < sizeof theirs - 600; i++)
                        lt += (size_t)snprintf(theirs + lt, sizeof theirs - lt, " | %.200s %.200s:%u",
                                               lv[i].function, lv[i].file, lv[i].line);
                    t_fail(__FILE__, __LINE__, "%s 0x%llx: ours%s; addr2line%s", base_name(file),
                           (unsigned long long)addr, mine, theirs);
                }
            }
            if (!got)
                break;
            addr = strtoull(line, NULL, 16);
            have_addr = 1;
            n = 0;
            continue;
        }
        if (!want_pos) {
            if (n < MAX_LEVELS)
                snprintf(lv[n].function, sizeof lv[n].function, "%.511s", line);
            want_pos = 1;
            continue;
        }
        want_pos = 0;
        if (n >= MAX_LEVELS)
            continue;
        /* FILE:LINE, perhaps followed by " (discriminator N)". */
        char *disc = strstr(line, " (discriminator");
        if (disc)
            *disc = 0;
        char *colon = strrchr(line, ':');
        lv[n].line = 0;
        if (colon) {
            *colon = 0;
            if (colon[1] != '?')
                lv[n].line = (uint32_t)strtoul(colon + 1, NULL, 10);
        }
        snprintf(lv[n].file, sizeof lv[n].file, "%.511s", base_name(line));
        n++;
    }
    pclose(p);
}

static void compare_function(pc_dwarf *d, const char *file, const char *sym)
{
    uint64_t start = 0, size = 0;
    if (!nm_symbol(file, sym, &start, &size) || size == 0) {
        t_fail(__FILE__, __LINE__, "the symbol table has no %s in %s", sym, file);
        return;
    }
    compare_range(d, file, start, size);
}

TEST_SLOW(symbol_dwarf_matches_addr2line)
{
    NEED_BUILD();
    char file[1200];

    t_case("C program, inlined three levels deep");
    path_of(file, sizeof file, "inl");
    pc_dwarf *d = pc_dwarf_open(file);
    T_CHECK(d != NULL);
    if (d) {
        T_EQ_STR(pc_dwarf_path(d), file);
        size_t deep = n_deep, matched = n_matched;
        compare_function(d, file, "pc_t_outer");
        compare_function(d, file, "pc_t_sum");
        compare_function(d, file, "main");
        /* Addresses outside any function of the DWARF. */
        compare_function(d, file, "_start");
        T_CHECK(n_deep > deep);
        T_CHECK(n_matched > matched);
        pc_inline out[4];
        T_EQ_INT(pc_dwarf_lookup(d, 0, out, 4), 0);
        T_EQ_INT(pc_dwarf_lookup(d, UINT64_MAX, out, 4), 0);
        T_EQ_INT(pc_dwarf_lookup(d, 0x1000, out, 0), 0);
        T_EQ_INT(pc_dwarf_lookup(d, 0x1000, NULL, 4), 0);
        /* A chain cut to max keeps its innermost entries. */
        uint64_t start, size;
        if (nm_symbol(file, "pc_t_outer", &start, &size)) {
            size_t best = 0;
            uint64_t at = start;
            for (uint64_t a = start; a < start + size; a++) {
                size_t m = pc_dwarf_lookup(d, a, out, 4);
                if (m > best) {
                    best = m;
                    at = a;
                }
            }
            T_CHECK(best >= 3);
            pc_inline full[4], one[1];
            size_t m = pc_dwarf_lookup(d, at, full, 4);
            T_EQ_INT(pc_dwarf_lookup(d, at, one, 1), 1);
            if (m >= 1) {
                T_EQ_STR(one[0].function, full[0].function);
                T_EQ_INT(one[0].line, full[0].line);
                T_EQ_STR(full[m - 1].function, "pc_t_outer");
            }
        }
        pc_dwarf_close(d);
    }

    t_case("shared library");
    path_of(file, sizeof file, "libinl.so");
    d = pc_dwarf_open(file);
    T_CHECK(d != NULL);
    if (d) {
        size_t deep = n_deep;
        compare_function(d, file, "pc_t_lib_hash");
        T_CHECK(n_deep > deep);
        pc_dwarf_close(d);
    }

    t_case("C++: namespaces, members, templates");
    if (!have_cxx) {
        t_skip("g++ is absent: the C++ case is skipped");
    } else {
        path_of(file, sizeof file, "inlcc");
        d = pc_dwarf_open(file);
        T_CHECK(d != NULL);
        if (d) {
            size_t deep = n_deep;
            compare_function(d, file, "_ZN5pc_ns7computeEi");
            compare_function(d, file, "main");
            T_CHECK(n_deep > deep);
            /* Names are the linkage names. */
            uint64_t start, size;
            int mangled = 0;
            if (nm_symbol(file, "_ZN5pc_ns7computeEi", &start, &size)) {
                for (uint64_t a = start; a < start + size; a++) {
                    pc_inline out[8];
                    size_t m = pc_dwarf_lookup(d, a, out, 8);
                    for (size_t i = 0; i < m; i++)
                        if (out[i].function && strncmp(out[i].function, "_ZN5pc_ns", 9) == 0)
                            mangled = 1;
                }
            }
            T_CHECK(mangled);
            pc_dwarf_close(d);
        }
    }
    T_CHECK(n_compared > 0);
    T_EQ_INT(n_matched, n_compared);
    if (getenv("PC_T_DWARF_COUNTS"))
        fprintf(stderr, "dwarf: %zu addresses compared with addr2line, %zu matched, %zu with 3+ levels\n",
                n_compared, n_matched, n_deep);
}

TEST(symbol_dwarf_separate_debug_file)
{
    NEED_BUILD();
    char file[1200], dbg[1200], orig[1200];
    path_of(orig, sizeof orig, "inl");

    t_case(".gnu_debuglink in the same folder");
    path_of(file, sizeof file, "split/inl");
    path_of(dbg, sizeof dbg, "split/inl.debug");
    pc_dwarf *d = pc_dwarf_open(file);
    T_CHECK(d != NULL);
    if (d) {
        T_EQ_STR(pc_dwarf_path(d), dbg);
        /* The stripped file's addresses, answered as the original's. */
        compare_function(d, orig, "pc_t_outer");
        pc_dwarf_close(d);
    }

    t_case(".gnu_debuglink in .debug/");
    path_of(file, sizeof file, "dotdebug/inl");
    path_of(dbg, sizeof dbg, "dotdebug/.debug/inl.debug");
    d = pc_dwarf_open(file);
    T_CHECK(d != NULL);
    if (d) {
        T_EQ_STR(pc_dwarf_path(d), dbg);
        compare_function(d, orig, "pc_t_sum");
        pc_dwarf_close(d);
    }

    t_case("stripped, no link");
    path_of(file, sizeof file, "stripped-nolink");
    d = pc_dwarf_open(file);
    T_CHECK(d == NULL);
    pc_dwarf_close(d);
}

TEST(symbol_dwarf_none)
{
    NEED_BUILD();
    char file[1200];
    t_case("no DWARF");
    path_of(file, sizeof file, "nodwarf");
    T_CHECK(pc_dwarf_open(file) == NULL);
    t_case("missing file, NULL, not ELF");
    T_CHECK(pc_dwarf_open("/nonexistent/profconv/dwarf") == NULL);
    T_CHECK(pc_dwarf_open(NULL) == NULL);
    path_of(file, sizeof file, "inl.c");
    T_CHECK(pc_dwarf_open(file) == NULL);
    pc_dwarf_close(NULL);
    T_EQ_INT(pc_dwarf_lookup(NULL, 0x1000, NULL, 0), 0);
}

/* Opens a damaged copy and looks up every address of [start, end): the
 * answers may be anything, but the process must survive. */
static void survive(const char *path, uint64_t start, uint64_t end)
{
    pc_dwarf *d = pc_dwarf_open(path);
    if (!d)
        return;
    pc_inline out[16];
    for (uint64_t a = start; a < end; a++) {
        size_t m = pc_dwarf_lookup(d, a, out, 16);
        T_CHECK(m <= 16);
    }
    pc_dwarf_close(d);
}

TEST(symbol_dwarf_damaged)
{
    NEED_BUILD();
    char orig[1200], bad[1200];
    path_of(orig, sizeof orig, "inl");
    path_of(bad, sizeof bad, "damaged");
    uint64_t start = 0, size = 0;
    if (!nm_symbol(orig, "pc_t_outer", &start, &size)) {
        t_fail(__FILE__, __LINE__, "the symbol table has no pc_t_outer");
        return;
    }
    size_t len = 0;
    unsigned char *data = t_read_file(orig, &len);
    T_CHECK(data != NULL && len > 4096);
    if (!data || len <= 4096) {
        free(data);
        return;
    }

    t_case("truncated");
    size_t cuts[] = { 16, 64, 1024, len / 2, len - len / 8, len - 200, len - 1 };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        write_file(bad, data, cuts[i]);
        survive(bad, start, start + size);
    }

    t_case("random bytes over the file");
    unsigned char *copy = malloc(len);
    T_CHECK(copy != NULL);
    uint32_t seed = 12345;
    for (int round = 0; copy && round < 40; round++) {
        memcpy(copy, data, len);
        /* Damage after the ELF header, in the last two thirds (the
         * debug sections are at the end) or anywhere. */
        size_t from = round % 2 ? 64 : len / 3;
        int hits = 1 + round * 8;
        for (int h = 0; h < hits; h++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = from + (seed >> 8) % (len - from);
            seed = seed * 1103515245u + 12345u;
            copy[at] = (unsigned char)(seed >> 16);
        }
        write_file(bad, copy, len);
        survive(bad, start, start + size);
    }
    free(copy);

    t_case("random bytes");
    unsigned char junk[8192];
    for (size_t i = 0; i < sizeof junk; i++) {
        seed = seed * 1103515245u + 12345u;
        junk[i] = (unsigned char)(seed >> 16);
    }
    memcpy(junk, data, 64); /* an ELF header over junk */
    write_file(bad, junk, sizeof junk);
    survive(bad, start, start + size);
    free(data);
}
