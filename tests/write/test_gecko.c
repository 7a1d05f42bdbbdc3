/* The Gecko writer on the hand-made fixture: what a user of the Firefox
 * Profiler sees, value by value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "gecko_valid.h"
#include "jsonmini.h"
#include "t.h"
#include "test_util.h"

/* Writes p as Gecko JSON, checks it is valid and returns it parsed (NULL
 * after recording a failure).  Frees p. */
static jv *gecko_of_profile(pc_profile *p)
{
    pc_write_options w;
    pc_error err;
    unsigned char *text;
    size_t len;
    char msg[1024];
    jv *root = NULL;
    if (!p)
        return NULL;
    pc_write_options_init(&w);
    w.format = PC_FORMAT_GECKO;
    if (pc_write_memory(p, &w, &text, &len, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "write failed: %s", err.message);
    } else {
        root = j_parse((const char *)text, len, msg, sizeof msg);
        if (!root)
            t_fail(__FILE__, __LINE__, "output is not JSON: %s", msg);
        else if (gecko_check(root, msg, sizeof msg))
            t_fail(__FILE__, __LINE__, "output is not a valid Gecko profile: %s", msg);
        free(text);
    }
    pc_profile_free(p);
    return root;
}

static jv *gecko_of_fixture(const pc_options *o)
{
    return gecko_of_profile(convert_fixture(o));
}

/* Converts an encoded file and returns its Gecko output parsed. */
static jv *gecko_of_file(spe *e)
{
    pc_profile *p;
    pc_error err;
    if (convert_bytes(e->out.data, e->out.len, NULL, &p, &err) != PC_OK)
        t_fail(__FILE__, __LINE__, "conversion failed: %s", err.message);
    spe_free(e);
    return gecko_of_profile(p);
}

static const jv *thread_by_tid(const jv *root, long long tid)
{
    const jv *threads = j_get(root, "threads");
    for (size_t i = 0; i < j_len(threads); i++)
        if (j_int(j_get(j_at(threads, i), "tid")) == tid)
            return j_at(threads, i);
    return NULL;
}

/* Times of a thread's samples as written, joined by ','. */
static const char *times_text(const jv *thread)
{
    static char buf[1024];
    const jv *data = j_get(j_get(thread, "samples"), "data");
    buf[0] = 0;
    for (size_t i = 0; i < j_len(data); i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, sizeof buf - used, "%s%s", i ? "," : "",
                 j_num_text(j_at(j_at(data, i), 1)));
    }
    return buf;
}

/* Leaf-to-root frame strings with categories of one sample's stack. */
static const char *sample_stack(const jv *thread, size_t i)
{
    static char buf[2048];
    const jv *strings = j_get(thread, "stringTable");
    const jv *stacks = j_get(j_get(thread, "stackTable"), "data");
    const jv *frames = j_get(j_get(thread, "frameTable"), "data");
    const jv *s = j_at(j_at(j_get(j_get(thread, "samples"), "data"), i), 0);
    buf[0] = 0;
    for (long long k = j_is_int(s) ? j_int(s) : -1; k >= 0;) {
        const jv *row = j_at(stacks, (size_t)k);
        const jv *frame = j_at(frames, (size_t)j_int(j_at(row, 1)));
        size_t used = strlen(buf);
        snprintf(buf + used, sizeof buf - used, "%s%s #%lld", used ? " <- " : "",
                 j_str(j_at(strings, (size_t)j_int(j_at(frame, 0)))),
                 j_int(j_at(frame, 6)));
        const jv *pre = j_at(row, 0);
        k = j_is_int(pre) ? j_int(pre) : -1;
    }
    return buf;
}

TEST(gecko_meta)
{
    jv *root = gecko_of_fixture(NULL);
    if (!root)
        return;
    const jv *meta = j_get(root, "meta");
    T_EQ_INT(j_int(j_get(meta, "version")), 24);
    /* simpleperf's clock is the time since boot, no date: startTime 0
     * shows none, where FX_T0 would date the profile in 1970.  The
     * timeline spans the recording, 5 ms, and the interval of its last
     * sample. */
    T_EQ_STR(j_num_text(j_get(meta, "startTime")), "0");
    T_EQ_STR(j_num_text(j_get(meta, "profilingStartTime")), "0");
    T_EQ_STR(j_num_text(j_get(meta, "profilingEndTime")), "6");
    /* Median gap between consecutive samples of a thread: the gaps are
     * 1, 3 (main), 1 (render), 0.2 (glibc) ms -> 1 ms. */
    T_EQ_STR(j_num_text(j_get(meta, "interval")), "1");
    T_EQ_STR(j_str(j_get(meta, "product")), "com.example (simpleperf: cpu-cycles)");
    T_EQ_STR(j_str(j_get(meta, "platform")), "Android");
    T_EQ_STR(j_str(j_get(meta, "oscpu")), "Android SDK 33");
    T_EQ_STR(j_str(j_get(meta, "misc")),
             "userdebug build, 2 of 14 samples lost while recording (14.3%)");
    /* The profiler reads "debug" as a Firefox build's. */
    T_CHECK(!j_get(meta, "debug"));
    T_CHECK(j_get(meta, "presymbolicated") && j_get(meta, "presymbolicated")->boolean);
    const jv *cats = j_get(meta, "categories");
    static const char *const names[] = {"User", "Kernel", "Native", "DEX", "OAT",
                                        "Idle", "Other", "JIT"};
    T_EQ_INT(j_len(cats), 8);
    for (size_t i = 0; i < 8 && i < j_len(cats); i++)
        T_EQ_STR(j_str(j_get(j_at(cats, i), "name")), names[i]);
    T_EQ_STR(j_str(j_get(j_at(cats, 6), "color")), "grey");
    T_EQ_INT(j_len(j_get(root, "libs")), 0);
    T_EQ_INT(j_len(j_get(root, "processes")), 0);
    j_free(root);
}

TEST(gecko_threads_and_samples)
{
    jv *root = gecko_of_fixture(NULL);
    if (!root)
        return;
    /* Ordered by pid, main thread first, then by sample count. */
    const jv *threads = j_get(root, "threads");
    static const long long order[] = {1000, 1001, 1003, 1002, 2000};
    T_EQ_INT(j_len(threads), 5);
    for (size_t i = 0; i < 5 && i < j_len(threads); i++)
        T_EQ_INT(j_int(j_get(j_at(threads, i), "tid")), order[i]);

    const jv *main = thread_by_tid(root, 1000), *render = thread_by_tid(root, 1001);
    const jv *orphan = thread_by_tid(root, 1002), *glibc = thread_by_tid(root, 2000);
    if (!main || !render || !orphan || !glibc) {
        t_fail(__FILE__, __LINE__, "a thread is missing");
        return;
    }
    T_EQ_STR(j_str(j_get(main, "name")), "com.example");
    T_EQ_STR(j_str(j_get(render, "processName")), "com.example");
    T_EQ_INT(j_int(j_get(render, "pid")), 1000);
    T_EQ_STR(j_str(j_get(orphan, "name")), "thread 1002");
    T_EQ_STR(j_str(j_get(glibc, "processName")), "glibc_prog");

    /* Milliseconds after startTime, exact decimals. */
    T_EQ_STR(times_text(main), "0,1,4");
    T_EQ_STR(times_text(render), "1.2,2.2");
    T_EQ_STR(times_text(glibc), "0.5,0.7");
    T_EQ_STR(j_num_text(j_get(render, "registerTime")), "1.2");

    T_EQ_STR(sample_stack(main, 0),
             "malloc (in /apex/com.android.runtime/lib64/bionic/libc.so) #2 <- "
             "com.example.Foo.bar (in /data/app/com.example/base.apk!/classes.dex) #3 <- "
             "android.os.Looper.loop (in /system/framework/framework.jar) #3 <- "
             "__libc_init (in /apex/com.android.runtime/lib64/bionic/libc.so) #2");
    T_EQ_STR(sample_stack(render, 0),
             "__schedule (in [kernel.kallsyms]) #1 <- "
             "do_syscall_64 (in [kernel.kallsyms]) #1 <- "
             "draw (in /system/lib64/libhwui.so) #2 <- "
             "android::RenderThread::threadLoop() (in /system/lib64/libhwui.so) #2 <- "
             "__start_thread (in /apex/com.android.runtime/lib64/bionic/libc.so) #2");
    T_EQ_STR(sample_stack(orphan, 0),
             "libc.so.6+0x1a2b (in /lib/x86_64-linux-gnu/libc.so.6) #2 <- "
             "java.lang.String.equals (in [JIT zygote cache]) #7");
    T_EQ_STR(sample_stack(glibc, 1),
             "libc.so.6+0x99 (in /lib/x86_64-linux-gnu/libc.so.6) #2 <- "
             "java.lang.Thread.run (in /system/framework/arm64/boot.oat) #4");

    /* main's three samples use two stacks of five distinct frames. */
    T_EQ_INT(j_len(j_get(j_get(main, "frameTable"), "data")), 5);
    T_EQ_INT(j_len(j_get(j_get(main, "stackTable"), "data")), 5);
    j_free(root);
}

TEST(gecko_markers)
{
    jv *root = gecko_of_fixture(NULL);
    if (!root)
        return;
    const jv *main = thread_by_tid(root, 1000), *render = thread_by_tid(root, 1001);
    const jv *mm = j_get(j_get(main, "markers"), "data");
    const jv *rm = j_get(j_get(render, "markers"), "data");
    T_EQ_INT(j_len(mm), 1);
    T_EQ_INT(j_len(rm), 2);
    const jv *u = j_at(mm, 0), *o = j_at(rm, 0), *on = j_at(rm, 1);
    T_EQ_STR(j_str(j_at(j_get(main, "stringTable"), (size_t)j_int(j_at(u, 0)))), "Unwind error");
    T_EQ_STR(j_num_text(j_at(u, 1)), "3");
    T_EQ_INT(j_int(j_at(u, 3)), 0);
    T_EQ_STR(j_str(j_get(j_at(u, 5), "type")), "UnwindError");
    T_EQ_STR(j_str(j_get(j_at(u, 5), "error")), "ERROR_NOT_ENOUGH_STACK");
    T_EQ_INT(j_int(j_get(j_at(u, 5), "rawCode")), 3);
    T_EQ_STR(j_str(j_get(j_at(u, 5), "address")), "0x7fff1234");

    T_EQ_STR(j_str(j_at(j_get(render, "stringTable"), (size_t)j_int(j_at(o, 0)))), "Off-CPU");
    T_EQ_STR(j_num_text(j_at(o, 1)), "2.3");
    T_EQ_STR(j_num_text(j_at(o, 2)), "4");
    T_EQ_INT(j_int(j_at(o, 3)), 1);
    T_EQ_INT(j_int(j_at(o, 4)), 5);
    T_EQ_STR(j_str(j_get(j_at(o, 5), "type")), "OffCPU");
    /* Back on the CPU at 4 ms until the recording's last event, at 5 ms. */
    T_EQ_STR(j_str(j_at(j_get(render, "stringTable"), (size_t)j_int(j_at(on, 0)))), "On-CPU");
    T_EQ_STR(j_num_text(j_at(on, 1)), "4");
    T_EQ_STR(j_num_text(j_at(on, 2)), "5");
    T_EQ_STR(j_str(j_get(j_at(on, 5), "type")), "OnCPU");
    j_free(root);
}

/* Names that are not valid UTF-8 or need escaping still give valid JSON. */
TEST(gecko_escapes_names)
{
    static const char *const events[] = {"cpu-clock"};
    static const char *const syms[] = {"bad\xff\xfe name", "quote\" back\\ nl\n"};
    spe_frame chain[] = {{0x10, 0, 0, -1}, {0x20, 0, 1, -1}};
    spe e;
    spe_begin(&e);
    spe_meta(&e, events, 1, NULL, NULL, NULL, NULL, 0);
    spe_sample(&e, 5000000, 9, 1, 0, chain, 2, NULL);
    spe_file(&e, 0, "/bin/\x01odd", syms, 2);
    spe_thread(&e, 9, 9, "t\xc3\xa9st");
    spe_end(&e);
    jv *root = gecko_of_file(&e);
    if (!root)
        return;
    const jv *th = j_at(j_get(root, "threads"), 0);
    T_EQ_STR(j_str(j_get(th, "name")), "t\xc3\xa9st");
    const jv *strings = j_get(th, "stringTable");
    int seen_bad = 0, seen_quote = 0;
    for (size_t i = 0; i < j_len(strings); i++) {
        seen_bad |= strcmp(j_str(j_at(strings, i)),
                           "bad\xef\xbf\xbd\xef\xbf\xbd name (in /bin/\x01odd)") == 0;
        seen_quote |= strcmp(j_str(j_at(strings, i)),
                             "quote\" back\\ nl\n (in /bin/\x01odd)") == 0;
    }
    T_CHECK(seen_bad && seen_quote);
    j_free(root);
}

/* A recording whose samples all fell to report-sample's gap removal still
 * converts, into threads without samples. */
/* A file without samples has nothing to show: refused with what it holds,
 * not written as a profile the viewers refuse or draw empty. */
TEST(gecko_no_samples)
{
    static const char *const events[] = {"cpu-cycles"};
    spe e;
    spe_begin(&e);
    spe_meta(&e, events, 1, NULL, NULL, NULL, NULL, 0);
    spe_lost(&e, 0, 0);
    spe_thread(&e, 5, 5, "unknown");
    spe_end(&e);
    pc_profile *p = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(e.out.data, e.out.len, NULL, &p, &err), PC_EINPUT);
    T_CONTAINS(err.message, "fixture: nothing to show: the input holds no samples; it has 3 "
                            "records, 1 of them about threads; simpleperf report-sample "
                            "leaves out samples whose callchains are incomplete unless run "
                            "with --remove-gaps 0");
    T_CHECK(!p);
    spe_free(&e);
}

/* Gecko frames have no address: the same function sampled at two addresses
 * is one frame and one stack there, while the model keeps both. */
TEST(gecko_merges_addresses)
{
    static const char *const events[] = {"cpu-clock"};
    static const char *const syms[] = {"main", "work"};
    spe_frame at1[] = {{0x104, 0, 1, -1}, {0x10, 0, 0, -1}};
    spe_frame at2[] = {{0x108, 0, 1, -1}, {0x10, 0, 0, -1}};
    spe e;
    spe_begin(&e);
    spe_meta(&e, events, 1, NULL, NULL, NULL, NULL, 0);
    spe_sample(&e, 1000000, 3, 1, 0, at1, 2, NULL);
    spe_sample(&e, 2000000, 3, 1, 0, at2, 2, NULL);
    spe_file(&e, 0, "/bin/app", syms, 2);
    spe_thread(&e, 3, 3, "app");
    spe_end(&e);
    pc_profile *p;
    pc_error err;
    T_EQ_INT(convert_bytes(e.out.data, e.out.len, NULL, &p, &err), PC_OK);
    spe_free(&e);
    if (!p)
        return;
    T_EQ_INT(p->frame.n, 3);
    T_EQ_INT(p->stack.n, 3);
    jv *root = gecko_of_profile(p);
    if (!root)
        return;
    const jv *th = j_at(j_get(root, "threads"), 0);
    T_EQ_INT(j_len(j_get(j_get(th, "frameTable"), "data")), 2);
    T_EQ_INT(j_len(j_get(j_get(th, "stackTable"), "data")), 2);
    const jv *samples = j_get(j_get(th, "samples"), "data");
    T_EQ_INT(j_int(j_at(j_at(samples, 0), 0)), j_int(j_at(j_at(samples, 1), 0)));
    j_free(root);
}
