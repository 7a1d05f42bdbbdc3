/* Encoder for perf.data files (magic "PERFILE2"), as Linux `perf record`
 * and Android simpleperf write them, for the project's own test fixtures.
 * It knows nothing of the reader in src/read/perfdata/: a fixture written
 * from the format's description checks the reader, not the reader itself.
 *
 * Use: pde_begin(), pde_attr() for each event, then records and features in
 * any order, then pde_finish() for the bytes.  The file is laid out at
 * finish as perf lays it out: header, id arrays, attr section, data
 * section, feature index and feature data.
 *
 * Non-sample records get the sample_id_all trailer automatically when the
 * attr e->sid_attr (0 unless changed) has PDE_F_SAMPLE_ID_ALL, its fields
 * taken from e->sid (a sticky value the caller edits between records);
 * records that name a pid and tid themselves (mmap, mmap2, comm, fork,
 * exit) put those in the trailer, as the kernel does, and an id of 0 stands
 * for the attr's first id.
 *
 * With PDE_BIG_ENDIAN every integer is written big-endian, as perf writes
 * on a big-endian machine: the magic reads "2ELIFREP" and the attr's flag
 * bits come in the big-endian bitfield order (each byte's bits reversed).
 * Allocation failure is latched and reported by pde_finish(). */
#ifndef PROFCONV_TESTS_PD_ENCODE_H
#define PROFCONV_TESTS_PD_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "base/pbwire.h"

/* sample_type bits. */
enum {
    PDE_S_IP = 1u << 0,
    PDE_S_TID = 1u << 1,
    PDE_S_TIME = 1u << 2,
    PDE_S_ADDR = 1u << 3,
    PDE_S_READ = 1u << 4,
    PDE_S_CALLCHAIN = 1u << 5,
    PDE_S_ID = 1u << 6,
    PDE_S_CPU = 1u << 7,
    PDE_S_PERIOD = 1u << 8,
    PDE_S_STREAM_ID = 1u << 9,
    PDE_S_RAW = 1u << 10,
    PDE_S_BRANCH_STACK = 1u << 11,
    PDE_S_REGS_USER = 1u << 12,
    PDE_S_STACK_USER = 1u << 13,
    PDE_S_WEIGHT = 1u << 14,
    PDE_S_DATA_SRC = 1u << 15,
    PDE_S_IDENTIFIER = 1u << 16,
    PDE_S_TRANSACTION = 1u << 17,
};

/* perf_event_attr flag bits (the u64 after read_format). */
enum {
    PDE_F_DISABLED = 1u << 0,
    PDE_F_INHERIT = 1u << 1,
    PDE_F_EXCLUDE_KERNEL = 1u << 5,
    PDE_F_MMAP = 1u << 8,
    PDE_F_COMM = 1u << 9,
    PDE_F_FREQ = 1u << 10,
    PDE_F_ENABLE_ON_EXEC = 1u << 12,
    PDE_F_TASK = 1u << 13,
    PDE_F_SAMPLE_ID_ALL = 1u << 18,
    PDE_F_MMAP2 = 1u << 23,
    PDE_F_COMM_EXEC = 1u << 24,
    PDE_F_USE_CLOCKID = 1u << 25,
    PDE_F_CONTEXT_SWITCH = 1u << 26,
};

/* Record types. */
enum {
    PDE_MMAP = 1,
    PDE_LOST = 2,
    PDE_COMM = 3,
    PDE_EXIT = 4,
    PDE_FORK = 7,
    PDE_SAMPLE = 9,
    PDE_MMAP2 = 10,
    PDE_LOST_SAMPLES = 13,
    PDE_SWITCH = 14,
    PDE_SWITCH_CPU_WIDE = 15,
    PDE_FINISHED_ROUND = 68,
};

/* Header misc bits. */
enum {
    PDE_MISC_KERNEL = 1,
    PDE_MISC_USER = 2,
    PDE_MISC_COMM_EXEC = 1u << 13,
    PDE_MISC_SWITCH_OUT = 1u << 13,
    PDE_MISC_MMAP_BUILD_ID = 1u << 14,
};

/* Feature bits. */
enum {
    PDE_FEAT_BUILD_ID = 2,
    PDE_FEAT_HOSTNAME = 3,
    PDE_FEAT_OSRELEASE = 4,
    PDE_FEAT_VERSION = 5,
    PDE_FEAT_ARCH = 6,
    PDE_FEAT_NRCPUS = 7,
    PDE_FEAT_CMDLINE = 11,
    PDE_FEAT_EVENT_DESC = 12,
    PDE_FEAT_SP_FILE = 128,
    PDE_FEAT_SP_META_INFO = 129,
    PDE_FEAT_SP_FILE2 = 132,
};

#define PDE_CONTEXT_KERNEL ((uint64_t)-128)
#define PDE_CONTEXT_USER ((uint64_t)-512)

#define PDE_BIG_ENDIAN 1
#define PDE_MAX_ATTRS 16
/* attr.size by default: perf_event_attr up to sig_data, what perf 5.13 to
 * 6.2 writes; perf refuses an attr larger than its own, so the 136 bytes
 * up to config3 (PDE_ATTR_SIZE_MAX) are for newer readers only. */
#define PDE_ATTR_SIZE 128
#define PDE_ATTR_SIZE_MAX 136

/* One event.  Zero fields are zero in the file. */
typedef struct pde_attr_spec {
    uint32_t type;           /* 1: software */
    uint32_t size;           /* attr.size; 0: PDE_ATTR_SIZE; larger than
                                PDE_ATTR_SIZE_MAX: zero-padded */
    uint64_t config;         /* 0 with type 1: cpu-clock */
    uint64_t sample_period;  /* or the frequency with PDE_F_FREQ */
    uint64_t sample_type, read_format, flags;
    uint64_t branch_sample_type;
    uint64_t sample_regs_user;
    uint32_t sample_stack_user;
    int32_t clockid;
    uint64_t sample_regs_intr;
    uint16_t sample_max_stack;
    const uint64_t *ids;     /* copied */
    size_t n_ids;
    const char *name;        /* for EVENT_DESC; NULL: "" */
} pde_attr_spec;

/* Values of a SAMPLE record; only the fields of the attr's sample_type are
 * written.  Arrays are written as given. */
typedef struct pde_sample {
    uint64_t identifier, ip;
    uint32_t pid, tid;
    uint64_t time, addr, id, stream_id;
    uint32_t cpu, cpu_res;
    uint64_t period;
    const uint64_t *read;      /* READ: the u64s read_format lays out */
    size_t n_read;
    const uint64_t *callchain; /* leaf first, with PDE_CONTEXT_* markers */
    size_t n_callchain;
    const void *raw;           /* RAW: padded so u32 size + data is 8-aligned */
    uint32_t raw_size;
    const uint64_t *branches;  /* BRANCH_STACK: n_branches {from, to, flags} */
    size_t n_branches;
    uint64_t regs_abi;         /* REGS_USER: regs only when abi != 0 */
    const uint64_t *regs;      /* popcount(sample_regs_user) of them */
    const void *stack;         /* STACK_USER: stack_size bytes */
    uint64_t stack_size, stack_dyn_size;
    uint64_t weight, data_src, transaction;
} pde_sample;

/* The sample_id_all trailer's values (see above). */
typedef struct pde_sid {
    uint32_t pid, tid;
    uint64_t time, id, stream_id;
    uint32_t cpu;
    uint64_t identifier;
} pde_sid;

typedef struct pde_attr_slot {
    pde_attr_spec spec;
    uint64_t *ids;
    char *name;
} pde_attr_slot;

typedef struct pde {
    int big;                 /* PDE_BIG_ENDIAN given to pde_begin */
    int failed;              /* allocation failure or a record over 64 KiB */
    uint64_t attr_size;      /* header's attr_size; 0: first attr's size + 16 */
    size_t sid_attr;         /* attr whose sample_type shapes trailers */
    pde_sid sid;             /* trailer values for the next records */
    pde_attr_slot attrs[PDE_MAX_ATTRS];
    size_t n_attrs;
    pb_buf data;             /* the data section so far */
    pb_buf rec;              /* scratch for one record body */
    pb_buf feat[256];
    uint8_t have_feat[256];
} pde;

/* Starts a file; opts: 0 or PDE_BIG_ENDIAN. */
void pde_begin(pde *e, int opts);

/* Adds an event; returns its index or -1 when PDE_MAX_ATTRS are taken. */
int pde_attr(pde *e, const pde_attr_spec *a);

/* ---- Records (appended to the data section in call order) ---- */

/* A SAMPLE of attr (index); misc: cpumode, e.g. PDE_MISC_USER. */
void pde_sample_rec(pde *e, size_t attr, uint16_t misc, const pde_sample *s);
void pde_mmap(pde *e, uint16_t misc, uint32_t pid, uint32_t tid, uint64_t addr,
              uint64_t len, uint64_t pgoff, const char *filename);
/* MMAP2 with device and inode. */
void pde_mmap2(pde *e, uint16_t misc, uint32_t pid, uint32_t tid, uint64_t addr,
               uint64_t len, uint64_t pgoff, uint32_t maj, uint32_t min,
               uint64_t ino, uint64_t ino_generation, uint32_t prot,
               uint32_t flags, const char *filename);
/* MMAP2 with a build id of bid_size (<= 20) bytes: sets misc bit 14. */
void pde_mmap2_build_id(pde *e, uint16_t misc, uint32_t pid, uint32_t tid,
                        uint64_t addr, uint64_t len, uint64_t pgoff,
                        const uint8_t *build_id, uint8_t bid_size,
                        uint32_t prot, uint32_t flags, const char *filename);
void pde_comm(pde *e, uint32_t pid, uint32_t tid, const char *comm, int exec);
void pde_fork(pde *e, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
              uint64_t time);
void pde_exit(pde *e, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
              uint64_t time);
void pde_lost(pde *e, uint64_t id, uint64_t lost);
void pde_lost_samples(pde *e, uint64_t lost);
void pde_switch(pde *e, int out);
void pde_switch_cpu_wide(pde *e, int out, uint32_t next_prev_pid,
                         uint32_t next_prev_tid);
/* FINISHED_ROUND never carries a trailer. */
void pde_finished_round(pde *e);
/* A record of any type: header from type and misc (size 8 + len), then
 * body verbatim, no trailer. */
void pde_raw_record(pde *e, uint32_t type, uint16_t misc, const void *body,
                    size_t len);
/* Arbitrary bytes into the data section, for broken framing. */
void pde_raw_data(pde *e, const void *data, size_t len);

/* ---- Features (the string ones replace, the list ones append) ---- */

/* One more BUILD_ID entry; misc gets bit 15 (the size byte is valid). */
void pde_feat_build_id(pde *e, uint16_t misc, int32_t pid,
                       const uint8_t *build_id, uint8_t bid_size,
                       const char *filename);
void pde_feat_hostname(pde *e, const char *s);
void pde_feat_osrelease(pde *e, const char *s);
void pde_feat_version(pde *e, const char *s);
void pde_feat_arch(pde *e, const char *s);
void pde_feat_nrcpus(pde *e, uint32_t available, uint32_t online);
void pde_feat_cmdline(pde *e, const char *const *argv, size_t argc);
/* From the attrs added so far (their names and ids). */
void pde_feat_event_desc(pde *e);

typedef struct pde_sym {
    uint64_t vaddr;
    uint32_t len;
    const char *name;
} pde_sym;

/* One simpleperf dso.  extra: for type 3 (dex) the dex file offsets, for
 * type 2 (ELF) extra[0] is file_offset_of_min_vaddr, for type 1 (kernel
 * module) extra[0] is memory_offset_of_min_vaddr; unused for others. */
typedef struct pde_sp_file {
    const char *path;
    uint32_t type;
    uint64_t min_vaddr;
    const pde_sym *syms;
    size_t n_syms;
    const uint64_t *extra;
    size_t n_extra;
} pde_sp_file;

/* Simpleperf FILE (128) and FILE2 (132): one more dso each call. */
void pde_feat_sp_file(pde *e, const pde_sp_file *f);
void pde_feat_sp_file2(pde *e, const pde_sp_file *f);
/* Simpleperf META_INFO (129): one more key/value pair. */
void pde_feat_sp_meta(pde *e, const char *key, const char *value);
/* Sets feature bit to len arbitrary bytes (replacing what it held). */
void pde_feat_raw(pde *e, unsigned bit, const void *data, size_t len);

/* ---- The file ---- */

/* Lays the file out and returns it (caller frees with free()), *len its
 * size; NULL on allocation failure.  e is freed either way. */
uint8_t *pde_finish(pde *e, size_t *len);
/* pde_finish into a file; returns 0 or -1. */
int pde_finish_file(pde *e, const char *path);
/* Frees an encoder without finishing. */
void pde_free(pde *e);

#endif
