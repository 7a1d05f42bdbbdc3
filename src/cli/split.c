/* --pprof-split: one pprof file per process, all of them or none.
 *
 * Each profile is written by pc_write() under a staged name beside its
 * own (so that the final rename stays in one directory and atomic), and
 * only when every one is written are they renamed into place.  A failure
 * on the way removes what was staged and leaves the names as they were;
 * one in the renames (rare: the directory is the same for all, and names
 * taken by directories are refused before anything is written) removes
 * the files already renamed too, so that no set of files from two runs
 * is left mixed.  An interruption removes the staged files (see
 * cli_split_remove_staged).
 *
 * Devices and pipes (/dev/null, a FIFO) under a split name are written in
 * place, as pc_write() writes them: there is no file to replace, and
 * what went down a pipe cannot be taken back. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/escape.h"
#include "cli/cli.h"
#include "io/sink.h"

#define STAGE_SUFFIX ".split-XXXXXX"

/* The staged files, for the signal handler: an entry is set before the
 * count that makes the handler see it. */
static char **stage_names;
static volatile sig_atomic_t stage_count;

void cli_split_remove_staged(void)
{
    for (sig_atomic_t i = 0; i < stage_count; i++)
        if (stage_names[i])
            unlink(stage_names[i]);
}

static int fail(pc_error *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(pc_error *err, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->status = status;
    return status;
}

static void *must(void *p)
{
    if (!p) {
        fputs("profconv: out of memory\n", stderr);
        exit(3);
    }
    return p;
}

/* "dir/perf.pb.gz" and pid 12 -> "dir/perf.12.pb.gz" (malloc'd): the pid
 * goes before the format's ending, or at the end of other names. */
static char *split_name(const char *path, int format, int64_t pid)
{
    size_t n = strlen(path), cut = n - pc_format_suffix_len(format, path);
    size_t size = n + 24;
    char *out = must(malloc(size));
    snprintf(out, size, "%.*s.%lld%s", (int)cut, path, (long long)pid, path + cut);
    return out;
}

/* Creates the staged file of name: "dir/.NAME.split-XXXXXX", NAME cut to
 * fit (before a UTF-8 continuation byte), with the permissions pc_write()
 * would give name, which it copies from the file it replaces.  Registered
 * as entry i for the signal handler.  NULL with err set on failure. */
static char *stage(const char *name, const struct stat *old, size_t i, pc_error *err)
{
    enum { EXTRA = 1 + sizeof STAGE_SUFFIX - 1 };
    const char *slash = strrchr(name, '/');
    size_t dirlen = slash ? (size_t)(slash - name) + 1 : 0;
    const char *base = name + dirlen;
    size_t baselen = strlen(base);
    if (baselen > NAME_MAX - EXTRA) {
        baselen = NAME_MAX - EXTRA;
        while (baselen > 0 && ((unsigned char)base[baselen] & 0xc0) == 0x80)
            baselen--;
    }
    size_t n = dirlen + baselen + EXTRA + 1;
    char *tmp = must(malloc(n));
    snprintf(tmp, n, "%.*s.%.*s" STAGE_SUFFIX, (int)dirlen, name, (int)baselen, base);
    sigset_t saved;
    sink_hold_signals(&saved);
    int fd = mkstemp(tmp);
    int mk_errno = errno;
    if (fd >= 0) {
        stage_names[i] = tmp;
        stage_count = (sig_atomic_t)(i + 1);
    }
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (fd < 0) {
        fail(err, PC_EIO, "%s: cannot create: %s", name, strerror(mk_errno));
        free(tmp);
        return NULL;
    }
    mode_t mode;
    if (old) {
        mode = old->st_mode & 0777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    int bad = fchmod(fd, mode) < 0;
    int ch_errno = errno;
    close(fd);
    if (bad) {
        fail(err, PC_EIO, "%s: cannot set permissions: %s", name, strerror(ch_errno));
        return NULL;
    }
    return tmp;
}

/* The library names the file it wrote, the staged one: messages name the
 * file the user asked for.  Both as messages show them, escaped. */
static void name_final(pc_error *err, const char *staged, const char *name)
{
    char from[1024], to[1024], msg[sizeof err->message];
    pc_escape(from, sizeof from, staged);
    pc_escape(to, sizeof to, name);
    size_t nf = strlen(from), o = 0;
    const char *s = err->message;
    for (const char *hit; nf && o < sizeof msg && (hit = strstr(s, from)) != NULL;
         s = hit + nf)
        o += (size_t)snprintf(msg + o, sizeof msg - o, "%.*s%s", (int)(hit - s), s, to);
    if (o < sizeof msg)
        snprintf(msg + o, sizeof msg - o, "%s", s);
    /* Cut to fit like any message (the names are escaped already). */
    memcpy(err->message, msg, sizeof msg);
    err->message[sizeof err->message - 1] = 0;
}

int cli_write_split(const pc_profile *prof, const char *output, pc_write_options *w,
                    char ***names, size_t *n_names, pc_error *err)
{
    int64_t *pids = NULL;
    size_t n = 0;
    *names = NULL;
    *n_names = 0;
    int st = pc_profile_pids(prof, &pids, &n, err);
    if (st != PC_OK)
        return st;
    char **final = must(calloc(n + 1, sizeof *final));
    char **staged = must(calloc(n + 1, sizeof *staged));
    for (size_t i = 0; i < n; i++)
        final[i] = split_name(output, w->format, pids[i]);

    /* What pc_write() would refuse for a name, refused before anything
     * is written. */
    struct stat *old = must(calloc(n + 1, sizeof *old));
    uint8_t *exists = must(calloc(n + 1, 1));
    for (size_t i = 0; i < n && st == PC_OK; i++) {
        exists[i] = stat(final[i], &old[i]) == 0;
        if (exists[i] && S_ISDIR(old[i].st_mode))
            st = fail(err, PC_EIO, "%s: is a directory", final[i]);
    }

    stage_names = staged;
    for (size_t i = 0; i < n && st == PC_OK; i++) {
        w->pprof_pid = pids[i];
        w->pprof_one_process = 1;
        if (exists[i] && !S_ISREG(old[i].st_mode)) {
            st = pc_write(prof, final[i], w, err);
            continue;
        }
        if (!stage(final[i], exists[i] ? &old[i] : NULL, i, err)) {
            st = PC_EIO;
            break;
        }
        if ((st = pc_write(prof, staged[i], w, err)) != PC_OK)
            name_final(err, staged[i], final[i]);
    }
    /* renamed: how many are in place, whose files are now the new ones. */
    size_t renamed = 0;
    for (; st == PC_OK && renamed < n; renamed++) {
        if (staged[renamed] && rename(staged[renamed], final[renamed]) < 0) {
            st = fail(err, PC_EIO, "%s: cannot rename the finished file into place: %s",
                      final[renamed], strerror(errno));
            break;
        }
    }
    if (st != PC_OK) {
        for (size_t i = 0; i < n; i++)
            if (staged[i])
                unlink(i < renamed ? final[i] : staged[i]);
    }
    stage_count = 0;
    stage_names = NULL;
    for (size_t i = 0; i < n; i++)
        free(staged[i]);
    free(staged);
    free(old);
    free(exists);
    free(pids);
    if (st != PC_OK) {
        cli_split_free(final, n);
        return st;
    }
    *names = final;
    *n_names = n;
    return PC_OK;
}

void cli_split_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
