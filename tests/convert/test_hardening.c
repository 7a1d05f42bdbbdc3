/* Inputs and outputs gone wrong: empty and tiny inputs, lengths claiming
 * gigabytes, an interrupted conversion, a full disk.  Nothing crashes,
 * nothing is allocated for bytes that are not there, and no partial or
 * clobbered output is left. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/hashtab.h"
#include "sp_encode.h"
#include "base/strtab.h"
#include "t.h"
#include "test_util.h"

static void expect_input_error(const void *data, size_t len, const char *want)
{
    pc_profile *p = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(data, len, NULL, &p, &err), PC_EINPUT);
    T_CONTAINS(err.message, want);
    pc_profile_free(p);
}

TEST(hardening_tiny_and_lying_inputs)
{
    expect_input_error("", 0, "fixture: offset 0: the input is empty");
    expect_input_error("S", 1, "fixture: offset 0: unknown input format");
    expect_input_error("\n", 1, "fixture: offset 0: unknown input format");

    /* A simpleperf record whose size claims 4 GiB, with 4 bytes behind
     * it: refused at once, nothing allocated for the claim. */
    static const unsigned char sp[] = {'S', 'I', 'M', 'P', 'L', 'E', 'P', 'E', 'R', 'F', 1, 0,
                                       0xff, 0xff, 0xff, 0xff, 0x0a, 0x02, 0x08, 0x01};
    expect_input_error(sp, sizeof sp, "fixture: offset 12: ");
    /* A Perfetto packet claiming 4 GiB. */
    static const unsigned char pf[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x08, 0x01};
    expect_input_error(pf, sizeof pf, "fixture: offset 0: ");

    /* The same from a file, through the command line: exit status 2, one
     * line, and a peak memory far below the claim. */
    char path[600], cmd[1400], errf[700];
    snprintf(path, sizeof path, "%s/claims-4g.trace", t_tmpdir());
    snprintf(errf, sizeof errf, "%s/claims-4g.err", t_tmpdir());
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    fwrite(sp, 1, sizeof sp, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s '%s' -o '%s/claims.json' 2> '%s'", t_profconv(), path,
             t_tmpdir(), errf);
    int st = system(cmd);
    T_EQ_INT(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 2);
    char *e = read_text(errf);
    T_CHECK(e && strchr(e, '\n') == e + strlen(e) - 1);
    T_CONTAINS(e, "claims-4g.trace: offset 12: ");
    free(e);
    snprintf(cmd, sizeof cmd, "%s/claims.json", t_tmpdir());
    struct stat sb;
    T_CHECK(stat(cmd, &sb) != 0);
}

/* A recording big enough that writing its JSON takes a while: 150,000
 * samples whose stacks are nearly all different, written once for the
 * tests of this process that use it (a third of a second each time) as
 * tmpdir/name, a link to the first. */
static int write_slow_input(const char *name, char *path, size_t size)
{
    static char first[700];
    snprintf(path, size, "%s/%s", t_tmpdir(), name);
    if (first[0]) {
        if (strcmp(first, path) == 0)
            return 0;
        unlink(path);
        if (link(first, path) == 0)
            return 0;
    }
    if (!write_simpleperf_file(path, 150000, 1))
        return -1;
    if (!first[0])
        snprintf(first, sizeof first, "%s", path);
    return 0;
}

static int temp_files_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strstr(e->d_name, ".tmp-") != NULL;
    closedir(d);
    return n;
}

TEST_SLOW(hardening_signal_leaves_no_partial_output)
{
    char dir[600], in[700], out[700];
    snprintf(dir, sizeof dir, "%s/sig", t_tmpdir());
    mkdir(dir, 0700);
    snprintf(out, sizeof out, "%s/out.json", dir);
    if (write_slow_input("slow.trace", in, sizeof in) < 0) {
        t_fail(__FILE__, __LINE__, "cannot write %s", in);
        return;
    }
    static const char old[] = "the previous output\n";
    FILE *f = fopen(out, "w");
    fputs(old, f);
    fclose(f);
    for (int sig = SIGTERM, round = 0; round < 2; round++, sig = SIGINT) {
        pid_t pid = fork();
        if (pid == 0) {
            execl(t_profconv(), "profconv", "-q", in, "-o", out, (char *)NULL);
            _exit(127);
        }
        /* Wait for the temporary output to appear, then interrupt. */
        int seen = 0;
        struct timespec ms = {0, 200000};
        for (int i = 0; i < 100000 && !seen; i++) {
            seen = temp_files_in(dir) > 0;
            if (!seen) {
                int ws;
                if (waitpid(pid, &ws, WNOHANG) == pid) {
                    pid = -1;
                    break;
                }
                nanosleep(&ms, NULL);
            }
        }
        if (pid < 0 || !seen) {
            if (pid > 0)
                waitpid(pid, NULL, 0);
            t_skip("the conversion ended before it could be interrupted");
            return;
        }
        kill(pid, sig);
        int ws = 0;
        waitpid(pid, &ws, 0);
        T_CHECK(WIFSIGNALED(ws) && WTERMSIG(ws) == sig);
        T_EQ_INT(temp_files_in(dir), 0);
        char *now = read_text(out);
        T_EQ_STR(now, old);
        free(now);
    }
}

/* A full disk: a 64 KiB tmpfs, where mounting one is allowed. */
TEST_SLOW(hardening_disk_full)
{
    char dir[600], in[700], out[700], cmd[4000], errf[700];
    snprintf(dir, sizeof dir, "%s/full", t_tmpdir());
    mkdir(dir, 0700);
    snprintf(cmd, sizeof cmd, "mount -t tmpfs -o size=64k tmpfs '%s' 2>/dev/null", dir);
    if (geteuid() != 0 || system(cmd) != 0) {
        t_skip("cannot mount a small tmpfs here (needs root): the full disk is not tested");
        return;
    }
    snprintf(out, sizeof out, "%s/out.json", dir);
    snprintf(errf, sizeof errf, "%s/full.err", t_tmpdir());
    if (write_slow_input("slow.trace", in, sizeof in) == 0) {
        FILE *f = fopen(out, "w");
        fputs("kept\n", f);
        fclose(f);
        snprintf(cmd, sizeof cmd, "%s -q '%s' -o '%s' 2> '%s'", t_profconv(), in, out, errf);
        int st = system(cmd);
        T_EQ_INT(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 3);
        char *e = read_text(errf);
        T_CONTAINS(e, "No space left on device");
        T_CHECK(e && strchr(e, '\n') == e + strlen(e) - 1);
        free(e);
        T_EQ_INT(temp_files_in(dir), 0);
        char *now = read_text(out);
        T_EQ_STR(now, "kept\n");
        free(now);
    }
    snprintf(cmd, sizeof cmd, "umount '%s'", dir);
    if (system(cmd) != 0)
        t_fail(__FILE__, __LINE__, "cannot unmount %s", dir);
}

/* --max-memory: past the limit, a polite error and no output, instead of
 * the system killing the process. */
TEST_SLOW(hardening_max_memory)
{
#if defined(__SANITIZE_ADDRESS__)
    t_skip("the address sanitizer reserves more address space than any limit: "
           "--max-memory is tested in the normal build");
#else
    char in[700], cmd[4000], errf[700];
    snprintf(errf, sizeof errf, "%s/mem.err", t_tmpdir());
    if (write_slow_input("mem.trace", in, sizeof in) < 0)
        return;
    snprintf(cmd, sizeof cmd, "%s --max-memory 32M '%s' -o '%s/mem.json' 2> '%s'",
             t_profconv(), in, t_tmpdir(), errf);
    int st = system(cmd);
    T_EQ_INT(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 3);
    char *e = read_text(errf);
    T_CONTAINS(e, "mem.trace: out of memory (the limit set by --max-memory is 32 MiB)\n");
    free(e);
    snprintf(cmd, sizeof cmd, "%s/mem.json", t_tmpdir());
    struct stat sb;
    T_CHECK(stat(cmd, &sb) != 0);
    /* Enough memory: the same conversion goes through. */
    snprintf(cmd, sizeof cmd, "%s -q --max-memory 2G '%s' -o '%s/mem.json'", t_profconv(), in,
             t_tmpdir());
    T_EQ_INT(system(cmd), 0);
#endif
}

static pc_profile *convert_keep_going(const void *data, size_t len, int *status)
{
    pc_options o;
    pc_options_init(&o);
    o.keep_going = 1;
    o.remove_gaps = 0;
    log_capture_start(&o);
    pc_profile *p = NULL;
    pc_error err;
    *status = convert_bytes(data, len, &o, &p, &err);
    return p;
}

/* --keep-going: a cut file keeps what came before the cut, a damaged
 * record or line is skipped, a refused record too; each is reported. */
TEST(hardening_keep_going)
{
    spe e;
    spe_begin(&e);
    const char *ev[] = {"cpu-clock"};
    spe_meta(&e, ev, 1, NULL, NULL, NULL, NULL, 0);
    spe_frame chain[2] = {{0x10, 0, 0, -1}, {0x20, 0, 1, -1}};
    for (uint32_t i = 0; i < 10; i++) {
        if (i == 4) {
            /* A record with a sound frame and a broken protobuf inside. */
            static const unsigned char junk[] = {0x0a, 0x05, 0x08};
            spe_raw_record(&e, junk, sizeof junk);
        }
        spe_sample(&e, 1000 + i, 7, 1, i == 6 ? 9 : 0, chain, 2, NULL);
    }
    const char *syms[] = {"leaf", "root"};
    size_t before_files = e.out.len;
    spe_file(&e, 0, "/lib/x.so", syms, 2);
    spe_thread(&e, 7, 7, "app");
    spe_end(&e);

    int st;
    pc_profile *p = convert_keep_going(e.out.data, e.out.len, &st);
    T_EQ_INT(st, PC_OK);
    if (p) {
        /* 10 samples less the one with event type 9. */
        T_EQ_INT(p->sample.n, 9);
        T_EQ_STR(stack_text(p, p->sample.stack[0]), "root;leaf");
        pc_profile_free(p);
    }
    T_CONTAINS(log_capture_text(), "warning: 1 damaged records skipped (the first: fixture: "
                                   "offset ");
    T_CONTAINS(log_capture_text(), "warning: 1 records skipped as inconsistent (the first: "
                                   "fixture: offset ");
    T_CONTAINS(log_capture_text(), "event_type_id 9 is out of range");
    /* Without it, the first damage is an error. */
    pc_error err;
    T_EQ_INT(convert_bytes(e.out.data, e.out.len, NULL, &p, &err), PC_EINPUT);

    /* Cut before the File records: the samples stay, named by file and
     * address. */
    p = convert_keep_going(e.out.data, before_files + 3, &st);
    T_EQ_INT(st, PC_OK);
    if (p) {
        T_EQ_INT(p->sample.n, 9);
        T_EQ_STR(stack_text(p, p->sample.stack[0]), "[file 0]+0x20;[file 0]+0x10");
        pc_profile_free(p);
    }
    T_CONTAINS(log_capture_text(), "warning: reading stopped early, 12 records in: fixture: "
                                   "offset ");
    T_CONTAINS(log_capture_text(), "warning: 2 frames named by their file and address");
    spe_free(&e);

    /* perf script: the damaged line goes, the samples stay. */
    static const char text[] = "app 7/7 1.5: 1 cpu-clock:\n\t1000 work (/bin/app)\n\n"
                               "garbage line\n"
                               "app 7/7 1.6: 1 cpu-clock:\n\t1000 work (/bin/app)\n";
    p = convert_keep_going(text, sizeof text - 1, &st);
    T_EQ_INT(st, PC_OK);
    if (p)
        T_EQ_INT(p->sample.n, 2);
    pc_profile_free(p);
    T_CONTAINS(log_capture_text(), "warning: 1 damaged lines skipped (the first: fixture: "
                                   "offset 49: line 4: expected a sample header");
}

/* Converts with o, its log captured, expecting success. */
static pc_profile *convert_logged(const void *data, size_t len, pc_options *o)
{
    log_capture_start(o);
    pc_profile *p = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(data, len, o, &p, &err), PC_OK);
    return p;
}

/* A simpleperf file's start: cpu-clock, and one sample at 1000 ns in
 * thread 7 whose one frame is symbol 0 of file 0. */
static void one_sample_start(spe *e)
{
    spe_begin(e);
    const char *ev[] = {"cpu-clock"};
    spe_meta(e, ev, 1, NULL, NULL, NULL, NULL, 0);
    spe_frame chain[1] = {{0x10, 0, 0, -1}};
    spe_sample(e, 1000, 7, 1, 0, chain, 1, NULL);
}

/* Its end: file 0, /lib/x.so, whose symbol 0 is "leaf". */
static void one_sample_end(spe *e)
{
    const char *syms[] = {"leaf"};
    spe_file(e, 0, "/lib/x.so", syms, 1);
    spe_end(e);
}

/* A record of a kind newer than the reader: a warning, not an error. */
TEST(hardening_newer_record_kind)
{
    spe e;
    one_sample_start(&e);
    static const unsigned char newer[] = {0x4a, 0x02, 0x08, 0x01};  /* member 9 */
    spe_raw_record(&e, newer, sizeof newer);
    spe_raw_record(&e, newer, sizeof newer);
    one_sample_end(&e);
    pc_options o;
    pc_options_init(&o);
    pc_profile *p = convert_logged(e.out.data, e.out.len, &o);
    if (p)
        T_EQ_INT(p->sample.n, 1);
    pc_profile_free(p);
    T_CONTAINS(log_capture_text(), "warning: 2 records of a kind this version does not know "
                                   "were skipped");
    spe_free(&e);
}

/* Fields a newer simpleperf might add to known messages: skipped, the
 * sample kept, and one warning that names the first. */
TEST(hardening_unknown_fields)
{
    spe e;
    one_sample_start(&e);
    /* Record{sample{time 1000, tid 7, callchain{vaddr 0x10, file 0,
     * symbol 0, field 5: 1}, event_count 1, field 9: 5}} */
    static const unsigned char sample[] = {
        0x0a, 0x13, 0x08, 0xe8, 0x07, 0x10, 0x07, 0x1a, 0x08, 0x08, 0x10, 0x10, 0x00,
        0x18, 0x00, 0x28, 0x01, 0x20, 0x01, 0x48, 0x05};
    size_t at = e.out.len + 4 + 15;  /* the size prefix, then field 5's tag */
    spe_raw_record(&e, sample, sizeof sample);
    one_sample_end(&e);
    pc_options o;
    pc_options_init(&o);
    pc_profile *p = convert_logged(e.out.data, e.out.len, &o);
    if (p) {
        T_EQ_INT(p->sample.n, 2);
        T_EQ_STR(stack_text(p, p->sample.stack[1]), "leaf");
        T_EQ_INT(pc_sample_time(p, 1), 1000);
    }
    pc_profile_free(p);
    char want[200];
    snprintf(want, sizeof want, "warning: 2 fields this version does not know were skipped "
             "(the first: field 5 in record 3 at offset %zu; written by a newer simpleperf?)", at);
    T_CONTAINS(log_capture_text(), want);
    spe_free(&e);
}

/* A callstack deeper than the limit keeps its innermost frames: the
 * leaf stays what the sample was doing, and a warning counts the cuts. */
TEST(hardening_depth_limit_simpleperf)
{
    enum { DEPTH = 100 };
    spe e;
    spe_begin(&e);
    const char *ev[] = {"cpu-clock"};
    spe_meta(&e, ev, 1, NULL, NULL, NULL, NULL, 0);
    spe_frame chain[DEPTH];
    const char *syms[DEPTH];
    static char names[DEPTH][16];
    for (int i = 0; i < DEPTH; i++) {
        snprintf(names[i], sizeof names[i], "f%d", i);  /* f0 is the leaf */
        syms[i] = names[i];
        chain[i] = (spe_frame){0x100 + (uint64_t)i, 0, i, -1};
    }
    spe_sample(&e, 1000, 7, 1, 0, chain, DEPTH, NULL);
    spe_sample(&e, 2000, 7, 1, 0, chain + 95, 5, NULL);
    spe_sample(&e, 3000, 7, 1, 0, chain + 40, 60, NULL);
    spe_file(&e, 0, "/lib/x.so", syms, DEPTH);
    spe_end(&e);
    for (int run = 0; run < 3; run++) {
        pc_options o;
        pc_options_init(&o);
        o.remove_gaps = 0;
        o.max_depth = run == 0 ? 10 : run == 1 ? 0 : PC_MAX_DEPTH_DEFAULT;
        pc_profile *p = convert_logged(e.out.data, e.out.len, &o);
        if (!p)
            continue;
        T_EQ_INT(p->sample.n, 3);
        if (run == 0) {
            T_EQ_STR(stack_text(p, p->sample.stack[0]), "f9;f8;f7;f6;f5;f4;f3;f2;f1;f0");
            T_EQ_STR(stack_text(p, p->sample.stack[1]), "f99;f98;f97;f96;f95");
            T_EQ_STR(stack_text(p, p->sample.stack[2]), "f49;f48;f47;f46;f45;f44;f43;f42;f41;f40");
            T_CONTAINS(log_capture_text(), "warning: 2 callstacks deeper than 10 frames keep "
                       "only their 10 innermost frames (the deepest has 100; options.max_depth "
                       "sets the limit)");
        } else {
            const char *s = stack_text(p, p->sample.stack[0]);
            T_CHECK(strncmp(s, "f99;f98;", 8) == 0);
            size_t len = strlen(s);
            T_CHECK(len > 3 && strcmp(s + len - 3, ";f0") == 0);
            T_CHECK(strstr(s, ";f50;f49;") != NULL);
            T_CHECK(strstr(log_capture_text(), "callstacks deeper") == NULL);
        }
        pc_profile_free(p);
    }
    spe_free(&e);
}

/* perf script lists frames leaf first: past the limit they are not even
 * kept while the sample is read. */
TEST(hardening_depth_limit_perfscript)
{
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "app 7/7 1.5: 1 cpu-clock:\n");
    for (int i = 0; i < 30; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "\t%x g%d (/bin/app)\n", 0x1000 + i, i);
    n += (size_t)snprintf(text + n, sizeof text - n,
                          "\napp 7/7 1.6: 1 cpu-clock:\n\t1000 g0 (/bin/app)\n");
    pc_options o;
    pc_options_init(&o);
    o.max_depth = 4;
    pc_profile *p = convert_logged(text, n, &o);
    if (p) {
        T_EQ_INT(p->sample.n, 2);
        T_EQ_STR(stack_text(p, p->sample.stack[0]), "g3;g2;g1;g0");
        T_EQ_STR(stack_text(p, p->sample.stack[1]), "g0");
    }
    pc_profile_free(p);
    T_CONTAINS(log_capture_text(), "warning: 1 callstacks deeper than 4 frames keep only "
               "their 4 innermost frames (the deepest has 30;");
}

/* Keys an input can craft to share one hash slot: with a fixed hash they
 * made interning quadratic; keyed, they spread out.  Counted here as the
 * slots a lookup walks through, over every key. */
static size_t probes_to_find(const pc_htab *t, uint64_t hash, uint32_t id)
{
    pc_probe pr;
    pc_probe_start(t, hash, &pr);
    size_t home = pr.i;
    for (uint32_t got; (got = pc_probe_next(t, &pr)) != PC_NONE;)
        if (got == id)
            return ((pr.i - home) & t->mask) + (pr.i == home ? t->mask + 1 : 0);
    return SIZE_MAX / 4;  /* not found */
}

/* pc_mix64 undone: xor-shifts by 32 are their own inverse, and the odd
 * multiplier has an inverse modulo 2^64. */
static uint64_t unmix64(uint64_t x)
{
    const uint64_t c = 0xd6e8feb86659fd93ULL;
    uint64_t inv = c;
    for (int i = 0; i < 6; i++)
        inv *= 2 - c * inv;
    x ^= x >> 32;
    x *= inv;
    x ^= x >> 32;
    x *= inv;
    x ^= x >> 32;
    return x;
}

TEST(hardening_crafted_hash_collisions)
{
    enum { N = 4000 };
    /* Integers whose pc_mix64 differ only in their top 16 bits: an
     * unkeyed home slot (from bits 32 and up) would be the same for all. */
    pc_htab t = {0};
    static uint64_t key[N];
    T_CHECK(pc_htab_reserve(&t, N) == 0);
    for (uint32_t i = 0; i < N; i++) {
        key[i] = unmix64(0x0123456789abcdefULL ^ (uint64_t)i << 48);
        T_CHECK(pc_mix64(key[i]) >> 48 != 0x0123 || i == 0);
        pc_probe pr;
        pc_probe_start(&t, pc_mix64(key[i]), &pr);
        while (pc_probe_next(&t, &pr) != PC_NONE)
            ;
        pc_htab_insert(&t, &pr, i);
    }
    size_t walked = 0;
    for (uint32_t i = 0; i < N; i++)
        walked += probes_to_find(&t, pc_mix64(key[i]), i);
    printf("  note %d crafted integer keys: %zu slots walked to find them all\n", N, walked);
    T_CHECK(walked < 8 * (size_t)N);
    pc_htab_free(&t);

    /* Strings of two words, the second chosen to cancel the first in the
     * former fixed-seed string hash: all of them hashed alike there. */
    pc_strtab st = {0};
    static unsigned char str[N][16];
    for (uint32_t i = 0; i < N; i++) {
        uint64_t w1 = 0x1000 + i, h = 0x9e3779b97f4a7c15ULL ^ 16;
        h = (h ^ w1) * 0xff51afd7ed558ccdULL;
        h ^= h >> 29;
        uint64_t w2 = h ^ 0x5555555555555555ULL;
        memcpy(str[i], &w1, 8);
        memcpy(str[i] + 8, &w2, 8);
        T_EQ_INT(pc_str_intern(&st, str[i], 16), i);
    }
    walked = 0;
    for (uint32_t i = 0; i < N; i++) {
        T_EQ_INT(pc_str_find(&st, str[i], 16), i);
        walked += probes_to_find(&st.idx, pc_hash_bytes(str[i], 16), i);
    }
    printf("  note %d crafted strings: %zu slots walked to find them all\n", N, walked);
    T_CHECK(walked < 8 * (size_t)N);
    pc_strtab_free(&st);
}
