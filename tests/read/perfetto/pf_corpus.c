/* The Perfetto corpus for the tests in this folder (pf_corpus.h). */
#include "pf_corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "test_util.h"

/* ---- Reading the corpus ---- */

/* What the reader decodes, even where it gives nothing to show (samples
 * without callstacks, heap dumps with nothing unreleased); the profiler
 * tests (convert/test_fxprof.c) check what users get of these traces. */
pc_profile *convert_path(const char *path, const pc_options *o)
{
    size_t n;
    unsigned char *d = t_read_file(path, &n);
    if (!d) {
        t_fail(__FILE__, __LINE__, "cannot read %s", path);
        return NULL;
    }
    pc_profile *p;
    pc_error err;
    if (convert_bytes_unchecked(d, n, o, &p, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "%s: conversion failed: %s", path, err.message);
        p = NULL;
    }
    free(d);
    return p;
}

/* ---- trace_processor's expected.csv ---- */

void csv_free(csv *c)
{
    for (size_t i = 0; i < c->cols * (c->rows + 1); i++)
        free(c->cell[i]);
    free(c->cell);
    memset(c, 0, sizeof *c);
}

/* Parses one line's cells into a malloc'd array; returns the count. */
static size_t csv_line(const char *s, char ***out)
{
    size_t n = 0;
    char **v = NULL;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s)
        return 0;
    for (;;) {
        char buf[1024];
        size_t k = 0;
        if (*s == '"') {
            for (s++; *s && !(*s == '"' && s[1] != '"'); s++) {
                if (*s == '"')
                    s++;
                if (k + 1 < sizeof buf)
                    buf[k++] = *s;
            }
            if (*s == '"')
                s++;
        } else {
            for (; *s && *s != ','; s++)
                if (k + 1 < sizeof buf)
                    buf[k++] = *s;
        }
        buf[k] = 0;
        v = realloc(v, (n + 1) * sizeof *v);
        v[n++] = strcmp(buf, "[NULL]") == 0 ? NULL : strdup(buf);
        if (*s != ',')
            break;
        s++;
    }
    *out = v;
    return n;
}

int csv_read(const char *path, csv *c)
{
    memset(c, 0, sizeof *c);
    char *text = read_text(path);
    if (!text)
        return -1;
    size_t lines = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char **v;
        size_t n = csv_line(line, &v);
        if (n == 0)
            continue;
        if (lines == 0)
            c->cols = n;
        c->cell = realloc(c->cell, (lines + 1) * c->cols * sizeof *c->cell);
        for (size_t i = 0; i < c->cols; i++)
            c->cell[lines * c->cols + i] = i < n ? v[i] : NULL;
        for (size_t i = c->cols; i < n; i++)
            free(v[i]);
        free(v);
        lines++;
    }
    c->rows = lines ? lines - 1 : 0;
    free(text);
    return lines ? 0 : -1;
}

static size_t csv_col(const csv *c, const char *name)
{
    for (size_t i = 0; i < c->cols; i++)
        if (c->cell[i] && strcmp(c->cell[i], name) == 0)
            return i;
    t_fail(__FILE__, __LINE__, "expected.csv has no column %s", name);
    return (size_t)-1;
}

int csv_has(const csv *c, const char *name)
{
    for (size_t i = 0; i < c->cols; i++)
        if (c->cell[i] && strcmp(c->cell[i], name) == 0)
            return 1;
    return 0;
}

/* Row r's cell in column name (NULL when [NULL] or missing). */
const char *csv_get(const csv *c, size_t r, const char *name)
{
    size_t i = csv_col(c, name);
    return i == (size_t)-1 || r >= c->rows ? NULL : c->cell[(r + 1) * c->cols + i];
}

long long csv_int(const csv *c, size_t r, const char *name)
{
    const char *s = csv_get(c, r, name);
    return s ? strtoll(s, NULL, 10) : 0;
}

/* ---- Reading the profile ---- */

const char *frame_name(const pc_profile *p, uint32_t f)
{
    return str_of(p, p->func.name[p->frame.func[f]]);
}

const char *frame_module(const pc_profile *p, uint32_t f)
{
    uint32_t res = p->func.res[p->frame.func[f]];
    return res == PC_NONE ? "(none)" : str_of(p, p->res.name[res]);
}

const char *frame_build(const pc_profile *p, uint32_t f)
{
    uint32_t res = p->func.res[p->frame.func[f]];
    return res == PC_NONE ? "(none)" : str_of(p, p->res.build[res]);
}

/* Marks in used[] every frame some sample or heap row reaches. */
uint8_t *frames_used(const pc_profile *p)
{
    uint8_t *used = calloc(p->frame.n + 1, 1);
    uint8_t *seen = calloc(p->stack.n + 1, 1);
    for (size_t pass = 0; pass < 2; pass++) {
        size_t n = pass ? p->heap.n : p->sample.n;
        const uint32_t *stacks = pass ? p->heap.stack : p->sample.stack;
        for (size_t i = 0; i < n; i++)
            for (uint32_t s = stacks[i]; s != PC_NONE && !seen[s]; s = p->stack.prefix[s]) {
                seen[s] = 1;
                used[p->stack.frame[s]] = 1;
            }
    }
    free(seen);
    return used;
}

/* The number of frames reached by samples or heap rows named name (at
 * rel_pc addr unless addr is -1). */
size_t count_frames(const pc_profile *p, const char *name, long long addr)
{
    uint8_t *used = frames_used(p);
    size_t n = 0;
    for (size_t f = 0; f < p->frame.n; f++)
        if (used[f] && strcmp(frame_name(p, (uint32_t)f), name) == 0 &&
            (addr < 0 || p->frame.addr[f] == (uint64_t)addr))
            n++;
    free(used);
    return n;
}

/* Every sample and heap stack as "root;...;leaf", one per line. */
char *all_stacks(const pc_profile *p)
{
    size_t cap = 1, len = 0;
    for (size_t pass = 0; pass < 2; pass++) {
        size_t n = pass ? p->heap.n : p->sample.n;
        const uint32_t *stacks = pass ? p->heap.stack : p->sample.stack;
        for (size_t i = 0; i < n; i++)
            cap += strlen(stack_text(p, stacks[i])) + 1;
    }
    char *out = malloc(cap);
    out[0] = 0;
    for (size_t pass = 0; pass < 2; pass++) {
        size_t n = pass ? p->heap.n : p->sample.n;
        const uint32_t *stacks = pass ? p->heap.stack : p->sample.stack;
        for (size_t i = 0; i < n; i++)
            len += (size_t)snprintf(out + len, cap - len, "%s\n", stack_text(p, stacks[i]));
    }
    return out;
}

heap_sum heap_sums(const pc_profile *p, const char *heap, int64_t pid)
{
    heap_sum s = {0};
    uint32_t last_dump = PC_NONE;
    for (size_t i = 0; i < p->heap.n; i++) {
        if (!pc_heap_shown(p, i))
            continue;
        if (heap && strcmp(str_of(p, p->heap.heap[i]), heap) != 0)
            continue;
        if (pid >= 0 && p->thread.pid[p->heap.thread[i]] != pid)
            continue;
        s.alloc += p->heap.alloc[i];
        s.freed += p->heap.freed[i];
        s.alloc_count += p->heap.alloc_count[i];
        s.free_count += p->heap.free_count[i];
        s.rows++;
        s.time = p->heap.time[i];
        if (p->heap.dump[i] != last_dump) {
            s.dumps++;
            last_dump = p->heap.dump[i];
        }
    }
    return s;
}

/* The profile showing dump n (1-based) of each heap. */
pc_profile *convert_dump(const char *path, int n)
{
    pc_options o;
    pc_options_init(&o);
    o.heap_dump = n;
    return convert_path(path, &o);
}

/* Frames a symbolizer would be asked about: a frame of the module (its
 * full path) at rel_pc, with the build id when one is given. */
void frame_at(const pc_profile *p, const char *module, const char *build, long long pc)
{
    int found = 0;
    for (size_t f = 0; f < p->frame.n; f++) {
        if (p->frame.addr[f] != (uint64_t)pc || strcmp(frame_module(p, (uint32_t)f), module) != 0)
            continue;
        found = 1;
        if (build)
            T_EQ_STR(frame_build(p, (uint32_t)f), build);
    }
    if (!found)
        t_fail(__FILE__, __LINE__, "no frame of %s at 0x%llx", module, pc);
}

/* ---- Diff tests ---- */

void dt_path(const dt *c, const char *file, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", c->dir, file);
}

void dt_candidates(const dt *c, int with_build)
{
    T_CHECK(c->want.rows > 0);
    for (size_t r = 0; r < c->want.rows; r++)
        frame_at(c->p, csv_get(&c->want, r, "module"),
                 with_build ? csv_get(&c->want, r, "build_id") : NULL,
                 csv_int(&c->want, r, "rel_pc"));
}

void dt_run(const dt_case *cases, size_t n)
{
    const char *shared = t_shared();
    size_t checked = 0, skipped = 0;
    for (size_t i = 0; i < n; i++) {
        const dt_case *k = &cases[i];
        const char *name = strrchr(k->dir, '/') + 1;
        t_case("perfetto difftest %s", name);
        char dir[600], path[700];
        snprintf(dir, sizeof dir, "%s/corpus/perfetto/difftests/%s", shared, k->dir);
        snprintf(path, sizeof path, "%s/trace.pb", dir);
        if (!k->check) {
            t_skip("%s", k->why);
            skipped++;
            continue;
        }
        dt c = {dir, NULL, NULL, {0}};
        pc_options o;
        pc_options_init(&o);
        log_capture_start(&o);
        c.p = convert_path(path, &o);
        c.log = log_capture_text();
        snprintf(path, sizeof path, "%s/expected.csv", dir);
        FILE *f = fopen(path, "r");
        if (f) {
            fclose(f);
            if (csv_read(path, &c.want) < 0)
                t_fail(__FILE__, __LINE__, "cannot read %s", path);
        }
        if (k->why)
            printf("  note %s: %s\n", name, k->why);
        if (c.p) {
            char log[4096];
            /* Checks that convert again replace the captured log. */
            snprintf(log, sizeof log, "%s", c.log);
            c.log = log;
            k->check(&c);
        }
        checked++;
        pc_profile_free(c.p);
        csv_free(&c.want);
    }
    T_EQ_INT(checked + skipped, n);
}
