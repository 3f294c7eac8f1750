/* GPU/CPU timestamp pairs and the spec's conversions between the clocks. */
#include <time.h>

#include "md_internal.h"

tally_status tally_md_device_get_gpu_cpu_timestamps(tally_md_device *md, uint64_t *gpu_ns,
                                                    uint64_t *cpu_ns,
                                                    uint64_t *correlation_indicator_ns)
{
    if (!md)
        return TALLY_ERROR_INVALID_ARGUMENT;
    tally_device_gpu_cpu_timestamps(md->engine, gpu_ns, cpu_ns, correlation_indicator_ns);
    return TALLY_OK;
}

uint64_t tally_md_gpu_to_monotonic_ns(uint64_t gpu_ns, uint64_t gpu_snap_ns, uint64_t cpu_snap_ns)
{
    return gpu_ns > gpu_snap_ns ? cpu_snap_ns + (gpu_ns - gpu_snap_ns)
                                : cpu_snap_ns - (gpu_snap_ns - gpu_ns);
}

static uint64_t read_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tally_md_monotonic_to_raw_ns(uint64_t monotonic_ns)
{
    uint64_t monotonic = read_clock(CLOCK_MONOTONIC);
    uint64_t raw = read_clock(CLOCK_MONOTONIC_RAW);
    return raw > monotonic ? monotonic_ns + (raw - monotonic) : monotonic_ns - (monotonic - raw);
}
