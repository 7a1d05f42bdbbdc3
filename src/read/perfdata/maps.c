/* Processes, threads and their mappings over time, as the mmap, comm,
 * fork and exit records tell them.  The mappings of a process are a
 * sorted array: a new mapping cuts away what it overlaps, as the kernel
 * does, so that a sample finds the file mapped at its address when it was
 * taken; frames name (dso, offset) pairs, never a mapping, so a mapping
 * replaced later cannot rename earlier samples. */
#include <stdlib.h>
#include <string.h>

#include "read/perfdata/perfdata.h"

int pd_maps_init(pd_maps *m, pc_profile *p)
{
    memset(m, 0, sizeof *m);
    m->p = p;
    uint32_t name = pc_intern_cstr(p, "unknown");
    if (name == PC_NONE)
        return -1;
    m->unknown_dso = pd_dso_find(m, name, -1, PD_DSO_UNKNOWN);
    return m->unknown_dso == PC_NONE ? -1 : 0;
}

void pd_maps_free(pd_maps *m)
{
    for (size_t i = 0; i < m->nprocs; i++)
        free(m->procs[i].maps.m);
    free(m->procs);
    pc_htab_free(&m->proc_idx);
    free(m->threads);
    pc_htab_free(&m->thread_idx);
    free(m->kernel.m);
    for (size_t i = 0; i < m->ndsos; i++)
        if (m->dsos[i].elf)
            pc_elf_close(m->dsos[i].elf);
    free(m->dsos);
    pc_htab_free(&m->dso_idx);
    free(m->syms);
}

uint32_t pd_dso_find(pd_maps *m, uint32_t path, int64_t pid, int type)
{
    pc_probe pr;
    if (pc_htab_reserve(&m->dso_idx, m->ndsos + 1) < 0)
        return PC_NONE;
    pc_probe_start(&m->dso_idx, pc_mix64((uint64_t)path << 32 ^ (uint64_t)pid), &pr);
    for (uint32_t i; (i = pc_probe_next(&m->dso_idx, &pr)) != PC_NONE;)
        if (m->dsos[i].path == path && m->dsos[i].pid == pid)
            return i;
    if (m->ndsos == m->capdsos) {
        size_t cap = m->capdsos ? m->capdsos * 2 : 64;
        pd_dso *d = realloc(m->dsos, cap * sizeof *d);
        if (!d)
            return PC_NONE;
        m->dsos = d;
        m->capdsos = cap;
    }
    uint32_t id = (uint32_t)m->ndsos++;
    pd_dso *d = &m->dsos[id];
    memset(d, 0, sizeof *d);
    d->path = path;
    d->pid = pid;
    d->type = (uint8_t)type;
    d->kernel = type == PD_DSO_KERNEL || type == PD_DSO_KERNEL_MODULE;
    d->off_min_vaddr = UINT64_MAX;
    pc_htab_insert(&m->dso_idx, &pr, id);
    return id;
}

pd_proc *pd_proc_get(pd_maps *m, int64_t pid)
{
    pc_probe pr;
    if (pc_htab_reserve(&m->proc_idx, m->nprocs + 1) < 0)
        return NULL;
    pc_probe_start(&m->proc_idx, pc_mix64((uint64_t)pid), &pr);
    for (uint32_t i; (i = pc_probe_next(&m->proc_idx, &pr)) != PC_NONE;)
        if (m->procs[i].pid == pid)
            return &m->procs[i];
    if (m->nprocs == m->capprocs) {
        size_t cap = m->capprocs ? m->capprocs * 2 : 16;
        pd_proc *n = realloc(m->procs, cap * sizeof *n);
        if (!n)
            return NULL;
        m->procs = n;
        m->capprocs = cap;
    }
    pd_proc *pr_ = &m->procs[m->nprocs];
    memset(pr_, 0, sizeof *pr_);
    pr_->pid = pid;
    pr_->comm = PC_NONE;
    pc_htab_insert(&m->proc_idx, &pr, (uint32_t)m->nprocs);
    m->nprocs++;
    return pr_;
}

pd_thread *pd_thread_get(pd_maps *m, int64_t pid, int64_t tid)
{
    pc_probe pr;
    if (pc_htab_reserve(&m->thread_idx, m->nthreads + 1) < 0)
        return NULL;
    pc_probe_start(&m->thread_idx, pc_mix64((uint64_t)tid), &pr);
    for (uint32_t i; (i = pc_probe_next(&m->thread_idx, &pr)) != PC_NONE;) {
        pd_thread *t = &m->threads[i];
        if (t->tid != tid)
            continue;
        if (t->pid == pid)
            return t;
        /* The tid was reused by another process: a new thread, whose
         * samples go to a thread of their own in the model. */
        t->pid = pid;
        t->model = PC_NONE;
        pd_proc *proc = pd_proc_get(m, pid);
        if (!proc)
            return NULL;
        t->comm = tid == pid ? PC_NONE : proc->comm;
        return t;
    }
    pd_proc *proc = pd_proc_get(m, pid);
    if (!proc)
        return NULL;
    if (m->nthreads == m->capthreads) {
        size_t cap = m->capthreads ? m->capthreads * 2 : 16;
        pd_thread *n = realloc(m->threads, cap * sizeof *n);
        if (!n)
            return NULL;
        m->threads = n;
        m->capthreads = cap;
    }
    pd_thread *t = &m->threads[m->nthreads];
    t->pid = pid;
    t->tid = tid;
    /* A thread is named after its process until it is named itself. */
    t->comm = tid == pid ? PC_NONE : proc->comm;
    t->model = PC_NONE;
    pc_htab_insert(&m->thread_idx, &pr, (uint32_t)m->nthreads);
    m->nthreads++;
    return t;
}

static int room(pd_mapset *s, size_t need)
{
    if (need <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap * 2 : 16;
    while (cap < need)
        cap *= 2;
    pd_map *n = realloc(s->m, cap * sizeof *n);
    if (!n)
        return -1;
    s->m = n;
    s->cap = cap;
    return 0;
}

int pd_map_insert(pd_maps *m, pd_mapset *s, uint64_t start, uint64_t len,
                  uint64_t pgoff, uint32_t dso, int jit)
{
    if (len == 0)
        return 0;
    uint64_t end = start + len < start ? UINT64_MAX : start + len;
    /* [i, j): the mappings that overlap [start, end). */
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->m[mid].end <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t i = lo, j = i;
    while (j < s->n && s->m[j].start < end)
        j++;
    pd_map left = {0}, right = {0};
    int has_left = i < j && s->m[i].start < start;
    int has_right = i < j && s->m[j - 1].end > end;
    if (has_left) {
        left = s->m[i];
        left.end = start;
    }
    if (has_right) {
        right = s->m[j - 1];
        right.pgoff += end - right.start;
        right.start = end;
    }
    size_t repl = (size_t)has_left + 1 + (size_t)has_right;
    size_t n = s->n - (j - i) + repl;
    if (room(s, n) < 0)
        return -1;
    memmove(s->m + i + repl, s->m + j, (s->n - j) * sizeof *s->m);
    size_t k = i;
    if (has_left)
        s->m[k++] = left;
    s->m[k++] = (pd_map){start, end, pgoff, dso, (uint32_t)jit};
    if (has_right)
        s->m[k] = right;
    s->n = n;
    s->gen = ++m->gen;
    return 0;
}

const pd_map *pd_map_find(const pd_mapset *s, uint64_t addr)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->m[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->m[lo].start <= addr ? &s->m[lo] : NULL;
}

int pd_proc_fork(pd_maps *m, int64_t pid, int64_t ppid)
{
    pd_proc *parent = pd_proc_get(m, ppid);
    if (!parent)
        return -1;
    size_t pi = (size_t)(parent - m->procs);
    pd_proc *child = pd_proc_get(m, pid);  /* may move the array */
    if (!child)
        return -1;
    parent = &m->procs[pi];
    if (child == parent)
        return 0;
    /* A pid seen before is a new process now: it starts with its
     * parent's mappings alone, not what the old one left. */
    child->maps.n = 0;
    child->maps.gen = ++m->gen;
    child->comm = parent->comm;
    for (size_t k = 0; k < parent->maps.n; k++) {
        pd_map mp = m->procs[pi].maps.m[k];
        if (pd_map_insert(m, &child->maps, mp.start, mp.end - mp.start, mp.pgoff, mp.dso,
                          (int)mp.jit) < 0)
            return -1;
    }
    return 0;
}
