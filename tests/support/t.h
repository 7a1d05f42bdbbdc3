/* A tiny test harness.
 *
 * A test is a function declared with TEST(name); it registers itself at
 * start-up.  Each test counts as one case unless it opens named cases with
 * t_case(), which lets one function check every file of a corpus and report
 * each file as its own pass or failure.  Checks never abort a case: every
 * failed check prints one line with its source position, so one run shows
 * all that is wrong.  The runner ends with "N passed, N failed[, N skipped]".
 *
 * Tests run from the project root; t_shared() finds ../shared when present.
 */
#ifndef PROFCONV_TESTS_T_H
#define PROFCONV_TESTS_T_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef void (*t_fn)(void);
/* slow: the test takes seconds; the runner starts those first, so that
 * none is left running alone at the end while the other processes wait. */
void t_register(const char *name, t_fn fn, int slow);

#define TEST_REGISTERED(name, slow)                                       \
    static void name(void);                                               \
    __attribute__((constructor)) static void name##_register(void)        \
    {                                                                     \
        t_register(#name, name, slow);                                    \
    }                                                                     \
    static void name(void)

#define TEST(name) TEST_REGISTERED(name, 0)
/* A test of seconds (a sweep of runs, a recording, the profiler). */
#define TEST_SLOW(name) TEST_REGISTERED(name, 1)

/* Starts a named case inside the current test (ends the previous one). */
void t_case(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Marks the current case skipped, with the reason printed once. */
void t_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Records a failure of the current case. */
void t_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Number of failures recorded in the current case so far. */
int t_case_failures(void);

/* Path of the shared corpus folder ("../shared"), or NULL when absent. */
const char *t_shared(void);
/* Path of a scratch directory private to this run (created on demand). */
const char *t_tmpdir(void);
/* Path of the profconv binary under test. */
const char *t_profconv(void);
/* The same as an absolute path, for tests that run it from elsewhere
 * (empty if the working directory cannot be read). */
const char *t_profconv_abs(void);

/* Reads a whole file (gunzipping *.gz); NULL if unreadable.  Caller frees. */
unsigned char *t_read_file(const char *path, size_t *size);

#define T_CHECK(cond)                                                     \
    do {                                                                  \
        if (!(cond))                                                      \
            t_fail(__FILE__, __LINE__, "check failed: %s", #cond);        \
    } while (0)

#define T_EQ_INT(a, b)                                                    \
    do {                                                                  \
        long long t_a_ = (long long)(a), t_b_ = (long long)(b);           \
        if (t_a_ != t_b_)                                                 \
            t_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", \
                   #a, t_a_, #b, t_b_);                                   \
    } while (0)

#define T_EQ_STR(a, b)                                                    \
    do {                                                                  \
        const char *t_a_ = (a), *t_b_ = (b);                              \
        if (!t_a_ || !t_b_ || strcmp(t_a_, t_b_) != 0)                    \
            t_fail(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"",   \
                   #a, t_a_ ? t_a_ : "(null)", t_b_ ? t_b_ : "(null)");   \
    } while (0)

/* True when needle occurs in haystack. */
#define T_CONTAINS(haystack, needle)                                      \
    do {                                                                  \
        const char *t_h_ = (haystack), *t_n_ = (needle);                  \
        if (!t_h_ || !strstr(t_h_, t_n_))                                 \
            t_fail(__FILE__, __LINE__, "\"%s\" does not contain \"%s\"",  \
                   t_h_ ? t_h_ : "(null)", t_n_);                         \
    } while (0)

#endif
