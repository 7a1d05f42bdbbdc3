/* The SVG flame graph: its sums against folded stacks, narrow nodes left
 * out with the totals kept, a comparison thread's colours, identical bytes
 * from run to run, escaped names, and (when node, Chromium and
 * puppeteer-core are here) a corpus file's graph opened in a browser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corpus.h"
#include "hand_profile.h"
#include "t.h"
#include "test_util.h"

/* One drawn node, as the SVG states it. */
typedef struct node {
    char name[256];
    char fill[8];
    long long v, b, n;
    int d, graph;
} node;

/* XML's escapes undone, in place. */
static void unescape(char *s)
{
    static const struct {
        const char *e;
        char c;
    } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}};
    char *o = s;
    while (*s) {
        size_t i = 0;
        for (; i < 5; i++)
            if (strncmp(s, ents[i].e, strlen(ents[i].e)) == 0)
                break;
        if (i < 5) {
            *o++ = ents[i].c;
            s += strlen(ents[i].e);
        } else {
            *o++ = *s++;
        }
    }
    *o = 0;
}

static long long attr(const char *at, const char *end, const char *key)
{
    const char *k = strstr(at, key);
    return k && k < end ? atoll(k + strlen(key)) : -1;
}

/* The nodes of svg, and each graph's data-total into totals[]. */
static size_t parse(const char *svg, node *out, size_t max, long long *totals, size_t *n_graphs)
{
    size_t n = 0;
    int graph = -1;
    for (const char *s = svg; (s = strstr(s, "<g class=\"")) != NULL;) {
        s += 10;
        if (strncmp(s, "graph\"", 6) == 0) {
            graph++;
            totals[graph] = attr(s, strchr(s, '>'), "data-total=\"");
            continue;
        }
        if (strncmp(s, "n\"><title>", 10) != 0 || n == max)
            continue;
        s += 10;
        node *x = &out[n++];
        memset(x, 0, sizeof *x);
        size_t len = strcspn(s, "\n<");
        snprintf(x->name, sizeof x->name, "%.*s", (int)len, s);
        unescape(x->name);
        const char *r = strstr(s, "<rect ");
        const char *e = r ? strstr(r, "/>") : NULL;
        if (!r || !e)
            break;
        x->v = attr(r, e, "data-v=\"");
        x->d = (int)attr(r, e, "data-d=\"");
        x->b = attr(r, e, "data-b=\"");
        x->n = attr(r, e, "data-n=\"");
        const char *f = strstr(r, "fill=\"");
        if (f && f < e)
            snprintf(x->fill, sizeof x->fill, "%.7s", f + 6);
        x->graph = graph;
    }
    *n_graphs = (size_t)(graph + 1);
    return n;
}

static const node *find(const node *nodes, size_t n, int graph, int depth, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (nodes[i].graph == graph && nodes[i].d == depth && strcmp(nodes[i].name, name) == 0)
            return &nodes[i];
    return NULL;
}

TEST(svg_sums_equal_folded)
{
    pc_profile *p = convert_fixture(NULL);
    if (!p)
        return;
    char *svg = written_text(p, PC_FORMAT_SVG, NULL);
    char *folded = written_text(p, PC_FORMAT_FOLDED, NULL);
    static node nodes[4096];
    long long totals[64];
    size_t ng = 0;
    size_t n = svg ? parse(svg, nodes, 4096, totals, &ng) : 0;
    T_CHECK(ng >= 3);
    /* Each folded line "thread;root;...;leaf value" adds its value to its
     * thread's graph and to the graph's node of its root function. */
    for (char *line = folded; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        char *sp = strrchr(line, ' '), *semi = strchr(line, ';');
        if (sp && semi) {
            long long v = atoll(sp + 1);
            *sp = 0;
            *semi = 0;
            char *root = semi + 1;
            root[strcspn(root, ";")] = 0;
            int g = -1;
            for (size_t i = 0; i < n; i++)
                if (nodes[i].d == 0 && strcmp(nodes[i].name, line) == 0)
                    g = nodes[i].graph;
            T_CHECK(g >= 0);
            if (g >= 0) {
                /* Subtract: every graph's total and roots must reach 0. */
                totals[g] -= v;
                node *r = (node *)find(nodes, n, g, 1, root);
                T_CHECK(r != NULL);
                if (r)
                    r->v -= v;
            }
        }
        line = nl ? nl + 1 : line + strlen(line);
    }
    for (size_t g = 0; g < ng; g++)
        T_EQ_INT(totals[g], 0);
    for (size_t i = 0; i < n; i++)
        if (nodes[i].d == 1)
            T_EQ_INT(nodes[i].v, 0);
    free(svg);
    free(folded);
    pc_profile_free(p);
}

TEST(svg_narrow_nodes_merged)
{
    /* 500 leaves of weight 1 beside one of 1,000,000: each is far below a
     * pixel at 1180 px of content, so none is drawn, but the root and the
     * caller keep their weight. */
    static hand_sample s[502];
    static char paths[500][32];
    s[0] = (hand_sample){"main", "main;big", 1000000};
    s[1] = (hand_sample){"main", "main;wide", 2000};
    for (int i = 0; i < 500; i++) {
        snprintf(paths[i], sizeof paths[i], "main;tiny%03d", i);
        s[2 + i] = (hand_sample){"main", paths[i], 1};
    }
    pc_profile *p = hand_profile(s, 502, PC_UNIT_NS, NULL);
    T_CHECK(p != NULL);
    if (!p)
        return;
    char *svg = written_text(p, PC_FORMAT_SVG, NULL);
    static node nodes[1024];
    long long totals[4];
    size_t ng = 0, n = svg ? parse(svg, nodes, 1024, totals, &ng) : 0;
    T_EQ_INT(ng, 1);
    T_EQ_INT(totals[0], 1002500);
    const node *root = find(nodes, n, 0, 0, "main");
    const node *m = find(nodes, n, 0, 1, "main");
    T_CHECK(root && root->v == 1002500);
    T_CHECK(m && m->v == 1002500);
    T_CHECK(find(nodes, n, 0, 2, "big") != NULL);
    T_CHECK(find(nodes, n, 0, 2, "wide") != NULL);  /* 2000/1002500 of 1180 px: 2.4 px */
    T_EQ_INT(n, 4);
    T_CHECK(svg && !strstr(svg, "tiny"));
    free(svg);
    pc_profile_free(p);
}

/* The red and blue parts of "#rrggbb". */
static int channel(const char *fill, int i)
{
    char h[3] = {fill[1 + 2 * i], fill[2 + 2 * i], 0};
    return (int)strtol(h, NULL, 16);
}

TEST(svg_diff_colours)
{
    /* Base: grow 100, shrink 300, same 100; new: grow 300, shrink 100,
     * same 100.  Equal totals (500 each): grow gains 40 points, shrink
     * loses 40, same does not move. */
    static const hand_sample s[] = {
        {"diff", "main;grow", -100}, {"diff", "main;shrink", -300}, {"diff", "main;same", -100},
        {"diff", "main;grow", 300},  {"diff", "main;shrink", 100},  {"diff", "main;same", 100},
    };
    pc_profile *p = hand_profile(s, 6, PC_UNIT_NS, "diff");
    T_CHECK(p != NULL);
    if (!p)
        return;
    char *svg = written_text(p, PC_FORMAT_SVG, NULL);
    static node nodes[64];
    long long totals[4];
    size_t ng = 0, n = svg ? parse(svg, nodes, 64, totals, &ng) : 0;
    const node *grow = find(nodes, n, 0, 2, "grow");
    const node *shrink = find(nodes, n, 0, 2, "shrink");
    const node *same = find(nodes, n, 0, 2, "same");
    T_CHECK(grow && shrink && same);
    if (grow && shrink && same) {
        T_EQ_INT(grow->b, 100);
        T_EQ_INT(grow->n, 300);
        T_EQ_INT(grow->v, 400);
        T_EQ_INT(shrink->b, 300);
        T_EQ_INT(shrink->n, 100);
        T_CHECK(channel(grow->fill, 0) > channel(grow->fill, 2));      /* red */
        T_CHECK(channel(shrink->fill, 2) > channel(shrink->fill, 0));  /* blue */
        T_EQ_INT(channel(same->fill, 0), channel(same->fill, 2));      /* grey */
        /* The largest change is the deepest colour. */
        T_EQ_INT(channel(grow->fill, 1), channel(shrink->fill, 1));
    }
    T_CHECK(svg && strstr(svg, "change: +40.00 points"));
    T_CHECK(svg && strstr(svg, "change: -40.00 points"));
    free(svg);
    pc_profile_free(p);
}

TEST(svg_deterministic_bytes)
{
    pc_profile *p = convert_fixture(NULL);
    if (!p)
        return;
    size_t n1 = 0, n2 = 0;
    char *a = written_text(p, PC_FORMAT_SVG, &n1);
    char *b = written_text(p, PC_FORMAT_SVG, &n2);
    T_CHECK(a && b && n1 == n2 && memcmp(a, b, n1) == 0);
    T_CHECK(a && strncmp(a, "<?xml", 5) == 0 && strstr(a, "</svg>\n"));
    free(a);
    free(b);
    pc_profile_free(p);
}

TEST(svg_escapes_names)
{
    static const hand_sample s[] = {
        {"t<&>", "main;operator<<(a&b, \"c\", 'd')", 10},
        {"t<&>", "main;bad\x01\xff", 10},
    };
    pc_profile *p = hand_profile(s, 2, PC_UNIT_NS, NULL);
    T_CHECK(p != NULL);
    if (!p)
        return;
    char *svg = written_text(p, PC_FORMAT_SVG, NULL);
    T_CHECK(svg && strstr(svg, "operator&lt;&lt;(a&amp;b, &quot;c&quot;, &#39;d&#39;)"));
    T_CHECK(svg && strstr(svg, "t&lt;&amp;&gt;"));
    T_CHECK(svg && strstr(svg, "bad??"));
    T_CHECK(svg && !strstr(svg, "operator<<"));
    T_CHECK(svg && !strchr(svg, '\x01'));
    free(svg);
    pc_profile_free(p);
}

/* Loads the SVG, zooms into a node, searches, resets; prints the console
 * errors and what the page shows as JSON. */
static const char browser_script[] =
    "import { createRequire } from 'module';\n"
    "import path from 'path';\n"
    "const require = createRequire(path.join(process.argv[3], 'x.js'));\n"
    "const puppeteer = require('puppeteer-core');\n"
    "const browser = await puppeteer.launch({ executablePath: process.argv[4], headless: true,\n"
    "  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });\n"
    "const out = { errors: [], nodes: 0, graphs: 0, matched: '', hidden: 0 };\n"
    "try {\n"
    "  const page = await browser.newPage();\n"
    "  page.on('console', (m) => { if (m.type() === 'error') out.errors.push(m.text()); });\n"
    "  page.on('pageerror', (e) => out.errors.push(String(e)));\n"
    "  await page.goto('file://' + process.argv[2], { waitUntil: 'load', timeout: 15000 });\n"
    "  out.nodes = await page.evaluate(() => document.querySelectorAll('g.n').length);\n"
    "  out.graphs = await page.evaluate(() => document.querySelectorAll('g.graph').length);\n"
    "  await page.evaluate(() => {\n"
    "    const all = [...document.querySelector('g.graph').querySelectorAll('g.n')];\n"
    "    const deep = all.reduce((a, b) => +b.querySelector('rect').dataset.d >\n"
    "                                     +a.querySelector('rect').dataset.d ? b : a);\n"
    "    deep.querySelector('rect').dispatchEvent(new MouseEvent('click', { bubbles: true }));\n"
    "  });\n"
    "  out.hidden = await page.evaluate(() =>\n"
    "    [...document.querySelectorAll('g.n')].filter((g) => g.style.display === 'none').length);\n"
    "  await page.evaluate(() => search('a'));\n"
    "  out.matched = await page.evaluate(() => document.querySelector('text.m').textContent);\n"
    "  await page.click('#reset');\n"
    "} catch (e) { out.errors.push(String(e)); }\n"
    "await browser.close();\n"
    "console.log(JSON.stringify(out));\n";

TEST(svg_opens_in_chromium)
{
    const char *env = getenv("FXPROF_SHOTS_MODULES");
    char modules[512], probe[600];
    snprintf(modules, sizeof modules, "%s", env && *env ? env : "/tmp/pp");
    snprintf(probe, sizeof probe, "%s/node_modules/puppeteer-core/package.json", modules);
    const char *chromium = getenv("CHROMIUM");
    if (!chromium || !*chromium)
        chromium = "/usr/bin/chromium";
    if (!t_shared()) {
        t_skip("no ../shared (the corpus)");
        return;
    }
    if (!t_in_path("node")) {
        t_skip("node not installed");
        return;
    }
    if (access(chromium, X_OK) != 0) {
        t_skip("no chromium (%s; CHROMIUM names another)", chromium);
        return;
    }
    if (access(probe, R_OK) != 0) {
        t_skip("no puppeteer-core in %s/node_modules (FXPROF_SHOTS_MODULES names the folder)",
               modules);
        return;
    }
    pc_profile *p = convert_input("perf_display_bitmaps.callchain.trace", NULL);
    if (!p)
        return;
    size_t len = 0;
    char *svg = written_text(p, PC_FORMAT_SVG, &len);
    pc_profile_free(p);
    char svg_path[600], script[600], out_path[600], cmd[3000];
    snprintf(svg_path, sizeof svg_path, "%s/flame.svg", t_tmpdir());
    snprintf(script, sizeof script, "%s/svg-open.mjs", t_tmpdir());
    snprintf(out_path, sizeof out_path, "%s/svg-open.json", t_tmpdir());
    FILE *f = fopen(svg_path, "wb");
    FILE *g = fopen(script, "w");
    if (!svg || !f || !g) {
        if (f)
            fclose(f);
        if (g)
            fclose(g);
        free(svg);
        t_fail(__FILE__, __LINE__, "cannot write the SVG or the script in %s", t_tmpdir());
        return;
    }
    fwrite(svg, 1, len, f);
    fclose(f);
    fputs(browser_script, g);
    fclose(g);
    free(svg);
    snprintf(cmd, sizeof cmd, "timeout 60 node '%s' '%s' '%s' '%s' > '%s' 2>&1", script, svg_path,
             modules, chromium, out_path);
    int rc = system(cmd);
    char *res = read_text(out_path);
    T_EQ_INT(rc, 0);
    T_CHECK(res != NULL);
    if (res) {
        if (!strstr(res, "\"errors\":[]"))
            t_fail(__FILE__, __LINE__, "the browser said: %.2000s", res);
        T_CHECK(strstr(res, "\"nodes\":0,") == NULL);
        T_CHECK(strstr(res, "\"graphs\":9,") != NULL);
        T_CHECK(strstr(res, "\"matched\":\"Matched: ") != NULL);
        T_CHECK(strstr(res, "\"hidden\":0}") == NULL);
    }
    free(res);
}
