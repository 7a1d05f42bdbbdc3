/* Two threads walking call paths of varying depth (8 to 39 frames) over
 * 64 functions, for argv[1] seconds each. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
static double secs;
volatile unsigned long sink;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (double)t.tv_sec + (double)t.tv_nsec * 1e-9; }
typedef void (*fn)(unsigned, int);
extern fn fns[64];
static void leaf(unsigned r) { unsigned long x = sink; for (int i = 0; i < 2000; i++) x = x * 6364136223846793005UL + r; sink = x; }
#define F(n) __attribute__((noinline)) static void f##n(unsigned r, int d) { if (d <= 0) leaf(r); else fns[(r >> (d % 24)) % 64](r * 2654435761u + n, d - 1); __asm__ volatile("" ::: "memory"); }
#define F8(a) F(a##0) F(a##1) F(a##2) F(a##3) F(a##4) F(a##5) F(a##6) F(a##7)
F8(0) F8(1) F8(2) F8(3) F8(4) F8(5) F8(6) F8(7)
#define R8(a) f##a##0, f##a##1, f##a##2, f##a##3, f##a##4, f##a##5, f##a##6, f##a##7,
fn fns[64] = { R8(0) R8(1) R8(2) R8(3) R8(4) R8(5) R8(6) R8(7) };
static void *run(void *arg) {
    unsigned r = (unsigned)(size_t)arg * 7919u + 1;
    double end = now() + secs;
    while (now() < end)
        for (int i = 0; i < 64; i++) { r = r * 1103515245u + 12345u; fns[r % 64](r, 8 + (int)(r >> 27)); }
    return 0;
}
int main(int argc, char **argv) {
    secs = argc > 1 ? atof(argv[1]) : 5;
    pthread_t t[2];
    for (size_t i = 0; i < 2; i++) pthread_create(&t[i], 0, run, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    return 0;
}
