/* Frames merged for the Firefox formats (pc_merge): model frames of one
 * function at different addresses become one frame, and stacks over them
 * one stack.  Only when two stacks of one prefix have frames that merge
 * is there a second tree and a map from model to merged stacks; else each
 * model stack is its own merged stack. */
#include <stdio.h>
#include <stdlib.h>

#include "model/model.h"
#include "t.h"
#include "write/write.h"

/* A frame of function `func` in libx.so at addr. */
static uint32_t frame_at(pc_profile *p, const char *func, uint64_t addr)
{
    uint32_t res = pc_resource(p, pc_intern_cstr(p, "libx.so"));
    return pc_add_frame(p, pc_func(p, pc_intern_cstr(p, func), res), addr, PC_CAT_OTHER,
                        PC_EXEC_NATIVE);
}

/* `same` gives the second frame f's function (else h's), so that it
 * merges with the first. */
static pc_profile *two_paths(int same)
{
    pc_profile *p = pc_profile_new();
    uint32_t f1 = frame_at(p, "f", 0x100);
    uint32_t f2 = frame_at(p, same ? "f" : "h", 0x104);
    uint32_t g1 = frame_at(p, "g", 0x200);
    /* s0 f@100, s1 f@100>g, s2 f@104 (or h), s3 f@104>g (or h>g) */
    uint32_t s0 = pc_stack(p, PC_NONE, f1), s1 = pc_stack(p, s0, g1);
    uint32_t s2 = pc_stack(p, PC_NONE, f2), s3 = pc_stack(p, s2, g1);
    uint32_t t = pc_add_thread(p, 1, 1, pc_intern_cstr(p, "main"));
    pc_add_sample(p, t, 10, s1, 1, 0, PC_NO_CPU);
    pc_add_sample(p, t, 20, s3, 1, 0, PC_NO_CPU);
    return p;
}

TEST(merge_without_merging_keeps_stack_ids)
{
    pc_profile *p = two_paths(0);
    pc_merged m;
    T_EQ_INT(pc_merge(p, &m), 0);
    T_CHECK(m.gs_of_stack == NULL);
    T_EQ_INT(m.n_gs, 4);
    T_EQ_INT(m.n_gf, 3);
    for (uint32_t s = 0; s < 4; s++) {
        T_EQ_INT(pc_gs_of(&m, s), s);
        T_EQ_INT(m.gs_prefix[s], p->stack.prefix[s]);
        T_EQ_INT(pc_gs_frame(&m, (uint32_t)s), m.gf_of_frame[p->stack.frame[s]]);
    }
    pc_merged_free(&m);
    pc_profile_free(p);
}

TEST(merge_of_two_addresses_maps_every_stack)
{
    pc_profile *p = two_paths(1);
    pc_merged m;
    T_EQ_INT(pc_merge(p, &m), 0);
    /* The first two stacks were their own before the third merged. */
    T_CHECK(m.gs_of_stack != NULL);
    T_EQ_INT(m.n_gs, 2);
    T_EQ_INT(m.n_gf, 2);
    T_EQ_INT(pc_gs_of(&m, 0), 0);
    T_EQ_INT(pc_gs_of(&m, 1), 1);
    T_EQ_INT(pc_gs_of(&m, 2), 0);
    T_EQ_INT(pc_gs_of(&m, 3), 1);
    T_EQ_INT(m.gs_prefix[1], 0);
    T_EQ_INT(m.gs_prefix[0], PC_NONE);
    pc_merged_free(&m);
    pc_profile_free(p);
}

/* One function at two addresses under different callers merges frames
 * but no stacks; under one caller, deeper than the roots, it merges both. */
TEST(merge_decides_by_siblings)
{
    for (int siblings = 0; siblings < 2; siblings++) {
        pc_profile *p = pc_profile_new();
        uint32_t a = frame_at(p, "a", 0x10), b = frame_at(p, "b", 0x20);
        uint32_t c1 = frame_at(p, "c", 0x30), c2 = frame_at(p, "c", 0x34);
        /* a>b>c@30 and a>c@34 (apart), or a>b>c@30 and a>b>c@34 */
        uint32_t sa = pc_stack(p, PC_NONE, a), sb = pc_stack(p, sa, b);
        uint32_t x = pc_stack(p, sb, c1);
        uint32_t y = pc_stack(p, siblings ? sb : sa, c2);
        pc_merged m;
        T_EQ_INT(pc_merge(p, &m), 0);
        T_EQ_INT(m.n_gf, 3);
        T_EQ_INT(m.n_gs, siblings ? 3 : 4);
        T_CHECK(siblings ? m.gs_of_stack != NULL : m.gs_of_stack == NULL);
        T_EQ_INT(pc_gs_of(&m, x), 2);
        T_EQ_INT(pc_gs_of(&m, y), siblings ? 2 : 3);
        T_EQ_INT(pc_gs_frame(&m, pc_gs_of(&m, y)), m.gf_of_frame[c1]);
        T_EQ_INT(m.gs_prefix[pc_gs_of(&m, y)], siblings ? pc_gs_of(&m, sb) : pc_gs_of(&m, sa));
        pc_merged_free(&m);
        pc_profile_free(p);
    }
}

/* Random trees against a plain reference: merged stack s is the first
 * (merged prefix, merged frame) pair seen, numbered in order.  Frames are
 * drawn from few functions (stacks merge) or each frame a function of its
 * own but for some that repeat under other callers (none merge); either
 * way every model stack must map to the reference's stack, and the map is
 * left out exactly where no two stacks merge.  Half the trees grow mostly
 * as chains, each stack under the one before, as new paths do: there the
 * stack after a prefix is its first child, and the other children are
 * found apart from it. */
TEST(merge_matches_a_reference)
{
    uint64_t rng = 99;
    int merging = 0;
    for (int round = 0; round < 80; round++) {
        pc_profile *p = pc_profile_new();
        uint32_t frames[64];
        int few = round % 2, chains = round % 4 >= 2;
        for (int f = 0; f < 64; f++) {
            char name[16];
            snprintf(name, sizeof name, "fn%d", few ? f % 5 : f % 48);
            frames[f] = frame_at(p, name, 0x1000 + (uint64_t)f * 4);
        }
        for (int s = 0; s < 300; s++) {
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            uint32_t n = (uint32_t)p->stack.n;
            uint32_t pre = n && (rng >> 40) % 8 ? (uint32_t)((rng >> 20) % n) : PC_NONE;
            if (chains && n && (rng >> 44) % 8)
                pre = n - 1;
            /* Chains' frames from a few, so that siblings meet often. */
            pc_stack(p, pre, frames[(rng >> 33) % (chains ? 8 : 64)]);
        }
        pc_merged m;
        T_EQ_INT(pc_merge(p, &m), 0);
        size_t ns = p->stack.n, n_ref = 0;
        uint32_t *ref = malloc(ns * sizeof *ref), *rp = malloc(ns * sizeof *rp),
                 *rf = malloc(ns * sizeof *rf);
        size_t same = 0;
        for (size_t s = 0; ref && rp && rf && s < ns; s++) {
            uint32_t gp = p->stack.prefix[s] == PC_NONE ? PC_NONE : ref[p->stack.prefix[s]];
            uint32_t gf = m.gf_of_frame[p->stack.frame[s]];
            size_t g = 0;
            while (g < n_ref && (rp[g] != gp || rf[g] != gf))
                g++;
            if (g == n_ref) {
                rp[n_ref] = gp;
                rf[n_ref++] = gf;
            }
            ref[s] = (uint32_t)g;
            same += pc_gs_of(&m, (uint32_t)s) == g && m.gs_prefix[g] == gp &&
                    pc_gs_frame(&m, g) == gf;
        }
        T_EQ_INT(same, ns);
        T_EQ_INT(m.n_gs, n_ref);
        T_EQ_INT(m.gs_of_stack == NULL, n_ref == ns);
        merging += n_ref < ns;
        free(ref);
        free(rp);
        free(rf);
        pc_merged_free(&m);
        pc_profile_free(p);
    }
    /* Both answers were given, many times. */
    T_CHECK(merging >= 20 && merging <= 70);
}
