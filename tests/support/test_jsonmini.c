/* The tests' own tools must be right before they judge anything: the JSON
 * parser, and the Gecko validator on profiles broken one fault at a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gecko_valid.h"
#include "jsonmini.h"
#include "t.h"

TEST(json_parses_values)
{
    static const char text[] =
        " {\"a\": [1, -2.5e3, 684943449407.055862, 9223372036854775807, 0],"
        "  \"s\": \"x\\u00e9\\ud83d\\ude00\\n\\\"\", \"t\": true, \"n\": null,"
        "  \"a\": {}} ";
    char err[256];
    jv *v = j_parse(text, strlen(text), err, sizeof err);
    T_CHECK(v != NULL);
    if (!v)
        return;
    const jv *a = j_get(v, "a");  /* duplicate key: the last wins */
    T_CHECK(a && a->type == J_OBJ);
    T_EQ_INT(j_len(v), 5);
    const jv *nums = j_at(v, 0);
    T_EQ_INT(j_int(j_at(nums, 0)), 1);
    T_CHECK(j_num(j_at(nums, 1)) == -2500.0 && !j_is_int(j_at(nums, 1)));
    T_EQ_STR(j_num_text(j_at(nums, 2)), "684943449407.055862");
    T_CHECK(j_is_int(j_at(nums, 3)) && j_int(j_at(nums, 3)) == 9223372036854775807LL);
    T_EQ_STR(j_str(j_get(v, "s")), "x\xc3\xa9\xf0\x9f\x98\x80\n\"");
    T_CHECK(j_get(v, "t")->boolean == 1);
    T_CHECK(j_get(v, "n")->type == J_NULL);
    j_free(v);
}

TEST(json_rejects_malformed)
{
    static const struct {
        const char *text;
        const char *offset;
    } bad[] = {
        {"[1,]", "offset 3"},
        {"[01]", "offset 2"},
        {"{\"a\" 1}", "offset 5"},
        {"\"tab\there\"", "offset 4"},
        {"\"\\x\"", "offset 3"},
        {"\"\\ud800\"", "offset 7"},
        {"\"\\udc00\"", "offset 7"},
        {"\"\xff\"", "offset 1"},
        {"[1] 2", "offset 4"},
        {"tru", "offset 0"},
        {"", "offset 0"},
        {"[1.]", "offset 3"},
    };
    char err[256];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        t_case("json_rejects: %s", bad[i].text);
        jv *v = j_parse(bad[i].text, strlen(bad[i].text), err, sizeof err);
        T_CHECK(v == NULL);
        j_free(v);
        if (!v)
            T_CONTAINS(err, bad[i].offset);
    }
    t_case("json_rejects: deep nesting");
    char deep[2000];
    memset(deep, '[', 1000);
    memset(deep + 1000, ']', 1000);
    T_CHECK(j_parse(deep, 2000, err, sizeof err) == NULL);
    T_CONTAINS(err, "nesting too deep");
}

/* A small valid Gecko profile; each fault below breaks one thing. */
static const char valid[] =
    "{\"meta\":{\"version\":24,\"interval\":1,\"startTime\":0,"
    "\"markerSchema\":[{\"name\":\"M\",\"display\":[],\"data\":[]}],"
    "\"categories\":[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},"
    "{\"name\":\"K\",\"color\":\"orange\",\"subcategories\":[\"Other\"]}]},"
    "\"libs\":[],\"processes\":[],\"threads\":[{\"name\":\"t\",\"processType\":\"default\","
    "\"pid\":1,\"tid\":1,\"registerTime\":0,\"unregisterTime\":null,"
    "\"samples\":{\"schema\":{\"stack\":0,\"time\":1,\"eventDelay\":2},"
    "\"data\":[[1,0,0],[0,1.5,0]]},"
    "\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[[null,0],[0,1]]},"
    "\"frameTable\":{\"schema\":{\"location\":0,\"relevantForJS\":1,\"category\":2,"
    "\"subcategory\":3},\"data\":[[0,false,1,0],[1,false,null,null]]},"
    "\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,"
    "\"category\":4,\"data\":5},\"data\":[[2,1,2,1,0,{\"type\":\"M\"}]]},"
    "\"stringTable\":[\"a (in b)\",\"c (in d)\",\"marker\"]}]}";

/* Replaces the first occurrence of from by to in valid. */
static char *variant(const char *from, const char *to)
{
    const char *at = strstr(valid, from);
    if (!at)
        return NULL;
    size_t n = strlen(valid) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - valid), valid, to, at + strlen(from));
    return out;
}

TEST(gecko_validator)
{
    static const struct {
        const char *fault, *from, *to, *where;
    } faults[] = {
        {"no meta", "\"meta\":", "\"meta_\":", "meta: missing"},
        {"version 37", "\"version\":24", "\"version\":37", "meta.version"},
        {"no grey category", "\"color\":\"grey\"", "\"color\":\"blue\"", "no grey category"},
        {"unknown color", "\"color\":\"orange\"", "\"color\":\"pink\"", "unknown color"},
        {"no markerSchema", "\"markerSchema\":", "\"markerSchemas\":", "meta.markerSchema"},
        {"duplicate tid", "\"threads\":[{", "\"threads\":[{\"tid\":1,\"name\":\"u\",\"processType\":\"default\",\"pid\":1,\"registerTime\":0,\"unregisterTime\":null,\"stringTable\":[],\"samples\":{\"schema\":{\"stack\":0,\"time\":1,\"eventDelay\":2},\"data\":[]},\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[]},\"frameTable\":{\"schema\":{\"location\":0},\"data\":[]},\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,\"category\":4,\"data\":5},\"data\":[]}},{", "threads[1].tid"},
        {"prefix after its row", "[[null,0],[0,1]]", "[[1,0],[0,1]]", "stackTable.data[0]: prefix"},
        {"frame out of range", "[0,1]]}", "[0,7]]}", "stackTable.data[1]: frame out of range"},
        {"sample stack out of range", "[[1,0,0]", "[[9,0,0]", "samples.data[0]: stack out of range"},
        {"unsorted times", "[0,1.5,0]", "[0,-1,0]", "time goes backwards"},
        {"location not a string", "[[0,false,1,0]", "[[5,false,1,0]", "location is not a string index"},
        {"category out of range", "[[0,false,1,0]", "[[0,false,2,0]", "frameTable.data[0]: category out of range"},
        {"subcategory out of range", "[[0,false,1,0]", "[[0,false,1,1]", "subcategory out of range"},
        {"marker phase 5", "[2,1,2,1,0,", "[2,1,2,5,0,", "phase is not 0..3"},
        {"marker payload without schema", "{\"type\":\"M\"}", "{\"type\":\"N\"}", "has no marker schema"},
        {"no eventDelay column", "\"eventDelay\":2", "\"delay\":2", "neither 'eventDelay' nor 'responsiveness'"},
        {"no libs", "\"libs\":[]", "\"libz\":[]", "libs: missing"},
        {"lib without start", "\"libs\":[]", "\"libs\":[{\"end\":1,\"offset\":0}]", "libs[0].start"},
    };
    char msg[1024];
    t_case("gecko_validator: the valid profile");
    T_EQ_INT(gecko_check_text(valid, strlen(valid), msg, sizeof msg), 0);
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++) {
        t_case("gecko_validator: %s", faults[i].fault);
        char *text = variant(faults[i].from, faults[i].to);
        T_CHECK(text != NULL);
        if (!text)
            continue;
        T_CHECK(gecko_check_text(text, strlen(text), msg, sizeof msg) > 0);
        T_CONTAINS(msg, faults[i].where);
        free(text);
    }
}
