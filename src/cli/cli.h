/* What the command line's files share. */
#ifndef PROFCONV_CLI_H
#define PROFCONV_CLI_H

#include <stddef.h>

/* The one help text (help.c): --help prints it, and the option reference
 * in doc/ is checked against it. */
extern const char cli_usage_text[];

/* msg with the library's names of options ("options.max_depth",
 * "write_options.format") replaced by the flags that set them
 * ("--max-depth", "--to"), in buf of size bytes (cut to fit); returns
 * buf. */
const char *cli_flag_words(const char *msg, char *buf, size_t size);

#endif
