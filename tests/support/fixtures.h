/* Fixtures built with the project's own encoder. */
#ifndef PROFCONV_TESTS_FIXTURES_H
#define PROFCONV_TESTS_FIXTURES_H

#include <stdint.h>

#include "sp_encode.h"

/* Base time of fx_android: 18 digits, more than a double holds exactly. */
#define FX_T0 684943449407055862ULL
#define FX_MS 1000000ULL

/* A small Android-like recording (see fixtures.c for its contents and the
 * values derived from them by hand). */
void fx_android(spe *e);

#endif
