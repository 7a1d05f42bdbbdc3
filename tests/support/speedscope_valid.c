/* Checks of speedscope documents (speedscope_valid.h). */
#include "speedscope_valid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded_text.h"
#include "jschema.h"
#include "t.h"

jv *speedscope_schema_or_skip(void)
{
    size_t n;
    char err[256];
    char *text = (char *)t_read_file(SPEEDSCOPE_SCHEMA_PATH, &n);
    if (!text) {
        t_skip("%s is absent: run tests/tools/get-speedscope-schema.sh (needs npm) to "
               "fetch speedscope's schema", SPEEDSCOPE_SCHEMA_PATH);
        return NULL;
    }
    jv *s = j_parse(text, n, err, sizeof err);
    if (!s)
        t_fail(__FILE__, __LINE__, "%s does not parse: %s", SPEEDSCOPE_SCHEMA_PATH, err);
    free(text);
    return s;
}

static char *write_fmt(const pc_profile *p, int format, int prefix, size_t *n)
{
    pc_write_options w;
    pc_write_options_init(&w);
    w.format = format;
    w.gzip = 0;
    w.folded_prefix = prefix;
    unsigned char *out = NULL;
    pc_error err;
    if (pc_write_memory(p, &w, &out, n, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "writing failed: %s", err.message);
        return NULL;
    }
    char *s = realloc(out, *n + 1);
    s[*n] = 0;
    return s;
}

char *speedscope_of(const pc_profile *p, size_t *n)
{
    return write_fmt(p, PC_FORMAT_SPEEDSCOPE, 0, n);
}

char *folded_written(const pc_profile *p, int prefix, size_t *n)
{
    return write_fmt(p, PC_FORMAT_FOLDED, prefix, n);
}

/* A growable string. */
typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->s = realloc(t->s, t->cap);
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = 0;
}

/* A name as the folded writer writes it. */
static void put_name(text *t, const char *s)
{
    size_t start = t->len;
    put(t, s, strlen(s));
    for (size_t i = start; i < t->len; i++)
        if (t->s[i] == ';')
            t->s[i] = ':';
        else if (t->s[i] == '\n' || t->s[i] == '\r')
            t->s[i] = ' ';
}

const jv *speedscope_profiles(const jv *doc)
{
    return j_get(doc, "profiles");
}

static const char *frame_name(const jv *doc, const jv *index)
{
    const jv *f = j_at(j_get(j_get(doc, "shared"), "frames"), (size_t)j_int(index));
    return f ? j_str(j_get(f, "name")) : "(bad index)";
}

char *speedscope_stack_names(const jv *doc, const jv *stack)
{
    text t = {0};
    put(&t, "", 0);
    for (size_t k = 0; k < j_len(stack); k++) {
        if (k)
            put(&t, ";", 1);
        put(&t, frame_name(doc, j_at(stack, k)), strlen(frame_name(doc, j_at(stack, k))));
    }
    return t.s;
}

char *speedscope_folded(const jv *doc, char *const *prefix)
{
    text t = {0};
    put(&t, "", 0);
    const jv *profs = speedscope_profiles(doc);
    for (size_t k = 0; k < j_len(profs); k++) {
        const jv *pr = j_at(profs, k), *samples = j_get(pr, "samples"),
                 *weights = j_get(pr, "weights");
        for (size_t i = 0; i < j_len(samples); i++) {
            const jv *st = j_at(samples, i);
            if (j_int(j_at(weights, i)) == 0)
                continue;
            size_t start = t.len;
            if (prefix)
                put_name(&t, prefix[k]);
            for (size_t d = 0; d < j_len(st); d++) {
                if (t.len > start)
                    put(&t, ";", 1);
                put_name(&t, frame_name(doc, j_at(st, d)));
            }
            if (t.len == start)
                continue;
            char num[32];
            snprintf(num, sizeof num, " %lld\n", j_int(j_at(weights, i)));
            put(&t, num, strlen(num));
        }
    }
    char *out = sum_folded(t.s);
    free(t.s);
    return out;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

jv *speedscope_check_doc(const jv *schema, const char *json, size_t n)
{
    char err[256], msg[4096];
    jv *doc = j_parse(json, n, err, sizeof err);
    if (!doc) {
        t_fail(__FILE__, __LINE__, "speedscope output does not parse: %s", err);
        return NULL;
    }
    if (jschema_validate(schema, doc, msg, sizeof msg) != 0)
        t_fail(__FILE__, __LINE__, "not valid against speedscope's schema: %s", msg);
    const char *exporter = j_str(j_get(doc, "exporter"));
    T_CHECK(exporter && strncmp(exporter, "profconv ", 9) == 0);
    const jv *frames = j_get(j_get(doc, "shared"), "frames");
    size_t nf = j_len(frames);
    /* Distinct (name, file) pairs. */
    char **keys = malloc((nf + 1) * sizeof *keys);
    for (size_t f = 0; f < nf; f++) {
        const char *name = j_str(j_get(j_at(frames, f), "name"));
        const char *file = j_str(j_get(j_at(frames, f), "file"));
        size_t len = strlen(name ? name : "") + strlen(file ? file : "") + 3;
        keys[f] = malloc(len);
        snprintf(keys[f], len, "%s\x01%s", name ? name : "", file ? file : "");
    }
    qsort(keys, nf, sizeof *keys, cmp_str);
    for (size_t f = 0; f + 1 < nf; f++)
        if (strcmp(keys[f], keys[f + 1]) == 0) {
            t_fail(__FILE__, __LINE__, "frame listed twice: %s", keys[f]);
            break;
        }
    for (size_t f = 0; f < nf; f++)
        free(keys[f]);
    free(keys);
    const jv *profs = speedscope_profiles(doc);
    T_CHECK(j_len(profs) > 0);
    const jv *active = j_get(doc, "activeProfileIndex");
    T_CHECK(j_is_int(active) && j_int(active) >= 0 && (size_t)j_int(active) < j_len(profs));
    for (size_t k = 0; k < j_len(profs); k++) {
        const jv *pr = j_at(profs, k), *samples = j_get(pr, "samples"),
                 *weights = j_get(pr, "weights");
        T_EQ_INT(j_len(samples), j_len(weights));
        T_CHECK(j_len(samples) > 0);
        int bad = 0;
        for (size_t i = 0; i < j_len(samples) && !bad; i++) {
            const jv *st = j_at(samples, i);
            for (size_t d = 0; d < j_len(st) && !bad; d++) {
                const jv *x = j_at(st, d);
                if (!j_is_int(x) || j_int(x) < 0 || (size_t)j_int(x) >= nf) {
                    t_fail(__FILE__, __LINE__, "profile %zu sample %zu: frame %s out of range",
                           k, i, j_num_text(x));
                    bad = 1;
                }
            }
            const jv *w = j_at(weights, i);
            if (!j_is_int(w) || j_int(w) < 0) {
                t_fail(__FILE__, __LINE__, "profile %zu weight %zu: %s", k, i, j_num_text(w));
                bad = 1;
            }
        }
        T_CHECK(j_int(j_get(pr, "startValue")) <= j_int(j_get(pr, "endValue")));
    }
    return doc;
}

long long speedscope_total(const jv *pr)
{
    long long sum = 0;
    const jv *w = j_get(pr, "weights");
    for (size_t i = 0; i < j_len(w); i++)
        sum += j_int(j_at(w, i));
    return sum;
}

jv *speedscope_check_profile(const jv *schema, const pc_profile *p)
{
    size_t n, m;
    char *json = speedscope_of(p, &n);
    if (!json)
        return NULL;
    jv *doc = speedscope_check_doc(schema, json, n);
    char *folded = folded_written(p, 0, &m);
    if (doc && folded) {
        char *want = sum_folded(folded), *got = speedscope_folded(doc, NULL);
        if (strcmp(want, got) != 0)
            t_fail(__FILE__, __LINE__, "stacks and weights differ from the folded writer's "
                   "(%zu against %zu bytes of folded text)", strlen(got), strlen(want));
        free(want);
        free(got);
    }
    /* Whatever the unit, the most weighty profile is the active one. */
    if (doc) {
        const jv *profs = speedscope_profiles(doc);
        size_t best = 0;
        for (size_t k = 1; k < j_len(profs); k++)
            if (speedscope_total(j_at(profs, k)) > speedscope_total(j_at(profs, best)))
                best = k;
        T_EQ_INT(j_int(j_get(doc, "activeProfileIndex")), best);
    }
    free(folded);
    free(json);
    return doc;
}
