/* A plain OpenCL program for the report test: no counters asked, queues never
 * flushed at the end nor released, as careless programs do. The shim must
 * still put every command in TALLY_OUTPUT. */
#include "cl_first_device.h"

#include <stdio.h>
#include <time.h>

int main(void)
{
    cl_first_device cl; /* never closed: the careless program's way */
    if (!cl_first_device_open(NULL, &cl))
        return 1;
    cl_command_queue queue = cl.queue;
    cl_program program =
        cl_first_device_program(&cl, "kernel void k(global int *p) { p[get_global_id(0)] = 1; }");
    if (!program)
        return 1;
    cl_int err;
    cl_kernel kernel = clCreateKernel(program, "k", &err);
    cl_mem buffer = clCreateBuffer(cl.context, CL_MEM_READ_WRITE, 4096 * sizeof(int), NULL, &err);
    clSetKernelArg(kernel, 0, sizeof buffer, &buffer);
    static int host[4096];
    size_t global[2] = {64, 16}, local[2] = {16, 4};
    err |= clEnqueueWriteBuffer(queue, buffer, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL);
    err |= clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, local, 0, NULL, NULL);
    err |= clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, 1024, host, 0, NULL, NULL);
    err |= clEnqueueCopyBuffer(queue, buffer, buffer, 0, 8192, 4096, 0, NULL, NULL);
    clFinish(queue);
    /* Never flushed by the program: it polls until the driver ran it (PoCL
     * crashes in LLVM if a program exits while it still compiles a kernel),
     * and polling is no submission point. */
    cl_event last;
    err |= clEnqueueNDRangeKernel(queue, kernel, 1, NULL, global, NULL, 0, NULL, &last);
    cl_int status = CL_QUEUED;
    for (int i = 0; i < 20000 && status != CL_COMPLETE && status >= 0; i++) {
        clGetEventInfo(last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
        if (status != CL_COMPLETE)
            nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    if (status != CL_COMPLETE)
        err |= clFinish(queue);
    printf("workload %s\n", err == CL_SUCCESS ? "done" : "failed");
    return err == CL_SUCCESS ? 0 : 1;
}
