/* The reader table, in the order detection tries it, and detection. */
#include <stdio.h>

#include "io/source.h"
#include "read/perfdata/perfdata.h"
#include "read/perfetto/perfetto.h"
#include "read/perfscript/perfscript.h"
#include "read/read.h"
#include "read/simpleperf/simpleperf.h"

static const pc_reader_desc readers[] = {
    {"a simpleperf report-sample file, which starts with SIMPLEPERF", SP_MAGIC_LEN, sp_detect,
     pc_read_simpleperf},
    {"a perf.data recording, which starts with PERFILE2",
     PD_MAGIC_LEN, pd_detect, pc_read_perfdata},
    /* Text before Perfetto: a perf script file starting with a blank line
     * would pass for a Perfetto packet tag. */
    {"the text of perf script", PS_DETECT_LEN, ps_detect, pc_read_perfscript},
    {"a Perfetto trace", 16, pf_detect, pc_read_perfetto},
};

#define N_READERS (sizeof readers / sizeof *readers)

/* Refuses an input profconv recognises but does not read, in one line
 * saying what to do instead. */
static int not_ours(pc_input *in, size_t want, int before_readers, pc_error *err)
{
    int got = src_need(in, want, err);
    if (got < 0)
        return -got;
    const char *why = pc_not_ours(src_ptr(in), src_avail(in), before_readers);
    return why ? src_fail_at(in, err, 0, "%s", why) : PC_OK;
}

int pc_read_input(pc_input *in, pc_profile *p, const pc_options *o, pc_error *err)
{
    /* pprof passes for a Perfetto trace, so it is told apart first; its
     * check wants a leading 0x0A and binary bytes after it that neither
     * SIMPLEPERF nor perf script's text starts with. */
    int st = not_ours(in, 4096, 1, err);
    if (st != PC_OK)
        return st;
    for (size_t i = 0; i < N_READERS; i++) {
        int got = src_need(in, readers[i].detect_len, err);
        if (got < 0)
            return -got;
        if (src_avail(in) == 0)
            return src_fail_at(in, err, 0, "the input is empty");
        if (readers[i].detect(src_ptr(in), src_avail(in)))
            return readers[i].read(in, p, o, err);
    }
    if ((st = not_ours(in, PC_NOT_OURS_LEN, 0, err)) != PC_OK)
        return st;
    char kinds[512];
    size_t used = 0;
    for (size_t i = 0; i < N_READERS && used < sizeof kinds; i++)
        used += (size_t)snprintf(kinds + used, sizeof kinds - used, "%s%s",
                                 i == 0 ? "" : i + 1 < N_READERS ? ", " : " or ",
                                 readers[i].name);
    return src_fail_at(in, err, 0, "unknown input format (expected %s)", kinds);
}
