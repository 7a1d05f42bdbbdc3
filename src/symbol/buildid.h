/* Build ids as recordings carry them: perf stores 20 bytes, an id of
 * fewer bytes (md5's 16, xxhash's 8) padded with zeros, and all zeros for
 * none. */
#ifndef PROFCONV_SYMBOL_BUILDID_H
#define PROFCONV_SYMBOL_BUILDID_H

#include <stddef.h>
#include <stdint.h>

/* The longest id compared; longer ones are compared on this prefix. */
#define PC_BUILDID_MAX 64

/* Whether a recorded id says anything: not empty, not all zeros. */
int pc_buildid_present(const uint8_t *id, size_t len);

/* len without the trailing zero bytes. */
size_t pc_buildid_trimmed_len(const uint8_t *id, size_t len);

/* Whether a file's id (got, got_len) is the recorded one: both present,
 * equal over the shorter length, and what the recorded one has beyond the
 * file's only padding. */
int pc_buildid_matches(const uint8_t *rec, size_t rec_len, const uint8_t *got, size_t got_len);

/* Lower-case hex of id[0..len) (len at most PC_BUILDID_MAX) into out,
 * which holds 2 * PC_BUILDID_MAX + 1 bytes. */
void pc_buildid_hex(const uint8_t *id, size_t len, char *out);

/* ROOT/.build-id/XX/REST followed by suffix, XX being the first two
 * digits of the hex id and REST the others: where gdb, perf and the
 * distributions keep files by build id.  malloc'd; NULL when out of memory
 * or when hex has fewer than 3 digits. */
char *pc_buildid_path(const char *root, const char *hex, const char *suffix);

/* The GNU build id in ELF notes laid out in this machine's byte order, as
 * the kernel exports its own (/sys/kernel/notes): its length, copied into
 * out (cap bytes at most), or 0 when none. */
size_t pc_buildid_from_notes(const uint8_t *notes, size_t size, uint8_t *out, size_t cap);

#endif
