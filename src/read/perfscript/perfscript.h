/* Reader for the text of Linux `perf script` (and of simpleperf's
 * report_sample.py, which imitates it).
 *
 * A sample is a header line, "comm [pid/]tid [cpu] secs.frac: [period]
 * event:", then its callchain, one frame per line, leaf first, as
 * "addr symbol[+0xoff] (dso)", and a blank line.  Without callchains the
 * one frame follows the event on the header line.  Lines starting with '#'
 * (perf's "# ========" header block) are comments, and so is every line
 * of that block (a recorded command line may hold newlines); lines under a
 * frame that are not frames (-F +srcline, trace fields) are skipped.
 *
 * The text is read line by line through the input window, so memory does
 * not grow with the input; what stays is the model's interned data.
 */
#ifndef PROFCONV_READ_PERFSCRIPT_H
#define PROFCONV_READ_PERFSCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "profconv.h"

/* How many leading bytes ps_detect() wants to see to decide. */
#define PS_DETECT_LEN 4096

/* True when the first len bytes look like perf script text: perf's header
 * block, or (after blank and comment lines and perf's header block) a
 * sample header line. */
int ps_detect(const uint8_t *data, size_t len);

/* Reads perf script text from in into p. */
int pc_read_perfscript(pc_input *in, pc_profile *p, const pc_options *o,
                       pc_error *err);

#endif
