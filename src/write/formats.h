/* The one table of output formats.  Everything that depends on which
 * format a name or a --to value means reads it: the format names, the
 * file-name endings that select a format and its compression, the
 * extension of names made from the input's, the ending a per-process name
 * puts its pid before, the browser's size limit (JSON formats), what a
 * format can carry, and the function that writes it.  A new format is a
 * row here and a file in write/. */
#ifndef PROFCONV_WRITE_FORMATS_H
#define PROFCONV_WRITE_FORMATS_H

#include <stdint.h>

#include "io/sink.h"
#include "model/model.h"
#include "profconv.h"

/* Serializes a grouped profile (pc_group_samples done) into s.  o is
 * never NULL here; the caller has checked its values. */
typedef int (*pc_writer_fn)(const pc_profile *p, const pc_write_options *o, pc_sink *s,
                            pc_error *err);

/* A file-name ending that names a format, and whether such a file is
 * gzip-compressed. */
typedef struct pc_format_ending {
    const char *suffix;
    uint8_t gzip;
    uint8_t container;   /* enum pc_container the name asks for */
} pc_format_ending;

#define PC_FORMAT_ENDINGS 4

typedef struct pc_format_desc {
    int format;          /* enum pc_format */
    const char *name;    /* the --to name */
    const char *title;   /* what messages call it */
    const char *ext;     /* extension of output names made from the input's */
    pc_format_ending ends[PC_FORMAT_ENDINGS];  /* unused entries: NULL */
    uint8_t gzip;        /* compression when the name says nothing */
    uint8_t json;        /* one JSON text, read by a browser as one string */
    uint8_t heap;        /* can carry heap profiles */
    uint8_t diff;        /* can carry a comparison (signed weights) */
    uint8_t counters;    /* can carry counter values over time */
    uint8_t markers;     /* can carry markers (traced slices) */
    pc_writer_fn write;
} pc_format_desc;

/* The row of format, or NULL for a value no row has. */
const pc_format_desc *pc_format_desc_of(int format);

/* The rows, in the order --help and messages list them; *n is set. */
const pc_format_desc *pc_format_table(size_t *n);

#endif
