/* One profile written by several threads at once, as the header promises:
 * writers keep their state on their own stacks and heaps, and the registry
 * of partial outputs takes concurrent files.  Run under ThreadSanitizer by
 * `make TSAN=1 check T=threads`. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "test_util.h"

enum { WRITERS = 4, ROUNDS = 1000, KINDS = 6 };

/* Every format, and one gzipped (the compressor's state is per sink). */
static const struct {
    int format, gzip;
} kinds[KINDS] = {
    {PC_FORMAT_FIREFOX, 0}, {PC_FORMAT_GECKO, 0},  {PC_FORMAT_PPROF, 0},
    {PC_FORMAT_FOLDED, 0},  {PC_FORMAT_SPEEDSCOPE, 0}, {PC_FORMAT_FIREFOX, 1},
};

typedef struct writer {
    const pc_profile *p;
    unsigned char *want[KINDS];
    size_t want_len[KINDS];
    int id;
    int bad;        /* rounds whose bytes differ */
    int failed;     /* calls that failed */
    char error[256];
} writer;

static int write_kind(const pc_profile *p, int k, const char *path, unsigned char **out,
                      size_t *n, pc_error *err)
{
    pc_write_options w;
    pc_write_options_init(&w);
    w.format = kinds[k].format;
    w.gzip = kinds[k].gzip;
    if (!path)
        return pc_write_memory(p, &w, out, n, err);
    int st = pc_write(p, path, &w, err);
    if (st == PC_OK) {
        *out = t_read_file(path, n);
        /* t_read_file gunzips *.gz names only; these names have none. */
    }
    return st;
}

static void *run_writer(void *arg)
{
    writer *wr = arg;
    char path[512];
    snprintf(path, sizeof path, "%s/writer-%d.out", t_tmpdir(), wr->id);
    for (int round = 0; round < ROUNDS; round++) {
        int k = (round + wr->id) % KINDS;
        /* Every eighth round goes to a file, through the rename. */
        int to_file = round % 8 == wr->id && !kinds[k].gzip;
        unsigned char *out = NULL;
        size_t n = 0;
        pc_error err;
        if (write_kind(wr->p, k, to_file ? path : NULL, &out, &n, &err) != PC_OK) {
            if (!wr->failed++)
                snprintf(wr->error, sizeof wr->error, "%.200s", err.message);
        } else if (n != wr->want_len[k] || memcmp(out, wr->want[k], n) != 0) {
            wr->bad++;
        }
        free(out);
    }
    return NULL;
}

TEST(threads_one_profile_many_writers)
{
    pc_profile *p = convert_fixture(NULL);
    if (!p)
        return;
    writer wr[WRITERS];
    memset(wr, 0, sizeof wr);
    unsigned char *want[KINDS] = {0};
    size_t want_len[KINDS] = {0};
    pc_error err;
    for (int k = 0; k < KINDS; k++)
        T_EQ_INT(write_kind(p, k, NULL, &want[k], &want_len[k], &err), PC_OK);
    pthread_t th[WRITERS];
    /* Made here, once: the writers only read its name. */
    t_tmpdir();
    for (int i = 0; i < WRITERS; i++) {
        wr[i].p = p;
        wr[i].id = i;
        memcpy(wr[i].want, want, sizeof want);
        memcpy(wr[i].want_len, want_len, sizeof want_len);
        T_EQ_INT(pthread_create(&th[i], NULL, run_writer, &wr[i]), 0);
    }
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(th[i], NULL);
        T_EQ_INT(wr[i].failed, 0);
        if (wr[i].failed)
            t_fail(__FILE__, __LINE__, "writer %d: %s", i, wr[i].error);
        T_EQ_INT(wr[i].bad, 0);
    }
    for (int k = 0; k < KINDS; k++)
        free(want[k]);
    pc_profile_free(p);
}
