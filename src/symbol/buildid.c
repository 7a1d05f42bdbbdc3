/* Build ids (see buildid.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/buildid.h"

int pc_buildid_present(const uint8_t *id, size_t len)
{
    return id && pc_buildid_trimmed_len(id, len) > 0;
}

size_t pc_buildid_trimmed_len(const uint8_t *id, size_t len)
{
    while (len > 0 && id[len - 1] == 0)
        len--;
    return len;
}

int pc_buildid_matches(const uint8_t *rec, size_t rec_len, const uint8_t *got, size_t got_len)
{
    if (!pc_buildid_present(rec, rec_len) || !pc_buildid_present(got, got_len))
        return 0;
    size_t n = rec_len < got_len ? rec_len : got_len;
    if (memcmp(rec, got, n) != 0)
        return 0;
    for (size_t i = n; i < rec_len; i++)
        if (rec[i] != 0)
            return 0;
    return 1;
}

void pc_buildid_hex(const uint8_t *id, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    if (len > PC_BUILDID_MAX)
        len = PC_BUILDID_MAX;
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[id[i] >> 4];
        out[2 * i + 1] = digits[id[i] & 15];
    }
    out[2 * len] = 0;
}

char *pc_buildid_path(const char *root, const char *hex, const char *suffix)
{
    size_t n = strlen(hex);
    if (n < 3)
        return NULL;
    size_t len = strlen(root) + strlen("/.build-id/") + n + 1 + strlen(suffix) + 1;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s/.build-id/%.2s/%s%s", root, hex, hex + 2, suffix);
    return p;
}

static uint32_t word(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

size_t pc_buildid_from_notes(const uint8_t *notes, size_t size, uint8_t *out, size_t cap)
{
    size_t off = 0;
    while (size - off >= 12) {
        uint32_t namesz = word(notes + off), descsz = word(notes + off + 4);
        uint32_t type = word(notes + off + 8);
        off += 12;
        /* Padded sizes computed in 64 bits cannot wrap. */
        uint64_t name_pad = ((uint64_t)namesz + 3) & ~(uint64_t)3;
        uint64_t desc_pad = ((uint64_t)descsz + 3) & ~(uint64_t)3;
        if (name_pad > size - off || desc_pad > size - off - name_pad)
            return 0;
        const uint8_t *name = notes + off, *desc = notes + off + name_pad;
        off += (size_t)(name_pad + desc_pad);
        if (type == 3 && namesz == 4 && memcmp(name, "GNU", 4) == 0 && descsz > 0) {
            size_t n = descsz < cap ? descsz : cap;
            memcpy(out, desc, n);
            return n;
        }
    }
    return 0;
}
