/* From raw frames to the model: each sample's addresses become raw
 * frames as records arrive; once the features (and with them simpleperf's
 * symbol tables) are read, every raw frame gets its dso's address and
 * symbol, and every distinct raw stack becomes a model stack after what
 * simpleperf's report-sample does to callchains:
 *   - ART's own frames next to Java frames are marked (the java frames
 *     transform hides them unless asked not to);
 *   - a JIT-compiled method is shown as its dex method when the recording
 *     has the dex file's symbols;
 *   - a callchain ends at its first frame in no mapping past the leaf, and
 *     at a thread's entry point (__libc_init, __start_thread in libc.so).
 * Recordings of Linux perf have no symbol tables: names come from the
 * binaries on this machine (symbol/elf.h), found by build id. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "base/demangle.h"
#include "base/path.h"
#include "base/error.h"
#include "io/source.h"
#include "read/perfdata/reader.h"

/* The deepest callchain taken from an unwinder (simpleperf's limit). */
#define MAX_UNWOUND 512

int pd_build_init(pd_build *b)
{
    if (pd_maps_init(&b->maps, b->p) < 0)
        return pd_nomem(b);
    pc_stree_init(&b->rstack);
    b->info.hostname = b->info.osrelease = b->info.version = PC_NONE;
    b->info.arch = b->info.cmdline = PC_NONE;
    b->id_pos = -1;
    /* simpleperf names pid 0 itself: no /proc entry tells it. */
    pd_thread *t = pd_thread_get(&b->maps, 0, 0);
    uint32_t name = pc_intern_cstr(b->p, "swapper");
    if (!t || name == PC_NONE)
        return pd_nomem(b);
    t->comm = name;
    return PC_OK;
}

void pd_build_free(pd_build *b)
{
    free(b->attrs);
    free(b->ids);
    free(b->id_attr);
    pc_htab_free(&b->id_idx);
    pd_maps_free(&b->maps);
    pc_thread_index_free(&b->model_threads);
    pd_info_free(&b->info);
    free(b->q.e);
    free(b->q.arena);
    free(b->q.spare);
    free(b->split.buf);
    free(b->raw.key);
    pc_htab_free(&b->raw.idx);
    pc_stree_free(&b->rstack);
    free(b->ips);
    free(b->ips_kernel);
    free(b->notes);
    ZSTD_freeDStream(b->zstd);
    free(b->unz.buf);
    if (b->unwinder)
        pd_unwinder_free(b->unwinder);
    free(b->umaps);
}

/* ---- Raw frames ---- */

static int raw_eq(const pd_raw *a, const pd_raw *c)
{
    return a->ip == c->ip && a->start == c->start && a->pgoff == c->pgoff &&
           a->dso == c->dso && a->jit == c->jit;
}

static uint32_t raw_of(pd_build *b, const pd_raw *k)
{
    pc_probe pr;
    uint64_t h = pc_mix64(k->ip ^ pc_mix64(k->start ^ (uint64_t)k->dso << 40) ^ k->pgoff);
    if (pc_htab_reserve(&b->raw.idx, b->raw.n + 1) < 0)
        return PC_NONE;
    pc_probe_start(&b->raw.idx, h, &pr);
    for (uint32_t i; (i = pc_probe_next(&b->raw.idx, &pr)) != PC_NONE;)
        if (raw_eq(&b->raw.key[i], k))
            return i;
    struct pc_col cols[] = {PC_COL(b->raw.key)};
    if (b->raw.n >= PC_NONE - 1 || pc_grow_cols(&b->raw.cap, b->raw.n + 1, cols, 1) < 0)
        return PC_NONE;
    uint32_t id = (uint32_t)b->raw.n++;
    b->raw.key[id] = *k;
    pc_htab_insert(&b->raw.idx, &pr, id);
    return id;
}

static int ips_room(pd_build *b, size_t n)
{
    struct pc_col cols[] = {PC_COL(b->ips), PC_COL(b->ips_kernel)};
    return pc_grow_cols(&b->ips_cap, n, cols, 2);
}

/* The process's mappings in the unwinder's form, made for each sample:
 * their paths point into the string table, which may move between
 * samples. */
static size_t umaps_of(pd_build *b, const pd_mapset *s)
{
    if (s->n > b->umaps_cap) {
        pd_umap *u = realloc(b->umaps, s->n * sizeof *u);
        if (!u)
            return 0;
        b->umaps = u;
        b->umaps_cap = s->n;
    }
    for (size_t i = 0; i < s->n; i++) {
        const pd_dso *d = &b->maps.dsos[s->m[i].dso];
        b->umaps[i] = (pd_umap){s->m[i].start, s->m[i].end, s->m[i].pgoff,
                                pc_str(&b->p->str, d->path),
                                d->build_id_len ? d->build_id : NULL, d->build_id_len};
    }
    return s->n;
}

/* Replaces the user part of the sample's addresses with what unwinding
 * its copied stack gives (--call-graph dwarf). */
static void unwind_user(pd_build *b, const pd_sample *s, pd_proc *proc, size_t *n)
{
    if (!b->unwinder_tried) {
        b->unwinder_tried = 1;
        const char *arch = b->info.arch != PC_NONE ? pc_str(&b->p->str, b->info.arch) : NULL;
        int a = arch ? pd_arch_of(arch) : PD_ARCH_UNKNOWN;
        if (a == PD_ARCH_UNKNOWN) {
            /* The arch feature comes at the end: until then, this
             * machine's, which is where the binaries are anyway. */
#if defined(__x86_64__)
            a = PD_ARCH_X86_64;
#elif defined(__aarch64__)
            a = PD_ARCH_AARCH64;
#endif
        }
        pc_symfind where = pc_symfind_of(b->o);
        b->unwinder = pd_unwinder_new(&where, a);
    }
    if (!b->unwinder)
        return;
    size_t k = 0;
    while (k < *n && b->ips_kernel[k])
        k++;
    if (ips_room(b, k + MAX_UNWOUND) < 0)
        return;
    size_t nm = umaps_of(b, &proc->maps);
    /* At most 64 registers: the mask has 64 bits. */
    uint64_t regs[64];
    size_t n_regs = s->n_regs < 64 ? s->n_regs : 64;
    for (size_t i = 0; i < n_regs; i++)
        regs[i] = pd_u64(s->regs + 8 * i);
    size_t got = pd_unwind(b->unwinder, proc->pid, proc->maps.gen, b->umaps, nm, s->regs_abi,
                           s->regs_mask, regs, n_regs, s->stack, s->stack_len, b->ips + k,
                           MAX_UNWOUND);
    if (got) {
        memset(b->ips_kernel + k, 0, got);
        *n = k + got;
        b->unwound++;
    } else {
        b->unwind_failed++;
    }
}

int pd_on_sample(pd_build *b, const pd_attr *a, uint16_t misc, const pd_sample *s,
                 uint64_t off)
{
    pc_profile *p = b->p;
    (void)off;
    b->n_samples++;
    int have_note = b->have_note;
    b->have_note = 0;
    if (ips_room(b, 1 + s->n_chain) < 0)
        return pd_nomem(b);
    size_t n = 0;
    int kernel = (misc & PD_MISC_CPUMODE) == PD_MISC_KERNEL, user_chain = 0;
    if (a->sample_type & PD_SAMPLE_IP) {
        b->ips[n] = s->ip;
        b->ips_kernel[n++] = (uint8_t)kernel;
    }
    int first = 1;
    for (size_t i = 0; i < s->n_chain; i++) {
        uint64_t ip = pd_u64(s->chain + 8 * i);
        if (ip >= PD_CONTEXT_MAX) {
            if (ip == PD_CONTEXT_KERNEL)
                kernel = 1;
            else if (ip == PD_CONTEXT_USER)
                kernel = 0;
            continue;
        }
        /* The chain starts with the sample's own ip, already taken. */
        if (first) {
            first = 0;
            if (n && ip == b->ips[0])
                continue;
        }
        b->ips[n] = ip;
        b->ips_kernel[n++] = (uint8_t)kernel;
        user_chain |= !kernel;
    }
    if (!(a->sample_type & PD_SAMPLE_TID))
        b->no_tid++;
    int64_t pid = (int32_t)s->pid, tid = (int32_t)s->tid;
    pd_thread *t = pd_thread_get(&b->maps, pid, tid);
    pd_proc *proc = pd_proc_get(&b->maps, pid);
    if (!t || !proc)
        return pd_nomem(b);
    if (!b->simpleperf && s->n_regs && s->stack_len && !user_chain)
        unwind_user(b, s, proc, &n);
    if (n == 0) {
        /* Nothing to place it by: simpleperf drops these too. */
        b->empty_samples++;
        return PC_OK;
    }
    uint32_t mt = pd_model_thread(b, t);
    if (mt == PC_NONE)
        return pd_nomem(b);
    /* A thread is shown with the name it had at its last sample. */
    if (t->comm != PC_NONE)
        p->thread.name[mt] = t->comm;
    size_t keep = n - pc_depth_cut(p, n);
    uint32_t stack = PC_NONE;
    for (size_t i = keep; i-- > 0;) {
        uint64_t ip = b->ips[i];
        const pd_map *m = pd_map_find(b->ips_kernel[i] ? &b->maps.kernel : &proc->maps, ip);
        pd_raw k = m ? (pd_raw){ip, m->start, m->pgoff, m->dso, (uint8_t)m->jit}
                     : (pd_raw){ip, 0, 0, b->maps.unknown_dso, 0};
        uint32_t last = pc_stree_last(&b->rstack, stack);
        if (last != PC_NONE && raw_eq(&b->raw.key[b->rstack.frame[last]], &k)) {
            stack = last;
            continue;
        }
        uint32_t f = raw_of(b, &k);
        if (f == PC_NONE)
            return pd_nomem(b);
        stack = pc_stree_intern(&b->rstack, stack, f);
        if (stack == PC_NONE)
            return pd_nomem(b);
    }
    int64_t w = 1;
    if (s->has_period)
        w = pc_clamp_i64(s->period);
    else if (!(a->flags & PD_ATTR_FREQ) && a->period)
        w = pc_clamp_i64(a->period);
    pc_add_sample(p, mt, s->time, stack, w, (uint16_t)(a - b->attrs),
                  s->has_cpu && s->cpu < PC_NO_CPU ? (uint16_t)s->cpu : PC_NO_CPU);
    if (have_note) {
        struct pc_col cols[] = {PC_COL(b->notes)};
        if (pc_grow_cols(&b->capnotes, b->nnotes + 1, cols, 1) < 0)
            return pd_nomem(b);
        b->note.sample = p->sample.n - 1;
        b->notes[b->nnotes++] = b->note;
    }
    return p->oom ? pd_nomem(b) : PC_OK;
}

int pd_on_unwinding_result(pd_build *b, const uint8_t *d, size_t len, uint64_t off)
{
    (void)off;
    /* time, used time, error code, error address, stack start and end. */
    if (len < 48)
        return PC_OK;
    b->note.raw_code = pd_u64(d + 16);
    b->note.addr = pd_u64(d + 24);
    b->note.stack_end = pd_u64(d + 40);
    b->have_note = 1;
    return PC_OK;
}

/* ---- Names ---- */

/* A raw frame once named: where simpleperf would say it is. */
typedef struct ent {
    uint32_t dso;
    uint32_t name;   /* raw symbol name, PC_NONE when unknown */
    uint32_t sym;    /* the symbol in pd_maps.syms, or PC_NONE */
    uint64_t vaddr;
    uint8_t exec;
    uint8_t addr;    /* enum pc_addr: what vaddr is, for --symbols */
} ent;

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* simpleperf's JIT symbol files (and, from older versions, its
 * TemporaryFile-* ones) hold JIT-compiled Java methods. */
static int jit_symfile(const char *s, size_t n)
{
    size_t bl;
    const char *bn = pc_base_name(s, n, &bl);
    return strstr(s, "_jit_app_cache:") || strstr(s, "_jit_zygote_cache:") ||
           (bl >= 13 && memcmp(bn, "TemporaryFile", 13) == 0);
}

static const pd_symbol *find_sym(const pd_maps *m, const pd_dso *d, uint64_t vaddr)
{
    if (!d->nsym)
        return NULL;
    const pd_symbol *s = m->syms + d->sym0;
    size_t lo = 0, hi = d->nsym;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s[mid].addr <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const pd_symbol *c = &s[lo - 1];
    return vaddr - c->addr < c->len ? c : NULL;
}

typedef struct namer {
    pd_build *b;
    uint32_t kernel_dso;
    pc_ksyms *ksyms;
    int ksyms_tried;
    pc_jitmap **jit;   /* per dso, for perf-PID.map ones */
    uint8_t *jit_tried;
    size_t named_elf, elf_missing;
} namer;

static uint32_t intern_sym(pd_build *b, const char *s)
{
    return s ? pc_intern_cstr(b->p, s) : PC_NONE;
}

/* Names from the machine's binaries, for dsos the recording has no
 * symbol table of. */
static void name_from_machine(namer *nm, const pd_raw *r, ent *e)
{
    pd_build *b = nm->b;
    pd_dso *d = &b->maps.dsos[e->dso];
    uint64_t start;
    if (d->type == PD_DSO_KERNEL || d->type == PD_DSO_KERNEL_MODULE) {
        /* kallsyms lists the modules' symbols too; the kernel's build id
         * tells whether they are this machine's. */
        if (nm->kernel_dso != PC_NONE)
            d = &b->maps.dsos[nm->kernel_dso];
        if (!nm->ksyms_tried) {
            nm->ksyms_tried = 1;
            const char *rel = b->info.osrelease != PC_NONE
                                  ? pc_str(&b->p->str, b->info.osrelease) : NULL;
            /* A recording that says neither which kernel nor which release
             * cannot be told apart from one made elsewhere: this machine's
             * symbols would name it wrongly. */
            if (d->build_id_len || (rel && *rel))
                nm->ksyms = pc_ksyms_open(d->build_id_len ? d->build_id : NULL,
                                          d->build_id_len, rel);
        }
        if (nm->ksyms)
            e->name = intern_sym(b, pc_ksyms_symbol(nm->ksyms, r->ip, &start));
        return;
    }
    if (d->type == PD_DSO_SYMBOL_MAP) {
        if (!nm->jit_tried[e->dso]) {
            nm->jit_tried[e->dso] = 1;
            pc_symfind where = pc_symfind_of(b->o);
            nm->jit[e->dso] = pc_jitmap_open(&where, d->pid);
        }
        if (nm->jit[e->dso])
            e->name = intern_sym(b, pc_jitmap_symbol(nm->jit[e->dso], r->ip, &start));
        return;
    }
    if (d->type != PD_DSO_ELF)
        return;
    if (!d->elf_tried) {
        d->elf_tried = 1;
        pc_symfind where = pc_symfind_of(b->o);
        d->elf = pc_elf_open(&where, pc_str(&b->p->str, d->path),
                             d->build_id_len ? d->build_id : NULL, d->build_id_len);
        if (!d->elf)
            nm->elf_missing++;
    }
    if (!d->elf)
        return;
    uint64_t v;
    if (pc_elf_offset_to_vaddr(d->elf, e->vaddr, &v) == 0) {
        e->vaddr = v;
        e->addr = PC_ADDR_VADDR;
        e->name = intern_sym(b, pc_elf_symbol(d->elf, v, &start));
        nm->named_elf += e->name != PC_NONE;
    }
}

static void name_raw(namer *nm, const pd_raw *r, ent *e)
{
    pd_build *b = nm->b;
    pd_maps *m = &b->maps;
    const pd_dso *d = &m->dsos[r->dso];
    e->dso = r->dso;
    e->name = PC_NONE;
    e->sym = PC_NONE;
    e->addr = PC_ADDR_NONE;
    e->exec = PC_EXEC_NATIVE;
    switch (d->type) {
    case PD_DSO_KERNEL:
    case PD_DSO_SYMBOL_MAP:
    case PD_DSO_UNKNOWN:
        e->vaddr = r->ip;
        break;
    case PD_DSO_KERNEL_MODULE:
        e->vaddr = r->ip - r->start -
                   (d->off_min_vaddr == UINT64_MAX ? 0 : d->off_min_vaddr) + d->min_vaddr;
        break;
    case PD_DSO_DEX:
        e->vaddr = r->ip - r->start + r->pgoff;
        e->exec = PC_EXEC_INTERPRETED;
        break;
    default:
        if (r->jit) {
            e->vaddr = r->ip;
        } else if (!d->has_file && !b->simpleperf) {
            e->vaddr = r->ip - r->start + r->pgoff;  /* a file offset until the ELF says */
            e->addr = PC_ADDR_OFFSET;
        } else if (d->off_min_vaddr == UINT64_MAX) {
            e->vaddr = r->ip - r->start + d->min_vaddr;
        } else {
            e->vaddr = r->ip - r->start + r->pgoff - d->off_min_vaddr + d->min_vaddr;
            e->addr = PC_ADDR_VADDR;
        }
        break;
    }
    if (b->simpleperf || d->has_file) {
        const pd_symbol *s = find_sym(m, d, e->vaddr);
        if (!s && d->type == PD_DSO_KERNEL_MODULE && nm->kernel_dso != PC_NONE) {
            /* What no module symbol covers is the kernel's. */
            e->dso = nm->kernel_dso;
            e->vaddr = r->ip;
            s = find_sym(m, &m->dsos[nm->kernel_dso], r->ip);
        }
        e->name = s ? s->name : PC_NONE;
        e->sym = s ? (uint32_t)(s - m->syms) : PC_NONE;
    } else {
        name_from_machine(nm, r, e);
    }
    if (d->type == PD_DSO_ELF) {
        const char *path = pc_str(&b->p->str, d->path);
        if (jit_symfile(path, pc_str_len(&b->p->str, d->path)))
            e->exec = PC_EXEC_JIT;
    }
}

/* ---- Final stacks ---- */

typedef struct fkey {
    uint64_t vaddr;
    uint32_t res, name;
    uint8_t exec;
} fkey;

typedef struct finisher {
    namer nm;
    ent *named;          /* per raw frame */
    ent *chain;          /* one callchain, leaf first */
    size_t chain_cap;
    uint32_t *memo;      /* per raw stack: final stack */
    uint8_t *complete;   /* per raw stack */
    struct {
        fkey *key;
        size_t n, cap;
        pc_htab idx;
    } fr;
    uint32_t *res_of;    /* per dso: the model's resource */
    uint32_t *path_of;   /* per dso: the path shown */
    /* dex methods by name, for JIT frames */
    struct {
        uint32_t *name, *dso, *sym;
        uint64_t *addr;
        size_t n, cap;
        pc_htab idx;
    } java;
} finisher;

#define MEMO_TODO (PC_NONE - 1)

static uint32_t report_path(pd_build *b, uint32_t dso)
{
    const pd_dso *d = &b->maps.dsos[dso];
    const char *s = pc_str(&b->p->str, d->path);
    if (d->type == PD_DSO_ELF && jit_symfile(s, pc_str_len(&b->p->str, d->path)))
        return pc_intern_cstr(b->p, strstr(s, "jit_app_cache") ? "[JIT app cache]"
                                                               : "[JIT zygote cache]");
    return d->path;
}

static int java_index(finisher *f, pd_build *b)
{
    for (size_t i = 0; i < b->maps.ndsos; i++) {
        const pd_dso *d = &b->maps.dsos[i];
        if (d->type != PD_DSO_DEX)
            continue;
        for (size_t k = 0; k < d->nsym; k++) {
            const pd_symbol *s = &b->maps.syms[d->sym0 + k];
            pc_probe pr;
            if (pc_htab_reserve(&f->java.idx, f->java.n + 1) < 0)
                return -1;
            pc_probe_start(&f->java.idx, pc_mix64(s->name), &pr);
            int dup = 0;
            for (uint32_t j; (j = pc_probe_next(&f->java.idx, &pr)) != PC_NONE;)
                dup |= f->java.name[j] == s->name;
            if (dup)
                continue;  /* the first dso's wins, as in a map keyed by name */
            struct pc_col cols[] = {PC_COL(f->java.name), PC_COL(f->java.dso),
                                    PC_COL(f->java.addr), PC_COL(f->java.sym)};
            if (pc_grow_cols(&f->java.cap, f->java.n + 1, cols, 4) < 0)
                return -1;
            f->java.sym[f->java.n] = (uint32_t)(d->sym0 + k);
            f->java.name[f->java.n] = s->name;
            f->java.dso[f->java.n] = (uint32_t)i;
            f->java.addr[f->java.n] = s->addr;
            pc_htab_insert(&f->java.idx, &pr, (uint32_t)f->java.n);
            f->java.n++;
        }
    }
    return 0;
}

/* The method name of a symbol as simpleperf's FunctionName() gives it:
 * "void a.b.C.d(int)" is "a.b.C.d". */
static uint32_t function_name(pd_build *b, uint32_t name)
{
    const char *s = pc_str(&b->p->str, name);
    const char *paren = strchr(s, '(');
    if (!paren)
        return name;
    const char *st = paren;
    while (st > s && st[-1] != ' ')
        st--;
    return pc_intern(b->p, st, (size_t)(paren - st));
}

static void convert_jit(finisher *f, pd_build *b, ent *c, size_t *n)
{
    for (size_t i = 0; i < *n;) {
        if (c[i].exec == PC_EXEC_JIT && c[i].name != PC_NONE && f->java.n) {
            uint32_t fn = function_name(b, c[i].name);
            pc_probe pr;
            pc_probe_start(&f->java.idx, pc_mix64(fn), &pr);
            for (uint32_t j; (j = pc_probe_next(&f->java.idx, &pr)) != PC_NONE;) {
                if (f->java.name[j] != fn)
                    continue;
                c[i].dso = f->java.dso[j];
                c[i].name = fn;
                c[i].sym = f->java.sym[j];
                c[i].vaddr = f->java.addr[j];
                /* The same method's interpreted frame calling it is one
                 * frame (overloads are other symbols, and stay). */
                if (i + 1 < *n && c[i + 1].dso == c[i].dso && c[i + 1].sym == c[i].sym &&
                    c[i].sym != PC_NONE) {
                    memmove(c + i, c + i + 1, (*n - i - 1) * sizeof *c);
                    (*n)--;
                    goto next;
                }
                break;
            }
        }
        i++;
    next:;
    }
}

static int art_entry(pd_build *b, const ent *e, int *trampoline)
{
    if (e->exec != PC_EXEC_NATIVE)
        return 0;
    const char *name = e->name != PC_NONE ? pc_str(&b->p->str, e->name) : "";
    *trampoline = ends_with(name, strlen(name), "jni_trampoline");
    uint32_t path = b->maps.dsos[e->dso].path;
    const char *s = pc_str(&b->p->str, path);
    size_t n = pc_str_len(&b->p->str, path);
    return *trampoline || ends_with(s, n, "/libart.so") || ends_with(s, n, "/libartd.so");
}

static void mark_art(pd_build *b, ent *c, size_t n)
{
    int near_java = 0, tramp = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].exec == PC_EXEC_INTERPRETED || c[i].exec == PC_EXEC_JIT) {
            near_java = 1;
            for (size_t j = i; j-- > 0;) {
                if (!art_entry(b, &c[j], &tramp))
                    break;
                c[j].exec = PC_EXEC_ART;
            }
        } else if (near_java && art_entry(b, &c[i], &tramp)) {
            c[i].exec = PC_EXEC_ART;
        } else {
            near_java = 0;
        }
    }
    /* What a jni trampoline calls is the native method itself: it
     * stays. */
    for (size_t i = 1; i < n; i++) {
        const char *name = c[i].name != PC_NONE ? pc_str(&b->p->str, c[i].name) : "";
        if (c[i].exec == PC_EXEC_ART && ends_with(name, strlen(name), "jni_trampoline") &&
            c[i - 1].exec == PC_EXEC_ART)
            c[i - 1].exec = PC_EXEC_NATIVE;
    }
}

static int start_point(pd_build *b, const ent *e)
{
    if (e->name == PC_NONE)
        return 0;
    uint32_t path = b->maps.dsos[e->dso].path;
    size_t bl;
    const char *bn = pc_base_name(pc_str(&b->p->str, path), pc_str_len(&b->p->str, path), &bl);
    if (bl != 7 || memcmp(bn, "libc.so", 7) != 0)
        return 0;
    const char *s = pc_str(&b->p->str, e->name);
    return strcmp(s, "__libc_init") == 0 || strcmp(s, "__start_thread") == 0;
}

/* A symbol as report-sample shows it: demangled, and the dynamic
 * linker's own (which bionic's build prefixes with __dl_) as
 * "[linker]name". */
static uint32_t display_name(pd_build *b, uint32_t name)
{
    pc_profile *p = b->p;
    if (b->o->mangled)
        return name;
    const char *s = pc_str(&p->str, name);
    int linker = b->simpleperf && strncmp(s, "__dl_", 5) == 0;
    const char *raw = linker ? s + 5 : s;
    char *dm = pc_demangle(raw);
    uint32_t out;
    if (linker) {
        const char *t = dm ? dm : raw;
        size_t n = strlen(t);
        char *buf = malloc(n + 9);
        if (!buf) {
            free(dm);
            return pc_oom(p);
        }
        memcpy(buf, "[linker]", 8);
        memcpy(buf + 8, t, n + 1);
        out = pc_intern(p, buf, n + 8);
        free(buf);
    } else {
        out = dm ? pc_intern_cstr(p, dm) : name;
    }
    free(dm);
    return out;
}

static uint32_t model_frame(finisher *f, pd_build *b, const ent *e)
{
    pc_profile *p = b->p;
    uint32_t res = f->res_of[e->dso];
    fkey k = {e->vaddr, res, e->name, e->exec};
    pc_probe pr;
    uint64_t h = pc_mix64(k.vaddr ^ pc_mix64((uint64_t)k.res << 32 | k.name) ^ k.exec);
    if (pc_htab_reserve(&f->fr.idx, f->fr.n + 1) < 0)
        return PC_NONE;
    pc_probe_start(&f->fr.idx, h, &pr);
    for (uint32_t i; (i = pc_probe_next(&f->fr.idx, &pr)) != PC_NONE;)
        if (f->fr.key[i].vaddr == k.vaddr && f->fr.key[i].res == k.res &&
            f->fr.key[i].name == k.name && f->fr.key[i].exec == k.exec)
            return i;
    struct pc_col cols[] = {PC_COL(f->fr.key)};
    if (pc_grow_cols(&f->fr.cap, f->fr.n + 1, cols, 1) < 0)
        return PC_NONE;
    uint32_t path = f->path_of[e->dso];
    const char *ps = pc_str(&p->str, path);
    size_t pl = pc_str_len(&p->str, path);
    uint32_t fname;
    if (e->name != PC_NONE) {
        fname = display_name(b, e->name);
    } else {
        fname = pc_address_name(p, ps, pl, e->vaddr);
    }
    ps = pc_str(&p->str, path);
    int cat = b->maps.dsos[e->dso].kernel ? PC_CAT_KERNEL : pc_category_of(ps, pl);
    uint32_t id = pc_add_frame(p, pc_func(p, fname, res), e->vaddr, (uint8_t)cat, e->exec);
    if (id == PC_NONE || p->oom)
        return PC_NONE;
    p->frame.unnamed[id] = (uint8_t)(e->name == PC_NONE || e->addr == PC_ADDR_NONE
                                         ? e->addr : e->addr | PC_ADDR_NAMED);
    /* Frames are made here alone, so their ids follow the keys'. */
    f->fr.key[f->fr.n++] = k;
    pc_htab_insert(&f->fr.idx, &pr, id);
    return id;
}

/* The final stack of raw stack rs. */
static uint32_t final_stack(finisher *f, pd_build *b, uint32_t rs, int *complete)
{
    size_t n = 0;
    for (uint32_t s = rs; s != PC_NONE; s = b->rstack.prefix[s]) {
        if (n == f->chain_cap) {
            size_t cap = f->chain_cap ? f->chain_cap * 2 : 256;
            ent *c = realloc(f->chain, cap * sizeof *c);
            if (!c)
                return MEMO_TODO;
            f->chain = c;
            f->chain_cap = cap;
        }
        f->chain[n++] = f->named[b->rstack.frame[s]];
    }
    ent *c = f->chain;
    mark_art(b, c, n);
    if (!b->o->show_art_frames) {
        /* report-sample hides ART's frames before it shows JIT-compiled
         * methods as their dex methods, so that a method's JIT frame
         * called from its interpreted frame through ART becomes one. */
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (c[i].exec != PC_EXEC_ART)
                c[k++] = c[i];
        n = k;
    }
    convert_jit(f, b, c, &n);
    *complete = 0;
    for (size_t i = 1; i < n; i++) {
        if (c[i].dso == b->maps.unknown_dso) {
            n = i;
            break;
        }
        if (start_point(b, &c[i])) {
            *complete = 1;
            n = i + 1;
            break;
        }
    }
    uint32_t stack = PC_NONE;
    for (size_t i = n; i-- > 0;) {
        uint32_t fr = model_frame(f, b, &c[i]);
        if (fr == PC_NONE)
            return MEMO_TODO;
        stack = pc_stack(b->p, stack, fr);
        if (stack == PC_NONE)
            return MEMO_TODO;
    }
    return stack;
}

static const char *proto_error_name(const pd_unwind_note *u)
{
    /* libunwindstack's codes as report-sample tells them. */
    switch (u->raw_code) {
    case 1:
        return u->addr >= u->stack_end && u->addr - u->stack_end <= 128 * 1024
                   ? "NOT_ENOUGH_STACK" : "MEMORY_INVALID";
    case 2: return "UNWIND_INFO";
    case 4: return "INVALID_MAP";
    case 5: return "MAX_FRAME_EXCEEDED";
    case 6: return "REPEATED_FRAME";
    case 7: return "INVALID_ELF";
    default: return "UNKNOWN";
    }
}

/* Samples simpleperf could not unwind to the end hang under a root frame
 * naming why, with a marker, as the report-sample reader shows them. */
static int unwind_notes(finisher *f, pd_build *b)
{
    pc_profile *p = b->p;
    uint32_t nofile = PC_NONE, uname = PC_NONE;
    uint32_t *path = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < b->nnotes; i++) {
        const pd_unwind_note *u = &b->notes[i];
        size_t si = u->sample;
        uint32_t rs = u->raw;
        if (u->raw_code == 0 || (rs != PC_NONE && f->complete[rs]))
            continue;
        if (nofile == PC_NONE) {
            nofile = pc_resource(p, pc_intern(p, "", 0));
            uname = pc_intern_cstr(p, "Unwind error");
        }
        const char *why = proto_error_name(u);
        char label[64], full[64];
        snprintf(label, sizeof label, "[unwind error: %s]", why);
        snprintf(full, sizeof full, "ERROR_%s", why);
        uint32_t fr = pc_add_frame(p, pc_func(p, pc_intern_cstr(p, label), nofile), 0,
                                   PC_CAT_OTHER, PC_EXEC_NATIVE);
        uint32_t st = fr == PC_NONE ? PC_NONE : pc_stack(p, PC_NONE, fr);
        uint32_t old = p->sample.stack[si];
        size_t n = 0;
        for (uint32_t s = old; s != PC_NONE; s = p->stack.prefix[s]) {
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                uint32_t *np = realloc(path, cap * sizeof *np);
                if (!np) {
                    free(path);
                    return -1;
                }
                path = np;
            }
            path[n++] = p->stack.frame[s];
        }
        while (n-- > 0 && st != PC_NONE)
            st = pc_stack(p, st, path[n]);
        p->sample.stack[si] = st;
        pc_add_marker(p, pc_sample_thread(p, si), PC_MARK_UNWIND, uname, pc_sample_time(p, si),
                      pc_sample_time(p, si), pc_intern_cstr(p, full), (int64_t)u->raw_code,
                      u->addr);
    }
    free(path);
    return p->oom ? -1 : 0;
}

/* ---- Events, threads, what the recording says ---- */

static uint32_t event_name(pd_build *b, size_t i)
{
    pc_profile *p = b->p;
    const pd_info *info = &b->info;
    const pd_attr *a = &b->attrs[i];
    if (i < info->n_event_names) {
        /* simpleperf lists the names as given; report-sample adds the
         * modifier the attribute's exclusions make. */
        const char *mod = "";
        if ((a->flags & PD_ATTR_EXCLUDE_USER) && !(a->flags & PD_ATTR_EXCLUDE_KERNEL))
            mod = ":k";
        else if ((a->flags & PD_ATTR_EXCLUDE_KERNEL) && !(a->flags & PD_ATTR_EXCLUDE_USER))
            mod = ":u";
        const char *s = pc_str(&p->str, info->event_names[i]);
        size_t n = strlen(s), m = strlen(mod);
        if (!m || (n >= m && strcmp(s + n - m, mod) == 0))
            return info->event_names[i];
        char buf[256];
        snprintf(buf, sizeof buf, "%s%s", s, mod);
        return pc_intern_cstr(p, buf);
    }
    /* EVENT_DESC names attributes by their ids, else by position. */
    for (size_t k = 0; k < info->n_desc; k++) {
        uint64_t id = info->desc_ids[k];
        if (id == UINT64_MAX - i)
            return info->desc_names[k];
        for (size_t j = 0; j < b->nids; j++)
            if (b->ids[j] == id && b->id_attr[j] == i)
                return info->desc_names[k];
    }
    char buf[64];
    const char *s = pd_event_name(a->type, a->config, buf, sizeof buf, a->flags);
    if (!s) {
        snprintf(buf, sizeof buf, "event %" PRIu32 ":%" PRIu64, a->type, a->config);
        s = buf;
    }
    return pc_intern_cstr(p, s);
}

static int add_events(pd_build *b)
{
    pc_profile *p = b->p;
    uint32_t *names = malloc((b->nattrs + 1) * sizeof *names);
    if (!names)
        return -1;
    int clock = 0;
    for (size_t i = 0; i < b->nattrs; i++) {
        names[i] = event_name(b, i);
        if (names[i] == PC_NONE) {
            free(names);
            return -1;
        }
        clock |= pc_perf_clock_event(pc_str(&p->str, names[i]));
    }
    /* With --trace-offcpu, simpleperf's switch samples stand for the time
     * until the thread runs again; so do perf's when recorded, as that
     * option records them, beside a clock event. */
    int offcpu = b->info.trace_offcpu || (!b->simpleperf && clock);
    for (size_t i = 0; i < b->nattrs; i++) {
        uint32_t name = names[i];
        const char *s = pc_str(&p->str, name);
        int off = offcpu && strstr(s, "sched_switch") != NULL;
        int unit = off || pc_perf_clock_event(s) ? PC_UNIT_NS : PC_UNIT_COUNT;
        if (pc_event_append(p, name, unit, off) == PC_NONE) {
            free(names);
            return -1;
        }
    }
    free(names);
    return 0;
}

static void free_finisher(finisher *f)
{
    free(f->named);
    free(f->chain);
    free(f->memo);
    free(f->complete);
    free(f->fr.key);
    pc_htab_free(&f->fr.idx);
    free(f->res_of);
    free(f->path_of);
    free(f->java.name);
    free(f->java.dso);
    free(f->java.addr);
    free(f->java.sym);
    pc_htab_free(&f->java.idx);
    if (f->nm.ksyms)
        pc_ksyms_close(f->nm.ksyms);
    if (f->nm.jit)
        for (size_t i = 0; i < f->nm.b->maps.ndsos; i++)
            if (f->nm.jit[i])
                pc_jitmap_close(f->nm.jit[i]);
    free(f->nm.jit);
    free(f->nm.jit_tried);
}

static int build_stacks(pd_build *b, finisher *f)
{
    pc_profile *p = b->p;
    pd_maps *m = &b->maps;
    f->nm.b = b;
    /* Module addresses no module symbol covers are looked up in the
     * kernel's, whether or not the kernel's own mapping was recorded. */
    uint32_t kpath = pc_intern_cstr(p, "[kernel.kallsyms]");
    f->nm.kernel_dso = kpath == PC_NONE ? PC_NONE : pd_dso_find(m, kpath, PD_KERNEL_SPACE, PD_DSO_KERNEL);
    if (f->nm.kernel_dso == PC_NONE)
        return -1;
    f->nm.jit = calloc(m->ndsos + 1, sizeof *f->nm.jit);
    f->nm.jit_tried = calloc(m->ndsos + 1, 1);
    f->named = malloc((b->raw.n + 1) * sizeof *f->named);
    f->memo = malloc((b->rstack.n + 1) * sizeof *f->memo);
    f->complete = calloc(b->rstack.n + 1, 1);
    f->res_of = malloc((m->ndsos + 1) * sizeof *f->res_of);
    f->path_of = malloc((m->ndsos + 1) * sizeof *f->path_of);
    if (!f->nm.jit || !f->nm.jit_tried || !f->named || !f->memo || !f->complete ||
        !f->res_of || !f->path_of || java_index(f, b) < 0)
        return -1;
    for (size_t i = 0; i < m->ndsos; i++) {
        f->path_of[i] = report_path(b, (uint32_t)i);
        f->res_of[i] = pc_resource(p, f->path_of[i]);
        if (f->res_of[i] != PC_NONE && m->dsos[i].build_id_len && !p->oom) {
            char hex[41];
            for (size_t k = 0; k < m->dsos[i].build_id_len; k++)
                snprintf(hex + 2 * k, 3, "%02x", m->dsos[i].build_id[k]);
            p->res.build[f->res_of[i]] = pc_intern(p, hex, 2u * m->dsos[i].build_id_len);
        }
    }
    if (p->oom)
        return -1;
    for (size_t i = 0; i < b->raw.n; i++)
        name_raw(&f->nm, &b->raw.key[i], &f->named[i]);
    if (p->oom)
        return -1;
    for (size_t i = 0; i < b->rstack.n; i++)
        f->memo[i] = MEMO_TODO;
    for (size_t i = 0; i < b->nnotes; i++)
        b->notes[i].raw = p->sample.stack[b->notes[i].sample];
    for (size_t i = 0; i < p->sample.n; i++) {
        uint32_t rs = p->sample.stack[i];
        if (rs == PC_NONE)
            continue;
        if (f->memo[rs] == MEMO_TODO) {
            int complete;
            uint32_t st = final_stack(f, b, rs, &complete);
            if (st == MEMO_TODO)
                return -1;
            f->memo[rs] = st;
            f->complete[rs] = (uint8_t)complete;
        }
        p->sample.stack[i] = f->memo[rs];
    }
    return unwind_notes(f, b);
}

static void name_threads(pd_build *b)
{
    pc_profile *p = b->p;
    pd_maps *m = &b->maps;
    for (size_t i = 0; i < m->nprocs; i++)
        if (m->procs[i].comm != PC_NONE)
            pc_set_process_name(p, m->procs[i].pid, m->procs[i].comm);
    pc_name_unnamed_threads(p);
}

int pd_finish(pd_build *b)
{
    pc_profile *p = b->p;
    const pc_options *o = b->o;
    finisher f;
    memset(&f, 0, sizeof f);
    p->meta.source = pc_intern_cstr(p, b->simpleperf ? "simpleperf" : "perf");
    /* simpleperf's report scripts drop gaps of up to 3 samples; perf
     * report drops nothing. */
    p->meta.default_gaps = b->simpleperf ? 3 : 0;
    int st = PC_OK;
    if (add_events(b) < 0 || build_stacks(b, &f) < 0)
        st = pd_nomem(b);
    free_finisher(&f);
    if (st != PC_OK)
        return st;
    name_threads(b);
    p->sample.read = p->sample.n;
    if (b->has_lost) {
        p->meta.has_lost = 1;
        p->meta.lost_sample_count = b->n_samples;
        p->meta.lost_count = b->lost;
    }
    if (b->info.has_clock) {
        p->meta.has_wall = 1;
        p->meta.wall_ns = b->info.clock_wall_ns;
        p->meta.wall_at = b->info.clock_at;
    } else if (b->info.has_end_wall && p->sample.n) {
        /* simpleperf notes the second its recording ended: taken as the
         * time of the last event, the date is right to a second or so. */
        p->meta.has_wall = 1;
        p->meta.wall_ns = b->info.end_wall_ns;
        p->meta.wall_at = pc_end_time(p);
    }
    const char *name = src_name(b->in);
    if (b->unfinished)
        pc_log(o, PC_LOG_WARN, "%s: the recording was not finished (its data size is 0): "
               "read to the end of the file", name);
    if (b->unknown_records)
        pc_log(o, PC_LOG_WARN, "%s: %zu records of kinds this version does not know were "
               "skipped", name, b->unknown_records);
    if (b->info.unknown_features)
        pc_log(o, PC_LOG_WARN, "%s: %zu feature sections of kinds this version does not know "
               "were skipped", name, b->info.unknown_features);
    if (b->no_tid)
        pc_log(o, PC_LOG_WARN, "%s: %zu samples carry no thread id: they are shown as thread 0",
               name, b->no_tid);
    if (b->unwind_failed)
        pc_log(o, PC_LOG_WARN, "%s: %zu of %zu samples recorded with a stack copy could not be "
               "unwound", name, b->unwind_failed, b->unwind_failed + b->unwound);
    if (f.nm.elf_missing)
        pc_log(o, PC_LOG_INFO, "%s: %zu mapped files were not found on this machine (or their "
               "build ids differ): their frames are named by file offset", name,
               f.nm.elf_missing);
    pc_skips_report(&b->skipped, o, "damaged records skipped");
    pc_stop_report(&b->stop, o, b->n_records, "records");
    if (p->meta.has_lost && b->lost) {
        uint64_t total = b->lost + b->n_samples;
        pc_log(o, PC_LOG_WARN, "%" PRIu64 " of %" PRIu64 " samples (%.1f%%) were lost while "
               "recording", b->lost, total, 100.0 * (double)b->lost / (double)total);
    }
    if (!p->sample.n) {
        char hint[256];
        snprintf(hint, sizeof hint, "it has %zu records, %zu of them samples%s", b->n_records,
                 b->n_samples, b->empty_samples ? ", none with an address" : "");
        p->meta.empty_hint = pc_intern_cstr(p, hint);
    }
    return p->oom ? pd_nomem(b) : PC_OK;
}
