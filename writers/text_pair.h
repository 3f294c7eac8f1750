/*
 * The fast way of a report's doubles (text_f64 and the pair's ways, see
 * text_format.h) as inline functions over one table: text_format.c's ways
 * are made of them, and so is the counts then the pair in one function
 * (text_columns.c), which has the pair inline after the counts. Internal
 * to libtally.
 */
#ifndef TALLY_TEXT_PAIR_H
#define TALLY_TEXT_PAIR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "text_vector.h"

/*
 * The fast path: the doubles "%.17g" writes in fixed notation, in whole
 * binades: 2^-13 <= v < 2^56, inside [10^-4, 10^17) (ratios, rates, times).
 * v = m x 2^(b-1075), m the 53-bit significand, b the biased exponent. Its
 * decade d (10^d <= v < 10^(d+1)) is the binade's lower decade or the next,
 * told by one comparison, and its 17 digits are v x 10^(16-d) rounded half
 * to even. With m' = m << 11 (the significand in a register's top bits) and
 *     c = 10^(16-d) x 2^(b-1022),
 * m' x c = v x 10^(16-d) x 2^64 exactly: the product's high word is the
 * digits, its low word the fraction that rounds them. No shift and no
 * division. c is an integer below 2 x 10^17 (10^(16-d) holds the factor
 * 2^(1022-b) wherever b < 1022, as 16-d >= 17 > 1022-b there); each binade
 * holds c and d of both its decades, and the power of ten between them.
 */
#define FAST_FIRST 1010 /* 2^-13, 1.2e-4: "%g" writes fixed from 10^-4 up */
#define FAST_BINADES 69 /* to 2^56, 7.2e16: "%.17g" writes fixed below 10^17 */

/*
 * The fast path's tables, in one object: one base register reaches every
 * entry by a displacement and a scaled index.
 *  - By binade i: upper[i] = 10^(its lower decade + 1), which v reaches
 *    in the upper decade, compared as bits (positive doubles order as
 *    their bits do).
 *  - By decade entry j = 2i (the binade's upper decade) or 2i + 1 (its
 *    lower): the scale c, d, and 16 - d (where the point's windows start).
 *  - The windows for the point (vector ways): the 16 bytes from window[j]
 *    hold, in `keep`, 0x7f in the d bytes before the point, and in `dot` '.'
 *    in byte d; nothing in either for d < 0 (16 - d up to 20), and no '.'
 *    for d = 16. 0x7f keeps an ASCII digit whole, and no digit value (0 to
 *    9) is above it.
 *  - The constants of the pair's AVX2 way, in every 64-bit lane: read as
 *    memory operands (see text_pair_avx2).
 */
struct fast_tables {
#ifdef TEXT_VECTOR
    _Alignas(64) uint8_t keep[48];
    char dot[48];
    _Alignas(32) uint64_t by_1e8[4]; /* 2^58 / 10^8, rounded down */
    _Alignas(32) uint64_t e8[4];
    _Alignas(32) uint64_t e8_less_1[4];
    _Alignas(32) uint64_t by_1e8_below_1e9[4];
    struct text_digit_splits splits;
    _Alignas(32) uint64_t zeros[4];
    _Alignas(32) uint64_t comma_zero[4];
    _Alignas(32) uint8_t first_to_1[32];
    struct text_ifma_digits ifma; /* the pair's IFMA way's */
#endif
    union { /* upper[i], read as its bits */
        double upper[FAST_BINADES];
        uint64_t upper_bits[FAST_BINADES];
    };
    uint64_t scale[2 * FAST_BINADES];
    int8_t point[2 * FAST_BINADES];   /* d */
    uint8_t window[2 * FAST_BINADES]; /* 16 - d */
};

/* The tables' one object (text_format.c). */
extern const struct fast_tables text_fast;

/* The decade entry of v (bits: its bits) in the fast path's binade
 * `binade`: one comparison of integers. t: the tables (&text_fast, or a pointer
 * to them the compiler cannot see through). */
static inline __attribute__((always_inline)) size_t fast_entry(const struct fast_tables *t,
                                                               uint64_t bits, uint64_t binade)
{
    return 2 * binade + (bits < t->upper_bits[binade]);
}

/*
 * The 17 digits of v (bits: its bits) with the scale of its decade entry,
 * rounded half to even: up when the low word (the product is exact) is over
 * a half, or a half and the digits are odd; that is, when the low word with
 * the digits' last bit put in its bit 0 is over a half (bit 0 lifts a half
 * over it, and nothing below a half up to it).
 * The rounding carries into no 18th digit: the double below 10^k is
 * 10^k - 2^-54 x 10^k or less for 10^0 to 10^16 (exact doubles), and
 * 0.099999999999999992, 0.0099999999999999985, 0.00099999999999999980
 * for 10^-1 to 10^-3; 10^17 is past 2^56.
 */
static inline __attribute__((always_inline)) uint64_t fast_digits(uint64_t bits, uint64_t scale)
{
    unsigned __int128 product = (unsigned __int128)(bits << 11 | 1ull << 63) * scale;
    uint64_t digits = (uint64_t)(product >> 64), low = (uint64_t)product;
    return digits + ((low | (digits & 1)) > 1ull << 63);
}

/* The pair when either value leaves the pair's fast way: one at a time. */
char *text_pair_apart(char *p, double a, double b);

#ifdef TEXT_VECTOR
/* The index of the highest set bit of x != 0, as a size_t: one BSR (the
 * builtins give an int, which compilers at times extend with a further
 * instruction). */
static inline size_t highest_bit(uint64_t x)
{
    uint64_t bit;
    __asm__("bsr %1, %0" : "=r"(bit) : "rm"(x) : "cc");
    return bit;
}

/* The bits of a pair's doubles, and their binades counted from FAST_FIRST
 * (a negative value's sign bit puts it past every fast way's range). */
static inline void pair_binades(double a, double b, uint64_t *bits_a, uint64_t *bits_b,
                                uint64_t *binade_a, uint64_t *binade_b)
{
    memcpy(bits_a, &a, sizeof *bits_a);
    memcpy(bits_b, &b, sizeof *bits_b);
    *binade_a = (*bits_a >> 52) - FAST_FIRST;
    *binade_b = (*bits_b >> 52) - FAST_FIRST;
}

/* The pair's AVX2 way takes binades up to 2^43 (d <= 12): see text_pair_avx2. */
#define PAIR_BINADES (1066 - FAST_FIRST)

/* One value of the pair below 1 (d < 0): ",0.", zeros, its first digit
 * (byte 1 of head) and rest; fraction as put_fixed's. */
TEXT_AVX2 static inline __attribute__((always_inline)) char *
put_below_one(char *p, __m128i head, __m128i rest, uint64_t fraction, ptrdiff_t d)
{
    memcpy(p, ",0.00000", 8);
    p += 1 - d; /* the first digit at p + 1 */
    p[1] = (char)_mm_extract_epi8(head, 1);
    _mm_storeu_si128((__m128i *)(p + 2), rest);
    return p + 1 + highest_bit(fraction << 2 | 2);
}

/* One value of the pair from 1 up (d >= 0): rest stored 3 bytes in, head
 * over it; its end from fraction as put_fixed's. */
TEXT_AVX2 static inline __attribute__((always_inline)) char *
put_from_one(char *p, __m128i head, __m128i rest, uint64_t fraction, ptrdiff_t d)
{
    _mm_storeu_si128((__m128i *)(p + 3), rest);
    _mm_storeu_si128((__m128i *)p, head);
    return p + 2 + highest_bit(fraction << 2 | 1ull << d);
}

/*
 * The text of a pair from its digits: in `rest`, the 16 digits after each
 * value's first as byte values 0-9, a's in the low 128-bit lane, b's in the
 * high; in `first_at_1`, each first digit in byte 1 of its lane; keep, dot
 * and the points as the values' decade entries give them. Per value, a
 * 16-byte `head` holds ',', the first digit and the text up to its 14th
 * byte, stored over the 16 bytes of rest stored 3 bytes in, whose last
 * bytes are the text's last (the digits after the point, as they are for
 * d <= 13).
 */
TEXT_AVX2 static inline __attribute__((always_inline)) char *
put_pair_text(char *p, const struct fast_tables *t, __m256i rest, __m256i first_at_1, __m256i keep,
              __m256i dot, ptrdiff_t da, ptrdiff_t db)
{
    /* bit i (16 + i for b): rest[i] is a digit after the point and not 0 */
    __m256i fraction = _mm256_cmpgt_epi8(rest, keep);
    uint64_t fraction_a = (unsigned)_mm_movemask_epi8(_mm256_castsi256_si128(fraction));
    uint64_t fraction_b = (unsigned)_mm256_movemask_epi8(fraction) >> 16;
    rest = _mm256_add_epi8(rest, TEXT_K256(t, zeros));
    /* byte i: rest[i] before the point (i < d), '.' at d, rest[i - 1] after */
    __m256i after = _mm256_slli_si256(_mm256_andnot_si256(keep, rest), 1);
    __m256i text = _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(rest, keep), after), dot);
    /* ',', the first digit, the text */
    __m256i head = _mm256_or_si256(_mm256_slli_si256(text, 2),
                                   _mm256_or_si256(first_at_1, TEXT_K256(t, comma_zero)));
    __m128i head_a = _mm256_castsi256_si128(head), rest_a = _mm256_castsi256_si128(rest);
    if (__builtin_expect((da | db) < 0, 0)) {
        p = da < 0 ? put_below_one(p, head_a, rest_a, fraction_a, da)
                   : put_from_one(p, head_a, rest_a, fraction_a, da);
        __m128i head_b = _mm256_extracti128_si256(head, 1);
        __m128i rest_b = _mm256_extracti128_si256(rest, 1);
        return db < 0 ? put_below_one(p, head_b, rest_b, fraction_b, db)
                      : put_from_one(p, head_b, rest_b, fraction_b, db);
    }
    /* the first digit at p + 1, rest[i] after the point at p + 3 + i */
    p = put_from_one(p, head_a, rest_a, fraction_a, da);
    return put_from_one(p, _mm256_extracti128_si256(head, 1), _mm256_extracti128_si256(rest, 1),
                        fraction_b, db);
}

/* A pair's bits, the decade entries of its values and the windows of its
 * points (a's in the low 128-bit lane, b's in the high). */
struct pair_entries {
    uint64_t bits_a, bits_b;
    size_t ja, jb;
    __m256i keep, dot;
};

/* The AVX2 ways' start: false when either value leaves their range (the
 * caller then writes the pair apart). */
TEXT_AVX2 static inline __attribute__((always_inline)) bool
pair_entries(const struct fast_tables *t, double a, double b, struct pair_entries *e)
{
    uint64_t binade_a, binade_b;
    pair_binades(a, b, &e->bits_a, &e->bits_b, &binade_a, &binade_b);
    if (binade_a >= PAIR_BINADES || binade_b >= PAIR_BINADES)
        return false;
    e->ja = fast_entry(t, e->bits_a, binade_a);
    e->jb = fast_entry(t, e->bits_b, binade_b);
    e->keep = _mm256_loadu2_m128i((const __m128i *)(t->keep + t->window[e->jb]),
                                  (const __m128i *)(t->keep + t->window[e->ja]));
    e->dot = _mm256_loadu2_m128i((const __m128i *)(t->dot + t->window[e->jb]),
                                 (const __m128i *)(t->dot + t->window[e->ja]));
    return true;
}

/*
 * The 17 digits of two values from digits = [a, a, b, b] (64-bit lanes):
 * in `first`, the first digit of each in its 64-bit lanes' low bytes (a's
 * in bytes 0 and 8, b's in 16 and 24); in `rest`, the 16 after them as
 * byte values 0-9, a's in the low 128-bit lane, b's in the high.
 *  - Each value's digits split 9 + 8 by 10^8: x / 10^8 is (x >> 26) x
 *    (2^58 / 10^8, rounded down) >> 32, or one more (x < 2^57: the
 *    remainder tells); then the 9 split 1 + 8 (x * 720575941 >> 56 is
 *    x / 10^8 for x < 1.16 x 10^9).
 *  - The four numbers below 10^8 by text_digits8x2's splits (see
 *    text_vector.h), each instruction serving both values.
 */
struct pair_digits {
    __m256i first, rest;
};

TEXT_AVX2 static inline __attribute__((always_inline)) struct pair_digits
pair_digits(__m256i digits, const struct fast_tables *t)
{
    __m256i e8 = TEXT_K256(t, e8);
    __m256i high9 = _mm256_srli_epi64(
        _mm256_mul_epu32(_mm256_srli_epi64(digits, 26), TEXT_K256(t, by_1e8)), 32);
    __m256i low8 = _mm256_sub_epi64(digits, _mm256_mul_epu32(high9, e8));
    __m256i over = _mm256_cmpgt_epi64(low8, TEXT_K256(t, e8_less_1));
    low8 = _mm256_sub_epi64(low8, _mm256_and_si256(over, e8));
    high9 = _mm256_sub_epi64(high9, over);
    __m256i first = _mm256_srli_epi64(_mm256_mul_epu32(high9, TEXT_K256(t, by_1e8_below_1e9)), 56);
    __m256i middle8 = _mm256_sub_epi64(high9, _mm256_mul_epu32(first, e8));
    /* the middle 8 in lanes 0 and 2, the low 8 in lanes 1 and 3 */
    __m256i v = _mm256_blend_epi32(middle8, low8, 0xcc);
    return (struct pair_digits){first, text_digits8x4(v, &t->splits)};
}

/*
 * The pair by AVX2: both values in each vector instruction, from the
 * digits to the text; the scalar work (the binade, the decade, the 128-bit
 * product) one value after the other.
 */
TEXT_AVX2 static inline __attribute__((always_inline)) char *text_pair_avx2(char *p, double a,
                                                                            double b)
{
    const struct fast_tables *t = &text_fast;
    __asm__("" : "+r"(t)); /* the constants as memory operands: see text_fast */
    struct pair_entries e;
    if (!pair_entries(t, a, b, &e))
        return text_pair_apart(p, a, b);
    __m128i digits_a = _mm_cvtsi64_si128((long long)fast_digits(e.bits_a, t->scale[e.ja]));
    /* a's product before b's: both at once take more registers than there
     * are (the processor still overlaps them) */
    __asm__("" : "+x"(digits_a), "+r"(e.bits_b));
    __m128i digits_b = _mm_cvtsi64_si128((long long)fast_digits(e.bits_b, t->scale[e.jb]));
    __m256i digits = _mm256_permute4x64_epi64(
        _mm256_castsi128_si256(_mm_unpacklo_epi64(digits_a, digits_b)), 0x50);
    struct pair_digits both = pair_digits(digits, t);
    __m256i first_at_1 = _mm256_shuffle_epi8(both.first, TEXT_K256(t, first_to_1));
    return put_pair_text(p, t, both.rest, first_at_1, e.keep, e.dot, t->point[e.ja],
                         t->point[e.jb]);
}

/*
 * The pair by IFMA (see text_format.c's pair_ifma, which is this): both
 * values' 17 digits split 1 + 8 + 8 by scalar multiplications, each 8 made
 * by text_digits8x2_ifma, two multiplications deep.
 */
TEXT_IFMA static inline __attribute__((always_inline)) char *text_pair_ifma(char *p, double a,
                                                                            double b)
{
    const struct fast_tables *t = &text_fast;
    __asm__("" : "+r"(t)); /* the constants as memory operands: see text_fast */
    struct pair_entries e;
    if (!pair_entries(t, a, b, &e))
        return text_pair_apart(p, a, b);
    uint64_t digits_a = fast_digits(e.bits_a, t->scale[e.ja]);
    uint64_t digits_b = fast_digits(e.bits_b, t->scale[e.jb]);
    /* x * 720575941 >> 56 is x / 10^8 for x < 1.16 x 10^9 (as put_fixed) */
    uint64_t high_a = digits_a / 100000000u, high_b = digits_b / 100000000u;
    uint64_t first_a = high_a * 720575941u >> 56, first_b = high_b * 720575941u >> 56;
    __m128i rest_a = text_digits8x2_ifma(high_a - first_a * 100000000u,
                                         digits_a - high_a * 100000000u, &t->ifma);
    __m128i rest_b = text_digits8x2_ifma(high_b - first_b * 100000000u,
                                         digits_b - high_b * 100000000u, &t->ifma);
    __m256i first_at_1 = _mm256_set_m128i(_mm_cvtsi64_si128((long long)(first_b << 8)),
                                          _mm_cvtsi64_si128((long long)(first_a << 8)));
    return put_pair_text(p, t, _mm256_set_m128i(rest_b, rest_a), first_at_1, e.keep, e.dot,
                         t->point[e.ja], t->point[e.jb]);
}
#endif

#endif
