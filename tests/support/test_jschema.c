/* The JSON Schema validator (jschema.c) must be seen to reject before
 * it judges the speedscope output: speedscope's schema on the fixture's
 * document broken one fault at a time, and small schemas of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jschema.h"
#include "jsonmini.h"
#include "speedscope_valid.h"
#include "t.h"
#include "test_util.h"

/* ---- The validator rejects ---- */

/* text with the first occurrence of from replaced by to (malloc'd), or
 * NULL when from does not occur. */
static char *replace(const char *s, const char *from, const char *to)
{
    const char *at = strstr(s, from);
    if (!at)
        return NULL;
    size_t a = (size_t)(at - s), nf = strlen(from), nt = strlen(to), n = strlen(s);
    char *out = malloc(n - nf + nt + 1);
    memcpy(out, s, a);
    memcpy(out + a, to, nt);
    memcpy(out + a + nt, at + nf, n - a - nf + 1);
    return out;
}

/* text without the first profile's "weights" member. */
static char *drop_weights(const char *s)
{
    const char *at = strstr(s, ",\"weights\":[");
    if (!at)
        return NULL;
    const char *end = strchr(at + 12, ']');
    size_t a = (size_t)(at - s), n = strlen(s);
    char *out = malloc(n + 1);
    memcpy(out, s, a);
    memcpy(out + a, end + 1, n - (size_t)(end + 1 - s) + 1);
    return out;
}

TEST(speedscope_schema_rejects)
{
    jv *schema = speedscope_schema_or_skip();
    if (!schema)
        return;
    pc_profile *p = convert_fixture(NULL);
    size_t n = 0;
    char *good = p ? speedscope_of(p, &n) : NULL;
    static const struct {
        const char *from, *to, *where;
    } cases[] = {
        {NULL, NULL, "missing required property \"weights\""},
        {"\"samples\":[", "\"samples\":[\"x\",", "/samples/0"},
        {"\"unit\":\"none\"", "\"unit\":\"minutes\"", "/unit"},
        {"\"type\":\"sampled\"", "\"type\":\"sample\"", "/type"},
        {"\"$schema\":\"https://www.speedscope.app/", "\"$schema\":\"https://example.org/",
         "/$schema"},
        {"\"frames\":[{\"name\":", "\"frames\":[{\"name\":1,\"n\":", "/shared/frames/0/name"},
        {"\"startValue\":0", "\"startValue\":\"0\"", "/startValue"},
        {"\"shared\":{\"frames\":", "\"shared\":{\"frame\":", "\"frames\""},
        {"\"activeProfileIndex\":0", "\"activeProfileIndex\":null", "/activeProfileIndex"},
    };
    char msg[4096];
    for (size_t c = 0; good && c < sizeof cases / sizeof *cases; c++) {
        t_case("speedscope_schema_rejects %zu", c);
        char *bad = cases[c].from ? replace(good, cases[c].from, cases[c].to) : drop_weights(good);
        T_CHECK(bad != NULL);
        if (!bad)
            continue;
        char err[256];
        jv *doc = j_parse(bad, strlen(bad), err, sizeof err);
        T_CHECK(doc != NULL);
        if (doc) {
            T_CHECK(jschema_validate(schema, doc, msg, sizeof msg) != 0);
            T_CONTAINS(msg, cases[c].where);
        }
        j_free(doc);
        free(bad);
    }
    t_case("speedscope_schema_rejects: the original passes");
    if (good) {
        jv *doc = j_parse(good, n, msg, sizeof msg);
        T_EQ_INT(jschema_validate(schema, doc, msg, sizeof msg), 0);
        j_free(doc);
    }
    free(good);
    pc_profile_free(p);
    j_free(schema);
}

/* The validator on small schemas of its own. */
TEST(speedscope_jschema)
{
    static const struct {
        const char *schema, *doc;
        int ok;
        const char *why;
    } cases[] = {
        {"{\"type\":\"integer\"}", "3", 1, NULL},
        {"{\"type\":\"integer\"}", "3.0", 1, NULL},
        {"{\"type\":\"integer\"}", "3.5", 0, "(root): number where the schema wants integer"},
        {"{\"type\":\"number\"}", "\"3\"", 0, "string where the schema wants number"},
        {"{\"type\":[\"string\",\"null\"]}", "null", 1, NULL},
        {"{\"type\":[\"string\",\"null\"]}", "true", 0, "not one of the types"},
        {"{\"enum\":[1,\"a\",[true]]}", "[true]", 1, NULL},
        {"{\"enum\":[1,\"a\",[true]]}", "\"b\"", 0, "\"b\" is not one of the 3 values"},
        {"{\"const\":{\"a\":[1,2]}}", "{\"a\":[1,2]}", 1, NULL},
        {"{\"const\":{\"a\":[1,2]}}", "{\"a\":[2,1]}", 0, "const"},
        {"{\"properties\":{\"a/b\":{\"type\":\"string\"}},\"required\":[\"a/b\"]}",
         "{\"a/b\":1}", 0, "/a~1b: number where"},
        {"{\"required\":[\"x\"]}", "{\"y\":1}", 0, "missing required property \"x\""},
        {"{\"required\":[\"x\"]}", "[]", 1, NULL},
        {"{\"items\":{\"items\":{\"type\":\"number\"}}}", "[[1],[2,\"z\"]]", 0,
         "/1/1: string where"},
        {"{\"definitions\":{\"A.B\":{\"const\":7}},\"$ref\":\"#/definitions/A.B\"}", "7", 1, NULL},
        {"{\"definitions\":{\"A.B\":{\"const\":7}},\"$ref\":\"#/definitions/A.B\"}", "8", 0,
         "const wants 7"},
        {"{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"array\"}]}", "[]", 1, NULL},
        {"{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"array\"}]}", "{}", 0,
         "matches no branch of anyOf"},
        {"{\"title\":\"t\",\"$schema\":\"x\"}", "1", 1, NULL},
        {"false", "1", 0, "accepts nothing"},
        /* What it does not know fails, even where the instance never goes. */
        {"{\"minItems\":1}", "[1]", 0, "unsupported schema keyword \"minItems\""},
        {"{\"properties\":{\"a\":{\"pattern\":\"x\"}}}", "{}", 0,
         "schema #/properties/a: unsupported schema keyword \"pattern\""},
        {"{\"items\":[{}]}", "[]", 0, "tuple form"},
        {"{\"$ref\":\"#/definitions/missing\"}", "1", 0, "$ref does not designate"},
        {"{\"type\":\"float\"}", "1", 0, "unknown type \"float\""},
        {"{\"definitions\":{\"a\":{\"$ref\":\"#/definitions/a\"}},\"$ref\":\"#/definitions/a\"}",
         "1", 0, "a cycle"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        t_case("speedscope_jschema %zu: %s", c, cases[c].schema);
        char msg[1024];
        int r = jschema_validate_text(cases[c].schema, strlen(cases[c].schema), cases[c].doc,
                                      strlen(cases[c].doc), msg, sizeof msg);
        T_EQ_INT(r == 0, cases[c].ok);
        if (!cases[c].ok)
            T_CONTAINS(msg, cases[c].why);
    }
}
