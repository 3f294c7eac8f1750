/*
 * Numbers as every answer prints them, whatever the format: integers in
 * full, averaged values (means of ratios) with three decimals as the
 * reports write them, changes as "X -> Y (+Z %)".
 */
#ifndef TALLY_ANSWERS_VALUE_TEXT_H
#define TALLY_ANSWERS_VALUE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "counter_value.h"

/* A value: three decimals when averaged or not whole, else an integer. */
void value_text(double value, bool averaged, char *out, size_t size);

/* A counter value as read, written back the same way. */
void counter_value_text(const struct counter_value *value, char *out, size_t size);

/* A relative change: "+12.50 %", "-3.00 %", "0.00 %"; "new" from 0. */
void percent_text(double percent, char *out, size_t size);

/* "X -> Y (+Z %)", or "X (unchanged)". */
void change_text(const struct counter_value *base, const struct counter_value *new_value,
                 double percent, char *out, size_t size);

#endif
