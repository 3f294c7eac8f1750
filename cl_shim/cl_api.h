/* The OpenCL headers as every file of the shim includes them: the whole API,
 * deprecated entry points included, since programs still call them. */
#ifndef TALLY_CL_API_H
#define TALLY_CL_API_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#define CL_USE_DEPRECATED_OPENCL_2_1_APIS
#define CL_USE_DEPRECATED_OPENCL_2_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>

#include "cl_codeplay_performance_counters.h"

/* The shim's own implementation of an entry point is shim_<name>; it is also
 * exported under <name> for preloading. The layer's table points at the
 * shim_ names, which always bind inside this copy of the library. */
#define TALLY_CL_EXPORT(name)                                                                      \
    extern __typeof__(shim_##name) name __attribute__((alias("shim_" #name), visibility("defaul"   \
                                                                                        "t")))

#endif
