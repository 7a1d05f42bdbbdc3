/* The feature sections after the data: what the recording says about the
 * machine and the command, the build ids of the files it mapped, the
 * names of its events, and simpleperf's own sections: the symbol tables
 * of the files the samples hit (FILE, and FILE2 in protobuf), written on
 * the device at record time, and its meta info. */
#include <stdlib.h>
#include <string.h>

#include "base/pbwire.h"
#include "read/perfdata/perfdata.h"

/* A perf header string: a u32 length, then that many bytes, NUL-padded. */
static const char *perf_string(const uint8_t **p, const uint8_t *end, const char **s,
                               size_t *n)
{
    if (end - *p < 4)
        return "a string ends before its length";
    uint32_t len = pd_u32(*p);
    if ((size_t)(end - *p - 4) < len)
        return "a string is longer than its section";
    *s = (const char *)*p + 4;
    *n = strnlen(*s, len);
    *p += 4 + (size_t)len;
    return NULL;
}

static const char *one_string(pd_maps *m, const uint8_t *d, size_t len, uint32_t *out)
{
    const char *s;
    size_t n;
    const char *why = perf_string(&d, d + len, &s, &n);
    if (why)
        return why;
    *out = pc_intern(m->p, s, n);
    return NULL;
}

static const char *build_ids(pd_maps *m, const uint8_t *d, size_t len)
{
    const uint8_t *end = d + len;
    while (end - d >= 8) {
        uint16_t misc = pd_u16(d + 4), size = pd_u16(d + 6);
        if (size < 8 + 4 + 24 || size > end - d)
            return "a build id entry has a bad size";
        const uint8_t *bid = d + 12;
        size_t blen = 20;
        if (misc & (1u << 15))
            blen = bid[20] <= 20 ? bid[20] : 20;
        const char *name = (const char *)d + 36;
        size_t nlen = strnlen(name, size - 36u);
        int kernel = (misc & PD_MISC_CPUMODE) == PD_MISC_KERNEL;
        uint32_t path = pc_intern(m->p, name, nlen);
        int type = kernel ? (nlen && name[0] == '[' ? PD_DSO_KERNEL : PD_DSO_KERNEL_MODULE)
                          : PD_DSO_ELF;
        uint32_t dso = path == PC_NONE ? PC_NONE
                                       : pd_dso_find(m, path, kernel ? PD_KERNEL_SPACE : -1, type);
        if (dso == PC_NONE)
            return NULL;  /* out of memory: the caller sees p->oom */
        /* perf writes 20 bytes whatever the id's length; trailing zeros
         * of a shorter id are padding. */
        while (blen > 0 && bid[blen - 1] == 0 && !(misc & (1u << 15)))
            blen--;
        memcpy(m->dsos[dso].build_id, bid, blen);
        m->dsos[dso].build_id_len = (uint8_t)blen;
        d += size;
    }
    return NULL;
}

static const char *cmdline(pd_maps *m, const uint8_t *d, size_t len, pd_info *info)
{
    const uint8_t *end = d + len;
    if (len < 4)
        return "the command line ends before its count";
    uint32_t nr = pd_u32(d);
    d += 4;
    char *buf = NULL;
    size_t used = 0;
    for (uint32_t i = 0; i < nr; i++) {
        const char *s;
        size_t n;
        const char *why = perf_string(&d, end, &s, &n);
        if (why) {
            free(buf);
            return why;
        }
        char *nb = realloc(buf, used + n + 2);
        if (!nb) {
            free(buf);
            m->p->oom = 1;
            return NULL;
        }
        buf = nb;
        if (used)
            buf[used++] = ' ';
        memcpy(buf + used, s, n);
        used += n;
    }
    info->cmdline = pc_intern(m->p, buf ? buf : "", used);
    free(buf);
    return NULL;
}

static const char *event_desc(pd_maps *m, const uint8_t *d, size_t len, pd_info *info)
{
    const uint8_t *end = d + len;
    if (len < 8)
        return "the event descriptions end before their count";
    uint32_t nr = pd_u32(d), attr_size = pd_u32(d + 4);
    d += 8;
    for (uint32_t i = 0; i < nr; i++) {
        if ((size_t)(end - d) < (size_t)attr_size + 4)
            return "an event description is longer than its section";
        d += attr_size;
        uint32_t nids = pd_u32(d);
        d += 4;
        const char *s;
        size_t n;
        const char *why = perf_string(&d, end, &s, &n);
        if (why)
            return why;
        if ((size_t)(end - d) / 8 < nids)
            return "an event description has more ids than its section holds";
        uint32_t name = pc_intern(m->p, s, n);
        struct pc_col cols[] = {PC_COL(info->desc_ids), PC_COL(info->desc_names)};
        if (pc_grow_cols(&info->cap_desc, info->n_desc + nids + 1, cols, 2) < 0) {
            m->p->oom = 1;
            return NULL;
        }
        /* By position too: an attribute without ids is named by its
         * place in the list (id UINT64_MAX - position). */
        info->desc_ids[info->n_desc] = UINT64_MAX - i;
        info->desc_names[info->n_desc++] = name;
        for (uint32_t k = 0; k < nids; k++) {
            info->desc_ids[info->n_desc] = pd_u64(d + 8 * (size_t)k);
            info->desc_names[info->n_desc++] = name;
        }
        d += 8 * (size_t)nids;
    }
    return NULL;
}

static int add_symbol(pd_maps *m, uint64_t addr, uint64_t len, const char *name, size_t n)
{
    if (m->nsyms == m->capsyms) {
        size_t cap = m->capsyms ? m->capsyms * 2 : 1024;
        pd_symbol *s = realloc(m->syms, cap * sizeof *s);
        if (!s)
            return -1;
        m->syms = s;
        m->capsyms = cap;
    }
    uint32_t id = pc_intern(m->p, name, n);
    if (id == PC_NONE)
        return -1;
    m->syms[m->nsyms++] = (pd_symbol){addr, len, id};
    return 0;
}

static int cmp_sym(const void *a, const void *b)
{
    const pd_symbol *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* Gives dso the symbols added since sym0, sorted; a dso described twice
 * keeps the later table. */
static void set_symbols(pd_maps *m, uint32_t dso, size_t sym0)
{
    pd_dso *d = &m->dsos[dso];
    if (m->nsyms > sym0)
        qsort(m->syms + sym0, m->nsyms - sym0, sizeof *m->syms, cmp_sym);
    d->sym0 = sym0;
    d->nsym = m->nsyms - sym0;
    d->has_file = 1;
}

static uint32_t file_dso(pd_maps *m, const char *path, size_t n, uint32_t type)
{
    uint32_t id = pc_intern(m->p, path, n);
    if (id == PC_NONE)
        return PC_NONE;
    int kernel = type == PD_DSO_KERNEL || type == PD_DSO_KERNEL_MODULE;
    uint32_t dso = pd_dso_find(m, id, kernel ? PD_KERNEL_SPACE : -1, (int)type);
    if (dso != PC_NONE && type <= PD_DSO_UNKNOWN) {
        m->dsos[dso].type = (uint8_t)type;
        m->dsos[dso].kernel = type == PD_DSO_KERNEL || type == PD_DSO_KERNEL_MODULE;
    }
    return dso;
}

static const char *sp_file(pd_maps *m, const uint8_t *d, size_t len, pd_info *info)
{
    const uint8_t *end = d + len;
    while (d < end) {
        if (end - d < 4)
            return "a file entry ends before its size";
        uint32_t size = pd_u32(d);
        d += 4;
        if (size > (size_t)(end - d))
            return "a file entry is longer than its section";
        const uint8_t *e = d + size, *q = d;
        size_t n = strnlen((const char *)q, (size_t)(e - q));
        if (q + n == e)
            return "a file entry's path is not terminated";
        const char *path = (const char *)q;
        q += n + 1;
        if (e - q < 4 + 8 + 4)
            return "a file entry ends before its symbol count";
        uint32_t type = pd_u32(q);
        if (type > PD_DSO_UNKNOWN)
            type = PD_DSO_UNKNOWN;
        uint64_t min_vaddr = pd_u64(q + 4);
        uint32_t count = pd_u32(q + 12);
        q += 16;
        uint32_t dso = file_dso(m, path, n, type);
        if (dso == PC_NONE)
            return NULL;
        size_t sym0 = m->nsyms;
        for (uint32_t i = 0; i < count; i++) {
            if (e - q < 12)
                return "a file entry ends inside its symbols";
            uint64_t addr = pd_u64(q);
            uint32_t slen = pd_u32(q + 8);
            q += 12;
            size_t k = strnlen((const char *)q, (size_t)(e - q));
            if (q + k == e)
                return "a symbol name is not terminated";
            if (add_symbol(m, addr, slen, (const char *)q, k) < 0) {
                m->p->oom = 1;
                return NULL;
            }
            q += k + 1;
        }
        pd_dso *ds = &m->dsos[dso];
        ds->min_vaddr = min_vaddr;
        if (type == PD_DSO_DEX && e - q >= 4) {
            uint32_t nd = pd_u32(q);
            q += 4;
            if ((size_t)(e - q) / 8 < nd)
                return "a file entry's dex offsets run past it";
            q += 8 * (size_t)nd;
        } else if ((type == PD_DSO_ELF || type == PD_DSO_KERNEL_MODULE) && e - q >= 8) {
            /* Older simpleperf versions end the entry before it. */
            ds->off_min_vaddr = pd_u64(q);
        }
        set_symbols(m, dso, sym0);
        info->file_entries++;
        d = e;
    }
    return NULL;
}

static const char *sp_file2_entry(pd_maps *m, const uint8_t *d, size_t len, pd_info *info)
{
    pb_reader r, sub;
    pb_field f, g;
    const char *path = "";
    size_t path_len = 0;
    /* proto3 leaves zeros out: an entry without a type is the kernel's. */
    uint64_t type = PD_DSO_KERNEL, min_vaddr = 0, off = UINT64_MAX;
    size_t sym0 = m->nsyms;
    pb_reader_init(&r, d, len, 0);
    int got;
    while ((got = pb_next(&r, &f)) > 0) {
        if (f.number == 1 && f.wiretype == PB_LEN) {
            path = (const char *)f.data;
            path_len = f.len;
        } else if (f.number == 2 && f.wiretype == PB_VARINT) {
            type = f.value;
        } else if (f.number == 3 && f.wiretype == PB_VARINT) {
            min_vaddr = f.value;
        } else if (f.number == 4 && f.wiretype == PB_LEN) {
            uint64_t addr = 0, slen = 0;
            const char *name = "";
            size_t nlen = 0;
            pb_reader_sub(&r, &f, &sub);
            while ((got = pb_next(&sub, &g)) > 0) {
                if (g.number == 1 && g.wiretype == PB_VARINT)
                    addr = g.value;
                else if (g.number == 2 && g.wiretype == PB_VARINT)
                    slen = g.value;
                else if (g.number == 3 && g.wiretype == PB_LEN) {
                    name = (const char *)g.data;
                    nlen = g.len;
                }
            }
            if (got < 0)
                return "a FILE2 symbol is malformed";
            if (add_symbol(m, addr, slen, name, nlen) < 0) {
                m->p->oom = 1;
                return NULL;
            }
        } else if ((f.number == 6 || f.number == 7) && f.wiretype == PB_LEN) {
            pb_reader_sub(&r, &f, &sub);
            while ((got = pb_next(&sub, &g)) > 0)
                if (g.number == 1 && g.wiretype == PB_VARINT)
                    off = g.value;
            if (got < 0)
                return "a FILE2 entry is malformed";
        }
    }
    if (got < 0)
        return "a FILE2 entry is malformed";
    /* The symbols were added before the path was certain to be known. */
    uint32_t dso = file_dso(m, path, path_len, type > PD_DSO_UNKNOWN ? PD_DSO_UNKNOWN
                                                                     : (uint32_t)type);
    if (dso == PC_NONE)
        return NULL;
    m->dsos[dso].min_vaddr = min_vaddr;
    m->dsos[dso].off_min_vaddr = off;
    set_symbols(m, dso, sym0);
    info->file_entries++;
    return NULL;
}

static const char *sp_file2(pd_maps *m, const uint8_t *d, size_t len, pd_info *info)
{
    const uint8_t *end = d + len;
    while (d < end) {
        if (end - d < 4)
            return "a FILE2 entry ends before its size";
        uint32_t size = pd_u32(d);
        d += 4;
        if (size > (size_t)(end - d))
            return "a FILE2 entry is longer than its section";
        const char *why = sp_file2_entry(m, d, size, info);
        if (why)
            return why;
        d += size;
    }
    return NULL;
}

static int is_key(const char *k, size_t n, const char *want)
{
    return strlen(want) == n && memcmp(k, want, n) == 0;
}

static const char *sp_meta(pd_maps *m, const uint8_t *d, size_t len, pd_info *info)
{
    pc_profile *p = m->p;
    const char *s = (const char *)d, *end = s + len;
    while (s < end) {
        size_t kn = strnlen(s, (size_t)(end - s));
        if (s + kn == end)
            break;  /* padding, or a cut entry */
        const char *v = s + kn + 1;
        size_t vn = strnlen(v, (size_t)(end - v));
        if (v + vn == end)
            return "a meta info value is not terminated";
        info->simpleperf = 1;
        if (is_key(s, kn, "trace_offcpu"))
            info->trace_offcpu = vn == 4 && memcmp(v, "true", 4) == 0;
        else if (is_key(s, kn, "kernel_symbols_available"))
            info->kernel_symbols_available = vn == 4 && memcmp(v, "true", 4) == 0;
        else if (is_key(s, kn, "timestamp")) {
            /* Seconds since the epoch when the recording ended. */
            uint64_t t = 0;
            size_t k = 0;
            while (k < vn && v[k] >= '0' && v[k] <= '9' && t < UINT64_MAX / 10 / 1000000000)
                t = t * 10 + (uint64_t)(v[k++] - '0');
            if (k == vn && vn) {
                info->has_end_wall = 1;
                info->end_wall_ns = t * 1000000000;
            }
        } else if (is_key(s, kn, "app_package_name"))
            p->meta.app_package = pc_intern(p, v, vn);
        else if (is_key(s, kn, "app_type"))
            p->meta.app_type = pc_intern(p, v, vn);
        else if (is_key(s, kn, "android_sdk_version"))
            p->meta.sdk_version = pc_intern(p, v, vn);
        else if (is_key(s, kn, "android_build_type"))
            p->meta.build_type = pc_intern(p, v, vn);
        else if (is_key(s, kn, "event_type_info")) {
            /* A line per attribute, in order: "name,type,config". */
            free(info->event_names);
            info->event_names = NULL;
            info->n_event_names = 0;
            size_t lines = 1;
            for (size_t i = 0; i < vn; i++)
                lines += v[i] == '\n';
            info->event_names = malloc(lines * sizeof *info->event_names);
            if (!info->event_names) {
                p->oom = 1;
                return NULL;
            }
            const char *a = v, *ve = v + vn;
            while (a < ve) {
                const char *nl = memchr(a, '\n', (size_t)(ve - a));
                const char *le = nl ? nl : ve;
                const char *comma = memchr(a, ',', (size_t)(le - a));
                size_t nlen = (size_t)((comma ? comma : le) - a);
                if (nlen)
                    info->event_names[info->n_event_names++] = pc_intern(p, a, nlen);
                a = le + 1;
            }
        }
        s = v + vn + 1;
    }
    return NULL;
}

const char *pd_parse_feature(int feat, const uint8_t *d, size_t len, pd_maps *m,
                             pd_info *info, const pc_options *o)
{
    (void)o;
    switch (feat) {
    case PD_FEAT_BUILD_ID: return build_ids(m, d, len);
    case PD_FEAT_HOSTNAME: return one_string(m, d, len, &info->hostname);
    case PD_FEAT_OSRELEASE: return one_string(m, d, len, &info->osrelease);
    case PD_FEAT_VERSION: return one_string(m, d, len, &info->version);
    case PD_FEAT_ARCH: return one_string(m, d, len, &info->arch);
    case PD_FEAT_NRCPUS:
        if (len < 8)
            return "the CPU count is cut";
        info->nr_cpus = pd_u32(d);
        return NULL;
    case PD_FEAT_CMDLINE: return cmdline(m, d, len, info);
    case PD_FEAT_EVENT_DESC: return event_desc(m, d, len, info);
    case PD_FEAT_CLOCK_DATA:
        /* version, clockid, then the wall clock and the recording's clock
         * read at one moment. */
        if (len < 24)
            return "the clock data is cut";
        info->has_clock = 1;
        info->clock_wall_ns = pd_u64(d + 8);
        info->clock_at = pd_u64(d + 16);
        return NULL;
    case PD_FEAT_SP_FILE: return sp_file(m, d, len, info);
    case PD_FEAT_SP_FILE2: return sp_file2(m, d, len, info);
    case PD_FEAT_SP_META_INFO: return sp_meta(m, d, len, info);
    default:
        /* Features perf (below 64) or simpleperf (from 128) define that
         * nothing here needs are skipped quietly; others are counted. */
        if ((feat >= 64 && feat < 128) || feat > 134)
            info->unknown_features++;
        return NULL;
    }
}

void pd_info_free(pd_info *info)
{
    free(info->event_names);
    free(info->desc_ids);
    free(info->desc_names);
}
