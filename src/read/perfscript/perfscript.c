/* perf script text into the profile model (see read_perfscript.h).
 *
 * perf pads and orders its header fields by the -F options given, and a
 * command name may hold spaces and digits, so the header is read from its
 * one unambiguous token: the timestamp "secs.frac:".  What precedes it is
 * "comm [pid/]tid [[cpu]]", what follows it "[period] event: [rest]".
 * Symbols may hold spaces and parentheses (C++), so a frame's dso is the
 * last balanced parenthesised group of its line.
 *
 * What a frame's address is differs by line: a callchain line gives the
 * offset in the dso's file (perf's map_ip), and so does "(dso+0x...)"
 * (-F +dsoff), but the frame on the header line of a sample without a
 * callchain gives the ip as it ran.  That one is brought back to its file
 * through the mappings --show-mmap-events prints, when they are there; the
 * symbolizer (--symbols) then has a file offset for every user-space frame.
 */
#include "base/grow.h"
#include "read/perfscript/perfscript.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/demangle.h"
#include "base/error.h"
#include "base/hex.h"
#include "io/source.h"
#include "read/read.h"

/* No real line comes near this; a longer one is not perf script text. */
#define MAX_LINE (16u << 20)

typedef struct span {
    const char *s;
    size_t n;
} span;

typedef struct ps_header {
    span comm, event, rest;
    int64_t pid, tid;  /* pid -1 when the text does not give it */
    int cpu;           /* -1 when absent */
    uint64_t time;     /* ns */
    int has_period;
    uint64_t period;
} ps_header;

typedef struct ps_frame {
    uint64_t addr;
    span sym, dso;
    int inlined;    /* perf script --inline's "(inlined)" */
    int offset;     /* addr is an offset in the dso's file */
} ps_frame;

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}


/* Parses the decimal digits of [s, e) into *v; 0 if not all digits or
 * too large. */
static int parse_dec(const char *s, const char *e, uint64_t *v)
{
    uint64_t x = 0;
    if (s == e)
        return 0;
    for (; s < e; s++) {
        if (!is_digit(*s) || x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return 0;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    *v = x;
    return 1;
}

/* "123.456789:" (seconds) into ns; 0 if the token is not a timestamp. */
static int parse_time(const char *s, const char *e, uint64_t *ns)
{
    if (e - s < 4 || e[-1] != ':')
        return 0;
    e--;
    const char *dot = memchr(s, '.', (size_t)(e - s));
    uint64_t secs, frac = 0;
    if (!dot || !parse_dec(s, dot, &secs) || secs > UINT64_MAX / 1000000000u)
        return 0;
    int digits = 0;
    for (const char *q = dot + 1; q < e; q++) {
        if (!is_digit(*q))
            return 0;
        if (digits < 9) {
            frac = frac * 10 + (uint64_t)(*q - '0');
            digits++;
        }
    }
    if (digits == 0)
        return 0;
    for (; digits < 9; digits++)
        frac *= 10;
    /* Past 2^64 - 1 ns is no time: it would wrap to an early one. */
    if (frac > UINT64_MAX - secs * 1000000000u)
        return 0;
    *ns = secs * 1000000000u + frac;
    return 1;
}

/* Splits off the next whitespace-separated token of [*s, e). */
static int next_token(const char **s, const char *e, span *tok)
{
    const char *q = *s;
    while (q < e && is_space(*q))
        q++;
    if (q == e)
        return 0;
    const char *start = q;
    while (q < e && !is_space(*q))
        q++;
    tok->s = start;
    tok->n = (size_t)(q - start);
    *s = q;
    return 1;
}

static span trim(const char *s, const char *e)
{
    while (s < e && is_space(*s))
        s++;
    while (e > s && is_space(e[-1]))
        e--;
    return (span){s, (size_t)(e - s)};
}

/* Parses a sample header line; 0 if line is not one. */
static int parse_header(const char *line, size_t len, ps_header *h)
{
    enum { MAX_TOK = 64 };
    span tok[MAX_TOK];
    const char *s = line, *e = line + len;
    int n = 0, t_at = -1;
    uint64_t ns = 0;

    /* The timestamp: the first "secs.frac:" token after at least a comm
     * and a tid. */
    while (n < MAX_TOK && next_token(&s, e, &tok[n])) {
        if (n >= 2 && parse_time(tok[n].s, tok[n].s + tok[n].n, &ns)) {
            t_at = n;
            break;
        }
        n++;
    }
    if (t_at < 0)
        return 0;
    memset(h, 0, sizeof *h);
    h->time = ns;
    h->cpu = -1;
    int k = t_at - 1;
    /* "[003]": the CPU. */
    if (tok[k].n >= 3 && tok[k].s[0] == '[' && tok[k].s[tok[k].n - 1] == ']') {
        uint64_t cpu;
        if (!parse_dec(tok[k].s + 1, tok[k].s + tok[k].n - 1, &cpu) || cpu >= PC_NO_CPU)
            return 0;
        h->cpu = (int)cpu;
        k--;
    }
    if (k < 1)
        return 0;
    /* "pid/tid" or "tid". */
    const char *ts = tok[k].s, *te = ts + tok[k].n;
    const char *slash = memchr(ts, '/', tok[k].n);
    uint64_t pid = 0, tid;
    if (slash ? !parse_dec(ts, slash, &pid) || !parse_dec(slash + 1, te, &tid)
              : !parse_dec(ts, te, &tid))
        return 0;
    if (tid > INT64_MAX || pid > INT64_MAX)
        return 0;
    h->tid = (int64_t)tid;
    h->pid = slash ? (int64_t)pid : -1;
    h->comm = trim(line, tok[k].s);
    /* After the time: an optional period, then "event:". */
    span a = {NULL, 0};
    const char *after = s;
    if (next_token(&s, e, &a) && parse_dec(a.s, a.s + a.n, &h->period)) {
        h->has_period = 1;
        after = s;
        if (!next_token(&s, e, &a))
            a.n = 0;
    }
    if (a.n > 1 && a.s[a.n - 1] == ':') {
        h->event = (span){a.s, a.n - 1};
        h->rest = trim(s, e);
    } else {
        /* No event field (-F without it): the rest starts after the
         * period or the time. */
        h->event = (span){NULL, 0};
        h->rest = trim(after, e);
    }
    return 1;
}

/* Takes "+0x1a2b" off the end of dso into *off; 0 when it has none. */
static int dso_offset(span *dso, uint64_t *off)
{
    size_t j = dso->n;
    uint64_t v = 0;
    while (j > 0 && pc_hex_digit((unsigned char)dso->s[j - 1]) >= 0)
        j--;
    if (j == dso->n || dso->n - j > 16 || j < 4 || memcmp(dso->s + j - 3, "+0x", 3) != 0)
        return 0;
    for (size_t k = j; k < dso->n; k++)
        v = v << 4 | (uint64_t)pc_hex_digit((unsigned char)dso->s[k]);
    dso->n = j - 3;
    *off = v;
    return 1;
}

/* Parses "addr sym[+0xoff] (dso)"; 0 if the text is not a frame. */
static int parse_frame(const char *s, size_t len, ps_frame *f)
{
    const char *e = s + len;
    while (s < e && is_space(*s))
        s++;
    while (e > s && is_space(e[-1]))
        e--;
    uint64_t addr = 0;
    const char *q = s;
    for (; q < e && !is_space(*q); q++) {
        int v = pc_hex_digit((unsigned char)*q);
        if (v < 0 || addr >> 60)
            return 0;
        addr = addr << 4 | (uint64_t)v;
    }
    if (q == s)
        return 0;
    f->addr = addr;
    f->dso = (span){NULL, 0};
    f->inlined = f->offset = 0;
    const char *sym_end = e;
    /* perf --inline marks inlined functions; they are frames like any. */
    if (e - q >= 10 && memcmp(e - 10, " (inlined)", 10) == 0) {
        f->inlined = 1;
        e -= 10;
        while (e > q && is_space(e[-1]))
            e--;
        sym_end = e;
    }
    if (e > q && e[-1] == ')') {
        int depth = 0;
        for (const char *r = e - 1; r >= q; r--) {
            if (*r == ')')
                depth++;
            else if (*r == '(' && --depth == 0) {
                if (r > q && is_space(r[-1])) {
                    f->dso = (span){r + 1, (size_t)(e - 1 - (r + 1))};
                    sym_end = r;
                }
                break;
            }
        }
    }
    /* "(dso+0x1a2b)" of -F +dsoff: the file offset. */
    uint64_t off;
    if (f->dso.n && dso_offset(&f->dso, &off)) {
        f->addr = off;
        f->offset = 1;
    }
    span sym = trim(q, sym_end);
    /* "name+0x1a": the offset into the symbol goes, the address stays. */
    size_t j = sym.n;
    while (j > 0 && pc_hex_digit((unsigned char)sym.s[j - 1]) >= 0)
        j--;
    if (j < sym.n && j >= 4 && memcmp(sym.s + j - 3, "+0x", 3) == 0)
        sym.n = j - 3;
    f->sym = sym;
    return 1;
}

/* The rule perf script --header draws above and below its header block. */
static int is_header_rule(const char *line, size_t len)
{
    if (len < 10 || memcmp(line, "# ========", 10) != 0)
        return 0;
    while (len > 10 && (is_space(line[len - 1]) || line[len - 1] == '\r'))
        len--;
    return len == 10;
}

int ps_detect(const uint8_t *data, size_t len)
{
    const char *s = (const char *)data, *e = s + len;
    if (len >= 10 && memcmp(s, "# ========", 10) == 0)
        return 1;
    int in_block = 0;
    while (s < e) {
        const char *nl = memchr(s, '\n', (size_t)(e - s));
        const char *le = nl ? nl : e;
        if (memchr(s, 0, (size_t)(le - s)))
            return 0;
        span t = trim(s, le);
        /* A recorded command line's newlines break header fields into
         * lines of their own, not starting with '#'. */
        if (is_header_rule(s, (size_t)(le - s)))
            in_block = !in_block;
        else if (t.n && t.s[0] != '#' && !in_block) {
            ps_header h;
            return parse_header(s, (size_t)(le - s), &h);
        }
        if (!nl)
            break;
        s = nl + 1;
    }
    /* The window may end inside a long header block. */
    return in_block;
}

typedef struct reader {
    pc_input *in;
    pc_profile *p;
    const pc_options *o;
    pc_error *err;
    size_t consumed;       /* bytes of the current line to skip */
    uint64_t line_off;     /* offset of the current line */
    size_t line_no;

    pc_thread_index threads;
    pc_htab frame_idx;     /* over (func, addr) of p->frame */
    pc_htab demangled;     /* mangled string id -> demangled, in dm[] */
    uint32_t *dm_from, *dm_to;
    size_t dm_n, dm_cap;

    /* The open sample. */
    int open;
    ps_header h;
    uint32_t thread;
    uint16_t event;
    uint64_t open_off;
    uint32_t *chain;       /* frame ids, leaf first */
    size_t n_chain, chain_cap;
    size_t n_beyond;       /* frames past the depth limit */

    size_t last_event_len; /* the previous event token, in last_event_buf */
    char *last_event_buf;
    size_t last_event_cap;
    int last_event_has_period;
    uint16_t last_event_id;

    /* perf script --header's block, whose lines all start with '#' but
     * for a field (the recorded command line) holding newlines: 0 before
     * it may begin, 1 inside it, 2 once it is over or cannot begin. */
    int header_block;

    /* Mappings of --show-mmap-events, oldest first.  Each file's path is
     * kept once (paths); the mappings of one file, and of one file in one
     * process (keys), are chained newest first, so that a look-up walks
     * the few mappings it could be, however many processes there are. */
    struct {
        int64_t *pid;
        uint64_t *start, *end, *pgoff;
        uint32_t *path, *prev_path, *prev_key;
        size_t n, cap;
        size_t hit;        /* the last one a look-up found, or n */
        int64_t hit_pid;   /* for the process it was looked up for */
    } maps;
    struct {
        size_t *off;
        uint32_t *len, *head;
        size_t n, cap;
        char *text;
        size_t text_n, text_cap;
        pc_htab idx;
    } paths;
    struct {
        int64_t *pid;
        uint32_t *path, *head;
        size_t n, cap;
        pc_htab idx;
    } keys;

    int inlined;           /* some frame was marked "(inlined)" */
    size_t samples, side_records, extra_lines, no_period, no_pid;
    size_t unmapped;       /* header-line frames with no file offset */
    pc_skips skipped;      /* with keep_going: damaged lines */
} reader;

static int nomem(reader *r)
{
    return pc_fail(r->err, PC_ENOMEM, "%s: out of memory", src_name(r->in));
}

/* The next line, without its '\n' (and '\r'); 1, 0 at the end, or a
 * negative status. */
static int next_line(reader *r, const char **line, size_t *len)
{
    pc_input *in = r->in;
    src_skip(in, r->consumed);
    r->consumed = 0;
    size_t scanned = 0;
    for (;;) {
        size_t avail = src_avail(in);
        const char *p = (const char *)src_ptr(in);
        const char *nl = avail > scanned ? memchr(p + scanned, '\n', avail - scanned) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - p);
            r->consumed = n + 1;
            if (n && p[n - 1] == '\r')
                n--;
            r->line_off = src_offset(in);
            r->line_no++;
            *line = p;
            *len = n;
            return 1;
        }
        if (avail > MAX_LINE)
            return -src_fail_at(in, r->err, src_offset(in), "line %zu is longer than %u MiB: "
                                "not perf script text", r->line_no + 1, MAX_LINE >> 20);
        scanned = avail;
        int got = src_need(in, avail + 1, r->err);
        if (got < 0)
            return got;
        if (got == 0) {
            if (avail == 0)
                return 0;
            /* The last line lacks its '\n'. */
            r->consumed = avail;
            r->line_off = src_offset(in);
            r->line_no++;
            *line = (const char *)src_ptr(in);
            *len = avail;
            return 1;
        }
    }
}

static uint32_t thread_of(reader *r, int64_t pid, int64_t tid, span comm)
{
    pc_profile *p = r->p;
    uint32_t id = pc_thread_find(&r->threads, p, pid, tid);
    /* The latest name: a thread that exec'd is known by its new one. */
    if (id != PC_NONE && comm.n)
        p->thread.name[id] = pc_intern(p, comm.s, comm.n);
    return id;
}

/* The event id of the header's event; samples without a period count one
 * each, under a name that says so, since their weight is no time. */
static int event_of(reader *r, const ps_header *h, uint16_t *out)
{
    pc_profile *p = r->p;
    span ev = h->event.n ? h->event : (span){"samples", 7};
    if (r->last_event_buf && ev.n == r->last_event_len &&
        h->has_period == r->last_event_has_period &&
        memcmp(ev.s, r->last_event_buf, ev.n) == 0) {
        *out = r->last_event_id;
        return PC_OK;
    }
    char buf[256];
    int n = h->has_period || !h->event.n
                ? snprintf(buf, sizeof buf, "%.*s", (int)ev.n, ev.s)
                : snprintf(buf, sizeof buf, "samples of %.*s", (int)ev.n, ev.s);
    if (n < 0 || (size_t)n >= sizeof buf)
        return src_fail_at(r->in, r->err, r->line_off, "line %zu: the event name is "
                           "longer than %zu bytes", r->line_no, sizeof buf - 12);
    uint32_t name = pc_intern(p, buf, (size_t)n);
    if (name == PC_NONE)
        return nomem(r);
    int unit = !h->has_period ? PC_UNIT_SAMPLES
               : pc_perf_clock_event(pc_str(&p->str, name)) ? PC_UNIT_NS : PC_UNIT_COUNT;
    uint32_t e = pc_event(p, name, unit, 0);
    if (e == PC_NONE)
        return p->oom ? nomem(r)
                      : src_fail_at(r->in, r->err, r->line_off, "line %zu: more than %d "
                                    "event types", r->line_no, PC_MAX_EVENTS);
    if (ev.n > r->last_event_cap) {
        char *nb = realloc(r->last_event_buf, ev.n);
        if (!nb)
            return nomem(r);
        r->last_event_buf = nb;
        r->last_event_cap = ev.n;
    }
    memcpy(r->last_event_buf, ev.s, ev.n);
    r->last_event_len = ev.n;
    r->last_event_has_period = h->has_period;
    r->last_event_id = (uint16_t)e;
    *out = (uint16_t)e;
    return PC_OK;
}

/* The string id of a symbol name as it should read: demangled unless the
 * raw names were asked for, each distinct name demangled once. */
static uint32_t symbol_name(reader *r, uint32_t raw)
{
    pc_profile *p = r->p;
    const char *s = pc_str(&p->str, raw);
    if (r->o->mangled || s[0] != '_' || s[1] != 'Z')
        return raw;
    pc_probe pr;
    if (pc_htab_reserve(&r->demangled, r->dm_n + 1) < 0)
        return PC_NONE;
    pc_probe_start(&r->demangled, pc_mix64(raw), &pr);
    for (uint32_t i; (i = pc_probe_next(&r->demangled, &pr)) != PC_NONE;)
        if (r->dm_from[i] == raw)
            return r->dm_to[i];
    struct pc_col cols[] = {PC_COL(r->dm_from), PC_COL(r->dm_to)};
    if (pc_grow_cols(&r->dm_cap, r->dm_n + 1, cols, 2) < 0)
        return PC_NONE;
    char *d = pc_demangle(s);
    uint32_t to = d ? pc_intern_cstr(p, d) : raw;
    free(d);
    r->dm_from[r->dm_n] = raw;
    r->dm_to[r->dm_n] = to;
    pc_htab_insert(&r->demangled, &pr, (uint32_t)r->dm_n++);
    return to;
}

/* Reads "PID/TID: [0xSTART(0xLEN) @ PGOFF ...]: PROT PATH", what follows
 * PERF_RECORD_MMAP or PERF_RECORD_MMAP2; 0 when the text is otherwise. */
static int parse_mmap(const char *s, const char *e, int64_t *pid, uint64_t *start,
                      uint64_t *len, uint64_t *pgoff, span *path)
{
    while (s < e && is_space(*s))
        s++;
    int neg = s < e && *s == '-';
    const char *d = s + neg, *q = d;
    uint64_t v = 0;
    while (q < e && is_digit(*q) && v < (UINT64_C(1) << 60))
        v = v * 10 + (uint64_t)(*q++ - '0');
    if (q == d || q == e || *q != '/')
        return 0;
    *pid = neg ? -(int64_t)v : (int64_t)v;
    const char *b = memchr(q, '[', (size_t)(e - q));
    if (!b)
        return 0;
    uint64_t *out[3] = {start, len, pgoff};
    const char *stop = "()";
    q = b + 1;
    for (int i = 0; i < 3; i++) {
        while (q < e && (is_space(*q) || *q == ')' || *q == '@'))
            q++;
        if (e - q >= 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
            q += 2;
        const char *h = q;
        v = 0;
        while (q < e && pc_hex_digit((unsigned char)*q) >= 0 && !(v >> 60))
            v = v << 4 | (uint64_t)pc_hex_digit((unsigned char)*q++);
        if (q == h || q == e || (i < 2 && *q != stop[i]) || (i == 2 && !is_space(*q) && *q != ']'))
            return 0;
        *out[i] = v;
        if (i < 2)
            q++;
    }
    const char *c = memchr(q, ']', (size_t)(e - q));
    if (!c || e - c < 3 || c[1] != ':')
        return 0;
    q = c + 2;
    span prot;
    if (!next_token(&q, e, &prot))
        return 0;
    *path = trim(q, e);
    return path->n > 0;
}

/* The id of path in the reader's path table, added when add is set;
 * PC_NONE when absent (or out of memory: r->p->oom). */
static uint32_t path_id(reader *r, span path, int add)
{
    pc_probe pr;
    if (add && pc_htab_reserve(&r->paths.idx, r->paths.n + 1) < 0)
        return r->p->oom = 1, PC_NONE;
    if (!r->paths.n && !add)
        return PC_NONE;
    pc_probe_start(&r->paths.idx, pc_hash_bytes(path.s, path.n), &pr);
    for (uint32_t id; (id = pc_probe_next(&r->paths.idx, &pr)) != PC_NONE;)
        if (r->paths.len[id] == path.n &&
            memcmp(r->paths.text + r->paths.off[id], path.s, path.n) == 0)
            return id;
    if (!add)
        return PC_NONE;
    struct pc_col cols[] = {PC_COL(r->paths.off), PC_COL(r->paths.len), PC_COL(r->paths.head)};
    if (path.n > UINT32_MAX || pc_grow_cols(&r->paths.cap, r->paths.n + 1, cols, 3) < 0 ||
        pc_grow(&r->paths.text, &r->paths.text_cap, r->paths.text_n + path.n, 1, 4096) < 0)
        return r->p->oom = 1, PC_NONE;
    uint32_t id = (uint32_t)r->paths.n++;
    r->paths.off[id] = r->paths.text_n;
    r->paths.len[id] = (uint32_t)path.n;
    r->paths.head[id] = PC_NONE;
    memcpy(r->paths.text + r->paths.text_n, path.s, path.n);
    r->paths.text_n += path.n;
    pc_htab_insert(&r->paths.idx, &pr, id);
    return id;
}

/* The id of (pid, path) in the key table, added when add is set. */
static uint32_t key_id(reader *r, int64_t pid, uint32_t path, int add)
{
    pc_probe pr;
    if (add && pc_htab_reserve(&r->keys.idx, r->keys.n + 1) < 0)
        return r->p->oom = 1, PC_NONE;
    if (!r->keys.n && !add)
        return PC_NONE;
    pc_probe_start(&r->keys.idx, pc_mix64((uint64_t)pid * 0x9e3779b97f4a7c15ull ^ path), &pr);
    for (uint32_t id; (id = pc_probe_next(&r->keys.idx, &pr)) != PC_NONE;)
        if (r->keys.pid[id] == pid && r->keys.path[id] == path)
            return id;
    if (!add)
        return PC_NONE;
    struct pc_col cols[] = {PC_COL(r->keys.pid), PC_COL(r->keys.path), PC_COL(r->keys.head)};
    if (pc_grow_cols(&r->keys.cap, r->keys.n + 1, cols, 3) < 0)
        return r->p->oom = 1, PC_NONE;
    uint32_t id = (uint32_t)r->keys.n++;
    r->keys.pid[id] = pid;
    r->keys.path[id] = path;
    r->keys.head[id] = PC_NONE;
    pc_htab_insert(&r->keys.idx, &pr, id);
    return id;
}

/* Keeps a mapping of a PERF_RECORD_MMAP line; a line that does not read
 * as one is counted with the other side-band records. */
static int add_mmap(reader *r, const char *s, const char *e)
{
    int64_t pid;
    uint64_t start, len, pgoff;
    span path;
    if (!parse_mmap(s, e, &pid, &start, &len, &pgoff, &path) || path.s[0] == '[' ||
        start + len < start)
        return PC_OK;
    uint32_t pa = path_id(r, path, 1);
    uint32_t k = pa == PC_NONE ? PC_NONE : key_id(r, pid, pa, 1);
    struct pc_col cols[] = {PC_COL(r->maps.pid), PC_COL(r->maps.start), PC_COL(r->maps.end),
                            PC_COL(r->maps.pgoff), PC_COL(r->maps.path),
                            PC_COL(r->maps.prev_path), PC_COL(r->maps.prev_key)};
    if (k == PC_NONE || r->maps.n >= PC_NONE - 1 ||
        pc_grow_cols(&r->maps.cap, r->maps.n + 1, cols, 7) < 0)
        return nomem(r);
    size_t i = r->maps.n++;
    r->maps.pid[i] = pid;
    r->maps.start[i] = start;
    r->maps.end[i] = start + len;
    r->maps.pgoff[i] = pgoff;
    r->maps.path[i] = pa;
    r->maps.prev_path[i] = r->paths.head[pa];
    r->maps.prev_key[i] = r->keys.head[k];
    r->paths.head[pa] = (uint32_t)i;
    r->keys.head[k] = (uint32_t)i;
    r->maps.hit = r->maps.n;
    return PC_OK;
}

/* The newest mapping of dso that holds ip in process pid, else in any
 * process (perf script prints no pid by default, and a thread's tid then
 * stands in for it), or maps.n.  Samples mostly hit the mapping the
 * previous one hit. */
static size_t mapping_at(reader *r, int64_t pid, uint64_t ip, span dso)
{
    size_t h = r->maps.hit;
    if (h < r->maps.n && r->maps.hit_pid == pid && ip >= r->maps.start[h] &&
        ip < r->maps.end[h] && r->paths.len[r->maps.path[h]] == dso.n &&
        memcmp(r->paths.text + r->paths.off[r->maps.path[h]], dso.s, dso.n) == 0)
        return h;
    uint32_t pa = path_id(r, dso, 0);
    if (pa == PC_NONE)
        return r->maps.n;
    uint32_t k = key_id(r, pid, pa, 0);
    uint32_t found = PC_NONE;
    for (uint32_t i = k == PC_NONE ? PC_NONE : r->keys.head[k]; i != PC_NONE && found == PC_NONE;
         i = r->maps.prev_key[i])
        if (ip >= r->maps.start[i] && ip < r->maps.end[i])
            found = i;
    for (uint32_t i = r->paths.head[pa]; i != PC_NONE && found == PC_NONE;
         i = r->maps.prev_path[i])
        if (ip >= r->maps.start[i] && ip < r->maps.end[i])
            found = i;
    if (found == PC_NONE)
        return r->maps.n;
    r->maps.hit = found;
    r->maps.hit_pid = pid;
    return found;
}

/* The model frame of a parsed frame line: frames are told apart by
 * function and address, as perf report does.  header: the frame is the
 * one of a header line, whose address is the ip as it ran. */
static uint32_t frame_of(reader *r, const ps_frame *fl, int header)
{
    pc_profile *p = r->p;
    ps_frame fv = *fl;
    const ps_frame *f = &fv;
    span dso = f->dso;
    int unknown_dso = dso.n == 0 || (dso.n == 9 && memcmp(dso.s, "[unknown]", 9) == 0);
    /* perf's own names ("[kernel.kallsyms]", "[vdso]") are no files. */
    int in_file = !unknown_dso && dso.s[0] != '[';
    if (in_file && header && !f->offset) {
        size_t m = mapping_at(r, r->h.pid, f->addr, dso);
        if (m < r->maps.n) {
            fv.addr = f->addr - r->maps.start[m] + r->maps.pgoff[m];
            fv.offset = 1;
        } else {
            r->unmapped++;
        }
    } else if (in_file) {
        fv.offset = 1;
    }
    /* Writers expect every function to have a resource: a nameless one
     * stands for none. */
    uint32_t res = unknown_dso ? pc_intern(p, "", 0) : pc_intern(p, dso.s, dso.n);
    uint32_t name;
    int unknown_sym = f->sym.n == 0 || (f->sym.n == 9 && memcmp(f->sym.s, "[unknown]", 9) == 0);
    if (unknown_sym && !unknown_dso) {
        name = pc_address_name(p, dso.s, dso.n, f->addr);
    } else if (unknown_sym) {
        name = pc_intern(p, "[unknown]", 9);
    } else {
        name = pc_intern(p, f->sym.s, f->sym.n);
        if (name != PC_NONE)
            name = symbol_name(r, name);
    }
    if (p->oom || name == PC_NONE)
        return PC_NONE;
    uint32_t func = pc_func(p, name, pc_resource(p, res));
    if (func == PC_NONE)
        return PC_NONE;
    pc_probe pr;
    if (pc_htab_reserve(&r->frame_idx, p->frame.n + 1) < 0)
        return PC_NONE;
    pc_probe_start(&r->frame_idx, pc_mix64(f->addr ^ (uint64_t)func << 40 ^ func), &pr);
    for (uint32_t id; (id = pc_probe_next(&r->frame_idx, &pr)) != PC_NONE;)
        if (p->frame.func[id] == func && p->frame.addr[id] == f->addr)
            return id;
    int cat = PC_CAT_OTHER;
    if (!unknown_dso)
        cat = pc_category_of(pc_str(&p->str, res), pc_str_len(&p->str, res));
    uint32_t id = pc_add_frame(p, func, f->addr, (uint8_t)cat, PC_EXEC_NATIVE);
    if (id == PC_NONE)
        return id;
    pc_htab_insert(&r->frame_idx, &pr, id);
    /* The symbolizer looks a file offset up; a named frame may still get
     * its line and inlined functions, unless perf gave those already. */
    if (in_file && f->offset)
        p->frame.unnamed[id] = unknown_sym ? PC_ADDR_OFFSET : PC_ADDR_OFFSET | PC_ADDR_NAMED;
    return id;
}

static int add_frame_line(reader *r, const ps_frame *f, int header)
{
    /* Frames come leaf first: past the depth limit they are only counted. */
    if (r->p->depth.max && r->n_chain >= r->p->depth.max) {
        r->n_beyond++;
        return PC_OK;
    }
    r->inlined |= f->inlined;
    uint32_t fr = frame_of(r, f, header);
    if (fr == PC_NONE)
        return nomem(r);
    if (pc_grow(&r->chain, &r->chain_cap, r->n_chain + 1, sizeof *r->chain, 64) < 0)
        return nomem(r);
    r->chain[r->n_chain++] = fr;
    return PC_OK;
}

static int finish_sample(reader *r)
{
    pc_profile *p = r->p;
    if (!r->open)
        return PC_OK;
    r->open = 0;
    uint32_t stack = PC_NONE;
    if (r->n_beyond)
        pc_depth_cut(p, r->n_chain + r->n_beyond);
    for (size_t i = r->n_chain; i-- > 0;)
        stack = pc_stack(p, stack, r->chain[i]);
    int64_t w = 1;
    if (r->h.has_period)
        w = pc_clamp_i64(r->h.period);
    pc_add_sample(p, r->thread, r->h.time, stack, w, r->event,
                  r->h.cpu < 0 ? PC_NO_CPU : (uint16_t)r->h.cpu);
    r->samples++;
    return p->oom ? nomem(r) : PC_OK;
}

static int on_header(reader *r, const ps_header *h)
{
    int st;
    if ((st = finish_sample(r)) != PC_OK)
        return st;
    /* perf's side-band records (--show-task-events, --show-mmap-events
     * and the like), with or without a ':' after their name. */
    if ((h->event.n > 12 && memcmp(h->event.s, "PERF_RECORD_", 12) == 0) ||
        (!h->event.n && h->rest.n > 12 && memcmp(h->rest.s, "PERF_RECORD_", 12) == 0)) {
        r->side_records++;
        /* The name, then what it says. */
        const char *s = h->event.n ? h->event.s : h->rest.s;
        const char *e = h->rest.s + h->rest.n;
        if (e - s > 16 && memcmp(s, "PERF_RECORD_MMAP", 16) == 0) {
            s += 16;
            while (s < e && !is_space(*s))
                s++;
            if (h->event.n && h->rest.n)
                s = h->rest.s;
            return add_mmap(r, s, e);
        }
        return PC_OK;
    }
    r->h = *h;
    if (h->pid < 0) {
        r->h.pid = h->tid;  /* each thread a process of its own */
        r->no_pid++;
    }
    r->thread = thread_of(r, r->h.pid, h->tid, h->comm);
    if (r->thread == PC_NONE)
        return nomem(r);
    if ((st = event_of(r, h, &r->event)) != PC_OK)
        return st;
    if (!h->has_period)
        r->no_period++;
    r->open = 1;
    r->open_off = r->line_off;
    r->n_chain = r->n_beyond = 0;
    /* Without callchains, the frame shares the header's line. */
    ps_frame f;
    if (h->rest.n && parse_frame(h->rest.s, h->rest.n, &f) && f.dso.n)
        return add_frame_line(r, &f, 1);
    return PC_OK;
}

static void free_reader(reader *r)
{
    pc_thread_index_free(&r->threads);
    pc_htab_free(&r->frame_idx);
    pc_htab_free(&r->demangled);
    free(r->dm_from);
    free(r->dm_to);
    free(r->chain);
    free(r->last_event_buf);
    free(r->maps.pid);
    free(r->maps.start);
    free(r->maps.end);
    free(r->maps.pgoff);
    free(r->maps.path);
    free(r->maps.prev_path);
    free(r->maps.prev_key);
    free(r->paths.off);
    free(r->paths.len);
    free(r->paths.head);
    free(r->paths.text);
    pc_htab_free(&r->paths.idx);
    free(r->keys.pid);
    free(r->keys.path);
    free(r->keys.head);
    pc_htab_free(&r->keys.idx);
}

int pc_read_perfscript(pc_input *in, pc_profile *p, const pc_options *o, pc_error *err)
{
    reader r;
    memset(&r, 0, sizeof r);
    r.in = in;
    r.p = p;
    r.o = o;
    r.err = err;
    p->meta.source = pc_intern_cstr(p, "perf script");
    int st = PC_OK, got;
    const char *line = NULL;
    size_t len = 0;
    while ((got = next_line(&r, &line, &len)) > 0) {
        if (memchr(line, 0, len)) {
            st = src_fail_at(in, err, r.line_off + (uint64_t)((const char *)memchr(line, 0, len) - line),
                             "line %zu: a NUL byte: not perf script text", r.line_no);
            break;
        }
        span t = trim(line, line + len);
        if (t.n && line[0] != '#' && r.header_block == 0)
            r.header_block = 2;  /* perf writes its header before anything */
        if (t.n == 0) {
            st = finish_sample(&r);
        } else if (line[0] == '#') {
            /* perf's header block and comments; no frame starts so. */
            if (r.header_block < 2 && is_header_rule(line, len))
                r.header_block++;
        } else if (r.header_block == 1) {
            /* The rest of a header field split by a newline it holds. */
        } else if (r.open && line[0] == '\t') {
            ps_frame f;
            if (parse_frame(line, len, &f) && (f.dso.n || f.sym.n))
                st = add_frame_line(&r, &f, 0);
            else
                r.extra_lines++;
        } else {
            ps_header h;
            if (parse_header(line, len, &h)) {
                st = on_header(&r, &h);
            } else if (r.open && is_space(line[0])) {
                ps_frame f;
                if (parse_frame(line, len, &f) && f.dso.n)
                    st = add_frame_line(&r, &f, 0);
                else
                    r.extra_lines++;
            } else {
                st = src_fail_at(in, err, r.line_off,
                                 "line %zu: expected a sample header such as "
                                 "\"comm 123/456 [001] 7.123456: 250000 cpu-clock:\", "
                                 "found \"%.*s\"", r.line_no, (int)(t.n > 60 ? 60 : t.n), t.s);
            }
        }
        if (st == PC_EINPUT && o->keep_going) {
            /* A damaged line goes, the rest is read on. */
            pc_skips_add(&r.skipped, err);
            st = PC_OK;
        }
        if (st != PC_OK)
            break;
    }
    if (got < 0)
        st = -got;
    if (st == PC_OK)
        st = finish_sample(&r);
    if (st == PC_OK && r.samples == 0 && r.line_no == 0)
        st = src_fail_at(in, err, 0, "the input is empty");
    p->sample.read = p->sample.n;
    if (st == PC_OK)
        pc_skips_report(&r.skipped, o, "damaged lines skipped");
    if (st == PC_OK && r.side_records)
        pc_log(o, PC_LOG_INFO, "%zu side-band records (PERF_RECORD_*) were skipped",
               r.side_records);
    if (st == PC_OK && r.no_pid)
        pc_log(o, PC_LOG_NOTICE, "%zu samples carry no process id, so each thread is shown as "
               "a process of its own: perf script -F +pid prints the ids", r.no_pid);
    /* perf script --inline named the inlined functions already. */
    for (size_t i = 0; st == PC_OK && r.inlined && i < p->frame.n; i++)
        if (p->frame.unnamed[i] & PC_ADDR_NAMED)
            p->frame.unnamed[i] = PC_ADDR_NONE;
    if (st == PC_OK && r.unmapped && (o->symbol_dirs.n || (o->symfs && *o->symfs)))
        pc_log(o, PC_LOG_NOTICE, "%zu sample lines give the address as it ran and no mapping "
               "of its file, so --symbols cannot look it up: perf script --show-mmap-events "
               "prints the mappings", r.unmapped);
    if (st == PC_OK && r.no_period)
        pc_log(o, PC_LOG_INFO, "%zu samples carry no period (perf script -F without "
               "period): each counts one", r.no_period);
    free_reader(&r);
    return st;
}
