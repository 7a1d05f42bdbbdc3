/* Checks of speedscope documents: valid against the JSON schema speedscope
 * publishes (fetched by tests/tools/get-speedscope-schema.sh), and sound
 * where the schema cannot see: as many weights as samples, frame indexes
 * in range, integer weights of at least 0, distinct frames, the weightiest
 * profile active, and the folded writer's stacks and sums.  Failures are
 * recorded in the current case. */
#ifndef PROFCONV_TESTS_SPEEDSCOPE_VALID_H
#define PROFCONV_TESTS_SPEEDSCOPE_VALID_H

#include <stddef.h>

#include "jsonmini.h"
#include "model/model.h"

#define SPEEDSCOPE_SCHEMA_PATH "build/ext/speedscope/file-format-schema.json"

/* speedscope's schema, or NULL with the current case skipped. */
jv *speedscope_schema_or_skip(void);

/* p written as speedscope JSON, or as folded text with the given prefix
 * bits (PC_FOLDED_*), NUL-terminated, *n bytes; NULL with a failure
 * recorded.  Caller frees. */
char *speedscope_of(const pc_profile *p, size_t *n);
char *folded_written(const pc_profile *p, int prefix, size_t *n);

/* Parses and validates a speedscope document, then checks what the
 * schema cannot.  Returns the document (NULL if it does not parse). */
jv *speedscope_check_doc(const jv *schema, const char *json, size_t n);
/* The speedscope document of p, checked as above and against the folded
 * writer's sums (no prefix).  Returns it for more checks, or NULL. */
jv *speedscope_check_profile(const jv *schema, const pc_profile *p);

/* The document's "profiles". */
const jv *speedscope_profiles(const jv *doc);
/* The sum of a profile's weights. */
long long speedscope_total(const jv *profile);
/* The names of a stack, root first, joined by ';' (malloc'd). */
char *speedscope_stack_names(const jv *doc, const jv *stack);
/* The document's samples as summed folded lines, as the folded writer
 * gives them: "prefix;root;...;leaf weight" with prefix[k] the prefix of
 * profile k (prefix NULL: none).  Malloc'd. */
char *speedscope_folded(const jv *doc, char *const *prefix);

#endif
