/* Unwinding the user stacks of samples recorded with --call-graph dwarf:
 * perf copied each sample's user registers and the top of its user stack;
 * the callers are found from the binaries' unwind tables (.eh_frame,
 * .debug_frame), read with elfutils' libdwfl.
 *
 * One unwinder per conversion; it is not shared between threads. */
#ifndef PROFCONV_PERFDATA_UNWIND_H
#define PROFCONV_PERFDATA_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "symbol/elf.h"

/* The machine the recording was made on (the perf.data arch feature). */
enum pd_arch {
    PD_ARCH_UNKNOWN = 0,
    PD_ARCH_X86_64,
    PD_ARCH_AARCH64,
    PD_ARCH_ARM,
    PD_ARCH_X86,
};

/* "x86_64", "aarch64", "arm64", "armv7l", "i686"... as uname -m says. */
int pd_arch_of(const char *uname_machine);

/* A mapping of the sampled process at the sample's time. */
typedef struct pd_umap {
    uint64_t start, end, pgoff;
    const char *path;            /* as recorded */
    const uint8_t *build_id;     /* raw bytes, or NULL */
    size_t build_id_len;
} pd_umap;

typedef struct pd_unwinder pd_unwinder;

/* NULL when out of memory or arch is not supported. */
pd_unwinder *pd_unwinder_new(const pc_symfind *where, int arch);

/* Unwinds one sample of process pid.
 *
 * regs: the sample's user registers as perf recorded them: abi is
 * PERF_SAMPLE_REGS_ABI_* (1: 32-bit, 2: 64-bit), mask the attribute's
 * sample_regs_user (perf's register numbering for arch), regs the values
 * of the set bits in bit order, n_regs of them.  stack: the copied user
 * stack, starting at the stack pointer's value, stack_len valid bytes
 * (perf's dyn_size).
 *
 * maps: the process's mappings, sorted by start, not overlapping;
 * maps_gen changes whenever they change for this pid, so that whatever
 * is built from them may be kept between samples of the same (pid,
 * maps_gen).
 *
 * Writes at most max addresses to pcs, innermost first: the sample's pc,
 * then each caller's return address as found on the stack (not adjusted
 * to the call instruction).  Returns how many, 0 when the registers do
 * not even give a pc.  Unwinding stops quietly where the tables or the
 * copied stack end; running out of memory gives what was found. */
size_t pd_unwind(pd_unwinder *u, int64_t pid, uint64_t maps_gen,
                 const pd_umap *maps, size_t n_maps, uint64_t abi, uint64_t mask,
                 const uint64_t *regs, size_t n_regs, const uint8_t *stack,
                 size_t stack_len, uint64_t *pcs, size_t max);

void pd_unwinder_free(pd_unwinder *u);

#endif
