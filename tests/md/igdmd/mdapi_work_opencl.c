/* OpenCL kernels on the first platform (PoCL here); the CL shim is preloaded
 * by whoever runs us. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include "mdapi_work.h"

static const char source[] = "kernel void fill(global uint *out)\n"
                             "{\n"
                             "    out[get_global_id(0) % 1024] = (uint)get_global_id(0);\n"
                             "}\n";

int64_t mdapi_work_opencl(const uint32_t *items, int count)
{
    cl_platform_id platform;
    cl_device_id device;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS)
        return -1;
    cl_int err;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    const char *text = source;
    cl_program program = clCreateProgramWithSource(context, 1, &text, NULL, &err);
    int64_t invocations = -1;
    cl_kernel kernel = NULL;
    cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, 4096, NULL, &err);
    if (clBuildProgram(program, 1, &device, "", NULL, NULL) == CL_SUCCESS &&
        (kernel = clCreateKernel(program, "fill", &err)) != NULL &&
        clSetKernelArg(kernel, 0, sizeof(out), &out) == CL_SUCCESS) {
        invocations = 0;
        for (int i = 0; i < count && invocations >= 0; i++) {
            size_t global = items[i];
            if (clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL) !=
                    CL_SUCCESS ||
                clFinish(queue) != CL_SUCCESS)
                invocations = -1;
            else
                invocations += items[i];
        }
    }
    if (kernel)
        clReleaseKernel(kernel);
    clReleaseMemObject(out);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return invocations;
}
