/* perf script text input: the project's own fixtures in each shape perf
 * and simpleperf print, damaged text, and real `perf record` / `perf
 * script` output compared with `perf report` on the same perf.data when
 * perf can record here. */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gecko_valid.h"
#include "pprof_read.h"
#include "processed_valid.h"
#include "t.h"
#include "test_util.h"

/* perf's header block, a command name with a space, pid/tid and CPU,
 * nanosecond times, kernel frames, C++ names with spaces and
 * parentheses, an unknown symbol in a known library, perf's address-0
 * root, a srcline line, an inlined frame, a mangled name, a second event
 * with modifiers, simpleperf's tab-separated header, a tracepoint with its
 * fields, and a last line without its newline. */
static const char fx_callchains[] =
    "# ========\n"
    "# captured on    : Sun Nov 22 19:02:48 2026\n"
    "# cmdline : /usr/bin/perf record -g\n"
    "# ========\n"
    "#\n"
    "            perf   100/100  [000]     4.999000000: PERF_RECORD_COMM: main:100/100\n"
    "            main   100/100  [000]     4.999500000: PERF_RECORD_MMAP2 100/100: "
    "[0x55d000(0x1000) @ 0 fd:01 123 0]: r-xp /usr/bin/app\n"
    "Web Content  100/101 [002]     5.000000100:     250000 cpu-clock: \n"
    "\tffffffff81000010 __schedule+0x10 ([kernel.kallsyms])\n"
    "\tffffffff81000020 do_syscall_64+0x20 ([kernel.kallsyms])\n"
    "\t            1234 std::vector<int, std::allocator<int> >::push_back(int const&)+0x4 "
    "(/usr/lib/libfoo.so)\n"
    "\t            5678 [unknown] (/usr/lib/libbar.so.1)\n"
    "\t               0 [unknown] ([unknown])\n"
    "\n"
    "Web Content  100/101 [002]     5.000250100:     250000 cpu-clock: \n"
    "\t            1234 std::vector<int, std::allocator<int> >::push_back(int const&)+0x4 "
    "(/usr/lib/libfoo.so)\n"
    "  foo.cc:12\n"
    "\t            5678 [unknown] (/usr/lib/libbar.so.1)\n"
    "\n"
    "main   100/100 [000]     5.001000000:       1000 cycles:u: \n"
    "\t    7f0000001000 LazyCompile:*render app.js:10 (/tmp/perf-100.map)\n"
    "\t            9abc _ZN3foo3barEv+0x1 (/usr/lib/libfoo.so)\n"
    "\t            9ab0 helper (/usr/lib/libfoo.so) (inlined)\n"
    "\t            dead main+0x20 (/usr/bin/app)\n"
    "\n"
    "RenderThread\t31850/31881 [001] 5.002000: 250000 cpu-clock:\n"
    "\t    7000\tDrawFrame (/system/lib64/libhwui.so)\n"
    "\n"
    "main   100/100 [000]     5.003000000:          1 sched:sched_switch: prev_comm=main "
    "prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0\n"
    "\tffffffff81000010 __schedule+0x10 ([kernel.kallsyms])\n"
    "\t            dead main+0x20 (/usr/bin/app)";

/* Without callchains, perf pads the command name and puts the one frame
 * on the header line; no pid is printed by default.  CRLF line ends. */
static const char fx_flat[] =
    "            burn  3552   339.728111:     250000 cpu-clock:      7f9c4ee5ec1a "
    "init_cpu_features.constprop.0+0x58a (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\r\n"
    "            burn  3552   339.728360:     250000 cpu-clock:  ffffffff8158e3e1 "
    "next_uptodate_folio+0xc1 ([kernel.kallsyms])\r\n"
    "            burn  3553   339.728600:     250000 cpu-clock:      56058c2711ff "
    "[unknown] (/tmp/burn)\r\n";

static pc_profile *convert_text(const char *text, const pc_options *o)
{
    pc_profile *p = NULL;
    pc_error err;
    if (convert_bytes(text, strlen(text), o, &p, &err) != PC_OK)
        t_fail(__FILE__, __LINE__, "conversion failed: %s", err.message);
    return p;
}

static const char *event_name(const pc_profile *p, size_t e)
{
    return e < p->event.n ? pc_str(&p->str, p->event.name[e]) : "(none)";
}

TEST(perfscript_callchains)
{
    pc_options o;
    pc_options_init(&o);
    o.event = "cpu-clock";
    o.remove_gaps = 0;
    log_capture_start(&o);
    pc_profile *p = convert_text(fx_callchains, &o);
    if (!p)
        return;
    /* perf's side-band records are no samples, and are told of. */
    T_CONTAINS(log_capture_text(), "2 side-band records (PERF_RECORD_*) were skipped");
    T_EQ_STR(pc_str(&p->str, p->meta.source), "perf script");
    T_EQ_INT(p->event.n, 3);
    T_EQ_STR(event_name(p, 0), "cpu-clock");
    T_EQ_STR(event_name(p, 1), "cycles:u");
    T_EQ_STR(event_name(p, 2), "sched:sched_switch");
    T_EQ_INT(p->sample.read, 5);
    T_EQ_INT(p->sample.n, 3);

    uint32_t wc = find_thread(p, 101);
    T_CHECK(wc != PC_NONE);
    if (wc != PC_NONE) {
        T_EQ_INT(p->thread.pid[wc], 100);
        T_EQ_STR(pc_str(&p->str, p->thread.name[wc]), "Web Content");
        T_EQ_INT(thread_samples(p, wc), 2);
        size_t i = p->sample.first[wc];
        /* Nanosecond digits kept exactly. */
        T_EQ_INT(p->sample.time[i], 5000000100ULL);
        T_EQ_INT(p->sample.time[i + 1], 5000250100ULL);
        T_EQ_INT(p->sample.weight[i], 250000);
        T_EQ_INT(p->sample.cpu[i], 2);
        T_EQ_STR(stack_text(p, p->sample.stack[i]),
                 "[unknown];libbar.so.1+0x5678;"
                 "std::vector<int, std::allocator<int> >::push_back(int const&);"
                 "do_syscall_64;__schedule");
        /* The srcline line is not a frame. */
        T_EQ_STR(stack_text(p, p->sample.stack[i + 1]),
                 "libbar.so.1+0x5678;std::vector<int, std::allocator<int> >::push_back(int const&)");
    }
    uint32_t rt = find_thread(p, 31881);
    T_CHECK(rt != PC_NONE);
    if (rt != PC_NONE) {
        T_EQ_INT(p->thread.pid[rt], 31850);
        T_EQ_STR(pc_str(&p->str, p->thread.name[rt]), "RenderThread");
        T_EQ_INT(p->sample.time[p->sample.first[rt]], 5002000000ULL);
        T_EQ_STR(stack_text(p, p->sample.stack[p->sample.first[rt]]), "DrawFrame");
    }
    T_EQ_INT(frame_category(p, "__schedule"), PC_CAT_KERNEL);
    T_EQ_INT(frame_category(p, "do_syscall_64"), PC_CAT_KERNEL);
    T_EQ_INT(frame_category(p, "libbar.so.1+0x5678"), PC_CAT_NATIVE);
    T_EQ_INT(frame_category(p, "[unknown]"), PC_CAT_OTHER);
    pc_profile_free(p);

    /* The other events: demangled names, an inlined frame, the
     * tracepoint's fields left out of its stack. */
    o.event = "cycles:u";
    p = convert_text(fx_callchains, &o);
    if (p) {
        T_EQ_INT(p->sample.n, 1);
        T_EQ_INT(p->sample.weight[0], 1000);
        T_EQ_STR(stack_text(p, p->sample.stack[0]),
                 "main;helper;foo::bar();LazyCompile:*render app.js:10");
        /* JIT code as perf names it, marked as FlameGraph marks it. */
        T_EQ_INT(frame_category(p, "LazyCompile:*render app.js:10"), PC_CAT_JIT);
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = PC_FORMAT_FOLDED;
        w.folded_annotate = 1;
        unsigned char *out = NULL;
        size_t n = 0;
        pc_error err;
        T_EQ_INT(pc_write_memory(p, &w, &out, &n, &err), PC_OK);
        if (out) {
            out = realloc(out, n + 1);
            out[n] = 0;
            T_EQ_STR((char *)out, "main;main;helper;foo::bar();LazyCompile:*render app.js:10_[j] 1000\n");
            free(out);
        }
        pc_profile_free(p);
    }
    o.event = "sched:sched_switch";
    p = convert_text(fx_callchains, &o);
    if (p) {
        T_EQ_INT(p->sample.n, 1);
        T_EQ_STR(stack_text(p, p->sample.stack[0]), "main;__schedule");
        pc_profile_free(p);
    }
    /* --mangled keeps the raw name. */
    o.event = "cycles:u";
    o.mangled = 1;
    p = convert_text(fx_callchains, &o);
    if (p) {
        T_EQ_STR(stack_text(p, p->sample.stack[0]),
                 "main;helper;_ZN3foo3barEv;LazyCompile:*render app.js:10");
        pc_profile_free(p);
    }
}

TEST(perfscript_without_callchains)
{
    pc_profile *p = convert_text(fx_flat, NULL);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, 3);
    T_EQ_INT(p->thread.n, 2);
    uint32_t t = find_thread(p, 3552);
    T_CHECK(t != PC_NONE);
    if (t != PC_NONE) {
        /* No pid in the text: the thread stands for its own process. */
        T_EQ_INT(p->thread.pid[t], 3552);
        T_EQ_STR(pc_str(&p->str, p->thread.name[t]), "burn");
        T_EQ_INT(thread_samples(p, t), 2);
        size_t i = p->sample.first[t];
        T_EQ_INT(p->sample.time[i], 339728111000ULL);
        T_EQ_INT(p->sample.cpu[i], PC_NO_CPU);
        T_EQ_STR(stack_text(p, p->sample.stack[i]), "init_cpu_features.constprop.0");
        T_EQ_INT(p->frame.addr[p->stack.frame[p->sample.stack[i]]], 0x7f9c4ee5ec1aULL);
        T_EQ_STR(stack_text(p, p->sample.stack[i + 1]), "next_uptodate_folio");
    }
    t = find_thread(p, 3553);
    if (t != PC_NONE)
        T_EQ_STR(stack_text(p, p->sample.stack[p->sample.first[t]]), "burn+0x56058c2711ff");
    pc_profile_free(p);
}

/* Samples without a period (perf script -F without it) count one each
 * under an event that says so, not as 1 ns of cpu-clock. */
TEST(perfscript_without_period)
{
    static const char text[] =
        "app 7/7 1.500000: cpu-clock:\n"
        "\t1000 work (/usr/bin/app)\n"
        "\n"
        "app 7/7 1.501000: cpu-clock:\n"
        "\t1000 work (/usr/bin/app)\n";
    pc_profile *p = convert_text(text, NULL);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, 2);
    T_EQ_STR(event_name(p, 0), "samples of cpu-clock");
    T_EQ_INT(p->sample.weight[0], 1);
    pc_profile_free(p);
}

/* Every writer takes what the perf script reader makes, frames without a
 * library included: valid Firefox files, pprof samples summing the
 * periods, folded lines. */
TEST(perfscript_every_output)
{
    const char *texts[] = {fx_callchains, fx_flat};
    for (int k = 0; k < 2; k++) {
        t_case("perfscript_every_output: %s", k ? "flat" : "callchains");
        pc_options o;
        pc_options_init(&o);
        pc_profile *p = convert_text(texts[k], &o);
        if (!p)
            continue;
        int64_t total = 0;
        for (size_t i = 0; i < p->sample.n; i++)
            total += p->sample.weight[i];
        int formats[] = {PC_FORMAT_FIREFOX, PC_FORMAT_GECKO, PC_FORMAT_FOLDED, PC_FORMAT_PPROF,
                         PC_FORMAT_SPEEDSCOPE};
        for (size_t f = 0; f < sizeof formats / sizeof *formats; f++) {
            pc_write_options w;
            pc_write_options_init(&w);
            w.format = formats[f];
            unsigned char *out = NULL;
            size_t n = 0;
            pc_error err;
            if (pc_write_memory(p, &w, &out, &n, &err) != PC_OK) {
                t_fail(__FILE__, __LINE__, "format %d: %s", formats[f], err.message);
                continue;
            }
            char msg[512] = "";
            if (formats[f] == PC_FORMAT_FIREFOX && processed_check_text((char *)out, n, msg,
                                                                         sizeof msg))
                t_fail(__FILE__, __LINE__, "processed: %s", msg);
            if (formats[f] == PC_FORMAT_GECKO && gecko_check_text((char *)out, n, msg, sizeof msg))
                t_fail(__FILE__, __LINE__, "gecko: %s", msg);
            if (formats[f] == PC_FORMAT_PPROF) {
                pp_profile pp;
                if (pp_read(out, n, &pp, msg, sizeof msg) != 0) {
                    t_fail(__FILE__, __LINE__, "pprof: %s", msg);
                } else {
                    /* The event's weight: its second sample type. */
                    int64_t sum = 0;
                    for (size_t i = 0; i < pp.n_sample; i++)
                        sum += pp.sample[i].n_value > 1 ? pp.sample[i].value[1] : 0;
                    T_EQ_INT(sum, total);
                    pp_free(&pp);
                }
            }
            if (formats[f] == PC_FORMAT_FOLDED) {
                int64_t sum = 0;
                for (const char *l = (const char *)out; l < (const char *)out + n;) {
                    const char *nl = memchr(l, '\n', (size_t)((const char *)out + n - l));
                    const char *sp = nl ? nl : (const char *)out + n;
                    while (sp > l && sp[-1] != ' ')
                        sp--;
                    sum += strtoll(sp, NULL, 10);
                    l = nl ? nl + 1 : (const char *)out + n;
                }
                T_EQ_INT(sum, total);
            }
            free(out);
        }
        pc_profile_free(p);
    }
}

/* Gzip-compressed text is read the same. */
TEST(perfscript_gzip)
{
    unsigned char *gz = NULL;
    size_t n = gzip_bytes(fx_flat, strlen(fx_flat), &gz);
    pc_profile *p = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(gz, n, NULL, &p, &err), PC_OK);
    if (p)
        T_EQ_INT(p->sample.n, 3);
    pc_profile_free(p);
    free(gz);
}

static void expect_error(const char *text, const char *message)
{
    pc_profile *p = NULL;
    pc_error err;
    int st = convert_bytes(text, strlen(text), NULL, &p, &err);
    T_EQ_INT(st, PC_EINPUT);
    if (st == PC_EINPUT)
        T_EQ_STR(err.message, message);
    pc_profile_free(p);
}

TEST(perfscript_errors)
{
    /* A line that is neither header nor frame, after a valid sample: the
     * message names the line and its byte offset. */
    expect_error("app 7/7 1.500000: 1 cpu-clock:\n"
                 "\t1000 work (/usr/bin/app)\n"
                 "\n"
                 "this is not a sample\n",
                 "fixture: offset 58: line 4: expected a sample header such as "
                 "\"comm 123/456 [001] 7.123456: 250000 cpu-clock:\", found "
                 "\"this is not a sample\"");
    /* A NUL byte in what began as text. */
    static const char nul[] = "app 7/7 1.500000: 1 cpu-clock:\n\t1000 wo\0rk (/usr/bin/app)\n";
    pc_profile *p = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(nul, sizeof nul - 1, NULL, &p, &err), PC_EINPUT);
    T_EQ_STR(err.message, "fixture: offset 39: line 2: a NUL byte: not perf script text");
    pc_profile_free(p);
    /* Text that is not perf script at all is not taken for it. */
    expect_error("hello world\nthis is text\n",
                 "fixture: offset 0: unknown input format (expected a simpleperf "
                 "report-sample file, which starts with SIMPLEPERF, the text of perf script "
                 "or a Perfetto trace)");
    /* A CPU number out of range makes the header no header. */
    expect_error("app 7/7 [99999] 1.5: 1 cpu-clock:\n",
                 "fixture: offset 0: unknown input format (expected a simpleperf "
                 "report-sample file, which starts with SIMPLEPERF, the text of perf script "
                 "or a Perfetto trace)");
}

/* ---- Real perf ---- */

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
        ours_period += (uint64_t)p->sample.weight[i];
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
                if (s == PC_NONE || p->thread.tid[p->sample.thread[i]] != pid)
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
                if (p->thread.tid[p->sample.thread[i]] == pid &&
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
    if (sh("cd '%s' && perf record -q %s -e cpu-clock,task-clock -F 1999 -o '%s' ./burn "
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

TEST(perfscript_real_perf)
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

/* `perf script | profconv -`: text through a pipe, gzipped or not. */
TEST(perfscript_pipe)
{
    char in[600], cmd[2000], out[4096];
    snprintf(in, sizeof in, "%s/flat.perf.txt", t_tmpdir());
    FILE *f = fopen(in, "w");
    if (!f)
        return;
    fputs(fx_flat, f);
    fclose(f);
    for (int gz = 0; gz < 2; gz++) {
        snprintf(cmd, sizeof cmd, "%s '%s' | %s -q - --to folded --folded-value count -o -",
                 gz ? "gzip -c" : "cat", in, t_profconv());
        FILE *p = popen(cmd, "r");
        if (!p) {
            t_fail(__FILE__, __LINE__, "cannot run %s", cmd);
            continue;
        }
        size_t n = fread(out, 1, sizeof out - 1, p);
        out[n] = 0;
        T_EQ_INT(pclose(p), 0);
        T_EQ_STR(out, "burn;burn+0x56058c2711ff 1\n"
                      "burn;init_cpu_features.constprop.0 1\n"
                      "burn;next_uptodate_folio 1\n");
    }
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
                T_EQ_INT(text->sample.time[a + k], proto->sample.time[b + k] / 1000 * 1000);
                T_EQ_INT(text->sample.weight[a + k], proto->sample.weight[b + k]);
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

/* Damaged text: every prefix, and every byte replaced by a few others,
 * converts or fails with an input error naming an offset inside the
 * text; nothing else (the sanitizer build watches for the rest). */
TEST(perfscript_damage)
{
    size_t len = sizeof fx_callchains - 1;
    char *buf = malloc(len + 1);
    static const char repl[] = {'\0', '\n', ' ', '\t', '(', ')', ':', '/', '[', '9', 'x', '#'};
    size_t ok = 0, bad = 0;
    for (size_t cut = 0; cut <= len; cut++) {
        memcpy(buf, fx_callchains, cut);
        pc_profile *p = NULL;
        pc_error err;
        int st = convert_bytes(buf, cut, NULL, &p, &err);
        if (st != PC_OK && st != PC_EINPUT)
            t_fail(__FILE__, __LINE__, "prefix %zu: status %d: %s", cut, st, err.message);
        st == PC_OK ? ok++ : bad++;
        pc_profile_free(p);
    }
    for (size_t i = 0; i < len; i++) {
        for (size_t r = 0; r < sizeof repl; r++) {
            memcpy(buf, fx_callchains, len);
            buf[i] = repl[r];
            pc_profile *p = NULL;
            pc_error err;
            int st = convert_bytes(buf, len, NULL, &p, &err);
            if (st != PC_OK && st != PC_EINPUT)
                t_fail(__FILE__, __LINE__, "byte %zu = %d: status %d", i, repl[r], st);
            /* Damage at the right place can leave no sample at all. */
            if (st == PC_EINPUT && !strstr(err.message, ": nothing to show: ")) {
                const char *off = strstr(err.message, "offset ");
                T_CHECK(off && strtoull(off + 7, NULL, 10) <= len);
            }
            pc_profile_free(p);
        }
    }
    /* Both outcomes happen: the damage is real and most text survives. */
    T_CHECK(ok > 0 && bad > 0);
    free(buf);
}
