/* Owns number and string text for reports, without stdio (see text_format.h). */
#include "text_format.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "report_text.h"
#include "text_vector.h"

char *text_i64(char *p, int64_t v)
{
    if (v >= 0)
        return text_u64(p, (uint64_t)v);
    *p++ = '-';
    return text_u64(p, 0 - (uint64_t)v);
}

/* --- doubles ---------------------------------------------------------------------- */

typedef unsigned __int128 u128;

static const uint64_t powers_of_ten[20] = {1ull,
                                           10ull,
                                           100ull,
                                           1000ull,
                                           10000ull,
                                           100000ull,
                                           1000000ull,
                                           10000000ull,
                                           100000000ull,
                                           1000000000ull,
                                           10000000000ull,
                                           100000000000ull,
                                           1000000000000ull,
                                           10000000000000ull,
                                           100000000000000ull,
                                           1000000000000000ull,
                                           10000000000000000ull,
                                           100000000000000000ull,
                                           1000000000000000000ull,
                                           10000000000000000000ull};

#define DIGITS 17 /* "%.17g": every double reads back as itself */
#define LOW (powers_of_ten[DIGITS - 1])
#define HIGH (powers_of_ten[DIGITS])

static u128 power_of_ten(unsigned n)
{
    return n < 20 ? powers_of_ten[n] : (u128)powers_of_ten[19] * powers_of_ten[n - 19];
}

static unsigned bit_length(u128 v)
{
    uint64_t high = (uint64_t)(v >> 64), low = (uint64_t)v;
    return high  ? 128 - (unsigned)__builtin_clzll(high)
           : low ? 64 - (unsigned)__builtin_clzll(low)
                 : 0;
}

/*
 * m * 2^e * 10^p as an integer, rounded to nearest with ties to even (as
 * printf rounds in the default rounding mode), when the exact value's
 * numerator and denominator fit 128 bits; false otherwise.
 */
static bool scaled(uint64_t m, int e, int p, uint64_t *out)
{
    if (p > 19 || p < -38 || (e < 0 && p < 0))
        return false;
    u128 num = p >= 0 ? (u128)m * powers_of_ten[p] : m;
    u128 q;
    if (e >= 0) {
        if (bit_length(num) + (unsigned)e > 127)
            return false;
        num <<= e;
        if (p >= 0) {
            q = num;
        } else {
            u128 den = power_of_ten((unsigned)-p), rem;
            q = num / den;
            rem = num - q * den;
            q += rem * 2 > den || (rem * 2 == den && (q & 1));
        }
    } else {
        /* a shift, the common case: ratios and rates below 2^53 */
        unsigned s = (unsigned)-e;
        if (s > 127)
            return false;
        q = num >> s;
        u128 rem = num - (q << s), half = (u128)1 << (s - 1);
        q += rem > half || (rem == half && (q & 1));
    }
    *out = (uint64_t)q;
    return q >> 64 == 0;
}

/* The DIGITS significant digits of v > 0, rounded, and the decimal exponent
 * of the rounded value. */
static bool decimal(double v, uint64_t *digits, int *exponent)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int biased = (int)(bits >> 52 & 0x7ff);
    if (biased == 0)
        return false; /* subnormal */
    uint64_t m = (bits & ((1ull << 52) - 1)) | 1ull << 52;
    int e = biased - 1075;
    /* floor(log10(v)) is d or d + 1 (78913 / 2^18 is just below log10(2));
     * the digits settle it. A rounding that carries into an 18th digit
     * (9.99...95 to 10.0...) gives HIGH, and d + 1 then gives LOW. */
    int d = ((e + 52) * 78913) >> 18;
    static const double exact_powers[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                            1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                            1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    if (d + 1 >= 0 && d + 1 <= 22 && v >= exact_powers[d + 1])
        d++; /* saves a try, where the powers are exact doubles */
    for (int tries = 0; tries < 3; tries++) {
        uint64_t n;
        if (!scaled(m, e, DIGITS - 1 - d, &n))
            return false;
        if (n >= HIGH) {
            d++;
        } else if (n < LOW) {
            d--;
        } else {
            *digits = n;
            *exponent = d;
            return true;
        }
    }
    return false;
}

static void store16(char *p, u128 v)
{
    memcpy(p, &v, 16);
}

/* The 16 digits of rest < 10^16 as ASCII, the most significant in the
 * lowest byte, and how many of them are left without trailing zeros. */
static inline u128 sixteen_digits(uint64_t rest, int *significant)
{
    uint32_t high8 = (uint32_t)(rest / 100000000u), low8 = (uint32_t)(rest % 100000000u);
#ifdef TEXT_VECTOR
    __m128i digits = text_digits8x2(_mm_set_epi64x(low8, high8));
    unsigned nonzero = ~text_zero_digits(digits) & 0xffffu;
    /* trailing zero digits are the high zero bytes */
    *significant = nonzero ? 32 - __builtin_clz(nonzero) : 0;
    __m128i ascii = _mm_add_epi8(digits, _mm_set1_epi8('0'));
    uint64_t low = (uint64_t)_mm_cvtsi128_si64(ascii);
    uint64_t high = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(ascii, ascii));
    return (u128)high << 64 | low;
#else
    uint64_t high = text_digits8(high8), low = text_digits8(low8);
    *significant = low ? 16 - __builtin_clzll(low) / 8 : high ? 8 - __builtin_clzll(high) / 8 : 0;
    return (u128)(low + TEXT_ASCII_ZEROS) << 64 | (high + TEXT_ASCII_ZEROS);
#endif
}

/* "%.17g" of digits x 10^(exponent - 16): fixed notation for exponents from
 * -4 to 16, else scientific; trailing zeros and a bare point dropped.
 *
 * The 16 digits after the first are built in registers and every piece is
 * stored from them, the later stores overwriting what the earlier wrote
 * past their piece: formatting into a scratch array and copying pieces of
 * it would read bytes just stored, which stalls. Writes up to 34 bytes
 * from p. */
static char *put_general(char *p, uint64_t digits, int exponent)
{
    uint64_t first_digit = digits / 10000000000000000u; /* digits has exactly DIGITS */
    int significant;
    u128 rest = sixteen_digits(digits - first_digit * 10000000000000000u, &significant);
    char first = (char)('0' + first_digit);
    int used = 1 + significant; /* digits without the trailing zeros */
    if (exponent >= -4 && exponent < DIGITS) {
        if (exponent < 0) {
            memcpy(p, "0.000000", 8);
            p += 1 - exponent; /* "0." and -exponent - 1 zeros */
            *p = first;
            store16(p + 1, rest);
            return p + used;
        }
        int whole = exponent + 1; /* digits before the point, 1 to 17 */
        *p = first;
        store16(p + 1, rest);
        if (used <= whole)
            return p + whole;
        p[whole] = '.';
        store16(p + whole + 1, rest >> (8 * (whole - 1)));
        return p + used + 1;
    }
    *p++ = first;
    if (used > 1) {
        *p = '.';
        store16(p + 1, rest);
        p += used;
    }
    *p++ = 'e';
    *p++ = exponent < 0 ? '-' : '+';
    unsigned x = (unsigned)(exponent < 0 ? -exponent : exponent);
    if (x < 10)
        *p++ = '0';
    return text_u64(p, x);
}

/* 10^k for k from -3 to 17 as doubles: exact from 10^0 up; 10^-3 to 10^-1
 * round up, so that v >= tens[k + 3] exactly when v >= 10^k. */
static const double tens[21] = {1e-3, 1e-2, 1e-1, 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6, 1e7,
                                1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17};

/*
 * The common case of ratios and rates, 10^-3 <= v < 2^52, v = m x 2^-s
 * with 1 <= s <= 62: its decade d (10^d <= v < 10^(d+1)) from the binary
 * exponent and one comparison, then DIGITS digits as m x 10^(16-d) / 2^s
 * rounded half to even, from one 64x64-bit product (under 2^119) and the
 * bits the shift drops.
 */
static bool fast_decimal(double v, uint64_t *digits, int *exponent)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int biased = (int)(bits >> 52);
    if (biased < 1023 - 10 || biased > 1023 + 51 || v < 1e-3)
        return false;
    uint64_t m = (bits & ((1ull << 52) - 1)) | 1ull << 52;
    unsigned s = (unsigned)(1075 - biased);
    /* floor(log10(v)) is d or d + 1 (78913 / 2^18 is just below log10(2)) */
    int d = ((biased - 1023) * 78913) >> 18;
    d += v >= tens[d + 1 + 3];
    u128 num = (u128)m * powers_of_ten[DIGITS - 1 - d];
    uint64_t q = (uint64_t)(num >> s);
    uint64_t dropped = (uint64_t)num << (64 - s); /* the s bits below q, at the top */
    q += dropped > 1ull << 63 || (dropped == 1ull << 63 && (q & 1));
    if (q == HIGH) { /* rounding carried into an 18th digit: 10^(d+1) */
        q = LOW;
        d++;
    }
    *digits = q;
    *exponent = d;
    return true;
}

/* The doubles fast_decimal does not take, apart: their stack and saved
 * registers would otherwise cost every call. */
static __attribute__((noinline)) char *put_other_f64(char *p, double v)
{
    uint64_t digits;
    int exponent;
    double magnitude = fabs(v);
    if (isfinite(v) && magnitude >= 1e-3 && decimal(magnitude, &digits, &exponent)) {
        if (v < 0)
            *p++ = '-';
        return put_general(p, digits, exponent);
    }
    char text[REPORT_F64_SIZE];
    report_format_f64(v, text);
    size_t n = strlen(text);
    memcpy(p, text, n);
    return p + n;
}

char *text_f64(char *p, double v)
{
    if (v == 0.0 && !signbit(v)) {
        *p = '0';
        return p + 1;
    }
    uint64_t digits;
    int exponent;
    if (!fast_decimal(fabs(v), &digits, &exponent))
        return put_other_f64(p, v);
    if (v < 0)
        *p++ = '-';
    return put_general(p, digits, exponent);
}

/* --- strings ---------------------------------------------------------------------- */

char *text_csv_field(char *p, const char *s, size_t n)
{
    bool quote = false;
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
    if (!quote) {
        memcpy(p, s, n);
        return p + n;
    }
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            *p++ = '"';
        *p++ = s[i];
    }
    *p++ = '"';
    return p;
}

static char *put_escape(char *p, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    *p++ = '\\';
    switch (c) {
    case '"': *p++ = '"'; return p;
    case '\\': *p++ = '\\'; return p;
    case '\b': *p++ = 'b'; return p;
    case '\f': *p++ = 'f'; return p;
    case '\n': *p++ = 'n'; return p;
    case '\r': *p++ = 'r'; return p;
    case '\t': *p++ = 't'; return p;
    default: break;
    }
    if (c < 0x20) {
        memcpy(p, "u00", 3);
        p[3] = hex[c >> 4];
        p[4] = hex[c & 15];
    } else {
        memcpy(p, "ufffd", 5); /* a byte that is not UTF-8 */
    }
    return p + 5;
}

char *text_json_string(char *p, const char *s, size_t n)
{
    const unsigned char *at = (const unsigned char *)s, *end = at + n;
    *p++ = '"';
    while (at < end) {
        unsigned char c = *at;
        size_t length = c >= 0x20 && c != '"' && c != '\\' ? report_utf8_length(at) : 0;
        if (length == 0 || length > (size_t)(end - at)) {
            p = put_escape(p, c);
            at++;
            continue;
        }
        memcpy(p, at, length);
        p += length;
        at += length;
    }
    *p++ = '"';
    return p;
}
