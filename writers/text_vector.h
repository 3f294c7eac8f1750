/*
 * The decimal digits of two numbers below 10^8 at once, in one SSE2 register
 * (SSE2 is the x86-64 baseline: no dispatch). Report rows are mostly such
 * numbers, and a row's columns are independent of each other, so each
 * division step serves two numbers for one instruction. Other processors
 * have no TEXT_VECTOR and their callers use text_digits8 (text_format.h).
 * Internal to libtally.
 */
#ifndef TALLY_TEXT_VECTOR_H
#define TALLY_TEXT_VECTOR_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__SSE2__) && defined(__x86_64__)
#define TEXT_VECTOR 1
#include <cpuid.h>
#include <immintrin.h>

/*
 * v holds two numbers below 10^8, one per 64-bit lane; the result holds their
 * 8 digits as byte values 0-9, each lane's most significant digit in its
 * lowest byte (first in memory), as text_digits8 gives them. The same
 * splits as text_digits8 (4-digit halves, pairs, digits), each a
 * multiplication by a reciprocal exact for the range it serves:
 *   x / 10^4 = x * 0xd1b71759 >> 45 for x < 2^32 (32-bit lanes, 64-bit products);
 *   x / 100  = x * 5243 >> 19      for x < 43699 (the high half of 16-bit products, >> 3);
 *   x / 10   = x * 6554 >> 16      for x < 16384 (the high half of 16-bit products).
 */
/* c, hidden from the optimizer: it would turn a multiplication by a small
 * constant into several shifts and adds, which cost more here. */
static inline __m128i text_opaque(__m128i c)
{
    __asm__("" : "+x"(c));
    return c;
}

static inline __m128i text_digits8x2(__m128i v)
{
    __m128i high = _mm_srli_epi64(_mm_mul_epu32(v, _mm_set1_epi32((int)0xd1b71759u)), 45);
    __m128i low = _mm_sub_epi32(v, _mm_mul_epu32(high, _mm_set1_epi32(10000)));
    /* 32-bit lanes: the high 4 digits, then the low 4 */
    __m128i x = _mm_or_si128(high, _mm_slli_epi64(low, 32));
    __m128i hundreds = _mm_srli_epi16(_mm_mulhi_epu16(x, _mm_set1_epi32(5243)), 3);
    __m128i rest = _mm_sub_epi16(x, _mm_mullo_epi16(hundreds, text_opaque(_mm_set1_epi16(100))));
    /* 16-bit lanes, each a pair of digits below 100 */
    __m128i pairs = _mm_or_si128(hundreds, _mm_slli_epi32(rest, 16));
    __m128i tens = _mm_mulhi_epu16(pairs, _mm_set1_epi16(6554));
    __m128i ones = _mm_sub_epi16(pairs, _mm_mullo_epi16(tens, text_opaque(_mm_set1_epi16(10))));
    return _mm_or_si128(tens, _mm_slli_epi16(ones, 8));
}

/*
 * The divisors and reciprocals of text_digits8x2's splits, the same in each
 * 64-bit lane, for the wider ways, which read them as memory operands (left
 * to itself, a compiler rebuilds several from general registers in every
 * group): eight lanes, for registers of up to 512 bits (a narrower way
 * reads the first 16 or 32 bytes).
 */
struct text_digit_splits {
    _Alignas(64) uint64_t by_10000[8];
    _Alignas(64) uint64_t ten_thousand[8];
    _Alignas(64) uint64_t by_100[8];
    _Alignas(64) uint64_t hundred[8];
    _Alignas(64) uint64_t by_10[8];
    _Alignas(64) uint64_t ten[8];
};

/* x in each 64-bit lane of a 256-bit constant. */
#define TEXT_EACH_64(x)                                                                            \
    {                                                                                              \
        (x), (x), (x), (x)                                                                         \
    }
/* x in each 64-bit lane of a 512-bit constant. */
#define TEXT_EIGHT_64(x)                                                                           \
    {                                                                                              \
        (x), (x), (x), (x), (x), (x), (x), (x)                                                     \
    }
/* The initializer of a struct text_digit_splits. */
#define TEXT_DIGIT_SPLITS                                                                          \
    {                                                                                              \
        .by_10000 = TEXT_EIGHT_64(0xd1b71759u), .ten_thousand = TEXT_EIGHT_64(10000u),             \
        .by_100 = TEXT_EIGHT_64(5243 * 0x0000000100000001ull),                                     \
        .hundred = TEXT_EIGHT_64(100 * 0x0001000100010001ull),                                     \
        .by_10 = TEXT_EIGHT_64(6554 * 0x0001000100010001ull),                                      \
        .ten = TEXT_EIGHT_64(10 * 0x0001000100010001ull),                                          \
    }

/* For the functions that use AVX2, and POPCNT, which every processor with
 * AVX2 has (their callers check both: text_cpu_has_avx2). */
#define TEXT_AVX2 __attribute__((target("avx2,popcnt")))

/*
 * Digits by AVX-512 IFMA (52-bit multiplications), for callers that check
 * the processor has it: digit i (0 the first) of x < 10^8 in a 64-bit lane
 * is the high half of ten times the fraction x / 10^(8-i), which is the low
 * 52 bits of x times 2^52 / 10^(8-i) rounded up; digit 0 is x / 10^7, the
 * high half of x (times 1) times 2^52 / 10^7 rounded up. No lane waits on
 * another: two multiplications deep, where text_digits8x4 is about six.
 * Exact for every x < 10^8: rounding a multiplier up adds less than
 * x / 2^52 < 2.3 x 10^-8 to a fraction (never carrying it past 1) and less
 * than 2.3 x 10^-7 to its tenfold, whose digit changes only at the next
 * integer, 10^-6 away at the least (digit 1); digit 0's quotient is 10^-7
 * from its next. Every x was checked against division when this was
 * written.
 * TEXT_IFMA asks for what the counts' compression asks for too (CD, VBMI2,
 * POPCNT: text_counts.h), as the IFMA row entry has them inline. Of the
 * processors with IFMA, only Cannon Lake lacks VBMI2; it takes the
 * ways without IFMA.
 */
#define TEXT_IFMA                                                                                  \
    __attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512cd,avx512ifma,avx512vbmi,"         \
                          "avx512vbmi2,popcnt,prfchw")))
#define TEXT_BY_2_52(n) (((1ull << 52) + (n)-1) / (n))
/* 10^(8 - i) for the digit i from 1 to 7 */
#define TEXT_TEN_AFTER(i)                                                                          \
    ((i) == 1   ? 10000000u                                                                        \
     : (i) == 2 ? 1000000u                                                                         \
     : (i) == 3 ? 100000u                                                                          \
     : (i) == 4 ? 10000u                                                                           \
     : (i) == 5 ? 1000u                                                                            \
     : (i) == 6 ? 100u                                                                             \
                : 10u)
/* The two multipliers of digit i's lane */
#define TEXT_IFMA_FRACTION_BY(i) ((i) == 0 ? 1 : TEXT_BY_2_52(TEXT_TEN_AFTER(i)))
#define TEXT_IFMA_DIGIT_BY(i) ((i) == 0 ? TEXT_BY_2_52(10000000u) : 10)

/* The digits of x's lanes, each lane's digit by the multipliers in the
 * same lanes of fraction_by and digit_by (64-byte aligned). */
TEXT_IFMA static inline __attribute__((always_inline)) __m512i
text_digits_ifma(__m512i x, const void *fraction_by, const void *digit_by)
{
    __m512i fraction =
        _mm512_madd52lo_epu64(_mm512_setzero_si512(), x, _mm512_load_si512(fraction_by));
    return _mm512_madd52hi_epu64(_mm512_setzero_si512(), fraction, _mm512_load_si512(digit_by));
}

/* For functions that use PREFETCHW (their callers check
 * text_cpu_has_prfchw). */
#define TEXT_PRFCHW __attribute__((target("prfchw")))

/* For functions that use AVX2, POPCNT and PREFETCHW (their callers check
 * text_cpu_has_avx2 and text_cpu_has_prfchw). */
#define TEXT_AVX2_PRFCHW __attribute__((target("avx2,popcnt,prfchw")))

/* Whether this processor has PREFETCHW (CPUID 0x80000001, ECX bit 8), read
 * from CPUID: clang's __builtin_cpu_supports does not know "prfchw". */
static inline bool text_cpu_has_prfchw(void)
{
    unsigned eax, ebx, ecx, edx;
    return __get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx) && (ecx & bit_PRFCHW);
}

/* Whether this processor has what TEXT_AVX2 asks for. libgcc (compiler-rt
 * with clang) reads the processor's features in a constructor, before any
 * caller gets here. */
static inline bool text_cpu_has_avx2(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
}

/* Whether this processor has what TEXT_IFMA asks for. */
static inline bool text_cpu_has_ifma(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512ifma") &&
           __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2") &&
           __builtin_cpu_supports("popcnt") && text_cpu_has_prfchw();
}

/* text_digits_ifma's multipliers for digits 0 to 7 of one number, a digit
 * per 64-bit lane, and the gather of byte 0 of each lane of two such
 * registers into 16 bytes. */
struct text_ifma_digits {
    _Alignas(64) uint64_t fraction_by[8];
    _Alignas(64) uint64_t digit_by[8];
    _Alignas(64) uint8_t gather[64];
};

#define TEXT_IFMA_EIGHT(by)                                                                        \
    {                                                                                              \
        by(0), by(1), by(2), by(3), by(4), by(5), by(6), by(7)                                     \
    }
/* The initializer of a struct text_ifma_digits. */
#define TEXT_IFMA_DIGITS                                                                           \
    {                                                                                              \
        .fraction_by = TEXT_IFMA_EIGHT(TEXT_IFMA_FRACTION_BY),                                     \
        .digit_by = TEXT_IFMA_EIGHT(TEXT_IFMA_DIGIT_BY),                                           \
        .gather = {0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120},               \
    }

/* text_digits8x2 by IFMA: the digits of first (below 10^8) in bytes 0-7,
 * then second's (below 10^8) in bytes 8-15, each two multiplications deep
 * where text_digits8x2's splits are about six. */
TEXT_IFMA static inline __attribute__((always_inline)) __m128i
text_digits8x2_ifma(uint64_t first, uint64_t second, const struct text_ifma_digits *t)
{
    __m512i a = text_digits_ifma(_mm512_set1_epi64((long long)first), t->fraction_by, t->digit_by);
    __m512i b = text_digits_ifma(_mm512_set1_epi64((long long)second), t->fraction_by, t->digit_by);
    return _mm512_castsi512_si128(
        _mm512_permutex2var_epi8(a, _mm512_load_si512((const void *)t->gather), b));
}

/* The 256-bit constant `name` of the table t, as a memory operand of the
 * instruction that uses it. */
#define TEXT_K256(t, name) _mm256_load_si256((const __m256i *)(const void *)(t)->name)

/* For the functions that use AVX-512F and BW (their callers check that the
 * processor has them). */
#define TEXT_AVX512BW __attribute__((target("avx2,avx512f,avx512bw")))

/* The 512-bit constant `name` of the table t, as a memory operand. */
#define TEXT_K512(t, name) _mm512_load_si512((const void *)(t)->name)

/* text_digits8x2's splits on the W-bit lanes of v (W: 256 or 512, for
 * callers whose processor has the target), the constants from s, as a
 * function `name`: one definition for both widths. */
#define TEXT_DIGITS8_WIDE(name, target, W)                                                         \
    target static inline __attribute__((always_inline)) __m##W##i name(                            \
        __m##W##i v, const struct text_digit_splits *s)                                            \
    {                                                                                              \
        __m##W##i high = _mm##W##_srli_epi64(_mm##W##_mul_epu32(v, TEXT_K##W(s, by_10000)), 45);   \
        __m##W##i low =                                                                            \
            _mm##W##_sub_epi32(v, _mm##W##_mul_epu32(high, TEXT_K##W(s, ten_thousand)));           \
        __m##W##i x = _mm##W##_or_si##W(high, _mm##W##_slli_epi64(low, 32));                       \
        __m##W##i hundreds =                                                                       \
            _mm##W##_srli_epi16(_mm##W##_mulhi_epu16(x, TEXT_K##W(s, by_100)), 3);                 \
        __m##W##i rest =                                                                           \
            _mm##W##_sub_epi16(x, _mm##W##_mullo_epi16(hundreds, TEXT_K##W(s, hundred)));          \
        __m##W##i pairs = _mm##W##_or_si##W(hundreds, _mm##W##_slli_epi32(rest, 16));              \
        __m##W##i tens = _mm##W##_mulhi_epu16(pairs, TEXT_K##W(s, by_10));                         \
        __m##W##i ones = _mm##W##_sub_epi16(pairs, _mm##W##_mullo_epi16(tens, TEXT_K##W(s, ten))); \
        return _mm##W##_or_si##W(tens, _mm##W##_slli_epi16(ones, 8));                              \
    }

/* text_digits8x2 on four lanes (AVX2), and on eight (AVX-512BW: eight
 * numbers for the instructions four take). */
TEXT_DIGITS8_WIDE(text_digits8x4, TEXT_AVX2, 256)
TEXT_DIGITS8_WIDE(text_digits8x8, TEXT_AVX512BW, 512)

/* A mask of the zero digits of text_digits8x2's result: bit i for byte i. */
static inline unsigned text_zero_digits(__m128i digits)
{
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(digits, _mm_setzero_si128()));
}

#endif

#endif
