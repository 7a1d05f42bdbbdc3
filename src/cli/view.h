/* `profconv view` and --open (view.c): a converted profile served to the
 * Firefox Profiler from this machine. */
#ifndef PROFCONV_CLI_VIEW_H
#define PROFCONV_CLI_VIEW_H

#include <stddef.h>

typedef struct cli_view_options {
    const char *profiler_url;  /* "https://profiler.firefox.com" or another deployment */
    const char *name;          /* the file name the address ends with ("perf.json.gz") */
    int gzip;                  /* data is gzipped */
    int open_browser;          /* start the desktop's opener */
    int quiet;                 /* no messages on standard error but errors */
} cli_view_options;

/* Whether url can be the base of a profiler address (http:// or https://,
 * no spaces or control bytes). */
int cli_view_url_ok(const char *url);

/* Serves the size bytes of data on 127.0.0.1, on a port the system picks,
 * under a path of 128 random bits, prints the profiler's from-url address
 * on standard output and opens it when o says so; returns once the
 * profile was fetched whole (0), or on failure to serve (-1, said on
 * standard error).  SIGINT, SIGTERM and SIGHUP end the process with that
 * signal, as they end a conversion. */
int cli_view_serve(const unsigned char *data, size_t size, const cli_view_options *o);

#endif
