/* pprof output read back with the tests' own pprof reader (which applies
 * pprof's validity rules), against the folded writer and the model; and
 * through `go tool pprof` when Go is installed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "folded_text.h"
#include "pprof_read.h"
#include "t.h"
#include "test_util.h"

static unsigned char *write_as(const pc_profile *p, int format, int gzip, int prefix, int counts,
                               size_t *n)
{
    pc_write_options w;
    pc_write_options_init(&w);
    w.format = format;
    w.gzip = gzip;
    w.folded_prefix = prefix;
    w.folded_counts = counts;
    unsigned char *out = NULL;
    pc_error err;
    if (pc_write_memory(p, &w, &out, n, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "writing failed: %s", err.message);
        return NULL;
    }
    return out;
}

static char *folded_text_of(const pc_profile *p, int counts)
{
    size_t n;
    unsigned char *d = write_as(p, PC_FORMAT_FOLDED, 0, 0, counts, &n);
    char *s = d ? realloc(d, n + 1) : NULL;
    if (s)
        s[n] = 0;
    return s;
}

/* A label of sample s, as text ("(none)" when absent). */
static const char *label(const pp_profile *pp, const pp_sample *s, const char *key)
{
    static char buf[64];
    for (size_t i = 0; i < s->n_label; i++)
        if (strcmp(pp_str(pp, s->label[i].key), key) == 0) {
            if (s->label[i].str)
                return pp_str(pp, s->label[i].str);
            snprintf(buf, sizeof buf, "%lld", (long long)s->label[i].num);
            return buf;
        }
    return "(none)";
}

TEST(pprof_fixture)
{
    pc_profile *p = convert_fixture(NULL);
    if (!p)
        return;
    size_t n;
    unsigned char *d = write_as(p, PC_FORMAT_PPROF, 1, 0, 0, &n);
    pp_profile pp;
    char err[256];
    if (d && pp_read(d, n, &pp, err, sizeof err) == 0) {
        /* Two sample types for the kept event: its samples and periods. */
        T_EQ_INT(pp.n_sample_type, 2);
        T_EQ_STR(pp_str(&pp, pp.sample_type[0][0]), "cpu-cycles_samples");
        T_EQ_STR(pp_str(&pp, pp.sample_type[0][1]), "count");
        T_EQ_STR(pp_str(&pp, pp.sample_type[1][0]), "cpu-cycles");
        T_EQ_STR(pp_str(&pp, pp.default_sample_type), "cpu-cycles");
        /* The same stacks and sums as the folded writer's, leaf kept. */
        char *want = folded_text_of(p, 0), *got = pp_folded(&pp, 1);
        T_EQ_STR(got, want);
        free(want);
        free(got);
        want = folded_text_of(p, 1);
        got = pp_folded(&pp, 0);
        T_EQ_STR(got, want);
        free(want);
        free(got);
        /* Threads kept apart by labels. */
        int render = 0;
        for (size_t i = 0; i < pp.n_sample; i++)
            if (strcmp(label(&pp, &pp.sample[i], "thread"), "RenderThread") == 0) {
                render++;
                T_EQ_STR(label(&pp, &pp.sample[i], "tid"), "1001");
                T_EQ_STR(label(&pp, &pp.sample[i], "pid"), "1000");
                T_EQ_STR(label(&pp, &pp.sample[i], "process"), "com.example");
                T_EQ_INT(pp.sample[i].value[0], 2);
                T_EQ_INT(pp.sample[i].value[1], 14);
            }
        T_EQ_INT(render, 1);
        /* Locations keep their addresses and libraries. */
        int malloc_found = 0;
        for (size_t i = 0; i < pp.n_location; i++) {
            const pp_location *l = &pp.location[i];
            for (size_t j = 0; j < pp.n_function; j++)
                if (l->n_func && pp.function[j].id == l->func[0] &&
                    strcmp(pp_str(&pp, pp.function[j].name), "malloc") == 0) {
                    malloc_found = 1;
                    T_EQ_INT(l->address, 0x5010);
                    T_EQ_STR(pp_str(&pp, pp.function[j].filename),
                             "/apex/com.android.runtime/lib64/bionic/libc.so");
                    int mapped = 0;
                    for (size_t m = 0; m < pp.n_mapping; m++)
                        mapped |= pp.mapping[m].id == l->mapping &&
                                  strcmp(pp_str(&pp, pp.mapping[m].filename),
                                         "/apex/com.android.runtime/lib64/bionic/libc.so") == 0;
                    T_CHECK(mapped);
                }
        }
        T_CHECK(malloc_found);
        /* The kept samples span 4 ms; no wall-clock start is claimed. */
        T_EQ_INT(pp.time_nanos, 0);
        T_EQ_INT(pp.duration_nanos, 4000000);
        pp_free(&pp);
    } else if (d) {
        t_fail(__FILE__, __LINE__, "our pprof does not read back: %s", err);
    }
    free(d);
    /* Uncompressed on request; the same bytes every time. */
    size_t n2, n3;
    unsigned char *raw = write_as(p, PC_FORMAT_PPROF, 0, 0, 0, &n2);
    unsigned char *raw2 = write_as(p, PC_FORMAT_PPROF, 0, 0, 0, &n3);
    T_CHECK(raw && raw2 && n2 == n3 && memcmp(raw, raw2, n2) == 0 && raw[0] != 0x1f);
    free(raw);
    free(raw2);
    pc_profile_free(p);
}

/* A heap profile: the six space and object types; inuse_space folds to
 * the folded writer's unreleased bytes. */
TEST(pprof_heap)
{
    const char *shared = t_shared();
    if (!shared) {
        t_skip("../shared is absent: the heap trace is not converted to pprof");
        return;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/corpus/perfetto/synthetic/scale/small_heap.pftrace", shared);
    size_t n;
    unsigned char *trace = t_read_file(path, &n);
    pc_profile *p = NULL;
    pc_error e;
    if (!trace || convert_bytes(trace, n, NULL, &p, &e) != PC_OK) {
        t_fail(__FILE__, __LINE__, "cannot convert %s", path);
        free(trace);
        return;
    }
    unsigned char *d = write_as(p, PC_FORMAT_PPROF, 1, 0, 0, &n);
    pp_profile pp;
    char err[256];
    if (d && pp_read(d, n, &pp, err, sizeof err) == 0) {
        static const char *const types[] = {"alloc_objects", "alloc_space", "free_objects",
                                            "free_space", "inuse_objects", "inuse_space"};
        T_EQ_INT(pp.n_sample_type, 6);
        for (int k = 0; k < 6; k++)
            T_EQ_INT(pp_type_index(&pp, types[k]), k);
        T_EQ_STR(pp_str(&pp, pp.default_sample_type), "inuse_space");
        char *want = folded_text_of(p, 0), *got = pp_folded(&pp, 5);
        T_EQ_STR(got, want);
        free(want);
        free(got);
        /* inuse_space per process: small_heap's last dumps. */
        long long by_pid[2] = {0, 0};
        for (size_t i = 0; i < pp.n_sample; i++) {
            const char *pid = label(&pp, &pp.sample[i], "pid");
            by_pid[strcmp(pid, "1137") == 0] += pp.sample[i].value[5];
        }
        T_EQ_INT(by_pid[0], 2465616);
        T_EQ_INT(by_pid[1], 3830688);
        pp_free(&pp);
    } else if (d) {
        t_fail(__FILE__, __LINE__, "our pprof does not read back: %s", err);
    }
    free(d);
    free(trace);
    pc_profile_free(p);
}

/* `go tool pprof -top` on a corpus recording: its heaviest function by
 * flat weight is the one the model says, with the same total. */
TEST(pprof_go_tool)
{
    const char *shared = t_shared();
    if (!shared) {
        t_skip("../shared is absent: go tool pprof is not run");
        return;
    }
    if (system("command -v go >/dev/null 2>&1") != 0) {
        t_skip("go is not installed (Debian golang-go): go tool pprof is not run");
        return;
    }
    pc_options o;
    pc_options_init(&o);
    o.remove_gaps = 0;
    pc_profile *p = convert_input("perf_with_jit_symbol.callchain.gaps0.trace", &o);
    if (!p)
        return;
    /* Flat weight per function of the leaf frames, and the total. */
    int64_t *flat = calloc(p->func.n + 1, sizeof *flat), total = 0;
    size_t top = 0;
    for (size_t i = 0; i < p->sample.n; i++) {
        total += pc_sample_weight(p, i);
        if (p->sample.stack[i] != PC_NONE)
            flat[p->frame.func[p->stack.frame[p->sample.stack[i]]]] += pc_sample_weight(p, i);
    }
    for (size_t f = 1; f < p->func.n; f++)
        if (flat[f] > flat[top])
            top = f;
    size_t n;
    unsigned char *d = write_as(p, PC_FORMAT_PPROF, 1, 0, 0, &n);
    char path[600], cmd[1400], want[512];
    snprintf(path, sizeof path, "%s/jit.pb.gz", t_tmpdir());
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(d, 1, n, f);
        fclose(f);
    }
    snprintf(cmd, sizeof cmd, "HOME=%s go tool pprof -top -nodecount=3 %s 2>&1", t_tmpdir(),
             path);
    FILE *out = popen(cmd, "r");
    char text[8192] = "";
    size_t len = out ? fread(text, 1, sizeof text - 1, out) : 0;
    text[len] = 0;
    int rc = out ? pclose(out) : -1;
    T_EQ_INT(rc, 0);
    snprintf(want, sizeof want, "Total samples = %lld", (long long)total);
    T_CONTAINS(text, want);
    T_CONTAINS(text, "Type: cpu-cycles");
    /* The first row after the header: the top function and its weight. */
    const char *row = strstr(text, "cum%\n");
    char name[512];
    snprintf(name, sizeof name, "%s", pc_str(&p->str, p->func.name[top]));
    name[strcspn(name, "(")] = 0;
    snprintf(want, sizeof want, "%lld ", (long long)flat[top]);
    T_CHECK(row != NULL);
    if (row) {
        char first[1024];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(row + 5, "\n"), row + 5);
        T_CONTAINS(first, want);
        T_CONTAINS(first, name);
    }
    free(d);
    free(flat);
    pc_profile_free(p);
}

/* Two processes in perf script text: a profile per process holds that
 * process's samples alone, and the profiles add up to the whole. */
static const char two_processes[] =
    "app 100/100 [000] 1.000000: 250000 cpu-clock:\n"
    "\t1000 work (/usr/bin/app)\n"
    "\t2000 main (/usr/bin/app)\n"
    "\n"
    "app 100/101 [001] 1.000100: 250000 cpu-clock:\n"
    "\t1000 work (/usr/bin/app)\n"
    "\n"
    "srv 200/200 [000] 1.000250: 250000 cpu-clock:\n"
    "\t3000 serve (/usr/bin/srv)\n"
    "\n"
    "srv 200/200 [000] 1.000500: 250000 cpu-clock:\n"
    "\t3000 serve (/usr/bin/srv)\n"
    "\n"
    "srv 200/200 [000] 1.000750: 250000 cpu-clock:\n"
    "\t3000 serve (/usr/bin/srv)\n";

TEST(pprof_split_process)
{
    pc_profile *p = NULL;
    pc_error err;
    if (convert_bytes(two_processes, sizeof two_processes - 1, NULL, &p, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "%s", err.message);
        return;
    }
    int64_t *pids = NULL;
    size_t n = 0;
    T_EQ_INT(pc_profile_pids(p, &pids, &n, &err), PC_OK);
    T_EQ_INT(n, 2);
    if (n == 2) {
        T_EQ_INT(pids[0], 100);
        T_EQ_INT(pids[1], 200);
    }
    const long long want_samples[2] = {2, 3};
    for (size_t k = 0; k < n && k < 2; k++) {
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = PC_FORMAT_PPROF;
        w.pprof_pid = pids[k];
        unsigned char *out = NULL;
        size_t len = 0;
        T_EQ_INT(pc_write_memory(p, &w, &out, &len, &err), PC_OK);
        pp_profile pp;
        char msg[256];
        if (!out || pp_read(out, len, &pp, msg, sizeof msg) != 0) {
            t_fail(__FILE__, __LINE__, "pprof of pid %lld unreadable", (long long)pids[k]);
            free(out);
            continue;
        }
        long long samples = 0, ns = 0;
        char pid[32];
        snprintf(pid, sizeof pid, "%lld", (long long)pids[k]);
        for (size_t i = 0; i < pp.n_sample; i++) {
            T_EQ_STR(label(&pp, &pp.sample[i], "pid"), pid);
            samples += pp.sample[i].value[0];
            ns += pp.sample[i].value[1];
        }
        T_EQ_INT(samples, want_samples[k]);
        T_EQ_INT(ns, want_samples[k] * 250000);
        /* Only the process's own functions. */
        for (size_t f = 0; f < pp.n_function; f++)
            T_CHECK(strcmp(pp_str(&pp, pp.function[f].name), k ? "serve" : "work") == 0 ||
                    (k == 0 && strcmp(pp_str(&pp, pp.function[f].name), "main") == 0));
        /* The duration is the process's own: 0.5 ms for srv. */
        if (k == 1)
            T_EQ_INT(pp.duration_nanos, 500000);
        pp_free(&pp);
        free(out);
    }
    free(pids);
    pc_profile_free(p);

    /* The command line: a file per process, named after the output. */
    char in[600], cmd[2400];
    snprintf(in, sizeof in, "%s/two.perf.txt", t_tmpdir());
    FILE *f = fopen(in, "w");
    if (!f)
        return;
    fputs(two_processes, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s -q --pprof-split process '%s' -o '%s/split.pb.gz'",
             t_profconv(), in, t_tmpdir());
    T_EQ_INT(system(cmd), 0);
    const char *names[] = {"split.100.pb.gz", "split.200.pb.gz"};
    for (int i = 0; i < 2; i++) {
        char path[700];
        size_t len;
        snprintf(path, sizeof path, "%s/%s", t_tmpdir(), names[i]);
        unsigned char *d = t_read_file(path, &len);
        T_CHECK(d != NULL && len > 20);
        free(d);
    }
    snprintf(cmd, sizeof cmd, "%s -q --pprof-split process '%s' -o '%s/split.json' 2>/dev/null",
             t_profconv(), in, t_tmpdir());
    int st = system(cmd);
    T_EQ_INT(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 1);
}
