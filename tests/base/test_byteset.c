/* The set of byte strings shared by threads: one id for each distinct
 * string whoever adds it, found again by its bytes alone (a hash that
 * collides finds nothing), bounded in strings and bytes; and the gate
 * that stops lookups where they seldom find. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/byteset.h"
#include "base/hashtab.h"
#include "t.h"

static uint32_t add(pc_byteset *s, const char *str)
{
    return pc_byteset_add(s, pc_hash_bytes(str, strlen(str)), str, (uint32_t)strlen(str));
}

static uint32_t find(const pc_byteset *s, const char *str)
{
    return pc_byteset_find(s, pc_hash_bytes(str, strlen(str)), str, (uint32_t)strlen(str));
}

TEST(byteset_ids_in_order_and_bounded)
{
    pc_byteset s;
    T_EQ_INT(pc_byteset_init(&s, 4, 20), 0);
    T_EQ_INT(find(&s, "main"), PC_BYTESET_NONE);
    T_EQ_INT(add(&s, "main"), 0);
    T_EQ_INT(add(&s, "main;run"), 1);
    T_EQ_INT(add(&s, "main"), 0);
    T_EQ_INT(find(&s, "main;run"), 1);
    T_EQ_INT(find(&s, "main;ru"), PC_BYTESET_NONE);
    /* The same hash with other bytes: not the string. */
    T_EQ_INT(pc_byteset_find(&s, pc_hash_bytes("main", 4), "mainx", 5), PC_BYTESET_NONE);
    T_EQ_INT(pc_byteset_find(&s, pc_hash_bytes("main", 4), "mian", 4), PC_BYTESET_NONE);
    /* 12 bytes held of 20: 9 more do not fit, 8 do. */
    T_EQ_INT(add(&s, "123456789"), PC_BYTESET_NONE);
    T_EQ_INT(add(&s, "12345678"), 2);
    T_EQ_INT(add(&s, ""), 3);
    /* Four strings: full, but what is there is still found and added. */
    T_EQ_INT(add(&s, "x"), PC_BYTESET_NONE);
    T_EQ_INT(add(&s, "12345678"), 2);
    T_EQ_INT(find(&s, ""), 3);
    T_EQ_INT(find(&s, "main"), 0);
    pc_byteset_free(&s);
}

enum { N_STR = 3000, N_THREADS = 4 };

typedef struct worker {
    pc_byteset *s;
    int k;
    uint32_t id[N_STR];
} worker;

static void name(char *buf, size_t size, int i)
{
    snprintf(buf, size, "frame%d;frame%d;frame%d", i % 7, i, i * 31 % 1000);
}

static void *work(void *arg)
{
    worker *w = arg;
    char buf[64];
    /* Each thread goes through the strings in its own order, and looks
     * each up before adding it, as the readers do. */
    for (int j = 0; j < N_STR; j++) {
        static const long step[N_THREADS] = {1, 7, 11, 13};  /* prime to N_STR */
        int i = (int)((j * step[w->k] + w->k * 977) % N_STR);
        name(buf, sizeof buf, i);
        uint32_t id = find(w->s, buf);
        if (id == PC_BYTESET_NONE)
            id = add(w->s, buf);
        w->id[i] = id;
    }
    return NULL;
}

TEST(byteset_threads_agree_on_ids)
{
    static pc_byteset s;
    static worker w[N_THREADS];
    T_EQ_INT(pc_byteset_init(&s, N_STR, 1 << 20), 0);
    pthread_t th[N_THREADS];
    for (int k = 0; k < N_THREADS; k++) {
        w[k].s = &s;
        w[k].k = k;
        T_EQ_INT(pthread_create(&th[k], NULL, work, &w[k]), 0);
    }
    for (int k = 0; k < N_THREADS; k++)
        pthread_join(th[k], NULL);
    /* Every thread got the same id for a string, each string its own. */
    static unsigned char used[N_STR];
    memset(used, 0, sizeof used);
    int bad = 0;
    char buf[64];
    for (int i = 0; i < N_STR && !bad; i++) {
        uint32_t id = w[0].id[i];
        name(buf, sizeof buf, i);
        bad = id >= N_STR || used[id] || find(&s, buf) != id;
        for (int k = 1; k < N_THREADS; k++)
            bad |= w[k].id[i] != id;
        if (!bad)
            used[id] = 1;
        else
            t_fail(__FILE__, __LINE__, "string %d: ids %u %u %u %u", i, w[0].id[i], w[1].id[i],
                   w[2].id[i], w[3].id[i]);
    }
    T_EQ_INT(s.n, N_STR);
    pc_byteset_free(&s);
}

TEST(byteset_gate_rests_where_lookups_miss)
{
    pc_hitgate g = {0};
    /* One in 8 found: open all along. */
    for (int i = 0; i < 3 * 4096; i++) {
        T_EQ_INT(pc_hitgate_try(&g), 1);
        if (i % 8 == 0)
            pc_hitgate_found(&g);
    }
    /* One in 32: after the window, 65,536 tries say no, then it looks again. */
    pc_hitgate h = {0};
    int yes = 0;
    for (int i = 0; i < 4096; i++) {
        yes += pc_hitgate_try(&h);
        if (i % 32 == 0)
            pc_hitgate_found(&h);
    }
    T_EQ_INT(yes, 4096);
    for (int i = 0; i < 65536; i++)
        yes += pc_hitgate_try(&h);
    T_EQ_INT(yes, 4096);
    T_EQ_INT(pc_hitgate_try(&h), 1);
}
