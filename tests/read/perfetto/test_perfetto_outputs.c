/* Perfetto profiles through the writers: what the Firefox formats say of
 * one, the processed format's heap track, and the refusals of formats that
 * cannot carry what a trace holds or of a trace with nothing to show. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonmini.h"
#include "pf_fixtures.h"
#include "t.h"
#include "test_util.h"

/* What the Firefox formats say about a Perfetto profile: a date from the
 * first clock snapshot with the wall clock (REALTIME), the cpu-clock's
 * period as the interval, a title naming the process and the input. */
TEST(perfetto_firefox_meta)
{
    pb_buf b = {0};
    /* BOOTTIME 1.5 s was 2026-11-25 12:00:00 UTC; the first sample comes
     * 100 ms later (MONOTONIC 600 ms). */
    uint32_t ids[] = {BOOTTIME, MONOTONIC, 1 /* REALTIME */};
    uint64_t ts[] = {1500000000, 500000000, 1795608000000000000ull};
    pfe_clock_snapshot(&b, ids, ts, 3);
    fx_perf(&b);
    pc_profile *p = convert_buf(&b, NULL);
    if (p) {
        static const int formats[] = {PC_FORMAT_FIREFOX, PC_FORMAT_GECKO};
        for (size_t k = 0; k < 2; k++) {
            size_t len = 0;
            char msg[256], *out = written_text(p, formats[k], &len);
            jv *root = out ? j_parse(out, len, msg, sizeof msg) : NULL;
            const jv *meta = j_get(root, "meta");
            T_EQ_STR(j_num_text(j_get(meta, "startTime")), "1795608000100");
            /* Counter growth per sample: 10, 5, 10, 15 and 25 ms. */
            T_EQ_STR(j_num_text(j_get(meta, "interval")), "10");
            T_EQ_STR(j_str(j_get(meta, "product")), "com.example.app (Perfetto: cpu-clock)");
            j_free(root);
            free(out);
        }
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* Perfetto traces through the Firefox writers: a valid processed profile
 * with categories; the Gecko writer leaves the heap out. */
TEST(perfetto_outputs)
{
    pb_buf b = {0};
    fx_perf(&b);
    fx_heap(&b);
    pc_profile *p = convert_buf(&b, NULL);
    if (p) {
        char *json = processed_of(p);
        if (json) {
            T_CONTAINS(json, "\"importedFrom\":\"Perfetto\"");
            T_CONTAINS(json, "\"counters\":[{\"name\":\"libc.malloc\"");
            T_CONTAINS(json, "\"weightType\":\"tracing-ms\"");
        }
        free(json);
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* Formats that cannot carry what the profile holds refuse it; a trace
 * with nothing to show is refused with what it holds and where samples
 * come from. */
TEST(perfetto_refusals)
{
    pb_buf b = {0};
    fx_heap(&b);
    pc_profile *p = convert_buf(&b, NULL);
    if (p) {
        pc_write_options w;
        pc_write_options_init(&w);
        w.format = PC_FORMAT_GECKO;
        unsigned char *out = NULL;
        size_t len = 0;
        pc_error err;
        T_EQ_INT(pc_write_memory(p, &w, &out, &len, &err), PC_EUSAGE);
        T_CONTAINS(err.message, "the Gecko format has no place for heap profiles (this one "
                                "has 3 heap callsites)");
        T_CHECK(!out);
    }
    pc_profile_free(p);
    pb_buf_free(&b);

    /* A Java heap graph without objects and a TrackEvent of no type:
     * neither gives anything to show. */
    static const uint32_t fields[] = {56, 11};
    for (size_t k = 0; k < 2; k++) {
        size_t pk = pfe_packet(&b, 1);
        pb_uint(&b, PFE_TIMESTAMP, 1000 + k);
        size_t m = pb_begin(&b, fields[k]);
        pb_uint(&b, 1, 7);
        pb_end(&b, m);
        pb_end(&b, pk);
    }
    pc_error err;
    T_EQ_INT(convert_bytes(b.data, b.len, NULL, &p, &err), PC_EINPUT);
    T_CONTAINS(err.message, "fixture: nothing to show: the input holds no samples; the trace "
                            "(2 packets) holds 1 Java heap graph packets (android.java_hprof), "
                            "1 TrackEvent packets that are no slice (counters, legacy events); CPU samples "
                            "with callstacks come from the linux.perf data source");
    pb_buf_free(&b);
}
