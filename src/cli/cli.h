/* What the command line's files share. */
#ifndef PROFCONV_CLI_H
#define PROFCONV_CLI_H

#include <stddef.h>

#include "profconv.h"

/* The one help text (help.c): --help prints it, and the option reference
 * in doc/ is checked against it. */
extern const char cli_usage_text[];

/* msg with the library's names of options ("options.max_depth",
 * "write_options.format") replaced by the flags that set them
 * ("--max-depth", "--to"), in buf of size bytes (cut to fit); returns
 * buf. */
const char *cli_flag_words(const char *msg, char *buf, size_t size);

/* --pprof-split (split.c): prof written as one pprof file per process,
 * each named after output with its pid, all of them or none; w's format
 * and compression are used, its pprof_pid set.  On success *names holds
 * the n files written (free with cli_split_free); on failure err says
 * why (its names not all escaped: for say()) and no file of the split is
 * left behind. */
int cli_write_split(const pc_profile *prof, const char *output, pc_write_options *w,
                    char ***names, size_t *n, pc_error *err);
void cli_split_free(char **names, size_t n);

/* Removes the files a split in progress staged; async-signal-safe, for
 * the handler of an interruption. */
void cli_split_remove_staged(void);

#endif
