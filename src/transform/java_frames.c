/* Frame transforms: Java deobfuscation, hiding ART's own frames, removing
 * frames by name.  They follow simpleperf's report_utils: ART frames are
 * those report-sample marked ART_METHOD (kept in the file only with
 * --show-art-frames); Java frames are interpreted or JIT-compiled methods,
 * or code in dex, vdex, odex, oat, apk and jar files and in the JIT caches
 * (the execution type is only in files made with --show-execution-type). */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "java/proguard.h"
#include "transform/transform.h"

static int nomem(pc_error *err)
{
    return pc_fail(err, PC_ENOMEM, "out of memory");
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static int is_java(const pc_profile *p, uint32_t frame)
{
    static const char *const suffixes[] = {".dex", ".vdex", ".odex", ".oat", ".apk",
                                           ".jar", "[JIT app cache]", "[JIT zygote cache]"};
    uint8_t exec = p->frame.exec[frame];
    if (exec == PC_EXEC_INTERPRETED || exec == PC_EXEC_JIT)
        return 1;
    if (exec != PC_EXEC_NATIVE)
        return 0;
    uint32_t path = p->res.name[p->func.res[p->frame.func[frame]]];
    const char *s = pc_str(&p->str, path);
    size_t n = pc_str_len(&p->str, path);
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++)
        if (ends_with(s, n, suffixes[i]))
            return 1;
    return 0;
}

/* Renames the Java frames the mapping files know.  Samples carry no line
 * numbers, so each frame gets one name (deobf.h). */
static int deobfuscate(pc_profile *p, const pc_options *o, pc_error *err)
{
    pc_proguard m;
    pc_deobf_result r;
    int st = PC_OK;
    memset(&m, 0, sizeof m);
    memset(&r, 0, sizeof r);
    for (size_t i = 0; i < o->proguard_mapping_files.n && st == PC_OK; i++)
        st = pc_proguard_load(&m, o->proguard_mapping_files.items[i], err);
    size_t renamed = 0;
    for (size_t f = 0; st == PC_OK && f < p->frame.n; f++) {
        if (!is_java(p, (uint32_t)f))
            continue;
        uint32_t func = p->frame.func[f];
        int got = pc_deobf_lookup(&m, PC_NONE, pc_str(&p->str, p->func.name[func]),
                                  pc_str_len(&p->str, p->func.name[func]), 0, &r);
        if (got < 0) {
            st = nomem(err);
            break;
        }
        if (!got)
            continue;
        size_t n;
        const char *name = pc_deobf_name(&r, 0, &n);
        p->frame.func[f] = pc_func(p, pc_intern(p, name, n), p->func.res[func]);
        renamed++;
        if (p->oom)
            st = nomem(err);
    }
    if (st == PC_OK)
        pc_log(o, PC_LOG_INFO, "deobfuscated %zu Java frames", renamed);
    pc_deobf_result_free(&r);
    pc_proguard_free(&m);
    return st;
}

int pc_java_frames(pc_profile *p, const pc_options *o, pc_error *err)
{
    int st = PC_OK;
    if (o->proguard_mapping_files.n && (st = deobfuscate(p, o, err)) != PC_OK)
        return st;

    regex_t *re = calloc(o->remove_methods.n + 1, sizeof *re);
    uint8_t *drop = calloc(p->frame.n + 1, 1);
    size_t n_re = 0, dropped = 0;
    if (!re || !drop)
        st = nomem(err);
    while (st == PC_OK && n_re < o->remove_methods.n) {
        int e = regcomp(&re[n_re], o->remove_methods.items[n_re], REG_EXTENDED | REG_NOSUB);
        if (e) {
            char why[128];
            regerror(e, &re[n_re], why, sizeof why);
            st = pc_fail(err, PC_EUSAGE, "options.remove_methods '%s': %s",
                         o->remove_methods.items[n_re], why);
        } else {
            n_re++;
        }
    }
    size_t art = 0;
    for (size_t f = 0; st == PC_OK && f < p->frame.n; f++) {
        if (!o->show_art_frames && p->frame.exec[f] == PC_EXEC_ART) {
            drop[f] = 1;
            art++;
        }
        const char *name = pc_str(&p->str, p->func.name[p->frame.func[f]]);
        for (size_t k = 0; k < n_re && !drop[f]; k++)
            drop[f] = regexec(&re[k], name, 0, NULL, 0) == 0;
        dropped += drop[f];
    }
    /* report-sample removes ART frames before it folds a JIT frame into the
     * interpreted frame of the same method that calls it; hiding them here
     * must fold what becomes adjacent in the same way. */
    if (st == PC_OK && dropped && pc_drop_frames(p, drop, art > 0) < 0)
        st = nomem(err);
    for (size_t k = 0; k < n_re; k++)
        regfree(&re[k]);
    free(re);
    free(drop);
    return st;
}
