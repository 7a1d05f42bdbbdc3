/* gzip-compressed input of any kind: the input layer's gunzip, whatever
 * reader the content then finds. */
#include <stdlib.h>

#include "fuzz.h"

int fuzz_gzip(const uint8_t *data, size_t size)
{
    if (size < 3 || data[0] != 0x1f || data[1] != 0x8b || data[2] != 0x08)
        return 0;
    pc_profile *p = fuzz_convert(data, size, 0, NULL);
    if (p) {
        size_t n;
        free(fuzz_write(p, PC_FORMAT_FIREFOX, 1, &n));
    }
    pc_profile_free(p);
    return 0;
}

PC_FUZZ_TARGET(fuzz_gzip)
