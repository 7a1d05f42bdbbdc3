/* Profiles built by hand through the model's API, for writer tests that
 * need exact numbers: each sample a path of function names, root first,
 * joined by ';'. */
#ifndef PROFCONV_TESTS_HAND_PROFILE_H
#define PROFCONV_TESTS_HAND_PROFILE_H

#include <stdint.h>

#include "model/model.h"

typedef struct hand_sample {
    const char *thread;  /* thread name; threads are made in order of first use */
    const char *path;    /* "root;...;leaf" */
    int64_t weight;
} hand_sample;

/* A grouped profile of n samples on a cpu-clock event of unit (enum
 * pc_unit); the thread named diff_thread (NULL: none) is marked as a
 * comparison thread.  Returns NULL when out of memory. */
pc_profile *hand_profile(const hand_sample *s, size_t n, int unit, const char *diff_thread);

#endif
