/*
 * The counts' vector ways' constants, and their two fastest ways (four
 * counts at a time, then the pair by AVX2; eight by one byte compression,
 * then the pair by IFMA) as inline functions over them: text_columns.c's
 * ways are made of them, and so are the report's AVX2 and IFMA row
 * entries, which have the whole row's values inline (docs/benchmarks-history.md,
 * rounds eighteen and nineteen). Internal to libtally.
 */
#ifndef TALLY_TEXT_COUNTS_H
#define TALLY_TEXT_COUNTS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "text_pair.h"
#include "text_vector.h"

#ifdef TEXT_VECTOR

/*
 * The vector ways write a number's ',' and digits as the 8 bytes of one
 * 64-bit lane, which hold a number below 10^7. A run is checked once, by
 * an OR of its numbers taken as they are written: if one is 2^23 or more,
 * the run is written again from its start by a way that checks each group
 * (what the unchecked way writes for such numbers stays within
 * TEXT_CSV_COUNTS_MAX). A report's counts are mostly far below 2^23.
 */
#define TEXT_FAST_BITS 23

/*
 * The constants of the vector ways, the same in each 64-bit lane, 256 bits
 * wide (the SSE2 way reads the first 128). Read through a pointer the
 * compiler cannot see through (text_lane_constants), so that each is a
 * memory operand of the instruction that uses it: left to itself, a
 * compiler rebuilds several from general registers in every group.
 */
struct lane_constants {
    struct text_digit_splits splits; /* text_digits8x2's reciprocals and divisors */
    /* the digit count's: the last digit's byte marked; 8 per byte */
    _Alignas(32) uint64_t last_digit[4];
    _Alignas(32) uint64_t eight[4];
    /* 8 in the first byte: the ',' in the count (see put_two) */
    _Alignas(32) uint64_t comma_first[4];
    /* ',' then '0's; 64 */
    _Alignas(64) uint64_t ascii[8];
    _Alignas(32) uint64_t sixty_four[4];
    /* the bits of a number too large for one 8-byte store (TEXT_FAST_BITS) */
    _Alignas(64) uint64_t slow[8];
    /* the last n lanes of four, by n (put_four's live lanes of a run's
     * last four, whose first were written) */
    _Alignas(32) uint64_t last_lanes[4][4];
    /* text_kept_bytes' digit counts (see there): by a number's leading
     * zero bits, the digits of the least number of its bit length; 10^g by
     * g; the kept bytes of a lane of d digits by d */
    _Alignas(64) uint8_t least_digits[64];
    _Alignas(64) uint64_t ten_to[8];
    _Alignas(64) uint64_t kept_bytes[8];
};

/* The constants' one object (text_columns.c). */
extern const struct lane_constants text_lanes;

static inline const struct lane_constants *text_lane_constants(void)
{
    const struct lane_constants *c = &text_lanes;
    __asm__("" : "+r"(c));
    return c;
}

/* --- four at a time: AVX2 ---------------------------------------------------------- */

/* The high 8 bytes of x at p (any alignment: MOVHPD's intrinsic takes a
 * double pointer, which p is not). */
TEXT_AVX2 static inline void text_put_high(char *p, __m128i x)
{
    uint64_t high = (uint64_t)_mm_extract_epi64(x, 1);
    memcpy(p, &high, 8);
}

/*
 * v's four numbers, each below 10^7, as put_two writes two, but the
 * per-lane shift done in the register (VPSRLVQ, a count per lane) with the
 * ASCII: left per number, one 8-byte store. Each lane's place is the count
 * of the ',' and digit bytes of the lanes before it, from one mask of them
 * (PMOVMSKB, POPCNT): read back from memory instead, as put_two does, the
 * rows ran 11 % slower on an AMD Zen 3, whose loads wait to be forwarded
 * from a 256-bit store (docs/benchmarks-history.md, round nineteen). Only the lanes
 * of `live` (all ones in a lane) count: the others add 0 bytes, so that a
 * lane stored before a live one is written over by it, and one after the
 * last lands past the end (TEXT_CSV_COUNTS_MAX leaves room for it). All four
 * stores a group, branch-free, cost a short group less than a loop.
 */
TEXT_AVX2 static inline __attribute__((always_inline)) char *
text_put_four(char *p, __m256i v, __m256i live, const struct lane_constants *c, __m256i sixty_four)
{
    __m256i digits = text_digits8x4(v, &c->splits);

    __m256i marked = _mm256_or_si256(digits, TEXT_K256(c, last_digit));
    __m256i from = _mm256_or_si256(marked, _mm256_sub_epi64(_mm256_setzero_si256(), marked));
    __m256i eights =
        _mm256_sad_epu8(_mm256_and_si256(from, TEXT_K256(c, eight)), TEXT_K256(c, comma_first));
    __m256i text = _mm256_add_epi8(_mm256_srlv_epi64(digits, _mm256_sub_epi64(sixty_four, eights)),
                                   TEXT_K256(c, ascii));

    /* a bit per ',' and digit byte of a live lane: bit 3 of a byte of
     * `from` marks a digit, comma_first's 8 the ',' */
    __m256i kept = _mm256_and_si256(_mm256_or_si256(from, TEXT_K256(c, comma_first)), live);
    uint32_t bytes = (uint32_t)_mm256_movemask_epi8(_mm256_slli_epi16(kept, 4));
    unsigned at1 = (unsigned)__builtin_popcount(bytes & 0xffu);
    unsigned at2 = (unsigned)__builtin_popcount(bytes & 0xffffu);
    unsigned at3 = (unsigned)__builtin_popcount(bytes & 0xffffffu);
    __m128i low_two = _mm256_castsi256_si128(text);
    __m128i high_two = _mm256_extracti128_si256(text, 1);
    _mm_storel_epi64((__m128i *)p, low_two);
    text_put_high(p + at1, low_two);
    _mm_storel_epi64((__m128i *)(p + at2), high_two);
    text_put_high(p + at3, high_two);
    return p + __builtin_popcount(bytes);
}

/* The lanes 0 to n - 1 of four (n below 4), for masked loads and stores. */
TEXT_AVX2 static inline __m256i text_few_lanes(uint32_t n)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
}

/* Four at a time (text_put_four); a last group of fewer is the run's last
 * four, of which the first were written, or a masked load where the run
 * has four or fewer. *slow: as text_counts_compressed_run's. */
TEXT_AVX2 static inline __attribute__((always_inline)) char *
text_counts_quads_run(char *p, const uint64_t *restrict values, uint32_t n, uint64_t *restrict keep,
                      bool *slow)
{
    const struct lane_constants *c = text_lane_constants();
    __m256i sixty_four = TEXT_K256(c, sixty_four);
    __m256i any = _mm256_setzero_si256();
    const uint64_t *v = values, *fours_end = values + (n & ~3u);
    const __m256i all = _mm256_set1_epi64x(-1);
    for (; v < fours_end; v += 4) {
        __m256i four = _mm256_loadu_si256((const __m256i *)v);
        _mm256_storeu_si256((__m256i *)(keep + (v - values)), four);
        any = _mm256_or_si256(any, four);
        p = text_put_four(p, four, all, c, sixty_four);
    }
    uint32_t left = n & 3;
    if (left && n > 4) {
        __m256i four = _mm256_loadu_si256((const __m256i *)(v + left - 4));
        _mm256_storeu_si256((__m256i *)(keep + n - 4), four);
        any = _mm256_or_si256(any, four);
        p = text_put_four(p, four, TEXT_K256(c, last_lanes[left]), c, sixty_four);
    } else if (left) {
        __m256i live = text_few_lanes(left);
        __m256i few = _mm256_maskload_epi64((const long long *)v, live);
        _mm256_maskstore_epi64((long long *)(keep + (v - values)), live, few);
        any = _mm256_or_si256(any, few);
        p = text_put_four(p, few, live, c, sixty_four);
    }
    *slow = !_mm256_testz_si256(any, TEXT_K256(c, slow));
    return p;
}

/* --- eight at a time by compression: AVX-512F, BW and VBMI2 ---------------------- */

/* For the functions of the compressed counts (their callers check
 * text_csv_counts_compressed or text_cpu_has_ifma, which asks for more). */
#define TEXT_COMPRESSED                                                                            \
    __attribute__((target("avx2,avx512f,avx512bw,avx512cd,avx512vbmi,avx512vbmi2,popcnt")))

/*
 * The bytes of v's lanes to keep, 8 bits a lane (each below 10^7): the
 * ',' and the digits from the first that is not 0. A lane of d digits
 * keeps its last d bytes. d is g or g + 1, where g is the digits of the
 * least number of the value's bit length (by its leading zeros, VPLZCNTQ,
 * and a table, VPERMB), and g + 1 where the value reaches 10^g (VPERMQ of
 * a table, one compare). From the values, not the digits: the row's later
 * columns wait for these lengths, and the digits are about 40 cycles
 * deeper. Rows ran about 2 % faster so, here and on the H100's host
 * (docs/benchmarks-history.md, round sixteen).
 */
TEXT_COMPRESSED static inline __attribute__((always_inline)) __mmask64
text_kept_bytes(__m512i v, const struct lane_constants *c)
{
    /* v | 1: 0 has the digits of 1 */
    __m512i zeros = _mm512_lzcnt_epi64(_mm512_or_si512(v, _mm512_set1_epi64(1)));
    __m512i least =
        _mm512_maskz_permutexvar_epi8(0x0101010101010101ull, zeros, TEXT_K512(c, least_digits));
    __mmask8 more =
        _mm512_cmpge_epu64_mask(v, _mm512_permutexvar_epi64(least, TEXT_K512(c, ten_to)));
    __m512i digits = _mm512_mask_add_epi64(least, more, least, _mm512_set1_epi64(1));
    __m512i kept = _mm512_permutexvar_epi64(digits, TEXT_K512(c, kept_bytes));
    return _mm512_test_epi8_mask(kept, kept) | 0x0101010101010101ull;
}

/*
 * v's eight numbers, each below 10^7, of which the last `dead` are 0s that
 * are not written, with no store per number: each lane's 8 digits
 * (text_digits8x8; the first a leading 0 below 10^7) become ',' and 7 ASCII
 * digits, and one byte compression (VPCOMPRESSB) keeps each lane's ',' and
 * its digits from the first that is not 0 (text_kept_bytes), packing the
 * eight texts side by side for one 64-byte store. A dead lane's ",0" lies
 * past the live ones' text, which the returned end leaves out: no mask of
 * the live lanes' bytes.
 * Eight a group, not four: a report of 15 counters' 13 counts are two
 * groups (8 + 5) where four a group took three and a number alone: 115
 * instructions where they took 211. In slices paired in time, rows ran
 * about 5 % faster on the H100's host and here (docs/benchmarks-history.md, round
 * sixteen). The digits by the splits rather than IFMA: the splits serve
 * eight numbers with each instruction, IFMA one digit of eight; with IFMA
 * rows were 7 % slower here.
 */
TEXT_COMPRESSED static inline __attribute__((always_inline)) char *
text_put_eight_compressed(char *p, __m512i v, uint32_t dead, const struct lane_constants *c)
{
    __m512i digits = text_digits8x8(v, &c->splits);
    __mmask64 kept = text_kept_bytes(v, c);
    /* compressed into a register and stored whole: the form that
     * compresses straight to memory is far slower on some processors
     * (AMD's Zen 4) */
    __m512i text = _mm512_maskz_compress_epi8(kept, _mm512_add_epi8(digits, TEXT_K512(c, ascii)));
    _mm512_storeu_si512((void *)p, text);
    return p + __builtin_popcountll(kept) - 2 * dead;
}

/* The last group of a run, one to eight (left) at v, by a masked load. */
TEXT_COMPRESSED static inline __attribute__((always_inline)) char *
text_put_last_compressed(char *p, const uint64_t *v, uint32_t left, uint64_t *keep, __m512i *any,
                         const struct lane_constants *c)
{
    __mmask8 live = (__mmask8)((1u << left) - 1);
    __m512i few = _mm512_maskz_loadu_epi64(live, v);
    _mm512_mask_storeu_epi64(keep, live, few);
    *any = _mm512_or_si512(*any, few);
    return text_put_eight_compressed(p, few, 8 - left, c);
}

/* Eight at a time by compression (text_put_eight_compressed); a last group
 * of one to eight is a masked load. *slow: whether the run holds a number
 * the compression does not take (TEXT_FAST_BITS), checked once, and then
 * the text is not whole. A run of 9 to 16 (a report of 15 counters has 13
 * counts) takes no loop. */
TEXT_COMPRESSED static inline __attribute__((always_inline)) char *
text_counts_compressed_run(char *p, const uint64_t *restrict values, uint32_t n,
                           uint64_t *restrict keep, bool *slow)
{
    const struct lane_constants *c = text_lane_constants();
    __m512i any = _mm512_setzero_si512();
    if (__builtin_expect(n - 9 < 8, 1)) {
        __m512i eight = _mm512_loadu_si512((const void *)values);
        _mm512_storeu_si512((void *)keep, eight);
        any = eight;
        p = text_put_eight_compressed(p, eight, 0, c);
        p = text_put_last_compressed(p, values + 8, n - 8, keep + 8, &any, c);
    } else if (n) {
        uint32_t i = 0;
        for (; n - i > 8; i += 8) {
            __m512i eight = _mm512_loadu_si512((const void *)(values + i));
            _mm512_storeu_si512((void *)(keep + i), eight);
            any = _mm512_or_si512(any, eight);
            p = text_put_eight_compressed(p, eight, 0, c);
        }
        p = text_put_last_compressed(p, values + i, n - i, keep + i, &any, c);
    }
    *slow = _mm512_test_epi64_mask(any, TEXT_K512(c, slow)) != 0;
    return p;
}

/* The counts then the pair where the run holds a larger number: the counts
 * again, group by group, then the pair one value at a time (the same
 * bytes; rare, and out of line). */
char *text_counts_then_pair_checked(char *p, const uint64_t *values, uint32_t n);

/*
 * n counts four at a time, then the pair after them by AVX2, as
 * text_counts_then_pair_ifma (below) writes them: the row entry for
 * processors with AVX2 but not what TEXT_IFMA asks for has it inline.
 */
TEXT_AVX2 static inline __attribute__((always_inline)) char *
text_counts_then_pair_avx2(char *p, const uint64_t *restrict values, uint32_t n,
                           uint64_t *restrict keep)
{
    keep[n] = values[n];
    keep[n + 1] = values[n + 1];
    bool slow;
    char *end = text_counts_quads_run(p, values, n, keep, &slow);
    if (__builtin_expect(slow, 0))
        return text_counts_then_pair_checked(p, values, n);
    double a, b;
    memcpy(&a, &values[n], sizeof a);
    memcpy(&b, &values[n + 1], sizeof b);
    return text_pair_avx2(end, a, b);
}

/*
 * n counts by compression, then the pair after them (values[n] and
 * values[n + 1], as doubles) by IFMA, all kept, as a text_counts_pair_fn
 * writes them (text_columns.h): no call between the counts and the pair,
 * whose start (its scale, its digits' split) is free to overlap the
 * counts. For callers whose processor has what TEXT_IFMA asks for.
 */
TEXT_IFMA static inline __attribute__((always_inline)) char *
text_counts_then_pair_ifma(char *p, const uint64_t *restrict values, uint32_t n,
                           uint64_t *restrict keep)
{
    keep[n] = values[n];
    keep[n + 1] = values[n + 1];
    bool slow;
    char *end = text_counts_compressed_run(p, values, n, keep, &slow);
    if (slow)
        return text_counts_then_pair_checked(p, values, n);
    double a, b;
    memcpy(&a, &values[n], sizeof a);
    memcpy(&b, &values[n + 1], sizeof b);
    return text_pair_ifma(end, a, b);
}

#endif

#endif
