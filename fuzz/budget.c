/* An allocation budget for the fuzz targets, so that the out-of-memory
 * paths are fuzzed as well as the others: in the fuzz builds the link
 * wraps malloc, calloc and realloc (-Wl,--wrap=...), and while a budget is
 * set, an allocation that would take the bytes allocated past it fails.
 * The bytes are counted as allocated, not as held: what matters is that
 * failures come at every point of a conversion, on any of its threads.
 * Elsewhere (the test suite's replay) the budget does nothing. */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "fuzz.h"

#ifdef PC_FUZZ_LIBFUZZER

static atomic_size_t limit, used;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

/* Whether n more bytes stay within the budget (counting them if so). */
static int take(size_t n)
{
    size_t cap = atomic_load(&limit);
    if (!cap)
        return 1;
    size_t had = atomic_fetch_add(&used, n);
    return had <= cap && n <= cap - had;
}

void *__wrap_malloc(size_t n)
{
    return take(n) ? __real_malloc(n) : NULL;
}

void *__wrap_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    return take(n * size) ? __real_calloc(n, size) : NULL;
}

void *__wrap_realloc(void *p, size_t n)
{
    return take(n) ? __real_realloc(p, n) : NULL;
}

int fuzz_budget(size_t bytes)
{
    atomic_store(&used, 0);
    atomic_store(&limit, bytes);
    return 1;
}

#else

int fuzz_budget(size_t bytes)
{
    (void)bytes;
    return 0;
}

#endif
