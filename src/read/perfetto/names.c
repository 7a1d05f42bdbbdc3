/* Names for a Perfetto trace's frames, threads and processes, settled once
 * every packet is read: symbols (ModuleSymbols) and deobfuscation
 * mappings are often appended to a trace after the samples they name
 * (doc/formats/perfetto.md, "Process and thread names", "Symbols and
 * deobfuscation"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/path.h"
#include "base/demangle.h"
#include "read/perfetto/reader.h"

/* ---- Symbols ---- */

typedef struct symbols {
    uint32_t *order;      /* sym entries by (module key, address) */
    uint32_t *key_of;     /* module -> its key module (first with the same
                           * path and build id) */
    size_t *first;        /* per module: range of its key's entries in order */
    size_t *last;
    uint32_t *map_mod;    /* per reader mapping: key module, or PC_NONE */
} symbols;

static int cmp_sym(const void *a, const void *b, const void *ctx)
{
    const pf_reader *r = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t mx = r->mod.path[r->sym.mod[x]], my = r->mod.path[r->sym.mod[y]];
    if (mx != my)
        return mx < my ? -1 : 1;
    mx = r->mod.build[r->sym.mod[x]];
    my = r->mod.build[r->sym.mod[y]];
    if (mx != my)
        return mx < my ? -1 : 1;
    if (r->sym.addr[x] != r->sym.addr[y])
        return r->sym.addr[x] < r->sym.addr[y] ? -1 : 1;
    return (x > y) - (x < y);
}

static void symbols_free(symbols *s)
{
    free(s->order);
    free(s->key_of);
    free(s->first);
    free(s->last);
    free(s->map_mod);
}

/* Indexes the symbols by module and address, and finds each mapping's
 * module by (name, build id). */
static int symbols_init(pf_reader *r, symbols *s)
{
    memset(s, 0, sizeof *s);
    if (!r->sym.n)
        return 0;
    size_t nm = r->mod.n, ns = r->sym.n;
    s->order = malloc(ns * sizeof *s->order);
    s->key_of = malloc(nm * sizeof *s->key_of);
    s->first = calloc(nm, sizeof *s->first);
    s->last = calloc(nm, sizeof *s->last);
    s->map_mod = malloc((r->map.n + 1) * sizeof *s->map_mod);
    if (!s->order || !s->key_of || !s->first || !s->last || !s->map_mod)
        return -1;
    pc_htab idx = {0};
    if (pc_htab_reserve(&idx, nm + 1) < 0)
        return -1;
    for (size_t m = 0; m < nm; m++) {
        pc_probe pr;
        pc_probe_start(&idx, pc_mix64((uint64_t)r->mod.path[m] << 32 | r->mod.build[m]), &pr);
        uint32_t k, key = PC_NONE;
        while ((k = pc_probe_next(&idx, &pr)) != PC_NONE)
            if (r->mod.path[k] == r->mod.path[m] && r->mod.build[k] == r->mod.build[m]) {
                key = k;
                break;
            }
        if (key == PC_NONE) {
            pc_htab_insert(&idx, &pr, (uint32_t)m);
            key = (uint32_t)m;
        }
        s->key_of[m] = key;
    }
    for (size_t i = 0; i < ns; i++)
        s->order[i] = (uint32_t)i;
    pc_sort_ctx(s->order, ns, sizeof *s->order, cmp_sym, r);
    for (size_t i = 0; i < ns;) {
        uint32_t key = s->key_of[r->sym.mod[s->order[i]]];
        size_t j = i;
        while (j < ns && s->key_of[r->sym.mod[s->order[j]]] == key)
            j++;
        s->first[key] = i;
        s->last[key] = j;
        i = j;
    }
    uint32_t empty = pc_str_find(&r->p->str, "", 0);
    for (size_t m = 0; m < r->map.n; m++) {
        pc_probe pr;
        uint32_t build = r->map.build[m] == PC_NONE ? empty : r->map.build[m];
        s->map_mod[m] = PC_NONE;
        pc_probe_start(&idx, pc_mix64((uint64_t)r->map.name[m] << 32 | build), &pr);
        for (uint32_t k; (k = pc_probe_next(&idx, &pr)) != PC_NONE;)
            if (r->mod.path[k] == r->map.name[m] && r->mod.build[k] == build) {
                s->map_mod[m] = k;
                break;
            }
    }
    pc_htab_free(&idx);
    return 0;
}

/* The symbol entry for address addr of mapping m, or PC_NONE. */
static uint32_t symbol_at(const pf_reader *r, const symbols *s, uint32_t m, uint64_t addr)
{
    if (!s->order || m == PC_NONE || s->map_mod[m] == PC_NONE)
        return PC_NONE;
    uint32_t key = s->map_mod[m];
    size_t lo = s->first[key], hi = s->last[key];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->sym.addr[s->order[mid]] < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < s->last[key] && r->sym.addr[s->order[lo]] == addr)
        return s->order[lo];
    return PC_NONE;
}

/* ---- Deobfuscation ---- */

/* A frame's package for the lookup: a package of the mapping, PC_NONE
 * when not known (the mapping's one package is used then), or FOREIGN:
 * an app's code whose package the mapping does not name. */
#define FOREIGN (PC_NONE - 1)

typedef struct deobf {
    uint32_t *frame_pkg;    /* per frame; NULL: no mapping */
    pc_deobf_result res;
} deobf;

/* The mapping's package for deobfuscation, from the app's install path;
 * FOREIGN for an app the mappings do not know. */
static uint32_t package_of_path(const pf_reader *r, uint32_t path)
{
    size_t n;
    const char *a = pc_app_package(pc_str(&r->p->str, path), &n);
    if (!a)
        return PC_NONE;
    uint32_t pkg = pc_deobf_package(&r->deobf, a, n);
    return pkg == PC_NONE ? FOREIGN : pkg;
}

/* The package a process runs: its name up to any ":service" suffix, when
 * the mapping names that package. */
static uint32_t package_of_process(const pf_reader *r, int64_t pid)
{
    uint32_t name = pc_process_name(r->p, pid);
    if (name == PC_NONE)
        return PC_NONE;
    const char *s = pc_str(&r->p->str, name);
    return pc_deobf_package(&r->deobf, s, strcspn(s, ":"));
}

static void deobf_free(deobf *d)
{
    free(d->frame_pkg);
    pc_deobf_result_free(&d->res);
}

/* Marks the frames of stack (and its prefixes) with package pkg where
 * they have none; seen[] stops at stacks already walked. */
static void mark_stack(const pc_profile *p, uint32_t stack, uint32_t pkg, uint8_t *seen,
                       uint32_t *frame_pkg)
{
    for (; stack != PC_NONE && !seen[stack]; stack = p->stack.prefix[stack]) {
        seen[stack] = 1;
        uint32_t f = p->stack.frame[stack];
        if (frame_pkg[f] == PC_NONE)
            frame_pkg[f] = pkg;
    }
}

static int deobf_init(pf_reader *r, deobf *d)
{
    pc_profile *p = r->p;
    memset(d, 0, sizeof *d);
    if (!r->deobf.cls.n)
        return 0;
    if (pc_deobf_seal(&r->deobf) < 0)
        return -1;
    d->frame_pkg = malloc((p->frame.n + 1) * sizeof *d->frame_pkg);
    uint32_t *thread_pkg = malloc((p->thread.n + 1) * sizeof *thread_pkg);
    uint8_t *seen = calloc(p->stack.n + 1, 1);
    if (!d->frame_pkg || !thread_pkg || !seen) {
        free(thread_pkg);
        free(seen);
        return -1;
    }
    /* A frame's package: from its app's install path, else from the
     * process whose samples reach it first. */
    for (size_t f = 0; f < p->frame.n; f++) {
        uint32_t m = f < r->fr.n ? r->fr.map[f] : PC_NONE;
        d->frame_pkg[f] = m == PC_NONE ? PC_NONE : package_of_path(r, r->map.name[m]);
    }
    for (size_t t = 0; t < p->thread.n; t++)
        thread_pkg[t] = package_of_process(r, p->thread.pid[t]);
    for (size_t i = 0; i < p->sample.n; i++) {
        uint32_t pkg = thread_pkg[pc_sample_thread(p, i)];
        if (pkg != PC_NONE)
            mark_stack(p, p->sample.stack[i], pkg, seen, d->frame_pkg);
    }
    for (size_t i = 0; i < p->heap.n; i++) {
        uint32_t pkg = thread_pkg[p->heap.thread[i]];
        if (pkg != PC_NONE)
            mark_stack(p, p->heap.stack[i], pkg, seen, d->frame_pkg);
    }
    free(thread_pkg);
    free(seen);
    return 0;
}

/* A growable list of string ids. */
typedef struct sids {
    uint32_t *v;
    size_t n, cap;
} sids;

static int sids_push(sids *s, uint32_t id)
{
    if (id == PC_NONE)
        return -1;
    if (pc_grow(&s->v, &s->cap, s->n + 1, sizeof *s->v, 8) < 0)
        return -1;
    s->v[s->n++] = id;
    return 0;
}

/* Appends to out the deobfuscated names of the Java frame name (a string
 * id) of frame f at obfuscated line `line` (0: unknown), outermost first,
 * as java/deobf.h looks them up: a known line expands its inline chain.
 * Returns the number of names appended, 0 when the mapping does not name
 * the frame, or -1 when out of memory. */
static int deobfuscate(pf_reader *r, deobf *d, uint32_t f, uint32_t name, uint32_t line,
                       sids *out)
{
    pc_profile *p = r->p;
    uint32_t pkg = d->frame_pkg[f];
    if (pkg == FOREIGN)
        return 0;
    int got = pc_deobf_lookup(&r->deobf, pkg, pc_str(&p->str, name),
                              pc_str_len(&p->str, name), line, &d->res);
    for (size_t k = 0; got > 0 && k < d->res.n; k++) {
        size_t n;
        const char *s = pc_deobf_name(&d->res, k, &n);
        if (sids_push(out, pc_intern(p, s, n)) < 0)
            return -1;
    }
    return got > 0 ? (int)d->res.n : got;
}

/* ---- Frames ---- */

enum { KIND_KERNEL = 2, KIND_INTERPRETED = 3, KIND_JIT = 4, KIND_SYNTHETIC = 0xff };

/* map_cat: the category of each mapping's path, as pc_category_of gives
 * it, worked out once a mapping (-1 until then; a frame without a
 * mapping has the path ""). */
static void categorize(pf_reader *r, uint32_t f, int8_t *map_cat)
{
    pc_profile *p = r->p;
    uint8_t kind = r->fr.kind[f];
    uint32_t map = r->fr.map[f];
    int cat, exec = PC_EXEC_NATIVE;
    if (kind != KIND_SYNTHETIC && kind != KIND_KERNEL && map != PC_NONE && map_cat[map] < 0)
        map_cat[map] = (int8_t)pc_category_of(pc_str(&p->str, r->map.name[map]),
                                              pc_str_len(&p->str, r->map.name[map]));
    if (kind == KIND_SYNTHETIC) {
        cat = PC_CAT_OTHER;
    } else if (kind == KIND_KERNEL) {
        cat = PC_CAT_KERNEL;
    } else if ((cat = map == PC_NONE ? pc_category_of("", 0) : map_cat[map]) == PC_CAT_JIT) {
        exec = PC_EXEC_JIT;
    } else {
        if (kind == KIND_JIT) {
            exec = PC_EXEC_JIT;
            if (cat == PC_CAT_USER)
                cat = PC_CAT_JIT;
        } else if (kind == KIND_INTERPRETED) {
            exec = PC_EXEC_INTERPRETED;
            if (cat == PC_CAT_USER || cat == PC_CAT_NATIVE)
                cat = PC_CAT_DEX;
        }
    }
    p->frame.cat[f] = (uint8_t)cat;
    p->frame.exec[f] = (uint8_t)exec;
}

/* The names of frame f, outermost first: its symbol's inline chain, else
 * its function name, each deobfuscated where a mapping applies. */
static int frame_names(pf_reader *r, const symbols *sy, deobf *d, uint32_t f, sids *out)
{
    pc_profile *p = r->p;
    uint32_t map = r->fr.map[f], name = r->fr.name[f];
    uint32_t sym = r->fr.kind[f] == KIND_SYNTHETIC ? PC_NONE
                                                   : symbol_at(r, sy, map, p->frame.addr[f]);
    out->n = 0;
    if (sym != PC_NONE) {
        /* Lines are most inlined first. */
        uint32_t l0 = r->sym.line0[sym], nl = r->sym.n_lines[sym];
        for (uint32_t k = nl; k-- > 0;) {
            int got = d->frame_pkg ? deobfuscate(r, d, f, r->line.func[l0 + k],
                                                 r->line.line[l0 + k], out)
                                   : 0;
            if (got < 0 || (got == 0 && sids_push(out, r->line.func[l0 + k]) < 0))
                return -1;
        }
        return 0;
    }
    if (name != PC_NONE) {
        int got = d->frame_pkg ? deobfuscate(r, d, f, name, 0, out) : 0;
        if (got < 0 || (got == 0 && sids_push(out, name) < 0))
            return -1;
        /* A name alone: the binary's DWARF may add lines and inlines. */
        if (!got && map != PC_NONE && r->fr.kind[f] != KIND_SYNTHETIC)
            p->frame.unnamed[f] = PC_ADDR_VADDR | PC_ADDR_NAMED;
        return 0;
    }
    /* traced_perf's rel_pc is an address as the ELF file states it
     * (unwindstack adds the file's load bias): --symbols can name it. */
    if (map != PC_NONE && r->fr.kind[f] != KIND_SYNTHETIC)
        p->frame.unnamed[f] = PC_ADDR_VADDR;
    const char *mp = map == PC_NONE ? "" : pc_str(&p->str, r->map.name[map]);
    size_t mn = map == PC_NONE ? 0 : pc_str_len(&p->str, r->map.name[map]);
    return sids_push(out, pc_address_name(p, mp, mn, p->frame.addr[f]));
}

static int name_frames(pf_reader *r, const symbols *sy, deobf *d)
{
    pc_profile *p = r->p;
    size_t nf = r->fr.n;
    uint32_t nameless = pc_resource(p, pc_intern(p, "", 0));
    pc_inlines in = {0};
    sids names = {0};
    int any_inline = 0, st = 0;
    in.first = calloc(nf + 1, sizeof *in.first);
    in.count = calloc(nf + 1, sizeof *in.count);
    /* Frames share their mappings and, many of them, their names: each
     * mapping is categorized once and each name demangled once (demangled
     * names are 1 + their id by the mangled one's, 0 until known). */
    int8_t *map_cat = malloc(r->map.n + 1);
    size_t n_dm = p->str.n;
    uint32_t *dm_of = calloc(n_dm + 1, sizeof *dm_of);
    if (!in.first || !in.count || !map_cat || !dm_of)
        st = -1;
    if (map_cat)
        memset(map_cat, -1, r->map.n + 1);
    for (size_t f = 0; st == 0 && f < nf; f++) {
        uint32_t map = r->fr.map[f];
        uint32_t res = map == PC_NONE ? nameless : r->map.res[map];
        if (frame_names(r, sy, d, (uint32_t)f, &names) < 0 || p->oom) {
            st = -1;
            break;
        }
        /* Native names come mangled; trace_processor shows them
         * demangled, and so do we unless asked not to. */
        for (size_t k = 0; !r->o->mangled && k < names.n; k++) {
            uint32_t sid = names.v[k];
            if (sid < n_dm && dm_of[sid]) {
                names.v[k] = dm_of[sid] - 1;
                continue;
            }
            char *dm = pc_demangle(pc_str(&p->str, sid));
            if (dm) {
                names.v[k] = pc_intern_cstr(p, dm);
                free(dm);
            }
            if (sid < n_dm && names.v[k] != PC_NONE)
                dm_of[sid] = names.v[k] + 1;
        }
        if (p->oom) {
            st = -1;
            break;
        }
        categorize(r, (uint32_t)f, map_cat);
        p->frame.func[f] = pc_func(p, names.v[0], res);
        for (size_t k = 1; k < names.n; k++)
            if (pc_inline_add(p, &in, (uint32_t)f, pc_func(p, names.v[k], res)) == PC_NONE) {
                st = -1;
                break;
            }
        any_inline |= names.n > 1;
    }
    if (st == 0 && any_inline)
        st = pc_inline_expand(p, &in, nf);
    free(in.first);
    free(in.count);
    free(in.frames);
    free(names.v);
    free(map_cat);
    free(dm_of);
    return st < 0 || p->oom ? -1 : 0;
}

/* ---- Threads ---- */

static uint32_t thread_name_of(const pf_reader *r, int64_t tid)
{
    pc_probe pr;
    if (!r->tname.n)
        return PC_NONE;
    pc_probe_start(&r->tname.idx, pc_mix64((uint64_t)tid), &pr);
    for (uint32_t i; (i = pc_probe_next(&r->tname.idx, &pr)) != PC_NONE;)
        if (r->tname.id[i] == tid)
            return r->tname.name[i];
    return PC_NONE;
}

static int name_threads(pf_reader *r)
{
    pc_profile *p = r->p;
    for (size_t t = 0; t < p->thread.n; t++) {
        uint32_t name = thread_name_of(r, p->thread.tid[t]);
        if (name == PC_NONE && p->thread.tid[t] == p->thread.pid[t])
            name = pc_process_name(p, p->thread.pid[t]);
        /* Threads nobody named are named as every reader's are. */
        p->thread.name[t] = name;
    }
    return p->oom ? -1 : 0;
}

int pf_resolve_names(pf_reader *r)
{
    symbols sy;
    deobf d;
    memset(&sy, 0, sizeof sy);
    memset(&d, 0, sizeof d);
    int st = symbols_init(r, &sy) < 0 || deobf_init(r, &d) < 0 ? -1 : 0;
    if (st == 0)
        st = name_frames(r, &sy, &d);
    if (st == 0)
        st = name_threads(r);
    symbols_free(&sy);
    deobf_free(&d);
    return st < 0 ? pf_nomem(r) : PC_OK;
}

void pf_names_free(pf_reader *r)
{
    free(r->mod.path);
    free(r->mod.build);
    free(r->sym.mod);
    free(r->sym.line0);
    free(r->sym.n_lines);
    free(r->sym.addr);
    free(r->line.func);
    free(r->line.file);
    free(r->line.line);
    pc_deobf_free(&r->deobf);
}
