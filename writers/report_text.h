/* The text both report writers produce. Internal to libtally. */
#ifndef TALLY_REPORT_TEXT_H
#define TALLY_REPORT_TEXT_H

#include <stdio.h>

/* Longest text report_format_f64 writes, with its NUL. */
#define REPORT_F64_SIZE 32

/* v as "%.17g" (reads back as the same double) with a '.' decimal point
 * whatever the locale; "nan", "inf" or "-inf" if not finite. */
void report_format_f64(double v, char out[REPORT_F64_SIZE]);

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 if it is not one
 * (overlong forms, surrogates and code points past U+10FFFF are not). Never
 * reads past a NUL. */
size_t report_utf8_length(const unsigned char *s);

/* s as a JSON string: quotes, backslashes and control characters escaped,
 * bytes that are not UTF-8 replaced by U+FFFD, so the output is valid JSON. */
void report_put_json_string(FILE *out, const char *s);

#endif
