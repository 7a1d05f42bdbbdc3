/* The command line's output names, all from the library's format table:
 * which format and compression a name asks for, the names --pprof-split
 * makes, the list of known formats; and its messages, which name flags
 * where the library names its options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "test_util.h"

/* Runs profconv ARGS in the scratch directory; returns its exit code and
 * leaves its standard error in *err (malloc'd). */
static int run_in_tmp(const char *args, char **err)
{
    char exe[1024], cmd[4096];
    snprintf(exe, sizeof exe, "%s", t_profconv_abs());
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s 2> stderr.txt", t_tmpdir(), exe, args);
    int st = system(cmd);
    char path[1024];
    snprintf(path, sizeof path, "%s/stderr.txt", t_tmpdir());
    *err = read_text(path);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The first bytes of the scratch file name, or -1s when it is missing. */
static void head_of(const char *name, unsigned char head[2])
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", t_tmpdir(), name);
    head[0] = head[1] = 0xff;
    FILE *f = fopen(path, "rb");
    if (f) {
        if (fread(head, 1, 2, f) != 2)
            head[0] = head[1] = 0xff;
        fclose(f);
    }
}

static int is_gzip(const unsigned char h[2]) { return h[0] == 0x1f && h[1] == 0x8b; }
/* A pprof Profile starts with field 1 (sample_type), length-delimited. */
static int is_proto(const unsigned char h[2]) { return h[0] == 0x0a; }

TEST(cli_output_names)
{
    char input[1024];
    snprintf(input, sizeof input, "%s/names.trace", t_tmpdir());
    write_simpleperf_file(input, 50, 1);
    static const struct {
        const char *args, *file;
        int gzip, proto, json;
    } cases[] = {
        /* A ".pb" name is pprof's bare protobuf (it used to be taken for
         * uncompressed Firefox JSON). */
        {"names.trace -o a.pb", "a.pb", 0, 1, 0},
        {"names.trace -o b.pprof", "b.pprof", 1, 0, 0},
        {"names.trace -o c.pb.gz", "c.pb.gz", 1, 0, 0},
        {"--to pprof names.trace -o d.out", "d.out", 1, 0, 0},
        {"names.trace -o e.json", "e.json", 0, 0, 1},
        {"--to folded names.trace -o f.pb", "f.pb", 0, 0, 0},
        {"--to pprof --no-gzip names.trace -o g.pprof", "g.pprof", 0, 1, 0},
        {"names.trace", "names.json.gz", 1, 0, 0},
        {"--to speedscope names.trace", "names.speedscope.json", 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        t_case("cli_output_names: %s", cases[i].args);
        char *err = NULL;
        T_EQ_INT(run_in_tmp(cases[i].args, &err), 0);
        unsigned char h[2];
        head_of(cases[i].file, h);
        T_EQ_INT(is_gzip(h), cases[i].gzip);
        if (!cases[i].gzip) {
            T_EQ_INT(is_proto(h), cases[i].proto);
            T_EQ_INT(h[0] == '{', cases[i].json);
        }
        free(err);
    }
}

TEST(cli_split_names)
{
    char input[1024];
    snprintf(input, sizeof input, "%s/split.trace", t_tmpdir());
    write_simpleperf_file(input, 50, 1);
    /* Each name gets the pid before the ending that names pprof. */
    static const char *const names[] = {"s1.pb", "s2.pprof", "s3.pb.gz"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        t_case("cli_split_names: %s", names[i]);
        char args[256], *err = NULL;
        snprintf(args, sizeof args, "--pprof-split process split.trace -o %s", names[i]);
        T_EQ_INT(run_in_tmp(args, &err), 0);
        /* "wrote s1.PID.pb": find the pid the CLI used. */
        const char *w = err ? strstr(err, "wrote ") : NULL;
        T_CHECK(w != NULL);
        if (w) {
            char made[256];
            T_EQ_INT(sscanf(w, "wrote %255s", made), 1);
            size_t stem = strcspn(names[i], ".");
            T_CHECK(strncmp(made, names[i], stem) == 0);
            const char *dot = strchr(made + stem + 1, '.');
            T_CHECK(dot != NULL);
            if (dot) {
                T_EQ_STR(dot, strchr(names[i], '.'));
                for (const char *c = made + stem + 1; c < dot; c++)
                    T_CHECK(*c >= '0' && *c <= '9');
            }
            unsigned char h[2];
            head_of(made, h);
            T_EQ_INT(is_gzip(h), strcmp(names[i], "s1.pb") != 0);
        }
        free(err);
    }
}

TEST(cli_messages_name_flags)
{
    char input[1024];
    snprintf(input, sizeof input, "%s/flags.trace", t_tmpdir());
    write_simpleperf_file(input, 50, 1);
    static const struct {
        const char *args, *says;
        int status;
    } cases[] = {
        {"--to yaml flags.trace", "unknown output format 'yaml' (known: firefox, gecko, "
                                  "folded, pprof, speedscope, svg, text)", 1},
        {"--event nope flags.trace -o x.json", "--event nope: no such event", 1},
        {"--thread-name '(' flags.trace -o x.json", "--thread-name '(':", 1},
        {"--time-range 5,1 flags.trace -o x.json",
         "--time-range: the range ends before it begins", 1},
        {"--max-depth 2 flags.trace -o x.json", "--max-depth sets the limit", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        t_case("cli_messages_name_flags: %s", cases[i].args);
        char *err = NULL;
        T_EQ_INT(run_in_tmp(cases[i].args, &err), cases[i].status);
        T_CONTAINS(err ? err : "", cases[i].says);
        T_CHECK(err && !strstr(err, "options."));
        free(err);
    }
}
