/* One deobfuscation engine (src/java/deobf.h) for mapping files and for
 * Perfetto's DeobfuscationMapping packets: the same R8 mapping, given as
 * a mapping file to a simpleperf recording and as packets in a Perfetto
 * trace, names the same frames alike; with line numbers (Perfetto's
 * symbols) inline chains expand as the engine's own lookup says; and the
 * lookup's rules, one by one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "java/deobf.h"
#include "java/proguard.h"
#include "model/model.h"
#include "pf_encode.h"
#include "sp_encode.h"
#include "t.h"
#include "test_util.h"

/* ---- The mapping ---- */

static const struct {
    const char *orig, *obf;
} classes[] = {{"com.example.Main", "a"}, {"com.example.Merged", "b"}};

/* Method lines, "[a:b:]void name()[:c[:d]] -> obf" in the file. */
static const struct {
    int cls;
    unsigned a, b;
    const char *name;
    unsigned c, d;
    const char *obf;
} methods[] = {
    /* An inline chain per line: foo into test, then bar into foo into
     * test.  Without a line, only the outermost (test) stands. */
    {0, 1, 1, "foo", 54, 54, "a"},
    {0, 1, 1, "test", 50, 0, "a"},
    {0, 2, 2, "bar", 59, 59, "a"},
    {0, 2, 2, "foo", 55, 0, "a"},
    {0, 2, 2, "test", 50, 0, "a"},
    /* Two methods share "b" on separate ranges, one from another class. */
    {0, 3, 4, "run", 10, 11, "b"},
    {0, 5, 5, "com.example.Helper.help", 7, 7, "b"},
    {0, 0, 0, "go", 0, 0, "c"},
    /* Horizontal class merging: B.baz and A.baz became one class's "a". */
    {1, 1, 1, "com.example.Other.baz", 51, 51, "a"},
    {1, 2, 2, "baz", 51, 51, "a"},
    {1, 0, 0, "keep", 0, 0, "k"},
};

#define N(x) (sizeof x / sizeof *x)

/* Obfuscated frames and the names they get, whichever way the mapping
 * came in.  The old engines disagreed on three: the mapping-file engine
 * kept the last line of a name ("com.example.Helper.help" for a.b,
 * "com.example.Merged.baz" for b.a); the Perfetto one joined every line,
 * inlined ones too ("com.example.Main.bar | com.example.Main.foo |
 * com.example.Main.test" for a.a), and named a.zz "com.example.Main". */
static const struct {
    const char *obf, *name;
} frames[] = {
    {"a.a", "com.example.Main.test"},
    {"a.b", "com.example.Helper.help | com.example.Main.run"},
    {"a.c", "com.example.Main.go"},
    {"a.zz", "com.example.Main.zz"},
    {"b.a", "com.example.Merged.baz | com.example.Other.baz"},
    {"b.k", "com.example.Merged.keep"},
    {"x.y", "x.y"},
};

#define APP "com.example.app"

static char *mapping_text(void)
{
    static char text[4096];
    size_t n = 0;
    n += (size_t)snprintf(text + n, sizeof text - n, "# compiler: R8\n");
    for (size_t c = 0; c < N(classes); c++) {
        n += (size_t)snprintf(text + n, sizeof text - n, "%s -> %s:\n", classes[c].orig,
                              classes[c].obf);
        n += (size_t)snprintf(text + n, sizeof text - n, "    int count -> a\n");
        for (size_t m = 0; m < N(methods); m++) {
            if (methods[m].cls != (int)c)
                continue;
            char range[32] = "", orig[32] = "";
            if (methods[m].a || methods[m].b)
                snprintf(range, sizeof range, "%u:%u:", methods[m].a, methods[m].b);
            if (methods[m].c && methods[m].d)
                snprintf(orig, sizeof orig, ":%u:%u", methods[m].c, methods[m].d);
            else if (methods[m].c)
                snprintf(orig, sizeof orig, ":%u", methods[m].c);
            n += (size_t)snprintf(text + n, sizeof text - n, "    %svoid %s()%s -> %s\n",
                                  range, methods[m].name, orig, methods[m].obf);
        }
    }
    return text;
}

/* The same mapping as one DeobfuscationMapping packet for package APP. */
static void mapping_packet(pb_buf *b)
{
    size_t pk = pfe_packet(b, 0);
    size_t dm = pb_begin(b, 64);
    pb_string(b, 1, APP);
    pb_uint(b, 2, 1);
    for (size_t c = 0; c < N(classes); c++) {
        size_t oc = pb_begin(b, 3);
        pb_string(b, 1, classes[c].obf);
        pb_string(b, 2, classes[c].orig);
        size_t field = pb_begin(b, 3);
        pb_string(b, 1, "a");
        pb_string(b, 2, "count");
        pb_end(b, field);
        for (size_t m = 0; m < N(methods); m++) {
            if (methods[m].cls != (int)c)
                continue;
            size_t om = pb_begin(b, 4);
            pb_string(b, 1, methods[m].obf);
            pb_string(b, 2, methods[m].name);
            const unsigned v[] = {methods[m].a, methods[m].b, methods[m].c, methods[m].d};
            for (uint32_t k = 0; k < 4; k++)
                if (v[k])
                    pb_uint(b, 3 + k, v[k]);
            pb_end(b, om);
        }
        pb_end(b, oc);
    }
    pb_end(b, dm);
    pb_end(b, pk);
}

/* ---- The recordings ---- */

/* A simpleperf recording of the app: sample i (at i ms) is frame i alone,
 * in the app's base.apk. */
static void simpleperf_app(spe *e)
{
    static const char *const events[] = {"cpu-clock"};
    const char *syms[N(frames)];
    spe_begin(e);
    spe_meta(e, events, 1, APP, "debuggable", "33", "userdebug", 0);
    for (size_t i = 0; i < N(frames); i++) {
        spe_frame f = {0x100 + i, 0, (int32_t)i, -1};
        syms[i] = frames[i].obf;
        spe_sample(e, 1000000000ull + i * 1000000, 1000, 1000000, 0, &f, 1, NULL);
    }
    spe_file(e, 0, "/data/app/" APP "-Xy==/base.apk", syms, N(frames));
    spe_thread(e, 1000, 1000, APP);
    spe_end(e);
}

/* The same samples in a Perfetto trace (traced_perf), the mapping
 * appended.  With lines, ModuleSymbols give frame i the line lines[i]
 * (0: none). */
static void perfetto_app(pb_buf *b, const unsigned *lines)
{
    static const char *const cmd[] = {APP};
    uint32_t ids[] = {6, 3};
    uint64_t ts[] = {0, 0};
    pfe_clock_snapshot(b, ids, ts, 2);
    size_t pk = pfe_packet(b, 0);
    size_t pt = pb_begin(b, 2);
    pfe_process(b, 100, cmd, 1);
    pb_end(b, pt);
    pb_end(b, pk);
    pfe_perf_defaults(b, 1, 0, 1, 1000);
    pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 2);
    size_t in = pb_begin(b, PFE_INTERNED);
    pfe_str(b, PFE_MAPPING_PATHS, 1, "data");
    pfe_str(b, PFE_MAPPING_PATHS, 2, "app");
    pfe_str(b, PFE_MAPPING_PATHS, 3, APP "-Xy==");
    pfe_str(b, PFE_MAPPING_PATHS, 4, "base.apk");
    pfe_str(b, PFE_BUILD_IDS, 1, "\x01\x02");
    uint64_t apk[] = {1, 2, 3, 4};
    pfe_mapping(b, PFE_MAPPINGS, 1, 1, apk, 4);
    for (size_t i = 0; i < N(frames); i++) {
        uint64_t frame = i + 1;
        pfe_str(b, PFE_FUNCTION_NAMES, i + 1, frames[i].obf);
        pfe_frame(b, PFE_FRAMES, i + 1, i + 1, 1, 0x100 + i);
        pfe_callstack(b, PFE_CALLSTACKS, i + 1, &frame, 1, 0);
    }
    pb_end(b, in);
    pb_end(b, pk);
    for (size_t i = 0; i < N(frames); i++) {
        pk = pfe_packet(b, 1);
        pb_uint(b, PFE_FLAGS, 2);
        pb_uint(b, PFE_TIMESTAMP, 1000000000ull + i * 1000000);
        pfe_perf_sample(b, 0, 100, 100, i + 1, -1);
        pb_end(b, pk);
    }
    if (lines) {
        pk = pfe_packet(b, 0);
        size_t ms = pb_begin(b, 61);
        pb_string(b, 1, "/data/app/" APP "-Xy==/base.apk");
        pb_string(b, 2, "\x01\x02");
        for (size_t i = 0; i < N(frames); i++) {
            if (!lines[i])
                continue;
            size_t as = pb_begin(b, 3);
            pb_uint(b, 1, 0x100 + i);
            size_t l = pb_begin(b, 2);
            pb_string(b, 1, frames[i].obf);
            pb_uint(b, 3, lines[i]);
            pb_end(b, l);
            pb_end(b, as);
        }
        pb_end(b, ms);
        pb_end(b, pk);
    }
    mapping_packet(b);
}

static char *write_mapping(void)
{
    static char path[1100];
    snprintf(path, sizeof path, "%s/mapping.txt", t_tmpdir());
    FILE *f = fopen(path, "w");
    if (!f)
        return NULL;
    fputs(mapping_text(), f);
    fclose(f);
    return path;
}

static pc_profile *convert_simpleperf(int with_mapping)
{
    spe e;
    pc_profile *p = NULL;
    pc_options o;
    pc_error err;
    const char *files[1] = {write_mapping()};
    T_CHECK(files[0] != NULL);
    pc_options_init(&o);
    o.remove_gaps = 0;
    if (with_mapping && files[0])
        o.proguard_mapping_files = (pc_strings){files, 1};
    simpleperf_app(&e);
    if (convert_bytes(e.out.data, e.out.len, &o, &p, &err) != PC_OK)
        t_fail(__FILE__, __LINE__, "simpleperf conversion failed: %s", err.message);
    spe_free(&e);
    return p;
}

static pc_profile *convert_perfetto(const unsigned *lines)
{
    pb_buf b = {0};
    pc_profile *p = NULL;
    pc_options o;
    pc_error err;
    pc_options_init(&o);
    o.remove_gaps = 0;
    perfetto_app(&b, lines);
    T_CHECK(!b.oom);
    if (convert_bytes(b.data, b.len, &o, &p, &err) != PC_OK)
        t_fail(__FILE__, __LINE__, "Perfetto conversion failed: %s", err.message);
    pb_buf_free(&b);
    return p;
}

/* ---- Tests ---- */

TEST(deobfuscate_mapping_file_and_packets_agree)
{
    pc_profile *sp = convert_simpleperf(1), *pf = convert_perfetto(NULL);
    pc_profile *plain = convert_simpleperf(0);
    if (sp && pf && plain) {
        T_EQ_INT(sp->sample.n, N(frames));
        T_EQ_INT(pf->sample.n, N(frames));
        for (size_t i = 0; i < N(frames) && i < sp->sample.n && i < pf->sample.n; i++) {
            t_case("%s", frames[i].obf);
            T_EQ_STR(stack_text(sp, sp->sample.stack[i]), frames[i].name);
            T_EQ_STR(stack_text(pf, pf->sample.stack[i]), frames[i].name);
            T_EQ_STR(stack_text(plain, plain->sample.stack[i]), frames[i].obf);
        }
    }
    pc_profile_free(sp);
    pc_profile_free(pf);
    pc_profile_free(plain);
}

/* Known lines (Perfetto's symbols) pick an inline chain, outermost
 * first, as the engine fed by the mapping file picks it. */
TEST(deobfuscate_lines_match_mapping_file)
{
    static const unsigned lines[N(frames)] = {2, 5, 0, 0, 1, 0, 0};
    static const char *const want[N(frames)] = {
        "com.example.Main.test;com.example.Main.foo;com.example.Main.bar",
        "com.example.Helper.help",
        NULL, NULL,
        "com.example.Other.baz",
        NULL, NULL};
    pc_proguard m;
    pc_deobf_result r;
    pc_error err;
    memset(&m, 0, sizeof m);
    memset(&r, 0, sizeof r);
    const char *text = mapping_text();
    T_EQ_INT(pc_proguard_parse(&m, text, strlen(text), "mapping.txt", &err), PC_OK);
    pc_profile *pf = convert_perfetto(lines);
    for (size_t i = 0; pf && i < N(frames) && i < pf->sample.n; i++) {
        t_case("%s at line %u", frames[i].obf, lines[i]);
        char names[512] = "";
        size_t used = 0;
        int got = pc_deobf_lookup(&m, PC_NONE, frames[i].obf, strlen(frames[i].obf),
                                  lines[i], &r);
        for (size_t k = 0; got > 0 && k < r.n; k++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                     k ? ";" : "", pc_deobf_name(&r, k, NULL));
        if (got == 0)
            snprintf(names, sizeof names, "%s", frames[i].obf);
        T_EQ_STR(stack_text(pf, pf->sample.stack[i]), names);
        T_EQ_STR(names, want[i] ? want[i] : frames[i].name);
    }
    pc_profile_free(pf);
    pc_deobf_result_free(&r);
    pc_proguard_free(&m);
}

static const char *lookup(const pc_deobf *d, uint32_t pkg, const char *name, unsigned line)
{
    static pc_deobf_result r;
    static char out[512];
    size_t used = 0;
    int got = pc_deobf_lookup(d, pkg, name, strlen(name), line, &r);
    if (got <= 0) {
        pc_deobf_result_free(&r);
        return got < 0 ? "(out of memory)" : "(not mapped)";
    }
    for (size_t k = 0; k < r.n; k++) {
        size_t n;
        const char *s = pc_deobf_name(&r, k, &n);
        T_EQ_INT(strlen(s), n);
        used += (size_t)snprintf(out + used, sizeof out - used, "%s%s", k ? ";" : "", s);
        if (r.name[k].line)
            used += (size_t)snprintf(out + used, sizeof out - used, ":%u", r.name[k].line);
    }
    if (r.synthesized)
        snprintf(out + used, sizeof out - used, " [synthesized]");
    return out;
}

TEST(deobfuscate_lookup_rules)
{
    static const char text[] =
        "com.example.Foo -> a:\n"
        "# {\"id\":\"sourceFile\",\"fileName\":\"Foo.java\"}\n"
        "    1:3:void run(int):10:12 -> a\n"
        "    4:4:void lambda$run$0():20:20 -> a\n"
        "      # {\"id\":\"com.android.tools.r8.synthesized\"}\n"
        "    int field -> f\n"
        "    # {\"id\":\"com.android.tools.r8.synthesized\"}\n"
        "    void step() -> s\n"
        "    7:9:void step(int):30 -> s\n"
        "    6:6:void onlySynth() -> o\n"
        "    # {\"id\":\"com.android.tools.r8.synthesized\"}\n"
        "com.example.Foo -> a:\n"
        "    void later() -> a\n"
        "com.example.Gen -> b:\n"
        "# {\"id\":\"com.android.tools.r8.synthesized\"}\n"
        "    void go() -> g\r\n";
    pc_proguard m;
    pc_error err;
    memset(&m, 0, sizeof m);
    T_EQ_INT(pc_proguard_parse(&m, text, sizeof text - 1, "mapping.txt", &err), PC_OK);
    /* No line: the synthesized lambda gives way; arguments are ignored. */
    T_EQ_STR(lookup(&m, PC_NONE, "a.a", 0), "com.example.Foo.run");
    T_EQ_STR(lookup(&m, PC_NONE, "a.a(int)", 0), "com.example.Foo.run");
    /* A line picks its range; the original line follows the range. */
    T_EQ_STR(lookup(&m, PC_NONE, "a.a", 2), "com.example.Foo.run:11");
    T_EQ_STR(lookup(&m, PC_NONE, "a.a", 4), "com.example.Foo.lambda$run$0:20 [synthesized]");
    /* A line no range holds: the range-less lines stand for any line. */
    T_EQ_STR(lookup(&m, PC_NONE, "a.s", 8), "com.example.Foo.step:30");
    T_EQ_STR(lookup(&m, PC_NONE, "a.s", 99), "com.example.Foo.step");
    T_EQ_STR(lookup(&m, PC_NONE, "a.a", 99), "com.example.Foo.run");
    /* Only synthesized candidates: kept, and said so. */
    T_EQ_STR(lookup(&m, PC_NONE, "a.o", 0), "com.example.Foo.onlySynth [synthesized]");
    /* A marker after a field does not end the class; the second class
     * "a" is ignored, its method with it. */
    T_EQ_STR(lookup(&m, PC_NONE, "a.f", 0), "com.example.Foo.f");
    /* Only the class known: the method keeps its name; the class's
     * marker shows when no method line says otherwise. */
    T_EQ_STR(lookup(&m, PC_NONE, "a.unknown", 0), "com.example.Foo.unknown");
    T_EQ_STR(lookup(&m, PC_NONE, "b.g", 0), "com.example.Gen.go");
    T_EQ_STR(lookup(&m, PC_NONE, "b.x", 0), "com.example.Gen.x [synthesized]");
    T_EQ_STR(lookup(&m, PC_NONE, "x.y", 0), "(not mapped)");
    T_EQ_STR(lookup(&m, PC_NONE, "a", 0), "(not mapped)");
    /* Mapping files have one package, "": known or not, it is that one. */
    uint32_t none = pc_deobf_package(&m, "", 0);
    T_CHECK(none != PC_NONE);
    T_EQ_STR(lookup(&m, none, "a.a", 0), "com.example.Foo.run");
    T_EQ_INT(pc_deobf_package(&m, "com.example.app", 15), PC_NONE);
    pc_proguard_free(&m);
}

/* Fed through the API, as the Perfetto reader feeds it: packages keep
 * classes apart, and an unknown package only finds the one package when
 * there is one; lookups give the same names sealed or not. */
TEST(deobfuscate_packages_and_sealing)
{
    pc_deobf d;
    uint32_t c1, c2, dup;
    memset(&d, 0, sizeof d);
    T_EQ_INT(pc_deobf_add_class(&d, "com.one", 7, "a", 1, "one.A", 5, 0, &c1), 0);
    pc_deobf_method m = {"x", "inner", 1, 5, 1, 1, 40, 0, 0};
    T_EQ_INT(pc_deobf_add_method(&d, c1, &m), 0);
    m = (pc_deobf_method){"x", "outer", 1, 5, 1, 1, 50, 0, 0};
    T_EQ_INT(pc_deobf_add_method(&d, c1, &m), 0);
    T_EQ_STR(lookup(&d, PC_NONE, "a.x", 0), "one.A.outer");
    T_EQ_INT(pc_deobf_add_class(&d, "com.one", 7, "a", 1, "one.Again", 9, 0, &dup), 0);
    T_EQ_INT(dup, PC_NONE);
    T_EQ_INT(pc_deobf_add_class(&d, "com.two", 7, "a", 1, "two.A", 5, 0, &c2), 0);
    m = (pc_deobf_method){"x", "other.Place.m", 1, 13, 0, 0, 0, 0, 0};
    T_EQ_INT(pc_deobf_add_method(&d, c2, &m), 0);
    uint32_t one = pc_deobf_package(&d, "com.one", 7), two = pc_deobf_package(&d, "com.two", 7);
    T_CHECK(one != PC_NONE && two != PC_NONE && one != two);
    for (int sealed = 0; sealed < 2; sealed++) {
        t_case(sealed ? "sealed" : "not sealed");
        T_EQ_STR(lookup(&d, one, "a.x", 0), "one.A.outer");
        T_EQ_STR(lookup(&d, one, "a.x", 1), "one.A.outer:50;one.A.inner:40");
        T_EQ_STR(lookup(&d, two, "a.x", 0), "other.Place.m");
        T_EQ_STR(lookup(&d, two, "a.x", 3), "other.Place.m");
        T_EQ_STR(lookup(&d, PC_NONE, "a.x", 0), "(not mapped)");
        T_EQ_INT(pc_deobf_seal(&d), 0);
    }
    pc_deobf_free(&d);
    pc_deobf_free(NULL);
}
