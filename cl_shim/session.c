/*
 * The engine device the shim records into: the process-wide shared device,
 * acquired on the first queue and held until exit, when every record left
 * (queues and events the program never released) is submitted and freed
 * before the device finishes its reports.
 */
#include <stdlib.h>

#include "shim.h"

static tally_device *device;
static tally_program *kernel_program;
static pthread_once_t session_once = PTHREAD_ONCE_INIT;

static void end_session(void)
{
    queues_destroy_all();
    events_destroy_all();
    if (kernel_program)
        tally_program_release(kernel_program);
    kernel_program = NULL;
    /* The shared device closes itself at exit (its handler ran first
     * registered, so it runs after this one). */
}

/*
 * Kernels are not compiled by the shim, so their instruction mix is not
 * known: every kernel is profiled as one work-item executing one ALU
 * instruction, one load and one store. CsInvocations and CsWorkgroups
 * depend only on the dispatch's shape and are exact.
 */
static tally_program *create_kernel_program(tally_device *d)
{
    tally_program_desc desc = {.name = "OpenCL kernel"};
    tally_stage_profile *cs = &desc.stages[TALLY_STAGE_COMPUTE];
    cs->present = true;
    cs->mix = (tally_instruction_mix){.alu = 1, .load = 1, .store = 1};
    cs->local_size[0] = cs->local_size[1] = cs->local_size[2] = 1;
    tally_program *program = NULL;
    if (tally_program_create(d, &desc, &program) != TALLY_OK)
        return NULL;
    return program;
}

static void start_session(void)
{
    tally_device *d = NULL;
    if (tally_device_acquire_shared(&d) != TALLY_OK) {
        tally_log(TALLY_LOG_ERROR, "OpenCL: no engine device; commands are not recorded");
        return;
    }
    kernel_program = create_kernel_program(d);
    device = d;
    atexit(end_session);
}

tally_device *session_device(void)
{
    pthread_once(&session_once, start_session);
    return device;
}

tally_program *session_kernel_program(void)
{
    return kernel_program;
}

/* For tests and tools: the side records alive now (queues the program has
 * not released, events of counter-enabled queues it still holds). */
__attribute__((visibility("default"))) void tally_cl_shim_live_records(uint32_t *queues,
                                                                        uint32_t *events)
{
    *queues = queues_live();
    *events = events_live();
}
