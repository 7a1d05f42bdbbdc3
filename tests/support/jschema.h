/* A small JSON Schema validator (a draft-07 subset) over jsonmini.h
 * values: just what speedscope's published file-format schema uses.
 *
 * Supported keywords: $ref (a JSON pointer into the same document, such as
 * "#/definitions/FileFormat.File"), definitions, anyOf, enum, const, type
 * (a name or a list of names: object, array, string, number, integer,
 * boolean, null), properties, required and items (one schema for every
 * item); boolean schemas.  title and $schema are ignored.  Any other
 * keyword, anywhere in the schema, makes validation fail as unsupported,
 * so that a schema this validator does not fully understand can never
 * pass an instance silently.  As in draft-07, the keywords beside a $ref
 * are not applied. */
#ifndef PROFCONV_TESTS_JSCHEMA_H
#define PROFCONV_TESTS_JSCHEMA_H

#include <stddef.h>

#include "jsonmini.h"

/* Returns 0 when instance is valid against schema.  Otherwise returns -1
 * and writes into msg the instance location as a JSON pointer
 * ("/profiles/0/weights/3", "(root)" for the whole document) and why it
 * fails, or what in the schema is unsupported or malformed. */
int jschema_validate(const jv *schema, const jv *instance, char *msg, size_t msglen);

/* Parses the schema file and the instance text, then validates. */
int jschema_validate_text(const char *schema_json, size_t schema_len, const char *json,
                          size_t len, char *msg, size_t msglen);

#endif
