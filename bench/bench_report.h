/* tally_bench's report figures (bench_report.c). */
#ifndef TALLY_BENCH_REPORT_H
#define TALLY_BENCH_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "bench_rows.h" /* bench_report_counters: the 15 both figures report */

/* The ways rows can reach a report. */
enum bench_rows_path {
    BENCH_ROWS_PUBLIC, /* tally_report_write, on the calling thread */
    BENCH_ROWS_ENGINE, /* the engine's report ring and writer thread */
};

/* Rows per second of process CPU time (every thread) for `rows` rows
 * the `way` given; *user_ns: user CPU per row; *row_bytes: bytes per row. */
double bench_report_rows_per_second(uint64_t rows, enum bench_rows_path way, double *user_ns,
                                    double *row_bytes);

/* Process CPU ns (every thread) per submitted draw of a frame of `draws`
 * one-triangle draws recorded once and submitted `submits` times, with or
 * without a per-draw CSV report; *bytes: the report's size. */
double bench_report_frame(bool report, uint32_t draws, uint32_t submits, uint64_t *bytes);

/* Section 3 of tally_bench: the rows figures and the frame's, idle and
 * reporting, each over interleaved rounds (medians). */
struct bench_report_figures {
    uint64_t rows;            /* a round's, of each path */
    int row_rounds;           /* each rows figure below is the median of these rounds */
    double rows_per_s;        /* process CPU, user and system: tally_report_write */
    double rows_user_ns;      /* user CPU per row */
    double engine_rows_per_s; /* the same through the engine's ring and writer thread */
    double row_bytes;         /* CSV bytes per row */
    /* tally_report_write's slowest and fastest rounds */
    double rows_slowest_per_s, rows_fastest_per_s;
    /* the clock around the rows' rounds (bench_clock_ghz: 0 unknown), by
     * which their figures are also given in cycles a row */
    double clock_ghz;
    int rounds;
    double idle_ns, report_ns; /* frame CPU ns per submitted draw */
    uint64_t frame_bytes;
};

struct bench_report_figures bench_report_run(bool quick);
void bench_report_describe(const struct bench_report_figures *f);

#endif
