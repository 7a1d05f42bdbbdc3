/* ModuleSymbols and DeobfuscationMapping packets, read into the
 * reader's tables.  They are often appended to a trace after the
 * samples they name, so they are only collected here; names.c applies
 * them once the whole trace is read. */
#include <string.h>

#include "read/perfetto/reader.h"

int pf_on_module_symbols(pf_reader *r, pb_reader *pr)
{
    static const uint8_t ex[] = {ANY, L, L, L};
    pc_profile *p = r->p;
    pb_field f;
    int got;
    uint32_t path = PC_NONE, build = PC_NONE;
    pb_reader scan = *pr;
    while ((got = NEXT(r, &scan, &f, ex, "ModuleSymbols")) > 0) {
        if (f.number == 1)
            path = pc_intern(p, f.data, f.len);
        else if (f.number == 2)
            build = pf_build_id_string(r, f.data, f.len);
    }
    if (got < 0)
        return r->err->status;
    if (path == PC_NONE)
        path = pc_intern(p, "", 0);
    if (build == PC_NONE)
        build = pc_intern(p, "", 0);
    struct pc_col mcols[] = {PC_COL(r->mod.path), PC_COL(r->mod.build)};
    if (p->oom || pc_grow_cols(&r->mod.cap, r->mod.n + 1, mcols, 2) < 0)
        return pf_nomem(r);
    uint32_t mod = (uint32_t)r->mod.n++;
    r->mod.path[mod] = path;
    r->mod.build[mod] = build;
    while ((got = pb_next(pr, &f)) > 0) {
        if (f.number != 3 || f.wiretype != L)
            continue;
        static const uint8_t aex[] = {ANY, V, L};
        pb_reader sub;
        pb_field g;
        uint64_t addr = 0;
        uint32_t line0 = (uint32_t)r->line.n;
        pb_reader_sub(pr, &f, &sub);
        while ((got = NEXT(r, &sub, &g, aex, "AddressSymbols")) > 0) {
            if (g.number == 1) {
                if (pf_scalar(r, &sub, &g, "AddressSymbols") != PC_OK)
                    return r->err->status;
                addr = g.value;
                continue;
            }
            if (g.number != 2)
                continue;
            static const uint8_t lex[] = {ANY, L, L, V};
            pb_reader ls;
            pb_field h;
            uint32_t func = PC_NONE, file = PC_NONE, line = 0;
            pb_reader_sub(&sub, &g, &ls);
            while ((got = NEXT(r, &ls, &h, lex, "Line")) > 0) {
                if (h.number == 1)
                    func = pc_intern(p, h.data, h.len);
                else if (h.number == 2)
                    file = pc_intern(p, h.data, h.len);
                else if (h.number == 3) {
                    if (pf_scalar(r, &ls, &h, "Line") != PC_OK)
                        return r->err->status;
                    line = (uint32_t)h.value;
                }
            }
            if (got < 0)
                return r->err->status;
            if (func == PC_NONE)
                continue;
            struct pc_col lcols[] = {PC_COL(r->line.func), PC_COL(r->line.file),
                                     PC_COL(r->line.line)};
            if (p->oom || pc_grow_cols(&r->line.cap, r->line.n + 1, lcols, 3) < 0)
                return pf_nomem(r);
            r->line.func[r->line.n] = func;
            r->line.file[r->line.n] = file;
            r->line.line[r->line.n++] = line;
        }
        if (got < 0)
            return r->err->status;
        if (r->line.n == line0)
            continue;
        struct pc_col scols[] = {PC_COL(r->sym.mod), PC_COL(r->sym.line0),
                                 PC_COL(r->sym.n_lines), PC_COL(r->sym.addr)};
        if (pc_grow_cols(&r->sym.cap, r->sym.n + 1, scols, 4) < 0)
            return pf_nomem(r);
        r->sym.mod[r->sym.n] = mod;
        r->sym.line0[r->sym.n] = line0;
        r->sym.n_lines[r->sym.n] = (uint32_t)r->line.n - line0;
        r->sym.addr[r->sym.n++] = addr;
    }
    return got < 0 ? pf_wire_fail(r, pr, "ModuleSymbols") : PC_OK;
}

/* Classes and methods go into the deobfuscation model at once (its
 * strings are its own); names.c looks frames up in it at the end.  A
 * class without an obfuscated name is skipped, one without a
 * deobfuscated name keeps its name; fields (obfuscated_members) are not
 * used, frames name methods only. */
int pf_on_deobfuscation(pf_reader *r, pb_reader *pr)
{
    static const uint8_t ex[] = {ANY, L, V, L};
    pb_field f;
    int got;
    const char *pkg = "";
    size_t pkg_len = 0;
    pb_reader scan = *pr;
    while ((got = NEXT(r, &scan, &f, ex, "DeobfuscationMapping")) > 0)
        if (f.number == 1) {
            pkg = (const char *)f.data;
            pkg_len = f.len;
        }
    if (got < 0)
        return r->err->status;
    while ((got = pb_next(pr, &f)) > 0) {
        if (f.number != 3 || f.wiretype != L)
            continue;
        static const uint8_t cex[] = {ANY, L, L, L, L};
        pb_reader sub, ms;
        pb_field g, h;
        const char *obf = NULL, *deobf = NULL;
        size_t obf_len = 0, deobf_len = 0;
        int has_obf = 0, has_deobf = 0;
        pb_reader_sub(pr, &f, &sub);
        pb_reader cscan = sub;
        while ((got = NEXT(r, &cscan, &g, cex, "ObfuscatedClass")) > 0) {
            if (g.number == 1) {
                obf = (const char *)g.data;
                obf_len = g.len;
                has_obf = 1;
            } else if (g.number == 2) {
                deobf = (const char *)g.data;
                deobf_len = g.len;
                has_deobf = 1;
            }
        }
        if (got < 0)
            return r->err->status;
        if (!has_obf)
            continue;
        if (!has_deobf) {
            deobf = obf;
            deobf_len = obf_len;
        }
        uint32_t cls;
        if (pc_deobf_add_class(&r->deobf, pkg, pkg_len, obf, obf_len, deobf, deobf_len, 0,
                               &cls) < 0)
            return pf_nomem(r);
        while ((got = pb_next(&sub, &g)) > 0) {
            if (g.number != 4 || g.wiretype != L)
                continue;
            pc_deobf_method m;
            has_obf = has_deobf = 0;
            memset(&m, 0, sizeof m);
            pb_reader_sub(&sub, &g, &ms);
            while ((got = pb_next(&ms, &h)) > 0) {
                if (h.number == 1 && h.wiretype == L) {
                    m.obf = (const char *)h.data;
                    m.obf_len = h.len;
                    has_obf = 1;
                } else if (h.number == 2 && h.wiretype == L) {
                    m.orig = (const char *)h.data;
                    m.orig_len = h.len;
                    has_deobf = 1;
                } else if (h.wiretype == V && h.number >= 3 && h.number <= 6) {
                    uint32_t v = (uint32_t)h.value;
                    *(h.number == 3   ? &m.obf_start
                      : h.number == 4 ? &m.obf_end
                      : h.number == 5 ? &m.orig_start
                                      : &m.orig_end) = v;
                }
            }
            if (got < 0)
                return pf_wire_fail(r, &ms, "ObfuscatedMember");
            if (has_obf && has_deobf && pc_deobf_add_method(&r->deobf, cls, &m) < 0)
                return pf_nomem(r);
        }
        if (got < 0)
            return pf_wire_fail(r, &sub, "ObfuscatedClass");
    }
    return got < 0 ? pf_wire_fail(r, pr, "DeobfuscationMapping") : PC_OK;
}
