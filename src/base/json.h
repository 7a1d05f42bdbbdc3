/* Streaming JSON emitter over a sink.
 *
 * Writes compact JSON (no spaces) with commas placed automatically: every
 * value or key knows whether it is the first in its container.  Strings are
 * escaped and made valid UTF-8 (each invalid byte becomes U+FFFD), because
 * symbol names in profiles are arbitrary bytes and one bad byte would make
 * the whole file unreadable.  Numbers are formatted by hand: times are
 * integers in nanoseconds printed as exact decimal milliseconds, so no
 * precision is lost to doubles.
 */
#ifndef PROFCONV_JSON_OUT_H
#define PROFCONV_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "io/sink.h"

#define JW_MAX_DEPTH 32

typedef struct jw {
    pc_sink *s;
    int depth;
    uint8_t need_comma[JW_MAX_DEPTH];
    int after_key;
} jw;

void jw_init(jw *w, pc_sink *s);

void jw_obj(jw *w);      /* { */
void jw_obj_end(jw *w);  /* } */
void jw_arr(jw *w);      /* [ */
void jw_arr_end(jw *w);  /* ] */
void jw_key(jw *w, const char *key);  /* key must need no escaping */

void jw_null(jw *w);
void jw_bool(jw *w, int v);
void jw_int(jw *w, int64_t v);
void jw_uint(jw *w, uint64_t v);
/* ns as milliseconds: 1234567 -> 1.234567, 2000000 -> 2 */
void jw_ms(jw *w, uint64_t ns);
/* The same for a signed ns: -1500000 -> -1.5 */
void jw_ms_signed(jw *w, int64_t ns);
void jw_str(jw *w, const char *s, size_t len);
void jw_cstr(jw *w, const char *s);

/* A string assembled from parts: jw_str_begin, jw_str_part..., jw_str_end. */
void jw_str_begin(jw *w);
void jw_str_part(jw *w, const char *s, size_t len);
void jw_str_end(jw *w);

/* Writes text as is (it must be a complete JSON value). */
void jw_raw(jw *w, const char *text);

#endif
