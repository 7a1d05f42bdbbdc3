/* R8/ProGuard mapping files, read into the deobfuscation model (deobf.h),
 * the one Perfetto's DeobfuscationMapping packets also feed.
 *
 * The format: class lines "original.Class -> obfuscated.Class:" followed
 * by indented member lines; method lines look like
 * "    [a:b:]type name(args)[:c[:d]] -> obfuscatedName": a:b is the
 * obfuscated line range, c (to d) the original lines, and name may carry
 * another class's name for inlined code.  Fields have no parentheses and
 * are skipped, as are comments except R8's marker for synthesized classes
 * and methods (a comment holding "com.android.tools.r8.synthesized" after
 * the line it marks, other comments may come between).  Classes go in
 * package "", the one lookups use when no package is given.  Lines that
 * fit none of these are skipped: a mapping is never refused for them. */
#ifndef PROFCONV_PROGUARD_H
#define PROFCONV_PROGUARD_H

#include <stddef.h>

#include "java/deobf.h"
#include "profconv.h"

/* The model a mapping file is read into (the fuzz target's name). */
typedef pc_deobf pc_proguard;

/* Adds the mappings of text[0..len) to m (zeroed before first use) and
 * seals it (pc_deobf_seal); name is used in messages.  Returns PC_OK, or
 * PC_ENOMEM with err filled: m then holds what was added before, and
 * pc_proguard_free frees it in either case.  Not thread-safe on one m. */
int pc_proguard_parse(pc_proguard *m, const char *text, size_t len, const char *name,
                      pc_error *err);

/* The same for the file at path; PC_EIO when it cannot be read. */
int pc_proguard_load(pc_proguard *m, const char *path, pc_error *err);

static inline void pc_proguard_free(pc_proguard *m)
{
    pc_deobf_free(m);
}

#endif
