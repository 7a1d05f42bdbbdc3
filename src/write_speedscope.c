/* speedscope's JSON file format (placeholder until the writer lands). */
#include "error.h"
#include "write.h"

int pc_write_speedscope(const pc_profile *p, pc_sink *s, pc_error *err)
{
    (void)p;
    (void)s;
    return pc_fail(err, PC_EUSAGE, "speedscope output is not available yet");
}
