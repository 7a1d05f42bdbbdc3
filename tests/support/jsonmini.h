/* A small strict JSON parser (RFC 8259) producing a tree, for tests that
 * read profconv's output and the reference converter's.  Numbers keep their
 * source text, so times can be compared digit for digit. */
#ifndef PROFCONV_TESTS_JSONMINI_H
#define PROFCONV_TESTS_JSONMINI_H

#include <stddef.h>

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } j_type;

typedef struct jv jv;
struct jv {
    j_type type;
    int boolean;
    double num;
    const char *num_text;   /* J_NUM: the number as written */
    int is_int;             /* J_NUM: an integer that fits long long */
    long long ival;
    const char *str;        /* J_STR: decoded UTF-8, NUL-terminated */
    size_t str_len;
    jv **items;             /* J_ARR, J_OBJ: values in order */
    const char **keys;      /* J_OBJ: keys in order */
    size_t n;
};

/* Parses len bytes.  On error returns NULL and writes a message with the
 * byte offset into err.  Nesting deeper than 512 is an error. */
jv *j_parse(const char *text, size_t len, char *err, size_t errlen);
void j_free(jv *root);

const jv *j_get(const jv *obj, const char *key);  /* last of duplicates */
size_t j_len(const jv *v);
const jv *j_at(const jv *arr, size_t i);
const char *j_key_at(const jv *obj, size_t i);
int j_is_int(const jv *v);
long long j_int(const jv *v);
double j_num(const jv *v);
const char *j_str(const jv *v);
const char *j_num_text(const jv *v);

#endif
