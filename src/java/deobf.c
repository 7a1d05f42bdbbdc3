/* The deobfuscation model and its lookup (deobf.h). */
#include "base/grow.h"
#include "java/deobf.h"

#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "model/model.h"

/* Method line flags. */
enum {
    F_SYNTH = 1,        /* R8 synthesized it */
    F_OUTER = 2,        /* the outermost method of its chain */
    F_QUALIFIED = 4,    /* the original name holds its class */
    F_HEAD = 8,         /* the first line of its (class, name) */
    F_ANSWERED = 16,    /* on a head: answer[] holds the no-line name */
    F_JOINED = 32,      /* ... as a string id, else as a line id */
    F_ANSWER_SYNTH = 64 /* ... and every candidate was synthesized */
};

static uint32_t intern(pc_deobf *d, const char *s, size_t n)
{
    return pc_str_intern(&d->str, s ? s : "", s ? n : 0);
}

static uint32_t find_class(const pc_deobf *d, uint32_t pkg, uint32_t obf, pc_probe *pr)
{
    pc_probe_start(&d->cls.idx, pc_mix64((uint64_t)pkg << 32 | obf), pr);
    for (uint32_t c; (c = pc_probe_next(&d->cls.idx, pr)) != PC_NONE;)
        if (d->cls.pkg[c] == pkg && d->cls.obf[c] == obf)
            return c;
    return PC_NONE;
}

static uint32_t find_method(const pc_deobf *d, uint32_t cls, uint32_t obf, pc_probe *pr)
{
    pc_probe_start(&d->meth.idx, pc_mix64((uint64_t)cls << 32 | obf), pr);
    for (uint32_t m; (m = pc_probe_next(&d->meth.idx, pr)) != PC_NONE;)
        if (d->meth.cls[m] == cls && d->meth.obf[m] == obf)
            return m;
    return PC_NONE;
}

static int add_package(pc_deobf *d, uint32_t name)
{
    pc_probe pr;
    if (pc_htab_reserve(&d->pkg.idx, d->pkg.n + 1) < 0)
        return -1;
    pc_probe_start(&d->pkg.idx, pc_mix64(name), &pr);
    for (uint32_t k; (k = pc_probe_next(&d->pkg.idx, &pr)) != PC_NONE;)
        if (d->pkg.name[k] == name)
            return 0;
    struct pc_col cols[] = {PC_COL(d->pkg.name)};
    if (pc_grow_cols(&d->pkg.cap, d->pkg.n + 1, cols, 1) < 0)
        return -1;
    d->pkg.name[d->pkg.n] = name;
    pc_htab_insert(&d->pkg.idx, &pr, (uint32_t)d->pkg.n++);
    return 0;
}

uint32_t pc_deobf_package(const pc_deobf *d, const char *pkg, size_t len)
{
    uint32_t name = d->pkg.n ? pc_str_find(&d->str, pkg, len) : PC_NONE;
    if (name == PC_NONE)
        return PC_NONE;
    pc_probe pr;
    pc_probe_start(&d->pkg.idx, pc_mix64(name), &pr);
    for (uint32_t k; (k = pc_probe_next(&d->pkg.idx, &pr)) != PC_NONE;)
        if (d->pkg.name[k] == name)
            return name;
    return PC_NONE;
}

int pc_deobf_add_class(pc_deobf *d, const char *pkg, size_t pkg_len, const char *obf,
                       size_t obf_len, const char *orig, size_t orig_len, int synthesized,
                       uint32_t *cls)
{
    pc_probe pr;
    *cls = PC_NONE;
    uint32_t p = intern(d, pkg, pkg_len), o = intern(d, obf, obf_len);
    uint32_t g = intern(d, orig, orig_len);
    if (p == PC_NONE || o == PC_NONE || g == PC_NONE ||
        pc_htab_reserve(&d->cls.idx, d->cls.n + 1) < 0)
        return -1;
    if (find_class(d, p, o, &pr) != PC_NONE)
        return 0;
    struct pc_col cols[] = {PC_COL(d->cls.pkg), PC_COL(d->cls.obf), PC_COL(d->cls.orig),
                            PC_COL(d->cls.synthesized)};
    if (pc_grow_cols(&d->cls.cap, d->cls.n + 1, cols, 4) < 0 || add_package(d, p) < 0)
        return -1;
    uint32_t id = (uint32_t)d->cls.n++;
    d->cls.pkg[id] = p;
    d->cls.obf[id] = o;
    d->cls.orig[id] = g;
    d->cls.synthesized[id] = synthesized != 0;
    pc_htab_insert(&d->cls.idx, &pr, id);
    *cls = id;
    return 0;
}

static int ranged(const pc_deobf *d, uint32_t m)
{
    return d->meth.obf_start[m] || d->meth.obf_end[m];
}

int pc_deobf_add_method(pc_deobf *d, uint32_t cls, const pc_deobf_method *m)
{
    pc_probe pr;
    if (cls == PC_NONE)
        return 0;
    uint32_t o = intern(d, m->obf, m->obf_len), g = intern(d, m->orig, m->orig_len);
    if (o == PC_NONE || g == PC_NONE || pc_htab_reserve(&d->meth.idx, d->meth.n + 1) < 0)
        return -1;
    uint32_t head = find_method(d, cls, o, &pr);
    struct pc_col cols[] = {
        PC_COL(d->meth.cls),        PC_COL(d->meth.obf),     PC_COL(d->meth.orig),
        PC_COL(d->meth.obf_start),  PC_COL(d->meth.obf_end), PC_COL(d->meth.orig_start),
        PC_COL(d->meth.orig_end),   PC_COL(d->meth.next),    PC_COL(d->meth.tail),
        PC_COL(d->meth.answer),     PC_COL(d->meth.flags)};
    if (pc_grow_cols(&d->meth.cap, d->meth.n + 1, cols, 11) < 0)
        return -1;
    uint32_t id = (uint32_t)d->meth.n++;
    d->meth.cls[id] = cls;
    d->meth.obf[id] = o;
    d->meth.orig[id] = g;
    d->meth.obf_start[id] = m->obf_start;
    d->meth.obf_end[id] = m->obf_end;
    d->meth.orig_start[id] = m->orig_start;
    d->meth.orig_end[id] = m->orig_end;
    d->meth.next[id] = PC_NONE;
    d->meth.tail[id] = id;
    d->meth.answer[id] = PC_NONE;
    int qualified = m->orig_len && memchr(m->orig, '.', m->orig_len);
    d->meth.flags[id] = (uint8_t)(F_OUTER | (m->synthesized ? F_SYNTH : 0) |
                                  (qualified ? F_QUALIFIED : 0));
    if (head == PC_NONE) {
        d->meth.flags[id] |= F_HEAD;
        pc_htab_insert(&d->meth.idx, &pr, id);
        return 0;
    }
    /* The line before, of one range with this one, is inlined into it. */
    uint32_t t = d->meth.tail[head];
    if (ranged(d, t) && d->meth.obf_start[t] == m->obf_start && d->meth.obf_end[t] == m->obf_end)
        d->meth.flags[t] &= (uint8_t)~F_OUTER;
    d->meth.next[t] = id;
    d->meth.tail[head] = id;
    d->meth.flags[head] &= (uint8_t)~(F_ANSWERED | F_JOINED | F_ANSWER_SYNTH);
    return 0;
}

/* ---- Results ---- */

static int reserve_buf(pc_deobf_result *r, size_t more)
{
    if (r->cap - r->len > more)
        return 0;
    size_t cap = r->cap ? r->cap : 256;
    while (cap - r->len <= more)
        cap *= 2;
    char *b = realloc(r->buf, cap);
    if (!b)
        return -1;
    r->buf = b;
    r->cap = cap;
    return 0;
}

/* Appends the name a, or "a.b" when b is given. */
static int push(pc_deobf_result *r, const char *a, size_t an, const char *b, size_t bn,
                uint32_t line)
{
    size_t n = an + (b ? 1 + bn : 0);
    if (reserve_buf(r, n + 1) < 0)
        return -1;
    if (pc_grow(&r->name, &r->name_cap, r->n + 1, sizeof *r->name, 8) < 0)
        return -1;
    char *out = r->buf + r->len;
    memcpy(out, a, an);
    if (b) {
        out[an] = '.';
        memcpy(out + an + 1, b, bn);
    }
    out[n] = 0;
    r->name[r->n++] = (struct pc_deobf_name){r->len, n, line};
    r->len += n + 1;
    return 0;
}

/* The full name of method line m. */
static int push_method(const pc_deobf *d, uint32_t m, uint32_t line, pc_deobf_result *r)
{
    const pc_strtab *s = &d->str;
    uint32_t orig = d->meth.orig[m], cls = d->cls.orig[d->meth.cls[m]];
    if (d->meth.flags[m] & F_QUALIFIED)
        return push(r, pc_str(s, orig), pc_str_len(s, orig), NULL, 0, line);
    return push(r, pc_str(s, cls), pc_str_len(s, cls), pc_str(s, orig), pc_str_len(s, orig),
                line);
}

static int cmp_names(const void *a, const void *b, const void *ctx)
{
    const struct pc_deobf_name *x = a, *y = b;
    const char *buf = ctx;
    int c = memcmp(buf + x->off, buf + y->off, x->len < y->len ? x->len : y->len);
    if (c)
        return c;
    return (x->len > y->len) - (x->len < y->len);
}

/* Steps 5 and 6 of deobf.h over the lines of head that are candidates:
 * the outermost of each chain and the range-less ones, or the range-less
 * ones alone.  Leaves one name in r (which must be empty) and returns 1
 * when the candidates agree on it (*pick is then one of them), 2 when it
 * joins several, 0 when there is no candidate, -1 when out of memory. */
static int candidates(const pc_deobf *d, uint32_t head, int rangeless_only,
                      pc_deobf_result *r, uint32_t *pick)
{
    size_t n = 0, plain = 0;
    for (uint32_t m = head; m != PC_NONE; m = d->meth.next[m]) {
        int ok = rangeless_only ? !ranged(d, m) : (d->meth.flags[m] & F_OUTER) != 0;
        n += ok;
        plain += ok && !(d->meth.flags[m] & F_SYNTH);
    }
    if (!n)
        return 0;
    *pick = PC_NONE;
    for (uint32_t m = head; m != PC_NONE; m = d->meth.next[m]) {
        int ok = rangeless_only ? !ranged(d, m) : (d->meth.flags[m] & F_OUTER) != 0;
        if (!ok || (plain && (d->meth.flags[m] & F_SYNTH)))
            continue;
        if (*pick == PC_NONE)
            *pick = m;
        if (push_method(d, m, 0, r) < 0)
            return -1;
    }
    r->synthesized = plain == 0;
    pc_sort_ctx(r->name, r->n, sizeof *r->name, cmp_names, r->buf);
    size_t k = 0, total = 0;
    for (size_t i = 0; i < r->n; i++)
        if (i == 0 || cmp_names(&r->name[i], &r->name[k - 1], r->buf) != 0) {
            r->name[k++] = r->name[i];
            total += r->name[i].len;
        }
    r->n = k;
    if (k == 1)
        return 1;
    /* "A | B": the parts are copied from below the end of the buffer. */
    size_t len = total + 3 * (k - 1);
    if (reserve_buf(r, len + 1) < 0)
        return -1;
    char *out = r->buf + r->len;
    for (size_t i = 0; i < k; i++) {
        if (i) {
            memcpy(out, " | ", 3);
            out += 3;
        }
        memcpy(out, r->buf + r->name[i].off, r->name[i].len);
        out += r->name[i].len;
    }
    *out = 0;
    r->name[0] = (struct pc_deobf_name){r->len, len, 0};
    r->len += len + 1;
    r->n = 1;
    return 2;
}

/* The original line for obfuscated line `line` of method line m: R8
 * maps a range onto a range of the same size line by line, and onto one
 * line (an inlining call site) as a whole. */
static uint32_t orig_line(const pc_deobf *d, uint32_t m, uint32_t line)
{
    uint32_t a = d->meth.obf_start[m], b = d->meth.obf_end[m];
    uint32_t s = d->meth.orig_start[m], e = d->meth.orig_end[m];
    if (!s)
        return line;
    if (e > s && e - s == b - a)
        return s + (line - a);
    return s;
}

int pc_deobf_lookup(const pc_deobf *d, uint32_t pkg, const char *name, size_t len,
                    uint32_t line, pc_deobf_result *r)
{
    r->n = 0;
    r->len = 0;
    r->synthesized = 0;
    const char *paren = memchr(name, '(', len);
    if (paren)
        len = (size_t)(paren - name);
    size_t dot = len;
    while (dot > 0 && name[dot - 1] != '.')
        dot--;
    if (pkg == PC_NONE)
        pkg = d->pkg.n == 1 ? d->pkg.name[0] : PC_NONE;
    if (!dot || pkg == PC_NONE)
        return 0;
    pc_probe pr;
    uint32_t obf_cls = pc_str_find(&d->str, name, dot - 1);
    uint32_t c = obf_cls == PC_NONE ? PC_NONE : find_class(d, pkg, obf_cls, &pr);
    if (c == PC_NONE)
        return 0;
    const char *meth = name + dot;
    size_t meth_len = len - dot;
    uint32_t obf_m = pc_str_find(&d->str, meth, meth_len);
    uint32_t head = obf_m == PC_NONE || !d->meth.n ? PC_NONE : find_method(d, c, obf_m, &pr);
    if (head == PC_NONE) {
        /* Only the class is known: it keeps the method's name. */
        uint32_t orig = d->cls.orig[c];
        r->synthesized = d->cls.synthesized[c];
        return push(r, pc_str(&d->str, orig), pc_str_len(&d->str, orig), meth, meth_len, 0) < 0
                   ? -1
                   : 1;
    }
    int rangeless = 0;
    if (line) {
        /* An inline chain, most inlined first in the mapping. */
        size_t n = 0, plain = 0;
        for (uint32_t m = head; m != PC_NONE; m = d->meth.next[m]) {
            rangeless |= !ranged(d, m);
            if (ranged(d, m) && line >= d->meth.obf_start[m] && line <= d->meth.obf_end[m]) {
                if (pc_grow(&r->ids, &r->ids_cap, n + 1, sizeof *r->ids, 16) < 0)
                    return -1;
                r->ids[n++] = m;
                plain += !(d->meth.flags[m] & F_SYNTH);
            }
        }
        for (size_t i = n; i-- > 0;)
            if (push_method(d, r->ids[i], orig_line(d, r->ids[i], line), r) < 0)
                return -1;
        if (n) {
            r->synthesized = plain == 0;
            return 1;
        }
    }
    uint8_t f = d->meth.flags[head];
    if (!rangeless && (f & F_ANSWERED)) {
        const pc_strtab *s = &d->str;
        uint32_t a = d->meth.answer[head];
        r->synthesized = (f & F_ANSWER_SYNTH) != 0;
        if (!(f & F_JOINED))
            return push_method(d, a, 0, r) < 0 ? -1 : 1;
        return push(r, pc_str(s, a), pc_str_len(s, a), NULL, 0, 0) < 0 ? -1 : 1;
    }
    uint32_t pick;
    return candidates(d, head, rangeless, r, &pick) < 0 ? -1 : 1;
}

int pc_deobf_seal(pc_deobf *d)
{
    pc_deobf_result r;
    int st = 0;
    memset(&r, 0, sizeof r);
    for (size_t m = 0; m < d->meth.n && st == 0; m++) {
        uint8_t f = d->meth.flags[m];
        if (!(f & F_HEAD) || (f & F_ANSWERED))
            continue;
        uint32_t pick = PC_NONE, answer;
        r.n = r.len = 0;
        int k = candidates(d, (uint32_t)m, 0, &r, &pick);
        if (k < 0) {
            st = -1;
            break;
        }
        if (k == 0)
            continue;   /* cannot happen: a head's last line is outermost */
        if (k == 1) {
            answer = pick;   /* its full name is the answer */
        } else {
            answer = pc_str_intern(&d->str, r.buf + r.name[0].off, r.name[0].len);
            if (answer == PC_NONE) {
                st = -1;
                break;
            }
            f |= F_JOINED;
        }
        d->meth.answer[m] = answer;
        d->meth.flags[m] = (uint8_t)(f | F_ANSWERED | (r.synthesized ? F_ANSWER_SYNTH : 0));
    }
    pc_deobf_result_free(&r);
    return st;
}

void pc_deobf_result_free(pc_deobf_result *r)
{
    if (!r)
        return;
    free(r->buf);
    free(r->name);
    free(r->ids);
    memset(r, 0, sizeof *r);
}

void pc_deobf_free(pc_deobf *d)
{
    if (!d)
        return;
    pc_strtab_free(&d->str);
    free(d->cls.pkg);
    free(d->cls.obf);
    free(d->cls.orig);
    free(d->cls.synthesized);
    pc_htab_free(&d->cls.idx);
    free(d->meth.cls);
    free(d->meth.obf);
    free(d->meth.orig);
    free(d->meth.obf_start);
    free(d->meth.obf_end);
    free(d->meth.orig_start);
    free(d->meth.orig_end);
    free(d->meth.next);
    free(d->meth.tail);
    free(d->meth.answer);
    free(d->meth.flags);
    pc_htab_free(&d->meth.idx);
    free(d->pkg.name);
    pc_htab_free(&d->pkg.idx);
    memset(d, 0, sizeof *d);
}
