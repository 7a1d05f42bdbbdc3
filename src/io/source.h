/* The input byte stream behind a pc_input: a file, standard input or a
 * memory block, gunzipped on the fly when it starts with the gzip magic.
 *
 * Readers pull bytes through a window: src_need() makes n bytes available
 * contiguously at src_ptr(), src_skip() consumes them.  The window grows
 * only as far as data really arrives, so a corrupt length field asking for
 * gigabytes costs no more memory than the input holds.  Memory inputs that
 * are not compressed are never copied.
 *
 * Offsets (src_offset) count bytes of the decoded stream from its start;
 * for gzip input they are offsets into the decompressed data.
 */
#ifndef PROFCONV_SOURCE_H
#define PROFCONV_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "profconv.h"

/* Returns 1 when n bytes are available at src_ptr(), 0 when the stream
 * ends first (src_avail() then tells how many remain), or an error status
 * (negative of enum pc_status) with err filled. */
int src_need(pc_input *in, size_t n, pc_error *err);

const uint8_t *src_ptr(const pc_input *in);
size_t src_avail(const pc_input *in);
void src_skip(pc_input *in, size_t n);

/* Offset of src_ptr() in the decoded stream. */
uint64_t src_offset(const pc_input *in);

/* The decoded stream's size where it is known before reading: a regular
 * file or a memory block, neither gzip; else 0. */
uint64_t src_size_hint(const pc_input *in);

/* The input's name as given to pc_input_open ("-" is "<stdin>"). */
const char *src_name(const pc_input *in);

/* Fills err with "NAME: offset N: MESSAGE" (noting decompressed offsets
 * for gzip input) and returns PC_EINPUT. */
int src_fail_at(const pc_input *in, pc_error *err, uint64_t offset,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Calls fn with the raw bytes read so far (compressed ones, for gzip
 * input) and the input's size (0 when unknown, as for a pipe) each time
 * another MiB has been read; fn NULL stops it.  src_report_end() calls it
 * once more, at the end. */
typedef void (*src_progress_fn)(void *ctx, uint64_t done, uint64_t total);
void src_set_progress(pc_input *in, src_progress_fn fn, void *ctx);
/* The progress callback set, for a reader that relays it. */
void src_get_progress(const pc_input *in, src_progress_fn *fn, void **ctx);
void src_report_end(pc_input *in);

/* Progress for a reader whose input is read by a thread of its own: that
 * thread notes it, the reader's calling thread tells it (fn may be changed
 * on that thread while the relay runs).  src_relay_begin takes the input's
 * callback over before the thread starts, src_relay_tell calls fn with
 * what was noted since it last did, src_relay_end gives the callback back
 * once the thread has ended. */
typedef struct src_relay {
    _Atomic uint64_t done, total;
    uint64_t told;
    src_progress_fn fn;
    void *ctx;
} src_relay;
void src_relay_begin(pc_input *in, src_relay *r);
void src_relay_tell(src_relay *r);
void src_relay_end(pc_input *in, src_relay *r);

/* Threads allowed (options.threads): other than 1, gzip input is
 * decompressed on a thread of its own, ahead of the reader.  The bytes,
 * and any failure, are the same.  Call before reading. */
void src_set_threads(pc_input *in, int threads);

/* Stops reading ahead, for an input read as far as it will be. */
void src_done(pc_input *in);

/* Ends every wait for more input, now and later, on any thread: the
 * calls waiting fail ("reading stopped").  For a reader that gave up
 * while another of its threads still reads (a pipe may never send more).
 * Safe from any thread; final. */
void src_interrupt(pc_input *in);

/* Marks the input as consumed; pc_convert refuses to read it again. */
int src_claim(pc_input *in);

#endif
