/* The regression gate: which functions' shares grew past the limits.
 * Shares are of each side's own total (write/changes.h), so a longer or
 * shorter run of the same workload moves nothing by itself. */
#include "cli/gate.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static int parse_points(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || v > 100)
        return -1;
    *out = v;
    return 0;
}

int cli_gate_add(cli_gate *g, const char *arg)
{
    if (g->n == sizeof g->points / sizeof *g->points)
        return -1;
    /* Names hold colons ("ns::f"): the points follow the last one. */
    const char *colon = strrchr(arg, ':');
    size_t k = g->n;
    if (colon && colon > arg) {
        if (parse_points(colon + 1, &g->points[k]) != 0)
            return -1;
        g->name[k] = arg;
        g->name_len[k] = (size_t)(colon - arg);
    } else {
        if (parse_points(arg, &g->points[k]) != 0)
            return -1;
        g->name[k] = NULL;
        g->name_len[k] = 0;
    }
    g->n++;
    return 0;
}

static void line(char *report, size_t cap, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void line(char *report, size_t cap, size_t *used, const char *fmt, ...)
{
    if (*used + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(report + *used, cap - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used = (size_t)n < cap - *used ? *used + (size_t)n : cap - 1;
}

int cli_gate_check(const cli_gate *g, const pc_profile *p, char *report, size_t cap)
{
    pc_diff_row *ch = NULL;
    size_t n = 0, used = 0;
    pc_error err;
    if (cap)
        report[0] = 0;
    if (pc_diff_rows(p, &ch, &n, &err) != PC_OK)
        return -1;
    int failed = 0;
    size_t shown = 0;
    for (size_t k = 0; k < g->n; k++) {
        for (size_t i = 0; i < n; i++) {
            const char *name = ch[i].name;
            size_t len = strlen(name);
            int named = g->name[k] != NULL;
            if (named && (len != g->name_len[k] || memcmp(name, g->name[k], len) != 0))
                continue;
            double from = named ? ch[i].base_total : ch[i].base_self;
            double to = named ? ch[i].new_total : ch[i].new_self;
            double grew = (to - from) * 100;
            if (grew <= g->points[k])
                continue;
            failed = 1;
            if (shown++ < 10)
                line(report, cap, &used, "%sfail-above: %.200s: %s share %.1f%% -> %.1f%% "
                     "(%+.1f points, limit %g)", used ? "\n" : "", name,
                     named ? "total" : "self", from * 100, to * 100, grew, g->points[k]);
        }
    }
    if (shown > 10)
        line(report, cap, &used, "\nfail-above: and %zu more", shown - 10);
    if (!failed) {
        /* Where the largest growth stands against the limits. */
        double best = 0;
        size_t at = n;
        for (size_t i = 0; i < n; i++)
            if ((ch[i].new_self - ch[i].base_self) * 100 > best) {
                best = (ch[i].new_self - ch[i].base_self) * 100;
                at = i;
            }
        if (at < n)
            line(report, cap, &used, "fail-above: passed; the largest self share growth is "
                 "%.200s, %+.1f points", ch[at].name, best);
        else
            line(report, cap, &used, "fail-above: passed; no function's self share grew");
    }
    free(ch);
    return failed;
}
