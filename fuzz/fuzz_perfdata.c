/* perf.data recordings (Linux perf and simpleperf, file and pipe forms):
 * read with one thread and with two, the same profile (or the same error)
 * both ways, then written as processed JSON, Gecko JSON and pprof. */
#include "fuzz.h"
#include "read/perfdata/perfdata.h"

int fuzz_perfdata(const uint8_t *data, size_t size)
{
    if (pd_detect(data, size))
        fuzz_same_both_ways(data, size, 1);
    return 0;
}

PC_FUZZ_TARGET(fuzz_perfdata)
