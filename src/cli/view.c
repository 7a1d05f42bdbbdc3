/* `profconv view` and --open: the profile served to the Firefox Profiler.
 *
 * The profiler opens a profile from an address with
 * PROFILER/from-url/<the address, URL-encoded>/ and fetches it from the
 * page, so a CORS request: the answer needs Access-Control-Allow-Origin.
 * The server listens on 127.0.0.1 only (a browser treats it as a secure
 * origin, so an https profiler may fetch from it), on a port the system
 * picks, under a path of 128 random bits: other users of the machine, and
 * pages the browser has open, cannot guess it.  It stops once the profile
 * was sent whole, which is the one fetch the profiler makes.
 *
 * Browsers open connections they may never use (Chrome preconnects), so
 * connections are polled together and answered when their request is
 * complete; an idle one cannot hold the others up, and each has a
 * deadline. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/escape.h"
#include "cli/view.h"

enum {
    MAX_CONNS = 32,
    MAX_HEADER = 8192,    /* a browser's request is well under this */
    REQUEST_SECONDS = 10, /* to send a whole request head */
    SEND_SECONDS = 30,    /* without progress while sending the profile */
};

typedef struct conn {
    int fd;
    size_t len;
    double deadline;
    char buf[MAX_HEADER + 1];
} conn;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void error_line(const char *fmt, const char *arg)
{
    char line[1024], raw[1024];
    snprintf(raw, sizeof raw, fmt, arg);
    fprintf(stderr, "profconv: %s\n", pc_escape(line, sizeof line, raw));
}

int cli_view_url_ok(const char *url)
{
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return 0;
    for (const unsigned char *p = (const unsigned char *)url; *p; p++)
        if (*p <= ' ' || *p == 0x7f)
            return 0;
    return 1;
}

/* n random bytes from the kernel. */
static int random_bytes(unsigned char *out, size_t n)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, out + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    return got == n ? 0 : -1;
}

/* s as encodeURIComponent encodes it, which is what the profiler
 * decodes; into out of size bytes (cut to fit). */
static void url_encode(const char *s, char *out, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 4 < size; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-_.!~*'()", *p)) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = 0;
}

/* Starts the desktop's opener on url without waiting for it: $BROWSER
 * when set, else xdg-open on a graphical session.  The opener is a
 * grandchild, so that no zombie is left and its exit is not awaited; one
 * that is missing or fails only leaves the printed address to use. */
static void open_url(const char *url, int quiet)
{
    const char *browser = getenv("BROWSER");
    if (!browser || !*browser) {
        const char *x = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY");
        if ((!x || !*x) && (!w || !*w))
            return;
        browser = "xdg-open";
    }
    if (!quiet) {
        char line[1024];
        fprintf(stderr, "profconv: opening it with %s\n", pc_escape(line, sizeof line, browser));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (fork() == 0) {
            int null = open("/dev/null", O_RDWR);
            if (null >= 0) {
                dup2(null, STDIN_FILENO);
                dup2(null, STDOUT_FILENO);
                dup2(null, STDERR_FILENO);
            }
            execlp(browser, browser, url, (char *)NULL);
            _exit(127);
        }
        _exit(0);
    }
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
}

/* Sends all of len bytes; -1 when the peer is gone or stalls past
 * SEND_SECONDS (the socket's send timeout). */
static int send_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Closes fd once the peer has read what was sent: closing with its
 * request bytes still unread would reset the connection and could cut
 * the end of the answer. */
static void close_gently(int fd)
{
    shutdown(fd, SHUT_WR);
    char sink[512];
    double end = mono() + 2;
    for (;;) {
        int left = (int)((end - mono()) * 1000);
        struct pollfd p = {fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        if (read(fd, sink, sizeof sink) <= 0)
            break;
    }
    close(fd);
}

static void send_status(int fd, const char *status)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n%s\n",
                     status, strlen(status) + 1, status);
    send_all(fd, head, (size_t)n);
}

/* Answers the request head in c->buf; 1 when it was the profile, sent
 * whole. */
static int answer(conn *c, const char *path, const unsigned char *data, size_t size, int gzip)
{
    int fd = c->fd;
    /* Blocking from here: an answer goes out in one go, bounded by the
     * send timeout. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    struct timeval tv = {SEND_SECONDS, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);

    char method[16], target[512];
    const char *sp1 = strchr(c->buf, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp2 || (size_t)(sp1 - c->buf) >= sizeof method ||
        (size_t)(sp2 - sp1 - 1) >= sizeof target) {
        send_status(fd, "400 Bad Request");
        return 0;
    }
    snprintf(method, sizeof method, "%.*s", (int)(sp1 - c->buf), c->buf);
    snprintf(target, sizeof target, "%.*s", (int)(sp2 - sp1 - 1), sp1 + 1);
    target[strcspn(target, "?#")] = 0;
    if (strcmp(target, path) != 0) {
        send_status(fd, "404 Not Found");
        return 0;
    }
    if (strcmp(method, "OPTIONS") == 0) {
        /* A preflight: not sent for the profiler's plain GET, but asked
         * by browsers that guard requests from public pages to this
         * machine (Chrome's Private Network Access). */
        static const char head[] =
            "HTTP/1.1 204 No Content\r\nAccess-Control-Allow-Origin: *\r\n"
            "Access-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n"
            "Access-Control-Allow-Headers: *\r\n"
            "Access-Control-Allow-Private-Network: true\r\n"
            "Access-Control-Max-Age: 600\r\nConnection: close\r\n\r\n";
        send_all(fd, head, sizeof head - 1);
        return 0;
    }
    int get = strcmp(method, "GET") == 0;
    if (!get && strcmp(method, "HEAD") != 0) {
        send_status(fd, "405 Method Not Allowed");
        return 0;
    }
    /* The bytes as a file would hold them: the profiler gunzips what it
     * fetched itself, as it does a file it is given. */
    char head[512];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Access-Control-Allow-Origin: *\r\n"
                     "Access-Control-Allow-Private-Network: true\r\n"
                     "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
                     gzip ? "application/gzip" : "application/json", size);
    if (send_all(fd, head, (size_t)n) != 0)
        return 0;
    return get && send_all(fd, data, size) == 0;
}

int cli_view_serve(const unsigned char *data, size_t size, const cli_view_options *o)
{
    unsigned char key[16];
    if (random_bytes(key, sizeof key) != 0) {
        error_line("cannot read random bytes for the address: %s", strerror(errno));
        return -1;
    }
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0) {
        error_line("cannot serve the profile: %s", strerror(errno));
        return -1;
    }
    fcntl(lfd, F_SETFD, FD_CLOEXEC);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t alen = sizeof addr;
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lfd, 16) != 0 ||
        getsockname(lfd, (struct sockaddr *)&addr, &alen) != 0) {
        error_line("cannot serve the profile on 127.0.0.1: %s", strerror(errno));
        close(lfd);
        return -1;
    }
    fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);

    /* The name is only for the profiler to show: kept to bytes a path
     * takes as they are. */
    char name[128];
    size_t k = 0;
    for (const char *s = o->name; *s && k + 1 < sizeof name; s++)
        name[k++] = (strchr("-_.", *s) || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                     (*s >= '0' && *s <= '9'))
                        ? *s
                        : '_';
    name[k] = 0;
    char path[200];
    k = (size_t)snprintf(path, sizeof path, "/");
    for (size_t i = 0; i < sizeof key; i++)
        k += (size_t)snprintf(path + k, sizeof path - k, "%02x", key[i]);
    snprintf(path + k, sizeof path - k, "/%s", name[0] ? name : "profile.json.gz");

    char profile_url[300], encoded[900], base[2048], url[3000];
    snprintf(profile_url, sizeof profile_url, "http://127.0.0.1:%u%s",
             (unsigned)ntohs(addr.sin_port), path);
    url_encode(profile_url, encoded, sizeof encoded);
    snprintf(base, sizeof base, "%s", o->profiler_url);
    for (size_t n = strlen(base); n > 0 && base[n - 1] == '/'; n--)
        base[n - 1] = 0;
    snprintf(url, sizeof url, "%s/from-url/%s/", base, encoded);
    printf("%s\n", url);
    fflush(stdout);
    if (!o->quiet)
        fprintf(stderr, "profconv: serving the profile on 127.0.0.1 until the profiler fetches "
                        "it; open the address above (Ctrl-C stops)\n");
    if (o->open_browser)
        open_url(url, o->quiet);

    static conn conns[MAX_CONNS];
    size_t nconn = 0;
    int done = 0;
    while (!done) {
        struct pollfd pfd[MAX_CONNS + 1];
        pfd[0] = (struct pollfd){lfd, nconn < MAX_CONNS ? POLLIN : 0, 0};
        for (size_t i = 0; i < nconn; i++)
            pfd[i + 1] = (struct pollfd){conns[i].fd, POLLIN, 0};
        int r = poll(pfd, nconn + 1, 1000);
        if (r < 0 && errno != EINTR) {
            error_line("cannot serve the profile: %s", strerror(errno));
            break;
        }
        double t = mono();
        /* Connections with a request, or gone, or past their deadline;
         * the list is compacted as they go. */
        size_t keep = 0;
        for (size_t i = 0; i < nconn; i++) {
            conn *c = &conns[i];
            int close_it = 0;
            if (r > 0 && (pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) {
                ssize_t got = read(c->fd, c->buf + c->len, MAX_HEADER - c->len);
                if (got <= 0 && !(got < 0 && (errno == EAGAIN || errno == EINTR))) {
                    close_it = 1;
                } else if (got > 0) {
                    c->len += (size_t)got;
                    c->buf[c->len] = 0;
                    if (strstr(c->buf, "\r\n\r\n") || strstr(c->buf, "\n\n")) {
                        done = answer(c, path, data, size, o->gzip);
                        close_gently(c->fd);
                        c->fd = -1;
                    } else if (c->len == MAX_HEADER) {
                        send_status(c->fd, "431 Request Header Fields Too Large");
                        close_it = 1;
                    }
                }
            }
            if (c->fd >= 0 && !close_it && t > c->deadline)
                close_it = 1;
            if (close_it) {
                close(c->fd);
                c->fd = -1;
            }
            if (c->fd >= 0)
                conns[keep++] = *c;
        }
        nconn = keep;
        if (!done && r > 0 && (pfd[0].revents & POLLIN)) {
            while (nconn < MAX_CONNS) {
                int fd = accept(lfd, NULL, NULL);
                if (fd < 0)
                    break;
                fcntl(fd, F_SETFD, FD_CLOEXEC);
                fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
                conns[nconn] = (conn){.fd = fd, .deadline = t + REQUEST_SECONDS};
                conns[nconn].buf[0] = 0;
                nconn++;
            }
        }
    }
    for (size_t i = 0; i < nconn; i++)
        close(conns[i].fd);
    close(lfd);
    if (done && !o->quiet)
        fprintf(stderr, "profconv: the profiler fetched the profile; stopped serving it\n");
    return done ? 0 : -1;
}
