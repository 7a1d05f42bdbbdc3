/* File paths as the inputs write them. */
#ifndef PROFCONV_BASE_PATH_H
#define PROFCONV_BASE_PATH_H

#include <stddef.h>
#include <string.h>

/* The file name of path s[0..n): what follows its last '/', *len bytes. */
static inline const char *pc_base_name(const char *s, size_t n, size_t *len)
{
    const char *b = s + n;
    while (b > s && b[-1] != '/')
        b--;
    *len = (size_t)(s + n - b);
    return b;
}

/* The package an Android app's file belongs to, from where Android
 * installs apps, /data/app/[~~XXX==/]com.example.app-YYY==/base.apk:
 * its start in path, *len bytes; NULL when path is no app's. */
static inline const char *pc_app_package(const char *path, size_t *len)
{
    const char *a = strstr(path, "/data/app/");
    if (!a)
        return NULL;
    a += 10;
    if (a[0] == '~' && a[1] == '~') {
        const char *slash = strchr(a, '/');
        if (!slash)
            return NULL;
        a = slash + 1;
    }
    *len = strcspn(a, "-/");
    return *len ? a : NULL;
}

#endif
