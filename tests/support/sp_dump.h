/* Prints a simpleperf report-sample file the way
 * `simpleperf report-sample --dump-protobuf-report` does, from the
 * project's own record decoder, so the decoder can be compared with
 * simpleperf's reading of the same file line by line. */
#ifndef PROFCONV_TESTS_SP_DUMP_H
#define PROFCONV_TESTS_SP_DUMP_H

#include <stddef.h>

#include "profconv.h"

/* Returns the dump as a malloc'd string, or NULL with err filled. */
char *sp_dump(pc_input *in, size_t *len, pc_error *err);

#endif
