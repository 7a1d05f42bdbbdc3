/* profconv: convert CPU and memory profiles into formats people can view.
 *
 * The library reads a profile (simpleperf `report-sample --protobuf`
 * files, Perfetto traces, the text of Linux `perf script`; plain or
 * gzip-compressed) into an in-memory model, applies the requested
 * transforms, and writes it out (the Firefox Profiler's processed or Gecko
 * JSON, pprof, folded stacks, speedscope; plain or gzip-compressed).
 *
 * Conventions.  Functions that can fail return an enum pc_status (0 on
 * success) and, on failure, fill the caller's pc_error with a one-line,
 * lowercase message that names the input or output and, for bad input, the
 * byte offset at fault.  Messages and log lines hold no byte a terminal
 * would act on: what comes from the input is escaped as \xNN (bytes below
 * 0x20, 0x7f, C1 controls, invalid UTF-8).  The library never prints and
 * never exits; it reports progress and warnings only through the optional
 * log callback.
 * Objects returned through an out-parameter belong to the caller, who
 * releases them with the matching *_close or *_free function; on failure
 * nothing is returned and nothing needs releasing.
 *
 * Options.  A NULL options pointer means the defaults of the matching
 * *_init function; a value out of its range is PC_EUSAGE, never clamped.
 * Messages name options by their fields ("options.max_depth",
 * "write_options.format").
 *
 * Threads.  The library keeps no state between calls but for the list of
 * partial outputs, which is safe to use from any thread and from a signal
 * handler.  Distinct objects may be used on distinct threads at once.  A
 * converted profile is read-only to the writers: one profile may be
 * written by several threads at once, in any formats, to memory or to
 * distinct files.  An input is used by one thread at a time.  The log and
 * progress callbacks are called on the thread that called the function
 * they were given to.
 */
#ifndef PROFCONV_H
#define PROFCONV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What this header declares is the library's interface, and all that its
 * archive exports; everything else in it is hidden. */
#pragma GCC visibility push(default)

#define PROFCONV_VERSION "0.1.0"

enum pc_status {
    PC_OK = 0,
    PC_EUSAGE = 1,  /* invalid options or arguments */
    PC_EINPUT = 2,  /* the input is malformed or of an unknown kind */
    PC_EIO = 3,     /* reading or writing a file failed */
    PC_ENOMEM = 4,  /* out of memory */
};

typedef struct pc_error {
    int status;           /* enum pc_status */
    char message[1024];   /* NUL-terminated, no trailing newline */
} pc_error;

/* ---- Input ---- */

typedef struct pc_input pc_input;

/* Opens the file at path ("-" for standard input).  Gzip compression is
 * detected from the content, not the name.  Nothing is read beyond the
 * first bytes until pc_convert(); the input's format is detected there,
 * from the content. */
int pc_input_open(pc_input **in, const char *path, pc_error *err);

/* Opens size bytes at data as an input named name (used in messages).  The
 * bytes are not copied and must stay valid until pc_input_close(). */
int pc_input_open_memory(pc_input **in, const void *data, size_t size,
                         const char *name, pc_error *err);

/* Closes an input; NULL is allowed. */
void pc_input_close(pc_input *in);

/* ---- Conversion ---- */

/* INFO: details of what was done; WARN: something is wrong with the input
 * or the result; NOTICE: nothing is wrong, but the result leaves out or
 * changes something the caller should know of (another event type in the
 * input, processes the input does not tell apart). */
enum pc_log_level { PC_LOG_INFO = 0, PC_LOG_WARN = 1, PC_LOG_NOTICE = 2 };

/* Receives informational messages and warnings, one line each without a
 * trailing newline.  The message is valid only during the call. */
typedef void (*pc_log_fn)(void *ctx, int level, const char *message);

/* What to keep of a recording made with simpleperf --trace-offcpu, where
 * on-CPU samples (cpu-clock, task-clock) and off-CPU samples
 * (sched:sched_switch) come together.  An off-CPU sample lasts until its
 * thread's next sample or next switch back onto a CPU, whichever comes
 * first; one still pending at the end of the recording lasts until the
 * recording's last event. */
enum pc_offcpu_mode {
    PC_OFFCPU_DEFAULT = 0,  /* mixed for off-CPU recordings */
    PC_OFFCPU_ON,           /* on-CPU samples only */
    PC_OFFCPU_OFF,          /* off-CPU samples only */
    PC_OFFCPU_ON_OFF,       /* both, each under its own event type */
    PC_OFFCPU_MIXED,        /* both, all under the first event type */
};

/* How far reading has come: bytes of the input read (compressed bytes for
 * gzip input), the input's size (0 when unknown, as for a pipe), and the
 * samples read so far. */
typedef struct pc_progress {
    uint64_t bytes, total, samples;
} pc_progress;

/* Receives progress while pc_convert() reads: after each MiB or so of
 * input, and once when reading ends.  The struct is valid only during
 * the call. */
typedef void (*pc_progress_fn)(void *ctx, const pc_progress *p);

/* A list of values given by the caller; the library reads but never keeps
 * or frees it. */
typedef struct pc_strings {
    const char *const *items;
    size_t n;
} pc_strings;

typedef struct pc_ids {
    const int64_t *items;
    size_t n;
} pc_ids;

/* What a heap profile shows at a dump, per callsite: bytes allocated and
 * not freed yet, all bytes allocated, or the bytes freed, since profiling
 * began.  The default (pc_options_init) is the unreleased bytes, or the
 * allocated bytes where the dumps shown hold none unreleased (everything
 * was freed by then), said so in the log. */
enum pc_heap_measure {
    PC_HEAP_UNRELEASED = 0,
    PC_HEAP_ALLOCATED = 1,
    PC_HEAP_FREED = 2,
    PC_HEAP_DEFAULT = 3,
};

typedef struct pc_options {
    /* Within each thread, runs of at most this many consecutive samples
     * whose stack is incomplete (reaches neither __libc_init nor
     * __start_thread) are dropped; 0 keeps every sample.  Threads with no
     * complete stack at all (typical of glibc programs) are left alone.
     * -1 (the default) means 3 for simpleperf input, as simpleperf's
     * report scripts do, and 0 for the others. */
    int remove_gaps;
    /* Name of the event type to keep.  NULL keeps the first event type of
     * the recording, or every event when it was recorded with
     * --trace-offcpu (on- and off-CPU samples belong together). */
    const char *event;
    int offcpu;                /* enum pc_offcpu_mode; only for off-CPU
                                  recordings, and not with event */

    /* Filters, combined as simpleperf combines them: a thread is kept when
     * it passes every kind of filter given; for each kind it must match
     * one of the included values (when any) and none of the excluded
     * ones.  Names are POSIX extended regular expressions that may match
     * anywhere in the name; a process's name is its main thread's. */
    pc_ids pids, exclude_pids, tids, exclude_tids;
    pc_strings process_names, exclude_process_names;
    pc_strings thread_names, exclude_thread_names;
    /* Keep what happened in [time_start, time_end), in nanoseconds after
     * the recording's first event; a bound of -1 is open. */
    int64_t time_start, time_end;
    /* simpleperf's filter file (GLOBAL_BEGIN/END, PROCESS_BEGIN/END,
     * THREAD_BEGIN/END, CLOCK), or NULL. */
    const char *filter_file;
    /* Threads whose names match the same expression become one thread. */
    pc_strings aggregate_threads;

    /* Java: R8/ProGuard mapping files to deobfuscate Java frames with;
     * keep ART's own frames (hidden by default); drop frames whose
     * function name matches any of remove_methods; use the raw (mangled)
     * symbol names. */
    pc_strings proguard_mapping_files;
    int show_art_frames;
    pc_strings remove_methods;
    int mangled;
    /* perf.data from Linux perf: a folder the recorded paths of binaries
     * are found under (a copy of the recording machine's files), or NULL
     * for this machine's own.  Binaries are also found by build id in
     * perf's cache (~/.debug) and /usr/lib/debug; one whose build id
     * differs from the recorded one is never used. */
    const char *symfs;
    /* Folders of binaries to name the frames the input leaves unnamed
     * (Perfetto's unsymbolized frames, report-sample's unknown symbols,
     * perf.data): searched by build id (DIR/.build-id/XX/REST), by the
     * recorded path under the folder (simpleperf's binary_cache), then by
     * file name.  A file whose build id differs is never used.  With
     * neither symbol_dirs nor symfs, no file is looked at. */
    pc_strings symbol_dirs;

    /* Mark each thread's on- and off-CPU intervals from the recording's
     * context switches (default 1). */
    int switch_markers;
    /* One thread per CPU; refused for inputs that carry no CPU numbers. */
    int percpu;

    /* Heap profiles (Perfetto heapprofd dumps): the dump of each process
     * and heap to show, 1 for the first, 0 (the default) for the last,
     * and what to show of it (enum pc_heap_measure). */
    int heap_dump;
    int heap_measure;
    /* Java heap graphs (Perfetto): 0 (the default) charges each object's
     * own size to its shortest path from a GC root, 1 to its path in the
     * dominator tree, so that a node's total is what it retains. */
    int heap_graph;
    /* With heap_dump, a dump to subtract (1 for the first; 0, the
     * default: none): each callsite shows what it added between this dump
     * and heap_dump, which must come later. */
    int heap_dump_base;

    /* Convert what is valid in a damaged input instead of failing: skip
     * damaged records (simpleperf), packets (Perfetto) or lines (perf
     * script), end the input
     * where its framing breaks, name frames whose names are missing by
     * file and address; each kind of damage is reported with a count and
     * the first message. */
    int keep_going;

    /* Callstacks deeper than this many frames keep only their innermost
     * max_depth frames, and the conversion warns how many were cut; 0
     * means no limit.  pc_options_init() sets PC_MAX_DEPTH_DEFAULT. */
    size_t max_depth;

    /* Threads to use: 1 does everything on the calling thread; 0 (the
     * default) means the machine's cores.  gzip input is decompressed on
     * a thread of its own; simpleperf records are framed on one thread and
     * decoded on all; Perfetto perf samples' stacks are built on a second
     * thread; 65,536 samples or more are grouped by thread on up to 8.
     * The output is the same for every value. */
    int threads;

    pc_log_fn log;      /* may be NULL */
    void *log_ctx;
    pc_progress_fn progress;  /* may be NULL */
    void *progress_ctx;
} pc_options;

/* Far deeper than real unwinders go (perf stops at 127 frames unless told
 * otherwise, simpleperf and Perfetto at a few thousand). */
#define PC_MAX_DEPTH_DEFAULT 65536

/* Fills o with the defaults: remove_gaps -1, first event, no filters, ART
 * frames hidden, switch markers on, depth limit PC_MAX_DEPTH_DEFAULT, no
 * log. */
void pc_options_init(pc_options *o);

typedef struct pc_profile pc_profile;

/* Reads the whole input, detects its format, builds the profile and
 * applies the options (NULL: the defaults of pc_options_init()).  Values
 * out of range (below -1 where -1 is the least, below 0 elsewhere, an
 * enum value no enum has, a list with items but no array) fail with
 * PC_EUSAGE before anything is read.  The input stays open and belongs to the caller;
 * it cannot be converted twice.  On success *out is a profile to release
 * with pc_profile_free().  A result with nothing to show (no sample with
 * a callstack and no heap bytes under the measure shown) is PC_EINPUT,
 * with a message saying what the input holds: the threads the filters
 * could have kept, or what kinds of data it has and where samples come
 * from. */
int pc_convert(pc_input *in, const pc_options *o, pc_profile **out,
               pc_error *err);

/* Releases a profile; NULL is allowed. */
void pc_profile_free(pc_profile *p);

/* Moves the n profiles in[] into one, *out, and releases them (in[] is
 * left all NULL, whatever the result).  Each keeps its threads; with
 * labels (NULL: none), input i's processes are named "LABELS[i]: name",
 * and a pid an earlier input holds already is moved up by 10,000,000 per
 * input that holds it, so processes stay apart.  Times share one timeline
 * when every input has a wall clock, else each input starts where the
 * first starts.  merge_runs folds the threads of one name in processes of
 * one name into one (runs of one program), labels aside.  o (NULL
 * allowed) receives the log lines.  Returns PC_OK, or PC_ENOMEM. */
int pc_profiles_combine(pc_profile **in, const char *const *labels, size_t n, int merge_runs,
                        const pc_options *o, pc_profile **out, pc_error *err);

/* The comparison of base and next, *out: both inputs' threads, their
 * processes named "base: ..." and "new: ...", aligned at their starts,
 * and one more thread, "Diff between base and new", whose samples are the
 * base's with their weights negated and the new input's as they are (the
 * Firefox Profiler's comparison thread: its call tree shows each
 * function's change).  Releases base and next, whatever the result.
 * PC_EINPUT when a side has no samples or the two measure different
 * things (time against event counts). */
int pc_profiles_diff(pc_profile *base, pc_profile *next, const pc_options *o, pc_profile **out,
                     pc_error *err);

/* One function of a comparison (pc_profiles_diff): its shares of each
 * side's total weight, 0 to 1; self is the weight of samples it is the
 * leaf of, total of samples whose stack holds it.  name points into the
 * profile and lives as long as it. */
typedef struct pc_diff_row {
    const char *name;
    double base_self, new_self;
    double base_total, new_total;
} pc_diff_row;

/* The functions of comparison profile p, by name, the largest change of
 * self share first (then of total share, then by name), in a new array
 * *rows of *n entries that the caller frees; *n is 0 when p is no
 * comparison.  PC_OK, or PC_ENOMEM. */
int pc_diff_rows(const pc_profile *p, pc_diff_row **rows, size_t *n, pc_error *err);

/* Counts describing a converted profile. */
typedef struct pc_summary {
    size_t threads;        /* threads in the output */
    size_t samples;        /* samples kept (a comparison's once) */
    size_t samples_read;   /* samples in the input */
    size_t stacks;         /* distinct stacks */
    size_t frames;         /* distinct frames */
    size_t heap_rows;      /* heap profile callsites of the dumps shown */
    size_t counter_values; /* counter values over time (apart from samples) */
} pc_summary;

void pc_profile_summary(const pc_profile *p, pc_summary *s);

/* The ids of the processes that have samples (or heap rows) in p, each
 * once, ascending, in a new array *pids of *n entries that the caller
 * frees. */
int pc_profile_pids(const pc_profile *p, int64_t **pids, size_t *n, pc_error *err);

/* ---- Output ---- */

enum pc_format {
    PC_FORMAT_NONE = 0,
    PC_FORMAT_GECKO = 1,    /* Firefox Profiler Gecko JSON */
    PC_FORMAT_FIREFOX = 2,  /* Firefox Profiler processed JSON: weights,
                               fast loading */
    PC_FORMAT_FOLDED = 3,   /* folded stacks: "root;...;leaf value" lines */
    PC_FORMAT_PPROF = 4,    /* pprof's profile.proto (gzip it: pprof's tools
                               expect .pb.gz) */
    PC_FORMAT_SPEEDSCOPE = 5, /* speedscope's JSON file format: one sampled
                                 profile per thread, shared frames */
    PC_FORMAT_SVG = 6,      /* an interactive flame graph, one per thread */
    PC_FORMAT_TEXT = 7,     /* a summary for an 80-column terminal */
};

/* What folded lines start with (bits; 0: the stack alone). */
enum pc_folded_prefix {
    PC_FOLDED_PROCESS = 1,  /* the process's name */
    PC_FOLDED_THREAD = 2,   /* the thread's name */
};

/* How a firefox profile is stored: JSON, or a JSLB file (a container of
 * JSON and binary arrays the Firefox Profiler reads, for profiles whose
 * JSON is more than a browser can read as one string).  The default is
 * JSON, or JSLB, with a warning, when the JSON would come near
 * json_limit; pc_output_container() gives the choice a name makes. */
enum pc_container {
    PC_CONTAINER_AUTO = 0,
    PC_CONTAINER_JSON = 1,
    PC_CONTAINER_JSLB = 2,
};

/* Out-of-range values (an unknown format, a gzip level above 9, prefix
 * bits beyond the two, a pprof_pid below -1 without pprof_one_process)
 * make pc_write() fail with
 * PC_EUSAGE; nonzero means yes for the yes-or-no fields. */
typedef struct pc_write_options {
    int format;      /* enum pc_format */
    int gzip;        /* nonzero: one gzip member around the output;
                        pc_output_gzip() gives the usual choice for a name */
    int gzip_level;  /* 1 (fast, the default; 0 means 1) .. 9 (small); 1-3
                        use ISA-L's igzip, 4-9 zlib */
    /* Folded stacks: the prefix (enum pc_folded_prefix bits, default
     * PC_FOLDED_THREAD); count samples instead of summing their weights
     * (for heap profiles: allocations instead of bytes); mark kernel and
     * JIT frames with FlameGraph's "_[k]" and "_[j]". */
    int folded_prefix;
    int folded_counts;
    int folded_annotate;
    /* pprof: with pprof_one_process set, the samples of process pprof_pid
     * alone (any id, -1 and other negative ones included: inputs and
     * --percpu have them); else, for callers of earlier versions, a
     * pprof_pid of 0 or more means that process and -1 (the default)
     * every process in one profile.  pc_profile_pids() lists them, for a
     * profile per process. */
    int64_t pprof_pid;
    int pprof_one_process;
    /* Warnings about the output, one line each (may be NULL): a JSON
     * output longer than json_limit bytes (0, the default, means 512 MiB:
     * the longest string the Firefox Profiler's browser can read a file
     * into) is written whole, and said to be too large, with the ways out. */
    pc_log_fn log;
    void *log_ctx;
    uint64_t json_limit;
    /* The firefox format's container (enum pc_container). */
    int container;
    /* Threads that may compress gzip output in blocks: 1 compresses on
     * the calling thread, 0 (the default) uses the machine's cores.  The
     * output is the same bytes for every value. */
    int threads;
} pc_write_options;

/* Fills o with the defaults: processed Firefox format, no gzip, level 1,
 * every process. */
void pc_write_options_init(pc_write_options *o);

/* Formats, their names and the output names that mean them all come from
 * one table inside the library; these functions answer from it.  NULL
 * strings are allowed and mean nothing; none of them allocates. */

/* Returns the enum pc_format named by name ("firefox", "gecko",
 * "folded", "pprof", "speedscope"), or PC_FORMAT_NONE. */
int pc_format_by_name(const char *name);

/* The name of format, as pc_format_by_name() takes it, or NULL for a value
 * that is no format. */
const char *pc_format_name(int format);

/* The formats in the order a list of them shows them (firefox first), for
 * i from 0; PC_FORMAT_NONE past the last. */
int pc_format_nth(size_t i);

/* The extension an output of format gets when its name is made from the
 * input's (".json.gz", ".json.gz", ".folded", ".pb.gz", ".speedscope.json"
 * for firefox, gecko, folded, pprof, speedscope), or NULL. */
const char *pc_format_extension(int format);

/* The format an output file name asks for: ".speedscope.json" means
 * speedscope, other ".json" names the processed Firefox format, ".folded"
 * folded stacks, ".pb" and ".pprof" pprof, each also with ".gz" after it.
 * Returns PC_FORMAT_NONE when the name says nothing.  When gzip is not
 * NULL, *gzip is set to pc_output_gzip(the format, path). */
int pc_format_from_path(const char *path, int *gzip);

/* Whether an output of format named path is gzip-compressed unless the
 * caller says otherwise: when the name ends in ".gz", or in an ending of
 * the format's own that implies it (pprof's ".pprof"), or, for a name that
 * says nothing (and for standard output, "-"), when the format is pprof,
 * whose tools expect gzip.  A ".pb" name asks for the bare protobuf. */
int pc_output_gzip(int format, const char *path);

/* PC_CONTAINER_JSLB for a name that ends in ".jslb" or ".jslb.gz" (the
 * firefox format in a JSLB file), else PC_CONTAINER_AUTO. */
int pc_output_container(const char *path);

/* The length of the ending of path's file name that names format (6 for
 * "perf.pb.gz" and pprof), or 0: where a name made per process puts the
 * process id ("perf.1234.pb.gz"). */
size_t pc_format_suffix_len(int format, const char *path);

/* Writes p to path ("-" for standard output); o NULL means the defaults of
 * pc_write_options_init().  A format that cannot
 * carry what p holds refuses it (PC_EUSAGE: the Gecko format and heap
 * profiles) rather than writing less.  A file is written under a
 * temporary name in the same directory and renamed into place only when
 * complete, so an existing file is either replaced whole or left as it
 * was. */
int pc_write(const pc_profile *p, const char *path,
             const pc_write_options *o, pc_error *err);

/* Removes the temporary files of the outputs being written by pc_write().
 * Async-signal-safe: for a handler of SIGINT or SIGTERM that then ends the
 * process, so that an interrupted conversion leaves no partial file (the
 * target itself is never touched before the final rename). */
void pc_remove_partial_outputs(void);

/* Writes p into a new malloc'd buffer; the caller frees *data.  o as for
 * pc_write(). */
int pc_write_memory(const pc_profile *p, const pc_write_options *o,
                    unsigned char **data, size_t *size, pc_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
