/* The stack tree: nodes interned once, frozen for the writers, and
 * interned into again after. */
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
 * they grow), and lean trees alike: each (prefix, frame) is one node,
 * parents first, found again with its id. */
TEST(stack_tree_grows_and_finds)
{
    for (int lean = 0; lean < 2; lean++) {
        pc_stree t;
        pc_stree_init(&t);
        t.lean = lean;
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
        if (!lean)
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
