/* Option combinations: the first eight bytes choose the conversion's and
 * the write's options, the rest is the input, of any kind.  Options meet
 * in ways no single test lists (off-CPU modes with filters, per-CPU
 * threads with heap dumps, a depth limit with gap removal...); whatever
 * they are, a conversion either succeeds with the same bytes twice or
 * fails with one line. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

enum { OPTION_BYTES = 8 };

static void check_message(int st, const pc_error *err)
{
    if (st == PC_OK)
        return;
    if (!err->message[0])
        abort();
    fuzz_check_message("options", err->message);
    if (st != PC_EINPUT && st != PC_ENOMEM && st != PC_EIO && st != PC_EUSAGE)
        abort();
}

int fuzz_options(const uint8_t *data, size_t size)
{
    static const char *const events[] = {NULL, "cpu-clock", "sched:sched_switch", "nope"};
    static const char *const names[] = {"^m", "Binder:.*", "(", "RenderThread"};
    static const int64_t ids[] = {1, 2, 100, -1};
    if (size < OPTION_BYTES)
        return 0;
    const uint8_t *b = data;
    pc_options o;
    pc_options_init(&o);
    o.keep_going = b[0] & 1;
    o.threads = b[0] & 2 ? 1 : 0;
    o.percpu = (b[0] >> 2) & 1;
    o.show_art_frames = (b[0] >> 3) & 1;
    o.mangled = (b[0] >> 4) & 1;
    o.switch_markers = !((b[0] >> 5) & 1);
    static const int gaps[] = {-1, 0, 1, 3};
    o.remove_gaps = gaps[b[0] >> 6];
    o.offcpu = b[1] % 5;
    o.heap_measure = (b[1] / 5) % 4;
    o.heap_dump = b[2] & 3;
    static const size_t depths[] = {PC_MAX_DEPTH_DEFAULT, 0, 1, 3};
    o.max_depth = depths[(b[2] >> 2) & 3];
    static const int64_t starts[] = {-1, 0, 1000000, -1};
    static const int64_t ends[] = {-1, 1000000, -1, 0};
    o.time_start = starts[b[3] & 3];
    o.time_end = ends[b[3] & 3];
    o.event = events[(b[3] >> 2) & 3];
    /* At most one filter of each kind, each from a short list. */
    pc_ids tid = {&ids[b[4] & 3], 1}, pid = {&ids[(b[4] >> 2) & 3], 1};
    pc_strings name = {&names[(b[4] >> 4) & 3], 1};
    if (b[5] & 1)
        o.tids = tid;
    if (b[5] & 2)
        o.exclude_pids = pid;
    if (b[5] & 4)
        o.thread_names = name;
    if (b[5] & 8)
        o.exclude_process_names = name;
    if (b[5] & 16)
        o.aggregate_threads = name;
    if (b[5] & 32)
        o.remove_methods = name;

    o.log = fuzz_check_log;

    pc_write_options w;
    pc_write_options_init(&w);
    w.log = fuzz_check_log;
    w.format = pc_format_nth(b[6] % 5);
    w.gzip = (b[6] >> 3) & 1;
    w.folded_prefix = (b[6] >> 4) & 3;
    w.folded_counts = (b[6] >> 6) & 1;
    w.folded_annotate = b[6] >> 7;
    w.pprof_pid = b[7] & 1 ? ids[(b[7] >> 1) & 3] : -1;
    w.pprof_one_process = (b[7] >> 3) & 1;

    const uint8_t *in_data = data + OPTION_BYTES;
    size_t in_size = size - OPTION_BYTES;
    pc_input *in;
    pc_profile *p = NULL;
    pc_error err;
    if (pc_input_open_memory(&in, in_data, in_size, "fuzz", &err) != PC_OK)
        return 0;
    size_t budget = fuzz_budget_of(in_data, in_size);
    fuzz_budget(budget);
    int st = pc_convert(in, &o, &p, &err);
    fuzz_budget(0);
    pc_input_close(in);
    check_message(st, &err);
    if (st != PC_OK)
        return 0;
    unsigned char *x = NULL, *y = NULL;
    size_t nx = 0, ny = 0;
    if (w.gzip) {
        /* The gzip wrapper's status only: in this instrumented build ISA-L
         * has been seen to pick other (valid) matches from one call to the
         * next, which the normal builds do not; the bytes are compared
         * uncompressed below. */
        int sg = pc_write_memory(p, &w, &x, &nx, &err);
        check_message(sg, &err);
        free(x);
        x = NULL;
        w.gzip = 0;
    }
    int sx = pc_write_memory(p, &w, &x, &nx, &err);
    check_message(sx, &err);
    int sy = pc_write_memory(p, &w, &y, &ny, &err);
    check_message(sy, &err);
    if (sx != sy || nx != ny || (nx && memcmp(x, y, nx) != 0))
        abort();
    free(x);
    free(y);
    pc_profile_free(p);
    return 0;
}

PC_FUZZ_TARGET(fuzz_options)
