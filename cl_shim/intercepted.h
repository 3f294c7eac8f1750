/* Every entry point the shim intercepts, as an X-macro list: the layer's
 * dispatch table and the preload exports are generated from it. The
 * transfer enqueues come from cl_transfers.txt (gen_cl_transfers.py). */
#include "cl_transfers.h"

#define TALLY_CL_INTERCEPTED(X)                                                                    \
    X(clGetPlatformInfo)                                                                           \
    X(clCreateKernel)                                                                              \
    X(clCreateKernelsInProgram)                                                                    \
    X(clCloneKernel)                                                                               \
    X(clRetainKernel)                                                                              \
    X(clReleaseKernel)                                                                             \
    X(clGetDeviceInfo)                                                                             \
    X(clGetExtensionFunctionAddress)                                                               \
    X(clGetExtensionFunctionAddressForPlatform)                                                    \
    X(clCreateCommandQueue)                                                                        \
    X(clCreateCommandQueueWithProperties)                                                          \
    X(clRetainCommandQueue)                                                                        \
    X(clReleaseCommandQueue)                                                                       \
    X(clGetCommandQueueInfo)                                                                       \
    X(clRetainEvent)                                                                               \
    X(clReleaseEvent)                                                                              \
    X(clGetEventProfilingInfo)                                                                     \
    X(clWaitForEvents)                                                                             \
    X(clFlush)                                                                                     \
    X(clFinish)                                                                                    \
    X(clEnqueueNDRangeKernel)                                                                      \
    X(clEnqueueTask)                                                                               \
    TALLY_CL_TRANSFERS(X)                                                                          \
    X(clEnqueueMarker)                                                                             \
    X(clEnqueueMarkerWithWaitList)

/* Entry points the shim calls but does not intercept. */
#define TALLY_CL_CALLED(X)                                                                         \
    X(clGetEventInfo)                                                                              \
    X(clGetKernelInfo)                                                                             \
    X(clGetKernelArgInfo)                                                                          \
    X(clGetKernelWorkGroupInfo)                                                                    \
    X(clGetImageInfo)                                                                              \
    X(clGetProgramInfo)                                                                            \
    X(clGetProgramBuildInfo)                                                                       \
    X(clCreateProgramWithSource)                                                                   \
    X(clBuildProgram)                                                                              \
    X(clReleaseProgram)
