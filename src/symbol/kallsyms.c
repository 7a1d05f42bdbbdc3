/* The running kernel's symbols (see elf.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "base/hex.h"
#include "symbol/buildid.h"
#include "symbol/elf.h"
#include "symbol/symtab.h"

struct pc_ksyms {
    pc_symtab syms;
};

/* Whether the kernel whose notes are at notes_path has build id id. */
static int notes_match(const char *notes_path, const uint8_t *id, size_t len)
{
    FILE *f = fopen(notes_path, "rb");
    if (!f)
        return 0;
    /* The kernel's notes are a few hundred bytes; more is not notes. */
    static const size_t cap = 65536;
    uint8_t *buf = malloc(cap);
    size_t n = buf ? fread(buf, 1, cap, f) : 0;
    fclose(f);
    uint8_t got[PC_BUILDID_MAX];
    size_t got_len = buf ? pc_buildid_from_notes(buf, n, got, sizeof got) : 0;
    free(buf);
    return pc_buildid_matches(id, len, got, got_len);
}

/* Global text first among aliases: its name is the one callers use. */
static int type_rank(char type)
{
    switch (type) {
    case 'T': return 0;
    case 'W': return 1;
    case 't': return 2;
    case 'w': return 3;
    default: return -1;
    }
}

/* Reads the text symbols of kallsyms at path into t: 1 when some has an
 * address, 0 when none has (hidden, or no text at all), -1 on failure. */
static int read_kallsyms(const char *path, pc_symtab *t)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (getline(&line, &cap, f) > 0) {
        const char *p = line;
        uint64_t addr = 0;
        int digits = 0, v;
        while ((v = pc_hex_digit((unsigned char)*p)) >= 0 && digits < 17) {
            addr = addr << 4 | (uint64_t)v;
            p++;
            digits++;
        }
        if (digits == 0 || digits > 16 || *p != ' ')
            continue;
        int rank = type_rank(p[1]);
        if (rank < 0 || p[2] != ' ' || addr == 0)
            continue;
        const char *name = p + 3;
        size_t len = strcspn(name, " \t\r\n");
        if (len == 0)
            continue;
        if (pc_symtab_add(t, addr, 0, UINT64_MAX, name, len, (uint32_t)rank) < 0) {
            rc = -1;
            break;
        }
        rc = 1;
    }
    if (rc >= 0 && ferror(f))
        rc = -1;
    free(line);
    fclose(f);
    return rc;
}

pc_ksyms *pc_ksyms_open_at(const char *kallsyms_path, const char *notes_path,
                           const char *release, const uint8_t *build_id,
                           size_t build_id_len, const char *osrelease)
{
    if (pc_buildid_present(build_id, build_id_len)) {
        if (!notes_path || !notes_match(notes_path, build_id, build_id_len))
            return NULL;
    } else if (osrelease && *osrelease) {
        struct utsname u;
        if (!release) {
            if (uname(&u) != 0)
                return NULL;
            release = u.release;
        }
        if (strcmp(release, osrelease) != 0)
            return NULL;
    }
    pc_ksyms *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    if (read_kallsyms(kallsyms_path, &k->syms) <= 0) {
        pc_ksyms_close(k);
        return NULL;
    }
    pc_symtab_finish(&k->syms);
    return k;
}

pc_ksyms *pc_ksyms_open(const uint8_t *build_id, size_t build_id_len, const char *osrelease)
{
    return pc_ksyms_open_at("/proc/kallsyms", "/sys/kernel/notes", NULL, build_id,
                            build_id_len, osrelease);
}

const char *pc_ksyms_symbol(const pc_ksyms *k, uint64_t addr, uint64_t *start)
{
    return pc_symtab_find(&k->syms, addr, start);
}

void pc_ksyms_close(pc_ksyms *k)
{
    if (!k)
        return;
    pc_symtab_free(&k->syms);
    free(k);
}
