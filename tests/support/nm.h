/* What binutils' nm says of a symbol in a binary the tests built, to check
 * the project's symbol lookups against. */
#ifndef PROFCONV_TESTS_NM_H
#define PROFCONV_TESTS_NM_H

#include <stdint.h>

/* The address and size (nm -S; 0 when nm gives none) of the defined
 * symbol name in file, the last line nm prints for it.  Returns 1, or 0
 * when nm cannot run or has no such symbol. */
int nm_symbol(const char *file, const char *name, uint64_t *start, uint64_t *size);

#endif
