/* Owns a row's runs of unsigned columns as CSV text (see text_columns.h). */
#include "text_columns.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "text_format.h"
#include "text_vector.h"

#define BELOW_1E8(v) ((v) < 100000000u)

char *text_csv_counts_scalar(char *p, const uint64_t *values, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        *p++ = ',';
        p = text_u64(p, values[i]);
    }
    return p;
}

#ifdef TEXT_VECTOR

#include <immintrin.h>

/* ",", then the text of a number below 10^8 (its digits, then bytes past
 * them), stored from a register. */
static inline char *put_comma_text(char *p, uint64_t text, unsigned length)
{
    *p = ',';
    memcpy(p + 1, &text, 8);
    return p + 1 + length;
}

/* The text of the one or two numbers below 10^8 in v's lanes (digits8x2). */
static inline char *put_two(char *p, __m128i v, bool both)
{
    __m128i digits = text_digits8x2(v);
    /* leading zero digits are the low zero bytes of each lane; the last
     * digit always stays (0x80) */
    unsigned nonzero = ~text_zero_digits(digits);
    unsigned skip0 = (unsigned)__builtin_ctz(nonzero | 0x80);
    __m128i ascii = _mm_add_epi8(digits, _mm_set1_epi8('0'));
    p = put_comma_text(p, (uint64_t)_mm_cvtsi128_si64(ascii) >> (8 * skip0), 8 - skip0);
    if (!both)
        return p;
    unsigned skip1 = (unsigned)__builtin_ctz((nonzero >> 8) | 0x80);
    uint64_t text1 = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(ascii, ascii));
    return put_comma_text(p, text1 >> (8 * skip1), 8 - skip1);
}

static char *counts_pairs(char *p, const uint64_t *values, uint32_t n)
{
    uint32_t i = 0;
    for (; i + 2 <= n; i += 2) {
        if (!BELOW_1E8(values[i]) || !BELOW_1E8(values[i + 1]))
            p = text_csv_counts_scalar(p, values + i, 2);
        else
            p = put_two(p, _mm_loadu_si128((const __m128i *)(values + i)), true);
    }
    if (i < n && !BELOW_1E8(values[i]))
        p = text_csv_counts_scalar(p, values + i, 1);
    else if (i < n)
        p = put_two(p, _mm_cvtsi64_si128((long long)values[i]), false);
    return p;
}

#define EIGHTS_TARGET "avx512f,avx512bw,avx512vbmi2,popcnt"

/*
 * Eight numbers below 10^7 at a time, one per 64-bit lane of a 512-bit
 * register, without a store per number: each lane's 8 digits (the first is
 * 0 below 10^7) become ',' and the 7 others in ASCII, and one byte
 * compression (VPCOMPRESSB) keeps each lane's ',' and its digits from the
 * first that is not 0 (the last always), packing the eight texts side by
 * side. A group holding a larger number goes two at a time.
 */
__attribute__((target(EIGHTS_TARGET))) static char *counts_eights(char *p, const uint64_t *values,
                                                                  uint32_t n)
{
    /* the reciprocals of text_digits8x2 */
    const __m512i by_10000 = _mm512_set1_epi64(0xd1b71759), ten_thousand = _mm512_set1_epi64(10000);
    const __m512i by_100 = _mm512_set1_epi32(5243), hundred = _mm512_set1_epi16(100);
    const __m512i by_10 = _mm512_set1_epi16(6554), ten = _mm512_set1_epi16(10);
    /* the last digit's byte marked, so that a 0 keeps its one digit */
    const __m512i last_digit = _mm512_set1_epi64((long long)(1ull << 56));
    const __m512i ascii = _mm512_set1_epi64(0x303030303030302cll); /* ',' then '0's */
    for (uint32_t i = 0; i < n; i += 8) {
        uint32_t lanes = n - i < 8 ? n - i : 8;
        __mmask8 live = (__mmask8)((1u << lanes) - 1);
        __m512i v = _mm512_maskz_loadu_epi64(live, values + i);
        if (_mm512_cmpgt_epu64_mask(v, _mm512_set1_epi64(9999999))) {
            p = counts_pairs(p, values + i, lanes);
            continue;
        }
        __m512i high = _mm512_srli_epi64(_mm512_mul_epu32(v, by_10000), 45);
        __m512i low = _mm512_sub_epi32(v, _mm512_mul_epu32(high, ten_thousand));
        __m512i x = _mm512_or_si512(high, _mm512_slli_epi64(low, 32));
        __m512i hundreds = _mm512_srli_epi16(_mm512_mulhi_epu16(x, by_100), 3);
        __m512i rest = _mm512_sub_epi16(x, _mm512_mullo_epi16(hundreds, hundred));
        __m512i pairs = _mm512_or_si512(hundreds, _mm512_slli_epi32(rest, 16));
        __m512i tens = _mm512_mulhi_epu16(pairs, by_10);
        __m512i ones = _mm512_sub_epi16(pairs, _mm512_mullo_epi16(tens, ten));
        __m512i digits = _mm512_or_si512(tens, _mm512_slli_epi16(ones, 8));
        /* x | -x has every bit from x's lowest set bit up: here every byte
         * from the lane's first digit that is not 0 */
        __m512i marked = _mm512_or_si512(digits, last_digit);
        __m512i from = _mm512_or_si512(marked, _mm512_sub_epi64(_mm512_setzero_si512(), marked));
        uint64_t keep = _mm512_test_epi8_mask(from, from) | 0x0101010101010101ull;
        if (lanes < 8)
            keep &= (1ull << (8 * lanes)) - 1;
        __m512i text = _mm512_maskz_compress_epi8(keep, _mm512_add_epi8(digits, ascii));
        _mm512_storeu_si512(p, text);
        p += __builtin_popcountll(keep);
    }
    return p;
}

text_counts_fn text_csv_counts_pairs(void)
{
    return counts_pairs;
}

text_counts_fn text_csv_counts_eights(void)
{
    /* libgcc (compiler-rt with clang) reads the processor's features in a
     * constructor, before any caller gets here */
    bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("popcnt");
    return avx512 ? counts_eights : NULL;
}

#else

text_counts_fn text_csv_counts_pairs(void)
{
    return NULL;
}

text_counts_fn text_csv_counts_eights(void)
{
    return NULL;
}

#endif

text_counts_fn text_csv_counts_best(void)
{
    text_counts_fn best = text_csv_counts_eights();
    if (!best)
        best = text_csv_counts_pairs();
    return best ? best : text_csv_counts_scalar;
}
