/* Source positions and inline chains from the DWARF of binaries on this
 * machine, through elfutils' libdw: what `addr2line -i -f -e FILE ADDR`
 * prints, one entry per line pair.
 *
 * A binary's DWARF is read once: pc_dwarf_open() finds it (in the binary
 * or its separate debug file), the first look-up gathers every function's
 * address ranges into one sorted table, and libdw keeps each compilation
 * unit's line table once read.  A look-up then costs a binary search and a
 * walk of one function's inlined-call tree, and allocates nothing beyond
 * those caches.
 *
 * A pc_dwarf may be used by one thread at a time (look-ups fill caches);
 * separate objects may be used on separate threads.  Damaged DWARF makes
 * look-ups answer less (0 entries, NULL files, line 0), never crash.
 * Nothing here prints.
 *
 * Where addr2line differs: it names an address no function DIE covers
 * (assembly, padding) after the ELF symbol before it, which callers take
 * from pc_elf_symbol(); and binutils 2.40 sometimes names a unit's main
 * file for a line the line table gives to a file it includes (code of
 * inline functions from headers), where libdw, objdump --dwarf=decodedline
 * and this code name the included file. */
#ifndef PROFCONV_SYMBOL_DWARF_H
#define PROFCONV_SYMBOL_DWARF_H

#include <stddef.h>
#include <stdint.h>

typedef struct pc_dwarf pc_dwarf;

/* Opens the DWARF of the ELF file at path: the file itself when it holds
 * .debug_info, else its separate debug file, tried in this order: the
 * name in its .gnu_debuglink in path's folder, in that folder's .debug/,
 * and under /usr/lib/debug + the folder (the folder made absolute), then
 * /usr/lib/debug/.build-id/XX/REST.debug by the file's GNU build id.  A
 * candidate is taken only when it holds .debug_info and, when both it and
 * path have a build id, the ids are equal (the debuglink's CRC is not
 * checked).  NULL when path is NULL or unreadable, not ELF, when no DWARF
 * is found or libdw refuses it, or when memory runs out.  Split DWARF
 * (.dwo files) is not followed.  The caller closes the result with
 * pc_dwarf_close(). */
pc_dwarf *pc_dwarf_open(const char *path);

/* The path the DWARF was read from (path, or its debug file); valid until
 * pc_dwarf_close(). */
const char *pc_dwarf_path(const pc_dwarf *d);

/* One frame of the chain at an address. */
typedef struct pc_inline {
    /* The function: its linkage (mangled) name when the DWARF gives one
     * (DW_AT_linkage_name, else DW_AT_MIPS_linkage_name), else its
     * DW_AT_name (C functions: the plain name), each looked up through
     * DW_AT_abstract_origin and DW_AT_specification; callers demangle.
     * NULL when the DWARF names none, or for the one entry of an address
     * the line table covers but no function DIE does (assembly). */
    const char *function;
    /* The source file of the position, as the DWARF's file table gives it
     * (usually absolute: the compilation directory joined), NULL when
     * unknown. */
    const char *file;
    /* The position's line and column; 0 when unknown. */
    uint32_t line, column;
} pc_inline;

/* The frames at ELF virtual address vaddr (as in the file: no load bias),
 * innermost first: the inlined functions, then the real (out-of-line)
 * function last.  Each entry's file/line/column is a position in that
 * entry's function: for the first, the address's own line (the line-table
 * row at or before vaddr, the last of rows at one address); for each later
 * one, the call site (DW_AT_call_file/line/column) of the entry before it.
 * Fills out[0 .. max) and returns the count: at most max (the innermost
 * max when the chain is deeper; at most 256 levels are followed), 0 when
 * neither a function nor the line table covers vaddr, or d or out is NULL
 * or max is 0.  The strings belong to d and stay valid until
 * pc_dwarf_close(). */
size_t pc_dwarf_lookup(pc_dwarf *d, uint64_t vaddr, pc_inline *out, size_t max);

/* Frees d and everything its look-ups returned; NULL is ignored. */
void pc_dwarf_close(pc_dwarf *d);

#endif
