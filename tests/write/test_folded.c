/* Folded stacks: the fixture under each option, simpleperf's own
 * stackcollapse output for perf_with_jit_symbol, and the Perfetto scale
 * traces' expected folded files. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "folded_text.h"
#include "t.h"
#include "test_util.h"

/* p written as folded stacks with the given options (malloc'd text). */
static char *folded_of(const pc_profile *p, int prefix, int counts, int annotate)
{
    pc_write_options w;
    pc_write_options_init(&w);
    w.format = PC_FORMAT_FOLDED;
    w.folded_prefix = prefix;
    w.folded_counts = counts;
    w.folded_annotate = annotate;
    unsigned char *out = NULL;
    size_t n = 0;
    pc_error err;
    if (pc_write_memory(p, &w, &out, &n, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "folded output failed: %s", err.message);
        return NULL;
    }
    char *text = realloc(out, n + 1);
    text[n] = 0;
    return text;
}

TEST(folded_fixture)
{
    pc_profile *p = convert_fixture(NULL);
    if (!p)
        return;
    /* By default: the thread's name, root first with the leaf, summed
     * periods, sorted bytewise; the unnamed thread as "thread TID". */
    char *f = folded_of(p, PC_FOLDED_THREAD, 0, 0);
    T_EQ_STR(f, "RenderThread;__start_thread;android::RenderThread::threadLoop();draw;"
                "do_syscall_64;__schedule 14\n"
                "com.example;__libc_init;android.os.Looper.loop;com.example.Foo.bar;malloc 2000000\n"
                "com.example;__libc_init;android.os.Looper.loop;com.example.Foo.hot 1000000\n"
                "glibc_prog;java.lang.Thread.run;libc.so.6+0x99 1998\n"
                "thread 1002;java.lang.String.equals;libc.so.6+0x1a2b 5\n");
    free(f);
    /* No prefix, counts, FlameGraph's kernel and JIT marks (the kernel's
     * __schedule too). */
    f = folded_of(p, 0, 1, 1);
    T_EQ_STR(f, "__libc_init;android.os.Looper.loop;com.example.Foo.bar;malloc 2\n"
                "__libc_init;android.os.Looper.loop;com.example.Foo.hot_[j] 1\n"
                "__start_thread;android::RenderThread::threadLoop();draw;do_syscall_64_[k];"
                "__schedule_[k] 2\n"
                "java.lang.String.equals_[j];libc.so.6+0x1a2b 1\n"
                "java.lang.Thread.run;libc.so.6+0x99 2\n");
    free(f);
    /* Process then thread. */
    f = folded_of(p, PC_FOLDED_PROCESS | PC_FOLDED_THREAD, 1, 0);
    T_CHECK(f && strncmp(f, "com.example;RenderThread;__start_thread;", 40) == 0);
    T_CONTAINS(f, "\nglibc_prog;glibc_prog;java.lang.Thread.run;libc.so.6+0x99 2\n");
    free(f);
    /* Same input, same bytes. */
    char *a = folded_of(p, PC_FOLDED_THREAD, 0, 1), *b = folded_of(p, PC_FOLDED_THREAD, 0, 1);
    T_CHECK(a && b && strcmp(a, b) == 0);
    free(a);
    free(b);
    pc_profile_free(p);
}

/* Our line as simpleperf's stackcollapse.py writes it: without the leaf,
 * unknown symbols as "unknown", kernel marks only with its --kernel. */
static char *as_stackcollapse(const char *ours)
{
    regex_t unknown;
    regcomp(&unknown, "\\+0x[0-9a-f]+(_\\[k\\])?$", REG_EXTENDED);
    size_t cap = strlen(ours) + 1, len = 0;
    char *out = malloc(cap * 2 + 16);
    out[0] = 0;
    char *copy = strdup(ours);
    for (char *ln = strtok(copy, "\n"); ln; ln = strtok(NULL, "\n")) {
        char *sp = strrchr(ln, ' ');
        if (!sp)
            continue;
        *sp = 0;
        char *leaf = strrchr(ln, ';');
        if (leaf)
            *leaf = 0;
        char *save = NULL;
        size_t start = len;
        for (char *fr = strtok_r(ln, ";", &save); fr; fr = strtok_r(NULL, ";", &save)) {
            size_t n = strlen(fr);
            if (regexec(&unknown, fr, 0, NULL, 0) == 0)
                fr = "unknown", n = 7;
            else if (n > 4 && strcmp(fr + n - 4, "_[k]") == 0)
                n -= 4;
            len += (size_t)sprintf(out + len, "%s%.*s", len > start ? ";" : "", (int)n, fr);
        }
        len += (size_t)sprintf(out + len, " %s\n", sp + 1);
    }
    free(copy);
    regfree(&unknown);
    return out;
}

TEST(folded_simpleperf_reference)
{
    const char *shared = t_shared();
    if (!shared) {
        t_skip("../shared is absent: simpleperf's folded reference is not compared");
        return;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/corpus/simpleperf/reference/perf_with_jit_symbol.proto.foldedstack",
             shared);
    size_t n;
    char *ref = (char *)t_read_file(path, &n);
    pc_options o;
    pc_options_init(&o);
    o.remove_gaps = 0;  /* stackcollapse.py removes nothing */
    pc_profile *p = convert_input("perf_with_jit_symbol.callchain.gaps0.trace", &o);
    if (ref && p) {
        ref = realloc(ref, n + 1);
        ref[n] = 0;
        char *ours = folded_of(p, PC_FOLDED_THREAD, 0, 1);
        char *conv = as_stackcollapse(ours);
        char *a = sum_folded(conv), *b = sum_folded(ref);
        T_EQ_STR(a, b);
        /* The leaf is really there: every line is longer than simpleperf's. */
        T_CHECK(strlen(ours) > strlen(ref));
        free(a);
        free(b);
        free(conv);
        free(ours);
    } else {
        t_fail(__FILE__, __LINE__, "cannot read %s or its input", path);
    }
    free(ref);
    pc_profile_free(p);
}

/* The Perfetto scale traces' expected folded stacks: samples counted
 * under process and thread, the heap's unreleased bytes under the
 * process, byte for byte once sorted. */
TEST(folded_perfetto_expected)
{
    const char *shared = t_shared();
    if (!shared) {
        t_skip("../shared is absent: the Perfetto folded files are not compared");
        return;
    }
    static const struct {
        const char *name;
        int prefix, counts;
    } cases[] = {
        {"small_perf.pftrace", PC_FOLDED_PROCESS | PC_FOLDED_THREAD, 1},
        {"small_chrome.pftrace", PC_FOLDED_PROCESS | PC_FOLDED_THREAD, 1},
        {"small_heap.pftrace", PC_FOLDED_THREAD, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        t_case("folded_perfetto_expected %s", cases[i].name);
        char path[512], exp[600];
        snprintf(path, sizeof path, "%s/corpus/perfetto/synthetic/scale/%s", shared,
                 cases[i].name);
        snprintf(exp, sizeof exp, "%s.expected.folded", path);
        size_t n, m;
        unsigned char *trace = t_read_file(path, &n);
        char *want = (char *)t_read_file(exp, &m);
        pc_profile *p = NULL;
        pc_error err;
        if (!trace || !want || convert_bytes(trace, n, NULL, &p, &err) != PC_OK) {
            t_fail(__FILE__, __LINE__, "cannot convert %s", path);
        } else {
            want = realloc(want, m + 1);
            want[m] = 0;
            char *sorted = sort_lines(want);
            char *got = folded_of(p, cases[i].prefix, cases[i].counts, 0);
            T_CHECK(got && strcmp(got, sorted) == 0);
            free(got);
            free(sorted);
        }
        pc_profile_free(p);
        free(trace);
        free(want);
    }
}
