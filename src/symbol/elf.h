/* Names for code addresses from the binaries on this machine: ELF symbol
 * tables (.symtab, else .dynsym), the running kernel's /proc/kallsyms, and
 * the JIT maps runtimes write as /tmp/perf-PID.map.
 *
 * A recording names its binaries by the path they were mapped from and,
 * usually, their build id.  The file found must be that binary: a file
 * whose build id differs from the recorded one is never used, whatever
 * its name, so a rebuilt library names nothing instead of naming wrongly.
 *
 * Objects here belong to one conversion; separate objects may be used on
 * separate threads.  Nothing here prints. */
#ifndef PROFCONV_SYMBOL_ELF_H
#define PROFCONV_SYMBOL_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "profconv.h"

/* Where binaries are looked for. */
typedef struct pc_symfind {
    /* A root the recorded paths are found under (perf's --symfs), or
     * NULL: the paths as recorded, on this machine. */
    const char *symfs;
    /* perf's build-id cache, or NULL for $HOME/.debug.  Looked in as
     * DIR/.build-id/XX/REST (perf's layout: a link to the binary, or a
     * folder holding "elf" or "debug"). */
    const char *debug_dir;
    /* Folders of binaries (--symbols), searched after the caches: by
     * build id (DIR/.build-id/XX/REST, or REST.debug), then by the
     * recorded path under DIR (as simpleperf's binary_cache keeps a
     * device's files), then by the file's name alone (DIR/NAME). */
    const char *const *dirs;
    size_t n_dirs;
} pc_symfind;

/* Where the options say to look: o->symfs and o->symbol_dirs, perf's
 * cache in $HOME/.debug. */
static inline pc_symfind pc_symfind_of(const pc_options *o)
{
    pc_symfind w = {o->symfs, NULL, o->symbol_dirs.items, o->symbol_dirs.n};
    return w;
}

/* The path of the binary recorded as path with build id build_id (raw
 * bytes; len 0 when the recording has none), malloc'd; NULL when none is
 * found or when every candidate's build id differs.  Tried in order: the
 * build-id cache, /usr/lib/debug/.build-id, the --symbols folders, symfs +
 * path, path.  When none was recorded, the file at symfs + path (or path)
 * stands for the recording: its build id, if it has one, is asked of a
 * file a --symbols folder holds under the same name alone (not of one it
 * holds at the recorded path).  A candidate without a build id is taken
 * only when no build id is known. */
char *pc_elf_locate(const pc_symfind *where, const char *path,
                    const uint8_t *build_id, size_t build_id_len);

typedef struct pc_elf pc_elf;

/* Opens the binary pc_elf_locate() finds and reads its symbol table once.
 * NULL when none is found, when it is not a readable ELF file, or when
 * memory runs out. */
pc_elf *pc_elf_open(const pc_symfind *where, const char *path,
                    const uint8_t *build_id, size_t build_id_len);

/* The file opened. */
const char *pc_elf_path(const pc_elf *e);

/* The file the symbols came from: the one opened, or, for a stripped
 * binary, a copy with symbols found in the --symbols folders by build id
 * (a separate debug file found by build id is read in place, its symbols
 * named as the binary's). */
const char *pc_elf_symbol_path(const pc_elf *e);

/* The ELF virtual address at file offset off, from the loadable segment
 * holding that offset: 0 with *vaddr set, or -1 when none holds it. */
int pc_elf_offset_to_vaddr(const pc_elf *e, uint64_t off, uint64_t *vaddr);

/* The function symbol covering vaddr (its size, or up to the next symbol
 * when it has none): its raw (mangled) name, valid while e is open, and
 * its start in *start; NULL when none covers vaddr. */
const char *pc_elf_symbol(const pc_elf *e, uint64_t vaddr, uint64_t *start);

void pc_elf_close(pc_elf *e);

typedef struct pc_ksyms pc_ksyms;

/* The running kernel's symbols (/proc/kallsyms), for a recording made on
 * this machine's kernel: its build id (from /sys/kernel/notes) must equal
 * build_id when one is given, else osrelease, when given, must equal
 * uname's release.  NULL otherwise, or when addresses are hidden (all
 * zero, as kptr_restrict makes them for other users). */
pc_ksyms *pc_ksyms_open(const uint8_t *build_id, size_t build_id_len,
                        const char *osrelease);

/* pc_ksyms_open with the files and release given: kallsyms_path for
 * /proc/kallsyms, notes_path for /sys/kernel/notes, release for uname's
 * release (NULL: uname's).  For tests, and for reading another machine's
 * copies. */
pc_ksyms *pc_ksyms_open_at(const char *kallsyms_path, const char *notes_path,
                           const char *release, const uint8_t *build_id,
                           size_t build_id_len, const char *osrelease);

/* The kernel symbol covering addr (up to the next symbol), and its start;
 * NULL when addr is below the first. */
const char *pc_ksyms_symbol(const pc_ksyms *k, uint64_t addr, uint64_t *start);

void pc_ksyms_close(pc_ksyms *k);

typedef struct pc_jitmap pc_jitmap;

/* The JIT map process pid wrote (/tmp/perf-PID.map, under symfs when
 * given): lines "START SIZE NAME", hexadecimal.  NULL when there is none
 * or it holds no valid line. */
pc_jitmap *pc_jitmap_open(const pc_symfind *where, int64_t pid);

/* The entry covering addr, and its start; NULL when none does. */
const char *pc_jitmap_symbol(const pc_jitmap *m, uint64_t addr, uint64_t *start);

void pc_jitmap_close(pc_jitmap *m);

#endif
