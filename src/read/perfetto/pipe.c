/* traced_perf samples finished on a second thread: the stack-tree steps
 * and the sample rows.
 *
 * A sample with a new callstack costs two halves of about equal weight:
 * finding the profile frame of each frame iid, in the sequence's interned
 * tables that the packets being read keep changing, and stepping down the
 * stack tree with those frames.  The reading thread does the first half
 * and queues the frames; this file's thread does the second and adds the
 * sample row, in the order the samples came, so the stack tree and the
 * sample table are the ones a single thread makes, for any --threads.
 *
 * The reading thread does not wait for a new callstack's stack: it queues
 * a ticket with the frames, and keeps the ticket in the callstack's
 * entry (pf_entry.res), so that its next samples queue the ticket alone.
 * The second thread turns tickets into stacks as it meets them, in
 * order, in a table of its own.  Anything else that touches the stack
 * tree or the sample table (other families of packets, a sample with an
 * unwinding error whose producer gave it no ERROR root to show it under,
 * or whose callstack has a stack id rather than a ticket, the end of the
 * trace) first waits until the queue is empty (pf_pipe_drain); a ticket
 * then reads as its stack.
 *
 * Work goes over in batches of a few thousand samples, so the threads
 * meet once a batch, not once a sample.  Where the queue has to be
 * emptied often (other packets or unwinding errors every few samples),
 * the two threads would only take turns: the second one is then stopped
 * and the rest read on one. */
#include "read/perfetto/reader.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashtab.h"
#include "base/thread.h"
#include "io/source.h"

/* Samples read on one thread before the second starts: a small trace
 * is done before a thread would pay for itself. */
#define START_AFTER 1024
/* A batch is handed over once it holds this many words. */
#define BATCH_WORDS 32768
/* Batches in flight: the reader fills one while the other is applied,
 * with slack for the two to run unevenly. */
#define N_SLOT 4

/* Queue emptyings with work waiting, and the samples per emptying below
 * which the second thread is stopped. */
#define DRAINS_SEEN 64
#define MIN_PER_DRAIN 256

/* Caller paths (a chain's frames but its leaf) of at least MEMO_MIN
 * frames are remembered, up to MEMO_FRAMES frames in all; every
 * MEMO_WINDOW lookups, the memo goes where fewer than one in
 * MEMO_FEW_HITS found their path. */
#define MEMO_MIN 4
#define MEMO_FRAMES (4u << 20)
#define MEMO_WINDOW 65536
#define MEMO_FEW_HITS 4

/* Tickets are res values (pf_entry) with the top bit set (pf_pipe_is_ticket), so
 * while the pipe runs, stack ids stay below it. */
#define TICKET_BIT 0x80000000u
#define TICKET_MAX (PF_UNRESOLVED - TICKET_BIT - 1)

/* A queued sample: kind and frame count, thread, time (two words),
 * weight (two words), event and CPU, stack or ticket; then the frames,
 * root first, for a chain. */
enum { KNOWN, CHAIN, CHAIN_TICKET };
#define HEADER_WORDS 8

/* Fields the two threads write, each for every sample, sit this far
 * apart, so that no cache line holds both: a line written by one thread
 * and read by the other moves between the cores at each write, and made
 * the reading thread wait at every sample. */
#define APART 64

typedef struct batch {
    uint32_t *w;
    size_t n, cap;
    char apart[APART];
} batch;

struct pf_pipe {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t work, room;   /* for the second thread; for the reader */
    batch slot[N_SLOT];
    /* Batches handed over and applied, counted from the start; slot
     * (count % N_SLOT).  The reader owns slot (submitted % N_SLOT) while
     * fewer than N_SLOT are unapplied. */
    size_t submitted, applied;
    int running, stop;
    int failed;      /* out of memory on the second thread */
    char apart_reader[APART];
    /* The reader's: the next ticket; samples queued in all and since the
     * last emptying; emptyings that found work; the table's count before
     * the samples queued since, for progress; the input's own progress
     * callback, put back when the thread stops. */
    uint32_t next_ticket;
    uint8_t *error_root;     /* per ticket: its stack's root is an ERROR frame */
    size_t cap_error_root;
    uint64_t queued, queued_now, drains;
    size_t base;
    src_progress_fn report;
    void *report_ctx;
    char apart_applier[APART];
    /* The second thread's: the stack of each ticket. */
    uint32_t *tstack;
    size_t n_tick, cap_tick;
    /* And the caller paths of chains met before, with their stacks.  New
     * callstacks of traced_perf mostly repeat a caller path under a new
     * leaf (a callstack's id is new in each packet that interns it):
     * 483,000 new callstacks of 40 frames came from 8,000 paths.  A path
     * found costs a hash and a compare of its frames, where stepping down
     * the stack tree from the root costs a step a frame, and this thread
     * held the reading thread back: 1M samples, 47 % new callstacks. */
    struct {
        pc_htab idx;
        uint32_t *frames;            /* every path's frames, one after another */
        size_t n_frames, cap_frames;
        size_t *at;                  /* per path: its frames' start */
        uint32_t *len, *stack;       /* per path: its frame count, its stack */
        size_t n, cap;
        size_t looked, found;        /* in the current window */
        int off;
    } memo;
    pc_profile *p;
    char apart_end[APART];
};

static void memo_free(struct pf_pipe *q)
{
    pc_htab_free(&q->memo.idx);
    free(q->memo.frames);
    free(q->memo.at);
    free(q->memo.len);
    free(q->memo.stack);
    memset(&q->memo, 0, sizeof q->memo);
}

/* The stack of the n frames f (root first) if the memo holds them, else
 * PC_NONE with pr designating where they would go; the memo is then
 * ready for one more path (memo_add), or off (no memory for it). */
static uint32_t memo_find(struct pf_pipe *q, const uint32_t *f, uint32_t n, pc_probe *pr)
{
    if (pc_htab_reserve(&q->memo.idx, q->memo.n + 1) < 0 ||
        (q->memo.n == q->memo.cap &&
         pc_grow_cols(&q->memo.cap, q->memo.n + 1,
                      (struct pc_col[]){PC_COL(q->memo.at), PC_COL(q->memo.len),
                                        PC_COL(q->memo.stack)}, 3) < 0)) {
        memo_free(q);
        q->memo.off = 1;
        return PC_NONE;
    }
    q->memo.looked++;
    pc_probe_start(&q->memo.idx, pc_hash_bytes(f, (size_t)n * sizeof *f), pr);
    for (uint32_t id; (id = pc_probe_next(&q->memo.idx, pr)) != PC_NONE;)
        if (q->memo.len[id] == n &&
            memcmp(q->memo.frames + q->memo.at[id], f, (size_t)n * sizeof *f) == 0) {
            q->memo.found++;
            return q->memo.stack[id];
        }
    return PC_NONE;
}

/* Remembers the n frames f as the path of stack, in the slot memo_find
 * designated; past MEMO_FRAMES frames in all, paths are only looked up. */
static void memo_add(struct pf_pipe *q, const uint32_t *f, uint32_t n, uint32_t stack,
                     const pc_probe *pr)
{
    if (q->memo.n_frames + n > MEMO_FRAMES ||
        pc_grow(&q->memo.frames, &q->memo.cap_frames, q->memo.n_frames + n,
                sizeof *q->memo.frames, 4096) < 0)
        return;
    size_t id = q->memo.n++;
    memcpy(q->memo.frames + q->memo.n_frames, f, (size_t)n * sizeof *f);
    q->memo.at[id] = q->memo.n_frames;
    q->memo.len[id] = n;
    q->memo.stack[id] = stack;
    q->memo.n_frames += n;
    pc_htab_insert(&q->memo.idx, pr, (uint32_t)id);
}

/* The stack of the chain's n frames (root first), through the memo of its
 * caller path where that pays; PC_NONE out of memory. */
static uint32_t chain_stack(struct pf_pipe *q, const uint32_t *f, uint32_t n)
{
    pc_stree *t = &q->p->stack;
    uint32_t stack = PC_NONE, k = 0, caller = n - 1;
    /* Set by memo_find before memo_add reads it; given a value for the
     * compilers that cannot see that. */
    pc_probe pr = {0};
    int look = n > MEMO_MIN && !q->memo.off;
    if (look && (stack = memo_find(q, f, caller, &pr)) != PC_NONE)
        k = caller;
    look = look && !q->memo.off && k == 0;
    for (; k < n; k++) {
        if ((stack = pc_stree_intern(t, stack, f[k])) == PC_NONE)
            return PC_NONE;
        if (look && k + 1 == caller)
            memo_add(q, f, caller, stack, &pr);
    }
    if (q->memo.looked == MEMO_WINDOW) {
        if (q->memo.found * MEMO_FEW_HITS < q->memo.looked) {
            memo_free(q);
            q->memo.off = 1;
        }
        q->memo.looked = q->memo.found = 0;
    }
    return stack;
}

/* Applies one batch; 0, or -1 out of memory or a stack id past the
 * tickets' range. */
static int apply(struct pf_pipe *q, const batch *b)
{
    pc_profile *p = q->p;
    /* The batch stays as it is while it is applied. */
    const size_t n_words = b->n;
    for (size_t at = 0; at < n_words;) {
        const uint32_t *w = b->w + at;
        uint32_t kind = w[0] & 3, n = w[0] >> 2, stack = PC_NONE;
        if (kind == KNOWN) {
            stack = w[7];
            if (stack != PC_NONE && (stack & TICKET_BIT)) {
                uint32_t k = stack & ~TICKET_BIT;
                if (k >= q->n_tick)
                    return -1;
                stack = q->tstack[k];
            }
        } else {
            if (n && ((stack = chain_stack(q, w + HEADER_WORDS, n)) == PC_NONE ||
                      stack >= TICKET_BIT))
                return -1;
            if (kind == CHAIN_TICKET) {
                if (w[7] != (TICKET_BIT | q->n_tick))
                    return -1;
                if (pc_grow(&q->tstack, &q->cap_tick, q->n_tick + 1, sizeof *q->tstack,
                            4096) < 0)
                    return -1;
                q->tstack[q->n_tick++] = stack;
            }
        }
        uint64_t time = (uint64_t)w[3] << 32 | w[2];
        uint64_t weight = (uint64_t)w[5] << 32 | w[4];
        if (pc_push_sample(p, w[1], time, stack, (int64_t)weight, (uint16_t)(w[6] >> 16),
                           (uint16_t)w[6]) < 0)
            return -1;
        at += HEADER_WORDS + (kind == KNOWN ? 0 : n);
    }
    return 0;
}

static void *applier(void *arg)
{
    struct pf_pipe *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (q->applied == q->submitted && !q->stop)
            pthread_cond_wait(&q->work, &q->mu);
        if (q->applied == q->submitted)
            break;
        batch *b = &q->slot[q->applied % N_SLOT];
        int failed = q->failed;
        pthread_mutex_unlock(&q->mu);
        /* After a failure the rest is only taken off the queue. */
        if (!failed && apply(q, b) < 0)
            failed = 1;
        pthread_mutex_lock(&q->mu);
        q->failed = failed;
        q->applied++;
        pthread_cond_signal(&q->room);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* Progress, told on the reading thread in place of pc_convert's relay
 * (the one that sets a progress callback), which reads the sample table:
 * while samples are queued, the table is the second thread's, and the
 * count is what it held before them plus the samples queued, which is
 * what it will hold. */
static void relay_progress(void *ctx, uint64_t done, uint64_t total)
{
    pf_reader *r = ctx;
    struct pf_pipe *q = r->pipe;
    pc_progress pr = {done, total, q->queued_now ? q->base + q->queued_now : r->p->sample.n};
    r->o->progress(r->o->progress_ctx, &pr);
}

/* Starts the pipe once enough samples have come; 1 when it runs. */
static int start(pf_reader *r)
{
    if (r->pipe_state != PF_PIPE_WAITING || ++r->pipe_count < START_AFTER)
        return r->pipe_state == PF_PIPE_RUNNING;
    r->pipe_state = PF_PIPE_OFF;
    if (pc_thread_count(r->o->threads) < 2 || r->p->stack.n >= TICKET_BIT)
        return 0;
    struct pf_pipe *q = calloc(1, sizeof *q);
    if (!q)
        return 0;
    q->p = r->p;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->room, NULL);
    if (pc_thread_start(&q->th, applier, q) != 0) {
        pthread_mutex_destroy(&q->mu);
        pthread_cond_destroy(&q->work);
        pthread_cond_destroy(&q->room);
        free(q);
        return 0;
    }
    q->running = 1;
    r->pipe = q;
    r->pipe_state = PF_PIPE_RUNNING;
    pf_progress_get(r, &q->report, &q->report_ctx);
    if (q->report && r->o->progress)
        pf_progress_set(r, relay_progress, r);
    return 1;
}

/* Hands the reader's batch over and waits for the next slot to be free. */
static void submit(struct pf_pipe *q)
{
    pthread_mutex_lock(&q->mu);
    q->submitted++;
    pthread_cond_signal(&q->work);
    while (q->submitted - q->applied >= N_SLOT)
        pthread_cond_wait(&q->room, &q->mu);
    pthread_mutex_unlock(&q->mu);
    q->slot[q->submitted % N_SLOT].n = 0;
}

int pf_pipe_sample(pf_reader *r, pf_seq *s, uint64_t iid, const pf_row *row)
{
    if (!start(r))
        return 0;
    struct pf_pipe *q = r->pipe;
    pf_interned *t;
    pf_entry *e = pf_callstack_find(s, iid, &t);
    if (!e)
        return 0;
    uint32_t done = e->res, kind = KNOWN, i = e->val;
    size_t n = 0;
    if (done == PC_NONE)
        return 0;
    if (done == PF_UNRESOLVED) {
        /* An empty callstack, and a ticket past the last, are left to
         * the reading thread. */
        if (t->callstacks[i].n_frames == 0 || q->next_ticket > TICKET_MAX)
            return 0;
        /* A failed unwinding whose producer gave its stack an ERROR root
         * (traced_perf does) is a sample like any other; one without,
         * whose root the reading thread adds, is left to it. */
        if (row->unwind_error) {
            int root = pf_callstack_error_root(r, s, t, i, iid);
            if (root <= 0)
                return root;
        }
        int partial;
        if (pf_callstack_frames(r, s, t, i, iid, &n, &partial) < 0)
            return -1;
        kind = partial ? CHAIN : CHAIN_TICKET;
    } else if (row->unwind_error && (!pf_pipe_is_ticket(r, done) ||
                                     !q->error_root[done & ~TICKET_BIT])) {
        /* A stack made before the pipe, or one without an ERROR root. */
        return 0;
    }
    batch *b = &q->slot[q->submitted % N_SLOT];
    if (pc_grow(&b->w, &b->cap, b->n + HEADER_WORDS + n, sizeof *b->w, BATCH_WORDS + 1024) < 0 ||
        (kind == CHAIN_TICKET && pc_grow(&q->error_root, &q->cap_error_root, q->next_ticket + 1,
                                         1, 4096) < 0)) {
        r->p->oom = 1;
        return -1;
    }
    /* Tickets are numbered in the order they are queued: the second
     * thread's table of them is in that order. */
    if (kind == CHAIN) {
        /* Resolved again each time, as pf_stack_of does. */
        r->st.partial_stacks++;
    } else if (kind == CHAIN_TICKET) {
        q->error_root[q->next_ticket] = (uint8_t)pf_frame_is_error(r, r->chain[0]);
        done = TICKET_BIT | q->next_ticket++;
        pf_interned_callstack_done(t, e, done);
    }
    /* Nothing queued since the last emptying: the second thread is idle,
     * and the table's count is what comes before this sample. */
    if (!q->queued_now)
        q->base = r->p->sample.n;
    uint32_t *w = b->w + b->n;
    w[0] = (uint32_t)n << 2 | kind;
    w[1] = row->thread;
    w[2] = (uint32_t)row->time;
    w[3] = (uint32_t)(row->time >> 32);
    w[4] = (uint32_t)(uint64_t)row->weight;
    w[5] = (uint32_t)((uint64_t)row->weight >> 32);
    w[6] = (uint32_t)row->event << 16 | row->cpu;
    w[7] = done;
    if (n)
        memcpy(w + HEADER_WORDS, r->chain, n * sizeof *w);
    b->n += HEADER_WORDS + n;
    q->queued++;
    q->queued_now++;
    if (b->n >= BATCH_WORDS)
        submit(q);
    return 1;
}

/* Stops the second thread once what was handed over is applied; the pipe
 * stays, for its tickets. */
static void stop(pf_reader *r)
{
    struct pf_pipe *q = r->pipe;
    pthread_mutex_lock(&q->mu);
    q->stop = 1;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->th, NULL);
    /* Only the second thread reads the memo. */
    memo_free(q);
    q->running = 0;
    r->pipe_state = PF_PIPE_OFF;
    if (q->report && r->o->progress)
        pf_progress_set(r, q->report, q->report_ctx);
}

int pf_pipe_drain(pf_reader *r)
{
    struct pf_pipe *q = r->pipe;
    if (!q)
        return 0;
    if (q->running && q->queued_now) {
        if (q->slot[q->submitted % N_SLOT].n)
            submit(q);
        pthread_mutex_lock(&q->mu);
        while (q->applied != q->submitted)
            pthread_cond_wait(&q->room, &q->mu);
        pthread_mutex_unlock(&q->mu);
        q->queued_now = 0;
        if (++q->drains >= DRAINS_SEEN && q->queued < q->drains * MIN_PER_DRAIN)
            stop(r);
    }
    /* Stack ids past the tickets' range would read as tickets. */
    if (q->failed || r->p->stack.n >= TICKET_BIT) {
        r->p->oom = 1;
        return -1;
    }
    return 0;
}

int pf_pipe_is_ticket(const pf_reader *r, uint32_t v)
{
    return r->pipe && v != PC_NONE && v != PF_UNRESOLVED && (v & TICKET_BIT);
}

uint32_t pf_pipe_ticket_stack(const pf_reader *r, uint32_t v)
{
    uint32_t k = v & ~TICKET_BIT;
    return k < r->pipe->n_tick ? r->pipe->tstack[k] : PC_NONE;
}

int pf_pipe_end(pf_reader *r)
{
    struct pf_pipe *q = r->pipe;
    if (!q)
        return 0;
    int st = pf_pipe_drain(r);
    if (q->running)
        stop(r);
    return st;
}

void pf_pipe_free(pf_reader *r)
{
    struct pf_pipe *q = r->pipe;
    if (!q)
        return;
    for (int i = 0; i < N_SLOT; i++)
        free(q->slot[i].w);
    free(q->tstack);
    free(q->error_root);
    memo_free(q);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->room);
    free(q);
    r->pipe = NULL;
}
