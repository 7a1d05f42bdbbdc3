/* Reader for simpleperf `report-sample --protobuf` files.
 *
 * Layout (simpleperf's cmd_report_sample.proto): the 10 bytes "SIMPLEPERF",
 * a little-endian u16 version (1), then records, each a little-endian u32
 * size followed by a protobuf Record of that size, until a size of 0.
 *
 * Two layers.  sp_next() decodes one record at a time into an sp_record
 * whose strings and arrays point into the reader's buffers (valid until the
 * next call); it checks framing, wire format and field types, nothing
 * more.  pc_read_simpleperf() builds the profile model from those records
 * and checks what only the whole file can tell (ids that refer to Files,
 * symbols and event types).
 */
#ifndef PROFCONV_READ_SIMPLEPERF_H
#define PROFCONV_READ_SIMPLEPERF_H

#include <stddef.h>
#include <stdint.h>

#include "base/byteset.h"
#include "base/hashtab.h"
#include "read/read.h"
#include "model/model.h"
#include "profconv.h"

#define SP_MAGIC "SIMPLEPERF"
#define SP_MAGIC_LEN 10

/* Caller paths a reader tells apart by id (sample.path): ids are below
 * SP_MAX_PATHS, SP_NO_PATH is none. */
#define SP_MAX_PATHS (1u << 16)
#define SP_PATH_BYTES ((size_t)16 << 20)
#define SP_NO_PATH PC_BYTESET_NONE

enum sp_kind {
    SP_NONE = 0,  /* a record with no member we know (a newer kind) */
    SP_SAMPLE = 1,
    SP_LOST = 2,
    SP_FILE = 3,
    SP_THREAD = 4,
    SP_META = 5,
    SP_SWITCH = 6,
};

typedef struct sp_str {
    const char *s;
    size_t len;
} sp_str;

typedef struct sp_entry {
    uint64_t vaddr;
    uint32_t file_id;
    int32_t symbol_id;
    /* The hash tag of (vaddr, file_id, symbol_id, exec) in the process's
     * keyed hash (sp_entry_tag), set where the entry is decoded: lookups
     * of entries in the frame table, on the thread that builds the
     * model, start from it, and decoding runs on every thread. */
    uint32_t tag;
    uint8_t exec;      /* enum pc_exec */
    uint8_t has_exec;  /* execution_type was present */
} sp_entry;

static inline uint32_t sp_entry_tag(const sp_entry *e)
{
    return pc_hash_tag(pc_mix64(e->vaddr ^
                                pc_mix64((uint64_t)e->file_id << 32 | (uint32_t)e->symbol_id) ^
                                e->exec));
}

typedef struct sp_record {
    int kind;          /* enum sp_kind */
    uint64_t offset;   /* stream offset of the record's size prefix */
    size_t size;       /* bytes of protobuf after the prefix */
    size_t index;      /* 1 for the first record */

    struct {
        uint64_t time, event_count;
        int32_t tid;
        uint32_t event_type_id;
        const sp_entry *chain;  /* leaf first, as in the file */
        size_t n_chain;
        /* The bytes of the callchain's entries past the leaf, as in the
         * file, when they are one run of fields of at most 64 KiB (NULL
         * otherwise: other fields between them, a longer run, fewer than
         * two entries). */
        const uint8_t *raw;
        uint32_t raw_len;
        /* With the reader's caller paths (sp_reader.memo): raw's id in
         * them, or SP_NO_PATH.  Equal bytes decode to the same entries,
         * so the builder can know a caller path it has built before by
         * its id, without looking at its entries. */
        uint32_t path;
        /* Entries past the leaf left undecoded, because raw is a caller
         * path decoded before; chain then holds the leaf alone, n_chain
         * counts them all, and sp_decode_lazy gives the rest. */
        size_t n_lazy;
        int has_unwind;
        uint32_t raw_error_code, error_code;
        uint64_t error_addr;
    } sample;
    struct {
        uint64_t sample_count, lost_count;
    } lost;
    struct {
        uint32_t id;
        sp_str path;
        const sp_str *symbols, *mangled;
        size_t n_symbols, n_mangled;
    } file;
    struct {
        uint32_t tid, pid;
        sp_str name;
    } thread;
    struct {
        const sp_str *event_types;
        size_t n_event_types;
        sp_str app_package, app_type, sdk_version, build_type;
        int has_app_package, has_app_type, has_sdk_version, has_build_type;
        int trace_offcpu;
    } meta;
    struct {
        int on;
        uint64_t time;
        uint32_t tid;
    } sw;
} sp_record;

/* Fields of known messages that this version does not know: how many,
 * and where the first one was. */
typedef struct sp_unknown {
    size_t count;
    uint32_t number;
    size_t record;
    uint64_t offset;
} sp_unknown;

/* Where decoded records keep their arrays: callchain entries, and strings
 * (symbols, or event types; mangled symbols), appended record after
 * record, so that a batch of records is decoded into one set of arrays;
 * and the unknown fields met.  Zeroed before use. */
/* A sample's caller path found ahead of decoding (sp_peek_path): the run
 * of callchain fields past the leaf [at, end), in a sample ending at
 * limit, its hash and its field count. */
typedef struct sp_peek {
    const uint8_t *at, *end, *limit;
    uint64_t hash;
    uint32_t n;
} sp_peek;

/* Finds the caller path of the record of size bytes at data, when it is
 * a sample as simpleperf writes them, by a shallow parse that checks no
 * more than it needs: 1 with *pk, else 0 (pk->at NULL).  Decoding with
 * the decoder's peek set to it then takes the run and hash from it. */
int sp_peek_path(const uint8_t *data, uint32_t size, sp_peek *pk);

typedef struct sp_decoder {
    sp_entry *chain;
    size_t n_chain, chain_cap;
    sp_str *strs[2];
    size_t n_strs[2], strs_cap[2];
    sp_unknown unknown;
    /* The caller paths to look runs up in and add them to (NULL: none),
     * shared with the other decoders of the reader; the gate is this
     * decoder's own. */
    pc_byteset *paths;
    pc_hitgate gate;
    /* The record being decoded's caller path, found ahead (at NULL: none). */
    sp_peek peek;
} sp_decoder;

typedef struct sp_reader {
    pc_input *in;
    uint16_t version;
    size_t n_records;
    int done;
    size_t consumed;   /* bytes of the current record to skip before the next */
    sp_decoder dc;     /* sp_next's */
    /* With keep_going, a record whose protobuf is damaged is skipped
     * (counted, the first message kept) and a broken frame ends the file
     * (its message kept) instead of failing. */
    int keep_going;
    pc_skips skipped;
    pc_stop stop;
    sp_unknown unknown;  /* of every record so far, in file order */
    /* Set memo before the first record to have caller paths decoded once
     * and known again by id (sample.path, sample.n_lazy); the set is made
     * at the first record and shared by every decoder of the reader. */
    int memo;
    pc_byteset *paths;
} sp_reader;

/* The reader's caller paths, made at the first call when memo is set;
 * NULL without memo, or without the memory (samples are then decoded in
 * full).  Call it before decoding records on other threads. */
pc_byteset *sp_paths(sp_reader *r);
/* True when the first bytes are simpleperf's magic. */
int sp_detect(const uint8_t *data, size_t len);

/* Reads and checks the magic and version.  Returns 0 or a pc_status. */
int sp_open(sp_reader *r, pc_input *in, pc_error *err);

/* Decodes the next record.  Returns 1 with *rec filled, 0 after the
 * terminator (having checked that nothing follows it), or -1 with err
 * filled. */
int sp_next(sp_reader *r, sp_record *rec, pc_error *err);

/* sp_next in two steps, for decoding elsewhere than the framing.
 * sp_frame finds the next record: *data, valid until the next call, its
 * size bytes of protobuf, *off the stream offset of its size prefix; it
 * is the r->n_records-th.  Returns 1, 0 after the terminator (or, with
 * keep_going, where the framing broke), -1 with err filled. */
int sp_frame(sp_reader *r, const uint8_t **data, uint32_t *size, uint64_t *off,
             pc_error *err);

/* Whether sp_frame would find its record in what has been read already,
 * without waiting for the input (a pipe may be slow to send more). */
int sp_frame_ready(const sp_reader *r);

/* Decodes one framed record into *rec, appending its arrays to dc; the
 * record's pointers into them are offsets until sp_decoder_fix(rec),
 * once dc's arrays no longer move.  Strings point into data.  Reads in
 * only for its name: records may be decoded on any thread, each decoder
 * on one at a time.  Returns 0, or -1 with err filled (PC_EINPUT: the
 * record is damaged but framed, so keep_going may skip it). */
int sp_decode(const pc_input *in, sp_decoder *dc, const uint8_t *data, uint32_t size,
              uint64_t off, size_t index, sp_record *rec, pc_error *err);
void sp_decoder_fix(const sp_decoder *dc, sp_record *rec);

/* The callchain of a sample whose entries past the leaf were left
 * undecoded (sample.n_lazy), all sample.n_chain of them, into out.  Those
 * bytes decoded without fault before, so this does not fail; -1 would
 * mean they are not what they were. */
int sp_decode_lazy(const sp_record *rec, sp_entry *out);

/* Adds dc's count of unknown fields to r's (r's first stays first) and
 * clears it. */
void sp_decoder_take_unknown(sp_reader *r, sp_decoder *dc);
void sp_decoder_free(sp_decoder *dc);

void sp_close(sp_reader *r);

/* Name of an UnwindingResult error code ("ERROR_INVALID_MAP"), or NULL
 * for a value the format does not define. */
const char *sp_error_code_name(uint32_t code);

/* Reads r's records with up to threads threads (0: the machine's cores):
 * one frames them, all decode them, and this one hands each to fn, in
 * file order, until the end, an error of the input (err filled), or fn's
 * first status other than PC_OK, which is returned.  Damaged records
 * skipped and unknown fields are noted in r as sp_next would.  rec is
 * valid only during the call.  Without a second thread to be had,
 * decodes on this one. */
typedef int (*sp_record_fn)(void *ctx, const sp_record *rec);
/* ahead (may be NULL) is shown each record twice before fn gets it,
 * stage 0 then stage 1, a few records apart, to fetch into the cache
 * what fn will look up (what stage 0 fetched lets stage 1 find the next
 * address); it changes nothing. */
typedef void (*sp_ahead_fn)(void *ctx, const sp_record *rec, int stage);
int sp_read_threaded(sp_reader *r, int threads, sp_record_fn fn, sp_ahead_fn ahead, void *ctx,
                     pc_error *err);

/* Reads a whole simpleperf file from in into p. */
int pc_read_simpleperf(pc_input *in, pc_profile *p, const pc_options *o,
                       pc_error *err);

#endif
