#include "jsonmini.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 512

/* Everything of one document lives in a chain of arena blocks, freed
 * together; the root points back to its document. */
typedef struct block {
    struct block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} block;

typedef struct doc {
    block *blocks;
    jv root;
} doc;

typedef struct parser {
    const char *s, *end, *start;
    doc *d;
    char *err;
    size_t errlen;
    int failed;
} parser;

static void *alloc(parser *p, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    block *b = p->d->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > (1u << 20) ? n : (1u << 20);
        b = malloc(sizeof *b + cap);
        if (!b) {
            p->failed = 1;
            return NULL;
        }
        b->next = p->d->blocks;
        b->used = 0;
        b->cap = cap;
        p->d->blocks = b;
    }
    void *r = b->data + b->used;
    b->used += n;
    return r;
}

static int fail(parser *p, const char *what)
{
    if (!p->failed)
        snprintf(p->err, p->errlen, "offset %zu: %s", (size_t)(p->s - p->start), what);
    p->failed = 1;
    return -1;
}

static void skip_ws(parser *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
        p->s++;
}

static int literal(parser *p, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(p->end - p->s) < n || memcmp(p->s, word, n) != 0)
        return fail(p, "invalid literal");
    p->s += n;
    return 0;
}

static int digits(parser *p)
{
    const char *b = p->s;
    while (p->s < p->end && *p->s >= '0' && *p->s <= '9')
        p->s++;
    return p->s > b ? 0 : fail(p, "digit expected");
}

static int number(parser *p, jv *v)
{
    const char *b = p->s;
    int integral = 1;
    if (p->s < p->end && *p->s == '-')
        p->s++;
    if (p->s < p->end && *p->s == '0') {
        p->s++;
        if (p->s < p->end && *p->s >= '0' && *p->s <= '9')
            return fail(p, "leading zero");
    } else if (digits(p) < 0) {
        return -1;
    }
    if (p->s < p->end && *p->s == '.') {
        p->s++;
        integral = 0;
        if (digits(p) < 0)
            return -1;
    }
    if (p->s < p->end && (*p->s == 'e' || *p->s == 'E')) {
        p->s++;
        integral = 0;
        if (p->s < p->end && (*p->s == '+' || *p->s == '-'))
            p->s++;
        if (digits(p) < 0)
            return -1;
    }
    size_t n = (size_t)(p->s - b);
    char *text = alloc(p, n + 1);
    if (!text)
        return fail(p, "out of memory");
    memcpy(text, b, n);
    text[n] = 0;
    v->type = J_NUM;
    v->num_text = text;
    v->num = strtod(text, NULL);
    if (integral) {
        errno = 0;
        v->ival = strtoll(text, NULL, 10);
        v->is_int = errno == 0;
    }
    return 0;
}

static int hex4(parser *p, unsigned *out)
{
    if (p->end - p->s < 4)
        return fail(p, "short \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return fail(p, "bad \\u escape");
    }
    p->s += 4;
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Length of a valid UTF-8 sequence at s, or 0. */
static size_t utf8_valid(const unsigned char *s, size_t avail)
{
    unsigned c = s[0], cp;
    size_t n;
    if (c < 0x80)
        return 1;
    if (c < 0xc2 || c > 0xf4)
        return 0;
    n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    cp = c & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
    if (avail < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return n;
}

static int string(parser *p, const char **out, size_t *out_len)
{
    p->s++;  /* the opening quote */
    const char *b = p->s;
    /* Decoded text is never longer than the source. */
    const char *q = b;
    while (q < p->end && *q != '"')
        q += *q == '\\' && q + 1 < p->end ? 2 : 1;
    char *o = alloc(p, (size_t)(q - b) + 1);
    if (!o)
        return fail(p, "out of memory");
    size_t n = 0;
    for (;;) {
        if (p->s >= p->end)
            return fail(p, "unterminated string");
        unsigned char c = (unsigned char)*p->s;
        if (c == '"') {
            p->s++;
            break;
        }
        if (c < 0x20)
            return fail(p, "control character in string");
        if (c != '\\') {
            size_t k = utf8_valid((const unsigned char *)p->s, (size_t)(p->end - p->s));
            if (!k)
                return fail(p, "invalid UTF-8 in string");
            memcpy(o + n, p->s, k);
            n += k;
            p->s += k;
            continue;
        }
        p->s++;
        if (p->s >= p->end)
            return fail(p, "unterminated escape");
        char e = *p->s++;
        unsigned cp;
        switch (e) {
        case '"': o[n++] = '"'; break;
        case '\\': o[n++] = '\\'; break;
        case '/': o[n++] = '/'; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'n': o[n++] = '\n'; break;
        case 'r': o[n++] = '\r'; break;
        case 't': o[n++] = '\t'; break;
        case 'u':
            if (hex4(p, &cp) < 0)
                return -1;
            if (cp >= 0xdc00 && cp <= 0xdfff)
                return fail(p, "lone low surrogate");
            if (cp >= 0xd800 && cp <= 0xdbff) {
                unsigned lo;
                if (p->end - p->s < 2 || p->s[0] != '\\' || p->s[1] != 'u')
                    return fail(p, "high surrogate without its pair");
                p->s += 2;
                if (hex4(p, &lo) < 0)
                    return -1;
                if (lo < 0xdc00 || lo > 0xdfff)
                    return fail(p, "mismatched surrogate pair");
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            n += put_utf8(o + n, cp);
            break;
        default:
            return fail(p, "invalid escape");
        }
    }
    o[n] = 0;
    *out = o;
    *out_len = n;
    return 0;
}

static int value(parser *p, jv *v, int depth);

/* Parses the elements of an array or object into a growing list, then
 * moves them to the arena. */
static int container(parser *p, jv *v, int depth, int is_obj)
{
    char close = is_obj ? '}' : ']';
    jv **items = NULL;
    const char **keys = NULL;
    size_t n = 0, cap = 0;
    int r = 0;
    if (depth >= MAX_DEPTH)
        return fail(p, "nesting too deep");
    p->s++;
    skip_ws(p);
    if (p->s < p->end && *p->s == close) {
        p->s++;
    } else {
        for (;;) {
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                items = realloc(items, cap * sizeof *items);
                keys = realloc(keys, cap * sizeof *keys);
            }
            keys[n] = NULL;
            skip_ws(p);
            if (is_obj) {
                size_t klen;
                if (p->s >= p->end || *p->s != '"') {
                    r = fail(p, "object key expected");
                    break;
                }
                if ((r = string(p, &keys[n], &klen)) < 0)
                    break;
                skip_ws(p);
                if (p->s >= p->end || *p->s != ':') {
                    r = fail(p, "':' expected");
                    break;
                }
                p->s++;
            }
            items[n] = alloc(p, sizeof(jv));
            if (!items[n]) {
                r = fail(p, "out of memory");
                break;
            }
            memset(items[n], 0, sizeof(jv));
            if ((r = value(p, items[n], depth + 1)) < 0)
                break;
            n++;
            skip_ws(p);
            if (p->s < p->end && *p->s == ',') {
                p->s++;
                continue;
            }
            if (p->s < p->end && *p->s == close) {
                p->s++;
                break;
            }
            r = fail(p, is_obj ? "',' or '}' expected" : "',' or ']' expected");
            break;
        }
    }
    if (r == 0) {
        v->type = is_obj ? J_OBJ : J_ARR;
        v->n = n;
        v->items = alloc(p, (n + 1) * sizeof *v->items);
        v->keys = is_obj ? alloc(p, (n + 1) * sizeof *v->keys) : NULL;
        if (!v->items || (is_obj && !v->keys)) {
            r = fail(p, "out of memory");
        } else {
            if (n)
                memcpy(v->items, items, n * sizeof *items);
            if (is_obj && n)
                memcpy(v->keys, keys, n * sizeof *keys);
        }
    }
    free(items);
    free(keys);
    return r;
}

static int value(parser *p, jv *v, int depth)
{
    skip_ws(p);
    if (p->s >= p->end)
        return fail(p, "value expected");
    switch (*p->s) {
    case '{': return container(p, v, depth, 1);
    case '[': return container(p, v, depth, 0);
    case '"':
        v->type = J_STR;
        return string(p, &v->str, &v->str_len);
    case 't':
        v->type = J_BOOL;
        v->boolean = 1;
        return literal(p, "true");
    case 'f':
        v->type = J_BOOL;
        return literal(p, "false");
    case 'n':
        v->type = J_NULL;
        return literal(p, "null");
    default:
        if (*p->s == '-' || (*p->s >= '0' && *p->s <= '9'))
            return number(p, v);
        return fail(p, "unexpected character");
    }
}

void j_free(jv *root)
{
    if (!root)
        return;
    doc *d = (doc *)((char *)root - offsetof(doc, root));
    for (block *b = d->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(d);
}

jv *j_parse(const char *text, size_t len, char *err, size_t errlen)
{
    doc *d = calloc(1, sizeof *d);
    parser p = {text, text + len, text, d, err, errlen, 0};
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (value(&p, &d->root, 0) == 0) {
        skip_ws(&p);
        if (p.s != p.end)
            fail(&p, "trailing characters after the value");
    }
    if (p.failed) {
        j_free(&d->root);
        return NULL;
    }
    return &d->root;
}

const jv *j_get(const jv *obj, const char *key)
{
    if (!obj || obj->type != J_OBJ)
        return NULL;
    for (size_t i = obj->n; i-- > 0;)
        if (strcmp(obj->keys[i], key) == 0)
            return obj->items[i];
    return NULL;
}

size_t j_len(const jv *v)
{
    return v && (v->type == J_ARR || v->type == J_OBJ) ? v->n : 0;
}

const jv *j_at(const jv *arr, size_t i)
{
    return arr && (arr->type == J_ARR || arr->type == J_OBJ) && i < arr->n
               ? arr->items[i] : NULL;
}

const char *j_key_at(const jv *obj, size_t i)
{
    return obj && obj->type == J_OBJ && i < obj->n ? obj->keys[i] : NULL;
}

int j_is_int(const jv *v)
{
    return v && v->type == J_NUM && v->is_int;
}

long long j_int(const jv *v)
{
    return v && v->type == J_NUM ? (v->is_int ? v->ival : (long long)v->num) : 0;
}

double j_num(const jv *v)
{
    return v && v->type == J_NUM ? v->num : 0;
}

const char *j_str(const jv *v)
{
    return v && v->type == J_STR ? v->str : NULL;
}

const char *j_num_text(const jv *v)
{
    return v && v->type == J_NUM ? v->num_text : "";
}
