/* ModuleSymbols and DeobfuscationMapping packets, read into the
 * reader's tables.  They are often appended to a trace after the
 * samples they name, so they are only collected here; names.c applies
 * them once the whole trace is read. */
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

int pf_on_deobfuscation(pf_reader *r, pb_reader *pr)
{
    static const uint8_t ex[] = {ANY, L, V, L};
    pc_profile *p = r->p;
    pb_field f;
    int got;
    uint32_t pkg = PC_NONE;
    pb_reader scan = *pr;
    while ((got = NEXT(r, &scan, &f, ex, "DeobfuscationMapping")) > 0)
        if (f.number == 1)
            pkg = pc_intern(p, f.data, f.len);
    if (got < 0)
        return r->err->status;
    if (pkg == PC_NONE && (pkg = pc_intern(p, "", 0)) == PC_NONE)
        return pf_nomem(r);
    while ((got = pb_next(pr, &f)) > 0) {
        if (f.number != 3 || f.wiretype != L)
            continue;
        static const uint8_t cex[] = {ANY, L, L, L, L};
        pb_reader sub, ms;
        pb_field g, h;
        uint32_t obf = PC_NONE, deobf = PC_NONE;
        pb_reader_sub(pr, &f, &sub);
        pb_reader cscan = sub;
        while ((got = NEXT(r, &cscan, &g, cex, "ObfuscatedClass")) > 0) {
            if (g.number == 1)
                obf = pc_intern(p, g.data, g.len);
            else if (g.number == 2)
                deobf = pc_intern(p, g.data, g.len);
        }
        if (got < 0)
            return r->err->status;
        if (obf == PC_NONE)
            continue;
        if (deobf == PC_NONE)
            deobf = obf;
        struct pc_col ccols[] = {PC_COL(r->cls.pkg), PC_COL(r->cls.obf), PC_COL(r->cls.deobf)};
        if (p->oom || pc_grow_cols(&r->cls.cap, r->cls.n + 1, ccols, 3) < 0)
            return pf_nomem(r);
        uint32_t cls = (uint32_t)r->cls.n++;
        r->cls.pkg[cls] = pkg;
        r->cls.obf[cls] = obf;
        r->cls.deobf[cls] = deobf;
        while ((got = pb_next(&sub, &g)) > 0) {
            if (g.number != 4 || g.wiretype != L)
                continue;
            uint32_t mo = PC_NONE, md = PC_NONE, ls = 0, le = 0;
            pb_reader_sub(&sub, &g, &ms);
            while ((got = pb_next(&ms, &h)) > 0) {
                if (h.number == 1 && h.wiretype == L)
                    mo = pc_intern(p, h.data, h.len);
                else if (h.number == 2 && h.wiretype == L)
                    md = pc_intern(p, h.data, h.len);
                else if (h.number == 3 && h.wiretype == V)
                    ls = (uint32_t)h.value;
                else if (h.number == 4 && h.wiretype == V)
                    le = (uint32_t)h.value;
            }
            if (got < 0)
                return pf_wire_fail(r, &ms, "ObfuscatedMember");
            if (mo == PC_NONE || md == PC_NONE)
                continue;
            struct pc_col mcols[] = {PC_COL(r->meth.cls), PC_COL(r->meth.obf),
                                     PC_COL(r->meth.deobf), PC_COL(r->meth.line_start),
                                     PC_COL(r->meth.line_end)};
            if (p->oom || pc_grow_cols(&r->meth.cap, r->meth.n + 1, mcols, 5) < 0)
                return pf_nomem(r);
            r->meth.cls[r->meth.n] = cls;
            r->meth.obf[r->meth.n] = mo;
            r->meth.deobf[r->meth.n] = md;
            r->meth.line_start[r->meth.n] = ls;
            r->meth.line_end[r->meth.n++] = le;
        }
        if (got < 0)
            return pf_wire_fail(r, &sub, "ObfuscatedClass");
    }
    return got < 0 ? pf_wire_fail(r, pr, "DeobfuscationMapping") : PC_OK;
}
