/* The Perfetto corpus (../shared/corpus/perfetto) for the tests in this
 * folder: its traces converted as the reader decodes them, the expected.csv
 * files of trace_processor's diff tests, what a profile's frames and heap
 * rows add up to, and the runner of the diff tests' tables
 * (test_perfetto_difftests.c, test_perfetto_heap_difftests.c). */
#ifndef PROFCONV_TESTS_READ_PERFETTO_PF_CORPUS_H
#define PROFCONV_TESTS_READ_PERFETTO_PF_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "profconv.h"

/* ---- Reading the corpus ---- */

/* The trace at path converted with o (NULL: defaults) as the reader
 * decodes it, even with nothing to show; records a failure and returns
 * NULL when it cannot be read or converted. */
pc_profile *convert_path(const char *path, const pc_options *o);
/* The same showing dump n (1-based) of each heap. */
pc_profile *convert_dump(const char *path, int n);

/* An expected.csv of trace_processor: a header row and rows of cells,
 * quoted or bare; "[NULL]" reads as NULL. */
typedef struct csv {
    char **cell;
    size_t cols, rows;
} csv;

int csv_read(const char *path, csv *c);   /* 0, or -1 when unreadable */
void csv_free(csv *c);
int csv_has(const csv *c, const char *name);
/* Row r's cell in column name (NULL when [NULL] or missing). */
const char *csv_get(const csv *c, size_t r, const char *name);
long long csv_int(const csv *c, size_t r, const char *name);

/* ---- Reading the profile ---- */

const char *frame_name(const pc_profile *p, uint32_t f);
const char *frame_module(const pc_profile *p, uint32_t f);  /* "(none)" */
const char *frame_build(const pc_profile *p, uint32_t f);   /* "(none)" */
/* used[f] set for every frame some sample or heap row reaches (malloc'd). */
uint8_t *frames_used(const pc_profile *p);
/* Frames reached by samples or heap rows named name (at rel_pc addr
 * unless addr is -1). */
size_t count_frames(const pc_profile *p, const char *name, long long addr);
/* Every sample and heap stack as "root;...;leaf", one per line (malloc'd). */
char *all_stacks(const pc_profile *p);
/* Fails unless a frame of module (its full path) sits at rel_pc pc, with
 * build id build when build is not NULL. */
void frame_at(const pc_profile *p, const char *module, const char *build, long long pc);

/* Sums of the heap rows shown of one heap (any when heap is NULL) and
 * one process (any when pid < 0). */
typedef struct heap_sum {
    uint64_t alloc, freed, alloc_count, free_count;
    size_t rows, dumps;
    uint64_t time;   /* of the last row */
} heap_sum;

heap_sum heap_sums(const pc_profile *p, const char *heap, int64_t pid);

/* ---- Diff tests ---- */

/* One diff test being checked. */
typedef struct dt {
    const char *dir;       /* the test's folder */
    pc_profile *p;         /* the trace converted with default options */
    const char *log;       /* what the conversion logged */
    csv want;              /* expected.csv, when the test has one */
} dt;

/* The path of a file of the test's folder. */
void dt_path(const dt *c, const char *file, char *out, size_t cap);

/* A row of a diff test table: the test, and its check or why it has none. */
typedef struct dt_case {
    const char *dir;                /* under difftests/ */
    void (*check)(const dt *c);
    const char *why;                /* a skip's reason, or what differs */
} dt_case;

/* The tables: samples, counters and symbols; heapprofd's heap profiles. */
extern const dt_case dt_sample_cases[];
extern const size_t dt_sample_count;
extern const dt_case dt_heap_cases[];
extern const size_t dt_heap_count;

/* Runs each row of a table as its own case, "perfetto difftest NAME":
 * converts its trace.pb with default options (the log captured), reads
 * its expected.csv and calls its check, or skips it with its reason. */
void dt_run(const dt_case *cases, size_t n);

/* symbolization_candidates: a frame at each row's module and rel_pc,
 * with the row's build id when with_build. */
void dt_candidates(const dt *c, int with_build);

#endif
