/* End to end against simpleperf's own converter: every Gecko profile that
 * gecko_profile_generator.py made from the shared corpus is compared with
 * ours for the same input and options, thread by thread (tid, pid, name),
 * sample by sample (time, root-first frame strings, frame categories).
 *
 * Where we differ on purpose, the difference is listed below with its
 * reason, and the comparison checks that it is exactly that difference. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "gecko_valid.h"
#include "jsonmini.h"
#include "model/model.h"
#include "t.h"
#include "test_util.h"

/* Reference outputs made with options profconv does not offer. */
static const struct {
    const char *suffix;
    const char *reason;
} not_compared[] = {
    {".percpu.gecko.json", "--percpu-samples: report-sample files carry no cpu numbers, "
                           "so the reference puts every sample on \"Cpu 0\""},
};

/* Samples one side keeps and the other does not, per reference file. */
static const struct {
    const char *reference;
    size_t only_ours, only_reference;
    const char *reason;
} sample_differences[] = {
    {"perf_with_trace_offcpu_v2.proto.mixed-on-off-cpu.gecko.json", 5, 0,
     "off-CPU samples still pending at the end of the file are kept; the "
     "reference drops them (96 sched_switch samples, 5 pending)"},
    {"perf_with_trace_offcpu_v2.proto.default.gecko.json", 5, 0,
     "as above, with report-sample's own gap removal applied first"},
    {"perf_with_trace_offcpu_v2.proto.off-cpu.gecko.json", 5, 0,
     "as above, off-CPU samples only: 96 instead of 91"},
    {"perf_with_trace_offcpu_v2.proto.on-off-cpu.gecko.json", 5, 0,
     "as above: 304 instead of 299"},
    {"perf_with_two_event_types.proto.gecko.json", 0, 2,
     "one event type at a time: we keep the first, cpu-cycles (8 samples); "
     "the reference mixes in the 2 cpu-clock samples"},
    {"perf_with_tracepoint_event.proto.gaps0.gecko.json", 0, 14,
     "one event type at a time: we keep the first, sched:sched_switch (31 "
     "samples); the reference mixes in the 14 cpu-cycles samples"},
};

/* Frame categories we assign differently, by the frame's file, and off-CPU
 * time: the reference calls every __schedule frame off-CPU by its name;
 * here the sample's event says it (off-CPU samples end in a copy of their
 * leaf in that category, see same_stack()), and __schedule is kernel code. */
static int category_fix(const char *path, const char *name, int name_len, int ref_cat)
{
    size_t n = strlen(path);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (ref_cat == PC_CAT_OFFCPU && name_len == 10 && strncmp(name, "__schedule", 10) == 0)
        return PC_CAT_KERNEL;
    if (ref_cat != PC_CAT_USER)
        return ref_cat;
    /* Versioned shared objects are native code: libc.so.6, libglib-2.0.so.0.4002.0. */
    const char *so = strstr(base, ".so.");
    if (so) {
        const char *p = so + 3;
        while (*p == '.' && isdigit((unsigned char)p[1])) {
            p++;
            while (isdigit((unsigned char)*p))
                p++;
        }
        if (!*p)
            return PC_CAT_NATIVE;
    }
    /* Dex files inside APKs are Java bytecode, like .vdex/.apk/.jar. */
    if (n > 4 && strcmp(path + n - 4, ".dex") == 0)
        return PC_CAT_DEX;
    /* The zygote's JIT cache and old-style JIT symbol files are JIT code. */
    if (strcmp(path, "[JIT zygote cache]") == 0 || strncmp(base, "TemporaryFile-", 14) == 0)
        return PC_CAT_JIT;
    return ref_cat;
}

typedef struct sample {
    long long time_ns;
    char *stack;  /* frames root first: "name (in path)#category\n"... */
} sample;

typedef struct thread {
    long long tid, pid;
    const char *name;
    sample *s;
    size_t n;
} thread;

static int col(const jv *table, const char *name)
{
    const jv *c = j_get(j_get(table, "schema"), name);
    return c && j_is_int(c) ? (int)j_int(c) : -1;
}

/* Exact nanoseconds from a decimal millisecond text ("12.345678"). */
static long long ms_text_ns(const char *text)
{
    long long ns = 0;
    int frac = -1;
    for (const char *p = text; *p; p++) {
        if (*p == '.') {
            frac = 0;
            continue;
        }
        if (!isdigit((unsigned char)*p) || frac == 6)
            break;
        ns = ns * 10 + (*p - '0');
        if (frac >= 0)
            frac++;
    }
    for (int k = frac < 0 ? 0 : frac; k < 6; k++)
        ns *= 10;
    return ns;
}

/* Listed differences in frames: categories (category_fix) and, for
 * samples whose unwinding failed, our root frame naming the error. */

/* A frame as compared: unknown names are compared by file only, since the
 * reference writes "unknown" and we write "libfoo.so+0x1a2b". */
static void frame_key(char *out, size_t size, const char *location, int cat,
                      int is_reference, size_t *fixed)
{
    const char *in = strstr(location, " (in ");
    char path[512] = "";
    if (in)
        snprintf(path, sizeof path, "%.*s", (int)(strlen(in + 5) - 1), in + 5);
    int name_len = in ? (int)(in - location) : (int)strlen(location);
    int unknown = 0;
    if (is_reference) {
        unknown = name_len == 7 && strncmp(location, "unknown", 7) == 0;
        int fixed_cat = category_fix(path, location, name_len, cat);
        *fixed += fixed_cat != cat;
        cat = fixed_cat;
    } else {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        size_t bl = strlen(base);
        unknown = (size_t)name_len > bl + 3 && strncmp(location, base, bl) == 0 &&
                  strncmp(location + bl, "+0x", 3) == 0;
    }
    if (unknown)
        snprintf(out, size, "?(in %s)#%d\n", path, cat);
    else
        snprintf(out, size, "%.*s(in %s)#%d\n", name_len, location, path, cat);
}

/* Reads every thread of a Gecko profile into comparable samples. */
/* Our times count from the recording's first event, origin_ns on its
 * clock (the date, startTime, is 0: the clock is the time since boot); the
 * reference's count from boot. */
static thread *read_threads(const jv *prof, size_t *n_threads, int is_reference,
                            size_t *fixed, long long origin_ns)
{
    const jv *threads = j_get(prof, "threads");
    const jv *start = j_get(j_get(prof, "meta"), "startTime");
    long long start_ns = (start ? ms_text_ns(j_num_text(start)) : 0) + origin_ns;
    size_t nt = j_len(threads);
    thread *out = calloc(nt + 1, sizeof *out);
    for (size_t t = 0; t < nt; t++) {
        const jv *th = j_at(threads, t);
        const jv *samples = j_get(th, "samples"), *stacks = j_get(th, "stackTable");
        const jv *frames = j_get(th, "frameTable"), *strings = j_get(th, "stringTable");
        int s_stack = col(samples, "stack"), s_time = col(samples, "time");
        int k_prefix = col(stacks, "prefix"), k_frame = col(stacks, "frame");
        int f_loc = col(frames, "location"), f_cat = col(frames, "category");
        const jv *rows = j_get(samples, "data");
        thread *o = &out[t];
        o->tid = j_int(j_get(th, "tid"));
        o->pid = j_int(j_get(th, "pid"));
        o->name = j_str(j_get(th, "name"));
        o->n = j_len(rows);
        o->s = calloc(o->n + 1, sizeof *o->s);
        for (size_t i = 0; i < o->n; i++) {
            const jv *row = j_at(rows, i);
            const jv *tv = j_at(row, (size_t)s_time);
            o->s[i].time_ns = is_reference ? llround(j_num(tv) * 1e6)
                                           : start_ns + ms_text_ns(j_num_text(tv));
            /* Walk to the root, then write root first. */
            long long chain[1024];
            size_t depth = 0;
            const jv *sv = j_at(row, (size_t)s_stack);
            for (long long s = j_is_int(sv) ? j_int(sv) : -1; s >= 0 && depth < 1024;) {
                const jv *srow = j_at(j_get(stacks, "data"), (size_t)s);
                chain[depth++] = j_int(j_at(srow, (size_t)k_frame));
                const jv *pv = j_at(srow, (size_t)k_prefix);
                s = j_is_int(pv) ? j_int(pv) : -1;
            }
            size_t cap = 256 + depth * 300, used = 0;
            char *text = malloc(cap);
            text[0] = 0;
            while (depth-- > 0) {
                const jv *frow = j_at(j_get(frames, "data"), (size_t)chain[depth]);
                const char *loc = j_str(j_at(strings, (size_t)j_int(j_at(frow, (size_t)f_loc))));
                /* Our root frame naming an unwinding error: not in the
                 * reference, which shows the truncated stack alone. */
                if (!is_reference && !used && loc && strncmp(loc, "[unwind error: ", 15) == 0) {
                    (*fixed)++;
                    continue;
                }
                frame_key(text + used, cap - used, loc ? loc : "",
                          (int)j_int(j_at(frow, (size_t)f_cat)), is_reference, fixed);
                used += strlen(text + used);
            }
            o->s[i].stack = text;
        }
    }
    *n_threads = nt;
    return out;
}

static void free_threads(thread *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < t[i].n; k++)
            free(t[i].s[k].stack);
        free(t[i].s);
    }
    free(t);
}

#define TIME_TOLERANCE_NS 1000  /* the reference's times are doubles */

/* Matches two time-sorted sample lists; samples at the same time (within
 * the tolerance) are paired by equal stacks.  Counts what stays alone. */
/* Equal stacks, except that our off-CPU samples end in their leaf frame
 * in the off-CPU category, where the reference keeps the file's. */
static int same_stack(const char *ours, const char *ref)
{
    size_t a = strlen(ours), b = strlen(ref);
    static const char off[] = "#5\n";
    if (a == b && strcmp(ours, ref) == 0)
        return 1;
    if (a < 3 || strcmp(ours + a - 3, off) != 0)
        return 0;
    /* Both end in "#<category>\n": compare up to the last '#'. */
    const char *ha = strrchr(ours, '#'), *hb = strrchr(ref, '#');
    return hb && ha - ours == hb - ref && strncmp(ours, ref, (size_t)(ha - ours)) == 0;
}

static void match(const thread *ours, const thread *ref, size_t *only_ours,
                  size_t *only_ref, size_t *matched)
{
    size_t i = 0, j = 0;
    while (i < ours->n || j < ref->n) {
        if (j == ref->n || (i < ours->n &&
                            ours->s[i].time_ns < ref->s[j].time_ns - TIME_TOLERANCE_NS)) {
            (*only_ours)++;
            i++;
            continue;
        }
        if (i == ours->n || ref->s[j].time_ns < ours->s[i].time_ns - TIME_TOLERANCE_NS) {
            (*only_ref)++;
            j++;
            continue;
        }
        size_t i2 = i, j2 = j;
        long long t = ours->s[i].time_ns;
        while (i2 < ours->n && llabs(ours->s[i2].time_ns - t) <= TIME_TOLERANCE_NS)
            i2++;
        while (j2 < ref->n && llabs(ref->s[j2].time_ns - t) <= TIME_TOLERANCE_NS)
            j2++;
        char used[64] = {0};
        size_t pairs = 0;
        for (size_t a = i; a < i2; a++)
            for (size_t b = j; b < j2 && b - j < 64; b++)
                if (!used[b - j] && same_stack(ours->s[a].stack, ref->s[b].stack)) {
                    used[b - j] = 1;
                    pairs++;
                    break;
                }
        *matched += pairs;
        *only_ours += (i2 - i) - pairs;
        *only_ref += (j2 - j) - pairs;
        i = i2;
        j = j2;
    }
}

static const thread *by_tid(const thread *t, size_t n, long long tid)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].tid == tid)
            return &t[i];
    return NULL;
}

/* Options of a reference row, as pc_options. */
static void options_of(const char *text, pc_options *o)
{
    static const struct {
        const char *name;
        int mode;
    } modes[] = {{"on-cpu", PC_OFFCPU_ON}, {"off-cpu", PC_OFFCPU_OFF},
                 {"on-off-cpu", PC_OFFCPU_ON_OFF}, {"mixed-on-off-cpu", PC_OFFCPU_MIXED}};
    pc_options_init(o);
    const char *g = strstr(text, "--remove-gaps ");
    if (g)
        o->remove_gaps = atoi(g + 14);
    const char *m = strstr(text, "--trace-offcpu ");
    for (size_t k = 0; m && k < sizeof modes / sizeof *modes; k++)
        if (strcmp(m + 15, modes[k].name) == 0)
            o->offcpu = modes[k].mode;
}

static void compare_one(const corpus_row *row)
{
    const char *ref_file = corpus_base(row);
    size_t ref_len, in_len;
    char msg[2048];

    for (size_t k = 0; k < sizeof not_compared / sizeof *not_compared; k++) {
        size_t a = strlen(ref_file), b = strlen(not_compared[k].suffix);
        if (a > b && strcmp(ref_file + a - b, not_compared[k].suffix) == 0) {
            t_skip("listed difference: %s", not_compared[k].reason);
            return;
        }
    }
    char *ref_text = (char *)corpus_read(row->col[M_FILE], &ref_len);
    unsigned char *input = corpus_read(row->col[M_INPUT], &in_len);
    if (!ref_text || !input) {
        t_fail(__FILE__, __LINE__, "cannot read %s or %s", row->col[M_FILE], row->col[M_INPUT]);
        free(ref_text);
        free(input);
        return;
    }
    pc_options o;
    pc_profile *p;
    pc_error err;
    unsigned char *ours_text = NULL;
    size_t ours_len = 0;
    pc_write_options w;
    options_of(row->col[M_OPTIONS], &o);
    pc_write_options_init(&w);
    w.format = PC_FORMAT_GECKO;
    if (convert_bytes(input, in_len, &o, &p, &err) != PC_OK ||
        pc_write_memory(p, &w, &ours_text, &ours_len, &err) != PC_OK) {
        t_fail(__FILE__, __LINE__, "conversion failed: %s", err.message);
        pc_profile_free(p);
        free(ref_text);
        free(input);
        return;
    }
    long long origin = (long long)p->meta.first_time;
    pc_profile_free(p);

    jv *ref = j_parse(ref_text, ref_len, msg, sizeof msg);
    jv *ours = j_parse((char *)ours_text, ours_len, msg, sizeof msg);
    T_CHECK(ref && ours);
    if (ours) {
        int problems = gecko_check(ours, msg, sizeof msg);
        if (problems)
            t_fail(__FILE__, __LINE__, "our output is not a valid Gecko profile: %s", msg);
    }
    if (ref && ours) {
        size_t n_ref, n_ours, fixed = 0, unwind_roots = 0;
        thread *rt = read_threads(ref, &n_ref, 1, &fixed, 0);
        thread *ot = read_threads(ours, &n_ours, 0, &unwind_roots, origin);
        size_t only_ours = 0, only_ref = 0, matched = 0;
        for (size_t i = 0; i < n_ref; i++) {
            const thread *mine = by_tid(ot, n_ours, rt[i].tid);
            if (!mine) {
                t_fail(__FILE__, __LINE__, "thread %lld is missing", rt[i].tid);
                continue;
            }
            T_EQ_INT(mine->pid, rt[i].pid);
            T_EQ_STR(mine->name, rt[i].name);
            match(mine, &rt[i], &only_ours, &only_ref, &matched);
        }
        /* Threads only we write must be empty (Thread records whose
         * samples report-sample dropped; the reference omits them). */
        for (size_t i = 0; i < n_ours; i++)
            if (!by_tid(rt, n_ref, ot[i].tid)) {
                T_EQ_INT(ot[i].n, 0);
            }
        size_t want_ours = 0, want_ref = 0;
        for (size_t k = 0; k < sizeof sample_differences / sizeof *sample_differences; k++)
            if (strcmp(sample_differences[k].reference, ref_file) == 0) {
                want_ours = sample_differences[k].only_ours;
                want_ref = sample_differences[k].only_reference;
            }
        T_EQ_INT(only_ours, want_ours);
        T_EQ_INT(only_ref, want_ref);
        T_EQ_INT(matched + only_ref, atoll(row->col[M_SAMPLES]));
        if (fixed)
            printf("  note %s: %zu frame categories differ as listed "
                   "(versioned .so, .dex, JIT caches)\n", ref_file, fixed);
        if (unwind_roots)
            printf("  note %s: %zu samples under an [unwind error] root frame\n",
                   ref_file, unwind_roots);
        free_threads(rt, n_ref);
        free_threads(ot, n_ours);
    }
    j_free(ref);
    j_free(ours);
    free(ours_text);
    free(ref_text);
    free(input);
}

TEST(reference_gecko_profiles)
{
    corpus_each("reference", ".gecko.json", "reference", compare_one);
}

/* Every corpus input converts, with default options and with every sample
 * kept, into a valid Gecko profile holding the samples the model holds;
 * those without samples are refused as having nothing to show. */
static void converts(const corpus_row *row)
{
    size_t len;
    if (atoll(row->col[M_SAMPLES]) == 0) {
        pc_error err;
        T_EQ_INT(convert_input_status(corpus_base(row), NULL, &err), PC_EINPUT);
        T_CONTAINS(err.message, ": nothing to show: the input holds no samples");
        return;
    }
    unsigned char *data = corpus_read(row->col[M_FILE], &len);
    for (int gaps = 0; gaps <= 3 && data; gaps += 3) {
        pc_options o;
        pc_profile *p;
        pc_error err;
        pc_write_options w;
        unsigned char *out = NULL;
        size_t out_len = 0;
        char msg[1024];
        pc_options_init(&o);
        o.remove_gaps = gaps;
        pc_write_options_init(&w);
        w.format = PC_FORMAT_GECKO;
        if (convert_bytes(data, len, &o, &p, &err) != PC_OK ||
            pc_write_memory(p, &w, &out, &out_len, &err) != PC_OK) {
            t_fail(__FILE__, __LINE__, "--remove-gaps %d: %s", gaps, err.message);
            pc_profile_free(p);
            continue;
        }
        jv *root = j_parse((const char *)out, out_len, msg, sizeof msg);
        if (!root || gecko_check(root, msg, sizeof msg))
            t_fail(__FILE__, __LINE__, "--remove-gaps %d: invalid output: %s", gaps, msg);
        size_t samples = 0;
        for (size_t t = 0; t < j_len(j_get(root, "threads")); t++)
            samples += j_len(j_get(j_get(j_at(j_get(root, "threads"), t), "samples"), "data"));
        T_EQ_INT(samples, p->sample.n);
        j_free(root);
        free(out);
        pc_profile_free(p);
    }
    free(data);
}

TEST(corpus_inputs_convert)
{
    corpus_each("input", NULL, "converts", converts);
}
