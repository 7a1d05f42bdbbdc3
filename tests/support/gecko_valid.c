#include "gecko_valid.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ctx {
    int problems;
    char *msg;
    size_t msglen, used;
    const jv *categories;
    const jv *marker_schema;
} ctx;

static void problem(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void problem(ctx *c, const char *fmt, ...)
{
    if (c->problems++ < 4 && c->used + 2 < c->msglen) {
        va_list ap;
        if (c->used)
            c->msg[c->used++] = ';', c->msg[c->used++] = ' ';
        va_start(ap, fmt);
        int n = vsnprintf(c->msg + c->used, c->msglen - c->used, fmt, ap);
        va_end(ap);
        if (n > 0)
            c->used += (size_t)n < c->msglen - c->used ? (size_t)n : c->msglen - c->used - 1;
    }
}

static int is_type(const jv *v, j_type t)
{
    return v && v->type == t;
}

/* An index into a table of n rows. */
static int index_ok(const jv *v, size_t n)
{
    return j_is_int(v) && j_int(v) >= 0 && (size_t)j_int(v) < n;
}

static int category_ok(const ctx *c, const jv *v)
{
    return index_ok(v, j_len(c->categories));
}

static int subcategory_ok(const ctx *c, const jv *cat, const jv *sub)
{
    if (is_type(sub, J_NULL))
        return 1;
    if (is_type(cat, J_NULL))
        return j_is_int(sub) && j_int(sub) == 0;
    const jv *subs = j_get(j_at(c->categories, (size_t)j_int(cat)), "subcategories");
    return index_ok(sub, j_len(subs));
}

static void check_meta(ctx *c, const jv *meta)
{
    static const char *const colors[] = {
        "transparent", "purple", "green", "orange", "yellow", "lightblue", "blue",
        "brown", "magenta", "red", "lightred", "darkgrey", "grey"};
    if (!is_type(meta, J_OBJ)) {
        problem(c, "meta: missing");
        return;
    }
    const jv *v = j_get(meta, "version");
    if (!j_is_int(v) || j_int(v) < 1 || j_int(v) > 36)
        problem(c, "meta.version: not an integer in 1..36");
    v = j_get(meta, "interval");
    if (!is_type(v, J_NUM) || j_num(v) <= 0)
        problem(c, "meta.interval: not a positive number");
    if (!is_type(j_get(meta, "startTime"), J_NUM))
        problem(c, "meta.startTime: not a number");
    v = j_get(meta, "presymbolicated");
    if (v && !is_type(v, J_BOOL))
        problem(c, "meta.presymbolicated: not a boolean");

    c->marker_schema = j_get(meta, "markerSchema");
    if (!is_type(c->marker_schema, J_ARR))
        problem(c, "meta.markerSchema: missing or not an array");
    for (size_t i = 0; i < j_len(c->marker_schema); i++) {
        const jv *s = j_at(c->marker_schema, i), *data = j_get(s, "data");
        if (!j_str(j_get(s, "name")))
            problem(c, "meta.markerSchema[%zu]: no name", i);
        if (!is_type(j_get(s, "display"), J_ARR))
            problem(c, "meta.markerSchema[%zu]: no display array", i);
        /* Processing walks data for every schema. */
        if (!is_type(data, J_ARR))
            problem(c, "meta.markerSchema[%zu]: no data array", i);
        for (size_t k = 0; k < j_len(data); k++) {
            const jv *f = j_at(data, k);
            int dynamic = j_str(j_get(f, "key")) && j_str(j_get(f, "format"));
            int fixed = j_str(j_get(f, "label")) && j_get(f, "value");
            if (!dynamic && !fixed)
                problem(c, "meta.markerSchema[%zu].data[%zu]: neither key+format "
                           "nor label+value", i, k);
        }
    }

    c->categories = j_get(meta, "categories");
    if (!is_type(c->categories, J_ARR) || j_len(c->categories) == 0) {
        problem(c, "meta.categories: missing or empty");
        return;
    }
    int grey = 0;
    for (size_t i = 0; i < j_len(c->categories); i++) {
        const jv *cat = j_at(c->categories, i);
        const char *color = j_str(j_get(cat, "color"));
        const jv *subs = j_get(cat, "subcategories");
        int known = 0;
        for (size_t k = 0; color && k < sizeof colors / sizeof *colors; k++)
            known |= strcmp(color, colors[k]) == 0;
        if (!j_str(j_get(cat, "name")))
            problem(c, "meta.categories[%zu]: no name", i);
        if (!known)
            problem(c, "meta.categories[%zu]: unknown color", i);
        grey |= color && strcmp(color, "grey") == 0;
        if (!is_type(subs, J_ARR) || j_len(subs) == 0)
            problem(c, "meta.categories[%zu]: no subcategories", i);
        for (size_t k = 0; k < j_len(subs); k++)
            if (!j_str(j_at(subs, k)))
                problem(c, "meta.categories[%zu].subcategories[%zu]: not a string", i, k);
    }
    if (!grey)
        problem(c, "meta.categories: no grey category (the profiler's default)");
}

static void check_libs(ctx *c, const jv *libs)
{
    static const char *const strings[] = {"name", "path", "debugName", "debugPath",
                                          "breakpadId", "arch"};
    if (!is_type(libs, J_ARR)) {
        problem(c, "libs: missing or not an array");
        return;
    }
    for (size_t i = 0; i < j_len(libs); i++) {
        const jv *lib = j_at(libs, i);
        static const char *const addrs[] = {"start", "end", "offset"};
        for (size_t k = 0; k < 3; k++) {
            const jv *a = j_get(lib, addrs[k]);
            const char *s = j_str(a);
            if (!j_is_int(a) && !(s && strncmp(s, "0x", 2) == 0))
                problem(c, "libs[%zu].%s: not an integer or \"0x...\"", i, addrs[k]);
        }
        for (size_t k = 0; k < sizeof strings / sizeof *strings; k++) {
            const jv *s = j_get(lib, strings[k]);
            if (s && !j_str(s))
                problem(c, "libs[%zu].%s: not a string", i, strings[k]);
        }
    }
}

/* Column index of name in a {schema, data} table, or -1 (a problem). */
static int column(ctx *c, const jv *table, const char *where, const char *name,
                  int required)
{
    const jv *v = j_get(j_get(table, "schema"), name);
    if (j_is_int(v) && j_int(v) >= 0)
        return (int)j_int(v);
    if (required)
        problem(c, "%s.schema: no '%s' column", where, name);
    return -1;
}

static const jv *table(ctx *c, const jv *thread, size_t t, const char *name)
{
    const jv *tb = j_get(thread, name);
    if (!is_type(j_get(tb, "schema"), J_OBJ) || !is_type(j_get(tb, "data"), J_ARR)) {
        problem(c, "threads[%zu].%s: not a {schema, data} table", t, name);
        return NULL;
    }
    return tb;
}

static void check_samples(ctx *c, const jv *tb, size_t t, size_t n_stacks)
{
    char where[64];
    snprintf(where, sizeof where, "threads[%zu].samples", t);
    int stack = column(c, tb, where, "stack", 1), time = column(c, tb, where, "time", 1);
    if (column(c, tb, where, "eventDelay", 0) < 0 &&
        column(c, tb, where, "responsiveness", 0) < 0)
        problem(c, "%s.schema: neither 'eventDelay' nor 'responsiveness'", where);
    if (stack < 0 || time < 0)
        return;
    const jv *data = j_get(tb, "data");
    double last = -1e300;
    for (size_t i = 0; i < j_len(data); i++) {
        const jv *row = j_at(data, i), *s = j_at(row, (size_t)stack);
        const jv *tv = j_at(row, (size_t)time);
        if (!is_type(s, J_NULL) && !index_ok(s, n_stacks))
            problem(c, "%s.data[%zu]: stack out of range", where, i);
        if (!is_type(tv, J_NUM)) {
            problem(c, "%s.data[%zu]: time is not a number", where, i);
        } else {
            if (j_num(tv) < last)
                problem(c, "%s.data[%zu]: time goes backwards", where, i);
            last = j_num(tv);
        }
    }
}

static void check_stacks(ctx *c, const jv *tb, size_t t, size_t n_frames)
{
    char where[64];
    snprintf(where, sizeof where, "threads[%zu].stackTable", t);
    int prefix = column(c, tb, where, "prefix", 1), frame = column(c, tb, where, "frame", 1);
    int cat = column(c, tb, where, "category", 0);
    if (prefix < 0 || frame < 0)
        return;
    const jv *data = j_get(tb, "data");
    for (size_t i = 0; i < j_len(data); i++) {
        const jv *row = j_at(data, i), *p = j_at(row, (size_t)prefix);
        if (!is_type(p, J_NULL) && !index_ok(p, i))
            problem(c, "%s.data[%zu]: prefix is not an earlier row", where, i);
        if (!index_ok(j_at(row, (size_t)frame), n_frames))
            problem(c, "%s.data[%zu]: frame out of range", where, i);
        if (cat >= 0 && !category_ok(c, j_at(row, (size_t)cat)))
            problem(c, "%s.data[%zu]: category out of range", where, i);
    }
}

static void check_frames(ctx *c, const jv *tb, size_t t, size_t n_strings)
{
    char where[64];
    snprintf(where, sizeof where, "threads[%zu].frameTable", t);
    int loc = column(c, tb, where, "location", 1);
    int js = column(c, tb, where, "relevantForJS", 0);
    int impl = column(c, tb, where, "implementation", 0);
    int line = column(c, tb, where, "line", 0), col = column(c, tb, where, "column", 0);
    int cat = column(c, tb, where, "category", 0), sub = column(c, tb, where, "subcategory", 0);
    if (loc < 0)
        return;
    const jv *data = j_get(tb, "data");
    for (size_t i = 0; i < j_len(data); i++) {
        const jv *row = j_at(data, i);
        if (!index_ok(j_at(row, (size_t)loc), n_strings))
            problem(c, "%s.data[%zu]: location is not a string index", where, i);
        if (js >= 0 && !is_type(j_at(row, (size_t)js), J_BOOL))
            problem(c, "%s.data[%zu]: relevantForJS is not a boolean", where, i);
        if (impl >= 0 && !is_type(j_at(row, (size_t)impl), J_NULL) &&
            !index_ok(j_at(row, (size_t)impl), n_strings))
            problem(c, "%s.data[%zu]: implementation is not a string index", where, i);
        for (int k = 0; k < 2; k++) {
            int ci = k ? col : line;
            const jv *v = ci >= 0 ? j_at(row, (size_t)ci) : NULL;
            if (v && !is_type(v, J_NULL) && !(j_is_int(v) && j_int(v) >= 0))
                problem(c, "%s.data[%zu]: %s is not a line number", where, i,
                        k ? "column" : "line");
        }
        const jv *cv = cat >= 0 ? j_at(row, (size_t)cat) : NULL;
        if (cv && !is_type(cv, J_NULL) && !category_ok(c, cv)) {
            problem(c, "%s.data[%zu]: category out of range", where, i);
            continue;
        }
        const jv *sv = sub >= 0 ? j_at(row, (size_t)sub) : NULL;
        if (sv && !subcategory_ok(c, cv ? cv : sv, sv))
            problem(c, "%s.data[%zu]: subcategory out of range", where, i);
    }
}

static int schema_has(const ctx *c, const char *type)
{
    for (size_t i = 0; i < j_len(c->marker_schema); i++) {
        const char *name = j_str(j_get(j_at(c->marker_schema, i), "name"));
        if (name && strcmp(name, type) == 0)
            return 1;
    }
    return 0;
}

static void check_markers(ctx *c, const jv *tb, size_t t, size_t n_strings)
{
    static const char *const cols[] = {"name", "startTime", "endTime", "phase",
                                       "category", "data"};
    char where[64];
    int ix[6];
    snprintf(where, sizeof where, "threads[%zu].markers", t);
    for (int k = 0; k < 6; k++)
        if ((ix[k] = column(c, tb, where, cols[k], 1)) < 0)
            return;
    const jv *data = j_get(tb, "data");
    for (size_t i = 0; i < j_len(data); i++) {
        const jv *row = j_at(data, i);
        const jv *start = j_at(row, (size_t)ix[1]), *end = j_at(row, (size_t)ix[2]);
        const jv *phase = j_at(row, (size_t)ix[3]), *payload = j_at(row, (size_t)ix[5]);
        if (!index_ok(j_at(row, (size_t)ix[0]), n_strings))
            problem(c, "%s.data[%zu]: name is not a string index", where, i);
        if (!category_ok(c, j_at(row, (size_t)ix[4])))
            problem(c, "%s.data[%zu]: category out of range", where, i);
        long long ph = j_is_int(phase) ? j_int(phase) : -1;
        int s = is_type(start, J_NUM), e = is_type(end, J_NUM);
        if (ph < 0 || ph > 3)
            problem(c, "%s.data[%zu]: phase is not 0..3", where, i);
        else if ((ph == 0 && !s) || (ph == 1 && !(s && e)) || (ph == 2 && !s) ||
                 (ph == 3 && !e))
            problem(c, "%s.data[%zu]: times do not fit phase %lld", where, i, ph);
        else if (ph == 1 && j_num(end) < j_num(start))
            problem(c, "%s.data[%zu]: interval ends before it starts", where, i);
        if (payload && !is_type(payload, J_NULL)) {
            const jv *type = j_get(payload, "type");
            if (!is_type(payload, J_OBJ) || (type && !j_str(type)))
                problem(c, "%s.data[%zu]: payload is not an object with a string type", where, i);
            else if (type && j_len(c->marker_schema) && !schema_has(c, j_str(type)))
                problem(c, "%s.data[%zu]: payload type '%s' has no marker schema",
                        where, i, j_str(type));
        }
    }
}

static void check_thread(ctx *c, const jv *th, size_t t)
{
    const jv *strings = j_get(th, "stringTable");
    if (!j_str(j_get(th, "name")))
        problem(c, "threads[%zu].name: not a string", t);
    if (!j_str(j_get(th, "processType")))
        problem(c, "threads[%zu].processType: not a string", t);
    const jv *pid = j_get(th, "pid");
    if (!is_type(pid, J_NUM) && !j_str(pid))
        problem(c, "threads[%zu].pid: not a number or string", t);
    if (!is_type(j_get(th, "registerTime"), J_NUM))
        problem(c, "threads[%zu].registerTime: not a number", t);
    const jv *unreg = j_get(th, "unregisterTime");
    if (!is_type(unreg, J_NUM) && !is_type(unreg, J_NULL))
        problem(c, "threads[%zu].unregisterTime: not a number or null", t);
    if (!is_type(strings, J_ARR))
        problem(c, "threads[%zu].stringTable: not an array", t);
    for (size_t i = 0; i < j_len(strings); i++)
        if (!j_str(j_at(strings, i)))
            problem(c, "threads[%zu].stringTable[%zu]: not a string", t, i);

    const jv *samples = table(c, th, t, "samples"), *stacks = table(c, th, t, "stackTable");
    const jv *frames = table(c, th, t, "frameTable"), *markers = table(c, th, t, "markers");
    size_t n_strings = j_len(strings);
    if (samples && stacks)
        check_samples(c, samples, t, j_len(j_get(stacks, "data")));
    if (stacks && frames)
        check_stacks(c, stacks, t, j_len(j_get(frames, "data")));
    if (frames)
        check_frames(c, frames, t, n_strings);
    if (markers)
        check_markers(c, markers, t, n_strings);
}

int gecko_check(const jv *prof, char *msg, size_t msglen)
{
    ctx c = {0, msg, msglen, 0, NULL, NULL};
    msg[0] = 0;
    if (!is_type(prof, J_OBJ)) {
        problem(&c, "the profile is not an object");
        return c.problems;
    }
    check_meta(&c, j_get(prof, "meta"));
    check_libs(&c, j_get(prof, "libs"));
    if (!is_type(j_get(prof, "processes"), J_ARR))
        problem(&c, "processes: missing or not an array");
    const jv *threads = j_get(prof, "threads");
    if (!is_type(threads, J_ARR)) {
        problem(&c, "threads: missing or not an array");
        return c.problems;
    }
    for (size_t t = 0; t < j_len(threads); t++) {
        const jv *th = j_at(threads, t), *tid = j_get(th, "tid");
        if (!j_is_int(tid) && !j_str(tid))
            problem(&c, "threads[%zu].tid: not an integer or string", t);
        /* A thread is its (pid, tid): the kernel hands a tid out again
         * once its thread is gone, so over a long trace two processes can
         * each have had a thread with the same tid. */
        const jv *pid = j_get(th, "pid");
        for (size_t u = 0; u < t && j_is_int(tid); u++) {
            const jv *other = j_get(j_at(threads, u), "tid");
            const jv *opid = j_get(j_at(threads, u), "pid");
            int same_pid = j_is_int(pid) && j_is_int(opid) ? j_int(pid) == j_int(opid)
                           : j_str(pid) && j_str(opid) ? strcmp(j_str(pid), j_str(opid)) == 0
                                                       : 1;
            if (j_is_int(other) && j_int(other) == j_int(tid) && same_pid)
                problem(&c, "threads[%zu].tid: %lld already used by threads[%zu] of the same "
                        "process", t, j_int(tid), u);
        }
        check_thread(&c, th, t);
    }
    return c.problems;
}

int gecko_check_text(const char *json, size_t len, char *msg, size_t msglen)
{
    jv *root = j_parse(json, len, msg, msglen);
    if (!root)
        return 1;
    int n = gecko_check(root, msg, msglen);
    j_free(root);
    return n;
}
