/* The perf.data file header, and the names perf gives events. */
#include <stdio.h>
#include <string.h>

#include "read/perfdata/perfdata.h"

int pd_detect(const uint8_t *data, size_t len)
{
    /* Big-endian files (magic read backwards) are detected too, so that
     * the reader can say why it refuses them. */
    return len >= PD_MAGIC_LEN &&
           (memcmp(data, "PERFILE2", 8) == 0 || memcmp(data, "2ELIFREP", 8) == 0);
}

const char *pd_parse_header(const uint8_t *d, size_t len, pd_header *h, uint64_t *at)
{
    memset(h, 0, sizeof *h);
    *at = 0;
    if (len < 16) {
        *at = len;
        return "the file ends inside its header";
    }
    if (memcmp(d, "2ELIFREP", 8) == 0)
        return "this perf.data was recorded on a big-endian machine, which is not supported";
    h->size = pd_u64(d + 8);
    if (h->size == 16) {
        /* perf record -o -: attributes and features come as records. */
        h->pipe = 1;
        return NULL;
    }
    *at = 8;
    if (h->size < PD_HEADER_SIZE)
        return "the header size is too small for a perf.data header";
    if (len < PD_HEADER_SIZE) {
        *at = len;
        return "the file ends inside its header";
    }
    h->attr_size = pd_u64(d + 16);
    h->attrs = (pd_section){pd_u64(d + 24), pd_u64(d + 32)};
    h->data = (pd_section){pd_u64(d + 40), pd_u64(d + 48)};
    memcpy(h->features, d + 72, 32);
    *at = 16;
    if (h->attr_size < 16 + 64 || h->attr_size > 4096)
        return "the attribute entry size is out of range";
    *at = 32;
    if (h->attrs.size % h->attr_size != 0)
        return "the attribute section is not a whole number of entries";
    *at = 40;
    if (h->data.off < h->size || h->data.off + h->data.size < h->data.off)
        return "the data section lies outside the file";
    *at = 24;
    if (h->attrs.off < h->size || h->attrs.off > h->data.off ||
        h->attrs.size > h->data.off - h->attrs.off)
        return "the attribute section does not lie between the header and the data";
    return NULL;
}

static const char *const hardware[] = {
    "cpu-cycles", "instructions", "cache-references", "cache-misses",
    "branch-instructions", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
    "stalled-cycles-backend", "ref-cycles",
};

static const char *const software[] = {
    "cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
    "minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
    "bpf-output", "cgroup-switches",
};

const char *pd_event_name(uint32_t type, uint64_t config, char *buf, size_t n,
                          uint64_t flags)
{
    const char *base = NULL;
    if (type == 0 && config < sizeof hardware / sizeof *hardware)
        base = hardware[config];
    else if (type == 1 && config < sizeof software / sizeof *software)
        base = software[config];
    if (!base)
        return NULL;
    const char *mod = "";
    if ((flags & PD_ATTR_EXCLUDE_KERNEL) && !(flags & PD_ATTR_EXCLUDE_USER))
        mod = ":u";
    else if ((flags & PD_ATTR_EXCLUDE_USER) && !(flags & PD_ATTR_EXCLUDE_KERNEL))
        mod = ":k";
    snprintf(buf, n, "%s%s", base, mod);
    return buf;
}
