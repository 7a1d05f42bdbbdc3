/* The library archive exports its public API and nothing else: every
 * function include/profconv.h declares, and no other symbol, so that a
 * program linking it meets no name of ours it did not ask for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "test_util.h"

/* Adds each "pc_name(" declared at the start of a line (after a return
 * type) in the header to names, as "|pc_name|". */
static void declared(const char *header, char *names, size_t size)
{
    size_t used = 0;
    for (const char *s = header; (s = strstr(s, "pc_")) != NULL; s++) {
        /* A declaration: the name follows a type and is followed by "(". */
        if (s == header || (s[-1] != ' ' && s[-1] != '*'))
            continue;
        size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz_0123456789");
        if (s[n] != '(')
            continue;
        const char *line = s;
        while (line > header && line[-1] != '\n')
            line--;
        if (*line == ' ' || *line == '*' || *line == '/')
            continue;  /* comments and typedefs' insides */
        if (strncmp(line, "typedef", 7) == 0)
            continue;
        if (used + n + 3 < size)
            used += (size_t)snprintf(names + used, size - used, "|%.*s|", (int)n, s);
    }
}

TEST(library_exports_public_api_only)
{
    char archive[1024];
    snprintf(archive, sizeof archive, "%s", t_profconv());
    char *slash = strrchr(archive, '/');
    snprintf(slash ? slash + 1 : archive, sizeof archive - (size_t)(slash ? slash + 1 - archive : 0),
             "libprofconv.a");
    FILE *probe = fopen(archive, "rb");
    if (!probe) {
        t_skip("no %s next to the binary", archive);
        return;
    }
    fclose(probe);
    char *header = read_text("include/profconv.h");
    T_CHECK(header != NULL);
    if (!header)
        return;
    static char api[8192];
    declared(header, api, sizeof api);
    T_CONTAINS(api, "|pc_convert|");
    T_CONTAINS(api, "|pc_write_memory|");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "nm -g --defined-only '%s' 2>/dev/null", archive);
    FILE *p = popen(cmd, "r");
    if (!p) {
        t_skip("nm cannot run");
        free(header);
        return;
    }
    char line[512], sym[256], kind;
    static char got[8192];
    size_t exported = 0, used = 0;
    unsigned long long addr;
    while (fgets(line, sizeof line, p)) {
        if (sscanf(line, "%llx %c %255s", &addr, &kind, sym) != 3)
            continue;
        exported++;
        char key[260];
        snprintf(key, sizeof key, "|%s|", sym);
        if (!strstr(api, key))
            t_fail(__FILE__, __LINE__, "the archive exports %s, which profconv.h does not "
                   "declare", sym);
        if (used + strlen(key) < sizeof got)
            used += (size_t)snprintf(got + used, sizeof got - used, "%s", key);
    }
    pclose(p);
    if (exported == 0) {
        t_skip("nm lists nothing (is binutils installed?)");
        free(header);
        return;
    }
    /* And every declared function is there. */
    for (const char *s = api; (s = strchr(s, '|')) != NULL && s[1];) {
        const char *e = strchr(s + 1, '|');
        if (!e)
            break;
        char key[260];
        snprintf(key, sizeof key, "|%.*s|", (int)(e - s - 1), s + 1);
        if (!strstr(got, key))
            t_fail(__FILE__, __LINE__, "profconv.h declares %s, the archive lacks it", key);
        s = e + 1;
    }
    free(header);
}
