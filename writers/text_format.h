/*
 * Numbers and strings as report text, written into a caller's buffer without
 * stdio: the per-command report writes tens of millions of them. Each writes
 * at p and returns the end of what it wrote (no NUL). Internal to libtally.
 */
#ifndef TALLY_TEXT_FORMAT_H
#define TALLY_TEXT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* floor(e log10 2) for an integer e (the decimal exponent of 2^e), as a
 * constant expression: 78913 / 2^18 is log10 2 closely enough for |e| up
 * to thousands. */
#define TEXT_LOG10_POW2(e) ((e) >= 0 ? (e)*78913 / 262144 : -((-(e)*78913 + 262143) / 262144))

/* Bytes to leave for one text_u64, text_i64 or text_f64: the longest text
 * is 24 bytes, and the stores of whole registers may write past its end
 * (text_f64 up to 34 bytes from where it starts). */
#define TEXT_NUMBER_MAX 40

/* Decimal, as "%" PRIu64 and "%" PRId64 write it. Inline: a report row is
 * mostly integers. */
static inline __attribute__((always_inline)) char *text_u64(char *p, uint64_t v);
char *text_i64(char *p, int64_t v);

/* As report_format_f64 writes it: "%.17g" with a '.' decimal point, "nan",
 * "inf" or "-inf". Exact, by integer arithmetic, for magnitudes from 2^-13
 * (1.2e-4) to 2^128, fastest from 2^-13 to 2^56 (the ratios and rates
 * reports hold); through report_format_f64 otherwise. */
char *text_f64(char *p, double v);

/*
 * ",A,B": a and b as text_f64 writes them (the same bytes), each after a
 * comma, in one call: a report row's float columns come in pairs. Where
 * both are from 2^-13 to 2^43 (1.2e-4 to 8.8e12: ratios, rates) the two
 * are made in one pass: the 128-bit products one after the other, then
 * every vector instruction serving both (the split of the 17 digits, the
 * digits, the points, the lengths). Other values (0, negatives, NaN,
 * infinities, larger and smaller magnitudes) through text_f64, one at a
 * time. Writes at most TEXT_CSV_F64_PAIR_MAX bytes from p, counting what
 * the stores of whole registers write past the end it returns.
 *
 * text_csv_f64_pair_best gives the way for this processor, chosen once by
 * its caller: AVX-512 IFMA and VBMI where it has them (the digits by
 * 52-bit multiplications, two deep), else AVX2, else SSE2 (the x86-64
 * baseline; text_f64's way, twice in one call); elsewhere text_f64 twice.
 */
typedef char *(*text_f64_pair_fn)(char *p, double a, double b);
text_f64_pair_fn text_csv_f64_pair_best(void);
/* The way every processor of the architecture has: SSE2 on x86-64. */
text_f64_pair_fn text_csv_f64_pair_baseline(void);

/* The pair's text is at most 2 commas and 2 x 24 bytes; the second value,
 * through text_f64, may write up to TEXT_NUMBER_MAX from where it starts
 * (the AVX2 way writes at most 23 bytes from a value's comma). */
#define TEXT_CSV_F64_PAIR_MAX (2 + 24 + TEXT_NUMBER_MAX)

/* Each way of the pair, for tests that hold them to text_f64 and printf:
 * SSE2 (x86-64), AVX2 and IFMA; NULL where the processor lacks what it
 * needs. */
text_f64_pair_fn text_csv_f64_pair_sse2(void);
text_f64_pair_fn text_csv_f64_pair_avx2(void);
text_f64_pair_fn text_csv_f64_pair_ifma(void);

/* Most bytes text_csv_field and text_json_string write for n bytes of s. */
#define TEXT_CSV_MAX(n) (2 * (n) + 2)
#define TEXT_JSON_MAX(n) (6 * (n) + 2)

/* s as a CSV field: quoted per RFC 4180 when it holds a comma, quote, CR or
 * LF, quotes doubled. */
char *text_csv_field(char *p, const char *s, size_t n);

/* s as a JSON string, as report_put_json_string writes it. */
char *text_json_string(char *p, const char *s, size_t n);

/* --- inline integer formatting ---------------------------------------------------- */

/*
 * Eight digits at a time in one 64-bit register ("SWAR"): the number is split
 * into two 4-digit halves, each half into two pairs, each pair into two
 * digits, every split one multiplication by a reciprocal that is exact for
 * the range it serves, in lanes that cannot carry into each other. No table,
 * no loop and no branch on the number's length: a report row is mostly
 * integers of every length, and a branch per length mispredicts.
 *
 * These write 8 bytes at a time, so they may write up to 7 bytes past the
 * end they return: callers leave TEXT_NUMBER_MAX bytes for a number.
 */

#include <string.h>

/* The 8 decimal digits of v < 10^8 as byte values 0-9, the most significant
 * in the lowest byte (the first in memory). */
static inline uint64_t text_digits8(uint32_t v)
{
    /* 4-digit halves in 32-bit lanes; x * 10486 >> 20 is x / 100 for x < 43699 */
    uint64_t x = (uint64_t)(v / 10000u) | (uint64_t)(v % 10000u) << 32;
    uint64_t hundreds = (x * 10486u) >> 20 & 0x0000007f0000007full;
    /* pairs in 16-bit lanes; y * 103 >> 10 is y / 10 for y < 179 */
    x = (x - hundreds * 100u) << 16 | hundreds;
    uint64_t tens = (x * 103u) >> 10 & 0x000f000f000f000full;
    return (x - tens * 10u) << 8 | tens;
}

#define TEXT_ASCII_ZEROS 0x3030303030303030ull

/* Exactly eight digits of v < 10^8. */
static inline void text_put_eight(char *p, uint32_t v)
{
    uint64_t d = text_digits8(v) + TEXT_ASCII_ZEROS;
    memcpy(p, &d, 8);
}

/* v < 10^8 without leading zeros, as the 8 bytes to store (the digits
 * first, then '0's); returns how many of them are its digits. */
static inline unsigned text_below_1e8(uint32_t v, uint64_t *text)
{
    uint64_t d = text_digits8(v);
    /* leading zero digits are the low zero bytes; the last digit always stays */
    unsigned skip = (unsigned)__builtin_ctzll(d | 1ull << 56) / 8;
    *text = (d >> (8 * skip)) + TEXT_ASCII_ZEROS;
    return 8 - skip;
}

/* v < 10^8 without leading zeros (at least one digit); writes 8 bytes. */
static inline char *text_put_below_1e8(char *p, uint32_t v)
{
    uint64_t text;
    unsigned length = text_below_1e8(v, &text);
    memcpy(p, &text, 8);
    return p + length;
}

static inline __attribute__((always_inline)) char *text_u64(char *p, uint64_t v)
{
    if (v < 100000000u)
        return text_put_below_1e8(p, (uint32_t)v);
    if (v < 10000000000000000u) {
        p = text_put_below_1e8(p, (uint32_t)(v / 100000000u));
        text_put_eight(p, (uint32_t)(v % 100000000u));
        return p + 8;
    }
    p = text_put_below_1e8(p, (uint32_t)(v / 10000000000000000u));
    text_put_eight(p, (uint32_t)(v / 100000000u % 100000000u));
    text_put_eight(p + 8, (uint32_t)(v % 100000000u));
    return p + 16;
}

#endif
