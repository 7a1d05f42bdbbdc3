/* make install and uninstall into a scratch prefix, as a packager or a
 * user would: the installed files, a program built against the installed
 * library with pkg-config (shared and static), the man page read by man,
 * DESTDIR, and an uninstall that leaves nothing behind. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixtures.h"
#include "profconv.h"
#include "sp_encode.h"
#include "t.h"
#include "test_util.h"

/* The make run by the test must not join the jobserver of a make that
 * runs the tests, nor take the variables given to it (a make exports
 * those of its command line). */
#define MAKE                                                               \
    "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SAN -u TSAN -u DESTDIR "     \
    "-u BINDIR -u LIBDIR -u INCLUDEDIR -u MANDIR -u PKGCONFIGDIR "           \
    "make -s --no-print-directory"

/* A user's program: converts its argument to folded stacks on standard
 * output, through the public API alone. */
static const char prog_src[] =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <profconv.h>\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    pc_options o;\n"
    "    pc_write_options w;\n"
    "    pc_error err;\n"
    "    pc_input *in;\n"
    "    pc_profile *p;\n"
    "    unsigned char *out;\n"
    "    size_t len;\n"
    "    if (argc != 2)\n"
    "        return 1;\n"
    "    pc_options_init(&o);\n"
    "    pc_write_options_init(&w);\n"
    "    w.format = pc_format_by_name(\"folded\");\n"
    "    if (pc_input_open(&in, argv[1], &err) != 0 ||\n"
    "        pc_convert(in, &o, &p, &err) != 0 ||\n"
    "        pc_write_memory(p, &w, &out, &len, &err) != 0) {\n"
    "        fprintf(stderr, \"%s\\n\", err.message);\n"
    "        return 2;\n"
    "    }\n"
    "    fwrite(out, 1, len, stdout);\n"
    "    fprintf(stderr, \"%s %s\\n\", PROFCONV_VERSION, pc_format_name(w.format));\n"
    "    free(out);\n"
    "    pc_profile_free(p);\n"
    "    pc_input_close(in);\n"
    "    return 0;\n"
    "}\n";

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof cmd)
        return -1;
    int st = system(cmd);
    return st == 0 ? 0 : -1;
}

static int write_text(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(data, 1, len, f);
    return fclose(f) == 0 && n == len ? 0 : -1;
}

/* Prints the make log of a failed step, so the failure says why. */
static void show_log(const char *log)
{
    char *text = read_text(log);
    if (text)
        fprintf(stderr, "%s", text);
    free(text);
}

/* Every file, link or other non-directory under dir, one per line. */
static char *files_under(const char *dir, const char *tmp)
{
    char list[1024];
    snprintf(list, sizeof list, "%s/files.txt", tmp);
    if (sh("cd '%s' && find . ! -type d | sort > '%s'", dir, list) != 0)
        return NULL;
    return read_text(list);
}

TEST_SLOW(install_pkg_config)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    t_skip("install: checked in the build without sanitizers (a program "
           "linked to a sanitized library needs the sanitizer's flags)");
    return;
#endif
    if (sh("command -v make >/dev/null 2>&1 && command -v cc >/dev/null 2>&1 &&"
           " command -v pkg-config >/dev/null 2>&1") != 0) {
        t_skip("install: make, cc or pkg-config missing");
        return;
    }
    /* The build directory is the one of the binary under test, already
     * built: install only copies. */
    char build[512];
    snprintf(build, sizeof build, "%s", t_profconv());
    char *slash = strrchr(build, '/');
    if (!slash || strcmp(slash, "/profconv") != 0 || access("Makefile", R_OK) != 0) {
        t_skip("install: PROFCONV is not BUILD/profconv run from the project root");
        return;
    }
    *slash = 0;

    char tmp[512], prefix[600], log[600];
    snprintf(tmp, sizeof tmp, "%s/install", t_tmpdir());
    snprintf(prefix, sizeof prefix, "%s/prefix", tmp);
    snprintf(log, sizeof log, "%s/make.log", tmp);
    mkdir(tmp, 0777);

    if (sh(MAKE " BUILD='%s' PREFIX='%s' install > '%s' 2>&1", build, prefix, log) != 0) {
        T_CHECK(!"make install failed");
        show_log(log);
        return;
    }
    char *files = files_under(prefix, tmp);
    T_EQ_STR(files,
             "./bin/profconv\n"
             "./include/profconv.h\n"
             "./lib/libprofconv.a\n"
             "./lib/libprofconv.so\n"
             "./lib/libprofconv.so.0\n"
             "./lib/libprofconv.so." PROFCONV_VERSION "\n"
             "./lib/pkgconfig/profconv.pc\n"
             "./share/man/man1/profconv.1\n");
    free(files);

    char pc[700];
    snprintf(pc, sizeof pc, "PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config", prefix);
    T_CHECK(sh("test \"$(%s --modversion profconv)\" = " PROFCONV_VERSION, pc) == 0);

    /* The user's program, linked to the shared library, gives what the
     * installed CLI gives. */
    char path[700];
    spe e;
    fx_android(&e);
    snprintf(path, sizeof path, "%s/fx.trace", tmp);
    T_CHECK(write_text(path, e.out.data, e.out.len) == 0);
    spe_free(&e);
    snprintf(path, sizeof path, "%s/prog.c", tmp);
    T_CHECK(write_text(path, prog_src, sizeof prog_src - 1) == 0);

    T_CHECK(sh("cd '%s' && cc -o prog prog.c $(%s --cflags --libs profconv) 2> cc.log",
               tmp, pc) == 0);
    T_CHECK(sh("cd '%s' && readelf -d prog 2>/dev/null | grep -q 'NEEDED.*libprofconv\\.so\\.0'",
               tmp) == 0);
    T_CHECK(sh("cd '%s' && LD_LIBRARY_PATH='%s/lib' ./prog fx.trace > prog.out 2> prog.err &&"
               " grep -qx '" PROFCONV_VERSION " folded' prog.err &&"
               " '%s/bin/profconv' -q --to folded -o - fx.trace > cli.out &&"
               " test -s cli.out && cmp -s prog.out cli.out",
               tmp, prefix, prefix) == 0);

    /* Statically: the archive and the libraries it needs (Libs.private). */
    T_CHECK(sh("cd '%s' && cc -o prog-static prog.c $(%s --cflags profconv)"
               " $(%s --static --libs profconv | sed 's/-lprofconv/-l:libprofconv.a/')"
               " 2> cc-static.log", tmp, pc, pc) == 0);
    T_CHECK(sh("cd '%s' && ! readelf -d prog-static 2>/dev/null | grep -q libprofconv &&"
               " ./prog-static fx.trace > static.out 2> /dev/null && cmp -s static.out cli.out",
               tmp) == 0);

    /* The man page, found where man looks under the prefix. */
    if (sh("command -v man >/dev/null 2>&1") == 0) {
        T_CHECK(sh("MANPAGER=cat PAGER=cat MANWIDTH=80 man -M '%s/share/man' profconv"
                   " 2>/dev/null | grep -q 'EXIT STATUS'", prefix) == 0);
        T_CHECK(sh("MANPAGER=cat PAGER=cat MANWIDTH=80 MANPATH='%s/share/man' man profconv"
                   " 2>/dev/null | grep -q -- '--max-memory SIZE'", prefix) == 0);
    }

    if (sh(MAKE " BUILD='%s' PREFIX='%s' uninstall > '%s' 2>&1", build, prefix, log) != 0) {
        T_CHECK(!"make uninstall failed");
        show_log(log);
    }
    files = files_under(prefix, tmp);
    T_EQ_STR(files, "");
    free(files);

    /* DESTDIR: a staged install for a package, naming the final prefix. */
    char stage[700];
    snprintf(stage, sizeof stage, "%s/stage", tmp);
    if (sh(MAKE " BUILD='%s' DESTDIR='%s' PREFIX=/usr install > '%s' 2>&1",
           build, stage, log) != 0) {
        T_CHECK(!"make install DESTDIR=... failed");
        show_log(log);
        return;
    }
    T_CHECK(sh("test -x '%s/usr/bin/profconv' && test -L '%s/usr/lib/libprofconv.so.0' &&"
               " grep -qx 'prefix=/usr' '%s/usr/lib/pkgconfig/profconv.pc'",
               stage, stage, stage) == 0);
    T_CHECK(sh(MAKE " BUILD='%s' DESTDIR='%s' PREFIX=/usr uninstall > '%s' 2>&1",
               build, stage, log) == 0);
    files = files_under(stage, tmp);
    T_EQ_STR(files, "");
    free(files);
}
