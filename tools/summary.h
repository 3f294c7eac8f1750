/*
 * tally summary's model, between reading the reports (summary.c) and
 * printing them (summary_output.c): one run per column, each the sum of
 * the reports given or, side by side, one report.
 */
#ifndef TALLY_SUMMARY_H
#define TALLY_SUMMARY_H

#include <stdio.h>

#include "run_aggregate.h"
#include "top_commands.h"

enum summary_format { SUMMARY_TABLE, SUMMARY_MARKDOWN, SUMMARY_JSON, SUMMARY_CSV };

/* A top command's shown values. */
enum { SHOWN_TIME };

struct summary_run {
    char *name; /* the report's path, or the paths summed joined by " + " */
    run_aggregate *aggregate;
    top_commands *top;
    int by;   /* the ranking counter's index in the aggregate, or -1 */
    int time; /* GpuTime's (or duration_ns's), or -1 */
};

struct summary {
    struct summary_run *runs;
    size_t run_count;
    size_t top;                     /* commands listed, and names per group table */
    const char *by;                 /* the ranking counter */
    const char *frame_counters[16]; /* percentiles per frame of these (time first) */
    size_t frame_counter_count;
    enum summary_format format;
};

/* Prints the summary in its format; false when writing failed. */
bool summary_print(const struct summary *summary, FILE *out);

#endif
