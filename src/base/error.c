#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>

#include "base/escape.h"

/* Every message is escaped once it is whole, here, whatever the format
 * and its arguments: no caller has to know which of its strings came
 * from the input. */
int pc_fail(pc_error *err, int status, const char *fmt, ...)
{
    if (err) {
        char raw[sizeof err->message];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(raw, sizeof raw, fmt, ap);
        va_end(ap);
        pc_escape(err->message, sizeof err->message, raw);
        err->status = status;
    }
    return status;
}

int pc_nomem(pc_error *err)
{
    return pc_fail(err, PC_ENOMEM, "out of memory");
}

static void vlog(pc_log_fn log, void *ctx, int level, const char *fmt, va_list ap)
{
    char raw[1024], line[1024];
    vsnprintf(raw, sizeof raw, fmt, ap);
    log(ctx, level, pc_escape(line, sizeof line, raw));
}

void pc_log(const pc_options *o, int level, const char *fmt, ...)
{
    va_list ap;
    if (!o || !o->log)
        return;
    va_start(ap, fmt);
    vlog(o->log, o->log_ctx, level, fmt, ap);
    va_end(ap);
}

void pc_log_to(pc_log_fn log, void *ctx, int level, const char *fmt, ...)
{
    va_list ap;
    if (!log)
        return;
    va_start(ap, fmt);
    vlog(log, ctx, level, fmt, ap);
    va_end(ap);
}
