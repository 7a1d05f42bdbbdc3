/* R8/ProGuard mapping files, for turning obfuscated Java names back into
 * their source names.
 *
 * The format: class lines "original.Class -> obfuscated.Class:" followed by
 * indented member lines; method lines look like
 * "    [12:15:]type name(args)[:orig_lines] -> obfuscatedName", where name
 * may carry another class's name for inlined code; fields have no
 * parentheses and are ignored, as are comments, except R8's marker for
 * synthesized classes and methods.  Among several methods with one
 * obfuscated name, the last wins unless it is synthesized (line numbers
 * would be needed to tell them apart, and samples carry none). */
#ifndef PROFCONV_PROGUARD_H
#define PROFCONV_PROGUARD_H

#include <stddef.h>

#include "base/hashtab.h"
#include "profconv.h"
#include "base/strtab.h"

typedef struct pc_proguard {
    pc_strtab str;
    struct {
        uint32_t *obf, *orig;
        uint8_t *synthesized;
        size_t n, cap;
        pc_htab idx;
    } cls;
    struct {
        uint32_t *cls, *obf, *orig;
        uint8_t *with_class, *synthesized;
        size_t n, cap;
        pc_htab idx;
    } method;
} pc_proguard;

/* Adds the mappings of the file at path to m (zeroed before first use).
 * Returns 0 or a pc_status with err filled. */
int pc_proguard_load(pc_proguard *m, const char *path, pc_error *err);

/* Adds mappings from text in memory; name is used in messages. */
int pc_proguard_parse(pc_proguard *m, const char *text, size_t len,
                      const char *name, pc_error *err);

/* The source name of an obfuscated method: prefix, then ".", then method;
 * prefix is empty when method already holds its class (inlined code). */
typedef struct pc_retrace {
    const char *prefix, *method;
    size_t prefix_len, method_len;
    int synthesized;
} pc_retrace;

/* Looks up the obfuscated "package.Class.method" (arguments after '(' are
 * ignored).  Returns 1 with *r filled, or 0 when its class is not in the
 * mapping.  The strings stay valid until m changes. */
int pc_proguard_lookup(const pc_proguard *m, const char *name, size_t len,
                       pc_retrace *r);

void pc_proguard_free(pc_proguard *m);

#endif
