/* What the fuzz targets share: converting with the promises checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "fuzz.h"
#include "gecko_valid.h"
#include "processed_valid.h"

static void broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz: %s: %s\n", what, detail);
    abort();
}

void fuzz_check_message(const char *what, const char *msg)
{
    char again[2048];
    for (const unsigned char *c = (const unsigned char *)msg; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            broken(what, "a control byte in a message");
    /* Escaping leaves a safe message as it is: no C1 control, nothing
     * but valid UTF-8. */
    if (strcmp(pc_escape(again, sizeof again, msg), msg) != 0)
        broken(what, "a byte that is not valid UTF-8, or a C1 control, in a message");
}

void fuzz_check_log(void *ctx, int level, const char *message)
{
    (void)ctx;
    (void)level;
    fuzz_check_message("log line", message);
}

size_t fuzz_budget_of(const uint8_t *data, size_t size)
{
    if (size < 2 || size % 4 != 2)
        return 0;
    return (size_t)16384 << (data[size - 1] % 8);
}

/* The budget of the input being fuzzed, for the writes that follow. */
static size_t write_budget;

/* A conversion that ran out of its budget must say so in one line, and
 * leave nothing behind (the leak checker sees to that). */
static void budgeted_convert(const uint8_t *data, size_t size, const pc_options *o,
                             size_t budget)
{
    pc_input *in;
    pc_profile *p = NULL;
    pc_error err;
    if (pc_input_open_memory(&in, data, size, "fuzz", &err) != PC_OK)
        return;
    fuzz_budget(budget);
    int st = pc_convert(in, o, &p, &err);
    fuzz_budget(0);
    pc_input_close(in);
    pc_profile_free(p);
    if (st != PC_OK && (!err.message[0] || strchr(err.message, '\n')))
        broken("error message is not one line", err.message);
    if (st != PC_OK)
        fuzz_check_message("error message", err.message);
    if (st == PC_ENOMEM && !strstr(err.message, "out of memory"))
        broken("out of memory not said", err.message);
}

pc_profile *fuzz_convert(const uint8_t *data, size_t size, int threads,
                         const char *filter_file)
{
    pc_options o;
    pc_options_init(&o);
    o.threads = threads;
    o.filter_file = filter_file;
    /* Small inputs never reach the default depth limit: a third of them
     * (chosen by their size, so a run repeats) are cut at 5 frames. */
    if (size % 3 == 1)
        o.max_depth = 5;
    o.log = fuzz_check_log;
    write_budget = fuzz_budget_of(data, size);
    if (write_budget)
        budgeted_convert(data, size, &o, write_budget);
    pc_input *in;
    pc_profile *p = NULL;
    pc_error err;
    if (pc_input_open_memory(&in, data, size, "fuzz", &err) != PC_OK)
        return NULL;
    int st = pc_convert(in, &o, &p, &err);
    pc_input_close(in);
    if (st == PC_OK)
        return p;
    if (!err.message[0] || strchr(err.message, '\n'))
        broken("error message is not one line", err.message);
    fuzz_check_message("error message", err.message);
    /* Input errors name the byte offset (filter files their line); a
     * valid input with nothing to show has no byte at fault. */
    if (st == PC_EINPUT && !strstr(err.message, "offset ") && !filter_file &&
        !strstr(err.message, ": nothing to show: "))
        broken("input error without an offset", err.message);
    if (st != PC_EINPUT && st != PC_ENOMEM && st != PC_EIO && st != PC_EUSAGE)
        broken("unknown status", err.message);
    if (st != PC_EINPUT)
        return NULL;
    /* Damaged: what --keep-going makes of it must hold up too. */
    o.keep_going = 1;
    if (pc_input_open_memory(&in, data, size, "fuzz", &err) != PC_OK)
        return NULL;
    st = pc_convert(in, &o, &p, &err);
    pc_input_close(in);
    if (st != PC_OK && (!err.message[0] || strchr(err.message, '\n')))
        broken("error message is not one line", err.message);
    if (st != PC_OK)
        fuzz_check_message("error message", err.message);
    return st == PC_OK ? p : NULL;
}

unsigned char *fuzz_write(const pc_profile *p, int format, int gz, size_t *len)
{
    return fuzz_write_in(p, format, gz, PC_CONTAINER_AUTO, len);
}

unsigned char *fuzz_write_in(const pc_profile *p, int format, int gz, int container,
                             size_t *len)
{
    pc_write_options w;
    pc_write_options_init(&w);
    w.format = format;
    w.gzip = gz;
    w.container = container;
    w.log = fuzz_check_log;
    unsigned char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    pc_error err;
    if (write_budget) {
        fuzz_budget(write_budget);
        int st = pc_write_memory(p, &w, &a, &na, &err);
        fuzz_budget(0);
        free(a);
        a = NULL;
        /* Refusals (the Gecko format and heap profiles) come first. */
        if (st != PC_OK && st != PC_ENOMEM && st != PC_EUSAGE)
            broken("a write failed other than for memory", err.message);
        if (st == PC_ENOMEM && (strchr(err.message, '\n') || !strstr(err.message, "out of memory")))
            broken("out of memory not said in one line", err.message);
        if (st != PC_OK)
            fuzz_check_message("write error message", err.message);
    }
    if (pc_write_memory(p, &w, &a, &na, &err) != PC_OK) {
        fuzz_check_message("write error message", err.message);
        return NULL;
    }
    if (pc_write_memory(p, &w, &b, &nb, &err) != PC_OK)
        broken("second write failed", err.message);
    if (na != nb || (na && memcmp(a, b, na) != 0))
        broken("output differs between two writes", "");
    free(b);
    char msg[512];
    if (!gz && format == PC_FORMAT_FIREFOX && container != PC_CONTAINER_JSLB &&
        processed_check_text((const char *)a, na, msg, sizeof msg))
        broken("invalid processed profile", msg);
    if (!gz && format == PC_FORMAT_GECKO && gecko_check_text((const char *)a, na, msg, sizeof msg))
        broken("invalid Gecko profile", msg);
    *len = na;
    return a;
}

void fuzz_same_both_ways(const uint8_t *data, size_t size, int pprof)
{
    pc_profile *one = fuzz_convert(data, size, 1, NULL);
    pc_profile *two = fuzz_convert(data, size, 0, NULL);
    if (!one != !two)
        abort();
    if (one) {
        size_t na, nb;
        unsigned char *a = fuzz_write(one, PC_FORMAT_FIREFOX, 0, &na);
        unsigned char *b = fuzz_write(two, PC_FORMAT_FIREFOX, 0, &nb);
        if (!a != !b || (a && (na != nb || (na && memcmp(a, b, na) != 0))))
            abort();
        free(a);
        free(b);
        free(fuzz_write(one, PC_FORMAT_GECKO, 0, &na));
        if (pprof)
            free(fuzz_write(one, PC_FORMAT_PPROF, 0, &na));
    }
    pc_profile_free(one);
    pc_profile_free(two);
}
