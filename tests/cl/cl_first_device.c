/* The plain OpenCL test programs' start; see cl_first_device.h. */
#include "cl_first_device.h"

#include <stddef.h>

bool cl_first_device_open(const cl_queue_properties *queue_properties, cl_first_device *out)
{
    *out = (cl_first_device){0};
    cl_platform_id platform;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &out->device, NULL) != CL_SUCCESS)
        return false;
    cl_int err;
    out->context = clCreateContext(NULL, 1, &out->device, NULL, NULL, &err);
    if (!out->context)
        return false;
    out->queue =
        clCreateCommandQueueWithProperties(out->context, out->device, queue_properties, &err);
    if (!out->queue) {
        clReleaseContext(out->context);
        out->context = NULL;
        return false;
    }
    return true;
}

cl_program cl_first_device_program(const cl_first_device *opened, const char *source)
{
    cl_int err;
    cl_program program = clCreateProgramWithSource(opened->context, 1, &source, NULL, &err);
    if (program && clBuildProgram(program, 1, &opened->device, "", NULL, NULL) == CL_SUCCESS)
        return program;
    if (program)
        clReleaseProgram(program);
    return NULL;
}

void cl_first_device_close(cl_first_device *opened)
{
    clReleaseCommandQueue(opened->queue);
    clReleaseContext(opened->context);
}
