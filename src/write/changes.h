/* Per-function weights keyed by function name, and the comparison of a
 * diff profile's two sides built on them: what the text summary prints and
 * what a CI gate (--fail-above) checks.
 *
 * Functions are keyed by NAME (a string id), not by (name, resource):
 * a function that moved between libraries between the two recordings, or
 * that the two inputs place in differently named files, is still one row. */
#ifndef PROFCONV_WRITE_CHANGES_H
#define PROFCONV_WRITE_CHANGES_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef struct pc_change {
    uint32_t name;                 /* string id of the function name */
    double base_self, new_self;    /* self weight share of each side's total, 0..1 */
    double base_total, new_total;  /* share of each side's weight whose stack holds the function (counted once per sample) */
} pc_change;

/* The functions of p's comparison threads (thread.diff set), sorted by
 * |new_self - base_self| descending, then |new_total - base_total|, then name;
 * *out malloc'd (caller frees), *n its length.  0 on success (n = 0 when p
 * has no comparison thread or no weight on a side), -1 when out of memory.
 * The public pc_diff_rows() hands the same to the command line's
 * --fail-above gate. */
int pc_diff_changes(const pc_profile *p, pc_change **out, size_t *n);

/* Weights summed per function name over a set of (stack, weight) items:
 * self (the stack's leaf) and total (every function on the stack, once
 * per item even when recursion repeats it).  Items are first summed per
 * stack node, so the path walks cost distinct stacks x depth, whatever
 * the number of items.  One pc_fsums serves many passes (pc_fsums_clear
 * between them) without reallocating. */
typedef struct pc_fsums {
    const pc_profile *p;
    int64_t *node_w;        /* per model stack: this pass's weight */
    uint32_t *node_seen;    /* per model stack: pass + 1 when touched */
    uint32_t *nodes;        /* the stacks touched, in order of first touch */
    size_t n_nodes;
    int64_t *self, *total;  /* per string id */
    uint32_t *name_seen;    /* per string id: walk stamp */
    uint32_t *names;        /* the names with weight, in order of first sight */
    size_t n_names;
    uint8_t *listed;        /* per string id: in names */
    int64_t sum;            /* all the items' weight, stackless ones too */
    size_t items;
    uint32_t pass, stamp;
} pc_fsums;

int pc_fsums_init(pc_fsums *f, const pc_profile *p);
void pc_fsums_free(pc_fsums *f);
/* Forgets the previous pass's weights: cost follows what it touched. */
void pc_fsums_clear(pc_fsums *f);
/* Adds one item; stack may be PC_NONE (counts in sum only). */
void pc_fsums_add(pc_fsums *f, uint32_t stack, int64_t weight);
/* Turns the per-stack sums into self and total per name. */
void pc_fsums_finish(pc_fsums *f);

/* What a set of weights measures, for the summaries: an enum pc_unit
 * (PC_UNIT_BYTES for heap rows), PC_WUNIT_MIXED for items of several. */
#define PC_WUNIT_MIXED (-1)
/* The unit's name, plural ("ns", "events", "samples", "bytes"). */
const char *pc_wunit_name(int unit);
/* v in the unit, readable and in at most 11 columns ("12.34 ms",
 * "1.5 MiB", "12.3M"), into buf. */
void pc_format_weight(char *buf, size_t size, int64_t v, int unit);
/* What follows a pc_format_weight() value to say its unit: nothing for
 * times and bytes, which carry theirs, else " samples" or " events". */
const char *pc_wunit_word(int unit);

#endif
