/* The SVG flame graph of a corpus recording against what the real Firefox
 * Profiler shows of the same conversion (../shared/fxprof/validate): each
 * thread's graph holds the thread's total weight, and the functions the
 * profiler lists as the thread's top self functions are in its graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonmini.h"
#include "t.h"
#include "test_util.h"

#define INPUT "perf_display_bitmaps.callchain.trace"

static int write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(text, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

/* The graph of svg whose title starts with "NAME (pid PID, tid TID)": a
 * new string of its text, up to the next graph; NULL when none. */
static char *graph_of(const char *svg, const char *name, const char *pid, const char *tid)
{
    char head[512];
    snprintf(head, sizeof head, "y=\"15\">%s (pid %s, tid %s)", name, pid, tid);
    const char *at = strstr(svg, head);
    if (!at)
        return NULL;
    const char *start = at;
    while (start > svg && strncmp(start, "<g class=\"graph\"", 16) != 0)
        start--;
    const char *end = strstr(at, "<g class=\"graph\"");
    size_t n = end ? (size_t)(end - start) : strlen(start);
    char *g = malloc(n + 1);
    if (g) {
        memcpy(g, start, n);
        g[n] = 0;
    }
    return g;
}

TEST(svg_shows_what_the_profiler_shows)
{
    const char *sh = t_shared();
    if (!sh || !t_node20()) {
        t_skip("Node.js 20 or ../shared is missing: the SVG is not compared with the profiler");
        return;
    }
    pc_profile *p = convert_input(INPUT, NULL);
    if (!p)
        return;
    size_t jlen = 0, slen = 0;
    char *json = written_text(p, PC_FORMAT_FIREFOX, &jlen);
    char *svg = written_text(p, PC_FORMAT_SVG, &slen);
    pc_profile_free(p);
    char jpath[600], rpath[600], cmd[2000];
    snprintf(jpath, sizeof jpath, "%s/svg-vs.json", t_tmpdir());
    snprintf(rpath, sizeof rpath, "%s/svg-vs-report.json", t_tmpdir());
    T_CHECK(json && svg && write_file(jpath, json, jlen));
    snprintf(cmd, sizeof cmd, "%s/fxprof/validate --quiet --json %s %s > /dev/null 2>&1", sh,
             rpath, jpath);
    T_EQ_INT(system(cmd), 0);
    char *rep = read_text(rpath);
    char msg[128];
    jv *root = rep ? j_parse(rep, strlen(rep), msg, sizeof msg) : NULL;
    const jv *threads = j_get(j_at(root, 0), "threads");
    size_t compared = 0, functions = 0;
    for (size_t i = 0; svg && i < j_len(threads); i++) {
        const jv *th = j_at(threads, i);
        if (j_num(j_get(th, "samples")) <= 0)
            continue;
        const char *name = j_str(j_get(th, "name"));
        char *g = graph_of(svg, name ? name : "", j_str(j_get(th, "pid")),
                           j_str(j_get(th, "tid")));
        if (!g) {
            t_fail(__FILE__, __LINE__, "no graph in the SVG for thread %s", name ? name : "");
            continue;
        }
        /* The thread's weight: the profiler's ms, the graph's ns. */
        const char *tot = strstr(g, "data-total=\"");
        double ns = tot ? strtod(tot + 12, NULL) : -1;
        double ms = j_num(j_get(th, "weight"));
        if (!(ns / 1e6 > ms - 1e-6 && ns / 1e6 < ms + 1e-6))
            t_fail(__FILE__, __LINE__, "%s: the SVG holds %.6f ms, the profiler %.6f ms",
                   name ? name : "", ns / 1e6, ms);
        const jv *top = j_get(th, "topSelf");
        for (size_t k = 0; k < j_len(top); k++) {
            const char *fn = j_str(j_get(j_at(top, k), "name"));
            /* Names with XML's special characters are written escaped. */
            if (!fn || strpbrk(fn, "<>&\"'"))
                continue;
            char key[600];
            snprintf(key, sizeof key, "<title>%s\n", fn);
            if (!strstr(g, key))
                t_fail(__FILE__, __LINE__, "%s: top self function %s is not in its graph",
                       name ? name : "", fn);
            functions++;
        }
        compared++;
        free(g);
    }
    fprintf(stderr, "svg: %zu threads and %zu top functions compared with the profiler\n",
            compared, functions);
    T_CHECK(compared >= 5);
    T_CHECK(functions >= 10);
    j_free(root);
    free(rep);
    free(json);
    free(svg);
}
