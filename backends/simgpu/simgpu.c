/* simgpu's backend entry: creating a device from a profile, and its identity. */
#include <stdio.h>
#include <stdlib.h>

#include "simgpu.h"

static tally_status create(const tally_device_options *options, void **state, char *error,
                           size_t error_size)
{
    const char *profile_path = options->profile_path;
    struct simgpu *g = calloc(1, sizeof(*g));
    if (!g)
        return TALLY_ERROR_OUT_OF_MEMORY;
    simgpu_profile_defaults(&g->profile);
    tally_status s = TALLY_OK;
    if (profile_path && *profile_path)
        s = simgpu_profile_load(&g->profile, profile_path, error, error_size);
    if (s == TALLY_OK &&
        !(g->cache_ring = calloc(g->profile.vertex_cache_entries, sizeof(uint32_t))))
        s = TALLY_ERROR_OUT_OF_MEMORY;
    if (s != TALLY_OK) {
        free(g);
        return s;
    }
    simgpu_divisors_init(g);
    snprintf(g->name, sizeof(g->name), "simgpu %u cores @ %u MHz",
             (unsigned)g->profile.shader_cores, (unsigned)g->profile.core_clock_mhz);
    *state = g;
    return TALLY_OK;
}

static void destroy(void *state)
{
    struct simgpu *g = state;
    free(g->cache_ring);
    free(g);
}

static const struct tally_catalogue *catalogue(const void *state)
{
    (void)state;
    return &simgpu_catalogue;
}

static const char *device_name(const void *state)
{
    return ((const struct simgpu *)state)->name;
}

static uint64_t core_clock_hz(const void *state)
{
    return ((const struct simgpu *)state)->profile.core_clock_mhz * 1000000u;
}

static uint64_t timestamp_frequency_hz(const void *state)
{
    return ((const struct simgpu *)state)->profile.timestamp_frequency_hz;
}

static void constants(const void *state, uint64_t *values)
{
    const uint64_t *params = (const uint64_t *)&((const struct simgpu *)state)->profile;
    for (uint32_t i = 0; i < simgpu_catalogue.constant_count; i++)
        values[i] =
            params[simgpu_catalogue.constant_parameters[i]] * simgpu_catalogue.constant_scales[i];
}

const struct tally_backend_ops tally_simgpu_backend = {
    .name = "simgpu",
    .description = "a deterministic simulated GPU",
    .static_catalogue = &simgpu_catalogue,
    .create = create,
    .destroy = destroy,
    .catalogue = catalogue,
    .device_name = device_name,
    .core_clock_hz = core_clock_hz,
    .timestamp_frequency_hz = timestamp_frequency_hz,
    .constants = constants,
    .execute = simgpu_execute,
};
