#include "jschema.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keywords understood; every schema is checked against this list before
 * any instance is looked at. */
static const char *const known_keywords[] = {
    "$ref", "definitions", "anyOf", "enum", "const", "type",
    "properties", "required", "items", "title", "$schema",
};

static const char *const type_names[] = {
    "object", "array", "string", "number", "integer", "boolean", "null",
};

/* $ref chains deeper than this are taken for a cycle. */
#define MAX_DEPTH 64

typedef struct ctx {
    const jv *root;
    char path[1024];   /* where we are: the instance's, or the schema's */
    size_t path_len;
    char *msg;
    size_t msglen;
    int depth;
} ctx;

static int is_known(const char *key)
{
    for (size_t i = 0; i < sizeof known_keywords / sizeof *known_keywords; i++)
        if (strcmp(key, known_keywords[i]) == 0)
            return 1;
    return 0;
}

/* Appends "/seg" (escaped as JSON pointers want) to the path; returns the
 * previous length for path_pop. */
static size_t path_push(ctx *c, const char *seg)
{
    size_t old = c->path_len, n = old;
    const size_t cap = sizeof c->path - 4;
    if (n < cap)
        c->path[n++] = '/';
    for (const char *s = seg; *s && n < cap; s++) {
        if (*s == '~' || *s == '/') {
            c->path[n++] = '~';
            c->path[n++] = *s == '~' ? '0' : '1';
        } else {
            c->path[n++] = *s;
        }
    }
    c->path[n] = 0;
    c->path_len = n;
    return old;
}

static size_t path_push_index(ctx *c, size_t i)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", i);
    return path_push(c, buf);
}

static void path_pop(ctx *c, size_t old)
{
    c->path_len = old;
    c->path[old] = 0;
}

static int fail(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(ctx *c, const char *fmt, ...)
{
    if (!c->msglen)
        return -1;
    int k = snprintf(c->msg, c->msglen, "%s: ", c->path_len ? c->path : "(root)");
    if (k >= 0 && (size_t)k < c->msglen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->msg + k, c->msglen - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static const char *type_of(const jv *v)
{
    switch (v->type) {
    case J_NULL: return "null";
    case J_BOOL: return "boolean";
    case J_NUM: return "number";
    case J_STR: return "string";
    case J_ARR: return "array";
    case J_OBJ: return "object";
    }
    return "?";
}

/* The value a "#/a/b" pointer designates in the root document, or NULL. */
static const jv *resolve(const jv *root, const char *ref)
{
    if (ref[0] != '#')
        return NULL;
    const jv *v = root;
    const char *s = ref + 1;
    while (*s) {
        if (*s != '/' || !v)
            return NULL;
        s++;
        char seg[256];
        size_t n = 0;
        for (; *s && *s != '/'; s++) {
            char ch = *s;
            if (ch == '~') {
                if (s[1] != '0' && s[1] != '1')
                    return NULL;
                ch = s[1] == '0' ? '~' : '/';
                s++;
            }
            if (n + 1 >= sizeof seg)
                return NULL;
            seg[n++] = ch;
        }
        seg[n] = 0;
        if (v->type == J_OBJ) {
            v = j_get(v, seg);
        } else if (v->type == J_ARR) {
            char *end;
            unsigned long i = strtoul(seg, &end, 10);
            v = n && !*end ? j_at(v, i) : NULL;
        } else {
            return NULL;
        }
    }
    return v;
}

/* ---- The schema itself, checked whole ---- */

static int check_schema(ctx *c, const jv *s);

static int check_each_value(ctx *c, const jv *obj, const char *what)
{
    if (obj->type != J_OBJ)
        return fail(c, "\"%s\" must be an object", what);
    for (size_t i = 0; i < obj->n; i++) {
        size_t old = path_push(c, obj->keys[i]);
        int r = check_schema(c, obj->items[i]);
        path_pop(c, old);
        if (r)
            return r;
    }
    return 0;
}

static int check_type_name(ctx *c, const jv *t)
{
    if (t->type == J_STR)
        for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
            if (strcmp(t->str, type_names[i]) == 0)
                return 0;
    return fail(c, "unknown type %s%s%s", t->type == J_STR ? "\"" : "",
                t->type == J_STR ? t->str : type_of(t), t->type == J_STR ? "\"" : "");
}

static int check_schema(ctx *c, const jv *s)
{
    if (s->type == J_BOOL)
        return 0;
    if (s->type != J_OBJ)
        return fail(c, "a schema must be an object or a boolean, not a %s", type_of(s));
    for (size_t i = 0; i < s->n; i++) {
        const char *key = s->keys[i];
        const jv *v = s->items[i];
        if (!is_known(key))
            return fail(c, "unsupported schema keyword \"%s\"", key);
        size_t old = path_push(c, key);
        int r = 0;
        if (strcmp(key, "$ref") == 0) {
            if (v->type != J_STR || !resolve(c->root, v->str))
                r = fail(c, "$ref does not designate a value of this document");
        } else if (strcmp(key, "definitions") == 0 || strcmp(key, "properties") == 0) {
            r = check_each_value(c, v, key);
        } else if (strcmp(key, "anyOf") == 0) {
            if (v->type != J_ARR || v->n == 0)
                r = fail(c, "anyOf must be a non-empty array");
            for (size_t k = 0; !r && k < v->n; k++) {
                size_t o2 = path_push_index(c, k);
                r = check_schema(c, v->items[k]);
                path_pop(c, o2);
            }
        } else if (strcmp(key, "items") == 0) {
            if (v->type == J_ARR)
                r = fail(c, "unsupported: items as a list of schemas (tuple form)");
            else
                r = check_schema(c, v);
        } else if (strcmp(key, "enum") == 0) {
            if (v->type != J_ARR)
                r = fail(c, "enum must be an array");
        } else if (strcmp(key, "type") == 0) {
            if (v->type == J_ARR) {
                for (size_t k = 0; !r && k < v->n; k++)
                    r = check_type_name(c, v->items[k]);
            } else {
                r = check_type_name(c, v);
            }
        } else if (strcmp(key, "required") == 0) {
            if (v->type != J_ARR)
                r = fail(c, "required must be an array");
            for (size_t k = 0; !r && k < v->n; k++)
                if (v->items[k]->type != J_STR)
                    r = fail(c, "required must list strings");
        }
        path_pop(c, old);
        if (r)
            return r;
    }
    return 0;
}

/* ---- Instances ---- */

static int j_equal(const jv *a, const jv *b)
{
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case J_NULL: return 1;
    case J_BOOL: return !a->boolean == !b->boolean;
    case J_NUM: return a->is_int && b->is_int ? a->ival == b->ival : a->num == b->num;
    case J_STR: return a->str_len == b->str_len && memcmp(a->str, b->str, a->str_len) == 0;
    case J_ARR:
        if (a->n != b->n)
            return 0;
        for (size_t i = 0; i < a->n; i++)
            if (!j_equal(a->items[i], b->items[i]))
                return 0;
        return 1;
    case J_OBJ:
        if (a->n != b->n)
            return 0;
        for (size_t i = 0; i < a->n; i++) {
            const jv *o = j_get(b, a->keys[i]);
            if (!o || !j_equal(a->items[i], o))
                return 0;
        }
        return 1;
    }
    return 0;
}

static int has_type(const jv *v, const char *name)
{
    if (strcmp(name, "integer") == 0)
        return v->type == J_NUM && (v->is_int || (isfinite(v->num) && v->num == floor(v->num)));
    if (strcmp(name, "number") == 0)
        return v->type == J_NUM;
    return strcmp(name, type_of(v)) == 0;
}

/* A short rendering of a scalar for messages. */
static const char *show(const jv *v, char *buf, size_t size)
{
    if (v->type == J_STR)
        snprintf(buf, size, "\"%.60s\"%s", v->str, v->str_len > 60 ? "..." : "");
    else if (v->type == J_NUM)
        snprintf(buf, size, "%.60s", v->num_text ? v->num_text : "number");
    else if (v->type == J_BOOL)
        snprintf(buf, size, "%s", v->boolean ? "true" : "false");
    else
        snprintf(buf, size, "%s", type_of(v));
    return buf;
}

static int validate(ctx *c, const jv *s, const jv *v);

static int validate_any_of(ctx *c, const jv *branches, const jv *v)
{
    char *saved = c->msg;
    size_t saved_len = c->msglen;
    char why[1536];
    size_t used = 0;
    why[0] = 0;
    for (size_t k = 0; k < branches->n; k++) {
        char one[1024];
        c->msg = one;
        c->msglen = sizeof one;
        one[0] = 0;
        int r = validate(c, branches->items[k], v);
        c->msg = saved;
        c->msglen = saved_len;
        if (r == 0)
            return 0;
        if (used < sizeof why) {
            int n = snprintf(why + used, sizeof why - used, "%s[%zu] %s", k ? "; " : "", k, one);
            if (n > 0)
                used += (size_t)n;
        }
    }
    return fail(c, "matches no branch of anyOf: %s", why);
}

static int validate(ctx *c, const jv *s, const jv *v)
{
    char buf[96];
    if (s->type == J_BOOL)
        return s->boolean ? 0 : fail(c, "the schema false accepts nothing");
    const jv *ref = j_get(s, "$ref");
    if (ref) {
        const jv *target = resolve(c->root, ref->str);
        if (!target)
            return fail(c, "unresolved $ref \"%s\"", ref->str);
        if (++c->depth > MAX_DEPTH)
            return fail(c, "$ref chain deeper than %d (a cycle?)", MAX_DEPTH);
        int r = validate(c, target, v);
        c->depth--;
        return r;
    }
    for (size_t i = 0; i < s->n; i++) {
        const char *key = s->keys[i];
        const jv *kv = s->items[i];
        if (strcmp(key, "type") == 0) {
            int ok = 0;
            if (kv->type == J_ARR) {
                for (size_t k = 0; k < kv->n && !ok; k++)
                    ok = has_type(v, kv->items[k]->str);
                if (!ok)
                    return fail(c, "%s, not one of the types allowed", type_of(v));
            } else if (!has_type(v, kv->str)) {
                return fail(c, "%s where the schema wants %s", type_of(v), kv->str);
            }
        } else if (strcmp(key, "enum") == 0) {
            int ok = 0;
            for (size_t k = 0; k < kv->n && !ok; k++)
                ok = j_equal(v, kv->items[k]);
            if (!ok)
                return fail(c, "%s is not one of the %zu values of enum", show(v, buf, sizeof buf),
                            kv->n);
        } else if (strcmp(key, "const") == 0) {
            if (!j_equal(v, kv)) {
                char want[96];
                return fail(c, "%s where const wants %s", show(v, buf, sizeof buf),
                            show(kv, want, sizeof want));
            }
        } else if (strcmp(key, "properties") == 0) {
            if (v->type != J_OBJ)
                continue;
            for (size_t k = 0; k < kv->n; k++) {
                const jv *child = j_get(v, kv->keys[k]);
                if (!child)
                    continue;
                size_t old = path_push(c, kv->keys[k]);
                int r = validate(c, kv->items[k], child);
                path_pop(c, old);
                if (r)
                    return r;
            }
        } else if (strcmp(key, "required") == 0) {
            if (v->type != J_OBJ)
                continue;
            for (size_t k = 0; k < kv->n; k++)
                if (!j_get(v, kv->items[k]->str))
                    return fail(c, "missing required property \"%s\"", kv->items[k]->str);
        } else if (strcmp(key, "items") == 0) {
            if (v->type != J_ARR)
                continue;
            for (size_t k = 0; k < v->n; k++) {
                size_t old = path_push_index(c, k);
                int r = validate(c, kv, v->items[k]);
                path_pop(c, old);
                if (r)
                    return r;
            }
        } else if (strcmp(key, "anyOf") == 0) {
            if (validate_any_of(c, kv, v))
                return -1;
        } else if (!is_known(key)) {
            return fail(c, "unsupported schema keyword \"%s\"", key);
        }
        /* definitions, title and $schema say nothing about the instance. */
    }
    return 0;
}

int jschema_validate(const jv *schema, const jv *instance, char *msg, size_t msglen)
{
    ctx c;
    memset(&c, 0, sizeof c);
    c.root = schema;
    c.msg = msg;
    c.msglen = msglen;
    if (msglen)
        msg[0] = 0;
    if (!schema || !instance)
        return fail(&c, "no schema or no instance");
    if (check_schema(&c, schema)) {
        /* The location is the schema's: say so. */
        char inner[1024];
        snprintf(inner, sizeof inner, "%s", msg);
        snprintf(msg, msglen, "schema #%s", inner[0] == '(' ? inner + 6 : inner);
        return -1;
    }
    path_pop(&c, 0);
    return validate(&c, schema, instance);
}

int jschema_validate_text(const char *schema_json, size_t schema_len, const char *json,
                          size_t len, char *msg, size_t msglen)
{
    char err[256];
    jv *schema = j_parse(schema_json, schema_len, err, sizeof err);
    if (!schema) {
        snprintf(msg, msglen, "the schema does not parse: %s", err);
        return -1;
    }
    jv *v = j_parse(json, len, err, sizeof err);
    int r;
    if (!v) {
        snprintf(msg, msglen, "the document does not parse: %s", err);
        r = -1;
    } else {
        r = jschema_validate(schema, v, msg, msglen);
    }
    j_free(v);
    j_free(schema);
    return r;
}
