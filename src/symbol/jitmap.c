/* JIT maps, /tmp/perf-PID.map (see elf.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "symbol/elf.h"
#include "symbol/symtab.h"

struct pc_jitmap {
    pc_symtab syms;
};

/* A hexadecimal field with an optional 0x, followed by a blank; -1 when
 * the text is not one. */
static int hex_field(const char **pp, uint64_t *out)
{
    const char *p = *pp;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        p += 2;
    uint64_t v = 0;
    int digits = 0;
    for (;; p++, digits++) {
        int d = pc_hex_digit((unsigned char)*p);
        if (d < 0)
            break;
        if (v >> 60)
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    if (digits == 0 || (*p != ' ' && *p != '\t'))
        return -1;
    while (*p == ' ' || *p == '\t')
        p++;
    *pp = p;
    *out = v;
    return 0;
}

pc_jitmap *pc_jitmap_open(const pc_symfind *where, int64_t pid)
{
    char path[4096];
    const char *root = where && where->symfs ? where->symfs : "";
    int n = snprintf(path, sizeof path, "%s/tmp/perf-%" PRId64 ".map", root, pid);
    if (n < 0 || (size_t)n >= sizeof path)
        return NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    pc_jitmap *m = calloc(1, sizeof *m);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int failed = !m;
    uint32_t lineno = 0;
    while (!failed && (len = getline(&line, &cap, f)) > 0) {
        lineno++;
        const char *p = line;
        uint64_t start, size;
        if (hex_field(&p, &start) < 0 || hex_field(&p, &size) < 0 || size == 0)
            continue;
        size_t name_len = (size_t)len - (size_t)(p - line);
        while (name_len > 0 && (p[name_len - 1] == '\n' || p[name_len - 1] == '\r'))
            name_len--;
        if (name_len == 0 || memchr(p, 0, name_len))
            continue;
        /* Of entries at one start, the latest line wins: a runtime that
         * compiles code again at the same place writes the new name last. */
        if (pc_symtab_add(&m->syms, start, size, UINT64_MAX, p, name_len, UINT32_MAX - lineno) < 0)
            failed = 1;
    }
    free(line);
    fclose(f);
    if (failed || m->syms.n == 0) {
        pc_jitmap_close(m);
        return NULL;
    }
    pc_symtab_finish(&m->syms);
    return m;
}

const char *pc_jitmap_symbol(const pc_jitmap *m, uint64_t addr, uint64_t *start)
{
    return pc_symtab_find(&m->syms, addr, start);
}

void pc_jitmap_close(pc_jitmap *m)
{
    if (!m)
        return;
    pc_symtab_free(&m->syms);
    free(m);
}
