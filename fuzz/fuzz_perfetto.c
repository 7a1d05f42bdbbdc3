/* Perfetto traces: read, then written as processed JSON and pprof. */
#include <stdlib.h>

#include "fuzz.h"
#include "read/perfetto/perfetto.h"

int fuzz_perfetto(const uint8_t *data, size_t size)
{
    if (!pf_detect(data, size))
        return 0;
    pc_profile *p = fuzz_convert(data, size, 0, NULL);
    if (p) {
        size_t n;
        free(fuzz_write(p, PC_FORMAT_FIREFOX, 0, &n));
        free(fuzz_write(p, PC_FORMAT_PPROF, 0, &n));
    }
    pc_profile_free(p);
    return 0;
}

PC_FUZZ_TARGET(fuzz_perfetto)
