/*
 * The N commands of a run with the largest value of one counter, kept in
 * a heap of N as the rows stream past: memory is N entries whatever the
 * rows. Equal values rank in the order the rows came, so the result is
 * the same on every run.
 */
#ifndef TALLY_ANSWERS_TOP_COMMANDS_H
#define TALLY_ANSWERS_TOP_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report_reader.h"

/* Values a command carries beside the one it ranks by. */
enum { TOP_SHOWN = 3 };

struct top_command {
    double value; /* it ranks by */
    double shown[TOP_SHOWN];
    uint64_t order;
    size_t report;
    uint64_t frame, sequence;
    uint64_t matched_sequence; /* the matched command's in the other run (tally diff) */
    char *kind, *api_name, *label, *pipeline;
};

typedef struct top_commands top_commands;

top_commands *top_commands_create(size_t n);
void top_commands_free(top_commands *top);

/* Offers a row ranked by value, with shown[TOP_SHOWN] kept beside it;
 * false only without memory. A NaN value is not ranked. */
bool top_commands_offer(top_commands *top, double value, const double *shown, size_t report,
                        const struct report_row *row, uint64_t matched_sequence);

/* The commands kept, largest first (sorting the heap: offer no more). */
size_t top_commands_sorted(top_commands *top, const struct top_command **out);

#endif
