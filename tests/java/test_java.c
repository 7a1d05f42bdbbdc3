/* Java frames and honest data: ProGuard/R8 deobfuscation (checked against
 * simpleperf's own deobfuscation of the same recording), ART frames,
 * removed methods, mangled names, unwinding errors, lost samples and
 * execution-type subcategories. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "dump_parse.h"
#include "fixtures.h"
#include "model/model.h"
#include "java/proguard.h"
#include "t.h"
#include "test_util.h"

static const char *retrace(const pc_proguard *m, const char *name)
{
    static char buf[512];
    pc_deobf_result r;
    memset(&r, 0, sizeof r);
    int got = pc_deobf_lookup(m, PC_NONE, name, strlen(name), 0, &r);
    if (got <= 0)
        snprintf(buf, sizeof buf, "%s", got < 0 ? "(out of memory)" : "(not mapped)");
    else
        snprintf(buf, sizeof buf, "%s%s", pc_deobf_name(&r, 0, NULL),
                 r.synthesized ? " [synthesized]" : "");
    pc_deobf_result_free(&r);
    return buf;
}

TEST(proguard_mapping_format)
{
    static const char text[] =
        "# compiler: R8\n"
        "com.example.Foo -> a.b:\n"
        "    int count -> a\n"
        "    1:3:void run():10:12 -> a\n"
        "    4:4:void com.example.Helper.inlined(int):7:7 -> a\n"
        "    5:5:void run(int) -> b\n"
        "    void <init>() -> <init>\n"
        "    6:6:void lambda$0() -> c\n"
        "      # {\"id\":\"com.android.tools.r8.synthesized\"}\n"
        "    void c() -> c\n"
        "com.example.Bar -> a.c:\n"
        "# {\"id\":\"com.android.tools.r8.synthesized\"}\n"
        "    void go() -> z\r\n";
    pc_proguard m;
    pc_error err;
    memset(&m, 0, sizeof m);
    T_EQ_INT(pc_proguard_parse(&m, text, sizeof text - 1, "mapping.txt", &err), PC_OK);
    /* Two methods map to "a" on separate ranges, one moved from another
     * class (it keeps that class's name): without a line, both. */
    T_EQ_STR(retrace(&m, "a.b.a"), "com.example.Foo.run | com.example.Helper.inlined");
    T_EQ_STR(retrace(&m, "a.b.b"), "com.example.Foo.run");
    T_EQ_STR(retrace(&m, "a.b.b(int)"), "com.example.Foo.run");
    T_EQ_STR(retrace(&m, "a.b.<init>"), "com.example.Foo.<init>");
    /* A synthesized method gives way to a plain one of that name. */
    T_EQ_STR(retrace(&m, "a.b.c"), "com.example.Foo.c");
    /* Only the class is obfuscated. */
    T_EQ_STR(retrace(&m, "a.b.unknownMethod"), "com.example.Foo.unknownMethod");
    /* R8's marker under the class line marks the class; the method's own
     * flag wins when the method is mapped. */
    T_EQ_STR(retrace(&m, "a.c.z"), "com.example.Bar.go");
    T_EQ_STR(retrace(&m, "a.c.other"), "com.example.Bar.other [synthesized]");
    T_EQ_STR(retrace(&m, "x.y.z"), "(not mapped)");
    T_EQ_STR(retrace(&m, "nodot"), "(not mapped)");
    pc_proguard_free(&m);
}

/* simpleperf deobfuscated the same recording itself (the proguard.gaps0
 * input); our deobfuscation of the obfuscated file must give the same
 * stacks. */
TEST(proguard_matches_simpleperf)
{
    if (!t_shared()) {
        t_skip("../shared not found (simpleperf corpus)");
        return;
    }
    pc_options o;
    const char *mapping[] = {corpus_path("inputs/proguard_mapping.txt")};
    char mapping_path[1024];
    snprintf(mapping_path, sizeof mapping_path, "%s", mapping[0]);
    mapping[0] = mapping_path;
    pc_options_init(&o);
    o.remove_gaps = 0;
    pc_profile *theirs = convert_input("perf_need_proguard_mapping.proguard.gaps0.trace", &o);
    pc_profile *plain = convert_input("perf_need_proguard_mapping.callchain.gaps0.trace", &o);
    o.proguard_mapping_files = (pc_strings){mapping, 1};
    pc_profile *ours = convert_input("perf_need_proguard_mapping.callchain.gaps0.trace", &o);
    if (theirs && ours && plain) {
        T_EQ_INT(ours->sample.n, theirs->sample.n);
        for (size_t i = 0; i < ours->sample.n && i < theirs->sample.n; i++)
            T_EQ_STR(stack_text(ours, ours->sample.stack[i]),
                     stack_text(theirs, theirs->sample.stack[i]));
        T_CONTAINS(stack_text(ours, ours->sample.stack[0]),
                   "androidx.fragment.app.FragmentActivity.startActivityForResult");
        /* Without the mapping the names stay obfuscated. */
        T_CONTAINS(stack_text(plain, plain->sample.stack[0]), "a.h.a.c.startActivityForResult");
    }
    pc_profile_free(theirs);
    pc_profile_free(plain);
    pc_profile_free(ours);
}

static size_t frames_with_exec(const pc_profile *p, int exec)
{
    size_t n = 0;
    for (size_t i = 0; i < p->sample.n; i++)
        for (uint32_t s = p->sample.stack[i]; s != PC_NONE; s = p->stack.prefix[s])
            n += p->frame.exec[p->stack.frame[s]] == exec;
    return n;
}

/* The artframes input keeps ART_METHOD frames; report-sample removed them
 * from the exectype input of the same recording.  Hidden by default, ours
 * must match those stacks; shown, their count must match the dump. */
TEST(art_frames)
{
    static const char *const art = "perf_with_interpreter_frames.artframes.exectype.trace";
    dump d;
    if (!t_shared() || dump_load(art, &d) != 0) {
        t_skip("../shared not found (simpleperf corpus)");
        return;
    }
    pc_options o;
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.show_art_frames = 1;
    pc_profile *shown = convert_input(art, &o);
    o.show_art_frames = 0;
    pc_profile *hidden = convert_input(art, &o);
    pc_profile *theirs = convert_input("perf_with_interpreter_frames.exectype.trace", &o);
    size_t want = 0;
    for (size_t i = 0; i < d.n_samples; i++)
        want += d.samples[i].n_exec[3];
    if (shown && hidden && theirs) {
        T_CHECK(want > 1000);
        T_EQ_INT(frames_with_exec(shown, PC_EXEC_ART), want);
        T_EQ_INT(frames_with_exec(hidden, PC_EXEC_ART), 0);
        /* theirs had report-sample's gap removal: compare what it kept. */
        size_t compared = 0, same = 0, j = 0;
        for (size_t t = 0; t < theirs->thread.n; t++) {
            uint32_t h = find_thread(hidden, theirs->thread.tid[t]);
            j = hidden->sample.first[h];
            for (size_t i = theirs->sample.first[t]; i < theirs->sample.first[t + 1]; i++) {
                while (j < hidden->sample.first[h + 1] &&
                       pc_sample_time(hidden, j) < pc_sample_time(theirs, i))
                    j++;
                if (j == hidden->sample.first[h + 1])
                    break;
                compared++;
                same += strcmp(stack_text(hidden, hidden->sample.stack[j]),
                               stack_text(theirs, theirs->sample.stack[i])) == 0;
            }
        }
        T_EQ_INT(compared, theirs->sample.n);
        T_EQ_INT(same, compared);
    }
    pc_profile_free(shown);
    pc_profile_free(hidden);
    pc_profile_free(theirs);
    dump_free(&d);
}

TEST(remove_method_and_mangled)
{
    if (!t_shared()) {
        t_skip("../shared not found (simpleperf corpus)");
        return;
    }
    static const char *const base = "perf_with_interpreter_frames.callchain.gaps0.trace";
    pc_options o;
    const char *rm[] = {"^android\\.view\\."};
    pc_options_init(&o);
    o.remove_gaps = 0;
    pc_profile *all = convert_input(base, &o);
    o.remove_methods = (pc_strings){rm, 1};
    pc_profile *cut = convert_input(base, &o);
    if (all && cut) {
        size_t depth_all = 0, depth_cut = 0, matching = 0;
        for (size_t i = 0; i < all->sample.n; i++)
            for (uint32_t s = all->sample.stack[i]; s != PC_NONE; s = all->stack.prefix[s]) {
                depth_all++;
                matching += strncmp(pc_str(&all->str,
                                           all->func.name[all->frame.func[all->stack.frame[s]]]),
                                    "android.view.", 13) == 0;
            }
        for (size_t i = 0; i < cut->sample.n; i++)
            for (uint32_t s = cut->sample.stack[i]; s != PC_NONE; s = cut->stack.prefix[s]) {
                depth_cut++;
                T_CHECK(strncmp(pc_str(&cut->str,
                                       cut->func.name[cut->frame.func[cut->stack.frame[s]]]),
                                "android.view.", 13) != 0);
            }
        T_CHECK(matching > 100);
        T_EQ_INT(depth_cut, depth_all - matching);
        T_EQ_INT(cut->sample.n, all->sample.n);
    }
    pc_profile_free(all);
    pc_profile_free(cut);

    /* Mangled names: simpleperf's dump lists _Z17__libc_init_fdsanv as the
     * raw name of __libc_init_fdsan(). */
    pc_options_init(&o);
    o.remove_gaps = 0;
    o.mangled = 1;
    pc_profile *m = convert_input("two_process_perf.callchain.trace", &o);
    if (m) {
        int raw = 0, demangled = 0;
        for (size_t f = 0; f < m->func.n; f++) {
            const char *name = pc_str(&m->str, m->func.name[f]);
            raw |= strcmp(name, "_Z17__libc_init_fdsanv") == 0;
            demangled |= strcmp(name, "__libc_init_fdsan()") == 0;
        }
        T_CHECK(raw && !demangled);
        pc_profile_free(m);
    }
}

TEST(unwind_error_root_frame)
{
    if (!t_shared()) {
        t_skip("../shared not found (simpleperf corpus)");
        return;
    }
    pc_options o;
    pc_options_init(&o);
    o.remove_gaps = 0;
    pc_profile *p = convert_input("perf_with_failed_unwinding_debug_info.callchain.gaps0.trace", &o);
    if (!p)
        return;
    /* simpleperf's dump: error_code ERROR_INVALID_MAP, and five JIT frames
     * from android.os.Handler.post (root) to getUid (leaf). */
    T_EQ_STR(stack_text(p, p->sample.stack[0]),
             "[unwind error: INVALID_MAP];android.os.Handler.post;"
             "android.os.Handler.sendMessageDelayed;android.os.Handler.sendMessageAtTime;"
             "android.os.Handler.enqueueMessage;android.os.ThreadLocalWorkSource.getUid");
    T_EQ_INT(frame_category(p, "[unwind error: INVALID_MAP]"), PC_CAT_OTHER);
    pc_profile_free(p);
}

TEST(lost_samples)
{
    static const char *const base = "perf_with_interpreter_frames.artframes.exectype.trace";
    dump d;
    if (!t_shared() || dump_load(base, &d) != 0) {
        t_skip("../shared not found (simpleperf corpus)");
        return;
    }
    pc_options o;
    char want[128];
    pc_options_init(&o);
    log_capture_start(&o);
    pc_profile *p = convert_input(base, &o);
    unsigned long long total = d.lost_count + d.sample_count;
    snprintf(want, sizeof want, "warning: %llu of %llu samples (%.1f%%) were lost",
             (unsigned long long)d.lost_count, total, 100.0 * (double)d.lost_count / (double)total);
    T_CHECK(d.lost_count > 0);
    T_CONTAINS(log_capture_text(), want);
    if (p) {
        T_EQ_INT(p->meta.lost_count, d.lost_count);
        T_EQ_INT(p->meta.lost_sample_count, d.sample_count);
        pc_profile_free(p);
    }
    dump_free(&d);
}

/* Execution types become subcategories: every frame simpleperf marked
 * interpreted or JIT is counted under that subcategory. */
TEST(execution_type_subcategories)
{
    static const char *const base = "perf_with_interpreter_frames.exectype.trace";
    dump d;
    if (!t_shared() || dump_load(base, &d) != 0) {
        t_skip("../shared not found (simpleperf corpus)");
        return;
    }
    pc_options o;
    pc_options_init(&o);
    o.remove_gaps = 0;
    pc_profile *p = convert_input(base, &o);
    if (p) {
        size_t interpreted = 0, jit = 0, want_i = 0, want_j = 0;
        for (size_t i = 0; i < d.n_samples; i++) {
            want_i += d.samples[i].n_exec[1];
            want_j += d.samples[i].n_exec[2];
        }
        for (size_t i = 0; i < p->sample.n; i++)
            for (uint32_t s = p->sample.stack[i]; s != PC_NONE; s = p->stack.prefix[s]) {
                uint32_t f = p->stack.frame[s];
                int sub = pc_subcategory(p->frame.cat[f], p->frame.exec[f]);
                const char *name = pc_categories[p->frame.cat[f]].subcategories[sub];
                interpreted += strcmp(name, "Interpreted") == 0;
                jit += strcmp(name, "JIT") == 0 && p->frame.exec[f] == PC_EXEC_JIT;
            }
        T_CHECK(want_i > 100 && want_j > 10);
        T_EQ_INT(interpreted, want_i);
        T_EQ_INT(jit, want_j);
        pc_profile_free(p);
    }
    dump_free(&d);
}

TEST(percpu_refused)
{
    pc_options o;
    pc_error err;
    pc_options_init(&o);
    o.percpu = 1;
    /* About the input, not the usage: exit 2. */
    T_EQ_INT(convert_fixture_status(&o, &err), PC_EINPUT);
    T_CONTAINS(err.message, "options.percpu: this input carries no CPU numbers");
}
