/* The text both report writers produce: locale-independent doubles and
 * JSON strings. */
#include "report_text.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Characters of "%.17g" output other than the locale's decimal point. */
static bool is_number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e';
}

/*
 * snprintf follows LC_NUMERIC, whose decimal point may be ',' or even
 * several bytes; "%g" never groups thousands, so everything in the output
 * that is not a digit, sign or exponent is the decimal point. It is replaced
 * by '.', which keeps this thread-safe without touching the locale.
 */
void report_format_f64(double v, char out[REPORT_F64_SIZE])
{
    if (!isfinite(v)) {
        strcpy(out, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
        return;
    }
    char raw[64];
    snprintf(raw, sizeof raw, "%.17g", v);
    size_t n = 0;
    for (const char *c = raw; *c && n < REPORT_F64_SIZE - 1;) {
        if (is_number_char(*c)) {
            out[n++] = *c++;
            continue;
        }
        out[n++] = '.';
        while (*c && !is_number_char(*c))
            c++;
    }
    out[n] = '\0';
}

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 if it is not one:
 * overlong forms, surrogates and code points past U+10FFFF are not. Stops at
 * the first byte that is not a continuation, so it never reads past a NUL. */
size_t report_utf8_length(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t n;
    uint32_t cp, min;
    if ((s[0] & 0xe0) == 0xc0) {
        n = 2, cp = s[0] & 0x1fu, min = 0x80;
    } else if ((s[0] & 0xf0) == 0xe0) {
        n = 3, cp = s[0] & 0x0fu, min = 0x800;
    } else if ((s[0] & 0xf8) == 0xf0) {
        n = 4, cp = s[0] & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    bool valid = cp >= min && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    return valid ? n : 0;
}

/* Bytes at s that go into a JSON string as they are. */
static size_t plain_run(const unsigned char *s)
{
    size_t run = 0;
    for (;;) {
        unsigned char c = s[run];
        if (c < 0x20 || c == '"' || c == '\\')
            return run;
        size_t n = report_utf8_length(s + run);
        if (n == 0)
            return run;
        run += n;
    }
}

/* Writes the escape for the byte at *s and steps over it. */
static void put_escape(FILE *out, const unsigned char **s)
{
    unsigned char c = **s;
    (*s)++;
    switch (c) {
    case '"': fputs("\\\"", out); return;
    case '\\': fputs("\\\\", out); return;
    case '\b': fputs("\\b", out); return;
    case '\f': fputs("\\f", out); return;
    case '\n': fputs("\\n", out); return;
    case '\r': fputs("\\r", out); return;
    case '\t': fputs("\\t", out); return;
    default: break;
    }
    if (c < 0x20)
        fprintf(out, "\\u%04x", c);
    else
        fputs("\\ufffd", out); /* a byte that is not UTF-8 */
}

void report_put_json_string(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    putc('"', out);
    while (*p) {
        size_t run = plain_run(p);
        fwrite(p, 1, run, out);
        p += run;
        if (*p)
            put_escape(out, &p);
    }
    putc('"', out);
}
