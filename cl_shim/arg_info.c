/*
 * Where the kernel profile reads argument qualifiers when the program's own
 * build withholds them. Drivers answer clGetKernelArgInfo only for programs
 * built with -cl-kernel-arg-info (PoCL: when the program gave build options
 * without it), and the program must see exactly that answer
 * (CL_KERNEL_ARG_INFO_NOT_AVAILABLE), so the shim never adds the option to
 * the program's own builds. It builds a private twin instead: the program's
 * source, built for the same devices with the same options plus
 * -cl-kernel-arg-info, and reads the qualifiers of the twin's kernel of the
 * same name. The twin lives only while the kernels of one shim call are
 * classified (see arg_info_source), so it never holds the program's context
 * past what the program holds itself.
 *
 * Programs without source (from a binary or IL, or linked from compiled
 * objects) have no twin: their kernels get the default profile unless the
 * program built them with -cl-kernel-arg-info itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

void arg_info_source_init(arg_info_source *source, cl_program program)
{
    memset(source, 0, sizeof(*source));
    source->program = program;
}

/* The value of a variable-size program query, malloc'ed; NULL if none. */
static void *program_info(cl_program program, cl_program_info name, size_t *size)
{
    const struct _cl_icd_dispatch *cl = next_cl();
    *size = 0;
    if (!cl->clGetProgramInfo || cl->clGetProgramInfo(program, name, 0, NULL, size) != CL_SUCCESS ||
        *size == 0)
        return NULL;
    void *value = malloc(*size);
    if (value && cl->clGetProgramInfo(program, name, *size, value, NULL) != CL_SUCCESS) {
        free(value);
        value = NULL;
    }
    return value;
}

static char *build_options(cl_program program, cl_device_id device)
{
    const struct _cl_icd_dispatch *cl = next_cl();
    size_t size = 0;
    if (!cl->clGetProgramBuildInfo ||
        cl->clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_OPTIONS, 0, NULL, &size) !=
            CL_SUCCESS)
        return NULL;
    char *options = calloc(size + 1, 1);
    if (options && size &&
        cl->clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_OPTIONS, size, options, NULL) !=
            CL_SUCCESS) {
        free(options);
        return NULL;
    }
    return options;
}

/* options + " -cl-kernel-arg-info", malloc'ed; NULL when out of memory. */
static char *with_arg_info(const char *options)
{
    static const char flag[] = "-cl-kernel-arg-info";
    const char *given = options ? options : "";
    size_t size = strlen(given) + sizeof(flag) + 1;
    char *joined = malloc(size);
    if (joined)
        snprintf(joined, size, "%s%s%s", given, *given ? " " : "", flag);
    return joined;
}

static cl_program build_twin(cl_program program)
{
    const struct _cl_icd_dispatch *cl = next_cl();
    if (!cl->clCreateProgramWithSource || !cl->clBuildProgram || !cl->clReleaseProgram)
        return NULL;
    size_t source_size = 0, devices_size = 0, context_size = 0;
    char *source = program_info(program, CL_PROGRAM_SOURCE, &source_size);
    cl_device_id *devices = program_info(program, CL_PROGRAM_DEVICES, &devices_size);
    cl_context *context = program_info(program, CL_PROGRAM_CONTEXT, &context_size);
    cl_program twin = NULL;
    if (source && source_size > 1 && devices && devices_size >= sizeof(cl_device_id) && context &&
        context_size == sizeof(cl_context)) {
        source[source_size - 1] = '\0';
        cl_uint device_count = (cl_uint)(devices_size / sizeof(cl_device_id));
        char *options = build_options(program, devices[0]);
        char *twin_options = with_arg_info(options);
        const char *text = source;
        cl_int err = CL_SUCCESS;
        if (twin_options)
            twin = cl->clCreateProgramWithSource(*context, 1, &text, NULL, &err);
        if (twin && cl->clBuildProgram(twin, device_count, devices, twin_options, NULL, NULL) !=
                        CL_SUCCESS) {
            cl->clReleaseProgram(twin);
            twin = NULL;
        }
        free(options);
        free(twin_options);
    }
    free(source);
    free(devices);
    free(context);
    return twin;
}

static char *kernel_name(cl_kernel kernel)
{
    const struct _cl_icd_dispatch *cl = next_cl();
    size_t size = 0;
    if (cl->clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, 0, NULL, &size) != CL_SUCCESS ||
        size == 0)
        return NULL;
    char *name = calloc(size + 1, 1);
    if (name &&
        cl->clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, size, name, NULL) != CL_SUCCESS) {
        free(name);
        name = NULL;
    }
    return name;
}

cl_kernel arg_info_twin_kernel(arg_info_source *source, cl_kernel kernel)
{
    if (!source->tried) { /* one build serves every kernel of the call */
        source->tried = true;
        source->twin = build_twin(source->program);
    }
    if (!source->twin)
        return NULL;
    char *name = kernel_name(kernel);
    cl_kernel twin_kernel = NULL;
    if (name) {
        cl_int err;
        twin_kernel = next_cl()->clCreateKernel(source->twin, name, &err);
        free(name);
    }
    return twin_kernel;
}

void arg_info_source_release(arg_info_source *source)
{
    if (source->twin)
        next_cl()->clReleaseProgram(source->twin);
    source->twin = NULL;
}
