/* The ELF, kallsyms and JIT-map symbolizers.
 *
 * Real binaries are built here with the system's compiler (a shared
 * library and an executable of known functions, with chosen build ids),
 * and their symbols and segments checked against readelf's.  ELF32 and
 * big-endian files, which the compiler here cannot make, are written byte
 * by byte, and so are the damaged ones. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbol/elf.h"
#include "nm.h"
#include "t.h"

/* The ids the binaries are linked with: the library's is 20 bytes (SHA-1
 * sized), the executable's 16 (md5 sized), as perf then pads it. */
#define LIB_ID "11223344556677889900aabbccddeeff00112233"
#define OTHER_ID "ffeeddccbbaa99887766554433221100ffeeddcc"
#define EXE_ID "abcdef0123456789abcdef0123456789"

static const char lib_c[] =
    "__attribute__((noinline)) static int pc_t_helper(int x) { return x * x + 7; }\n"
    "int pc_t_alpha(int x) { return pc_t_helper(x) * 3 + 1; }\n"
    "int pc_t_beta(int x) { int s = 0; for (int i = 0; i < x; i++) s += pc_t_helper(i); return s; }\n"
    "__attribute__((weak)) int pc_t_weak(int x) { return x - 5; }\n"
    "int pc_t_main_name(int x) { return x ^ 0x5a5a; }\n"
    "extern int pc_t_alias(int) __attribute__((weak, alias(\"pc_t_main_name\")));\n";

static const char exe_c[] =
    "#include <stdio.h>\n"
    "__attribute__((noinline)) int pc_t_exe_one(int x) { return x * 11; }\n"
    "__attribute__((noinline)) int pc_t_exe_two(int x) { return pc_t_exe_one(x) + 2; }\n"
    "int main(int argc, char **argv) { (void)argv; printf(\"%d\\n\", pc_t_exe_two(argc)); return 0; }\n";

static char dir[1024];
static int built = -1;

static int run(const char *cmd)
{
    return system(cmd);
}

static void path_of(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

static int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(data, 1, len, f);
    return fclose(f) == 0 && n == len ? 0 : -1;
}

static size_t hex_bytes(const char *hex, uint8_t *out)
{
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
    return n;
}

/* Builds the binaries once: 1 when they are there, 0 when the tools are
 * missing (the reason is in why). */
static int build(char *why, size_t why_size)
{
    if (built >= 0)
        return built;
    built = 0;
    if (run("command -v cc >/dev/null 2>&1 && "
            "command -v strip >/dev/null 2>&1 && command -v readelf >/dev/null 2>&1") != 0) {
        snprintf(why, why_size, "cc, strip or readelf is absent: the ELF tests are skipped");
        return 0;
    }
    snprintf(dir, sizeof dir, "%s/elf", t_tmpdir());
    mkdir(dir, 0755);
    char p[1200], cmd[8192];
    path_of(p, sizeof p, "lib.c");
    write_file(p, lib_c, strlen(lib_c));
    path_of(p, sizeof p, "exe.c");
    write_file(p, exe_c, strlen(exe_c));
    snprintf(cmd, sizeof cmd,
             "cd '%s' && cc -O1 -g -shared -fPIC -Wl,--build-id=0x" LIB_ID " -o libt.so lib.c && "
             "cc -O1 -shared -fPIC -Wl,--build-id=0x" OTHER_ID " -o libt-other.so lib.c && "
             "strip --strip-all -o libt-stripped.so libt.so && "
             "cc -O1 -Wl,--build-id=0x" EXE_ID " -o exe exe.c && "
             "cc -O1 -shared -fPIC -Wl,--build-id=none -o libt-noid.so lib.c",
             dir);
    if (run(cmd) != 0) {
        snprintf(why, why_size, "cc could not build the test binaries: the ELF tests are skipped");
        return 0;
    }
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

/* The address the symbol table gives for symbol name in file; 0 when none. */
static uint64_t nm_addr(const char *file, const char *name)
{
    uint64_t start, size;
    return nm_symbol(file, name, &start, &size) ? start : 0;
}

static const pc_symfind no_cache = { .symfs = NULL, .debug_dir = "/nonexistent/profconv-debug" };

static void check_symbol(const pc_elf *e, const char *file, const char *name, const char *expect)
{
    uint64_t a = nm_addr(file, name);
    if (!a) {
        t_fail(__FILE__, __LINE__, "the symbol table has no %s in %s", name, file);
        return;
    }
    uint64_t start = 0;
    T_EQ_STR(pc_elf_symbol(e, a, &start), expect);
    T_EQ_INT(start, a);
    start = 0;
    T_EQ_STR(pc_elf_symbol(e, a + 1, &start), expect);
    T_EQ_INT(start, a);
}

TEST_SLOW(symbol_elf_names_by_address)
{
    NEED_BUILD();
    uint8_t id[20];
    hex_bytes(LIB_ID, id);
    char lib[1200];
    path_of(lib, sizeof lib, "libt.so");

    t_case("symtab");
    pc_elf *e = pc_elf_open(&no_cache, lib, id, sizeof id);
    T_CHECK(e != NULL);
    if (e) {
        T_EQ_STR(pc_elf_path(e), lib);
        check_symbol(e, lib, "pc_t_alpha", "pc_t_alpha");
        check_symbol(e, lib, "pc_t_beta", "pc_t_beta");
        check_symbol(e, lib, "pc_t_weak", "pc_t_weak");
        check_symbol(e, lib, "pc_t_helper", "pc_t_helper");
        /* A global and its weak alias: the global name. */
        check_symbol(e, lib, "pc_t_alias", "pc_t_main_name");
        T_CHECK(pc_elf_symbol(e, 0, NULL) == NULL);
        T_CHECK(pc_elf_symbol(e, UINT64_MAX, NULL) == NULL);
        pc_elf_close(e);
    }

    t_case("dynsym of a stripped copy");
    char stripped[1200];
    path_of(stripped, sizeof stripped, "libt-stripped.so");
    e = pc_elf_open(&no_cache, stripped, id, sizeof id);
    T_CHECK(e != NULL);
    if (e) {
        check_symbol(e, lib, "pc_t_alpha", "pc_t_alpha");
        check_symbol(e, lib, "pc_t_beta", "pc_t_beta");
        check_symbol(e, lib, "pc_t_main_name", "pc_t_main_name");
        pc_elf_close(e);
    }

    t_case("executable");
    char exe[1200];
    path_of(exe, sizeof exe, "exe");
    e = pc_elf_open(&no_cache, exe, NULL, 0);
    T_CHECK(e != NULL);
    if (e) {
        check_symbol(e, exe, "pc_t_exe_one", "pc_t_exe_one");
        check_symbol(e, exe, "pc_t_exe_two", "pc_t_exe_two");
        check_symbol(e, exe, "main", "main");
        pc_elf_close(e);
    }
}

/* readelf's executable PT_LOAD of file: 1 with its numbers, else 0. */
static int exec_segment(const char *file, uint64_t *off, uint64_t *vaddr, uint64_t *filesz)
{
    char cmd[2048], line[1024];
    snprintf(cmd, sizeof cmd, "readelf -lW '%s'", file);
    FILE *f = popen(cmd, "r");
    if (!f)
        return 0;
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long o, v, pa, fs, ms;
        char flags[8] = "";
        if (!found && sscanf(line, " LOAD 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx %7[RWE ]", &o, &v,
                             &pa, &fs, &ms, flags) == 6 && strchr(flags, 'E')) {
            *off = o;
            *vaddr = v;
            *filesz = fs;
            found = 1;
        }
    }
    pclose(f);
    return found;
}

TEST(symbol_elf_offset_to_vaddr)
{
    NEED_BUILD();
    const char *files[] = { "libt.so", "exe" };
    for (int i = 0; i < 2; i++) {
        t_case("%s", files[i]);
        char p[1200];
        path_of(p, sizeof p, files[i]);
        uint64_t off, vaddr, filesz, got = 0;
        if (!exec_segment(p, &off, &vaddr, &filesz)) {
            t_fail(__FILE__, __LINE__, "readelf shows no executable segment in %s", p);
            continue;
        }
        pc_elf *e = pc_elf_open(&no_cache, p, NULL, 0);
        T_CHECK(e != NULL);
        if (!e)
            continue;
        T_EQ_INT(pc_elf_offset_to_vaddr(e, off, &got), 0);
        T_EQ_INT(got, vaddr);
        T_EQ_INT(pc_elf_offset_to_vaddr(e, off + filesz - 1, &got), 0);
        T_EQ_INT(got, vaddr + filesz - 1);
        T_EQ_INT(pc_elf_offset_to_vaddr(e, UINT64_MAX / 2, &got), -1);
        /* The function the symbol table names is where the offset of its bytes maps. */
        uint64_t a = nm_addr(p, i == 0 ? "pc_t_alpha" : "pc_t_exe_one");
        T_EQ_INT(pc_elf_offset_to_vaddr(e, a - vaddr + off, &got), 0);
        T_EQ_STR(pc_elf_symbol(e, got, NULL), i == 0 ? "pc_t_alpha" : "pc_t_exe_one");
        pc_elf_close(e);
    }
}

static void check_locate(const pc_symfind *w, const char *path, const uint8_t *id, size_t len,
                         const char *expect, int line)
{
    char *got = pc_elf_locate(w, path, id, len);
    if (expect ? !got || strcmp(got, expect) != 0 : got != NULL)
        t_fail(__FILE__, line, "pc_elf_locate(%s) == %s, expected %s", path,
               got ? got : "NULL", expect ? expect : "NULL");
    free(got);
    /* pc_elf_open finds the same file. */
    pc_elf *e = pc_elf_open(w, path, id, len);
    if (expect ? !e || strcmp(pc_elf_path(e), expect) != 0 : e != NULL)
        t_fail(__FILE__, line, "pc_elf_open(%s) found %s, expected %s", path,
               e ? pc_elf_path(e) : "NULL", expect ? expect : "NULL");
    pc_elf_close(e);
}

TEST(symbol_elf_build_id_rule)
{
    NEED_BUILD();
    uint8_t lib_id[20], other_id[20], exe_id[20] = { 0 }, zeros[20] = { 0 };
    hex_bytes(LIB_ID, lib_id);
    hex_bytes(OTHER_ID, other_id);
    hex_bytes(EXE_ID, exe_id);
    char lib[1200], other[1200], noid[1200], exe[1200], missing[1200];
    path_of(lib, sizeof lib, "libt.so");
    path_of(other, sizeof other, "libt-other.so");
    path_of(noid, sizeof noid, "libt-noid.so");
    path_of(exe, sizeof exe, "exe");
    path_of(missing, sizeof missing, "no-such-lib.so");
    const pc_symfind *w = &no_cache;

    t_case("the recorded id");
    check_locate(w, lib, lib_id, 20, lib, __LINE__);
    check_locate(NULL, lib, lib_id, 20, lib, __LINE__);
    t_case("a different id");
    check_locate(w, lib, other_id, 20, NULL, __LINE__);
    check_locate(w, other, lib_id, 20, NULL, __LINE__);
    t_case("a prefix differing in its first byte");
    uint8_t near[20];
    memcpy(near, lib_id, 20);
    near[0] ^= 1;
    check_locate(w, lib, near, 20, NULL, __LINE__);
    t_case("no id recorded");
    check_locate(w, lib, NULL, 0, lib, __LINE__);
    check_locate(w, lib, zeros, 20, lib, __LINE__);
    check_locate(w, noid, NULL, 0, noid, __LINE__);
    t_case("a file without an id when one was recorded");
    check_locate(w, noid, lib_id, 20, NULL, __LINE__);
    t_case("a 16-byte id padded to 20");
    check_locate(w, exe, exe_id, 20, exe, __LINE__);
    check_locate(w, exe, exe_id, 16, exe, __LINE__);
    exe_id[19] = 1;
    check_locate(w, exe, exe_id, 20, NULL, __LINE__);
    t_case("a missing file");
    check_locate(w, missing, NULL, 0, NULL, __LINE__);
    check_locate(w, missing, lib_id, 20, NULL, __LINE__);
    check_locate(w, "", NULL, 0, NULL, __LINE__);
    t_case("not an ELF file");
    char text[1200];
    path_of(text, sizeof text, "lib.c");
    check_locate(w, text, NULL, 0, NULL, __LINE__);
    check_locate(w, dir, NULL, 0, NULL, __LINE__);
}

static int copy_file(const char *from, const char *to)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'", to, from, to);
    return run(cmd);
}

TEST(symbol_elf_cache_and_symfs)
{
    NEED_BUILD();
    uint8_t lib_id[20], other_id[20], exe_id[20] = { 0 };
    hex_bytes(LIB_ID, lib_id);
    hex_bytes(OTHER_ID, other_id);
    hex_bytes(EXE_ID, exe_id);
    char lib[1200], other[1200], exe[1200], dbg[1200], p[1400], expect[1400];
    path_of(lib, sizeof lib, "libt.so");
    path_of(other, sizeof other, "libt-other.so");
    path_of(exe, sizeof exe, "exe");
    path_of(dbg, sizeof dbg, "debug");
    pc_symfind w = { .symfs = NULL, .debug_dir = dbg };
    const char *gone = "/nonexistent/usr/lib/libt.so";

    t_case("a folder holding elf");
    snprintf(expect, sizeof expect, "%s/.build-id/11/223344556677889900aabbccddeeff00112233/elf", dbg);
    T_EQ_INT(copy_file(lib, expect), 0);
    /* A "debug" beside it is second choice. */
    snprintf(p, sizeof p, "%s/.build-id/11/223344556677889900aabbccddeeff00112233/debug", dbg);
    T_EQ_INT(copy_file(other, p), 0);
    check_locate(&w, gone, lib_id, 20, expect, __LINE__);
    pc_elf *e = pc_elf_open(&w, gone, lib_id, 20);
    T_CHECK(e && pc_elf_symbol(e, nm_addr(lib, "pc_t_beta"), NULL));
    pc_elf_close(e);

    t_case("a folder holding debug only");
    snprintf(expect, sizeof expect, "%s/.build-id/ff/eeddccbbaa99887766554433221100ffeeddcc/debug", dbg);
    T_EQ_INT(copy_file(other, expect), 0);
    check_locate(&w, gone, other_id, 20, expect, __LINE__);

    t_case("a link to the binary, named by the unpadded id");
    snprintf(p, sizeof p, "%s/.build-id/ab", dbg);
    mkdir(p, 0755);
    snprintf(expect, sizeof expect, "%s/.build-id/ab/cdef0123456789abcdef0123456789", dbg);
    T_EQ_INT(symlink(exe, expect), 0);
    check_locate(&w, gone, exe_id, 20, expect, __LINE__);

    t_case("a cache entry of another binary");
    uint8_t wrong[20];
    memcpy(wrong, lib_id, 20);
    wrong[19] ^= 0xff;
    char wrong_hex_path[1400];
    snprintf(wrong_hex_path, sizeof wrong_hex_path,
             "%s/.build-id/11/223344556677889900aabbccddeeff001122cc/elf", dbg);
    T_EQ_INT(copy_file(lib, wrong_hex_path), 0);
    check_locate(&w, gone, wrong, 20, NULL, __LINE__);
    /* After a cache entry of the wrong id, the recorded path. */
    char dbg2[1200];
    path_of(dbg2, sizeof dbg2, "debug2");
    snprintf(p, sizeof p, "%s/.build-id/11/223344556677889900aabbccddeeff00112233/elf", dbg2);
    T_EQ_INT(copy_file(other, p), 0);
    pc_symfind w2 = { .symfs = NULL, .debug_dir = dbg2 };
    check_locate(&w2, lib, lib_id, 20, lib, __LINE__);
    check_locate(&w2, gone, lib_id, 20, NULL, __LINE__);

    t_case("symfs");
    char root[1200];
    path_of(root, sizeof root, "root");
    snprintf(expect, sizeof expect, "%s/usr/lib/libt.so", root);
    T_EQ_INT(copy_file(lib, expect), 0);
    pc_symfind fs = { .symfs = root, .debug_dir = "/nonexistent/profconv-debug" };
    check_locate(&fs, "/usr/lib/libt.so", lib_id, 20, expect, __LINE__);
    check_locate(&fs, "/usr/lib/libt.so", NULL, 0, expect, __LINE__);
    /* The path itself when symfs has no such file. */
    check_locate(&fs, exe, NULL, 0, exe, __LINE__);
    /* A file under symfs of another id is passed over. */
    check_locate(&fs, "/usr/lib/libt.so", other_id, 20, NULL, __LINE__);
}

/* A hand-made ELF file: a PT_LOAD over .text at 0x10000 (0x200 bytes)
 * and a .symtab of fn_one (0x10100, 0x20 bytes, global), fn_two (0x10180,
 * no size, local: up to the section's end), a data object and an
 * undefined function, in either class and byte order. */
typedef struct mkelf {
    uint8_t b[1024];
    int is64, big;
} mkelf;

static void put(mkelf *m, size_t off, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        m->b[off + (size_t)i] = (uint8_t)(v >> (8 * (m->big ? n - 1 - i : i)));
}

enum { STRTAB = 0x100, SYMTAB = 0x140, SHSTRTAB = 0x1c0, SHDRS = 0x200 };

static size_t make_elf(mkelf *m, int is64, int big)
{
    memset(m, 0, sizeof *m);
    m->is64 = is64;
    m->big = big;
    int w = is64 ? 8 : 4;
    memcpy(m->b, "\x7f" "ELF", 4);
    m->b[4] = is64 ? 2 : 1;
    m->b[5] = big ? 2 : 1;
    m->b[6] = 1;
    size_t phoff = is64 ? 64 : 52, phent = is64 ? 56 : 32, shent = is64 ? 64 : 40;
    size_t o = 16;
    put(m, o, 3, 2);                      /* ET_DYN */
    put(m, o + 2, is64 ? 62 : 3, 2);      /* x86-64 or i386 */
    put(m, o + 4, 1, 4);
    o += 8;
    put(m, o, 0, w);                      /* entry */
    put(m, o + w, phoff, w);
    put(m, o + 2 * w, SHDRS, w);
    o += 3 * w;
    put(m, o, 0, 4);
    put(m, o + 4, is64 ? 64 : 52, 2);
    put(m, o + 6, phent, 2);
    put(m, o + 8, 1, 2);
    put(m, o + 10, shent, 2);
    put(m, o + 12, 5, 2);
    put(m, o + 14, 4, 2);                 /* .shstrtab */
    /* The one segment: R+X, offset 0 at 0x10000. */
    o = phoff;
    put(m, o, 1, 4);
    if (is64) {
        put(m, o + 4, 5, 4);
        put(m, o + 8, 0, 8);
        put(m, o + 16, 0x10000, 8);
        put(m, o + 24, 0x10000, 8);
        put(m, o + 32, 0x200, 8);
        put(m, o + 40, 0x200, 8);
        put(m, o + 48, 0x1000, 8);
    } else {
        put(m, o + 4, 0, 4);
        put(m, o + 8, 0x10000, 4);
        put(m, o + 12, 0x10000, 4);
        put(m, o + 16, 0x200, 4);
        put(m, o + 20, 0x200, 4);
        put(m, o + 24, 5, 4);
        put(m, o + 28, 0x1000, 4);
    }
    static const char strtab[] = "\0fn_one\0fn_two\0obj\0undef";
    memcpy(m->b + STRTAB, strtab, sizeof strtab);
    static const char shstrtab[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
    memcpy(m->b + SHSTRTAB, shstrtab, sizeof shstrtab);
    /* Symbols: null, fn_one, fn_two, obj, undef. */
    struct { uint32_t name; uint64_t value, size; uint8_t info; uint16_t shndx; } syms[5] = {
        { 0, 0, 0, 0, 0 },
        { 1, 0x10100, 0x20, 0x12, 1 },    /* GLOBAL FUNC */
        { 8, 0x10180, 0, 0x02, 1 },       /* LOCAL FUNC */
        { 15, 0x10140, 8, 0x11, 1 },      /* GLOBAL OBJECT */
        { 19, 0x10160, 0, 0x12, 0 },      /* undefined */
    };
    size_t symsz = is64 ? 24 : 16;
    for (int i = 0; i < 5; i++) {
        o = SYMTAB + (size_t)i * symsz;
        put(m, o, syms[i].name, 4);
        if (is64) {
            m->b[o + 4] = syms[i].info;
            put(m, o + 6, syms[i].shndx, 2);
            put(m, o + 8, syms[i].value, 8);
            put(m, o + 16, syms[i].size, 8);
        } else {
            put(m, o + 4, syms[i].value, 4);
            put(m, o + 8, syms[i].size, 4);
            m->b[o + 12] = syms[i].info;
            put(m, o + 14, syms[i].shndx, 2);
        }
    }
    /* Sections: null, .text, .symtab, .strtab, .shstrtab. */
    struct { uint32_t name, type; uint64_t flags, addr, off, size; uint32_t link, info; uint64_t align, entsize; } sh[5] = {
        { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
        { 1, 1, 6, 0x10000, 0, 0x200, 0, 0, 16, 0 },
        { 7, 2, 0, 0, SYMTAB, 5 * symsz, 3, 3, 8, symsz },
        { 15, 3, 0, 0, STRTAB, sizeof strtab, 0, 0, 1, 0 },
        { 23, 3, 0, 0, SHSTRTAB, sizeof shstrtab, 0, 0, 1, 0 },
    };
    for (int i = 0; i < 5; i++) {
        o = SHDRS + (size_t)i * shent;
        put(m, o, sh[i].name, 4);
        put(m, o + 4, sh[i].type, 4);
        put(m, o + 8, sh[i].flags, w);
        put(m, o + 8 + w, sh[i].addr, w);
        put(m, o + 8 + 2 * w, sh[i].off, w);
        put(m, o + 8 + 3 * w, sh[i].size, w);
        put(m, o + 8 + 4 * w, sh[i].link, 4);
        put(m, o + 12 + 4 * w, sh[i].info, 4);
        put(m, o + 16 + 4 * w, sh[i].align, w);
        put(m, o + 16 + 5 * w, sh[i].entsize, w);
    }
    return SHDRS + 5 * shent;
}

static pc_elf *open_bytes(const char *name, const void *data, size_t len)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", t_tmpdir(), name);
    if (write_file(p, data, len) != 0) {
        t_fail(__FILE__, __LINE__, "cannot write %s", p);
        return NULL;
    }
    return pc_elf_open(&no_cache, p, NULL, 0);
}

TEST(symbol_elf_classes_and_byte_orders)
{
    for (int is64 = 0; is64 < 2; is64++)
        for (int big = 0; big < 2; big++) {
            t_case("ELF%d %s-endian", is64 ? 64 : 32, big ? "big" : "little");
            mkelf m;
            size_t len = make_elf(&m, is64, big);
            pc_elf *e = open_bytes("made.elf", m.b, len);
            T_CHECK(e != NULL);
            if (!e)
                continue;
            uint64_t start = 0, v = 0;
            T_EQ_STR(pc_elf_symbol(e, 0x10110, &start), "fn_one");
            T_EQ_INT(start, 0x10100);
            T_CHECK(pc_elf_symbol(e, 0x10120, NULL) == NULL);
            T_CHECK(pc_elf_symbol(e, 0x10144, NULL) == NULL);   /* the object */
            T_CHECK(pc_elf_symbol(e, 0x10160, NULL) == NULL);   /* undefined */
            T_EQ_STR(pc_elf_symbol(e, 0x101ff, &start), "fn_two");
            T_EQ_INT(start, 0x10180);
            T_CHECK(pc_elf_symbol(e, 0x10200, NULL) == NULL);
            T_CHECK(pc_elf_symbol(e, 0x100ff, NULL) == NULL);
            T_EQ_INT(pc_elf_offset_to_vaddr(e, 0x150, &v), 0);
            T_EQ_INT(v, 0x10150);
            T_EQ_INT(pc_elf_offset_to_vaddr(e, 0x200, &v), -1);
            pc_elf_close(e);
        }
}

/* Opening must not crash or read out of bounds (the sanitizer build
 * checks the latter); what it finds in a damaged file may be anything. */
static void open_damaged(const void *data, size_t len)
{
    pc_elf *e = open_bytes("damaged.elf", data, len);
    if (e) {
        for (uint64_t a = 0x10000; a < 0x10210; a += 8)
            pc_elf_symbol(e, a, NULL);
        uint64_t v;
        pc_elf_offset_to_vaddr(e, 0x100, &v);
        pc_elf_path(e);
    }
    pc_elf_close(e);
}

TEST(symbol_elf_damaged)
{
    mkelf m;
    size_t len = make_elf(&m, 1, 0);

    t_case("not ELF");
    static const uint8_t junk[] = "\x7f" "ELF but not really an ELF header at all, just text";
    T_CHECK(open_bytes("damaged.elf", junk, sizeof junk) == NULL);
    T_CHECK(open_bytes("damaged.elf", "", 0) == NULL);
    uint8_t rnd[4096];
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < sizeof rnd; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        rnd[i] = (uint8_t)x;
    }
    T_CHECK(open_bytes("damaged.elf", rnd, sizeof rnd) == NULL);

    t_case("truncated");
    for (size_t n = 0; n < len; n += 7)
        open_damaged(m.b, n);
    T_CHECK(open_bytes("damaged.elf", m.b, 40) == NULL);

    t_case("string index out of range");
    mkelf d = m;
    put(&d, SYMTAB + 24, 0x7fffffff, 4);
    pc_elf *e = open_bytes("damaged.elf", d.b, len);
    if (e) {
        T_CHECK(pc_elf_symbol(e, 0x10110, NULL) == NULL);
        T_EQ_STR(pc_elf_symbol(e, 0x10190, NULL), "fn_two");
    }
    pc_elf_close(e);

    t_case("unterminated string table");
    d = m;
    memset(d.b + STRTAB, 'x', 0x40);
    put(&d, SHDRS + 3 * 64 + 32, 0x40, 8);
    open_damaged(d.b, len);

    t_case("sizes and links past the file");
    d = m;
    put(&d, SHDRS + 2 * 64 + 32, 0x7fffffffffffull, 8);   /* .symtab size */
    open_damaged(d.b, len);
    d = m;
    put(&d, SHDRS + 2 * 64 + 40, 77, 4);                  /* .symtab link */
    open_damaged(d.b, len);
    d = m;
    put(&d, SHDRS + 2 * 64 + 24, 0xfffffffffff0ull, 8);   /* .symtab offset */
    open_damaged(d.b, len);
    d = m;
    put(&d, SYMTAB + 24 + 6, 0xfff0, 2);                  /* st_shndx */
    put(&d, SYMTAB + 48 + 6, 99, 2);
    open_damaged(d.b, len);

    t_case("random bytes changed");
    for (int round = 0; round < 400; round++) {
        d = m;
        for (int k = 0; k < 1 + round % 4; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t at = (size_t)(x % len);
            d.b[at] = (uint8_t)(x >> 32);
        }
        open_damaged(d.b, len);
    }
}

/* A real library with bytes changed in its headers: the ELF header and
 * program headers at the front, the section headers at the end. */
TEST(symbol_elf_damaged_library)
{
    NEED_BUILD();
    char lib[1200];
    path_of(lib, sizeof lib, "libt.so");
    size_t len = 0;
    unsigned char *orig = t_read_file(lib, &len);
    T_CHECK(orig && len > 4096);
    if (!orig || len <= 4096) {
        free(orig);
        return;
    }
    unsigned char *d = malloc(len);
    uint64_t x = 0x2545f4914f6cdd1du;
    for (int round = 0; round < 300 && d; round++) {
        memcpy(d, orig, len);
        for (int k = 0; k < 1 + round % 3; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t at = round % 2 ? (size_t)(x % 1024) : len - 1 - (size_t)(x % 2048);
            d[at] = (uint8_t)(x >> 40);
        }
        open_damaged(d, len);
    }
    /* Cut anywhere. */
    for (size_t n = 0; n < len && d; n += len / 61)
        open_damaged(orig, n);
    free(d);
    free(orig);
}

static void write_text(const char *path, const char *text)
{
    if (write_file(path, text, strlen(text)) != 0)
        t_fail(__FILE__, __LINE__, "cannot write %s", path);
}

/* Notes as the kernel exports them: in this machine's byte order. */
static size_t make_notes(uint8_t *out, const uint8_t *id, uint32_t id_len)
{
    uint32_t hdr[3] = { 4, 8, 0x100 };      /* another note first */
    size_t o = 0;
    memcpy(out + o, hdr, 12);
    memcpy(out + o + 12, "Xen\0", 4);
    memset(out + o + 16, 0x55, 8);
    o += 24;
    uint32_t bid[3] = { 4, id_len, 3 };
    memcpy(out + o, bid, 12);
    memcpy(out + o + 12, "GNU\0", 4);
    memcpy(out + o + 16, id, id_len);
    o += 16 + ((id_len + 3u) & ~3u);
    return o;
}

TEST(symbol_kallsyms)
{
    char ks[1200], notes[1200], hidden[1200];
    snprintf(ks, sizeof ks, "%s/kallsyms", t_tmpdir());
    snprintf(notes, sizeof notes, "%s/notes", t_tmpdir());
    snprintf(hidden, sizeof hidden, "%s/kallsyms-hidden", t_tmpdir());
    write_text(ks,
               "ffffffff81000000 T _text\n"
               "ffffffff81000000 T startup_64\n"
               "ffffffff81001000 t local_fn\n"
               "ffffffff81001000 T global_fn\n"
               "ffffffff81002000 D some_data\n"
               "ffffffff81003000 W weak_fn\n"
               "ffffffff81004000 b bss_thing\n"
               "garbage line\n"
               "ffffffffc0001000 t mod_fn\t[mymod]\n"
               "0000000000000000 T zero_fn\n");
    write_text(hidden,
               "0000000000000000 T _text\n"
               "0000000000000000 t local_fn\n");
    uint8_t id[20], other[20], buf[128];
    for (int i = 0; i < 20; i++)
        id[i] = (uint8_t)(0xa0 + i), other[i] = (uint8_t)i;
    size_t n = make_notes(buf, id, 20);
    if (write_file(notes, buf, n) != 0)
        t_fail(__FILE__, __LINE__, "cannot write %s", notes);

    t_case("lookups");
    pc_ksyms *k = pc_ksyms_open_at(ks, notes, "6.1.0-test", NULL, 0, NULL);
    T_CHECK(k != NULL);
    if (k) {
        uint64_t start = 0;
        T_CHECK(pc_ksyms_symbol(k, 0xffffffff80ffffffull, NULL) == NULL);
        T_EQ_STR(pc_ksyms_symbol(k, 0xffffffff81000010ull, &start), "_text");
        T_EQ_INT(start, 0xffffffff81000000ull);
        T_EQ_STR(pc_ksyms_symbol(k, 0xffffffff81001000ull, NULL), "global_fn");
        /* The data symbol does not end the function before it. */
        T_EQ_STR(pc_ksyms_symbol(k, 0xffffffff81002010ull, NULL), "global_fn");
        T_EQ_STR(pc_ksyms_symbol(k, 0xffffffff81004010ull, NULL), "weak_fn");
        T_EQ_STR(pc_ksyms_symbol(k, 0xffffffffc0001234ull, &start), "mod_fn");
        T_EQ_INT(start, 0xffffffffc0001000ull);
        pc_ksyms_close(k);
    }

    t_case("the recording's kernel");
    k = pc_ksyms_open_at(ks, notes, "6.1.0-test", NULL, 0, "6.1.0-test");
    T_CHECK(k != NULL);
    pc_ksyms_close(k);
    T_CHECK(pc_ksyms_open_at(ks, notes, "6.1.0-test", NULL, 0, "6.2.0-other") == NULL);
    k = pc_ksyms_open_at(ks, notes, "6.1.0-test", id, 20, "6.2.0-other");
    T_CHECK(k != NULL);    /* the build id decides when there is one */
    pc_ksyms_close(k);
    T_CHECK(pc_ksyms_open_at(ks, notes, "6.1.0-test", other, 20, "6.1.0-test") == NULL);
    T_CHECK(pc_ksyms_open_at(ks, "/nonexistent/notes", "6.1.0-test", id, 20, NULL) == NULL);
    uint8_t zeros[20] = { 0 };
    k = pc_ksyms_open_at(ks, "/nonexistent/notes", "6.1.0-test", zeros, 20, NULL);
    T_CHECK(k != NULL);
    pc_ksyms_close(k);

    t_case("hidden addresses");
    T_CHECK(pc_ksyms_open_at(hidden, notes, "6.1.0-test", NULL, 0, NULL) == NULL);
    T_CHECK(pc_ksyms_open_at("/nonexistent/kallsyms", notes, "x", NULL, 0, NULL) == NULL);

    t_case("truncated notes");
    for (size_t cut = 0; cut < n; cut++) {
        if (write_file(notes, buf, cut) != 0)
            break;
        k = pc_ksyms_open_at(ks, notes, "x", id, 20, NULL);
        T_CHECK(k == NULL);
        pc_ksyms_close(k);
    }
}

TEST(symbol_jitmap)
{
    char root[1200], p[1400];
    snprintf(root, sizeof root, "%s/jitroot", t_tmpdir());
    snprintf(p, sizeof p, "%s/tmp", root);
    mkdir(root, 0755);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/tmp/perf-4242.map", root);
    write_text(p,
               "7f0000001000 100 LazyCompile:~foo file.js:1\n"
               "0x7f0000002000 0x80 bar\r\n"
               "7f0000003000 40 first\n"
               "7f0000003000 40 second\n"
               "not a line\n"
               "7f0000004000 0 empty\n"
               "7f0000005000 10\n"
               "7f0000006000 200 outer\n"
               "7f0000006100 10 inner\n");
    pc_symfind w = { .symfs = root, .debug_dir = NULL };

    t_case("lookups");
    pc_jitmap *m = pc_jitmap_open(&w, 4242);
    T_CHECK(m != NULL);
    if (m) {
        uint64_t start = 0;
        T_EQ_STR(pc_jitmap_symbol(m, 0x7f00000010ffull, &start), "LazyCompile:~foo file.js:1");
        T_EQ_INT(start, 0x7f0000001000ull);
        T_CHECK(pc_jitmap_symbol(m, 0x7f0000001100ull, NULL) == NULL);
        T_CHECK(pc_jitmap_symbol(m, 0x7f0000000fffull, NULL) == NULL);
        T_EQ_STR(pc_jitmap_symbol(m, 0x7f0000002010ull, NULL), "bar");
        T_EQ_STR(pc_jitmap_symbol(m, 0x7f0000003000ull, NULL), "second");
        T_CHECK(pc_jitmap_symbol(m, 0x7f0000004000ull, NULL) == NULL);
        T_CHECK(pc_jitmap_symbol(m, 0x7f0000005000ull, NULL) == NULL);
        T_EQ_STR(pc_jitmap_symbol(m, 0x7f0000006108ull, NULL), "inner");
        T_EQ_STR(pc_jitmap_symbol(m, 0x7f0000006110ull, NULL), "outer");
        T_EQ_STR(pc_jitmap_symbol(m, 0x7f00000061ffull, NULL), "outer");
        T_CHECK(pc_jitmap_symbol(m, 0x7f0000006200ull, NULL) == NULL);
        pc_jitmap_close(m);
    }

    t_case("no map, or nothing valid in it");
    T_CHECK(pc_jitmap_open(&w, 1) == NULL);
    snprintf(p, sizeof p, "%s/tmp/perf-7.map", root);
    write_text(p, "nothing here\nzz 10 x\n");
    T_CHECK(pc_jitmap_open(&w, 7) == NULL);
}
