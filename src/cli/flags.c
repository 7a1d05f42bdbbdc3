/* The library names its options as the fields of pc_options and
 * pc_write_options, which is what a library caller sets; a user of the
 * command line sets flags, so its messages say those instead. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct {
    const char *field, *flag;
} words[] = {
    {"options.remove_gaps", "--remove-gaps"},
    {"options.event", "--event"},
    {"options.offcpu", "--trace-offcpu"},
    {"options.pids", "--pid"},
    {"options.exclude_pids", "--exclude-pid"},
    {"options.tids", "--tid"},
    {"options.exclude_tids", "--exclude-tid"},
    {"options.process_names", "--process-name"},
    {"options.exclude_process_names", "--exclude-process-name"},
    {"options.thread_names", "--thread-name"},
    {"options.exclude_thread_names", "--exclude-thread-name"},
    {"options.time_start", "--time-range"},
    {"options.time_end", "--time-range"},
    {"options.filter_file", "--filter-file"},
    {"options.aggregate_threads", "--aggregate-threads"},
    {"options.proguard_mapping_files", "--proguard-mapping-file"},
    {"options.show_art_frames", "--show-art-frames"},
    {"options.remove_methods", "--remove-method"},
    {"options.mangled", "--mangled"},
    {"options.symfs", "--symfs"},
    {"options.symbol_dirs", "--symbols"},
    {"options.switch_markers", "--markers"},
    {"options.percpu", "--percpu"},
    {"options.heap_dump", "--heap-dump"},
    {"options.heap_measure", "--heap"},
    {"options.keep_going", "--keep-going"},
    {"options.max_depth", "--max-depth"},
    {"options.threads", "--threads"},
    {"write_options.format", "--to"},
    {"write_options.gzip", "--gzip"},
    {"write_options.folded_prefix", "--folded-prefix"},
    {"write_options.folded_counts", "--folded-value"},
    {"write_options.folded_annotate", "--folded-annotate"},
    {"write_options.pprof_pid", "--pprof-split"},
};

static int ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

const char *cli_flag_words(const char *msg, char *buf, size_t size)
{
    size_t o = 0;
    for (size_t i = 0; msg[i] && o + 1 < size;) {
        size_t k = 0;
        const char *flag = NULL;
        /* A whole name only: "write_options.format" is not
         * "options.format", and "options.tids" is not "options.tid". */
        if (i == 0 || !ident(msg[i - 1])) {
            for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
                size_t n = strlen(words[w].field);
                if (strncmp(msg + i, words[w].field, n) == 0 && !ident(msg[i + n])) {
                    k = n;
                    flag = words[w].flag;
                    break;
                }
            }
        }
        if (flag) {
            o += (size_t)snprintf(buf + o, size - o, "%s", flag);
            if (o >= size)
                o = size - 1;
            i += k;
        } else {
            buf[o++] = msg[i++];
        }
    }
    buf[o] = 0;
    return buf;
}
