/* Messages never carry a byte a terminal would act on: the escaping rules
 * one by one, then names from every reader and from the input's file name
 * that reach errors and warnings, checked byte by byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "base/escape.h"
#include "pf_encode.h"
#include "sp_encode.h"
#include "t.h"
#include "test_util.h"

/* A name a crafted file could hold: a terminal title, a screen clear, a
 * line break, DEL, the C1 CSI as UTF-8, a stray byte, and an é that is
 * fine as it is. */
#define HOSTILE "evil\x1b]0;pwned\x07\x1b[2J\n\x7f\xc2\x9b\xff-\xc3\xa9"
#define HOSTILE_SHOWN "evil\\x1b]0;pwned\\x07\\x1b[2J\\x0a\\x7f\\xc2\\x9b\\xff-\xc3\xa9"

/* Whether s is safe to print: no byte below 0x20, no 0x7f, and nothing
 * the escaping would change (so valid UTF-8 without C1 controls). */
static int safe(const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return 0;
    char again[4096];
    return strcmp(pc_escape(again, sizeof again, s), s) == 0;
}

static char logged[16384];
static int log_lines, unsafe_lines;

static void check_log(void *ctx, int level, const char *message)
{
    (void)ctx;
    (void)level;
    log_lines++;
    if (!safe(message)) {
        unsafe_lines++;
        t_fail(__FILE__, __LINE__, "log line with a control byte: %s", message);
    }
    size_t used = strlen(logged);
    snprintf(logged + used, sizeof logged - used, "%s\n", message);
}

static void options(pc_options *o)
{
    pc_options_init(o);
    o->log = check_log;
    logged[0] = 0;
    log_lines = unsafe_lines = 0;
}

/* Converts data (named name) with o; every message is checked; returns
 * the error message (static) or "" on success. */
static const char *convert_checked(const void *data, size_t len, const char *name,
                                   const pc_options *o)
{
    static pc_error err;
    pc_input *in;
    pc_profile *p = NULL;
    memset(&err, 0, sizeof err);
    if (pc_input_open_memory(&in, data, len, name, &err) != PC_OK)
        return err.message;
    int st = pc_convert(in, o, &p, &err);
    pc_input_close(in);
    pc_profile_free(p);
    if (st == PC_OK)
        return "";
    if (!safe(err.message))
        t_fail(__FILE__, __LINE__, "error message with a control byte: %s", err.message);
    return err.message;
}

TEST(escape_rules)
{
    char out[256];
    T_EQ_STR(pc_escape(out, sizeof out, HOSTILE), HOSTILE_SHOWN);
    /* Printable ASCII, a backslash and valid UTF-8 of every length stay. */
    const char *plain = "a b~\\x1b \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0";
    T_EQ_STR(pc_escape(out, sizeof out, plain), plain);
    /* Overlong forms, surrogates, past U+10FFFF, a cut sequence, a lone
     * continuation byte. */
    T_EQ_STR(pc_escape(out, sizeof out, "\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82|\x80"),
             "\\xc0\\xaf|\\xed\\xa0\\x80|\\xf4\\x90\\x80\\x80|\\xe2\\x82|\\x80");
    T_EQ_STR(pc_escape(out, sizeof out, "\t\r\x01\x1f\x7f"), "\\x09\\x0d\\x01\\x1f\\x7f");
    /* Escaping twice changes nothing more: messages nest. */
    char twice[256];
    pc_escape(twice, sizeof twice, pc_escape(out, sizeof out, HOSTILE));
    T_EQ_STR(twice, HOSTILE_SHOWN);
    T_CHECK(safe(out));
    /* Every byte value alone. */
    for (int c = 1; c < 256; c++) {
        char in[2] = {(char)c, 0};
        pc_escape(out, sizeof out, in);
        T_CHECK(safe(out));
        T_EQ_INT(strlen(out), c >= 0x20 && c < 0x7f ? 1 : 4);
    }
}

TEST(escape_cuts_whole_characters)
{
    /* Cut to fit, never inside an escape or a character. */
    char out[8];
    T_EQ_STR(pc_escape(out, 6, "ab\x1b" "cd"), "ab");
    T_EQ_STR(pc_escape(out, 7, "ab\x1b" "cd"), "ab\\x1b");
    T_EQ_STR(pc_escape(out, 4, "a\xe2\x82\xac"), "a");
    T_EQ_STR(pc_escape(out, 5, "a\xe2\x82\xac"), "a\xe2\x82\xac");
    T_EQ_STR(pc_escape(out, 1, "abc"), "");
    for (size_t size = 1; size < sizeof out; size++) {
        pc_escape(out, size, HOSTILE);
        T_CHECK(strlen(out) < size);
        T_CHECK(safe(out));
    }
}

TEST(escape_library_messages)
{
    pc_error err;
    T_EQ_INT(pc_fail(&err, PC_EINPUT, "%s: offset 3: bad name '%s'", "in\x1b[2J", HOSTILE),
             PC_EINPUT);
    T_EQ_STR(err.message, "in\\x1b[2J: offset 3: bad name '" HOSTILE_SHOWN "'");
    /* A message longer than the room, escapes and all: cut, still safe. */
    char big[3000];
    memset(big, 0x1b, sizeof big - 1);
    big[sizeof big - 1] = 0;
    pc_fail(&err, PC_EINPUT, "%s", big);
    T_CHECK(safe(err.message));
    T_CHECK(strlen(err.message) < sizeof err.message);
    pc_options o;
    options(&o);
    pc_log(&o, PC_LOG_WARN, "thread %s", HOSTILE);
    T_EQ_INT(log_lines, 1);
    T_CONTAINS(logged, "thread " HOSTILE_SHOWN);
}

/* A simpleperf recording whose event, thread, file and symbol names are
 * all hostile. */
static void hostile_simpleperf(spe *e)
{
    static const char *const events[] = {HOSTILE, "cpu-clock\x1b[2J"};
    static const char *const syms[] = {"main\x1b]2;x\x07", HOSTILE};
    const spe_frame chain[] = {{0x10, 0, 1, -1}, {0x20, 0, 0, -1}};
    spe_begin(e);
    spe_meta(e, events, 2, "com.evil\x1b[2J", NULL, NULL, NULL, 0);
    spe_sample(e, 1000, 7, 100, 0, chain, 2, NULL);
    spe_sample(e, 2000, 7, 100, 1, chain, 2, NULL);
    spe_sample(e, 3000, 8, 100, 0, chain, 2, NULL);
    spe_file(e, 0, "/data/\x1b[2J/lib" HOSTILE ".so", syms, 2);
    spe_thread(e, 7, 7, HOSTILE);
    spe_thread(e, 8, 7, "\x1b]0;worker\x07");
    spe_end(e);
}

TEST(escape_simpleperf_names)
{
    spe e = {0};
    hostile_simpleperf(&e);
    pc_options o;
    options(&o);
    /* The event chosen and the ones left out are listed. */
    T_EQ_STR(convert_checked(e.out.data, e.out.len, "sp", &o), "");
    T_CONTAINS(logged, HOSTILE_SHOWN);
    T_CHECK(log_lines > 0);
    /* An unknown event lists the recording's. */
    options(&o);
    o.event = "none\x1b[2J";
    const char *m = convert_checked(e.out.data, e.out.len, "sp", &o);
    T_CONTAINS(m, "none\\x1b[2J");
    T_CONTAINS(m, HOSTILE_SHOWN);
    /* Filters that keep nothing list the threads with samples. */
    options(&o);
    int64_t tid = 999;
    o.tids = (pc_ids){&tid, 1};
    m = convert_checked(e.out.data, e.out.len, "sp", &o);
    T_CONTAINS(m, "\\x1b]0;worker\\x07");
    T_CONTAINS(m, "evil\\x1b]0;pwned");
    spe_free(&e);
}

TEST(escape_perfetto_names)
{
    static const char *const cmd[] = {HOSTILE};
    pb_buf b = {0};
    /* A timebase named by the trace, as traced_perf's config allows. */
    size_t pk = pfe_packet(&b, 1);
    pb_uint(&b, PFE_FLAGS, 1);
    size_t d = pb_begin(&b, PFE_DEFAULTS);
    size_t ps = pb_begin(&b, 12);
    size_t tb = pb_begin(&b, 1);
    pb_uint(&b, 4, 1);
    pb_string(&b, 10, "cycles\x1b[2J\n");
    pb_end(&b, tb);
    pb_end(&b, ps);
    pb_end(&b, d);
    pb_end(&b, pk);
    pk = pfe_packet(&b, 0);
    size_t pt = pb_begin(&b, 2);
    pfe_process(&b, 5, cmd, 1);
    pfe_thread(&b, 6, 5, "\x1b]0;render\x07");
    pb_end(&b, pt);
    pb_end(&b, pk);
    pk = pfe_packet(&b, 1);
    pb_uint(&b, PFE_TIMESTAMP, 1000);
    size_t in = pb_begin(&b, PFE_INTERNED);
    pfe_str(&b, PFE_FUNCTION_NAMES, 1, HOSTILE);
    pfe_frame(&b, PFE_FRAMES, 1, 1, 0, 0x10);
    uint64_t cs[] = {1};
    pfe_callstack(&b, PFE_CALLSTACKS, 1, cs, 1, 0);
    pb_end(&b, in);
    pfe_perf_sample(&b, 0, 5, 6, 1, 100);
    pb_end(&b, pk);

    pc_options o;
    options(&o);
    o.event = "none";
    const char *m = convert_checked(b.data, b.len, "pf", &o);
    T_CONTAINS(m, "cycles\\x1b[2J\\x0a");
    options(&o);
    int64_t tid = 999;
    o.tids = (pc_ids){&tid, 1};
    m = convert_checked(b.data, b.len, "pf", &o);
    T_CONTAINS(m, "\\x1b]0;render\\x07");
    /* Cut inside a later packet, under keep_going: a warning. */
    b.len -= 2;
    options(&o);
    o.keep_going = 1;
    convert_checked(b.data, b.len, "pf\x1b[2J", &o);
    options(&o);
    m = convert_checked(b.data, b.len, "pf\x1b[2J", &o);
    T_CONTAINS(m, "pf\\x1b[2J: offset ");
    pb_buf_free(&b);
}

TEST(escape_perf_script_text)
{
    static const char text[] =
        "prog\x1b]0;pwned\x07 10/11 [000] 1.000000: 1 cycles\x1b[2J:\n"
        "\t1000 main\x1b[2J (/bin/prog\x07)\n"
        "\n"
        "garbage\x1b]0;x\x07 line\x7f\xff\n";
    pc_options o;
    options(&o);
    const char *m = convert_checked(text, sizeof text - 1, "ps", &o);
    T_CONTAINS(m, "found \"garbage\\x1b]0;x\\x07 line\\x7f\\xff\"");
    options(&o);
    o.keep_going = 1;
    T_EQ_STR(convert_checked(text, sizeof text - 1, "ps", &o), "");
    T_CONTAINS(logged, "garbage\\x1b]0;x\\x07");
    T_CONTAINS(logged, "cycles\\x1b[2J");
    options(&o);
    o.keep_going = 1;
    int64_t tid = 999;
    o.tids = (pc_ids){&tid, 1};
    m = convert_checked(text, sizeof text - 1, "ps", &o);
    T_CONTAINS(m, "prog\\x1b]0;pwned\\x07");
}

TEST(escape_input_file_name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/in\x1b]0;pwned\x07\n.trace", t_tmpdir());
    FILE *f = fopen(path, "wb");
    if (!f) {
        t_fail(__FILE__, __LINE__, "cannot create %s", path);
        return;
    }
    fputs("not a profile\x1b[2J\n", f);
    fclose(f);
    pc_input *in = NULL;
    pc_profile *p = NULL;
    pc_error err;
    pc_options o;
    options(&o);
    int st = pc_input_open(&in, path, &err);
    if (st == PC_OK)
        st = pc_convert(in, &o, &p, &err);
    pc_input_close(in);
    pc_profile_free(p);
    T_EQ_INT(st, PC_EINPUT);
    T_CHECK(safe(err.message));
    T_CONTAINS(err.message, "in\\x1b]0;pwned\\x07\\x0a.trace: offset ");
    remove(path);
    /* A file that is not there. */
    st = pc_input_open(&in, path, &err);
    T_CHECK(st != PC_OK);
    T_CHECK(safe(err.message));
}

/* Every line of text (standard error) is safe; the number of lines. */
static int safe_lines(const char *text)
{
    int lines = 0;
    char line[4096];
    for (const char *s = text; *s;) {
        size_t n = strcspn(s, "\n");
        snprintf(line, sizeof line, "%.*s", (int)n, s);
        if (!safe(line))
            t_fail(__FILE__, __LINE__, "a line with a control byte: %s", line);
        lines++;
        s += n + (s[n] == '\n');
    }
    return lines;
}

/* Runs the shell command line cmd (profconv's path first) in the scratch
 * folder, standard error checked line by line; returns the exit status,
 * standard error in err. */
static int run_cli(const char *args, char *err, size_t err_size)
{
    char exe[1024], cmd[4096], err_path[700];
    snprintf(exe, sizeof exe, "%s", t_profconv_abs());
    snprintf(err_path, sizeof err_path, "%s/escape.stderr", t_tmpdir());
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s 2>'%s' </dev/null >/dev/null", t_tmpdir(),
             exe, args, err_path);
    int st = system(cmd);
    char *e = read_text(err_path);
    snprintf(err, err_size, "%s", e ? e : "");
    free(e);
    T_CHECK(safe_lines(err) > 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(escape_command_line)
{
    /* Single quotes hand the shell's bytes over as they are. */
#define IN_NAME "in\x1b]0;pwned\x07\n.trace"
#define IN_SHOWN "in\\x1b]0;pwned\\x07\\x0a.trace"
    char path[700], err[8192];
    snprintf(path, sizeof path, "%s/" IN_NAME, t_tmpdir());
    spe e = {0};
    hostile_simpleperf(&e);
    FILE *f = fopen(path, "wb");
    if (!f) {
        t_fail(__FILE__, __LINE__, "cannot create %s", path);
        spe_free(&e);
        return;
    }
    fwrite(e.out.data, 1, e.out.len, f);
    fclose(f);
    spe_free(&e);

    /* Progress, the input's messages, the output's name. */
    T_EQ_INT(run_cli("--progress '" IN_NAME "' -o 'out\x1b[2J\x7f.json'", err, sizeof err), 0);
    T_CONTAINS(err, "profconv: " IN_SHOWN ": read ");
    T_CONTAINS(err, "profconv: " IN_SHOWN ": using event: " HOSTILE_SHOWN);
    T_CONTAINS(err, "profconv: wrote out\\x1b[2J\\x7f.json: ");
    /* The library's error, the command line's own lines. */
    T_EQ_INT(run_cli("'" IN_NAME "' --event 'x\x1b[2J' -o out.json", err, sizeof err), 1);
    T_CONTAINS(err, "--event x\\x1b[2J: no such event");
    T_EQ_INT(run_cli("'" IN_NAME "' --to 'pp\x1b[2J'", err, sizeof err), 1);
    T_CONTAINS(err, "unknown output format 'pp\\x1b[2J'");
    T_EQ_INT(run_cli("'" IN_NAME "' '--\x1b]0;x\x07'", err, sizeof err), 1);
    T_CONTAINS(err, "unknown option '--\\x1b]0;x\\x07'");
    T_EQ_INT(run_cli("'" IN_NAME "' --pid '1\x1b[2J'", err, sizeof err), 1);
    T_CONTAINS(err, "'1\\x1b[2J' is not a comma-separated list");
    T_EQ_INT(run_cli("'" IN_NAME "' -o '" IN_NAME "'", err, sizeof err), 1);
    T_CONTAINS(err, IN_SHOWN ": the output would overwrite the input");
    T_EQ_INT(run_cli("'" IN_NAME "' 'extra\x1b[2J' -o both.json", err, sizeof err), 3);
    T_CONTAINS(err, "extra\\x1b[2J: cannot open");
    /* An input that is not a profile. */
    f = fopen(path, "wb");
    if (f) {
        fputs("garbage\x1b[2J\n", f);
        fclose(f);
    }
    T_EQ_INT(run_cli("'" IN_NAME "' -o out.json", err, sizeof err), 2);
    T_CONTAINS(err, "profconv: " IN_SHOWN ": offset 0: ");
    remove(path);
}
