/* --fail-above (gate.c): the regression gate of profconv diff. */
#ifndef PROFCONV_CLI_GATE_H
#define PROFCONV_CLI_GATE_H

#include <stddef.h>

#include "profconv.h"

/* The limits given: a bare number limits every function's self share,
 * NAME:POINTS one function's total share (the time under it). */
typedef struct cli_gate {
    size_t n;
    const char *name[64];   /* NULL: every function */
    size_t name_len[64];
    double points[64];      /* percentage points of growth allowed */
} cli_gate;

/* Adds the limit arg ("5", "2.5", "NAME:5"); 0, or -1 when it does not
 * read as one (or there are too many). */
int cli_gate_add(cli_gate *g, const char *arg);

/* Checks diff profile p against g: 1 when a limit is passed, 0 when none
 * is, -1 when memory runs out.  report (cap bytes) receives one line per
 * limit passed, or a line saying the largest growth seen, lines
 * separated by '\n'. */
int cli_gate_check(const cli_gate *g, const pc_profile *p, char *report, size_t cap);

#endif
