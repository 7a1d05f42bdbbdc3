/* An interactive flame graph in one self-contained SVG file (--to svg):
 * it opens in any browser, with tooltips, click to zoom, and a search
 * that highlights matches and says what share of the graph they hold.
 *
 * Choices, and why:
 * - One graph per thread (per process and heap for heap profiles),
 *   stacked vertically, busiest first: each has its own scale, unit and,
 *   for a comparison thread, its own colours, which one shared root would
 *   mix.  The bottom row of a graph is the thread, spanning its total.
 * - Frames are merged by function name under their parent, as folded
 *   stacks merge them, so the widths equal the folded output's sums.
 *   Siblings are sorted by name (bytewise), so the same input gives the
 *   same bytes.
 * - A node narrower than one pixel at the graph's 1200 px is not drawn,
 *   nor is anything above it; its weight stays in its parent's width and
 *   in the totals.  That keeps a file of a million distinct stacks to what
 *   can be seen.
 * - Colours follow the frame's category, from the one category table
 *   (pc_categories) through a palette of its colour names, shaded per
 *   name so neighbours differ.  A comparison thread's nodes are as wide as
 *   both inputs' weight together and coloured by the change of their
 *   share of each input's total: red for growth, blue for shrinkage,
 *   deeper the closer to the graph's largest change.
 * - Cost: samples are summed per model stack node per thread (one pass),
 *   each distinct stack is mapped to its flame node once (a per-stack
 *   cache stamped with the graph), and totals flow to parents in one
 *   reverse pass, since parents are created before their children.
 *   Only the drawn nodes are sorted. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/escape.h"
#include "base/grow.h"
#include "base/hashtab.h"
#include "base/sort.h"
#include "write/changes.h"
#include "write/write.h"

#define SVG_WIDTH 1200
#define PAD 10
#define ROW 16
#define HEAD 44     /* the file's title and buttons */
#define GHEAD 22    /* a graph's own title line */
#define GAP 12
#define CHAR_W 6.6  /* advance of an 11 px monospace glyph, near enough */

/* One graph: a thread's samples, or a (process, heap)'s rows. */
typedef struct graph {
    uint32_t thread, heap;
    int64_t total, base, neww;
    size_t items;
    int unit;
    int diff;
} graph;

typedef struct svg {
    const pc_profile *p;
    pc_sink *s;
    /* Flame nodes of the graph being written, parents first. */
    uint32_t *parent, *name, *depth;
    uint8_t *cat;
    int64_t *self_a, *self_b, *tot_a, *tot_b;  /* a: base side (diff only) */
    double *x;                                /* start, in weight units */
    size_t n, cap;
    pc_htab idx;
    /* Per model stack: its flame node, valid when stamp is the graph's. */
    uint32_t *fn_of, *stamp, *chain;
    uint32_t *drawn;
    graph *g;
    size_t n_g;
    int oom;
} svg;

static void svg_free(svg *v)
{
    free(v->parent);
    free(v->name);
    free(v->depth);
    free(v->cat);
    free(v->self_a);
    free(v->self_b);
    free(v->tot_a);
    free(v->tot_b);
    free(v->x);
    pc_htab_free(&v->idx);
    free(v->fn_of);
    free(v->stamp);
    free(v->chain);
    free(v->drawn);
    free(v->g);
}

static uint32_t node_new(svg *v, uint32_t parent, uint32_t name, uint8_t cat)
{
    struct pc_col cols[] = {PC_COL(v->parent), PC_COL(v->name),   PC_COL(v->depth),
                            PC_COL(v->cat),    PC_COL(v->self_a), PC_COL(v->self_b),
                            PC_COL(v->tot_a),  PC_COL(v->tot_b),  PC_COL(v->x)};
    if (pc_grow_cols(&v->cap, v->n + 1, cols, 9) < 0) {
        v->oom = 1;
        return PC_NONE;
    }
    uint32_t id = (uint32_t)v->n++;
    v->parent[id] = parent;
    v->name[id] = name;
    v->depth[id] = parent == PC_NONE ? 0 : v->depth[parent] + 1;
    v->cat[id] = cat;
    v->self_a[id] = v->self_b[id] = v->tot_a[id] = v->tot_b[id] = 0;
    v->x[id] = 0;
    return id;
}

/* The child of parent named name, made when new. */
static uint32_t child(svg *v, uint32_t parent, uint32_t name, uint8_t cat)
{
    pc_probe pr;
    if (pc_htab_reserve(&v->idx, v->n + 1) < 0) {
        v->oom = 1;
        return PC_NONE;
    }
    pc_probe_start(&v->idx, (uint64_t)parent << 32 | name, &pr);
    uint32_t id;
    while ((id = pc_probe_next(&v->idx, &pr)) != PC_NONE)
        if (v->parent[id] == parent && v->name[id] == name)
            return id;
    id = node_new(v, parent, name, cat);
    if (id != PC_NONE)
        pc_htab_insert(&v->idx, &pr, id);
    return id;
}

/* The flame node of model stack s in graph stamp; root is node 0. */
static uint32_t node_of(svg *v, uint32_t s, uint32_t stamp)
{
    const pc_profile *p = v->p;
    if (s == PC_NONE)
        return 0;
    size_t k = 0;
    uint32_t x = s;
    while (x != PC_NONE && v->stamp[x] != stamp) {
        v->chain[k++] = x;
        x = p->stack.prefix[x];
    }
    uint32_t at = x == PC_NONE ? 0 : v->fn_of[x];
    while (k-- > 0) {
        uint32_t st = v->chain[k], fr = p->stack.frame[st], fn = p->frame.func[fr];
        uint32_t nm = fn == PC_NONE ? PC_NONE - 1 : p->func.name[fn];
        at = child(v, at, nm, p->frame.cat[fr]);
        if (at == PC_NONE)
            return PC_NONE;
        v->stamp[st] = stamp;
        v->fn_of[st] = at;
    }
    return at;
}

static void add(svg *v, uint32_t s, uint32_t stamp, int64_t w, int diff)
{
    uint32_t n = node_of(v, s, stamp);
    if (n == PC_NONE)
        return;
    if (diff && w < 0)
        v->self_a[n] = pc_sat_add(v->self_a[n], w == INT64_MIN ? INT64_MAX : -w);
    else if (w > 0)
        v->self_b[n] = pc_sat_add(v->self_b[n], w);
}

static int64_t width_of(const svg *v, uint32_t n)
{
    return pc_sat_add(v->tot_a[n], v->tot_b[n]);
}

static int cmp_graph(const void *a, const void *b)
{
    const graph *x = a, *y = b;
    int64_t wx = pc_sat_add(x->total, pc_sat_add(x->base, x->neww));
    int64_t wy = pc_sat_add(y->total, pc_sat_add(y->base, y->neww));
    if (wx != wy)
        return wx > wy ? -1 : 1;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return (x->heap > y->heap) - (x->heap < y->heap);
}

/* Drawn nodes by parent, then name bytewise: ids are parents first, so
 * every parent is placed before its children. */
static int cmp_drawn(const void *a, const void *b, const void *ctx)
{
    const svg *v = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (v->parent[x] != v->parent[y])
        return v->parent[x] < v->parent[y] ? -1 : 1;
    const char *nx = v->name[x] >= v->p->str.n ? "" : pc_str(&v->p->str, v->name[x]);
    const char *ny = v->name[y] >= v->p->str.n ? "" : pc_str(&v->p->str, v->name[y]);
    int c = strcmp(nx, ny);
    return c ? c : (x > y) - (x < y);
}

/* Writes text with XML's special characters escaped, control bytes and
 * bytes that are not UTF-8 as '?' (XML has no way to carry them), cut to
 * max characters with ".." when longer (max 0: no limit). */
static void put_esc(pc_sink *s, const char *text, size_t max)
{
    const uint8_t *t = (const uint8_t *)text;
    size_t chars = 0;
    if (max) {
        for (const uint8_t *q = t; *q && chars <= max; chars++) {
            size_t n = *q < 0x80 ? 1 : pc_utf8_len(q, 4);
            q += n ? n : 1;
        }
    }
    size_t keep = max && chars > max ? (max > 2 ? max - 2 : 0) : SIZE_MAX;
    char buf[256];
    size_t o = 0;
    for (size_t c = 0; *t && c < keep; c++) {
        if (o > sizeof buf - 8) {
            sink_write(s, buf, o);
            o = 0;
        }
        uint8_t ch = *t;
        if (ch < 0x80) {
            const char *e = ch == '&' ? "&amp;" : ch == '<' ? "&lt;" : ch == '>' ? "&gt;"
                          : ch == '"' ? "&quot;" : ch == '\'' ? "&#39;" : NULL;
            if (e) {
                memcpy(buf + o, e, strlen(e));
                o += strlen(e);
            } else {
                buf[o++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
            }
            t++;
            continue;
        }
        size_t n = pc_utf8_len(t, 4);
        /* U+FFFE and U+FFFF are no XML characters either. */
        if (!n || (n == 3 && t[0] == 0xef && t[1] == 0xbf && t[2] >= 0xbe)) {
            buf[o++] = '?';
            t++;
            continue;
        }
        memcpy(buf + o, t, n);
        o += n;
        t += n;
    }
    if (keep != SIZE_MAX && max >= 2) {
        buf[o++] = '.';
        buf[o++] = '.';
    }
    sink_write(s, buf, o);
}

static void out(pc_sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(pc_sink *s, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        sink_write(s, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* FNV-1a: a shade per name that does not depend on the process's hash
 * key, so that output bytes stay the same from run to run. */
static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* A base colour for the colour names the category table uses. */
static void palette(const char *color, int rgb[3])
{
    static const struct {
        const char *name;
        int rgb[3];
    } pal[] = {
        {"yellow", {226, 196, 72}},  {"orange", {238, 138, 54}},  {"green", {108, 186, 88}},
        {"grey", {168, 168, 168}},   {"blue", {96, 148, 226}},    {"lightblue", {138, 186, 238}},
        {"purple", {168, 118, 206}}, {"red", {226, 88, 78}},      {"magenta", {206, 92, 180}},
        {"brown", {170, 120, 80}},   {"transparent", {206, 206, 220}},
    };
    for (size_t i = 0; i < sizeof pal / sizeof *pal; i++)
        if (color && strcmp(pal[i].name, color) == 0) {
            memcpy(rgb, pal[i].rgb, sizeof pal[i].rgb);
            return;
        }
    rgb[0] = rgb[1] = rgb[2] = 168;
}

static void node_fill(const svg *v, const graph *g, uint32_t n, const char *name, double max_change,
                      char *buf, size_t size)
{
    int rgb[3];
    if (g->diff) {
        double ch = (g->neww > 0 ? (double)v->tot_b[n] / (double)g->neww : 0) -
                    (g->base > 0 ? (double)v->tot_a[n] / (double)g->base : 0);
        double k = max_change > 0 ? fabs(ch) / max_change : 0;
        int low = (int)lround(235 - 190 * k);
        if (ch > 0)
            snprintf(buf, size, "#%02x%02x%02x", 245, low, low);
        else if (ch < 0)
            snprintf(buf, size, "#%02x%02x%02x", low, low, 245);
        else
            snprintf(buf, size, "#ebebeb");
        return;
    }
    if (n == 0) {
        palette("grey", rgb);
    } else {
        int cat = v->cat[n] < PC_CAT_COUNT ? v->cat[n] : PC_CAT_OTHER;
        palette(pc_categories[cat].color, rgb);
    }
    int shade = (int)(name_hash(name) % 41) - 20;
    for (int i = 0; i < 3; i++) {
        int c = rgb[i] + shade;
        rgb[i] = c < 0 ? 0 : c > 255 ? 255 : c;
    }
    snprintf(buf, size, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

static double pct(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

static const char *node_name(const svg *v, uint32_t n, const char *root)
{
    if (n == 0)
        return root;
    return v->name[n] < v->p->str.n ? pc_str(&v->p->str, v->name[n]) : "?";
}

/* The graph's label: the thread, or the process and the heap. */
static void graph_label(const pc_profile *p, const graph *g, char *buf, size_t size)
{
    const char *tn = pc_str(&p->str, p->thread.name[g->thread]);
    uint32_t proc = pc_process_name(p, p->thread.pid[g->thread]);
    /* Processes say which input a thread came from when inputs were
     * combined ("base: app"). */
    const char *pn = proc == PC_NONE || proc == p->thread.name[g->thread]
                         ? NULL : pc_str(&p->str, proc);
    int n = g->heap != PC_NONE ? snprintf(buf, size, "%s: %s", tn, pc_str(&p->str, g->heap))
                               : snprintf(buf, size, "%s", tn);
    if (pn && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " [%s]", pn);
}

/* Writes graph g (its nodes built) at y; returns its height. */
static int write_graph(svg *v, const graph *g, int y)
{
    const pc_profile *p = v->p;
    pc_sink *s = v->s;
    /* Totals flow to parents: children come after their parents. */
    for (size_t i = 0; i < v->n; i++) {
        v->tot_a[i] = v->self_a[i];
        v->tot_b[i] = v->self_b[i];
    }
    for (size_t i = v->n; i-- > 1;) {
        uint32_t up = v->parent[i];
        v->tot_a[up] = pc_sat_add(v->tot_a[up], v->tot_a[i]);
        v->tot_b[up] = pc_sat_add(v->tot_b[up], v->tot_b[i]);
    }
    int64_t all = width_of(v, 0);
    if (all <= 0)
        return 0;
    double inner = SVG_WIDTH - 2 * PAD;
    /* Drawn: at least a pixel wide, and its parent drawn (a child is no
     * wider than its parent, but say so rather than rely on it). */
    size_t nd = 0;
    uint8_t *keep = (uint8_t *)v->chain;  /* free now: stacks are mapped */
    memset(keep, 0, v->n);
    keep[0] = 1;
    uint32_t max_depth = 0;
    double max_change = 0;
    for (size_t i = 1; i < v->n; i++) {
        if (!keep[v->parent[i]] || (double)width_of(v, (uint32_t)i) * inner < (double)all)
            continue;
        keep[i] = 1;
        v->drawn[nd++] = (uint32_t)i;
        if (v->depth[i] > max_depth)
            max_depth = v->depth[i];
    }
    if (g->diff)
        for (size_t i = 0; i < v->n; i++)
            if (keep[i]) {
                double ch = fabs((g->neww > 0 ? (double)v->tot_b[i] / (double)g->neww : 0) -
                                 (g->base > 0 ? (double)v->tot_a[i] / (double)g->base : 0));
                if (ch > max_change)
                    max_change = ch;
            }
    pc_sort_ctx(v->drawn, nd, sizeof *v->drawn, cmp_drawn, v);
    /* Each node starts where its previous sibling ended: siblings are
     * adjacent in drawn, and their parent is placed before them. */
    for (size_t i = 0; i < v->n; i++)
        v->x[i] = 0;
    for (size_t i = 0; i < nd;) {
        uint32_t up = v->parent[v->drawn[i]];
        double at = v->x[up];
        for (; i < nd && v->parent[v->drawn[i]] == up; i++) {
            v->x[v->drawn[i]] = at;
            at += (double)width_of(v, v->drawn[i]);
        }
    }

    int height = GHEAD + (int)(max_depth + 1) * ROW;
    char label[512], val[32], b[32], nv[32];
    graph_label(p, g, label, sizeof label);
    out(s, "<g class=\"graph\" transform=\"translate(0,%d)\" data-total=\"%" PRId64
           "\" data-items=\"%zu\" data-diff=\"%d\" data-unit=\"%s\">\n",
        y, all, g->items, g->diff, pc_wunit_name(g->unit));
    out(s, "<text class=\"gt\" x=\"%d\" y=\"15\">", PAD);
    put_esc(s, label, 80);
    if (g->diff) {
        pc_format_weight(b, sizeof b, g->base, g->unit);
        pc_format_weight(nv, sizeof nv, g->neww, g->unit);
        out(s, " (pid %" PRId64 ", tid %" PRId64 "): comparison of %zu samples, base %s%s, "
               "new %s%s</text>\n",
            p->thread.pid[g->thread], p->thread.tid[g->thread], g->items, b,
            pc_wunit_word(g->unit), nv, pc_wunit_word(g->unit));
    } else {
        pc_format_weight(val, sizeof val, all, g->unit);
        out(s, " (pid %" PRId64 ", tid %" PRId64 "): %zu %s, %s%s</text>\n",
            p->thread.pid[g->thread], p->thread.tid[g->thread], g->items,
            g->heap != PC_NONE ? "heap rows" : "samples", val, pc_wunit_word(g->unit));
    }
    out(s, "<text class=\"m\" x=\"%d\" y=\"15\" text-anchor=\"end\"></text>\n", SVG_WIDTH - PAD);
    for (size_t k = 0; k <= nd; k++) {
        uint32_t n = k == 0 ? 0 : v->drawn[k - 1];
        const char *name = node_name(v, n, label);
        int64_t w = width_of(v, n);
        double px = PAD + v->x[n] * inner / (double)all;
        double pw = (double)w * inner / (double)all;
        int ry = GHEAD + (int)(max_depth - v->depth[n]) * ROW;
        char fill[16];
        node_fill(v, g, n, name, max_change, fill, sizeof fill);
        out(s, "<g class=\"n\"><title>");
        put_esc(s, name, 0);
        if (g->diff) {
            double bs = pct(v->tot_a[n], g->base), ns = pct(v->tot_b[n], g->neww);
            pc_format_weight(b, sizeof b, v->tot_a[n], g->unit);
            pc_format_weight(nv, sizeof nv, v->tot_b[n], g->unit);
            out(s, "\nbase: %s%s (%.2f%%)\nnew: %s%s (%.2f%%)\nchange: %+.2f points", b,
                pc_wunit_word(g->unit), bs, nv, pc_wunit_word(g->unit), ns, ns - bs);
        } else {
            pc_format_weight(val, sizeof val, w, g->unit);
            pc_format_weight(b, sizeof b, v->self_b[n], g->unit);
            out(s, "\n%s%s (%.2f%%), self %s%s", val, pc_wunit_word(g->unit), pct(w, all), b,
                pc_wunit_word(g->unit));
        }
        out(s, "</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" "
               "data-x=\"%.0f\" data-v=\"%" PRId64 "\" data-d=\"%" PRIu32 "\"",
            px, ry, pw, ROW - 1, fill, v->x[n], w, v->depth[n]);
        if (g->diff)
            out(s, " data-b=\"%" PRId64 "\" data-n=\"%" PRId64 "\"", v->tot_a[n], v->tot_b[n]);
        out(s, "/><text x=\"%.1f\" y=\"%d\">", px + 3, ry + ROW - 4);
        size_t fits = pw > 8 ? (size_t)((pw - 6) / CHAR_W) : 0;
        if (fits >= 3)
            put_esc(s, name, fits);
        out(s, "</text></g>\n");
    }
    out(s, "</g>\n");
    return height + GAP;
}

static const char script[] =
    "'use strict';\n"
    "function label(name, w) {\n"
    "  const n = Math.floor((w - 6) / CW);\n"
    "  if (w <= 8 || n < 3) return '';\n"
    "  const chars = Array.from(name);\n"
    "  return chars.length <= n ? name : chars.slice(0, n - 2).join('') + '..';\n"
    "}\n"
    "function nameOf(g) { return g.querySelector('title').textContent.split('\\n')[0]; }\n"
    "function zoom(graph, node) {\n"
    "  const r0 = node.querySelector('rect');\n"
    "  const x0 = +r0.dataset.x, v0 = +r0.dataset.v, d0 = +r0.dataset.d;\n"
    "  const inner = W - 2 * PAD;\n"
    "  for (const g of graph.querySelectorAll('g.n')) {\n"
    "    const r = g.querySelector('rect'), t = g.querySelector('text');\n"
    "    const x = +r.dataset.x, v = +r.dataset.v, d = +r.dataset.d;\n"
    "    let px, pw;\n"
    "    if (d < d0 && x <= x0 && x + v >= x0 + v0) { px = PAD; pw = inner; g.classList.add('anc'); }\n"
    "    else if (d >= d0 && x >= x0 && x + v <= x0 + v0 + 0.5) {\n"
    "      px = PAD + (x - x0) / v0 * inner; pw = v / v0 * inner; g.classList.remove('anc');\n"
    "    } else { g.style.display = 'none'; continue; }\n"
    "    g.style.display = '';\n"
    "    r.setAttribute('x', px.toFixed(1)); r.setAttribute('width', pw.toFixed(1));\n"
    "    t.setAttribute('x', (px + 3).toFixed(1)); t.textContent = label(nameOf(g), pw);\n"
    "  }\n"
    "}\n"
    "function resetAll() {\n"
    "  for (const graph of document.querySelectorAll('g.graph'))\n"
    "    zoom(graph, graph.querySelector('g.n'));\n"
    "}\n"
    "function search(term) {\n"
    "  for (const graph of document.querySelectorAll('g.graph')) {\n"
    "    const spans = [];\n"
    "    for (const g of graph.querySelectorAll('g.n')) {\n"
    "      const hit = term !== '' && nameOf(g).includes(term);\n"
    "      g.classList.toggle('hit', hit);\n"
    "      const r = g.querySelector('rect');\n"
    "      if (hit) spans.push([+r.dataset.x, +r.dataset.x + +r.dataset.v]);\n"
    "    }\n"
    "    spans.sort((a, b) => a[0] - b[0]);\n"
    "    let sum = 0, end = -Infinity;\n"
    "    for (const [a, b] of spans) {\n"
    "      if (b <= end) continue;\n"
    "      sum += b - Math.max(a, end); end = b;\n"
    "    }\n"
    "    const total = +graph.dataset.total;\n"
    "    graph.querySelector('text.m').textContent =\n"
    "      term === '' ? '' : 'Matched: ' + (total > 0 ? (100 * sum / total).toFixed(2) : '0') + '%';\n"
    "  }\n"
    "  document.getElementById('clear').style.display = term === '' ? 'none' : '';\n"
    "}\n"
    "document.addEventListener('click', (e) => {\n"
    "  const node = e.target.closest ? e.target.closest('g.n') : null;\n"
    "  if (node) { zoom(node.closest('g.graph'), node); return; }\n"
    "  if (e.target.id === 'reset') resetAll();\n"
    "  else if (e.target.id === 'search') {\n"
    "    const term = window.prompt('Search for functions whose name contains:', '');\n"
    "    if (term !== null) search(term);\n"
    "  } else if (e.target.id === 'clear') search('');\n"
    "});\n"
    "document.addEventListener('keydown', (e) => {\n"
    "  if ((e.ctrlKey || e.metaKey) && e.key === 'f') {\n"
    "    e.preventDefault();\n"
    "    const term = window.prompt('Search for functions whose name contains:', '');\n"
    "    if (term !== null) search(term);\n"
    "  } else if (e.key === 'Escape') { resetAll(); search(''); }\n"
    "});\n"
    "]]></script>\n";

static const char style[] =
    "<style>\n"
    "text { font-family: monospace; font-size: 11px; fill: #000; }\n"
    "g.n text { pointer-events: none; }\n"
    "g.n rect { stroke: #fff; stroke-width: 0.5; }\n"
    "g.n:hover rect { stroke: #000; }\n"
    "g.n { cursor: pointer; }\n"
    "g.anc rect { opacity: 0.6; }\n"
    "g.hit rect { fill: #e040e0; }\n"
    "text.gt { font-size: 12px; font-weight: bold; }\n"
    "text.btn { font-size: 12px; fill: #0645ad; cursor: pointer; text-decoration: underline; }\n"
    "#title { font-size: 15px; }\n"
    "</style>\n";

/* The graphs and what each holds, busiest first. */
static int collect_graphs(svg *v)
{
    const pc_profile *p = v->p;
    size_t nt = p->thread.n, cap = 0;
    if (p->sample.n) {
        if (!(v->g = calloc(nt + 1, sizeof *v->g)))
            return -1;
        for (size_t t = 0; t < nt; t++) {
            graph *g = &v->g[v->n_g];
            memset(g, 0, sizeof *g);
            g->thread = (uint32_t)t;
            g->heap = PC_NONE;
            g->diff = p->thread.diff && p->thread.diff[t];
            g->unit = -3;
            for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++) {
                int64_t w = pc_sample_weight(p, i);
                uint16_t e = pc_sample_event(p, i);
                int unit = e < p->event.n ? p->event.unit[e] : PC_WUNIT_MIXED;
                g->unit = g->unit == -3 || g->unit == unit ? unit : PC_WUNIT_MIXED;
                g->items++;
                if (g->diff && w < 0)
                    g->base = pc_sat_add(g->base, w == INT64_MIN ? INT64_MAX : -w);
                else if (g->diff)
                    g->neww = pc_sat_add(g->neww, w);
                else if (w > 0)
                    g->total = pc_sat_add(g->total, w);
            }
            if (g->items)
                v->n_g++;
        }
    } else {
        for (size_t i = 0; i < p->heap.n; i++) {
            if (!pc_heap_shown(p, i))
                continue;
            size_t k = 0;
            /* Few (process, heap) pairs: a linear look-up is enough. */
            while (k < v->n_g && (v->g[k].thread != p->heap.thread[i] ||
                                  v->g[k].heap != p->heap.heap[i]))
                k++;
            if (k == v->n_g) {
                if (pc_grow(&v->g, &cap, v->n_g + 1, sizeof *v->g, 8) < 0)
                    return -1;
                memset(&v->g[k], 0, sizeof *v->g);
                v->g[k].thread = p->heap.thread[i];
                v->g[k].heap = p->heap.heap[i];
                v->g[k].unit = PC_UNIT_BYTES;
                v->n_g++;
            }
            uint64_t b = pc_heap_value(p, i);
            v->g[k].items++;
            v->g[k].total = pc_sat_add(v->g[k].total, pc_clamp_i64(b));
        }
    }
    pc_qsort(v->g, v->n_g, sizeof *v->g, cmp_graph);
    return 0;
}

/* Builds graph k's nodes. */
static void build_graph(svg *v, size_t k)
{
    const pc_profile *p = v->p;
    const graph *g = &v->g[k];
    v->n = 0;
    if (v->idx.slot)
        memset(v->idx.slot, 0, (v->idx.mask + 1) * sizeof *v->idx.slot);
    v->idx.used = 0;
    node_new(v, PC_NONE, PC_NONE, PC_CAT_OTHER);
    uint32_t stamp = (uint32_t)k + 1;
    if (g->heap == PC_NONE) {
        for (size_t i = p->sample.first[g->thread]; i < p->sample.first[g->thread + 1]; i++)
            add(v, p->sample.stack[i], stamp, pc_sample_weight(p, i), g->diff);
    } else {
        for (size_t i = 0; i < p->heap.n; i++) {
            if (p->heap.thread[i] != g->thread || p->heap.heap[i] != g->heap ||
                !pc_heap_shown(p, i))
                continue;
            uint64_t b = pc_heap_value(p, i);
            add(v, p->heap.stack[i], stamp, pc_clamp_i64(b), 0);
        }
    }
}

int pc_write_svg(const pc_profile *p, const pc_write_options *o, pc_sink *s, pc_error *err)
{
    (void)o;
    svg v = {0};
    v.p = p;
    v.s = s;
    size_t ns = p->stack.n + 1;
    uint32_t *order = malloc((p->thread.n + 1) * sizeof *order);
    uint32_t *main_of = malloc((p->thread.n + 1) * sizeof *main_of);
    v.fn_of = malloc(ns * sizeof *v.fn_of);
    v.stamp = calloc(ns, sizeof *v.stamp);
    /* chain holds a stack's path, then (as bytes) the drawn marks of up
     * to every flame node, which are no more than the stacks + 1. */
    v.chain = malloc((ns + 1) * sizeof *v.chain);
    v.drawn = malloc((ns + 1) * sizeof *v.drawn);
    int status = PC_OK;
    if (!order || !main_of || !v.fn_of || !v.stamp || !v.chain || !v.drawn)
        goto oom;
    if (collect_graphs(&v) < 0)
        goto oom;
    char title[512];
    uint32_t focus = PC_NONE;
    pc_thread_order(p, order, main_of);
    if (pc_focus_thread(p, main_of, &focus) < 0 ||
        pc_title(p, main_of, focus, title, sizeof title) < 0)
        goto oom;
    /* The root element states the height, known once every graph's
     * drawn nodes are: the graphs go to memory first (their bytes are
     * only the drawn nodes, small next to the input). */
    pc_sink *body = NULL;
    unsigned char *bytes = NULL;
    size_t n_bytes = 0;
    if ((status = sink_open_memory(&body, 0, err)) != PC_OK)
        goto done;
    v.s = body;
    int y = HEAD;
    for (size_t k = 0; k < v.n_g && !v.oom; k++) {
        build_graph(&v, k);
        if (!v.oom)
            y += write_graph(&v, &v.g[k], y);
    }
    if (v.oom) {
        sink_abort(body);
        goto oom;
    }
    if ((status = sink_finish(body, &bytes, &n_bytes, err)) != PC_OK)
        goto done;
    int64_t samples = 0;
    for (size_t k = 0; k < v.n_g; k++)
        samples += (int64_t)v.g[k].items;
    out(s, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
           "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
           "height=\"%d\" viewBox=\"0 0 %d %d\">\n",
        SVG_WIDTH, y, SVG_WIDTH, y);
    sink_write(s, style, sizeof style - 1);
    out(s, "<script><![CDATA[\nconst W = %d, PAD = %d, CW = %g;\n", SVG_WIDTH, PAD, CHAR_W);
    sink_write(s, script, sizeof script - 1);
    out(s, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n"
           "<text id=\"title\" x=\"%d\" y=\"20\">", PAD);
    put_esc(s, title, 110);
    out(s, "</text>\n<text id=\"totals\" x=\"%d\" y=\"36\">%" PRId64 " %s in %zu %s; "
           "click a frame to zoom, Ctrl-F or Search to find functions</text>\n",
        PAD, samples, p->sample.n ? "samples" : "heap rows", v.n_g,
        p->sample.n ? "threads" : "heaps");
    out(s, "<text id=\"search\" class=\"btn\" x=\"%d\" y=\"20\" text-anchor=\"end\">"
           "Search</text>\n<text id=\"reset\" class=\"btn\" x=\"%d\" y=\"36\" "
           "text-anchor=\"end\">Reset zoom</text>\n<text id=\"clear\" class=\"btn\" x=\"%d\" "
           "y=\"20\" text-anchor=\"end\" style=\"display:none\">Clear</text>\n",
        SVG_WIDTH - PAD, SVG_WIDTH - PAD, SVG_WIDTH - PAD - 60);
    sink_write(s, bytes, n_bytes);
    out(s, "</svg>\n");
    free(bytes);
    goto done;
oom:
    status = pc_fail(err, PC_ENOMEM, "out of memory writing the SVG flame graph");
done:
    svg_free(&v);
    free(order);
    free(main_of);
    return status;
}
