/* One gzip member made of independently compressed blocks, compressed on
 * several threads and delivered in order.
 *
 * Each block is the deflate of the bytes handed over in one call, primed
 * with the 32 KiB before them and ended on a byte boundary (a sync flush),
 * the last one with the final bit.  What a block compresses to depends on
 * its bytes and the 32 KiB before them alone, never on which thread
 * compressed it or when, so the member is the same bytes for any number of
 * threads.  Priming keeps the ratio within a fraction of a percent of one
 * long stream.
 *
 * Not thread-safe: one caller hands over blocks; the compressing threads
 * are the object's own and end with it, and the caller's thread takes a
 * block itself rather than wait for one. */
#ifndef PROFCONV_GZIP_H
#define PROFCONV_GZIP_H

#include <stddef.h>
#include <stdint.h>

typedef struct pc_gzip pc_gzip;

/* Receives compressed bytes in order, on the caller's thread. */
typedef void (*gz_emit_fn)(void *ctx, const uint8_t *p, size_t n);

/* A compressor for blocks of at most block_size bytes at level 1-9 (1-3:
 * ISA-L's igzip, 4-9: zlib).  threads counts the caller's: 1 compresses
 * on the caller's thread; N starts N - 1 more (at most 16), once a second
 * block is handed over, each with about 2 block_size of buffers, and the
 * caller compresses blocks too whenever it would wait for one; 0 means
 * the machine's cores.  NULL when out of memory. */
pc_gzip *gz_new(int level, int threads, size_t block_size, gz_emit_fn emit, void *ctx);

/* Hands over the n bytes at in (at most block_size), which stay the
 * caller's: they are compressed, or copied, before the call returns.
 * The copy costs less than it saves: the caller's buffer stays in its
 * core's cache, where writing the text into a buffer that another core
 * has just compressed makes each line it writes come back from that core
 * first (the caller's thread took 40 % longer to make the text).
 * last ends the member: the remaining blocks are emitted, then the
 * trailer.  Returns 0, or -1 when memory ran out or the codec failed (the
 * member is then incomplete; free it). */
int gz_block(pc_gzip *g, const uint8_t *in, size_t n, int last);

/* Stops the threads (after the blocks they are on) and frees g; NULL is
 * allowed. */
void gz_free(pc_gzip *g);

#endif
