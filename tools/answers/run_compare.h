/*
 * Two digests side by side: every value of every row (total, frame,
 * label, pipeline, API command) of either, each with its change and the
 * rule it breaks. A row only one run has is compared with 0 on the other
 * side; a counter only one run has is shown, never gated.
 */
#ifndef TALLY_ANSWERS_RUN_COMPARE_H
#define TALLY_ANSWERS_RUN_COMPARE_H

#include "gate_rules.h"
#include "run_digest.h"

struct compare_counter {
    const char *symbol, *unit;
    enum counter_exactness exactness;
    bool averaged;
    int base_index, new_index; /* in each digest; -1 where absent (commands: both -1) */
};

struct compare_item {
    enum digest_scope scope;
    const char *name;
    uint64_t frame;
    size_t counter; /* in the comparison's counters; 0 is the command count */
    struct counter_value base, new_value;
    bool in_base, in_new; /* the row exists in that run */
    double change, percent;
    bool gated;                     /* a rule applied */
    const struct gate_rule *broken; /* the rule it breaks, or NULL */
};

struct run_comparison {
    const struct run_digest *base, *new_run;
    struct compare_counter *counters; /* [0]: commands, then the union, base's order first */
    size_t counter_count;
    struct compare_item *items; /* rows in digest order, each row's counters in order */
    size_t item_count;
    size_t broken_count, gated_count;
};

/* Compares; false without memory. */
bool run_compare(const struct run_digest *base, const struct run_digest *new_run,
                 const struct gate_rules *rules, struct run_comparison *out);
void run_comparison_free(struct run_comparison *c);

/* The item of the run's total for a counter. */
const struct compare_item *run_comparison_total(const struct run_comparison *c, size_t counter);

#endif
