/* The text of every output file held to independent truth: integers and
 * floats to printf ("%" PRIu64, "%" PRId64, "%.3f") byte for byte over
 * millions of values, CSV fields to RFC 4180 and JSON strings to RFC 8259
 * as json-c parses them. A white-box test: it links the writers' objects. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "printf_fixed3.h"
#include "report_text.h"

/* Values per kind of case; the sanitizers' builds run a tenth. */
#ifndef TEXT_TEST_CASES
#define TEXT_TEST_CASES 1000000u
#endif

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005u + 1442695040888963407u;
    uint64_t x = *state;
    return x ^ x >> 29;
}

static void check_fixed3(double v)
{
    char expected[400], text[TEXT_FIXED3_MAX + 1];
    printf_fixed3(expected, sizeof expected, v);
    *text_fixed3(text, v) = '\0';
    if (strcmp(text, expected) != 0) {
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        print_error("0x%016" PRIx64 ": text_fixed3 %s, printf %s\n", bits, text, expected);
        fail();
    }
}

static void check_u64(uint64_t v)
{
    char expected[32], text[TEXT_INTEGER_MAX + 1];
    snprintf(expected, sizeof expected, "%" PRIu64, v);
    *text_u64(text, v) = '\0';
    assert_string_equal(text, expected);
}

static void check_i64(int64_t v)
{
    char expected[32], text[TEXT_INTEGER_MAX + 2];
    snprintf(expected, sizeof expected, "%" PRId64, v);
    *text_i64(text, v) = '\0';
    assert_string_equal(text, expected);
}

static void integers_are_written_as_printf_writes_them(void **state)
{
    (void)state;
    check_u64(0);
    check_u64(UINT64_MAX);
    check_i64(INT64_MIN);
    check_i64(INT64_MAX);
    check_i64(-1);
    for (uint64_t p = 1, i = 0; i < 20; i++, p *= 10) {
        check_u64(p - 1);
        check_u64(p);
        check_u64(p + 1);
        check_i64(-(int64_t)p);
    }
    uint64_t rng = 1;
    for (uint32_t i = 0; i < TEXT_TEST_CASES; i++) {
        uint64_t r = next_random(&rng);
        check_u64(r >> (r % 64)); /* every length */
        check_i64((int64_t)(r >> (r % 64)) * (r & 1 ? -1 : 1));
    }
}

/* Ratios, percentages and rates as reports hold them, and their negatives. */
static void floats_as_reports_hold_them_are_written_as_printf_writes_them(void **state)
{
    (void)state;
    uint64_t rng = 2;
    for (uint32_t i = 0; i < TEXT_TEST_CASES; i++) {
        uint64_t r = next_random(&rng);
        check_fixed3(100.0 * (double)(r % 6000 % 97) / 97.0);
        check_fixed3((double)(r % 100000) / (double)((r >> 40) % 100000 + 1));
        check_fixed3(-(double)(r % 1000003) / 1000.0);
        check_fixed3(ldexp((double)(r >> 11) / 9007199254740992.0 + 1.0, (int)(r % 80) - 20));
    }
}

/* Halves of a thousandth (where the fast path must step aside), their
 * neighbours a few ulps away, the edge of the fast path at 2^50
 * thousandths, and any bit pattern at all. */
static void ties_edges_and_any_bit_pattern_are_written_as_printf_writes_them(void **state)
{
    (void)state;
    for (int64_t k = -20000; k <= 20000; k++) {
        double half = ((double)k + 0.5) / 1000.0;
        check_fixed3(half);
        check_fixed3(nextafter(half, INFINITY));
        check_fixed3(nextafter(half, -INFINITY));
    }
    double edge = 0x1p50 / 1000.0;
    for (int i = -3; i <= 3; i++)
        check_fixed3(edge + i * 0.25);
    const double specials[] = {0.0,       -0.0,     0.0004999, 0.0005,    -0.0005, DBL_MIN,
                               -DBL_MIN,  DBL_MAX,  -DBL_MAX,  1e300,     NAN,     INFINITY,
                               -INFINITY, 999.9995, 0.9995,    1e15 + 0.5};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        check_fixed3(specials[i]);
    uint64_t rng = 3;
    for (uint32_t i = 0; i < TEXT_TEST_CASES / 10; i++) {
        uint64_t bits = next_random(&rng);
        double v;
        memcpy(&v, &bits, sizeof v);
        check_fixed3(v);
    }
}

static void check_csv(const char *s, const char *expected)
{
    char text[256];
    *text_csv_field(text, s, strlen(s)) = '\0';
    assert_string_equal(text, expected);
    assert_true(strlen(text) <= TEXT_CSV_MAX(strlen(s)));
}

static void csv_fields_are_quoted_only_when_rfc4180_needs_it(void **state)
{
    (void)state;
    check_csv("", "");
    check_csv("shadow/terrain", "shadow/terrain");
    check_csv("a,b", "\"a,b\"");
    check_csv("say \"hi\"", "\"say \"\"hi\"\"\"");
    check_csv("line\nbreak", "\"line\nbreak\"");
    check_csv("cr\rhere", "\"cr\rhere\"");
    check_csv("\"", "\"\"\"\"");
}

/* s as JSON text, parsed back by json-c: the same bytes, or U+FFFD for
 * those that are not UTF-8. */
static void check_json_round_trip(const char *s, const char *expected)
{
    char text[512], document[600];
    char *end = text_json_string(text, s, strlen(s));
    *end = '\0';
    assert_true((size_t)(end - text) <= TEXT_JSON_MAX(strlen(s)));
    snprintf(document, sizeof document, "[%s]", text);
    json_object *root = json_tokener_parse(document);
    assert_non_null(root);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(root, 0)), expected);
    json_object_put(root);
}

static void json_strings_parse_back_as_the_same_text(void **state)
{
    (void)state;
    check_json_round_trip("plain", "plain");
    check_json_round_trip("quote \" and \\ backslash", "quote \" and \\ backslash");
    check_json_round_trip("tab\tnew\nline\rcr\bbs\fff", "tab\tnew\nline\rcr\bbs\fff");
    check_json_round_trip("\x01\x1f", "\x01\x1f");
    check_json_round_trip("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8e\xa8",
                          "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8e\xa8");
    check_json_round_trip("bad \xff byte", "bad \xef\xbf\xbd byte");
    check_json_round_trip("overlong \xc0\xaf", "overlong \xef\xbf\xbd\xef\xbf\xbd");
    check_json_round_trip("surrogate \xed\xa0\x80",
                          "surrogate \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    check_json_round_trip("cut \xe2\x82", "cut \xef\xbf\xbd\xef\xbf\xbd");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(integers_are_written_as_printf_writes_them),
        cmocka_unit_test(floats_as_reports_hold_them_are_written_as_printf_writes_them),
        cmocka_unit_test(ties_edges_and_any_bit_pattern_are_written_as_printf_writes_them),
        cmocka_unit_test(csv_fields_are_quoted_only_when_rfc4180_needs_it),
        cmocka_unit_test(json_strings_parse_back_as_the_same_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
