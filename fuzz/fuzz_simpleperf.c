/* simpleperf report-sample files: read with one thread and with two, the
 * same profile (or the same error) both ways, then written as processed
 * and Gecko JSON. */
#include "fuzz.h"
#include "read/simpleperf/simpleperf.h"

int fuzz_simpleperf(const uint8_t *data, size_t size)
{
    if (sp_detect(data, size))
        fuzz_same_both_ways(data, size, 0);
    return 0;
}

PC_FUZZ_TARGET(fuzz_simpleperf)
