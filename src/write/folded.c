/* Folded stacks, as Brendan Gregg's FlameGraph reads them: one line per
 * distinct stack, "prefix;root;...;leaf value", sorted bytewise so that
 * the output is stable and diffable.  Unlike simpleperf's
 * stackcollapse.py, the leaf frame is kept.
 *
 * Samples are folded when there are any, else the heap profile's rows
 * (the dump and measure chosen), under their process's name.  Model
 * stacks differ by address where folded lines differ only by name, so
 * stacks are first re-interned over functions (and the kernel/JIT mark),
 * then samples summed per (thread, function stack) in a hash table: only
 * distinct lines are ever rendered as text. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/grow.h"
#include "base/hashtab.h"
#include "write/sums.h"
#include "write/write.h"

typedef struct line {
    char *text;
    int64_t value;
    int64_t base;   /* a comparison's base value */
} line;

/* Model stacks re-interned over (function, mark): fs_of[stack] is the
 * function stack of a model stack; a function stack's prefix comes
 * before it. */
typedef struct fstacks {
    uint32_t *of;              /* model stack -> function stack */
    uint32_t *prefix, *func;
    uint8_t *mark;             /* 0, or 'k' / 'j' for FlameGraph's marks */
    size_t n, cap;
    pc_htab idx;
} fstacks;

static void fstacks_free(fstacks *fs)
{
    free(fs->of);
    free(fs->prefix);
    free(fs->func);
    free(fs->mark);
    pc_htab_free(&fs->idx);
}

static int fstacks_build(const pc_profile *p, int annotate, fstacks *fs)
{
    if (!(fs->of = malloc((p->stack.n + 1) * sizeof *fs->of)))
        return -1;
    for (size_t st = 0; st < p->stack.n; st++) {
        uint32_t pre = p->stack.prefix[st], fr = p->stack.frame[st];
        uint32_t fpre = pre == PC_NONE ? PC_NONE : fs->of[pre];
        uint32_t func = p->frame.func[fr];
        uint8_t mark = 0;
        if (annotate && p->frame.cat[fr] == PC_CAT_KERNEL)
            mark = 'k';
        else if (annotate && p->frame.cat[fr] == PC_CAT_JIT)
            mark = 'j';
        pc_probe pr;
        if (pc_htab_reserve(&fs->idx, fs->n + 1) < 0)
            return -1;
        pc_probe_start(&fs->idx, pc_mix64((uint64_t)fpre << 32 ^ func ^ (uint64_t)mark << 60),
                       &pr);
        uint32_t id;
        while ((id = pc_probe_next(&fs->idx, &pr)) != PC_NONE)
            if (fs->prefix[id] == fpre && fs->func[id] == func && fs->mark[id] == mark)
                break;
        if (id == PC_NONE) {
            struct pc_col cols[] = {PC_COL(fs->prefix), PC_COL(fs->func), PC_COL(fs->mark)};
            if (pc_grow_cols(&fs->cap, fs->n + 1, cols, 3) < 0)
                return -1;
            id = (uint32_t)fs->n++;
            fs->prefix[id] = fpre;
            fs->func[id] = func;
            fs->mark[id] = mark;
            pc_htab_insert(&fs->idx, &pr, id);
        }
        fs->of[st] = id;
    }
    return 0;
}

/* A growable string. */
typedef struct text {
    char *s;
    size_t len, cap;
    int oom;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->oom)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *ns = realloc(t->s, cap);
        if (!ns) {
            t->oom = 1;
            return;
        }
        t->s = ns;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = 0;
}

/* A name as one field: ';' would split it and a line break end the line. */
static void put_name(text *t, const char *s)
{
    size_t start = t->len;
    put(t, s, strlen(s));
    if (t->oom)
        return;
    for (size_t i = start; i < t->len; i++)
        if (t->s[i] == ';')
            t->s[i] = ':';
        else if (t->s[i] == '\n' || t->s[i] == '\r')
            t->s[i] = ' ';
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(((const line *)a)->text, ((const line *)b)->text);
}

/* Renders entry i of f into t (emptied first). */
static void render(const pc_profile *p, const pc_write_options *o, const pc_sums *f,
                   const fstacks *fs, size_t i, const uint32_t *main_of, int several_heaps,
                   uint32_t *chain, text *t)
{
    uint32_t th = f->thread[i];
    t->len = 0;
    put(t, "", 0);
    int heap = f->key[i] != PC_NONE;
    /* A comparison thread's name says nothing of where its samples ran. */
    int prefix = p->thread.diff[th] ? 0 : o->folded_prefix;
    if (prefix & (PC_FOLDED_PROCESS | (heap ? PC_FOLDED_THREAD : 0))) {
        uint32_t name = pc_process_label(p, th, main_of[th]);
        if (name != PC_NONE)
            put_name(t, pc_str(&p->str, name));
        else {
            char pid[32];
            snprintf(pid, sizeof pid, "process %" PRId64, p->thread.pid[th]);
            put(t, pid, strlen(pid));
        }
    }
    if (heap && several_heaps && prefix) {
        if (t->len)
            put(t, ";", 1);
        put_name(t, pc_str(&p->str, f->key[i]));
    }
    if (!heap && (prefix & PC_FOLDED_THREAD)) {
        if (t->len)
            put(t, ";", 1);
        /* Every thread is named once read (pc_name_unnamed_threads). */
        put_name(t, pc_str(&p->str, p->thread.name[th]));
    }
    size_t n = 0;
    for (uint32_t s = f->stack[i]; s != PC_NONE; s = fs->prefix[s])
        chain[n++] = s;
    while (n-- > 0) {
        uint32_t s = chain[n];
        if (t->len)
            put(t, ";", 1);
        put_name(t, pc_str(&p->str, p->func.name[fs->func[s]]));
        if (fs->mark[s] == 'k')
            put(t, "_[k]", 4);
        else if (fs->mark[s] == 'j')
            put(t, "_[j]", 4);
    }
}

int pc_write_folded(const pc_profile *p, const pc_write_options *o, pc_sink *s, pc_error *err)
{
    pc_sums f = {0}, fb = {0};
    fstacks fs = {0};
    /* A comparison is written as difffolded reads it: "stack base new",
     * from its comparison threads alone. */
    int diff = pc_diff_thread(p) != PC_NONE;
    size_t nt = p->thread.n;
    uint32_t *order = malloc((nt + 1) * sizeof *order);
    uint32_t *main_of = malloc((nt + 1) * sizeof *main_of);
    uint32_t *depth = calloc(p->stack.n + 1, sizeof *depth);
    uint32_t *chain = NULL;
    line *lines = NULL;
    text t = {0};
    size_t n_lines = 0;
    int several_heaps = 0, status = PC_OK;
    if (!order || !main_of || !depth)
        goto oom;
    pc_thread_order(p, order, main_of);
    /* Depths, for the chain buffer: prefixes come before their stacks. */
    uint32_t max_depth = 0;
    for (size_t st = 0; st < p->stack.n; st++) {
        uint32_t pre = p->stack.prefix[st];
        depth[st] = pre == PC_NONE ? 1 : depth[pre] + 1;
        if (depth[st] > max_depth)
            max_depth = depth[st];
    }
    if (!(chain = malloc(((size_t)max_depth + 1) * sizeof *chain)))
        goto oom;
    if (fstacks_build(p, o->folded_annotate, &fs) < 0)
        goto oom;
#define FSTACK(st) ((st) == PC_NONE ? PC_NONE : fs.of[st])
    if (diff) {
        for (size_t i = 0; i < p->sample.n; i++) {
            int64_t w = pc_sample_weight(p, i);
            if (!p->thread.diff[pc_sample_thread(p, i)])
                continue;
            if (pc_sums_add(w < 0 ? &fb : &f, pc_sample_thread(p, i), FSTACK(p->sample.stack[i]),
                            PC_NONE, 1, o->folded_counts ? 1 : w < 0 ? -w : w) < 0)
                goto oom;
        }
    } else if (p->sample.n) {
        for (size_t i = 0; i < p->sample.n; i++)
            if (pc_sums_add(&f, pc_sample_thread(p, i), FSTACK(p->sample.stack[i]), PC_NONE, 1,
                            o->folded_counts ? 1 : pc_sample_weight(p, i)) < 0)
                goto oom;
    } else {
        for (size_t i = 0; i < p->heap.n; i++) {
            if (!pc_heap_shown(p, i))
                continue;
            several_heaps |= p->heap.heap[i] != p->heap.heap[0];
            uint64_t v = o->folded_counts ? pc_heap_count(p, i) : pc_heap_value(p, i);
            if (pc_sums_add(&f, p->heap.thread[i], FSTACK(p->heap.stack[i]), p->heap.heap[i], 1,
                            pc_clamp_i64(v)) < 0)
                goto oom;
        }
    }
    if (!(lines = malloc((f.n + fb.n + 1) * sizeof *lines)))
        goto oom;
    for (int side = 0; side < 2; side++) {
        const pc_sums *from = side ? &fb : &f;
        for (size_t i = 0; i < from->n; i++) {
            if (from->weight[i] == 0)
                continue;
            render(p, o, from, &fs, i, main_of, several_heaps, chain, &t);
            if (t.oom)
                goto oom;
            if (t.len == 0)
                continue;
            if (!(lines[n_lines].text = pc_strdup(t.s)))
                goto oom;
            lines[n_lines].value = side ? 0 : from->weight[i];
            lines[n_lines++].base = side ? from->weight[i] : 0;
        }
    }
    pc_qsort(lines, n_lines, sizeof *lines, cmp_line);
    for (size_t i = 0; i < n_lines;) {
        int64_t sum = 0, base = 0;
        size_t j = i;
        for (; j < n_lines && strcmp(lines[j].text, lines[i].text) == 0; j++) {
            sum = pc_sat_add(sum, lines[j].value);
            base = pc_sat_add(base, lines[j].base);
        }
        char num[48];
        int k = diff ? snprintf(num, sizeof num, " %" PRId64 " %" PRId64 "\n", base, sum)
                     : snprintf(num, sizeof num, " %" PRId64 "\n", sum);
        sink_write(s, lines[i].text, strlen(lines[i].text));
        sink_write(s, num, (size_t)k);
        i = j;
    }
    goto done;
oom:
    status = pc_fail(err, PC_ENOMEM, "out of memory writing folded stacks");
done:
    for (size_t i = 0; i < n_lines; i++)
        free(lines[i].text);
    free(lines);
    free(t.s);
    free(chain);
    free(depth);
    free(order);
    free(main_of);
    pc_sums_free(&f);
    pc_sums_free(&fb);
    fstacks_free(&fs);
    return status;
}
