/*
 * GPU times on CLOCK_MONOTONIC from a front end's clock pair (the GL and
 * OpenCL shims' calibrations; see docs/driver.md, "GPU time").
 */
#include "engine.h"

/* A GPU time on CLOCK_MONOTONIC; false before CLOCK_MONOTONIC's start, or
 * after `read_ns` by more than the pair's deviation: the GPU wrote every
 * time before it was read, so the pair cannot be trusted there. */
static bool to_monotonic(const tally_clock_pair *pair, uint64_t gpu_ns, uint64_t read_ns,
                         uint64_t *out)
{
    int64_t offset = (int64_t)(gpu_ns - pair->gpu_ns);
    if (offset < 0 && (uint64_t)-offset > pair->monotonic_ns)
        return false;
    uint64_t at = pair->monotonic_ns + (uint64_t)offset;
    if (at > read_ns + pair->deviation_ns)
        return false;
    *out = at;
    return true;
}

tally_clock_pair tally_clock_pair_bracketed(uint64_t gpu_ns, uint64_t before, uint64_t after)
{
    uint64_t width = after >= before ? after - before : 0;
    return (tally_clock_pair){
        .gpu_ns = gpu_ns, .monotonic_ns = before + width / 2, .deviation_ns = (width + 1) / 2};
}

uint64_t tally_measurements_to_monotonic(const tally_clock_pair *pair, tally_measurement *values,
                                         uint32_t count, uint64_t read_ns)
{
    if (!pair || !values)
        return 0;
    uint64_t began = 0, latest = 0;
    for (uint32_t i = 0; i < count; i++) {
        tally_measurement *v = &values[i];
        uint64_t begin, end;
        if (!(v->valid & TALLY_MEASURE_TIME) || v->end_ns < v->begin_ns ||
            !to_monotonic(pair, v->begin_ns, read_ns, &begin) ||
            !to_monotonic(pair, v->end_ns, read_ns, &end))
            continue;
        v->begin_ns = begin;
        v->end_ns = end;
        v->valid |= TALLY_MEASURE_TIME_MONOTONIC;
        if (!began || begin < began)
            began = begin;
        latest = end > latest ? end : latest;
    }
    /* Within the deviation a converted time may lie after read_ns, yet each
     * was written before it was read: that narrows the pair, so the times
     * move back together (by at most the deviation) to end by read_ns. */
    uint64_t late = latest > read_ns ? latest - read_ns : 0;
    for (uint32_t i = 0; late && i < count; i++)
        if (values[i].valid & TALLY_MEASURE_TIME_MONOTONIC) {
            values[i].begin_ns -= late;
            values[i].end_ns -= late;
        }
    return began ? began - late : 0;
}
