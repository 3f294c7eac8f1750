/*
 * TALLY_BACKEND=driver in OpenCL, on PoCL (ctest sets the backend): a
 * kernel's GpuTime is the time PoCL's own event profiling measured, read
 * through cl_codeplay_performance_counters, and its work-items and
 * work-groups are the NDRange's. Every queue profiles its kernels, and a
 * queue whose program did not ask for CL_QUEUE_PROFILING_ENABLE still
 * answers as if it had none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cl_fixture.h"

static const char *const kernel_source = "kernel void fill(global int *out) {\n"
                                         "    out[get_global_id(1) * get_global_size(0) +\n"
                                         "        get_global_id(0)] = 1;\n"
                                         "}\n";

/* The OpenCL name of a counter of the catalogue OpenCL's device offers. */
static const char *cl_name(const char *symbol)
{
    const tally_catalogue *cat = NULL;
    assert_int_equal(
        tally_backend_catalogue_measuring(
            NULL, TALLY_MEASURE_COMMANDS | TALLY_MEASURE_TIME | TALLY_MEASURE_CS_INVOCATIONS, &cat),
        TALLY_OK);
    uint32_t index;
    assert_int_equal(tally_catalogue_find(cat, symbol, &index), TALLY_OK);
    return tally_counter_name_for(tally_catalogue_counter(cat, index), TALLY_API_CL);
}

static cl_mem output_buffer(struct cl_fixture *fx, cl_kernel kernel)
{
    cl_int err;
    cl_mem out = clCreateBuffer(fx->context, CL_MEM_READ_WRITE, 1 << 16, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 0, sizeof(out), &out), CL_SUCCESS);
    return out;
}

static cl_ulong profile(cl_event event, cl_profiling_info name)
{
    cl_ulong value = 0;
    assert_int_equal(clGetEventProfilingInfo(event, name, sizeof(value), &value, NULL), CL_SUCCESS);
    return value;
}

static void a_kernels_gpu_time_is_its_events_own(void **state)
{
    struct cl_fixture *fx = *state;
    cl_uint uuids[] = {uuid_of(fx, cl_name("GpuTime")), uuid_of(fx, cl_name("CsInvocations")),
                       uuid_of(fx, cl_name("CsWorkgroups"))};
    cl_command_queue queue = counter_queue(fx, uuids, 3);
    cl_kernel kernel = build_kernel(fx, kernel_source, "fill");
    cl_mem out = output_buffer(fx, kernel);
    size_t global[2] = {64, 6}, local[2] = {16, 2};
    cl_event event;
    assert_int_equal(clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, local, 0, NULL, &event),
                     CL_SUCCESS);
    assert_int_equal(clFinish(queue), CL_SUCCESS);
    cl_performance_counter_result_codeplay results[3];
    read_results(event, results, 3);
    cl_ulong span =
        profile(event, CL_PROFILING_COMMAND_END) - profile(event, CL_PROFILING_COMMAND_START);
    /* The driver's own profiling span of the same command, to the ns. */
    assert_true(span > 0);
    assert_int_equal(results[0].uint64, span);
    assert_int_equal(results[1].uint64, 64 * 6);
    assert_int_equal(results[2].uint64, 4 * 3);
    clReleaseEvent(event);
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseCommandQueue(queue);
}

static cl_command_queue_properties queue_flags(cl_command_queue queue)
{
    cl_command_queue_properties flags = ~(cl_command_queue_properties)0;
    assert_int_equal(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof(flags), &flags, NULL),
                     CL_SUCCESS);
    return flags;
}

/* Runs one kernel with an event; the event's START, as the program can
 * read it. */
static cl_int start_of_a_kernel_on(struct cl_fixture *fx, cl_command_queue queue)
{
    cl_kernel kernel = build_kernel(fx, kernel_source, "fill");
    cl_mem out = output_buffer(fx, kernel);
    size_t global[2] = {8, 8};
    cl_event event;
    assert_int_equal(clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, NULL, 0, NULL, &event),
                     CL_SUCCESS);
    assert_int_equal(clFinish(queue), CL_SUCCESS);
    cl_ulong start = 0;
    cl_int err =
        clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(start), &start, NULL);
    clReleaseEvent(event);
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    return err;
}

static void a_queue_without_profiling_answers_as_one(void **state)
{
    struct cl_fixture *fx = *state;
    cl_int err;
    cl_command_queue queue =
        clCreateCommandQueueWithProperties(fx->context, fx->device, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(queue_flags(queue), 0);
    size_t size = 1;
    assert_int_equal(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES_ARRAY, 0, NULL, &size),
                     CL_SUCCESS);
    assert_int_equal(size, 0);
    assert_int_equal(start_of_a_kernel_on(fx, queue), CL_PROFILING_INFO_NOT_AVAILABLE);
    clReleaseCommandQueue(queue);

    cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                                        0};
    queue = clCreateCommandQueueWithProperties(fx->context, fx->device, properties, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(queue_flags(queue), CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    cl_queue_properties back[3];
    assert_int_equal(
        clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES_ARRAY, sizeof(back), back, &size),
        CL_SUCCESS);
    assert_int_equal(size, sizeof(properties));
    assert_memory_equal(back, properties, sizeof(properties));
    assert_int_equal(start_of_a_kernel_on(fx, queue), CL_PROFILING_INFO_NOT_AVAILABLE);
    clReleaseCommandQueue(queue);

    queue = clCreateCommandQueue(fx->context, fx->device, 0, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(queue_flags(queue), 0);
    assert_int_equal(start_of_a_kernel_on(fx, queue), CL_PROFILING_INFO_NOT_AVAILABLE);
    clReleaseCommandQueue(queue);
}

static void a_queue_with_profiling_keeps_its_times(void **state)
{
    struct cl_fixture *fx = *state;
    cl_int err;
    cl_command_queue queue =
        clCreateCommandQueue(fx->context, fx->device, CL_QUEUE_PROFILING_ENABLE, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(queue_flags(queue), CL_QUEUE_PROFILING_ENABLE);
    assert_int_equal(start_of_a_kernel_on(fx, queue), CL_SUCCESS);
    clReleaseCommandQueue(queue);
}

static cl_uint reference_count(cl_event event)
{
    cl_uint count = 0;
    assert_int_equal(clGetEventInfo(event, CL_EVENT_REFERENCE_COUNT, sizeof(count), &count, NULL),
                     CL_SUCCESS);
    return count;
}

/* The event's references once the driver let go of its own (PoCL holds one
 * while the command runs): asked until it reads `expected`, for at most 5 s,
 * without a submission point of the shim's (no flush, finish or wait). */
static cl_uint settled_references(cl_event event, cl_uint expected)
{
    const struct timespec pause = {0, 1000 * 1000};
    cl_uint count = reference_count(event);
    for (int i = 0; i < 5000 && count != expected; i++) {
        nanosleep(&pause, NULL);
        count = reference_count(event);
    }
    return count;
}

/* Nobody listens (no report, trace or sampler; the queue named no counters):
 * the shim passes the enqueue straight down and keeps nothing of it, as
 * under simgpu: once the kernel ran, the program's reference is the only
 * one. A queue with counters keeps the program's event until it reads the
 * kernel's times and the program asks for its counters' results. */
static void an_unheard_queue_keeps_no_event_of_the_programs(void **state)
{
    struct cl_fixture *fx = *state;
    cl_int err;
    cl_command_queue plain = clCreateCommandQueue(fx->context, fx->device, 0, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_uint uuids[] = {uuid_of(fx, cl_name("GpuTime"))};
    cl_command_queue counted = counter_queue(fx, uuids, 1);
    cl_kernel kernel = build_kernel(fx, kernel_source, "fill");
    cl_mem out = output_buffer(fx, kernel);
    size_t global[2] = {8, 8};
    cl_event unheard, heard;
    assert_int_equal(
        clEnqueueNDRangeKernel(plain, kernel, 2, NULL, global, NULL, 0, NULL, &unheard),
        CL_SUCCESS);
    assert_int_equal(
        clEnqueueNDRangeKernel(counted, kernel, 2, NULL, global, NULL, 0, NULL, &heard),
        CL_SUCCESS);
    assert_int_equal(settled_references(unheard, 1), 1);
    assert_true(settled_references(heard, 1) > 1); /* the shim's, kept until it reads */
    assert_int_equal(clFinish(plain), CL_SUCCESS);
    assert_int_equal(clFinish(counted), CL_SUCCESS);
    clReleaseEvent(unheard);
    clReleaseEvent(heard);
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseCommandQueue(plain);
    clReleaseCommandQueue(counted);
}

/* The driver backend offers OpenCL GPU time and the NDRange's counts, and
 * none of the statistics only a graphics query measures. */
static void the_catalogue_offers_what_opencl_measures(void **state)
{
    struct cl_fixture *fx = *state;
    size_t size = 0;
    assert_int_equal(
        clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, 0, NULL, &size),
        CL_SUCCESS);
    cl_performance_counter_codeplay counters[64];
    assert_true(size <= sizeof(counters));
    assert_int_equal(
        clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, size, counters, NULL),
        CL_SUCCESS);
    size_t count = size / sizeof(counters[0]);
    const char *offered[] = {"GpuTime", "Dispatches", "CsWorkgroups", "CsInvocations"};
    for (size_t i = 0; i < sizeof(offered) / sizeof(offered[0]); i++) {
        bool found = false;
        for (size_t c = 0; c < count; c++)
            found |= strcmp(counters[c].name, cl_name(offered[i])) == 0;
        assert_true(found);
    }
    const tally_catalogue *full = NULL;
    assert_int_equal(tally_backend_catalogue_measuring("driver", 0, &full), TALLY_OK);
    const char *absent[] = {"IaVertices", "VsInvocations", "FsInvocations", "ClipperPrimitives"};
    for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
        uint32_t index;
        assert_int_equal(tally_catalogue_find(full, absent[i], &index), TALLY_OK);
        const char *name =
            tally_counter_name_for(tally_catalogue_counter(full, index), TALLY_API_CL);
        for (size_t c = 0; c < count; c++)
            assert_string_not_equal(counters[c].name, name);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_kernels_gpu_time_is_its_events_own),
        cmocka_unit_test(a_queue_without_profiling_answers_as_one),
        cmocka_unit_test(a_queue_with_profiling_keeps_its_times),
        cmocka_unit_test(the_catalogue_offers_what_opencl_measures),
        cmocka_unit_test(an_unheard_queue_keeps_no_event_of_the_programs),
    };
    return cmocka_run_group_tests(tests, cl_fixture_setup, cl_fixture_teardown);
}
