/* A structural validator for the Firefox Profiler's processed format
 * (version 70, the profiler's src/types/profile.ts): every invariant the
 * profiler relies on without checking it on load. */
#ifndef PROFCONV_TESTS_PROCESSED_VALID_H
#define PROFCONV_TESTS_PROCESSED_VALID_H

#include <stddef.h>

#include "jsonmini.h"

/* Returns the number of problems found (0: valid) and describes the first
 * few in msg, each with its location ("shared.stackTable.prefixOffset[3]"). */
int processed_check(const jv *profile, char *msg, size_t msglen);

/* Parses then checks; a parse failure counts as one problem. */
int processed_check_text(const char *json, size_t len, char *msg, size_t msglen);

#endif
