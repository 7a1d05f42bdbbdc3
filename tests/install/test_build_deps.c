/* The install instructions against the build.
 *
 * The README's quick start installs the build dependencies with one
 * apt-get line; tests/tools/check-build-deps.sh reads that line and checks
 * that every header, library and program the build uses comes from those
 * packages or from what they pull in (on systems with dpkg; skipped
 * elsewhere).
 *
 * The static C++ runtime is optional (Fedora packages it apart): without
 * it, the Makefile links the shared one.  A compiler that knows no
 * libstdc++.a stands in for such a system. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "t.h"

/* Runs cmd; its output (at most size - 1 bytes) in out; exit status, or -1. */
static int run(const char *cmd, char *out, size_t size)
{
    out[0] = 0;
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t n = fread(out, 1, size - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST_SLOW(install_build_deps_are_the_readme_line)
{
    static char out[16384];
    /* The build under test names the headers its compiles read, in its
     * dependency files. */
    char built[512], cmd[700];
    snprintf(built, sizeof built, "%s", t_profconv());
    char *slash = strrchr(built, '/');
    if (slash)
        *slash = 0;
    snprintf(cmd, sizeof cmd, "BUILT='%s' bash tests/tools/check-build-deps.sh 2>&1",
             slash ? built : "");
    int rc = run(cmd, out, sizeof out);
    if (rc == 77) {
        out[strcspn(out, "\n")] = 0;
        t_skip("%s", out);
        return;
    }
    if (rc != 0) {
        for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
            t_fail(__FILE__, __LINE__, "%s", line);
        if (!out[0])
            t_fail(__FILE__, __LINE__, "check-build-deps.sh exited %d", rc);
    }
}

/* The link line of BUILD/profconv that `make -n` prints with compiler cc;
 * 0 when make cannot run. */
static int profconv_link_line(const char *cc, const char *build, char *line, size_t size)
{
    static char out[65536];
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SAN -u TSAN make -n -B BUILD='%s' CC='%s' '%s/profconv' "
             "2>/dev/null",
             build, cc, build);
    if (run(cmd, out, sizeof out) != 0)
        return 0;
    char needle[1100];
    snprintf(needle, sizeof needle, "-o %s/profconv ", build);
    for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n"))
        if (strstr(l, needle)) {
            snprintf(line, size, "%s", l);
            return 1;
        }
    return 0;
}

TEST(install_links_shared_cxx_runtime_without_static_one)
{
    if (system("command -v make >/dev/null 2>&1") != 0) {
        t_skip("make is absent: the link line is not checked");
        return;
    }
    char cc[1024], build[1024];
    snprintf(cc, sizeof cc, "%s/cc-without-libstdcxx-a", t_tmpdir());
    snprintf(build, sizeof build, "%s/build-nostatic", t_tmpdir());
    FILE *f = fopen(cc, "w");
    T_CHECK(f != NULL);
    if (!f)
        return;
    fputs("#!/bin/sh\n"
          "for a; do\n"
          "    [ \"$a\" = -print-file-name=libstdc++.a ] && { echo libstdc++.a; exit 0; }\n"
          "done\n"
          "exec cc \"$@\"\n",
          f);
    fclose(f);
    chmod(cc, 0755);

    /* The program links every object of the library itself when optimized
     * across files: a long line. */
    static char line[65536];
    T_CHECK(profconv_link_line(cc, build, line, sizeof line));
    T_CONTAINS(line, " -lstdc++");
    if (strstr(line, "-Bstatic"))
        t_fail(__FILE__, __LINE__, "links the static C++ runtime that the compiler lacks: %s",
               line);

    /* Where the compiler has it, the static one is linked. */
    char path[1024];
    if (run("cc -print-file-name=libstdc++.a 2>/dev/null", path, sizeof path) == 0 &&
        path[0] == '/') {
        path[strcspn(path, "\n")] = 0;
        struct stat st;
        if (stat(path, &st) == 0) {
            T_CHECK(profconv_link_line("cc", build, line, sizeof line));
            T_CONTAINS(line, "-Wl,-Bstatic -lstdc++ -Wl,-Bdynamic");
        }
    }
}
