/* The perf.data reader: recordings as Linux perf and Android simpleperf
 * write them (magic PERFILE2).
 *
 * A recording is a header, the event attributes with their ids, a data
 * section of records (samples, mmaps, comms, forks, lost counts, context
 * switches...) and feature sections after it (build ids, the command line,
 * event names, and simpleperf's own: the symbol tables of the files the
 * samples hit, written on the device, and its meta info).
 *
 * Reading streams: records are read in order and samples kept as stacks
 * of raw frames, a frame being a place in a mapped file (its dso and its
 * offset there).  Names come last (names.c), once the features at the end
 * of the file have told the symbol tables; that is also where the
 * callchains get what simpleperf's report-sample does to them, so that a
 * recording and the report-sample file made from it give one profile.
 *
 *   header.c    the file header, attributes, event names
 *   features.c  the feature sections
 *   maps.c      processes, threads, their mappings over time, dsos
 *   sample.c    the fields of a sample record
 *   perfdata.c  the record loop and the model
 *   names.c     dso symbols, frame names, the final stacks
 */
#ifndef PROFCONV_PERFDATA_H
#define PROFCONV_PERFDATA_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashtab.h"
#include "model/model.h"
#include "profconv.h"
#include "read/read.h"
#include "symbol/elf.h"

#define PD_MAGIC_LEN 8

int pd_detect(const uint8_t *data, size_t len);
int pc_read_perfdata(pc_input *in, pc_profile *p, const pc_options *o, pc_error *err);

/* ---- Little-endian loads; the reader refuses big-endian files. ---- */

static inline uint16_t pd_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t pd_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t pd_u64(const uint8_t *p)
{
    return (uint64_t)pd_u32(p) | (uint64_t)pd_u32(p + 4) << 32;
}

/* ---- perf_event_attr, as far as the reader needs it ---- */

enum {
    PD_SAMPLE_IP = 1u << 0,
    PD_SAMPLE_TID = 1u << 1,
    PD_SAMPLE_TIME = 1u << 2,
    PD_SAMPLE_ADDR = 1u << 3,
    PD_SAMPLE_READ = 1u << 4,
    PD_SAMPLE_CALLCHAIN = 1u << 5,
    PD_SAMPLE_ID = 1u << 6,
    PD_SAMPLE_CPU = 1u << 7,
    PD_SAMPLE_PERIOD = 1u << 8,
    PD_SAMPLE_STREAM_ID = 1u << 9,
    PD_SAMPLE_RAW = 1u << 10,
    PD_SAMPLE_BRANCH_STACK = 1u << 11,
    PD_SAMPLE_REGS_USER = 1u << 12,
    PD_SAMPLE_STACK_USER = 1u << 13,
    PD_SAMPLE_IDENTIFIER = 1u << 16,
};

typedef struct pd_attr {
    uint32_t type;
    uint64_t config;
    uint64_t period;          /* sample_period, or the frequency with freq */
    uint64_t sample_type, read_format, flags;
    uint64_t branch_sample_type;
    uint64_t regs_user;       /* sample_regs_user */
    uint32_t name;            /* string id, or PC_NONE until named */
    uint32_t event;           /* the model's event index */
} pd_attr;

#define PD_ATTR_FREQ (1ull << 10)
#define PD_ATTR_EXCLUDE_USER (1ull << 4)
#define PD_ATTR_EXCLUDE_KERNEL (1ull << 5)
#define PD_ATTR_SAMPLE_ID_ALL (1ull << 18)

/* ---- Record types ---- */

enum {
    PD_REC_MMAP = 1,
    PD_REC_LOST = 2,
    PD_REC_COMM = 3,
    PD_REC_EXIT = 4,
    PD_REC_FORK = 7,
    PD_REC_SAMPLE = 9,
    PD_REC_MMAP2 = 10,
    PD_REC_LOST_SAMPLES = 13,
    PD_REC_SWITCH = 14,
    PD_REC_SWITCH_CPU_WIDE = 15,
    PD_REC_HEADER_ATTR = 64,
    PD_REC_HEADER_TRACING_DATA = 66,
    PD_REC_AUXTRACE = 71,
    PD_REC_FINISHED_ROUND = 68,
    PD_REC_HEADER_FEATURE = 80,
    PD_REC_COMPRESSED = 81,
    PD_REC_COMPRESSED2 = 83,
    /* simpleperf's own, with a 32-bit size in the header */
    PD_REC_SIMPLEPERF = 32768,
    PD_REC_SP_KERNEL_SYMBOL = 32769,
    PD_REC_SP_SPLIT = 32772,
    PD_REC_SP_SPLIT_END = 32773,
    PD_REC_SP_EVENT_ID = 32774,
};

#define PD_MISC_CPUMODE 7u
#define PD_MISC_KERNEL 1u
#define PD_MISC_USER 2u
#define PD_MISC_EXEC (1u << 13)       /* COMM: the thread exec'd */
#define PD_MISC_SWITCH_OUT (1u << 13)
#define PD_MISC_MMAP_BUILD_ID (1u << 14)

/* Callchain context markers (PERF_CONTEXT_*): the values from here up. */
#define PD_CONTEXT_MAX ((uint64_t)-4095)
#define PD_CONTEXT_KERNEL ((uint64_t)-128)
#define PD_CONTEXT_USER ((uint64_t)-512)

/* ---- Header and attributes (header.c) ---- */

typedef struct pd_section {
    uint64_t off, size;
} pd_section;

typedef struct pd_header {
    uint64_t size, attr_size;
    pd_section attrs, data;
    uint8_t features[32];
    int pipe;   /* the stream form perf record -o - writes */
} pd_header;

#define PD_HEADER_SIZE 104

/* Parses the file header (at least PD_HEADER_SIZE bytes, or 16 for the
 * pipe form).  Returns NULL, or what is wrong, with the offset of the
 * field in *at. */
const char *pd_parse_header(const uint8_t *d, size_t len, pd_header *h, uint64_t *at);

/* The name perf gives an event of this type and config ("cpu-cycles",
 * "cpu-clock"...), with ":u" or ":k" when it left out the kernel or the
 * user; NULL for types without a fixed list (tracepoints, raw). */
const char *pd_event_name(uint32_t type, uint64_t config, char *buf, size_t n,
                          uint64_t flags);

/* ---- Samples (sample.c) ---- */

typedef struct pd_sample {
    uint64_t ip, time, id, period;
    uint32_t pid, tid, cpu;
    int has_time, has_cpu, has_period, has_id;
    const uint8_t *chain;      /* nr u64 values, unaligned */
    size_t n_chain;
    uint64_t regs_abi;
    uint64_t regs_mask;        /* the attribute's sample_regs_user */
    const uint8_t *regs;       /* n_regs u64 values */
    size_t n_regs;
    const uint8_t *stack;      /* the copied user stack */
    size_t stack_len;          /* its valid bytes (dyn_size) */
} pd_sample;

/* Parses a sample record's body (after the 8-byte header) by the
 * attribute's sample_type.  Returns NULL, or what is wrong. */
const char *pd_parse_sample(const pd_attr *a, const uint8_t *d, size_t len, pd_sample *s);

/* The sample_id_all trailer of other records: time, pid/tid, id. */
typedef struct pd_sample_id {
    uint64_t time, id;
    uint32_t pid, tid, cpu;
    int has_time, has_tid, has_id;
} pd_sample_id;

/* Parses the trailer at the end of a non-sample record's body of len
 * bytes.  Returns 0, or -1 when the body is shorter than the trailer. */
int pd_parse_sample_id(const pd_attr *a, const uint8_t *d, size_t len, pd_sample_id *s);

/* Bytes the sample_id_all trailer takes with this sample_type. */
size_t pd_sample_id_size(uint64_t sample_type);

/* ---- Processes, threads, mappings, dsos (maps.c) ---- */

/* What a dso is: simpleperf's DsoType numbers, as its file feature
 * records them. */
enum pd_dso_type {
    PD_DSO_KERNEL = 0,
    PD_DSO_KERNEL_MODULE = 1,
    PD_DSO_ELF = 2,
    PD_DSO_DEX = 3,
    PD_DSO_SYMBOL_MAP = 4,
    PD_DSO_UNKNOWN = 5,
};

typedef struct pd_symbol {
    uint64_t addr, len;
    uint32_t name;     /* string id, raw (mangled) */
} pd_symbol;

typedef struct pd_dso {
    uint32_t path;           /* string id */
    uint8_t type;            /* enum pd_dso_type */
    uint8_t has_file;        /* the file feature described it */
    uint8_t kernel;          /* the kernel or a module */
    int64_t pid;             /* JIT map dsos: the process, else -1 */
    uint64_t min_vaddr;
    uint64_t off_min_vaddr;  /* file (or memory) offset of min_vaddr;
                                UINT64_MAX when unknown */
    size_t sym0, nsym;       /* its symbols in pd_maps.syms */
    uint8_t build_id[20];
    uint8_t build_id_len;
    pc_elf *elf;             /* the binary on this machine, once looked for */
    uint8_t elf_tried;
} pd_dso;

typedef struct pd_map {
    uint64_t start, end, pgoff;
    uint32_t dso;
    /* simpleperf's JIT symbol files are mapped where the code ran: their
     * addresses are the samples' own (its PROT_JIT_SYMFILE_MAP flag). */
    uint32_t jit;
} pd_map;

typedef struct pd_mapset {
    pd_map *m;
    size_t n, cap;
    uint64_t gen;    /* changes with every change */
} pd_mapset;

typedef struct pd_proc {
    int64_t pid;
    pd_mapset maps;
    uint32_t comm;   /* string id or PC_NONE */
} pd_proc;

typedef struct pd_thread {
    int64_t pid, tid;
    uint32_t comm;   /* string id or PC_NONE */
    uint32_t model;  /* the model's thread, once it has samples, or PC_NONE */
} pd_thread;

typedef struct pd_maps {
    pc_profile *p;
    pd_proc *procs;
    size_t nprocs, capprocs;
    pc_htab proc_idx;
    pd_thread *threads;
    size_t nthreads, capthreads;
    pc_htab thread_idx;   /* by tid: one live thread per tid */
    pd_mapset kernel;
    pd_dso *dsos;
    size_t ndsos, capdsos;
    pc_htab dso_idx;      /* by (path, pid) */
    uint32_t unknown_dso; /* where addresses no map holds go */
    pd_symbol *syms;
    size_t nsyms, capsyms;
    uint64_t gen;         /* source of mapset generations */
} pd_maps;

int pd_maps_init(pd_maps *m, pc_profile *p);
void pd_maps_free(pd_maps *m);

/* The dso of path (a string id) for process pid, made with type when new;
 * PC_NONE when out of memory.  pid is -1 for files mapped in user space,
 * PD_KERNEL_SPACE for the kernel and its modules (simpleperf keeps those
 * apart: a module's path may also name a user-space file), and the
 * process for dsos of one process's own (JIT maps). */
#define PD_KERNEL_SPACE (-2)
uint32_t pd_dso_find(pd_maps *m, uint32_t path, int64_t pid, int type);

/* The thread tid, which must be of process pid: a thread of another
 * process by that tid is gone and replaced.  NULL when out of memory. */
pd_thread *pd_thread_get(pd_maps *m, int64_t pid, int64_t tid);

/* The process pid, made when new (with no maps); NULL when out of memory. */
pd_proc *pd_proc_get(pd_maps *m, int64_t pid);

/* Adds a mapping to a set, cutting away what it overlaps of older
 * mappings.  Returns 0, or -1 when out of memory. */
int pd_map_insert(pd_maps *m, pd_mapset *s, uint64_t start, uint64_t len,
                  uint64_t pgoff, uint32_t dso, int jit);

/* The mapping holding addr, or NULL. */
const pd_map *pd_map_find(const pd_mapset *s, uint64_t addr);

/* A new process forked from parent: it starts with the parent's maps.
 * Returns 0, or -1 when out of memory. */
int pd_proc_fork(pd_maps *m, int64_t pid, int64_t ppid);

/* ---- Features (features.c) ---- */

enum {
    PD_FEAT_BUILD_ID = 2,
    PD_FEAT_HOSTNAME = 3,
    PD_FEAT_OSRELEASE = 4,
    PD_FEAT_VERSION = 5,
    PD_FEAT_ARCH = 6,
    PD_FEAT_NRCPUS = 7,
    PD_FEAT_CMDLINE = 11,
    PD_FEAT_EVENT_DESC = 12,
    PD_FEAT_CLOCK_DATA = 29,
    PD_FEAT_SP_FILE = 128,
    PD_FEAT_SP_META_INFO = 129,
    PD_FEAT_SP_FILE2 = 132,
};

/* What the features told, beyond what they gave the dsos. */
typedef struct pd_info {
    uint32_t hostname, osrelease, version, arch, cmdline;  /* string ids or PC_NONE */
    uint32_t nr_cpus;
    int simpleperf;          /* simpleperf wrote the file */
    int trace_offcpu;
    int kernel_symbols_available;
    /* event_type_info of the meta info, or EVENT_DESC: names by attribute */
    uint32_t *event_names;
    size_t n_event_names;
    /* EVENT_DESC gives names by id */
    uint64_t *desc_ids;
    uint32_t *desc_names;
    size_t n_desc, cap_desc;
    int has_clock;
    uint64_t clock_wall_ns, clock_at;
    /* simpleperf: the wall clock (to the second) when recording ended */
    int has_end_wall;
    uint64_t end_wall_ns;
    size_t unknown_features;
    size_t file_entries;
} pd_info;

/* Parses feature feat's bytes into info, the dsos and their symbols.
 * Returns NULL, or what is wrong (the feature is then left out). */
const char *pd_parse_feature(int feat, const uint8_t *d, size_t len, pd_maps *m,
                             pd_info *info, const pc_options *o);

void pd_info_free(pd_info *info);

#endif
