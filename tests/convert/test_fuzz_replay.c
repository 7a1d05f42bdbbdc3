/* The fuzz targets over their saved corpus (fuzz/corpus/TARGET) and every
 * input that once crashed one (fuzz/crashes/TARGET), with the normal
 * build: what the fuzzers found stays fixed. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "t.h"

static size_t replay_dir(const char *dir, int (*fn)(const uint8_t *, size_t))
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        unsigned char *buf = NULL;
        size_t len = 0, cap = 0, got;
        do {
            if (len == cap) {
                cap = cap ? cap * 2 : 65536;
                buf = realloc(buf, cap);
            }
            got = fread(buf + len, 1, cap - len, f);
            len += got;
        } while (got > 0);
        fclose(f);
        /* A private copy exactly as long as the input, so that reading
         * one byte too far is caught by the sanitizer build. */
        unsigned char *exact = malloc(len ? len : 1);
        if (len)
            memcpy(exact, buf, len);
        free(buf);
        fn(exact, len);
        free(exact);
        n++;
    }
    closedir(d);
    return n;
}

TEST_SLOW(fuzz_replay)
{
    static const struct {
        const char *name;
        int (*fn)(const uint8_t *, size_t);
    } targets[] = {
        {"simpleperf", fuzz_simpleperf}, {"perfetto", fuzz_perfetto},
        {"perfscript", fuzz_perfscript}, {"gzip", fuzz_gzip},
        {"proguard", fuzz_proguard}, {"filter", fuzz_filter},
        {"roundtrip", fuzz_roundtrip}, {"options", fuzz_options},
        {"gzipwrap", fuzz_gzipwrap}, {"perfetto_compressed", fuzz_perfetto_compressed},
        {"perfdata", fuzz_perfdata},
    };
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
        t_case("fuzz_replay %s", targets[i].name);
        char dir[256];
        snprintf(dir, sizeof dir, "fuzz/corpus/%s", targets[i].name);
        size_t n = replay_dir(dir, targets[i].fn);
        if (n == 0)
            t_fail(__FILE__, __LINE__, "%s: no saved corpus", dir);
        snprintf(dir, sizeof dir, "fuzz/crashes/%s", targets[i].name);
        replay_dir(dir, targets[i].fn);
    }
}
