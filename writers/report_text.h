/*
 * The text the report, trace and sample writers produce: numbers and
 * strings, with a '.' decimal point whatever the locale. The buffer forms
 * write at p and return the end of what they wrote (no NUL); the caller
 * leaves the room the *_MAX macros say. Internal to libtally.
 */
#ifndef TALLY_REPORT_TEXT_H
#define TALLY_REPORT_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Most bytes text_u64, text_i64 or text_fixed3 writes (text_fixed3's
 * largest is "-" and 309 digits, ".", 3 decimals). */
#define TEXT_INTEGER_MAX 20
#define TEXT_FIXED3_MAX 320

/* Most bytes text_csv_field and text_json_string write for n bytes of s. */
#define TEXT_CSV_MAX(n) (2 * (size_t)(n) + 2)
#define TEXT_JSON_MAX(n) (6 * (size_t)(n) + 2)

/* Decimal, as "%" PRIu64 and "%" PRId64 write it. */
char *text_u64(char *p, uint64_t v);
char *text_i64(char *p, int64_t v);
/* Sixteen lower-case hex digits, as "%016" PRIx64 writes them: a hash, the
 * same width in every row. */
char *text_hex16(char *p, uint64_t v);

/* v with three decimals, as "%.3f" writes it in the C locale: the
 * precision of every float a report or sample holds (ratios, rates,
 * percentages), documented in docs/reports.md. "nan", "inf", "-inf" when
 * not finite. */
char *text_fixed3(char *p, double v);

/* s (n bytes) as a CSV field: quoted per RFC 4180 when it holds a comma,
 * quote, CR or LF, with quotes doubled. */
char *text_csv_field(char *p, const char *s, size_t n);

/* s (n bytes) as a JSON string: quotes, backslashes and control characters
 * escaped, bytes that are not UTF-8 replaced by U+FFFD, so the output is
 * valid JSON. */
char *text_json_string(char *p, const char *s, size_t n);

/* Longest text report_format_f64 writes, with its NUL. */
#define REPORT_F64_SIZE 32

/* v as "%.17g" (reads back as the same double) with a '.' decimal point
 * whatever the locale; "nan", "inf" or "-inf" if not finite. The trace's
 * argument values, which are not a report's columns. */
void report_format_f64(double v, char out[REPORT_F64_SIZE]);

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 if it is not one
 * (overlong forms, surrogates and code points past U+10FFFF are not). Never
 * reads past a NUL. */
size_t report_utf8_length(const unsigned char *s);

/* s as text_json_string writes it, to a stream. */
void report_put_json_string(FILE *out, const char *s);

#endif
