/* A structural validator for Gecko-format profiles: what the Firefox
 * Profiler needs to load and display one (doc/formats/firefox.md),
 * plus what profconv promises on top (samples sorted by time). */
#ifndef PROFCONV_TESTS_GECKO_VALID_H
#define PROFCONV_TESTS_GECKO_VALID_H

#include <stddef.h>

#include "jsonmini.h"

/* Returns the number of problems found (0: valid) and describes the first
 * few in msg, each with its location ("threads[2].stackTable.data[17]"). */
int gecko_check(const jv *profile, char *msg, size_t msglen);

/* Parses then checks; a parse failure counts as one problem. */
int gecko_check_text(const char *json, size_t len, char *msg, size_t msglen);

#endif
