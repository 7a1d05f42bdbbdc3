/* fx_android, in the record order simpleperf writes (MetaInfo, samples and
 * context switches, LostSituation, Files, Threads):
 *
 * process 1000 "com.example" (debuggable, SDK 33, userdebug), events
 * cpu-cycles (0) and cpu-clock (1); times relative to FX_T0 in ms:
 *   tid 1000 main: A@0, B@1, G@2, G@3 (unwind error NOT_ENOUGH_STACK),
 *                  A@4, G@5, and one cpu-clock sample A@2.5
 *   tid 1001 RenderThread: R@2.2 then R@1.2 (out of order in the file),
 *                  switched out at 2.3 and in at 4
 *   tid 1002 (no Thread record): Z@1.5
 *   tid 1003 "idle": a Thread record, no samples
 * process 2000 "glibc_prog", tid 2000: H@0.5, H@0.7 (no entry point)
 * Stacks, root first:
 *   A = __libc_init; android.os.Looper.loop; com.example.Foo.bar; malloc
 *   B = __libc_init; android.os.Looper.loop; com.example.Foo.hot
 *   G = com.example.Foo.bar; malloc
 *   R = __start_thread; android::RenderThread::threadLoop(); draw (file 9,
 *       a second File record for libhwui.so); do_syscall_64; __schedule
 *   Z = java.lang.String.equals; libc.so.6+0x1a2b (symbol unknown)
 *   H = java.lang.Thread.run; libc.so.6+0x99 (symbol unknown)
 * With the default gap removal (3), G@2, G@3 and G@5 go: 8 of 12 samples
 * stay (the cpu-clock one is left out by event selection). */
#include "fixtures.h"

#define F(file, sym, vaddr) {vaddr, file, sym, -1}

static const spe_frame A[] = {F(0, 2, 0x5010), F(3, 0, 0x300), F(8, 0, 0x800),
                              F(0, 0, 0x1000)};
static const spe_frame B[] = {F(4, 0, 0x7f0040), F(8, 0, 0x804), F(0, 0, 0x1000)};
static const spe_frame G[] = {F(0, 2, 0x5010), F(3, 0, 0x300)};
static const spe_frame R[] = {F(2, 0, 0xffffffc0100), F(2, 1, 0xffffffc0200),
                              F(9, 0, 0x9900), F(1, 0, 0x4400), F(0, 1, 0x2000)};
static const spe_frame Z[] = {F(5, -1, 0x1a2b), F(6, 0, 0x8000)};
static const spe_frame H[] = {F(5, -1, 0x99), F(7, 0, 0x7000)};

#define N(x) (sizeof x / sizeof *x)

void fx_android(spe *e)
{
    static const char *const events[] = {"cpu-cycles", "cpu-clock"};
    static const char *const libc[] = {"__libc_init", "__start_thread", "malloc"};
    static const char *const hwui[] = {"android::RenderThread::threadLoop()", "draw"};
    static const char *const kernel[] = {"__schedule", "do_syscall_64"};
    static const char *const dex[] = {"com.example.Foo.bar"};
    static const char *const jit[] = {"com.example.Foo.hot"};
    static const char *const zygote[] = {"java.lang.String.equals"};
    static const char *const oat[] = {"java.lang.Thread.run"};
    static const char *const jar[] = {"android.os.Looper.loop"};
    static const char *const hwui2[] = {"draw"};
    const spe_unwind unwind = {3, 2, 0x7fff1234};
    const uint64_t t = FX_T0, ms = FX_MS;

    spe_begin(e);
    spe_meta(e, events, 2, "com.example", "debuggable", "33", "userdebug", 0);
    spe_sample(e, t + 0, 1000, 1000000, 0, A, N(A), NULL);
    spe_sample(e, t + 500 * ms / 1000, 2000, 999, 0, H, N(H), NULL);
    spe_sample(e, t + 700 * ms / 1000, 2000, 999, 0, H, N(H), NULL);
    spe_sample(e, t + 1 * ms, 1000, 1000000, 0, B, N(B), NULL);
    spe_sample(e, t + 1500 * ms / 1000, 1002, 5, 0, Z, N(Z), NULL);
    spe_sample(e, t + 2 * ms, 1000, 1000000, 0, G, N(G), NULL);
    spe_sample(e, t + 2200 * ms / 1000, 1001, 7, 0, R, N(R), NULL);
    spe_sample(e, t + 1200 * ms / 1000, 1001, 7, 0, R, N(R), NULL);
    spe_switch(e, 0, t + 2300 * ms / 1000, 1001);
    spe_sample(e, t + 2500 * ms / 1000, 1000, 250000, 1, A, N(A), NULL);
    spe_sample(e, t + 3 * ms, 1000, 1000000, 0, G, N(G), &unwind);
    spe_sample(e, t + 4 * ms, 1000, 1000000, 0, A, N(A), NULL);
    spe_switch(e, 1, t + 4 * ms, 1001);
    spe_sample(e, t + 5 * ms, 1000, 1000000, 0, G, N(G), NULL);
    spe_lost(e, 12, 2);
    spe_file(e, 0, "/apex/com.android.runtime/lib64/bionic/libc.so", libc, N(libc));
    spe_file(e, 1, "/system/lib64/libhwui.so", hwui, N(hwui));
    spe_file(e, 2, "[kernel.kallsyms]", kernel, N(kernel));
    spe_file(e, 3, "/data/app/com.example/base.apk!/classes.dex", dex, N(dex));
    spe_file(e, 4, "[JIT app cache]", jit, N(jit));
    spe_file(e, 5, "/lib/x86_64-linux-gnu/libc.so.6", NULL, 0);
    spe_file(e, 6, "[JIT zygote cache]", zygote, N(zygote));
    spe_file(e, 7, "/system/framework/arm64/boot.oat", oat, N(oat));
    spe_file(e, 8, "/system/framework/framework.jar", jar, N(jar));
    spe_file(e, 9, "/system/lib64/libhwui.so", hwui2, N(hwui2));
    spe_thread(e, 1001, 1000, "RenderThread");
    spe_thread(e, 2000, 2000, "glibc_prog");
    spe_thread(e, 1003, 1000, "idle");
    spe_thread(e, 1000, 1000, "com.example");
    spe_end(e);
}
