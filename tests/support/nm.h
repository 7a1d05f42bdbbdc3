/* What a binary the tests built says of its symbols, as binutils prints
 * its symbol table, to check the project's symbol lookups against. */
#ifndef PROFCONV_TESTS_NM_H
#define PROFCONV_TESTS_NM_H

#include <stdint.h>

/* The address and size (0 when the table gives none) of the defined
 * symbol name in file's .symtab (the symbols nm lists), the last entry of
 * that name.  Read with readelf -sW rather than nm: nm loads every linker
 * plugin installed (LLVM's among them), 70 ms a run here against 13 ms.
 * One file's table is kept between calls.  Returns 1, or 0 when readelf
 * cannot run or has no such symbol. */
int nm_symbol(const char *file, const char *name, uint64_t *start, uint64_t *size);

#endif
