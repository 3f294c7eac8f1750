/*
 * What one pass over a run's reports adds up: per counter, the total,
 * the sum per frame, and the sums per label, per API command and per
 * pipeline or program, with the commands each holds.
 *
 * Memory grows with the distinct frames and names, never with the rows:
 * per frame 8 + 24 x (the counters tracked per frame) bytes, per name 8 +
 * 24 x (counters) bytes, at most NAME_TABLE_LIMIT names per grouping.
 * Frame numbers index a dense table, so a frame beyond AGGREGATE_MAX_FRAME
 * is refused as bad input.
 */
#ifndef TALLY_ANSWERS_RUN_AGGREGATE_H
#define TALLY_ANSWERS_RUN_AGGREGATE_H

#include "counter_value.h"
#include "report_reader.h"

enum { AGGREGATE_MAX_COUNTERS = 512 };
#define AGGREGATE_MAX_FRAME ((uint64_t)1 << 26)

/* The groupings of commands by name. */
enum aggregate_grouping { GROUP_LABEL, GROUP_API, GROUP_PIPELINE, GROUP_COUNT };

/* "label", "api_name", "pipeline" */
extern const char *const aggregate_grouping_names[GROUP_COUNT];

/* The counter standing in for GpuTime in a report that has none: each
 * command's duration_ns, a measured time. */
extern const char aggregate_duration_counter[];

struct aggregate_counter {
    char *symbol;
    char *unit;
    enum counter_exactness exactness;
    bool derived;
    /* Written as decimals (a ratio, a percentage, a rate): aggregated as
     * the mean over commands, since a sum of ratios means nothing. */
    bool averaged;
};

typedef struct run_aggregate run_aggregate;

run_aggregate *run_aggregate_create(void);
void run_aggregate_free(run_aggregate *a);

/* Before any row: a report's counters join the aggregate's (the union of
 * every report's, by symbol). Its number, for run_aggregate_add_row, or
 * -1 with why in error. */
int run_aggregate_add_report(run_aggregate *a, const report_reader *reader, char *error,
                             size_t size);

/* After the reports, before the rows: which counters are summed per frame
 * (NULL: all of them; else per counter, in the aggregate's order). */
bool run_aggregate_begin(run_aggregate *a, const bool *frame_tracked, char *error, size_t size);

/* Adds a row of report number `report`; false with why in error. */
bool run_aggregate_add_row(run_aggregate *a, int report, const struct report_row *row, char *error,
                           size_t size);

/* After a report's last row: keeps what its metadata says (a JSON
 * report's comes after its rows). */
bool run_aggregate_end_report(run_aggregate *a, int report, const report_reader *reader);

/* After the rows: settles which counters are averaged. */
void run_aggregate_end(run_aggregate *a);

size_t run_aggregate_counter_count(const run_aggregate *a);
const struct aggregate_counter *run_aggregate_counter(const run_aggregate *a, size_t k);
/* The counter's index, or -1. */
int run_aggregate_find(const run_aggregate *a, const char *symbol);

uint64_t run_aggregate_commands(const run_aggregate *a);
const struct counter_sum *run_aggregate_total(const run_aggregate *a, size_t k);

/* Frames are numbered 0 .. run_aggregate_frame_limit() - 1; a number
 * no command had has 0 commands. */
uint64_t run_aggregate_frame_limit(const run_aggregate *a);
uint64_t run_aggregate_frame_commands(const run_aggregate *a, uint64_t frame);
/* NULL when counter k is not tracked per frame. */
const struct counter_sum *run_aggregate_frame_sum(const run_aggregate *a, uint64_t frame, size_t k);

/* Whether some command had a pipeline or program. */
bool run_aggregate_has_pipeline(const run_aggregate *a);
size_t run_aggregate_group_count(const run_aggregate *a, enum aggregate_grouping g);
const char *run_aggregate_group_name(const run_aggregate *a, enum aggregate_grouping g, size_t i);
uint64_t run_aggregate_group_commands(const run_aggregate *a, enum aggregate_grouping g, size_t i);
const struct counter_sum *run_aggregate_group_sum(const run_aggregate *a, enum aggregate_grouping g,
                                                  size_t i, size_t k);

/* The metadata kept of each report. */
enum aggregate_metadata {
    META_BACKEND,
    META_DEVICE,
    META_CLOCK,
    META_PROGRAM,
    META_ARGUMENTS,
    META_PID,
    META_TALLY_VERSION,
    META_COUNT
};
extern const char *const aggregate_metadata_keys[META_COUNT];

/* A report's metadata value, or "" where it has none. */
const char *run_aggregate_metadata(const run_aggregate *a, size_t report,
                                   enum aggregate_metadata key);
size_t run_aggregate_report_count(const run_aggregate *a);
const char *run_aggregate_report_path(const run_aggregate *a, size_t report);

/* The value a summary shows for a sum over `commands` commands of
 * counter k: the sum, or the mean of an averaged counter. */
double aggregate_shown(const run_aggregate *a, size_t k, const struct counter_sum *sum,
                       uint64_t commands);

#endif
