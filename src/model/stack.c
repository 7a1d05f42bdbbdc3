/* The stack prefix tree: a stack is (prefix, frame), interned. */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/thread.h"

/* A stack's only child is found in head[] alone, and the children of a
 * stack that has more in the hash table, with head[] then keeping the one
 * last asked for.  Most stacks have one child or none, so a sample's path
 * that is new below some point costs no hash table miss, and the tree
 * needs no column of sibling links: 12 bytes a node.  Each column is
 * memory first written as the tree grows, which on a virtual machine
 * costs microseconds a page: for 1M samples each on a new path (27.8M
 * nodes), 20 bytes a node (a remembered child and lists of up to 4
 * children) peaked at 714 MiB, 16 bytes at 587 MiB, 12 bytes at 484 MiB.
 * Hashing every stack with two children or more rather than five made
 * Perfetto traces of 1M samples, 47 % of them new callstacks, and a real
 * simpleperf capture no slower. */
#define HASHED PC_STREE_HASHED
/* Ids stay below the flag, and id | HASHED never equals PC_NONE. */
#define STACK_MAX_NODES (HASHED - 1)

static uint64_t stack_key(uint32_t prefix, uint32_t frame)
{
    return pc_mix64((uint64_t)prefix << 32 | frame);
}

static int stack_hash_add(pc_stree *t, uint32_t id)
{
    pc_probe pr;
    if (pc_htab_reserve_full(&t->idx, t->n_hashed + 1) < 0)
        return -1;
    pc_probe_start(&t->idx, stack_key(t->prefix[id], t->frame[id]), &pr);
    while (pc_probe_next(&t->idx, &pr) != PC_NONE)
        ;
    pc_htab_insert(&t->idx, &pr, id);
    t->n_hashed++;
    return 0;
}

/* Rows are mapped (map_ahead, below) an eighth of the capacity at a
 * time, at least 256K rows (1 MiB a column): mapped up to the capacity
 * at once, the rows past the last node were 62 MiB of the 494 MiB peak
 * of 1M samples each on a new path (27.8M nodes in room for 33.5M), and
 * 9 MiB of a Perfetto trace's 212 MiB (1.1M nodes in room for 2M).
 * Mapped in eighths it took as long. */
enum { MAP_PARTS = 8, MAP_LEAST_ROWS = 1 << 18 };
/* A mapping job (map_async) changes no byte, so it and the interning
 * thread need no other agreement than this: the columns do not move
 * while a job maps them (map_wait before they grow or go). */

struct pc_map_job {
    pthread_t th;
    struct {
        void *base;
        size_t from, to;
    } col[3];
};

static void *map_job(void *arg)
{
    struct pc_map_job *j = arg;
    for (int c = 0; c < 3; c++)
        pc_prefault(j->col[c].base, j->col[c].from, j->col[c].to);
    return NULL;
}

static void map_wait(pc_stree *t)
{
    if (t->map_job) {
        pthread_join(t->map_job->th, NULL);
        free(t->map_job);
        t->map_job = NULL;
    }
}

/* Maps the pages of every column's next rows from mapped on (see
 * MAP_PARTS), in one call a column, before new nodes are written there.
 * A page written for the first time costs several microseconds on a
 * virtual machine, and more when it faults: 1M samples each on a new
 * path (27.8M nodes, then 20 bytes a node, 556 MB of columns) converted
 * in 6.4-7.1 s instead of 6.9-9.0 s.  Mapped in steps of 16K to 1M rows
 * ahead, it took as long as faulting, or longer: what pays is mapping
 * much at once, and an eighth of a big tree's room is much. */
static void map_ahead(pc_stree *t)
{
    uint32_t *cols[] = {t->prefix, t->frame, t->head};
    size_t rows = t->cap / MAP_PARTS > MAP_LEAST_ROWS ? t->cap / MAP_PARTS : MAP_LEAST_ROWS;
    size_t upto = t->cap - t->mapped > rows ? t->mapped + rows : t->cap;
    size_t from = t->mapped * sizeof(uint32_t), to = upto * sizeof(uint32_t);
    struct pc_map_job *j = NULL;
    if (t->map_async && to - from >= t->map_async) {
        map_wait(t);
        j = malloc(sizeof *j);
    }
    for (int c = 0; c < 3 && j; c++) {
        j->col[c].base = cols[c];
        j->col[c].from = from;
        j->col[c].to = to;
    }
    if (j && pc_thread_start_sized(&j->th, map_job, j, (size_t)64 << 10) == 0) {
        t->map_job = j;
    } else {
        free(j);
        for (int c = 0; c < 3; c++)
            pc_prefault(cols[c], from, to);
    }
    t->mapped = upto;
}

void pc_stree_init(pc_stree *t)
{
    memset(t, 0, sizeof *t);
    t->root_head = PC_NONE;
}

void pc_stree_free(pc_stree *t)
{
    map_wait(t);
    free(t->prefix);
    free(t->frame);
    free(t->head);
    pc_htab_free(&t->idx);
    pc_stree_init(t);
}

int pc_stree_freeze(pc_stree *t)
{
    if (t->frozen)
        return 0;
    map_wait(t);
    free(t->head);
    t->head = NULL;
    pc_htab_free(&t->idx);
    t->n_hashed = 0;
    t->root_head = PC_NONE;
    t->frozen = 1;
    if (t->n < t->cap) {
        /* An array that could not shrink stays as it was, longer than
         * needed: the capacity is what both hold at least. */
        size_t n = t->n ? t->n : 1;
        uint32_t *pre = realloc(t->prefix, n * sizeof *pre);
        if (pre)
            t->prefix = pre;
        uint32_t *fr = realloc(t->frame, n * sizeof *fr);
        if (fr)
            t->frame = fr;
        t->cap = n;
        if (!pre || !fr)
            return -1;
    }
    if (t->mapped > t->cap)
        t->mapped = t->cap;
    return 0;
}

/* The heads and hashed children of a frozen tree, built again: each
 * node goes to its prefix's head, or to the hash table for a prefix with
 * more than one child, as interning would have put it. */
static void thaw_undo(pc_stree *t)
{
    free(t->head);
    t->head = NULL;
    pc_htab_free(&t->idx);
    t->n_hashed = 0;
}

static int thaw(pc_stree *t)
{
    /* A tree frozen before its first node has no columns: its capacity
     * stays 0, so that the first node grows every column. */
    size_t cap = t->cap > t->n ? t->cap : t->n, room = cap ? cap : 1;
    /* kids[prefix + 1]: children of prefix, up to 2 (kids[0]: of the
     * root). */
    uint8_t *kids = calloc(t->n + 1, 1);
    t->head = malloc(room * sizeof *t->head);
    if (!kids || !t->head) {
        free(kids);
        thaw_undo(t);
        return -1;
    }
    t->cap = cap;
    for (size_t i = 0; i < t->n; i++) {
        uint8_t *k = &kids[t->prefix[i] == PC_NONE ? 0 : t->prefix[i] + 1];
        *k += *k < 2;
    }
    for (size_t i = 0; i < t->n; i++)
        t->head[i] = PC_NONE;
    t->root_head = PC_NONE;
    for (size_t i = 0; i < t->n; i++) {
        uint32_t pre = t->prefix[i];
        uint32_t *head = pre == PC_NONE ? &t->root_head : &t->head[pre];
        if (kids[pre == PC_NONE ? 0 : pre + 1] > 1) {
            *head = (uint32_t)i | HASHED;
            if (stack_hash_add(t, (uint32_t)i) < 0) {
                free(kids);
                thaw_undo(t);
                return -1;
            }
        } else {
            *head = (uint32_t)i;
        }
    }
    free(kids);
    /* The columns made again are written up to n, and mapped no further. */
    t->mapped = t->n;
    t->frozen = 0;
    return 0;
}

/* The new node (prefix, frame), made the child last asked for; head is
 * the prefix's head before. */
static uint32_t add_node(pc_stree *t, uint32_t prefix, uint32_t frame, uint32_t head)
{
    if (t->n >= STACK_MAX_NODES)
        return PC_NONE;
    /* Room first, for the node and for the children to hash, so that
     * nothing changes where there is none. */
    struct pc_col cols[] = {PC_COL(t->prefix), PC_COL(t->frame), PC_COL(t->head)};
    if (t->n + 1 > t->cap)
        map_wait(t);
    if ((head != PC_NONE && pc_htab_reserve_full(&t->idx, t->n_hashed + 2) < 0) ||
        (t->n + 1 > t->cap && pc_grow_cols(&t->cap, t->n + 1, cols, 3) < 0))
        return PC_NONE;
    uint32_t id = (uint32_t)t->n++;
    if (id >= t->mapped)
        map_ahead(t);
    t->prefix[id] = prefix;
    t->frame[id] = frame;
    t->head[id] = PC_NONE;
    uint32_t to = id;
    if (head != PC_NONE) {
        /* A second child: from now on the children are hashed, the first
         * one with it.  There is room for both (above). */
        if (!(head & HASHED))
            (void)stack_hash_add(t, head);
        (void)stack_hash_add(t, id);
        to = id | HASHED;
    }
    if (prefix == PC_NONE)
        t->root_head = to;
    else
        t->head[prefix] = to;
    return id;
}

uint32_t pc_stree_intern(pc_stree *t, uint32_t prefix, uint32_t frame)
{
    if (t->frozen && thaw(t) < 0)
        return PC_NONE;
    if (prefix != PC_NONE && prefix >= t->n)
        return PC_NONE;
    uint32_t *headp = prefix == PC_NONE ? &t->root_head : &t->head[prefix];
    uint32_t head = *headp;
    if (head == PC_NONE)
        return add_node(t, prefix, frame, head);
    uint32_t last = head & ~HASHED;
    if (t->frame[last] == frame)
        return last;
    if (head & HASHED) {
        pc_probe pr;
        pc_probe_start(&t->idx, stack_key(prefix, frame), &pr);
        for (uint32_t id; (id = pc_probe_next(&t->idx, &pr)) != PC_NONE;)
            if (t->prefix[id] == prefix && t->frame[id] == frame) {
                *headp = id | HASHED;
                return id;
            }
    }
    return add_node(t, prefix, frame, head);
}

void pc_stack_prefetch(const pc_profile *p, uint32_t prefix, uint32_t frame)
{
    const pc_stree *t = &p->stack;
    if (t->frozen || prefix >= t->n)
        return;
    __builtin_prefetch(&t->head[prefix]);
    if (t->idx.slot) {
        pc_probe pr;
        pc_probe_start(&t->idx, stack_key(prefix, frame), &pr);
        __builtin_prefetch(&t->idx.slot[pr.i]);
    }
}

uint32_t pc_stack(pc_profile *p, uint32_t prefix, uint32_t frame)
{
    if (p->oom)
        return PC_NONE;
    uint32_t id = pc_stree_intern(&p->stack, prefix, frame);
    return id == PC_NONE ? pc_oom(p) : id;
}

uint32_t pc_inline_add(pc_profile *p, pc_inlines *in, uint32_t f, uint32_t func)
{
    uint32_t id = pc_add_frame(p, func, p->frame.addr[f], p->frame.cat[f], p->frame.exec[f]);
    if (id == PC_NONE || pc_grow(&in->frames, &in->cap, in->n + 1, sizeof *in->frames, 64) < 0)
        return PC_NONE;
    if (!in->count[f])
        in->first[f] = (uint32_t)in->n;
    in->frames[in->n++] = id;
    in->count[f]++;
    return id;
}

int pc_inline_expand(pc_profile *p, const pc_inlines *in, size_t n_frames)
{
    size_t ns = p->stack.n;
    uint32_t *to = malloc((ns + 1) * sizeof *to);
    if (!to)
        return -1;
    /* Parents come first, so each prefix is rebuilt before its children;
     * the new stacks are added after the old ones, which stay unused. */
    for (size_t s = 0; s < ns; s++) {
        uint32_t prefix = p->stack.prefix[s], f = p->stack.frame[s];
        uint32_t st = pc_stack(p, prefix == PC_NONE ? PC_NONE : to[prefix], f);
        if (f < n_frames)
            for (uint32_t k = 0; k < in->count[f]; k++)
                st = pc_stack(p, st, in->frames[in->first[f] + k]);
        to[s] = st;
    }
    pc_remap_stacks(p, to);
    free(to);
    return p->oom ? -1 : 0;
}
