/*
 * tally diff's model, between reading the runs (diff.c) and printing the
 * comparison: diff_text.c for people (terminal, Markdown), diff_data.c for
 * machines (JSON), diff_junit.c for CI dashboards (JUnit XML).
 */
#ifndef TALLY_DIFF_H
#define TALLY_DIFF_H

#include <stdio.h>

#include "command_match.h"
#include "gate_rules.h"
#include "run_compare.h"
#include "run_digest.h"

enum diff_format { DIFF_TABLE, DIFF_MARKDOWN, DIFF_JSON };

struct diff_side {
    char *name; /* what was read: a report's path, paths joined, or a baseline's */
    struct run_digest *digest;
    bool baseline; /* read from a baseline file */
};

struct diff {
    struct diff_side base, new_run;
    struct run_comparison comparison;
    bool matched; /* commands were matched (two reports) */
    struct command_matching matching;
    const struct gate_rules *rules;
    size_t top; /* movers per counter */
};

/* Failure lines printed before "and N more" (JUnit and JSON have all). */
enum { DIFF_FAILURES_SHOWN = 20 };

bool diff_print_text(const struct diff *diff, FILE *out, bool markdown);
bool diff_print_json(const struct diff *diff, FILE *out);
/* Writes the JUnit XML file; false with why in error. */
bool diff_write_junit(const struct diff *diff, const char *path, char *error, size_t size);

/* Shared by the outputs. */

/* "the run's total", "frame 3", "label \"trees\"", ... */
void diff_subject(const struct compare_item *item, char *out, size_t size);
/* One sentence naming the counter, where, the change and the rule. */
void diff_failure_message(const struct diff *diff, const struct compare_item *item, char *out,
                          size_t size);
/* The rules in force, comma-separated ("exact>0, modeled>1%, ..."). */
void diff_rules_text(const struct gate_rules *rules, char *out, size_t size);

/* The items that moved most for a counter among label, pipeline and API
 * groups (scopes), largest |change| first: their indices in the
 * comparison, at most `most`; how many. */
size_t diff_movers(const struct diff *diff, size_t counter, size_t *indices, size_t most);

#endif
