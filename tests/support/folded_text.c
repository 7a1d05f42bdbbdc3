#include "folded_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct line {
    char *key;
    uint64_t value;
} line;

typedef struct lines {
    line *v;
    size_t n, cap;
} lines;

static int cmp_line(const void *a, const void *b)
{
    return strcmp(((const line *)a)->key, ((const line *)b)->key);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add(lines *l, char *key, uint64_t value)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n].key = key;
    l->v[l->n++].value = value;
}

/* "prefix;root;...;leaf" of a stack, malloc'd. */
static char *stack_key(const pc_profile *p, const char *prefix, uint32_t stack)
{
    size_t len = strlen(prefix), cap = len + 256;
    char *s = malloc(cap);
    memcpy(s, prefix, len + 1);
    uint32_t chain[4096];
    size_t n = 0;
    for (uint32_t st = stack; st != PC_NONE && n < 4096; st = p->stack.prefix[st])
        chain[n++] = st;
    while (n-- > 0) {
        uint32_t name = p->func.name[p->frame.func[p->stack.frame[chain[n]]]];
        size_t k = pc_str_len(&p->str, name);
        if (len + k + 2 > cap) {
            cap = (len + k + 2) * 2;
            s = realloc(s, cap);
        }
        s[len++] = ';';
        memcpy(s + len, pc_str(&p->str, name), k + 1);
        len += k;
    }
    return s;
}

static const char *process_of(const pc_profile *p, uint32_t t)
{
    uint32_t name = pc_process_name(p, p->thread.pid[t]);
    if (name != PC_NONE)
        return pc_str(&p->str, name);
    for (size_t u = 0; u < p->thread.n; u++)
        if (p->thread.pid[u] == p->thread.pid[t] && p->thread.tid[u] == p->thread.pid[t])
            return pc_str(&p->str, p->thread.name[u]);
    return "";
}

/* Sums equal keys and joins "key value" lines. */
static char *join(lines *l)
{
    qsort(l->v, l->n, sizeof *l->v, cmp_line);
    size_t cap = 1, len = 0;
    for (size_t i = 0; i < l->n; i++)
        cap += strlen(l->v[i].key) + 24;
    char *out = malloc(cap);
    out[0] = 0;
    for (size_t i = 0; i < l->n;) {
        size_t j = i;
        uint64_t sum = 0;
        while (j < l->n && strcmp(l->v[j].key, l->v[i].key) == 0)
            sum += l->v[j++].value;
        len += (size_t)snprintf(out + len, cap - len, "%s %" PRIu64 "\n", l->v[i].key, sum);
        i = j;
    }
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].key);
    free(l->v);
    return out;
}

char *folded_samples(const pc_profile *p)
{
    lines l = {0};
    for (size_t i = 0; i < p->sample.n; i++) {
        uint32_t t = pc_sample_thread(p, i);
        char prefix[1024];
        snprintf(prefix, sizeof prefix, "%s;%s", process_of(p, t),
                 pc_str(&p->str, p->thread.name[t]));
        add(&l, stack_key(p, prefix, p->sample.stack[i]), 1);
    }
    return join(&l);
}

char *folded_heap(const pc_profile *p)
{
    lines l = {0};
    for (size_t i = 0; i < p->heap.n; i++) {
        uint64_t v = p->heap.alloc[i] > p->heap.freed[i] ? p->heap.alloc[i] - p->heap.freed[i] : 0;
        if (v && pc_heap_shown(p, i))
            add(&l, stack_key(p, process_of(p, p->heap.thread[i]), p->heap.stack[i]), v);
    }
    return join(&l);
}

char *sort_lines(const char *text)
{
    char *copy = strdup(text);
    size_t n = 0, cap = 64, total = 1;
    char **v = malloc(cap * sizeof *v);
    for (char *s = strtok(copy, "\n"); s; s = strtok(NULL, "\n")) {
        if (n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        v[n++] = s;
        total += strlen(s) + 1;
    }
    qsort(v, n, sizeof *v, cmp_str);
    char *out = malloc(total);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(v[i]);
        memcpy(out + len, v[i], k);
        out[len + k] = '\n';
        len += k + 1;
    }
    out[len] = 0;
    free(v);
    free(copy);
    return out;
}

char *sum_folded(const char *text)
{
    lines l = {0};
    char *copy = strdup(text);
    for (char *ln = strtok(copy, "\n"); ln; ln = strtok(NULL, "\n")) {
        char *sp = strrchr(ln, ' ');
        if (!sp)
            continue;
        *sp = 0;
        add(&l, strdup(ln), strtoull(sp + 1, NULL, 10));
    }
    free(copy);
    return join(&l);
}
