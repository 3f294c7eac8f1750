/* The OpenCL test fixture; see cl_fixture.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "cl_fixture.h"

int cl_fixture_setup(void **state)
{
    struct cl_fixture *fx = calloc(1, sizeof(*fx));
    if (!fx || clGetPlatformIDs(1, &fx->platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(fx->platform, CL_DEVICE_TYPE_ALL, 1, &fx->device, NULL) != CL_SUCCESS) {
        free(fx);
        return -1;
    }
    cl_int err;
    fx->context = clCreateContext(NULL, 1, &fx->device, NULL, NULL, &err);
    fx->create_queue_khr =
        (clCreateCommandQueueWithPropertiesKHR_fn)clGetExtensionFunctionAddressForPlatform(
            fx->platform, "clCreateCommandQueueWithPropertiesKHR");
    *state = fx;
    return fx->context && fx->create_queue_khr ? 0 : -1;
}

int cl_fixture_teardown(void **state)
{
    struct cl_fixture *fx = *state;
    clReleaseContext(fx->context);
    free(fx);
    return 0;
}

cl_kernel build_kernel(struct cl_fixture *fx, const char *source, const char *name)
{
    cl_int err;
    cl_program program = clCreateProgramWithSource(fx->context, 1, &source, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clBuildProgram(program, 1, &fx->device, "", NULL, NULL), CL_SUCCESS);
    cl_kernel kernel = clCreateKernel(program, name, &err);
    assert_int_equal(err, CL_SUCCESS);
    clReleaseProgram(program); /* the kernel keeps it */
    return kernel;
}

cl_uint uuid_of(struct cl_fixture *fx, const char *cl_name)
{
    size_t size = 0;
    assert_int_equal(
        clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, 0, NULL, &size),
        CL_SUCCESS);
    cl_performance_counter_codeplay *counters = malloc(size);
    assert_non_null(counters);
    assert_int_equal(
        clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, size, counters, NULL),
        CL_SUCCESS);
    cl_uint uuid = 0;
    bool found = false;
    for (size_t i = 0; i < size / sizeof(*counters); i++) {
        if (strcmp(counters[i].name, cl_name) == 0) {
            uuid = counters[i].uuid;
            found = true;
        }
    }
    free(counters);
    assert_true(found);
    return uuid;
}

cl_command_queue counter_queue(struct cl_fixture *fx, const cl_uint *uuids, cl_uint count)
{
    cl_performance_counter_desc_codeplay descs[16];
    assert_true(count <= 16);
    for (cl_uint i = 0; i < count; i++)
        descs[i] = (cl_performance_counter_desc_codeplay){.uuid = uuids[i]};
    cl_performance_counter_config_codeplay config = {.count = count, .descs = descs};
    cl_queue_properties properties[] = {CL_QUEUE_PERFORMANCE_COUNTERS_CODEPLAY,
                                        (cl_queue_properties)(uintptr_t)&config, 0};
    cl_int err;
    cl_command_queue queue = fx->create_queue_khr(fx->context, fx->device, properties, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_non_null(queue);
    return queue;
}

void read_results(cl_event event, cl_performance_counter_result_codeplay *results, cl_uint count)
{
    size_t size = 0;
    assert_int_equal(clGetEventProfilingInfo(
                         event, CL_PROFILING_COMMAND_PERFORMANCE_COUNTERS_CODEPLAY, 0, NULL, &size),
                     CL_SUCCESS);
    assert_int_equal(size, count * sizeof(*results));
    assert_int_equal(clGetEventProfilingInfo(event,
                                             CL_PROFILING_COMMAND_PERFORMANCE_COUNTERS_CODEPLAY,
                                             size, results, NULL),
                     CL_SUCCESS);
}

cl_command_queue queue_counting(struct cl_fixture *fx, const char *const *symbols, uint32_t count)
{
    const tally_catalogue *cat;
    assert_int_equal(tally_backend_catalogue(NULL, &cat), TALLY_OK);
    cl_uint uuids[16];
    assert_true(count <= 16);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t index;
        assert_int_equal(tally_catalogue_find(cat, symbols[i], &index), TALLY_OK);
        uuids[i] =
            uuid_of(fx, tally_counter_name_for(tally_catalogue_counter(cat, index), TALLY_API_CL));
    }
    return counter_queue(fx, uuids, count);
}

/* The shim is a preloaded library or a layer the loader opened privately:
 * either way the copy named by TALLY_CL_SHIM is already loaded. */
static void *loaded_shim(void)
{
    const char *path = getenv("TALLY_CL_SHIM");
    assert_non_null(path);
    void *shim = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(shim);
    return shim;
}

void live_records(uint32_t *queues, uint32_t *events)
{
    void *shim = loaded_shim();
    void (*live)(uint32_t *, uint32_t *) =
        (void (*)(uint32_t *, uint32_t *))dlsym(shim, "tally_cl_shim_live_records");
    assert_non_null(live);
    live(queues, events);
    dlclose(shim);
}

uint32_t live_kernel_records(void)
{
    void *shim = loaded_shim();
    void (*live)(uint32_t *) =
        (void (*)(uint32_t *))dlsym(shim, "tally_cl_shim_live_kernel_records");
    assert_non_null(live);
    uint32_t kernels = 0;
    live(&kernels);
    dlclose(shim);
    return kernels;
}
