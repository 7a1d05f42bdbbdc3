/* Entry points of api.c besides the public ones. */
#ifndef PROFCONV_CONVERT_H
#define PROFCONV_CONVERT_H

#include "profconv.h"

/* pc_convert without its last step, the refusal of a result that has
 * nothing to show: for tests of what a reader decodes from inputs whose
 * samples cannot be shown (samples without callstacks, heap dumps with
 * nothing unreleased). */
int pc_convert_unchecked(pc_input *in, const pc_options *o, pc_profile **out,
                         pc_error *err);

#endif
