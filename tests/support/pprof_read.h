/* A pprof profile.proto reader for tests: decodes what the writer emits
 * (packed or unpacked repeated fields) and checks pprof's validity rules,
 * so that tests read profconv's pprof output back as pprof's tools would. */
#ifndef PROFCONV_TESTS_PPROF_READ_H
#define PROFCONV_TESTS_PPROF_READ_H

#include <stddef.h>
#include <stdint.h>

typedef struct pp_label {
    int64_t key, str, num;
} pp_label;

typedef struct pp_sample {
    uint64_t *loc;       /* leaf first */
    size_t n_loc;
    int64_t *value;
    size_t n_value;
    pp_label *label;
    size_t n_label;
} pp_sample;

typedef struct pp_location {
    uint64_t id, mapping, address;
    uint64_t *func;      /* Line.function_id, callee first */
    size_t n_func;
} pp_location;

typedef struct pp_function {
    uint64_t id;
    int64_t name, system_name, filename;
} pp_function;

typedef struct pp_mapping {
    uint64_t id;
    int64_t filename, build_id;
} pp_mapping;

typedef struct pp_profile {
    int64_t (*sample_type)[2];  /* type, unit */
    size_t n_sample_type;
    pp_sample *sample;
    size_t n_sample;
    pp_location *location;
    size_t n_location;
    pp_function *function;
    size_t n_function;
    pp_mapping *mapping;
    size_t n_mapping;
    char **str;
    size_t n_str;
    int64_t time_nanos, duration_nanos, period, default_sample_type;
    int64_t period_type[2];
    int64_t *comment;
    size_t n_comment;
} pp_profile;

/* Decodes data (gunzipping it first if it is gzip).  Returns 0, or -1
 * with a message in err when the bytes are not a valid profile (wire
 * errors, string_table[0] not "", zero or duplicate ids, dangling ids,
 * value counts differing from the sample types, string indexes out of
 * range). */
int pp_read(const unsigned char *data, size_t len, pp_profile *p, char *err, size_t errlen);
void pp_free(pp_profile *p);

/* The string at index i, or "(bad)". */
const char *pp_str(const pp_profile *p, int64_t i);
/* The index of sample type named type, or -1. */
int pp_type_index(const pp_profile *p, const char *type);
/* Samples of type k as folded stacks "root;...;leaf value" (function
 * names), summed and sorted bytewise; zero values left out.  malloc'd. */
char *pp_folded(const pp_profile *p, int k);

#endif
