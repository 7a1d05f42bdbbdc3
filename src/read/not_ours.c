/* Inputs profconv recognises but does not read: what users hand it first
 * (simpleperf's text report, a Chrome JSON trace,
 * pprof, profconv's own outputs).  Each is refused in one line saying what
 * the input is and what to do next, instead of "unknown input format". */
#include <string.h>

#include "base/pbwire.h"
#include "read/read.h"

static int has(const uint8_t *data, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (const uint8_t *p = data; len >= n;) {
        const uint8_t *q = memchr(p, needle[0], len - n + 1);
        if (!q)
            return 0;
        if (memcmp(q, needle, n) == 0)
            return 1;
        len -= (size_t)(q + 1 - p);
        p = q + 1;
    }
    return 0;
}

/* A ValueType: its type and unit, both varints, and nothing else. */
static int is_value_type(const uint8_t *p, const uint8_t *end)
{
    while (p < end) {
        uint64_t v;
        if (*p != 0x08 && *p != 0x10)
            return 0;
        p++;
        if (pb_varint(&p, end, &v) != 0)
            return 0;
    }
    return 1;
}

/* pprof's first field, sample_type (1, LEN), looks like a Perfetto trace's
 * first packet, so this check runs before the Perfetto reader's.  It takes
 * no real trace: it wants the first "packet" to hold only the two varints
 * of a ValueType (no TracePacket field is a varint numbered 1 or 2), and
 * then a top-level field other than 1, which a trace never has, each
 * field with the wire type pprof's Profile gives it. */
static int is_pprof(const uint8_t *d, size_t len)
{
    const uint8_t *p = d, *end = d + len;
    int other = 0;
    for (int first = 1; p < end; first = 0) {
        uint64_t tag, n;
        if (pb_varint(&p, end, &tag) != 0)
            break;
        uint64_t f = tag >> 3, wt = tag & 7;
        if (f == 0 || f > 15)
            return 0;
        int len_field = f <= 6 || f == 11 || f == 15;
        if (wt == PB_LEN) {
            if (!len_field && f != 13)
                return 0;
            if (pb_varint(&p, end, &n) != 0)
                break;
            if (first && (f != 1 || n < 2 || n > 22 || n > (uint64_t)(end - p) ||
                          !is_value_type(p, p + n)))
                return 0;
            if (n > (uint64_t)(end - p))
                break;
            p += n;
        } else if (wt == PB_VARINT && !len_field) {
            if (first || pb_varint(&p, end, &n) != 0)
                return first ? 0 : other;
        } else {
            return 0;
        }
        other |= f != 1;
    }
    return other;
}

static const uint8_t *skip_space(const uint8_t *p, const uint8_t *end)
{
    if (end - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

static int json_object(const uint8_t *d, size_t len)
{
    const uint8_t *p = skip_space(d, d + len);
    return p < d + len && *p == '{';
}

static int is_speedscope(const uint8_t *d, size_t len)
{
    return json_object(d, len) && has(d, len, "speedscope.app/file-format-schema");
}

static int is_processed(const uint8_t *d, size_t len)
{
    return json_object(d, len) && has(d, len, "\"meta\"") &&
           has(d, len, "\"preprocessedProfileVersion\"");
}

static int is_gecko(const uint8_t *d, size_t len)
{
    return json_object(d, len) && has(d, len, "\"meta\"") && has(d, len, "\"version\"") &&
           !has(d, len, "\"traceEvents\"");
}

/* Chrome's JSON trace: an object with traceEvents, or an array of events,
 * each with its phase "ph". */
static int is_chrome_json(const uint8_t *d, size_t len)
{
    const uint8_t *end = d + len, *p = skip_space(d, end);
    if (p < end && *p == '{')
        return has(d, len, "\"traceEvents\"");
    if (p >= end || *p != '[')
        return 0;
    p = skip_space(p + 1, end);
    return p < end && *p == '{' && has(d, len, "\"ph\"");
}

/* The line at *p (without its end), advancing *p past it; 0 at the end. */
static int next_line(const uint8_t **p, const uint8_t *end, const uint8_t **s, size_t *n)
{
    if (*p >= end)
        return 0;
    const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
    const uint8_t *le = nl ? nl : end;
    *s = *p;
    *n = (size_t)(le - *p);
    if (*n && (*s)[*n - 1] == '\r')
        (*n)--;
    *p = nl ? nl + 1 : end;
    return 1;
}

static int starts(const uint8_t *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && memcmp(s, prefix, k) == 0;
}

/* `simpleperf report-sample` without --protobuf: "sample:" records whose
 * fields are indented by two spaces; --dump-protobuf-report's text starts
 * "magic: SIMPLEPERF". */
static int is_simpleperf_text(const uint8_t *d, size_t len)
{
    const uint8_t *p = d, *end = d + len, *s;
    size_t n;
    while (next_line(&p, end, &s, &n)) {
        if (n == 0)
            continue;
        if (n == 17 && memcmp(s, "magic: SIMPLEPERF", 17) == 0)
            return 1;
        if (n != 7 || memcmp(s, "sample:", 7) != 0 || !next_line(&p, end, &s, &n))
            return 0;
        return starts(s, n, "  event_type: ") || starts(s, n, "  time: ") ||
               starts(s, n, "  event_count: ") || starts(s, n, "  thread_id: ");
    }
    return 0;
}

/* Folded stacks: every line "frame;frame;... COUNT"; the window's last
 * line, which may be cut, only when it is the only one. */
static int is_folded(const uint8_t *d, size_t len)
{
    const uint8_t *p = d, *end = d + len, *s;
    size_t n, lines = 0;
    while (next_line(&p, end, &s, &n)) {
        if (p == end && d[len - 1] != '\n' && lines > 0)
            break;
        if (n == 0)
            continue;
        size_t k = n;
        while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9')
            k--;
        if (k == n || k < 2 || s[k - 1] != ' ' || memchr(s, 0, n))
            return 0;
        lines++;
    }
    return lines > 0;
}

typedef struct not_ours {
    int (*detect)(const uint8_t *data, size_t len);
    const char *message;
} not_ours;

static const not_ours ahead[] = {
    {is_pprof, "this is a pprof profile, which profconv writes but does not read: open it with "
               "`go tool pprof -http=: FILE`"},
};

static const not_ours after[] = {
    {is_simpleperf_text, "this is simpleperf's text report, which profconv does not read: "
                         "run `simpleperf report-sample --protobuf --show-callchain -i perf.data "
                         "-o perf.trace` and give profconv perf.trace"},
    {is_speedscope, "this is a speedscope profile, which profconv writes but does not read: "
                    "open it at https://www.speedscope.app"},
    {is_processed, "this is a Firefox Profiler profile (processed format), which profconv writes "
                   "but does not read: open it at https://profiler.firefox.com"},
    {is_gecko, "this is a Firefox Profiler profile (Gecko format), which profconv writes but "
               "does not read: open it at https://profiler.firefox.com"},
    {is_chrome_json, "this is a Chrome JSON trace, which profconv does not read: record a "
                     "Perfetto trace (protobuf) with the disabled-by-default-cpu_profiler "
                     "category, or open this one at https://ui.perfetto.dev"},
    {is_folded, "these are folded stacks, which profconv writes but does not read: give them "
                "to flamegraph.pl or inferno-flamegraph, or open them at "
                "https://www.speedscope.app"},
};

const char *pc_not_ours(const uint8_t *data, size_t len, int before_readers)
{
    const not_ours *t = before_readers ? ahead : after;
    size_t n = before_readers ? sizeof ahead / sizeof *ahead : sizeof after / sizeof *after;
    for (size_t i = 0; i < n; i++)
        if (t[i].detect(data, len))
            return t[i].message;
    return NULL;
}
