/* Owns how numbers and changes read in every answer (value_text.h). */
#include "value_text.h"

#include <math.h>
#include <stdio.h>

void value_text(double value, bool averaged, char *out, size_t size)
{
    if (isnan(value))
        snprintf(out, size, "nan");
    else if (isinf(value))
        snprintf(out, size, value > 0 ? "inf" : "-inf");
    else if (!averaged && value == floor(value) && fabs(value) < 9.2e18)
        snprintf(out, size, "%.0f", value);
    else
        snprintf(out, size, "%.3f", value);
}

void counter_value_text(const struct counter_value *v, char *out, size_t size)
{
    if (v->decimal)
        value_text(v->real, true, out, size);
    else
        snprintf(out, size, "%lld", (long long)v->integer);
}

void percent_text(double percent, char *out, size_t size)
{
    if (isinf(percent) || isnan(percent))
        snprintf(out, size, "new");
    else if (percent == 0)
        snprintf(out, size, "0.00 %%");
    else
        snprintf(out, size, "%+.2f %%", percent);
}

void change_text(const struct counter_value *base, const struct counter_value *new_value,
                 double percent, char *out, size_t size)
{
    char b[48], n[48], p[32];
    counter_value_text(base, b, sizeof b);
    counter_value_text(new_value, n, sizeof n);
    bool same = base->decimal == new_value->decimal &&
                (base->decimal ? base->real == new_value->real ||
                                     (isnan(base->real) && isnan(new_value->real))
                               : base->integer == new_value->integer);
    if (same) {
        snprintf(out, size, "%s (unchanged)", b);
        return;
    }
    percent_text(percent, p, sizeof p);
    snprintf(out, size, "%s -> %s (%s)", b, n, p);
}
