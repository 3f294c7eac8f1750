/* Owns a row's runs of unsigned columns as CSV text (see text_columns.h). */
#include "text_columns.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "text_format.h"
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

/*
 * The vector ways below write a number's ',' and digits as the 8 bytes of
 * one 64-bit lane, which hold a number below 10^7. A run is checked once,
 * by an OR of its numbers taken as they are written: if one is 2^23 or
 * more, the run is written again from its start by a way that checks each
 * group (what the unchecked way writes for such numbers stays within
 * TEXT_CSV_COUNTS_MAX). A report's counts are mostly far below 2^23.
 */
#define FAST_BITS 23

/*
 * The constants of the vector ways, the same in each 64-bit lane, 256 bits
 * wide (the SSE2 way reads the first 128). Read through a pointer the
 * compiler cannot see through (lane_constants), so that each is a memory
 * operand of the instruction that uses it: left to itself, a compiler
 * rebuilds several from general registers in every group.
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
    /* the bits of a number too large for one 8-byte store (FAST_BITS) */
    _Alignas(64) uint64_t slow[8];
    /* the last n lanes of four, by n (put_four's live lanes of a run's
     * last four, whose first were written) */
    _Alignas(32) uint64_t last_lanes[4][4];
    /* put_eight_compressed's digit counts (see there): by a number's
     * leading zero bits, the digits of the least number of its bit length;
     * 10^g by g; the kept bytes of a lane of d digits by d */
    _Alignas(64) uint8_t least_digits[64];
    _Alignas(64) uint64_t ten_to[8];
    _Alignas(64) uint64_t kept_bytes[8];
};

/* The digits of 2^(b - 1), the least number of bit length b = 64 - zeros:
 * floor((b - 1) log10 2) + 1. */
#define LEAST_DIGITS(zeros) (TEXT_LOG10_POW2(63 - (zeros)) + 1)
#define LEAST_DIGITS4(z)                                                                           \
    LEAST_DIGITS(z), LEAST_DIGITS((z) + 1), LEAST_DIGITS((z) + 2), LEAST_DIGITS((z) + 3)
#define LEAST_DIGITS16(z)                                                                          \
    LEAST_DIGITS4(z), LEAST_DIGITS4((z) + 4), LEAST_DIGITS4((z) + 8), LEAST_DIGITS4((z) + 12)

static const struct lane_constants lane_table = {
    .splits = TEXT_DIGIT_SPLITS,
    .last_digit = TEXT_EACH_64(1ull << 56),
    .eight = TEXT_EACH_64(8 * 0x0101010101010101ull),
    .comma_first = TEXT_EACH_64(8),
    .ascii = TEXT_EIGHT_64(0x303030303030302cull),
    .sixty_four = TEXT_EACH_64(64),
    .slow = TEXT_EIGHT_64(~0ull << FAST_BITS),
    .last_lanes = {{0}, {0, 0, 0, ~0ull}, {0, 0, ~0ull, ~0ull}, {0, ~0ull, ~0ull, ~0ull}},
    .least_digits = {LEAST_DIGITS16(0), LEAST_DIGITS16(16), LEAST_DIGITS16(32), LEAST_DIGITS16(48)},
    .ten_to = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000},
    /* d digits: the lane's last d bytes (its first, the ',', is added) */
    .kept_bytes = {0, ~0ull << 56, ~0ull << 48, ~0ull << 40, ~0ull << 32, ~0ull << 24, ~0ull << 16,
                   ~0ull << 8},
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

/* The high 8 bytes of x at p (any alignment: MOVHPD's intrinsic takes a
 * double pointer, which p is not). */
TEXT_AVX2 static inline void put_high(char *p, __m128i x)
{
    uint64_t high = (uint64_t)_mm_extract_epi64(x, 1);
    memcpy(p, &high, 8);
}

/*
 * v's four numbers, each below 10^7, as put_two writes two, but the
 * per-lane shift done in the register (VPSRLVQ, a count per lane) with the
 * ASCII: left per number, one 8-byte store and one addition. Only the lanes
 * of `live` (all ones in a lane) count: the others add 0 bytes, so that a
 * lane stored before a live one is written over by it, and one after the
 * last lands past the end (TEXT_CSV_COUNTS_MAX leaves room for it). All four
 * stores a group, branch-free, cost a short group less than a loop.
 */
TEXT_AVX2 static inline __attribute__((always_inline)) char *
put_four(char *p, __m256i v, __m256i live, const struct lane_constants *c, __m256i sixty_four)
{
    __m256i digits = text_digits8x4(v, &c->splits);

    __m256i marked = _mm256_or_si256(digits, TEXT_K256(c, last_digit));
    __m256i from = _mm256_or_si256(marked, _mm256_sub_epi64(_mm256_setzero_si256(), marked));
    __m256i eights =
        _mm256_sad_epu8(_mm256_and_si256(from, TEXT_K256(c, eight)), TEXT_K256(c, comma_first));
    __m256i text = _mm256_add_epi8(_mm256_srlv_epi64(digits, _mm256_sub_epi64(sixty_four, eights)),
                                   TEXT_K256(c, ascii));

    /* the texts stored from the register, the lengths read back from
     * memory by the additions that use them: the fewest instructions (an
     * AND with all lanes live is folded away) */
    uint64_t lengths[4];
    _mm256_storeu_si256((__m256i *)lengths, _mm256_and_si256(_mm256_srli_epi64(eights, 3), live));
    __asm__("" : "+m"(lengths));
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

/* The lanes 0 to n - 1 of four (n below 4), for masked loads and stores. */
TEXT_AVX2 static inline __m256i few_lanes(uint32_t n)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
}

/* Four at a time, each group checked: one holding a number of 2^23 or
 * more two at a time (pairs_checked). */
TEXT_AVX2 static __attribute__((noinline)) char *quads_checked(char *p, const uint64_t *values,
                                                               uint32_t n)
{
    const struct lane_constants *c = lane_constants();
    for (uint32_t i = 0; i < n; i += 4) {
        uint32_t lanes = n - i < 4 ? n - i : 4;
        __m256i live = lanes == 4 ? _mm256_set1_epi64x(-1) : few_lanes(lanes);
        __m256i v = _mm256_maskload_epi64((const long long *)(values + i), live);
        if (!_mm256_testz_si256(v, TEXT_K256(c, slow)))
            p = pairs_checked(p, values + i, lanes);
        else
            p = put_four(p, v, live, c, TEXT_K256(c, sixty_four));
    }
    return p;
}

/* Four at a time (put_four), the run checked once (FAST_BITS). */
TEXT_AVX2 static char *counts_quads(char *p, const uint64_t *restrict values, uint32_t n,
                                    uint64_t *restrict keep)
{
    const struct lane_constants *c = lane_constants();
    __m256i sixty_four = TEXT_K256(c, sixty_four);
    char *start = p;
    __m256i any = _mm256_setzero_si256();
    const uint64_t *v = values, *fours_end = values + (n & ~3u);
    const __m256i all = _mm256_set1_epi64x(-1);
    for (; v < fours_end; v += 4) {
        __m256i four = _mm256_loadu_si256((const __m256i *)v);
        _mm256_storeu_si256((__m256i *)(keep + (v - values)), four);
        any = _mm256_or_si256(any, four);
        p = put_four(p, four, all, c, sixty_four);
    }
    uint32_t left = n & 3;
    if (left && n > 4) { /* the last four, of which the first were written */
        __m256i four = _mm256_loadu_si256((const __m256i *)(v + left - 4));
        _mm256_storeu_si256((__m256i *)(keep + n - 4), four);
        any = _mm256_or_si256(any, four);
        p = put_four(p, four, TEXT_K256(c, last_lanes[left]), c, sixty_four);
    } else if (left) {
        __m256i live = few_lanes(left);
        __m256i few = _mm256_maskload_epi64((const long long *)v, live);
        _mm256_maskstore_epi64((long long *)(keep + (v - values)), live, few);
        any = _mm256_or_si256(any, few);
        p = put_four(p, few, live, c, sixty_four);
    }
    if (!_mm256_testz_si256(any, TEXT_K256(c, slow)))
        return quads_checked(start, values, n);
    return p;
}

/* --- eight at a time by compression: AVX-512F, BW and VBMI2 ---------------------- */

#define COMPRESSED                                                                                 \
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
 * (docs/benchmarks.md, round sixteen).
 */
COMPRESSED static inline __attribute__((always_inline)) __mmask64
kept_bytes(__m512i v, const struct lane_constants *c)
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
 * The lanes of v's eight numbers that live_bytes marks (8 bits a lane),
 * each below 10^7, with no store per number: each lane's 8 digits
 * (text_digits8x8; the first a leading 0 below 10^7) become ',' and 7 ASCII
 * digits, and one byte compression (VPCOMPRESSB) keeps each lane's ',' and
 * its digits from the first that is not 0 (kept_bytes), packing the eight
 * texts side by side for one 64-byte store.
 * Eight a group, not four: a report of 15 counters' 13 counts are two
 * groups (8 + 5) where four a group took three and a number alone: 115
 * instructions where they took 211. In slices paired in time, rows ran
 * about 5 % faster on the H100's host and here (docs/benchmarks.md, round
 * sixteen). The digits by the splits rather than IFMA: the splits serve
 * eight numbers with each instruction, IFMA one digit of eight; with IFMA
 * rows were 7 % slower here.
 */
COMPRESSED static inline __attribute__((always_inline)) char *
put_eight_compressed(char *p, __m512i v, __mmask64 live_bytes, const struct lane_constants *c)
{
    __m512i digits = text_digits8x8(v, &c->splits);
    __mmask64 kept = kept_bytes(v, c) & live_bytes;
    /* compressed into a register and stored whole: the form that
     * compresses straight to memory is far slower on some processors
     * (AMD's Zen 4) */
    __m512i text = _mm512_maskz_compress_epi8(kept, _mm512_add_epi8(digits, TEXT_K512(c, ascii)));
    _mm512_storeu_si512((void *)p, text);
    return p + __builtin_popcountll(kept);
}

/* Eight at a time by compression (put_eight_compressed); a last group of
 * one to seven is a masked load. *slow: whether the run holds a number
 * the compression does not take (FAST_BITS), checked once, and then the
 * text is not whole. */
COMPRESSED static inline __attribute__((always_inline)) char *
counts_compressed_run(char *p, const uint64_t *restrict values, uint32_t n, uint64_t *restrict keep,
                      bool *slow)
{
    const struct lane_constants *c = lane_constants();
    __m512i any = _mm512_setzero_si512();
    const uint64_t *v = values, *eights_end = values + (n & ~7u);
    for (; v < eights_end; v += 8) {
        __m512i eight = _mm512_loadu_si512((const void *)v);
        _mm512_storeu_si512((void *)(keep + (v - values)), eight);
        any = _mm512_or_si512(any, eight);
        p = put_eight_compressed(p, eight, ~0ull, c);
    }
    uint32_t left = n & 7;
    if (left) {
        __mmask8 live = (__mmask8)((1u << left) - 1);
        __m512i few = _mm512_maskz_loadu_epi64(live, v);
        _mm512_mask_storeu_epi64(keep + (v - values), live, few);
        any = _mm512_or_si512(any, few);
        p = put_eight_compressed(p, few, (1ull << 8 * left) - 1, c);
    }
    *slow = _mm512_test_epi64_mask(any, TEXT_K512(c, slow)) != 0;
    return p;
}

COMPRESSED static char *counts_compressed(char *p, const uint64_t *restrict values, uint32_t n,
                                          uint64_t *restrict keep)
{
    bool slow;
    char *end = counts_compressed_run(p, values, n, keep, &slow);
    return slow ? quads_checked(p, values, n) : end;
}

#define COMPRESSED_IFMA                                                                            \
    __attribute__((target("avx2,avx512f,avx512vl,avx512bw,avx512cd,avx512ifma,avx512vbmi,"         \
                          "avx512vbmi2,popcnt,prfchw")))

/* values[n] and values[n + 1], the pair after the counts, as doubles. */
static inline void pair_values(const uint64_t *values, uint32_t n, double *a, double *b)
{
    memcpy(a, &values[n], sizeof *a);
    memcpy(b, &values[n + 1], sizeof *b);
}

/* counts_then_pair_ifma's run that holds a larger number: the counts
 * again, group by group, then the pair one value at a time (the same
 * bytes; rare, and out of line). */
COMPRESSED_IFMA static __attribute__((noinline)) char *
counts_then_pair_checked(char *p, const uint64_t *values, uint32_t n)
{
    double a, b;
    pair_values(values, n, &a, &b);
    return text_pair_apart(quads_checked(p, values, n), a, b);
}

/* The counts by compression, then the pair by IFMA (text_counts_pair_fn),
 * in one function: no call between them, and the pair's start (its scale,
 * its digits' split) free to overlap the counts. In slices paired in time rows ran 1.3 to 2 %
 * faster on the H100's host so than with the pair reached by a jump to its own function
 * (docs/benchmarks.md, round seventeen). */
COMPRESSED_IFMA static char *counts_then_pair_ifma(char *p, const uint64_t *restrict values,
                                                   uint32_t n, uint64_t *restrict keep)
{
    keep[n] = values[n];
    keep[n + 1] = values[n + 1];
    bool slow;
    char *end = counts_compressed_run(p, values, n, keep, &slow);
    if (slow)
        return counts_then_pair_checked(p, values, n);
    double a, b;
    pair_values(values, n, &a, &b);
    return text_pair_ifma(end, a, b);
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
    return __builtin_cpu_supports("avx2") ? counts_quads : NULL;
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

text_counts_pair_fn text_csv_counts_pair_best(void)
{
#ifdef TEXT_VECTOR
    if (text_csv_counts_compressed() && text_csv_f64_pair_ifma())
        return counts_then_pair_ifma;
#endif
    return NULL;
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
