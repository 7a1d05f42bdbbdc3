/* perf script text: read, then written as folded stacks and speedscope. */
#include <stdlib.h>

#include "fuzz.h"
#include "read/perfscript/perfscript.h"

int fuzz_perfscript(const uint8_t *data, size_t size)
{
    if (!ps_detect(data, size < PS_DETECT_LEN ? size : PS_DETECT_LEN))
        return 0;
    pc_profile *p = fuzz_convert(data, size, 0, NULL);
    if (p) {
        size_t n;
        free(fuzz_write(p, PC_FORMAT_FOLDED, 0, &n));
        free(fuzz_write(p, PC_FORMAT_SPEEDSCOPE, 0, &n));
        free(fuzz_write(p, PC_FORMAT_FIREFOX, 0, &n));
    }
    pc_profile_free(p);
    return 0;
}

PC_FUZZ_TARGET(fuzz_perfscript)
