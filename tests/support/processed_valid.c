#include "processed_valid.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct ctx {
    int problems;
    char *msg;
    size_t msglen, used;
    const jv *categories, *marker_schema;
    size_t n_strings, n_libs;
} ctx;

static void problem(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void problem(ctx *c, const char *fmt, ...)
{
    if (c->problems++ < 4 && c->used + 2 < c->msglen) {
        va_list ap;
        if (c->used) {
            c->msg[c->used++] = ';';
            c->msg[c->used++] = ' ';
        }
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

static int index_ok(const jv *v, size_t n)
{
    return j_is_int(v) && j_int(v) >= 0 && (size_t)j_int(v) < n;
}

static int null_or_index(const jv *v, size_t n)
{
    return is_type(v, J_NULL) || index_ok(v, n);
}

/* The column name of a columnar table: an array of the table's length. */
static const jv *column(ctx *c, const jv *table, const char *where,
                        const char *name, size_t n)
{
    const jv *col = j_get(table, name);
    if (!is_type(col, J_ARR)) {
        problem(c, "%s.%s: missing or not an array", where, name);
        return NULL;
    }
    if (j_len(col) != n) {
        problem(c, "%s.%s: %zu entries for length %zu", where, name, j_len(col), n);
        return NULL;
    }
    return col;
}

static size_t table_length(ctx *c, const jv *table, const char *where)
{
    const jv *len = j_get(table, "length");
    if (!is_type(table, J_OBJ) || !j_is_int(len) || j_int(len) < 0) {
        problem(c, "%s: not a table with a length", where);
        return 0;
    }
    return (size_t)j_int(len);
}

static void check_meta(ctx *c, const jv *meta, size_t n_threads)
{
    static const char *const colors[] = {
        "transparent", "purple", "green", "orange", "yellow", "lightblue", "blue",
        "brown", "magenta", "red", "lightred", "darkgrey", "grey"};
    if (!is_type(meta, J_OBJ)) {
        problem(c, "meta: missing");
        return;
    }
    const jv *v = j_get(meta, "preprocessedProfileVersion");
    if (!j_is_int(v) || j_int(v) != 70)
        problem(c, "meta.preprocessedProfileVersion: not 70");
    if (!j_is_int(j_get(meta, "version")))
        problem(c, "meta.version: not an integer");
    if (!is_type(j_get(meta, "interval"), J_NUM) || j_num(j_get(meta, "interval")) <= 0)
        problem(c, "meta.interval: not a positive number");
    if (!is_type(j_get(meta, "startTime"), J_NUM))
        problem(c, "meta.startTime: not a number");
    if (!is_type(j_get(meta, "processType"), J_NUM))
        problem(c, "meta.processType: not a number");
    if (!j_str(j_get(meta, "product")))
        problem(c, "meta.product: not a string");
    v = j_get(meta, "stackwalk");
    if (!j_is_int(v) || j_int(v) < 0 || j_int(v) > 1)
        problem(c, "meta.stackwalk: not 0 or 1");
    static const char *const bools[] = {"debug", "symbolicated", "keepProfileThreadOrder"};
    for (size_t i = 0; i < 3; i++)
        if ((v = j_get(meta, bools[i])) && !is_type(v, J_BOOL))
            problem(c, "meta.%s: not a boolean", bools[i]);
    static const char *const sel[] = {"initialVisibleThreads", "initialSelectedThreads"};
    for (size_t i = 0; i < 2; i++) {
        if (!(v = j_get(meta, sel[i])))
            continue;
        for (size_t k = 0; k < j_len(v); k++)
            if (!index_ok(j_at(v, k), n_threads))
                problem(c, "meta.%s[%zu]: not a thread index", sel[i], k);
    }

    c->marker_schema = j_get(meta, "markerSchema");
    if (!is_type(c->marker_schema, J_ARR))
        problem(c, "meta.markerSchema: missing or not an array");
    for (size_t i = 0; i < j_len(c->marker_schema); i++) {
        const jv *s = j_at(c->marker_schema, i), *fields = j_get(s, "fields");
        if (!j_str(j_get(s, "name")) || !is_type(j_get(s, "display"), J_ARR))
            problem(c, "meta.markerSchema[%zu]: no name or display", i);
        if (!is_type(fields, J_ARR))
            problem(c, "meta.markerSchema[%zu]: no fields array (data was renamed in v55)", i);
        for (size_t k = 0; k < j_len(fields); k++)
            if (!j_str(j_get(j_at(fields, k), "key")) || !j_str(j_get(j_at(fields, k), "format")))
                problem(c, "meta.markerSchema[%zu].fields[%zu]: no key or format", i, k);
    }
    const jv *extra = j_get(meta, "extra");
    for (size_t i = 0; i < j_len(extra); i++) {
        const jv *entries = j_get(j_at(extra, i), "entries");
        if (!j_str(j_get(j_at(extra, i), "label")) || !is_type(entries, J_ARR))
            problem(c, "meta.extra[%zu]: no label or entries", i);
        for (size_t k = 0; k < j_len(entries); k++) {
            const jv *e = j_at(entries, k);
            if (!j_str(j_get(e, "label")) || !j_str(j_get(e, "format")) || !j_get(e, "value"))
                problem(c, "meta.extra[%zu].entries[%zu]: no label, format or value", i, k);
        }
    }

    c->categories = j_get(meta, "categories");
    int grey = 0;
    for (size_t i = 0; i < j_len(c->categories); i++) {
        const jv *cat = j_at(c->categories, i);
        const char *color = j_str(j_get(cat, "color"));
        int known = 0;
        for (size_t k = 0; color && k < sizeof colors / sizeof *colors; k++)
            known |= strcmp(color, colors[k]) == 0;
        if (!j_str(j_get(cat, "name")) || !known || !j_len(j_get(cat, "subcategories")))
            problem(c, "meta.categories[%zu]: needs a name, a known color and subcategories", i);
        grey |= color && strcmp(color, "grey") == 0;
    }
    if (!grey)
        problem(c, "meta.categories: no grey category");
}

static int category_ok(const ctx *c, const jv *cat, const jv *sub)
{
    if (is_type(cat, J_NULL))
        return is_type(sub, J_NULL) || (j_is_int(sub) && j_int(sub) == 0);
    if (!index_ok(cat, j_len(c->categories)))
        return 0;
    const jv *subs = j_get(j_at(c->categories, (size_t)j_int(cat)), "subcategories");
    return is_type(sub, J_NULL) || index_ok(sub, j_len(subs));
}

/* Checks shared; returns the stack count through *n_stacks. */
static void check_shared(ctx *c, const jv *shared, size_t *n_stacks)
{
    const jv *strings = j_get(shared, "stringArray");
    *n_stacks = 0;
    if (!is_type(strings, J_ARR)) {
        problem(c, "shared.stringArray: missing");
        return;
    }
    c->n_strings = j_len(strings);
    for (size_t i = 0; i < c->n_strings; i++)
        if (!j_str(j_at(strings, i)))
            problem(c, "shared.stringArray[%zu]: not a string", i);

    const jv *stacks = j_get(shared, "stackTable"), *frames = j_get(shared, "frameTable");
    const jv *funcs = j_get(shared, "funcTable"), *res = j_get(shared, "resourceTable");
    const jv *syms = j_get(shared, "nativeSymbols"), *src = j_get(shared, "sources");
    const jv *loc = j_get(shared, "sourceLocationTable");
    size_t ns = table_length(c, stacks, "shared.stackTable");
    size_t nf = table_length(c, frames, "shared.frameTable");
    size_t nfn = table_length(c, funcs, "shared.funcTable");
    size_t nr = table_length(c, res, "shared.resourceTable");
    size_t nsym = table_length(c, syms, "shared.nativeSymbols");
    size_t nsrc = table_length(c, src, "shared.sources");
    size_t nloc = table_length(c, loc, "shared.sourceLocationTable");
    *n_stacks = ns;

    const jv *frame = column(c, stacks, "shared.stackTable", "frame", ns);
    const jv *offset = column(c, stacks, "shared.stackTable", "prefixOffset", ns);
    for (size_t i = 0; frame && offset && i < ns; i++) {
        const jv *o = j_at(offset, i);
        if (!index_ok(j_at(frame, i), nf))
            problem(c, "shared.stackTable.frame[%zu]: out of range", i);
        if (!j_is_int(o) || j_int(o) < 0 || (size_t)j_int(o) > i)
            problem(c, "shared.stackTable.prefixOffset[%zu]: not a backward offset", i);
    }

    static const char *const fcols[] = {"address", "lib", "inlineDepth", "category",
                                        "subcategory", "func", "nativeSymbol",
                                        "innerWindowID", "line", "column", "originalLocation"};
    const jv *fc[11];
    int all = 1;
    for (size_t k = 0; k < 11; k++)
        all &= (fc[k] = column(c, frames, "shared.frameTable", fcols[k], nf)) != NULL;
    for (size_t i = 0; all && i < nf; i++) {
        const jv *addr = j_at(fc[0], i), *lib = j_at(fc[1], i);
        if (!j_is_int(addr) || j_int(addr) < -1)
            problem(c, "shared.frameTable.address[%zu]: not an address or -1", i);
        if (!(j_is_int(lib) && j_int(lib) == -1) && !index_ok(lib, c->n_libs))
            problem(c, "shared.frameTable.lib[%zu]: not a lib index or -1", i);
        if (!j_is_int(j_at(fc[2], i)) || j_int(j_at(fc[2], i)) < 0)
            problem(c, "shared.frameTable.inlineDepth[%zu]: not a depth", i);
        if (!category_ok(c, j_at(fc[3], i), j_at(fc[4], i)))
            problem(c, "shared.frameTable.category[%zu]: bad category or subcategory", i);
        if (!index_ok(j_at(fc[5], i), nfn))
            problem(c, "shared.frameTable.func[%zu]: out of range", i);
        if (!null_or_index(j_at(fc[6], i), nsym))
            problem(c, "shared.frameTable.nativeSymbol[%zu]: out of range", i);
        if (!null_or_index(j_at(fc[10], i), nloc))
            problem(c, "shared.frameTable.originalLocation[%zu]: out of range", i);
    }

    static const char *const fncols[] = {"name", "isJS", "relevantForJS", "resource", "source",
                                         "lineNumber", "columnNumber", "originalLocation"};
    const jv *fn[8];
    all = 1;
    for (size_t k = 0; k < 8; k++)
        all &= (fn[k] = column(c, funcs, "shared.funcTable", fncols[k], nfn)) != NULL;
    for (size_t i = 0; all && i < nfn; i++) {
        const jv *r = j_at(fn[3], i);
        if (!index_ok(j_at(fn[0], i), c->n_strings))
            problem(c, "shared.funcTable.name[%zu]: not a string index", i);
        if (!is_type(j_at(fn[1], i), J_BOOL) || !is_type(j_at(fn[2], i), J_BOOL))
            problem(c, "shared.funcTable.isJS[%zu]: not a boolean", i);
        if (!(j_is_int(r) && j_int(r) == -1) && !index_ok(r, nr))
            problem(c, "shared.funcTable.resource[%zu]: not a resource or -1", i);
        if (!null_or_index(j_at(fn[4], i), nsrc))
            problem(c, "shared.funcTable.source[%zu]: out of range", i);
    }

    const jv *rn = column(c, res, "shared.resourceTable", "name", nr);
    const jv *rh = column(c, res, "shared.resourceTable", "host", nr);
    const jv *rt = column(c, res, "shared.resourceTable", "type", nr);
    for (size_t i = 0; rn && rh && rt && i < nr; i++) {
        if (!index_ok(j_at(rn, i), c->n_strings) || !null_or_index(j_at(rh, i), c->n_strings))
            problem(c, "shared.resourceTable[%zu]: bad name or host", i);
        if (!index_ok(j_at(rt, i), 6))
            problem(c, "shared.resourceTable.type[%zu]: not a resource type", i);
    }
    static const char *const symcols[] = {"libIndex", "address", "name", "functionSize"};
    for (size_t k = 0; k < 4; k++)
        column(c, syms, "shared.nativeSymbols", symcols[k], nsym);
    static const char *const srccols[] = {"id", "filename", "startLine", "startColumn",
                                          "sourceMapURL", "content"};
    for (size_t k = 0; k < 6; k++)
        column(c, src, "shared.sources", srccols[k], nsrc);
    static const char *const loccols[] = {"source", "line", "column"};
    for (size_t k = 0; k < 3; k++)
        column(c, loc, "shared.sourceLocationTable", loccols[k], nloc);
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

static void check_samples(ctx *c, const jv *s, const char *where, size_t n_stacks)
{
    size_t n = table_length(c, s, where);
    const jv *stack = column(c, s, where, "stack", n);
    const jv *time = j_get(s, "time") ? column(c, s, where, "time", n) : NULL;
    const jv *deltas = j_get(s, "timeDeltas") ? column(c, s, where, "timeDeltas", n) : NULL;
    const char *type = j_str(j_get(s, "weightType"));
    const jv *weight = j_get(s, "weight");
    if (!time && !deltas)
        problem(c, "%s: neither time nor timeDeltas", where);
    if (!type || (strcmp(type, "samples") && strcmp(type, "tracing-ms") && strcmp(type, "bytes")))
        problem(c, "%s.weightType: not samples, tracing-ms or bytes", where);
    else if (strcmp(type, "samples") != 0 && !is_type(weight, J_ARR))
        problem(c, "%s.weight: %s samples need weights", where, type);
    if (!is_type(weight, J_NULL) && column(c, s, where, "weight", n))
        for (size_t i = 0; i < n; i++)
            if (!is_type(j_at(weight, i), J_NUM))
                problem(c, "%s.weight[%zu]: not a number", where, i);
    double last = -1e300;
    for (size_t i = 0; stack && i < n; i++) {
        if (!null_or_index(j_at(stack, i), n_stacks))
            problem(c, "%s.stack[%zu]: out of range", where, i);
        double t = time ? j_num(j_at(time, i)) : 0;
        if (deltas) {
            t = (i ? last : 0) + j_num(j_at(deltas, i));
            if (j_num(j_at(deltas, i)) < 0)
                problem(c, "%s.timeDeltas[%zu]: negative", where, i);
        } else if (t < last) {
            problem(c, "%s.time[%zu]: goes backwards", where, i);
        }
        last = t;
    }
}

static void check_markers(ctx *c, const jv *m, const char *where)
{
    size_t n = table_length(c, m, where);
    const jv *data = column(c, m, where, "data", n), *name = column(c, m, where, "name", n);
    const jv *start = column(c, m, where, "startTime", n), *end = column(c, m, where, "endTime", n);
    const jv *phase = column(c, m, where, "phase", n), *cat = column(c, m, where, "category", n);
    for (size_t i = 0; data && name && start && end && phase && cat && i < n; i++) {
        long long ph = j_is_int(j_at(phase, i)) ? j_int(j_at(phase, i)) : -1;
        int s = is_type(j_at(start, i), J_NUM), e = is_type(j_at(end, i), J_NUM);
        const jv *d = j_at(data, i);
        if (!index_ok(j_at(name, i), c->n_strings))
            problem(c, "%s.name[%zu]: not a string index", where, i);
        if (!index_ok(j_at(cat, i), j_len(c->categories)))
            problem(c, "%s.category[%zu]: out of range", where, i);
        if (ph < 0 || ph > 3 || (ph == 0 && !s) || (ph == 1 && !(s && e)) ||
            (ph == 2 && !s) || (ph == 3 && !e))
            problem(c, "%s[%zu]: times do not fit phase %lld", where, i, ph);
        else if (ph == 1 && j_num(j_at(end, i)) < j_num(j_at(start, i)))
            problem(c, "%s[%zu]: interval ends before it starts", where, i);
        if (!is_type(d, J_NULL) && (!is_type(d, J_OBJ) || !j_str(j_get(d, "type")) ||
                                    !schema_has(c, j_str(j_get(d, "type")))))
            problem(c, "%s.data[%zu]: payload without a known schema type", where, i);
    }
}

static void check_thread(ctx *c, const jv *th, size_t t, size_t n_stacks)
{
    char where[64];
    if (!j_str(j_get(th, "name")) || !j_str(j_get(th, "processType")))
        problem(c, "threads[%zu]: name and processType must be strings", t);
    if (!is_type(j_get(th, "isMainThread"), J_BOOL))
        problem(c, "threads[%zu].isMainThread: not a boolean", t);
    if (!j_str(j_get(th, "pid")))
        problem(c, "threads[%zu].pid: not a string (v47)", t);
    if (!is_type(j_get(th, "tid"), J_NUM) && !j_str(j_get(th, "tid")))
        problem(c, "threads[%zu].tid: not a number", t);
    static const char *const times[] = {"processStartupTime", "registerTime"};
    for (size_t k = 0; k < 2; k++)
        if (!is_type(j_get(th, times[k]), J_NUM))
            problem(c, "threads[%zu].%s: not a number", t, times[k]);
    static const char *const maybe[] = {"processShutdownTime", "unregisterTime"};
    for (size_t k = 0; k < 2; k++) {
        const jv *v = j_get(th, maybe[k]);
        if (!is_type(v, J_NUM) && !is_type(v, J_NULL))
            problem(c, "threads[%zu].%s: not a number or null", t, maybe[k]);
    }
    if (!is_type(j_get(th, "pausedRanges"), J_ARR))
        problem(c, "threads[%zu].pausedRanges: not an array", t);
    snprintf(where, sizeof where, "threads[%zu].samples", t);
    check_samples(c, j_get(th, "samples"), where, n_stacks);
    snprintf(where, sizeof where, "threads[%zu].markers", t);
    check_markers(c, j_get(th, "markers"), where);
}

int processed_check(const jv *prof, char *msg, size_t msglen)
{
    ctx c = {0, msg, msglen, 0, NULL, NULL, 0, 0};
    size_t n_stacks;
    msg[0] = 0;
    const jv *threads = j_get(prof, "threads"), *libs = j_get(prof, "libs");
    if (!is_type(prof, J_OBJ) || !is_type(threads, J_ARR) || !is_type(libs, J_ARR)) {
        problem(&c, "the profile needs meta, libs, shared and threads");
        return c.problems;
    }
    c.n_libs = j_len(libs);
    check_meta(&c, j_get(prof, "meta"), j_len(threads));
    check_shared(&c, j_get(prof, "shared"), &n_stacks);
    for (size_t t = 0; t < j_len(threads); t++)
        check_thread(&c, j_at(threads, t), t, n_stacks);
    return c.problems;
}

int processed_check_text(const char *json, size_t len, char *msg, size_t msglen)
{
    jv *root = j_parse(json, len, msg, msglen);
    if (!root)
        return 1;
    int n = processed_check(root, msg, msglen);
    j_free(root);
    return n;
}
