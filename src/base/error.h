/* Error and log helpers used inside the library.
 *
 * Messages are escaped as a whole (base/escape.h) before anyone sees
 * them: a byte below 0x20, 0x7f, a C1 control or a byte that is not
 * valid UTF-8 becomes \xNN, so that no message holds a byte a terminal
 * would act on, whatever the input. */
#ifndef PROFCONV_ERROR_H
#define PROFCONV_ERROR_H

#include "profconv.h"

/* Formats err's message, sets its status and returns the status, so that
 * callers can write `return pc_fail(err, PC_EINPUT, ...)`.  err may be
 * NULL. */
int pc_fail(pc_error *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* pc_fail(err, PC_ENOMEM, "out of memory"). */
int pc_nomem(pc_error *err);

/* Sends one formatted line to the options' log callback, if any. */
void pc_log(const pc_options *o, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The same to the callback log (may be NULL) with ctx, for the write
 * options' own callback. */
void pc_log_to(pc_log_fn log, void *ctx, int level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
