/* nm's answers for the tests (nm.h). */
#include "nm.h"

#include <stdio.h>
#include <string.h>

int nm_symbol(const char *file, const char *name, uint64_t *start, uint64_t *size)
{
    char cmd[2048], line[1024];
    snprintf(cmd, sizeof cmd, "nm -S --defined-only '%s' 2>/dev/null", file);
    FILE *f = popen(cmd, "r");
    if (!f)
        return 0;
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long a, s = 0;
        char type, sym[512];
        /* "ADDR SIZE TYPE NAME", or "ADDR TYPE NAME" when nm knows no size. */
        int got = sscanf(line, "%llx %llx %c %511s", &a, &s, &type, sym) == 4 ||
                  (s = 0, sscanf(line, "%llx %c %511s", &a, &type, sym) == 3);
        if (got && strcmp(sym, name) == 0) {
            *start = a;
            *size = s;
            found = 1;
        }
    }
    pclose(f);
    return found;
}
