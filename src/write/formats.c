/* The one table of output formats (see formats.h) and the public
 * functions that answer from it. */
#include <string.h>

#include "write/formats.h"
#include "write/write.h"

/* Longer endings first where one ends another (".speedscope.json" before
 * the firefox row's ".json"): pc_format_from_path takes the longest
 * match over all rows. */
static const pc_format_desc formats[] = {
    {PC_FORMAT_FIREFOX, "firefox", "the processed Firefox format", ".json.gz", {{".json", 0, 0}, {".json.gz", 1, 0}, {".jslb", 0, PC_CONTAINER_JSLB}, {".jslb.gz", 1, PC_CONTAINER_JSLB}}, 0, 1, 1,
     1, 1, 1, pc_write_firefox},
    {PC_FORMAT_GECKO, "gecko", "the Gecko format", ".json.gz", {{NULL, 0, 0}}, 0, 1, 0, 0, 0, 1, pc_write_gecko},
    {PC_FORMAT_FOLDED, "folded", "folded stacks", ".folded", {{".folded", 0, 0}, {".folded.gz", 1, 0}}, 0, 0, 1,
     1, 0, 0, pc_write_folded},
    /* pprof's tools expect gzip: only a ".pb" name asks for the bare proto. */
    {PC_FORMAT_PPROF, "pprof", "pprof", ".pb.gz",
     {{".pb.gz", 1, 0}, {".pb", 0, 0}, {".pprof", 1, 0}, {".pprof.gz", 1, 0}}, 1, 0, 1, 0, 0, 0, pc_write_pprof},
    {PC_FORMAT_SPEEDSCOPE, "speedscope", "speedscope", ".speedscope.json",
     {{".speedscope.json", 0, 0}, {".speedscope.json.gz", 1, 0}}, 0, 1, 1, 0, 0, 0, pc_write_speedscope},
    {PC_FORMAT_SVG, "svg", "an SVG flame graph", ".svg", {{".svg", 0, 0}, {".svg.gz", 1, 0}}, 0, 0, 1,
     1, 0, 0, pc_write_svg},
    /* No ending selects text: ".txt" names say nothing of their content,
     * and the summary is meant for the terminal. */
    {PC_FORMAT_TEXT, "text", "a text summary", ".txt", {{NULL, 0, 0}}, 0, 0, 1, 1, 0, 0, pc_write_text},
};

#define N_FORMATS (sizeof formats / sizeof *formats)

const pc_format_desc *pc_format_table(size_t *n)
{
    *n = N_FORMATS;
    return formats;
}

const pc_format_desc *pc_format_desc_of(int format)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (formats[i].format == format)
            return &formats[i];
    return NULL;
}

int pc_format_by_name(const char *name)
{
    for (size_t i = 0; name && i < N_FORMATS; i++)
        if (strcmp(formats[i].name, name) == 0)
            return formats[i].format;
    return PC_FORMAT_NONE;
}

int pc_format_nth(size_t i)
{
    return i < N_FORMATS ? formats[i].format : PC_FORMAT_NONE;
}

const char *pc_format_name(int format)
{
    const pc_format_desc *d = pc_format_desc_of(format);
    return d ? d->name : NULL;
}

const char *pc_format_extension(int format)
{
    const pc_format_desc *d = pc_format_desc_of(format);
    return d ? d->ext : NULL;
}

/* Length of suffix when the file name in path (after its last '/') ends
 * with it and has something before it, else 0. */
static size_t ending(const char *path, const char *suffix)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(base), k = strlen(suffix);
    return n > k && strcmp(base + n - k, suffix) == 0 ? k : 0;
}

/* The longest ending of d that path has, or NULL. */
static const pc_format_ending *best_ending(const pc_format_desc *d, const char *path,
                                           size_t *len)
{
    const pc_format_ending *best = NULL;
    *len = 0;
    for (size_t j = 0; j < PC_FORMAT_ENDINGS && d->ends[j].suffix; j++) {
        size_t k = ending(path, d->ends[j].suffix);
        if (k > *len) {
            *len = k;
            best = &d->ends[j];
        }
    }
    return best;
}

size_t pc_format_suffix_len(int format, const char *path)
{
    const pc_format_desc *d = pc_format_desc_of(format);
    size_t len = 0;
    if (d && path)
        best_ending(d, path, &len);
    return len;
}

int pc_output_gzip(int format, const char *path)
{
    if (path && ending(path, ".gz"))
        return 1;
    const pc_format_desc *d = pc_format_desc_of(format);
    if (!d)
        return 0;
    size_t len;
    const pc_format_ending *e = path ? best_ending(d, path, &len) : NULL;
    return e ? e->gzip : d->gzip;
}

int pc_output_container(const char *path)
{
    const pc_format_ending *best = NULL;
    size_t longest = 0;
    for (size_t i = 0; path && i < N_FORMATS; i++) {
        size_t len;
        const pc_format_ending *e = best_ending(&formats[i], path, &len);
        if (e && len > longest) {
            longest = len;
            best = e;
        }
    }
    return best ? best->container : PC_CONTAINER_AUTO;
}

int pc_format_from_path(const char *path, int *gzip)
{
    int format = PC_FORMAT_NONE;
    size_t longest = 0;
    for (size_t i = 0; path && i < N_FORMATS; i++) {
        size_t len;
        if (best_ending(&formats[i], path, &len) && len > longest) {
            longest = len;
            format = formats[i].format;
        }
    }
    if (gzip)
        *gzip = pc_output_gzip(format, path);
    return format;
}
