/* The simpleperf reader: decoded records and the model built from them, on
 * the project's own fixture and against simpleperf's own dumps of the
 * shared corpus. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "corpus.h"
#include "fixtures.h"
#include "model/model.h"
#include "read/simpleperf/simpleperf.h"
#include "sp_dump.h"
#include "t.h"
#include "test_util.h"

TEST(sp_decode_fixture)
{
    spe e;
    pc_input *in;
    pc_error err;
    sp_reader r;
    sp_record rec;
    int kinds[64], n = 0, got;

    fx_android(&e);
    T_EQ_INT(pc_input_open_memory(&in, e.out.data, e.out.len, "fx", &err), PC_OK);
    T_EQ_INT(sp_open(&r, in, &err), PC_OK);
    T_EQ_INT(r.version, 1);
    while ((got = sp_next(&r, &rec, &err)) > 0 && n < 64) {
        kinds[n++] = rec.kind;
        if (n == 1) {
            T_EQ_INT(rec.kind, SP_META);
            T_EQ_INT(rec.meta.n_event_types, 2);
            T_CHECK(rec.meta.event_types[1].len == 9 &&
                    memcmp(rec.meta.event_types[1].s, "cpu-clock", 9) == 0);
            T_CHECK(rec.meta.has_sdk_version && memcmp(rec.meta.sdk_version.s, "33", 2) == 0);
            T_EQ_INT(rec.meta.trace_offcpu, 0);
            T_EQ_INT(rec.offset, 12);
        } else if (n == 2) {
            T_EQ_INT(rec.kind, SP_SAMPLE);
            T_CHECK(rec.sample.time == FX_T0);
            T_EQ_INT(rec.sample.tid, 1000);
            T_EQ_INT(rec.sample.event_count, 1000000);
            T_EQ_INT(rec.sample.n_chain, 4);
            T_EQ_INT(rec.sample.chain[0].file_id, 0);
            T_EQ_INT(rec.sample.chain[0].symbol_id, 2);
            T_EQ_INT(rec.sample.chain[0].vaddr, 0x5010);
            T_EQ_INT(rec.sample.chain[0].has_exec, 0);
            T_EQ_INT(rec.sample.has_unwind, 0);
        } else if (n == 12) {
            T_EQ_INT(rec.kind, SP_SAMPLE);
            T_EQ_INT(rec.sample.has_unwind, 1);
            T_EQ_INT(rec.sample.error_code, 2);
            T_EQ_INT(rec.sample.raw_error_code, 3);
            T_EQ_INT(rec.sample.error_addr, 0x7fff1234);
        } else if (n == 10) {
            T_EQ_INT(rec.kind, SP_SWITCH);
            T_EQ_INT(rec.sw.on, 0);
            T_EQ_INT(rec.sw.tid, 1001);
            T_CHECK(rec.sw.time == FX_T0 + 2300000);
        } else if (rec.kind == SP_FILE && rec.file.id == 5) {
            T_EQ_INT(rec.file.n_symbols, 0);
        } else if (rec.kind == SP_FILE && rec.file.id == 0) {
            T_EQ_INT(rec.file.n_symbols, 3);
            T_EQ_INT(rec.file.n_mangled, 3);
            T_CHECK(memcmp(rec.file.symbols[1].s, "__start_thread", 14) == 0);
        } else if (rec.kind == SP_THREAD && rec.thread.tid == 1003) {
            T_EQ_INT(rec.thread.pid, 1000);
            T_CHECK(rec.thread.name.len == 4 && memcmp(rec.thread.name.s, "idle", 4) == 0);
        } else if (rec.kind == SP_LOST) {
            T_EQ_INT(rec.lost.sample_count, 12);
            T_EQ_INT(rec.lost.lost_count, 2);
        }
    }
    T_EQ_INT(got, 0);
    T_EQ_INT(n, 1 + 12 + 2 + 1 + 10 + 4);
    T_EQ_INT(kinds[n - 1], SP_THREAD);
    sp_close(&r);
    pc_input_close(in);
    spe_free(&e);
}

TEST(sp_model_fixture)
{
    pc_profile *p = convert_fixture(NULL);
    if (!p)
        return;
    T_EQ_INT(p->thread.n, 5);
    T_EQ_INT(p->sample.read, 12);
    T_EQ_INT(p->sample.n, 8);
    T_EQ_INT(p->event.n, 2);
    T_EQ_INT(p->meta.kept_events_all, 0);
    T_EQ_INT(p->meta.kept_event, 0);
    T_EQ_INT(p->meta.lost_sample_count, 12);
    T_EQ_INT(p->meta.lost_count, 2);
    T_EQ_STR(pc_str(&p->str, p->meta.app_type), "debuggable");

    uint32_t main = find_thread(p, 1000), render = find_thread(p, 1001);
    uint32_t orphan = find_thread(p, 1002), idle = find_thread(p, 1003);
    uint32_t glibc = find_thread(p, 2000);
    T_CHECK(main != PC_NONE && render != PC_NONE && orphan != PC_NONE &&
            idle != PC_NONE && glibc != PC_NONE);
    if (t_case_failures())
        return;
    T_EQ_STR(pc_str(&p->str, p->thread.name[main]), "com.example");
    T_EQ_INT(p->thread.pid[render], 1000);
    T_EQ_STR(pc_str(&p->str, p->thread.name[orphan]), "thread 1002");
    T_EQ_INT(p->thread.pid[orphan], 1002);
    T_EQ_INT(thread_samples(p, idle), 0);

    /* Per-thread times, sorted, relative to FX_T0 in microseconds. */
    T_EQ_STR(thread_times_us(p, main), "0,1000,4000");
    T_EQ_STR(thread_times_us(p, render), "1200,2200");
    T_EQ_STR(thread_times_us(p, orphan), "1500");
    T_EQ_STR(thread_times_us(p, glibc), "500,700");

    size_t a = p->sample.first[main];
    T_EQ_STR(stack_text(p, p->sample.stack[a]),
             "__libc_init;android.os.Looper.loop;com.example.Foo.bar;malloc");
    T_EQ_STR(stack_text(p, p->sample.stack[a + 1]),
             "__libc_init;android.os.Looper.loop;com.example.Foo.hot");
    T_EQ_STR(stack_text(p, p->sample.stack[p->sample.first[render]]),
             "__start_thread;android::RenderThread::threadLoop();draw;"
             "do_syscall_64;__schedule");
    T_EQ_STR(stack_text(p, p->sample.stack[p->sample.first[orphan]]),
             "java.lang.String.equals;libc.so.6+0x1a2b");
    T_EQ_STR(stack_text(p, p->sample.stack[p->sample.first[glibc]]),
             "java.lang.Thread.run;libc.so.6+0x99");

    /* Categories by file (reference rules plus the fixes in category.c). */
    T_EQ_INT(frame_category(p, "malloc"), PC_CAT_NATIVE);
    T_EQ_INT(frame_category(p, "__schedule"), PC_CAT_KERNEL);
    T_EQ_INT(frame_category(p, "do_syscall_64"), PC_CAT_KERNEL);
    T_EQ_INT(frame_category(p, "com.example.Foo.bar"), PC_CAT_DEX);
    T_EQ_INT(frame_category(p, "com.example.Foo.hot"), PC_CAT_JIT);
    T_EQ_INT(frame_category(p, "java.lang.String.equals"), PC_CAT_JIT);
    T_EQ_INT(frame_category(p, "java.lang.Thread.run"), PC_CAT_OAT);
    T_EQ_INT(frame_category(p, "android.os.Looper.loop"), PC_CAT_DEX);
    T_EQ_INT(frame_category(p, "libc.so.6+0x99"), PC_CAT_NATIVE);

    /* Two File records with the same path give one function "draw". */
    size_t draws = 0;
    for (size_t f = 0; f < p->func.n; f++)
        draws += strcmp(pc_str(&p->str, p->func.name[f]), "draw") == 0;
    T_EQ_INT(draws, 1);

    /* Markers: the unwinding error, the off-CPU interval and the on-CPU
     * one that follows until the last event (5 ms). */
    int unwind = 0, offcpu = 0, oncpu = 0;
    for (size_t i = 0; i < p->marker.n; i++) {
        if (p->marker.type[i] == PC_MARK_UNWIND) {
            unwind++;
            T_EQ_INT(p->marker.thread[i], main);
            T_CHECK(p->marker.start[i] == FX_T0 + 3 * FX_MS);
            T_EQ_STR(pc_str(&p->str, p->marker.s[i]), "ERROR_NOT_ENOUGH_STACK");
            T_EQ_INT(p->marker.a[i], 3);
            T_EQ_INT(p->marker.b[i], 0x7fff1234);
        } else if (p->marker.type[i] == PC_MARK_OFFCPU) {
            offcpu++;
            T_EQ_INT(p->marker.thread[i], render);
            T_CHECK(p->marker.start[i] == FX_T0 + 2300000);
            T_CHECK(p->marker.end[i] == FX_T0 + 4 * FX_MS);
        } else {
            oncpu++;
            T_EQ_INT(p->marker.thread[i], render);
            T_CHECK(p->marker.start[i] == FX_T0 + 4 * FX_MS);
            T_CHECK(p->marker.end[i] == FX_T0 + 5 * FX_MS);
        }
    }
    T_EQ_INT(unwind, 1);
    T_EQ_INT(offcpu, 1);
    T_EQ_INT(oncpu, 1);
    pc_profile_free(p);
}

TEST(sp_gap_removal)
{
    static const struct {
        int gaps;
        const char *main_times;
        size_t total;
    } cases[] = {
        {0, "0,1000,2000,3000,4000,5000", 11},
        {1, "0,1000,2000,3000,4000", 10},   /* only the trailing run of 1 */
        {2, "0,1000,4000", 8},
        {3, "0,1000,4000", 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pc_options o;
        pc_options_init(&o);
        o.remove_gaps = cases[i].gaps;
        t_case("sp_gap_removal: --remove-gaps %d", cases[i].gaps);
        pc_profile *p = convert_fixture(&o);
        if (!p)
            continue;
        T_EQ_STR(thread_times_us(p, find_thread(p, 1000)), cases[i].main_times);
        /* The glibc thread has no complete stack and is never touched. */
        T_EQ_STR(thread_times_us(p, find_thread(p, 2000)), "500,700");
        T_EQ_INT(p->sample.n, cases[i].total);
        pc_profile_free(p);
    }
}

TEST(sp_event_selection)
{
    pc_options o;
    pc_options_init(&o);
    o.event = "cpu-clock";
    log_capture_start(&o);
    pc_profile *p = convert_fixture(&o);
    if (p) {
        T_EQ_INT(p->sample.n, 1);
        T_EQ_STR(thread_times_us(p, find_thread(p, 1000)), "2500");
        T_EQ_INT(p->meta.kept_event, 1);
        pc_profile_free(p);
    }
    T_CONTAINS(log_capture_text(), "using event: cpu-clock (1 samples); "
                                   "left out: cpu-cycles (11 samples)");

    pc_options_init(&o);
    log_capture_start(&o);
    p = convert_fixture(&o);
    pc_profile_free(p);
    T_CONTAINS(log_capture_text(), "using event: cpu-cycles (11 samples); "
                                   "left out: cpu-clock (1 samples)");

    pc_options_init(&o);
    o.event = "instructions";
    pc_error err;
    T_EQ_INT(convert_fixture_status(&o, &err), PC_EUSAGE);
    T_CONTAINS(err.message, "options.event instructions: no such event");
    T_CONTAINS(err.message, "cpu-cycles (11 samples), cpu-clock (1 samples)");
}

/* Gzip-compressed input, also as two concatenated gzip members. */
TEST(sp_gzip_input)
{
    spe e;
    fx_android(&e);
    size_t half = e.out.len / 2;
    unsigned char *one = NULL, *a = NULL, *b = NULL;
    size_t n1 = gzip_bytes(e.out.data, e.out.len, &one);
    size_t na = gzip_bytes(e.out.data, half, &a);
    size_t nb = gzip_bytes(e.out.data + half, e.out.len - half, &b);
    unsigned char *two = malloc(na + nb);
    memcpy(two, a, na);
    memcpy(two + na, b, nb);

    const struct { const char *what; const unsigned char *d; size_t n; } in[] = {
        {"one member", one, n1}, {"two members", two, na + nb}};
    for (int i = 0; i < 2; i++) {
        pc_input *src;
        pc_profile *p;
        pc_error err;
        t_case("sp_gzip_input: %s", in[i].what);
        T_EQ_INT(pc_input_open_memory(&src, in[i].d, in[i].n, "fx.gz", &err), PC_OK);
        T_EQ_INT(pc_convert(src, NULL, &p, &err), PC_OK);
        pc_input_close(src);
        if (t_case_failures())
            continue;
        T_EQ_INT(p->sample.n, 8);
        T_EQ_STR(thread_times_us(p, find_thread(p, 1001)), "1200,2200");
        pc_profile_free(p);
    }
    free(one);
    free(a);
    free(b);
    free(two);
    spe_free(&e);
}

/* simpleperf's own --dump-protobuf-report of each corpus file, reproduced
 * line for line by the project's decoder. */
static void dump_matches(const corpus_row *row)
{
    const char *file = row->col[M_FILE], *base = corpus_base(row);
    char dump_rel[512];
    size_t want_len, data_len, got_len;
    snprintf(dump_rel, sizeof dump_rel, "dumps/%s.dump.txt", base);
    char *want = (char *)corpus_read(dump_rel, &want_len);
    if (!want) {
        snprintf(dump_rel, sizeof dump_rel, "dumps/%s.dump.txt.gz", base);
        want = (char *)corpus_read(dump_rel, &want_len);
    }
    unsigned char *data = corpus_read(file, &data_len);
    if (!want || !data) {
        t_fail(__FILE__, __LINE__, "cannot read %s or its dump", file);
        free(want);
        free(data);
        return;
    }
    pc_input *in;
    pc_error err;
    char *got = NULL;
    if (pc_input_open_memory(&in, data, data_len, base, &err) == PC_OK) {
        got = sp_dump(in, &got_len, &err);
        pc_input_close(in);
    }
    if (!got) {
        t_fail(__FILE__, __LINE__, "decoding failed: %s", err.message);
    } else if (got_len != want_len || memcmp(got, want, want_len) != 0) {
        size_t line = 1, k = 0;
        while (k < got_len && k < want_len && got[k] == want[k])
            line += got[k++] == '\n';
        t_fail(__FILE__, __LINE__, "dump differs from simpleperf's at line %zu", line);
    }
    free(got);
    free(want);
    free(data);
}

TEST(sp_dump_matches_simpleperf)
{
    corpus_each("input", NULL, "sp_dump", dump_matches);
}

/* MANIFEST.tsv's counts for every input: samples, Thread records, event
 * types, context switches, lost count, trace_offcpu. */
static void manifest_counts(const corpus_row *row)
{
    const char *file = row->col[M_FILE];
    size_t len;
    unsigned char *data = corpus_read(file, &len);
    pc_input *in;
    pc_error err;
    sp_reader r;
    sp_record rec;
    size_t samples = 0, threads = 0, switches = 0;
    unsigned long long lost = 0;
    int offcpu = -1, got;
    char events[256] = "";
    if (!data || pc_input_open_memory(&in, data, len, file, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "cannot open %s", file);
        free(data);
        return;
    }
    if (sp_open(&r, in, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "cannot open %s: %s", file, err.message);
        pc_input_close(in);
        free(data);
        return;
    }
    while ((got = sp_next(&r, &rec, &err)) > 0) {
        samples += rec.kind == SP_SAMPLE;
        threads += rec.kind == SP_THREAD;
        switches += rec.kind == SP_SWITCH;
        if (rec.kind == SP_LOST)
            lost = rec.lost.lost_count;
        if (rec.kind == SP_META) {
            offcpu = rec.meta.trace_offcpu;
            for (size_t k = 0; k < rec.meta.n_event_types; k++) {
                size_t used = strlen(events);
                snprintf(events + used, sizeof events - used, "%s%.*s",
                         k ? "," : "", (int)rec.meta.event_types[k].len,
                         rec.meta.event_types[k].s);
            }
        }
    }
    T_EQ_INT(got, 0);
    T_EQ_INT(samples, atoll(row->col[M_SAMPLES]));
    T_EQ_INT(threads, atoll(row->col[M_THREADS]));
    T_EQ_INT(switches, atoll(row->col[M_CONTEXT_SWITCHES]));
    T_EQ_INT(lost, atoll(row->col[M_LOST_COUNT]));
    T_EQ_STR(events, row->col[M_EVENT_TYPES]);
    T_EQ_STR(offcpu ? "true" : "false", row->col[M_TRACE_OFFCPU]);
    sp_close(&r);
    pc_input_close(in);
    free(data);
}

TEST(sp_manifest_counts)
{
    corpus_each("input", NULL, "sp_manifest", manifest_counts);
}
