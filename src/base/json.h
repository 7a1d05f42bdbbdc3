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
    unsigned char *data;  /* bytes that wait to be written */
    size_t len, cap;
    pc_sink *json;        /* a JSON slab being written */
    uint8_t done;         /* complete */
    uint8_t direct;       /* written to out as it is made */
} jw_slab;

/* A document with slabs is made twice.  The first pass (pass 1) only
 * measures each slab; the container's writer then places them (off:
 * where each goes, want: its length) and writes its index, and the
 * second pass (pass 2) writes each slab to out as soon as it and every
 * slab before it are complete: a column no JSON piece encloses goes out
 * as it is made, and only a piece's columns wait, until the piece ends.
 * So the container never has to be held whole in memory. */
typedef struct jw_slabs {
    jw_slab *v;
    size_t n, cap;
    int oom;          /* latched: a slab could not grow */
    int pass;         /* 1 or 2 (a zeroed one is not for writing) */
    pc_sink *out;     /* pass 2: the file */
    uint64_t *off, *want;  /* pass 2: by slab, from pass 1 */
    uint32_t *want_type;
    size_t n_want;
    size_t next;      /* pass 2: the first slab not yet written */
    uint64_t pos;     /* pass 2: bytes written to out */
    int differ;       /* pass 2 made other slabs than pass 1 measured */
} jw_slabs;

void jw_slabs_free(jw_slabs *sl);

/* Pass 2: writes every complete slab that nothing before it holds up, at
 * its place (zeros before it, as alignment asks). */
void jw_slabs_flush(jw_slabs *sl);

/* Pass 2: zeros up to offset at, or differ when out is past it. */
void jw_slabs_pad(jw_slabs *sl, uint64_t at);

typedef struct jw_pool jw_pool;

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
    /* Threads that make the text of long columns (jw_rows), or NULL:
     * set by the document's writer after jw_init. */
    jw_pool *pool;
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
/* n values at once, as n calls of jw_col_int would write them, with less
 * work a value: for the columns of millions. */
void jw_col_u32s(jw *w, const uint32_t *v, size_t n);
void jw_col_ms(jw *w, uint64_t ns);
void jw_col_ms_signed(jw *w, int64_t ns);
void jw_col_end(jw *w);

/* Threads that help one document's writer make the text of its long
 * columns (jw_rows): threads - 1 of them (at most 7), the writer being
 * the other.
 * rows: the rows each takes at a time (a column of fewer is made by the
 * writer alone), 0 for JW_POOL_ROWS; a chunk's text waits in
 * memory until its turn, at most 2 * threads chunks at a time.  NULL
 * where threads is below 2, or out of memory, or where no thread
 * starts: the writer then makes every column itself, and the text is
 * the same.  A pool serves one document's writer at a time. */
#define JW_POOL_ROWS 16384
jw_pool *jw_pool_new(int threads, size_t rows);
void jw_pool_free(jw_pool *pool);

/* Writes rows [lo, hi) of ctx to w: one value a row, each with the jw
 * value calls (jw_col_* for a typed column).  It is called on the pool's
 * threads at once, for separate rows, and must only read shared data. */
typedef void (*jw_rows_fn)(jw *w, const void *ctx, size_t lo, size_t hi);

/* A column of n rows, as jw_col_begin(type), fn(w, ctx, 0, n) and
 * jw_col_end would write it, type 0 being a plain JSON array: made on
 * w's pool, where it has one and the column is text, a chunk of rows on
 * each thread at a time and the chunks written out in order.  The text
 * is the same as from one thread; it costs a little more CPU, as a
 * chunk's text is copied once more. */
void jw_rows(jw *w, int type, size_t n, jw_rows_fn fn, const void *ctx);

/* A value written between these two is, with slabs, a JSON slab of its
 * own (so that no one string of the file grows past what a browser can
 * hold); without, it is written in place.  Not nested. */
void jw_sub_begin(jw *w);
void jw_sub_end(jw *w);

#endif
