/*
 * The OpenCL loader layer interface (cl_loader_layers, OPENCL_LAYERS):
 * ocl-icd calls clGetLayerInfo and clInitLayer, newer Khronos loaders
 * clInitLayerWithProperties. When a libtally_cl is also preloaded, that copy
 * counts and the layer passes every call straight down, so nothing is
 * counted twice.
 */
#include <string.h>

#include "intercepted.h"
#include "shim.h"
/* After shim.h, which says which OpenCL API is wanted. */
#include <CL/cl_layer.h>

#define LAYER_EXPORT __attribute__((visibility("default")))

#define X(name) SHIM_HIDDEN __typeof__(name) shim_##name;
TALLY_CL_INTERCEPTED(X)
#undef X

/* Not in Debian 12's cl_layer.h (cl_loader_layers 1.0.1). */
typedef cl_properties cl_layer_properties;
#define TALLY_CL_LAYER_PROPERTIES_LIST_END ((cl_layer_properties)0)

static const char layer_name[] = "tally counters (cl_codeplay_performance_counters)";
static struct _cl_icd_dispatch layer_dispatch;

LAYER_EXPORT CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param_name,
                                                            size_t param_value_size,
                                                            void *param_value,
                                                            size_t *param_value_size_ret)
{
    static const cl_layer_api_version version = CL_LAYER_API_VERSION_100;
    switch (param_name) {
    case CL_LAYER_API_VERSION:
        return shim_answer_info(&version, sizeof(version), param_value_size, param_value,
                                param_value_size_ret);
    case CL_LAYER_NAME:
        return shim_answer_info(layer_name, sizeof(layer_name), param_value_size, param_value,
                                param_value_size_ret);
    default: return CL_INVALID_VALUE;
    }
}

static cl_int init_layer(cl_uint num_entries, const cl_icd_dispatch *target_dispatch,
                         cl_uint *num_entries_ret, const cl_icd_dispatch **layer_dispatch_ret)
{
    if (!target_dispatch || !num_entries_ret || !layer_dispatch_ret)
        return CL_INVALID_VALUE;
    size_t ours = sizeof(layer_dispatch) / sizeof(void *);
    size_t copied = num_entries < ours ? num_entries : ours;
    memset(&layer_dispatch, 0, sizeof(layer_dispatch));
    memcpy(&layer_dispatch, target_dispatch, copied * sizeof(void *));
    if (preload_is_active()) {
        tally_log(TALLY_LOG_INFO, "OpenCL layer passes through: libtally_cl is preloaded");
    } else {
        next_cl_set_target(target_dispatch, num_entries);
#define X(name) layer_dispatch.name = shim_##name;
        TALLY_CL_INTERCEPTED(X)
#undef X
    }
    *num_entries_ret = (cl_uint)copied;
    *layer_dispatch_ret = &layer_dispatch;
    return CL_SUCCESS;
}

LAYER_EXPORT CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint num_entries,
                                                         const cl_icd_dispatch *target_dispatch,
                                                         cl_uint *num_entries_ret,
                                                         const cl_icd_dispatch **layer_dispatch_ret)
{
    return init_layer(num_entries, target_dispatch, num_entries_ret, layer_dispatch_ret);
}

/* The shim takes no layer properties. */
LAYER_EXPORT CL_API_ENTRY cl_int CL_API_CALL clInitLayerWithProperties(
    cl_uint num_entries, const cl_icd_dispatch *target_dispatch, cl_uint *num_entries_ret,
    const cl_icd_dispatch **layer_dispatch_ret, const cl_layer_properties *properties)
{
    if (properties && properties[0] != TALLY_CL_LAYER_PROPERTIES_LIST_END)
        return CL_INVALID_PROPERTY;
    return init_layer(num_entries, target_dispatch, num_entries_ret, layer_dispatch_ret);
}

/* Records are freed at exit (session.c); nothing is held for the loader. */
LAYER_EXPORT CL_API_ENTRY void CL_API_CALL clDeinitLayer(void) {}
