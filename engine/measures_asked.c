/*
 * Which of a measuring backend's measurements anyone reads: a front end
 * whose API charges per statistic (GL has one query per statistic) brackets
 * its commands with only these. The report and the trace read their
 * counters' raw inputs (fixed when the device opens); a sampler or a
 * timeline reader may read any counter, so while one is open everything
 * is asked.
 */
#include "engine.h"

uint32_t tally_device_measures_of(const tally_device *d, const uint32_t *counters, uint32_t count)
{
    if (!d || !d->info.measures)
        return 0;
    if (!d->backend->raw_measures)
        return d->info.measures;
    uint32_t bits = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t slots[16];
        uint32_t n = tally_catalogue_counter_raw_inputs(d->catalogue, counters[i], slots, 16);
        if (n > 16)
            return d->info.measures; /* more inputs than looked at: ask for all */
        for (uint32_t k = 0; k < n; k++)
            bits |= d->backend->raw_measures(d->backend_state, slots[k]);
    }
    return bits & d->info.measures;
}

void tally_measures_asked_open(struct tally_device *d)
{
    d->report_measures = d->report || d->trace ? tally_device_measures_of(d, d->report_counters,
                                                                          d->report_counter_count)
                                               : 0;
}

uint32_t tally_device_measures_asked(const tally_device *d)
{
    if (!d)
        return 0;
    if (atomic_load_explicit(&((struct tally_device *)d)->sampler_count, memory_order_relaxed) ||
        atomic_load_explicit(&((struct tally_device *)d)->timeline_active, memory_order_relaxed))
        return d->info.measures;
    return d->report_measures;
}
