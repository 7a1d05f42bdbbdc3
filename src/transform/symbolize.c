/* Names for the frames the input could not name (pc_symbolize), from the
 * binaries the user points at (--symbols, --symfs): matched by build id
 * when the input has one, by path or file name otherwise, and never from
 * a file whose build id differs (symbol/elf.h).  Where the binary (or its
 * debug file) has DWARF, an address in inlined code becomes the chain of
 * functions inlined there, as addr2line -i gives it (symbol/dwarf.h).
 * A frame the input named already (PC_ADDR_NAMED) gets the chain and the
 * line too, but only from a file whose symbol table gives it the same
 * name: inputs without build ids are matched by path, and a wrong file
 * must not rename what was right.  Each file is read once, for all the
 * frames of its resource. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/demangle.h"
#include "base/error.h"
#include "base/hex.h"
#include "symbol/dwarf.h"
#include "symbol/elf.h"
#include "transform/transform.h"

/* The raw bytes of a build id written in hex (the model's form); 0 when
 * it is not plain hex of an even length (a Breakpad id is not an ELF's). */
static size_t build_id_bytes(const char *hex, size_t n, uint8_t *out, size_t cap)
{
    if (n % 2 || n / 2 > cap)
        return 0;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = pc_hex_digit((unsigned char)hex[2 * i]);
        int lo = pc_hex_digit((unsigned char)hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return 0;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return n / 2;
}

/* The symbol's name as frames show it: demangled unless asked not to.
 * *owned receives what to free. */
static const char *shown(const pc_options *o, const char *raw, char **owned)
{
    *owned = o->mangled ? NULL : pc_demangle(raw);
    return *owned ? *owned : raw;
}

static uint32_t shown_name(pc_profile *p, const pc_options *o, const char *raw)
{
    char *dm;
    uint32_t id = pc_intern_cstr(p, shown(o, raw, &dm));
    free(dm);
    return id;
}

typedef struct per_res {
    pc_elf *elf;
    pc_dwarf *dwarf;
    uint8_t tried, dwarf_tried;
    uint8_t wanted;  /* it has frames without names */
} per_res;

/* The deepest inline chain taken from DWARF. */
#define MAX_INLINE 64

static void free_res(per_res *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        pc_elf_close(r[i].elf);
        pc_dwarf_close(r[i].dwarf);
    }
    free(r);
}

/* The source file of func and the line of frame f, from a DWARF entry:
 * a function is in the file of its first position seen. */
static void place(pc_profile *p, uint32_t func, uint32_t f, const pc_inline *at)
{
    if (at->file && p->func.file[func] == PC_NONE)
        p->func.file[func] = pc_intern_cstr(p, at->file);
    p->frame.line[f] = at->line;
}

/* Names frame f from the DWARF chain at vaddr: the out-of-line function
 * for f itself, then a new frame per function inlined into it.  0 when
 * DWARF has no function there. */
static int name_from_dwarf(pc_profile *p, const pc_options *o, pc_dwarf *d, uint32_t f,
                           uint32_t res, uint64_t vaddr, pc_inlines *in, int *err)
{
    pc_inline chain[MAX_INLINE];
    size_t n = pc_dwarf_lookup(d, vaddr, chain, MAX_INLINE);
    if (!n || !chain[n - 1].function)
        return 0;
    uint32_t outer = shown_name(p, o, chain[n - 1].function);
    uint32_t func = outer == PC_NONE ? PC_NONE : pc_func(p, outer, res);
    if (func == PC_NONE) {
        *err = 1;
        return 0;
    }
    p->frame.func[f] = func;
    place(p, func, f, &chain[n - 1]);
    for (size_t k = n - 1; k-- > 0;) {
        if (!chain[k].function)
            continue;
        uint32_t name = shown_name(p, o, chain[k].function);
        uint32_t fn = name == PC_NONE ? PC_NONE : pc_func(p, name, res);
        uint32_t id = fn == PC_NONE ? PC_NONE : pc_inline_add(p, in, f, fn);
        if (id == PC_NONE) {
            *err = 1;
            return 0;
        }
        place(p, fn, id, &chain[k]);
    }
    return p->oom ? (*err = 1, 0) : 1;
}

static int nomem(pc_error *err)
{
    return pc_fail(err, PC_ENOMEM, "out of memory");
}

static pc_elf *open_res(pc_profile *p, const pc_symfind *where, uint32_t res)
{
    uint8_t bid[64];
    size_t blen = 0;
    uint32_t b = p->res.build[res];
    if (b != PC_NONE)
        blen = build_id_bytes(pc_str(&p->str, b), pc_str_len(&p->str, b), bid, sizeof bid);
    return pc_elf_open(where, pc_str(&p->str, p->res.name[res]), blen ? bid : NULL, blen);
}

/* One line: how many frames were named and from which files, and the
 * build ids (or paths) of the files not found for unnamed frames. */
static void summary(pc_profile *p, const pc_options *o, const per_res *r, size_t named,
                    size_t total, size_t placed)
{
    char files[512] = "", missing[512] = "", extra[96] = "";
    size_t nf = 0, nm = 0, uf = 0, um = 0;
    for (size_t i = 0; i < p->res.n; i++) {
        if (!r[i].tried || (!r[i].elf && !r[i].wanted))
            continue;
        const char *what;
        char *list = r[i].elf ? files : missing;
        size_t *used = r[i].elf ? &uf : &um;
        if (r[i].elf) {
            nf++;
            what = pc_elf_symbol_path(r[i].elf);
        } else {
            nm++;
            what = p->res.build[i] != PC_NONE && pc_str_len(&p->str, p->res.build[i])
                       ? pc_str(&p->str, p->res.build[i]) : pc_str(&p->str, p->res.name[i]);
        }
        if (*used < 400) {
            int n = snprintf(list + *used, 512 - *used, "%s%s", *used ? ", " : "", what);
            if (n > 0)
                *used += (size_t)n < 512 - *used ? (size_t)n : 512 - *used - 1;
        }
    }
    if (placed)
        snprintf(extra, sizeof extra, "%slines and inline chains for %zu named frames",
                 total ? "; " : "", placed);
    else if (!total)
        snprintf(extra, sizeof extra, "no frame needed a name, and none got lines or inline "
                 "chains");
    char head[96] = "";
    if (total)
        snprintf(head, sizeof head, "named %zu of %zu unnamed frames", named, total);
    pc_log(o, named || placed || !total ? PC_LOG_NOTICE : PC_LOG_WARN,
           "symbols: %s%s from %zu files%s%s%s%s%s", head, extra, nf, nf ? " (" : "", files,
           nf ? ")" : "", nm ? "; not found: " : "", missing);
}

/* Whether the symbol e has at vaddr reads as the function frame f has:
 * then e is the file the input named f from. */
static int same_symbol(const pc_profile *p, const pc_options *o, pc_elf *e, uint32_t f,
                       uint64_t vaddr)
{
    uint64_t start;
    const char *raw = pc_elf_symbol(e, vaddr, &start);
    if (!raw)
        return 0;
    char *dm;
    const char *s = shown(o, raw, &dm);
    uint32_t name = p->func.name[p->frame.func[f]];
    size_t n = strlen(s);
    int same = n == pc_str_len(&p->str, name) && memcmp(s, pc_str(&p->str, name), n) == 0;
    free(dm);
    return same;
}

int pc_symbolize(pc_profile *p, const pc_options *o, pc_error *err)
{
    /* The filesystem is looked at only when asked to. */
    if (!o->symbol_dirs.n && !(o->symfs && *o->symfs))
        return PC_OK;
    size_t total = 0, refinable = 0;
    for (size_t f = 0; f < p->frame.n; f++) {
        total += p->frame.unnamed[f] && !(p->frame.unnamed[f] & PC_ADDR_NAMED);
        refinable += (p->frame.unnamed[f] & PC_ADDR_NAMED) != 0;
    }
    if (!total && !refinable) {
        pc_log(o, PC_LOG_INFO, "symbols: no frame has an address in a binary to look up");
        return PC_OK;
    }
    per_res *r = calloc(p->res.n + 1, sizeof *r);
    size_t n_frames = p->frame.n;
    pc_inlines in = {0};
    in.first = calloc(n_frames + 1, sizeof *in.first);
    in.count = calloc(n_frames + 1, sizeof *in.count);
    if (!r || !in.first || !in.count) {
        free(r);
        free(in.first);
        free(in.count);
        return nomem(err);
    }
    pc_symfind where = pc_symfind_of(o);
    size_t named = 0, placed = 0;
    int failed = 0;
    for (size_t f = 0; f < n_frames && !failed; f++) {
        int had = p->frame.unnamed[f];
        int kind = PC_ADDR_KIND(had), was_named = (had & PC_ADDR_NAMED) != 0;
        if (kind == PC_ADDR_NONE || p->frame.func[f] == PC_NONE)
            continue;
        p->frame.unnamed[f] = was_named ? PC_ADDR_NONE : (uint8_t)had;
        uint32_t res = p->func.res[p->frame.func[f]];
        if (res == PC_NONE)
            continue;
        r[res].wanted |= !was_named;
        if (!r[res].tried) {
            r[res].tried = 1;
            r[res].elf = open_res(p, &where, res);
        }
        pc_elf *e = r[res].elf;
        uint64_t vaddr = p->frame.addr[f], start;
        if (!e || (kind == PC_ADDR_OFFSET && pc_elf_offset_to_vaddr(e, vaddr, &vaddr) < 0))
            continue;
        if (!r[res].dwarf_tried) {
            r[res].dwarf_tried = 1;
            r[res].dwarf = pc_dwarf_open(pc_elf_symbol_path(e));
            if (!r[res].dwarf && pc_elf_symbol_path(e) != pc_elf_path(e))
                r[res].dwarf = pc_dwarf_open(pc_elf_path(e));
        }
        if (was_named) {
            if (r[res].dwarf && same_symbol(p, o, e, (uint32_t)f, vaddr) &&
                name_from_dwarf(p, o, r[res].dwarf, (uint32_t)f, res, vaddr, &in, &failed))
                placed++;
            continue;
        }
        if (r[res].dwarf &&
            name_from_dwarf(p, o, r[res].dwarf, (uint32_t)f, res, vaddr, &in, &failed)) {
            p->frame.unnamed[f] = PC_ADDR_NONE;
            named++;
            continue;
        }
        if (failed)
            break;
        const char *name = pc_elf_symbol(e, vaddr, &start);
        if (!name)
            continue;
        uint32_t id = shown_name(p, o, name);
        uint32_t func = id == PC_NONE ? PC_NONE : pc_func(p, id, res);
        if (func == PC_NONE) {
            failed = 1;
            break;
        }
        p->frame.func[f] = func;
        p->frame.unnamed[f] = PC_ADDR_NONE;
        named++;
    }
    if (!failed && in.n && pc_inline_expand(p, &in, n_frames) < 0)
        failed = 1;
    if (!failed)
        summary(p, o, r, named, total, placed);
    free_res(r, p->res.n);
    free(in.first);
    free(in.count);
    free(in.frames);
    return failed ? nomem(err) : PC_OK;
}
