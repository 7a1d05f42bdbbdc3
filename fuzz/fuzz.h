/* Fuzz targets: one function per reader or parser, fed arbitrary bytes.
 *
 * A target returns normally on any input.  A crash, a hang, a sanitizer
 * report, or an abort() on a broken promise (an error message that is not
 * one line naming an offset, a message or log line holding a byte a
 * terminal would act on, output that differs between two runs or between
 * one and two threads, a Firefox file the validators refuse) is a
 * finding.
 *
 * Built for libFuzzer (`make fuzz-smoke`; PC_FUZZ_LIBFUZZER defined), each
 * target file also defines LLVMFuzzerTestOneInput; AFL++ uses the same
 * files through its libFuzzer driver (`make fuzz-afl`).  The test suite
 * calls the functions directly over the saved corpus and past crashes
 * (`make fuzz-replay`, part of `make check`).
 */
#ifndef PROFCONV_FUZZ_H
#define PROFCONV_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "profconv.h"

int fuzz_simpleperf(const uint8_t *data, size_t size);
int fuzz_perfetto(const uint8_t *data, size_t size);
int fuzz_perfscript(const uint8_t *data, size_t size);
int fuzz_gzip(const uint8_t *data, size_t size);
int fuzz_proguard(const uint8_t *data, size_t size);
int fuzz_filter(const uint8_t *data, size_t size);
int fuzz_roundtrip(const uint8_t *data, size_t size);
int fuzz_options(const uint8_t *data, size_t size);
int fuzz_gzipwrap(const uint8_t *data, size_t size);
int fuzz_perfetto_compressed(const uint8_t *data, size_t size);
int fuzz_perfdata(const uint8_t *data, size_t size);

/* Shared by the targets (fuzz_common.c). */

/* Converts size bytes with threads (pc_options.threads) and filter_file
 * (may be NULL); checks the error's form on failure.  Returns the profile
 * or NULL. */
pc_profile *fuzz_convert(const uint8_t *data, size_t size, int threads,
                         const char *filter_file);

/* Writes p in format (with gzip when gz), twice, and aborts unless both
 * outputs are the same bytes; Firefox outputs must pass the validators.
 * Returns the output (malloc'd; *len its size), or NULL on failure. */
unsigned char *fuzz_write(const pc_profile *p, int format, int gz, size_t *len);
/* The same in a container (enum pc_container); a JSLB file is not
 * validated. */
unsigned char *fuzz_write_in(const pc_profile *p, int format, int gz, int container,
                             size_t *len);
/* Converts data with one thread and with two; aborts unless both give the
 * same profile (the same processed JSON) or both fail; then writes the
 * Gecko format and, with pprof, pprof too. */
void fuzz_same_both_ways(const uint8_t *data, size_t size, int pprof);

/* Aborts unless msg (an error message or a log line; what says which)
 * holds only what a terminal shows as text: no byte below 0x20, no 0x7f,
 * no C1 control, nothing but valid UTF-8, whatever the input. */
void fuzz_check_message(const char *what, const char *msg);

/* A pc_log_fn that checks every line with fuzz_check_message. */
void fuzz_check_log(void *ctx, int level, const char *message);

/* Sets the allocation budget of what follows to bytes (0: none) and starts
 * counting afresh; returns 1 where allocations are wrapped (the fuzz
 * builds), 0 where the budget does nothing (budget.c). */
int fuzz_budget(size_t bytes);

/* The budget a share of inputs gets, chosen from their bytes so that a run
 * repeats: 0 for most, else from 16 KiB to 2 MiB. */
size_t fuzz_budget_of(const uint8_t *data, size_t size);

#ifdef PC_FUZZ_LIBFUZZER
#define PC_FUZZ_TARGET(fn)                                                  \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);           \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)            \
    {                                                                       \
        return fn(data, size);                                              \
    }
#else
#define PC_FUZZ_TARGET(fn)
#endif

#endif
