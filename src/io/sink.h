/* Output sink: buffers bytes, optionally wraps them in one gzip member,
 * and delivers them to a file, standard output or memory.
 *
 * A file is written under a temporary name in the target's directory and
 * renamed to the target's name by sink_finish() only when everything was
 * written (a file there is moved aside first, and removed once the new one
 * is in); sink_abort() removes the temporary file.  So the target either
 * receives the whole output or keeps its old content.
 *
 * Writers fill the buffer directly: sink_reserve(s, n) returns room for at
 * least n bytes, sink_advance(s, k) commits k of them.  n must be at most
 * SINK_RESERVE_MAX, and k at most n: the buffer keeps that much room past
 * a block's end, and a larger request would overrun it, not flush.  The first failure is latched: later calls do nothing and
 * sink_finish() reports it.
 */
#ifndef PROFCONV_SINK_H
#define PROFCONV_SINK_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "profconv.h"

#define SINK_RESERVE_MAX 4096

typedef struct pc_sink pc_sink;

/* Holds, on the calling thread, the signals after which the command line
 * removes partial outputs (SIGINT, SIGTERM, SIGHUP), so that a file made
 * or moved is registered, or in its place, before one acts; *saved takes
 * the mask to restore with pthread_sigmask(SIG_SETMASK, saved, NULL).
 * Inline: the command line's own staged files (cli/split.c) hold them
 * too. */
static inline void sink_hold_signals(sigset_t *saved)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, saved);
}

/* Opens path for writing ("-": standard output, never gzipped unless asked).
 * gzip_level 0 means no compression. */
int sink_open_file(pc_sink **s, const char *path, int gzip_level,
                   pc_error *err);
int sink_open_memory(pc_sink **s, int gzip_level, pc_error *err);
/* A sink that keeps nothing and only counts: for measuring what a writer
 * makes before making it for real.  Read the count with sink_bytes and
 * close it with sink_abort (sink_finish would give no bytes). */
int sink_open_count(pc_sink **s, pc_error *err);

/* A sink begins with its buffer, so that the calls writers make for
 * every value are inline here: the buffer holds size bytes and a
 * reservation more, and less than size between calls, so any reservation
 * fits.  Writers use the functions below, never the fields. */
struct sink_room {
    uint8_t *buf;   /* uncompressed bytes waiting */
    size_t len;
    size_t size;    /* a block: 1 MiB, or less for a counting sink; less
                     * while the first block's pages are mapped */
};
/* Hands on a full block (sink_advance calls it). */
void sink_block_full(pc_sink *s);

static inline uint8_t *sink_reserve(pc_sink *s, size_t n)
{
    struct sink_room *r = (struct sink_room *)s;
    (void)n;
    return r->buf + r->len;
}

static inline void sink_advance(pc_sink *s, size_t n)
{
    struct sink_room *r = (struct sink_room *)s;
    r->len += n;
    if (r->len >= r->size)
        sink_block_full(s);
}
void sink_write(pc_sink *s, const void *data, size_t len);

/* Threads that may compress (see gz_new): 1 compresses on the caller's
 * thread, 0 (the default) uses the machine's cores.  The bytes written
 * are the same for any value.  Call before writing. */
void sink_set_threads(pc_sink *s, int threads);

/* Writes what the memory sink from (no gzip) holds to to, and empties
 * from for its next use, keeping its buffers: the text one thread made
 * for another to place.  A failure of from's (out of memory) becomes
 * to's, in to's name.  Neither sink may be in use on another thread
 * meanwhile. */
void sink_move(pc_sink *from, pc_sink *to);

/* Bytes written so far, before compression. */
uint64_t sink_bytes(const pc_sink *s);

/* Completes the output (gzip trailer, rename into place) and frees s.
 * For a memory sink, *data and *size receive the bytes (caller frees);
 * pass NULL for a file sink.  On failure nothing is left behind. */
int sink_finish(pc_sink *s, unsigned char **data, size_t *size,
                pc_error *err);

/* Discards the output, removes any temporary file and frees s. */
void sink_abort(pc_sink *s);

#endif
