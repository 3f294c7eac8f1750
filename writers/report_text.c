/* Owns the text of numbers and strings in every output file (report_text.h). */
#include "report_text.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* "00" to "99": a number's digits two at a time, half the divisions. */
static const char digit_pairs[201] = "00010203040506070809"
                                     "10111213141516171819"
                                     "20212223242526272829"
                                     "30313233343536373839"
                                     "40414243444546474849"
                                     "50515253545556575859"
                                     "60616263646566676869"
                                     "70717273747576777879"
                                     "80818283848586878889"
                                     "90919293949596979899";

/* Digits of v, by comparisons: no division. */
static unsigned digit_count(uint32_t v)
{
    unsigned n = 1;
    for (uint32_t limit = 10; n < 10 && v >= limit; limit *= 10)
        n++;
    return n;
}

/* v's last n digits, two at a time, ending at end. 32-bit arithmetic: a
 * report's counts and the low digits of its times are below 10^8. */
static void put_digits(char *end, uint32_t v, unsigned n)
{
    for (; n >= 2; n -= 2, v /= 100) {
        end -= 2;
        memcpy(end, digit_pairs + 2 * (v % 100), 2);
    }
    if (n)
        end[-1] = (char)('0' + v % 10);
}

char *text_hex16(char *p, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--, v >>= 4)
        p[i] = digits[v & 15];
    return p + 16;
}

char *text_u64(char *p, uint64_t v)
{
    if (v >= 100000000u) { /* the leading digits, then eight more */
        p = text_u64(p, v / 100000000u);
        put_digits(p + 8, (uint32_t)(v % 100000000u), 8);
        return p + 8;
    }
    unsigned n = digit_count((uint32_t)v);
    put_digits(p + n, (uint32_t)v, n);
    return p + n;
}

char *text_i64(char *p, int64_t v)
{
    if (v >= 0)
        return text_u64(p, (uint64_t)v);
    *p++ = '-';
    return text_u64(p, 0 - (uint64_t)v); /* INT64_MIN too */
}

/* Characters of printf's number output other than the locale's decimal point. */
static bool is_number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e';
}

/*
 * snprintf follows LC_NUMERIC, whose decimal point may be ',' or even
 * several bytes; "%g" and "%f" never group thousands, so everything in the
 * output that is not a digit, sign or exponent is the decimal point. It is
 * replaced by '.', which keeps this thread-safe without touching the locale.
 */
static char *put_printf_number(char *p, const char *format, int precision, double v)
{
    char raw[TEXT_FIXED3_MAX + 32];
    snprintf(raw, sizeof raw, format, precision, v);
    for (const char *c = raw; *c;) {
        if (is_number_char(*c)) {
            *p++ = *c++;
            continue;
        }
        *p++ = '.';
        while (*c && !is_number_char(*c))
            c++;
    }
    return p;
}

static char *put_non_finite(char *p, double v)
{
    const char *text = isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
    size_t n = strlen(text);
    memcpy(p, text, n);
    return p + n;
}

/*
 * The thousandths by one multiplication and rounding, which is what
 * printf's "%.3f" gives unless the product lies within its own rounding
 * error of a half: those few, and magnitudes past 2^50 thousandths, go
 * to snprintf, so every value is written exactly as printf would.
 */
char *text_fixed3(char *p, double v)
{
    if (!isfinite(v))
        return put_non_finite(p, v);
    double scaled = fabs(v) * 1000.0;
    double whole = floor(scaled);
    double fraction = scaled - whole;
    double error = scaled * 0x1p-52 + 0x1p-60;
    if (scaled >= 0x1p50 || fabs(fraction - 0.5) <= error)
        return put_printf_number(p, "%.*f", 3, v);
    uint64_t thousandths = (uint64_t)whole + (fraction > 0.5);
    if (signbit(v))
        *p++ = '-'; /* as printf: "-0.000" for -0.0001 and -0.0 */
    p = text_u64(p, thousandths / 1000);
    unsigned decimals = (unsigned)(thousandths % 1000);
    *p++ = '.';
    *p++ = (char)('0' + decimals / 100);
    memcpy(p, digit_pairs + 2 * (decimals % 100), 2);
    return p + 2;
}

static bool needs_quotes(char c)
{
    return c == ',' || c == '"' || c == '\r' || c == '\n';
}

/* Copied a byte at a time (a report's strings are short), quoted from the
 * start again at the first byte that needs it. */
char *text_csv_field(char *p, const char *s, size_t n)
{
    size_t plain = 0;
    for (; plain < n && !needs_quotes(s[plain]); plain++)
        p[plain] = s[plain];
    if (plain == n)
        return p + n;
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            *p++ = '"';
        *p++ = s[i];
    }
    *p++ = '"';
    return p;
}

void report_format_f64(double v, char out[REPORT_F64_SIZE])
{
    if (!isfinite(v)) {
        *put_non_finite(out, v) = '\0';
        return;
    }
    char text[TEXT_FIXED3_MAX + 32];
    char *end = put_printf_number(text, "%.*g", 17, v);
    size_t n =
        (size_t)(end - text) < REPORT_F64_SIZE - 1 ? (size_t)(end - text) : REPORT_F64_SIZE - 1;
    memcpy(out, text, n);
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

/* The escape for byte c, which does not go into a JSON string as it is. */
static char *put_escape(char *p, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    const char *short_form = NULL;
    switch (c) {
    case '"': short_form = "\\\""; break;
    case '\\': short_form = "\\\\"; break;
    case '\b': short_form = "\\b"; break;
    case '\f': short_form = "\\f"; break;
    case '\n': short_form = "\\n"; break;
    case '\r': short_form = "\\r"; break;
    case '\t': short_form = "\\t"; break;
    default: break;
    }
    if (short_form) {
        memcpy(p, short_form, 2);
        return p + 2;
    }
    if (c >= 0x20) { /* a byte that is not UTF-8 */
        memcpy(p, "\\ufffd", 6);
        return p + 6;
    }
    memcpy(p, "\\u00", 4);
    p[4] = hex[c >> 4];
    p[5] = hex[c & 15];
    return p + 6;
}

/* s must be NUL-terminated at n: a multi-byte sequence is checked only up
 * to its first byte that is not a continuation. */
char *text_json_string(char *p, const char *s, size_t n)
{
    const unsigned char *at = (const unsigned char *)s, *end = at + n;
    *p++ = '"';
    while (at < end) {
        size_t length = *at >= 0x20 && *at != '"' && *at != '\\' ? report_utf8_length(at) : 0;
        if (length == 0) {
            p = put_escape(p, *at++);
            continue;
        }
        memcpy(p, at, length);
        p += length;
        at += length;
    }
    *p++ = '"';
    return p;
}

void report_put_json_string(FILE *out, const char *s)
{
    size_t n = strlen(s);
    char small[256];
    char *text = TEXT_JSON_MAX(n) <= sizeof small ? small : malloc(TEXT_JSON_MAX(n));
    if (!text) {
        fputs("\"\"", out); /* no memory: an empty name, and the file still parses */
        return;
    }
    fwrite(text, 1, (size_t)(text_json_string(text, s, n) - text), out);
    if (text != small)
        free(text);
}
