/* profconv command line: the only place that prints to the user or exits. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profconv.h"

enum { EXIT_USAGE = 1, EXIT_INPUT = 2, EXIT_IO = 3 };

static const char usage_text[] =
"usage: profconv [options] INPUT [-o OUTPUT]\n"
"\n"
"Converts a profile into a format the Firefox Profiler opens.\n"
"\n"
"INPUT is a simpleperf `report-sample --protobuf` file (plain or gzipped;\n"
"the format is recognised from the content), or - for standard input.\n"
"\n"
"Options:\n"
"  -o, --output FILE     where to write; - is standard output.  Default: the\n"
"                        input's name with its extension replaced by .json.gz,\n"
"                        in the current directory (standard output when the\n"
"                        input is standard input).\n"
"  -t, --to FORMAT       output format: gecko (the Firefox Profiler's Gecko\n"
"                        JSON).  Default: from the output name, else gecko.\n"
"      --gzip, --no-gzip compress the output with gzip, or not.  Default: gzip\n"
"                        when the output name ends in .gz.\n"
"      --remove-gaps N   drop runs of at most N consecutive samples whose stack\n"
"                        is incomplete (does not reach __libc_init or\n"
"                        __start_thread), to smooth the stack chart; threads\n"
"                        with no complete stack are kept whole.  0 keeps every\n"
"                        sample.  Default: 3.\n"
"      --event NAME      keep the samples of event type NAME.  Default: the\n"
"                        first event type with samples, or every event for\n"
"                        recordings made with --trace-offcpu.\n"
"  -q, --quiet           print errors only (no progress, no warnings)\n"
"  -h, --help            show this help\n"
"  -V, --version         show the version\n"
"\n"
"Examples:\n"
"  profconv perf.trace                       writes perf.json.gz\n"
"  profconv perf.trace -o app.json           uncompressed JSON\n"
"  profconv --remove-gaps 0 perf.trace -o all.json.gz\n"
"  profconv --event cpu-clock perf.trace -o clock.json.gz\n"
"  adb shell cat /data/local/tmp/perf.trace | profconv - -o perf.json.gz\n"
"Open the result at https://profiler.firefox.com (\"Load a profile from file\").\n"
"\n"
"Exit status: 0 success, 1 invalid usage, 2 malformed or unsupported input,\n"
"3 input/output error (or out of memory).\n";

static int quiet;
static const char *input_name = "";

static void log_line(void *ctx, int level, const char *message)
{
    (void)ctx;
    if (quiet)
        return;
    fprintf(stderr, "profconv: %s%s%s%s\n", input_name, *input_name ? ": " : "",
            level == PC_LOG_WARN ? "warning: " : "", message);
}

static int exit_code(int status)
{
    switch (status) {
    case PC_OK: return 0;
    case PC_EUSAGE: return EXIT_USAGE;
    case PC_EINPUT: return EXIT_INPUT;
    default: return EXIT_IO;
    }
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "profconv: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'profconv --help' for more information.\n");
    return EXIT_USAGE;
}

/* "dir/perf.trace.gz" -> "perf.json.gz" (malloc'd). */
static char *default_output(const char *input)
{
    const char *base = strrchr(input, '/');
    base = base ? base + 1 : input;
    size_t n = strlen(base);
    if (n > 3 && strcmp(base + n - 3, ".gz") == 0)
        n -= 3;
    for (size_t i = n; i > 0; i--) {
        if (base[i - 1] == '.') {
            if (i > 1)
                n = i - 1;
            break;
        }
    }
    char *out = malloc(n + 9);
    if (out)
        snprintf(out, n + 9, "%.*s.json.gz", (int)n, base);
    return out;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return strcmp(a, "-") != 0 && strcmp(b, "-") != 0 && stat(a, &sa) == 0 &&
           stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"to", required_argument, NULL, 't'},
        {"gzip", no_argument, NULL, 'z'},
        {"no-gzip", no_argument, NULL, 'Z'},
        {"remove-gaps", required_argument, NULL, 'g'},
        {"event", required_argument, NULL, 'e'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    pc_options opt;
    pc_write_options wopt;
    const char *output = NULL, *to = NULL;
    int gzip = -1, c;

    pc_options_init(&opt);
    pc_write_options_init(&wopt);
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:t:qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 't': to = optarg; break;
        case 'z': gzip = 1; break;
        case 'Z': gzip = 0; break;
        case 'g': {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || *end || end == optarg || v < 0 || v > INT_MAX)
                return usage_error("--remove-gaps needs a number >= 0, not '%s'", optarg);
            opt.remove_gaps = (int)v;
            break;
        }
        case 'e': opt.event = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': fputs(usage_text, stdout); return 0;
        case 'V': printf("profconv %s\n", PROFCONV_VERSION); return 0;
        case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
        default: return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return usage_error("%s", "no input file given");
    if (optind + 1 < argc)
        return usage_error("only one input file is accepted ('%s' is extra)",
                           argv[optind + 1]);
    const char *input = argv[optind];

    char *owned = NULL;
    if (!output) {
        output = strcmp(input, "-") == 0 ? "-" : (owned = default_output(input));
        if (!output) {
            fprintf(stderr, "profconv: out of memory\n");
            return EXIT_IO;
        }
    }
    int name_gzip = 0, name_format = pc_format_from_path(output, &name_gzip);
    if (to) {
        wopt.format = pc_format_by_name(to);
        if (wopt.format == PC_FORMAT_NONE) {
            free(owned);
            return usage_error("unknown output format '%s' (known: gecko)", to);
        }
    } else if (name_format != PC_FORMAT_NONE) {
        wopt.format = name_format;
    }
    wopt.gzip = gzip >= 0 ? gzip : name_gzip;
    if (same_file(input, output)) {
        fprintf(stderr, "profconv: %s: the output would overwrite the input\n", output);
        free(owned);
        return EXIT_USAGE;
    }

    pc_error err;
    pc_input *in = NULL;
    pc_profile *prof = NULL;
    opt.log = log_line;
    input_name = strcmp(input, "-") == 0 ? "<stdin>" : input;
    int st = pc_input_open(&in, input, &err);
    if (st == PC_OK)
        st = pc_convert(in, &opt, &prof, &err);
    pc_input_close(in);
    if (st == PC_OK)
        st = pc_write(prof, output, &wopt, &err);
    if (st != PC_OK) {
        fprintf(stderr, "profconv: %s\n", err.message);
    } else if (!quiet) {
        pc_summary sum;
        pc_profile_summary(prof, &sum);
        fprintf(stderr, "profconv: wrote %s: %zu threads, %zu of %zu samples\n",
                strcmp(output, "-") == 0 ? "<stdout>" : output, sum.threads,
                sum.samples, sum.samples_read);
    }
    pc_profile_free(prof);
    free(owned);
    return exit_code(st);
}
