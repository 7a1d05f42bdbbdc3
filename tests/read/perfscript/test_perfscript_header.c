/* perf script --header's block when the recorded command line held
 * newlines: perf prints the command line as recorded, so its later lines
 * start without '#' inside the block, and may look like anything, a sample
 * header or a frame included. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/perfscript/perfscript.h"
#include "t.h"
#include "test_util.h"

/* What `perf record -g -- sh -c 'SCRIPT'` shows, with the lines after the
 * script's first. */
#define HEADER_WITH(MORE)                                                     \
    "# ========\n"                                                            \
    "# captured on    : Wed Nov 25 14:48:56 2026\n"                           \
    "# header version : 1\n"                                                  \
    "# hostname : vm\n"                                                       \
    "# perf version : 6.1.192\n"                                              \
    "# arch : x86_64\n"                                                       \
    "# cmdline : /usr/bin/perf record -g -- sh -c true\n"                     \
    MORE                                                                      \
    "# event : name = cpu-clock:ppp, , id = { 3597, 3598 }, type = 1\n"       \
    "# missing features: TRACING_DATA BRANCH_STACK \n"                        \
    "# ========\n"                                                            \
    "#\n"

/* A second line of the script as perf prints it (a space ends the
 * command line). */
#define HEADER_BLOCK HEADER_WITH("echo hi \n")
/* Lines that look like a sample header and a frame. */
#define HEADER_TRICKY HEADER_WITH("burn 12 3.5: 1 cpu-clock: \n\t1234 helper (/tmp/burn)\r\n \n")

#define SAMPLES                                                               \
    "              sh  5171  6575.082160:     250000 cpu-clock:ppp: \n"       \
    "\t    7fc2d5d6369e handle_amd+0x7e (/usr/lib/ld-linux-x86-64.so.2)\n"     \
    "\t    7fc2d5d58000 _dl_start+0x10 (/usr/lib/ld-linux-x86-64.so.2)\n"     \
    "\n"                                                                      \
    "              sh  5171  6575.082408:     250000 cpu-clock:ppp: \n"       \
    "\t    7fc2d5d5899a _dl_lookup_symbol_x+0x2a (/usr/lib/ld-linux-x86-64.so.2)\n" \
    "\n"

static void check_samples(const char *text)
{
    pc_profile *p = NULL;
    pc_error err;
    int st = convert_bytes(text, strlen(text), NULL, &p, &err);
    T_EQ_INT(st, PC_OK);
    if (st != PC_OK) {
        t_fail(__FILE__, __LINE__, "%s", err.message);
        return;
    }
    T_EQ_STR(pc_str(&p->str, p->meta.source), "perf script");
    /* The command line's lines make no thread, sample or frame. */
    T_EQ_INT(p->thread.n, 1);
    T_EQ_INT(p->sample.n, 2);
    T_EQ_INT(find_thread(p, 12), PC_NONE);
    T_EQ_INT(frame_category(p, "helper"), -1);
    uint32_t t = find_thread(p, 5171);
    T_CHECK(t != PC_NONE);
    if (t != PC_NONE && thread_samples(p, t) == 2) {
        size_t i = p->sample.first[t];
        T_EQ_STR(stack_text(p, p->sample.stack[i]), "_dl_start;handle_amd");
        T_EQ_STR(stack_text(p, p->sample.stack[i + 1]), "_dl_lookup_symbol_x");
    }
    pc_profile_free(p);
}

TEST(perfscript_header_cmdline_newlines)
{
    t_case("perfscript_header: the block first");
    check_samples(HEADER_BLOCK SAMPLES);
    t_case("perfscript_header: lines like samples and frames");
    check_samples(HEADER_TRICKY SAMPLES);
    /* After a comment, so that detection reads the block line by line. */
    t_case("perfscript_header: after a comment");
    check_samples("# saved by a script\n\n" HEADER_BLOCK SAMPLES);
    t_case("perfscript_header: detected after a comment");
    static const char after[] = "#\n" HEADER_BLOCK SAMPLES;
    T_EQ_INT(ps_detect((const uint8_t *)after, sizeof after - 1), 1);
    /* The window ends inside the block. */
    T_EQ_INT(ps_detect((const uint8_t *)after, 120), 1);
    static const char tricky[] = "#\n" HEADER_TRICKY SAMPLES;
    T_EQ_INT(ps_detect((const uint8_t *)tricky, sizeof tricky - 1), 1);
}

TEST(perfscript_header_block_only_first)
{
    /* A rule after the samples begins no block: the lines after it are
     * still samples, and a line that is none is still refused. */
    t_case("perfscript_header: a rule after samples");
    check_samples("              sh  5171  6575.082160:     250000 cpu-clock:ppp: \n"
                  "\t    7fc2d5d6369e handle_amd+0x7e (/usr/lib/ld-linux-x86-64.so.2)\n"
                  "\t    7fc2d5d58000 _dl_start+0x10 (/usr/lib/ld-linux-x86-64.so.2)\n"
                  "\n"
                  "# ========\n"
                  "              sh  5171  6575.082408:     250000 cpu-clock:ppp: \n"
                  "\t    7fc2d5d5899a _dl_lookup_symbol_x+0x2a "
                  "(/usr/lib/ld-linux-x86-64.so.2)\n");

    t_case("perfscript_header: text after the block is read as samples");
    static const char bad[] = HEADER_BLOCK "echo hi\n" SAMPLES;
    pc_profile *p = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(bad, sizeof bad - 1, NULL, &p, &err), PC_EINPUT);
    T_CONTAINS(err.message, "line 13: expected a sample header");
    pc_profile_free(p);
}
