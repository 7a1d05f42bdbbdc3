/* The reader table, in the order detection tries it, and detection. */
#include <stdio.h>

#include "io/source.h"
#include "read/perfetto/perfetto.h"
#include "read/perfscript/perfscript.h"
#include "read/read.h"
#include "read/simpleperf/simpleperf.h"

static const pc_reader_desc readers[] = {
    {"a simpleperf report-sample file, which starts with SIMPLEPERF", SP_MAGIC_LEN, sp_detect,
     pc_read_simpleperf},
    /* Text before Perfetto: a perf script file starting with a blank line
     * would pass for a Perfetto packet tag. */
    {"the text of perf script", PS_DETECT_LEN, ps_detect, pc_read_perfscript},
    {"a Perfetto trace", 16, pf_detect, pc_read_perfetto},
};

#define N_READERS (sizeof readers / sizeof *readers)

int pc_read_input(pc_input *in, pc_profile *p, const pc_options *o, pc_error *err)
{
    for (size_t i = 0; i < N_READERS; i++) {
        int got = src_need(in, readers[i].detect_len, err);
        if (got < 0)
            return -got;
        if (src_avail(in) == 0)
            return src_fail_at(in, err, 0, "the input is empty");
        if (readers[i].detect(src_ptr(in), src_avail(in)))
            return readers[i].read(in, p, o, err);
    }
    char kinds[512];
    size_t used = 0;
    for (size_t i = 0; i < N_READERS && used < sizeof kinds; i++)
        used += (size_t)snprintf(kinds + used, sizeof kinds - used, "%s%s",
                                 i == 0 ? "" : i + 1 < N_READERS ? ", " : " or ",
                                 readers[i].name);
    return src_fail_at(in, err, 0, "unknown input format (expected %s)", kinds);
}
