/* The hash index: a table reserved full keeps up to three quarters of its
 * slots used, and finds every entry after each growth. */
#include <stdlib.h>

#include "base/hashtab.h"
#include "t.h"

TEST(hashtab_reserve_full_three_quarters)
{
    enum { N = 98304 };
    pc_htab t = {0};
    uint64_t *key = malloc(N * sizeof *key);
    T_CHECK(key != NULL);
    if (!key)
        return;
    size_t grew_at_most = 0, bad = 0;
    for (uint32_t i = 0; i < N; i++) {
        size_t before = t.slot ? t.mask + 1 : 0;
        T_CHECK(pc_htab_reserve_full(&t, (size_t)i + 1) == 0);
        size_t cap = t.mask + 1;
        /* Grown only when the entry would pass three quarters, to the
         * least power of two that holds it so. */
        if (cap != before) {
            bad += before && (size_t)i + 1 <= before / 4 * 3;
            bad += (size_t)i + 1 > cap / 4 * 3 || (cap > 16 && (size_t)i + 1 <= cap / 8 * 3);
            grew_at_most = cap;
        }
        key[i] = pc_mix64(i * 7919u + 3);
        pc_probe pr;
        pc_probe_start(&t, key[i], &pr);
        while (pc_probe_next(&t, &pr) != PC_NONE)
            ;
        pc_htab_insert(&t, &pr, i);
    }
    T_EQ_INT(bad, 0);
    /* 98,304 entries fill 131,072 slots to three quarters; at half they
     * would take 262,144. */
    T_EQ_INT(grew_at_most, 131072);
    size_t missing = 0;
    for (uint32_t i = 0; i < N; i++) {
        pc_probe pr;
        pc_probe_start(&t, key[i], &pr);
        uint32_t id;
        while ((id = pc_probe_next(&t, &pr)) != PC_NONE && id != i)
            ;
        missing += id != i;
    }
    T_EQ_INT(missing, 0);
    pc_htab_free(&t);
    free(key);
}
