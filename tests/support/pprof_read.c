#include "pprof_read.h"
#include "test_util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "folded_text.h"
#include "base/pbwire.h"

#define GROW(arr, n)                                                       \
    do {                                                                   \
        void *g_ = realloc((arr), ((n) + 1) * sizeof *(arr));              \
        if (!g_)                                                           \
            abort();                                                       \
        (arr) = g_;                                                        \
        memset(&(arr)[(n)], 0, sizeof *(arr));                             \
    } while (0)

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Repeated varints, packed (a LEN field) or one by one. */
static int varints(pb_reader *r, const pb_field *f, uint64_t **out, size_t *n)
{
    if (f->wiretype == PB_VARINT) {
        GROW(*out, *n);
        (*out)[(*n)++] = f->value;
        return 0;
    }
    pb_reader sub;
    pb_reader_sub(r, f, &sub);
    uint64_t v;
    int got;
    while ((got = pb_packed_varint(&sub, &v)) > 0) {
        GROW(*out, *n);
        (*out)[(*n)++] = v;
    }
    return got;
}


static int read_message(pb_reader *r, pp_profile *p, char *err, size_t errlen)
{
    pb_field f;
    int got;
    while ((got = pb_next(r, &f)) > 0) {
        pb_reader sub;
        pb_field g;
        if (f.wiretype == PB_LEN)
            pb_reader_sub(r, &f, &sub);
        switch (f.number) {
        case 1:
        case 11: {
            int64_t vt[2] = {0, 0};
            while ((got = pb_next(&sub, &g)) > 0)
                if (g.number == 1 || g.number == 2)
                    vt[g.number - 1] = (int64_t)g.value;
            if (got < 0)
                return fail(err, errlen, "bad ValueType");
            if (f.number == 11) {
                p->period_type[0] = vt[0];
                p->period_type[1] = vt[1];
            } else {
                GROW(p->sample_type, p->n_sample_type);
                p->sample_type[p->n_sample_type][0] = vt[0];
                p->sample_type[p->n_sample_type++][1] = vt[1];
            }
            break;
        }
        case 2: {
            GROW(p->sample, p->n_sample);
            pp_sample *s = &p->sample[p->n_sample++];
            while ((got = pb_next(&sub, &g)) > 0) {
                if (g.number == 1 && varints(&sub, &g, &s->loc, &s->n_loc) < 0)
                    return fail(err, errlen, "bad location_id");
                if (g.number == 2 &&
                    varints(&sub, &g, (uint64_t **)&s->value, &s->n_value) < 0)
                    return fail(err, errlen, "bad value");
                if (g.number == 3) {
                    pb_reader lr;
                    pb_field h;
                    pb_reader_sub(&sub, &g, &lr);
                    GROW(s->label, s->n_label);
                    pp_label *l = &s->label[s->n_label++];
                    while ((got = pb_next(&lr, &h)) > 0) {
                        if (h.number == 1)
                            l->key = (int64_t)h.value;
                        if (h.number == 2)
                            l->str = (int64_t)h.value;
                        if (h.number == 3)
                            l->num = (int64_t)h.value;
                    }
                    if (got < 0)
                        return fail(err, errlen, "bad Label");
                }
            }
            if (got < 0)
                return fail(err, errlen, "bad Sample");
            break;
        }
        case 3: {
            GROW(p->mapping, p->n_mapping);
            pp_mapping *m = &p->mapping[p->n_mapping++];
            while ((got = pb_next(&sub, &g)) > 0) {
                if (g.number == 1)
                    m->id = g.value;
                if (g.number == 5)
                    m->filename = (int64_t)g.value;
                if (g.number == 6)
                    m->build_id = (int64_t)g.value;
            }
            if (got < 0)
                return fail(err, errlen, "bad Mapping");
            break;
        }
        case 4: {
            GROW(p->location, p->n_location);
            pp_location *l = &p->location[p->n_location++];
            while ((got = pb_next(&sub, &g)) > 0) {
                if (g.number == 1)
                    l->id = g.value;
                if (g.number == 2)
                    l->mapping = g.value;
                if (g.number == 3)
                    l->address = g.value;
                if (g.number == 4) {
                    pb_reader lr;
                    pb_field h;
                    pb_reader_sub(&sub, &g, &lr);
                    while ((got = pb_next(&lr, &h)) > 0)
                        if (h.number == 1) {
                            GROW(l->func, l->n_func);
                            l->func[l->n_func++] = h.value;
                        }
                    if (got < 0)
                        return fail(err, errlen, "bad Line");
                }
            }
            if (got < 0)
                return fail(err, errlen, "bad Location");
            break;
        }
        case 5: {
            GROW(p->function, p->n_function);
            pp_function *fn = &p->function[p->n_function++];
            while ((got = pb_next(&sub, &g)) > 0) {
                if (g.number == 1)
                    fn->id = g.value;
                if (g.number == 2)
                    fn->name = (int64_t)g.value;
                if (g.number == 3)
                    fn->system_name = (int64_t)g.value;
                if (g.number == 4)
                    fn->filename = (int64_t)g.value;
            }
            if (got < 0)
                return fail(err, errlen, "bad Function");
            break;
        }
        case 6:
            GROW(p->str, p->n_str);
            p->str[p->n_str] = malloc(f.len + 1);
            memcpy(p->str[p->n_str], f.data, f.len);
            p->str[p->n_str++][f.len] = 0;
            break;
        case 9: p->time_nanos = (int64_t)f.value; break;
        case 10: p->duration_nanos = (int64_t)f.value; break;
        case 12: p->period = (int64_t)f.value; break;
        case 13: {
            uint64_t *c = (uint64_t *)p->comment;
            if (varints(r, &f, &c, &p->n_comment) < 0)
                return fail(err, errlen, "bad comment");
            p->comment = (int64_t *)c;
            break;
        }
        case 14: p->default_sample_type = (int64_t)f.value; break;
        }
    }
    if (got < 0)
        return fail(err, errlen, "wire error: %s", pb_strerror(r->err));
    return 0;
}

static int str_ok(const pp_profile *p, int64_t i)
{
    return i >= 0 && (size_t)i < p->n_str;
}

/* pprof's CheckValid, and string indexes in range. */
static int check(const pp_profile *p, char *err, size_t errlen)
{
    if (p->n_str == 0 || p->str[0][0])
        return fail(err, errlen, "string_table[0] is not \"\"");
    for (size_t i = 0; i < p->n_sample_type; i++)
        if (!str_ok(p, p->sample_type[i][0]) || !str_ok(p, p->sample_type[i][1]))
            return fail(err, errlen, "sample type %zu names a string out of range", i);
    for (size_t i = 0; i < p->n_mapping; i++) {
        if (!p->mapping[i].id || !str_ok(p, p->mapping[i].filename) ||
            !str_ok(p, p->mapping[i].build_id))
            return fail(err, errlen, "mapping %zu: zero id or bad string", i);
        for (size_t j = 0; j < i; j++)
            if (p->mapping[j].id == p->mapping[i].id)
                return fail(err, errlen, "duplicate mapping id %" PRIu64, p->mapping[i].id);
    }
    for (size_t i = 0; i < p->n_function; i++) {
        const pp_function *f = &p->function[i];
        if (!f->id || !str_ok(p, f->name) || !str_ok(p, f->system_name) ||
            !str_ok(p, f->filename))
            return fail(err, errlen, "function %zu: zero id or bad string", i);
        for (size_t j = 0; j < i; j++)
            if (p->function[j].id == f->id)
                return fail(err, errlen, "duplicate function id %" PRIu64, f->id);
    }
    for (size_t i = 0; i < p->n_location; i++) {
        const pp_location *l = &p->location[i];
        if (!l->id)
            return fail(err, errlen, "location %zu has id 0", i);
        for (size_t j = 0; j < i; j++)
            if (p->location[j].id == l->id)
                return fail(err, errlen, "duplicate location id %" PRIu64, l->id);
        int found = l->mapping == 0;
        for (size_t j = 0; j < p->n_mapping && !found; j++)
            found = p->mapping[j].id == l->mapping;
        if (!found)
            return fail(err, errlen, "location %" PRIu64 ": no mapping %" PRIu64, l->id,
                        l->mapping);
        for (size_t k = 0; k < l->n_func; k++) {
            found = 0;
            for (size_t j = 0; j < p->n_function && !found; j++)
                found = p->function[j].id == l->func[k];
            if (!found)
                return fail(err, errlen, "location %" PRIu64 ": no function %" PRIu64, l->id,
                            l->func[k]);
        }
    }
    for (size_t i = 0; i < p->n_sample; i++) {
        const pp_sample *s = &p->sample[i];
        if (s->n_value != p->n_sample_type)
            return fail(err, errlen, "sample %zu has %zu values for %zu types", i, s->n_value,
                        p->n_sample_type);
        for (size_t k = 0; k < s->n_loc; k++) {
            int found = 0;
            for (size_t j = 0; j < p->n_location && !found; j++)
                found = p->location[j].id == s->loc[k];
            if (!found)
                return fail(err, errlen, "sample %zu: no location %" PRIu64, i, s->loc[k]);
        }
        for (size_t k = 0; k < s->n_label; k++)
            if (!str_ok(p, s->label[k].key) || !str_ok(p, s->label[k].str))
                return fail(err, errlen, "sample %zu: label string out of range", i);
    }
    if (!str_ok(p, p->default_sample_type) || !str_ok(p, p->period_type[0]) ||
        !str_ok(p, p->period_type[1]))
        return fail(err, errlen, "profile names a string out of range");
    return 0;
}

int pp_read(const unsigned char *data, size_t len, pp_profile *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    unsigned char *plain = NULL;
    if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        if (!(plain = gunzip_bytes(data, len, &len)))
            return fail(err, errlen, "bad gzip");
        data = plain;
    }
    pb_reader r;
    pb_reader_init(&r, data, len, 0);
    int rc = read_message(&r, p, err, errlen);
    free(plain);
    return rc < 0 ? -1 : check(p, err, errlen);
}

void pp_free(pp_profile *p)
{
    for (size_t i = 0; i < p->n_sample; i++) {
        free(p->sample[i].loc);
        free(p->sample[i].value);
        free(p->sample[i].label);
    }
    for (size_t i = 0; i < p->n_location; i++)
        free(p->location[i].func);
    for (size_t i = 0; i < p->n_str; i++)
        free(p->str[i]);
    free(p->sample_type);
    free(p->sample);
    free(p->location);
    free(p->function);
    free(p->mapping);
    free(p->str);
    free(p->comment);
    memset(p, 0, sizeof *p);
}

const char *pp_str(const pp_profile *p, int64_t i)
{
    return str_ok(p, i) ? p->str[i] : "(bad)";
}

int pp_type_index(const pp_profile *p, const char *type)
{
    for (size_t i = 0; i < p->n_sample_type; i++)
        if (strcmp(pp_str(p, p->sample_type[i][0]), type) == 0)
            return (int)i;
    return -1;
}

char *pp_folded(const pp_profile *p, int k)
{
    size_t cap = 1024, len = 0;
    char *out = malloc(cap);
    out[0] = 0;
    for (size_t i = 0; i < p->n_sample; i++) {
        const pp_sample *s = &p->sample[i];
        if (k < 0 || (size_t)k >= s->n_value || s->value[k] == 0)
            continue;
        /* Root first: locations in reverse, each location's lines from
         * the caller (last) to the callee (first). */
        for (size_t a = s->n_loc; a-- > 0;) {
            const pp_location *l = NULL;
            for (size_t j = 0; j < p->n_location && !l; j++)
                if (p->location[j].id == s->loc[a])
                    l = &p->location[j];
            for (size_t b = l ? l->n_func : 0; b-- > 0;) {
                const char *name = "(none)";
                for (size_t j = 0; j < p->n_function; j++)
                    if (p->function[j].id == l->func[b])
                        name = pp_str(p, p->function[j].name);
                size_t n = strlen(name) + 2;
                while (len + n + 32 > cap)
                    out = realloc(out, cap *= 2);
                len += (size_t)snprintf(out + len, cap - len, "%s%s",
                                        len && out[len - 1] != '\n' ? ";" : "", name);
            }
        }
        while (len + 32 > cap)
            out = realloc(out, cap *= 2);
        len += (size_t)snprintf(out + len, cap - len, " %" PRId64 "\n", s->value[k]);
    }
    char *merged = sum_folded(out);
    free(out);
    return merged;
}
