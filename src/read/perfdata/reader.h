/* The perf.data reader's state, shared by its record loop (perfdata.c)
 * and its model builder (names.c). */
#ifndef PROFCONV_PERFDATA_READER_H
#define PROFCONV_PERFDATA_READER_H

#include <stdarg.h>

#include "read/perfdata/perfdata.h"
#include "read/perfdata/unwind.h"

enum {
    PD_REC_SP_CALLCHAIN = 32775,
    PD_REC_SP_UNWINDING_RESULT = 32776,
    PD_REC_SP_DEBUG = 32778,
};

typedef struct pd_queue {
    struct qent *e;
    size_t n, ecap;
    uint8_t *arena, *spare;
    size_t used, cap, spare_cap;
    uint64_t seq, last_time, max_time, round_limit;
} pd_queue;

/* A raw frame: an address of a sample in a mapping, before names. */
typedef struct pd_raw {
    uint64_t ip, start, pgoff;
    uint32_t dso;
    uint8_t jit;
} pd_raw;

/* What simpleperf's unwinder said of a sample it could not unwind to the
 * end (its UNWINDING_RESULT record comes just before the sample). */
typedef struct pd_unwind_note {
    size_t sample;
    uint32_t raw;    /* the sample's raw stack */
    uint64_t raw_code, addr, stack_end;
} pd_unwind_note;

typedef struct pd_build {
    pc_profile *p;
    const pc_options *o;
    pc_input *in;
    pc_error *err;
    pd_header h;
    int simpleperf, ordered, unfinished;

    pd_attr *attrs;
    size_t nattrs, capattrs;
    uint64_t *ids;
    uint32_t *id_attr;
    size_t nids, capids;
    pc_htab id_idx;
    int id_pos;       /* byte offset of a sample's id, or -1 */
    size_t id_rpos;   /* bytes from the end of other records to their id */

    pd_maps maps;
    pc_thread_index model_threads;  /* the model's threads by (pid, tid) */
    pd_info info;
    pd_queue q;
    struct {
        uint8_t *buf;
        size_t used, cap;
        uint64_t off;
    } split;

    /* Raw frames and the stacks of them samples have until pd_finish. */
    struct {
        pd_raw *key;
        size_t n, cap;
        pc_htab idx;
    } raw;
    pc_stree rstack;
    uint64_t *ips;       /* one sample's addresses, leaf first */
    uint8_t *ips_kernel;
    size_t ips_cap;

    pd_unwind_note *notes;
    size_t nnotes, capnotes;
    int have_note;
    pd_unwind_note note;

    /* perf record -z: one zstd stream across the COMPRESSED records;
     * decompressed bytes of a record not yet whole wait in carry. */
    void *zstd;
    struct {
        uint8_t *buf;
        size_t used, cap;
    } unz;
    size_t compressed;

    pd_unwinder *unwinder;
    int unwinder_tried;
    pd_umap *umaps;
    size_t umaps_cap;
    size_t unwound, unwind_failed;

    uint64_t lost;
    int has_lost;
    size_t n_records, n_samples, unknown_records, empty_samples, no_tid;
    pc_skips skipped;
    pc_stop stop;
} pd_build;

int pd_fail(pd_build *b, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int pd_nomem(pd_build *b);

int pd_build_init(pd_build *b);
void pd_build_free(pd_build *b);

/* The model's thread of t, made when first needed. */
uint32_t pd_model_thread(pd_build *b, pd_thread *t);

int pd_on_sample(pd_build *b, const pd_attr *a, uint16_t misc, const pd_sample *s,
                 uint64_t off);
int pd_on_unwinding_result(pd_build *b, const uint8_t *d, size_t len, uint64_t off);
int pd_on_header_attr(pd_build *b, const uint8_t *d, size_t len, uint64_t off);

/* After the last record and feature: names, final stacks, events, meta. */
int pd_finish(pd_build *b);

#endif
