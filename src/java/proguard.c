#include "java/proguard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* One line of the mapping, as the parser classifies it. */
enum line_kind { L_EOF, L_CLASS, L_MEMBER, L_SYNTHESIZED };

typedef struct parser {
    const char *p, *end;
    enum line_kind kind;
    const char *s;   /* the current line, without its newline */
    size_t n;
} parser;

static const char *find(const char *s, size_t n, const char *what)
{
    size_t k = strlen(what);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(s + i, what, k) == 0)
            return s + i;
    return NULL;
}

/* Moves to the next line that matters: a class or member line (holding
 * " -> "), or R8's synthesized marker; other comments and lines are
 * skipped. */
static void next_line(parser *ps)
{
    while (ps->p < ps->end) {
        const char *s = ps->p, *nl = memchr(s, '\n', (size_t)(ps->end - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(ps->end - s);
        ps->p = nl ? nl + 1 : ps->end;
        while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
            n--;
        size_t i = 0;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i == n)
            continue;
        ps->s = s;
        ps->n = n;
        if (s[i] == '#') {
            if (find(s, n, "com.android.tools.r8.synthesized")) {
                ps->kind = L_SYNTHESIZED;
                return;
            }
            continue;
        }
        if (!find(s, n, " -> "))
            continue;
        ps->kind = i ? L_MEMBER : L_CLASS;
        return;
    }
    ps->kind = L_EOF;
}

/* Reads a decimal number of at most 9 digits from p (before end);
 * returns what follows it, or NULL when there is none. */
static const char *number(const char *p, const char *end, uint32_t *v)
{
    uint32_t x = 0;
    const char *q = p;
    while (q < end && q - p < 9 && *q >= '0' && *q <= '9')
        x = x * 10 + (uint32_t)(*q++ - '0');
    if (q == p || (q < end && *q >= '0' && *q <= '9'))
        return NULL;
    *v = x;
    return q;
}

/* Reads the member line s[0..n) into m; returns 0 for a field or a line
 * that is no method. */
static int parse_member(const char *s, size_t n, pc_deobf_method *m)
{
    const char *arrow = find(s, n, " -> ");
    memset(m, 0, sizeof *m);
    m->obf = arrow + 4;
    m->obf_len = (size_t)(s + n - m->obf);
    const char *paren = arrow;
    while (paren > s && *paren != '(')
        paren--;
    const char *name = paren;
    while (name > s && name[-1] != ' ')
        name--;
    if (*paren != '(' || name == s)
        return 0;
    m->orig = name;
    m->orig_len = (size_t)(paren - name);
    /* "a:b:" before the return type. */
    const char *p = s;
    uint32_t a, b;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *q = number(p, name, &a);
    if (q && *q == ':' && (q = number(q + 1, name, &b)) != NULL && *q == ':') {
        m->obf_start = a;
        m->obf_end = b;
    }
    /* ":c" or ":c:d" after the arguments. */
    const char *close = memchr(paren, ')', (size_t)(arrow - paren));
    if (close && close + 1 < arrow && close[1] == ':' &&
        (q = number(close + 2, arrow, &a)) != NULL) {
        m->orig_start = a;
        if (q < arrow && *q == ':' && number(q + 1, arrow, &b))
            m->orig_end = b;
    }
    return 1;
}

int pc_proguard_parse(pc_proguard *m, const char *text, size_t len, const char *name,
                      pc_error *err)
{
    parser ps = {text, text + len, L_EOF, NULL, 0};
    uint32_t cls = PC_NONE;   /* members before any class are skipped */
    next_line(&ps);
    while (ps.kind != L_EOF) {
        if (ps.kind == L_CLASS) {
            const char *s = ps.s, *arrow = find(s, ps.n, " -> ");
            const char *obf = arrow + 4;
            const char *colon = memchr(obf, ':', (size_t)(s + ps.n - obf));
            next_line(&ps);
            int synthesized = ps.kind == L_SYNTHESIZED;
            if (synthesized)
                next_line(&ps);
            cls = PC_NONE;
            if (colon && pc_deobf_add_class(m, "", 0, obf, (size_t)(colon - obf), s,
                                            (size_t)(arrow - s), synthesized, &cls) < 0)
                return pc_fail(err, PC_ENOMEM, "%s: out of memory", name);
            continue;
        }
        if (ps.kind != L_MEMBER) {
            next_line(&ps);   /* a marker after nothing it could mark */
            continue;
        }
        pc_deobf_method meth;
        int is_method = parse_member(ps.s, ps.n, &meth);
        next_line(&ps);
        if (ps.kind == L_SYNTHESIZED) {
            meth.synthesized = 1;
            next_line(&ps);
        }
        if (is_method && pc_deobf_add_method(m, cls, &meth) < 0)
            return pc_fail(err, PC_ENOMEM, "%s: out of memory", name);
    }
    if (pc_deobf_seal(m) < 0)
        return pc_fail(err, PC_ENOMEM, "%s: out of memory", name);
    return PC_OK;
}

int pc_proguard_load(pc_proguard *m, const char *path, pc_error *err)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t len = 0, cap = 0;
    if (!f)
        return pc_fail(err, PC_EIO, "%s: cannot open: %s", path, strerror(errno));
    for (;;) {
        if (cap - len < 65536) {
            cap = cap ? cap * 2 : 1 << 20;
            char *t = realloc(text, cap);
            if (!t) {
                free(text);
                fclose(f);
                return pc_fail(err, PC_ENOMEM, "%s: out of memory", path);
            }
            text = t;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    int st = bad ? pc_fail(err, PC_EIO, "%s: read failed", path)
                 : pc_proguard_parse(m, text, len, path, err);
    free(text);
    return st;
}
