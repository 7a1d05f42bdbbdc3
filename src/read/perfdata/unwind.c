/* DWARF unwinding of perf's user stack copies through elfutils' libdwfl.
 *
 * libdwfl unwinds a "process" it is told about: its modules (the binaries
 * at their load addresses) and callbacks that give a thread's registers
 * and read its memory.  Here the process is long gone: the registers and
 * the stack come from the sample, the modules from the recorded mappings,
 * the binaries from this machine (pc_elf_locate).  Building a Dwfl opens
 * every binary and parses unwind tables lazily, far too slow per sample,
 * so one Dwfl is kept per process and mapping set, for a few processes. */
#include "read/perfdata/unwind.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/hashtab.h"
#include "symbol/buildid.h"

/* Processes whose Dwfl is kept.  Samples of a few busy processes
 * interleave; more would only hold more open files. */
#define N_PROCS 8
/* perf's register numbers go up to 64 (the mask's width). */
#define N_PERF_REGS 64
/* Enough DWARF registers for every table below (x86_64: 17). */
#define N_DWARF_REGS 33
/* libdwfl wants a positive thread id; the recorded one may be 0 or -1
 * and is of no use to it anyway. */
#define THE_TID 1

enum { PERF_ABI_NONE = 0, PERF_ABI_32 = 1, PERF_ABI_64 = 2 };

/* One loadable segment of a binary, for the load bias of its mappings. */
typedef struct seg {
    uint64_t offset, vaddr, filesz, align;
} seg;

/* A recorded binary and what was found for it on this machine. */
typedef struct file {
    char *path;        /* as recorded */
    uint8_t bid[PC_BUILDID_MAX];
    size_t bid_len;
    char *found;       /* NULL: nothing usable found */
    int is_dyn;        /* ET_DYN: placed at a bias; ET_EXEC: where it says */
    seg *segs;
    size_t n_segs;
    uint64_t build;    /* the last build() that reported it */
} file;

typedef struct proc {
    int used;
    int64_t pid;
    uint64_t gen;
    uint64_t sig;      /* of the file mappings the Dwfl was built from */
    uint64_t last_use;
    Dwfl *dwfl;        /* NULL when no mapping gave a module */
} proc;

/* perf's numbering to DWARF's for one (arch, abi); -1: not used.  pc and
 * sp are perf numbers. */
typedef struct regmap {
    int8_t dwarf[N_PERF_REGS];
    int pc, sp;
    int word;          /* bytes of a stack slot */
} regmap;

struct pd_unwinder {
    pc_symfind where;
    int arch;
    Dwfl_Callbacks callbacks;
    Dwfl_Thread_Callbacks thread_callbacks;
    regmap map32, map64;
    int has32, has64;

    file *files;
    size_t n_files, cap_files;
    pc_htab file_index;

    proc procs[N_PROCS];
    uint64_t clock;
    uint64_t builds;

    /* The sample being unwound, for the callbacks. */
    Dwarf_Word dw[N_DWARF_REGS];
    uint64_t dw_set;   /* bit i: dw[i] known */
    uint64_t pc, sp;
    int word;
    const uint8_t *stack;
    size_t stack_len;
    uint64_t *out;
    size_t n_out, max_out;
};

int pd_arch_of(const char *m)
{
    if (!m)
        return PD_ARCH_UNKNOWN;
    if (!strcmp(m, "x86_64") || !strcmp(m, "amd64"))
        return PD_ARCH_X86_64;
    if (!strcmp(m, "aarch64") || !strcmp(m, "arm64") || !strncmp(m, "armv8", 5))
        return PD_ARCH_AARCH64;
    if (!strncmp(m, "arm", 3))
        return PD_ARCH_ARM;
    if (!strcmp(m, "x86") || (m[0] == 'i' && m[1] >= '3' && m[1] <= '6' && !strcmp(m + 2, "86")))
        return PD_ARCH_X86;
    return PD_ARCH_UNKNOWN;
}

static void regmap_init(regmap *r, int pc, int sp, int word)
{
    memset(r->dwarf, -1, sizeof r->dwarf);
    r->pc = pc;
    r->sp = sp;
    r->word = word;
}

/* perf x86_64: AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS R8..R15.
 * DWARF x86_64: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip. */
static void regmap_x86_64(regmap *r)
{
    static const int8_t low[9] = { 0, 3, 2, 1, 4, 5, 6, 7, 16 };
    regmap_init(r, 8, 7, 8);
    memcpy(r->dwarf, low, sizeof low);
    for (int i = 0; i < 8; i++)
        r->dwarf[16 + i] = (int8_t)(8 + i);
}

/* perf x86 (and a 32-bit task's on x86_64): AX BX CX DX SI DI BP SP IP.
 * DWARF i386: eax ecx edx ebx esp ebp esi edi eip. */
static void regmap_i386(regmap *r)
{
    static const int8_t low[9] = { 0, 3, 1, 2, 6, 7, 5, 4, 8 };
    regmap_init(r, 8, 7, 4);
    memcpy(r->dwarf, low, sizeof low);
}

/* perf arm64: X0..X30 (X29 the frame pointer, X30 the link register),
 * SP, PC.  DWARF aarch64: x0..x30, sp; the pc has no DWARF number. */
static void regmap_aarch64(regmap *r)
{
    regmap_init(r, 32, 31, 8);
    for (int i = 0; i <= 31; i++)
        r->dwarf[i] = (int8_t)i;
}

/* perf arm: R0..R10, FP, IP, SP, LR, PC, as DWARF numbers them.  A
 * 32-bit task on arm64 keeps arm64's numbers, its sp and lr where
 * arm64's are. */
static void regmap_arm(regmap *r, int compat)
{
    if (!compat) {
        regmap_init(r, 15, 13, 4);
        for (int i = 0; i < 16; i++)
            r->dwarf[i] = (int8_t)i;
        return;
    }
    regmap_init(r, 32, 31, 4);
    for (int i = 0; i < 13; i++)
        r->dwarf[i] = (int8_t)i;
    r->dwarf[31] = 13;
    r->dwarf[30] = 14;
    r->dwarf[32] = 15;
}

/* ---- The process seen by libdwfl ---- */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
    (void)dwfl;
    if (*thread_arg)
        return 0;
    *thread_arg = arg;
    return THE_TID;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
    (void)dwfl;
    *thread_arg = arg;
    return tid == THE_TID;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
    pd_unwinder *u = arg;
    /* libdwfl takes registers in runs of consecutive numbers. */
    for (int i = 0; i < N_DWARF_REGS;) {
        if (!(u->dw_set >> i & 1)) {
            i++;
            continue;
        }
        int j = i;
        while (j < N_DWARF_REGS && (u->dw_set >> j & 1))
            j++;
        if (!dwfl_thread_state_registers(thread, i, (unsigned)(j - i), u->dw + i))
            return false;
        i = j;
    }
    /* Given apart: on aarch64 the pc has no DWARF number, and libdwfl
     * would otherwise take the return address register for it. */
    dwfl_thread_state_register_pc(thread, u->pc);
    return true;
}

/* Only the copied stack is known; reads elsewhere end the walk. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
    (void)dwfl;
    pd_unwinder *u = arg;
    if (addr < u->sp || addr - u->sp >= u->stack_len)
        return false;
    size_t off = (size_t)(addr - u->sp);
    if (u->stack_len - off < (size_t)u->word)
        return false;
    /* perf's stacks come from little-endian machines only (x86, arm). */
    uint64_t v = 0;
    for (int i = u->word; i-- > 0;)
        v = v << 8 | u->stack[off + (size_t)i];
    *result = v;
    return true;
}

/* Separate debug files are not looked for: the unwind tables libdwfl
 * needs are in the binary itself (.eh_frame), and the standard search
 * could reach for the network (debuginfod). */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                        Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                        GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    (void)mod;
    (void)userdata;
    (void)modname;
    (void)base;
    (void)file_name;
    (void)debuglink_file;
    (void)debuglink_crc;
    (void)debuginfo_file_name;
    return -1;
}

/* Modules are all reported with their files; nothing is searched. */
static int no_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                  char **file_name, Elf **elfp)
{
    (void)mod;
    (void)userdata;
    (void)modname;
    (void)base;
    (void)file_name;
    *elfp = NULL;
    return -1;
}

pd_unwinder *pd_unwinder_new(const pc_symfind *where, int arch)
{
    if (arch != PD_ARCH_X86_64 && arch != PD_ARCH_AARCH64 && arch != PD_ARCH_X86 &&
        arch != PD_ARCH_ARM)
        return NULL;
    pd_unwinder *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    if (where)
        u->where = *where;
    u->arch = arch;
    u->callbacks.find_elf = no_elf;
    u->callbacks.find_debuginfo = no_debuginfo;
    u->callbacks.section_address = dwfl_offline_section_address;
    u->thread_callbacks.next_thread = next_thread;
    u->thread_callbacks.get_thread = get_thread;
    u->thread_callbacks.memory_read = memory_read;
    u->thread_callbacks.set_initial_registers = set_initial_registers;
    switch (arch) {
    case PD_ARCH_X86_64:
        regmap_x86_64(&u->map64);
        regmap_i386(&u->map32);
        u->has64 = u->has32 = 1;
        break;
    case PD_ARCH_X86:
        regmap_i386(&u->map32);
        u->has32 = 1;
        break;
    case PD_ARCH_AARCH64:
        regmap_aarch64(&u->map64);
        regmap_arm(&u->map32, 1);
        u->has64 = u->has32 = 1;
        break;
    default:
        regmap_arm(&u->map32, 0);
        u->has32 = 1;
        break;
    }
    return u;
}

/* ---- Binaries ---- */

static int read_segments(file *f)
{
    int fd = open(f->found, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = -1;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    size_t n;
    if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n) != 0)
        goto out;
    if (eh.e_type != ET_DYN && eh.e_type != ET_EXEC)
        goto out;
    f->is_dyn = eh.e_type == ET_DYN;
    f->segs = calloc(n ? n : 1, sizeof *f->segs);
    if (!f->segs)
        goto out;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
            f->segs[f->n_segs++] = (seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_align };
    }
    rc = f->n_segs ? 0 : -1;
out:
    if (elf)
        elf_end(elf);
    close(fd);
    return rc;
}

static uint64_t file_hash(const char *path, const uint8_t *bid, size_t bid_len)
{
    return pc_hash_bytes(path, strlen(path)) ^ pc_mix64(pc_hash_bytes(bid, bid_len) + 1);
}

/* The binary recorded as (path, build id), located and read once per
 * unwinder; NULL when out of memory. */
static file *file_get(pd_unwinder *u, const char *path, const uint8_t *bid, size_t bid_len)
{
    static const uint8_t no_id[1];
    if (bid_len > PC_BUILDID_MAX)
        bid_len = PC_BUILDID_MAX;
    if (!bid || !pc_buildid_present(bid, bid_len)) {
        bid = no_id;
        bid_len = 0;
    }
    if (pc_htab_reserve(&u->file_index, u->n_files + 1))
        return NULL;
    pc_probe pr;
    pc_probe_start(&u->file_index, file_hash(path, bid, bid_len), &pr);
    for (uint32_t id; (id = pc_probe_next(&u->file_index, &pr)) != PC_NONE;) {
        file *f = &u->files[id];
        if (f->bid_len == bid_len && !memcmp(f->bid, bid, bid_len) && !strcmp(f->path, path))
            return f;
    }
    if (u->n_files == u->cap_files) {
        size_t cap = u->cap_files ? 2 * u->cap_files : 16;
        file *nf = realloc(u->files, cap * sizeof *nf);
        if (!nf)
            return NULL;
        u->files = nf;
        u->cap_files = cap;
    }
    file *f = &u->files[u->n_files];
    memset(f, 0, sizeof *f);
    f->path = pc_strdup(path);
    if (!f->path)
        return NULL;
    if (bid_len)
        memcpy(f->bid, bid, bid_len);
    f->bid_len = bid_len;
    f->found = pc_elf_locate(&u->where, path, bid_len ? bid : NULL, bid_len);
    if (f->found && read_segments(f) != 0) {
        free(f->found);
        free(f->segs);
        f->found = NULL;
        f->segs = NULL;
        f->n_segs = 0;
    }
    pc_htab_insert(&u->file_index, &pr, (uint32_t)u->n_files);
    u->n_files++;
    return f;
}

/* Whether a mapping can name a binary: files, and the vdso when a build
 * id lets perf's cache hold its copy. */
static int maps_a_file(const pd_umap *m)
{
    if (!m->path || m->end <= m->start)
        return 0;
    if (m->path[0] == '/')
        return strncmp(m->path, "//anon", 6) != 0 && strncmp(m->path, "/memfd:", 7) != 0;
    return pc_buildid_present(m->build_id, m->build_id_len);
}

/* The load bias of a file mapped at m: its address minus the ELF virtual
 * address.  The segment m maps is the one whose pages (as the loader
 * rounds them) start at m's offset; failing that, the last one whose
 * pages hold that offset.  Two segments may share a page of the file
 * (the end of read-only data and the start of writable data): a mapping
 * of that page alone is ambiguous, so each binary takes its bias from its
 * lowest mapping, normally the one at offset 0 or its code. */
static int map_bias(const file *f, const pd_umap *m, uint64_t *bias)
{
    const seg *best = NULL;
    for (size_t i = 0; i < f->n_segs; i++) {
        const seg *s = &f->segs[i];
        uint64_t page = s->align >= 4096 && s->align <= 65536 ? s->align : 4096;
        if (page & (page - 1))
            page = 4096;
        uint64_t first = s->offset & ~(page - 1);
        if (first == m->pgoff) {
            best = s;
            break;
        }
        if (first < m->pgoff && m->pgoff < s->offset + s->filesz)
            best = s;
    }
    if (!best)
        return -1;
    *bias = m->start + (best->offset - m->pgoff) - best->vaddr;
    return 0;
}

/* Identifies the mappings that give modules, so that a new maps_gen
 * changed only by anonymous memory keeps its Dwfl. */
static uint64_t maps_signature(const pd_umap *maps, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < n; i++) {
        const pd_umap *m = &maps[i];
        if (!maps_a_file(m))
            continue;
        h = pc_mix64(h ^ m->start) + m->end;
        h = pc_mix64(h ^ m->pgoff) + pc_hash_bytes(m->path, strlen(m->path));
        if (m->build_id)
            h = pc_mix64(h ^ pc_hash_bytes(m->build_id, m->build_id_len));
    }
    return h;
}

/* A Dwfl for these mappings, attached to the unwinder's callbacks; NULL
 * when no mapping gives a module or memory runs out. */
static Dwfl *build(pd_unwinder *u, const pd_umap *maps, size_t n)
{
    Dwfl *d = dwfl_begin(&u->callbacks);
    if (!d)
        return NULL;
    dwfl_report_begin(d);
    u->builds++;
    size_t modules = 0;
    for (size_t i = 0; i < n; i++) {
        const pd_umap *m = &maps[i];
        if (!maps_a_file(m))
            continue;
        file *f = file_get(u, m->path, m->build_id, m->build_id_len);
        uint64_t bias = 0;
        /* One module per binary: its other mappings are the same image. */
        if (!f || !f->found || f->build == u->builds || map_bias(f, m, &bias) != 0)
            continue;
        f->build = u->builds;
        if (dwfl_report_elf(d, f->path, f->found, -1, bias, true))
            modules++;
    }
    if (dwfl_report_end(d, NULL, NULL) != 0 || !modules ||
        !dwfl_attach_state(d, NULL, THE_TID, &u->thread_callbacks, u)) {
        dwfl_end(d);
        return NULL;
    }
    return d;
}

static proc *proc_get(pd_unwinder *u, int64_t pid, uint64_t gen, const pd_umap *maps,
                      size_t n)
{
    u->clock++;
    proc *p = NULL, *oldest = &u->procs[0];
    for (int i = 0; i < N_PROCS; i++) {
        proc *q = &u->procs[i];
        if (q->used && q->pid == pid) {
            p = q;
            break;
        }
        if (!q->used || (oldest->used && q->last_use < oldest->last_use))
            oldest = q;
    }
    if (p && p->gen == gen) {
        p->last_use = u->clock;
        return p;
    }
    uint64_t sig = maps_signature(maps, n);
    if (p && p->sig == sig) {
        p->gen = gen;
        p->last_use = u->clock;
        return p;
    }
    if (!p)
        p = oldest;
    if (p->dwfl)
        dwfl_end(p->dwfl);
    p->used = 1;
    p->pid = pid;
    p->gen = gen;
    p->sig = sig;
    p->last_use = u->clock;
    p->dwfl = build(u, maps, n);
    return p;
}

/* ---- Unwinding ---- */

static int on_frame(Dwfl_Frame *frame, void *arg)
{
    pd_unwinder *u = arg;
    Dwarf_Addr pc;
    if (!dwfl_frame_pc(frame, &pc, NULL))
        return DWARF_CB_ABORT;
    u->out[u->n_out++] = pc;
    return u->n_out < u->max_out ? DWARF_CB_OK : DWARF_CB_ABORT;
}

size_t pd_unwind(pd_unwinder *u, int64_t pid, uint64_t maps_gen, const pd_umap *maps,
                 size_t n_maps, uint64_t abi, uint64_t mask, const uint64_t *regs,
                 size_t n_regs, const uint8_t *stack, size_t stack_len, uint64_t *pcs,
                 size_t max)
{
    if (!u || !max || !regs)
        return 0;
    const regmap *rm;
    if (abi == PERF_ABI_64 && u->has64)
        rm = &u->map64;
    else if (abi == PERF_ABI_32 && u->has32)
        rm = &u->map32;
    else
        return 0;

    u->dw_set = 0;
    int have_pc = 0, have_sp = 0;
    size_t k = 0;
    for (int bit = 0; bit < N_PERF_REGS && k < n_regs; bit++) {
        if (!(mask >> bit & 1))
            continue;
        uint64_t v = regs[k++];
        if (rm->word == 4)
            v &= 0xffffffffu;
        if (bit == rm->pc) {
            u->pc = v;
            have_pc = 1;
        }
        if (bit == rm->sp) {
            u->sp = v;
            have_sp = 1;
        }
        int d = rm->dwarf[bit];
        if (d >= 0) {
            u->dw[d] = v;
            u->dw_set |= 1ULL << d;
        }
    }
    if (!have_pc)
        return 0;
    pcs[0] = u->pc;
    if (max == 1 || !have_sp || !stack || !stack_len)
        return 1;

    proc *p = proc_get(u, pid, maps_gen, maps, n_maps);
    if (!p->dwfl)
        return 1;
    u->word = rm->word;
    u->stack = stack;
    u->stack_len = stack_len;
    u->out = pcs;
    u->n_out = 0;
    u->max_out = max;
    /* The walk's end shows as an error on some targets; what was found
     * stands either way. */
    dwfl_getthread_frames(p->dwfl, THE_TID, on_frame, u);
    u->stack = NULL;
    return u->n_out ? u->n_out : 1;
}

void pd_unwinder_free(pd_unwinder *u)
{
    if (!u)
        return;
    for (int i = 0; i < N_PROCS; i++)
        if (u->procs[i].dwfl)
            dwfl_end(u->procs[i].dwfl);
    for (size_t i = 0; i < u->n_files; i++) {
        free(u->files[i].path);
        free(u->files[i].found);
        free(u->files[i].segs);
    }
    free(u->files);
    pc_htab_free(&u->file_index);
    free(u);
}
