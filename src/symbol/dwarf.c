/* Source positions and inline chains from DWARF (see dwarf.h).
 *
 * Functions are found through one table of every out-of-line function's
 * address ranges (DW_TAG_subprogram DIEs at a unit's top level or inside
 * namespaces, classes and modules), sorted by start, with the running
 * maximum of the ends so that overlapping ranges are found too: the
 * smallest range holding the address wins, as binutils chooses.  Inside
 * the function, the inlined-subroutine tree is walked down to the deepest
 * instance holding the address. */
/* realpath() */
#define _XOPEN_SOURCE 700

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/grow.h"
#include "symbol/buildid.h"
#include "symbol/dwarf.h"

/* Deepest DIE nesting followed, and the longest inline chain kept. */
#define MAX_DEPTH 256

typedef struct fn_range {
    uint64_t lo, hi;   /* [lo, hi) */
    uint64_t max_hi;   /* the largest hi of this and every earlier entry */
    Dwarf_Off die;     /* the subprogram's offset in .debug_info */
} fn_range;

struct pc_dwarf {
    char *path;
    int fd;
    Elf *elf;
    Dwarf *dw;
    int indexed;       /* fns built (or tried) */
    fn_range *fns;
    size_t nfns, capfns;
};

static pthread_once_t version_once = PTHREAD_ONCE_INIT;
static int version_ok;

static void set_version(void)
{
    version_ok = elf_version(EV_CURRENT) != EV_NONE;
}

/* Whether elf has a .debug_info (or old-style compressed .zdebug_info)
 * with contents. */
static int has_debug_info(Elf *elf)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return 0;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (name && (strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0) &&
            sh.sh_type != SHT_NOBITS && sh.sh_size > 0)
            return 1;
    }
    return 0;
}

/* An open candidate file. */
typedef struct file {
    int fd;
    Elf *elf;
} file;

static void file_close(file *f)
{
    if (f->elf)
        elf_end(f->elf);
    if (f->fd >= 0)
        close(f->fd);
    f->elf = NULL;
    f->fd = -1;
}

static int file_open(const char *path, file *f)
{
    f->elf = NULL;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0)
        return -1;
    f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
    if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
        file_close(f);
        return -1;
    }
    return 0;
}

/* Opens path as a debug file for a binary of build id (id, id_len; len 0
 * for none): 0 when it holds DWARF and its id, if any, agrees. */
static int try_debug(const char *path, const void *id, ssize_t id_len, file *out)
{
    if (file_open(path, out) != 0)
        return -1;
    if (has_debug_info(out->elf)) {
        const void *got;
        ssize_t got_len = dwelf_elf_gnu_build_id(out->elf, &got);
        if (id_len <= 0 || got_len <= 0 ||
            pc_buildid_matches(id, (size_t)id_len, got, (size_t)got_len))
            return 0;
    }
    file_close(out);
    return -1;
}

/* Finds the separate debug file of the binary bin (opened from path):
 * 0 with out open and *found malloc'd, or -1. */
static int find_debug(const char *path, Elf *bin, file *out, char **found)
{
    const void *id = NULL;
    ssize_t id_len = dwelf_elf_gnu_build_id(bin, &id);
    if (id_len < 0)
        id_len = 0;
    char cand[PATH_MAX * 2 + 64];
    GElf_Word crc;
    const char *link = dwelf_elf_gnu_debuglink(bin, &crc);
    if (link && *link && !strchr(link, '/')) {
        /* The folder of path, as given and made absolute. */
        char dir[PATH_MAX], absdir[PATH_MAX];
        const char *slash = strrchr(path, '/');
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else if (slash == path)
            snprintf(dir, sizeof dir, "/");
        else
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
        if (!realpath(dir, absdir))
            snprintf(absdir, sizeof absdir, "%s", dir);
        const char *fmts[3] = { "%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s" };
        const char *dirs[3] = { dir, dir, absdir };
        for (int i = 0; i < 3; i++) {
            const char *dd = dirs[i];
            if (i == 2 && strcmp(dd, "/") == 0)
                dd = "";
            snprintf(cand, sizeof cand, fmts[i], dd, link);
            if (i == 0 && strcmp(cand, path) == 0)
                continue;
            if (try_debug(cand, id, id_len, out) == 0) {
                *found = pc_strdup(cand);
                if (*found)
                    return 0;
                file_close(out);
                return -1;
            }
        }
    }
    if (id_len >= 2) {
        char hex[2 * PC_BUILDID_MAX + 1];
        pc_buildid_hex(id, (size_t)id_len, hex);
        char *p = pc_buildid_path("/usr/lib/debug", hex, ".debug");
        if (p && try_debug(p, id, id_len, out) == 0) {
            *found = p;
            return 0;
        }
        free(p);
    }
    return -1;
}

pc_dwarf *pc_dwarf_open(const char *path)
{
    if (!path)
        return NULL;
    pthread_once(&version_once, set_version);
    if (!version_ok)
        return NULL;
    file bin;
    if (file_open(path, &bin) != 0)
        return NULL;
    file use = bin;
    char *used = NULL;
    if (has_debug_info(bin.elf)) {
        used = pc_strdup(path);
        if (!used) {
            file_close(&bin);
            return NULL;
        }
    } else {
        int r = find_debug(path, bin.elf, &use, &used);
        file_close(&bin);
        if (r != 0)
            return NULL;
    }
    pc_dwarf *d = calloc(1, sizeof *d);
    Dwarf *dw = d ? dwarf_begin_elf(use.elf, DWARF_C_READ, NULL) : NULL;
    if (!dw) {
        free(d);
        free(used);
        file_close(&use);
        return NULL;
    }
    d->path = used;
    d->fd = use.fd;
    d->elf = use.elf;
    d->dw = dw;
    return d;
}

const char *pc_dwarf_path(const pc_dwarf *d)
{
    return d ? d->path : NULL;
}

void pc_dwarf_close(pc_dwarf *d)
{
    if (!d)
        return;
    dwarf_end(d->dw);
    if (d->elf)
        elf_end(d->elf);
    if (d->fd >= 0)
        close(d->fd);
    free(d->fns);
    free(d->path);
    free(d);
}

/* Adds the ranges of subprogram fn. */
static void add_function(pc_dwarf *d, Dwarf_Die *fn)
{
    Dwarf_Addr base, lo, hi;
    ptrdiff_t off = 0;
    int guard = 0;
    while ((off = dwarf_ranges(fn, off, &base, &lo, &hi)) > 0 && guard++ < 100000) {
        if (hi <= lo)
            continue;
        if (pc_grow(&d->fns, &d->capfns, d->nfns + 1, sizeof *d->fns, 256) != 0)
            return;
        d->fns[d->nfns++] = (fn_range){ .lo = lo, .hi = hi, .die = dwarf_dieoffset(fn) };
    }
}

/* Gathers the subprograms under die (a unit, namespace, class...). */
static void gather(pc_dwarf *d, Dwarf_Die *die, int depth)
{
    Dwarf_Die child;
    if (depth > MAX_DEPTH || dwarf_child(die, &child) != 0)
        return;
    do {
        switch (dwarf_tag(&child)) {
        case DW_TAG_subprogram:
            add_function(d, &child);
            break;
        case DW_TAG_namespace:
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type:
        case DW_TAG_module:
        case DW_TAG_interface_type:
            gather(d, &child, depth + 1);
            break;
        default:
            break;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

static int by_lo(const void *a, const void *b)
{
    const fn_range *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi)
        return x->hi < y->hi ? -1 : 1;
    return x->die < y->die ? -1 : x->die > y->die;
}

static void build_index(pc_dwarf *d)
{
    d->indexed = 1;
    Dwarf_CU *cu = NULL;
    Dwarf_Die cudie;
    uint8_t unit_type;
    while (dwarf_get_units(d->dw, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0) {
        if (unit_type == DW_UT_type || unit_type == DW_UT_split_type)
            continue;
        gather(d, &cudie, 0);
    }
    if (!d->nfns)
        return;
    qsort(d->fns, d->nfns, sizeof *d->fns, by_lo);
    uint64_t m = 0;
    for (size_t i = 0; i < d->nfns; i++) {
        if (d->fns[i].hi > m)
            m = d->fns[i].hi;
        d->fns[i].max_hi = m;
    }
}

/* The smallest function range holding addr; NULL when none. */
static const fn_range *find_function(const pc_dwarf *d, uint64_t addr)
{
    size_t lo = 0, hi = d->nfns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->fns[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    const fn_range *best = NULL;
    for (size_t i = lo; i-- > 0 && d->fns[i].max_hi > addr;) {
        const fn_range *f = &d->fns[i];
        if (f->hi > addr && (!best || f->hi - f->lo < best->hi - best->lo))
            best = f;
    }
    return best;
}

/* Whether die has address attributes at all. */
static int has_pc_attrs(Dwarf_Die *die)
{
    return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

/* Walks down from die to the deepest inlined subroutine holding addr,
 * appending each one met to chain (outermost first).  Returns 1 when a
 * scope holding addr was found under die. */
static int descend(Dwarf_Die *die, uint64_t addr, Dwarf_Die *chain, size_t *n, int depth)
{
    Dwarf_Die child;
    if (depth > MAX_DEPTH || dwarf_child(die, &child) != 0)
        return 0;
    do {
        int tag = dwarf_tag(&child);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
            tag != DW_TAG_try_block && tag != DW_TAG_catch_block && tag != DW_TAG_with_stmt)
            continue;
        if (dwarf_haspc(&child, addr) > 0) {
            if (tag == DW_TAG_inlined_subroutine) {
                if (*n >= MAX_DEPTH)
                    return 1;
                chain[(*n)++] = child;
            }
            descend(&child, addr, chain, n, depth + 1);
            return 1;
        }
        /* A block without addresses may still hold inlined code. */
        if (tag != DW_TAG_inlined_subroutine && !has_pc_attrs(&child) &&
            descend(&child, addr, chain, n, depth + 1))
            return 1;
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

static const char *die_string(Dwarf_Die *die, unsigned name)
{
    Dwarf_Attribute a;
    if (!dwarf_attr_integrate(die, name, &a))
        return NULL;
    return dwarf_formstring(&a);
}

static const char *function_name(Dwarf_Die *die)
{
    const char *s = die_string(die, DW_AT_linkage_name);
    if (!s)
        s = die_string(die, DW_AT_MIPS_linkage_name);
    if (!s)
        s = die_string(die, DW_AT_name);
    return s;
}

static uint32_t die_udata(Dwarf_Die *die, unsigned name)
{
    Dwarf_Attribute a;
    Dwarf_Word w;
    if (!dwarf_attr(die, name, &a) || dwarf_formudata(&a, &w) != 0 || w > UINT32_MAX)
        return 0;
    return (uint32_t)w;
}

/* The address's own line in unit cudie into *e. */
static void address_line(Dwarf_Die *cudie, uint64_t addr, pc_inline *e)
{
    Dwarf_Line *line = dwarf_getsrc_die(cudie, addr);
    if (!line)
        return;
    e->file = dwarf_linesrc(line, NULL, NULL);
    int v;
    if (dwarf_lineno(line, &v) == 0 && v > 0)
        e->line = (uint32_t)v;
    if (dwarf_linecol(line, &v) == 0 && v > 0)
        e->column = (uint32_t)v;
}

size_t pc_dwarf_lookup(pc_dwarf *d, uint64_t vaddr, pc_inline *out, size_t max)
{
    if (!d || !out || !max)
        return 0;
    if (!d->indexed)
        build_index(d);
    const fn_range *f = find_function(d, vaddr);
    Dwarf_Die fn, cudie;
    if (!f || !dwarf_offdie(d->dw, f->die, &fn) || !dwarf_diecu(&fn, &cudie, NULL, NULL)) {
        /* No function: the line table alone, when a unit covers vaddr. */
        if (!dwarf_addrdie(d->dw, vaddr, &cudie))
            return 0;
        pc_inline e = { 0 };
        address_line(&cudie, vaddr, &e);
        if (!e.file && !e.line)
            return 0;
        out[0] = e;
        return 1;
    }
    Dwarf_Die chain[MAX_DEPTH + 1];
    size_t n = 0;
    chain[n++] = fn;
    descend(&fn, vaddr, chain, &n, 0);

    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    int have_files = -1;
    size_t count = 0;
    /* chain[n-1] is the innermost scope. */
    for (size_t i = n; i-- > 0 && count < max;) {
        pc_inline *e = &out[count++];
        memset(e, 0, sizeof *e);
        e->function = function_name(&chain[i]);
        if (i == n - 1) {
            address_line(&cudie, vaddr, e);
            continue;
        }
        /* The call site of the inner scope, in this one. */
        Dwarf_Die *inner = &chain[i + 1];
        e->line = die_udata(inner, DW_AT_call_line);
        e->column = die_udata(inner, DW_AT_call_column);
        Dwarf_Attribute a;
        Dwarf_Word idx;
        if (dwarf_attr(inner, DW_AT_call_file, &a) && dwarf_formudata(&a, &idx) == 0) {
            if (have_files < 0)
                have_files = dwarf_getsrcfiles(&cudie, &files, &nfiles) == 0;
            if (have_files && idx < nfiles)
                e->file = dwarf_filesrc(files, idx, NULL, NULL);
        }
    }
    return count;
}
