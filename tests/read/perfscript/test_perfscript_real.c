/* perf script text from the real tools: `perf record` / `perf script`
 * output compared with `perf report` on the same perf.data when perf can
 * record here, and simpleperf's report_sample.py text of a corpus
 * recording compared with the report-sample protobuf it was made from. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "test_util.h"

static int have(const char *cmd)
{
    char buf[300];
    snprintf(buf, sizeof buf, "command -v %s >/dev/null 2>&1", cmd);
    return system(buf) == 0;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

static const char burn_c[] =
    "#include <pthread.h>\n"
    "#include <stdio.h>\n"
    "static volatile unsigned long sink;\n"
    "__attribute__((noinline)) void spin_a(int n) { for (int i = 0; i < n; i++) sink += i * 7u; }\n"
    "__attribute__((noinline)) void spin_b(int n) { for (int i = 0; i < n; i++) sink ^= i * 13u; }\n"
    "__attribute__((noinline)) void step(int k) { if (k & 1) spin_a(200000); else spin_b(100000); }\n"
    "__attribute__((noinline)) void *worker(void *arg) { (void)arg;\n"
    "    for (int k = 0; k < 1200; k++) step(k); return NULL; }\n"
    "int main(void) { pthread_t t; pthread_create(&t, NULL, worker, NULL);\n"
    "    for (int k = 0; k < 800; k++) step(k + 1); pthread_join(t, NULL);\n"
    "    printf(\"%lu\\n\", sink); return 0; }\n";

/* Whether a folded perf report stack holds a frame perf could not name,
 * which it prints as an address ("0x1a2b", or a bare "0") where the text
 * names the library. */
static int unresolved_frame(const char *stack)
{
    for (const char *f = stack; *f;) {
        size_t n = strcspn(f, ";");
        size_t hex = 0;
        while (hex < n && isxdigit((unsigned char)f[hex]))
            hex++;
        if ((n > 2 && f[0] == '0' && f[1] == 'x') || (n > 0 && hex == n))
            return 1;
        f += n;
        if (*f == ';')
            f++;
    }
    return 0;
}

/* What perf report says of one event. */
typedef struct report_event {
    char name[64];
    uint64_t samples, period;
} report_event;

/* Checks p (converted for event ev) against perf report's rows and folded
 * callchains for that event: total samples and period, samples per
 * (thread, leaf symbol), and per (thread, stack).  perf report's "pid"
 * sort key shows each thread by its tid. */
static void compare_report(const pc_profile *p, const char *report, const char *ev,
                           int callchains)
{
    char want[128];
    snprintf(want, sizeof want, "of event '%s'", ev);
    const char *sec = strstr(report, want);
    if (!sec) {
        t_fail(__FILE__, __LINE__, "perf report has no section for %s", ev);
        return;
    }
    const char *end = strstr(sec + 1, "# Samples:");
    if (!end)
        end = sec + strlen(sec);
    uint64_t period = 0, samples = 0, ours_period = 0;
    const char *pc = strstr(sec, "# Event count (approx.): ");
    if (pc && pc < end)
        period = strtoull(pc + 25, NULL, 10);
    for (size_t i = 0; i < p->sample.n; i++)
        ours_period += (uint64_t)pc_sample_weight(p, i);
    T_EQ_INT(ours_period, period);

    int64_t pid = -1;
    char sym[512] = "";
    size_t rows = 0, stacks = 0;
    for (const char *l = sec; l < end;) {
        const char *nl = memchr(l, '\n', (size_t)(end - l));
        size_t len = nl ? (size_t)(nl - l) : (size_t)(end - l);
        char line[2048];
        if (len >= sizeof line)
            len = sizeof line - 1;
        memcpy(line, l, len);
        line[len] = 0;
        l = nl ? nl + 1 : end;
        double pct;
        unsigned long long n;
        long long rpid;
        char kind;
        int used = 0;
        if (sscanf(line, " %lf%% %llu %lld:%*s [%c] %n", &pct, &n, &rpid, &kind, &used) == 4 &&
            used > 0) {
            /* A row: "pct samples pid:comm [.] symbol". */
            samples += n;
            pid = rpid;
            snprintf(sym, sizeof sym, "%s", line + used);
            if (strncmp(sym, "0x", 2) == 0)
                continue;  /* unsymbolized: named by library here */
            size_t ours = 0;
            for (size_t i = 0; i < p->sample.n; i++) {
                uint32_t s = p->sample.stack[i];
                if (s == PC_NONE || p->thread.tid[pc_sample_thread(p, i)] != pid)
                    continue;
                uint32_t f = p->frame.func[p->stack.frame[s]];
                if (strcmp(pc_str(&p->str, p->func.name[f]), sym) == 0)
                    ours++;
            }
            if (ours != n)
                t_fail(__FILE__, __LINE__, "%s: tid %lld, leaf %s: %zu samples, perf report %llu",
                       ev, rpid, sym, ours, n);
            rows++;
        } else if (callchains && pid >= 0 && sscanf(line, "%llu %n", &n, &used) == 1 && used) {
            /* A folded callchain of the row above: "count root;...;leaf". */
            const char *stack = line + used;
            if (unresolved_frame(stack) || strncmp(sym, "0x", 2) == 0)
                continue;
            size_t ours = 0;
            for (size_t i = 0; i < p->sample.n; i++)
                if (p->thread.tid[pc_sample_thread(p, i)] == pid &&
                    strcmp(stack_text(p, p->sample.stack[i]), stack) == 0)
                    ours++;
            if (ours != n)
                t_fail(__FILE__, __LINE__, "%s: tid %lld, stack %s: %zu samples, perf report %llu",
                       ev, (long long)pid, stack, ours, n);
            stacks++;
        }
    }
    T_EQ_INT(p->sample.n, samples);
    T_CHECK(rows >= 2);
    if (callchains)
        T_CHECK(stacks >= 2);
    /* The program's own functions are there, under their threads. */
    T_CHECK(frame_category(p, "spin_a") == PC_CAT_USER);
}

static void check_recording(const char *dir, const char *tag, int callchains)
{
    char data[600], text[600], report[600];
    snprintf(data, sizeof data, "%s/%s.data", dir, tag);
    snprintf(text, sizeof text, "%s/%s.txt", dir, tag);
    snprintf(report, sizeof report, "%s/%s.report", dir, tag);
    if (sh("cd '%s' && " T_PERF_RECORD " %s -e cpu-clock,task-clock -F 1999 -o '%s' ./burn "
           ">/dev/null 2>&1", dir, callchains ? "-g" : "", data) != 0) {
        t_skip("perf record cannot record here (perf_event_paranoid or no permission)");
        return;
    }
    if (sh("perf script -F +pid -i '%s' > '%s' 2>/dev/null", data, text) != 0 ||
        sh("perf report -i '%s' --stdio --no-children -n --sort pid,sym --percent-limit 0 %s "
           "> '%s' 2>/dev/null", data, callchains ? "-g folded,0,caller,count" : "-g none",
           report) != 0) {
        t_fail(__FILE__, __LINE__, "perf script or perf report failed on %s", data);
        return;
    }
    char *rep = read_text(report);
    const char *events[] = {"cpu-clock", "task-clock"};
    for (int e = 0; e < 2 && rep; e++) {
        pc_options o;
        pc_options_init(&o);
        o.event = events[e];
        pc_input *in;
        pc_profile *p = NULL;
        pc_error err;
        int st = pc_input_open(&in, text, &err);
        if (st == PC_OK) {
            st = pc_convert(in, &o, &p, &err);
            pc_input_close(in);
        }
        if (st != PC_OK) {
            t_fail(__FILE__, __LINE__, "%s: %s", text, err.message);
            continue;
        }
        compare_report(p, rep, events[e], callchains);
        pc_profile_free(p);
    }
    free(rep);
}

TEST_SLOW(perfscript_real_perf)
{
    if (!have("perf") || !have("cc")) {
        t_skip("perf (Debian linux-perf) or cc is not installed: real perf script "
               "output is not tested");
        return;
    }
    char dir[600], src[700];
    snprintf(dir, sizeof dir, "%s/perf", t_tmpdir());
    snprintf(src, sizeof src, "%s/burn.c", dir);
    sh("mkdir -p '%s'", dir);
    FILE *f = fopen(src, "w");
    if (!f || fputs(burn_c, f) < 0 || fclose(f) != 0) {
        t_fail(__FILE__, __LINE__, "cannot write %s", src);
        return;
    }
    if (sh("cd '%s' && cc -O1 -g -fno-omit-frame-pointer -fno-inline -pthread -o burn burn.c",
           dir) != 0) {
        t_fail(__FILE__, __LINE__, "cannot compile %s", src);
        return;
    }
    t_case("perfscript_real_perf: callchains");
    check_recording(dir, "g", 1);
    t_case("perfscript_real_perf: no callchains");
    check_recording(dir, "flat", 0);
}

/* simpleperf's report_sample.py text of a corpus recording reads as the
 * same samples, threads and stacks as the report-sample protobuf it was
 * made from (report_sample.py prints 0 for addresses and "unknown" for
 * symbols the protobuf leaves unnamed). */
TEST(perfscript_report_sample_py)
{
    if (!t_shared()) {
        t_skip("../shared is absent: report_sample.py text is not compared");
        return;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/corpus/simpleperf/reference/"
             "perf_with_jit_symbol.proto.report_sample.txt", t_shared());
    pc_options o;
    pc_options_init(&o);
    o.remove_gaps = 0;
    pc_input *in;
    pc_profile *text = NULL;
    pc_error err;
    int st = pc_input_open(&in, path, &err);
    if (st == PC_OK) {
        st = pc_convert(in, &o, &text, &err);
        pc_input_close(in);
    }
    if (st != PC_OK) {
        t_fail(__FILE__, __LINE__, "%s", err.message);
        return;
    }
    pc_profile *proto = convert_input("perf_with_jit_symbol.callchain.gaps0.trace", &o);
    if (proto) {
        T_EQ_INT(text->sample.n, proto->sample.n);
        T_EQ_INT(text->thread.n, proto->thread.n);
        for (size_t t = 0; t < proto->thread.n; t++) {
            uint32_t u = find_thread(text, proto->thread.tid[t]);
            T_CHECK(u != PC_NONE);
            if (u == PC_NONE)
                continue;
            T_EQ_INT(text->thread.pid[u], proto->thread.pid[t]);
            T_EQ_STR(pc_str(&text->str, text->thread.name[u]),
                     pc_str(&proto->str, proto->thread.name[t]));
            T_EQ_INT(thread_samples(text, u), thread_samples(proto, (uint32_t)t));
            size_t a = text->sample.first[u], b = proto->sample.first[t];
            for (size_t k = 0; k < thread_samples(proto, (uint32_t)t); k++) {
                /* report_sample.py prints microseconds. */
                T_EQ_INT(pc_sample_time(text, a + k), pc_sample_time(proto, b + k) / 1000 * 1000);
                T_EQ_INT(pc_sample_weight(text, a + k), pc_sample_weight(proto, b + k));
                char want[8192];
                snprintf(want, sizeof want, "%s", stack_text(proto, proto->sample.stack[b + k]));
                /* Unnamed code: "lib.so+0xADDR" in the protobuf's names. */
                for (char *q = want; (q = strstr(q, "+0x")) != NULL;) {
                    char *start = q;
                    while (start > want && start[-1] != ';')
                        start--;
                    char *end = strchr(q, ';');
                    size_t tail = end ? strlen(end) : 0;
                    memcpy(start, "unknown", 7);
                    memmove(start + 7, end ? end : q + strlen(q), tail + 1);
                    q = start + 7;
                }
                if (strcmp(stack_text(text, text->sample.stack[a + k]), want) != 0) {
                    t_fail(__FILE__, __LINE__, "tid %lld sample %zu: %s, protobuf %s",
                           (long long)proto->thread.tid[t], k,
                           stack_text(text, text->sample.stack[a + k]), want);
                    break;
                }
            }
        }
        pc_profile_free(proto);
    }
    pc_profile_free(text);
}
