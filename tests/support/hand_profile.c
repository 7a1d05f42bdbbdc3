/* Profiles built by hand (hand_profile.h). */
#include <stdio.h>
#include <string.h>

#include "hand_profile.h"

pc_profile *hand_profile(const hand_sample *s, size_t n, int unit, const char *diff_thread)
{
    pc_profile *p = pc_profile_new();
    if (!p)
        return NULL;
    uint32_t res = pc_resource(p, pc_intern_cstr(p, "libhand.so"));
    uint32_t ev = pc_event(p, pc_intern_cstr(p, "cpu-clock"), unit, 0);
    for (size_t i = 0; i < n; i++) {
        uint32_t name = pc_intern_cstr(p, s[i].thread), t = PC_NONE;
        for (size_t k = 0; k < p->thread.n; k++)
            if (p->thread.name[k] == name)
                t = (uint32_t)k;
        if (t == PC_NONE) {
            t = pc_add_thread(p, 100, 100 + (int64_t)p->thread.n, name);
            if (t != PC_NONE && diff_thread && strcmp(diff_thread, s[i].thread) == 0)
                p->thread.diff[t] = 1;
        }
        uint32_t stack = PC_NONE;
        for (const char *a = s[i].path; *a;) {
            size_t len = strcspn(a, ";");
            uint32_t fn = pc_func(p, pc_intern(p, a, len), res);
            uint32_t fr = pc_add_frame(p, fn, 0x1000 + 16 * (uint64_t)p->frame.n, PC_CAT_NATIVE,
                                       PC_EXEC_NATIVE);
            stack = pc_stack(p, stack, fr);
            a += len + (a[len] == ';');
        }
        pc_add_sample(p, t, 1000 * (uint64_t)(i + 1), stack, s[i].weight, (uint16_t)ev,
                      PC_NO_CPU);
    }
    pc_note_extent(p);
    if (p->oom || pc_group_samples(p) < 0) {
        pc_profile_free(p);
        return NULL;
    }
    return p;
}
