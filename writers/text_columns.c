/* Owns a row's runs of unsigned columns as CSV text (see text_columns.h). */
#include "text_columns.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "text_format.h"
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

/*
 * The vector ways below write a number's ',' and digits as one 8-byte store,
 * which holds a number below 10^7. A run is checked once, by an OR of its
 * numbers taken as they are written: if one is 2^23 or more, the run is
 * written again from its start by a way that checks each group (what the
 * unchecked way writes for such numbers stays within TEXT_CSV_COUNTS_MAX).
 * A report's counts are mostly far below 2^23.
 */
#define FAST_BITS 23

/*
 * The constants of the vector ways, the same in each 64-bit lane, 512 bits
 * wide (the SSE2 way reads the first 128, AVX2 the first 256). Read through a pointer the
 * compiler cannot see through (lane_constants), so that each is a memory
 * operand of the instruction that uses it: left to itself, a compiler
 * rebuilds several from general registers in every group.
 */
struct lane_constants {
    struct text_digit_splits splits; /* text_digits8x2's reciprocals and divisors */
    /* the digit count's: the last digit's byte marked; 8 per byte */
    _Alignas(64) uint64_t last_digit[8];
    _Alignas(64) uint64_t eight[8];
    /* 8 in the first byte: the ',' in the count (see put_two) */
    _Alignas(64) uint64_t comma_first[8];
    /* ',' then '0's; 64 */
    _Alignas(64) uint64_t ascii[8];
    _Alignas(64) uint64_t sixty_four[8];
    /* the bits of a number too large for one 8-byte store (FAST_BITS) */
    _Alignas(64) uint64_t slow[8];
    /* the lanes 0 to n - 1 of eight, by n: one load of a mask register */
    uint8_t first_lanes[8];
};

static const struct lane_constants lane_table = {
    .splits = TEXT_DIGIT_SPLITS,
    .last_digit = TEXT_EACH_64(1ull << 56),
    .eight = TEXT_EACH_64(8 * 0x0101010101010101ull),
    .comma_first = TEXT_EACH_64(8),
    .ascii = TEXT_EACH_64(0x303030303030302cull),
    .sixty_four = TEXT_EACH_64(64),
    .slow = TEXT_EACH_64(~0ull << FAST_BITS),
    .first_lanes = {0x00, 0x01, 0x03, 0x07, 0x0f, 0x1f, 0x3f, 0x7f},
};

static inline const struct lane_constants *lane_constants(void)
{
    const struct lane_constants *c = &lane_table;
    __asm__("" : "+r"(c));
    return c;
}

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
    const struct lane_constants *c = lane_constants();
    for (uint32_t i = 0; i < n; i += 2) {
        uint32_t lanes = n - i < 2 ? n - i : 2;
        uint64_t any = values[i] | (lanes == 2 ? values[i + 1] : 0);
        if (any >> FAST_BITS)
            p = counts_scalar(p, values + i, lanes);
        else if (lanes == 2)
            p = put_two(p, _mm_loadu_si128((const __m128i *)(values + i)), 0, 2, c, c->ascii[0]);
        else
            p = put_two(p, _mm_cvtsi64_si128((long long)values[i]), 0, 1, c, c->ascii[0]);
    }
    return p;
}

/* Whether any 64-bit lane of `any` is 2^FAST_BITS or more. */
static inline bool any_slow_128(__m128i any)
{
    uint64_t lanes = (uint64_t)_mm_cvtsi128_si64(_mm_or_si128(any, _mm_unpackhi_epi64(any, any)));
    return lanes >> FAST_BITS != 0;
}

static char *counts_pairs(char *p, const uint64_t *restrict values, uint32_t n,
                          uint64_t *restrict keep)
{
    const struct lane_constants *c = lane_constants();
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

#define QUADS_TARGET "avx2"
#define QUADS __attribute__((target(QUADS_TARGET)))
#define K256(c, name) _mm256_load_si256((const __m256i *)(c)->name)

/* The high 8 bytes of x at p (any alignment: MOVHPD's intrinsic takes a
 * double pointer, which p is not). */
QUADS static inline void put_high(char *p, __m128i x)
{
    uint64_t high = (uint64_t)_mm_extract_epi64(x, 1);
    memcpy(p, &high, 8);
}

/*
 * Lanes first to last - 1 of v's four numbers, each below 10^7, as put_two
 * writes two, but the per-lane shift done in the register (VPSRLVQ, a count
 * per lane) with the ASCII: left per number, one 8-byte store and one
 * addition.
 */
QUADS static inline __attribute__((always_inline)) char *put_four(char *p, __m256i v,
                                                                  uint32_t first, uint32_t last,
                                                                  const struct lane_constants *c,
                                                                  __m256i sixty_four)
{
    __m256i digits = text_digits8x4(v, &c->splits);

    __m256i marked = _mm256_or_si256(digits, K256(c, last_digit));
    __m256i from = _mm256_or_si256(marked, _mm256_sub_epi64(_mm256_setzero_si256(), marked));
    __m256i eights = _mm256_sad_epu8(_mm256_and_si256(from, K256(c, eight)), K256(c, comma_first));
    __m256i text = _mm256_add_epi8(_mm256_srlv_epi64(digits, _mm256_sub_epi64(sixty_four, eights)),
                                   K256(c, ascii));

    /* the texts stored from the register, the lengths read back from
     * memory by the additions that use them: the fewest instructions */
    uint64_t lengths[4];
    _mm256_storeu_si256((__m256i *)lengths, _mm256_srli_epi64(eights, 3));
    __asm__("" : "+m"(lengths));
    if (first == 0 && last == 4) { /* unrolled */
        __m128i low_two = _mm256_castsi256_si128(text);
        __m128i high_two = _mm256_extracti128_si256(text, 1);
        _mm_storel_epi64((__m128i *)p, low_two);
        p += lengths[0];
        put_high(p, low_two);
        p += lengths[1];
        _mm_storel_epi64((__m128i *)p, high_two);
        p += lengths[2];
        put_high(p, high_two);
        return p + lengths[3];
    }
    uint64_t texts[4];
    _mm256_storeu_si256((__m256i *)texts, text);
    for (uint32_t k = first; k < last; k++) {
        memcpy(p, &texts[k], 8);
        p += lengths[k];
    }
    return p;
}

/* The lanes 0 to n - 1 of four (n below 4), for masked loads and stores. */
QUADS static inline __m256i few_lanes(uint32_t n)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
}

/* n (below 4) numbers, the lanes past them 0. */
QUADS static inline __m256i load_few(const uint64_t *values, uint32_t n)
{
    return _mm256_maskload_epi64((const long long *)values, few_lanes(n));
}

/* Four at a time, each group checked: one holding a number of 2^23 or
 * more two at a time (pairs_checked). */
QUADS static __attribute__((noinline)) char *quads_checked(char *p, const uint64_t *values,
                                                           uint32_t n)
{
    const struct lane_constants *c = lane_constants();
    for (uint32_t i = 0; i < n; i += 4) {
        uint32_t lanes = n - i < 4 ? n - i : 4;
        __m256i v = lanes == 4 ? _mm256_loadu_si256((const __m256i *)(values + i))
                               : load_few(values + i, lanes);
        __m256i slow = _mm256_and_si256(v, _mm256_set1_epi64x((long long)(~0ull << FAST_BITS)));
        if (!_mm256_testz_si256(slow, slow))
            p = pairs_checked(p, values + i, lanes);
        else
            p = put_four(p, v, 0, lanes, c, K256(c, sixty_four));
    }
    return p;
}

/* Four at a time (put_four), for processors with AVX2 but not AVX-512
 * VBMI2; the run checked once (FAST_BITS). */
QUADS static char *counts_quads(char *p, const uint64_t *restrict values, uint32_t n,
                                uint64_t *restrict keep)
{
    const struct lane_constants *c = lane_constants();
    __m256i sixty_four = K256(c, sixty_four);
    char *start = p;
    __m256i any = _mm256_setzero_si256();
    const uint64_t *v = values, *fours_end = values + (n & ~3u);
    for (; v < fours_end; v += 4) {
        __m256i four = _mm256_loadu_si256((const __m256i *)v);
        _mm256_storeu_si256((__m256i *)(keep + (v - values)), four);
        any = _mm256_or_si256(any, four);
        p = put_four(p, four, 0, 4, c, sixty_four);
    }
    uint32_t left = n & 3;
    if (left && n > 4) { /* the last four, of which the first were written */
        __m256i four = _mm256_loadu_si256((const __m256i *)(v + left - 4));
        _mm256_storeu_si256((__m256i *)(keep + n - 4), four);
        any = _mm256_or_si256(any, four);
        p = put_four(p, four, 4 - left, 4, c, sixty_four);
    } else if (left) {
        __m256i live = few_lanes(left);
        __m256i few = _mm256_maskload_epi64((const long long *)v, live);
        _mm256_maskstore_epi64((long long *)(keep + (v - values)), live, few);
        any = _mm256_or_si256(any, few);
        p = put_four(p, few, 0, left, c, sixty_four);
    }
    if (!_mm256_testz_si256(any, _mm256_set1_epi64x((long long)(~0ull << FAST_BITS))))
        return quads_checked(start, values, n);
    return p;
}

/* --- eight at a time by stores: AVX-512F and BW, without VBMI2 ---------------------- */

#define OCTETS_TARGET "avx512f,avx512bw"
#define OCTETS __attribute__((target(OCTETS_TARGET)))
#define K512(c, name) _mm512_load_si512((const void *)(c)->name)

/* The low and the high 8 bytes of x at p and at p + lengths[0], p moved past
 * both numbers. */
OCTETS static inline __attribute__((always_inline)) char *put_pair(char *p, __m128i x,
                                                                   const uint64_t *lengths)
{
    _mm_storel_epi64((__m128i *)p, x);
    p += lengths[0];
    /* MOVHPS, one store (PEXTRQ to memory is a shuffle and a store) */
    _mm_storeh_pi((__m64 *)(void *)p, _mm_castsi128_ps(x));
    return p + lengths[1];
}

/*
 * The live lanes of v's eight numbers, each below 10^7 (the lanes past them
 * 0), as put_four writes four: the digits, the lengths and the per-lane shift
 * in one 512-bit register, then per number one 8-byte store and one
 * addition. The lanes past the live ones count 0 bytes: their stores land at
 * the end, within TEXT_CSV_COUNTS_MAX, and are written over or left past it.
 * That costs a short group three or so instructions per missing number, less
 * than a branch or a loop per number would.
 */
OCTETS static inline __attribute__((always_inline)) char *
put_eight(char *p, __m512i v, __mmask8 live, const struct lane_constants *c, __m512i sixty_four)
{
    __m512i high = _mm512_srli_epi64(_mm512_mul_epu32(v, K512(c, splits.by_10000)), 45);
    __m512i low = _mm512_sub_epi32(v, _mm512_mul_epu32(high, K512(c, splits.ten_thousand)));
    __m512i x = _mm512_or_si512(high, _mm512_slli_epi64(low, 32));
    __m512i hundreds = _mm512_srli_epi16(_mm512_mulhi_epu16(x, K512(c, splits.by_100)), 3);
    __m512i rest = _mm512_sub_epi16(x, _mm512_mullo_epi16(hundreds, K512(c, splits.hundred)));
    __m512i pairs = _mm512_or_si512(hundreds, _mm512_slli_epi32(rest, 16));
    __m512i tens = _mm512_mulhi_epu16(pairs, K512(c, splits.by_10));
    __m512i ones = _mm512_sub_epi16(pairs, _mm512_mullo_epi16(tens, K512(c, splits.ten)));
    __m512i digits = _mm512_or_si512(tens, _mm512_slli_epi16(ones, 8));

    __m512i marked = _mm512_or_si512(digits, K512(c, last_digit));
    __m512i from = _mm512_or_si512(marked, _mm512_sub_epi64(_mm512_setzero_si512(), marked));
    __m512i eights = _mm512_sad_epu8(_mm512_and_si512(from, K512(c, eight)), K512(c, comma_first));
    __m512i text = _mm512_add_epi8(_mm512_srlv_epi64(digits, _mm512_sub_epi64(sixty_four, eights)),
                                   K512(c, ascii));

    /* as in put_four: the texts from the register, the lengths read back
     * from memory by the additions */
    uint64_t lengths[8];
    _mm512_storeu_si512(lengths, _mm512_maskz_srli_epi64(live, eights, 3));
    __asm__("" : "+m"(lengths));
    p = put_pair(p, _mm512_castsi512_si128(text), lengths);
    p = put_pair(p, _mm512_extracti32x4_epi32(text, 1), lengths + 2);
    p = put_pair(p, _mm512_extracti32x4_epi32(text, 2), lengths + 4);
    return put_pair(p, _mm512_extracti32x4_epi32(text, 3), lengths + 6);
}

/* Eight at a time, each group checked: one holding a number of 2^23 or
 * more two at a time (pairs_checked). */
OCTETS static __attribute__((noinline)) char *octets_checked(char *p, const uint64_t *values,
                                                             uint32_t n)
{
    const struct lane_constants *c = lane_constants();
    for (uint32_t i = 0; i < n; i += 8) {
        uint32_t lanes = n - i < 8 ? n - i : 8;
        __mmask8 live = lanes == 8 ? 0xff : (__mmask8)c->first_lanes[lanes];
        __m512i v = _mm512_maskz_loadu_epi64(live, values + i);
        if (_mm512_test_epi64_mask(v, K512(c, slow)))
            p = pairs_checked(p, values + i, lanes);
        else
            p = put_eight(p, v, live, c, K512(c, sixty_four));
    }
    return p;
}

/* Eight at a time (put_eight), for processors with AVX-512F and BW but not
 * VBMI2; the run checked once (FAST_BITS). A short last group is a masked
 * load: 13 numbers are two groups. */
OCTETS static char *counts_octets(char *p, const uint64_t *restrict values, uint32_t n,
                                  uint64_t *restrict keep)
{
    const struct lane_constants *c = lane_constants();
    __m512i sixty_four = K512(c, sixty_four);
    char *start = p;
    __m512i any = _mm512_setzero_si512();
    const uint64_t *v = values, *eights_end = values + (n & ~7u);
    for (; v < eights_end; v += 8) {
        __m512i eight = _mm512_loadu_si512(v);
        _mm512_storeu_si512(keep + (v - values), eight);
        any = _mm512_or_si512(any, eight);
        p = put_eight(p, eight, 0xff, c, sixty_four);
    }
    if (n & 7) {
        __mmask8 live = (__mmask8)c->first_lanes[n & 7];
        __m512i few = _mm512_maskz_loadu_epi64(live, v);
        _mm512_mask_storeu_epi64(keep + (v - values), live, few);
        any = _mm512_or_si512(any, few);
        p = put_eight(p, few, live, c, sixty_four);
    }
    __mmask16 slow = _mm512_test_epi64_mask(any, K512(c, slow));
    if (!_mm512_kortestz(slow, slow))
        return octets_checked(start, values, n);
    return p;
}

/* --- four at a time by compression: AVX-512VL and VBMI2 ------------------------- */

#define COMPRESSED_TARGET "avx2,avx512f,avx512vl,avx512bw,avx512vbmi2,popcnt"
#define COMPRESSED __attribute__((target(COMPRESSED_TARGET)))

/*
 * The lanes of v's four numbers that live_bytes marks (8 bits a lane; the
 * other lanes 0), each below 10^7, without a store per number: each lane's
 * 8 digits (the first is 0 below 10^7) become ',' and the 7 others in
 * ASCII, and one byte compression (VPCOMPRESSB) keeps each lane's ',' and
 * its digits from the first that is not 0 (x | -x, as put_two finds them),
 * packing the texts side by side for one 32-byte store. 256 bits wide: the
 * same at 512 (eight numbers a compression, fewer instructions) ran whole
 * rows slower on both processors measured (docs/benchmarks.md, round nine).
 */
COMPRESSED static inline __attribute__((always_inline)) char *
put_four_compressed(char *p, __m256i v, uint32_t live_bytes, const struct lane_constants *c)
{
    __m256i digits = text_digits8x4(v, &c->splits);
    __m256i marked = _mm256_or_si256(digits, K256(c, last_digit));
    __m256i from = _mm256_or_si256(marked, _mm256_sub_epi64(_mm256_setzero_si256(), marked));
    __mmask32 kept = (_mm256_test_epi8_mask(from, from) | 0x01010101u) & live_bytes;
    __m256i text = _mm256_maskz_compress_epi8(kept, _mm256_add_epi8(digits, K256(c, ascii)));
    _mm256_storeu_si256((__m256i *)(void *)p, text);
    return p + __builtin_popcount(kept);
}

/* Four at a time by compression (put_four_compressed), the run checked
 * once (FAST_BITS); a short last group is a masked load. */
COMPRESSED static char *counts_compressed(char *p, const uint64_t *restrict values, uint32_t n,
                                          uint64_t *restrict keep)
{
    const struct lane_constants *c = lane_constants();
    char *start = p;
    __m256i any = _mm256_setzero_si256();
    const uint64_t *v = values, *fours_end = values + (n & ~3u);
    for (; v < fours_end; v += 4) {
        __m256i four = _mm256_loadu_si256((const __m256i *)v);
        _mm256_storeu_si256((__m256i *)(keep + (v - values)), four);
        any = _mm256_or_si256(any, four);
        p = put_four_compressed(p, four, ~0u, c);
    }
    if (n & 3) {
        __mmask8 live = (__mmask8)c->first_lanes[n & 3];
        __m256i few = _mm256_maskz_loadu_epi64(live, v);
        _mm256_mask_storeu_epi64(keep + (v - values), live, few);
        any = _mm256_or_si256(any, few);
        p = put_four_compressed(p, few, (1u << 8 * (n & 3)) - 1, c);
    }
    if (!_mm256_testz_si256(any, K256(c, slow)))
        return quads_checked(start, values, n);
    return p;
}

text_counts_fn text_csv_counts_pairs(void)
{
    return counts_pairs;
}

text_counts_fn text_csv_counts_quads(void)
{
    return __builtin_cpu_supports("avx2") ? counts_quads : NULL;
}

text_counts_fn text_csv_counts_octets(void)
{
    bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    return avx512 ? counts_octets : NULL;
}

text_counts_fn text_csv_counts_compressed(void)
{
    /* libgcc (compiler-rt with clang) reads the processor's features in a
     * constructor, before any caller gets here */
    bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                  __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi2") &&
                  __builtin_cpu_supports("popcnt");
    return avx512 ? counts_compressed : NULL;
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

text_counts_fn text_csv_counts_octets(void)
{
    return NULL;
}

text_counts_fn text_csv_counts_compressed(void)
{
    return NULL;
}

#endif

text_counts_fn text_csv_counts_best(void)
{
    text_counts_fn best = text_csv_counts_compressed();
    if (!best)
        best = text_csv_counts_octets();
    if (!best)
        best = text_csv_counts_quads();
    if (!best)
        best = text_csv_counts_pairs();
    return best ? best : text_csv_counts_scalar;
}
