/*
 * The executor's half for backends that measure the real GPU: each
 * submission's measurement reader, the measurement a unit of work carries,
 * and the clock, which follows the GPU's measured time instead of a model's
 * cycles.
 *
 * On the engine's clock, in realtime mode: a calibrated measurement
 * (TALLY_MEASURE_TIME_MONOTONIC: the front end put the GPU's timestamps on
 * CLOCK_MONOTONIC) is where the GPU measured it, CLOCK_MONOTONIC = epoch +
 * engine time. Otherwise it is placed (a correlation): the GPU's timestamps
 * of one submission keep their spacing, and the submission's first measured
 * timestamp lands where the engine's clock stands when it starts the
 * submission (no earlier than the submit call). Either way a unit of work
 * begins at its measured begin, or at the end of the previous one if that
 * is later, and ends at its measured end, never before it began: per-command
 * times tile the submission and sum to no more than its GPU span even where
 * the GPU overlapped two commands. A unit without a measured time takes
 * none. In virtual clock mode only the measured durations count.
 *
 * A measured group (a coarser granularity: one query around a render pass,
 * say) is carried by its first unit of work; the others take a measurement
 * that says their statistics were measured (in the group's) and are 0, so
 * a backend adds no estimate of its own for them, and no time.
 */
#include "engine.h"

void tally_measured_begin_submission(struct tally_device *d, struct tally_pending *p)
{
    struct tally_executor *e = &d->exec;
    const tally_measurement_reader *reader =
        p->measurement_reader.read ? &p->measurement_reader : NULL;
    if (reader && reader->wait)
        reader->wait(reader->user);
    e->measurement_reader = reader;
    e->has_measurement = false;
    e->group_valid = 0;
    e->anchored = false;
}

void tally_measured_end_submission(struct tally_device *d)
{
    d->exec.measurement_reader = NULL;
    d->exec.has_measurement = false;
    d->exec.group_valid = 0;
}

void tally_measured_select(struct tally_device *d, uint32_t type, uint64_t key)
{
    struct tally_executor *e = &d->exec;
    const tally_measurement_reader *reader = e->measurement_reader;
    e->group_valid = 0;
    e->has_measurement = false;
    if (type == TALLY_CMD_MEASURE_END)
        return;
    e->has_measurement = reader && reader->read(reader->user, key, &e->measurement);
    if (type == TALLY_CMD_MEASURE_GROUP && e->has_measurement)
        e->group_valid = e->measurement.valid & TALLY_MEASURE_STATISTICS;
}

/* A CLOCK_MONOTONIC time on the engine's clock. */
static uint64_t calibrated(const struct tally_device *d, uint64_t monotonic_ns)
{
    return monotonic_ns > d->epoch_cpu_ns ? monotonic_ns - d->epoch_cpu_ns : 0;
}

/* A GPU timestamp of the submission on the engine's clock. */
static uint64_t placed(struct tally_executor *e, uint64_t gpu_ns)
{
    if (!e->anchored) {
        e->anchor_gpu_ns = gpu_ns;
        e->anchor_engine_ns = e->gpu_ns;
        e->anchored = true;
    }
    return gpu_ns > e->anchor_gpu_ns ? e->anchor_engine_ns + (gpu_ns - e->anchor_gpu_ns)
                                     : e->anchor_engine_ns;
}

uint64_t tally_measured_work(struct tally_device *d, const struct tally_work *work,
                             const struct tally_exec_state *exec)
{
    struct tally_executor *e = &d->exec;
    const tally_measurement *m = e->has_measurement ? &e->measurement : NULL;
    tally_measurement in_group = {.valid = e->group_valid};
    bool group_member = !m && e->group_valid;
    if (group_member)
        m = &in_group;
    e->has_measurement = false; /* the API command's (or group's) first unit carries it */
    uint32_t unknown = d->backend->execute_measured(d->backend_state, work, exec, m, e->delta);
    e->unknown_measures = group_member ? 0 : unknown;
    uint64_t begin = e->gpu_ns, end = begin;
    if (m && (m->valid & TALLY_MEASURE_TIME) && m->end_ns >= m->begin_ns) {
        if (d->info.clock == TALLY_CLOCK_VIRTUAL) {
            end = begin + (m->end_ns - m->begin_ns);
        } else {
            bool monotonic = m->valid & TALLY_MEASURE_TIME_MONOTONIC;
            uint64_t at = monotonic ? calibrated(d, m->begin_ns) : placed(e, m->begin_ns);
            uint64_t until = monotonic ? calibrated(d, m->end_ns) : placed(e, m->end_ns);
            begin = at > e->gpu_ns ? at : e->gpu_ns;
            end = until > begin ? until : begin;
        }
    }
    e->gpu_ns = end;
    return begin;
}
