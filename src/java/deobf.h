/* Java deobfuscation: one model of an R8/ProGuard mapping and one lookup,
 * whichever way the mapping came in (a mapping file read by proguard.c,
 * or a Perfetto trace's DeobfuscationMapping packets), so that the same
 * mapping gives the same names.
 *
 * The model.  Classes map an obfuscated name to the original one within
 * a package (Perfetto names the app a mapping is for; mapping files have
 * no package, they use ""); the first class of one (package, obfuscated
 * name) wins and a later one is ignored with its methods.  A class's
 * method lines are kept in mapping order, each with its obfuscated name,
 * its original name ("run", or "other.Class.run" for code R8 moved or
 * inlined from another class; never arguments), its obfuscated line range
 * ("a:b:" in a mapping file; none when 0, 0), its original lines and R8's
 * synthesized marker.  R8 writes an inline chain as consecutive lines of
 * one obfuscated name and range, the most inlined first and the method
 * that holds the code last (its "outermost" method):
 *
 *     12:15:void other.Class.m():30:33 -> a     (inlined into run)
 *     12:15:void run():40 -> a                  (outermost)
 *
 * The lookup follows R8's retrace, for the frame "obfClass.obfMethod"
 * (arguments from '(' on are ignored) at obfuscated line `line`:
 *   1. the class (the name up to its last '.') is looked up in the
 *      package; not found, or no '.': not mapped;
 *   2. the method name is unknown: "OrigClass.obfMethod";
 *   3. with a line, the lines whose range holds it are an inline chain:
 *      every method of it is named, outermost first;
 *   4. with a line no range holds, the lines without a range are the
 *      candidates, if any (a range-less line stands for any line);
 *   5. otherwise (no line, or nothing matched it) the candidates are the
 *      outermost method of each chain and every range-less line: inlined
 *      methods are not shown without a line to choose their chain;
 *   6. among candidates, those R8 synthesized are dropped when any other
 *      remains; the distinct full names that are left, sorted bytewise,
 *      make one name "A | B" (a single one when they agree, as for
 *      overloads that kept one name).
 * Full names are "OrigClass.method", or the original name alone when it
 * already holds its class.
 *
 * Cost: a lookup hashes the frame's class and method names (never a pass
 * over classes or methods); with a line it then walks the lines of that
 * one obfuscated method name, without a line it takes the answer
 * pc_deobf_seal worked out.  Nothing is allocated per lookup once the
 * result has grown.
 *
 * Threads: a pc_deobf is changed by one thread at a time; lookups only
 * read it, so several threads may look up at once, each with its own
 * pc_deobf_result.  The only error is running out of memory, reported as
 * -1; the model stays consistent then (what was added stays, lookups
 * work, and pc_deobf_free frees it).  No function takes a NULL pc_deobf
 * or result except the *_free ones. */
#ifndef PROFCONV_JAVA_DEOBF_H
#define PROFCONV_JAVA_DEOBF_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashtab.h"
#include "base/strtab.h"

typedef struct pc_deobf {
    pc_strtab str;              /* packages, class and method names */
    struct {
        uint32_t *pkg, *obf, *orig;
        uint8_t *synthesized;
        size_t n, cap;
        pc_htab idx;            /* (package, obfuscated name) -> class */
    } cls;
    struct {
        uint32_t *cls, *obf, *orig;
        uint32_t *obf_start, *obf_end, *orig_start, *orig_end;
        uint32_t *next;         /* the next line of this (class, name) */
        uint32_t *tail;         /* on a first line: the last one */
        uint32_t *answer;       /* on a first line, once sealed: the
                                 * no-line name (a line, or a string) */
        uint8_t *flags;
        size_t n, cap;
        pc_htab idx;            /* (class, obfuscated name) -> first line */
    } meth;
    struct {
        uint32_t *name;         /* string ids of the packages with classes */
        size_t n, cap;
        pc_htab idx;
    } pkg;
} pc_deobf;

/* One method line as its source gave it.  The strings are copied by
 * pc_deobf_add_method; a NULL one counts as empty. */
typedef struct pc_deobf_method {
    const char *obf, *orig;
    size_t obf_len, orig_len;
    uint32_t obf_start, obf_end;    /* obfuscated line range; 0, 0: none */
    uint32_t orig_start, orig_end;  /* original lines; 0: not given */
    int synthesized;
} pc_deobf_method;

/* Adds the class obf -> orig of package pkg to d, which is zeroed before
 * its first use; strings are copied, and NULL ones count as empty (pkg
 * NULL is package "", the one mapping files use).  Sets *cls to the
 * class's id for pc_deobf_add_method, or to PC_NONE when that (package,
 * obf) was added before: the first one wins, and methods added to PC_NONE
 * are ignored.  Returns 0, or -1 when out of memory (*cls is PC_NONE). */
int pc_deobf_add_class(pc_deobf *d, const char *pkg, size_t pkg_len, const char *obf,
                       size_t obf_len, const char *orig, size_t orig_len, int synthesized,
                       uint32_t *cls);

/* Appends a method line to class cls (PC_NONE: ignored), after the lines
 * added to it before.  Returns 0, or -1 when out of memory. */
int pc_deobf_add_method(pc_deobf *d, uint32_t cls, const pc_deobf_method *m);

/* Works out the no-line name of every method changed since the last call,
 * so that lookups without a line cost one hash probe each instead of a
 * pass over the method's lines.  Lookups give the same names either way.
 * Returns 0, or -1 when out of memory (lookups still give the same
 * names, some of them more slowly). */
int pc_deobf_seal(pc_deobf *d);

/* The id of package pkg[0..len) in d for pc_deobf_lookup, or PC_NONE
 * when no class of d has it.  Read-only, like lookups. */
uint32_t pc_deobf_package(const pc_deobf *d, const char *pkg, size_t len);

/* What a lookup found.  Zero it before first use, reuse it across
 * lookups (it grows, then allocates no more), free it with
 * pc_deobf_result_free.  Its names are its own copies. */
typedef struct pc_deobf_result {
    size_t n;                   /* names, outermost first */
    int synthesized;            /* every mapping line behind them is */
    char *buf;                  /* the names, each NUL-terminated */
    size_t len, cap;
    struct pc_deobf_name {
        size_t off, len;
        uint32_t line;          /* original source line; 0: unknown */
    } *name;
    size_t name_cap;
    uint32_t *ids;              /* scratch */
    size_t ids_cap;
} pc_deobf_result;

/* Looks up the Java frame name[0..len) (not NULL) of package pkg (an id
 * from pc_deobf_package, or PC_NONE: not known, and d's one package is
 * used then, when it has only one) at obfuscated line `line` (0:
 * unknown), as described at the top.  Returns 1 with r holding the names
 * (r->n >= 1), 0 when the frame is not mapped (r->n is 0), or -1 when out
 * of memory (r->n is 0 or holds part of the names: ignore them). */
int pc_deobf_lookup(const pc_deobf *d, uint32_t pkg, const char *name, size_t len,
                    uint32_t line, pc_deobf_result *r);

/* Name i of r (i < r->n), NUL-terminated; *len (if not NULL) gets its
 * length.  Valid until r's next lookup. */
static inline const char *pc_deobf_name(const pc_deobf_result *r, size_t i, size_t *len)
{
    if (len)
        *len = r->name[i].len;
    return r->buf + r->name[i].off;
}

/* Frees what r holds and zeroes it; NULL is allowed. */
void pc_deobf_result_free(pc_deobf_result *r);

/* Frees what d holds and zeroes it; NULL is allowed. */
void pc_deobf_free(pc_deobf *d);

#endif
