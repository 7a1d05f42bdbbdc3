/* The perf.data encoder must be right before its fixtures judge the
 * reader: its layout checked by hand here, and where `perf` is installed,
 * its files read back by perf itself, which knows the format first-hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pbwire.h"
#include "pd_encode.h"
#include "t.h"

static uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static uint64_t be(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static const uint64_t ids[] = {42, 43};
static const uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
                                7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* One cpu-clock attr, a COMM, two MMAP2s (inode and build id), three
 * samples with callchains, a fork, an exit and the perf features. */
static uint8_t *small_file(int opts, size_t *len)
{
    pde e;
    pde_begin(&e, opts);
    pde_attr_spec a = {
        .type = 1, .config = 0, .sample_period = 1000000,
        .sample_type = PDE_S_IP | PDE_S_TID | PDE_S_TIME | PDE_S_PERIOD |
                       PDE_S_CALLCHAIN | PDE_S_CPU | PDE_S_ID,
        .flags = PDE_F_DISABLED | PDE_F_INHERIT | PDE_F_MMAP | PDE_F_COMM |
                 PDE_F_ENABLE_ON_EXEC | PDE_F_TASK | PDE_F_SAMPLE_ID_ALL |
                 PDE_F_MMAP2 | PDE_F_COMM_EXEC,
        .ids = ids, .n_ids = 2, .name = "cpu-clock",
    };
    pde_attr(&e, &a);
    e.sid.time = 1000000000;
    e.sid.cpu = 3;
    pde_comm(&e, 1234, 1234, "pdtest", 1);
    e.sid.time = 1000000500;
    pde_mmap2(&e, PDE_MISC_USER, 1234, 1234, 0x400000, 0x2000, 0, 8, 1, 777, 0,
              5, 2, "/opt/pdtest/bin/pdtest");
    pde_mmap2_build_id(&e, PDE_MISC_USER, 1234, 1234, 0x7f0000000000, 0x10000,
                       0x1000, bid, 20, 5, 2, "/opt/pdtest/lib/libpd.so");
    e.sid.time = 1000000900;
    pde_fork(&e, 1234, 1234, 1235, 1234, 1000000900);
    for (int i = 0; i < 3; i++) {
        uint64_t chain[] = {PDE_CONTEXT_USER, 0x401000 + 16 * (uint64_t)i,
                            0x7f0000001234, 0x400800};
        pde_sample s = {
            .ip = 0x401000 + 16 * (uint64_t)i, .pid = 1234,
            .tid = i == 2 ? 1235 : 1234, .time = 1000001000 + 1000 * (uint64_t)i,
            .id = 42, .cpu = 3, .period = 1000000 + (uint64_t)i,
            .callchain = chain, .n_callchain = 4,
        };
        pde_sample_rec(&e, 0, PDE_MISC_USER, &s);
    }
    e.sid.time = 1000009000;
    pde_exit(&e, 1234, 1234, 1235, 1234, 1000009000);
    pde_finished_round(&e);
    pde_feat_build_id(&e, PDE_MISC_USER, 1234, bid, 20, "/opt/pdtest/lib/libpd.so");
    pde_feat_hostname(&e, "pdhost");
    pde_feat_osrelease(&e, "6.1.0-pdtest");
    pde_feat_version(&e, "6.1.pd");
    pde_feat_arch(&e, "x86_64");
    pde_feat_nrcpus(&e, 8, 4);
    static const char *const argv[] = {"perf", "record", "-g", "pdtest"};
    pde_feat_cmdline(&e, argv, 4);
    pde_feat_event_desc(&e);
    return pde_finish(&e, len);
}

TEST(pd_encode_layout)
{
    size_t len = 0;
    uint8_t *f = small_file(0, &len);
    T_CHECK(f != NULL);
    if (!f)
        return;
    T_CHECK(memcmp(f, "PERFILE2", 8) == 0);
    T_EQ_INT(le(f + 8, 8), 104);
    T_EQ_INT(le(f + 16, 8), PDE_ATTR_SIZE + 16);
    /* The ids come right after the header, then the attr section. */
    T_EQ_INT(le(f + 104, 8), 42);
    T_EQ_INT(le(f + 112, 8), 43);
    uint64_t attrs = le(f + 24, 8), data = le(f + 40, 8), dlen = le(f + 48, 8);
    T_EQ_INT(attrs, 120);
    T_EQ_INT(le(f + 32, 8), PDE_ATTR_SIZE + 16);
    const uint8_t *a = f + attrs;
    T_EQ_INT(le(a, 4), 1);
    T_EQ_INT(le(a + 4, 4), PDE_ATTR_SIZE);
    T_EQ_INT(le(a + 16, 8), 1000000);
    T_EQ_INT(le(a + 40, 8) >> 18 & 1, 1);
    T_EQ_INT(le(a + PDE_ATTR_SIZE, 8), 104);
    T_EQ_INT(le(a + PDE_ATTR_SIZE + 8, 8), 16);
    T_EQ_INT(data, attrs + PDE_ATTR_SIZE + 16);
    /* The COMM: pid, tid, "pdtest" padded to 8, then the trailer of TID,
     * TIME, ID and CPU. */
    const uint8_t *r = f + data;
    T_EQ_INT(le(r, 4), PDE_COMM);
    T_EQ_INT(le(r + 4, 2), PDE_MISC_COMM_EXEC);
    T_EQ_INT(le(r + 6, 2), 8 + 8 + 8 + 32);
    T_EQ_STR((const char *)r + 16, "pdtest");
    T_EQ_INT(le(r + 24, 4), 1234);
    T_EQ_INT(le(r + 32, 8), 1000000000);
    T_EQ_INT(le(r + 40, 8), 42);  /* the attr's first id */
    T_EQ_INT(le(r + 48, 4), 3);
    /* Every record is 8-aligned and the data section ends on one. */
    uint64_t off = 0;
    int n = 0, samples = 0;
    while (off + 8 <= dlen) {
        uint32_t size = (uint32_t)le(f + data + off + 6, 2);
        T_CHECK(size >= 8 && size % 8 == 0);
        if (size < 8)
            break;
        samples += le(f + data + off, 4) == PDE_SAMPLE;
        off += size;
        n++;
    }
    T_EQ_INT(off, dlen);
    T_EQ_INT(n, 9);
    T_EQ_INT(samples, 3);
    /* Features 2-7, 11 and 12: the index follows the data. */
    T_EQ_INT(le(f + 72, 8), 0x18fc);
    const uint8_t *idx = f + data + dlen;
    uint64_t first = le(idx, 8);
    T_EQ_INT(first, data + dlen + 8 * 16);
    const uint8_t *host = f + le(idx + 16, 8);  /* HOSTNAME, the second */
    T_EQ_INT(le(host, 4), 8);
    T_EQ_STR((const char *)host + 4, "pdhost");
    const uint8_t *cpus = f + le(idx + 5 * 16, 8);
    T_EQ_INT(le(idx + 5 * 16 + 8, 8), 8);
    T_EQ_INT(le(cpus, 4), 8);
    T_EQ_INT(le(cpus + 4, 4), 4);
    uint64_t last = le(idx + 7 * 16, 8) + le(idx + 7 * 16 + 8, 8);
    T_EQ_INT(last, len);
    free(f);
}

TEST(pd_encode_big_endian)
{
    size_t llen = 0, blen = 0;
    uint8_t *l = small_file(0, &llen);
    uint8_t *b = small_file(PDE_BIG_ENDIAN, &blen);
    T_CHECK(l && b);
    if (!l || !b) {
        free(l);
        free(b);
        return;
    }
    T_EQ_INT(llen, blen);
    T_CHECK(memcmp(b, "2ELIFREP", 8) == 0);
    for (unsigned off = 8; off < 104; off += 8)
        T_EQ_INT(be(b + off, 8), le(l + off, 8));
    const uint8_t *la = l + le(l + 24, 8), *ba = b + be(b + 24, 8);
    T_EQ_INT(be(ba, 4), le(la, 4));
    T_EQ_INT(be(ba + 24, 8), le(la + 24, 8));
    /* disabled (bit 0) is the top bit of the first byte in big-endian
     * bitfield order. */
    T_EQ_INT(ba[40], 0xc0);
    T_EQ_INT(la[40], 0x03);
    const uint8_t *lr = l + le(l + 40, 8), *br = b + be(b + 40, 8);
    T_EQ_INT(be(br, 4), PDE_COMM);
    T_EQ_INT(be(br + 6, 2), le(lr + 6, 2));
    T_EQ_INT(be(br + 8, 4), 1234);
    T_CHECK(memcmp(br + 16, "pdtest", 7) == 0);
    free(l);
    free(b);
}

TEST(pd_encode_sample_fields)
{
    pde e;
    pde_begin(&e, 0);
    pde_attr_spec a = {
        .type = 1, .size = PDE_ATTR_SIZE_MAX,
        .sample_type = PDE_S_IDENTIFIER | PDE_S_IP | PDE_S_RAW |
                       PDE_S_REGS_USER | PDE_S_STACK_USER | PDE_S_WEIGHT,
        .sample_regs_user = 0x7, .sample_stack_user = 16,
    };
    pde_attr(&e, &a);
    uint64_t regs[3] = {1, 2, 3};
    uint8_t stack[16] = {0xaa};
    pde_sample s = {
        .identifier = 9, .ip = 0x1000, .raw = "abc", .raw_size = 3,
        .regs_abi = 2, .regs = regs, .stack = stack, .stack_size = 16,
        .stack_dyn_size = 12, .weight = 77,
    };
    pde_sample_rec(&e, 0, PDE_MISC_USER, &s);
    s.regs_abi = 0;
    s.stack_size = 0;
    pde_sample_rec(&e, 0, PDE_MISC_USER, &s);
    pde_lost(&e, 1, 2);  /* no sample_id_all: no trailer */
    static const uint8_t junk[3] = {1, 2, 3};
    pde_raw_record(&e, 99, 0, junk, 3);
    size_t len = 0;
    uint8_t *f = pde_finish(&e, &len);
    T_CHECK(f != NULL);
    if (!f)
        return;
    T_EQ_INT(le(f + 16, 8), PDE_ATTR_SIZE_MAX + 16);
    const uint8_t *r = f + le(f + 40, 8);
    /* id, ip, raw (4 + 3 + 1), abi + 3 regs, 8 + 16 + 8 stack, weight */
    T_EQ_INT(le(r + 6, 2), 8 + 8 + 8 + 8 + 32 + 32 + 8);
    T_EQ_INT(le(r + 8, 8), 9);
    T_EQ_INT(le(r + 24, 4), 3);
    T_EQ_INT(le(r + 32, 8), 2);
    T_EQ_INT(le(r + 56, 8), 3);
    T_EQ_INT(le(r + 64, 8), 16);
    T_EQ_INT(r[72], 0xaa);
    T_EQ_INT(le(r + 88, 8), 12);
    T_EQ_INT(le(r + 96, 8), 77);
    r += le(r + 6, 2);
    T_EQ_INT(le(r + 6, 2), 8 + 8 + 8 + 8 + 8 + 8 + 8);
    r += le(r + 6, 2);
    T_EQ_INT(le(r, 4), PDE_LOST);
    T_EQ_INT(le(r + 6, 2), 24);
    r += 24;
    T_EQ_INT(le(r, 4), 99);
    T_EQ_INT(le(r + 6, 2), 11);
    free(f);
}

TEST(pd_encode_simpleperf_features)
{
    pde e;
    pde_begin(&e, 0);
    pde_attr_spec a = {.type = 1, .sample_type = PDE_S_IP};
    pde_attr(&e, &a);
    pde_sym syms[] = {{0x1000, 0x20, "main"}, {0x1020, 8, "f"}};
    uint64_t off = 0x1000;
    pde_sp_file elf = {"/system/bin/app", 2, 0x1000, syms, 2, &off, 1};
    pde_feat_sp_file(&e, &elf);
    pde_feat_sp_file2(&e, &elf);
    uint64_t dex[] = {0, 0x5000};
    pde_sp_file dx = {"/data/app/base.apk", 3, 0, NULL, 0, dex, 2};
    pde_feat_sp_file2(&e, &dx);
    pde_feat_sp_meta(&e, "simpleperf_version", "1.build");
    pde_feat_sp_meta(&e, "trace_offcpu", "false");
    size_t len = 0;
    uint8_t *f = pde_finish(&e, &len);
    T_CHECK(f != NULL);
    if (!f)
        return;
    T_EQ_INT(le(f + 72 + 16, 8), 0x13);  /* bits 128, 129, 132 */
    const uint8_t *idx = f + le(f + 40, 8) + le(f + 48, 8);
    const uint8_t *file = f + le(idx, 8);
    /* path 16, type 4, min_vaddr 8, count 4, syms (12 + 5) + (12 + 2),
     * file_offset_of_min_vaddr 8 */
    T_EQ_INT(le(file, 4), 16 + 4 + 8 + 4 + 17 + 14 + 8);
    T_EQ_INT(le(idx + 8, 8), 4 + 71);
    T_EQ_STR((const char *)file + 4, "/system/bin/app");
    T_EQ_INT(le(file + 4 + 71 - 8, 8), 0x1000);
    const uint8_t *meta = f + le(idx + 16, 8);
    T_EQ_INT(le(idx + 24, 8), 19 + 8 + 13 + 6);
    T_EQ_STR((const char *)meta + 19, "1.build");
    /* FILE2: the first message's fields read back. */
    const uint8_t *f2 = f + le(idx + 32, 8);
    pb_reader rd;
    pb_field fl;
    pb_reader_init(&rd, f2 + 4, le(f2, 4), 0);
    int n_syms = 0, elf_seen = 0;
    while (pb_next(&rd, &fl) == 1) {
        if (fl.number == 1)
            T_CHECK(fl.len == 15 && memcmp(fl.data, "/system/bin/app", 15) == 0);
        n_syms += fl.number == 4;
        elf_seen += fl.number == 6;
    }
    T_EQ_INT(rd.err, 0);
    T_EQ_INT(n_syms, 2);
    T_EQ_INT(elf_seen, 1);
    const uint8_t *second = f2 + 4 + le(f2, 4);
    T_EQ_INT(second + 4 + le(second, 4) - f2, (long long)le(idx + 40, 8));
    free(f);
}

/* ---- Cross-check with perf ---- */

/* Runs cmd with stderr folded in; returns its output (caller frees) and
 * its exit status in *status. */
static char *run(const char *cmd, int *status)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t cap = 4096, len = 0;
    char *out = malloc(cap);
    size_t k;
    while (out && (k = fread(out + len, 1, cap - len - 1, p)) > 0) {
        len += k;
        if (cap - len < 2) {
            char *grown = realloc(out, cap * 2);
            if (!grown) {
                free(out);
                out = NULL;
                break;
            }
            out = grown;
            cap *= 2;
        }
    }
    *status = pclose(p);
    if (out)
        out[len] = 0;
    return out;
}

static int have_perf(void)
{
    int st = 0;
    char *v = run("perf version 2>&1", &st);
    int ok = v && st == 0 && strstr(v, "perf version");
    free(v);
    return ok;
}

/* perf's view of the file written with opts, by cmd ("%s" the path); NULL
 * after a skip or a failure. */
static char *perf_output(int opts, const char *tag, const char *cmd)
{
    char path[512], line[1200];
    size_t len = 0;
    uint8_t *f = small_file(opts, &len);
    T_CHECK(f != NULL);
    if (!f)
        return NULL;
    snprintf(path, sizeof path, "%s/pd-%s.data", t_tmpdir(), tag);
    FILE *o = fopen(path, "wb");
    T_CHECK(o && fwrite(f, 1, len, o) == len);
    if (o)
        fclose(o);
    free(f);
    /* perf refuses files its user does not own unless forced; -f does. */
    char inner[700];
    snprintf(inner, sizeof inner, cmd, path);
    snprintf(line, sizeof line, "PAGER=cat perf %s 2>&1", inner);
    int st = 0;
    char *out = run(line, &st);
    if (!out || st != 0) {
        t_skip("perf refused %s: %.300s", tag, out ? out : "(no output)");
        free(out);
        return NULL;
    }
    return out;
}

static void check_script(int opts, const char *tag)
{
    char *out = perf_output(opts, tag,
                            "script -f -i %s -F comm,tid,time,ip,period "
                            "--show-mmap-events --show-task-events");
    if (!out)
        return;
    T_CONTAINS(out, "PERF_RECORD_COMM exec: pdtest:1234/1234");
    T_CONTAINS(out, "PERF_RECORD_MMAP2 1234/1234: [0x400000(0x2000) @ 0 08:01 777 0]: ");
    T_CONTAINS(out, "PERF_RECORD_MMAP2 1234/1234: [0x7f0000000000(0x10000) @ 0x1000 "
                    "<deadbeef0102030405060708090a0b0c0d0e0f10>]: ");
    /* perf (6.1 at least) swaps every MMAP2 field but prot and flags, so
     * it shows a big-endian file's mappings as ---p. */
    if (!(opts & PDE_BIG_ENDIAN)) {
        T_CONTAINS(out, "0 08:01 777 0]: r-xp /opt/pdtest/bin/pdtest\n");
        T_CONTAINS(out, "0e0f10>]: r-xp /opt/pdtest/lib/libpd.so\n");
    }
    T_CONTAINS(out, "pdtest  1235     1.000000: PERF_RECORD_FORK(1234:1235):(1234:1234)");
    T_CONTAINS(out, "pdtest  1235     1.000009: PERF_RECORD_EXIT(1234:1235):(1234:1234)");
    /* perf shows each frame as its offset in the mapping's file: the
     * callchain resolved through both MMAP2s. */
    T_CONTAINS(out, "pdtest  1234     1.000001:    1000000 \n"
                    "\t            1000\n\t            2234\n\t             800\n");
    T_CONTAINS(out, "pdtest  1234     1.000002:    1000001 \n\t            1010\n");
    T_CONTAINS(out, "pdtest  1235     1.000003:    1000002 \n\t            1020\n");
    free(out);
}

TEST(pd_encode_perf_script)
{
    if (!have_perf()) {
        t_skip("perf is not installed");
        return;
    }
    t_case("little-endian");
    check_script(0, "le");
    t_case("big-endian");
    check_script(PDE_BIG_ENDIAN, "be");
}

static void check_dump(int opts, const char *tag)
{
    char *out = perf_output(opts, tag, "report -f -D -i %s");
    if (!out)
        return;
    T_CONTAINS(out, "PERF_RECORD_SAMPLE(IP, 0x2): 1234/1234: 0x401000 period: 1000000");
    T_CONTAINS(out, "PERF_RECORD_SAMPLE(IP, 0x2): 1234/1235: 0x401020 period: 1000002");
    T_CONTAINS(out, "... FP chain: nr:4");
    T_CONTAINS(out, ".....  1: 0000000000401000");
    T_CONTAINS(out, ".....  2: 00007f0000001234");
    T_CONTAINS(out, "PERF_RECORD_FINISHED_ROUND");
    free(out);
    out = perf_output(opts, tag, "report -f --header-only -i %s");
    if (!out)
        return;
    T_CONTAINS(out, "# hostname : pdhost");
    T_CONTAINS(out, "# os release : 6.1.0-pdtest");
    T_CONTAINS(out, "# perf version : 6.1.pd");
    T_CONTAINS(out, "# arch : x86_64");
    T_CONTAINS(out, "# nrcpus online : 4");
    T_CONTAINS(out, "# nrcpus avail : 8");
    T_CONTAINS(out, "# cmdline : perf record -g pdtest");
    T_CONTAINS(out, "# event : name = cpu-clock");
    T_CONTAINS(out, "id = { 42, 43 }");
    free(out);
    out = perf_output(opts, tag, "buildid-list -f -i %s");
    if (!out)
        return;
    T_CONTAINS(out, "deadbeef0102030405060708090a0b0c0d0e0f10 /opt/pdtest/lib/libpd.so");
    free(out);
}

TEST(pd_encode_perf_dump)
{
    if (!have_perf()) {
        t_skip("perf is not installed");
        return;
    }
    t_case("little-endian");
    check_dump(0, "le");
    t_case("big-endian");
    check_dump(PDE_BIG_ENDIAN, "be");
}
