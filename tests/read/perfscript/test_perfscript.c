/* perf script text input: the project's own fixtures in each shape perf
 * and simpleperf print, every writer on what the reader makes, damaged
 * text, and text through a pipe.  Real `perf record` / `perf script`
 * output and simpleperf's report_sample.py text are compared in
 * test_perfscript_real.c. */
#include <inttypes.h>
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
        T_EQ_INT(pc_sample_time(p, i), 5000000100ULL);
        T_EQ_INT(pc_sample_time(p, i + 1), 5000250100ULL);
        T_EQ_INT(pc_sample_weight(p, i), 250000);
        T_EQ_INT(pc_sample_cpu(p, i), 2);
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
        T_EQ_INT(pc_sample_time(p, p->sample.first[rt]), 5002000000ULL);
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
        T_EQ_INT(pc_sample_weight(p, 0), 1000);
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
        T_EQ_INT(pc_sample_time(p, i), 339728111000ULL);
        T_EQ_INT(pc_sample_cpu(p, i), PC_NO_CPU);
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
    T_EQ_INT(pc_sample_weight(p, 0), 1);
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
            total += pc_sample_weight(p, i);
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
                 "report-sample file, which starts with SIMPLEPERF, a perf.data recording, "
                 "which starts with PERFILE2, the text of perf script or a Perfetto trace)");
    /* A CPU number out of range makes the header no header. */
    expect_error("app 7/7 [99999] 1.5: 1 cpu-clock:\n",
                 "fixture: offset 0: unknown input format (expected a simpleperf "
                 "report-sample file, which starts with SIMPLEPERF, a perf.data recording, "
                 "which starts with PERFILE2, the text of perf script or a Perfetto trace)");
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
