/*
 * A counter's value as a report writes it, and sums of them. Integers (the
 * counts, the nanoseconds) are kept as integers, so totals of exact
 * counters are exact however many rows are added; decimals (ratios,
 * percentages, rates, written with three decimals) are doubles.
 */
#ifndef TALLY_ANSWERS_COUNTER_VALUE_H
#define TALLY_ANSWERS_COUNTER_VALUE_H

#include <stdbool.h>
#include <stdint.h>

struct counter_value {
    int64_t integer; /* when !decimal */
    double real;     /* when decimal */
    bool decimal;
};

/* Parses "123", "-7", "62.500", "nan", "inf", "-inf"; an empty text is 0.
 * False for anything else. Independent of the locale. */
bool counter_value_parse(const char *text, struct counter_value *out);

static inline double counter_value_double(const struct counter_value *v)
{
    return v->decimal ? v->real : (double)v->integer;
}

/* A sum of values: integer and decimal parts apart, so that the integers
 * stay exact. An integer sum that would overflow goes on in the double. */
struct counter_sum {
    int64_t integer;
    double real;
    bool decimal; /* some value added was a decimal */
};

static inline void counter_sum_add_integer(struct counter_sum *s, int64_t v)
{
    if ((v > 0 && s->integer > INT64_MAX - v) || (v < 0 && s->integer < INT64_MIN - v))
        s->real += (double)v;
    else
        s->integer += v;
}

static inline void counter_sum_add(struct counter_sum *s, const struct counter_value *v)
{
    if (v->decimal) {
        s->real += v->real;
        s->decimal = true;
    } else {
        counter_sum_add_integer(s, v->integer);
    }
}

static inline void counter_sum_merge(struct counter_sum *s, const struct counter_sum *other)
{
    counter_sum_add_integer(s, other->integer);
    s->real += other->real;
    s->decimal |= other->decimal;
}

static inline double counter_sum_double(const struct counter_sum *s)
{
    return (double)s->integer + s->real;
}

#endif
