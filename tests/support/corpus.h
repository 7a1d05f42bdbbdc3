/* Access to the shared simpleperf corpus (../shared/corpus/simpleperf):
 * its MANIFEST.tsv rows and file paths. */
#ifndef PROFCONV_TESTS_CORPUS_H
#define PROFCONV_TESTS_CORPUS_H

#include <stddef.h>

enum {
    M_KIND, M_FILE, M_INPUT, M_PRODUCER, M_OPTIONS, M_SAMPLES, M_THREADS,
    M_EVENT_TYPES, M_CONTEXT_SWITCHES, M_LOST_COUNT, M_TRACE_OFFCPU, M_DUMP,
    M_NOTES, M_COLUMNS
};

typedef struct corpus_row {
    char *col[M_COLUMNS];  /* empty strings for missing columns */
} corpus_row;

/* Reads MANIFEST.tsv (without its header).  Returns the row count, 0 when
 * the corpus is absent.  Free with corpus_free(). */
size_t corpus_manifest(corpus_row **rows);
void corpus_free(corpus_row *rows, size_t n);

/* Calls fn for each MANIFEST row of the given kind ("input", "reference")
 * whose file name ends with suffix (NULL: any), as its own test case named
 * "label: <file name>".  Skips with a message when the corpus is absent. */
void corpus_each(const char *kind, const char *suffix, const char *label,
                 void (*fn)(const corpus_row *row));

/* Base name of a row's file. */
const char *corpus_base(const corpus_row *row);

/* Path of a file given relative to the simpleperf corpus folder, in a
 * static buffer overwritten by the next call. */
const char *corpus_path(const char *rel);

/* Reads a corpus file (relative path), gunzipping *.gz. */
unsigned char *corpus_read(const char *rel, size_t *size);

#endif
