/* The firefox format in a JSLB container: the container's layout read
 * back byte by byte, its columns equal to the JSON output's, and the real
 * profiler's view of it the same as of the JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "io/sink.h"
#include "jsonmini.h"
#include "t.h"
#include "test_util.h"
#include "write/write.h"

static uint32_t u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

typedef struct slabs {
    const unsigned char *b;
    size_t n_bytes;
    uint32_t n, root;
} slabs;

static uint32_t slab_type(const slabs *c, uint32_t k) { return u32(c->b + 20 + 12 * k); }
static uint32_t slab_off(const slabs *c, uint32_t k) { return u32(c->b + 24 + 12 * k); }
static uint32_t slab_len(const slabs *c, uint32_t k) { return u32(c->b + 28 + 12 * k); }

/* Checks the container's header and table: every slab inside the file,
 * aligned to its element, after the one before. */
static int read_slabs(const unsigned char *b, size_t n, slabs *c)
{
    static const unsigned char magic[8] = {0xDC, 0xDF, 0x4A, 0x53, 0x4C, 0x42, 0x01, 0x00};
    memset(c, 0, sizeof *c);
    T_CHECK(n >= 20 && memcmp(b, magic, 8) == 0);
    if (n < 20 || memcmp(b, magic, 8) != 0)
        return -1;
    c->b = b;
    c->n_bytes = n;
    T_EQ_INT(u32(b + 8), 1);
    c->n = u32(b + 12);
    c->root = u32(b + 16);
    T_CHECK(20 + 12 * (uint64_t)c->n <= n && c->root < c->n);
    if (20 + 12 * (uint64_t)c->n > n || c->root >= c->n)
        return -1;
    T_EQ_INT(slab_type(c, c->root), 10);
    uint64_t end = 20 + 12 * (uint64_t)c->n;
    for (uint32_t k = 0; k < c->n; k++) {
        static const unsigned size[] = {1, 1, 2, 2, 4, 4, 4, 8, 8, 8, 1};
        uint32_t t = slab_type(c, k);
        T_CHECK(t <= 10);
        if (t > 10)
            return -1;
        T_EQ_INT(slab_off(c, k) % size[t], 0);
        T_EQ_INT(slab_len(c, k) % size[t], 0);
        T_CHECK(slab_off(c, k) >= end && (uint64_t)slab_off(c, k) + slab_len(c, k) <= n);
        if (slab_off(c, k) < end || (uint64_t)slab_off(c, k) + slab_len(c, k) > n)
            return -1;
        end = (uint64_t)slab_off(c, k) + slab_len(c, k);
    }
    T_EQ_INT(end, n);
    return 0;
}

/* A JSON slab, parsed. */
static jv *json_slab(const slabs *c, uint32_t k)
{
    char msg[256];
    if (k >= c->n || slab_type(c, k) != 10)
        return NULL;
    jv *v = j_parse((const char *)c->b + slab_off(c, k), slab_len(c, k), msg, sizeof msg);
    if (!v)
        t_fail(__FILE__, __LINE__, "slab %u is no JSON: %s", k, msg);
    return v;
}

/* The slab v stands for ({"$s": K}), or UINT32_MAX. */
static uint32_t ref_of(const jv *v)
{
    const jv *s = v ? j_get(v, "$s") : NULL;
    return s ? (uint32_t)j_num(s) : UINT32_MAX;
}

/* Value i of typed slab k, as a double. */
static double typed_at(const slabs *c, uint32_t k, size_t i)
{
    const unsigned char *p = c->b + slab_off(c, k);
    switch (slab_type(c, k)) {
    case 1: return p[i];
    case 4: return (double)(int32_t)u32(p + 4 * i);
    case 7: {
        uint64_t u = 0;
        for (int j = 7; j >= 0; j--)
            u = u << 8 | p[8 * i + (size_t)j];
        double d;
        memcpy(&d, &u, sizeof d);
        return d;
    }
    }
    return NAN;
}

static size_t typed_len(const slabs *c, uint32_t k)
{
    static const unsigned size[] = {1, 1, 2, 2, 4, 4, 4, 8, 8, 8, 1};
    return slab_len(c, k) / size[slab_type(c, k)];
}

/* A column of the JSLB file (a typed slab) against the same column of the
 * JSON file: the same numbers, as the profiler would hold them. */
static void same_column(const slabs *c, const jv *slab_col, const jv *json_col, const char *what)
{
    /* A constant empty table may stay JSON (a heap track's markers). */
    if (slab_col && slab_col->type == J_ARR && json_col && j_len(json_col) == 0 &&
        j_len(slab_col) == 0)
        return;
    uint32_t k = ref_of(slab_col);
    if (k >= c->n || slab_type(c, k) == 10)
        t_fail(__FILE__, __LINE__, "%s is not a typed slab", what);
    if (k >= c->n || slab_type(c, k) == 10 || !json_col)
        return;
    T_EQ_INT(typed_len(c, k), j_len(json_col));
    size_t bad = 0;
    for (size_t i = 0; i < typed_len(c, k) && i < j_len(json_col); i++) {
        const jv *x = j_at(json_col, i);
        double want = x->type == J_NULL ? 0 : j_num(x);
        bad += typed_at(c, k, i) != want;
    }
    if (bad)
        t_fail(__FILE__, __LINE__, "%s: %zu values differ", what, bad);
}

static unsigned char *write_as(const pc_profile *p, int container, uint64_t limit,
                               size_t *n, pc_options *log)
{
    pc_write_options w;
    pc_write_options_init(&w);
    w.format = PC_FORMAT_FIREFOX;
    w.container = container;
    w.json_limit = limit;
    if (log) {
        w.log = log->log;
        w.log_ctx = log->log_ctx;
    }
    unsigned char *out = NULL;
    pc_error err;
    if (pc_write_memory(p, &w, &out, n, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "write failed: %s", err.message);
        return NULL;
    }
    return out;
}

/* Every eligible column of a JSLB file is a typed slab holding what the
 * JSON file holds, and the tables the profiler splits out are JSON slabs
 * of their own. */
static void check_against_json(const pc_profile *p)
{
    size_t nb = 0, nj = 0;
    unsigned char *b = write_as(p, PC_CONTAINER_JSLB, 0, &nb, NULL);
    unsigned char *j = write_as(p, PC_CONTAINER_JSON, 0, &nj, NULL);
    char msg[256];
    jv *json = j ? j_parse((const char *)j, nj, msg, sizeof msg) : NULL;
    slabs c;
    if (!b || !json || read_slabs(b, nb, &c) < 0) {
        T_CHECK(json != NULL);
        free(b);
        free(j);
        j_free(json);
        return;
    }
    jv *root = json_slab(&c, c.root);
    const jv *shared = root ? j_get(root, "shared") : NULL, *jshared = j_get(json, "shared");
    if (shared) {
        const jv *st = j_get(shared, "stackTable"), *jst = j_get(jshared, "stackTable");
        same_column(&c, j_get(st, "frame"), j_get(jst, "frame"), "stackTable.frame");
        same_column(&c, j_get(st, "prefixOffset"), j_get(jst, "prefixOffset"),
                    "stackTable.prefixOffset");
        jv *ft = json_slab(&c, ref_of(j_get(shared, "frameTable")));
        const jv *jft = j_get(jshared, "frameTable");
        T_CHECK(ft != NULL);
        static const char *const fcols[] = {"address", "lib", "inlineDepth", "func"};
        for (size_t k = 0; ft && k < 4; k++)
            same_column(&c, j_get(ft, fcols[k]), j_get(jft, fcols[k]), fcols[k]);
        if (ft)
            T_EQ_INT(j_num(j_get(ft, "length")), j_num(j_get(jft, "length")));
        j_free(ft);
        jv *strs = json_slab(&c, ref_of(j_get(shared, "stringArray")));
        T_CHECK(strs && j_len(strs) == j_len(j_get(jshared, "stringArray")));
        j_free(strs);
        jv *funcs = json_slab(&c, ref_of(j_get(shared, "funcTable")));
        T_CHECK(funcs && j_num(j_get(funcs, "length")) ==
                             j_num(j_get(j_get(jshared, "funcTable"), "length")));
        j_free(funcs);
    }
    /* Each thread is a JSON slab of its own. */
    const jv *threads = root ? j_get(root, "threads") : NULL;
    const jv *jthreads = j_get(json, "threads");
    T_CHECK(threads && j_len(threads) == j_len(jthreads));
    for (size_t t = 0; threads && t < j_len(threads) && t < j_len(jthreads); t++) {
        jv *th = json_slab(&c, ref_of(j_at(threads, t)));
        T_CHECK(th != NULL);
        const jv *s = j_get(th, "samples"), *js = j_get(j_at(jthreads, t), "samples");
        same_column(&c, j_get(s, "timeDeltas"), j_get(js, "timeDeltas"), "samples.timeDeltas");
        const jv *m = j_get(th, "markers"), *jm = j_get(j_at(jthreads, t), "markers");
        same_column(&c, j_get(m, "startTime"), j_get(jm, "startTime"), "markers.startTime");
        same_column(&c, j_get(m, "endTime"), j_get(jm, "endTime"), "markers.endTime");
        j_free(th);
    }
    const jv *cs = root ? j_get(root, "counters") : NULL, *jcs = j_get(json, "counters");
    for (size_t k = 0; cs && k < j_len(cs); k++)
        same_column(&c, j_get(j_get(j_at(cs, k), "samples"), "time"),
                    j_get(j_get(j_at(jcs, k), "samples"), "time"), "counter time");
    j_free(root);
    j_free(json);
    free(b);
    free(j);
}

/* The path of a file of ../shared/corpus, or NULL when it is absent. */
static const char *shared_path(const char *rel)
{
    static char path[1024];
    if (!t_shared())
        return NULL;
    snprintf(path, sizeof path, "%s/corpus/%s", t_shared(), rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fclose(f);
    return path;
}

static pc_profile *convert_corpus(const char *rel)
{
    const char *path = shared_path(rel);
    size_t n = 0;
    unsigned char *data = path ? t_read_file(path, &n) : NULL;
    pc_profile *p = NULL;
    pc_error err;
    if (data && convert_bytes(data, n, NULL, &p, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "%s: %s", rel, err.message);
        p = NULL;
    }
    free(data);
    return p;
}

static const char *const inputs[] = {
    "simpleperf/inputs/perf_with_trace_offcpu_v2.callchain.trace",
    "simpleperf/inputs/display_bitmaps.proto_data",
    "perfetto/synthetic/scale/small_heap.pftrace",
    "perfetto/synthetic/scale/small_perf.pftrace",
    "perfetto/difftests/stdlib/linux/LinuxTests.perf_sample_with_counters_view/trace.pb",
};

/* A document of slabs: a column outside any JSON piece, a piece holding a
 * column, then a column of another width; with `more`, the last column
 * has a value more. */
static void slab_doc(jw_slabs *sl, pc_sink *doc, int more)
{
    jw w;
    jw_init(&w, doc);
    w.slabs = sl;
    jw_obj(&w);
    jw_key(&w, "a");
    jw_col_begin(&w, JW_SLAB_U8);
    for (int i = 0; i < 3; i++)
        jw_col_int(&w, i);
    jw_col_end(&w);
    jw_key(&w, "t");
    jw_sub_begin(&w);
    jw_obj(&w);
    jw_key(&w, "x");
    jw_col_begin(&w, JW_SLAB_F64);
    jw_col_ms(&w, 1500000);
    jw_col_ms(&w, 2000000);
    jw_col_end(&w);
    jw_key(&w, "n");
    jw_cstr(&w, "piece");
    jw_obj_end(&w);
    jw_sub_end(&w);
    jw_key(&w, "b");
    jw_col_begin(&w, JW_SLAB_I32);
    for (int i = 0; i < 2 + more; i++)
        jw_col_int(&w, -i);
    jw_col_end(&w);
    jw_obj_end(&w);
}

/* Both passes over slab_doc (the second with `more`): the container, or
 * NULL with the error in err. */
static unsigned char *two_passes(int more, size_t *n, jw_slabs *sl, pc_error *err)
{
    pc_sink *count, *out, *doc;
    unsigned char *root = NULL, *file = NULL;
    size_t root_len = 0;
    memset(sl, 0, sizeof *sl);
    sl->pass = 1;
    if (sink_open_count(&count, err) != PC_OK)
        return NULL;
    slab_doc(sl, count, 0);
    size_t measured = (size_t)sink_bytes(count);
    sink_abort(count);
    if (sink_open_memory(&out, 0, err) != PC_OK)
        return NULL;
    if (pc_jslb_begin(sl, measured, out, err) != PC_OK || sink_open_memory(&doc, 0, err) != PC_OK) {
        sink_abort(out);
        return NULL;
    }
    slab_doc(sl, doc, more);
    int st = sink_finish(doc, &root, &root_len, err);
    if (st == PC_OK)
        st = pc_jslb_end(sl, root, root_len, err);
    free(root);
    if (st != PC_OK) {
        sink_abort(out);
        return NULL;
    }
    return sink_finish(out, &file, n, err) == PC_OK ? file : NULL;
}

/* A JSLB file is made in two passes: the first measures, the second
 * writes each slab once nothing before it waits.  A column outside the
 * JSON pieces goes out as it is made, one inside a piece after it; a
 * second pass that differs from the first is an error, never a file. */
TEST(jslb_two_passes)
{
    jw_slabs sl;
    pc_error err;
    size_t n = 0;
    unsigned char *file = two_passes(0, &n, &sl, &err);
    T_CHECK(file != NULL);
    if (!file) {
        jw_slabs_free(&sl);
        return;
    }
    T_EQ_INT(sl.n, 4);
    T_CHECK(sl.v[0].direct && !sl.v[1].direct && !sl.v[2].direct && sl.v[3].direct);
    jw_slabs_free(&sl);
    slabs c;
    if (read_slabs(file, n, &c) == 0) {
        T_EQ_INT(c.n, 5);
        T_EQ_INT(c.root, 4);
        jv *root = json_slab(&c, 4), *piece = json_slab(&c, 1);
        T_EQ_INT(ref_of(j_get(root, "a")), 0);
        T_EQ_INT(ref_of(j_get(root, "t")), 1);
        T_EQ_INT(ref_of(j_get(root, "b")), 3);
        T_EQ_INT(ref_of(j_get(piece, "x")), 2);
        T_EQ_STR(j_str(j_get(piece, "n")), "piece");
        T_EQ_INT(slab_type(&c, 0), 1);
        T_EQ_INT(typed_len(&c, 0), 3);
        T_CHECK(typed_at(&c, 0, 2) == 2);
        T_EQ_INT(slab_type(&c, 2), 7);
        T_CHECK(typed_at(&c, 2, 0) == 1.5 && typed_at(&c, 2, 1) == 2);
        T_EQ_INT(slab_type(&c, 3), 4);
        T_EQ_INT(typed_len(&c, 3), 2);
        T_CHECK(typed_at(&c, 3, 1) == -1);
        j_free(root);
        j_free(piece);
    }
    free(file);

    file = two_passes(1, &n, &sl, &err);
    T_CHECK(file == NULL);
    T_CHECK(strstr(err.message, "second pass") != NULL);
    free(file);
    jw_slabs_free(&sl);
}

TEST(jslb_columns_match_json)
{
    if (!t_shared()) {
        t_skip("../shared is absent: the corpus inputs are not converted");
        return;
    }
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
        t_case("jslb_columns_match_json: %s", inputs[i]);
        pc_profile *p = convert_corpus(inputs[i]);
        if (!p) {
            t_skip("%s not found", inputs[i]);
            continue;
        }
        check_against_json(p);
        pc_profile_free(p);
    }
}

/* Without a container asked for, a profile whose JSON would come near the
 * limit is a JSLB file, said so; JSON asked for stays JSON. */
TEST(jslb_chosen_for_big_json)
{
    pc_profile *p = convert_fixture(NULL);
    if (!p)
        return;
    pc_options lo;
    pc_options_init(&lo);
    log_capture_start(&lo);
    size_t n = 0;
    unsigned char *b = write_as(p, PC_CONTAINER_AUTO, 1000, &n, &lo);
    slabs c;
    if (b)
        T_EQ_INT(read_slabs(b, n, &c), 0);
    T_CONTAINS(log_capture_text(), "the profile is written as a JSLB file, which the Firefox "
                                   "Profiler reads");
    T_CHECK(!strstr(log_capture_text(), "the JSON is"));
    free(b);
    log_capture_start(&lo);
    b = write_as(p, PC_CONTAINER_AUTO, 0, &n, &lo);
    T_CHECK(b && n > 0 && b[0] == '{');
    T_EQ_STR(log_capture_text(), "");
    free(b);
    pc_profile_free(p);
}

/* A .jslb name asks for the container, .jslb.gz for it gzipped; the real
 * profiler shows each as it shows the JSON. */
TEST_SLOW(jslb_in_profiler)
{
    const char *shared = t_shared();
    if (!shared || !t_node20()) {
        t_skip("%s: the profiler's validate is not run", shared ? "no Node.js 20"
                                                              : "../shared is absent");
        return;
    }
    /* Every file goes to one run of validate: each run starts the
     * profiler's code afresh (0.6 s here). */
    enum { N_IN = sizeof inputs / sizeof *inputs };
    static const char *const ends[] = {".json.gz", ".jslb", ".jslb.gz"};
    static char out[N_IN][3][600];
    const char *files[N_IN * 3];
    size_t which[N_IN], n_in = 0;
    for (size_t i = 0; i < N_IN; i++) {
        const char *found = shared_path(inputs[i]);
        if (!found)
            continue;
        char in[1024], cmd[4096];
        snprintf(in, sizeof in, "%s", found);
        t_case("jslb_in_profiler: %s", inputs[i]);
        for (int e = 0; e < 3; e++) {
            snprintf(out[i][e], sizeof out[i][e], "%s/jslb_%zu%s", t_tmpdir(), i, ends[e]);
            snprintf(cmd, sizeof cmd, "%s -q %s -o %s 2>/dev/null", t_profconv(), in, out[i][e]);
            T_EQ_INT(system(cmd), 0);
            files[3 * n_in + (size_t)e] = out[i][e];
        }
        size_t n = 0;
        unsigned char *raw = t_read_file(out[i][1], &n);
        slabs c;
        if (raw)
            T_EQ_INT(read_slabs(raw, n, &c), 0);
        free(raw);
        which[n_in++] = i;
    }
    if (!n_in) {
        t_skip("none of the inputs is in ../shared");
        return;
    }
    jv *r = t_validate(files, 3 * n_in);
    t_case("jslb_in_profiler: validate");
    T_EQ_INT(j_len(r), 3 * n_in);
    for (size_t f = 0; r && j_len(r) == 3 * n_in && f < n_in; f++) {
        t_case("jslb_in_profiler: %s in the profiler", inputs[which[f]]);
        const jv *json = j_at(r, 3 * f);
        for (size_t k = 0; k < 3; k++)
            T_CHECK(j_get(j_at(r, 3 * f + k), "ok")->boolean);
        /* Per thread: samples, weight, the call tree's total and markers;
         * and the tracks. */
        for (size_t k = 1; k < 3; k++) {
            const jv *other = j_at(r, 3 * f + k);
            const jv *a = j_get(json, "threads"), *b = j_get(other, "threads");
            T_EQ_INT(j_len(a), j_len(b));
            for (size_t t = 0; t < j_len(a) && t < j_len(b); t++) {
                static const char *const keys[] = {"samples", "weight", "callTreeRootTotal",
                                                   "markers"};
                for (size_t q = 0; q < 4; q++)
                    if (j_num(j_get(j_at(a, t), keys[q])) != j_num(j_get(j_at(b, t), keys[q])))
                        t_fail(__FILE__, __LINE__, "thread %zu: %s differs", t, keys[q]);
            }
            const jv *ma = j_get(json, "meta"), *mb = j_get(other, "meta");
            T_EQ_INT(j_num(j_get(ma, "localTracks")), j_num(j_get(mb, "localTracks")));
            T_EQ_INT(j_num(j_get(ma, "hiddenLocalTracks")), j_num(j_get(mb, "hiddenLocalTracks")));
        }
    }
    j_free(r);
}
