#include "test_util.h"
#include "jsonmini.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "convert.h"
#include "corpus.h"
#include "fixtures.h"
#include "t.h"

static char *rotating_buffer(void)
{
    static char bufs[4][8192];
    static int next;
    next = (next + 1) % 4;
    bufs[next][0] = 0;
    return bufs[next];
}

static int convert_with(int (*convert)(pc_input *, const pc_options *, pc_profile **,
                                        pc_error *),
                        const void *data, size_t len, const pc_options *o, pc_profile **out,
                        pc_error *err)
{
    pc_input *in;
    *out = NULL;
    int st = pc_input_open_memory(&in, data, len, "fixture", err);
    if (st == PC_OK) {
        st = convert(in, o, out, err);
        pc_input_close(in);
    }
    return st;
}

int convert_bytes(const void *data, size_t len, const pc_options *o,
                  pc_profile **out, pc_error *err)
{
    return convert_with(pc_convert, data, len, o, out, err);
}

int convert_bytes_unchecked(const void *data, size_t len, const pc_options *o,
                            pc_profile **out, pc_error *err)
{
    return convert_with(pc_convert_unchecked, data, len, o, out, err);
}

char *written_text(const pc_profile *p, int format, size_t *len)
{
    pc_write_options w;
    pc_write_options_init(&w);
    w.format = format;
    unsigned char *out = NULL;
    size_t n = 0;
    pc_error err;
    if (pc_write_memory(p, &w, &out, &n, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "writing format %d failed: %s", format, err.message);
        return NULL;
    }
    char *text = realloc(out, n + 1);
    if (!text) {
        free(out);
        return NULL;
    }
    text[n] = 0;
    if (len)
        *len = n;
    return text;
}

int convert_fixture_status(const pc_options *o, pc_error *err)
{
    spe e;
    pc_profile *p;
    fx_android(&e);
    int st = convert_bytes(e.out.data, e.out.len, o, &p, err);
    pc_profile_free(p);
    spe_free(&e);
    return st;
}

pc_profile *convert_fixture(const pc_options *o)
{
    spe e;
    pc_profile *p;
    pc_error err;
    fx_android(&e);
    if (convert_bytes(e.out.data, e.out.len, o, &p, &err) != PC_OK)
        t_fail(__FILE__, __LINE__, "fixture conversion failed: %s", err.message);
    spe_free(&e);
    return p;
}

pc_profile *convert_input(const char *base, const pc_options *o)
{
    char rel[256];
    size_t len;
    pc_profile *p = NULL;
    pc_error err;
    snprintf(rel, sizeof rel, "inputs/%s", base);
    unsigned char *data = corpus_read(rel, &len);
    if (!data || convert_bytes(data, len, o, &p, &err) != PC_OK)
        t_fail(__FILE__, __LINE__, "%s: %s", base, data ? err.message : "unreadable");
    free(data);
    return p;
}

int convert_input_status(const char *base, const pc_options *o, pc_error *err)
{
    char rel[256];
    size_t len;
    pc_profile *p = NULL;
    snprintf(rel, sizeof rel, "inputs/%s", base);
    unsigned char *data = corpus_read(rel, &len);
    if (!data) {
        t_fail(__FILE__, __LINE__, "%s: unreadable", base);
        return -1;
    }
    int st = convert_bytes(data, len, o, &p, err);
    pc_profile_free(p);
    free(data);
    return st;
}

uint32_t find_thread(const pc_profile *p, int64_t tid)
{
    for (size_t t = 0; t < p->thread.n; t++)
        if (p->thread.tid[t] == tid)
            return (uint32_t)t;
    return PC_NONE;
}

uint32_t thread_of(const pc_profile *p, int64_t pid, int64_t tid)
{
    for (size_t t = 0; t < p->thread.n; t++)
        if (p->thread.pid[t] == pid && p->thread.tid[t] == tid)
            return (uint32_t)t;
    return PC_NONE;
}

const char *str_of(const pc_profile *p, uint32_t id)
{
    return id == PC_NONE ? "(none)" : pc_str(&p->str, id);
}

size_t thread_samples(const pc_profile *p, uint32_t t)
{
    return p->sample.first[t + 1] - p->sample.first[t];
}

const char *thread_times_us(const pc_profile *p, uint32_t t)
{
    char *buf = rotating_buffer();
    size_t used = 0;
    if (t == PC_NONE)
        return "(no such thread)";
    for (size_t i = p->sample.first[t]; i < p->sample.first[t + 1]; i++) {
        int n = snprintf(buf + used, 8192 - used, "%s%" PRIu64, used ? "," : "",
                         (uint64_t)((pc_sample_time(p, i) - FX_T0) / 1000));
        if (n < 0 || (size_t)n >= 8192 - used)
            break;
        used += (size_t)n;
    }
    return buf;
}

const char *stack_text(const pc_profile *p, uint32_t stack)
{
    char *buf = rotating_buffer();
    uint32_t chain[256];
    size_t n = 0, used = 0;
    for (uint32_t s = stack; s != PC_NONE && n < 256; s = p->stack.prefix[s])
        chain[n++] = s;
    while (n-- > 0) {
        uint32_t func = p->frame.func[p->stack.frame[chain[n]]];
        int k = snprintf(buf + used, 8192 - used, "%s%s", used ? ";" : "",
                         pc_str(&p->str, p->func.name[func]));
        if (k < 0 || (size_t)k >= 8192 - used)
            break;
        used += (size_t)k;
    }
    return buf;
}

int frame_category(const pc_profile *p, const char *name)
{
    for (size_t f = 0; f < p->frame.n; f++)
        if (strcmp(pc_str(&p->str, p->func.name[p->frame.func[f]]), name) == 0)
            return p->frame.cat[f];
    return -1;
}

static char log_text[8192];

static void capture(void *ctx, int level, const char *message)
{
    (void)ctx;
    size_t used = strlen(log_text);
    snprintf(log_text + used, sizeof log_text - used, "%s%s\n",
             level == PC_LOG_WARN ? "warning: " : "", message);
}

void log_capture_start(pc_options *o)
{
    log_text[0] = 0;
    o->log = capture;
    o->log_ctx = NULL;
}

const char *log_capture_text(void)
{
    return log_text;
}

size_t gzip_bytes(const void *data, size_t len, unsigned char **out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY);
    size_t cap = deflateBound(&z, len) + 64;
    *out = malloc(cap);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    z.next_out = *out;
    z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    size_t n = cap - z.avail_out;
    deflateEnd(&z);
    return n;
}

unsigned char *gunzip_bytes(const void *data, size_t len, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + 15) != Z_OK)
        return NULL;
    size_t cap = len * 4 + 1024, n = 0;
    unsigned char *out = malloc(cap);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    int rc = Z_OK;
    while (out && rc == Z_OK) {
        if (n == cap) {
            unsigned char *grown = realloc(out, cap *= 2);
            if (!grown) {
                free(out);
                out = NULL;
                break;
            }
            out = grown;
        }
        z.next_out = out + n;
        z.avail_out = (uInt)(cap - n);
        rc = inflate(&z, Z_NO_FLUSH);
        n = cap - z.avail_out;
    }
    int trailing = z.avail_in != 0;
    inflateEnd(&z);
    if (rc != Z_STREAM_END || trailing) {
        free(out);
        return NULL;
    }
    *out_len = n;
    return out;
}

char *read_text(const char *path)
{
    size_t n;
    unsigned char *d = t_read_file(path, &n);
    if (!d)
        return NULL;
    char *s = realloc(d, n + 1);
    if (!s) {
        free(d);
        return NULL;
    }
    s[n] = 0;
    return s;
}

size_t write_simpleperf_file(const char *path, size_t n, int varied)
{
    enum { MAX_SYMS = 400 };
    int depth = varied ? 24 : 30, nsym = varied ? MAX_SYMS : 30;
    spe e;
    spe_begin(&e);
    const char *ev[] = {"cpu-clock"};
    spe_meta(&e, ev, 1, NULL, NULL, NULL, NULL, 0);
    spe_frame chain[30];
    for (int d = 0; d < depth; d++)
        chain[d] = (spe_frame){0x1000 + (uint64_t)d * 16, 0, d, -1};
    unsigned long long r = 88172645463325252ULL;
    for (size_t i = 0; i < n; i++) {
        if (varied) {
            for (int d = 0; d < depth; d++) {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                chain[d] = (spe_frame){0x1000 + (r % MAX_SYMS) * 16, 0,
                                       (int32_t)(r % MAX_SYMS), -1};
            }
        } else {
            chain[0].vaddr = 0x1000 + (i % 64) * 4;
        }
        spe_sample(&e, 1000000000ULL + i * 250000, (int32_t)(100 + i % 4), 250000, 0, chain,
                   (size_t)depth, NULL);
    }
    const char *syms[MAX_SYMS];
    static char names[MAX_SYMS][16];
    for (int s = 0; s < nsym; s++) {
        snprintf(names[s], sizeof names[s], "f%d", s);
        syms[s] = names[s];
    }
    spe_file(&e, 0, "/system/lib64/libx.so", syms, (size_t)nsym);
    spe_end(&e);
    FILE *f = fopen(path, "wb");
    size_t len = e.out.len;
    int ok = f && fwrite(e.out.data, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = 0;
    spe_free(&e);
    return ok ? len : 0;
}

struct jv *t_validate(const char *const *files, size_t n)
{
    static unsigned calls;
    char report[700];
    snprintf(report, sizeof report, "%s/validate-%u.json", t_tmpdir(), calls++);
    size_t cap = 1024 + 8 * 1024;
    for (size_t i = 0; i < n; i++)
        cap += strlen(files[i]) + 1;
    char *cmd = malloc(cap);
    if (!cmd)
        return NULL;
    size_t used = (size_t)snprintf(cmd, cap, "%s/fxprof/validate --quiet --json %s",
                                   t_shared() ? t_shared() : "../shared", report);
    for (size_t i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(cmd + used, cap - used, " %s", files[i]);
    if (used < cap)
        snprintf(cmd + used, cap - used, " >/dev/null 2>&1");
    remove(report);
    int rc = system(cmd);
    (void)rc;  /* 1 when a file fails to load: the report says which */
    free(cmd);
    char *text = read_text(report);
    char msg[256];
    jv *r = text ? j_parse(text, strlen(text), msg, sizeof msg) : NULL;
    free(text);
    return r;
}

struct jv *t_validate_profile(const pc_profile *p, const char *name)
{
    char out[700];
    snprintf(out, sizeof out, "%s/%s", t_tmpdir(), name);
    pc_write_options w;
    pc_write_options_init(&w);
    w.format = PC_FORMAT_FIREFOX;
    pc_error err;
    if (pc_write(p, out, &w, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "%s could not be written: %s", out, err.message);
        return NULL;
    }
    const char *files[] = {out};
    return t_validate(files, 1);
}

int t_node20(void)
{
    static int known = -1;
    if (known >= 0)
        return known;
    FILE *f = popen("node -p 'process.versions.node' 2>/dev/null", "r");
    int major = 0;
    if (f) {
        if (fscanf(f, "%d", &major) != 1)
            major = 0;
        pclose(f);
    }
    return known = major >= 20;
}

int t_in_path(const char *name)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t n = strcspn(path, ":");
        char full[1024];
        snprintf(full, sizeof full, "%.*s/%s", (int)n, path, name);
        if (n && access(full, X_OK) == 0)
            return 1;
        path += n + (path[n] == ':');
    }
    return 0;
}

int pipe_fails_at_once(const void *data, size_t len, int threads, const char *want)
{
    int fds[2];
    if (pipe(fds) != 0) {
        t_fail(__FILE__, __LINE__, "cannot make a pipe");
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[1]);
        alarm(20);
        char path[64];
        snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
        pc_input *in;
        pc_error err;
        if (pc_input_open(&in, path, &err) != PC_OK)
            _exit(3);
        pc_options o;
        pc_options_init(&o);
        o.threads = threads;
        pc_profile *p = NULL;
        int st = pc_convert(in, &o, &p, &err);
        _exit(st == PC_EINPUT && strstr(err.message, want) ? 0 : 4);
    }
    close(fds[0]);
    /* The child may be done, and gone, before all is written. */
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    ssize_t w = write(fds[1], data, len);
    signal(SIGPIPE, old);
    int status = 0;
    waitpid(pid, &status, 0);
    close(fds[1]);
    int got = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    if (w <= 0 || got != 0)
        t_fail(__FILE__, __LINE__, "the conversion from a pipe: %s, exit %d",
               w <= 0 ? "nothing written" : "did not fail at once", got);
    return got;
}
