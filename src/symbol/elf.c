/* ELF symbol tables through elfutils' libelf (see elf.h).
 *
 * Files are read with ELF_C_READ rather than mapped: a binary truncated or
 * rewritten while it is open would make a mapping fault, and pread only
 * fails.  Everything needed is copied out while the file is open (symbols,
 * loadable segments), so a pc_elf holds no descriptor. */
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"
#include "symbol/buildid.h"
#include "symbol/elf.h"
#include "symbol/symtab.h"

typedef struct pc_load {
    uint64_t offset, filesz, vaddr;
    int exec;
} pc_load;

struct pc_elf {
    char *path;
    char *sym_path;   /* where the symbols came from, when not path */
    pc_symtab syms;
    pc_load *loads;
    size_t nloads;
};

static pthread_once_t version_once = PTHREAD_ONCE_INIT;
static int version_ok;

static void set_version(void)
{
    version_ok = elf_version(EV_CURRENT) != EV_NONE;
}

/* An open candidate: the descriptor and libelf's handle on it. */
typedef struct candidate {
    int fd;
    Elf *elf;
} candidate;

static void candidate_close(candidate *c)
{
    if (c->elf)
        elf_end(c->elf);
    if (c->fd >= 0)
        close(c->fd);
    c->elf = NULL;
    c->fd = -1;
}

/* The build id in the notes of data (a note section or segment, already
 * in memory byte order); its length, 0 when none. */
static size_t note_build_id(Elf_Data *data, uint8_t *out, size_t cap)
{
    if (!data || !data->d_buf)
        return 0;
    size_t off = 0, next;
    GElf_Nhdr nh;
    size_t name_off, desc_off;
    while (off < data->d_size &&
           (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && nh.n_descsz > 0 &&
            memcmp((const char *)data->d_buf + name_off, "GNU", 4) == 0) {
            size_t n = nh.n_descsz < cap ? nh.n_descsz : cap;
            memcpy(out, (const char *)data->d_buf + desc_off, n);
            return n;
        }
        off = next;
    }
    return 0;
}

/* The build id of elf, from its note sections, else (a file without
 * section headers) its note segments. */
static size_t elf_build_id(Elf *elf, uint8_t *out, size_t cap)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (d && d->d_type == ELF_T_NHDR) {
            size_t n = note_build_id(d, out, cap);
            if (n)
                return n;
        }
    }
    size_t nph;
    if (elf_getphdrnum(elf, &nph) != 0)
        return 0;
    if (nph > INT_MAX)
        nph = INT_MAX;
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE || ph.p_filesz == 0)
            continue;
        Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
                                           ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
        size_t n = note_build_id(d, out, cap);
        if (n)
            return n;
    }
    return 0;
}

/* Opens path if it is an ELF file whose build id agrees with the recorded
 * one (see pc_buildid_matches); 0 with *c open, else -1. */
static int candidate_open(const char *path, const uint8_t *bid, size_t bid_len, candidate *c)
{
    c->fd = -1;
    c->elf = NULL;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    c->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (c->fd < 0)
        return -1;
    c->elf = elf_begin(c->fd, ELF_C_READ, NULL);
    if (!c->elf || elf_kind(c->elf) != ELF_K_ELF || gelf_getclass(c->elf) == ELFCLASSNONE) {
        candidate_close(c);
        return -1;
    }
    uint8_t got[PC_BUILDID_MAX];
    size_t got_len = elf_build_id(c->elf, got, sizeof got);
    if (pc_buildid_present(bid, bid_len) && !pc_buildid_matches(bid, bid_len, got, got_len)) {
        candidate_close(c);
        return -1;
    }
    return 0;
}

static char *join(const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *s = malloc(la + lb + lc + 1);
    if (s) {
        memcpy(s, a, la);
        memcpy(s + la, b, lb);
        memcpy(s + la + lb, c, lc + 1);
    }
    return s;
}

/* Tries path: on success *out owns it and *c is open. */
static int try_path(char *path, const uint8_t *bid, size_t bid_len, candidate *c, char **out)
{
    if (!path)
        return -1;
    if (candidate_open(path, bid, bid_len, c) == 0) {
        *out = path;
        return 0;
    }
    free(path);
    return -1;
}

/* The build-id cache entry DIR/.build-id/XX/REST: perf links it to the
 * binary, or makes it a folder holding "elf" (the binary) and "debug"
 * (its debug info). */
static int try_cache(const char *dir, const char *hex, const uint8_t *bid, size_t bid_len,
                     candidate *c, char **out)
{
    char *entry = pc_buildid_path(dir, hex, "");
    if (!entry)
        return -1;
    struct stat st;
    int rc = -1;
    if (stat(entry, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            rc = try_path(join(entry, "/elf", ""), bid, bid_len, c, out);
            if (rc != 0)
                rc = try_path(join(entry, "/debug", ""), bid, bid_len, c, out);
        } else {
            rc = try_path(entry, bid, bid_len, c, out);
            entry = NULL;
        }
    }
    free(entry);
    return rc;
}

/* perf's build-id cache: where->debug_dir, else $HOME/.debug (malloc'd
 * in *owned then), else NULL. */
static const char *cache_dir(const pc_symfind *where, char **owned)
{
    *owned = NULL;
    if (where && where->debug_dir)
        return where->debug_dir;
    const char *home = getenv("HOME");
    if (home && *home)
        return *owned = join(home, "/.debug", "");
    return NULL;
}

static int try_build_id(const pc_symfind *where, const char *hex, const uint8_t *bid,
                        size_t bid_len, candidate *c, char **out)
{
    char *home_debug;
    const char *dir = cache_dir(where, &home_debug);
    int rc = -1;
    if (dir)
        rc = try_cache(dir, hex, bid, bid_len, c, out);
    free(home_debug);
    if (rc == 0)
        return 0;
    return try_path(pc_buildid_path("/usr/lib/debug", hex, ".debug"), bid, bid_len, c, out);
}

/* The --symbols folders: by build id, by the recorded path under the
 * folder, by the file's name.  A file found by its name alone must carry
 * name_bid when one is given (the build id of the file at the recorded
 * path, when none was recorded). */
static int try_dirs(const pc_symfind *where, const char *path, const uint8_t *bid,
                    size_t bid_len, const uint8_t *name_bid, size_t name_bid_len, candidate *c,
                    char **out)
{
    if (!name_bid_len) {
        name_bid = bid;
        name_bid_len = bid_len;
    }
    char hex[2 * PC_BUILDID_MAX + 1] = "";
    if (pc_buildid_present(bid, bid_len))
        pc_buildid_hex(bid, pc_buildid_trimmed_len(bid, bid_len), hex);
    const char *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path;
    for (size_t i = 0; i < where->n_dirs; i++) {
        const char *dir = where->dirs[i];
        if (!dir || !*dir)
            continue;
        if (strlen(hex) >= 4 &&
            (try_path(pc_buildid_path(dir, hex, ""), bid, bid_len, c, out) == 0 ||
             try_path(pc_buildid_path(dir, hex, ".debug"), bid, bid_len, c, out) == 0))
            return 0;
        if (path && *path) {
            const char *sep = path[0] == '/' ? "" : "/";
            if (try_path(join(dir, sep, path), bid, bid_len, c, out) == 0)
                return 0;
        }
        if (base && *base &&
            try_path(join(dir, "/", base), name_bid, name_bid_len, c, out) == 0)
            return 0;
    }
    return -1;
}

/* The build id of the file at the recorded path (under symfs when one is
 * given); 0 when there is none or no such file. */
static size_t recorded_file_build_id(const pc_symfind *where, const char *path, uint8_t *out,
                                     size_t cap)
{
    char *at = where && where->symfs && *where->symfs ? join(where->symfs, "", path)
                                                      : join(path, "", "");
    candidate c;
    size_t n = 0;
    if (at && candidate_open(at, NULL, 0, &c) == 0) {
        n = elf_build_id(c.elf, out, cap);
        candidate_close(&c);
    }
    free(at);
    return n;
}

/* Finds the binary and leaves it open in *c; its path, or NULL. */
static char *locate_open(const pc_symfind *where, const char *path, const uint8_t *bid,
                         size_t bid_len, candidate *c)
{
    pthread_once(&version_once, set_version);
    c->fd = -1;
    c->elf = NULL;
    if (!version_ok)
        return NULL;
    char *found = NULL;
    /* Without a recorded build id, a file at the recorded path is likely
     * the one the input was made from (perf script named its frames from
     * it): a copy found by its file name alone, which may be any build of
     * a library of that name, must carry the same build id.  A copy at
     * the recorded path under a --symbols folder is the user's word. */
    uint8_t local[PC_BUILDID_MAX];
    size_t local_len = 0;
    if (!pc_buildid_present(bid, bid_len) && path && path[0] == '/')
        local_len = recorded_file_build_id(where, path, local, sizeof local);
    if (pc_buildid_present(bid, bid_len)) {
        /* As recorded, then without perf's zero padding to 20 bytes, for
         * the shorter ids (md5, 8-byte xxhash) the cache is named by. */
        size_t lens[2] = { bid_len, pc_buildid_trimmed_len(bid, bid_len) };
        for (int i = 0; i < 2; i++) {
            if (i == 1 && lens[1] == lens[0])
                break;
            char hex[2 * PC_BUILDID_MAX + 1];
            pc_buildid_hex(bid, lens[i], hex);
            if (strlen(hex) >= 4 && try_build_id(where, hex, bid, bid_len, c, &found) == 0)
                return found;
        }
    }
    if (where && try_dirs(where, path, bid, bid_len, local, local_len, c, &found) == 0)
        return found;
    if (!path || !*path)
        return NULL;
    if (where && where->symfs && *where->symfs) {
        const char *sep = path[0] == '/' ? "" : "/";
        if (try_path(join(where->symfs, sep, path), bid, bid_len, c, &found) == 0)
            return found;
    }
    if (try_path(join(path, "", ""), bid, bid_len, c, &found) == 0)
        return found;
    return NULL;
}

char *pc_elf_locate(const pc_symfind *where, const char *path, const uint8_t *build_id,
                    size_t build_id_len)
{
    candidate c;
    char *found = locate_open(where, path, build_id, build_id_len, &c);
    candidate_close(&c);
    return found;
}

/* How same-address symbols rank: a global name is the one a program's
 * source knows, a weak one its usual alias, a local one an internal. */
static uint32_t bind_rank(unsigned bind)
{
    switch (bind) {
    case STB_GLOBAL:
    case STB_GNU_UNIQUE:
        return 0;
    case STB_WEAK:
        return 1;
    default:
        return 2;
    }
}

/* Reads the function symbols of the table in scn into t; their count, or
 * -1 when memory runs out. */
static long read_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, int arm, pc_symtab *t)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    size_t entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
    if (!d || !d->d_buf || d->d_type != ELF_T_SYM || entsize == 0)
        return 0;
    size_t nshdr = 0;
    if (elf_getshdrnum(elf, &nshdr) != 0)
        nshdr = 0;
    /* The data's own size, not the header's: a damaged header may claim
     * more than the file holds. */
    size_t n = d->d_size / entsize;
    if (n > INT_MAX)
        n = INT_MAX;
    long count = 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(d, (int)i, &sym))
            break;
        unsigned type = GELF_ST_TYPE(sym.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_value == 0 ||
            sym.st_shndx == SHN_UNDEF)
            continue;
        const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
        if (!name || !*name)
            continue;
        uint64_t value = sym.st_value;
        /* ARM marks Thumb functions with the low bit of their address. */
        if (arm)
            value &= ~(uint64_t)1;
        uint64_t limit = UINT64_MAX;
        if (sym.st_shndx < SHN_LORESERVE && sym.st_shndx < nshdr) {
            GElf_Shdr ssh;
            Elf_Scn *s = elf_getscn(elf, sym.st_shndx);
            if (s && gelf_getshdr(s, &ssh) && (ssh.sh_flags & SHF_ALLOC) &&
                ssh.sh_addr <= value && ssh.sh_addr + ssh.sh_size > value)
                limit = ssh.sh_addr + ssh.sh_size;
        }
        if (pc_symtab_add(t, value, sym.st_size, limit, name, strlen(name),
                          bind_rank(GELF_ST_BIND(sym.st_info))) < 0)
            return -1;
        count++;
    }
    return count;
}

/* The symbols of .symtab when it names functions, else of .dynsym (what
 * a stripped binary keeps).  Returns 1 for .symtab's, 2 for .dynsym's, 0
 * for none, -1 on failure. */
static int load_symbols(Elf *elf, pc_symtab *t)
{
    GElf_Ehdr eh;
    if (!gelf_getehdr(elf, &eh))
        return -1;
    int arm = eh.e_machine == EM_ARM;
    int types[2] = { SHT_SYMTAB, SHT_DYNSYM };
    for (int k = 0; k < 2; k++) {
        Elf_Scn *scn = NULL;
        while ((scn = elf_nextscn(elf, scn))) {
            GElf_Shdr sh;
            if (!gelf_getshdr(scn, &sh) || sh.sh_type != (GElf_Word)types[k])
                continue;
            long n = read_symbols(elf, scn, &sh, arm, t);
            if (n < 0)
                return -1;
            if (n > 0)
                return k + 1;
        }
    }
    return 0;
}

/* A stripped binary's full symbol table is in its separate debug file,
 * where distributions put it (/usr/lib/debug/.build-id/XX/REST.debug)
 * and where perf's cache keeps it (DIR/.build-id/XX/REST/debug): that
 * file's .symtab, when it has one with the same build id, replaces the
 * .dynsym symbols.  The binary's own segments still map offsets. */
static int debug_symbols(const pc_symfind *where, const uint8_t *bid, size_t bid_len,
                         pc_symtab *t)
{
    if (!pc_buildid_present(bid, bid_len))
        return 0;
    char hex[2 * PC_BUILDID_MAX + 1];
    pc_buildid_hex(bid, pc_buildid_trimmed_len(bid, bid_len), hex);
    if (strlen(hex) < 4)
        return 0;
    char *home_debug;
    const char *dir = cache_dir(where, &home_debug);
    char *paths[2] = { dir ? pc_buildid_path(dir, hex, "/debug") : NULL,
                       pc_buildid_path("/usr/lib/debug", hex, ".debug") };
    free(home_debug);
    int got = 0;
    for (int i = 0; i < 2; i++) {
        candidate c;
        c.fd = -1;
        c.elf = NULL;
        if (paths[i] && candidate_open(paths[i], bid, bid_len, &c) == 0) {
            pc_symtab full;
            memset(&full, 0, sizeof full);
            if (load_symbols(c.elf, &full) == 1) {
                pc_symtab_free(t);
                *t = full;
                got = 1;
                i = 2;
            } else {
                pc_symtab_free(&full);
            }
            candidate_close(&c);
        }
    }
    free(paths[0]);
    free(paths[1]);
    return got;
}

/* A copy with symbols of the binary found stripped (the build-id cache
 * keeps what was recorded, which may be a stripped file), matched by
 * build id: in the --symbols folders, else at the recorded path (under
 * symfs), where an unstripped build of the same id often still is. */
static int copy_symbols(const pc_symfind *where, const char *path, const char *opened,
                        const uint8_t *bid, size_t bid_len, pc_symtab *t, char **from)
{
    if (!pc_buildid_present(bid, bid_len))
        return 0;
    candidate c;
    char *found = NULL;
    c.fd = -1;
    c.elf = NULL;
    int located = where && where->n_dirs &&
                  try_dirs(where, path, bid, bid_len, NULL, 0, &c, &found) == 0;
    if (!located && path && path[0] == '/') {
        char *at = where && where->symfs && *where->symfs ? join(where->symfs, "", path)
                                                          : join(path, "", "");
        /* The same file again has nothing more to give. */
        if (at && strcmp(at, opened) == 0)
            free(at);
        else if (try_path(at, bid, bid_len, &c, &found) == 0)  /* frees at when not */
            located = 1;
    }
    if (!located)
        return 0;
    pc_symtab full;
    memset(&full, 0, sizeof full);
    int got = load_symbols(c.elf, &full) == 1;
    if (got) {
        pc_symtab_free(t);
        *t = full;
        *from = found;
        found = NULL;
    } else {
        pc_symtab_free(&full);
    }
    candidate_close(&c);
    free(found);
    return got;
}

static int load_segments(Elf *elf, pc_elf *e)
{
    size_t nph;
    if (elf_getphdrnum(elf, &nph) != 0)
        return 0;
    if (nph > INT_MAX)
        nph = INT_MAX;
    size_t cap = 0;
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        if (pc_grow(&e->loads, &cap, e->nloads + 1, sizeof *e->loads, 4) < 0)
            return -1;
        e->loads[e->nloads++] = (pc_load){ .offset = ph.p_offset, .filesz = ph.p_filesz,
                                           .vaddr = ph.p_vaddr, .exec = (ph.p_flags & PF_X) != 0 };
    }
    return 0;
}

pc_elf *pc_elf_open(const pc_symfind *where, const char *path, const uint8_t *build_id,
                    size_t build_id_len)
{
    candidate c;
    char *found = locate_open(where, path, build_id, build_id_len, &c);
    if (!found)
        return NULL;
    pc_elf *e = calloc(1, sizeof *e);
    int from = e ? load_symbols(c.elf, &e->syms) : -1;
    if (!e || from < 0 || load_segments(c.elf, e) < 0) {
        candidate_close(&c);
        free(found);
        if (e) {
            pc_symtab_free(&e->syms);
            free(e->loads);
            free(e);
        }
        return NULL;
    }
    /* Without a recorded build id, the file's own finds its debug file. */
    uint8_t own[PC_BUILDID_MAX];
    size_t own_len = pc_buildid_present(build_id, build_id_len)
                         ? 0 : elf_build_id(c.elf, own, sizeof own);
    candidate_close(&c);
    e->path = found;
    const uint8_t *id = own_len ? own : build_id;
    size_t id_len = own_len ? own_len : build_id_len;
    if (from != 1 && !debug_symbols(where, id, id_len, &e->syms))
        copy_symbols(where, path, found, id, id_len, &e->syms, &e->sym_path);
    pc_symtab_finish(&e->syms);
    return e;
}

const char *pc_elf_path(const pc_elf *e)
{
    return e->path;
}

const char *pc_elf_symbol_path(const pc_elf *e)
{
    return e->sym_path ? e->sym_path : e->path;
}

int pc_elf_offset_to_vaddr(const pc_elf *e, uint64_t off, uint64_t *vaddr)
{
    /* Executable segments first: code is what is symbolized, and a
     * damaged file's overlapping segments then still give the text's. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < e->nloads; i++) {
            const pc_load *l = &e->loads[i];
            if ((pass == 0) != (l->exec != 0))
                continue;
            if (off >= l->offset && off - l->offset < l->filesz) {
                *vaddr = l->vaddr + (off - l->offset);
                return 0;
            }
        }
    return -1;
}

const char *pc_elf_symbol(const pc_elf *e, uint64_t vaddr, uint64_t *start)
{
    return pc_symtab_find(&e->syms, vaddr, start);
}

void pc_elf_close(pc_elf *e)
{
    if (!e)
        return;
    pc_symtab_free(&e->syms);
    free(e->loads);
    free(e->path);
    free(e->sym_path);
    free(e);
}
