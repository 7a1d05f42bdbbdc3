/* The temporary file an output is written to before its rename: a target
 * name of any length a directory takes (up to NAME_MAX bytes) is
 * writable, the temporary name stays beside it and unique, a replaced
 * file's mode carries over without setuid, setgid or sticky, and a file
 * replaced leaves nothing beside it, or stays where the new one cannot go
 * in. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/sink.h"
#include "t.h"
#include "test_util.h"

/* A fresh, empty directory under the scratch directory. */
static const char *fresh_dir(const char *name)
{
    static char dir[1024];
    char cmd[2200];
    snprintf(dir, sizeof dir, "%s/%s", t_tmpdir(), name);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    T_EQ_INT(system(cmd), 0);
    return dir;
}

/* The one entry of dir other than keep (NULL: any), into out; the number
 * of such entries. */
static int other_entries(const char *dir, const char *keep, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (keep && !strcmp(e->d_name, keep))
            continue;
        if (n++ == 0)
            snprintf(out, cap, "%s", e->d_name);
    }
    closedir(d);
    return n;
}

static int valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int k = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2
              : (*p & 0xf8) == 0xf0 ? 3 : -1;
        if (k < 0)
            return 0;
        p++;
        for (; k > 0; k--, p++)
            if ((*p & 0xc0) != 0x80)
                return 0;
    }
    return 1;
}

/* Writes "hello" to dir/name through a file sink, checking the temporary
 * file seen while it is open. */
static void write_named(const char *dir, const char *name)
{
    char path[2048], tmp[NAME_MAX + 1];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    pc_sink *s = NULL;
    pc_error err;
    int st = sink_open_file(&s, path, 0, &err);
    T_EQ_INT(st, PC_OK);
    if (st != PC_OK) {
        t_fail(__FILE__, __LINE__, "%s", err.message);
        return;
    }
    /* Beside the target, hidden, ending in mkstemp's suffix. */
    T_EQ_INT(other_entries(dir, name, tmp, sizeof tmp), 1);
    T_CHECK(strlen(tmp) <= NAME_MAX);
    T_CHECK(tmp[0] == '.');
    T_CHECK(strstr(tmp, ".tmp-") != NULL);
    T_CHECK(valid_utf8(tmp) || !valid_utf8(name));
    /* Its head is the head of the target's name. */
    const char *suffix = strstr(tmp, ".tmp-");
    if (suffix) {
        size_t head = (size_t)(suffix - tmp) - 1;
        size_t len = strlen(name), room = NAME_MAX - strlen("..tmp-XXXXXX");
        T_CHECK(head <= len && memcmp(tmp + 1, name, head) == 0);
        /* Whole when it fits, else cut by at most a character's bytes. */
        T_CHECK(len <= room ? head == len : head <= room && head + 3 >= room);
    }
    sink_write(s, "hello", 5);
    st = sink_finish(s, NULL, NULL, &err);
    T_EQ_INT(st, PC_OK);
    if (st != PC_OK)
        t_fail(__FILE__, __LINE__, "%s", err.message);
    size_t n = 0;
    unsigned char *got = t_read_file(path, &n);
    T_CHECK(got && n == 5 && memcmp(got, "hello", 5) == 0);
    free(got);
    T_EQ_INT(other_entries(dir, name, tmp, sizeof tmp), 0);
}

TEST(sink_names_up_to_name_max)
{
    char name[NAME_MAX + 2];
    for (size_t len = NAME_MAX - 11; len <= NAME_MAX; len++) {
        t_case("sink_names_up_to_name_max: %zu bytes", len);
        const char *dir = fresh_dir("long-names");
        memset(name, 'n', len);
        memcpy(name + len - 5, ".json", 5);
        name[len] = 0;
        write_named(dir, name);
    }
    /* Two-byte characters cut by the shortening: the temporary name keeps
     * whole characters. */
    for (size_t len = NAME_MAX - 1; len <= NAME_MAX; len++) {
        t_case("sink_names_up_to_name_max: %zu bytes of UTF-8", len);
        const char *dir = fresh_dir("long-utf8");
        size_t i = 0;
        if (len % 2)
            name[i++] = 'x';
        for (; i < len; i += 2)
            memcpy(name + i, "\xc3\xa9", 2);
        name[len] = 0;
        write_named(dir, name);
    }
}

TEST(sink_long_names_are_unique_and_refused_past_name_max)
{
    t_case("sink_long_names: two outputs to one long name at once");
    const char *dir = fresh_dir("long-twice");
    char name[NAME_MAX + 2], path[2048];
    memset(name, 'q', NAME_MAX);
    name[NAME_MAX] = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    pc_sink *a = NULL, *b = NULL;
    pc_error err;
    T_EQ_INT(sink_open_file(&a, path, 0, &err), PC_OK);
    T_EQ_INT(sink_open_file(&b, path, 0, &err), PC_OK);
    char first[NAME_MAX + 1];
    T_EQ_INT(other_entries(dir, NULL, first, sizeof first), 2);
    if (a && b) {
        sink_write(a, "a", 1);
        sink_write(b, "b", 1);
        T_EQ_INT(sink_finish(a, NULL, NULL, &err), PC_OK);
        T_EQ_INT(sink_finish(b, NULL, NULL, &err), PC_OK);
        size_t n = 0;
        unsigned char *got = t_read_file(path, &n);
        T_CHECK(got && n == 1 && got[0] == 'b');
        free(got);
        T_EQ_INT(other_entries(dir, name, first, sizeof first), 0);
    }

    /* One byte more than a directory takes: refused before any writing,
     * with the system's reason. */
    t_case("sink_long_names: %d bytes", NAME_MAX + 1);
    dir = fresh_dir("too-long");
    memset(name, 'q', NAME_MAX + 1);
    name[NAME_MAX + 1] = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    pc_sink *c = NULL;
    T_EQ_INT(sink_open_file(&c, path, 0, &err), PC_EIO);
    T_CONTAINS(err.message, strerror(ENAMETOOLONG));
    T_EQ_INT(other_entries(dir, NULL, first, sizeof first), 0);
}

/* The mode of path, or -1. */
static long mode_of(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)(sb.st_mode & 07777) : -1;
}

TEST(sink_replace_drops_setuid)
{
    const char *dir = fresh_dir("modes");
    char input[1200], out[1200], cmd[4096];
    snprintf(input, sizeof input, "%s/in.trace", dir);
    T_CHECK(write_simpleperf_file(input, 20, 1) > 0);
    static const struct {
        long before, after;
    } cases[] = {
        {06755, 0755}, {04750, 0750}, {02640, 0640}, {01644, 0644}, {0604, 0604},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        t_case("sink_replace_drops_setuid: %04lo", cases[i].before);
        snprintf(out, sizeof out, "%s/out-%zu.json", dir, i);
        FILE *f = fopen(out, "w");
        T_CHECK(f != NULL);
        if (!f)
            continue;
        fputs("old\n", f);
        fclose(f);
        if (chmod(out, (mode_t)cases[i].before) < 0 || mode_of(out) != cases[i].before) {
            t_skip("this system does not set mode %04lo", cases[i].before);
            continue;
        }
        snprintf(cmd, sizeof cmd, "'%s' -q --to firefox '%s' -o '%s'", t_profconv(), input,
                 out);
        T_EQ_INT(system(cmd), 0);
        T_EQ_INT(mode_of(out), cases[i].after);
        char *text = read_text(out);
        T_CHECK(text && text[0] == '{');
        free(text);
    }
}

/* A file written to an existing name takes its place, with nothing left
 * beside it (the old file is moved aside before the rename, then
 * removed); where the new one cannot go in (its temporary file is gone),
 * the old one is back in its place and the error says so. */
TEST(sink_replace_leaves_no_file_aside)
{
    const char *dir = fresh_dir("replace");
    char path[1200], other[NAME_MAX + 1];
    snprintf(path, sizeof path, "%s/out.json", dir);
    FILE *f = fopen(path, "w");
    T_CHECK(f != NULL);
    if (!f)
        return;
    fputs("old", f);
    fclose(f);
    for (int round = 0; round < 2; round++) {
        pc_sink *s = NULL;
        pc_error err;
        T_EQ_INT(sink_open_file(&s, path, 0, &err), PC_OK);
        if (!s)
            return;
        T_EQ_INT(other_entries(dir, "out.json", other, sizeof other), 1);
        if (round == 1) {
            char tmp[2400];
            snprintf(tmp, sizeof tmp, "%s/%s", dir, other);
            T_EQ_INT(unlink(tmp), 0);
        }
        sink_write(s, round ? "newer!!!" : "new text", 8);
        int st = sink_finish(s, NULL, NULL, &err);
        size_t n = 0;
        unsigned char *got = t_read_file(path, &n);
        if (round == 0) {
            T_EQ_INT(st, PC_OK);
            T_CHECK(got && n == 8 && memcmp(got, "new text", 8) == 0);
        } else {
            T_CHECK(st != PC_OK);
            T_CHECK(strstr(err.message, "cannot rename the finished file into place") != NULL);
            /* The file of round 0, back in its place. */
            T_CHECK(got && n == 8 && memcmp(got, "new text", 8) == 0);
        }
        free(got);
        T_EQ_INT(other_entries(dir, "out.json", other, sizeof other), 0);
    }
}
