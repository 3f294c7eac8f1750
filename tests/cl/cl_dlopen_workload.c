/*
 * An OpenCL program that, like Intel's cliloader and MDAPI tools, opens
 * libOpenCL itself with dlopen and calls through that handle: a preloaded
 * shim never sees these calls, the loader's layer does (issue 35, item 20).
 * Runs one kernel over 256 work-items and prints "dispatched".
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>

#define LOOK_UP(handle, name) __typeof__(name) *p_##name = (__typeof__(name) *)dlsym(handle, #name)

int main(void)
{
    void *cl = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cl) {
        fprintf(stderr, "cl_dlopen_workload: %s\n", dlerror());
        return 1;
    }
    LOOK_UP(cl, clGetPlatformIDs);
    LOOK_UP(cl, clGetDeviceIDs);
    LOOK_UP(cl, clCreateContext);
    LOOK_UP(cl, clCreateCommandQueueWithProperties);
    LOOK_UP(cl, clCreateProgramWithSource);
    LOOK_UP(cl, clBuildProgram);
    LOOK_UP(cl, clCreateKernel);
    LOOK_UP(cl, clCreateBuffer);
    LOOK_UP(cl, clSetKernelArg);
    LOOK_UP(cl, clEnqueueNDRangeKernel);
    LOOK_UP(cl, clFinish);
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    if (p_clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        p_clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS)
        return 1;
    cl_context context = p_clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue queue = p_clCreateCommandQueueWithProperties(context, device, NULL, &err);
    const char *source = "kernel void fill(global int *p) { p[get_global_id(0)] = 7; }";
    cl_program program = p_clCreateProgramWithSource(context, 1, &source, NULL, &err);
    if (p_clBuildProgram(program, 1, &device, "", NULL, NULL) != CL_SUCCESS)
        return 1;
    cl_kernel kernel = p_clCreateKernel(program, "fill", &err);
    cl_mem buffer = p_clCreateBuffer(context, CL_MEM_READ_WRITE, 256 * sizeof(int), NULL, &err);
    p_clSetKernelArg(kernel, 0, sizeof buffer, &buffer);
    size_t global = 256, local = 64;
    err = p_clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL);
    err |= p_clFinish(queue);
    printf("%s\n", err == CL_SUCCESS ? "dispatched" : "failed");
    return err == CL_SUCCESS ? 0 : 1;
}
