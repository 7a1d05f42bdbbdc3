/* Frame categories from the library or file a frame's code lives in.
 *
 * The rules follow simpleperf's gecko_profile_generator.py (by file name,
 * first match wins) and fix the cases it misfiles: versioned shared
 * objects (libc.so.6), dex files inside APKs (base.apk!/classes.dex), the
 * zygote's JIT cache and old-style JIT symbol files (TemporaryFile-XXXXXX)
 * are native, DEX and JIT code like their unversioned kin.  Linux JIT
 * code, as perf names it, is JIT too.
 */
#include <string.h>

#include "base/path.h"
#include "model/model.h"

static const char *const sub_other[] = {"Other"};
static const char *const sub_java[] = {"Other", "Interpreted", "JIT", "AOT"};
static const char *const sub_native[] = {"Other", "ART"};
static const char *const sub_offcpu[] = {"Off-CPU"};
#define SUBS(x) x, (int)(sizeof x / sizeof *x)

const pc_category_info pc_categories[PC_CAT_COUNT] = {
    [PC_CAT_USER] = {"User", "yellow", SUBS(sub_other)},
    [PC_CAT_KERNEL] = {"Kernel", "orange", SUBS(sub_other)},
    [PC_CAT_NATIVE] = {"Native", "yellow", SUBS(sub_native)},
    [PC_CAT_DEX] = {"DEX", "green", SUBS(sub_java)},
    [PC_CAT_OAT] = {"OAT", "green", SUBS(sub_java)},
    /* Off-CPU time.  The Firefox Profiler knows a category named "Idle":
     * it leaves it out of the activity graph (which then shows the CPU
     * use), draws it lighter in the stack graphs, and offers "Include idle
     * samples" to see the on-CPU call tree alone; its subcategory says why
     * the thread was idle. */
    [PC_CAT_OFFCPU] = {"Idle", "transparent", SUBS(sub_offcpu)},
    /* The Firefox Profiler falls back to the first grey category. */
    [PC_CAT_OTHER] = {"Other", "grey", SUBS(sub_other)},
    [PC_CAT_JIT] = {"JIT", "green", SUBS(sub_java)},
};

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static int contains(const char *s, size_t n, const char *part)
{
    size_t k = strlen(part);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(s + i, part, k) == 0)
            return 1;
    return 0;
}

/* "libfoo.so.1.2" and the like: ".so" followed only by ".N" groups. */
static int versioned_so(const char *s, size_t n)
{
    size_t i = n;
    while (i > 0) {
        size_t j = i;
        while (j > 0 && s[j - 1] >= '0' && s[j - 1] <= '9')
            j--;
        if (j == i || j == 0 || s[j - 1] != '.')
            return 0;
        i = j - 1;
        if (ends_with(s, i, ".so"))
            return 1;
    }
    return 0;
}

int pc_category_of(const char *path, size_t n)
{
    size_t blen;
    const char *base = pc_base_name(path, n, &blen);

    /* perf's and simpleperf's name for the kernel, Perfetto's, modules. */
    if ((n == 17 && memcmp(path, "[kernel.kallsyms]", 17) == 0) ||
        (n == 7 && memcmp(path, "/kernel", 7) == 0) || ends_with(path, n, ".ko"))
        return PC_CAT_KERNEL;
    /* ART's JIT caches as mappings ("/memfd:jit-cache (deleted)"). */
    if (contains(path, n, "jit-cache") || contains(path, n, "jit-zygote-cache"))
        return PC_CAT_JIT;
    /* Linux JIT code: perf's symbol maps of JIT runtimes (perf-PID.map)
     * and jitdump's one-function files (jitted-PID-N.so). */
    if ((blen > 9 && memcmp(base, "perf-", 5) == 0 && ends_with(base, blen, ".map")) ||
        (blen > 10 && memcmp(base, "jitted-", 7) == 0 && ends_with(base, blen, ".so")))
        return PC_CAT_JIT;
    if (ends_with(path, n, ".so") || versioned_so(path, n))
        return PC_CAT_NATIVE;
    if (ends_with(path, n, ".vdex") || ends_with(path, n, ".apk") ||
        ends_with(path, n, ".jar") || ends_with(path, n, ".dex"))
        return PC_CAT_DEX;
    if (ends_with(path, n, ".oat") || ends_with(path, n, ".odex"))
        return PC_CAT_OAT;
    if ((n == 15 && memcmp(path, "[JIT app cache]", 15) == 0) ||
        (n == 18 && memcmp(path, "[JIT zygote cache]", 18) == 0) ||
        (blen > 14 && memcmp(base, "TemporaryFile-", 14) == 0))
        return PC_CAT_JIT;
    return PC_CAT_USER;
}

int pc_subcategory(int cat, int exec)
{
    enum { INTERPRETED = 1, JIT = 2, AOT = 3, ART = 1 };
    if (cat == PC_CAT_NATIVE)
        return exec == PC_EXEC_ART ? ART : 0;
    if (cat != PC_CAT_DEX && cat != PC_CAT_OAT && cat != PC_CAT_JIT)
        return 0;
    if (exec == PC_EXEC_INTERPRETED)
        return INTERPRETED;
    if (exec == PC_EXEC_JIT || cat == PC_CAT_JIT)
        return JIT;
    /* Without an execution type, only oat/odex code is known to be
     * compiled ahead of time. */
    return cat == PC_CAT_OAT ? AOT : 0;
}
