/* The Firefox Profiler's "meta" object, one writer for both of its formats
 * (doc/formats/firefox.md, its meta table): what the profile is called, when
 * and how it was recorded, its categories and marker schema, and, in the
 * processed format, which threads to show and select first.
 *
 * What a user sees decides each field:
 * - startTime dates the profile.  Without a wall clock it is 0, which the
 *   profiler shows as no date at all (as its own importers do), rather
 *   than a day of 1970 from a boot-time clock.
 * - profilingStartTime/EndTime make the timeline span the recording (or
 *   the --time-range asked for), not just the instants that hold samples:
 *   a heap profile whose dumps share one instant is no "1 ms" profile.
 * - debug is not written: the profiler reads it as a Firefox build's and
 *   puts up a banner about unoptimized builds.
 * - symbolicationNotSupported: nothing can be symbolicated again here,
 *   so the profile information panel offers no button that fails.
 */
#include <stdio.h>
#include <string.h>

#include "write/write.h"

#define GECKO_VERSION 24
#define PROCESSED_VERSION 70

uint64_t pc_fx_zero(const pc_profile *p)
{
    return p->meta.first_time;
}

/* ---- Marker schema ---- */

typedef struct marker_field {
    const char *key, *label, *format;
    int searchable;
} marker_field;

static const marker_field unwind_fields[] = {
    {"error", "Error", "string", 1},
    {"rawCode", "Raw error code", "integer", 0},
    {"address", "Error address", "string", 0},
};

static const marker_field slice_fields[] = {
    {"category", "Category", "string", 1},
};

static const struct marker_type {
    const char *name, *tooltip, *label, *description;
    int overview;  /* also drawn in the timeline's overview */
    const marker_field *fields;
    size_t n_fields;
} marker_types[] = {
    {"OnCPU", "On-CPU", "On-CPU", "The thread was running on a CPU (context switch records).",
     0, NULL, 0},
    {"OffCPU", "Off-CPU", "Off-CPU",
     "The thread was switched out by the scheduler (context switch records).", 1, NULL, 0},
    {"UnwindError", "Unwinding stopped: {marker.data.error}", "{marker.data.error}",
     "The sample's stack is truncated: unwinding stopped early.", 0, unwind_fields,
     sizeof unwind_fields / sizeof *unwind_fields},
    {"TrackEvent", "{marker.name}", "{marker.name}", "A slice the trace recorded (TrackEvent).",
     0, slice_fields, sizeof slice_fields / sizeof *slice_fields},
};

static void field(jw *w, const marker_field *f, int gecko)
{
    jw_obj(w);
    jw_key(w, "key");
    jw_cstr(w, f->key);
    jw_key(w, "label");
    jw_cstr(w, f->label);
    jw_key(w, "format");
    jw_cstr(w, f->format);
    if (gecko && f->searchable) {
        jw_key(w, "searchable");
        jw_bool(w, 1);
    }
    jw_obj_end(w);
}

/* The processed format has "description" and "fields"; the Gecko format
 * of version 24 one "data" list, where a description is a static row. */
static void marker_schema(jw *w, int gecko)
{
    jw_arr(w);
    for (size_t k = 0; k < sizeof marker_types / sizeof *marker_types; k++) {
        const struct marker_type *m = &marker_types[k];
        jw_obj(w);
        jw_key(w, "name");
        jw_cstr(w, m->name);
        jw_key(w, "tooltipLabel");
        jw_cstr(w, m->tooltip);
        jw_key(w, "tableLabel");
        jw_cstr(w, m->label);
        jw_key(w, "chartLabel");
        jw_cstr(w, m->label);
        jw_key(w, "display");
        jw_arr(w);
        jw_cstr(w, "marker-chart");
        jw_cstr(w, "marker-table");
        if (m->overview)
            jw_cstr(w, "timeline-overview");
        jw_arr_end(w);
        if (gecko) {
            jw_key(w, "data");
            jw_arr(w);
            jw_obj(w);
            jw_key(w, "label");
            jw_cstr(w, "Description");
            jw_key(w, "value");
            jw_cstr(w, m->description);
            jw_obj_end(w);
        } else {
            jw_key(w, "description");
            jw_cstr(w, m->description);
            jw_key(w, "fields");
            jw_arr(w);
        }
        for (size_t f = 0; f < m->n_fields; f++)
            field(w, &m->fields[f], gecko);
        jw_arr_end(w);
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

/* ---- Pieces ---- */

static void categories(jw *w)
{
    jw_arr(w);
    for (int c = 0; c < PC_CAT_COUNT; c++) {
        jw_obj(w);
        jw_key(w, "name");
        jw_cstr(w, pc_categories[c].name);
        jw_key(w, "color");
        jw_cstr(w, pc_categories[c].color);
        jw_key(w, "subcategories");
        jw_arr(w);
        for (int k = 0; k < pc_categories[c].n_subcategories; k++)
            jw_cstr(w, pc_categories[c].subcategories[k]);
        jw_arr_end(w);
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

/* "misc": the build type and the samples lost, if any. */
static void misc(jw *w, const pc_profile *p)
{
    char lost[128] = "";
    uint64_t n = p->meta.lost_count, total = p->meta.lost_sample_count + n;
    if (p->meta.has_lost && n)
        snprintf(lost, sizeof lost, "%s%llu of %llu samples lost while recording (%.1f%%)",
                 p->meta.build_type != PC_NONE ? ", " : "", (unsigned long long)n,
                 (unsigned long long)total, 100.0 * (double)n / (double)total);
    if (p->meta.build_type == PC_NONE && !lost[0])
        return;
    jw_key(w, "misc");
    jw_str_begin(w);
    if (p->meta.build_type != PC_NONE) {
        jw_str_part(w, pc_str(&p->str, p->meta.build_type),
                    pc_str_len(&p->str, p->meta.build_type));
        jw_str_part(w, " build", 6);
    }
    jw_str_part(w, lost, strlen(lost));
    jw_str_end(w);
}

/* The wall-clock time of the timeline's zero in ms since the epoch; 0
 * (no date) when the recording has no wall clock. */
static void start_time(jw *w, const pc_profile *p)
{
    uint64_t zero = pc_fx_zero(p), at = p->meta.wall_at, wall = p->meta.wall_ns;
    if (!p->meta.has_wall || (zero < at && at - zero > wall) ||
        (zero > at && zero - at > UINT64_MAX - wall))
        jw_int(w, 0);
    else
        jw_ms(w, zero >= at ? wall + (zero - at) : wall - (at - zero));
}

static void extra_entry(jw *w, const char *label, const char *format)
{
    jw_obj(w);
    jw_key(w, "label");
    jw_cstr(w, label);
    jw_key(w, "format");
    jw_cstr(w, format);
    jw_key(w, "value");
}

static void extra_str(jw *w, const pc_profile *p, const char *label, uint32_t s)
{
    if (s == PC_NONE)
        return;
    extra_entry(w, label, "string");
    pc_jw_str_id(w, p, s);
    jw_obj_end(w);
}

/* The recording's details, under "Show more" in the profile information
 * panel (processed format only). */
static void extra(jw *w, const pc_profile *p)
{
    char events[512];
    pc_events_label(p, events, sizeof events);
    jw_key(w, "extra");
    jw_arr(w);
    jw_obj(w);
    jw_key(w, "label");
    jw_cstr(w, "Recording");
    jw_key(w, "entries");
    jw_arr(w);
    extra_str(w, p, "Recorded with", p->meta.source);
    extra_str(w, p, "App", p->meta.app_package);
    extra_str(w, p, "App type", p->meta.app_type);
    extra_str(w, p, "Android SDK", p->meta.sdk_version);
    extra_str(w, p, "Build type", p->meta.build_type);
    if (events[0]) {
        extra_entry(w, "Event shown", "string");
        jw_cstr(w, events);
        jw_obj_end(w);
    }
    if (p->heap.n) {
        extra_entry(w, "Heap shown", "string");
        jw_str_begin(w);
        const char *m = pc_heap_measure_name(p);
        jw_str_part(w, m, strlen(m));
        jw_str_part(w, " bytes", 6);
        jw_str_end(w);
        jw_obj_end(w);
    }
    extra_entry(w, "Samples shown", "integer");
    jw_uint(w, p->sample.n);
    jw_obj_end(w);
    extra_entry(w, "Samples recorded", "integer");
    jw_uint(w, p->sample.read);
    jw_obj_end(w);
    if (p->meta.has_lost) {
        extra_entry(w, "Samples lost while recording", "integer");
        jw_uint(w, p->meta.lost_count);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_obj_end(w);
    jw_arr_end(w);
}

/* ---- The meta object ---- */

void pc_jw_fx_meta(jw *w, const pc_profile *p, const pc_fx_meta *m)
{
    uint64_t zero = pc_fx_zero(p), interval = pc_interval_ns(p);

    jw_key(w, "meta");
    jw_obj(w);
    jw_key(w, "version");
    jw_int(w, GECKO_VERSION);
    if (!m->gecko) {
        jw_key(w, "preprocessedProfileVersion");
        jw_int(w, PROCESSED_VERSION);
    }
    jw_key(w, "interval");
    jw_ms(w, interval);
    jw_key(w, "startTime");
    start_time(w, p);
    /* The span shown: the recording, or what --time-range kept of it,
     * with room for its last sample, which lasts an interval (the
     * profiler leaves out what starts at the range's end). */
    uint64_t first = p->meta.shown_first, last = p->meta.shown_last;
    if (first < zero)
        first = zero;
    if (last < first)
        last = first;
    last = last > UINT64_MAX - interval ? UINT64_MAX : last + interval;
    jw_key(w, "profilingStartTime");
    jw_ms(w, first - zero);
    jw_key(w, "profilingEndTime");
    jw_ms(w, last - zero);
    jw_key(w, "processType");
    jw_int(w, 0);
    jw_key(w, "product");
    jw_cstr(w, m->title);
    if (p->meta.sdk_version != PC_NONE || p->meta.app_type != PC_NONE) {
        jw_key(w, "platform");
        jw_cstr(w, "Android");
    }
    if (p->meta.sdk_version != PC_NONE) {
        jw_key(w, "oscpu");
        jw_str_begin(w);
        jw_str_part(w, "Android SDK ", 12);
        jw_str_part(w, pc_str(&p->str, p->meta.sdk_version),
                    pc_str_len(&p->str, p->meta.sdk_version));
        jw_str_end(w);
    }
    misc(w, p);
    jw_key(w, "stackwalk");
    jw_int(w, 1);
    if (m->gecko) {
        jw_key(w, "gcpoison");
        jw_int(w, 0);
        jw_key(w, "asyncstack");
        jw_int(w, 1);
        jw_key(w, "shutdownTime");
        jw_null(w);
        jw_key(w, "presymbolicated");
        jw_bool(w, 1);
    } else {
        jw_key(w, "symbolicated");
        jw_bool(w, 1);
        jw_key(w, "symbolicationNotSupported");
        jw_bool(w, 1);
        if (p->meta.source != PC_NONE) {
            jw_key(w, "importedFrom");
            pc_jw_str_id(w, p, p->meta.source);
        }
    }
    jw_key(w, "categories");
    categories(w);
    jw_key(w, "markerSchema");
    marker_schema(w, m->gecko);
    if (!m->gecko) {
        extra(w, p);
        jw_key(w, "initialVisibleThreads");
        jw_arr(w);
        for (size_t k = 0; k < m->n_threads; k++)
            if (m->visible[k])
                jw_uint(w, k);
        jw_arr_end(w);
        if (m->selected != PC_NONE) {
            jw_key(w, "initialSelectedThreads");
            jw_arr(w);
            jw_uint(w, m->selected);
            jw_arr_end(w);
        }
        jw_key(w, "keepProfileThreadOrder");
        jw_bool(w, 1);
    }
    jw_obj_end(w);
}
