#include "base/json.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/grow.h"
#include "base/thread.h"

void jw_init(jw *w, pc_sink *s)
{
    memset(w, 0, sizeof *w);
    w->s = s;
    w->col = -1;
    w->outer.slab = -1;
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
    if (n + 3 > SINK_RESERVE_MAX) {
        /* No request for room may be longer. */
        sink_write(w->s, "\"", 1);
        sink_write(w->s, key, n);
        sink_write(w->s, "\":", 2);
    } else {
        uint8_t *p = sink_reserve(w->s, n + 3);
        p[0] = '"';
        memcpy(p + 1, key, n);
        p[n + 1] = '"';
        p[n + 2] = ':';
        sink_advance(w->s, n + 3);
    }
    w->after_key = 1;
}

void jw_raw(jw *w, const char *text)
{
    value_start(w);
    sink_write(w->s, text, strlen(text));
}

void jw_null(jw *w) { jw_raw(w, "null"); }
void jw_bool(jw *w, int v) { jw_raw(w, v ? "true" : "false"); }

/* The separator a number needs, written at p (room reserved with the
 * number's); returns its length.  Numbers are most of a big profile's
 * text, so each takes one reservation and one advance. */
static size_t number_start(jw *w, uint8_t *p)
{
    if (w->after_key) {
        w->after_key = 0;
        return 0;
    }
    size_t n = w->need_comma[w->depth];
    p[0] = ',';
    w->need_comma[w->depth] = 1;
    return n;
}

static const char pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Writes the decimal digits of v at p; returns the count.  Two digits a
 * division: a profile's text is mostly numbers. */
static size_t put_u64(uint8_t *p, uint64_t v)
{
    static const uint64_t pow10[20] = {
        1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u,
        1000000000u, 10000000000u, 100000000000u, 1000000000000u, 10000000000000u,
        100000000000000u, 1000000000000000u, 10000000000000000u, 100000000000000000u,
        1000000000000000000u, 10000000000000000000u};
    size_t n = 1;
    while (n < 20 && v >= pow10[n])
        n++;
    uint8_t *q = p + n;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        *--q = (uint8_t)pairs[d + 1];
        *--q = (uint8_t)pairs[d];
    }
    if (v >= 10) {
        *--q = (uint8_t)pairs[v * 2 + 1];
        *--q = (uint8_t)pairs[v * 2];
    } else {
        *--q = (uint8_t)('0' + v);
    }
    return n;
}

void jw_uint(jw *w, uint64_t v)
{
    uint8_t *p = sink_reserve(w->s, 24);
    size_t n = number_start(w, p);
    sink_advance(w->s, n + put_u64(p + n, v));
}

void jw_int(jw *w, int64_t v)
{
    uint8_t *p = sink_reserve(w->s, 24);
    size_t n = number_start(w, p);
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        p[n++] = '-';
        u = 0 - u;
    }
    sink_advance(w->s, n + put_u64(p + n, u));
}

/* Three digits of 0 to 999, with a NUL after them: a fraction's digits
 * are two such groups, each one copy of 4 bytes. */
#define TRI10(a) a "0", a "1", a "2", a "3", a "4", a "5", a "6", a "7", a "8", a "9"
#define TRI100(a)                                                                          \
    TRI10(a "0"), TRI10(a "1"), TRI10(a "2"), TRI10(a "3"), TRI10(a "4"), TRI10(a "5"),    \
        TRI10(a "6"), TRI10(a "7"), TRI10(a "8"), TRI10(a "9")
static const char triples[1000][4] = {TRI100("0"), TRI100("1"), TRI100("2"), TRI100("3"),
                                      TRI100("4"), TRI100("5"), TRI100("6"), TRI100("7"),
                                      TRI100("8"), TRI100("9")};
/* The trailing zeros of 1 to 999 (of 0: 2, never asked). */
#define ZEROS10(z) z, 0, 0, 0, 0, 0, 0, 0, 0, 0
#define ZEROS100                                                                           \
    ZEROS10(2), ZEROS10(1), ZEROS10(1), ZEROS10(1), ZEROS10(1), ZEROS10(1), ZEROS10(1),    \
        ZEROS10(1), ZEROS10(1), ZEROS10(1)
static const uint8_t trailing_zeros[1000] = {ZEROS100, ZEROS100, ZEROS100, ZEROS100, ZEROS100,
                                             ZEROS100, ZEROS100, ZEROS100, ZEROS100, ZEROS100};

/* ns as milliseconds: the shortest decimal that is exact. */
static void put_ms(jw *w, uint64_t ns, int negative)
{
    uint8_t *p = sink_reserve(w->s, 34);
    size_t n = number_start(w, p);
    if (negative)
        p[n++] = '-';
    uint64_t ms = ns / 1000000;
    uint32_t frac = (uint32_t)(ns - ms * 1000000);
    /* Most times and weights here are gaps and periods of a few ms. */
    if (ms < 10)
        p[n++] = (uint8_t)('0' + ms);
    else
        n += put_u64(p + n, ms);
    if (frac) {
        /* Six digits, three at a time, then the trailing zeros dropped.
         * Two digits at a time, with the zeros found digit by digit,
         * this took a third more of the writing's time (18.4 ms against
         * 11.9 ms of 1M reused Perfetto samples' times and weights). */
        uint32_t hi = frac / 1000, lo = frac - hi * 1000;
        p[n] = '.';
        memcpy(p + n + 1, triples[hi], 4);
        memcpy(p + n + 4, triples[lo], 4);
        n += 1 + (lo ? 6 - (size_t)trailing_zeros[lo] : 3 - (size_t)trailing_zeros[hi]);
    }
    sink_advance(w->s, n);
}

void jw_ms(jw *w, uint64_t ns)
{
    put_ms(w, ns, 0);
}

void jw_ms_signed(jw *w, int64_t ns)
{
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

/* ---- Slabs ---- */

void jw_slabs_free(jw_slabs *sl)
{
    for (size_t k = 0; k < sl->n; k++) {
        free(sl->v[k].data);
        if (sl->v[k].json)
            sink_abort(sl->v[k].json);
    }
    free(sl->v);
    free(sl->off);
    free(sl->want);
    free(sl->want_type);
    memset(sl, 0, sizeof *sl);
}

void jw_slabs_pad(jw_slabs *sl, uint64_t at)
{
    static const uint8_t zeros[16] = {0};
    if (sl->pos > at) {
        sl->differ = 1;
        return;
    }
    while (sl->pos < at) {
        size_t k = at - sl->pos < sizeof zeros ? (size_t)(at - sl->pos) : sizeof zeros;
        sink_write(sl->out, zeros, k);
        sl->pos += k;
    }
}

void jw_slabs_flush(jw_slabs *sl)
{
    /* Past a difference from pass 1 the places are unknown: pc_jslb_end
     * refuses the file. */
    while (!sl->differ && sl->next < sl->n && sl->next < sl->n_want &&
           sl->v[sl->next].done) {
        jw_slab *x = &sl->v[sl->next];
        if (!x->direct) {
            jw_slabs_pad(sl, sl->off[sl->next]);
            if (x->len)
                sink_write(sl->out, x->data, x->len);
            sl->pos += x->len;
            free(x->data);
            x->data = NULL;
            x->cap = 0;
        }
        if (x->len != sl->want[sl->next])
            sl->differ = 1;
        sl->next++;
    }
}

/* A new slab of type, referenced at the current place; -1 when out of
 * memory (latched).  Its number is the order slabs begin in, the same in
 * both passes. */
static long slab_new(jw *w, uint32_t type)
{
    jw_slabs *sl = w->slabs;
    if (sl->oom || pc_grow(&sl->v, &sl->cap, sl->n + 1, sizeof *sl->v, 16) < 0) {
        sl->oom = 1;
        return -1;
    }
    long k = (long)sl->n++;
    memset(&sl->v[k], 0, sizeof sl->v[k]);
    sl->v[k].type = type;
    if (sl->pass == 2 && ((size_t)k >= sl->n_want || sl->want_type[k] != type))
        sl->differ = 1;
    char ref[40];
    snprintf(ref, sizeof ref, "{\"$s\":%ld}", k);
    jw_raw(w, ref);
    return k;
}

static void slab_put(jw *w, const void *b, size_t n)
{
    jw_slabs *sl = w->slabs;
    jw_slab *x = &sl->v[w->col];
    if (sl->pass == 1) {
        x->len += n;
        return;
    }
    if (x->direct) {
        if (!sl->differ && x->len + n <= sl->want[w->col]) {
            sink_write(sl->out, b, n);
            sl->pos += n;
        } else {
            sl->differ = 1;
        }
        x->len += n;
        return;
    }
    if (x->cap - x->len < n &&
        pc_grow(&x->data, &x->cap, x->len + n, 1, 4096) < 0) {
        sl->oom = 1;
        w->col = -1;
        return;
    }
    memcpy(x->data + x->len, b, n);
    x->len += n;
}

void jw_col_begin(jw *w, int type)
{
    if (!w->slabs) {
        jw_arr(w);
        return;
    }
    jw_slabs *sl = w->slabs;
    w->col = slab_new(w, (uint32_t)type);
    /* Nothing before it waits: it goes out as it is made. */
    if (w->col >= 0 && sl->pass == 2 && sl->next == (size_t)w->col && !sl->differ) {
        jw_slabs_pad(sl, sl->off[w->col]);
        sl->v[w->col].direct = 1;
    }
}

/* Little-endian, as the container is. */
void jw_col_int(jw *w, int64_t v)
{
    if (!w->slabs) {
        jw_int(w, v);
        return;
    }
    if (w->col < 0)
        return;
    if (w->slabs->v[w->col].type == JW_SLAB_U8) {
        uint8_t b = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        slab_put(w, &b, 1);
        return;
    }
    int32_t x = (int32_t)(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v);
    uint32_t u = (uint32_t)x;
    uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    slab_put(w, b, 4);
}

/* v's digits at p, the one- and two-digit values most columns hold
 * without put_u64's search for the length. */
static inline size_t put_u32(uint8_t *p, uint32_t v)
{
    if (v < 10) {
        p[0] = (uint8_t)('0' + v);
        return 1;
    }
    if (v < 100) {
        p[0] = (uint8_t)pairs[v * 2];
        p[1] = (uint8_t)pairs[v * 2 + 1];
        return 2;
    }
    return put_u64(p, v);
}

void jw_col_u32s(jw *w, const uint32_t *v, size_t n)
{
    if (w->slabs) {
        for (size_t i = 0; i < n; i++)
            jw_col_int(w, v[i]);
        return;
    }
    /* At most 11 bytes a value (a comma and ten digits), in what one
     * reservation holds. */
    enum { PER_RESERVE = SINK_RESERVE_MAX / 11 };
    while (n) {
        size_t k = n < PER_RESERVE ? n : PER_RESERVE;
        uint8_t *p = sink_reserve(w->s, k * 11);
        size_t len = number_start(w, p);
        len += put_u32(p + len, v[0]);
        for (size_t i = 1; i < k; i++) {
            p[len++] = ',';
            len += put_u32(p + len, v[i]);
        }
        sink_advance(w->s, len);
        v += k;
        n -= k;
    }
}

static void put_f64(jw *w, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(u >> (8 * i));
    slab_put(w, b, 8);
}

void jw_col_ms(jw *w, uint64_t ns)
{
    if (!w->slabs) {
        jw_ms(w, ns);
        return;
    }
    /* Both operands are exact below 2^53 ns and the quotient is rounded
     * once: the double JSON.parse would make of the decimal text. */
    if (w->col >= 0)
        put_f64(w, (double)ns / 1e6);
}

void jw_col_ms_signed(jw *w, int64_t ns)
{
    if (!w->slabs) {
        jw_ms_signed(w, ns);
        return;
    }
    if (w->col >= 0)
        put_f64(w, (double)ns / 1e6);
}

void jw_col_end(jw *w)
{
    if (!w->slabs) {
        jw_arr_end(w);
        return;
    }
    if (w->col >= 0) {
        w->slabs->v[w->col].done = 1;
        if (w->slabs->pass == 2)
            jw_slabs_flush(w->slabs);
    }
    w->col = -1;
}

void jw_sub_begin(jw *w)
{
    if (!w->slabs || w->outer.slab >= 0)
        return;
    long k = slab_new(w, JW_SLAB_JSON);
    pc_error err;
    int st = k < 0 ? PC_ENOMEM
             : w->slabs->pass == 1 ? sink_open_count(&w->slabs->v[k].json, &err)
                                   : sink_open_memory(&w->slabs->v[k].json, 0, &err);
    if (st != PC_OK) {
        w->slabs->oom = 1;
        return;
    }
    w->outer.s = w->s;
    w->outer.depth = w->depth;
    w->outer.after_key = w->after_key;
    memcpy(w->outer.need_comma, w->need_comma, sizeof w->need_comma);
    w->outer.slab = k;
    w->s = w->slabs->v[k].json;
    w->depth = 0;
    w->after_key = 0;
    w->need_comma[0] = 0;
}

void jw_sub_end(jw *w)
{
    if (!w->slabs || w->outer.slab < 0)
        return;
    jw_slab *x = &w->slabs->v[w->outer.slab];
    pc_error err;
    unsigned char *data = NULL;
    size_t size = 0;
    if (w->slabs->pass == 1) {
        size = (size_t)sink_bytes(x->json);
        sink_abort(x->json);
    } else if (sink_finish(x->json, &data, &size, &err) != PC_OK) {
        w->slabs->oom = 1;
    }
    x->json = NULL;
    x->data = data;
    x->len = x->cap = size;
    x->done = 1;
    w->s = w->outer.s;
    w->depth = w->outer.depth;
    w->after_key = w->outer.after_key;
    memcpy(w->need_comma, w->outer.need_comma, sizeof w->need_comma);
    w->outer.slab = -1;
    if (w->slabs->pass == 2)
        jw_slabs_flush(w->slabs);
}

/* ---- Columns made on several threads ---- */

/* Text is made faster than it is compressed: more helpers than this
 * would only hold more chunks (a 1 MiB buffer each, of address space
 * under --max-memory). */
enum { POOL_MAX_THREADS = 8 };

/* A chunk's text, made ahead of its turn. */
typedef struct piece {
    pc_sink *s;   /* a memory sink, emptied as its text is written out */
    int done;
} piece;

struct jw_pool {
    pthread_mutex_t mu;
    pthread_cond_t wake;    /* helpers: a chunk to take, or stop */
    pthread_cond_t ready;   /* the writer: a chunk made */
    pthread_t *th;
    int n_th, stop;
    size_t rows;
    /* The column being made, chunk k being rows [k * rows, (k + 1) *
     * rows): next is the first chunk no thread has taken, out the first
     * not yet written.  Chunk k waits in ring[k % n_ring], so none is
     * taken n_ring or more ahead of out.  chunks is 0 between columns. */
    piece *ring;
    size_t n_ring;
    jw_rows_fn fn;
    const void *ctx;
    size_t n, chunks, next, out;
};

/* Makes chunk k's rows in the piece's sink, after the chunks before it:
 * every value takes a comma. */
static void make_piece(jw_rows_fn fn, const void *ctx, size_t lo, size_t hi, pc_sink *s)
{
    jw w;
    jw_init(&w, s);
    w.depth = 1;
    w.need_comma[1] = 1;
    fn(&w, ctx, lo, hi);
}

/* Takes chunk pl->next, under pl->mu, and makes it in its piece. */
static void take_piece(jw_pool *pl)
{
    size_t k = pl->next++;
    piece *pc = &pl->ring[k % pl->n_ring];
    jw_rows_fn fn = pl->fn;
    const void *ctx = pl->ctx;
    size_t lo = k * pl->rows, hi = pl->n - lo > pl->rows ? lo + pl->rows : pl->n;
    pthread_mutex_unlock(&pl->mu);
    make_piece(fn, ctx, lo, hi, pc->s);
    pthread_mutex_lock(&pl->mu);
    pc->done = 1;
}

static int can_take(const jw_pool *pl)
{
    return pl->next < pl->chunks && pl->next < pl->out + pl->n_ring;
}

static void *helper(void *arg)
{
    jw_pool *pl = arg;
    pthread_mutex_lock(&pl->mu);
    for (;;) {
        while (!pl->stop && !can_take(pl))
            pthread_cond_wait(&pl->wake, &pl->mu);
        if (pl->stop)
            break;
        take_piece(pl);
        pthread_cond_signal(&pl->ready);
    }
    pthread_mutex_unlock(&pl->mu);
    return NULL;
}

void jw_pool_free(jw_pool *pl)
{
    if (!pl)
        return;
    pthread_mutex_lock(&pl->mu);
    pl->stop = 1;
    pthread_cond_broadcast(&pl->wake);
    pthread_mutex_unlock(&pl->mu);
    for (int k = 0; k < pl->n_th; k++)
        pthread_join(pl->th[k], NULL);
    for (size_t k = 0; k < pl->n_ring; k++)
        sink_abort(pl->ring[k].s);
    pthread_mutex_destroy(&pl->mu);
    pthread_cond_destroy(&pl->wake);
    pthread_cond_destroy(&pl->ready);
    free(pl->ring);
    free(pl->th);
    free(pl);
}

jw_pool *jw_pool_new(int threads, size_t rows)
{
    if (threads < 2)
        return NULL;
    if (threads > POOL_MAX_THREADS)
        threads = POOL_MAX_THREADS;
    jw_pool *pl = calloc(1, sizeof *pl);
    if (!pl)
        return NULL;
    pl->rows = rows ? rows : JW_POOL_ROWS;
    pl->n_ring = 2 * (size_t)threads;
    pl->ring = calloc(pl->n_ring, sizeof *pl->ring);
    pl->th = malloc((size_t)(threads - 1) * sizeof *pl->th);
    if (!pl->ring || !pl->th || pthread_mutex_init(&pl->mu, NULL) != 0) {
        free(pl->ring);
        free(pl->th);
        free(pl);
        return NULL;
    }
    pthread_cond_init(&pl->wake, NULL);
    pthread_cond_init(&pl->ready, NULL);
    pc_error err;
    for (size_t k = 0; k < pl->n_ring; k++)
        if (sink_open_memory(&pl->ring[k].s, 0, &err) != PC_OK) {
            jw_pool_free(pl);
            return NULL;
        }
    /* A helper's calls go no deeper than a column's value calls. */
    while (pl->n_th < threads - 1 &&
           pc_thread_start_sized(&pl->th[pl->n_th], helper, pl, (size_t)128 << 10) == 0)
        pl->n_th++;
    if (!pl->n_th) {
        jw_pool_free(pl);
        return NULL;
    }
    return pl;
}

void jw_rows(jw *w, int type, size_t n, jw_rows_fn fn, const void *ctx)
{
    jw_pool *pl = w->pool;
    int text = !w->slabs || !type;
    if (text)
        jw_arr(w);
    else
        jw_col_begin(w, type);
    if (!pl || !text || n <= pl->rows) {
        fn(w, ctx, 0, n);
    } else {
        /* The writer makes chunk 0 in place, then writes out each chunk
         * in turn: in place when no helper has taken it, else from its
         * piece once made; while that piece is still being made, it
         * makes one further on in a piece of its own rather than wait. */
        pthread_mutex_lock(&pl->mu);
        pl->fn = fn;
        pl->ctx = ctx;
        pl->n = n;
        pl->chunks = (n - 1) / pl->rows + 1;
        pl->next = 1;
        pl->out = 0;
        pthread_cond_broadcast(&pl->wake);
        pthread_mutex_unlock(&pl->mu);
        fn(w, ctx, 0, pl->rows);
        pthread_mutex_lock(&pl->mu);
        pl->out = 1;
        while (pl->out < pl->chunks) {
            size_t k = pl->out;
            piece *pc = &pl->ring[k % pl->n_ring];
            if (pl->next == k) {
                pl->next++;
                pthread_mutex_unlock(&pl->mu);
                fn(w, ctx, k * pl->rows, n - k * pl->rows > pl->rows ? (k + 1) * pl->rows : n);
                pthread_mutex_lock(&pl->mu);
            } else if (pc->done) {
                pthread_mutex_unlock(&pl->mu);
                sink_move(pc->s, w->s);
                pthread_mutex_lock(&pl->mu);
                pc->done = 0;
            } else if (can_take(pl)) {
                take_piece(pl);
                continue;
            } else {
                pthread_cond_wait(&pl->ready, &pl->mu);
                continue;
            }
            pl->out++;
            pthread_cond_broadcast(&pl->wake);
        }
        pl->chunks = pl->next = pl->out = 0;
        pthread_mutex_unlock(&pl->mu);
    }
    if (text)
        jw_arr_end(w);
    else
        jw_col_end(w);
}
