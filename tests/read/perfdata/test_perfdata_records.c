/* What the perf.data reader decodes from each kind of record, checked on
 * files written with the project's own encoder (tests/support/pd_encode.h):
 * samples, callchains, mappings over time, comms, forks, lost counts,
 * context switches, several events, simpleperf's features, records out of
 * time order across rounds, and the pipe form.
 *
 * The binaries named here do not exist on this machine, so frames are
 * named as the reader names code it has no symbols for: the file's base
 * name and the offset in the file ("libfoo.so+0x1a2b"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pd_encode.h"
#include "t.h"
#include "test_util.h"

#define STYPE (PDE_S_IP | PDE_S_TID | PDE_S_TIME | PDE_S_PERIOD | PDE_S_CALLCHAIN | PDE_S_CPU)
#define FLAGS (PDE_F_SAMPLE_ID_ALL | PDE_F_MMAP | PDE_F_COMM | PDE_F_MMAP2 | PDE_F_COMM_EXEC | \
               PDE_F_TASK)

/* A perf recording (not simpleperf's: perf always writes VERSION) of one
 * cpu-clock event with these sample fields. */
static void perf_begin(pde *e, uint64_t sample_type)
{
    pde_begin(e, 0);
    pde_attr_spec a = {.type = 1, .sample_period = 1000000, .sample_type = sample_type,
                       .flags = FLAGS, .name = "cpu-clock"};
    pde_attr(e, &a);
}

/* Converts the encoder's file with o (NULL: defaults); the profile, or
 * NULL with a failure recorded. */
static pc_profile *finish_convert(pde *e, const pc_options *o, int perf)
{
    if (perf)
        pde_feat_version(e, "6.1.pdtest");
    size_t len = 0;
    uint8_t *f = pde_finish(e, &len);
    T_CHECK(f != NULL);
    if (!f)
        return NULL;
    pc_options def;
    if (!o) {
        pc_options_init(&def);
        o = &def;
    }
    pc_profile *p = NULL;
    pc_error err;
    int st = convert_bytes_unchecked(f, len, o, &p, &err);
    free(f);
    if (st != PC_OK) {
        t_fail(__FILE__, __LINE__, "conversion failed (%d): %s", st, err.message);
        return NULL;
    }
    return p;
}

/* A sample with a callchain of user addresses, leaf first (the ip is the
 * leaf). */
static void user_sample(pde *e, size_t attr, uint32_t pid, uint32_t tid, uint64_t time,
                        const uint64_t *ips, size_t n)
{
    uint64_t chain[16];
    chain[0] = PDE_CONTEXT_USER;
    memcpy(chain + 1, ips, n * sizeof *ips);
    pde_sample s = {.ip = ips[0], .pid = pid, .tid = tid, .time = time, .period = 1000,
                    .cpu = 0, .callchain = chain, .n_callchain = n + 1,
                    .id = 0, .identifier = 0};
    pde_sample_rec(e, attr, PDE_MISC_USER, &s);
}

/* The sample at time t (PC_NONE-like SIZE_MAX when none). */
static size_t sample_at(const pc_profile *p, uint64_t t)
{
    for (size_t i = 0; i < p->sample.n; i++)
        if (pc_sample_time(p, i) == t)
            return i;
    return (size_t)-1;
}

/* The root-first frame names of the sample at time t. */
static const char *stack_at(const pc_profile *p, uint64_t t)
{
    size_t i = sample_at(p, t);
    if (i == (size_t)-1)
        return "(no sample)";
    return stack_text(p, p->sample.stack[i]);
}

static void sid(pde *e, uint32_t pid, uint32_t tid, uint64_t time)
{
    e->sid.pid = pid;
    e->sid.tid = tid;
    e->sid.time = time;
}

TEST(perfdata_records_samples)
{
    pde e;
    perf_begin(&e, STYPE);
    sid(&e, 100, 100, 10);
    pde_comm(&e, 100, 100, "main", 0);
    pde_mmap2(&e, PDE_MISC_USER, 100, 100, 0x400000, 0x10000, 0, 8, 1, 7, 0, 5, 2,
              "/nonexistent/pd/app");
    sid(&e, 100, 101, 20);
    pde_comm(&e, 100, 101, "helper", 0);
    static const struct {
        uint32_t tid;
        uint64_t time, period;
        uint32_t cpu;
    } want[] = {{100, 1000, 7, 0}, {101, 2000, 8, 1}, {100, 3000, 9, 3}};
    for (size_t i = 0; i < 3; i++) {
        uint64_t chain[] = {PDE_CONTEXT_USER, 0x401000 + i, 0x400100};
        pde_sample s = {.ip = 0x401000 + i, .pid = 100, .tid = want[i].tid,
                        .time = want[i].time, .period = want[i].period, .cpu = want[i].cpu,
                        .callchain = chain, .n_callchain = 3};
        pde_sample_rec(&e, 0, PDE_MISC_USER, &s);
    }
    pde_finished_round(&e);
    pc_profile *p = finish_convert(&e, NULL, 1);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, 3);
    T_EQ_INT(p->thread.n, 2);
    for (size_t k = 0; k < 3; k++) {
        size_t i = sample_at(p, want[k].time);
        T_CHECK(i != (size_t)-1);
        if (i == (size_t)-1)
            continue;
        uint32_t t = pc_sample_thread(p, i);
        T_EQ_INT(p->thread.pid[t], 100);
        T_EQ_INT(p->thread.tid[t], want[k].tid);
        T_EQ_INT(pc_sample_weight(p, i), want[k].period);
        T_EQ_INT(pc_sample_cpu(p, i), want[k].cpu);
    }
    T_EQ_STR(stack_at(p, 1000), "app+0x100;app+0x1000");
    T_EQ_STR(stack_at(p, 3000), "app+0x100;app+0x1002");
    uint32_t t = thread_of(p, 100, 101);
    T_CHECK(t != PC_NONE);
    if (t != PC_NONE)
        T_EQ_STR(str_of(p, p->thread.name[t]), "helper");
    T_EQ_STR(str_of(p, p->event.name[0]), "cpu-clock");
    pc_profile_free(p);
}

/* The same samples with --percpu: one thread per CPU, pid -1. */
TEST(perfdata_records_percpu)
{
    pde e;
    perf_begin(&e, STYPE);
    sid(&e, 100, 100, 10);
    pde_mmap2(&e, PDE_MISC_USER, 100, 100, 0x400000, 0x10000, 0, 8, 1, 7, 0, 5, 2,
              "/nonexistent/pd/app");
    static const uint32_t cpus[] = {0, 1, 3, 1};
    for (size_t i = 0; i < 4; i++) {
        uint64_t chain[] = {PDE_CONTEXT_USER, 0x401000};
        pde_sample s = {.ip = 0x401000, .pid = 100, .tid = 100 + (uint32_t)(i % 2),
                        .time = 1000 * (i + 1), .period = 1, .cpu = cpus[i],
                        .callchain = chain, .n_callchain = 2};
        pde_sample_rec(&e, 0, PDE_MISC_USER, &s);
    }
    pc_options o;
    pc_options_init(&o);
    o.percpu = 1;
    pc_profile *p = finish_convert(&e, &o, 1);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, 4);
    T_EQ_INT(p->thread.n, 3);
    for (size_t k = 0; k < 4; k++) {
        size_t i = sample_at(p, 1000 * (k + 1));
        T_CHECK(i != (size_t)-1);
        if (i == (size_t)-1)
            continue;
        uint32_t t = pc_sample_thread(p, i);
        T_EQ_INT(p->thread.pid[t], -1);
        T_EQ_INT(p->thread.tid[t], cpus[k]);
    }
    uint32_t t3 = thread_of(p, -1, 3);
    T_CHECK(t3 != PC_NONE);
    if (t3 != PC_NONE)
        T_EQ_STR(str_of(p, p->thread.name[t3]), "CPU 3");
    pc_profile_free(p);
}

/* A callchain with kernel and user parts: PERF_CONTEXT_KERNEL and
 * PERF_CONTEXT_USER say which mappings each address is looked up in. */
TEST(perfdata_records_callchain_contexts)
{
    pde e;
    perf_begin(&e, STYPE);
    sid(&e, (uint32_t)-1, 0, 0);
    pde_mmap(&e, PDE_MISC_KERNEL, (uint32_t)-1, 0, 0xffffffffc0000000ull, 0x100000, 0,
             "/nonexistent/pd/pdmod.ko");
    sid(&e, 200, 200, 10);
    pde_comm(&e, 200, 200, "kc", 0);
    /* The user mapping lies at the kernel module's address too: a kernel
     * address must not be looked up in the process's maps. */
    pde_mmap(&e, PDE_MISC_USER, 200, 200, 0x500000, 0x10000, 0, "/nonexistent/pd/user");
    pde_mmap(&e, PDE_MISC_USER, 200, 200, 0xffffffffc0000000ull, 0x100000, 0,
             "/nonexistent/pd/decoy");
    uint64_t chain[] = {PDE_CONTEXT_KERNEL, 0xffffffffc0000010ull, 0xffffffffc0000020ull,
                        PDE_CONTEXT_USER, 0x500030, 0x500040, 0x500050};
    pde_sample s = {.ip = 0xffffffffc0000010ull, .pid = 200, .tid = 200, .time = 1000,
                    .period = 1, .callchain = chain, .n_callchain = 7};
    pde_sample_rec(&e, 0, PDE_MISC_KERNEL, &s);
    pc_profile *p = finish_convert(&e, NULL, 1);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, 1);
    if (p->sample.n == 1) {
        T_EQ_STR(stack_text(p, p->sample.stack[0]),
                 "user+0x50;user+0x40;user+0x30;pdmod.ko+0x20;pdmod.ko+0x10");
        uint32_t leaf = p->stack.frame[p->sample.stack[0]];
        T_EQ_INT(p->frame.cat[leaf], PC_CAT_KERNEL);
        uint32_t s1 = p->stack.prefix[p->sample.stack[0]];
        uint32_t s2 = s1 == PC_NONE ? PC_NONE : p->stack.prefix[s1];
        T_CHECK(s2 != PC_NONE);
        if (s2 != PC_NONE)
            T_CHECK(p->frame.cat[p->stack.frame[s2]] != PC_CAT_KERNEL);
    }
    pc_profile_free(p);
}

/* A library mapped, sampled, then replaced by another at the same address:
 * the earlier samples keep the first library's frames. */
TEST(perfdata_records_mmap_replaced)
{
    pde e;
    perf_begin(&e, STYPE);
    sid(&e, 300, 300, 10);
    pde_comm(&e, 300, 300, "mm", 0);
    pde_mmap(&e, PDE_MISC_USER, 300, 300, 0x7f0000000000ull, 0x10000, 0x2000,
             "/nonexistent/pd/libfirst.so");
    uint64_t a[] = {0x7f0000000123ull};
    user_sample(&e, 0, 300, 300, 1000, a, 1);
    sid(&e, 300, 300, 1500);
    pde_mmap2(&e, PDE_MISC_USER, 300, 300, 0x7f0000000000ull, 0x8000, 0x4000, 8, 1, 9, 0, 5, 2,
              "/nonexistent/pd/libsecond.so");
    user_sample(&e, 0, 300, 300, 2000, a, 1);
    /* Past the second one's end: the first one's tail is still mapped. */
    uint64_t b[] = {0x7f0000009000ull};
    user_sample(&e, 0, 300, 300, 3000, b, 1);
    pde_finished_round(&e);
    pc_profile *p = finish_convert(&e, NULL, 1);
    if (!p)
        return;
    T_EQ_STR(stack_at(p, 1000), "libfirst.so+0x2123");
    T_EQ_STR(stack_at(p, 2000), "libsecond.so+0x4123");
    T_EQ_STR(stack_at(p, 3000), "libfirst.so+0xb000");
    pc_profile_free(p);
}

/* COMM with exec renames the thread: a thread is shown by the name it
 * had at its last sample. */
TEST(perfdata_records_comm_exec)
{
    pde e;
    perf_begin(&e, STYPE);
    sid(&e, 400, 400, 10);
    pde_comm(&e, 400, 400, "sh", 0);
    pde_mmap(&e, PDE_MISC_USER, 400, 400, 0x400000, 0x10000, 0, "/nonexistent/pd/sh");
    sid(&e, 400, 401, 20);
    pde_comm(&e, 400, 401, "early", 0);
    uint64_t a[] = {0x400100};
    user_sample(&e, 0, 400, 400, 1000, a, 1);
    user_sample(&e, 0, 400, 401, 1100, a, 1);
    sid(&e, 400, 400, 1500);
    pde_comm(&e, 400, 400, "ls", 1);
    pde_mmap(&e, PDE_MISC_USER, 400, 400, 0x400000, 0x10000, 0, "/nonexistent/pd/ls");
    /* Renamed after its last sample: keeps "early". */
    sid(&e, 400, 401, 1600);
    pde_comm(&e, 400, 401, "late", 0);
    user_sample(&e, 0, 400, 400, 2000, a, 1);
    pde_finished_round(&e);
    pc_profile *p = finish_convert(&e, NULL, 1);
    if (!p)
        return;
    uint32_t t = thread_of(p, 400, 400), t1 = thread_of(p, 400, 401);
    T_CHECK(t != PC_NONE && t1 != PC_NONE);
    if (t != PC_NONE)
        T_EQ_STR(str_of(p, p->thread.name[t]), "ls");
    if (t1 != PC_NONE)
        T_EQ_STR(str_of(p, p->thread.name[t1]), "early");
    T_EQ_STR(stack_at(p, 1000), "sh+0x100");
    T_EQ_STR(stack_at(p, 2000), "ls+0x100");
    pc_profile_free(p);
}

/* FORK of a new process copies the parent's mappings and name. */
TEST(perfdata_records_fork)
{
    pde e;
    perf_begin(&e, STYPE);
    sid(&e, 500, 500, 10);
    pde_comm(&e, 500, 500, "parent", 0);
    pde_mmap(&e, PDE_MISC_USER, 500, 500, 0x600000, 0x10000, 0x1000, "/nonexistent/pd/libp.so");
    sid(&e, 500, 500, 100);
    pde_fork(&e, 501, 500, 501, 500, 100);
    /* A new thread of the parent (tid != pid) shares its maps. */
    pde_fork(&e, 500, 500, 502, 500, 100);
    uint64_t a[] = {0x600010, 0x600020};
    user_sample(&e, 0, 501, 501, 1000, a, 2);
    user_sample(&e, 0, 500, 502, 1100, a, 2);
    pde_finished_round(&e);
    pc_profile *p = finish_convert(&e, NULL, 1);
    if (!p)
        return;
    T_EQ_STR(stack_at(p, 1000), "libp.so+0x1020;libp.so+0x1010");
    T_EQ_STR(stack_at(p, 1100), "libp.so+0x1020;libp.so+0x1010");
    uint32_t t = thread_of(p, 501, 501);
    T_CHECK(t != PC_NONE);
    if (t != PC_NONE)
        T_EQ_STR(str_of(p, p->thread.name[t]), "parent");
    pc_profile_free(p);
}

TEST(perfdata_records_lost)
{
    pde e;
    perf_begin(&e, STYPE);
    sid(&e, 600, 600, 10);
    pde_mmap(&e, PDE_MISC_USER, 600, 600, 0x400000, 0x10000, 0, "/nonexistent/pd/lost");
    uint64_t a[] = {0x400100};
    user_sample(&e, 0, 600, 600, 1000, a, 1);
    sid(&e, 600, 600, 1100);
    pde_lost(&e, 0, 5);
    sid(&e, 600, 600, 1200);
    pde_lost_samples(&e, 3);
    user_sample(&e, 0, 600, 600, 2000, a, 1);
    pc_profile *p = finish_convert(&e, NULL, 1);
    if (!p)
        return;
    T_EQ_INT(p->meta.has_lost, 1);
    T_EQ_INT(p->meta.lost_count, 8);
    T_EQ_INT(p->sample.n, 2);
    pc_profile_free(p);
}

TEST(perfdata_records_switch)
{
    pde e;
    pde_begin(&e, 0);
    pde_attr_spec as = {.type = 1, .sample_period = 1000000, .sample_type = STYPE,
                        .flags = FLAGS | PDE_F_CONTEXT_SWITCH, .name = "cpu-clock"};
    pde_attr(&e, &as);
    sid(&e, 700, 700, 10);
    pde_mmap(&e, PDE_MISC_USER, 700, 700, 0x400000, 0x10000, 0, "/nonexistent/pd/sw");
    uint64_t a[] = {0x400100};
    user_sample(&e, 0, 700, 700, 1000, a, 1);
    sid(&e, 700, 700, 1500);
    pde_switch(&e, 1);
    sid(&e, 700, 700, 2500);
    pde_switch(&e, 0);
    user_sample(&e, 0, 700, 700, 3000, a, 1);
    sid(&e, 700, 700, 3500);
    pde_switch_cpu_wide(&e, 1, 0, 0);
    pde_finished_round(&e);
    pc_profile *p = finish_convert(&e, NULL, 1);
    if (!p)
        return;
    T_EQ_INT(p->sw.n, 3);
    uint32_t t = thread_of(p, 700, 700);
    int seen_out = 0, seen_in = 0, seen_out2 = 0;
    for (size_t i = 0; i < p->sw.n; i++) {
        T_EQ_INT(p->sw.thread[i], t);
        seen_out += p->sw.time[i] == 1500 && !p->sw.on[i];
        seen_in += p->sw.time[i] == 2500 && p->sw.on[i];
        seen_out2 += p->sw.time[i] == 3500 && !p->sw.on[i];
    }
    T_EQ_INT(seen_out, 1);
    T_EQ_INT(seen_in, 1);
    T_EQ_INT(seen_out2, 1);
    pc_profile_free(p);
}

/* Two events told apart by their ids (PERF_SAMPLE_IDENTIFIER, or
 * PERF_SAMPLE_ID), named by EVENT_DESC. */
static void two_events(int identifier)
{
    static const uint64_t ids1[] = {71, 72}, ids2[] = {81};
    uint64_t st = STYPE | (identifier ? PDE_S_IDENTIFIER : PDE_S_ID);
    pde e;
    pde_begin(&e, 0);
    pde_attr_spec a1 = {.type = 0, .config = 0, .sample_period = 100000, .sample_type = st,
                        .flags = FLAGS, .ids = ids1, .n_ids = 2, .name = "pd-event-one"};
    pde_attr_spec a2 = {.type = 0, .config = 1, .sample_period = 100000, .sample_type = st,
                        .flags = FLAGS, .ids = ids2, .n_ids = 1, .name = "pd-event-two"};
    pde_attr(&e, &a1);
    pde_attr(&e, &a2);
    sid(&e, 800, 800, 10);
    e.sid.id = 81;
    e.sid.identifier = 81;
    pde_mmap(&e, PDE_MISC_USER, 800, 800, 0x400000, 0x10000, 0, "/nonexistent/pd/two");
    for (size_t i = 0; i < 5; i++) {
        int second = i == 1 || i == 4;
        uint64_t id = second ? 81 : (i == 2 ? 72 : 71);
        uint64_t chain[] = {PDE_CONTEXT_USER, 0x400100 + i};
        pde_sample s = {.ip = 0x400100 + i, .pid = 800, .tid = 800, .time = 1000 * (i + 1),
                        .period = 10 + i, .id = id, .identifier = id, .callchain = chain,
                        .n_callchain = 2};
        pde_sample_rec(&e, second, PDE_MISC_USER, &s);
    }
    /* Context switches, their trailer ending with the second event's id. */
    sid(&e, 800, 800, 5500);
    pde_switch(&e, 1);
    sid(&e, 800, 800, 5600);
    pde_switch(&e, 0);
    pde_feat_event_desc(&e);
    pc_options o;
    pc_options_init(&o);
    o.event = "pd-event-two";
    pc_profile *p = finish_convert(&e, &o, 1);
    if (!p)
        return;
    T_EQ_INT(p->event.n, 2);
    if (p->event.n == 2) {
        T_EQ_STR(str_of(p, p->event.name[0]), "pd-event-one");
        T_EQ_STR(str_of(p, p->event.name[1]), "pd-event-two");
    }
    T_EQ_INT(p->sw.n, 2);
    if (p->sw.n == 2) {
        T_EQ_INT(p->sw.time[0] + p->sw.time[1], 5500 + 5600);
        T_EQ_INT(p->sw.on[0] + p->sw.on[1], 1);
    }
    /* Only the chosen event's samples stay. */
    T_EQ_INT(p->sample.n, 2);
    for (size_t i = 0; i < p->sample.n; i++) {
        T_EQ_INT(pc_sample_event(p, i), 1);
        T_CHECK(pc_sample_time(p, i) == 2000 || pc_sample_time(p, i) == 5000);
    }
    pc_profile_free(p);
}

TEST(perfdata_records_two_events_identifier)
{
    two_events(1);
}

TEST(perfdata_records_two_events_id)
{
    two_events(0);
}

/* simpleperf's FILE and FILE2 features: the symbol covering an address
 * names its frame. */
TEST(perfdata_records_simpleperf_files)
{
    pde e;
    pde_begin(&e, 0);
    pde_attr_spec a = {.type = 1, .sample_period = 1000000, .sample_type = STYPE,
                       .flags = PDE_F_SAMPLE_ID_ALL | PDE_F_MMAP | PDE_F_COMM};
    pde_attr(&e, &a);
    sid(&e, 900, 900, 10);
    pde_comm(&e, 900, 900, "spapp", 0);
    pde_mmap(&e, PDE_MISC_USER, 900, 900, 0x10000, 0x4000, 0, "/system/lib64/libpdone.so");
    pde_mmap(&e, PDE_MISC_USER, 900, 900, 0x20000, 0x4000, 0, "/system/lib64/libpdtwo.so");
    /* leaf inside pd_leaf (not at its start), caller inside pd_caller */
    uint64_t ips[] = {0x10123, 0x20210};
    user_sample(&e, 0, 900, 900, 1000, ips, 2);
    uint64_t ips2[] = {0x10190, 0x20210};
    user_sample(&e, 0, 900, 900, 2000, ips2, 2);
    static const pde_sym s1[] = {{0x100, 0x80, "pd_leaf"}, {0x180, 0x80, "pd_other"}};
    static const pde_sym s2[] = {{0x200, 0x40, "pd_caller"}};
    static const uint64_t x0[] = {0};
    pde_sp_file f1 = {.path = "/system/lib64/libpdone.so", .type = 2, .syms = s1,
                      .n_syms = 2, .extra = x0, .n_extra = 1};
    pde_sp_file f2 = {.path = "/system/lib64/libpdtwo.so", .type = 2, .syms = s2,
                      .n_syms = 1, .extra = x0, .n_extra = 1};
    pde_feat_sp_file(&e, &f1);
    pde_feat_sp_file2(&e, &f2);
    pde_feat_sp_meta(&e, "simpleperf_version", "1.pdtest");
    pc_options o;
    pc_options_init(&o);
    o.remove_gaps = 0;
    pc_profile *p = finish_convert(&e, &o, 0);
    if (!p)
        return;
    T_EQ_STR(stack_at(p, 1000), "pd_caller;pd_leaf");
    T_EQ_STR(stack_at(p, 2000), "pd_caller;pd_other");
    uint32_t t = thread_of(p, 900, 900);
    if (t != PC_NONE)
        T_EQ_STR(str_of(p, p->thread.name[t]), "spapp");
    pc_profile_free(p);
}

/* simpleperf's META_INFO: event_type_info names the events by attribute,
 * trace_offcpu makes the sched_switch samples off-CPU time. */
TEST(perfdata_records_simpleperf_meta_info)
{
    pde e;
    pde_begin(&e, 0);
    pde_attr_spec a1 = {.type = 1, .sample_period = 1000000,
                        .sample_type = STYPE | PDE_S_ID, .flags = PDE_F_SAMPLE_ID_ALL,
                        .ids = (const uint64_t[]){5}, .n_ids = 1};
    pde_attr_spec a2 = {.type = 2, .config = 316, .sample_period = 1,
                        .sample_type = STYPE | PDE_S_ID, .flags = PDE_F_SAMPLE_ID_ALL,
                        .ids = (const uint64_t[]){6}, .n_ids = 1};
    pde_attr(&e, &a1);
    pde_attr(&e, &a2);
    sid(&e, 950, 950, 10);
    e.sid.id = 5;
    pde_comm(&e, 950, 950, "offcpu", 0);
    pde_mmap(&e, PDE_MISC_USER, 950, 950, 0x10000, 0x4000, 0, "/system/lib64/libpdoff.so");
    for (size_t i = 0; i < 4; i++) {
        uint64_t chain[] = {PDE_CONTEXT_USER, 0x10100};
        pde_sample s = {.ip = 0x10100, .pid = 950, .tid = 950, .time = 1000 * (i + 1),
                        .period = 1000, .id = i % 2 ? 6 : 5, .callchain = chain,
                        .n_callchain = 2};
        pde_sample_rec(&e, i % 2, PDE_MISC_USER, &s);
    }
    pde_feat_sp_meta(&e, "simpleperf_version", "1.pdtest");
    pde_feat_sp_meta(&e, "event_type_info", "cpu-clock,1,0\nsched:sched_switch,2,316");
    pde_feat_sp_meta(&e, "trace_offcpu", "true");
    pc_options o;
    pc_options_init(&o);
    o.remove_gaps = 0;
    pc_profile *p = finish_convert(&e, &o, 0);
    if (!p)
        return;
    T_EQ_INT(p->event.n, 2);
    if (p->event.n == 2) {
        T_EQ_STR(str_of(p, p->event.name[0]), "cpu-clock");
        T_EQ_STR(str_of(p, p->event.name[1]), "sched:sched_switch");
        T_EQ_INT(p->event.offcpu[0], 0);
        T_EQ_INT(p->event.offcpu[1], 1);
    }
    /* Every event is kept in an off-CPU recording. */
    T_EQ_INT(p->sample.n, 4);
    pc_profile_free(p);
}

/* perf writes each CPU's buffer in turn: a sample may come in the file
 * before the mmap that precedes it in time, in a later round.  It must
 * still be named from that mapping. */
TEST(perfdata_records_out_of_order_rounds)
{
    pde e;
    perf_begin(&e, STYPE);
    sid(&e, 1000, 1000, 10);
    pde_comm(&e, 1000, 1000, "ooo", 0);
    pde_finished_round(&e);
    /* round 1: the sample at 3000 (cpu 1's buffer) */
    uint64_t a[] = {0x400100};
    user_sample(&e, 0, 1000, 1000, 3000, a, 1);
    /* ... the mapping at 2000 comes after it in the file, same round */
    sid(&e, 1000, 1000, 2000);
    pde_mmap(&e, PDE_MISC_USER, 1000, 1000, 0x400000, 0x10000, 0, "/nonexistent/pd/ooo");
    pde_finished_round(&e);
    /* round 2: a sample at 5000, then a mapping at 4000 of cpu 0 and one
     * more sample at 4500 (both older than round 1's last) */
    uint64_t b[] = {0x500100};
    user_sample(&e, 0, 1000, 1000, 5000, b, 1);
    sid(&e, 1000, 1000, 4000);
    pde_mmap(&e, PDE_MISC_USER, 1000, 1000, 0x500000, 0x10000, 0, "/nonexistent/pd/ooo2");
    user_sample(&e, 0, 1000, 1000, 4500, b, 1);
    pde_finished_round(&e);
    pc_profile *p = finish_convert(&e, NULL, 1);
    if (!p)
        return;
    T_EQ_STR(stack_at(p, 3000), "ooo+0x100");
    T_EQ_STR(stack_at(p, 4500), "ooo2+0x100");
    T_EQ_STR(stack_at(p, 5000), "ooo2+0x100");
    pc_profile_free(p);
}

/* The pipe form (perf record -o -): a 16-byte header, the attribute as a
 * HEADER_ATTR record (type 64: the attr's bytes, then its ids), then the
 * records to the end. */
TEST(perfdata_records_pipe)
{
    static const uint64_t ids[] = {33};
    pde e;
    pde_begin(&e, 0);
    pde_attr_spec as = {.type = 1, .sample_period = 1000000, .sample_type = STYPE | PDE_S_ID,
                        .flags = FLAGS, .ids = ids, .n_ids = 1};
    pde_attr(&e, &as);
    sid(&e, 1100, 1100, 10);
    pde_comm(&e, 1100, 1100, "piped", 0);
    pde_mmap(&e, PDE_MISC_USER, 1100, 1100, 0x400000, 0x10000, 0, "/nonexistent/pd/piped");
    uint64_t chain[] = {PDE_CONTEXT_USER, 0x400123, 0x400456};
    pde_sample s = {.ip = 0x400123, .pid = 1100, .tid = 1100, .time = 1000, .period = 77,
                    .id = 33, .callchain = chain, .n_callchain = 3};
    pde_sample_rec(&e, 0, PDE_MISC_USER, &s);
    pde_finished_round(&e);
    size_t len = 0;
    uint8_t *f = pde_finish(&e, &len);
    T_CHECK(f != NULL);
    if (!f)
        return;
    uint64_t aoff, dof, dsz;
    memcpy(&aoff, f + 24, 8);
    memcpy(&dof, f + 40, 8);
    memcpy(&dsz, f + 48, 8);
    size_t n = 16 + 8 + PDE_ATTR_SIZE + 8 + (size_t)dsz;
    uint8_t *pipe = calloc(1, n);
    memcpy(pipe, "PERFILE2", 8);
    pipe[8] = 16;
    uint8_t *r = pipe + 16;
    r[0] = 64;                          /* HEADER_ATTR */
    r[6] = (uint8_t)(8 + PDE_ATTR_SIZE + 8);
    memcpy(r + 8, f + aoff, PDE_ATTR_SIZE);
    memcpy(r + 8 + PDE_ATTR_SIZE, &ids[0], 8);
    memcpy(r + 16 + PDE_ATTR_SIZE, f + dof, (size_t)dsz);
    free(f);
    pc_options o;
    pc_options_init(&o);
    pc_profile *p = NULL;
    pc_error err;
    int st = convert_bytes_unchecked(pipe, n, &o, &p, &err);
    T_EQ_INT(st, PC_OK);
    if (st != PC_OK)
        t_fail(__FILE__, __LINE__, "%s", err.message);
    if (p) {
        T_EQ_INT(p->sample.n, 1);
        T_EQ_STR(stack_at(p, 1000), "piped+0x456;piped+0x123");
        if (p->sample.n == 1)
            T_EQ_INT(pc_sample_weight(p, 0), 77);
        uint32_t t = thread_of(p, 1100, 1100);
        if (t != PC_NONE)
            T_EQ_STR(str_of(p, p->thread.name[t]), "piped");
    }
    pc_profile_free(p);
    free(pipe);
}

/* Found by fuzz_perfdata: a tid seen in another process and then again in
 * its first one became two model threads of the same pid and tid, which
 * the Gecko format's validator refuses ("threads[1].tid: 10 already used
 * by threads[0] of the same process").  One thread per (pid, tid). */
TEST(perfdata_records_tid_back_in_its_process)
{
    pde e;
    perf_begin(&e, STYPE);
    sid(&e, 10, 10, 10);
    pde_comm(&e, 10, 10, "back", 0);
    pde_mmap(&e, PDE_MISC_USER, 10, 10, 0x400000, 0x10000, 0, "/nonexistent/pd/back");
    uint64_t a[] = {0x400100};
    user_sample(&e, 0, 10, 10, 1000, a, 1);
    user_sample(&e, 0, 99, 10, 2000, a, 1);
    user_sample(&e, 0, 10, 10, 3000, a, 1);
    pde_finished_round(&e);
    pc_profile *p = finish_convert(&e, NULL, 1);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, 3);
    for (size_t i = 0; i < p->thread.n; i++)
        for (size_t k = i + 1; k < p->thread.n; k++)
            if (p->thread.pid[i] == p->thread.pid[k] && p->thread.tid[i] == p->thread.tid[k])
                t_fail(__FILE__, __LINE__, "threads %zu and %zu are both pid %lld tid %lld", i,
                       k, (long long)p->thread.pid[i], (long long)p->thread.tid[i]);
    uint32_t t = thread_of(p, 10, 10);
    T_CHECK(t != PC_NONE);
    if (t != PC_NONE) {
        size_t n = 0;
        for (size_t i = 0; i < p->sample.n; i++)
            n += pc_sample_thread(p, i) == t;
        T_EQ_INT(n, 2);
    }
    pc_profile_free(p);
}

/* Found by fuzz_perfdata (UBSan, make SAN=1): a simpleperf recording
 * without any symbol table (no FILE feature) looked its samples up in a
 * NULL symbol array ("applying zero offset to null pointer" in find_sym). */
TEST(perfdata_records_simpleperf_without_symbols)
{
    pde e;
    pde_begin(&e, 0);
    pde_attr_spec as = {.type = 1, .sample_period = 1000000, .sample_type = STYPE,
                        .flags = PDE_F_SAMPLE_ID_ALL | PDE_F_MMAP | PDE_F_COMM};
    pde_attr(&e, &as);
    sid(&e, 960, 960, 10);
    pde_comm(&e, 960, 960, "nosyms", 0);
    pde_mmap(&e, PDE_MISC_USER, 960, 960, 0x10000, 0x4000, 0, "/system/lib64/libpdnosym.so");
    uint64_t a[] = {0x10123};
    user_sample(&e, 0, 960, 960, 1000, a, 1);
    pc_options o;
    pc_options_init(&o);
    o.remove_gaps = 0;
    pc_profile *p = finish_convert(&e, &o, 0);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, 1);
    if (p->sample.n == 1)
        T_CONTAINS(stack_text(p, p->sample.stack[0]), "libpdnosym.so");
    pc_profile_free(p);
}

/* Every field before the callchain that a sample may carry (address, id,
 * stream id, cpu, period, a group's counter values) and after it (raw
 * data, branch stack): the callchain and the values around it read right. */
TEST(perfdata_records_sample_fields)
{
    static const uint64_t ids[] = {91};
    pde e;
    pde_begin(&e, 0);
    pde_attr_spec as = {.type = 1, .sample_period = 1000000,
                        .sample_type = PDE_S_IP | PDE_S_TID | PDE_S_TIME | PDE_S_ADDR |
                                       PDE_S_ID | PDE_S_STREAM_ID | PDE_S_CPU | PDE_S_PERIOD |
                                       PDE_S_READ | PDE_S_CALLCHAIN | PDE_S_RAW |
                                       PDE_S_BRANCH_STACK,
                        .read_format = 1 | 4 | 8,  /* TOTAL_TIME_ENABLED, ID, GROUP */
                        .flags = FLAGS, .ids = ids, .n_ids = 1, .name = "cpu-clock"};
    pde_attr(&e, &as);
    sid(&e, 1200, 1201, 10);
    e.sid.id = 91;
    e.sid.stream_id = 91;
    pde_comm(&e, 1200, 1201, "fields", 0);
    pde_mmap(&e, PDE_MISC_USER, 1200, 1201, 0x400000, 0x10000, 0, "/nonexistent/pd/fields");
    /* nr 2, enabled, then {value, id} twice */
    static const uint64_t rd[] = {2, 5555, 1, 91, 2, 92};
    static const uint64_t br[] = {0x400010, 0x400020, 0, 0x400030, 0x400040, 0};
    static const uint8_t raw[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    uint64_t chain[] = {PDE_CONTEXT_USER, 0x400aa0, 0x400bb0};
    pde_sample s = {.ip = 0x400aa0, .pid = 1200, .tid = 1201, .time = 1000,
                    .addr = 0xdeadbeef, .id = 91, .stream_id = 91, .cpu = 6, .period = 4321,
                    .read = rd, .n_read = 6, .callchain = chain, .n_callchain = 3,
                    .raw = raw, .raw_size = sizeof raw, .branches = br, .n_branches = 2};
    pde_sample_rec(&e, 0, PDE_MISC_USER, &s);
    pde_finished_round(&e);
    pc_profile *p = finish_convert(&e, NULL, 1);
    if (!p)
        return;
    T_EQ_INT(p->sample.n, 1);
    if (p->sample.n == 1) {
        T_EQ_INT(pc_sample_weight(p, 0), 4321);
        T_EQ_INT(pc_sample_cpu(p, 0), 6);
        T_EQ_INT(pc_sample_time(p, 0), 1000);
        T_EQ_STR(stack_text(p, p->sample.stack[0]), "fields+0xbb0;fields+0xaa0");
        uint32_t t = pc_sample_thread(p, 0);
        T_EQ_INT(p->thread.pid[t], 1200);
        T_EQ_INT(p->thread.tid[t], 1201);
        T_EQ_STR(str_of(p, p->thread.name[t]), "fields");
    }
    pc_profile_free(p);
}

/* A pid reused: the process exits and a new one of the same pid is forked
 * from another.  The new process starts with its parent's mappings alone
 * (perf report drops the old thread on the FORK), not the mappings the old
 * process left. */
TEST(perfdata_records_pid_reused)
{
    pde e;
    perf_begin(&e, STYPE);
    sid(&e, 1, 1, 10);
    pde_comm(&e, 1, 1, "init", 0);
    pde_mmap(&e, PDE_MISC_USER, 1, 1, 0x500000, 0x10000, 0, "/nonexistent/pd/init");
    sid(&e, 30, 30, 20);
    pde_comm(&e, 30, 30, "old", 0);
    pde_mmap(&e, PDE_MISC_USER, 30, 30, 0x400000, 0x10000, 0, "/nonexistent/pd/libold.so");
    uint64_t a[] = {0x400100};
    user_sample(&e, 0, 30, 30, 1000, a, 1);
    sid(&e, 30, 30, 1500);
    pde_exit(&e, 30, 1, 30, 1, 1500);
    sid(&e, 1, 1, 2000);
    pde_fork(&e, 30, 1, 30, 1, 2000);
    user_sample(&e, 0, 30, 30, 3000, a, 1);
    uint64_t b[] = {0x500100};
    user_sample(&e, 0, 30, 30, 4000, b, 1);
    pde_finished_round(&e);
    pc_profile *p = finish_convert(&e, NULL, 1);
    if (!p)
        return;
    T_EQ_STR(stack_at(p, 1000), "libold.so+0x100");
    T_EQ_STR(stack_at(p, 4000), "init+0x100");
    const char *s = stack_at(p, 3000);
    if (strstr(s, "libold.so"))
        t_fail(__FILE__, __LINE__, "the new process 30 is named from the old one's "
               "mapping: \"%s\"", s);
    pc_profile_free(p);
}

/* ---- More of the pipe form ---- */

typedef struct bytes {
    uint8_t *d;
    size_t n, cap;
} bytes;

static void put(bytes *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 256;
        b->d = realloc(b->d, b->cap);
    }
    memcpy(b->d + b->n, d, n);
    b->n += n;
}

static void put_header(bytes *b, uint32_t type, size_t size)
{
    uint8_t h[8] = {0};
    memcpy(h, &type, 4);
    h[6] = (uint8_t)size;
    h[7] = (uint8_t)(size >> 8);
    put(b, h, 8);
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The pipe form of f (a file from pde_finish with n_attrs attributes of
 * one id each, ids[i]): HEADER_ATTR records, then when feat_bit is set a
 * HEADER_FEATURE record of that feature's bytes (the file's only
 * feature), then extra (raw bytes, may be NULL) and the data section. */
static bytes pipe_of(const uint8_t *f, size_t n_attrs, const uint64_t *ids, int feat_bit,
                     const void *extra, size_t n_extra)
{
    bytes b = {0};
    put(&b, "PERFILE2", 8);
    uint64_t sixteen = 16;
    put(&b, &sixteen, 8);
    uint64_t aoff = rd64(f + 24), asz = rd64(f + 16), dof = rd64(f + 40), dsz = rd64(f + 48);
    for (size_t i = 0; i < n_attrs; i++) {
        put_header(&b, 64, 8 + PDE_ATTR_SIZE + 8);
        put(&b, f + aoff + i * asz, PDE_ATTR_SIZE);
        put(&b, &ids[i], 8);
    }
    if (feat_bit >= 0) {
        const uint8_t *idx = f + dof + dsz;
        uint64_t off = rd64(idx), size = rd64(idx + 8);
        put_header(&b, 80, 16 + (size_t)size);
        uint64_t bit = (uint64_t)feat_bit;
        put(&b, &bit, 8);
        put(&b, f + off, (size_t)size);
    }
    if (extra)
        put(&b, extra, n_extra);
    put(&b, f + dof, (size_t)dsz);
    return b;
}

/* Two events in the pipe form, named by EVENT_DESC in a HEADER_FEATURE
 * record. */
TEST(perfdata_records_pipe_two_events)
{
    static const uint64_t ids[] = {61, 62};
    uint64_t st = STYPE | PDE_S_IDENTIFIER;
    pde e;
    pde_begin(&e, 0);
    pde_attr_spec a1 = {.type = 0, .config = 0, .sample_period = 1000, .sample_type = st,
                        .flags = FLAGS, .ids = ids, .n_ids = 1, .name = "pd-pipe-one"};
    pde_attr_spec a2 = {.type = 0, .config = 1, .sample_period = 1000, .sample_type = st,
                        .flags = FLAGS, .ids = ids + 1, .n_ids = 1, .name = "pd-pipe-two"};
    pde_attr(&e, &a1);
    pde_attr(&e, &a2);
    sid(&e, 1300, 1300, 10);
    e.sid.identifier = 61;
    pde_mmap(&e, PDE_MISC_USER, 1300, 1300, 0x400000, 0x10000, 0, "/nonexistent/pd/pipe2");
    for (size_t i = 0; i < 4; i++) {
        uint64_t chain[] = {PDE_CONTEXT_USER, 0x400100};
        pde_sample s = {.ip = 0x400100, .pid = 1300, .tid = 1300, .time = 1000 * (i + 1),
                        .period = 5, .identifier = ids[i % 2], .callchain = chain,
                        .n_callchain = 2};
        pde_sample_rec(&e, i % 2, PDE_MISC_USER, &s);
    }
    pde_finished_round(&e);
    pde_feat_event_desc(&e);
    size_t len = 0;
    uint8_t *f = pde_finish(&e, &len);
    T_CHECK(f != NULL);
    if (!f)
        return;
    bytes b = pipe_of(f, 2, ids, PDE_FEAT_EVENT_DESC, NULL, 0);
    free(f);
    pc_options o;
    pc_options_init(&o);
    o.event = "pd-pipe-two";
    pc_profile *p = NULL;
    pc_error err;
    int rc = convert_bytes_unchecked(b.d, b.n, &o, &p, &err);
    T_EQ_INT(rc, PC_OK);
    if (rc != PC_OK)
        t_fail(__FILE__, __LINE__, "%s", err.message);
    if (p) {
        T_EQ_INT(p->event.n, 2);
        if (p->event.n == 2)
            T_EQ_STR(str_of(p, p->event.name[1]), "pd-pipe-two");
        T_EQ_INT(p->sample.n, 2);
        for (size_t i = 0; i < p->sample.n; i++)
            T_CHECK(pc_sample_time(p, i) == 2000 || pc_sample_time(p, i) == 4000);
    }
    pc_profile_free(p);
    free(b.d);
}

/* perf record -e sched:... -o - writes HEADER_TRACING_DATA (type 66): a
 * 16-byte record whose u32 says how many bytes of tracing data (padded to
 * 8) follow it outside its size, as AUXTRACE's data does. */
TEST(perfdata_records_pipe_tracing_data)
{
    static const uint64_t ids[] = {63};
    pde e;
    pde_begin(&e, 0);
    pde_attr_spec a = {.type = 1, .sample_period = 1000, .sample_type = STYPE | PDE_S_ID,
                       .flags = FLAGS, .ids = ids, .n_ids = 1, .name = "cpu-clock"};
    pde_attr(&e, &a);
    sid(&e, 1400, 1400, 10);
    pde_mmap(&e, PDE_MISC_USER, 1400, 1400, 0x400000, 0x10000, 0, "/nonexistent/pd/traced");
    uint64_t ips[] = {0x400100};
    user_sample(&e, 0, 1400, 1400, 1000, ips, 1);
    pde_finished_round(&e);
    size_t len = 0;
    uint8_t *f = pde_finish(&e, &len);
    T_CHECK(f != NULL);
    if (!f)
        return;
    /* The record, then 24 bytes of tracing data ("\x17\x08\x44tracing0.6"
     * and what follows), which are no records. */
    uint8_t extra[16 + 24] = {66, 0, 0, 0, 0, 0, 16, 0, 24, 0, 0, 0, 0, 0, 0, 0,
                              0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g',
                              '0', '.', '6', 0, 1, 8, 0, 0, 0, 0, 0, 0, 0x10, 0};
    bytes b = pipe_of(f, 1, ids, -1, extra, sizeof extra);
    free(f);
    pc_options o;
    pc_options_init(&o);
    pc_profile *p = NULL;
    pc_error err;
    int rc = convert_bytes_unchecked(b.d, b.n, &o, &p, &err);
    T_EQ_INT(rc, PC_OK);
    if (rc != PC_OK)
        t_fail(__FILE__, __LINE__, "%s", err.message);
    if (p) {
        T_EQ_INT(p->sample.n, 1);
        T_EQ_STR(stack_at(p, 1000), "traced+0x100");
    }
    pc_profile_free(p);
    free(b.d);
}

/* A recording whose writer was stopped before it finished the file: the
 * header perf wrote at the start (its feature bits set, the data size
 * still 0), the records, and no feature sections.  The records up to the
 * end of the file are read. */
TEST(perfdata_records_unfinished)
{
    pde e;
    perf_begin(&e, STYPE);
    sid(&e, 1500, 1500, 10);
    pde_comm(&e, 1500, 1500, "killed", 0);
    pde_mmap(&e, PDE_MISC_USER, 1500, 1500, 0x400000, 0x10000, 0, "/nonexistent/pd/killed");
    uint64_t a[] = {0x400100};
    user_sample(&e, 0, 1500, 1500, 1000, a, 1);
    user_sample(&e, 0, 1500, 1500, 2000, a, 1);
    pde_finished_round(&e);
    size_t len = 0;
    uint8_t *f = pde_finish(&e, &len);
    T_CHECK(f != NULL);
    if (!f)
        return;
    uint64_t dof = rd64(f + 40), dsz = rd64(f + 48);
    memset(f + 48, 0, 8);     /* data size 0 */
    pc_options o;
    pc_options_init(&o);
    pc_profile *p = NULL;
    pc_error err;
    int rc = convert_bytes_unchecked(f, (size_t)(dof + dsz), &o, &p, &err);
    T_EQ_INT(rc, PC_OK);
    if (rc != PC_OK)
        t_fail(__FILE__, __LINE__, "%s", err.message);
    if (p) {
        T_EQ_INT(p->sample.n, 2);
        T_EQ_STR(stack_at(p, 2000), "killed+0x100");
    }
    pc_profile_free(p);
    free(f);
}
