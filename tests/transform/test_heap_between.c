/* --heap-dump A..B on rows the reader does not give but a transform can
 * make: two rows of one callsite in a dump (--remove-method merges
 * stacks).  Each side's rows of a callsite are summed before the base is
 * taken away. */
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "transform/transform.h"

TEST(heap_dump_between_sums_a_callsites_rows)
{
    pc_profile *p = pc_profile_new();
    T_CHECK(p != NULL);
    if (!p)
        return;
    uint32_t res = pc_resource(p, pc_intern_cstr(p, "libc.so"));
    uint32_t s = pc_stack(p, PC_NONE, pc_add_frame(p, pc_func(p, pc_intern_cstr(p, "malloc"), res),
                                                   0x10, PC_CAT_NATIVE, PC_EXEC_NATIVE));
    uint32_t other = pc_stack(p, PC_NONE,
                              pc_add_frame(p, pc_func(p, pc_intern_cstr(p, "calloc"), res), 0x20,
                                           PC_CAT_NATIVE, PC_EXEC_NATIVE));
    uint32_t t = pc_add_thread(p, 7, 7, pc_intern_cstr(p, "app"));
    uint32_t heap = pc_intern_cstr(p, "libc.malloc");
    /* Dump 1: 100 and 10 bytes at malloc; dump 2: 150 and 60, and 5 at
     * calloc, which dump 1 did not have. */
    pc_add_heap(p, t, heap, 0, 1000, s, 100, 0, 1, 0);
    pc_add_heap(p, t, heap, 0, 1000, s, 10, 0, 1, 0);
    pc_add_heap(p, t, heap, 1, 2000, s, 150, 0, 3, 0);
    pc_add_heap(p, t, heap, 1, 2000, s, 60, 0, 2, 0);
    pc_add_heap(p, t, heap, 1, 2000, other, 5, 0, 1, 0);
    p->heap.n_dumps = 2;
    pc_note_extent(p);
    pc_options o;
    pc_options_init(&o);
    o.heap_dump_base = 1;
    pc_error err;
    T_EQ_INT(pc_select_heap(p, &o, &err), PC_OK);
    uint64_t at_s = 0, at_other = 0, count_s = 0;
    for (size_t i = 0; i < p->heap.n; i++) {
        if (!pc_heap_shown(p, i))
            continue;
        if (p->heap.stack[i] == s) {
            at_s += p->heap.alloc[i];
            count_s += p->heap.alloc_count[i];
        } else {
            at_other += p->heap.alloc[i];
        }
    }
    T_EQ_INT(at_s, 100);      /* 210 - 110 */
    T_EQ_INT(count_s, 3);     /* 5 - 2 */
    T_EQ_INT(at_other, 5);
    pc_profile_free(p);
}
