/* --pprof-split writes its files all or none: a name taken by a
 * directory, or a write failing on the third file, leaves no file of the
 * split behind (and earlier files of those names as they were); a
 * successful split replaces them with the permissions a single output
 * would get. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"
#include "test_util.h"

/* Runs profconv with args (NULL-terminated) in dir; standard error into
 * err.  fsize: a limit on the size of files written (0: none), past which
 * writes fail with EFBIG. */
static int run_in(const char *dir, const char *const *args, rlim_t fsize, char *err,
                  size_t err_size)
{
    char exe[1024], err_path[700];
    snprintf(exe, sizeof exe, "%s", t_profconv_abs());
    snprintf(err_path, sizeof err_path, "%s/split.stderr", t_tmpdir());
    const char *argv[32] = {exe};
    int n = 1;
    while (args[n - 1] && n < 31) {
        argv[n] = args[n - 1];
        n++;
    }
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int null = open("/dev/null", O_RDWR);
        if (fd < 0 || null < 0 || chdir(dir) < 0)
            _exit(127);
        dup2(null, 0);
        dup2(null, 1);
        dup2(fd, 2);
        if (fsize) {
            struct rlimit rl = {fsize, fsize};
            signal(SIGXFSZ, SIG_IGN);
            setrlimit(RLIMIT_FSIZE, &rl);
        }
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    char *e = read_text(err_path);
    snprintf(err, err_size, "%s", e ? e : "");
    free(e);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* Four processes, 100 to 400; process 300 has many functions of long
 * names, so that its profile alone is large. */
static void write_input(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    static const int pids[] = {100, 200, 400};
    for (int k = 0; k < 3; k++)
        fprintf(f, "p%d %d/%d [000] 1.%06d: 250000 cpu-clock:\n\t1000 work%d (/bin/p)\n\n",
                pids[k], pids[k], pids[k], k, pids[k]);
    for (int i = 0; i < 400; i++)
        fprintf(f, "big 300/300 [000] 2.%06d: 250000 cpu-clock:\n"
                   "\t%x function_with_a_rather_long_name_number_%d (/bin/big)\n\n",
                i, 0x1000 + i, i);
    fclose(f);
}

static char *in_dir(const char *dir, const char *name)
{
    static char bufs[4][800];
    static int next;
    next = (next + 1) % 4;
    snprintf(bufs[next], sizeof bufs[next], "%s/%s", dir, name);
    return bufs[next];
}

/* The names in dir other than the input, "." and "..", sorted, joined by
 * spaces. */
static const char *listing(const char *dir)
{
    static char out[2048];
    char *names[64];
    size_t n = 0;
    DIR *d = opendir(dir);
    out[0] = 0;
    if (!d)
        return out;
    for (struct dirent *e; (e = readdir(d)) != NULL && n < 64;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "in.txt"))
            names[n++] = strdup(e->d_name);
    closedir(d);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(out);
        snprintf(out + used, sizeof out - used, "%s%s", i ? " " : "", names[i]);
        free(names[i]);
    }
    return out;
}

static const char *make_dir(const char *name)
{
    static char dir[700];
    snprintf(dir, sizeof dir, "%s/%s", t_tmpdir(), name);
    mkdir(dir, 0755);
    write_input(in_dir(dir, "in.txt"));
    return dir;
}

static void write_old(const char *path, mode_t mode)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("old", f);
        fclose(f);
    }
    chmod(path, mode);
}

TEST(split_all_or_nothing_directory)
{
    const char *dir = make_dir("split-dir");
    /* The third file's name is a directory; the first has an older file. */
    mkdir(in_dir(dir, "x.300.pb.gz"), 0755);
    write_old(in_dir(dir, "x.100.pb.gz"), 0640);
    const char *args[] = {"-q", "--pprof-split", "process", "in.txt", "-o", "x.pb.gz", NULL};
    char err[4096];
    T_EQ_INT(run_in(dir, args, 0, err, sizeof err), 3);
    T_CONTAINS(err, "x.300.pb.gz: is a directory");
    T_CHECK(strchr(err, '\n') == err + strlen(err) - 1);
    T_EQ_STR(listing(dir), "x.100.pb.gz x.300.pb.gz");
    char *old = read_text(in_dir(dir, "x.100.pb.gz"));
    T_EQ_STR(old ? old : "", "old");
    free(old);
}

TEST(split_all_or_nothing_write_fails)
{
    const char *dir = make_dir("split-fsize");
    write_old(in_dir(dir, "x.100.pb"), 0640);
    /* Process 300's file alone outgrows the limit: the first two are
     * written by then. */
    const char *args[] = {"--pprof-split", "process", "--to", "pprof", "--no-gzip", "in.txt",
                          "-o", "x.pb", NULL};
    char err[4096];
    T_EQ_INT(run_in(dir, args, 8192, err, sizeof err), 3);
    /* Named as the user named it, not by the name it was staged under. */
    T_CONTAINS(err, "profconv: x.300.pb: write failed");
    T_CHECK(strstr(err, "split-") == NULL);
    T_EQ_STR(listing(dir), "x.100.pb");
    char *old = read_text(in_dir(dir, "x.100.pb"));
    T_EQ_STR(old ? old : "", "old");
    free(old);

    /* Without the limit: every file, the older one replaced with its
     * permissions kept, a new one with the usual ones, nothing else. */
    T_EQ_INT(run_in(dir, args, 0, err, sizeof err), 0);
    T_EQ_STR(listing(dir), "x.100.pb x.200.pb x.300.pb x.400.pb");
    T_CONTAINS(err, "profconv: wrote x.100.pb\nprofconv: wrote x.200.pb\n"
                    "profconv: wrote x.300.pb\nprofconv: wrote x.400.pb\n"
                    "profconv: wrote 4 profiles, one per process");
    struct stat sb;
    T_CHECK(stat(in_dir(dir, "x.100.pb"), &sb) == 0 && (sb.st_mode & 0777) == 0640 &&
            sb.st_size > 20);
    mode_t mask = umask(0);
    umask(mask);
    T_CHECK(stat(in_dir(dir, "x.400.pb"), &sb) == 0 && (sb.st_mode & 0777) == (0666 & ~mask));
    T_CHECK(stat(in_dir(dir, "x.300.pb"), &sb) == 0 && sb.st_size > 8192);
}
