/* profconv view and --open: the profile served to the Firefox Profiler.
 *
 * Without a browser: the printed from-url address names a server on
 * 127.0.0.1 only, which answers the profile's path with the bytes a
 * conversion writes and the CORS header the profiler needs, 404 for other
 * paths, is not held up by an idle connection, and exits by itself after
 * the fetch (or by Ctrl-C).  With the real profiler (../shared/fxprof/ui
 * served locally, headless Chromium through puppeteer-core): the address
 * opens the profile, and profconv stops by itself. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "corpus.h"
#include "fixtures.h"
#include "t.h"
#include "test_util.h"

/* The corpus file the UI test expects: "RenderThread" is one of its
 * threads. */
#define CORPUS_INPUT "inputs/perf_display_bitmaps.callchain.trace"

static const char *tmp(const char *name)
{
    static char bufs[4][512];
    static int next;
    next = (next + 1) % 4;
    snprintf(bufs[next], sizeof bufs[next], "%s/%s", t_tmpdir(), name);
    return bufs[next];
}

/* A simpleperf input: the corpus file when the corpus is here, else the
 * fx_android fixture.  *corpus says which. */
static const char *input(int *corpus)
{
    static char path[512];
    static int from_corpus;
    if (!path[0]) {
        const char *c = t_shared() ? corpus_path(CORPUS_INPUT) : NULL;
        if (c && access(c, R_OK) == 0) {
            snprintf(path, sizeof path, "%s", c);
            from_corpus = 1;
        } else {
            spe e;
            fx_android(&e);
            snprintf(path, sizeof path, "%s", tmp("view.trace"));
            FILE *f = fopen(path, "wb");
            if (f) {
                fwrite(e.out.data, 1, e.out.len, f);
                fclose(f);
            }
            spe_free(&e);
        }
    }
    if (corpus)
        *corpus = from_corpus;
    return path;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Starts argv[0] with argv (NULL-terminated); standard output to a pipe
 * (*out, when out is not NULL; else to out_file) and standard error to
 * err_file. */
static pid_t spawn(const char *const *argv, int *out, const char *out_file, const char *err_file)
{
    int p[2] = {-1, -1};
    if (out && pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int o = out ? p[1] : open(out_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || o < 0 || e < 0)
            _exit(127);
        dup2(in, 0);
        dup2(o, 1);
        dup2(e, 2);
        if (out) {
            close(p[0]);
            close(p[1]);
        }
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    if (out) {
        close(p[1]);
        if (pid < 0)
            close(p[0]);
        else
            *out = p[0];
    }
    return pid;
}

/* The exit status of pid, waiting up to seconds: the code, 128 + the
 * signal that ended it, or -1 when it did not end in time (then it is
 * killed). */
static int wait_exit(pid_t pid, double seconds)
{
    double end = mono() + seconds;
    int ws;
    for (;;) {
        pid_t r = waitpid(pid, &ws, WNOHANG);
        if (r == pid)
            return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
        if (r < 0 || mono() > end)
            break;
        pause_ms(20);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &ws, 0);
    return -1;
}

/* A line from fd within seconds, without its newline; 0 if none. */
static int read_line(int fd, char *buf, size_t size, double seconds)
{
    size_t n = 0;
    double end = mono() + seconds;
    while (n + 1 < size) {
        struct pollfd p = {fd, POLLIN, 0};
        int left = (int)((end - mono()) * 1000);
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return 0;
        if (read(fd, buf + n, 1) != 1)
            return 0;
        if (buf[n] == '\n') {
            buf[n] = 0;
            return 1;
        }
        n++;
    }
    return 0;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The profile's address in a from-url address of base: its port and
 * path; 0 unless it is http://127.0.0.1:PORT/PATH. */
static int served_address(const char *line, const char *base, unsigned *port, char *path,
                          size_t size)
{
    char prefix[512], decoded[1024];
    snprintf(prefix, sizeof prefix, "%s/from-url/", base);
    size_t n = strlen(line), k = strlen(prefix), o = 0;
    if (strncmp(line, prefix, k) != 0 || n < k + 2 || line[n - 1] != '/')
        return 0;
    for (size_t i = k; i < n - 1 && o + 1 < sizeof decoded; i++) {
        if (line[i] == '%' && i + 2 < n && hexval(line[i + 1]) >= 0 && hexval(line[i + 2]) >= 0) {
            decoded[o++] = (char)(hexval(line[i + 1]) * 16 + hexval(line[i + 2]));
            i += 2;
        } else {
            decoded[o++] = line[i];
        }
    }
    decoded[o] = 0;
    const char *host = "http://127.0.0.1:";
    if (strncmp(decoded, host, strlen(host)) != 0)
        return 0;
    char *end;
    unsigned long p = strtoul(decoded + strlen(host), &end, 10);
    if (p == 0 || p > 65535 || *end != '/')
        return 0;
    *port = (unsigned)p;
    snprintf(path, size, "%s", end);
    return 1;
}

static int connect_local(unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

typedef struct response {
    int status;
    char head[4096];       /* the header lines, NUL-terminated */
    unsigned char *body;   /* malloc'd */
    size_t body_len;
} response;

/* One request to 127.0.0.1:port, read until the server closes (within
 * 10 s); 0 if it could not be made or answered. */
static int request(unsigned port, const char *method, const char *path, response *r)
{
    memset(r, 0, sizeof *r);
    int fd = connect_local(port);
    if (fd < 0)
        return 0;
    char req[1024];
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nOrigin: http://example.test\r\n"
                     "Connection: close\r\n\r\n",
                     method, path, port);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return 0;
    }
    size_t len = 0, cap = 1 << 16;
    unsigned char *all = malloc(cap);
    double end = mono() + 10;
    while (all) {
        struct pollfd p = {fd, POLLIN, 0};
        int left = (int)((end - mono()) * 1000);
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        if (len == cap) {
            unsigned char *b = realloc(all, cap *= 2);
            if (!b)
                break;
            all = b;
        }
        ssize_t got = read(fd, all + len, cap - len);
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    if (!all)
        return 0;
    unsigned char *sep = NULL;
    for (size_t i = 0; i + 4 <= len; i++)
        if (memcmp(all + i, "\r\n\r\n", 4) == 0) {
            sep = all + i;
            break;
        }
    if (!sep || sscanf((char *)all, "HTTP/1.1 %d", &r->status) != 1) {
        free(all);
        return 0;
    }
    size_t hl = (size_t)(sep - all);
    if (hl >= sizeof r->head)
        hl = sizeof r->head - 1;
    memcpy(r->head, all, hl);
    r->head[hl] = 0;
    r->body_len = len - (size_t)(sep + 4 - all);
    memmove(all, sep + 4, r->body_len);
    r->body = all;
    return 1;
}

/* The listening sockets on port, from /proc/net/tcp and tcp6: how many,
 * and how many of them on 127.0.0.1. */
static void listeners(unsigned port, int *all, int *loopback)
{
    *all = *loopback = 0;
    const char *files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    for (int f = 0; f < 2; f++) {
        FILE *in = fopen(files[f], "r");
        if (!in)
            continue;
        char line[512], local[64];
        unsigned st;
        while (fgets(line, sizeof line, in)) {
            if (sscanf(line, " %*d: %63s %*s %x", local, &st) != 2 || st != 0x0A)
                continue;
            char *colon = strrchr(local, ':');
            if (!colon || strtoul(colon + 1, NULL, 16) != port)
                continue;
            (*all)++;
            *loopback += f == 0 && strncmp(local, "0100007F:", 9) == 0;
        }
        fclose(in);
    }
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            unsigned char *nb = realloc(b, cap *= 2);
            if (!nb)
                free(b);
            b = nb;
        }
    }
    fclose(f);
    *len = n;
    return b;
}

/* Runs profconv with args (NULL-terminated) to the end; its exit code. */
static int run_profconv(const char *const *args)
{
    const char *argv[24];
    int n = 0;
    argv[n++] = t_profconv_abs();
    for (; args[n - 1] && n < 23; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    pid_t pid = spawn(argv, NULL, tmp("view.out"), tmp("view.err"));
    return pid > 0 ? wait_exit(pid, 30) : -1;
}

/* The line start_view read last. */
static char printed[2048];

/* Starts profconv with args and reads the address it prints: its pid,
 * and the served port and path (-1 and a failure if there is none). */
static pid_t start_view(const char *const *args, const char *base, unsigned *port, char *path,
                        size_t size)
{
    const char *argv[24];
    int n = 0;
    argv[n++] = t_profconv_abs();
    for (; args[n - 1] && n < 23; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    int out = -1;
    pid_t pid = spawn(argv, &out, NULL, tmp("view.err"));
    if (pid < 0) {
        t_fail(__FILE__, __LINE__, "cannot start profconv");
        return -1;
    }
    char *line = printed;
    int ok = read_line(out, line, sizeof printed, 20);
    close(out);
    if (!ok || !served_address(line, base, port, path, size)) {
        t_fail(__FILE__, __LINE__, "no from-url address of 127.0.0.1 under %s: '%s'", base,
               ok ? line : "(nothing printed)");
        wait_exit(pid, 0);
        return -1;
    }
    return pid;
}

TEST(view_serves_once_on_loopback)
{
    const char *in = input(NULL), *ref = tmp("view-ref.json.gz");
    T_EQ_INT(run_profconv((const char *const[]){in, "-q", "-o", ref, NULL}), 0);
    unsigned port;
    char path[512];
    const char *base = "http://127.0.0.1:9/x";
    pid_t pid = start_view((const char *const[]){"view", in, "--no-open", "--profiler-url",
                                                 "http://127.0.0.1:9/x/", NULL},
                           base, &port, path, sizeof path);
    if (pid < 0)
        return;
    /* A 128-bit key in hex, then the name. */
    T_CHECK(strlen(path) > 34 && path[33] == '/' && strspn(path + 1, "0123456789abcdef") == 32);
    T_CONTAINS(path, ".json.gz");
    int all, loopback;
    listeners(port, &all, &loopback);
    T_EQ_INT(all, 1);
    T_EQ_INT(loopback, 1);

    /* An idle connection, as a browser's preconnect, holds nothing up. */
    int idle = connect_local(port);
    T_CHECK(idle >= 0);

    response r;
    char wrong[512];
    snprintf(wrong, sizeof wrong, "%s", path);
    wrong[1] = wrong[1] == '0' ? '1' : '0';
    T_CHECK(request(port, "GET", wrong, &r));
    T_EQ_INT(r.status, 404);
    free(r.body);
    T_CHECK(request(port, "GET", "/", &r));
    T_EQ_INT(r.status, 404);
    free(r.body);
    T_CHECK(request(port, "OPTIONS", path, &r));
    T_EQ_INT(r.status, 204);
    T_CONTAINS(r.head, "Access-Control-Allow-Origin: *");
    free(r.body);
    T_EQ_INT(waitpid(pid, NULL, WNOHANG), 0);

    T_CHECK(request(port, "GET", path, &r));
    T_EQ_INT(r.status, 200);
    T_CONTAINS(r.head, "\r\nAccess-Control-Allow-Origin: *\r\n");
    size_t ref_len = 0;
    unsigned char *want = slurp(ref, &ref_len);
    T_CHECK(want && ref_len > 0);
    T_EQ_INT(r.body_len, ref_len);
    T_CHECK(want && r.body && r.body_len == ref_len && memcmp(want, r.body, ref_len) == 0);
    free(want);
    free(r.body);
    if (idle >= 0)
        close(idle);
    T_EQ_INT(wait_exit(pid, 10), 0);
}

TEST(view_open_serves_the_written_file)
{
    const char *in = input(NULL), *out = tmp("view-open.json");
    unlink(out);
    unsigned port;
    char path[512];
    pid_t pid = start_view((const char *const[]){in, "-o", out, "--open", "--no-open", NULL},
                           "https://profiler.firefox.com", &port, path, sizeof path);
    if (pid < 0)
        return;
    T_CHECK(strstr(path, "/view-open.json") != NULL);
    response r;
    T_CHECK(request(port, "GET", path, &r));
    T_EQ_INT(r.status, 200);
    T_CONTAINS(r.head, "Content-Type: application/json");
    size_t len = 0;
    unsigned char *want = slurp(out, &len);
    T_CHECK(want && len > 0 && want[0] == '{');
    T_CHECK(want && r.body && r.body_len == len && memcmp(want, r.body, len) == 0);
    free(want);
    free(r.body);
    T_EQ_INT(wait_exit(pid, 10), 0);
}

TEST(view_stops_on_ctrl_c)
{
    unsigned port;
    char path[512];
    pid_t pid = start_view((const char *const[]){"view", "-q", input(NULL), "--no-open", NULL},
                           "https://profiler.firefox.com", &port, path, sizeof path);
    if (pid < 0)
        return;
    kill(pid, SIGINT);
    T_EQ_INT(wait_exit(pid, 10), 128 + SIGINT);
    T_CHECK(connect_local(port) < 0);
}

TEST(view_refuses_what_the_profiler_cannot_show)
{
    const char *in = input(NULL);
    T_EQ_INT(run_profconv((const char *const[]){"view", "--to", "pprof", in, NULL}), 1);
    T_EQ_INT(run_profconv((const char *const[]){"view", in, "-o", "-", NULL}), 1);
    T_EQ_INT(run_profconv((const char *const[]){"view", in, "-o", tmp("x.folded"), NULL}), 1);
    T_EQ_INT(run_profconv((const char *const[]){in, "-o", tmp("x.json.gz"), "--no-open", NULL}),
             1);
    T_EQ_INT(run_profconv((const char *const[]){"view", in, "--profiler-url", "file:///x", NULL}),
             1);
}

/* ---- The real profiler in headless Chromium ---- */

static const char open_script[] =
    "import { createRequire } from 'module';\n"
    "import path from 'path';\n"
    "const require = createRequire(path.join(process.argv[3], 'x.js'));\n"
    "const puppeteer = require('puppeteer-core');\n"
    "const browser = await puppeteer.launch({ executablePath: process.argv[4], headless: true,\n"
    "  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });\n"
    "let out = { tracks: [], rows: 0, message: null };\n"
    "try {\n"
    "  const page = await browser.newPage();\n"
    "  await page.goto(process.argv[2], { waitUntil: 'domcontentloaded', timeout: 15000 });\n"
    "  await page.waitForSelector('.treeViewRow, .appErrorBoundary, .profileRootMessage',\n"
    "                             { timeout: 15000 });\n"
    "  out = await page.evaluate(() => {\n"
    "    const txt = (s) => [...document.querySelectorAll(s)].map((e) => e.textContent.trim());\n"
    "    return { tracks: txt('.timelineTrackNameButton'),\n"
    "             rows: document.querySelectorAll('.treeViewRow').length,\n"
    "             message: txt('.profileRootMessage, .appErrorBoundary').join(' | ') || null };\n"
    "  });\n"
    "} catch (e) { out.message = String(e); }\n"
    "await browser.close();\n"
    "console.log(JSON.stringify(out));\n";

/* A port nothing listens on now, for the UI's server. */
static unsigned free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    unsigned port = 0;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

TEST(view_opens_in_the_profiler_ui)
{
    const char *shared = t_shared();
    char ui[512], serve[512], modules[512], probe[600];
    if (!shared) {
        t_skip("no ../shared (the profiler's UI)");
        return;
    }
    snprintf(ui, sizeof ui, "%s/fxprof/ui", shared);
    snprintf(serve, sizeof serve, "%s/fxprof/serve.py", shared);
    const char *env = getenv("FXPROF_SHOTS_MODULES");
    snprintf(modules, sizeof modules, "%s", env && *env ? env : "/tmp/pp");
    snprintf(probe, sizeof probe, "%s/node_modules/puppeteer-core/package.json", modules);
    const char *chromium = getenv("CHROMIUM");
    if (!chromium || !*chromium)
        chromium = "/usr/bin/chromium";
    char index[600];
    snprintf(index, sizeof index, "%s/index.html", ui);
    if (access(index, R_OK) != 0 || access(serve, R_OK) != 0) {
        t_skip("no ../shared/fxprof/ui or serve.py");
        return;
    }
    if (!t_in_path("node") || !t_in_path("python3")) {
        t_skip("node or python3 not installed");
        return;
    }
    if (access(chromium, X_OK) != 0) {
        t_skip("no chromium (%s; CHROMIUM names another)", chromium);
        return;
    }
    if (access(probe, R_OK) != 0) {
        t_skip("no puppeteer-core in %s/node_modules (FXPROF_SHOTS_MODULES names the folder)",
               modules);
        return;
    }
    /* Own copies: tmp()'s buffers are reused. */
    char script[600], out[600];
    snprintf(script, sizeof script, "%s", tmp("view-open.mjs"));
    snprintf(out, sizeof out, "%s", tmp("view-ui.json"));
    FILE *f = fopen(script, "w");
    if (!f || fputs(open_script, f) < 0) {
        if (f)
            fclose(f);
        t_fail(__FILE__, __LINE__, "cannot write %s", script);
        return;
    }
    fclose(f);

    unsigned ui_port = free_port();
    char port_arg[16];
    snprintf(port_arg, sizeof port_arg, "%u", ui_port);
    pid_t server = spawn((const char *const[]){"python3", serve, ui, port_arg, "--spa", NULL},
                         NULL, tmp("view-ui.out"), tmp("view-ui.err"));
    int up = 0;
    for (double end = mono() + 10; server > 0 && !up && mono() < end;) {
        int fd = connect_local(ui_port);
        if (fd >= 0) {
            close(fd);
            up = 1;
        } else {
            pause_ms(50);
        }
    }
    if (!up) {
        t_fail(__FILE__, __LINE__, "the UI's server did not start on port %u", ui_port);
        if (server > 0) {
            kill(server, SIGTERM);
            wait_exit(server, 5);
        }
        return;
    }

    int corpus;
    const char *in = input(&corpus);
    char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%u", ui_port);
    unsigned port;
    char path[512];
    pid_t pid = start_view((const char *const[]){"view", in, "--no-open", "--profiler-url", base,
                                                 NULL},
                           base, &port, path, sizeof path);
    if (pid > 0) {
        /* The address as printed is what the browser opens: the UI's own
         * decoding of it is part of what is tested. */
        char url[2048];
        snprintf(url, sizeof url, "%s", printed);
        pid_t node = spawn((const char *const[]){"node", script, url, modules, chromium, NULL},
                           NULL, out, tmp("view-node.err"));
        int node_status = node > 0 ? wait_exit(node, 40) : -1;
        T_EQ_INT(node_status, 0);
        if (node_status != 0) {
            size_t elen = 0;
            char *err = (char *)slurp(tmp("view-node.err"), &elen);
            if (err) {
                err[elen] = 0;
                fprintf(stderr, "  node said: %.2000s\n", err);
            }
            free(err);
        }
        size_t len = 0;
        char *text = (char *)slurp(out, &len);
        if (text) {
            text[len] = 0;
            T_CONTAINS(text, "\"message\":null");
            const char *rows = strstr(text, "\"rows\":");
            T_CHECK(rows && atoi(rows + 7) > 0);
            T_CHECK(!strstr(text, "\"tracks\":[]"));
            if (corpus)
                T_CONTAINS(text, "\"RenderThread\"");
            if (t_case_failures())
                fprintf(stderr, "  the page showed: %s\n", text);
        } else {
            t_fail(__FILE__, __LINE__, "node printed nothing (see %s)", tmp("view-node.err"));
        }
        free(text);
        /* Fetched by the page: profconv has stopped by itself. */
        T_EQ_INT(wait_exit(pid, 10), 0);
    }
    kill(server, SIGTERM);
    wait_exit(server, 5);
}
