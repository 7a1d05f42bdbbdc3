/* Caller paths met again are neither decoded nor built again: a decoder
 * keeps the runs of callchain entries it has decoded and leaves a run it
 * meets again undecoded (sample.n_lazy), and the builder keeps the stack
 * above the leaf of each run.  Neither may change a record, a stack or a
 * warning, whatever the encoding: runs cut by other fields, entries with
 * fields this version does not know, tags written in more bytes than
 * needed, unwinding errors, depth limits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashtab.h"
#include "base/pbwire.h"
#include "io/source.h"
#include "read/simpleperf/simpleperf.h"
#include "sp_encode.h"
#include "gen_common.h"
#include "t.h"
#include "test_util.h"

enum {
    N_PATHS = 24,
    MAX_DEPTH = 40,
    N_SYMS = 64,
    N_SAMPLES = 4000,
};

/* How a sample's entries are written. */
enum {
    PLAIN,       /* as simpleperf writes them */
    UNKNOWN,     /* one entry past the leaf has a field 7 */
    CUT,         /* the time field again between the second and third entry */
    LONG_TAG,    /* one more entry past the root, its tag in two bytes */
    TAIL,        /* one more entry past the root, after the event_count field */
    N_WAYS,
};

typedef struct sample {
    int depth, way;
    int path, base;                  /* the caller path, and depth without the extra entry */
    spe_frame chain[MAX_DEPTH + 1];  /* leaf first */
    uint32_t error_code;             /* 0: unwound in full */
} sample;


static void put_entry(pb_buf *b, const spe_frame *f, int unknown, int long_tag)
{
    if (long_tag) {
        /* Field 3, wire type 2, in two bytes: 0x9a 0x00. */
        uint8_t tag[2] = {0x9a, 0x00};
        pb_raw(b, tag, 2);
        pb_buf inner = {0};
        pb_uint(&inner, 1, f->vaddr);
        pb_uint(&inner, 2, f->file);
        pb_int32(&inner, 3, f->sym);
        pb_put_varint(b, inner.len);
        pb_raw(b, inner.data, inner.len);
        pb_buf_free(&inner);
        return;
    }
    size_t c = pb_begin(b, 3);
    pb_uint(b, 1, f->vaddr);
    pb_uint(b, 2, f->file);
    pb_int32(b, 3, f->sym);
    if (f->exec >= 0)
        pb_uint(b, 4, (uint64_t)f->exec);
    if (unknown)
        pb_uint(b, 7, 42);
    pb_end(b, c);
}

static void put_sample(spe *e, const sample *s, uint64_t time)
{
    pb_buf rec = {0};
    size_t m = pb_begin(&rec, 1);
    pb_uint(&rec, 1, time);
    pb_int32(&rec, 2, 7);
    for (int i = 0; i < s->depth; i++) {
        if (s->way == CUT && i == 2)
            pb_uint(&rec, 1, time);
        int extra = i == s->depth - 1 && s->depth > s->base;
        if (extra && s->way == TAIL)
            pb_uint(&rec, 4, 1000000);
        put_entry(&rec, &s->chain[i], s->way == UNKNOWN && i == s->depth / 2 && i > 0,
                  extra && s->way == LONG_TAG);
    }
    pb_uint(&rec, 4, 1000000);
    pb_uint(&rec, 5, 0);
    if (s->error_code) {
        size_t u = pb_begin(&rec, 6);
        pb_uint(&rec, 1, s->error_code + 10);
        pb_uint(&rec, 2, 0x1000);
        pb_uint(&rec, 3, s->error_code);
        pb_end(&rec, u);
    }
    pb_end(&rec, m);
    spe_raw_record(e, rec.data, rec.len);
    pb_buf_free(&rec);
}

/* Ends a file: one library whose n_syms symbols are fn_0, fn_1, ..., and
 * thread 7, "main". */
static void end_file(spe *e, int n_syms)
{
    const char *names[64];
    char buf[64][16];
    for (int k = 0; k < n_syms && k < 64; k++) {
        snprintf(buf[k], sizeof buf[k], "fn_%d", k);
        names[k] = buf[k];
    }
    spe_file(e, 0, "/system/lib64/libfoo.so", names, (size_t)(n_syms < 64 ? n_syms : 64));
    spe_thread(e, 7, 7, "main");
    spe_end(e);
}

/* A file of N_SAMPLES samples on one thread whose caller paths come from
 * N_PATHS (so most are met again) and whose leaves vary; the samples in
 * *out. */
static void make_file(spe *e, sample *out)
{
    rng_state = 88172645463325252ULL;
    static const char *const events[] = {"cpu-clock"};
    spe_frame paths[N_PATHS][MAX_DEPTH];
    for (int p = 0; p < N_PATHS; p++)
        for (int d = 0; d < MAX_DEPTH; d++)
            paths[p][d] = (spe_frame){0x1000 + 0x40 * (uint64_t)d, 0,
                                      (int32_t)below(N_SYMS), d % 3 == 0 ? -1 : 1};
    spe_begin(e);
    spe_meta(e, events, 1, "com.example", "debuggable", "33", "user", 0);
    for (int i = 0; i < N_SAMPLES; i++) {
        sample *s = &out[i];
        s->path = (int)below(N_PATHS);
        const spe_frame *path = paths[s->path];
        s->base = s->depth = 2 + (int)below(MAX_DEPTH - 1);
        s->way = below(4) ? PLAIN : (int)below(N_WAYS);
        s->error_code = below(8) == 0 ? 1 + below(3) : 0;
        /* The path's outermost depth - 1 callers, root last, and a leaf;
         * the callers are those of earlier samples of the same path and
         * depth, so what follows them must be decoded after all. */
        for (int d = 1; d < s->depth; d++)
            s->chain[d] = path[MAX_DEPTH - s->depth + d];
        s->chain[0] = (spe_frame){0x9000 + 4 * (uint64_t)below(8), 0, (int32_t)below(N_SYMS), 0};
        if (s->way == LONG_TAG || s->way == TAIL)
            s->chain[s->depth++] = (spe_frame){0x7000, 0, N_SYMS - 1, -1};
        put_sample(e, s, 1000000000ULL + (uint64_t)i * 1000000);
    }
    end_file(e, N_SYMS);
}

/* Every record as sp_next gives it, with or without the memo: the same
 * kinds, fields and callchains, and the same unknown fields noted. */
TEST(sp_memo_same_records)
{
    static sample s[N_SAMPLES];
    spe e;
    make_file(&e, s);
    sp_reader r[2];
    pc_input *in[2];
    pc_error err;
    for (int m = 0; m < 2; m++) {
        T_EQ_INT(pc_input_open_memory(&in[m], e.out.data, e.out.len, "memo", &err), PC_OK);
        T_EQ_INT(sp_open(&r[m], in[m], &err), PC_OK);
        r[m].memo = m;
    }
    if (t_case_failures())
        return;
    static sp_entry full[MAX_DEPTH + 1];
    size_t samples = 0, lazy = 0, lazy_extra = 0, lazy_unknown = 0, after_known = 0;
    enum { MAX_IDS = 4096 };
    static struct id_bytes {
        uint32_t id;
        uint64_t hash;
    } ids[MAX_IDS];
    size_t n_ids = 0, with_path = 0;
    static char plain_seen[N_PATHS][MAX_DEPTH + 1];
    for (;;) {
        sp_record a, b;
        int ga = sp_next(&r[0], &a, &err), gb = sp_next(&r[1], &b, &err);
        T_EQ_INT(ga, gb);
        if (ga <= 0 || gb <= 0 || t_case_failures())
            break;
        T_EQ_INT(a.kind, b.kind);
        if (a.kind != SP_SAMPLE || b.kind != SP_SAMPLE)
            continue;
        const sample *want = &s[samples++];
        T_EQ_INT(a.sample.n_lazy, 0);
        T_EQ_INT(a.sample.n_chain, (size_t)want->depth);
        T_EQ_INT(b.sample.n_chain, (size_t)want->depth);
        T_CHECK(a.sample.time == b.sample.time && a.sample.tid == b.sample.tid &&
                a.sample.error_code == b.sample.error_code &&
                a.sample.event_count == b.sample.event_count);
        const sp_entry *got = b.sample.chain;
        if (b.sample.n_lazy) {
            lazy++;
            lazy_extra += want->depth > want->base;
            lazy_unknown += want->way == UNKNOWN;
            T_EQ_INT(b.sample.n_lazy + 1, b.sample.n_chain);
            T_EQ_INT(sp_decode_lazy(&b, full), 0);
            got = full;
        }
        for (size_t i = 0; i < a.sample.n_chain && i < b.sample.n_chain; i++) {
            const sp_entry *x = &a.sample.chain[i], *y = &got[i];
            if (x->vaddr != y->vaddr || x->file_id != y->file_id ||
                x->symbol_id != y->symbol_id || x->exec != y->exec ||
                x->has_exec != y->has_exec || x->vaddr != want->chain[i].vaddr ||
                x->symbol_id != want->chain[i].sym) {
                t_fail(__FILE__, __LINE__, "sample %zu entry %zu differs", samples, i);
                break;
            }
        }
        /* Extra entries after callers the memo holds: decoded after all. */
        if (want->depth > want->base && plain_seen[want->path][want->base])
            after_known++;
        if (want->way == PLAIN)
            plain_seen[want->path][want->base] = 1;
        /* The caller path's bytes, the same either way; with the memo,
         * one id for each distinct run of them, what the builder keys its
         * stacks on. */
        T_EQ_INT(a.sample.raw_len, b.sample.raw_len);
        T_CHECK(!a.sample.raw || memcmp(a.sample.raw, b.sample.raw, a.sample.raw_len) == 0);
        T_CHECK(a.sample.path == SP_NO_PATH);
        if (b.sample.path != SP_NO_PATH) {
            T_CHECK(b.sample.raw != NULL && want->way != UNKNOWN);
            uint64_t h = b.sample.raw ? pc_hash_bytes(b.sample.raw, b.sample.raw_len) : 0;
            size_t k = 0;
            while (k < n_ids && ids[k].id != b.sample.path && ids[k].hash != h)
                k++;
            if (k == n_ids && n_ids < MAX_IDS)
                ids[n_ids++] = (struct id_bytes){b.sample.path, h};
            else if (k < n_ids)
                T_CHECK(ids[k].id == b.sample.path && ids[k].hash == h);
            with_path++;
        }
        T_CHECK((a.sample.raw == NULL) ==
                (want->depth < 2 || (want->way == CUT && want->depth > 2) || want->way == TAIL));
    }
    T_EQ_INT(samples, N_SAMPLES);
    /* The memo was used; never for a run with an unknown field, and a run
     * followed by more entries was decoded after all. */
    T_CHECK(lazy > N_SAMPLES / 2);
    T_CHECK(with_path > lazy && n_ids > N_PATHS && n_ids < MAX_IDS);
    T_EQ_INT(lazy_unknown, 0);
    T_EQ_INT(lazy_extra, 0);
    T_CHECK(after_known > 20);
    T_EQ_INT(r[0].unknown.count, r[1].unknown.count);
    T_EQ_INT(r[0].unknown.record, r[1].unknown.record);
    T_CHECK(r[0].unknown.offset == r[1].unknown.offset && r[0].unknown.count > 0);
    for (int m = 0; m < 2; m++) {
        sp_close(&r[m]);
        pc_input_close(in[m]);
    }
    spe_free(&e);
}

/* The stack of every sample is the one its entries name, on one thread
 * and on several, with and without a depth limit. */
TEST(sp_caller_paths_built_once)
{
    static sample s[N_SAMPLES];
    spe e;
    make_file(&e, s);
    static const struct {
        int threads;
        size_t max_depth;
    } runs[] = {{1, 0}, {4, 0}, {1, 12}, {4, 12}};
    static char want[MAX_DEPTH * 32];
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        t_case("threads %d, max_depth %zu", runs[k].threads, runs[k].max_depth);
        pc_options o;
        pc_options_init(&o);
        o.threads = runs[k].threads;
        o.max_depth = runs[k].max_depth;
        o.remove_gaps = 0;
        pc_profile *p = NULL;
        pc_error err;
        int st = convert_bytes_unchecked(e.out.data, e.out.len, &o, &p, &err);
        T_EQ_INT(st, PC_OK);
        if (st != PC_OK)
            continue;
        T_EQ_INT(p->sample.n, N_SAMPLES);
        for (size_t i = 0; i < p->sample.n && i < N_SAMPLES; i++) {
            const sample *w = &s[i];
            size_t len = 0, keep = (size_t)w->depth;
            if (runs[k].max_depth && keep > runs[k].max_depth)
                keep = runs[k].max_depth;
            static const char *const errors[] = {"", "UNKNOWN", "NOT_ENOUGH_STACK",
                                                 "MEMORY_INVALID"};
            if (w->error_code)
                len += (size_t)snprintf(want + len, sizeof want - len, "[unwind error: %s];",
                                        errors[w->error_code]);
            for (size_t d = keep; d-- > 0;)
                len += (size_t)snprintf(want + len, sizeof want - len, "fn_%d%s",
                                        (int)w->chain[d].sym, d ? ";" : "");
            const char *got = stack_text(p, p->sample.stack[i]);
            if (strcmp(got, want) != 0) {
                t_fail(__FILE__, __LINE__, "sample %zu: %s, want %s", i, got, want);
                break;
            }
        }
        pc_profile_free(p);
    }
    spe_free(&e);
}

/* More caller paths than either cache holds (a decoder's memo keeps 1 MiB
 * of runs, the builder 4 MiB), each met three times in a row, so both are
 * emptied again and again and fill up anew: the stacks stay right, on
 * one thread and on several. */
TEST(sp_caller_path_caches_refill)
{
    rng_state = 88172645463325252ULL;
    enum { PATHS = 12000, DEPTH = 60, SYMS = 64, REPEAT = 3 };
    static const char *const events[] = {"cpu-clock"};
    static int32_t sym[PATHS][DEPTH];   /* root first */
    static int32_t leaf[PATHS * REPEAT];
    spe e;
    spe_frame chain[DEPTH + 1];
    size_t run_bytes = 0;
    spe_begin(&e);
    spe_meta(&e, events, 1, "com.example", "debuggable", "33", "user", 0);
    for (size_t p = 0; p < PATHS; p++) {
        for (int d = 0; d < DEPTH; d++)
            sym[p][d] = (int32_t)below(SYMS);
        size_t before = e.out.len;
        for (int r = 0; r < REPEAT; r++) {
            size_t i = p * REPEAT + (size_t)r;
            leaf[i] = (int32_t)below(SYMS);
            chain[0] = (spe_frame){0x9000 + 4 * (uint64_t)below(64), 0, leaf[i], 0};
            for (int d = 0; d < DEPTH; d++)
                chain[DEPTH - d] = (spe_frame){0x1000 + 0x40 * (uint64_t)d, 0, sym[p][d], 1};
            spe_sample(&e, 1000000000ULL + i * 1000, 7, 1000000, 0, chain, DEPTH + 1, NULL);
        }
        run_bytes += (e.out.len - before) / REPEAT;
    }
    end_file(&e, SYMS);
    /* The premise: the runs' bytes are well past what the caches hold. */
    T_CHECK(run_bytes > 6u << 20);
    static const int threads[] = {1, 4};
    static char want[DEPTH * 8 + 16];
    for (size_t k = 0; k < 2; k++) {
        t_case("threads %d", threads[k]);
        pc_options o;
        pc_options_init(&o);
        o.threads = threads[k];
        o.remove_gaps = 0;
        pc_profile *p = NULL;
        pc_error err;
        int st = convert_bytes_unchecked(e.out.data, e.out.len, &o, &p, &err);
        T_EQ_INT(st, PC_OK);
        if (st != PC_OK)
            continue;
        T_EQ_INT(p->sample.n, PATHS * REPEAT);
        for (size_t i = 0; i < p->sample.n && i < PATHS * REPEAT; i++) {
            size_t len = 0;
            for (int d = 0; d < DEPTH; d++)
                len += (size_t)snprintf(want + len, sizeof want - len, "fn_%d;",
                                        (int)sym[i / REPEAT][d]);
            snprintf(want + len, sizeof want - len, "fn_%d", (int)leaf[i]);
            const char *got = stack_text(p, p->sample.stack[i]);
            if (strcmp(got, want) != 0) {
                t_fail(__FILE__, __LINE__, "sample %zu: %s, want %s", i, got, want);
                break;
            }
        }
        pc_profile_free(p);
    }
    spe_free(&e);
}

/* The caller path a record's decoding looks up, found ahead by a shallow
 * parse (sp_peek_path, which the decoding threads use once the paths
 * outgrow a core's cache): the same run, hash and count, so a decoder
 * given it makes the record it makes without; one given another
 * record's finds nothing of it to use. */
TEST(sp_peek_finds_the_run_the_decoder_looks_up)
{
    static sample s[N_SAMPLES];
    spe e;
    make_file(&e, s);
    pc_input *in;
    pc_error err;
    sp_reader r;
    T_EQ_INT(pc_input_open_memory(&in, e.out.data, e.out.len, "peek", &err), PC_OK);
    T_EQ_INT(sp_open(&r, in, &err), PC_OK);
    if (t_case_failures())
        return;
    /* Four decoders, each with a set of paths of its own: no peek, its
     * own record's, the record before's, and its own with another hash
     * each time (which shows the peek is what a decoder looks up). */
    pc_byteset set[4];
    sp_decoder dc[4];
    for (int k = 0; k < 4; k++) {
        T_EQ_INT(pc_byteset_init(&set[k], 1 << 12, 1 << 22), 0);
        memset(&dc[k], 0, sizeof dc[k]);
        dc[k].paths = &set[k];
    }
    static uint8_t prev[1 << 12];
    size_t records = 0, samples = 0, found = 0, differ = 0, misled = 0;
    sp_peek before = {0};
    const uint8_t *data;
    uint32_t size;
    uint64_t off;
    while (sp_frame(&r, &data, &size, &off, &err) > 0 && size <= sizeof prev) {
        sp_peek pk = {0};
        int got = sp_peek_path(data, size, &pk);
        sp_record rec[4];
        sp_peek wrong = pk;
        wrong.hash += records;
        for (int k = 0; k < 4; k++) {
            dc[k].n_chain = dc[k].n_strs[0] = dc[k].n_strs[1] = 0;
            dc[k].peek = k == 0 ? (sp_peek){0} : k == 1 ? pk : k == 2 ? before : wrong;
            T_EQ_INT(sp_decode(in, &dc[k], data, size, off, records, &rec[k], &err), 0);
            sp_decoder_fix(&dc[k], &rec[k]);
        }
        records++;
        if (rec[0].kind != SP_SAMPLE) {
            T_EQ_INT(got, 0);
            continue;
        }
        samples++;
        found += got;
        /* The run the decoder keeps, and its hash. */
        if (got && rec[0].sample.raw)
            T_CHECK(pk.at == rec[0].sample.raw &&
                    pk.hash == pc_hash_bytes(pk.at, (size_t)(pk.end - pk.at)));
        misled += rec[3].sample.path != rec[0].sample.path;
        for (int k = 1; k < 3; k++)
            differ += rec[k].sample.n_chain != rec[0].sample.n_chain ||
                      rec[k].sample.n_lazy != rec[0].sample.n_lazy ||
                      rec[k].sample.path != rec[0].sample.path ||
                      rec[k].sample.raw_len != rec[0].sample.raw_len ||
                      rec[k].sample.raw != rec[0].sample.raw;
        /* The record before's peek points into its own bytes, kept apart
         * from these, as a batch's are. */
        memcpy(prev, data, size);
        before = pk;
        if (got) {
            before.at = prev + (pk.at - data);
            before.end = prev + (pk.end - data);
            before.limit = prev + (pk.limit - data);
        }
    }
    T_EQ_INT(samples, N_SAMPLES);
    T_CHECK(found > N_SAMPLES / 2);
    T_EQ_INT(differ, 0);
    T_CHECK(misled > N_SAMPLES / 4);
    for (int k = 0; k < 4; k++) {
        sp_decoder_free(&dc[k]);
        pc_byteset_free(&set[k]);
    }
    sp_close(&r);
    pc_input_close(in);
    spe_free(&e);
}
