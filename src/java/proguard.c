#include "java/proguard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "model/model.h"

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
        while (i < n && s[i] == ' ')
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
        ps->kind = s[0] == ' ' ? L_MEMBER : L_CLASS;
        return;
    }
    ps->kind = L_EOF;
}

static uint32_t intern(pc_proguard *m, const char *s, size_t n)
{
    return pc_str_intern(&m->str, s, n);
}

static uint32_t find_class(const pc_proguard *m, uint32_t obf, pc_probe *pr)
{
    pc_probe_start(&m->cls.idx, pc_mix64(obf), pr);
    for (uint32_t id; (id = pc_probe_next(&m->cls.idx, pr)) != PC_NONE;)
        if (m->cls.obf[id] == obf)
            return id;
    return PC_NONE;
}

static uint32_t add_class(pc_proguard *m, uint32_t obf)
{
    pc_probe pr;
    if (pc_htab_reserve(&m->cls.idx, m->cls.n + 1) < 0)
        return PC_NONE;
    uint32_t found = find_class(m, obf, &pr);
    if (found != PC_NONE)
        return found;
    struct pc_col cols[] = {PC_COL(m->cls.obf), PC_COL(m->cls.orig),
                            PC_COL(m->cls.synthesized)};
    if (pc_grow_cols(&m->cls.cap, m->cls.n + 1, cols, 3) < 0)
        return PC_NONE;
    uint32_t id = (uint32_t)m->cls.n++;
    m->cls.obf[id] = obf;
    m->cls.orig[id] = PC_NONE;
    m->cls.synthesized[id] = 0;
    pc_htab_insert(&m->cls.idx, &pr, id);
    return id;
}

static uint32_t method_of(const pc_proguard *m, uint32_t cls, uint32_t obf,
                          pc_probe *pr)
{
    pc_probe_start(&m->method.idx, pc_mix64((uint64_t)cls << 32 | obf), pr);
    for (uint32_t id; (id = pc_probe_next(&m->method.idx, pr)) != PC_NONE;)
        if (m->method.cls[id] == cls && m->method.obf[id] == obf)
            return id;
    return PC_NONE;
}

/* Parses the member line in ps for class cls; fields are skipped. */
static int parse_member(pc_proguard *m, parser *ps, uint32_t cls)
{
    const char *s = ps->s, *arrow = find(s, ps->n, " -> ");
    const char *paren = arrow;
    while (paren > s && *paren != '(')
        paren--;
    const char *space = paren;
    while (space > s && *space != ' ')
        space--;
    if (*paren != '(' || *space != ' ') {
        next_line(ps);
        return 0;
    }
    const char *name = space + 1;
    size_t name_len = (size_t)(paren - name);
    const char *orig_cls = pc_str(&m->str, m->cls.orig[cls]);
    size_t cls_len = pc_str_len(&m->str, m->cls.orig[cls]);
    int with_class = memchr(name, '.', name_len) != NULL;
    if (with_class && name_len > cls_len + 1 && memcmp(name, orig_cls, cls_len) == 0 &&
        name[cls_len] == '.') {
        name += cls_len + 1;
        name_len -= cls_len + 1;
        with_class = 0;
    }
    uint32_t orig = intern(m, name, name_len);
    uint32_t obf = intern(m, arrow + 4, (size_t)(s + ps->n - (arrow + 4)));
    if (orig == PC_NONE || obf == PC_NONE)
        return -1;
    next_line(ps);
    int synthesized = ps->kind == L_SYNTHESIZED;
    if (synthesized)
        next_line(ps);

    pc_probe pr;
    if (pc_htab_reserve(&m->method.idx, m->method.n + 1) < 0)
        return -1;
    uint32_t id = method_of(m, cls, obf, &pr);
    if (id != PC_NONE) {
        /* Overloads share obfuscated names; prefer the later one unless it
         * was synthesized by R8. */
        if (!synthesized) {
            m->method.orig[id] = orig;
            m->method.with_class[id] = (uint8_t)with_class;
            m->method.synthesized[id] = 0;
        }
        return 0;
    }
    struct pc_col cols[] = {PC_COL(m->method.cls), PC_COL(m->method.obf),
                            PC_COL(m->method.orig), PC_COL(m->method.with_class),
                            PC_COL(m->method.synthesized)};
    if (pc_grow_cols(&m->method.cap, m->method.n + 1, cols, 5) < 0)
        return -1;
    id = (uint32_t)m->method.n++;
    m->method.cls[id] = cls;
    m->method.obf[id] = obf;
    m->method.orig[id] = orig;
    m->method.with_class[id] = (uint8_t)with_class;
    m->method.synthesized[id] = (uint8_t)synthesized;
    pc_htab_insert(&m->method.idx, &pr, id);
    return 0;
}

int pc_proguard_parse(pc_proguard *m, const char *text, size_t len,
                      const char *name, pc_error *err)
{
    parser ps = {text, text + len, L_EOF, NULL, 0};
    next_line(&ps);
    while (ps.kind != L_EOF) {
        if (ps.kind != L_CLASS) {
            next_line(&ps);
            continue;
        }
        const char *s = ps.s, *arrow = find(s, ps.n, " -> ");
        const char *colon = memchr(arrow + 4, ':', (size_t)(s + ps.n - (arrow + 4)));
        if (!colon) {
            next_line(&ps);
            continue;
        }
        uint32_t orig = intern(m, s, (size_t)(arrow - s));
        uint32_t obf = intern(m, arrow + 4, (size_t)(colon - (arrow + 4)));
        uint32_t cls = orig == PC_NONE || obf == PC_NONE ? PC_NONE : add_class(m, obf);
        if (cls == PC_NONE)
            return pc_fail(err, PC_ENOMEM, "%s: out of memory", name);
        m->cls.orig[cls] = orig;
        next_line(&ps);
        if (ps.kind == L_SYNTHESIZED) {
            m->cls.synthesized[cls] = 1;
            next_line(&ps);
        }
        while (ps.kind == L_MEMBER)
            if (parse_member(m, &ps, cls) < 0)
                return pc_fail(err, PC_ENOMEM, "%s: out of memory", name);
    }
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

int pc_proguard_lookup(const pc_proguard *m, const char *name, size_t len,
                       pc_retrace *r)
{
    const char *paren = memchr(name, '(', len);
    if (paren)
        len = (size_t)(paren - name);
    const char *dot = NULL;
    for (size_t i = len; i-- > 0 && !dot;)
        if (name[i] == '.')
            dot = name + i;
    if (!dot || !m->cls.n)
        return 0;
    pc_probe pr;
    uint32_t obf_cls = pc_str_find(&m->str, name, (size_t)(dot - name));
    uint32_t cls = obf_cls == PC_NONE ? PC_NONE : find_class(m, obf_cls, &pr);
    if (cls == PC_NONE || m->cls.orig[cls] == PC_NONE)
        return 0;
    r->prefix = pc_str(&m->str, m->cls.orig[cls]);
    r->prefix_len = pc_str_len(&m->str, m->cls.orig[cls]);
    /* Only the class may be obfuscated: keep the method's name then. */
    r->method = dot + 1;
    r->method_len = (size_t)(name + len - r->method);
    r->synthesized = m->cls.synthesized[cls];
    uint32_t obf_m = pc_str_find(&m->str, r->method, r->method_len);
    uint32_t id = obf_m != PC_NONE && m->method.n ? method_of(m, cls, obf_m, &pr) : PC_NONE;
    if (id != PC_NONE) {
        r->method = pc_str(&m->str, m->method.orig[id]);
        r->method_len = pc_str_len(&m->str, m->method.orig[id]);
        r->synthesized = m->method.synthesized[id];
        if (m->method.with_class[id]) {
            r->prefix = "";
            r->prefix_len = 0;
        }
    }
    return 1;
}

void pc_proguard_free(pc_proguard *m)
{
    pc_strtab_free(&m->str);
    free(m->cls.obf);
    free(m->cls.orig);
    free(m->cls.synthesized);
    pc_htab_free(&m->cls.idx);
    free(m->method.cls);
    free(m->method.obf);
    free(m->method.orig);
    free(m->method.with_class);
    free(m->method.synthesized);
    pc_htab_free(&m->method.idx);
    memset(m, 0, sizeof *m);
}
