#include "base/json.h"

#include <string.h>

#include "base/escape.h"

void jw_init(jw *w, pc_sink *s)
{
    memset(w, 0, sizeof *w);
    w->s = s;
}

/* Emits the separator a new value needs in its container. */
static void value_start(jw *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->need_comma[w->depth])
        sink_write(w->s, ",", 1);
    w->need_comma[w->depth] = 1;
}

static void open_container(jw *w, char c)
{
    value_start(w);
    sink_write(w->s, &c, 1);
    /* Deeper levels are not written by any writer here; clamping keeps a
     * bug from overrunning the array. */
    if (w->depth < JW_MAX_DEPTH - 1)
        w->depth++;
    w->need_comma[w->depth] = 0;
}

static void close_container(jw *w, char c)
{
    sink_write(w->s, &c, 1);
    if (w->depth > 0)
        w->depth--;
}

void jw_obj(jw *w) { open_container(w, '{'); }
void jw_obj_end(jw *w) { close_container(w, '}'); }
void jw_arr(jw *w) { open_container(w, '['); }
void jw_arr_end(jw *w) { close_container(w, ']'); }

void jw_key(jw *w, const char *key)
{
    value_start(w);
    size_t n = strlen(key);
    uint8_t *p = sink_reserve(w->s, n + 3);
    p[0] = '"';
    memcpy(p + 1, key, n);
    p[n + 1] = '"';
    p[n + 2] = ':';
    sink_advance(w->s, n + 3);
    w->after_key = 1;
}

void jw_raw(jw *w, const char *text)
{
    value_start(w);
    sink_write(w->s, text, strlen(text));
}

void jw_null(jw *w) { jw_raw(w, "null"); }
void jw_bool(jw *w, int v) { jw_raw(w, v ? "true" : "false"); }

/* Writes the decimal digits of v at p; returns the count. */
static size_t put_u64(uint8_t *p, uint64_t v)
{
    uint8_t tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (uint8_t)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        p[i] = tmp[n - 1 - i];
    return n;
}

void jw_uint(jw *w, uint64_t v)
{
    value_start(w);
    uint8_t *p = sink_reserve(w->s, 24);
    sink_advance(w->s, put_u64(p, v));
}

void jw_int(jw *w, int64_t v)
{
    value_start(w);
    uint8_t *p = sink_reserve(w->s, 24);
    size_t n = 0;
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        p[n++] = '-';
        u = 0 - u;
    }
    sink_advance(w->s, n + put_u64(p + n, u));
}

static void put_ms(jw *w, uint64_t ns, int negative)
{
    uint8_t *p = sink_reserve(w->s, 32);
    size_t n = 0;
    if (negative)
        p[n++] = '-';
    n += put_u64(p + n, ns / 1000000);
    uint32_t frac = (uint32_t)(ns % 1000000);
    if (frac) {
        int digits = 6;
        while (frac % 10 == 0) {
            frac /= 10;
            digits--;
        }
        p[n++] = '.';
        for (int i = digits - 1; i >= 0; i--) {
            p[n + (size_t)i] = (uint8_t)('0' + frac % 10);
            frac /= 10;
        }
        n += (size_t)digits;
    }
    sink_advance(w->s, n);
}

void jw_ms(jw *w, uint64_t ns)
{
    value_start(w);
    put_ms(w, ns, 0);
}

void jw_ms_signed(jw *w, int64_t ns)
{
    value_start(w);
    put_ms(w, ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns, ns < 0);
}

void jw_str_part(jw *w, const char *str, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *s = (const uint8_t *)str, *end = s + len;
    while (s < end) {
        const uint8_t *run = s;
        while (s < end && *s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\')
            s++;
        if (s > run)
            sink_write(w->s, run, (size_t)(s - run));
        if (s == end)
            break;
        uint8_t c = *s;
        if (c >= 0x80) {
            size_t n = pc_utf8_len(s, (size_t)(end - s));
            if (n) {
                sink_write(w->s, s, n);
                s += n;
            } else {
                sink_write(w->s, "\xef\xbf\xbd", 3);
                s++;
            }
            continue;
        }
        uint8_t *p = sink_reserve(w->s, 6);
        p[0] = '\\';
        switch (c) {
        case '"': p[1] = '"'; sink_advance(w->s, 2); break;
        case '\\': p[1] = '\\'; sink_advance(w->s, 2); break;
        case '\n': p[1] = 'n'; sink_advance(w->s, 2); break;
        case '\t': p[1] = 't'; sink_advance(w->s, 2); break;
        case '\r': p[1] = 'r'; sink_advance(w->s, 2); break;
        default:
            memcpy(p + 1, "u00", 3);
            p[4] = (uint8_t)hex[c >> 4];
            p[5] = (uint8_t)hex[c & 15];
            sink_advance(w->s, 6);
        }
        s++;
    }
}

void jw_str_begin(jw *w)
{
    value_start(w);
    sink_write(w->s, "\"", 1);
}

void jw_str_end(jw *w)
{
    sink_write(w->s, "\"", 1);
}

void jw_str(jw *w, const char *s, size_t len)
{
    jw_str_begin(w);
    jw_str_part(w, s, len);
    jw_str_end(w);
}

void jw_cstr(jw *w, const char *s)
{
    jw_str(w, s, strlen(s));
}
