/* simpleperf report-sample files: read with one thread and with two, the
 * same profile (or the same error) both ways, then written as processed
 * and Gecko JSON; and record by record with and without the decoder's
 * memo of caller paths, the same records and the same unknown fields. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "io/source.h"
#include "read/simpleperf/simpleperf.h"

static void broken(const char *detail)
{
    fprintf(stderr, "fuzz: simpleperf memo: %s\n", detail);
    abort();
}

static int same_entry(const sp_entry *a, const sp_entry *b)
{
    return a->vaddr == b->vaddr && a->file_id == b->file_id && a->symbol_id == b->symbol_id &&
           a->exec == b->exec && a->has_exec == b->has_exec;
}

/* The records with the memo (b) against those without (a). */
static void same_with_memo(const uint8_t *data, size_t size)
{
    pc_input *in[2] = {NULL, NULL};
    sp_reader r[2];
    pc_error err[2];
    int open[2] = {0, 0};
    sp_entry *full = NULL;
    size_t cap = 0;
    for (int m = 0; m < 2; m++) {
        if (pc_input_open_memory(&in[m], data, size, "fuzz", &err[m]) != PC_OK)
            goto out;
        if (sp_open(&r[m], in[m], &err[m]) != PC_OK)
            goto out;
        open[m] = 1;
        r[m].memo = m;
        r[m].keep_going = 1;
    }
    for (;;) {
        sp_record a, b;
        int ga = sp_next(&r[0], &a, &err[0]), gb = sp_next(&r[1], &b, &err[1]);
        if (ga != gb)
            broken("one reader ended where the other did not");
        if (ga <= 0) {
            if (ga < 0 && strcmp(err[0].message, err[1].message) != 0)
                broken("different errors");
            break;
        }
        if (a.kind != b.kind)
            broken("records of different kinds");
        if (a.kind != SP_SAMPLE)
            continue;
        if (a.sample.n_lazy || a.sample.n_chain != b.sample.n_chain ||
            a.sample.time != b.sample.time || a.sample.error_code != b.sample.error_code ||
            a.sample.raw_len != b.sample.raw_len || a.sample.path != SP_NO_PATH ||
            (a.sample.raw && memcmp(a.sample.raw, b.sample.raw, a.sample.raw_len) != 0))
            broken("samples that differ");
        const sp_entry *chain = b.sample.chain;
        if (b.sample.n_lazy) {
            if (b.sample.n_lazy + 1 != b.sample.n_chain)
                broken("a lazy run that is not the whole chain past the leaf");
            if (b.sample.n_chain > cap) {
                free(full);
                cap = b.sample.n_chain;
                if (!(full = malloc(cap * sizeof *full)))
                    goto out;
            }
            if (sp_decode_lazy(&b, full) < 0)
                broken("a lazy run that does not decode again");
            chain = full;
        }
        for (size_t i = 0; i < a.sample.n_chain; i++)
            if (!same_entry(&a.sample.chain[i], &chain[i]))
                broken("callchain entries that differ");
    }
    if (r[0].unknown.count != r[1].unknown.count || r[0].unknown.record != r[1].unknown.record ||
        r[0].unknown.offset != r[1].unknown.offset ||
        r[0].skipped.n != r[1].skipped.n)
        broken("unknown fields or damaged records counted differently");
out:
    free(full);
    for (int m = 0; m < 2; m++) {
        if (open[m])
            sp_close(&r[m]);
        if (in[m])
            pc_input_close(in[m]);
    }
}

int fuzz_simpleperf(const uint8_t *data, size_t size)
{
    if (sp_detect(data, size)) {
        fuzz_same_both_ways(data, size, 0);
        same_with_memo(data, size);
    }
    return 0;
}

PC_FUZZ_TARGET(fuzz_simpleperf)
