/*
 * Percentiles of a counter over a run's frames: each frame's value (its
 * sum, or its mean for an averaged counter) of every frame that had a
 * command. Nearest rank: the p-th percentile is the value at rank
 * ceil(p/100 x frames) in ascending order, always a value some frame had.
 */
#ifndef TALLY_ANSWERS_FRAME_STATS_H
#define TALLY_ANSWERS_FRAME_STATS_H

#include <stdbool.h>

#include "run_aggregate.h"

struct frame_stats {
    uint64_t frames;
    double p50, p90, p99, max;
};

/* False without memory, or when counter k is not tracked per frame. */
bool frame_stats_of(const run_aggregate *a, size_t k, struct frame_stats *out);

#endif
