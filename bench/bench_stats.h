/* Order statistics of a benchmark's samples (bench_stats.c). */
#ifndef TALLY_BENCH_STATS_H
#define TALLY_BENCH_STATS_H

/* Each sorts values (n of them, n > 0) in place. */

/* The median: the middle value, or the mean of the two middle ones. */
double bench_median(double *values, int n);

/* The value at `share` (0 to 1) of the way from the least to the most,
 * the nearest sample's. */
double bench_quantile(double *values, int n, double share);

#endif
