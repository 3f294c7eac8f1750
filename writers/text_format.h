/*
 * Numbers and strings as report text, written into a caller's buffer without
 * stdio: the per-command report writes tens of millions of them. Each writes
 * at p and returns the end of what it wrote (no NUL). Internal to libtally.
 */
#ifndef TALLY_TEXT_FORMAT_H
#define TALLY_TEXT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* Most bytes text_u64, text_i64 and text_f64 write. */
#define TEXT_NUMBER_MAX 32

/* Decimal, as "%" PRIu64 and "%" PRId64 write it. Inline: a report row is
 * mostly integers. */
static inline char *text_u64(char *p, uint64_t v);
char *text_i64(char *p, int64_t v);

/* As report_format_f64 writes it: "%.17g" with a '.' decimal point, "nan",
 * "inf" or "-inf". Exact, by integer arithmetic, for magnitudes from 1e-3 to
 * 2^128 (the ratios and rates reports hold); through report_format_f64
 * otherwise. */
char *text_f64(char *p, double v);

/* Most bytes text_csv_field and text_json_string write for n bytes of s. */
#define TEXT_CSV_MAX(n) (2 * (n) + 2)
#define TEXT_JSON_MAX(n) (6 * (n) + 2)

/* s as a CSV field: quoted per RFC 4180 when it holds a comma, quote, CR or
 * LF, quotes doubled. */
char *text_csv_field(char *p, const char *s, size_t n);

/* s as a JSON string, as report_put_json_string writes it. */
char *text_json_string(char *p, const char *s, size_t n);

/* --- inline integer formatting ---------------------------------------------------- */

#include <string.h>

extern const char text_digit_pairs[201];

static inline void text_put_pair(char *p, uint32_t v)
{
    memcpy(p, text_digit_pairs + 2 * v, 2);
}

/* Exactly four digits of v < 10^4, and eight of v < 10^8, in 32-bit
 * arithmetic (the divisions by constants become multiplications). */
static inline void text_put_four(char *p, uint32_t v)
{
    text_put_pair(p, v / 100);
    text_put_pair(p + 2, v % 100);
}

static inline void text_put_eight(char *p, uint32_t v)
{
    text_put_four(p, v / 10000);
    text_put_four(p + 4, v % 10000);
}

/* v < 10^4 without leading zeros. */
static inline char *text_put_below_1e4(char *p, uint32_t v)
{
    if (v < 10) {
        *p = (char)('0' + v);
        return p + 1;
    }
    if (v < 100) {
        text_put_pair(p, v);
        return p + 2;
    }
    if (v < 1000) {
        *p = (char)('0' + v / 100);
        text_put_pair(p + 1, v % 100);
        return p + 3;
    }
    text_put_four(p, v);
    return p + 4;
}

/* v < 10^8 without leading zeros. */
static inline char *text_put_below_1e8(char *p, uint32_t v)
{
    if (v < 10000)
        return text_put_below_1e4(p, v);
    p = text_put_below_1e4(p, v / 10000);
    text_put_four(p, v % 10000);
    return p + 4;
}

static inline char *text_u64(char *p, uint64_t v)
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
