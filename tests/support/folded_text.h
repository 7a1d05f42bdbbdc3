/* A converted profile as folded stacks, for comparing with expected
 * folded files: one "name;name;...;leaf value" line per distinct stack,
 * sorted bytewise, joined by newlines. */
#ifndef PROFCONV_TESTS_FOLDED_TEXT_H
#define PROFCONV_TESTS_FOLDED_TEXT_H

#include "model/model.h"

/* Samples as "process;thread;root;...;leaf count" (counts, not weights).
 * The process is the name the input gave it, else its main thread's.
 * Returns a malloc'd string. */
char *folded_samples(const pc_profile *p);

/* The rows of the dumps shown as "process;root;...;leaf bytes" of
 * unreleased bytes (rows with none are left out).  Returns a malloc'd string. */
char *folded_heap(const pc_profile *p);

/* The lines of text sorted bytewise, empty lines dropped, each ending in
 * a newline (malloc'd). */
char *sort_lines(const char *text);

/* "stack value" lines with equal stacks summed, sorted bytewise
 * (malloc'd). */
char *sum_folded(const char *text);

#endif
