#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>

int pc_fail(pc_error *err, int status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->status = status;
    }
    return status;
}

int pc_nomem(pc_error *err)
{
    return pc_fail(err, PC_ENOMEM, "out of memory");
}

void pc_log(const pc_options *o, int level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    if (!o || !o->log)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->log(o->log_ctx, level, line);
}
