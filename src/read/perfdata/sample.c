/* The fields of sample records, and the sample_id_all trailer of the
 * others: which are present, in which order, is the attribute's
 * sample_type (the kernel's perf_event.h fixes the order). */
#include <string.h>

#include "read/perfdata/perfdata.h"

typedef struct cur {
    const uint8_t *d;
    size_t len, at;
} cur;

static int take(cur *c, size_t n, const uint8_t **out)
{
    if (n > c->len - c->at)
        return -1;
    *out = c->d + c->at;
    c->at += n;
    return 0;
}

static int u64(cur *c, uint64_t *v)
{
    const uint8_t *p;
    if (take(c, 8, &p) < 0)
        return -1;
    *v = pd_u64(p);
    return 0;
}

static int skip_read(cur *c, uint64_t fmt)
{
    uint64_t v, nr = 1;
    const int group = (fmt & 8) != 0;
    size_t per = 1 + ((fmt & 4) != 0) + ((fmt & 16) != 0);  /* value, id, lost */
    size_t head = ((fmt & 1) != 0) + ((fmt & 2) != 0);      /* enabled, running */
    if (group && u64(c, &nr) < 0)
        return -1;
    if (nr > c->len / 8)
        return -1;
    for (size_t i = 0; i < head + per * nr; i++)
        if (u64(c, &v) < 0)
            return -1;
    return 0;
}

const char *pd_parse_sample(const pd_attr *a, const uint8_t *d, size_t len, pd_sample *s)
{
    cur c = {d, len, 0};
    uint64_t t = a->sample_type, v;
    const uint8_t *p;
    memset(s, 0, sizeof *s);
    if ((t & PD_SAMPLE_IDENTIFIER) && u64(&c, &s->id) < 0)
        return "the sample ends before its identifier";
    s->has_id = (t & (PD_SAMPLE_IDENTIFIER | PD_SAMPLE_ID)) != 0;
    if ((t & PD_SAMPLE_IP) && u64(&c, &s->ip) < 0)
        return "the sample ends before its ip";
    if (t & PD_SAMPLE_TID) {
        if (take(&c, 8, &p) < 0)
            return "the sample ends before its pid and tid";
        s->pid = pd_u32(p);
        s->tid = pd_u32(p + 4);
    }
    if (t & PD_SAMPLE_TIME) {
        if (u64(&c, &s->time) < 0)
            return "the sample ends before its time";
        s->has_time = 1;
    }
    if ((t & PD_SAMPLE_ADDR) && u64(&c, &v) < 0)
        return "the sample ends before its address";
    if ((t & PD_SAMPLE_ID) && u64(&c, &s->id) < 0)
        return "the sample ends before its id";
    if ((t & PD_SAMPLE_STREAM_ID) && u64(&c, &v) < 0)
        return "the sample ends before its stream id";
    if (t & PD_SAMPLE_CPU) {
        if (take(&c, 8, &p) < 0)
            return "the sample ends before its cpu";
        s->cpu = pd_u32(p);
        s->has_cpu = 1;
    }
    if (t & PD_SAMPLE_PERIOD) {
        if (u64(&c, &s->period) < 0)
            return "the sample ends before its period";
        s->has_period = 1;
    }
    if ((t & PD_SAMPLE_READ) && skip_read(&c, a->read_format) < 0)
        return "the sample ends inside its counter values";
    if (t & PD_SAMPLE_CALLCHAIN) {
        uint64_t nr;
        if (u64(&c, &nr) < 0 || nr > (len - c.at) / 8)
            return "the callchain is longer than the sample";
        take(&c, (size_t)nr * 8, &s->chain);
        s->n_chain = (size_t)nr;
    }
    if (t & PD_SAMPLE_RAW) {
        if (take(&c, 4, &p) < 0)
            return "the sample ends before its raw data";
        uint32_t n = pd_u32(p);
        /* The size word and the data are padded together to 8 bytes. */
        size_t padded = ((size_t)n + 4 + 7) / 8 * 8 - 4;
        if (take(&c, padded, &p) < 0)
            return "the raw data is longer than the sample";
    }
    if (t & PD_SAMPLE_BRANCH_STACK) {
        uint64_t nr;
        if (u64(&c, &nr) < 0)
            return "the sample ends before its branch stack";
        if ((a->branch_sample_type & (1ull << 17)) && u64(&c, &v) < 0)
            return "the sample ends before its branch stack";
        if (nr > (len - c.at) / 24 || take(&c, (size_t)nr * 24, &p) < 0)
            return "the branch stack is longer than the sample";
    }
    if (t & PD_SAMPLE_REGS_USER) {
        if (u64(&c, &s->regs_abi) < 0)
            return "the sample ends before its registers";
        if (s->regs_abi) {
            size_t n = (size_t)__builtin_popcountll(a->regs_user);
            s->regs_mask = a->regs_user;
            if (take(&c, n * 8, &s->regs) < 0)
                return "the registers are longer than the sample";
            s->n_regs = n;
        }
    }
    if (t & PD_SAMPLE_STACK_USER) {
        uint64_t size, dyn;
        if (u64(&c, &size) < 0)
            return "the sample ends before its stack copy";
        if (size) {
            if (size > len - c.at || take(&c, (size_t)size, &s->stack) < 0)
                return "the stack copy is longer than the sample";
            if (u64(&c, &dyn) < 0)
                return "the sample ends before the size of its stack copy";
            s->stack_len = dyn < size ? (size_t)dyn : (size_t)size;
        }
    }
    /* The fields after these (weights, data sources, interrupt
     * registers...) are not used. */
    return NULL;
}

size_t pd_sample_id_size(uint64_t t)
{
    return 8 * (size_t)(((t & PD_SAMPLE_TID) != 0) + ((t & PD_SAMPLE_TIME) != 0) +
                        ((t & PD_SAMPLE_ID) != 0) + ((t & PD_SAMPLE_STREAM_ID) != 0) +
                        ((t & PD_SAMPLE_CPU) != 0) + ((t & PD_SAMPLE_IDENTIFIER) != 0));
}

int pd_parse_sample_id(const pd_attr *a, const uint8_t *d, size_t len, pd_sample_id *s)
{
    uint64_t t = a->sample_type;
    memset(s, 0, sizeof *s);
    if (!(a->flags & PD_ATTR_SAMPLE_ID_ALL))
        return 0;
    size_t n = pd_sample_id_size(t);
    if (n > len)
        return -1;
    const uint8_t *p = d + len - n;
    if (t & PD_SAMPLE_TID) {
        s->pid = pd_u32(p);
        s->tid = pd_u32(p + 4);
        s->has_tid = 1;
        p += 8;
    }
    if (t & PD_SAMPLE_TIME) {
        s->time = pd_u64(p);
        s->has_time = 1;
        p += 8;
    }
    if (t & PD_SAMPLE_ID) {
        s->id = pd_u64(p);
        s->has_id = 1;
        p += 8;
    }
    if (t & PD_SAMPLE_STREAM_ID)
        p += 8;
    if (t & PD_SAMPLE_CPU) {
        s->cpu = pd_u32(p);
        p += 8;
    }
    if (t & PD_SAMPLE_IDENTIFIER) {
        s->id = pd_u64(p);
        s->has_id = 1;
    }
    return 0;
}
