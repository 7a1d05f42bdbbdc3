/* Output writers: one function per format, each serializing a grouped
 * profile (pc_group_samples done) into a sink. */
#ifndef PROFCONV_WRITE_H
#define PROFCONV_WRITE_H

#include "model.h"
#include "profconv.h"
#include "sink.h"

int pc_write_gecko(const pc_profile *p, pc_sink *s, pc_error *err);

#endif
