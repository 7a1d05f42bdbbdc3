/* Per-function sums by name, and the changes between a diff profile's two
 * sides (changes.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "write/changes.h"

int pc_fsums_init(pc_fsums *f, const pc_profile *p)
{
    memset(f, 0, sizeof *f);
    f->p = p;
    size_t ns = p->stack.n + 1, nn = p->str.n + 1;
    f->node_w = calloc(ns, sizeof *f->node_w);
    f->node_seen = calloc(ns, sizeof *f->node_seen);
    f->nodes = malloc(ns * sizeof *f->nodes);
    f->self = calloc(nn, sizeof *f->self);
    f->total = calloc(nn, sizeof *f->total);
    f->name_seen = calloc(nn, sizeof *f->name_seen);
    f->names = malloc(nn * sizeof *f->names);
    f->listed = calloc(nn, 1);
    f->pass = 1;
    if (!f->node_w || !f->node_seen || !f->nodes || !f->self || !f->total || !f->name_seen ||
        !f->names || !f->listed) {
        pc_fsums_free(f);
        return -1;
    }
    return 0;
}

void pc_fsums_free(pc_fsums *f)
{
    free(f->node_w);
    free(f->node_seen);
    free(f->nodes);
    free(f->self);
    free(f->total);
    free(f->name_seen);
    free(f->names);
    free(f->listed);
    memset(f, 0, sizeof *f);
}

void pc_fsums_clear(pc_fsums *f)
{
    for (size_t i = 0; i < f->n_nodes; i++)
        f->node_w[f->nodes[i]] = 0;
    for (size_t i = 0; i < f->n_names; i++) {
        uint32_t nm = f->names[i];
        f->self[nm] = f->total[nm] = 0;
        f->listed[nm] = 0;
    }
    f->n_nodes = f->n_names = 0;
    f->sum = 0;
    f->items = 0;
    /* A wrapped pass number would make stale marks look current. */
    if (++f->pass == 0) {
        memset(f->node_seen, 0, (f->p->stack.n + 1) * sizeof *f->node_seen);
        f->pass = 1;
    }
}

void pc_fsums_add(pc_fsums *f, uint32_t stack, int64_t weight)
{
    f->items++;
    f->sum = pc_sat_add(f->sum, weight);
    if (stack == PC_NONE)
        return;
    if (f->node_seen[stack] != f->pass) {
        f->node_seen[stack] = f->pass;
        f->nodes[f->n_nodes++] = stack;
    }
    f->node_w[stack] = pc_sat_add(f->node_w[stack], weight);
}

static uint32_t name_of(const pc_profile *p, uint32_t stack)
{
    uint32_t fn = p->frame.func[p->stack.frame[stack]];
    return fn == PC_NONE ? PC_NONE : p->func.name[fn];
}

static void list_name(pc_fsums *f, uint32_t nm)
{
    if (!f->listed[nm]) {
        f->listed[nm] = 1;
        f->names[f->n_names++] = nm;
    }
}

void pc_fsums_finish(pc_fsums *f)
{
    const pc_profile *p = f->p;
    for (size_t i = 0; i < f->n_nodes; i++) {
        uint32_t s = f->nodes[i];
        int64_t w = f->node_w[s];
        if (w == 0)
            continue;
        uint32_t leaf = name_of(p, s);
        if (leaf != PC_NONE) {
            f->self[leaf] = pc_sat_add(f->self[leaf], w);
            list_name(f, leaf);
        }
        /* A fresh stamp per path counts a recursive function once. */
        if (++f->stamp == 0) {
            memset(f->name_seen, 0, (p->str.n + 1) * sizeof *f->name_seen);
            f->stamp = 1;
        }
        for (uint32_t x = s; x != PC_NONE; x = p->stack.prefix[x]) {
            uint32_t nm = name_of(p, x);
            if (nm == PC_NONE || f->name_seen[nm] == f->stamp)
                continue;
            f->name_seen[nm] = f->stamp;
            f->total[nm] = pc_sat_add(f->total[nm], w);
            list_name(f, nm);
        }
    }
}

static int cmp_change(const void *a, const void *b, const void *ctx)
{
    const pc_change *x = a, *y = b;
    double sx = fabs(x->new_self - x->base_self), sy = fabs(y->new_self - y->base_self);
    if (sx != sy)
        return sx > sy ? -1 : 1;
    double tx = fabs(x->new_total - x->base_total), ty = fabs(y->new_total - y->base_total);
    if (tx != ty)
        return tx > ty ? -1 : 1;
    const pc_profile *p = ctx;
    int c = strcmp(pc_str(&p->str, x->name), pc_str(&p->str, y->name));
    return c ? c : (x->name > y->name) - (x->name < y->name);
}

int pc_diff_changes(const pc_profile *p, pc_change **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (pc_diff_thread(p) == PC_NONE || !p->sample.first)
        return 0;
    pc_fsums side[2];
    if (pc_fsums_init(&side[0], p) < 0)
        return -1;
    if (pc_fsums_init(&side[1], p) < 0) {
        pc_fsums_free(&side[0]);
        return -1;
    }
    for (size_t t = 0; t < p->thread.n; t++) {
        if (!p->thread.diff[t])
            continue;
        for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++) {
            int64_t w = pc_sample_weight(p, i);
            /* The base's samples are stored negated. */
            if (w < 0)
                pc_fsums_add(&side[0], p->sample.stack[i], w == INT64_MIN ? INT64_MAX : -w);
            else if (w > 0)
                pc_fsums_add(&side[1], p->sample.stack[i], w);
        }
    }
    pc_fsums_finish(&side[0]);
    pc_fsums_finish(&side[1]);
    int status = 0;
    double bs = (double)side[0].sum, ns = (double)side[1].sum;
    if (bs > 0 && ns > 0) {
        size_t cap = side[0].n_names + side[1].n_names;
        pc_change *c = malloc((cap + 1) * sizeof *c);
        if (!c) {
            status = -1;
        } else {
            size_t k = 0;
            for (int s = 0; s < 2; s++)
                for (size_t i = 0; i < side[s].n_names; i++) {
                    uint32_t nm = side[s].names[i];
                    if (s == 1 && side[0].listed[nm])
                        continue;
                    c[k].name = nm;
                    c[k].base_self = (double)side[0].self[nm] / bs;
                    c[k].new_self = (double)side[1].self[nm] / ns;
                    c[k].base_total = (double)side[0].total[nm] / bs;
                    c[k].new_total = (double)side[1].total[nm] / ns;
                    k++;
                }
            pc_sort_ctx(c, k, sizeof *c, cmp_change, p);
            *out = c;
            *n = k;
        }
    }
    pc_fsums_free(&side[0]);
    pc_fsums_free(&side[1]);
    return status;
}

const char *pc_wunit_name(int unit)
{
    switch (unit) {
    case PC_UNIT_NS:
        return "ns";
    case PC_UNIT_SAMPLES:
        return "samples";
    case PC_UNIT_COUNT:
        return "events";
    case PC_UNIT_BYTES:
        return "bytes";
    default:
        return "mixed units";
    }
}

const char *pc_wunit_word(int unit)
{
    /* Times and bytes are written with their units already. */
    switch (unit) {
    case PC_UNIT_NS:
    case PC_UNIT_BYTES:
        return "";
    case PC_UNIT_SAMPLES:
        return " samples";
    case PC_UNIT_COUNT:
        return " events";
    default:
        return " (mixed units)";
    }
}

void pc_format_weight(char *buf, size_t size, int64_t v, int unit)
{
    double d = (double)v, a = d < 0 ? -d : d;
    if (unit == PC_UNIT_NS) {
        if (a < 1e3)
            snprintf(buf, size, "%" PRId64 " ns", v);
        else if (a < 1e6)
            snprintf(buf, size, "%.2f us", d / 1e3);
        else if (a < 1e9)
            snprintf(buf, size, "%.2f ms", d / 1e6);
        else
            snprintf(buf, size, "%.2f s", d / 1e9);
    } else if (unit == PC_UNIT_BYTES) {
        if (a < 1024)
            snprintf(buf, size, "%" PRId64 " B", v);
        else if (a < 1024.0 * 1024)
            snprintf(buf, size, "%.1f KiB", d / 1024);
        else if (a < 1024.0 * 1024 * 1024)
            snprintf(buf, size, "%.1f MiB", d / (1024.0 * 1024));
        else
            snprintf(buf, size, "%.2f GiB", d / (1024.0 * 1024 * 1024));
    } else if (a < 1e5) {
        snprintf(buf, size, "%" PRId64, v);
    } else if (a < 1e6) {
        snprintf(buf, size, "%.1fK", d / 1e3);
    } else if (a < 1e9) {
        snprintf(buf, size, "%.1fM", d / 1e6);
    } else if (a < 1e12) {
        snprintf(buf, size, "%.1fG", d / 1e9);
    } else {
        snprintf(buf, size, "%.1fT", d / 1e12);
    }
}
