/*
 * The engine device the shim records into: the process-wide shared device,
 * acquired on the first queue and held until exit, when every record left
 * (queues, events and kernels the program never released) is submitted and freed
 * before the device finishes its reports.
 */
#include <stdlib.h>

#include "shim.h"

static tally_device *device;
static pthread_once_t session_once = PTHREAD_ONCE_INIT;

static void end_session(void)
{
    queues_destroy_all();
    profiling_finish_all();
    events_destroy_all();
    kernels_destroy_all();
    kernel_programs_release();
    /* The shared device closes itself at exit (its handler ran first
     * registered, so it runs after this one). */
}

static void start_session(void)
{
    tally_device *d = NULL;
    /* A measuring backend offers OpenCL what its commands say (work-groups
     * and work-items from the NDRange) and GPU time from event profiling,
     * which every OpenCL device has (docs/driver.md). */
    if (tally_device_acquire_shared_measuring(TALLY_MEASURE_COMMANDS |
                                                  TALLY_MEASURE_CS_INVOCATIONS | TALLY_MEASURE_TIME,
                                              &d) != TALLY_OK) {
        tally_log(TALLY_LOG_WARN, "OpenCL shim: the counter device did not open (see above); "
                                  "cl_codeplay_performance_counters is not offered and OpenCL "
                                  "commands pass through unmeasured");
        return;
    }
    device = d;
    atexit(end_session);
}

tally_device *session_device(void)
{
    pthread_once(&session_once, start_session);
    return device;
}

/* For tests and tools: the side records alive now (queues the program has
 * not released, events of counter-enabled queues it still holds). */
__attribute__((visibility("default"))) void tally_cl_shim_live_records(uint32_t *queues,
                                                                       uint32_t *events)
{
    *queues = queues_live();
    *events = events_live();
}

/* For tests: the kernel records alive now (kernels the program holds). */
__attribute__((visibility("default"))) void tally_cl_shim_live_kernel_records(uint32_t *kernels)
{
    *kernels = kernels_live();
}
