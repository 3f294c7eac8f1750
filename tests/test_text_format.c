/* The report's number text held to printf, byte for byte: text_f64 against
 * "%.17g" over millions of doubles, the float pair's ways (the chosen one,
 * SSE2 and AVX2) against ",%.17g,%.17g" for pairs of every kind, and every
 * way of writing a row's counts (one, two and four at a time, and four by
 * byte compression) against "%" PRIu64, and the digits of every number
 * below 10^8 each way. A white-box test: it links the writers' objects. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text_columns.h"
#include "text_format.h"
#include "text_vector.h"
#include "printf_g17.h"

/* Doubles per kind of case; the sanitizers' builds run a tenth. */
#ifndef TEXT_TEST_CASES
#define TEXT_TEST_CASES 1000000u
#endif

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005u + 1442695040888963407u;
    uint64_t x = *state;
    return x ^ x >> 29;
}

/* text_f64 of v, NUL-terminated, beside printf's; fails on a difference. */
static void check_double(double v)
{
    char expected[64], text[128];
    printf_g17(expected, sizeof expected, v);
    char *end = text_f64(text, v);
    *end = '\0';
    if (strcmp(text, expected) != 0) {
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        print_error("0x%016" PRIx64 ": text_f64 %s, printf %s\n", bits, text, expected);
        fail();
    }
}

static void doubles_of_any_bit_pattern_are_written_as_printf_writes_them(void **state)
{
    (void)state;
    uint64_t rng = 1;
    for (uint32_t i = 0; i < TEXT_TEST_CASES; i++) {
        uint64_t bits = next_random(&rng);
        double v;
        memcpy(&v, &bits, sizeof v);
        check_double(v);
    }
}

/* The fast path's range (1e-3 to 2^52) in every binade, with random
 * mantissas, and ratios of counts as reports hold them. */
static void ratios_and_rates_are_written_as_printf_writes_them(void **state)
{
    (void)state;
    uint64_t rng = 2;
    for (uint32_t i = 0; i < TEXT_TEST_CASES; i++) {
        uint64_t r = next_random(&rng);
        check_double(ldexp((double)(r >> 11) / 9007199254740992.0 + 1.0, (int)(r % 64) - 11));
        check_double(100.0 * (double)(r % 6000 % 97) / 97.0);
        check_double((double)(r % 100000) / (double)((r >> 40) % 100000 + 1));
        check_double(-(double)(r % 1000003) / 1000.0);
    }
}

/* Where digits carry or the decade changes: powers of ten and their
 * neighbours within a few ulps, the edges of the fast path (1e-3, 2^52),
 * halfway cases that printf rounds to even, subnormals and zeros. */
static void edges_are_written_as_printf_writes_them(void **state)
{
    (void)state;
    for (int k = -330; k <= 310; k++) {
        double v = pow(10.0, k);
        double down = v, up = v;
        for (int step = 0; step < 8; step++) {
            check_double(down);
            check_double(up);
            check_double(-up);
            down = nextafter(down, 0);
            up = nextafter(up, INFINITY);
        }
    }
    const double edges[] = {1e-3,
                            0x1p-10,
                            0x1p52,
                            0x1p53,
                            0.1,
                            0.01,
                            99.999999999999986,
                            9.9999999999999982,
                            0.0,
                            -0.0,
                            5e-324,
                            2.2250738585072014e-308,
                            1.7976931348623157e308};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        double v = edges[i];
        for (int step = 0; step < 64; step++, v = nextafter(v, INFINITY))
            check_double(v);
    }
    uint64_t rng = 3;
    for (uint32_t i = 0; i < TEXT_TEST_CASES / 10; i++) {
        uint64_t r = next_random(&rng);
        /* 18 and more significant digits ending in 5: exact ties at 17 */
        check_double(ldexp((double)(r >> 11 | 1), -(int)(r % 60)) + 0.5);
        uint64_t sub = r & ((1ull << 52) - 1); /* subnormal */
        double v;
        memcpy(&v, &sub, sizeof v);
        check_double(v);
    }
}

/* --- the fast path of doubles: 2^-13 <= |v| < 2^56, fixed notation -------------------- */

/* v and its neighbours within `steps` ulps on both sides, and their negatives. */
static void check_around(double v, int steps)
{
    double down = v, up = v;
    for (int step = 0; step <= steps; step++) {
        check_double(down);
        check_double(up);
        check_double(-down);
        check_double(-up);
        down = nextafter(down, 0);
        up = nextafter(up, INFINITY);
    }
}

/* Every decade the fast path holds (10^-4 to 10^17) and every binade
 * (2^-14 to 2^57: one on either side of its range), at their edges. */
static void decades_and_binades_of_the_fast_path_are_written_exactly_at_their_edges(void **state)
{
    (void)state;
    for (int k = -5; k <= 17; k++) {
        char text[32];
        snprintf(text, sizeof text, "1e%d", k);
        check_around(strtod(text, NULL), 40); /* the double nearest 10^k */
    }
    for (int e = -14; e <= 57; e++)
        check_around(ldexp(1.0, e), 40);
    check_around(1e-3, 64);
    check_around(1e-4, 64);
}

/* The largest double below 10^k, nines up to its last digits, keeps its
 * decade when its 17th digit rounds: 9.9999999999999982,
 * 0.099999999999999992..., never "10" or "0.1". */
static void the_double_below_each_power_of_ten_keeps_its_decade(void **state)
{
    (void)state;
    for (int k = -4; k <= 16; k++) {
        char text[64];
        snprintf(text, sizeof text, "1e%d", k);
        double ten = strtod(text, NULL); /* the double nearest 10^k */
        snprintf(text, sizeof text, "%.30e", ten);
        double below = text[0] == '9' ? ten : nextafter(ten, 0);
        check_double(below);
        *text_f64(text, below) = '\0';
        assert_int_equal(text[strspn(text, "0.")], '9'); /* not 1 of the next decade */
    }
}

/* Roundings that carry through a run of nines into the digits before it
 * (1.2999...97 to 1.3), for every run length and decade. */
static void roundings_that_carry_through_nines_are_written_as_printf_writes_them(void **state)
{
    (void)state;
    for (int d = -4; d <= 16; d++) {
        for (int nines = 1; nines <= 18; nines++) {
            for (int last = 0; last <= 9; last++) {
                char text[64];
                int n = snprintf(text, sizeof text, "1.2");
                for (int i = 0; i < nines; i++)
                    text[n++] = '9';
                snprintf(text + n, sizeof text - (size_t)n, "%de%d", last, d);
                check_around(strtod(text, NULL), 2);
            }
        }
    }
}

/* A double with a short decimal expansion: an odd multiple of 2^-j, or an
 * integer of 1 to 17 digits times a power of ten; 0 if it is not exact. */
static double short_decimal(uint64_t r, uint64_t k)
{
    if (r & 1) {
        int bits = 1 + (int)((r >> 1) % 53), j = (int)((r >> 8) % 32);
        return ldexp((double)((k & ((1ull << bits) - 1)) | 1), -j);
    }
    uint64_t tens[18] = {1};
    for (int i = 1; i < 18; i++)
        tens[i] = tens[i - 1] * 10;
    int n = 1 + (int)((r >> 1) % 17), zeros = (int)((r >> 6) % (uint64_t)(18 - n));
    uint64_t digits = tens[n - 1] + (r >> 11) % (tens[n] - tens[n - 1]);
    digits += digits % 10 == 0; /* n significant digits */
    uint64_t whole = digits * tens[zeros];
    double v = (double)whole;
    return (uint64_t)v == whole ? v : 0.0;
}

/* Doubles with short decimal expansions in every decade of the fast path
 * (10^-4 to 10^16): every count of significant digits a decade can hold
 * exactly (all 17 from 10^-1 up; a multiple of 2^-j below 10^-1 has j
 * decimals, so 3 digits or more in 10^-2, 5 in 10^-3, 7 in 10^-4), so every
 * count of trailing zeros trimmed, with and without a point, is seen
 * (checked), each written as printf writes it. */
static void trailing_zeros_of_every_length_are_trimmed_as_printf_trims_them(void **state)
{
    (void)state;
    unsigned seen[21] = {0}; /* per decade -4 to 16, a bit per count of digits */
    uint64_t rng = 6;
    for (uint32_t i = 0; i < TEXT_TEST_CASES; i++) {
        uint64_t r = next_random(&rng);
        double v = short_decimal(r, next_random(&rng));
        if (!(v >= 0x1p-13 && v < 0x1p56))
            continue;
        check_double(v);
        check_double(-v);
        char text[64];
        snprintf(text, sizeof text, "%.16e", v); /* d.dddddddddddddddde+XX */
        int significant = 17;
        while (significant > 1 && text[significant] == '0') /* text[1] is the point */
            significant--;
        int d = atoi(strchr(text, 'e') + 1);
        seen[d + 4] |= 1u << significant;
    }
    static const int fewest[21] = {7, 5, 3}; /* decades -4, -3, -2; 1 from 10^-1 up */
    for (int d = -4; d <= 16; d++) {
        for (int n = fewest[d + 4] ? fewest[d + 4] : 1; n <= 17; n++) {
            if (!(seen[d + 4] >> n & 1))
                print_error("decade %d: no double of %d significant digits\n", d, n);
            assert_true(seen[d + 4] >> n & 1);
        }
    }
}

/* Ties: odd multiples of 2^-(17-d) in decade d have 18 significant digits,
 * the last a 5, so the 17th rounds half to even, both ways. */
/* An exact half in decade d from the random r, or false where the decade
 * has none that large (its odd multiple would pass 2^53). */
static bool exact_half(int d, uint64_t r, double *half)
{
    double v = pow(10.0, d) * (1.0 + 9.0 * (double)(r >> 11) / 9007199254740992.0);
    double k = nearbyint(ldexp(v, 17 - d));
    if (k >= 0x1p53)
        return false;
    k = fmod(k, 2.0) == 0.0 ? k + 1.0 : k; /* odd */
    *half = ldexp(k, d - 17);
    return true;
}

static void exact_halves_round_to_even_in_every_decade(void **state)
{
    (void)state;
    uint64_t rng = 7;
    for (int d = -4; d <= 15; d++) {
        double half;
        for (uint32_t i = 0; i < TEXT_TEST_CASES / 100 && exact_half(d, next_random(&rng), &half);
             i++) {
            check_double(half);
            check_double(-half);
        }
    }
}

/* Every binade of the fast path and one past either end, random
 * significands, both signs. */
static void every_binade_of_the_fast_path_is_written_as_printf_writes_it(void **state)
{
    (void)state;
    uint64_t rng = 8;
    for (uint32_t i = 0; i < TEXT_TEST_CASES; i++) {
        uint64_t r = next_random(&rng);
        double v = ldexp((double)(r >> 11) / 9007199254740992.0 + 1.0, (int)(r % 72) - 14);
        check_double(r >> 10 & 1 ? -v : v);
    }
}

/* --- two doubles at once: the pair's ways ------------------------------------------- */

/* The pair's ways with their names: the one callers get, then each. */
struct pair_way {
    text_f64_pair_fn put;
    const char *name;
};

static size_t pair_ways(struct pair_way *ways)
{
    size_t n = 0;
    ways[n++] = (struct pair_way){text_csv_f64_pair_best(), "the chosen way"};
    if (text_csv_f64_pair_sse2())
        ways[n++] = (struct pair_way){text_csv_f64_pair_sse2(), "SSE2"};
    if (text_csv_f64_pair_avx2())
        ways[n++] = (struct pair_way){text_csv_f64_pair_avx2(), "AVX2"};
    else
        print_message("this processor has no AVX2: the pair's AVX2 way not run\n");
    if (text_csv_f64_pair_ifma())
        ways[n++] = (struct pair_way){text_csv_f64_pair_ifma(), "IFMA"};
    else
        print_message("this processor has no AVX-512 IFMA and VBMI: the pair's IFMA way not run\n");
    return n;
}

/* The pair's text against printf's ",%.17g,%.17g", and nothing written
 * past TEXT_CSV_F64_PAIR_MAX bytes; fails on a difference. */
static void check_pair(const struct pair_way *way, double a, double b)
{
    char expected[128], text[TEXT_CSV_F64_PAIR_MAX + 32];
    expected[0] = ',';
    printf_g17(expected + 1, sizeof expected - 1, a);
    size_t n = strlen(expected);
    expected[n] = ',';
    printf_g17(expected + n + 1, sizeof expected - n - 1, b);
    n = strlen(expected);
    memset(text, '#', sizeof text);
    char *end = way->put(text, a, b);
    bool same = (size_t)(end - text) == n && memcmp(text, expected, n) == 0;
    for (size_t i = TEXT_CSV_F64_PAIR_MAX; i < sizeof text; i++)
        same = same && text[i] == '#';
    if (!same) {
        uint64_t bits_a, bits_b;
        memcpy(&bits_a, &a, sizeof bits_a);
        memcpy(&bits_b, &b, sizeof bits_b);
        print_error("%s, 0x%016" PRIx64 " 0x%016" PRIx64 ": %.*s, printf %s\n", way->name, bits_a,
                    bits_b, (int)(end - text), text, expected);
        fail();
    }
}

/* Values of every kind the pair meets: in and out of its one-pass range
 * (2^-13 to 2^43) and text_f64's fast path (to 2^56), below 1 (a point
 * first), zeros, negatives, NaN, infinities, subnormals, the edges of
 * 1e-4, powers of ten and their neighbours, 2^43 and 2^56 with theirs, and
 * the double below each power of ten, which rounds towards the next
 * decade at 17 digits but keeps its own. */
static size_t pair_values(double *values)
{
    size_t n = 0;
    const double fixed[] = {0.0,
                            -0.0,
                            1.0,
                            -1.0,
                            57.731958762886599,
                            100.0,
                            0.5,
                            -0.25,
                            NAN,
                            -NAN,
                            INFINITY,
                            -INFINITY,
                            5e-324,
                            2.2250738585072009e-308,
                            2.2250738585072014e-308,
                            1.7976931348623157e308,
                            1.2345678901234567e-5,
                            0.1,
                            0.30000000000000004,
                            123456789012.34567,
                            9007199254740993.0};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        values[n++] = fixed[i];
    const double edges[] = {1e-4, 0x1p-13, 0x1p-14, 0x1p43, 0x1p56, 0x1p57};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        values[n++] = nextafter(edges[i], 0);
        values[n++] = edges[i];
        values[n++] = nextafter(edges[i], INFINITY);
    }
    for (int k = -5; k <= 17; k++) {
        char text[32];
        snprintf(text, sizeof text, "1e%d", k);
        double ten = strtod(text, NULL);
        values[n++] = nextafter(nextafter(ten, 0), 0);
        values[n++] = nextafter(ten, 0); /* 9.99...: rounds up at 17 digits? */
        values[n++] = ten;
        values[n++] = nextafter(ten, INFINITY);
        values[n++] = -nextafter(ten, 0);
    }
    return n;
}

static void pairs_of_every_kind_are_written_as_printf_writes_them(void **state)
{
    (void)state;
    struct pair_way ways[4];
    size_t way_count = pair_ways(ways);
    double values[256];
    size_t n = pair_values(values);
    for (size_t w = 0; w < way_count; w++)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                check_pair(&ways[w], values[i], values[j]);
}

/* A double of random significand in a random binade from 2^-15 to 2^57
 * (both sides of the pair's one-pass range and of text_f64's fast path),
 * one in 16 negative, one in 16 a value of pair_values. */
static double pair_case(uint64_t r, const double *values, size_t count)
{
    if (r % 16 == 0)
        return values[(r >> 4) % count];
    double v = ldexp((double)(r >> 11) / 9007199254740992.0 + 1.0, (int)(r % 73) - 15);
    return r % 16 == 1 ? -v : v;
}

/* Both lanes' bits random within the fast range and around it, hundreds
 * of thousands of pairs per way (a tenth under the sanitizers), a fixed
 * seed; and the ratios of a report (100 k / 97) in both. */
static void random_pairs_are_written_as_printf_writes_them(void **state)
{
    (void)state;
    struct pair_way ways[4];
    size_t way_count = pair_ways(ways);
    double values[256];
    size_t count = pair_values(values);
    for (size_t w = 0; w < way_count; w++) {
        uint64_t rng = 9;
        for (uint32_t i = 0; i < TEXT_TEST_CASES / 2; i++) {
            uint64_t r = next_random(&rng), q = next_random(&rng);
            check_pair(&ways[w], pair_case(r, values, count), pair_case(q, values, count));
        }
        for (uint32_t k = 0; k < 97 * 97; k++)
            check_pair(&ways[w], 100.0 * (double)(k % 97) / 97.0, 100.0 * (double)(k / 97) / 97.0);
    }
}

/* Ties at the 17th digit (odd multiples of 2^-(17-d) in decade d, 18
 * digits ending in 5) in either lane, beside a value of the other kind:
 * half to even in each. */
static void pairs_round_exact_halves_to_even_in_each_lane(void **state)
{
    (void)state;
    struct pair_way ways[4];
    size_t way_count = pair_ways(ways);
    for (size_t w = 0; w < way_count; w++) {
        uint64_t rng = 10;
        for (int d = -4; d <= 12; d++) {
            for (uint32_t i = 0; i < TEXT_TEST_CASES / 1000; i++) {
                uint64_t r = next_random(&rng);
                double tie;
                if (!exact_half(d, r, &tie))
                    break;
                double other = (double)(r % 1000) / 7.0;
                check_pair(&ways[w], tie, other);
                check_pair(&ways[w], other, tie);
                check_pair(&ways[w], tie, tie);
            }
        }
    }
}

/* Counts of every length: each power of ten and its neighbours, random
 * numbers of each digit count, UINT64_MAX; and the vector ways' bounds
 * (10^7, 2^26, 10^8, 2^32, 2^63) with their neighbours. */
static uint64_t count_case(uint64_t i, uint64_t *rng)
{
    static uint64_t tens[20];
    if (!tens[0]) {
        tens[0] = 1;
        for (int k = 1; k < 20; k++)
            tens[k] = tens[k - 1] * 10;
    }
    /* the vector ways' edges: one 8-byte store below 2^23 (FAST_BITS) and
     * 10^7, one digit split below 10^8, 32-bit products */
    static const uint64_t bounds[] = {1u << 23,   10000000u,  1u << 26,
                                      100000000u, 1ull << 32, 1ull << 63};
    uint64_t r = next_random(rng);
    switch (i % 5) {
    case 0: return tens[r % 20] + (r >> 8) % 3 - 1; /* 10^k - 1, 10^k, 10^k + 1 */
    case 1: return r % 2 ? UINT64_MAX : 0;
    case 2: return (r >> 5) % tens[r % 20];
    case 3: return bounds[r % 6] + (r >> 8) % 3 - 1;
    default: return (r >> 5) % (r % 2 ? 10000000u : 100000u);
    }
}

/* A row's counts as reports hold them: mostly below 10^5, with now and
 * then (one run in four) one number of any kind at a random place. */
static void row_case(uint64_t *values, uint32_t n, uint64_t *rng)
{
    for (uint32_t i = 0; i < n; i++)
        values[i] = next_random(rng) % 100000u;
    uint64_t r = next_random(rng);
    if (n && r % 4 == 0)
        values[(r >> 8) % n] = count_case(r >> 16, rng);
}

/* put's text of n values against printf's; fails on a difference. */
static void check_run(text_counts_fn put, const char *name, const uint64_t *values, uint32_t n)
{
    char text[24 * 21 + 128], expected[24 * 21 + 8];
    size_t used = 0;
    for (uint32_t i = 0; i < n; i++)
        used += (size_t)snprintf(expected + used, sizeof expected - used, ",%" PRIu64, values[i]);
    /* keep: the values copied, and nothing past them written */
    uint64_t keep[25];
    memset(keep, 0xa5, sizeof keep);
    char *end = put(text, values, n, keep);
    if ((size_t)(end - text) != used || memcmp(text, expected, used) != 0) {
        print_error("%s, %u values: %.*s, printf %s\n", name, n, (int)(end - text), text, expected);
        fail();
    }
    if (memcmp(keep, values, n * sizeof *values) != 0) {
        print_error("%s, %u values: not all kept\n", name, n);
        fail();
    }
    for (uint32_t i = n; i < 25; i++)
        assert_int_equal(keep[i], 0xa5a5a5a5a5a5a5a5ull);
}

static void check_counts(text_counts_fn put, const char *name)
{
    uint64_t rng = 4;
    uint64_t values[24];
    for (uint32_t round = 0; round < TEXT_TEST_CASES / 8; round++) {
        uint32_t n = round % 25;
        for (uint32_t i = 0; i < n; i++)
            values[i] = count_case(round + i, &rng);
        check_run(put, name, values, n);
        n = round % 18;
        row_case(values, n, &rng);
        check_run(put, name, values, n);
    }
}

static void counts_are_written_as_printf_writes_them_every_way(void **state)
{
    (void)state;
    check_counts(text_csv_counts_scalar, "one at a time");
    if (text_csv_counts_pairs())
        check_counts(text_csv_counts_pairs(), "two at a time");
    if (text_csv_counts_quads())
        check_counts(text_csv_counts_quads(), "four at a time");
    else
        print_message("this processor has no AVX2: four at a time not run\n");
    if (text_csv_counts_compressed())
        check_counts(text_csv_counts_compressed(), "eight by compression");
    else
        print_message("this processor has no AVX-512BW and VBMI2: eight by compression not run\n");
    check_counts(text_csv_counts_best(), "the best");
}

/* A row's counts then its two ratios in one call (text_counts_pair_fn)
 * against printf's ",%" PRIu64 ... ",%.17g,%.17g": runs of 0 to 24 counts
 * of every kind (a large one sends the counts the checked way, after
 * which the pair must still follow), pairs of every kind; all n + 2
 * values kept, nothing past them. */
static void check_counts_pair(text_counts_pair_fn put, const char *name)
{
    double doubles[256];
    size_t double_count = pair_values(doubles);
    uint64_t rng = 6;
    for (uint32_t round = 0; round < TEXT_TEST_CASES / 8; round++) {
        uint32_t n = round % 25;
        uint64_t values[26], keep[28];
        if (round % 2)
            row_case(values, n, &rng);
        else
            for (uint32_t i = 0; i < n; i++)
                values[i] = count_case(round + i, &rng);
        double a = pair_case(next_random(&rng), doubles, double_count);
        double b = pair_case(next_random(&rng), doubles, double_count);
        memcpy(&values[n], &a, sizeof a);
        memcpy(&values[n + 1], &b, sizeof b);
        char expected[26 * 32], text[TEXT_CSV_COUNTS_MAX(24) + TEXT_CSV_F64_PAIR_MAX];
        size_t used = 0;
        for (uint32_t i = 0; i < n; i++)
            used +=
                (size_t)snprintf(expected + used, sizeof expected - used, ",%" PRIu64, values[i]);
        expected[used++] = ',';
        printf_g17(expected + used, sizeof expected - used, a);
        used += strlen(expected + used);
        expected[used++] = ',';
        printf_g17(expected + used, sizeof expected - used, b);
        used += strlen(expected + used);
        memset(keep, 0xa5, sizeof keep);
        char *end = put(text, values, n, keep);
        if ((size_t)(end - text) != used || memcmp(text, expected, used) != 0) {
            print_error("%s, %u counts then a pair: %.*s, printf %.*s\n", name, n,
                        (int)(end - text), text, (int)used, expected);
            fail();
        }
        assert_memory_equal(keep, values, (n + 2) * sizeof *values);
        for (uint32_t i = n + 2; i < 28; i++)
            assert_int_equal(keep[i], 0xa5a5a5a5a5a5a5a5ull);
    }
}

static void counts_then_a_pair_are_written_as_printf_writes_them_every_way(void **state)
{
    (void)state;
    if (text_csv_counts_pair_avx2())
        check_counts_pair(text_csv_counts_pair_avx2(), "four at a time, the pair by AVX2");
    else
        print_message("this processor has no AVX2: the counts then a pair by it not run\n");
    if (text_csv_counts_pair_ifma())
        check_counts_pair(text_csv_counts_pair_ifma(), "eight by compression, the pair by IFMA");
    else
        print_message("this processor has no AVX-512 IFMA: the counts then a pair by it not run\n");
}

#ifdef TEXT_VECTOR
static const struct text_ifma_digits ifma_digits = TEXT_IFMA_DIGITS;

TEXT_IFMA static __m128i digits8x2_ifma(uint64_t first, uint64_t second)
{
    return text_digits8x2_ifma(first, second, &ifma_digits);
}

/* The digits of x and of 99999999 - x (whose digits are 9 less x's) as
 * bytes, against `digits`, x's decimal digits; fails on a difference. */
static void check_digits8x2(__m128i got, const uint8_t digits[8], uint64_t x, const char *way)
{
    uint8_t bytes[16], expected[16];
    _mm_storeu_si128((__m128i *)(void *)bytes, got);
    for (int i = 0; i < 8; i++) {
        expected[i] = digits[i];
        expected[8 + i] = (uint8_t)(9 - digits[i]);
    }
    if (memcmp(bytes, expected, 16) != 0) {
        print_error("%s: the digits of %" PRIu64 " and %" PRIu64 " are wrong\n", way, x,
                    99999999u - x);
        fail();
    }
}
#endif

/* text_digits8x2 and its IFMA way on every number below 10^8 (the
 * sanitizers' builds: the first tenth), against the digits of a counter
 * counted up one digit at a time. */
static void digits_of_numbers_below_1e8_are_their_decimal_digits_each_way(void **state)
{
    (void)state;
#ifdef TEXT_VECTOR
    bool ifma = text_cpu_has_ifma();
    if (!ifma)
        print_message("this processor has no AVX-512 IFMA: its way not run\n");
    uint64_t last = TEXT_TEST_CASES * 100u < 100000000u ? TEXT_TEST_CASES * 100u : 100000000u;
    uint8_t digits[8] = {0};
    for (uint64_t x = 0; x < last; x++) {
        __m128i both = _mm_set_epi64x((long long)(99999999u - x), (long long)x);
        check_digits8x2(text_digits8x2(both), digits, x, "text_digits8x2");
        if (ifma)
            check_digits8x2(digits8x2_ifma(x, 99999999u - x), digits, x, "text_digits8x2_ifma");
        for (int i = 7; i >= 0 && ++digits[i] == 10; i--)
            digits[i] = 0;
    }
#else
    print_message("no vector ways on this processor\n");
#endif
}

static void text_u64_writes_as_printf_writes(void **state)
{
    (void)state;
    uint64_t rng = 5;
    for (uint64_t i = 0; i < TEXT_TEST_CASES; i++) {
        uint64_t v = count_case(i, &rng);
        char text[64], expected[32];
        snprintf(expected, sizeof expected, "%" PRIu64, v);
        *text_u64(text, v) = '\0';
        assert_string_equal(text, expected);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(doubles_of_any_bit_pattern_are_written_as_printf_writes_them),
        cmocka_unit_test(ratios_and_rates_are_written_as_printf_writes_them),
        cmocka_unit_test(edges_are_written_as_printf_writes_them),
        cmocka_unit_test(decades_and_binades_of_the_fast_path_are_written_exactly_at_their_edges),
        cmocka_unit_test(the_double_below_each_power_of_ten_keeps_its_decade),
        cmocka_unit_test(roundings_that_carry_through_nines_are_written_as_printf_writes_them),
        cmocka_unit_test(trailing_zeros_of_every_length_are_trimmed_as_printf_trims_them),
        cmocka_unit_test(exact_halves_round_to_even_in_every_decade),
        cmocka_unit_test(every_binade_of_the_fast_path_is_written_as_printf_writes_it),
        cmocka_unit_test(pairs_of_every_kind_are_written_as_printf_writes_them),
        cmocka_unit_test(random_pairs_are_written_as_printf_writes_them),
        cmocka_unit_test(pairs_round_exact_halves_to_even_in_each_lane),
        cmocka_unit_test(counts_are_written_as_printf_writes_them_every_way),
        cmocka_unit_test(counts_then_a_pair_are_written_as_printf_writes_them_every_way),
        cmocka_unit_test(digits_of_numbers_below_1e8_are_their_decimal_digits_each_way),
        cmocka_unit_test(text_u64_writes_as_printf_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
