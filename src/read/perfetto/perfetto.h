/* Reader for Perfetto traces: the profiling data in them (traced_perf
 * PerfSample, Chrome StreamingProfilePacket, heapprofd ProfilePacket and
 * streaming allocations), with the interned data, clocks, process and
 * thread names, symbols and deobfuscation mappings they need
 * (doc/formats/perfetto.md, doc/formats/perfetto-fields.md).
 *
 * A trace is a run of `0x0A <varint length> <TracePacket>`; packets are
 * decoded one at a time from the input window, never the whole trace as a
 * tree.  Names are resolved at the end, since symbols and deobfuscation
 * packets may follow the samples they name.
 */
#ifndef PROFCONV_READ_PERFETTO_H
#define PROFCONV_READ_PERFETTO_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "profconv.h"

/* True when the bytes look like a Perfetto trace: a first packet field
 * whose length fits. */
int pf_detect(const uint8_t *data, size_t len);

int pc_read_perfetto(pc_input *in, pc_profile *p, const pc_options *o,
                     pc_error *err);

#endif
