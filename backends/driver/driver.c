/*
 * The driver backend: counters the real GPU measured under the program. The
 * front ends bracket each draw and dispatch with their API's timestamp and
 * pipeline-statistics queries (tally_device_info.measures says which) and
 * hand the results back through each submission's measurement reader; this
 * backend turns one measurement into raw counts. Draw, dispatch and
 * workgroup counts come from the commands themselves, exactly.
 */
#include <stdlib.h>
#include <string.h>

#include "driver.h"

/* Symbols of the pipeline statistics, in tally_measure_bits order. */
static const char *const statistic_symbols[TALLY_STATISTIC_COUNT] = {
    "IaVertices",         "IaPrimitives",        "VsInvocations",     "GsInvocations",
    "GsPrimitives",       "ClipperInvocations",  "ClipperPrimitives", "FsInvocations",
    "TessControlPatches", "TessEvalInvocations", "CsInvocations",
};

struct driver {
    const struct tally_catalogue *catalogue;
    uint32_t measures;
    /* Raw slots in this device's catalogue, TALLY_NOT_RAW where not offered. */
    uint32_t statistic_slot[TALLY_STATISTIC_COUNT];
    uint32_t draws_slot, dispatches_slot, workgroups_slot;
    uint32_t time_slot; /* GpuTime's */
};

static uint32_t raw_slot(const struct tally_catalogue *cat, const char *symbol)
{
    uint32_t index;
    if (tally_catalogue_find(cat, symbol, &index) != TALLY_OK)
        return TALLY_NOT_RAW;
    return cat->counters[index].raw_index;
}

static tally_status create(const tally_device_options *options, void **state, char *error,
                           size_t error_size)
{
    (void)error;
    (void)error_size;
    struct driver *g = calloc(1, sizeof(*g));
    if (!g)
        return TALLY_ERROR_OUT_OF_MEMORY;
    g->catalogue = driver_catalogue_for(options->measurable);
    if (!g->catalogue) {
        free(g);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < TALLY_STATISTIC_COUNT; i++) {
        g->statistic_slot[i] = raw_slot(g->catalogue, statistic_symbols[i]);
        if (g->statistic_slot[i] != TALLY_NOT_RAW)
            g->measures |= 1u << i;
    }
    g->time_slot = raw_slot(g->catalogue, "GpuTime");
    if (g->time_slot != TALLY_NOT_RAW)
        g->measures |= TALLY_MEASURE_TIME;
    g->draws_slot = raw_slot(g->catalogue, "DrawCalls");
    g->dispatches_slot = raw_slot(g->catalogue, "Dispatches");
    g->workgroups_slot = raw_slot(g->catalogue, "CsWorkgroups");
    *state = g;
    return TALLY_OK;
}

static void destroy(void *state)
{
    free(state);
}

static const struct tally_catalogue *catalogue(const void *state)
{
    return ((const struct driver *)state)->catalogue;
}

static const char *device_name(const void *state)
{
    (void)state;
    return "the GPU under the program (driver backend)";
}

/* The engine's clock counts nanoseconds; there is no core clock to count. */
static uint64_t nanosecond_hz(const void *state)
{
    (void)state;
    return 1000000000u;
}

static void constants(const void *state, uint64_t *values)
{
    (void)state;
    (void)values; /* the driver catalogue has none */
}

static uint32_t measures(const void *state)
{
    return ((const struct driver *)state)->measures;
}

static uint32_t raw_measures(const void *state, uint32_t slot)
{
    const struct driver *g = state;
    if (slot == TALLY_NOT_RAW)
        return 0;
    if (slot == g->time_slot)
        return TALLY_MEASURE_TIME;
    for (uint32_t i = 0; i < TALLY_STATISTIC_COUNT; i++)
        if (g->statistic_slot[i] == slot)
            return 1u << i;
    return 0; /* the commands' own counts */
}

static void add(uint64_t *raw, uint32_t slot, uint64_t value)
{
    if (slot != TALLY_NOT_RAW)
        raw[slot] += value;
}

/* The local size a dispatch ran with, as the engine applies it. */
static uint64_t local_invocations(const tally_dispatch *d, const tally_program_desc *program)
{
    uint64_t n = 1;
    const tally_stage_profile *cs = program ? &program->stages[TALLY_STAGE_COMPUTE] : NULL;
    for (int axis = 0; axis < 3; axis++) {
        uint32_t size = d->local_size[axis];
        if (!size && cs && cs->present)
            size = cs->local_size[axis];
        n *= size ? size : 1;
    }
    return n;
}

/* What a unit of work of this type would need measured among what the
 * device measures: a draw its time and graphics statistics, a dispatch its
 * time (its invocations, where no query measured them, are the NDRange's),
 * a transfer its time. A statistic of the other kind is 0 by what the work
 * is, not unknown. */
static uint32_t needed_for(const struct driver *g, uint32_t type)
{
    uint32_t graphics = TALLY_MEASURE_STATISTICS & ~TALLY_MEASURE_CS_INVOCATIONS;
    uint32_t needed = TALLY_MEASURE_TIME | (type == TALLY_WORK_DRAW ? graphics : 0);
    return needed & g->measures;
}

static uint32_t execute_measured(void *state, const struct tally_work *work,
                                 const struct tally_exec_state *exec, const tally_measurement *m,
                                 uint64_t *raw)
{
    const struct driver *g = state;
    uint32_t valid = m ? m->valid : 0;
    for (uint32_t i = 0; i < TALLY_STATISTIC_COUNT; i++)
        if (valid & (1u << i))
            add(raw, g->statistic_slot[i], m->statistics[i]);
    if (work->type == TALLY_WORK_DRAW) {
        add(raw, g->draws_slot, 1);
    } else if (work->type == TALLY_WORK_DISPATCH) {
        const tally_dispatch *d = work->u.dispatch;
        uint64_t groups = (uint64_t)d->groups[0] * d->groups[1] * d->groups[2];
        add(raw, g->dispatches_slot, 1);
        add(raw, g->workgroups_slot, groups);
        /* Where no query measured them (OpenCL), invocations are exactly the
         * workgroups times the local size. */
        if (!(valid & TALLY_MEASURE_CS_INVOCATIONS))
            add(raw, g->statistic_slot[10], groups * local_invocations(d, exec->program));
    }
    return m ? needed_for(g, work->type) & ~valid : 0;
}

/* Never called: execute_measured takes every unit of work (into raw the
 * engine zeroed). */
static uint64_t execute(void *state, const struct tally_work *work,
                        const struct tally_exec_state *exec, uint64_t *raw)
{
    (void)execute_measured(state, work, exec, NULL, raw);
    return 0;
}

const struct tally_backend_ops tally_driver_backend = {
    .name = "driver",
    .description = "the real GPU under the program, measured by its own queries",
    .static_catalogue = NULL,
    .catalogue_for = driver_catalogue_for,
    .create = create,
    .destroy = destroy,
    .catalogue = catalogue,
    .device_name = device_name,
    .core_clock_hz = nanosecond_hz,
    .timestamp_frequency_hz = nanosecond_hz,
    .constants = constants,
    .execute = execute,
    .measures = measures,
    .raw_measures = raw_measures,
    .execute_measured = execute_measured,
};
