#include "base/demangle.h"

#include <stddef.h>
#include <string.h>

/* libstdc++'s demangler has C linkage; declaring it here keeps the
 * project in C. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *pc_demangle(const char *name)
{
    if (strncmp(name, "_Z", 2) != 0)
        return NULL;
    int status = 0;
    char *s = __cxa_demangle(name, NULL, NULL, &status);
    return status == 0 ? s : NULL;
}
