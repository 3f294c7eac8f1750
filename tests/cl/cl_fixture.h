/* What the OpenCL tests start from: PoCL's first device, a context, and
 * helpers to build kernels and create counter-enabled queues through the
 * extension, as a program would. The shim is loaded by the test's
 * environment (LD_PRELOAD, OPENCL_LAYERS or both). */
#ifndef TALLY_TEST_CL_FIXTURE_H
#define TALLY_TEST_CL_FIXTURE_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "cl_codeplay_performance_counters.h"
#include "tally/tally.h"

struct cl_fixture {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    clCreateCommandQueueWithPropertiesKHR_fn create_queue_khr;
};

/* cmocka setup/teardown allocating a struct cl_fixture. */
int cl_fixture_setup(void **state);
int cl_fixture_teardown(void **state);

/* Builds a program from source and returns its kernel `name`. */
cl_kernel build_kernel(struct cl_fixture *fx, const char *source, const char *name);
/* The Codeplay uuid of a catalogue counter, found through the device query. */
cl_uint uuid_of(struct cl_fixture *fx, const char *cl_name);
/* A queue with these counters enabled (uuids), through the KHR entry point. */
cl_command_queue counter_queue(struct cl_fixture *fx, const cl_uint *uuids, cl_uint count);
/* Reads an event's results; asserts success and the size. */
void read_results(cl_event event, cl_performance_counter_result_codeplay *results, cl_uint count);
/* A queue counting these catalogue symbols, found by their OpenCL names. */
cl_command_queue queue_counting(struct cl_fixture *fx, const char *const *symbols, uint32_t count);
/* The shim's side records now alive (tally_cl_shim_live_records). */
void live_records(uint32_t *queues, uint32_t *events);
/* The shim's kernel records now alive (tally_cl_shim_live_kernel_records). */
uint32_t live_kernel_records(void);

#endif
