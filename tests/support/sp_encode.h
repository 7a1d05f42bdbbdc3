/* Encoder for simpleperf report-sample files, for the project's own test
 * fixtures and benchmark inputs.  It writes what simpleperf's protobuf
 * writer writes (cmd_report_sample.proto), record by record, and can also
 * frame arbitrary bytes so tests can build malformed files. */
#ifndef PROFCONV_TESTS_SP_ENCODE_H
#define PROFCONV_TESTS_SP_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "base/pbwire.h"

typedef struct spe_frame {
    uint64_t vaddr;
    uint32_t file;
    int32_t sym;    /* -1: unknown symbol */
    int exec;       /* execution_type, or -1 to leave it out */
} spe_frame;

typedef struct spe_unwind {
    uint32_t raw_error_code, error_code;
    uint64_t error_addr;
} spe_unwind;

typedef struct spe {
    pb_buf out;     /* the file so far */
    pb_buf rec;     /* scratch for one record */
} spe;

/* Starts a file: magic and version (1 unless overridden with spe_begin_v). */
void spe_begin(spe *e);
void spe_begin_v(spe *e, uint16_t version);

void spe_meta(spe *e, const char *const *events, size_t n_events,
              const char *app_package, const char *app_type,
              const char *sdk, const char *build_type, int trace_offcpu);
/* chain is leaf first, as simpleperf writes it. */
void spe_sample(spe *e, uint64_t time, int32_t tid, uint64_t event_count,
                uint32_t event_type_id, const spe_frame *chain, size_t n,
                const spe_unwind *unwind);
void spe_lost(spe *e, uint64_t sample_count, uint64_t lost_count);
void spe_file(spe *e, uint32_t id, const char *path, const char *const *syms,
              size_t n_syms);
void spe_thread(spe *e, uint32_t tid, uint32_t pid, const char *name);
void spe_switch(spe *e, int on, uint64_t time, uint32_t tid);
/* Frames len arbitrary bytes as one record. */
void spe_raw_record(spe *e, const void *data, size_t len);
/* Writes the zero-size terminator. */
void spe_end(spe *e);

void spe_free(spe *e);

#endif
