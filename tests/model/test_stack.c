/* The stack tree: nodes interned once, frozen for the writers, and
 * interned into again after. */
#include <string.h>

#include "t.h"
#include "model/model.h"

/* A tree frozen with nodes and one frozen before its first node both
 * take new nodes after, and keep the ones they had. */
TEST(stack_tree_interns_after_freezing)
{
    pc_stree t;
    pc_stree_init(&t);
    T_EQ_INT(pc_stree_freeze(&t), 0);
    uint32_t a = pc_stree_intern(&t, PC_NONE, 7);
    T_EQ_INT(a, 0);
    uint32_t b = pc_stree_intern(&t, a, 8);
    T_EQ_INT(b, 1);
    T_EQ_INT(pc_stree_freeze(&t), 0);
    T_EQ_INT(pc_stree_intern(&t, a, 8), b);
    uint32_t c = pc_stree_intern(&t, a, 9);
    T_EQ_INT(c, 2);
    T_EQ_INT(t.prefix[c], a);
    T_EQ_INT(t.frame[c], 9);
    T_EQ_INT(pc_stree_intern(&t, PC_NONE, 7), a);
    pc_stree_free(&t);
}

/* Many nodes, past several doublings (the columns are mapped ahead as
 * they grow), found again with their ids as they are and after a freeze
 * (the heads and the hash built again): each (prefix, frame) is one node,
 * parents first. */
TEST(stack_tree_grows_and_finds)
{
    for (int frozen = 0; frozen < 2; frozen++) {
        pc_stree t;
        pc_stree_init(&t);
        enum { PATHS = 3000, DEPTH = 7 };
        uint32_t leaf[PATHS];
        for (uint32_t i = 0; i < PATHS; i++) {
            uint32_t s = PC_NONE;
            /* Path i shares its first i % DEPTH frames with the others. */
            for (uint32_t d = 0; d < DEPTH; d++) {
                uint32_t pre = s;
                s = pc_stree_intern(&t, s, d < i % DEPTH ? d : 100 + i * DEPTH + d);
                T_CHECK(s != PC_NONE && (pre == PC_NONE || pre < s));
            }
            leaf[i] = s;
        }
        size_t n = t.n;
        T_CHECK(n > 10000);
        if (frozen)
            T_EQ_INT(pc_stree_freeze(&t), 0);
        for (uint32_t i = 0; i < PATHS; i += 7) {
            uint32_t s = PC_NONE;
            for (uint32_t d = 0; d < DEPTH; d++)
                s = pc_stree_intern(&t, s, d < i % DEPTH ? d : 100 + i * DEPTH + d);
            T_EQ_INT(s, leaf[i]);
        }
        T_EQ_INT(t.n, n);
        pc_stree_free(&t);
    }
}

/* The child last asked for is the one pc_stree_last gives, for a stack
 * with one child (kept in its head) and one with many (hashed), and for
 * the root; asked for in every order, each child keeps its id and nothing
 * new is made.  A second child hashes the first with it. */
TEST(stack_tree_last_child_is_the_last_asked)
{
    pc_stree t;
    pc_stree_init(&t);
    uint32_t one = pc_stree_intern(&t, PC_NONE, 1), many = pc_stree_intern(&t, PC_NONE, 2);
    T_EQ_INT(pc_stree_last(&t, PC_NONE), many);
    T_EQ_INT(pc_stree_last(&t, one), PC_NONE);
    uint32_t only = pc_stree_intern(&t, one, 10);
    T_EQ_INT(pc_stree_last(&t, one), only);
    uint32_t kid[9];
    for (uint32_t k = 0; k < 9; k++) {
        kid[k] = pc_stree_intern(&t, many, 10 + k);
        T_EQ_INT(pc_stree_last(&t, many), kid[k]);
    }
    size_t n = t.n;
    T_EQ_INT(n, 2 + 1 + 9);
    uint64_t s = 7;
    for (int round = 0; round < 200; round++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        uint32_t k = (uint32_t)(s >> 33);
        T_EQ_INT(pc_stree_intern(&t, one, 10), only);
        T_EQ_INT(pc_stree_last(&t, one), only);
        T_EQ_INT(pc_stree_intern(&t, many, 10 + k % 9), kid[k % 9]);
        T_EQ_INT(pc_stree_last(&t, many), kid[k % 9]);
        T_EQ_INT(pc_stree_intern(&t, PC_NONE, 1 + k % 2), k % 2 ? many : one);
        T_EQ_INT(pc_stree_last(&t, PC_NONE), k % 2 ? many : one);
    }
    T_EQ_INT(t.n, n);
    uint32_t second = pc_stree_intern(&t, one, 50);
    T_EQ_INT(pc_stree_last(&t, one), second);
    T_EQ_INT(pc_stree_intern(&t, one, 10), only);
    T_EQ_INT(pc_stree_last(&t, one), only);
    T_EQ_INT(pc_stree_intern(&t, one, 50), second);
    T_EQ_INT(t.n, n + 1);
    pc_stree_free(&t);
}

/* With map_async, the rows of a big growth are mapped on a thread of
 * its own while nodes are added below them: the same nodes, ids and
 * lookups as mapping on the interning thread, through growths, a freeze
 * (which waits for the mapping) and interning after it. */
TEST(stack_tree_threads_map_ahead)
{
    enum { NODES = 1500000 };
    pc_stree t[2];
    int mapped_on_thread = 0;
    for (int k = 0; k < 2; k++) {
        pc_stree_init(&t[k]);
        /* Steps of 256K rows, 1 MiB a column, each on a thread. */
        t[k].map_async = k ? (size_t)1 << 20 : 0;
        uint32_t s = PC_NONE, x = 12345;
        for (uint32_t i = 0; i < NODES; i++) {
            x = x * 1103515245u + 12345u;
            /* Chains of 40, each frame new below its first few. */
            if (i % 40 == 0)
                s = PC_NONE;
            s = pc_stree_intern(&t[k], s, i % 40 < 3 ? i % 40 : 3 + (x >> 8) % 100000);
            if (s == PC_NONE)
                break;
            mapped_on_thread |= t[k].map_job != NULL;
        }
    }
    T_CHECK(mapped_on_thread);
    T_EQ_INT(t[1].n, t[0].n);
    T_CHECK(t[0].n > (size_t)NODES / 2);
    if (t[1].n == t[0].n) {
        T_CHECK(memcmp(t[0].prefix, t[1].prefix, t[0].n * sizeof *t[0].prefix) == 0);
        T_CHECK(memcmp(t[0].frame, t[1].frame, t[0].n * sizeof *t[0].frame) == 0);
    }
    size_t n = t[0].n;
    for (int k = 0; k < 2; k++) {
        T_EQ_INT(pc_stree_freeze(&t[k]), 0);
        T_CHECK(t[k].map_job == NULL);
        uint32_t a = pc_stree_intern(&t[k], PC_NONE, 0);
        T_EQ_INT(a, 0);
        T_EQ_INT(pc_stree_intern(&t[k], a, 4000000), n);
        pc_stree_free(&t[k]);
    }
}
