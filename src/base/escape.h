/* Text from the input made safe to show on a terminal, and the UTF-8
 * validation it shares with the JSON emitter.
 *
 * Messages quote what the input holds (event, thread and file names, perf
 * script lines) and the names the user gave; a crafted file could
 * otherwise retitle or clear the terminal with an escape sequence, or
 * break a message's one line with a newline.  The functions are inline
 * so that the command line, which sees only the library's public
 * interface, escapes its own lines with the very same rules. */
#ifndef PROFCONV_ESCAPE_H
#define PROFCONV_ESCAPE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (2..4), or 0 if s[0] does not
 * start one: ASCII, overlong forms, surrogates, values past U+10FFFF and
 * sequences cut by the end of the avail bytes all give 0. */
static inline size_t pc_utf8_len(const uint8_t *s, size_t avail)
{
    uint8_t c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0xc2 || c > 0xf4)
        return 0;
    if (c < 0xe0) {
        n = 2;
        cp = c & 0x1f;
    } else if (c < 0xf0) {
        n = 3;
        cp = c & 0x0f;
    } else {
        n = 4;
        cp = c & 0x07;
    }
    if (avail < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    /* Overlong forms, surrogates and values past U+10FFFF. */
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return n;
}

/* src (NUL-terminated) into dst, of size bytes (at least 1), NUL-terminated,
 * with every byte a terminal could act on written as \xNN (lowercase
 * hex): bytes below 0x20, 0x7f, the C1 controls U+0080..U+009F (some
 * terminals take them for ESC sequences) byte by byte, and bytes that are
 * not part of valid UTF-8.  Everything else is copied.
 *
 * A backslash is copied as it is: messages nest (a skipped record's
 * message inside the warning that counts the skips, the library's
 * message inside the command line's line), and escaping must give the
 * same text when applied twice, which an escaped backslash would not.
 * The price is that an input holding the four characters "\x1b" reads
 * like an escaped ESC; no byte of either reaches the terminal raw.
 *
 * Too long a text is cut before a whole character or escape, never inside
 * one.  Returns dst. */
static inline char *pc_escape(char *dst, size_t size, const char *src)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *s = (const uint8_t *)src;
    size_t o = 0;
    for (;;) {
        /* Printable ASCII, the bulk of any message, goes in runs. */
        const uint8_t *run = s;
        while (*s >= 0x20 && *s < 0x7f)
            s++;
        size_t k = (size_t)(s - run);
        if (k >= size - o) {
            memcpy(dst + o, run, size - 1 - o);
            o = size - 1;
            break;
        }
        memcpy(dst + o, run, k);
        o += k;
        if (!*s)
            break;
        /* No valid sequence runs past the NUL, so the check stops there. */
        size_t n = pc_utf8_len(s, 4);
        /* U+0080..U+009F are 0xc2 0x80..0x9f. */
        if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
            n = 0;
        if (n) {
            if (o + n >= size)
                break;
            memcpy(dst + o, s, n);
            o += n;
            s += n;
            continue;
        }
        if (o + 4 >= size)
            break;
        dst[o++] = '\\';
        dst[o++] = 'x';
        dst[o++] = hex[*s >> 4];
        dst[o++] = hex[*s & 15];
        s++;
    }
    dst[o] = 0;
    return dst;
}

#endif
