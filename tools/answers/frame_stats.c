/* Owns the percentiles of per-frame values (frame_stats.h). */
#include "frame_stats.h"

#include <math.h>
#include <stdlib.h>

static int ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double nearest_rank(const double *sorted, uint64_t n, unsigned percent)
{
    uint64_t rank = (percent * n + 99) / 100; /* ceil(p/100 x n), at least 1 */
    return sorted[(rank ? rank : 1) - 1];
}

bool frame_stats_of(const run_aggregate *a, size_t k, struct frame_stats *out)
{
    *out = (struct frame_stats){0};
    uint64_t limit = run_aggregate_frame_limit(a);
    if (limit == 0)
        return true;
    if (!run_aggregate_frame_sum(a, 0, k))
        return false;
    double *values = malloc(limit * sizeof *values);
    if (!values)
        return false;
    uint64_t n = 0;
    for (uint64_t f = 0; f < limit; f++) {
        uint64_t commands = run_aggregate_frame_commands(a, f);
        if (commands)
            values[n++] = aggregate_shown(a, k, run_aggregate_frame_sum(a, f, k), commands);
    }
    qsort(values, n, sizeof *values, ascending);
    out->frames = n;
    if (n) {
        out->p50 = nearest_rank(values, n, 50);
        out->p90 = nearest_rank(values, n, 90);
        out->p99 = nearest_rank(values, n, 99);
        out->max = values[n - 1];
    }
    free(values);
    return true;
}
