/* perf.data recordings (Linux perf and simpleperf, file and pipe forms):
 * read with one thread and with two, the same profile (or the same error)
 * both ways, then written as processed JSON, Gecko JSON and pprof. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "read/perfdata/perfdata.h"

int fuzz_perfdata(const uint8_t *data, size_t size)
{
    if (!pd_detect(data, size))
        return 0;
    pc_profile *one = fuzz_convert(data, size, 1, NULL);
    pc_profile *two = fuzz_convert(data, size, 0, NULL);
    if (!one != !two)
        abort();
    if (one) {
        size_t na, nb;
        unsigned char *a = fuzz_write(one, PC_FORMAT_FIREFOX, 0, &na);
        unsigned char *b = fuzz_write(two, PC_FORMAT_FIREFOX, 0, &nb);
        if (!a != !b || (a && (na != nb || (na && memcmp(a, b, na) != 0))))
            abort();
        free(a);
        free(b);
        free(fuzz_write(one, PC_FORMAT_GECKO, 0, &na));
        free(fuzz_write(one, PC_FORMAT_PPROF, 0, &na));
    }
    pc_profile_free(one);
    pc_profile_free(two);
    return 0;
}

PC_FUZZ_TARGET(fuzz_perfdata)
