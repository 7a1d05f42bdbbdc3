/* The value of a hexadecimal digit, for the text inputs that carry
 * addresses (perf script, /proc/kallsyms, JIT maps). */
#ifndef PROFCONV_HEX_H
#define PROFCONV_HEX_H

/* 0-15, or -1 when c is no hexadecimal digit. */
static inline int pc_hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
