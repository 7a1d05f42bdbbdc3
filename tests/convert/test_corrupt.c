/* Damaged copies of every corpus file: truncated anywhere, they are refused
 * with a message naming an offset; with a flipped byte, they are either
 * refused the same way, refused as holding nothing to show, or converted
 * into valid Gecko and processed profiles.  Never a
 * crash, a hang or a sanitizer report.  Each file gets a budget of bytes to
 * convert, so big files get fewer variants and the suite stays fast. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "gecko_valid.h"
#include "processed_valid.h"
#include "t.h"
#include "test_util.h"

#define BUDGET_BYTES (6u << 20)

static unsigned long long rng;

static unsigned long long next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Converts data[0..len) and checks the outcome; returns 1 when it was
 * refused, 0 when it converted into a valid profile, -1 on a failure. */
static int try_variant(const unsigned char *data, size_t len, int must_fail,
                       const char *what, size_t where)
{
    pc_profile *p;
    pc_error err;
    int st = convert_bytes(data, len, NULL, &p, &err);
    if (st == PC_EINPUT) {
        /* A valid input that gives nothing to show is refused as such:
         * no byte is at fault. */
        int empty = !must_fail && strstr(err.message, ": nothing to show: ");
        if ((!empty && !strstr(err.message, "offset ")) || strchr(err.message, '\n')) {
            t_fail(__FILE__, __LINE__, "%s at %zu: message without an offset: %s",
                   what, where, err.message);
            return -1;
        }
        return 1;
    }
    if (st != PC_OK || must_fail) {
        t_fail(__FILE__, __LINE__, "%s at %zu: status %d (%s)", what, where, st,
               st ? err.message : "accepted");
        pc_profile_free(p);
        return -1;
    }
    /* Both formats must come out valid. */
    int ok = 1;
    for (int format = PC_FORMAT_GECKO; ok && format <= PC_FORMAT_FIREFOX; format++) {
        pc_write_options w;
        unsigned char *out = NULL;
        size_t out_len = 0;
        char msg[1024] = "write failed";
        pc_write_options_init(&w);
        w.format = format;
        ok = pc_write_memory(p, &w, &out, &out_len, &err) == PC_OK &&
             (format == PC_FORMAT_GECKO
                  ? gecko_check_text((const char *)out, out_len, msg, sizeof msg)
                  : processed_check_text((const char *)out, out_len, msg, sizeof msg)) == 0;
        if (!ok)
            t_fail(__FILE__, __LINE__, "%s at %zu: converted into an invalid %s profile: %s",
                   what, where, format == PC_FORMAT_GECKO ? "Gecko" : "processed", msg);
        free(out);
    }
    pc_profile_free(p);
    return ok ? 0 : -1;
}

static void damage(const char *rel)
{
    size_t len;
    unsigned char *data = corpus_read(rel, &len);
    if (!data || len < 16) {
        t_fail(__FILE__, __LINE__, "cannot read %s", rel);
        free(data);
        return;
    }
    size_t variants = BUDGET_BYTES / len;
    if (variants < 8)
        variants = 8;
    if (variants > 300)
        variants = 300;
    rng = 0x9e3779b97f4a7c15ULL ^ len;
    int failures = 0;

    /* Truncations: every cut of a small file, spread cuts of a large one,
     * always including the header and the last bytes. */
    for (size_t k = 0; k < variants && failures < 3; k++) {
        size_t cut = len <= variants ? k
                     : k < 16        ? k
                     : k < 24        ? len - 1 - (k - 16)
                                     : (size_t)(next_rand() % len);
        if (cut >= len)
            continue;
        failures += try_variant(data, cut, 1, "cut", cut) < 0;
    }
    /* Flipped bytes. */
    unsigned char *copy = malloc(len);
    size_t refused = 0, converted = 0;
    for (size_t k = 0; k < variants && failures < 3; k++) {
        size_t at = (size_t)(next_rand() % len);
        unsigned char bits = (unsigned char)(next_rand() % 255 + 1);
        memcpy(copy, data, len);
        copy[at] ^= bits;
        int r = try_variant(copy, len, 0, "flip", at);
        failures += r < 0;
        refused += r == 1;
        converted += r == 0;
    }
    T_EQ_INT(failures, 0);
    T_CHECK(refused + converted > 0);
    free(copy);
    free(data);
}

static void damage_row(const corpus_row *row)
{
    damage(row->col[M_FILE]);
}

TEST_SLOW(corrupt_corpus_inputs)
{
    corpus_each("input", NULL, "corrupt", damage_row);
}
