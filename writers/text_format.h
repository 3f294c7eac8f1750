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

/* Decimal, as "%" PRIu64 and "%" PRId64 write it. */
char *text_u64(char *p, uint64_t v);
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

#endif
