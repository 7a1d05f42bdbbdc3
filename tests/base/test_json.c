/* Numbers in the JSON writer: every digit count, both ends of each type,
 * milliseconds with each count of fraction digits, and the separators
 * they come with after keys and inside arrays. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "io/sink.h"
#include "t.h"

/* What fn writes into an array, as a string (caller frees). */
static char *written(void (*fn)(jw *w))
{
    pc_sink *s;
    pc_error err;
    if (sink_open_memory(&s, 0, &err) != PC_OK)
        return NULL;
    jw w;
    jw_init(&w, s);
    fn(&w);
    unsigned char *data;
    size_t size;
    if (sink_finish(s, &data, &size, &err) != PC_OK)
        return NULL;
    char *str = malloc(size + 1);
    if (str) {
        memcpy(str, data, size);
        str[size] = 0;
    }
    free(data);
    return str;
}

static void uints(jw *w)
{
    jw_arr(w);
    uint64_t v = 1;
    jw_uint(w, 0);
    for (int i = 0; i < 20; i++) {
        jw_uint(w, v - 1);
        jw_uint(w, v);
        if (i < 19)
            v *= 10;
    }
    jw_uint(w, UINT64_MAX);
    jw_arr_end(w);
}

TEST(json_uint_every_digit_count)
{
    char *s = written(uints);
    T_CHECK(s != NULL);
    if (!s)
        return;
    T_EQ_STR(s, "[0,0,1,9,10,99,100,999,1000,9999,10000,99999,100000,999999,1000000,"
                "9999999,10000000,99999999,100000000,999999999,1000000000,9999999999,"
                "10000000000,99999999999,100000000000,999999999999,1000000000000,"
                "9999999999999,10000000000000,99999999999999,100000000000000,"
                "999999999999999,1000000000000000,9999999999999999,10000000000000000,"
                "99999999999999999,100000000000000000,999999999999999999,"
                "1000000000000000000,9999999999999999999,10000000000000000000,"
                "18446744073709551615]");
    free(s);
}

static void ints(jw *w)
{
    jw_arr(w);
    jw_int(w, 0);
    jw_int(w, -1);
    jw_int(w, 7);
    jw_int(w, -42);
    jw_int(w, INT64_MAX);
    jw_int(w, INT64_MIN);
    jw_arr_end(w);
}

TEST(json_int_signs_and_ends)
{
    char *s = written(ints);
    T_CHECK(s != NULL);
    if (s)
        T_EQ_STR(s, "[0,-1,7,-42,9223372036854775807,-9223372036854775808]");
    free(s);
}

static void millis(jw *w)
{
    jw_obj(w);
    jw_key(w, "a");
    jw_ms(w, 0);
    jw_key(w, "b");
    jw_arr(w);
    jw_ms(w, 1);              /* 1 ns */
    jw_ms(w, 10);
    jw_ms(w, 120);
    jw_ms(w, 1000);           /* 1 us */
    jw_ms(w, 10500);
    jw_ms(w, 100000);
    jw_ms(w, 1000000);        /* 1 ms */
    jw_ms(w, 1500000);
    jw_ms(w, 123456789);
    jw_ms(w, 1000000000123); /* 1000 s and 123 ns */
    jw_ms(w, UINT64_MAX);
    jw_ms_signed(w, -2500000);
    jw_ms_signed(w, INT64_MIN);
    jw_ms_signed(w, 3);
    jw_arr_end(w);
    jw_key(w, "c");
    jw_uint(w, 5);
    jw_obj_end(w);
}

TEST(json_ms_shortest_exact_decimal)
{
    char *s = written(millis);
    T_CHECK(s != NULL);
    if (s)
        T_EQ_STR(s, "{\"a\":0,\"b\":[0.000001,0.00001,0.00012,0.001,0.0105,0.1,1,1.5,"
                    "123.456789,1000000.000123,18446744073709.551615,-2.5,"
                    "-9223372036854.775808,0.000003],\"c\":5}");
    free(s);
}

/* Values of every length, with every count of trailing zeros. */
static uint64_t ms_value(uint64_t k)
{
    uint64_t x = k * 0x9e3779b97f4a7c15ULL;
    x ^= x >> 29;
    static const uint64_t scale[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 1000};
    return (x >> (k % 50)) / scale[k % 8] * scale[(k / 8) % 8];
}

enum { MS_VALUES = 20000 };

static void many_millis(jw *w)
{
    jw_arr(w);
    for (uint64_t k = 0; k < MS_VALUES; k++)
        jw_ms(w, ms_value(k));
    jw_arr_end(w);
}

/* Whether s, an array of count millisecond values, holds value(k) for
 * each k as the shortest exact decimal, checked against snprintf; fails
 * the test at the first that is not. */
static void ms_values_match(const char *s, uint64_t count, uint64_t (*value)(uint64_t))
{
    const char *at = s + 1;
    for (uint64_t k = 0; k < count; k++) {
        uint64_t v = value(k);
        char want[48];
        int n = snprintf(want, sizeof want, "%llu.%06llu", (unsigned long long)(v / 1000000),
                         (unsigned long long)(v % 1000000));
        while (want[n - 1] == '0')
            want[--n] = 0;
        if (want[n - 1] == '.')
            want[--n] = 0;
        size_t len = strcspn(at, ",]");
        if (len != (size_t)n || memcmp(at, want, len) != 0) {
            t_fail(__FILE__, __LINE__, "value %llu: got %.*s, want %s", (unsigned long long)v,
                   (int)len, at, want);
            return;
        }
        at += len + 1;
    }
    T_EQ_INT(*at, 0);
}

TEST(json_ms_matches_reference_for_many_values)
{
    char *s = written(many_millis);
    T_CHECK(s != NULL);
    if (s)
        ms_values_match(s, MS_VALUES, ms_value);
    free(s);
}

static char long_key[5000];

static void keyed(jw *w)
{
    jw_obj(w);
    jw_key(w, long_key);
    jw_uint(w, 1);
    jw_key(w, "b");
    jw_uint(w, 2);
    jw_obj_end(w);
}

/* A key longer than any request for room is written all the same. */
TEST(json_key_longer_than_a_reservation)
{
    memset(long_key, 'k', sizeof long_key - 1);
    char *s = written(keyed);
    T_CHECK(s != NULL);
    if (!s)
        return;
    size_t n = sizeof long_key - 1;
    T_EQ_INT(strlen(s), n + 12);
    T_CHECK(s[0] == '{' && s[1] == '"' && s[2 + n] == '"');
    T_EQ_STR(s + 2 + n, "\":1,\"b\":2}");
    free(s);
}

/* A run of column values written at once is the text the values written
 * one by one make: every digit count of 32 bits, runs longer than a
 * reservation, first in an array, after other values, after a key. */
static uint32_t col_vals[3000];

static void col_one_by_one(jw *w)
{
    jw_obj(w);
    jw_key(w, "a");
    jw_col_begin(w, JW_SLAB_I32);
    for (size_t i = 0; i < 3000; i++)
        jw_col_int(w, col_vals[i]);
    jw_col_end(w);
    jw_key(w, "b");
    jw_col_begin(w, JW_SLAB_I32);
    jw_col_int(w, 5);
    for (size_t i = 0; i < 17; i++)
        jw_col_int(w, col_vals[i]);
    jw_col_end(w);
    jw_key(w, "c");
    jw_col_begin(w, JW_SLAB_I32);
    jw_col_end(w);
    jw_obj_end(w);
}

static void col_runs(jw *w)
{
    jw_obj(w);
    jw_key(w, "a");
    jw_col_begin(w, JW_SLAB_I32);
    jw_col_u32s(w, col_vals, 1000);
    jw_col_u32s(w, col_vals + 1000, 2000);
    jw_col_end(w);
    jw_key(w, "b");
    jw_col_begin(w, JW_SLAB_I32);
    jw_col_int(w, 5);
    jw_col_u32s(w, col_vals, 17);
    jw_col_end(w);
    jw_key(w, "c");
    jw_col_begin(w, JW_SLAB_I32);
    jw_col_u32s(w, col_vals, 0);
    jw_col_end(w);
    jw_obj_end(w);
}

TEST(json_column_runs_as_one_by_one)
{
    uint32_t x = 1;
    for (size_t i = 0; i < 3000; i++) {
        /* 0, 9, 10, 99, 100 ... and the ends, then mostly small values. */
        uint64_t p10 = 1;
        for (size_t d = 0; d < i / 2 % 11; d++)
            p10 *= 10;
        x = x * 1103515245u + 12345u;
        col_vals[i] = i < 22 ? (uint32_t)(p10 - (i % 2 == 0)) : i % 5 ? x % 200 : x;
    }
    col_vals[22] = UINT32_MAX;
    col_vals[23] = INT32_MAX;
    char *one = written(col_one_by_one), *runs = written(col_runs);
    T_CHECK(one && runs);
    if (one && runs) {
        T_EQ_INT(strlen(runs), strlen(one));
        T_CHECK(strcmp(one, runs) == 0);
        T_CHECK(strstr(one, "\"b\":[5,0,1,9,10,99,100,") != NULL);
        T_CHECK(strstr(one, ",4294967295,2147483647,") != NULL);
        T_CHECK(strstr(one, "\"c\":[]}") != NULL);
    }
    free(one);
    free(runs);
}

/* Columns made a chunk at a time on a pool's threads (jw_rows) are the
 * text one thread makes: every count of rows around the chunk size,
 * values of every kind (null, numbers, milliseconds, strings), chunks
 * whose text passes a sink's block, and several columns in one
 * document, the pool serving them in turn. */
static size_t rows_n;
static jw_pool *rows_pool;
static char big_text[700000];

static void value_rows(jw *w, const void *ctx, size_t lo, size_t hi)
{
    const uint64_t *mul = ctx;
    for (size_t i = lo; i < hi; i++) {
        if (i % 7 == 3)
            jw_null(w);
        else if (i % 5 == 1)
            jw_ms(w, i * *mul + 1);
        else
            jw_uint(w, i * *mul);
    }
}

static void ms_rows(jw *w, const void *ctx, size_t lo, size_t hi)
{
    (void)ctx;
    for (size_t i = lo; i < hi; i++)
        jw_col_ms(w, i * 250001u);
}

/* Every row a string of 700 KB: a chunk of two passes a sink's block. */
static void big_rows(jw *w, const void *ctx, size_t lo, size_t hi)
{
    (void)ctx;
    for (size_t i = lo; i < hi; i++) {
        char first = (char)('a' + i % 26);
        jw_str_begin(w);
        jw_str_part(w, &first, 1);
        jw_str_part(w, big_text, sizeof big_text);
        jw_str_end(w);
    }
}

static void rows_doc(jw *w)
{
    static const uint64_t mul = 1000003;
    w->pool = rows_pool;
    jw_obj(w);
    jw_key(w, "a");
    jw_rows(w, 0, rows_n, value_rows, &mul);
    jw_key(w, "b");
    jw_rows(w, JW_SLAB_F64, rows_n, ms_rows, NULL);
    jw_key(w, "c");
    jw_rows(w, 0, rows_n < 5 ? rows_n : 5, big_rows, NULL);
    jw_obj_end(w);
}

TEST(json_rows_threads_same_text)
{
    memset(big_text, 'x', sizeof big_text);
    static const size_t counts[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 100, 1001};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        rows_n = counts[c];
        rows_pool = NULL;
        char *one = written(rows_doc);
        T_CHECK(one != NULL);
        if (!one)
            return;
        /* The text itself, as the calls one by one write it. */
        if (rows_n == 9)
            T_CHECK(strstr(one, "\"a\":[0,1.000004,2000006,null,4000012,5000015,6.000019,"
                                "7000021,8000024],\"b\":[0,0.250001,0.500002,") != NULL);
        if (rows_n == 0)
            T_CHECK(strncmp(one, "{\"a\":[],\"b\":[],\"c\":[]}", 22) == 0);
        static const int threads[] = {2, 3, 5};
        static const size_t chunk[] = {1, 2, 3, 8};
        for (size_t t = 0; t < 3; t++)
            for (size_t k = 0; k < 4; k++) {
                t_case("json_rows_threads_same_text: %zu rows, %d threads, %zu a chunk",
                       rows_n, threads[t], chunk[k]);
                rows_pool = jw_pool_new(threads[t], chunk[k]);
                T_CHECK(rows_pool != NULL);
                char *par = written(rows_doc);
                jw_pool_free(rows_pool);
                T_CHECK(par != NULL);
                if (par && strcmp(par, one) != 0)
                    t_fail(__FILE__, __LINE__, "not the text of one thread (%zu bytes, "
                           "%zu expected)", strlen(par), strlen(one));
                free(par);
            }
        free(one);
    }
    T_CHECK(jw_pool_new(1, 0) == NULL);
    jw_pool_free(NULL);
}

/* Every fraction of a millisecond, 0 to 999,999 ns, after 3 ms and after
 * 12 ms: the digits come three at a time, their trailing zeros from a
 * table. */
static uint64_t fraction_value(uint64_t f)
{
    return (f % 2 ? 3000000 : 12000000) + f;
}

static void every_fraction(jw *w)
{
    jw_arr(w);
    for (uint64_t f = 0; f < 1000000; f++)
        jw_ms(w, fraction_value(f));
    jw_arr_end(w);
}

TEST(json_ms_every_fraction)
{
    char *s = written(every_fraction);
    T_CHECK(s != NULL);
    if (s)
        ms_values_match(s, 1000000, fraction_value);
    free(s);
}
