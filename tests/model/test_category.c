/* Frame categories by the file a frame's code lives in: one function for
 * every reader, so a path gets the same colour from any input. */
#include <string.h>

#include "t.h"
#include "model/model.h"

TEST(category_of_paths)
{
    static const struct {
        const char *path;
        int cat;
    } cases[] = {
        {"[kernel.kallsyms]", PC_CAT_KERNEL},
        {"/kernel", PC_CAT_KERNEL},          /* Perfetto's kernel mapping */
        {"/lib/modules/x/nf.ko", PC_CAT_KERNEL},
        {"/memfd:jit-cache (deleted)", PC_CAT_JIT},
        {"/memfd:jit-zygote-cache (deleted)", PC_CAT_JIT},
        {"[JIT app cache]", PC_CAT_JIT},
        {"/tmp/perf-123.map", PC_CAT_JIT},
        {"/system/lib64/libc.so", PC_CAT_NATIVE},
        {"/usr/lib/x86_64-linux-gnu/libc.so.6", PC_CAT_NATIVE},
        {"/data/app/base.apk", PC_CAT_DEX},
        {"/system/framework/arm64/boot.oat", PC_CAT_OAT},
        {"/usr/bin/python3", PC_CAT_USER},
        {"/kernelx", PC_CAT_USER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        t_case("category_of_paths: %s", cases[i].path);
        T_EQ_INT(pc_category_of(cases[i].path, strlen(cases[i].path)), cases[i].cat);
    }
}
