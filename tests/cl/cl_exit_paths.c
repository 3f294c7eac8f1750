/*
 * An OpenCL program (PoCL) that ends in the ways a careless program does,
 * for the exit-path tests:
 *
 *   fork     runs a kernel, forks a child that only calls exit(0), checks
 *            that the child ended as it would without tally, then runs the
 *            kernel again and exits without releasing anything.
 *   threads  a second thread finishes its queue (where the kernel ran) in a
 *            loop while the main thread calls exit(0).
 *   gated    runs a kernel, then enqueues a kernel behind a user event and a
 *            read behind that kernel (in order), flushes, and exits without
 *            ever completing the user event: neither ever runs.
 *   opened   the same, but completes the user event and finishes the queue:
 *            both run.
 *   chained  runs a kernel, then enqueues a kernel behind a user event, and
 *            on a second queue a kernel behind the first one's event,
 *            flushes both, and exits without ever completing the user
 *            event: neither of the two ever runs.
 *   unchained  the same, but completes the user event and finishes both
 *            queues: both run.
 *
 * Exits 0 when the program's own part went as planned.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <string.h>

#include "exit_paths.h"

static cl_context context;
static cl_device_id device;
static cl_kernel kernel;
static cl_mem buffer;

static cl_command_queue new_queue(void)
{
    cl_int err;
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    return err == CL_SUCCESS ? queue : NULL;
}

static bool run_kernel(cl_command_queue queue)
{
    size_t global = 64;
    return clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL) ==
               CL_SUCCESS &&
           clFinish(queue) == CL_SUCCESS;
}

/* Mostly inside the shim's clFinish, between finding the queue's record
 * and using it again after the driver's wait. */
static void finish(void *queue)
{
    clFinish(queue);
}

static void child_exits(void)
{
    exit(0);
}

static int fork_mode(void)
{
    cl_command_queue queue = new_queue();
    if (!queue || !run_kernel(queue) || !exit_paths_fork(child_exits) || !run_kernel(queue))
        return 1;
    return 0;
}

static int threads_mode(void)
{
    static struct exit_paths_loop loop = {.work = finish};
    if (!(loop.user = new_queue()) || !run_kernel(loop.user) || !exit_paths_start_loop(&loop, 20))
        return 1;
    exit(0);
}

/* A kernel behind a user event, a read behind the kernel; the event is
 * completed when `open`. */
static int gated_mode(bool open)
{
    cl_command_queue queue = new_queue();
    cl_int err;
    cl_event user = clCreateUserEvent(context, &err);
    size_t global = 64;
    int data[64];
    if (!queue || err != CL_SUCCESS || !run_kernel(queue) ||
        clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 1, &user, NULL) !=
            CL_SUCCESS ||
        clEnqueueReadBuffer(queue, buffer, CL_FALSE, 0, sizeof data, data, 0, NULL, NULL) !=
            CL_SUCCESS ||
        clFlush(queue) != CL_SUCCESS)
        return 1;
    if (open && (clSetUserEventStatus(user, CL_COMPLETE) != CL_SUCCESS ||
                 clFinish(queue) != CL_SUCCESS || data[0] != 1))
        return 1;
    return 0;
}

/* A kernel behind a user event, and on another queue a kernel behind that
 * kernel's event; the user event is completed when `open`. */
static int chained_mode(bool open)
{
    cl_command_queue first = new_queue(), second = new_queue();
    cl_int err;
    cl_event user = clCreateUserEvent(context, &err), gated = NULL;
    size_t global = 64;
    if (!first || !second || err != CL_SUCCESS || !run_kernel(first) ||
        clEnqueueNDRangeKernel(first, kernel, 1, NULL, &global, NULL, 1, &user, &gated) !=
            CL_SUCCESS ||
        clEnqueueNDRangeKernel(second, kernel, 1, NULL, &global, NULL, 1, &gated, NULL) !=
            CL_SUCCESS ||
        clFlush(first) != CL_SUCCESS || clFlush(second) != CL_SUCCESS)
        return 1;
    if (open && (clSetUserEventStatus(user, CL_COMPLETE) != CL_SUCCESS ||
                 clFinish(first) != CL_SUCCESS || clFinish(second) != CL_SUCCESS))
        return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cl_exit_paths fork|threads|gated|opened|chained|unchained\n");
        return 2;
    }
    /* Before tally's exit handlers, so it runs after them. */
    if (strcmp(argv[1], "threads") == 0)
        atexit(exit_paths_linger);
    cl_platform_id platform;
    cl_int err;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS)
        return 1;
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    const char *source = "kernel void k(global int *p) { p[get_global_id(0)] = 1; }";
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    if (clBuildProgram(program, 1, &device, "", NULL, NULL) != CL_SUCCESS)
        return 1;
    kernel = clCreateKernel(program, "k", &err);
    buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
    if (err != CL_SUCCESS || clSetKernelArg(kernel, 0, sizeof buffer, &buffer) != CL_SUCCESS)
        return 1;
    if (strcmp(argv[1], "fork") == 0)
        return fork_mode();
    if (strcmp(argv[1], "threads") == 0)
        return threads_mode();
    if (strcmp(argv[1], "gated") == 0 || strcmp(argv[1], "opened") == 0)
        return gated_mode(strcmp(argv[1], "opened") == 0);
    if (strcmp(argv[1], "chained") == 0 || strcmp(argv[1], "unchained") == 0)
        return chained_mode(strcmp(argv[1], "unchained") == 0);
    return 2;
}
