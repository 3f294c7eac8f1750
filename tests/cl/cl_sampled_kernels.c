/*
 * A plain OpenCL program for the sampling check (tests/check_sampling.py):
 * ROUNDS rounds of one large kernel each, finished and followed by 3 ms of
 * host time, so a sampled run has samples of work, of idleness and of both.
 *
 * Usage: cl_sampled_kernels ROUNDS GLOBAL_SIZE
 */
#include "cl_first_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *source = "kernel void fill(global int *out) {\n"
                            "    out[get_global_id(0)] = (int)get_global_id(0) * 3;\n"
                            "}\n";

int main(int argc, char **argv)
{
    long rounds = argc == 3 ? strtol(argv[1], NULL, 10) : 0;
    size_t global = argc == 3 ? (size_t)strtoul(argv[2], NULL, 10) : 0;
    if (rounds <= 0 || global == 0) {
        fprintf(stderr, "usage: %s ROUNDS GLOBAL_SIZE\n", argv[0]);
        return 2;
    }
    cl_first_device cl;
    if (!cl_first_device_open(NULL, &cl))
        return 1;
    cl_command_queue queue = cl.queue;
    cl_program program = cl_first_device_program(&cl, source);
    if (!program)
        return 1;
    cl_int err;
    cl_kernel kernel = clCreateKernel(program, "fill", &err);
    cl_mem buffer = clCreateBuffer(cl.context, CL_MEM_READ_WRITE, global * sizeof(int), NULL, &err);
    err |= clSetKernelArg(kernel, 0, sizeof buffer, &buffer);
    for (long r = 0; r < rounds && err == CL_SUCCESS; r++) {
        err |= clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL);
        err |= clFinish(queue);
        nanosleep(&(struct timespec){.tv_nsec = 3000000}, NULL);
    }
    clReleaseMemObject(buffer);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    cl_first_device_close(&cl);
    printf("%ld rounds %s\n", rounds, err == CL_SUCCESS ? "done" : "failed");
    return err == CL_SUCCESS ? 0 : 1;
}
