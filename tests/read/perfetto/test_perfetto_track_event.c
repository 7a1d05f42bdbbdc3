/* TrackEvent callstacks, in traces of the project's own encoder: a slice
 * with an interned callstack on a thread track, one with an inline
 * callstack, one on a track no descriptor ties to a thread (left out and
 * counted), one without a callstack (not a sample), and a field of the
 * wrong wire type (refused with its offset). */
#include <stdlib.h>
#include <string.h>

#include "pf_encode.h"
#include "t.h"
#include "test_util.h"

enum { TP_TRACK_EVENT = 11, TP_TRACK_DESCRIPTOR = 60 };

static void track(pb_buf *b, uint64_t uuid, int pid, int tid)
{
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_FLAGS, 1);
    pb_uint(b, PFE_TIMESTAMP, 1);
    size_t td = pb_begin(b, TP_TRACK_DESCRIPTOR);
    pb_uint(b, 1, uuid);
    size_t th = pb_begin(b, 4);
    pb_uint(b, 1, (uint64_t)pid);
    pb_uint(b, 2, (uint64_t)tid);
    pb_string(b, 5, "Worker");
    pb_end(b, th);
    pb_end(b, td);
    pb_end(b, pk);
}

/* A slice begin at ts on track uuid named name, with callstack iid cs (0:
 * none) or, with inline_leaf, an inline callstack main -> inline_leaf. */
static void slice(pb_buf *b, uint64_t ts, uint64_t uuid, const char *name, uint64_t cs,
                  const char *inline_leaf)
{
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_TIMESTAMP, ts);
    size_t te = pb_begin(b, TP_TRACK_EVENT);
    pb_uint(b, 9, 1);
    pb_uint(b, 11, uuid);
    pb_string(b, 23, name);
    if (cs)
        pb_uint(b, 56, cs);
    if (inline_leaf) {
        size_t c = pb_begin(b, 55);
        size_t f = pb_begin(b, 1);
        pb_string(b, 1, "main");
        pb_end(b, f);
        f = pb_begin(b, 1);
        pb_string(b, 1, inline_leaf);
        pb_string(b, 2, "leaf.cc");
        pb_uint(b, 3, 42);
        pb_end(b, f);
        pb_end(b, c);
    }
    pb_end(b, te);
    pb_end(b, pk);
}

TEST(perfetto_track_event_callstacks)
{
    pb_buf b = {0};
    track(&b, 7, 100, 101);
    size_t pk = pfe_packet(&b, 1);
    size_t in = pb_begin(&b, PFE_INTERNED);
    pfe_str(&b, PFE_FUNCTION_NAMES, 1, "Outer");
    pfe_str(&b, PFE_FUNCTION_NAMES, 2, "Inner");
    pfe_frame(&b, PFE_FRAMES, 1, 1, 0, 0x10);
    pfe_frame(&b, PFE_FRAMES, 2, 2, 0, 0x20);
    uint64_t frames[] = {1, 2};
    pfe_callstack(&b, PFE_CALLSTACKS, 1, frames, 2, 0);
    pb_end(&b, in);
    pb_end(&b, pk);
    slice(&b, 100, 7, "Load", 1, NULL);
    slice(&b, 200, 7, "Draw", 0, "Paint");
    slice(&b, 300, 99, "Elsewhere", 1, NULL);  /* track 99: no descriptor */
    slice(&b, 400, 7, "Plain", 0, NULL);       /* no callstack */
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    pc_profile *p = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(b.data, b.len, &o, &p, &err), PC_OK);
    if (p) {
        T_EQ_INT(p->sample.n, 2);
        int load = 0, draw = 0;
        for (size_t i = 0; i < p->sample.n; i++) {
            const char *s = stack_text(p, p->sample.stack[i]);
            load += strcmp(s, "Outer;Inner;Load") == 0;
            draw += strcmp(s, "main;Paint;Draw") == 0;
            T_EQ_INT(p->thread.tid[pc_sample_thread(p, i)], 101);
            T_EQ_STR(str_of(p, p->event.name[pc_sample_event(p, i)]), "TrackEvent callstacks");
        }
        T_EQ_INT(load, 1);
        T_EQ_INT(draw, 1);
        T_CONTAINS(log_capture_text(), "1 TrackEvents (slices or callstacks) were left out");
        T_CONTAINS(log_capture_text(), "2 TrackEvent callstacks are samples");
    }
    pc_profile_free(p);

    /* track_uuid as a length-delimited field: refused, with where. */
    pb_buf bad = {0};
    pk = pfe_packet(&bad, 1);
    pb_uint(&bad, PFE_TIMESTAMP, 5);
    size_t te = pb_begin(&bad, TP_TRACK_EVENT);
    pb_string(&bad, 11, "x");
    pb_end(&bad, te);
    pb_end(&bad, pk);
    T_EQ_INT(convert_bytes_unchecked(bad.data, bad.len, NULL, &p, &err), PC_EINPUT);
    T_CONTAINS(err.message, "TrackEvent");
    T_CONTAINS(err.message, "offset");
    pc_profile_free(p);
    pb_buf_free(&bad);
    pb_buf_free(&b);
}

/* A TrackEvent of type on track uuid at ts (name NULL: none; cat NULL:
 * no category). */
static void event(pb_buf *b, uint64_t ts, uint64_t uuid, int type, const char *name,
                  const char *cat)
{
    size_t pk = pfe_packet(b, 1);
    pb_uint(b, PFE_TIMESTAMP, ts);
    size_t te = pb_begin(b, TP_TRACK_EVENT);
    pb_uint(b, 9, (uint64_t)type);
    pb_uint(b, 11, uuid);
    if (cat)
        pb_string(b, 22, cat);
    if (name)
        pb_string(b, 23, name);
    pb_end(b, te);
    pb_end(b, pk);
}

/* Slices are markers of their thread: nested begins and ends pair up
 * innermost first, per track; an instant has no length; a slice still
 * open at the end lasts to the last event; an end with nothing open is
 * left out, said so. */
TEST(perfetto_track_event_slices)
{
    pb_buf b = {0};
    track(&b, 7, 100, 101);
    track(&b, 8, 100, 102);
    event(&b, 1000, 7, 1, "Outer", "gfx");
    event(&b, 1500, 8, 1, "Other", NULL);
    event(&b, 2000, 7, 1, "Inner", NULL);
    event(&b, 2500, 7, 3, "Tick", "input");
    event(&b, 3000, 7, 2, NULL, NULL);   /* ends Inner */
    event(&b, 3500, 8, 2, NULL, NULL);   /* ends Other */
    event(&b, 4000, 7, 2, NULL, NULL);   /* ends Outer */
    event(&b, 4500, 8, 2, NULL, NULL);   /* nothing open on track 8 */
    event(&b, 5000, 7, 1, "Unended", NULL);
    event(&b, 6000, 8, 3, "Last", NULL);
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    pc_profile *p = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(b.data, b.len, &o, &p, &err), PC_OK);
    pb_buf_free(&b);
    if (!p)
        return;
    static const struct {
        const char *name, *cat;
        int64_t tid;
        uint64_t start, end;
    } want[] = {
        {"Outer", "gfx", 101, 1000, 4000}, {"Other", NULL, 102, 1500, 3500},
        {"Inner", NULL, 101, 2000, 3000},  {"Tick", "input", 101, 2500, 2500},
        {"Unended", NULL, 101, 5000, 6000}, {"Last", NULL, 102, 6000, 6000},
    };
    size_t slices = 0;
    for (size_t i = 0; i < p->marker.n; i++)
        slices += p->marker.type[i] == PC_MARK_SLICE;
    T_EQ_INT(slices, 6);
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        size_t found = 0;
        for (size_t i = 0; i < p->marker.n; i++) {
            if (p->marker.type[i] != PC_MARK_SLICE ||
                strcmp(str_of(p, p->marker.name[i]), want[k].name) != 0)
                continue;
            found++;
            T_EQ_INT(p->thread.tid[p->marker.thread[i]], want[k].tid);
            T_EQ_INT(p->marker.start[i], want[k].start);
            T_EQ_INT(p->marker.end[i], want[k].end);
            if (want[k].cat)
                T_EQ_STR(str_of(p, p->marker.s[i]), want[k].cat);
            else
                T_EQ_INT(p->marker.s[i], PC_NONE);
        }
        T_EQ_INT(found, 1);
    }
    T_CONTAINS(log_capture_text(), "1 TrackEvent slice ends matched no begin");
    T_CONTAINS(log_capture_text(), "1 TrackEvent slices did not end");
    /* In the processed format: TrackEvent markers with their category,
     * described by the schema. */
    size_t len = 0;
    char *fx = written_text(p, PC_FORMAT_FIREFOX, &len);
    T_CONTAINS(fx ? fx : "", "{\"type\":\"TrackEvent\",\"category\":\"gfx\"}");
    T_CONTAINS(fx ? fx : "", "\"name\":\"TrackEvent\"");
    free(fx);
    pc_profile_free(p);
}

/* More slices open at once than the reader keeps: the begins past the
 * limit are left out, said so, and the ends that would close them close
 * nothing, so every other end still closes its own begin. */
TEST(perfetto_track_event_slices_past_the_limit)
{
    enum { OPEN = 65536 + 2 };
    pb_buf b = {0};
    track(&b, 7, 100, 101);
    for (uint64_t k = 0; k < OPEN; k++)
        event(&b, 1000 + k, 7, 1, "Nested", NULL);
    for (uint64_t k = 0; k < OPEN; k++)
        event(&b, 1000000 + k, 7, 2, NULL, NULL);
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    pc_profile *p = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(b.data, b.len, &o, &p, &err), PC_OK);
    pb_buf_free(&b);
    if (!p)
        return;
    T_EQ_INT(p->marker.n, 65536);
    /* The outermost began first and ends last. */
    size_t outer = 0;
    for (size_t i = 0; i < p->marker.n; i++)
        outer += p->marker.start[i] == 1000 && p->marker.end[i] == 1000000 + OPEN - 1;
    T_EQ_INT(outer, 1);
    T_CONTAINS(log_capture_text(), "2 TrackEvent slices were left out: more than 65536");
    T_CHECK(!strstr(log_capture_text(), "matched no begin"));
    pc_profile_free(p);
}

/* Slices alone: the Firefox formats show them; a format without markers
 * refuses, saying where they can be seen. */
TEST(perfetto_track_event_slices_alone)
{
    pb_buf b = {0};
    track(&b, 7, 100, 101);
    event(&b, 1000, 7, 1, "Only", NULL);
    event(&b, 2000, 7, 2, NULL, NULL);
    pc_profile *p = NULL;
    pc_error err;
    T_EQ_INT(convert_bytes(b.data, b.len, NULL, &p, &err), PC_OK);
    pb_buf_free(&b);
    if (!p)
        return;
    static const int fmts[] = {PC_FORMAT_FIREFOX, PC_FORMAT_GECKO, PC_FORMAT_FOLDED,
                               PC_FORMAT_PPROF};
    for (size_t k = 0; k < 4; k++) {
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = fmts[k];
        unsigned char *out = NULL;
        size_t n = 0;
        int st = pc_write_memory(p, &w, &out, &n, &err);
        if (k < 2) {
            T_EQ_INT(st, PC_OK);
            char *text = out ? calloc(n + 1, 1) : NULL;
            if (text)
                memcpy(text, out, n);
            T_CHECK(text && strstr(text, "\"Only\"") != NULL);
            free(text);
        } else {
            T_EQ_INT(st, PC_EUSAGE);
            T_CONTAINS(err.message, "has no place for traced slices, and this profile holds "
                                    "nothing else (1 slices): write_options.format firefox");
        }
        free(out);
    }
    pc_profile_free(p);
}
