/* Reads simpleperf's own --dump-protobuf-report text, so tests can derive
 * expected values from simpleperf's reading of a file rather than from
 * profconv's. */
#ifndef PROFCONV_TESTS_DUMP_PARSE_H
#define PROFCONV_TESTS_DUMP_PARSE_H

#include <stddef.h>
#include <stdint.h>

typedef struct dump_sample {
    uint64_t time;
    int64_t tid;
    unsigned event;
    size_t n_frames;
    size_t n_exec[4];   /* frames per execution type, when given */
} dump_sample;

typedef struct dump_thread {
    int64_t tid, pid;
    char name[64];
} dump_thread;

typedef struct dump {
    dump_sample *samples;
    size_t n_samples;
    dump_thread *threads;
    size_t n_threads;
    uint64_t lost_count, sample_count;
} dump;

/* Parses dumps/<input base name>.dump.txt[.gz]; 0 on success. */
int dump_load(const char *input_base, dump *d);
void dump_free(dump *d);

/* The pid and name simpleperf gives a tid, or -1 / "". */
int64_t dump_pid(const dump *d, int64_t tid);
const char *dump_name(const dump *d, int64_t tid);

#endif
