/* The DWARF unwinder on a real stack: a program built without frame
 * pointers, so that only its unwind tables (.eh_frame) can walk it,
 * captures its registers and the top of its stack in its innermost
 * function, as perf does for --call-graph dwarf, and writes them with its
 * mappings and the return addresses each function saw.  The unwinder must
 * find those same return addresses, innermost first.  Then what does not
 * need a stack: architecture names, registers without a pc, the limit. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "read/perfdata/unwind.h"
#include "t.h"

#if defined(__x86_64__)
/* a -> b -> c, each with a frame of its own size and no tail calls.  c
 * stores, in one asm statement so that they agree, the registers perf's
 * default x86_64 mask would give minus the segments that do not matter
 * here: BX BP SP IP R12..R15 (bits 1 6 7 8 20..23). */
static const char prog_c[] =
    "#include <stdint.h>\n"
    "#include <stdio.h>\n"
    "uint64_t regs[8];\n"
    "void *ra[3];\n"
    "const char *dir;\n"
    "volatile int sink;\n"
    "__attribute__((noinline)) void dump(void)\n"
    "{\n"
    "    char path[4096], line[4096];\n"
    "    unsigned long top = 0;\n"
    "    snprintf(path, sizeof path, \"%s/maps\", dir);\n"
    "    FILE *m = fopen(\"/proc/self/maps\", \"r\"), *o = fopen(path, \"w\");\n"
    "    if (!m || !o) return;\n"
    "    while (fgets(line, sizeof line, m)) {\n"
    "        unsigned long s, e;\n"
    "        fputs(line, o);\n"
    "        if (sscanf(line, \"%lx-%lx\", &s, &e) == 2 && s <= regs[2] && regs[2] < e) top = e;\n"
    "    }\n"
    "    fclose(m); fclose(o);\n"
    "    unsigned long len = top - regs[2];\n"
    "    if (len > 16384) len = 16384;\n"
    "    snprintf(path, sizeof path, \"%s/stack\", dir);\n"
    "    o = fopen(path, \"wb\");\n"
    "    if (!o) return;\n"
    "    fwrite((const void *)(uintptr_t)regs[2], 1, len, o);\n"
    "    fclose(o);\n"
    "    snprintf(path, sizeof path, \"%s/regs\", dir);\n"
    "    o = fopen(path, \"w\");\n"
    "    if (!o) return;\n"
    "    for (int i = 0; i < 8; i++) fprintf(o, \"%lx\\n\", (unsigned long)regs[i]);\n"
    "    for (int i = 0; i < 3; i++) fprintf(o, \"%lx\\n\", (unsigned long)(uintptr_t)ra[i]);\n"
    "    fclose(o);\n"
    "}\n"
    "__attribute__((noinline)) int c(int x)\n"
    "{\n"
    "    volatile char buf[40];\n"
    "    buf[0] = (char)x;\n"
    "    ra[0] = __builtin_return_address(0);\n"
    "    __asm__ volatile(\"movq %%rbx, 0(%0)\\n\\t\"\n"
    "                     \"movq %%rbp, 8(%0)\\n\\t\"\n"
    "                     \"movq %%rsp, 16(%0)\\n\\t\"\n"
    "                     \"leaq 0(%%rip), %%rax\\n\\t\"\n"
    "                     \"movq %%rax, 24(%0)\\n\\t\"\n"
    "                     \"movq %%r12, 32(%0)\\n\\t\"\n"
    "                     \"movq %%r13, 40(%0)\\n\\t\"\n"
    "                     \"movq %%r14, 48(%0)\\n\\t\"\n"
    "                     \"movq %%r15, 56(%0)\\n\\t\"\n"
    "                     : : \"r\"(regs) : \"rax\", \"memory\");\n"
    "    dump();\n"
    "    return buf[0] + 1;\n"
    "}\n"
    "__attribute__((noinline)) int b(int x)\n"
    "{\n"
    "    volatile char buf[200];\n"
    "    buf[0] = (char)x;\n"
    "    ra[1] = __builtin_return_address(0);\n"
    "    int r = c(buf[0] + 1);\n"
    "    return r + buf[0];\n"
    "}\n"
    "__attribute__((noinline)) int a(int x)\n"
    "{\n"
    "    volatile char buf[1000];\n"
    "    buf[0] = (char)x;\n"
    "    ra[2] = __builtin_return_address(0);\n"
    "    int r = b(buf[0] + 1);\n"
    "    return r + buf[0];\n"
    "}\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    dir = argv[1];\n"
    "    sink = a(argc);\n"
    "    return 0;\n"
    "}\n";

#define REGS_MASK ((1ULL << 1) | (1ULL << 6) | (1ULL << 7) | (1ULL << 8) | (0xfULL << 20))

typedef struct capture {
    uint64_t regs[8];
    uint64_t ra[3];
    uint8_t *stack;
    size_t stack_len;
    pd_umap maps[256];
    char *paths[256];
    size_t n_maps;
    pd_umap xmaps[256]; /* the executable ones alone */
    size_t n_xmaps;
} capture;

static void capture_free(capture *c)
{
    free(c->stack);
    for (size_t i = 0; i < c->n_maps; i++)
        free(c->paths[i]);
}

/* Builds and runs the program; 0 when c holds what it wrote. */
static int run_prog(capture *c)
{
    char src[1024], bin[1024], cmd[8192], path[1024];
    const char *dir = t_tmpdir();
    snprintf(src, sizeof src, "%s/unw_prog.c", dir);
    snprintf(bin, sizeof bin, "%s/unw_prog", dir);
    FILE *f = fopen(src, "w");
    if (!f)
        return -1;
    fputs(prog_c, f);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "cc -O2 -fomit-frame-pointer -fasynchronous-unwind-tables -g0 -o '%s' '%s' "
             ">/dev/null 2>&1 && '%s' '%s'",
             bin, src, bin, dir);
    if (system(cmd) != 0)
        return -1;

    snprintf(path, sizeof path, "%s/regs", dir);
    f = fopen(path, "r");
    if (!f)
        return -1;
    for (int i = 0; i < 8; i++)
        if (fscanf(f, "%" SCNx64, &c->regs[i]) != 1)
            return fclose(f), -1;
    for (int i = 0; i < 3; i++)
        if (fscanf(f, "%" SCNx64, &c->ra[i]) != 1)
            return fclose(f), -1;
    fclose(f);

    snprintf(path, sizeof path, "%s/stack", dir);
    c->stack = t_read_file(path, &c->stack_len);
    if (!c->stack)
        return -1;

    snprintf(path, sizeof path, "%s/maps", dir);
    f = fopen(path, "r");
    if (!f)
        return -1;
    char line[4096];
    while (fgets(line, sizeof line, f) && c->n_maps < 256) {
        uint64_t s, e, off;
        char perms[8];
        int at = 0;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &s, &e, perms,
                   &off, &at) < 4 ||
            !at)
            continue;
        char *p = line + at;
        p[strcspn(p, "\n")] = 0;
        c->paths[c->n_maps] = strdup(p);
        c->maps[c->n_maps] = (pd_umap){ s, e, off, c->paths[c->n_maps], NULL, 0 };
        if (perms[2] == 'x')
            c->xmaps[c->n_xmaps++] = c->maps[c->n_maps];
        c->n_maps++;
    }
    fclose(f);
    return 0;
}

static size_t unwind(pd_unwinder *u, const capture *c, int64_t pid, uint64_t gen, int xonly,
                     uint64_t *pcs, size_t max)
{
    return pd_unwind(u, pid, gen, xonly ? c->xmaps : c->maps, xonly ? c->n_xmaps : c->n_maps, 2,
                     REGS_MASK, c->regs, 8, c->stack, c->stack_len, pcs, max);
}

static void check_chain(const capture *c, const uint64_t *pcs, size_t n)
{
    T_CHECK(n >= 4);
    if (n < 4)
        return;
    T_EQ_INT(pcs[0], c->regs[3]);
    T_EQ_INT(pcs[1], c->ra[0]);
    T_EQ_INT(pcs[2], c->ra[1]);
    T_EQ_INT(pcs[3], c->ra[2]);
}

TEST(unwind_real_stack)
{
    capture c;
    memset(&c, 0, sizeof c);
    if (system("command -v cc >/dev/null 2>&1") != 0) {
        t_skip("no cc to build the program to unwind");
        return;
    }
    if (run_prog(&c) != 0) {
        t_fail(__FILE__, __LINE__, "the program to unwind did not build or run");
        capture_free(&c);
        return;
    }
    pc_symfind where = { .symfs = NULL, .debug_dir = NULL };
    pd_unwinder *u = pd_unwinder_new(&where, PD_ARCH_X86_64);
    T_CHECK(u != NULL);
    if (!u) {
        capture_free(&c);
        return;
    }
    uint64_t pcs[64];

    t_case("every mapping");
    size_t n = unwind(u, &c, 100, 1, 0, pcs, 64);
    check_chain(&c, pcs, n);
    /* main's callers are in libc, unwound through its tables too. */
    T_CHECK(n > 4);

    t_case("executable mappings alone, at their file offsets");
    n = unwind(u, &c, 200, 1, 1, pcs, 64);
    check_chain(&c, pcs, n);

    t_case("cut at max");
    T_EQ_INT(unwind(u, &c, 100, 1, 0, pcs, 2), 2);
    T_EQ_INT(pcs[1], c.ra[0]);

    t_case("kept between samples and rebuilt on new maps");
    for (int pid = 1; pid <= 20; pid++)
        for (uint64_t gen = 1; gen <= 3; gen++) {
            n = unwind(u, &c, pid, gen, (pid + (int)gen) & 1, pcs, 64);
            check_chain(&c, pcs, n);
        }

    t_case("a stack cut short");
    /* Only c's frame: its caller's return address is the last found. */
    capture cut = c;
    cut.stack_len = 8;
    n = unwind(u, &cut, 100, 1, 0, pcs, 64);
    T_CHECK(n >= 1 && n <= 2);
    T_EQ_INT(pcs[0], c.regs[3]);

    t_case("no binary found");
    pd_umap none = { c.maps[0].start, c.maps[c.n_maps - 1].end, 0, "/nonexistent/x", NULL, 0 };
    T_EQ_INT(pd_unwind(u, 7, 1, &none, 1, 2, REGS_MASK, c.regs, 8, c.stack, c.stack_len, pcs,
                       64),
             1);
    T_EQ_INT(pcs[0], c.regs[3]);

    /* The rate the reader can expect, when asked for. */
    if (getenv("PROFCONV_UNWIND_RATE")) {
        struct timespec t0, t1;
        int runs = 200000;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < runs; i++)
            n = unwind(u, &c, 100, 1, 0, pcs, 64);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        fprintf(stderr, "unwind: %.0f samples/s, %zu frames each\n", runs / s, n);
    }
    pd_unwinder_free(u);
    capture_free(&c);
}
#else
TEST(unwind_real_stack)
{
    t_skip("the program to unwind captures x86_64 registers");
}
#endif

TEST(unwind_arch_names)
{
    T_EQ_INT(pd_arch_of("x86_64"), PD_ARCH_X86_64);
    T_EQ_INT(pd_arch_of("aarch64"), PD_ARCH_AARCH64);
    T_EQ_INT(pd_arch_of("arm64"), PD_ARCH_AARCH64);
    T_EQ_INT(pd_arch_of("armv7l"), PD_ARCH_ARM);
    T_EQ_INT(pd_arch_of("i686"), PD_ARCH_X86);
    T_EQ_INT(pd_arch_of("i386"), PD_ARCH_X86);
    T_EQ_INT(pd_arch_of("riscv64"), PD_ARCH_UNKNOWN);
    T_EQ_INT(pd_arch_of(""), PD_ARCH_UNKNOWN);
    T_EQ_INT(pd_arch_of(NULL), PD_ARCH_UNKNOWN);
    T_CHECK(pd_unwinder_new(NULL, PD_ARCH_UNKNOWN) == NULL);
}

TEST(unwind_registers_only)
{
    pd_unwinder *u = pd_unwinder_new(NULL, PD_ARCH_AARCH64);
    T_CHECK(u != NULL);
    if (!u)
        return;
    uint64_t pcs[8];
    /* arm64: SP (31) and PC (32) only, no stack: the pc alone. */
    uint64_t regs[2] = { 0x7ffff000, 0x401234 };
    uint64_t mask = (1ULL << 31) | (1ULL << 32);
    T_EQ_INT(pd_unwind(u, 1, 1, NULL, 0, 2, mask, regs, 2, NULL, 0, pcs, 8), 1);
    T_EQ_INT(pcs[0], 0x401234);
    /* Without the pc's bit there is nothing. */
    T_EQ_INT(pd_unwind(u, 1, 1, NULL, 0, 2, 1ULL << 31, regs, 1, NULL, 0, pcs, 8), 0);
    /* No registers at all (a kernel thread: abi none). */
    T_EQ_INT(pd_unwind(u, 1, 1, NULL, 0, 0, 0, NULL, 0, NULL, 0, pcs, 8), 0);
    /* Fewer values than the mask has bits: the missing pc is not read. */
    T_EQ_INT(pd_unwind(u, 1, 1, NULL, 0, 2, mask, regs, 1, NULL, 0, pcs, 8), 0);
    /* A stack but no mapping gives a binary: the pc alone. */
    uint8_t stack[64] = { 0 };
    T_EQ_INT(pd_unwind(u, 1, 1, NULL, 0, 2, mask, regs, 2, stack, sizeof stack, pcs, 8), 1);
    pd_unwinder_free(u);
}
