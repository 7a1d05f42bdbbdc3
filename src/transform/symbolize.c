/* Names for the frames the input could not name (pc_symbolize), from the
 * binaries the user points at (--symbols, --symfs): matched by build id
 * when the input has one, by path or file name otherwise, and never from
 * a file whose build id differs (symbol/elf.h).  Each file is read once,
 * for all the frames of its resource. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/demangle.h"
#include "base/error.h"
#include "base/hex.h"
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

typedef struct per_res {
    pc_elf *elf;
    uint8_t tried;
    size_t named, unnamed;
} per_res;

static int nomem(pc_error *err)
{
    return pc_fail(err, PC_ENOMEM, "out of memory");
}

/* The symbol's name as frames show it: demangled unless asked not to. */
static uint32_t shown_name(pc_profile *p, const pc_options *o, const char *raw)
{
    char *dm = o->mangled ? NULL : pc_demangle(raw);
    uint32_t id = pc_intern_cstr(p, dm ? dm : raw);
    free(dm);
    return id;
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
 * build ids (or paths) of the files not found. */
static void summary(pc_profile *p, const pc_options *o, const per_res *r, size_t named,
                    size_t total)
{
    char files[512] = "", missing[512] = "";
    size_t nf = 0, nm = 0, uf = 0, um = 0;
    for (size_t i = 0; i < p->res.n; i++) {
        if (!r[i].tried)
            continue;
        const char *what;
        char *list = r[i].elf ? files : missing;
        size_t *used = r[i].elf ? &uf : &um;
        if (r[i].elf) {
            nf++;
            what = pc_elf_path(r[i].elf);
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
    pc_log(o, named ? PC_LOG_NOTICE : PC_LOG_WARN,
           "symbols: named %zu of %zu unnamed frames from %zu files%s%s%s%s%s", named, total,
           nf, nf ? " (" : "", files, nf ? ")" : "", nm ? "; not found: " : "", missing);
}

int pc_symbolize(pc_profile *p, const pc_options *o, pc_error *err)
{
    /* The filesystem is looked at only when asked to. */
    if (!o->symbol_dirs.n && !(o->symfs && *o->symfs))
        return PC_OK;
    size_t total = 0;
    for (size_t f = 0; f < p->frame.n; f++)
        total += p->frame.unnamed[f] != PC_ADDR_NONE;
    if (!total) {
        pc_log(o, PC_LOG_INFO, "symbols: every frame already has a name");
        return PC_OK;
    }
    per_res *r = calloc(p->res.n + 1, sizeof *r);
    if (!r)
        return nomem(err);
    pc_symfind where = pc_symfind_of(o);
    size_t named = 0;
    for (size_t f = 0; f < p->frame.n; f++) {
        int kind = p->frame.unnamed[f];
        if (kind == PC_ADDR_NONE || p->frame.func[f] == PC_NONE)
            continue;
        uint32_t res = p->func.res[p->frame.func[f]];
        if (res == PC_NONE)
            continue;
        if (!r[res].tried) {
            r[res].tried = 1;
            r[res].elf = open_res(p, &where, res);
        }
        pc_elf *e = r[res].elf;
        uint64_t vaddr = p->frame.addr[f], start;
        if (!e || (kind == PC_ADDR_OFFSET && pc_elf_offset_to_vaddr(e, vaddr, &vaddr) < 0))
            continue;
        const char *name = pc_elf_symbol(e, vaddr, &start);
        if (!name) {
            r[res].unnamed++;
            continue;
        }
        uint32_t id = shown_name(p, o, name);
        uint32_t func = id == PC_NONE ? PC_NONE : pc_func(p, id, res);
        if (func == PC_NONE) {
            for (size_t i = 0; i < p->res.n; i++)
                pc_elf_close(r[i].elf);
            free(r);
            return nomem(err);
        }
        p->frame.func[f] = func;
        p->frame.unnamed[f] = PC_ADDR_NONE;
        r[res].named++;
        named++;
    }
    summary(p, o, r, named, total);
    for (size_t i = 0; i < p->res.n; i++)
        pc_elf_close(r[i].elf);
    free(r);
    return PC_OK;
}
