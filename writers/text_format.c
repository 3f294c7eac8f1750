/* Owns number and string text for reports, without stdio (see text_format.h). */
#include "text_format.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "report_text.h"
#include "text_pair.h"
#include "text_vector.h"

#ifdef TEXT_VECTOR
#include <immintrin.h> /* _bit_scan_reverse */
#endif

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

/* floor(e log10(2)) for |e| < 100: 78913 / 2^18 is log10(2) within 8e-7 */
#define LOWER_DECADE(i) TEXT_LOG10_POW2((i) + FAST_FIRST - 1023)
/* 5^n for n from 0 to 20 as a constant expression; 0 outside (the upper
 * decade of the last binade, which none of its doubles reaches) */
#define POW5(n)                                                                                    \
    ((n) == 0    ? 1ull                                                                            \
     : (n) == 1  ? 5ull                                                                            \
     : (n) == 2  ? 25ull                                                                           \
     : (n) == 3  ? 125ull                                                                          \
     : (n) == 4  ? 625ull                                                                          \
     : (n) == 5  ? 3125ull                                                                         \
     : (n) == 6  ? 15625ull                                                                        \
     : (n) == 7  ? 78125ull                                                                        \
     : (n) == 8  ? 390625ull                                                                       \
     : (n) == 9  ? 1953125ull                                                                      \
     : (n) == 10 ? 9765625ull                                                                      \
     : (n) == 11 ? 48828125ull                                                                     \
     : (n) == 12 ? 244140625ull                                                                    \
     : (n) == 13 ? 1220703125ull                                                                   \
     : (n) == 14 ? 6103515625ull                                                                   \
     : (n) == 15 ? 30517578125ull                                                                  \
     : (n) == 16 ? 152587890625ull                                                                 \
     : (n) == 17 ? 762939453125ull                                                                 \
     : (n) == 18 ? 3814697265625ull                                                                \
     : (n) == 19 ? 19073486328125ull                                                               \
     : (n) == 20 ? 95367431640625ull                                                               \
                 : 0ull)
/* c = 10^(16-d) x 2^(b-1022) = 5^(16-d) x 2^(16-d+b-1022) */
#define SCALE(i, d) (POW5(16 - (d)) << (16 - (d) + (i) + FAST_FIRST - 1022))
/* 10^k for k from -3 to 17: exact from 10^0 up; the literals 1e-3 to 1e-1
 * round up, so that v >= TEN(k) exactly when v >= 10^k */
#define TEN(k)                                                                                     \
    ((k) == -3   ? 1e-3                                                                            \
     : (k) == -2 ? 1e-2                                                                            \
     : (k) == -1 ? 1e-1                                                                            \
     : (k) == 0  ? 1e0                                                                             \
     : (k) == 1  ? 1e1                                                                             \
     : (k) == 2  ? 1e2                                                                             \
     : (k) == 3  ? 1e3                                                                             \
     : (k) == 4  ? 1e4                                                                             \
     : (k) == 5  ? 1e5                                                                             \
     : (k) == 6  ? 1e6                                                                             \
     : (k) == 7  ? 1e7                                                                             \
     : (k) == 8  ? 1e8                                                                             \
     : (k) == 9  ? 1e9                                                                             \
     : (k) == 10 ? 1e10                                                                            \
     : (k) == 11 ? 1e11                                                                            \
     : (k) == 12 ? 1e12                                                                            \
     : (k) == 13 ? 1e13                                                                            \
     : (k) == 14 ? 1e14                                                                            \
     : (k) == 15 ? 1e15                                                                            \
     : (k) == 16 ? 1e16                                                                            \
                 : 1e17)

/* X(i) for every binade i of the fast path */
#define EACH4(X, i) X(i) X((i) + 1) X((i) + 2) X((i) + 3)
#define EACH16(X, i) EACH4(X, i) EACH4(X, (i) + 4) EACH4(X, (i) + 8) EACH4(X, (i) + 12)
#define EACH_BINADE(X) EACH16(X, 0) EACH16(X, 16) EACH16(X, 32) EACH16(X, 48) EACH4(X, 64) X(68)

/* The fast path's tables (text_pair.h). */
const struct fast_tables text_fast = {
#ifdef TEXT_VECTOR
    .keep = {0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f,
             0x7f, 0x7f},
    .dot = {[16] = '.'},
    .by_1e8 = TEXT_EACH_64(2882303761u),
    .e8 = TEXT_EACH_64(100000000u),
    .e8_less_1 = TEXT_EACH_64(100000000u - 1),
    .by_1e8_below_1e9 = TEXT_EACH_64(720575941u),
    .splits = TEXT_DIGIT_SPLITS,
    .zeros = TEXT_EACH_64(0x3030303030303030ull),
    .comma_zero = {0x302c, 0, 0x302c, 0}, /* ",0" at the start of each 128-bit lane */
    /* byte 0 of each 128-bit lane to byte 1, the others 0 */
    .first_to_1 = {0x80, 0,    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                   0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0,    0x80, 0x80, 0x80, 0x80,
                   0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    .ifma = TEXT_IFMA_DIGITS,
#endif
#define UPPER(i) TEN(LOWER_DECADE(i) + 1),
    .upper = {EACH_BINADE(UPPER)},
#define SCALES(i) SCALE(i, LOWER_DECADE(i) + 1), SCALE(i, LOWER_DECADE(i)),
    .scale = {EACH_BINADE(SCALES)},
#define POINTS(i) LOWER_DECADE(i) + 1, LOWER_DECADE(i),
    .point = {EACH_BINADE(POINTS)},
#define WINDOWS(i) 15 - LOWER_DECADE(i), 16 - LOWER_DECADE(i),
    .window = {EACH_BINADE(WINDOWS)},
};

#ifdef TEXT_VECTOR

/*
 * "%.17g" of digits (exactly 17) x 10^(d-16) for -4 <= d <= 16, fixed
 * notation: the 17 digits split 1 + 8 + 8, the 16 after the first made in
 * one SSE2 register, the point put in that register by masks for d (no
 * shift by a variable count), stored whole; the length from one bit scan;
 * no branch but on d's sign. Writes up to 22 bytes.
 */
static inline char *put_fixed(char *p, uint64_t digits, ptrdiff_t d, size_t window)
{
    uint64_t high9 = digits / 100000000u;
    uint32_t low8 = (uint32_t)(digits - high9 * 100000000u);
    /* x * 720575941 >> 56 is x / 10^8 for x < 1.16 x 10^9 */
    uint32_t first = (uint32_t)(high9 * 720575941u >> 56);
    uint32_t middle8 = (uint32_t)high9 - first * 100000000u;
    __m128i rest = text_digits8x2(_mm_set_epi64x(low8, middle8));
    __m128i keep = _mm_loadu_si128((const __m128i *)(text_fast.keep + window));
    __m128i dot = _mm_loadu_si128((const __m128i *)(text_fast.dot + window));
    /* bit i: rest[i] is a digit after the point and not 0 */
    uint64_t fraction = (unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(rest, keep));
    rest = _mm_add_epi8(rest, _mm_set1_epi8('0'));
    char lead = (char)('0' + first);
    if (d < 0) {
        memcpy(p, "0.000000", 8);
        p -= d; /* the first digit at p + 1, rest[i] at p + 2 + i */
        p[1] = lead;
        _mm_storeu_si128((__m128i *)(p + 2), rest);
        return p + 1 + highest_bit(fraction << 2 | 2);
    }
    /* byte i: rest[i] before the point (i < d), '.' at d, rest[i - 1] after */
    __m128i after = _mm_slli_si128(_mm_andnot_si128(keep, rest), 1);
    __m128i text = _mm_or_si128(_mm_or_si128(_mm_and_si128(rest, keep), after), dot);
    _mm_storeu_si128((__m128i *)(p + 2), rest); /* for its last byte: the 17th digit */
    _mm_storeu_si128((__m128i *)(p + 1), text);
    *p = lead;
    /* rest[i] after the point is at p + 2 + i; the digits before it end at
     * p + d: the last of either ends the text */
    return p + 1 + highest_bit(fraction << 2 | 1ull << d);
}
#endif

/* The doubles the fast path does not take, apart: their stack and saved
 * registers would otherwise cost every call. */
static __attribute__((noinline)) char *put_other_f64(char *p, double v)
{
    if (v < 0) { /* -v may take the fast path */
        *p = '-';
        return text_f64(p + 1, -v);
    }
    if (v == 0.0) { /* 0 or -0 */
        *p = '-';
        p += signbit(v) != 0;
        *p = '0';
        return p + 1;
    }
    uint64_t digits;
    int exponent;
    if (isfinite(v) && v >= 1e-3 && decimal(v, &digits, &exponent))
        return put_general(p, digits, exponent);
    char text[REPORT_F64_SIZE];
    report_format_f64(v, text);
    size_t n = strlen(text);
    memcpy(p, text, n);
    return p + n;
}

char *text_f64(char *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    /* the sign bit takes negative values out of range too */
    uint64_t binade = (bits >> 52) - FAST_FIRST;
    if (binade >= FAST_BINADES)
        return put_other_f64(p, v);
    size_t j = fast_entry(&text_fast, bits, binade);
    uint64_t digits = fast_digits(bits, text_fast.scale[j]);
#ifdef TEXT_VECTOR
    return put_fixed(p, digits, text_fast.point[j], text_fast.window[j]);
#else
    return put_general(p, digits, text_fast.point[j]);
#endif
}

/* --- two doubles ------------------------------------------------------------------ */

/* The pair when either value leaves the pair's fast way: one at a time
 * (text_pair.h). */
__attribute__((noinline)) char *text_pair_apart(char *p, double a, double b)
{
    *p++ = ',';
    p = text_f64(p, a);
    *p++ = ',';
    return text_f64(p, b);
}

#ifdef TEXT_VECTOR

/* The pair by SSE2, the x86-64 baseline: text_f64's way, twice in one
 * call. */
static inline __attribute__((always_inline)) char *pair_sse2(char *p, double a, double b)
{
    uint64_t bits_a, bits_b, binade_a, binade_b;
    pair_binades(a, b, &bits_a, &bits_b, &binade_a, &binade_b);
    if (binade_a >= FAST_BINADES || binade_b >= FAST_BINADES)
        return text_pair_apart(p, a, b);
    size_t ja = fast_entry(&text_fast, bits_a, binade_a),
           jb = fast_entry(&text_fast, bits_b, binade_b);
    uint64_t digits_a = fast_digits(bits_a, text_fast.scale[ja]);
    uint64_t digits_b = fast_digits(bits_b, text_fast.scale[jb]);
    *p = ',';
    p = put_fixed(p + 1, digits_a, text_fast.point[ja], text_fast.window[ja]);
    *p = ',';
    return put_fixed(p + 1, digits_b, text_fast.point[jb], text_fast.window[jb]);
}

/* --- two doubles by AVX2 ---------------------------------------------------------- */

/* The pair by AVX2 (text_pair.h's text_pair_avx2, which is this). */
TEXT_AVX2 static __attribute__((noinline)) char *pair_avx2(char *p, double a, double b)
{
    return text_pair_avx2(p, a, b);
}

/* --- two doubles by AVX-512 IFMA ----------------------------------------------------- */

/*
 * The pair as pair_avx2 makes it, but the 17 digits split 1 + 8 + 8 by
 * scalar multiplications and each 8 made by text_digits_ifma: two
 * multiplications deep where pair_avx2's split and digits are about ten.
 * Its instructions are as many; what it saves is the wait. On the H100's
 * host, whose processor's other hardware thread is often another guest's,
 * rows through tally_report_write ran 5 to 8 % faster with it than with
 * pair_avx2 in slices paired in time; on a core of its own (this machine)
 * about 0.5 % (docs/benchmarks-history.md, round fourteen).
 */
TEXT_IFMA static __attribute__((noinline)) char *pair_ifma(char *p, double a, double b)
{
    return text_pair_ifma(p, a, b);
}

#endif

#ifdef TEXT_VECTOR

static char *pair_sse2_way(char *p, double a, double b)
{
    return pair_sse2(p, a, b);
}

text_f64_pair_fn text_csv_f64_pair_sse2(void)
{
    return pair_sse2_way;
}

text_f64_pair_fn text_csv_f64_pair_avx2(void)
{
    return text_cpu_has_avx2() ? pair_avx2 : NULL;
}

text_f64_pair_fn text_csv_f64_pair_ifma(void)
{
    return text_cpu_has_ifma() ? pair_ifma : NULL;
}

text_f64_pair_fn text_csv_f64_pair_best(void)
{
    text_f64_pair_fn best = text_csv_f64_pair_ifma();
    if (!best)
        best = text_csv_f64_pair_avx2();
    return best ? best : text_csv_f64_pair_baseline();
}

#else

text_f64_pair_fn text_csv_f64_pair_sse2(void)
{
    return NULL;
}

text_f64_pair_fn text_csv_f64_pair_avx2(void)
{
    return NULL;
}

text_f64_pair_fn text_csv_f64_pair_ifma(void)
{
    return NULL;
}

text_f64_pair_fn text_csv_f64_pair_best(void)
{
    return text_pair_apart;
}

#endif

text_f64_pair_fn text_csv_f64_pair_baseline(void)
{
    text_f64_pair_fn sse2 = text_csv_f64_pair_sse2();
    return sse2 ? sse2 : text_pair_apart;
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
