/* Any input, then every output format, each written twice to the same
 * bytes, Firefox files valid, and the Firefox format in a JSLB file too,
 * made in two passes that must agree, whenever its JSON is made.  (No
 * output format is also an input, so nothing is read back.) */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

int fuzz_roundtrip(const uint8_t *data, size_t size)
{
    pc_profile *p = fuzz_convert(data, size, 0, NULL);
    if (!p)
        return 0;
    static const int formats[] = {PC_FORMAT_FIREFOX, PC_FORMAT_GECKO, PC_FORMAT_FOLDED,
                                  PC_FORMAT_PPROF, PC_FORMAT_SPEEDSCOPE};
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        size_t n;
        unsigned char *out = fuzz_write(p, formats[i], 0, &n);
        if (formats[i] == PC_FORMAT_FIREFOX) {
            unsigned char *jslb = fuzz_write_in(p, formats[i], 0, PC_CONTAINER_JSLB, &n);
            if (out && !jslb) {
                fprintf(stderr, "fuzz: a JSLB file failed where its JSON was written\n");
                abort();
            }
            free(jslb);
        }
        free(out);
    }
    pc_profile_free(p);
    return 0;
}

PC_FUZZ_TARGET(fuzz_roundtrip)
