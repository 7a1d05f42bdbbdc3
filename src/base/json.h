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

/* Slabs of a JSLB container (write/jslb.h): columns of numbers as binary
 * arrays, and parts of the document as JSON of their own, each written
 * in the document as {"$s":N}.  Types are the container's. */
enum jw_slab_type { JW_SLAB_U8 = 1, JW_SLAB_I32 = 4, JW_SLAB_F64 = 7, JW_SLAB_JSON = 10 };

typedef struct jw_slab {
    uint32_t type;
    unsigned char *data;
    size_t len, cap;
    pc_sink *json;    /* a JSON slab being written */
} jw_slab;

typedef struct jw_slabs {
    jw_slab *v;
    size_t n, cap;
    int oom;          /* latched: a slab could not grow */
} jw_slabs;

void jw_slabs_free(jw_slabs *sl);

typedef struct jw {
    pc_sink *s;
    int depth;
    uint8_t need_comma[JW_MAX_DEPTH];
    int after_key;
    /* With slabs, columns and sub-documents go to slabs (NULL: plain
     * JSON).  col: the typed slab being filled, or -1.  outer: the
     * document's state while a sub-document is written. */
    jw_slabs *slabs;
    long col;
    struct {
        pc_sink *s;
        int depth, after_key;
        uint8_t need_comma[JW_MAX_DEPTH];
        long slab;
    } outer;
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

/* A column of numbers: a JSON array, or with slabs a binary slab of type
 * (enum jw_slab_type) referenced where the array would be.  Values are
 * given with jw_col_int (U8 and I32 slabs hold them clamped) or jw_col_ms
 * (ns as ms, float64), then jw_col_end. */
void jw_col_begin(jw *w, int type);
void jw_col_int(jw *w, int64_t v);
void jw_col_ms(jw *w, uint64_t ns);
void jw_col_ms_signed(jw *w, int64_t ns);
void jw_col_end(jw *w);

/* A value written between these two is, with slabs, a JSON slab of its
 * own (so that no one string of the file grows past what a browser can
 * hold); without, it is written in place.  Not nested. */
void jw_sub_begin(jw *w);
void jw_sub_end(jw *w);

#endif
