/* The rows of the report benchmarks (bench_rows.c): 15 counters' values
 * varying like a frame's, made before any clock starts, and the records
 * they go with. */
#ifndef TALLY_BENCH_ROWS_H
#define TALLY_BENCH_ROWS_H

#include <stdint.h>

#include <tally/tally.h>

/* The 15 counters the report figures write. */
extern const char bench_report_counters[];

/* The values of BENCH_ROWS_TABLE rows, cycled through. */
struct bench_rows;

/* The rows of `count` columns (catalogue indices), or NULL without memory. */
struct bench_rows *bench_rows_make(const tally_catalogue *cat, const uint32_t *columns,
                                   uint32_t count);
void bench_rows_free(struct bench_rows *rows);

/* The 15 counters' catalogue indices in columns[32]; how many were found. */
uint32_t bench_rows_columns(const tally_catalogue *cat, uint32_t columns[32]);

/* Row i's values (from 0, cycled). */
const tally_value *bench_rows_values(const struct bench_rows *rows, uint64_t i);

/* The record of row i: the strings and stream of bench_rows_record, a new
 * submission every 1000 rows, each row beginning where the previous ended
 * (*ns: the previous row's end, advanced to this one's). */
void bench_rows_next_record(tally_command_record *record, const struct bench_rows *rows, uint64_t i,
                            uint64_t *ns);

/* The records' first state: a draw's names and label. */
extern const tally_command_record bench_rows_record;

#endif
