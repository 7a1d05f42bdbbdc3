/* Error and log helpers used inside the library. */
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

#endif
