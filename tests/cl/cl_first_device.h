/* What the plain OpenCL test programs (run as programs, not cmocka tests)
 * start from: the first platform's first device, a context on it and one
 * queue, made as an ordinary program makes them, so that the shim under
 * test sees an ordinary start. */
#ifndef TALLY_TEST_CL_FIRST_DEVICE_H
#define TALLY_TEST_CL_FIRST_DEVICE_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
#include <stdbool.h>

typedef struct cl_first_device {
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
} cl_first_device;

/* Opens the device, a context and a queue of `queue_properties` (NULL:
 * none). False if any of them could not be made; nothing stays open then. */
bool cl_first_device_open(const cl_queue_properties *queue_properties, cl_first_device *out);

/* A program of one source built for the device; NULL if it did not build. */
cl_program cl_first_device_program(const cl_first_device *opened, const char *source);

/* Releases the queue, then the context. */
void cl_first_device_close(cl_first_device *opened);

#endif
