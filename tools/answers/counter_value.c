/* Owns the reading of one number as a report writes it (counter_value.h). */
#include "counter_value.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double powers_of_ten[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8, 1e9,
                                       1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};

static bool parse_special(const char *text, bool negative, struct counter_value *out)
{
    out->decimal = true;
    if (strcmp(text, "nan") == 0 && !negative)
        out->real = NAN;
    else if (strcmp(text, "inf") == 0)
        out->real = negative ? -INFINITY : INFINITY;
    else
        return false;
    return true;
}

/* Anything but a plain unsigned integer of up to 18 digits. */
static bool parse_general(const char *text, struct counter_value *out)
{
    *out = (struct counter_value){0};
    const char *p = text;
    bool negative = *p == '-';
    p += negative;
    if (*p < '0' || *p > '9')
        return *text == '\0' || parse_special(p, negative, out);
    /* Digits as an integer while they fit 18 of them (no overflow). */
    uint64_t mantissa = 0;
    int digits = 0, fraction_digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++)
        mantissa = mantissa * 10 + (uint64_t)(*p - '0');
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, digits++, fraction_digits++)
            mantissa = mantissa * 10 + (uint64_t)(*p - '0');
        if (fraction_digits == 0)
            return false;
        out->decimal = true;
    }
    if (*p != '\0') {
        /* An exponent or more digits than fit: let strtod read it (tally
         * writes neither; other writers may). */
        if (*p != 'e' && *p != 'E')
            return false;
        char *end;
        out->real = strtod(text, &end);
        out->decimal = true;
        return *end == '\0';
    }
    if (digits > 18) {
        out->real = strtod(text, NULL);
        out->decimal = true;
        return true;
    }
    if (out->decimal) {
        /* An exact integer over an exact power of ten: correctly rounded. */
        double value = (double)mantissa / powers_of_ten[fraction_digits];
        out->real = negative ? -value : value;
    } else {
        out->integer = negative ? -(int64_t)mantissa : (int64_t)mantissa;
    }
    return true;
}

bool counter_value_parse(const char *text, struct counter_value *out)
{
    /* Most values of a report are counts: read those in one loop. */
    uint64_t value = 0;
    int digits = 0;
    unsigned digit;
    for (; (digit = (unsigned)((unsigned char)text[digits] - '0')) < 10 && digits < 18; digits++)
        value = value * 10 + digit;
    if (digits == 0 || text[digits] != '\0')
        return parse_general(text, out);
    out->integer = (int64_t)value;
    out->real = 0;
    out->decimal = false;
    return true;
}
