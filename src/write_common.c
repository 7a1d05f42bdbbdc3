/* What the Gecko and processed Firefox writers share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "write.h"

void pc_merged_free(pc_merged *m)
{
    free(m->gf_of_frame);
    free(m->gf_func);
    free(m->gf_cat);
    free(m->gf_sub);
    free(m->gs_of_stack);
    free(m->gs_prefix);
    free(m->gs_frame);
    memset(m, 0, sizeof *m);
}

int pc_merge(const pc_profile *p, pc_merged *m)
{
    pc_htab idx = {0};
    size_t nf = p->frame.n, ns = p->stack.n;
    int ok = 1;

    memset(m, 0, sizeof *m);
    m->gf_of_frame = malloc((nf + 1) * sizeof *m->gf_of_frame);
    m->gf_func = malloc((nf + 1) * sizeof *m->gf_func);
    m->gf_cat = malloc(nf + 1);
    m->gf_sub = malloc(nf + 1);
    m->gs_of_stack = malloc((ns + 1) * sizeof *m->gs_of_stack);
    if (!m->gf_of_frame || !m->gf_func || !m->gf_cat || !m->gf_sub ||
        !m->gs_of_stack || pc_htab_reserve(&idx, nf) < 0)
        ok = 0;
    for (size_t f = 0; ok && f < nf; f++) {
        pc_probe pr;
        uint32_t func = p->frame.func[f], g;
        uint8_t cat = p->frame.cat[f];
        uint8_t sub = (uint8_t)pc_subcategory(cat, p->frame.exec[f]);
        pc_probe_start(&idx, pc_mix64((uint64_t)func << 16 | (uint64_t)cat << 8 | sub), &pr);
        while ((g = pc_probe_next(&idx, &pr)) != PC_NONE)
            if (m->gf_func[g] == func && m->gf_cat[g] == cat && m->gf_sub[g] == sub)
                break;
        if (g == PC_NONE) {
            g = (uint32_t)m->n_gf++;
            m->gf_func[g] = func;
            m->gf_cat[g] = cat;
            m->gf_sub[g] = sub;
            pc_htab_insert(&idx, &pr, g);
        }
        m->gf_of_frame[f] = g;
    }
    pc_htab_free(&idx);
    /* Model stacks come parents first, so each prefix is mapped already. */
    pc_stree tree;
    pc_stree_init(&tree);
    for (size_t s = 0; ok && s < ns; s++) {
        uint32_t pre = p->stack.prefix[s];
        uint32_t gp = pre == PC_NONE ? PC_NONE : m->gs_of_stack[pre];
        uint32_t g = pc_stree_intern(&tree, gp, m->gf_of_frame[p->stack.frame[s]]);
        if (g == PC_NONE)
            ok = 0;
        m->gs_of_stack[s] = g;
    }
    /* The tree's node columns are the merged stacks; the rest goes. */
    m->gs_prefix = tree.prefix;
    m->gs_frame = tree.frame;
    m->n_gs = tree.n;
    tree.prefix = tree.frame = NULL;
    if (ok && (!m->gs_prefix || !m->gs_frame)) {
        /* No stacks at all: empty columns still, for the writers. */
        m->gs_prefix = malloc(sizeof *m->gs_prefix);
        m->gs_frame = malloc(sizeof *m->gs_frame);
        ok = m->gs_prefix && m->gs_frame;
    }
    pc_stree_free(&tree);
    if (!ok)
        pc_merged_free(m);
    return ok ? 0 : -1;
}

void pc_jw_str_id(jw *w, const pc_profile *p, uint32_t id)
{
    jw_str(w, pc_str(&p->str, id), pc_str_len(&p->str, id));
}

void pc_jw_categories(jw *w)
{
    jw_arr(w);
    for (int c = 0; c < PC_CAT_COUNT; c++) {
        jw_obj(w);
        jw_key(w, "name");
        jw_cstr(w, pc_categories[c].name);
        jw_key(w, "color");
        jw_cstr(w, pc_categories[c].color);
        jw_key(w, "subcategories");
        jw_arr(w);
        for (int k = 0; k < pc_categories[c].n_subcategories; k++)
            jw_cstr(w, pc_categories[c].subcategories[k]);
        jw_arr_end(w);
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

void pc_jw_misc(jw *w, const pc_profile *p)
{
    char lost[128] = "";
    uint64_t n = p->meta.lost_count, total = p->meta.lost_sample_count + n;
    if (p->meta.has_lost && n)
        snprintf(lost, sizeof lost, "%s%llu of %llu samples lost while recording (%.1f%%)",
                 p->meta.build_type != PC_NONE ? ", " : "", (unsigned long long)n,
                 (unsigned long long)total, 100.0 * (double)n / (double)total);
    if (p->meta.build_type == PC_NONE && !lost[0])
        return;
    jw_key(w, "misc");
    jw_str_begin(w);
    if (p->meta.build_type != PC_NONE) {
        jw_str_part(w, pc_str(&p->str, p->meta.build_type),
                    pc_str_len(&p->str, p->meta.build_type));
        jw_str_part(w, " build", 6);
    }
    jw_str_part(w, lost, strlen(lost));
    jw_str_end(w);
}

void pc_jw_product(jw *w, const pc_profile *p)
{
    if (p->meta.app_package != PC_NONE)
        pc_jw_str_id(w, p, p->meta.app_package);
    else
        jw_cstr(w, p->meta.source != PC_NONE ? pc_str(&p->str, p->meta.source)
                                             : "profile");
}

int pc_thread_span(const pc_profile *p, uint64_t **first, uint64_t **last)
{
    size_t nt = p->thread.n;
    *first = malloc((nt + 1) * sizeof **first);
    *last = calloc(nt + 1, sizeof **last);
    if (!*first || !*last) {
        free(*first);
        free(*last);
        return -1;
    }
    for (size_t t = 0; t < nt; t++)
        (*first)[t] = UINT64_MAX;
    for (size_t i = 0; i < p->sample.n; i++) {
        uint32_t t = p->sample.thread[i];
        if (p->sample.time[i] < (*first)[t])
            (*first)[t] = p->sample.time[i];
        if (p->sample.time[i] > (*last)[t])
            (*last)[t] = p->sample.time[i];
    }
    for (size_t i = 0; i < p->marker.n; i++) {
        uint32_t t = p->marker.thread[i];
        if (p->marker.start[i] < (*first)[t])
            (*first)[t] = p->marker.start[i];
        if (p->marker.end[i] > (*last)[t])
            (*last)[t] = p->marker.end[i];
    }
    return 0;
}

uint32_t pc_process_label(const pc_profile *p, uint32_t t, uint32_t main)
{
    uint32_t name = pc_process_name(p, p->thread.pid[t]);
    if (name == PC_NONE && main != PC_NONE)
        name = p->thread.name[main];
    return name;
}

uint64_t pc_heap_value(const pc_profile *p, size_t i)
{
    switch (p->meta.heap_measure) {
    case PC_HEAP_ALLOCATED: return p->heap.alloc[i];
    case PC_HEAP_FREED: return p->heap.freed[i];
    }
    return p->heap.alloc[i] > p->heap.freed[i] ? p->heap.alloc[i] - p->heap.freed[i] : 0;
}

uint64_t pc_heap_count(const pc_profile *p, size_t i)
{
    switch (p->meta.heap_measure) {
    case PC_HEAP_ALLOCATED: return p->heap.alloc_count[i];
    case PC_HEAP_FREED: return p->heap.free_count[i];
    }
    return p->heap.alloc_count[i] > p->heap.free_count[i]
               ? p->heap.alloc_count[i] - p->heap.free_count[i] : 0;
}

int pc_is_time_event(const pc_profile *p, size_t e)
{
    return e < p->event.n && p->event.unit[e] == PC_UNIT_NS;
}

static int cmp_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

void pc_sort_ids(uint32_t *ids, size_t n, const uint32_t *mark, size_t universe)
{
    if (n * 8 < universe) {
        pc_qsort(ids, n, sizeof *ids, cmp_id);
        return;
    }
    size_t k = 0;
    for (size_t g = 0; g < universe && k < n; g++)
        if (mark[g] != PC_NONE)
            ids[k++] = (uint32_t)g;
}

void pc_sort_stamped(uint32_t *ids, size_t n, const uint32_t *stamp_of, uint32_t stamp,
                     size_t universe)
{
    if (n * 8 < universe) {
        pc_qsort(ids, n, sizeof *ids, cmp_id);
        return;
    }
    size_t k = 0;
    for (size_t g = 0; g < universe && k < n; g++)
        if (stamp_of[g] == stamp)
            ids[k++] = (uint32_t)g;
}
