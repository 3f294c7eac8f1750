/* Owns a row's runs of unsigned columns as CSV text (see text_columns.h). */
#include "text_columns.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "text_format.h"
#include "text_counts.h"
#include "text_pair.h"
#include "text_vector.h"

/* One at a time, the values not kept: the checked ways write a run again,
 * whose values the first pass kept. */
static char *counts_scalar(char *p, const uint64_t *values, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        *p++ = ',';
        p = text_u64(p, values[i]);
    }
    return p;
}

char *text_csv_counts_scalar(char *p, const uint64_t *restrict values, uint32_t n,
                             uint64_t *restrict keep)
{
    memcpy(keep, values, (size_t)n * sizeof *values);
    return counts_scalar(p, values, n);
}

#ifdef TEXT_VECTOR

#include <immintrin.h>

/* The digits of 2^(b - 1), the least number of bit length b = 64 - zeros:
 * floor((b - 1) log10 2) + 1. */
#define LEAST_DIGITS(zeros) (TEXT_LOG10_POW2(63 - (zeros)) + 1)
#define LEAST_DIGITS4(z)                                                                           \
    LEAST_DIGITS(z), LEAST_DIGITS((z) + 1), LEAST_DIGITS((z) + 2), LEAST_DIGITS((z) + 3)
#define LEAST_DIGITS16(z)                                                                          \
    LEAST_DIGITS4(z), LEAST_DIGITS4((z) + 4), LEAST_DIGITS4((z) + 8), LEAST_DIGITS4((z) + 12)

const struct lane_constants text_lanes = {
    .splits = TEXT_DIGIT_SPLITS,
    .last_digit = TEXT_EACH_64(1ull << 56),
    .eight = TEXT_EACH_64(8 * 0x0101010101010101ull),
    .comma_first = TEXT_EACH_64(8),
    .ascii = TEXT_EIGHT_64(0x303030303030302cull),
    .sixty_four = TEXT_EACH_64(64),
    .slow = TEXT_EIGHT_64(~0ull << TEXT_FAST_BITS),
    .last_lanes = {{0}, {0, 0, 0, ~0ull}, {0, 0, ~0ull, ~0ull}, {0, ~0ull, ~0ull, ~0ull}},
    .least_digits = {LEAST_DIGITS16(0), LEAST_DIGITS16(16), LEAST_DIGITS16(32), LEAST_DIGITS16(48)},
    .ten_to = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000},
    /* d digits: the lane's last d bytes (its first, the ',', is added) */
    .kept_bytes = {0, ~0ull << 56, ~0ull << 48, ~0ull << 40, ~0ull << 32, ~0ull << 24, ~0ull << 16,
                   ~0ull << 8},
};

/* --- two at a time: SSE2, the x86-64 baseline ------------------------------------- */

#define K128(c, name) _mm_load_si128((const __m128i *)(c)->name)

/*
 * Lanes first to last - 1 of v's two numbers, each below 10^7.
 *  - The digits by text_digits8x2's splits, with the constants in memory.
 *  - 8 x (the digit count + 1), the +1 for the ',': marking the last
 *    digit's byte makes every lane nonzero (a 0 has one digit); then
 *    x | -x has every bit from x's lowest set bit up, which is at most bit 3
 *    of the first digit that is not 0 (digits are below 10), so bit 3 of
 *    each byte says whether it is one of the number's digits, and one sum of
 *    absolute differences (PSADBW) adds those bits per lane, against 8 in
 *    the first byte, which is a leading 0 below 10^7 (|0 - 8| = 8).
 *  - Per number, the lane shifted right by 64 - that (x86 shifts take the
 *    count modulo 64) starts at its last leading 0, to which adding
 *    ",0000000" gives the ',' and ASCII digits (and '0's past them); one
 *    8-byte store, and the count / 8 added to p. `ascii`: c->ascii[0], held
 *    in a register by the caller.
 */
static inline __attribute__((always_inline)) char *put_two(char *p, __m128i v, uint32_t first,
                                                           uint32_t last,
                                                           const struct lane_constants *c,
                                                           uint64_t ascii)
{
    __m128i high = _mm_srli_epi64(_mm_mul_epu32(v, K128(c, splits.by_10000)), 45);
    __m128i low = _mm_sub_epi32(v, _mm_mul_epu32(high, K128(c, splits.ten_thousand)));
    __m128i x = _mm_or_si128(high, _mm_slli_epi64(low, 32));
    __m128i hundreds = _mm_srli_epi16(_mm_mulhi_epu16(x, K128(c, splits.by_100)), 3);
    __m128i rest = _mm_sub_epi16(x, _mm_mullo_epi16(hundreds, K128(c, splits.hundred)));
    __m128i pairs = _mm_or_si128(hundreds, _mm_slli_epi32(rest, 16));
    __m128i tens = _mm_mulhi_epu16(pairs, K128(c, splits.by_10));
    __m128i ones = _mm_sub_epi16(pairs, _mm_mullo_epi16(tens, K128(c, splits.ten)));
    __m128i digits = _mm_or_si128(tens, _mm_slli_epi16(ones, 8));

    __m128i marked = _mm_or_si128(digits, K128(c, last_digit));
    __m128i from = _mm_or_si128(marked, _mm_sub_epi64(_mm_setzero_si128(), marked));
    __m128i eights = _mm_sad_epu8(_mm_and_si128(from, K128(c, eight)), K128(c, comma_first));

    /* read back from memory by the instructions that use them */
    uint64_t texts[2], counts[2], lengths[2];
    _mm_storeu_si128((__m128i *)texts, digits);
    _mm_storeu_si128((__m128i *)counts, eights);
    _mm_storeu_si128((__m128i *)lengths, _mm_srli_epi64(eights, 3));
    __asm__("" : "+m"(texts), "+m"(counts), "+m"(lengths));
    for (uint32_t k = first; k < last; k++) {
        uint64_t text = ascii + (texts[k] >> ((0 - counts[k]) & 63));
        memcpy(p, &text, 8);
        p += lengths[k];
    }
    return p;
}

/* Two at a time, each pair checked: one holding a number of 2^23 or more
 * one at a time. */
static __attribute__((noinline)) char *pairs_checked(char *p, const uint64_t *values, uint32_t n)
{
    const struct lane_constants *c = text_lane_constants();
    for (uint32_t i = 0; i < n; i += 2) {
        uint32_t lanes = n - i < 2 ? n - i : 2;
        uint64_t any = values[i] | (lanes == 2 ? values[i + 1] : 0);
        if (any >> TEXT_FAST_BITS)
            p = counts_scalar(p, values + i, lanes);
        else if (lanes == 2)
            p = put_two(p, _mm_loadu_si128((const __m128i *)(values + i)), 0, 2, c, c->ascii[0]);
        else
            p = put_two(p, _mm_cvtsi64_si128((long long)values[i]), 0, 1, c, c->ascii[0]);
    }
    return p;
}

/* Whether any 64-bit lane of `any` is 2^TEXT_FAST_BITS or more. */
static inline bool any_slow_128(__m128i any)
{
    uint64_t lanes = (uint64_t)_mm_cvtsi128_si64(_mm_or_si128(any, _mm_unpackhi_epi64(any, any)));
    return lanes >> TEXT_FAST_BITS != 0;
}

static char *counts_pairs(char *p, const uint64_t *restrict values, uint32_t n,
                          uint64_t *restrict keep)
{
    const struct lane_constants *c = text_lane_constants();
    uint64_t ascii = c->ascii[0];
    char *start = p;
    __m128i any = _mm_setzero_si128();
    const uint64_t *v = values, *twos_end = values + (n & ~1u);
    for (; v < twos_end; v += 2) {
        __m128i two = _mm_loadu_si128((const __m128i *)v);
        _mm_storeu_si128((__m128i *)(keep + (v - values)), two);
        any = _mm_or_si128(any, two);
        p = put_two(p, two, 0, 2, c, ascii);
    }
    if (n & 1) { /* the last two, of which the first was written, or the only one */
        __m128i last = n > 1 ? _mm_loadu_si128((const __m128i *)(v - 1))
                             : _mm_cvtsi64_si128((long long)values[0]);
        keep[n - 1] = values[n - 1];
        any = _mm_or_si128(any, last);
        p = put_two(p, last, n > 1, n > 1 ? 2 : 1, c, ascii);
    }
    return any_slow_128(any) ? pairs_checked(start, values, n) : p;
}

/* --- four at a time: AVX2 ---------------------------------------------------------- */

/* Four at a time, each group checked: one holding a number of 2^23 or
 * more two at a time (pairs_checked). */
TEXT_AVX2 static __attribute__((noinline)) char *quads_checked(char *p, const uint64_t *values,
                                                               uint32_t n)
{
    const struct lane_constants *c = text_lane_constants();
    for (uint32_t i = 0; i < n; i += 4) {
        uint32_t lanes = n - i < 4 ? n - i : 4;
        __m256i live = lanes == 4 ? _mm256_set1_epi64x(-1) : text_few_lanes(lanes);
        __m256i v = _mm256_maskload_epi64((const long long *)(values + i), live);
        if (!_mm256_testz_si256(v, TEXT_K256(c, slow)))
            p = pairs_checked(p, values + i, lanes);
        else
            p = text_put_four(p, v, live, c, TEXT_K256(c, sixty_four));
    }
    return p;
}

/* Four at a time (text_counts_quads_run), the run checked once. */
TEXT_AVX2 static char *counts_quads(char *p, const uint64_t *restrict values, uint32_t n,
                                    uint64_t *restrict keep)
{
    bool slow;
    char *end = text_counts_quads_run(p, values, n, keep, &slow);
    return slow ? quads_checked(p, values, n) : end;
}

/* --- eight at a time by compression: AVX-512F, BW and VBMI2 ---------------------- */

TEXT_COMPRESSED static char *counts_compressed(char *p, const uint64_t *restrict values, uint32_t n,
                                               uint64_t *restrict keep)
{
    bool slow;
    char *end = text_counts_compressed_run(p, values, n, keep, &slow);
    return slow ? quads_checked(p, values, n) : end;
}

/* text_counts.h's checked way of the counts then the pair (for its AVX2
 * and IFMA ways: TEXT_IFMA asks for AVX2 too). */
TEXT_AVX2 __attribute__((noinline)) char *
text_counts_then_pair_checked(char *p, const uint64_t *values, uint32_t n)
{
    double a, b;
    memcpy(&a, &values[n], sizeof a);
    memcpy(&b, &values[n + 1], sizeof b);
    return text_pair_apart(quads_checked(p, values, n), a, b);
}

/* The counts then the pair as functions (text_counts_pair_fn), for the
 * tests: the report's AVX2 and IFMA row entries have them inline. */
TEXT_AVX2 static char *counts_then_pair_avx2(char *p, const uint64_t *restrict values, uint32_t n,
                                             uint64_t *restrict keep)
{
    return text_counts_then_pair_avx2(p, values, n, keep);
}

TEXT_IFMA static char *counts_then_pair_ifma(char *p, const uint64_t *restrict values, uint32_t n,
                                             uint64_t *restrict keep)
{
    return text_counts_then_pair_ifma(p, values, n, keep);
}

text_counts_fn text_csv_counts_compressed(void)
{
    bool all = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd") &&
               __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2") &&
               __builtin_cpu_supports("popcnt");
    return all ? counts_compressed : NULL;
}

text_counts_fn text_csv_counts_pairs(void)
{
    return counts_pairs;
}

text_counts_fn text_csv_counts_quads(void)
{
    return text_cpu_has_avx2() ? counts_quads : NULL;
}

#else

text_counts_fn text_csv_counts_pairs(void)
{
    return NULL;
}

text_counts_fn text_csv_counts_quads(void)
{
    return NULL;
}

text_counts_fn text_csv_counts_compressed(void)
{
    return NULL;
}

#endif

text_counts_pair_fn text_csv_counts_pair_avx2(void)
{
#ifdef TEXT_VECTOR
    if (text_cpu_has_avx2())
        return counts_then_pair_avx2;
#endif
    return NULL;
}

text_counts_pair_fn text_csv_counts_pair_ifma(void)
{
#ifdef TEXT_VECTOR
    if (text_cpu_has_ifma())
        return counts_then_pair_ifma;
#endif
    return NULL;
}

text_counts_pair_fn text_csv_counts_pair_best(void)
{
    text_counts_pair_fn best = text_csv_counts_pair_ifma();
    return best ? best : text_csv_counts_pair_avx2();
}

text_counts_fn text_csv_counts_best(void)
{
    text_counts_fn best = text_csv_counts_compressed();
    if (!best)
        best = text_csv_counts_quads();
    return best ? best : text_csv_counts_baseline();
}

text_counts_fn text_csv_counts_baseline(void)
{
    text_counts_fn pairs = text_csv_counts_pairs();
    return pairs ? pairs : text_csv_counts_scalar;
}
