/* Reordering the tables: samples grouped by thread in time order, rows
 * kept or dropped, threads remapped, frames dropped, and the order threads
 * are shown in. */
#include "model/model.h"

#include "base/grow.h"
#include "base/thread.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Grouping's work, split over up to MAX_WORKERS threads: it only moves
 * memory, and one core does not draw all the bandwidth there is.  Each
 * part is the same work whichever thread does it, so the result is the
 * same bytes for any count. */
enum { MAX_WORKERS = 8, MIN_ROWS_SPLIT = 1 << 16 };

/* Columns a sort puts in order, each in place. */
enum { MAX_COLS = PC_SAMPLE_COLS };

/* A time column: 8 bytes a row (t64), or the sample table's two narrow
 * ones (see pc_sample_time). */
typedef struct times {
    const uint64_t *t64;
    const uint32_t *t32;
    const uint16_t *t16;
    uint64_t base;
} times;

static inline uint64_t time_of(const times *v, size_t i)
{
    return v->t64 ? v->t64[i] : pc_time_join(v->base, v->t16[i], v->t32[i]);
}

typedef struct part {
    /* move_rows: the rows [lo, hi) of the n_col columns src (col_size
     * bytes a row) to dst, by the thread column thr (thr_size bytes a
     * row), from next, the places a step's in pos */
    unsigned char *dst[MAX_COLS], *src[MAX_COLS];
    const void *thr;
    size_t thr_size;
    uint64_t thr_base;
    /* sort: the threads order[i] for i claimed from *claim below hi, by
     * keys (rows grouped by thread), each order given in pos (rows of
     * the thread's), then applied to the columns col */
    const size_t *first;
    const uint32_t *order;
    atomic_size_t *claim;
    times keys;
    uint32_t *pos;
    unsigned char *col[MAX_COLS];
    size_t col_size[MAX_COLS];
    int n_col;
    int failed;
    /* fill: where the input rows [lo, hi) go, by thread (tcol), into
     * perm; it and move_rows from next, forward or backward */
    const pc_icol *tcol;
    size_t *next;
    int backward;
    /* fill (pc_order_by_thread) */
    uint32_t *perm;
    /* all */
    size_t lo, hi;
    void (*fn)(struct part *);
} part;

static void *run_part(void *arg)
{
    part *w = arg;
    w->fn(w);
    return NULL;
}

/* Runs the n parts, n - 1 of them on threads of their own (on this one
 * where a thread cannot be started). */
static void run_parts(part *w, int n)
{
    pthread_t th[MAX_WORKERS];
    int started[MAX_WORKERS] = {0};
    for (int k = 1; k < n; k++)
        started[k] = pc_thread_start(&th[k], run_part, &w[k]) == 0;
    w[0].fn(&w[0]);
    for (int k = 1; k < n; k++) {
        if (started[k])
            pthread_join(th[k], NULL);
        else
            w[k].fn(&w[k]);
    }
}

/* Rows are moved from where they are to where they go, not fetched
 * from where they are: the reads then go through each column once, in
 * order, and the writes go to as many places as there are threads, each
 * one after the other.  Fetched in output order, a thread's rows lie one
 * in every few of the input's, so each thread read every cache line of
 * the column again (8 threads: 8 times the column's bytes).
 *
 * The rows go STEP_ROWS at a time, every column's, each to a block of its
 * own: where they go is counted for the step, the columns moved, and the
 * pages they were read from given back.  The new blocks' pages are mapped
 * as rows come to them, so the table's old and new blocks together take
 * little more than one, rather than one more column (4 bytes a row). */
enum { STEP_ROWS = 1 << 16 };

#define SCATTER(T)                                                             \
    do {                                                                       \
        T *d_ = (T *)(void *)w->dst[c];                                        \
        const T *s_ = (const T *)(const void *)w->src[c];                      \
        for (size_t i = 0; i < m; i++)                                         \
            d_[at[i]] = s_[a + i];                                             \
    } while (0)

/* Thread row i of a thread column of signed offsets TT (see pc_icol). */
#define THREAD_AT(TT, i) ((size_t)(w->thr_base + (uint64_t)(int64_t)((const TT *)w->thr)[i]))

/* Calls EACH(TT) with TT the type of the thread column's offsets. */
#define BY_THREAD_SIZE(EACH)                                                   \
    do {                                                                       \
        if (w->thr_size == 1)                                                  \
            EACH(int8_t);                                                      \
        else if (w->thr_size == 2)                                             \
            EACH(int16_t);                                                     \
        else if (w->thr_size == 4)                                             \
            EACH(int32_t);                                                     \
        else                                                                   \
            EACH(int64_t);                                                     \
    } while (0)

#define PLACES(TT)                                                             \
    do {                                                                       \
        if (!w->backward)                                                      \
            for (size_t i = 0; i < m; i++)                                     \
                at[i] = (uint32_t)next[THREAD_AT(TT, a + i)]++;                \
        else                                                                   \
            for (size_t i = m; i-- > 0;)                                       \
                at[i] = (uint32_t)--next[THREAD_AT(TT, a + i)];                \
    } while (0)

/* Moves the rows [lo, hi) of the columns src to dst: forward, each
 * thread's from next[t] up, or backward, the last row first, from next[t]
 * down; at: room for STEP_ROWS places. */
static void move_rows(part *w)
{
    size_t *next = w->next;
    uint32_t *at = w->pos;
    for (size_t done = 0; done < w->hi - w->lo; done += STEP_ROWS) {
        size_t m = w->hi - w->lo - done < STEP_ROWS ? w->hi - w->lo - done : STEP_ROWS;
        size_t a = w->backward ? w->hi - done - m : w->lo + done;
        BY_THREAD_SIZE(PLACES);
        for (int c = 0; c < w->n_col; c++) {
            size_t size = w->col_size[c];
            if (size == 8)
                SCATTER(uint64_t);
            else if (size == 4)
                SCATTER(uint32_t);
            else if (size == 2)
                SCATTER(uint16_t);
            else
                SCATTER(uint8_t);
            pc_release(w->src[c], a * size, (a + m) * size);
        }
    }
}

/* Shrinks the block *col to bytes, where the system allows. */
static void fit(void *col, size_t bytes)
{
    void *q;
    memcpy(&q, col, sizeof q);
    q = realloc(q, bytes ? bytes : 1);
    if (q)
        memcpy(col, &q, sizeof q);
}

/* The end of the run of keys from i (below n) in order. */
static size_t run_end(const times *key, size_t i, size_t n)
{
    while (++i < n && time_of(key, i) >= time_of(key, i - 1))
        ;
    return i;
}

/* The first row of a run that merge_runs has not yet taken. */
typedef struct run_head {
    uint64_t key;
    uint32_t row, run;   /* the row's position among the keys; its run */
} run_head;

/* By key, then position: positions are in input order, so ties keep
 * their order and the sort stays stable. */
static int head_before(const run_head *a, const run_head *b)
{
    return a->key < b->key || (a->key == b->key && a->row < b->row);
}

static void sift_down(run_head *h, size_t n, size_t i)
{
    run_head x = h[i];
    for (size_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && head_before(&h[c + 1], &h[c]))
            c++;
        if (!head_before(&h[c], &x))
            break;
        h[i] = h[c];
    }
    h[i] = x;
}

static void sift_up(run_head *h, size_t i)
{
    run_head x = h[i];
    for (size_t up; i > 0 && head_before(&x, &h[up = (i - 1) / 2]); i = up)
        h[i] = h[up];
    h[i] = x;
}

static int run_cmp(const void *a, const void *b)
{
    const run_head *x = a, *y = b;
    return head_before(x, y) ? -1 : head_before(y, x) ? 1 : 0;
}

/* The order of the n keys into pos (pos[k]: the position of the k-th),
 * merging all their runs in one pass through a heap of their first rows.
 * A run joins the heap only when its first row is the next to go out:
 * runs come from buffers read in turn, so few overlap in time, and the
 * heap holds those few rather than thousands (its depth is what each row
 * pays).  Returns 0, or -1 when the heap could not be allocated. */
static int merge_runs(const times *key, size_t n, uint32_t *pos, size_t runs)
{
    run_head *h = malloc(runs * sizeof *h);
    run_head *wait = malloc(runs * sizeof *wait);  /* by first row */
    uint32_t *end = malloc(runs * sizeof *end);
    if (!h || !wait || !end) {
        free(h);
        free(wait);
        free(end);
        return -1;
    }
    size_t nr = 0;
    for (size_t i = 0; i < n; nr++) {
        size_t j = run_end(key, i, n);
        end[nr] = (uint32_t)j;
        wait[nr] = (run_head){time_of(key, i), (uint32_t)i, (uint32_t)nr};
        i = j;
    }
    /* Heads are distinct (positions are), so any sort gives one order. */
    qsort(wait, nr, sizeof *wait, run_cmp);
    size_t nh = 0, w = 0;
    for (size_t o = 0; o < n;) {
        while (w < nr && (nh == 0 || head_before(&wait[w], &h[0]))) {
            h[nh] = wait[w++];
            sift_up(h, nh++);
        }
        /* The top run's rows go out while they come before every other
         * head, the runs waiting included, without a step of the heap a
         * row: runs overlap little, so most rows go this way. */
        const run_head *next = nh > 1 ? &h[1] : NULL;
        if (nh > 2 && head_before(&h[2], &h[1]))
            next = &h[2];
        if (w < nr && (!next || head_before(&wait[w], next)))
            next = &wait[w];
        run_head top = h[0];
        uint32_t stop = end[top.run];
        for (;;) {
            pos[o++] = top.row;
            if (top.row + 1 >= stop) {
                h[0] = h[--nh];
                break;
            }
            top.row++;
            top.key = time_of(key, top.row);
            if (next && !head_before(&top, next)) {
                h[0] = top;
                break;
            }
        }
        sift_down(h, nh, 0);
    }
    free(h);
    free(wait);
    free(end);
    return 0;
}

/* The stable order of the n keys into pos (see merge_runs).  Rows out of
 * order mostly come as interleaved runs in order (a recorder's per-CPU
 * buffers, thousands of them in a long trace), so the runs there are are
 * merged rather than the rows sorted from scratch: at once where the heap
 * of their heads stays small, else two by two, pass after pass.  Returns
 * 0, or -1 out of memory. */
static int sort_positions(const times *key, size_t n, uint32_t *pos)
{
    size_t runs = 0;
    for (size_t i = 0; i < n; runs++)
        i = run_end(key, i, n);
    if (runs <= 1 << 16 && merge_runs(key, n, pos, runs) == 0)
        return 0;
    uint32_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp)
        return -1;
    /* Runs of positions: [i, j) is a run where the keys of pos[i..j)
     * rise. */
    for (size_t i = 0; i < n; i++)
        pos[i] = (uint32_t)i;
    uint32_t *src = pos, *dst = tmp;
    for (;;) {
        runs = 0;
        for (size_t i = 0; i < n;) {
            size_t j = i + 1, k;
            while (j < n && time_of(key, src[j]) >= time_of(key, src[j - 1]))
                j++;
            k = j < n ? j + 1 : n;
            while (k < n && time_of(key, src[k]) >= time_of(key, src[k - 1]))
                k++;
            size_t a = i, b = j, o = i;
            /* Ties take the earlier run's row: the order stays stable. */
            while (a < j && b < k)
                dst[o++] = time_of(key, src[b]) < time_of(key, src[a]) ? src[b++] : src[a++];
            while (a < j)
                dst[o++] = src[a++];
            while (b < k)
                dst[o++] = src[b++];
            i = k;
            runs++;
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
        if (runs <= 1)
            break;
    }
    if (src != pos)
        memcpy(pos, src, n * sizeof *pos);
    free(tmp);
    return 0;
}

/* Row i of a column of size bytes (1, 2, 4 or 8), as 8 bytes, and back. */
static inline uint64_t cell_get(const unsigned char *col, size_t size, size_t i)
{
    switch (size) {
    case 1:
        return col[i];
    case 2:
        return ((const uint16_t *)(const void *)col)[i];
    case 4:
        return ((const uint32_t *)(const void *)col)[i];
    default:
        return ((const uint64_t *)(const void *)col)[i];
    }
}

static inline void cell_set(unsigned char *col, size_t size, size_t i, uint64_t v)
{
    switch (size) {
    case 1:
        col[i] = (uint8_t)v;
        break;
    case 2:
        ((uint16_t *)(void *)col)[i] = (uint16_t)v;
        break;
    case 4:
        ((uint32_t *)(void *)col)[i] = (uint32_t)v;
        break;
    default:
        ((uint64_t *)(void *)col)[i] = v;
        break;
    }
}

/* The m rows of the n_col columns col (col_size bytes a row: 1, 2, 4 or
 * 8) put in the order pos (row k takes row pos[k]), in place, one cycle
 * of the permutation after another, every column's row moved at each
 * step; seen: m bytes.  Following the cycles once for all the columns,
 * rather than once a column, took the grouping of 10M Perfetto samples
 * (reused callstacks, 8 threads out of time order) from 162-168 ms to
 * 141-143 ms. */
static void follow_cycles(unsigned char *const *col, const size_t *col_size, int n_col,
                          const uint32_t *pos, size_t m, uint8_t *seen)
{
    memset(seen, 0, m);
    for (size_t s = 0; s < m; s++) {
        if (seen[s] || pos[s] == s)
            continue;
        uint64_t save[MAX_COLS];
        for (int c = 0; c < n_col; c++)
            save[c] = cell_get(col[c], col_size[c], s);
        size_t k = s;
        for (;;) {
            seen[k] = 1;
            size_t from = pos[k];
            if (from == s) {
                for (int c = 0; c < n_col; c++)
                    cell_set(col[c], col_size[c], k, save[c]);
                break;
            }
            for (int c = 0; c < n_col; c++)
                cell_set(col[c], col_size[c], k, cell_get(col[c], col_size[c], from));
            k = from;
        }
    }
}

/* Row k of a column of T takes row pos[k], a block of `block` rows at a
 * time from the front.  Each block's rows are copied to the ring (two
 * blocks) before they are written over, and a block takes the rows below
 * its end from there, those after it from the column, which they have not
 * left yet. */
#define TAKE_IN_BLOCKS(T)                                                      \
    do {                                                                       \
        T *d_ = (T *)(void *)col[c], *r_ = (T *)(void *)ring;                  \
        for (size_t a = 0; a < m; a += block) {                                \
            size_t e = m - a < block ? m : a + block;                          \
            memcpy(r_ + (a & mask), d_ + a, (e - a) * sizeof(T));             \
            for (size_t k = a; k < e; k++) {                                   \
                size_t j = pos[k];                                             \
                T kept = r_[j & mask], ahead = d_[j];                          \
                d_[k] = j < e ? kept : ahead;                                  \
            }                                                                  \
        }                                                                      \
    } while (0)

/* The m rows of the columns col put in the order pos, as follow_cycles
 * does, with scratch (m bytes) for room.  Orders out of time are local
 * (buffers overlap a little): a row is mostly taken from near it, so
 * where the ring of rows written over fits the scratch, each column is
 * taken front to back on its own, in tight loops of one width, rather
 * than by cycles, a switch of widths a cell.  Putting 1M Perfetto
 * samples in order (reused callstacks, 8 threads, rows taken from at
 * most a few hundred rows back) then took about 6 ms of CPU instead of
 * 12 ms.  An order that reaches further back keeps to the cycles, with
 * as little room. */
static void reorder_rows(unsigned char *const *col, const size_t *col_size, int n_col,
                         const uint32_t *pos, size_t m, uint8_t *scratch)
{
    size_t back = 0, widest = 1;
    for (size_t k = 0; k < m; k++)
        if (pos[k] < k && k - pos[k] > back)
            back = k - pos[k];
    for (int c = 0; c < n_col; c++)
        if (col_size[c] > widest)
            widest = col_size[c];
    /* Rows are taken from at most `back` rows behind, so from the block
     * before at most. */
    size_t block = 1;
    while (block < back)
        block *= 2;
    if (2 * block > m / widest) {
        follow_cycles(col, col_size, n_col, pos, m, scratch);
        return;
    }
    void *ring = scratch;
    size_t mask = 2 * block - 1;
    /* Slots not yet written are read, not used: they hold zeros. */
    memset(ring, 0, 2 * block * widest);
    for (int c = 0; c < n_col; c++) {
        if (col_size[c] == 8)
            TAKE_IN_BLOCKS(uint64_t);
        else if (col_size[c] == 4)
            TAKE_IN_BLOCKS(uint32_t);
        else if (col_size[c] == 2)
            TAKE_IN_BLOCKS(uint16_t);
        else
            TAKE_IN_BLOCKS(uint8_t);
    }
}

/* Sorts by time the rows of the threads it claims (see part) that came
 * out of order: their order found from their times side by side (keys),
 * then applied to each column in place.  Reading the times through an
 * index jumped about the time column, a cache miss a row, and moving
 * whole columns through the order again would map a block for each.
 * pos: a row's room for each row, or NULL for room of its own, 4 bytes a
 * row of its largest thread to sort; scratch of its own for the rest, a
 * byte a row of that thread (threads come largest first, so the first
 * one's room does for the rest); w->failed is set where there is none. */
static void sort_threads(part *w)
{
    const size_t *first = w->first;
    uint8_t *scratch = NULL;
    uint32_t *own = NULL;
    size_t room = 0;
    for (;;) {
        size_t i = atomic_fetch_add(w->claim, 1);
        if (i >= w->hi)
            break;
        size_t t = w->order[i], f = first[t], m = first[t + 1] - f;
        if (m > room) {
            free(scratch);
            free(own);
            scratch = malloc(m);
            own = w->pos ? NULL : malloc(m * sizeof *own);
            room = m;
            if (!scratch || (!w->pos && !own)) {
                w->failed = 1;
                break;
            }
        }
        uint32_t *pos = w->pos ? w->pos + f : own;
        /* The thread's times, read where they lie (narrow ones are not
         * copied wide: 8 bytes a row more while sorting). */
        times keys = w->keys;
        if (keys.t64) {
            keys.t64 += f;
        } else {
            keys.t32 += f;
            keys.t16 += f;
        }
        if (sort_positions(&keys, m, pos) < 0) {
            w->failed = 1;
            break;
        }
        unsigned char *col[MAX_COLS];
        for (int c = 0; c < w->n_col; c++)
            col[c] = w->col[c] + f * w->col_size[c];
        reorder_rows(col, w->col_size, w->n_col, pos, m, scratch);
    }
    free(scratch);
    free(own);
}

/* Which input row goes to each place, into perm (perm[k]: the row that
 * goes to k), for the input rows [lo, hi): each thread's from next[t] up,
 * or backward, taking the rows from the last, from next[t] down. */
static void fill(part *w)
{
    const pc_icol *thread = w->tcol;
    uint32_t *perm = w->perm;
    size_t *next = w->next;
    if (!w->backward)
        for (size_t i = w->lo; i < w->hi; i++)
            perm[next[pc_icol_get(thread, i)]++] = (uint32_t)i;
    else
        for (size_t i = w->hi; i-- > w->lo;)
            perm[--next[pc_icol_get(thread, i)]] = (uint32_t)i;
}

/* Counts the n rows of each thread into first (first[t]: where thread t's
 * rows start, grouped in input order) and, where perm is not NULL, puts
 * them there (see fill); marks in unsorted (nt + 1 bytes, zeroed) the
 * threads whose rows came out of time order.  rows and unsorted_known:
 * for the threads below known, their rows and that mark (the sample
 * table's tally; the other threads have none), or NULL for a pass here.
 * Returns 1 where some thread is marked, 0 where none is, -1 out of
 * memory. */
static int place_rows(const pc_icol *thread, const times *time, size_t n, size_t nt,
                      const size_t *rows, const uint8_t *unsorted_known, size_t known,
                      uint32_t *perm, size_t *first, uint8_t *unsorted, int nw)
{
    size_t *next = malloc((nt + 1) * sizeof *next);
    size_t *ends = malloc((nt + 1) * sizeof *ends);
    uint64_t *last = calloc(nt + 1, sizeof *last);
    if (!next || !ends || !last) {
        free(next);
        free(ends);
        free(last);
        return -1;
    }
    /* Counting sort by thread keeps input order within a thread, so a
     * thread's rows need sorting where the input had them out of order:
     * seen in input order, by the tally as rows came, or else here in a
     * pass through the columns as they lie. */
    memset(first, 0, (nt + 1) * sizeof *first);
    if (rows) {
        size_t k = known < nt ? known : nt;
        memcpy(first + 1, rows, k * sizeof *first);
        memcpy(unsorted, unsorted_known, k);
    } else {
        for (size_t i = 0; i < n; i++) {
            size_t t = (size_t)pc_icol_get(thread, i);
            first[t + 1]++;
            uint64_t ti = time_of(time, i);
            unsorted[t] |= ti < last[t];
            last[t] = ti;
        }
    }
    for (size_t t = 0; t < nt; t++)
        first[t + 1] += first[t];
    memcpy(next, first, (nt + 1) * sizeof *next);
    /* Two halves of the rows: the first from the threads' starts, the
     * second from their ends, last row first, so neither needs the
     * other's counts. */
    memcpy(ends, first + 1, nt * sizeof *ends);
    if (!perm)
        nw = 0;
    part f[2] = {{.tcol = thread, .next = next, .perm = perm, .lo = 0, .hi = n / 2, .fn = fill},
                 {.tcol = thread, .next = ends, .backward = 1, .perm = perm, .lo = n / 2,
                  .hi = n, .fn = fill}};
    if (nw > 1) {
        run_parts(f, 2);
    } else if (nw == 1) {
        f[0].hi = n;
        fill(&f[0]);
    }
    free(next);
    free(ends);
    free(last);
    for (size_t t = 0; t < nt; t++)
        if (unsorted[t])
            return 1;
    return 0;
}

/* By rows, most first, then by thread (any order sorts the same). */
typedef struct by_rows {
    size_t rows;
    uint32_t t;
} by_rows;

static int rows_cmp(const void *a, const void *b)
{
    const by_rows *x = a, *y = b;
    if (x->rows != y->rows)
        return x->rows > y->rows ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

/* Sorts the threads marked in unsorted by keys (see sort_threads), with
 * pos room for n positions (NULL: each part takes its own), moving the
 * rows of the n_col columns cols.  The nw parts claim whole threads in
 * turn, the largest first, so that one that starts late or runs slower
 * takes fewer: each thread is the same work whichever part sorts it.
 * Returns 0, or -1 out of memory (some threads may then be sorted,
 * others not). */
static int sort_groups(const times *keys, uint32_t *pos, const struct pc_col *cols,
                       int n_col, const size_t *first, const uint8_t *unsorted, size_t nt,
                       int nw)
{
    size_t n_order = 0;
    for (size_t t = 0; t < nt; t++)
        n_order += unsorted[t] != 0;
    by_rows *br = malloc((n_order + 1) * sizeof *br);
    uint32_t *order = malloc((n_order + 1) * sizeof *order);
    if (!br || !order) {
        free(br);
        free(order);
        return -1;
    }
    for (size_t t = 0, k = 0; t < nt; t++)
        if (unsorted[t])
            br[k++] = (by_rows){first[t + 1] - first[t], (uint32_t)t};
    qsort(br, n_order, sizeof *br, rows_cmp);
    for (size_t k = 0; k < n_order; k++)
        order[k] = br[k].t;
    free(br);
    if ((size_t)nw > n_order)
        nw = n_order ? (int)n_order : 1;
    atomic_size_t claim;
    atomic_init(&claim, 0);
    part w[MAX_WORKERS];
    for (int k = 0; k < nw; k++) {
        w[k] = (part){.first = first, .order = order, .claim = &claim, .keys = *keys,
                      .pos = pos, .n_col = n_col, .hi = n_order, .fn = sort_threads};
        for (int c = 0; c < n_col; c++) {
            memcpy(&w[k].col[c], cols[c].p, sizeof w[k].col[c]);
            w[k].col_size[c] = cols[c].size;
        }
    }
    run_parts(w, nw);
    free(order);
    for (int k = 0; k < nw; k++)
        if (w[k].failed)
            return -1;
    return 0;
}

int pc_order_by_thread(const uint32_t *thread, const uint64_t *time,
                       size_t n, size_t nt, uint32_t *perm, size_t *first)
{
    uint8_t *unsorted = calloc(nt + 1, 1);
    times tv = {time, NULL, NULL, 0};
    /* Thread ids below 2^31, as any table's are: a signed 4-byte column
     * of base 0 reads them as they are. */
    if (nt > INT32_MAX)
        return -1;
    pc_icol tc = {.size = 4, .half = (uint64_t)1 << 31, .mask = UINT32_MAX};
    memcpy(&tc.p, &thread, sizeof thread);
    int any = unsorted ? place_rows(&tc, &tv, n, nt, NULL, NULL, 0, perm, first, unsorted, 1)
                       : -1;
    if (any < 0) {
        free(unsorted);
        return -1;
    }
    int res = 0;
    if (any) {
        /* The times in perm's order, side by side, and their order: 12
         * bytes a row while a thread is sorted. */
        uint64_t *keys = malloc(n * sizeof *keys);
        uint32_t *pos = malloc(n * sizeof *pos);
        res = keys && pos ? 0 : -1;
        if (!res) {
            for (size_t k = 0; k < n; k++)
                keys[k] = time[perm[k]];
            struct pc_col col = PC_COL(perm);
            times kv = {keys, NULL, NULL, 0};
            res = sort_groups(&kv, pos, &col, 1, first, unsorted, nt, 1);
        }
        free(keys);
        free(pos);
    }
    free(unsorted);
    return res;
}

/* Sets sample.first[t] to the index of thread t's first sample, for rows
 * already grouped by thread. */
static void count_threads(pc_profile *p)
{
    size_t *first = p->sample.first, nt = p->thread.n;
    memset(first, 0, (nt + 1) * sizeof *first);
    uint64_t th[256];
    for (size_t i = 0; i < p->sample.n; i += 256) {
        size_t m = p->sample.n - i < 256 ? p->sample.n - i : 256;
        pc_icol_read(&p->sample.thread, i, m, th);
        for (size_t k = 0; k < m; k++)
            first[th[k] + 1]++;
    }
    for (size_t t = 0; t < nt; t++)
        first[t + 1] += first[t];
}

int pc_group_samples(pc_profile *p)
{
    return pc_group_samples_on(p, 1);
}

/* Where grouping fails before a row moves, the rows stay as they were,
 * not grouped, and so without sample.first.  Returns -1. */
static int not_grouped(pc_profile *p)
{
    free(p->sample.first);
    p->sample.first = NULL;
    return -1;
}

/* Once rows have moved, a thread that cannot be sorted leaves a table
 * only good for freeing: it is emptied.  Returns -1. */
static int group_failed(pc_profile *p)
{
    p->sample.n = p->sample.cap = p->sample.mapped = 0;
    memset(p->sample.first, 0, (p->thread.n + 1) * sizeof *p->sample.first);
    return -1;
}

/* Counts into next the rows of each thread among [lo, hi). */
#define COUNT(TT)                                                              \
    do {                                                                       \
        for (size_t i = w->lo; i < w->hi; i++)                                 \
            next[THREAD_AT(TT, i)]++;                                          \
    } while (0)

static void count_rows(part *w)
{
    size_t *next = w->next;
    BY_THREAD_SIZE(COUNT);
}

/* Whether the n rows of the thread column are grouped already: one
 * thread, or threads one after another in order. */
static int grouped(const pc_icol *thread, size_t n)
{
    uint64_t t[257];
    for (size_t i = 0; i + 1 < n; i += 256) {
        size_t m = n - i < 257 ? n - i : 257;
        pc_icol_read(thread, i, m, t);
        for (size_t k = 1; k < m; k++)
            if (t[k] < t[k - 1])
                return 0;
    }
    return 1;
}

/* Moves the rows of the nc columns cols to where grouping puts them: each
 * thread's from first[t], in input order, by the thread column thr
 * (see pc_icol), which does not move.  nw parts of about as many
 * rows: the first from the threads' starts, the last from their ends
 * backward, and those between from starts counted in a pass of their own.
 * Returns 0, or -1 out of memory (the table is then as it was). */
static int move_columns(const pc_icol *thread, const struct pc_col *cols, int nc,
                        const size_t *first, size_t n, size_t nt, int nw)
{
    /* A thread column of no block: one thread, its rows in place. */
    if (thread->size == 0)
        return 0;
    if (nw < 1)
        nw = 1;
    size_t *starts = calloc((size_t)nw * (nt + 1), sizeof *starts);
    uint32_t *at = malloc((size_t)nw * STEP_ROWS * sizeof *at);
    unsigned char *dst[MAX_COLS] = {0};
    int ok = starts && at;
    for (int c = 0; c < nc && ok; c++)
        ok = (dst[c] = malloc(n * cols[c].size)) != NULL;
    if (!ok) {
        for (int c = 0; c < nc; c++)
            free(dst[c]);
        free(starts);
        free(at);
        return -1;
    }
    part w[MAX_WORKERS];
    for (int k = 0; k < nw; k++) {
        w[k] = (part){.thr = thread->p, .thr_size = thread->size, .thr_base = thread->base,
                      .next = starts + (size_t)k * (nt + 1),
                      .pos = at + (size_t)k * STEP_ROWS, .n_col = nc,
                      .lo = n * (size_t)k / (size_t)nw, .hi = n * (size_t)(k + 1) / (size_t)nw,
                      .backward = nw > 1 && k == nw - 1, .fn = move_rows};
        for (int c = 0; c < nc; c++) {
            memcpy(&w[k].src[c], cols[c].p, sizeof w[k].src[c]);
            w[k].dst[c] = dst[c];
            w[k].col_size[c] = cols[c].size;
        }
    }
    if (nw > 2) {
        /* The rows of each part but the last two, counted into the start
         * of the part after it, which then adds the starts before. */
        part cnt[MAX_WORKERS];
        for (int k = 0; k < nw - 2; k++)
            cnt[k] = (part){.thr = thread->p, .thr_size = thread->size,
                            .thr_base = thread->base, .next = w[k + 1].next,
                            .lo = w[k].lo, .hi = w[k].hi, .fn = count_rows};
        run_parts(cnt, nw - 2);
    }
    memcpy(w[0].next, first, (nt + 1) * sizeof *first);
    for (int k = 1; k < nw - 1; k++)
        for (size_t t = 0; t <= nt; t++)
            w[k].next[t] += w[k - 1].next[t];
    if (nw > 1)
        memcpy(w[nw - 1].next, first + 1, nt * sizeof *first);
    run_parts(w, nw);
    for (int c = 0; c < nc; c++) {
        free(w[0].src[c]);
        memcpy(cols[c].p, &dst[c], sizeof dst[c]);
    }
    free(starts);
    free(at);
    return 0;
}

int pc_group_samples_on(pc_profile *p, int threads)
{
    size_t n = p->sample.n, nt = p->thread.n;
    int nw = n < MIN_ROWS_SPLIT ? 1 : pc_thread_count(threads);
    if (nw > MAX_WORKERS)
        nw = MAX_WORKERS;
    /* The tally holds where it counted every row.  Rows it counted for a
     * thread beyond the table (none in a valid profile) would be missing
     * from the table's counts, so then grouping counts for itself. */
    int tally = p->sample.tally.on && p->sample.tally.upto == n;
    for (size_t t = nt; tally && t < p->sample.tally.cap; t++)
        tally = p->sample.tally.rows[t] == 0;
    size_t *first = realloc(p->sample.first, (nt + 1) * sizeof *first);
    uint8_t *unsorted = calloc(nt + 1, 1);
    if (first)
        p->sample.first = first;
    pc_icol *thread = &p->sample.thread;
    times tv = {p->sample.time, p->sample.time32, p->sample.time16, p->sample.time_base};
    int any = first && unsorted
                  ? place_rows(thread, &tv, n, nt, tally ? p->sample.tally.rows : NULL,
                               p->sample.tally.unsorted, p->sample.tally.cap, NULL, first,
                               unsorted, nw)
                  : -1;
    pc_tally_drop(p);
    if (any < 0) {
        free(unsorted);
        return not_grouped(p);
    }
    struct pc_col cols[PC_SAMPLE_COLS];
    int nc = pc_sample_cols(p, cols);
    /* Rows grouped already (one thread, or threads one after another)
     * stay where they are, and are only sorted where they need it. */
    if (!grouped(thread, n)) {
        /* The thread column does not move: it is written again from
         * first at the end.  With narrow times and columns the table is
         * 14 bytes a sample for a Perfetto trace, and so is the peak of
         * the moves; sorting a thread adds 5 bytes a row of it. */
        if (move_columns(thread, cols, nc, first, n, nt, nw) < 0) {
            free(unsorted);
            return not_grouped(p);
        }
        if (thread->size)
            fit(&thread->p, n * thread->size);
        p->sample.cap = n;
        p->sample.mapped = n;
    }
    /* Then the threads that came out of time order are sorted, in place,
     * their times side by side. */
    times kv = {p->sample.time, p->sample.time32, p->sample.time16, p->sample.time_base};
    int sorted = any ? sort_groups(&kv, NULL, cols, nc, first, unsorted, nt, nw) : 0;
    free(unsorted);
    if (sorted < 0)
        return group_failed(p);
    for (size_t t = 0; t < nt; t++)
        pc_icol_fill(thread, first[t], first[t + 1], t);
    return 0;
}

void pc_keep_samples(pc_profile *p, const uint8_t *keep)
{
    pc_tally_drop(p);
    size_t j = 0;
    for (size_t i = 0; i < p->sample.n; i++) {
        if (!keep[i])
            continue;
        pc_icol_copy(&p->sample.thread, j, i);
        pc_sample_copy_row(p, j, i);
        j++;
    }
    p->sample.n = j;
    if (p->sample.first)
        count_threads(p);
}

void pc_keep_heap(pc_profile *p, const uint8_t *keep)
{
    size_t j = 0;
    for (size_t i = 0; i < p->heap.n; i++) {
        if (!keep[i])
            continue;
        p->heap.thread[j] = p->heap.thread[i];
        p->heap.stack[j] = p->heap.stack[i];
        p->heap.heap[j] = p->heap.heap[i];
        p->heap.dump[j] = p->heap.dump[i];
        p->heap.time[j] = p->heap.time[i];
        p->heap.alloc[j] = p->heap.alloc[i];
        p->heap.freed[j] = p->heap.freed[i];
        p->heap.alloc_count[j] = p->heap.alloc_count[i];
        p->heap.free_count[j] = p->heap.free_count[i];
        j++;
    }
    p->heap.n = j;
}

void pc_keep_counters(pc_profile *p, const uint8_t *keep)
{
    size_t j = 0;
    for (size_t i = 0; i < p->counter.n; i++) {
        if (!keep[i])
            continue;
        p->counter.thread[j] = p->counter.thread[i];
        p->counter.time[j] = p->counter.time[i];
        p->counter.value[j] = p->counter.value[i];
        p->counter.event[j] = p->counter.event[i];
        p->counter.cpu[j] = p->counter.cpu[i];
        j++;
    }
    p->counter.n = j;
}

/* Thread order for output: by process, the main thread (tid == pid) first,
 * then busiest first, then by tid. */
static size_t samples_of(const pc_profile *p, uint32_t t)
{
    return p->sample.first ? p->sample.first[t + 1] - p->sample.first[t] : 0;
}

static int thread_cmp(const void *a, const void *b, const void *ctx)
{
    const pc_profile *p = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int64_t px = p->thread.pid[x], py = p->thread.pid[y];
    if (px != py)
        return px < py ? -1 : 1;
    int mx = p->thread.tid[x] == px, my = p->thread.tid[y] == py;
    if (mx != my)
        return my - mx;
    /* The CPUs of --percpu (pid -1) come in CPU order. */
    if (px == -1 && p->thread.tid[x] != p->thread.tid[y])
        return p->thread.tid[x] < p->thread.tid[y] ? -1 : 1;
    size_t sx = samples_of(p, x), sy = samples_of(p, y);
    if (sx != sy)
        return sx > sy ? -1 : 1;
    if (p->thread.tid[x] != p->thread.tid[y])
        return p->thread.tid[x] < p->thread.tid[y] ? -1 : 1;
    return (x > y) - (x < y);
}

void pc_thread_order(const pc_profile *p, uint32_t *order, uint32_t *main_of)
{
    size_t n = p->thread.n;
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    /* The comparator is total: the result does not depend on stability. */
    pc_sort_ctx(order, n, sizeof *order, thread_cmp, p);
    if (!main_of)
        return;
    for (size_t k = 0; k < n;) {
        size_t j = k;
        int64_t pid = p->thread.pid[order[k]];
        uint32_t main = p->thread.tid[order[k]] == pid ? order[k] : PC_NONE;
        while (j < n && p->thread.pid[order[j]] == pid)
            main_of[order[j++]] = main;
        k = j;
    }
}

int pc_remap_threads(pc_profile *p, const uint32_t *to)
{
    pc_tally_drop(p);
    size_t nt = p->thread.n;
    uint32_t *idx = malloc((nt + 1) * sizeof *idx);
    /* The threads kept are numbered from 0 again. */
    if (!idx || pc_sample_fit_threads(p, (uint32_t)nt) < 0) {
        free(idx);
        return -1;
    }
    /* Threads that stay are those mapped onto themselves, in order. */
    size_t kept = 0;
    for (size_t t = 0; t < nt; t++) {
        idx[t] = to[t] == t ? (uint32_t)kept : PC_NONE;
        if (to[t] == t) {
            p->thread.pid[kept] = p->thread.pid[t];
            p->thread.tid[kept] = p->thread.tid[t];
            p->thread.name[kept] = p->thread.name[t];
            p->thread.diff[kept] = p->thread.diff[t];
            kept++;
        }
    }
    /* Rows follow their thread to its new index, or go with it. */
#define REMAP_BY(table, get, set, ncols_move)                               \
    do {                                                                   \
        size_t j = 0;                                                      \
        for (size_t i = 0; i < p->table.n; i++) {                          \
            uint32_t t = get;                                              \
            uint32_t nt_ = to[t] == PC_NONE ? PC_NONE : idx[to[t]];        \
            if (nt_ == PC_NONE)                                            \
                continue;                                                  \
            set;                                                           \
            ncols_move;                                                    \
            j++;                                                           \
        }                                                                  \
        p->table.n = j;                                                    \
    } while (0)
#define REMAP(table, ncols_move)                                           \
    REMAP_BY(table, p->table.thread[i], p->table.thread[j] = nt_, ncols_move)
    REMAP_BY(sample, pc_sample_thread(p, i), pc_sample_set_thread(p, j, nt_),
             pc_sample_copy_row(p, j, i));
    REMAP(heap, (p->heap.stack[j] = p->heap.stack[i],
                 p->heap.heap[j] = p->heap.heap[i],
                 p->heap.dump[j] = p->heap.dump[i],
                 p->heap.time[j] = p->heap.time[i],
                 p->heap.alloc[j] = p->heap.alloc[i],
                 p->heap.freed[j] = p->heap.freed[i],
                 p->heap.alloc_count[j] = p->heap.alloc_count[i],
                 p->heap.free_count[j] = p->heap.free_count[i]));
    REMAP(counter, (p->counter.time[j] = p->counter.time[i],
                    p->counter.value[j] = p->counter.value[i],
                    p->counter.event[j] = p->counter.event[i],
                    p->counter.cpu[j] = p->counter.cpu[i]));
    REMAP(sw, (p->sw.time[j] = p->sw.time[i], p->sw.on[j] = p->sw.on[i]));
    REMAP(marker, (p->marker.name[j] = p->marker.name[i],
                   p->marker.s[j] = p->marker.s[i],
                   p->marker.start[j] = p->marker.start[i],
                   p->marker.end[j] = p->marker.end[i],
                   p->marker.a[j] = p->marker.a[i],
                   p->marker.b[j] = p->marker.b[i],
                   p->marker.type[j] = p->marker.type[i]));
#undef REMAP
#undef REMAP_BY
    p->thread.n = kept;
    free(idx);
    /* Merged threads interleave in time: sort again. */
    return p->sample.first ? pc_group_samples(p) : 0;
}

void pc_remap_stacks(pc_profile *p, const uint32_t *to)
{
    for (size_t i = 0; i < p->sample.n; i++)
        if (p->sample.stack[i] != PC_NONE)
            p->sample.stack[i] = to[p->sample.stack[i]];
    for (size_t i = 0; i < p->heap.n; i++)
        if (p->heap.stack[i] != PC_NONE)
            p->heap.stack[i] = to[p->heap.stack[i]];
}

int pc_drop_frames(pc_profile *p, const uint8_t *drop, int merge_jit)
{
    size_t n = p->stack.n;
    uint32_t *to = malloc((n + 1) * sizeof *to);
    if (!to)
        return -1;
    /* Parents come first, so each prefix is rebuilt before its children;
     * new stacks are added after the old ones, which stay unused. */
    for (size_t s = 0; s < n; s++) {
        uint32_t pre = p->stack.prefix[s], frame = p->stack.frame[s];
        uint32_t new_pre = pre == PC_NONE ? PC_NONE : to[pre];
        int merged = merge_jit && p->frame.exec[frame] == PC_EXEC_JIT &&
                     new_pre != PC_NONE &&
                     p->frame.func[p->stack.frame[new_pre]] == p->frame.func[frame];
        to[s] = drop[frame] || merged ? new_pre : pc_stack(p, new_pre, frame);
    }
    pc_remap_stacks(p, to);
    free(to);
    return p->oom ? -1 : 0;
}

int pc_order_switches(const pc_profile *p, uint32_t **perm, size_t **first)
{
    *perm = malloc((p->sw.n + 1) * sizeof **perm);
    *first = malloc((p->thread.n + 1) * sizeof **first);
    if (*perm && *first &&
        pc_order_by_thread(p->sw.thread, p->sw.time, p->sw.n, p->thread.n, *perm,
                           *first) == 0)
        return 0;
    free(*perm);
    free(*first);
    return -1;
}
