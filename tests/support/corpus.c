#include "corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"

const char *corpus_path(const char *rel)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/corpus/simpleperf/%s",
             t_shared() ? t_shared() : "../shared", rel);
    return path;
}

unsigned char *corpus_read(const char *rel, size_t *size)
{
    return t_read_file(corpus_path(rel), size);
}

size_t corpus_manifest(corpus_row **out)
{
    size_t size, n = 0, cap = 0;
    corpus_row *rows = NULL;
    *out = NULL;
    if (!t_shared())
        return 0;
    char *text = (char *)corpus_read("MANIFEST.tsv", &size);
    if (!text)
        return 0;
    char *line = strchr(text, '\n');  /* skip the header */
    while (line && *++line) {
        char *end = strchr(line, '\n');
        if (end)
            *end = 0;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            rows = realloc(rows, cap * sizeof *rows);
        }
        char *p = line;
        for (int c = 0; c < M_COLUMNS; c++) {
            char *tab = p ? strchr(p, '\t') : NULL;
            if (tab)
                *tab = 0;
            rows[n].col[c] = strdup(p ? p : "");
            p = tab ? tab + 1 : NULL;
        }
        n++;
        line = end;
    }
    free(text);
    *out = rows;
    return n;
}

void corpus_free(corpus_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < M_COLUMNS; c++)
            free(rows[i].col[c]);
    free(rows);
}

const char *corpus_base(const corpus_row *row)
{
    const char *slash = strrchr(row->col[M_FILE], '/');
    return slash ? slash + 1 : row->col[M_FILE];
}

void corpus_each(const char *kind, const char *suffix, const char *label,
                 void (*fn)(const corpus_row *row))
{
    corpus_row *rows;
    size_t n = corpus_manifest(&rows);
    if (!n) {
        t_skip("../shared not found (simpleperf corpus)");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const char *f = rows[i].col[M_FILE];
        size_t len = strlen(f), k = suffix ? strlen(suffix) : 0;
        if (strcmp(rows[i].col[M_KIND], kind) != 0 || len < k ||
            (suffix && strcmp(f + len - k, suffix) != 0))
            continue;
        t_case("%s: %s", label, corpus_base(&rows[i]));
        fn(&rows[i]);
    }
    corpus_free(rows, n);
}
