/* The reader interface, and the toolkit every reader uses.
 *
 * A reader is a row of the reader table (readers.c): a name, how many
 * leading bytes its detect function wants, detect, and read, which fills
 * a model from the input.  Detection tries the rows in order; a new reader
 * is a folder in read/ and a row.
 *
 * The toolkit holds what each reader would otherwise keep its own copy
 * of: finding a thread by its ids, the name of a thread nobody named,
 * and, under keep_going, the count of what was skipped and why reading
 * stopped, told the same way by every reader. */
#ifndef PROFCONV_READ_H
#define PROFCONV_READ_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashtab.h"
#include "model/model.h"
#include "profconv.h"

typedef struct pc_reader_desc {
    const char *name;    /* what messages call the input: "a Perfetto trace" */
    size_t detect_len;   /* bytes detect wants to see, when there are so many */
    int (*detect)(const uint8_t *data, size_t len);
    int (*read)(pc_input *in, pc_profile *p, const pc_options *o, pc_error *err);
} pc_reader_desc;

/* Detects the input's format from its first bytes and reads it with that
 * reader.  An empty input, or one no reader takes, is PC_EINPUT. */
int pc_read_input(pc_input *in, pc_profile *p, const pc_options *o, pc_error *err);

/* How many leading bytes pc_not_ours() wants to see. */
#define PC_NOT_OURS_LEN 65536

/* When data, an input's first len bytes, is a format profconv recognises
 * but does not read (perf.data, pprof, a Chrome JSON trace, profconv's own
 * outputs...), the one-line message saying what it is and what to do;
 * otherwise NULL.  before_readers selects the checks that must run before
 * the reader table (pprof, which would pass for a Perfetto trace); the
 * others run once no reader took the input. */
const char *pc_not_ours(const uint8_t *data, size_t len, int before_readers);

/* ---- Threads ---- */

/* A reader's index of its threads.  Zeroed before use; by_tid set when
 * the input names threads by tid alone until it tells their process
 * later (simpleperf), so that the pid a thread is made with may change. */
typedef struct pc_thread_index {
    pc_htab idx;
    int by_tid;
    /* The threads found last, by tid's low bits (id + 1, 0: none): samples
     * mostly come from a few threads, which then cost no hashing.  A
     * thread's pid and tid never change, so an entry stays right. */
    struct pc_thread_hot {
        int64_t pid, tid;
        uint32_t id1;
    } hot[8];
} pc_thread_index;

/* The thread (pid, tid) of p, made with no name when new.  PC_NONE when
 * out of memory (p->oom is set). */
uint32_t pc_thread_find(pc_thread_index *ix, pc_profile *p, int64_t pid, int64_t tid);

void pc_thread_index_free(pc_thread_index *ix);

/* Names every thread of p that has no name yet "thread TID", the one name
 * every output gives a thread its input never named. */
void pc_name_unnamed_threads(pc_profile *p);

/* ---- keep_going ---- */

/* What keep_going skipped of one kind: how many, and the first reason. */
typedef struct pc_skips {
    size_t n;
    pc_error first;
} pc_skips;

/* Counts one more unit skipped for err's reason. */
void pc_skips_add(pc_skips *s, const pc_error *err);

/* "N WHAT (the first: REASON)" as a warning, when any were; WHAT says
 * what went: "damaged packets skipped". */
void pc_skips_report(const pc_skips *s, const pc_options *o, const char *what);

/* Where keep_going ended an input whose framing broke. */
typedef struct pc_stop {
    int stopped;
    pc_error why;
} pc_stop;

/* "reading stopped early, N UNITS in: REASON" as a warning, when it did. */
void pc_stop_report(const pc_stop *s, const pc_options *o, size_t n, const char *units);

#endif
