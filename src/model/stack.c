/* The stack prefix tree: a stack is (prefix, frame), interned. */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

/* A stack's children are found through a list while they are few, and
 * through the hash table once they are many: most stacks have one child
 * or none, and a list makes adding a child to a new stack (a sample's
 * path that is new below some point) cost no hash table miss.  Each
 * child a list walk passes costs two cache misses (its frame, its next)
 * where a probe costs one or two, so lists stay short: with 4 rather than
 * 16, a Perfetto trace of 1M samples, 47 % of them new callstacks,
 * converts about 8 % faster, the others no slower; hashing the nodes of
 * 5 to 16 children costs memory (1.6 % more for 27.8M nodes).
 *
 * The child last asked for is the list's head, or kept in head[] beside
 * the hashed flag, rather than in a column of its own: 16 bytes a node
 * instead of 20, which on a virtual machine, where each page first
 * written costs microseconds, is time as well as memory. */
#define STACK_LIST_MAX 4
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
    if (pc_htab_reserve(&t->idx, t->n_hashed + 1) < 0)
        return -1;
    pc_probe_start(&t->idx, stack_key(t->prefix[id], t->frame[id]), &pr);
    while (pc_probe_next(&t->idx, &pr) != PC_NONE)
        ;
    pc_htab_insert(&t->idx, &pr, id);
    t->n_hashed++;
    return 0;
}

/* Maps the pages of every column's rows from mapped to the capacity, in
 * one call a column, before new nodes are written there.  A page written
 * for the first time costs several microseconds on a virtual machine, and
 * more when it faults: 1M samples each on a new path (27.8M nodes, 556 MB
 * of columns) converted in 6.4-7.1 s instead of 6.9-9.0 s, its peak 714
 * MiB instead of 602 MiB (the rows past the last node mapped too).  Mapped in
 * steps of 16K to 1M rows ahead, it took as long as faulting, or longer:
 * what pays is mapping much at once. */
static void map_ahead(pc_stree *t)
{
    uint32_t *cols[] = {t->prefix, t->frame, t->head, t->next};
    for (int c = 0; c < 4; c++)
        pc_prefault(cols[c], t->mapped * sizeof *cols[c], t->cap * sizeof *cols[c]);
    t->mapped = t->cap;
}

void pc_stree_init(pc_stree *t)
{
    memset(t, 0, sizeof *t);
    t->root_head = PC_NONE;
}

void pc_stree_free(pc_stree *t)
{
    free(t->prefix);
    free(t->frame);
    free(t->head);
    free(t->next);
    pc_htab_free(&t->idx);
    pc_stree_init(t);
}

int pc_stree_freeze(pc_stree *t)
{
    if (t->frozen)
        return 0;
    free(t->head);
    free(t->next);
    t->head = t->next = NULL;
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

/* The lists and hashed children of a frozen tree, built again: each node
 * goes to its prefix's list, or to the hash table for a prefix with more
 * than STACK_LIST_MAX children, as interning would have put it. */
static void thaw_undo(pc_stree *t)
{
    free(t->head);
    free(t->next);
    t->head = t->next = NULL;
    pc_htab_free(&t->idx);
    t->n_hashed = 0;
}

static int thaw(pc_stree *t)
{
    /* A tree frozen before its first node has no columns: its capacity
     * stays 0, so that the first node grows every column. */
    size_t cap = t->cap > t->n ? t->cap : t->n, room = cap ? cap : 1;
    uint32_t *count = calloc(t->n + 1, sizeof *count);
    t->head = malloc(room * sizeof *t->head);
    t->next = malloc(room * sizeof *t->next);
    if (!count || !t->head || !t->next) {
        free(count);
        thaw_undo(t);
        return -1;
    }
    t->cap = cap;
    /* count[prefix + 1]: children of prefix (count[0]: of the root). */
    for (size_t i = 0; i < t->n; i++)
        count[t->prefix[i] == PC_NONE ? 0 : t->prefix[i] + 1]++;
    for (size_t i = 0; i < t->n; i++)
        t->head[i] = PC_NONE;
    t->root_head = PC_NONE;
    for (size_t i = 0; i < t->n; i++) {
        uint32_t pre = t->prefix[i];
        uint32_t *head = pre == PC_NONE ? &t->root_head : &t->head[pre];
        t->next[i] = PC_NONE;
        if (count[pre == PC_NONE ? 0 : pre + 1] > STACK_LIST_MAX) {
            *head = (uint32_t)i | HASHED;
            if (stack_hash_add(t, (uint32_t)i) < 0) {
                free(count);
                thaw_undo(t);
                return -1;
            }
        } else {
            t->next[i] = *head;
            *head = (uint32_t)i;
        }
    }
    free(count);
    /* The columns made again are written up to n, and mapped no further. */
    t->mapped = t->n;
    t->frozen = 0;
    return 0;
}

/* The new node (prefix, frame), made the child last asked for; head is
 * the prefix's head before, listed the children its list holds. */
static uint32_t add_node(pc_stree *t, uint32_t prefix, uint32_t frame, uint32_t head,
                         size_t listed)
{
    if (t->n >= STACK_MAX_NODES)
        return PC_NONE;
    struct pc_col cols[] = {PC_COL(t->prefix), PC_COL(t->frame), PC_COL(t->head),
                            PC_COL(t->next)};
    if (pc_grow_cols(&t->cap, t->n + 1, cols, 4) < 0)
        return PC_NONE;
    uint32_t id = (uint32_t)t->n++;
    if (id >= t->mapped)
        map_ahead(t);
    t->prefix[id] = prefix;
    t->frame[id] = frame;
    t->head[id] = PC_NONE;
    t->next[id] = PC_NONE;
    uint32_t to;
    if (head != PC_NONE && (head & HASHED)) {
        if (stack_hash_add(t, id) < 0)
            return PC_NONE;
        to = id | HASHED;
    } else if (listed + 1 > STACK_LIST_MAX) {
        /* Many children: from now on they are hashed. */
        t->next[id] = head;
        for (uint32_t c = id; c != PC_NONE; c = t->next[c])
            if (stack_hash_add(t, c) < 0)
                return PC_NONE;
        to = id | HASHED;
    } else {
        t->next[id] = head;
        to = id;
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
        return add_node(t, prefix, frame, head, 0);
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
        return add_node(t, prefix, frame, head, 0);
    }
    /* The head was looked at; the rest of the list, and the child found
     * moves to its front. */
    size_t listed = 1;
    for (uint32_t before = head, c = t->next[head]; c != PC_NONE;
         before = c, c = t->next[c], listed++)
        if (t->frame[c] == frame) {
            t->next[before] = t->next[c];
            t->next[c] = head;
            *headp = c;
            return c;
        }
    return add_node(t, prefix, frame, head, listed);
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
