/*
 * A plain OpenCL program for the driver backend's report test
 * (test_cl_driver_report.c): kernels of several NDRanges on a queue that
 * asked for profiling, each printed with its global size and the span its
 * own event measured, {"queue":"profiled","global":N,"span_ns":S}, then
 * kernels on a queue that did not ask and keeps no events,
 * {"queue":"plain","global":N}.
 */
#include "cl_first_device.h"

#include <stdio.h>

static const char *source = "kernel void fill(global int *out) {\n"
                            "    out[get_global_id(0)] = (int)get_local_id(0);\n"
                            "}\n";

int main(void)
{
    cl_queue_properties profiling[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_first_device cl;
    if (!cl_first_device_open(profiling, &cl))
        return 1;
    cl_command_queue profiled = cl.queue;
    cl_int err;
    cl_command_queue plain = clCreateCommandQueueWithProperties(cl.context, cl.device, NULL, &err);
    cl_program program = cl_first_device_program(&cl, source);
    if (!plain || !program)
        return 1;
    cl_kernel kernel = clCreateKernel(program, "fill", &err);
    cl_mem out = clCreateBuffer(cl.context, CL_MEM_READ_WRITE, 1 << 20, NULL, &err);
    err |= clSetKernelArg(kernel, 0, sizeof(out), &out);
    size_t globals[] = {64, 4096, 65536};
    size_t local = 64;
    cl_event events[3];
    for (int i = 0; i < 3; i++)
        err |= clEnqueueNDRangeKernel(profiled, kernel, 1, NULL, &globals[i], i ? &local : NULL, 0,
                                      NULL, &events[i]);
    err |= clFinish(profiled);
    for (int i = 0; i < 3; i++) {
        cl_ulong start = 0, end = 0;
        err |= clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_START, sizeof(start), &start,
                                       NULL);
        err |=
            clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_END, sizeof(end), &end, NULL);
        printf("{\"queue\":\"profiled\",\"global\":%zu,\"span_ns\":%llu}\n", globals[i],
               (unsigned long long)(end - start));
        clReleaseEvent(events[i]);
    }
    size_t plain_globals[] = {256, 8192};
    for (int i = 0; i < 2; i++) {
        err |= clEnqueueNDRangeKernel(plain, kernel, 1, NULL, &plain_globals[i], &local, 0, NULL,
                                      NULL);
        printf("{\"queue\":\"plain\",\"global\":%zu}\n", plain_globals[i]);
    }
    err |= clFlush(plain);
    err |= clFinish(plain);
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(plain);
    cl_first_device_close(&cl);
    if (err != CL_SUCCESS)
        fprintf(stderr, "cl_timed_kernels: an OpenCL call failed\n");
    return err == CL_SUCCESS ? 0 : 1;
}
