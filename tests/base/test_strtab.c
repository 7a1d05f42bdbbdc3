/* The string table: a part of a string already interned may be interned
 * itself, even when the arena has to grow (and move) to take it. */
#include <stdio.h>
#include <string.h>

#include "base/strtab.h"
#include "t.h"

TEST(strtab_part_of_its_own_string)
{
    pc_strtab t;
    memset(&t, 0, sizeof t);
    char name[64];
    /* Each round interns a name, then its tail from inside the arena;
     * thousands of rounds make the arena grow while a tail is the source. */
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(name, sizeof name, "void pkg.Class%d.method(int)", i);
        uint32_t id = pc_str_intern(&t, name, (size_t)n);
        T_CHECK(id != PC_NONE);
        if (id == PC_NONE)
            break;
        const char *s = pc_str(&t, id);
        const char *paren = strchr(s, '(');
        uint32_t part = pc_str_intern(&t, s + 5, (size_t)(paren - (s + 5)));
        char want[64];
        snprintf(want, sizeof want, "pkg.Class%d.method", i);
        if (part == PC_NONE || strcmp(pc_str(&t, part), want) != 0) {
            T_EQ_STR(part == PC_NONE ? "(none)" : pc_str(&t, part), want);
            break;
        }
    }
    pc_strtab_free(&t);
}
