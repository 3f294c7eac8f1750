/*
 * A workload the sampling benchmark runs: something that renders frames on
 * the process's shared device. workload_streams.c records frames through
 * libtally streams directly, isolating the engine. A real Vulkan program under
 * `tally run --sample` is measured by bench_md_vulkan.c instead, as a child
 * process, since TALLY_SAMPLE samples the process's own shared device.
 */
#ifndef TALLY_BENCH_MD_WORKLOAD_H
#define TALLY_BENCH_MD_WORKLOAD_H

#include <tally/tally.h>

struct workload {
    const char *name;
    const char *description;
    /* Prepares to render on device; returns the workload's state or NULL. */
    void *(*open)(tally_device *device);
    /* Renders one frame and waits until the GPU finished it (like a
     * vkQueueWaitIdle or glFinish at the end of a frame). */
    void (*frame)(void *state);
    void (*close)(void *state);
};

extern const struct workload streams_paced_workload;
extern const struct workload streams_unpaced_workload;

#endif
