/* simpleperf filter files, applied to the tests' Android fixture.  The
 * parser reads a file, so the bytes go to one first. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fixtures.h"
#include "fuzz.h"

static char path[64];

static void remove_file(void)
{
    unlink(path);
}

int fuzz_filter(const uint8_t *data, size_t size)
{
    static spe fixture;
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/profconv-fuzz-filter-%ld", (long)getpid());
        fx_android(&fixture);
        atexit(remove_file);
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(data, 1, size, f) == size;
    if (fclose(f) != 0 || !ok)
        return 0;
    pc_profile *p = fuzz_convert(fixture.out.data, fixture.out.len, 1, path);
    if (p) {
        size_t n;
        free(fuzz_write(p, PC_FORMAT_FIREFOX, 0, &n));
    }
    pc_profile_free(p);
    return 0;
}

PC_FUZZ_TARGET(fuzz_filter)
