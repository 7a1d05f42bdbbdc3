/* File paths as the inputs write them. */
#ifndef PROFCONV_BASE_PATH_H
#define PROFCONV_BASE_PATH_H

#include <stddef.h>

/* The file name of path s[0..n): what follows its last '/', *len bytes. */
static inline const char *pc_base_name(const char *s, size_t n, size_t *len)
{
    const char *b = s + n;
    while (b > s && b[-1] != '/')
        b--;
    *len = (size_t)(s + n - b);
    return b;
}

#endif
