/*
 * Pairs the commands of two reports as both are read, in one pass and
 * without holding either: commands are matched by frame and position
 * while the two command streams agree (the same kind, API command, label
 * and pipeline, frame after frame). Where they disagree (draws added or
 * removed), the rest of that frame is unmatched on both sides and
 * matching resumes with the next frame; those commands still count in
 * the groups' comparison (run_compare.h). For each counter both reports
 * have, the matched commands that changed most are kept (a heap of N).
 */
#ifndef TALLY_ANSWERS_COMMAND_MATCH_H
#define TALLY_ANSWERS_COMMAND_MATCH_H

#include "report_reader.h"
#include "run_aggregate.h"
#include "top_commands.h"

/* A matched command's shown values: base, new, change. */
enum { MATCH_BASE, MATCH_NEW, MATCH_CHANGE };

struct command_matching {
    uint64_t matched, changed; /* matched commands, and those with a changed value */
    uint64_t base_only, new_only;
    uint64_t diverged_frames;
    bool diverged;
    char first_divergence[320]; /* where the streams first disagreed, in words */
    /* The counters both reports have, and their biggest movers. */
    size_t counter_count;
    char **symbols;
    top_commands **movers;
};

/*
 * Reads both reports to their ends, adding every row to its aggregate
 * (report numbers base_report, new_report) and matching commands; false
 * with why in error.
 */
bool command_match_run(struct command_matching *m, size_t top, report_reader *base,
                       run_aggregate *base_aggregate, int base_report, report_reader *new_run,
                       run_aggregate *new_aggregate, int new_report, char *error, size_t size);
void command_matching_free(struct command_matching *m);

#endif
