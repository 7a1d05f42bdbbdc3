/* R8/ProGuard mapping files: parsed, then looked up. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "java/proguard.h"

int fuzz_proguard(const uint8_t *data, size_t size)
{
    pc_proguard m;
    pc_error err;
    memset(&m, 0, sizeof m);
    if (pc_proguard_parse(&m, (const char *)data, size, "fuzz", &err) == PC_OK)
        pc_proguard_free(&m);
    return 0;
}

PC_FUZZ_TARGET(fuzz_proguard)
