/* profconv diff and several inputs in one profile.
 *
 * Two versions of one program, written by the tests' encoder: in the new
 * one, f's cost doubles and g, h, i, j stay as they were.  The comparison
 * names f as the top change, with the right sign and size, in the Firefox
 * diff (as the real profiler reads it), the folded diff, the text report
 * and the exit code of --fail-above.  A simpleperf file and a Perfetto
 * trace combined keep both sets of threads, each with the samples and
 * weights of its own conversion. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "fixtures.h"
#include "jsonmini.h"
#include "read/perfetto/pf_fixtures.h"
#include "pf_encode.h"
#include "sp_encode.h"
#include "t.h"
#include "test_util.h"

static const char *tmp(const char *name)
{
    static char bufs[8][512];
    static int next;
    next = (next + 1) % 8;
    snprintf(bufs[next], sizeof bufs[next], "%s/%s", t_tmpdir(), name);
    return bufs[next];
}

static int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

/* A simpleperf recording of main calling f, g, h, i, j; f takes f_ms ms,
 * the others 100 ms each, in samples of 1 ms. */
static void program(const char *path, int f_ms, const char *lib)
{
    spe e;
    spe_begin(&e);
    const char *ev[] = {"cpu-clock"};
    spe_meta(&e, ev, 1, NULL, NULL, NULL, NULL, 0);
    uint64_t t = 1000000000;
    for (int fn = 1; fn <= 5; fn++) {
        int n = fn == 1 ? f_ms : 100;
        for (int k = 0; k < n; k++) {
            spe_frame chain[2] = {{0x1000 + (uint64_t)fn * 0x100, 0, fn, -1},
                                  {0x1000, 0, 0, -1}};
            spe_sample(&e, t, 4242, 1000000, 0, chain, 2, NULL);
            t += 1000000;
        }
    }
    const char *syms[] = {"main", "f", "g", "h", "i", "j"};
    spe_file(&e, 0, lib, syms, 6);
    spe_thread(&e, 4242, 4242, "app");
    spe_end(&e);
    T_CHECK(write_file(path, e.out.data, e.out.len));
    spe_free(&e);
}

/* Runs the CLI with args; its exit status, stdout in *out (malloc'd). */
static int cli(const char *args, char **out)
{
    char cmd[4096];
    const char *o = tmp("cli.out");
    snprintf(cmd, sizeof cmd, "%s %s > %s 2> %s", t_profconv(), args, o, tmp("cli.err"));
    int st = system(cmd);
    if (out)
        *out = read_text(o);
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (code > 1) {
        /* What went wrong, for the failure that follows. */
        char *e = read_text(tmp("cli.err"));
        fprintf(stderr, "profconv %s: exit %d: %s", args, code, e ? e : "");
        free(e);
    }
    return code;
}

static int node_ok(void)
{
    return t_shared() && t_node20();
}

TEST(diff_names_the_function_that_doubled)
{
    char base[512], next[512];
    snprintf(base, sizeof base, "%s", tmp("base.trace"));
    snprintf(next, sizeof next, "%s", tmp("new.trace"));
    program(base, 100, "/system/lib64/libapp.so");
    program(next, 200, "/system/lib64/libapp.so");
    char args[2048], *out = NULL, *err = NULL;

    /* Folded, as difffolded reads it: stack, base, new. */
    snprintf(args, sizeof args, "diff %s %s --to folded -o -", base, next);
    T_EQ_INT(cli(args, &out), 0);
    T_CONTAINS(out ? out : "", "main;f 100000000 200000000\n");
    T_CONTAINS(out ? out : "", "main;g 100000000 100000000\n");
    free(out);

    /* The text report: f first among the changes, +13.33 points of self
     * share (20% of 500 ms to 33.3% of 600 ms), the same of total. */
    snprintf(args, sizeof args, "diff %s %s --to text", base, next);
    T_EQ_INT(cli(args, &out), 0);
    const char *ch = out ? strstr(out, "Changes (base -> new)") : NULL;
    T_CHECK(ch != NULL);
    const char *row = ch ? strstr(ch, "\n  f ") : NULL;
    T_CHECK(row != NULL);
    if (row) {
        char first[256];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(row + 1, "\n"), row + 1);
        T_CONTAINS(first, "20.00  33.33  +13.33");
        /* No other function's row comes before it. */
        const char *head = strstr(ch, "function");
        T_CHECK(head && strchr(head, '\n') == row);
    }
    free(out);

    /* Formats that cannot show negative weights refuse a comparison. */
    snprintf(args, sizeof args, "diff %s %s --to speedscope -o %s", base, next,
             tmp("d.speedscope.json"));
    T_EQ_INT(cli(args, NULL), 1);
    err = read_text(tmp("cli.err"));
    T_CONTAINS(err ? err : "", "speedscope cannot show a comparison");
    T_CONTAINS(err ? err : "", "write one of firefox, folded, svg, text (--to)");
    free(err);
    snprintf(args, sizeof args, "diff %s %s --to pprof -o %s", base, next, tmp("d.pb.gz"));
    T_EQ_INT(cli(args, NULL), 1);

    /* A new build seldom lives where the old one did: functions of files
     * of one name are still one function. */
    char moved[512];
    snprintf(moved, sizeof moved, "%s", tmp("moved.trace"));
    program(moved, 200, "/data/app/~~v2/lib/arm64/libapp.so");
    snprintf(args, sizeof args, "diff %s %s --to folded -o -", base, moved);
    T_EQ_INT(cli(args, &out), 0);
    T_CONTAINS(out ? out : "", "main;f 100000000 200000000\n");
    free(out);

    /* --fail-above: f's self share went from 20% to 33.3%. */
    snprintf(args, sizeof args, "diff %s %s -o %s --fail-above 10", base, next,
             tmp("d1.json"));
    T_EQ_INT(cli(args, NULL), 1);
    err = read_text(tmp("cli.err"));
    T_CONTAINS(err ? err : "", "fail-above: f: self share 20.0% -> 33.3% (+13.3 points, limit 10)");
    free(err);
    snprintf(args, sizeof args, "diff %s %s -o %s --fail-above 15", base, next,
             tmp("d2.json"));
    T_EQ_INT(cli(args, NULL), 0);
    /* A named function: its total share (main's stays 100%). */
    snprintf(args, sizeof args, "diff %s %s -o %s --fail-above main:1 --fail-above g:1", base,
             next, tmp("d3.json"));
    T_EQ_INT(cli(args, NULL), 0);
    snprintf(args, sizeof args, "diff %s %s -o %s --fail-above f:10", base, next,
             tmp("d4.json"));
    T_EQ_INT(cli(args, NULL), 1);
    /* The other way round, f's share shrank: nothing grew past 10. */
    snprintf(args, sizeof args, "diff %s %s -o %s --fail-above 10", next, base,
             tmp("d5.json"));
    T_EQ_INT(cli(args, NULL), 0);

    /* The Firefox diff: the comparison thread's call tree, as the real
     * profiler computes it, has f on top with +100 ms. */
    char fx[512];
    snprintf(fx, sizeof fx, "%s", tmp("diff.json"));
    snprintf(args, sizeof args, "diff %s %s -o %s", base, next, fx);
    T_EQ_INT(cli(args, NULL), 0);
    char *json = read_text(fx);
    char msg[128];
    jv *root = json ? j_parse(json, strlen(json), msg, sizeof msg) : NULL;
    T_CHECK(root != NULL);
    const jv *threads = j_get(root, "threads");
    T_EQ_INT(j_len(threads), 3);
    int seen = 0;
    for (size_t i = 0; i < j_len(threads); i++) {
        const jv *th = j_at(threads, i);
        const char *name = j_str(j_get(th, "name"));
        if (name && strcmp(name, "Diff between base and new") == 0) {
            seen = 1;
            T_EQ_STR(j_str(j_get(th, "processType")), "comparison");
            const jv *w = j_get(j_get(th, "samples"), "weight");
            double sum = 0;
            for (size_t k = 0; k < j_len(w); k++)
                sum += j_num(j_at(w, k));
            T_CHECK(sum > 99.999 && sum < 100.001);  /* ms: 600 new - 500 base */
        }
    }
    T_CHECK(seen);
    j_free(root);
    free(json);
    if (!node_ok()) {
        t_skip("Node.js 20 or ../shared is missing: the profiler's view of the diff is not checked");
        return;
    }
    char cmd[2048];
    char report[512];
    snprintf(report, sizeof report, "%s", tmp("diff-report.json"));
    snprintf(cmd, sizeof cmd, "%s/fxprof/validate --quiet --json %s %s > /dev/null 2>&1",
             t_shared(), report, fx);
    T_EQ_INT(system(cmd), 0);
    char *rep = read_text(report);
    T_CHECK(rep != NULL);
    /* The selected thread is the comparison, and its top self function is
     * f, with the 100 ms it gained; the whole tree sums to the change. */
    char msg2[128];
    jv *vr = rep ? j_parse(rep, strlen(rep), msg2, sizeof msg2) : NULL;
    const jv *file = j_at(vr, 0);
    const jv *vth = j_get(file, "threads");
    size_t diff_at = j_len(vth);
    for (size_t i = 0; i < j_len(vth); i++) {
        const char *name = j_str(j_get(j_at(vth, i), "name"));
        if (name && strcmp(name, "Diff between base and new") == 0)
            diff_at = i;
    }
    T_CHECK(diff_at < j_len(vth));
    const jv *dt = j_at(vth, diff_at);
    T_EQ_INT(j_int(j_at(j_get(j_get(file, "meta"), "selectedThreads"), 0)), (long long)diff_at);
    T_CHECK(j_num(j_get(dt, "callTreeRootTotal")) > 99.999 &&
            j_num(j_get(dt, "callTreeRootTotal")) < 100.001);
    const jv *top = j_at(j_get(dt, "topSelf"), 0);
    T_EQ_STR(j_str(j_get(top, "name")), "f");
    T_CHECK(j_num(j_get(top, "self")) > 99.999 && j_num(j_get(top, "self")) < 100.001);
    j_free(vr);
    free(rep);
}

/* Per thread of p (threads [t0, t1)): name, samples and weight, in a
 * string; with a label, main threads' names as labelled ones read. */
static void thread_sums(const pc_profile *p, size_t t0, size_t t1, const char *label, char *buf,
                        size_t cap)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t t = t0; t < t1 && used < cap; t++) {
        int64_t w = 0;
        for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++)
            w += pc_sample_weight(p, i);
        int main = label && p->thread.tid[t] == p->thread.pid[t];
        used += (size_t)snprintf(buf + used, cap - used, "%s%s%s:%zu:%lld ",
                                 main ? label : "", main ? ": " : "",
                                 str_of(p, p->thread.name[t]),
                                 p->sample.first[t + 1] - p->sample.first[t], (long long)w);
    }
}

TEST(several_inputs_make_one_profile)
{
    spe e;
    fx_android(&e);
    pb_buf b = {0};
    fx_perf(&b);
    pc_profile *a = NULL, *c = NULL, *a2 = NULL, *c2 = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(e.out.data, e.out.len, NULL, &a, &err), PC_OK);
    T_EQ_INT(convert_bytes(b.data, b.len, NULL, &c, &err), PC_OK);
    T_EQ_INT(convert_bytes(e.out.data, e.out.len, NULL, &a2, &err), PC_OK);
    T_EQ_INT(convert_bytes(b.data, b.len, NULL, &c2, &err), PC_OK);
    if (!a || !c || !a2 || !c2) {
        pc_profile_free(a);
        pc_profile_free(c);
        pc_profile_free(a2);
        pc_profile_free(c2);
        spe_free(&e);
        pb_buf_free(&b);
        return;
    }
    size_t na = a->thread.n, nc = c->thread.n;
    static char want_a[8192], want_c[8192], got_a[8192], got_c[8192];
    thread_sums(a, 0, na, "simpleperf", want_a, sizeof want_a);
    thread_sums(c, 0, nc, "perfetto", want_c, sizeof want_c);
    pc_profile *in[2] = {a, c}, *m = NULL;
    const char *labels[2] = {"simpleperf", "perfetto"};
    T_EQ_INT(pc_profiles_combine(in, labels, 2, 0, NULL, &m, &err), PC_OK);
    if (m) {
        T_EQ_INT(m->thread.n, na + nc);
        /* The combined profile is grouped again: each input's threads
         * keep their order, the first input's first. */
        thread_sums(m, 0, na, NULL, got_a, sizeof got_a);
        thread_sums(m, na, na + nc, NULL, got_c, sizeof got_c);
        T_EQ_STR(got_a, want_a);
        T_EQ_STR(got_c, want_c);
        /* Processes are labelled by input, and no pid is shared. */
        for (size_t t = 0; t < m->thread.n; t++) {
            const char *pn = str_of(m, pc_process_name(m, m->thread.pid[t]));
            T_CHECK(strncmp(pn, t < na ? "simpleperf: " : "perfetto: ", t < na ? 12 : 10) == 0);
            for (size_t u = 0; u < m->thread.n; u++)
                T_CHECK((t < na) == (u < na) || m->thread.pid[t] != m->thread.pid[u]);
        }
    }
    pc_profile_free(m);

    /* --merge-runs: the same recording twice is one set of threads with
     * twice the samples. */
    size_t want_samples = a2->sample.n;
    pc_profile *twice[2] = {a2, NULL}, *r = NULL;
    T_EQ_INT(convert_bytes(e.out.data, e.out.len, NULL, &twice[1], &err), PC_OK);
    if (twice[1]) {
        T_EQ_INT(pc_profiles_combine(twice, NULL, 2, 1, NULL, &r, &err), PC_OK);
        if (r) {
            T_EQ_INT(r->thread.n, na);
            size_t n = 0;
            for (size_t t = 0; t < na; t++)
                n += r->sample.first[t + 1] - r->sample.first[t];
            T_EQ_INT(n, r->sample.n);
            T_EQ_INT(r->sample.n, 2 * want_samples);
        }
        pc_profile_free(r);
    } else {
        pc_profile_free(a2);
    }
    pc_profile_free(c2);

    /* The command line, and the real profiler loading the result. */
    char pa[512], pb[512], out[512];
    snprintf(pa, sizeof pa, "%s", tmp("one.trace"));
    snprintf(pb, sizeof pb, "%s", tmp("two.pftrace"));
    snprintf(out, sizeof out, "%s", tmp("both.json"));
    T_CHECK(write_file(pa, e.out.data, e.out.len));
    T_CHECK(write_file(pb, b.data, b.len));
    char args[2048];
    snprintf(args, sizeof args, "%s %s", pa, pb);
    T_EQ_INT(cli(args, NULL), 1);  /* several inputs need -o */
    snprintf(args, sizeof args, "%s %s -o %s", pa, pb, out);
    T_EQ_INT(cli(args, NULL), 0);
    char *json = read_text(out);
    char msg[128];
    jv *root = json ? j_parse(json, strlen(json), msg, sizeof msg) : NULL;
    T_EQ_INT(j_len(j_get(root, "threads")), na + nc);
    j_free(root);
    free(json);
    if (node_ok()) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "%s/fxprof/validate --quiet %s > /dev/null 2>&1", t_shared(),
                 out);
        T_EQ_INT(system(cmd), 0);
    }
    spe_free(&e);
    pb_buf_free(&b);
}

/* --heap-dump A..B: what each callsite added between two dumps.  In the
 * fixture, callsite 1 holds 600 unreleased bytes at the first dump (1000
 * allocated, 400 freed) and 2000 at the second (3000, 1000); callsite 2
 * holds 300 at both, callsite 3 nothing. */
TEST(heap_dump_between_two_dumps)
{
    pb_buf b = {0};
    fx_heap(&b);
    pc_options o;
    pc_options_init(&o);
    o.heap_dump_base = 1;
    pc_profile *p = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(b.data, b.len, &o, &p, &err), PC_OK);
    if (p) {
        char *folded = written_text(p, PC_FORMAT_FOLDED, NULL);
        /* One line, callsite 1's growth: 2000 allocated less 600 freed. */
        T_CHECK(folded && strchr(folded, '\n') == folded + strlen(folded) - 1);
        T_CHECK(folded && strlen(folded) > 6 && strcmp(folded + strlen(folded) - 6, " 1400\n") == 0);
        free(folded);
    }
    pc_profile_free(p);
    o.heap_measure = PC_HEAP_ALLOCATED;
    T_EQ_INT(convert_bytes(b.data, b.len, &o, &p, &err), PC_OK);
    if (p) {
        char *folded = written_text(p, PC_FORMAT_FOLDED, NULL);
        T_CHECK(folded && strstr(folded, " 2000\n") && !strstr(folded, " 300\n"));
        free(folded);
    }
    pc_profile_free(p);
    /* A base that is not before the dump shown is refused. */
    o.heap_dump = 1;
    T_EQ_INT(convert_bytes_unchecked(b.data, b.len, &o, &p, &err), PC_EUSAGE);
    T_CONTAINS(err.message, "must be a dump before");
    pb_buf_free(&b);
}

/* Inputs with wall clocks share one timeline: a recording made 5 s after
 * another is drawn 5 s after it; without wall clocks, both start
 * together. */
TEST(several_inputs_on_their_wall_clocks)
{
    pb_buf b = {0};
    fx_perf(&b);
    pc_profile *x = NULL, *y = NULL, *m = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(b.data, b.len, NULL, &x, &err), PC_OK);
    T_EQ_INT(convert_bytes(b.data, b.len, NULL, &y, &err), PC_OK);
    pb_buf_free(&b);
    if (!x || !y) {
        pc_profile_free(x);
        pc_profile_free(y);
        return;
    }
    /* The wall clock as readers set it: wall_ns at wall_at. */
    x->meta.has_wall = y->meta.has_wall = 1;
    x->meta.wall_ns = y->meta.wall_ns = UINT64_C(1790000000000000000);
    x->meta.wall_at = y->meta.wall_at = x->meta.first_time;
    size_t nx = x->sample.n, nt = x->thread.n;
    for (int wall = 1; wall >= 0; wall--) {
        if (!x) {
            pb_buf c = {0};
            fx_perf(&c);
            T_EQ_INT(convert_bytes(c.data, c.len, NULL, &x, &err), PC_OK);
            T_EQ_INT(convert_bytes(c.data, c.len, NULL, &y, &err), PC_OK);
            pb_buf_free(&c);
            if (!x || !y)
                break;
            x->meta.has_wall = y->meta.has_wall = 0;
        }
        y->meta.wall_ns += 5000000000u;  /* the same recording, 5 s later */
        pc_profile *in[2] = {x, y};
        T_EQ_INT(pc_profiles_combine(in, NULL, 2, 0, NULL, &m, &err), PC_OK);
        x = y = NULL;
        if (!m)
            break;
        /* The second input's threads come after the first's. */
        uint64_t e1 = UINT64_MAX, e2 = UINT64_MAX;
        for (size_t i = 0; i < m->sample.n; i++) {
            uint64_t *e = pc_sample_thread(m, i) < nt ? &e1 : &e2;
            if (pc_sample_time(m, i) < *e)
                *e = pc_sample_time(m, i);
        }
        T_EQ_INT(m->sample.n, 2 * nx);
        if (wall)
            T_EQ_INT(e2 - e1, 5000000000u);
        else
            T_EQ_INT(e2, e1);
        pc_profile_free(m);
        m = NULL;
    }
    pc_profile_free(x);
    pc_profile_free(y);
}

/* Inputs may give any 64-bit time and id: combining ones far apart, or
 * ids at the top of the range, wraps nothing it should not (the sanitizer
 * build checks the arithmetic). */
TEST(several_inputs_at_the_edges_of_the_range)
{
    char a[512], b[512], c[512], out[512], args[4096];
    snprintf(a, sizeof a, "%s", tmp("edge-a.txt"));
    snprintf(b, sizeof b, "%s", tmp("edge-b.txt"));
    snprintf(c, sizeof c, "%s", tmp("edge-c.txt"));
    snprintf(out, sizeof out, "%s", tmp("edge.json"));
    const char *ta = "app 10/10 0.000001: 1 cpu-clock:\n\t1000 main (/bin/app)\n\n"
                     "app 10/10 9300000000.000001: 1 cpu-clock:\n\t1000 main (/bin/app)\n\n";
    const char *tb = "app 10/10 9300000000.000001: 1 cpu-clock:\n\t1000 main (/bin/app)\n\n";
    const char *tc = "app 9223372036854775807/9223372036854775807 18446744073.709551: 1 "
                     "cpu-clock:\n\t1000 main (/bin/app)\n\n";
    T_CHECK(write_file(a, ta, strlen(ta)) && write_file(b, tb, strlen(tb)) &&
            write_file(c, tc, strlen(tc)));
    snprintf(args, sizeof args, "%s %s -o %s", b, a, out);
    T_EQ_INT(cli(args, NULL), 0);
    snprintf(args, sizeof args, "%s %s %s -o %s", c, c, a, out);
    T_EQ_INT(cli(args, NULL), 0);
    snprintf(args, sizeof args, "diff %s %s --to folded -o -", c, a);
    char *text = NULL;
    T_EQ_INT(cli(args, &text), 0);
    T_CONTAINS(text ? text : "", "main 1 2\n");
    free(text);
}
