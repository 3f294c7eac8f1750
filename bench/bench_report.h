/* tally_bench's report figures (bench_report.c). */
#ifndef TALLY_BENCH_REPORT_H
#define TALLY_BENCH_REPORT_H

#include <stdbool.h>
#include <stdint.h>

/* The 15 counters both figures report. */
extern const char bench_report_counters[];

/* Rows per second of process CPU time for tally_report_write of `rows` rows. */
double bench_report_rows_per_second(uint64_t rows);

/* Process CPU ns (every thread) per submitted draw of a frame of `draws`
 * one-triangle draws recorded once and submitted `submits` times, with or
 * without a per-draw CSV report; *bytes: the report's size. */
double bench_report_frame(bool report, uint32_t draws, uint32_t submits, uint64_t *bytes);

#endif
