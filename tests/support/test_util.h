/* Helpers shared by the tests: converting fixtures and reading the model
 * back as text. */
#ifndef PROFCONV_TESTS_TEST_UTIL_H
#define PROFCONV_TESTS_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "profconv.h"

/* Converts fx_android with o (NULL: defaults); records a failure and
 * returns NULL if conversion fails. */
pc_profile *convert_fixture(const pc_options *o);
/* Converts fx_android and returns the status, discarding the profile. */
int convert_fixture_status(const pc_options *o, pc_error *err);
/* Converts len bytes; returns the status and *out (NULL on failure). */
int convert_bytes(const void *data, size_t len, const pc_options *o,
                  pc_profile **out, pc_error *err);

/* The same without refusing a result that has nothing to show: for tests
 * of what a reader decodes. */
int convert_bytes_unchecked(const void *data, size_t len, const pc_options *o,
                            pc_profile **out, pc_error *err);

/* p written in format (enum pc_format, no gzip) as a NUL-terminated string
 * of *len bytes (len may be NULL); records a failure and returns NULL when
 * writing fails.  Caller frees. */
char *written_text(const pc_profile *p, int format, size_t *len);

/* Converts the corpus input inputs/<base> with o; records a failure and
 * returns NULL if it cannot be read or converted. */
pc_profile *convert_input(const char *base, const pc_options *o);
/* Converts inputs/<base> and returns the status, discarding the profile. */
int convert_input_status(const char *base, const pc_options *o, pc_error *err);

uint32_t find_thread(const pc_profile *p, int64_t tid);
/* The thread of pid and tid, or PC_NONE. */
uint32_t thread_of(const pc_profile *p, int64_t pid, int64_t tid);
size_t thread_samples(const pc_profile *p, uint32_t t);

/* These return text in one of a few rotating static buffers. */
/* Sample times of thread t relative to FX_T0, in microseconds, "a,b,c". */
const char *thread_times_us(const pc_profile *p, uint32_t t);
/* Function names of a stack, root first, joined by ';'. */
const char *stack_text(const pc_profile *p, uint32_t stack);

/* The text of string id, "(none)" for PC_NONE. */
const char *str_of(const pc_profile *p, uint32_t id);

/* Category of the first frame whose function is named name, or -1. */
int frame_category(const pc_profile *p, const char *name);

/* Collects log lines sent through o's callback until the next start. */
void log_capture_start(pc_options *o);
const char *log_capture_text(void);

/* Reads a whole file (gunzipping *.gz) as a NUL-terminated string; NULL
 * if unreadable.  Caller frees. */
char *read_text(const char *path);

/* Whether Node.js 20 or newer runs here, which ../shared/fxprof/validate
 * and the screenshot scripts need (asked once). */
int t_node20(void);
/* The report of ../shared/fxprof/validate --json on the n files, parsed:
 * an array with one object per file (NULL when validate gave none; the
 * caller frees it with j_free).  Needs t_shared() and t_node20(). */
struct jv *t_validate(const char *const *files, size_t n);
/* The same for p written in the firefox format as tmpdir/name (a
 * failure is recorded when it cannot be written). */
struct jv *t_validate_profile(const pc_profile *p, const char *name);

/* perf record as the tests run it.  Without --no-bpf-event, perf 6.1
 * waits out a one-second poll of its BPF side-band thread after the
 * program ends (1.1 s against 0.2 s for `true`); the tests' programs load
 * no BPF, so the records it would add are none of theirs. */
#define T_PERF_RECORD "perf record -q --no-bpf-event"

/* Whether name is an executable file in $PATH. */
int t_in_path(const char *name);

/* Writes a simpleperf file of n samples on 4 threads to path: with
 * varied, stacks of 24 random frames over 400 symbols (nearly every one
 * new); otherwise one 30-frame path whose leaf address varies.  Returns
 * the file's size, 0 on failure. */
size_t write_simpleperf_file(const char *path, size_t n, int varied);

/* Writes len bytes to a pipe it keeps open while a child converts from it
 * (options.threads as given, an alarm ending it after 20 s): 0 when the
 * conversion failed with an input error whose message holds want, that
 * is, at once, not when the pipe sent more or closed; else the child's
 * exit status (or minus its signal), and a failure recorded. */
int pipe_fails_at_once(const void *data, size_t len, int threads, const char *want);

/* Gzips len bytes as one member into *out (malloc'd); returns its size. */
size_t gzip_bytes(const void *data, size_t len, unsigned char **out);
/* One gzip member inflated whole: the bytes (malloc'd, *out_len), or NULL
 * when it is damaged or anything follows it. */
unsigned char *gunzip_bytes(const void *data, size_t len, size_t *out_len);

#endif
