/* Heap profile dumps: which of each process and heap to show.
 *
 * heapprofd's values are cumulative since profiling began, so one dump
 * is the whole story up to its time: the dump shown (the last, or the one
 * --heap-dump names) is what formats with one value per callsite write.
 * The dumps before it stay, for the Firefox Profiler's timeline, which
 * shows how the heap got there (write_processed.c).  With a base dump
 * (--heap-dump A..B), the dump shown holds what each callsite added since
 * the base instead, and stands alone. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "transform/transform.h"

/* Rows by thread, heap, time, dump. */
static int cmp_row(const void *a, const void *b, const void *ctx)
{
    const pc_profile *p = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (p->heap.thread[x] != p->heap.thread[y])
        return p->heap.thread[x] < p->heap.thread[y] ? -1 : 1;
    if (p->heap.heap[x] != p->heap.heap[y])
        return p->heap.heap[x] < p->heap.heap[y] ? -1 : 1;
    if (p->heap.time[x] != p->heap.time[y])
        return p->heap.time[x] < p->heap.time[y] ? -1 : 1;
    if (p->heap.dump[x] != p->heap.dump[y])
        return p->heap.dump[x] < p->heap.dump[y] ? -1 : 1;
    return (x > y) - (x < y);
}

static int cmp_stack(const void *a, const void *b, const void *ctx)
{
    const pc_profile *p = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t sx = p->heap.stack[x], sy = p->heap.stack[y];
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return (x > y) - (x < y);
}

static uint64_t minus(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

static uint64_t plus(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Takes base's rows (rows[0..nb)) from the shown dump's (rows[nb..n)),
 * callsite by callsite; counters are cumulative, so each difference is
 * what happened between the two.  A callsite may have several rows (a
 * transform such as --remove-method merges stacks): its rows are summed
 * on each side, the first shown row takes the difference, the others 0. */
static void subtract(pc_profile *p, uint32_t *rows, size_t nb, size_t n)
{
    pc_sort_ctx(rows, nb, sizeof *rows, cmp_stack, p);
    pc_sort_ctx(rows + nb, n - nb, sizeof *rows, cmp_stack, p);
    size_t i = 0;
    for (size_t j = nb; j < n;) {
        uint32_t r = rows[j], st = p->heap.stack[r];
        uint64_t a = 0, f = 0, ac = 0, fc = 0;
        size_t k = j;
        for (; k < n && p->heap.stack[rows[k]] == st; k++) {
            uint32_t x = rows[k];
            a = plus(a, p->heap.alloc[x]);
            f = plus(f, p->heap.freed[x]);
            ac = plus(ac, p->heap.alloc_count[x]);
            fc = plus(fc, p->heap.free_count[x]);
            if (k > j)
                p->heap.alloc[x] = p->heap.freed[x] = p->heap.alloc_count[x] =
                    p->heap.free_count[x] = 0;
        }
        while (i < nb && p->heap.stack[rows[i]] < st)
            i++;
        for (; i < nb && p->heap.stack[rows[i]] == st; i++) {
            uint32_t b = rows[i];
            a = minus(a, p->heap.alloc[b]);
            f = minus(f, p->heap.freed[b]);
            ac = minus(ac, p->heap.alloc_count[b]);
            fc = minus(fc, p->heap.free_count[b]);
        }
        p->heap.alloc[r] = a;
        p->heap.freed[r] = f;
        p->heap.alloc_count[r] = ac;
        p->heap.free_count[r] = fc;
        j = k;
    }
}

/* A dump where everything was freed shows nothing unreleased; unless the
 * caller asked for unreleased bytes, what was allocated shows instead,
 * as the input holds nothing else to look at. */
static void fall_back(pc_profile *p, const pc_options *o)
{
    if (o->heap_measure != PC_HEAP_DEFAULT)
        return;
    uint64_t alloc = 0;
    int unreleased = 0;
    for (size_t i = 0; i < p->heap.n; i++) {
        if (!pc_heap_shown(p, i))
            continue;
        unreleased |= p->heap.alloc[i] != p->heap.freed[i];
        alloc = alloc > UINT64_MAX - p->heap.alloc[i] ? UINT64_MAX : alloc + p->heap.alloc[i];
    }
    if (unreleased || !alloc)
        return;
    p->meta.heap_measure = PC_HEAP_ALLOCATED;
    pc_log(o, PC_LOG_NOTICE, "the heap dumps shown hold no unreleased bytes (all %" PRIu64
           " bytes allocated were freed by then): showing the allocated bytes "
           "(options.heap_measure chooses)", alloc);
}

int pc_select_heap(pc_profile *p, const pc_options *o, pc_error *err)
{
    size_t n = p->heap.n;
    p->meta.heap_measure = o->heap_measure == PC_HEAP_DEFAULT ? PC_HEAP_UNRELEASED
                                                              : o->heap_measure;
    if (!n)
        return PC_OK;
    uint32_t *order = malloc(n * sizeof *order);
    uint8_t *kept = calloc(p->heap.n_dumps + 1, 1);
    uint8_t *shown = calloc(p->heap.n_dumps + 1, 1);
    uint8_t *keep = malloc(n);
    if (!order || !kept || !shown || !keep) {
        free(order);
        free(kept);
        free(shown);
        free(keep);
        return pc_fail(err, PC_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    pc_sort_runs_ctx(order, n, sizeof *order, cmp_row, p);
    uint64_t start = p->meta.first_time;
    for (size_t i = 0; i < n;) {
        uint32_t t = p->heap.thread[order[i]], h = p->heap.heap[order[i]];
        size_t j = i, dumps = 0, want = (size_t)(o->heap_dump > 0 ? o->heap_dump : 0);
        size_t base = (size_t)(o->heap_dump_base > 0 ? o->heap_dump_base : 0);
        uint32_t pick = PC_NONE, last = PC_NONE, base_dump = PC_NONE;
        uint64_t pick_time = 0;
        size_t pick_no = 0;
        while (j < n && p->heap.thread[order[j]] == t && p->heap.heap[order[j]] == h) {
            uint32_t d = p->heap.dump[order[j]];
            if (d != last) {
                dumps++;
                last = d;
                if (!want || dumps <= want) {
                    pick = d;
                    pick_no = dumps;
                    pick_time = p->heap.time[order[j]];
                    kept[d] = !base;
                }
                if (dumps == base)
                    base_dump = d;
            }
            j++;
        }
        shown[pick] = 1;
        kept[pick] = 1;
        if (base && (base_dump == PC_NONE || base >= pick_no)) {
            base_dump = PC_NONE;
            pc_log(o, PC_LOG_WARN, "options.heap_dump_base %zu: process %" PRId64 " has no "
                   "dump %zu before the one shown of heap %s; its dump is shown whole", base,
                   p->thread.pid[t], base, pc_str(&p->str, h));
        } else if (base) {
            /* The base's rows first, then the shown dump's: i..j is
             * sorted by time and dump. */
            size_t nb = 0, ns = 0;
            for (size_t k = i; k < j; k++)
                nb += p->heap.dump[order[k]] == base_dump;
            uint32_t *rows = order + i;  /* reordered in place: the group is done with */
            uint32_t *tmp = malloc((j - i + 1) * sizeof *tmp);
            if (!tmp) {
                free(order);
                free(kept);
                free(shown);
                free(keep);
                return pc_fail(err, PC_ENOMEM, "out of memory");
            }
            for (size_t k = i; k < j; k++) {
                uint32_t d = p->heap.dump[order[k]];
                if (d == base_dump)
                    tmp[ns++] = order[k];
            }
            for (size_t k = i; k < j; k++)
                if (p->heap.dump[order[k]] == pick)
                    tmp[ns++] = order[k];
            memcpy(rows, tmp, ns * sizeof *tmp);
            free(tmp);
            subtract(p, rows, nb, ns);
        }
        if (want > dumps)
            pc_log(o, PC_LOG_WARN, "options.heap_dump %zu: process %" PRId64 " has %zu dump(s) "
                   "of heap %s; showing its last", want, p->thread.pid[t], dumps,
                   pc_str(&p->str, h));
        pc_log(o, PC_LOG_INFO, "heap %s of process %" PRId64 ": %s bytes at dump %zu of %zu "
               "(%.3f s into the profile)%s", pc_str(&p->str, h), p->thread.pid[t],
               pc_heap_measure_name(p), want && want <= dumps ? want : dumps, dumps,
               (double)(pick_time - start) / 1e9,
               base_dump != PC_NONE && base_dump != pick ? ", less the base dump" : "");
        i = j;
    }
    for (size_t i = 0; i < n; i++)
        keep[i] = kept[p->heap.dump[i]];
    pc_keep_heap(p, keep);
    free(p->heap.shown_dump);
    p->heap.shown_dump = shown;
    fall_back(p, o);
    free(order);
    free(kept);
    free(keep);
    return PC_OK;
}
