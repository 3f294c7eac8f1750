/*
 * The rules that decide tally diff's exit status.
 *
 *   RULE      := [SCOPES ':'] SELECTOR OP THRESHOLD
 *   SCOPES    := SCOPE {',' SCOPE}   total | frame | label | pipeline | api_name
 *   SELECTOR  := a counter's symbol | commands | exact | conditional | modeled
 *              | measured | unknown | '*'
 *   OP        := '>' | '<'
 *   THRESHOLD := [ '+' | '-' ] NUMBER [ '%' ]
 *
 * A rule breaks where the change from base to new, in the counter's units
 * or (with '%') relative to the base, is beyond the threshold:
 *   X>T     |change| > T   (either way)       IaVertices>0, GpuTime>5%
 *   X>+T    change > +T    (an increase)      GpuTime>+5%
 *   X<-T    change < -T    (a decrease)       FsInvocations<-10%
 * A change from 0 is infinitely many percent. Without SCOPES a rule holds
 * everywhere: the run's total, each frame, label, pipeline and API command.
 *
 * A counter is gated by every rule that selects it (by symbol, by its
 * exactness, or '*'). Only a counter no rule selects falls to the
 * defaults: exact counters and the command counts must not change
 * (exact>0); conditional, modeled and unknown ones must stay within the
 * tolerance (1 % unless told); measured ones never gate.
 */
#ifndef TALLY_ANSWERS_GATE_RULES_H
#define TALLY_ANSWERS_GATE_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "counter_value.h"
#include "report_reader.h"
#include "run_digest.h"

/* The pseudo-counter of how many commands a group holds: exact. */
extern const char gate_commands_counter[];

#define GATE_DEFAULT_TOLERANCE_PERCENT 1.0

enum rule_selector { SELECT_COUNTER, SELECT_EXACTNESS, SELECT_ALL };

struct gate_rule {
    char text[96];   /* as written, or the default's spelling */
    const char *why; /* a default's reason; NULL for a rule the user gave */
    unsigned scopes; /* 1 << digest_scope */
    enum rule_selector selector;
    char symbol[64];                  /* SELECT_COUNTER */
    enum counter_exactness exactness; /* SELECT_EXACTNESS */
    bool below;                       /* '<' */
    bool signed_threshold;
    bool percent;
    double threshold; /* signed when signed_threshold */
};

/* Parses one rule; false with why in error. */
bool gate_rule_parse(const char *text, struct gate_rule *rule, char *error, size_t size);

struct gate_rules {
    struct gate_rule *rules;
    size_t count;
    struct gate_rule defaults[4];
    size_t default_count;
};

/* The defaults at a tolerance (percent); with_defaults false: none. */
void gate_rules_init(struct gate_rules *rules, bool with_defaults, double tolerance);
/* Adds a parsed rule; false without memory. */
bool gate_rules_add(struct gate_rules *rules, const struct gate_rule *rule);
void gate_rules_free(struct gate_rules *rules);

/*
 * The first rule a change of a counter (symbol, exactness) at a scope
 * breaks, or NULL. *gated says whether any rule applied to it at all.
 */
const struct gate_rule *gate_rules_check(const struct gate_rules *rules, const char *symbol,
                                         enum counter_exactness exactness, enum digest_scope scope,
                                         const struct counter_value *base,
                                         const struct counter_value *new_value, bool *gated);

/* The change new - base, and relative to |base| in percent (infinite
 * from 0, 0 for no change). */
double gate_change(const struct counter_value *base, const struct counter_value *new_value);
double gate_change_percent(const struct counter_value *base, const struct counter_value *new_value);

#endif
