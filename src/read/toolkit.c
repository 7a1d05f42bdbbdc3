/* What every reader needs (see read.h): thread lookup and naming, and
 * the counts of what keep_going skipped. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "read/read.h"

static uint64_t thread_key(const pc_thread_index *ix, int64_t pid, int64_t tid)
{
    return ix->by_tid ? pc_mix64((uint64_t)tid)
                      : pc_mix64((uint64_t)tid * 0x9e3779b97f4a7c15ULL ^ (uint64_t)pid);
}

static uint32_t thread_find(pc_thread_index *ix, pc_profile *p, int64_t pid, int64_t tid);

uint32_t pc_thread_find(pc_thread_index *ix, pc_profile *p, int64_t pid, int64_t tid)
{
    struct pc_thread_hot *h = &ix->hot[(uint64_t)tid & 7];
    if (h->id1 && h->tid == tid && (ix->by_tid || h->pid == pid))
        return h->id1 - 1;
    uint32_t id = thread_find(ix, p, pid, tid);
    if (id != PC_NONE)
        *h = (struct pc_thread_hot){pid, tid, id + 1};
    return id;
}

static uint32_t thread_find(pc_thread_index *ix, pc_profile *p, int64_t pid, int64_t tid)
{
    pc_probe pr;
    if (pc_htab_reserve(&ix->idx, p->thread.n + 1) < 0) {
        p->oom = 1;
        return PC_NONE;
    }
    pc_probe_start(&ix->idx, thread_key(ix, pid, tid), &pr);
    for (uint32_t id; (id = pc_probe_next(&ix->idx, &pr)) != PC_NONE;)
        if (p->thread.tid[id] == tid && (ix->by_tid || p->thread.pid[id] == pid))
            return id;
    uint32_t id = pc_add_thread(p, pid, tid, PC_NONE);
    if (id != PC_NONE)
        pc_htab_insert(&ix->idx, &pr, id);
    return id;
}

void pc_thread_index_free(pc_thread_index *ix)
{
    pc_htab_free(&ix->idx);
    memset(ix->hot, 0, sizeof ix->hot);
}

void pc_name_unnamed_threads(pc_profile *p)
{
    for (size_t t = 0; t < p->thread.n; t++) {
        if (p->thread.name[t] != PC_NONE)
            continue;
        char name[48];
        snprintf(name, sizeof name, "thread %" PRId64, p->thread.tid[t]);
        p->thread.name[t] = pc_intern_cstr(p, name);
    }
}

void pc_skips_add(pc_skips *s, const pc_error *err)
{
    if (!s->n++)
        s->first = *err;
}

void pc_skips_report(const pc_skips *s, const pc_options *o, const char *what)
{
    if (s->n)
        pc_log(o, PC_LOG_WARN, "%zu %s (the first: %s)", s->n, what, s->first.message);
}

void pc_stop_report(const pc_stop *s, const pc_options *o, size_t n, const char *units)
{
    if (s->stopped)
        pc_log(o, PC_LOG_WARN, "reading stopped early, %zu %s in: %s", n, units,
               s->why.message);
}
