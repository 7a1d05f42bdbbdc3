/* The text summary: shares decoded from a hand-built profile, every line
 * within 80 columns, and pc_diff_changes on a comparison profile whose
 * one function doubled. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hand_profile.h"
#include "t.h"
#include "test_util.h"
#include "write/changes.h"

/* The line of text that starts with prefix, after the line holding
 * section; copied into buf. */
static const char *line_after(const char *text, const char *section, const char *prefix,
                              char *buf, size_t size)
{
    const char *s = text ? strstr(text, section) : NULL;
    size_t k = strlen(prefix);
    for (; s && *s; s += strcspn(s, "\n"), s += *s == '\n') {
        if (strncmp(s, prefix, k) == 0) {
            snprintf(buf, size, "%.*s", (int)strcspn(s, "\n"), s);
            return buf;
        }
    }
    return NULL;
}

TEST(text_shares_of_a_hand_built_profile)
{
    /* main: a;b 30, a;c 70 (100 ns); worker: x 100 ns; all 200 ns. */
    static const hand_sample s[] = {
        {"main", "a;b", 30}, {"main", "a;c", 70}, {"worker", "x", 100}, {"worker", "x", 0},
    };
    pc_profile *p = hand_profile(s, 4, PC_UNIT_NS, NULL);
    T_CHECK(p != NULL);
    if (!p)
        return;
    char *t = written_text(p, PC_FORMAT_TEXT, NULL);
    char buf[256];
    T_CHECK(t && strstr(t, "Event cpu-clock: 4 samples, in ns\n"));
    T_CHECK(t && strstr(t, "Threads: 2 with samples\n"));
    /* Equal weights: main (fewer samples) after worker (more). */
    T_CHECK(t && strstr(t, "Thread worker (pid 100, tid 101)\n  2 samples, 100 ns, 50.0% of all"));
    T_CHECK(t && strstr(t, "Thread main (pid 100, tid 100)\n  2 samples, 100 ns, 50.0% of all"));
    /* Self: c then b; total: a at the whole thread. */
    const char *c = line_after(t, "Thread main", "  c ", buf, sizeof buf);
    T_CHECK(c && strstr(c, " 70 ns   70.0%   35.0%"));
    const char *self = t ? strstr(strstr(t, "Thread main"), "Top by self") : NULL;
    T_CHECK(self && strstr(self, "\n  c ") < strstr(self, "\n  b "));
    const char *a = line_after(t, "Top by total", "  a ", buf, sizeof buf);
    T_CHECK(a && strstr(a, " 100 ns  100.0%   50.0%"));
    T_CHECK(t && !strstr(t, "Changes"));
    free(t);
    pc_profile_free(p);
}

/* Whether every line of text has at most 80 characters (UTF-8 decoded). */
static int within_80(const char *text, char *bad, size_t size)
{
    size_t cols = 0;
    const char *start = text;
    for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
        if (*s == '\n') {
            cols = 0;
            start = (const char *)s + 1;
            continue;
        }
        if ((*s & 0xc0) != 0x80 && ++cols > 80) {
            snprintf(bad, size, "%.*s", (int)strcspn(start, "\n"), start);
            return 0;
        }
    }
    return 1;
}

TEST(text_lines_fit_80_columns)
{
    char long_name[400], long_utf8[400], long_thread[300];
    memset(long_name, 'n', 300);
    long_name[300] = 0;
    size_t o = 0;
    for (int i = 0; i < 120; i++)
        o += (size_t)snprintf(long_utf8 + o, sizeof long_utf8 - o, "\xc3\xa9");
    memset(long_thread, 't', 200);
    long_thread[200] = 0;
    char path1[800], path2[800];
    snprintf(path1, sizeof path1, "root;%s", long_name);
    snprintf(path2, sizeof path2, "root;%s;leaf", long_utf8);
    hand_sample s[30] = {
        {long_thread, path1, 123456789012LL},
        {"diff", path1, -5000},
        {"diff", path2, 9000},
        {"diff", path2, -3000},
    };
    size_t n = 4;
    /* More than ten threads, so the "and N more" line is written too. */
    static char names[20][16];
    for (int i = 0; i < 14; i++, n++) {
        snprintf(names[i], sizeof names[i], "w%d", i);
        s[n] = (hand_sample){names[i], "x;y", 10 + i};
    }
    pc_profile *p = hand_profile(s, n, PC_UNIT_NS, "diff");
    T_CHECK(p != NULL);
    if (!p)
        return;
    char *t = written_text(p, PC_FORMAT_TEXT, NULL);
    char bad[1024] = "";
    T_CHECK(t != NULL);
    if (t && !within_80(t, bad, sizeof bad))
        t_fail(__FILE__, __LINE__, "line over 80 columns: %s", bad);
    T_CHECK(t && strstr(t, "Changes (base -> new)"));
    T_CHECK(t && strstr(t, "more threads"));
    T_CHECK(t && strstr(t, "nnn..."));
    T_CHECK(t && strstr(t, "\xc3\xa9..."));
    free(t);
    pc_profile_free(p);
    /* A converted recording too. */
    p = convert_fixture(NULL);
    t = p ? written_text(p, PC_FORMAT_TEXT, NULL) : NULL;
    T_CHECK(t != NULL);
    if (t && !within_80(t, bad, sizeof bad))
        t_fail(__FILE__, __LINE__, "line over 80 columns: %s", bad);
    free(t);
    pc_profile_free(p);
}

TEST(text_diff_changes_doubled_function)
{
    /* Base: f 100, g 100, h 200 (400); new: f doubled to 200, g and h
     * unchanged (500).  Shares move by each side's total. */
    static const hand_sample s[] = {
        {"diff", "main;f", -100}, {"diff", "main;g", -100}, {"diff", "main;h", -200},
        {"diff", "main;f", 200},  {"diff", "main;g", 100},  {"diff", "main;h", 200},
        {"other", "main;f", 999},
    };
    pc_profile *p = hand_profile(s, 7, PC_UNIT_NS, "diff");
    T_CHECK(p != NULL);
    if (!p)
        return;
    pc_change *c = NULL;
    size_t n = 0;
    T_EQ_INT(pc_diff_changes(p, &c, &n), 0);
    T_EQ_INT(n, 4);  /* main, f, g, h */
    const double base = 100 + 100 + 200, next = 200 + 100 + 200;
    if (n == 4) {
        T_EQ_STR(str_of(p, c[0].name), "f");
        T_CHECK(fabs(c[0].base_self - 100 / base) < 1e-12);
        T_CHECK(fabs(c[0].new_self - 200 / next) < 1e-12);
        T_CHECK(c[0].new_self - c[0].base_self > 0);
        T_CHECK(fabs(c[0].new_self - c[0].base_self - (200 / next - 100 / base)) < 1e-12);
        T_CHECK(fabs(c[0].new_total - 200 / next) < 1e-12);
        /* h: 0.5 -> 0.4, then g: 0.25 -> 0.2, then main (no self). */
        T_EQ_STR(str_of(p, c[1].name), "h");
        T_CHECK(fabs(c[1].new_self - c[1].base_self - (200 / next - 200 / base)) < 1e-12);
        T_EQ_STR(str_of(p, c[2].name), "g");
        T_EQ_STR(str_of(p, c[3].name), "main");
        T_CHECK(c[3].base_self == 0 && c[3].new_self == 0);
        T_CHECK(c[3].base_total == 1 && c[3].new_total == 1);
    }
    free(c);
    char *t = written_text(p, PC_FORMAT_TEXT, NULL);
    char buf[256];
    const char *f = line_after(t, "Changes (base -> new)", "  f ", buf, sizeof buf);
    T_CHECK(f && strstr(f, " 25.00  40.00  +15.00   25.00  40.00  +15.00"));
    free(t);
    pc_profile_free(p);
    /* No comparison thread: nothing. */
    static const hand_sample plain[] = {{"t", "a", 5}};
    p = hand_profile(plain, 1, PC_UNIT_NS, NULL);
    c = NULL;
    n = 7;
    T_EQ_INT(p ? pc_diff_changes(p, &c, &n) : -1, 0);
    T_EQ_INT(n, 0);
    T_CHECK(c == NULL);
    pc_profile_free(p);
}
