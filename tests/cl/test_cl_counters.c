/* cl_codeplay_performance_counters through libtally_cl over PoCL: the
 * extension's discovery, queue creation and per-event results. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cl_fixture.h"

static const char empty_kernel[] = "void kernel foo() {}";

/* The oneAPI Construction Kit's UnitCL test cl_codeplay_performance_counters
 * Default, step by step (research/glclegl.md section 4). */
static void unitcl_default_flow_succeeds(void **state)
{
    struct cl_fixture *fx = *state;
    char platform_extensions[4096], device_extensions[8192];
    assert_int_equal(clGetPlatformInfo(fx->platform, CL_PLATFORM_EXTENSIONS,
                                       sizeof platform_extensions, platform_extensions, NULL),
                     CL_SUCCESS);
    assert_non_null(strstr(platform_extensions, "cl_khr_create_command_queue"));
    assert_int_equal(clGetDeviceInfo(fx->device, CL_DEVICE_EXTENSIONS, sizeof device_extensions,
                                     device_extensions, NULL),
                     CL_SUCCESS);
    assert_non_null(strstr(device_extensions, "cl_codeplay_performance_counters"));
    assert_non_null(fx->create_queue_khr);

    size_t size = 0;
    assert_int_equal(
        clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, 0, NULL, &size),
        CL_SUCCESS);
    assert_true(size > 0); /* tally always has counters; UnitCL would pass on 0 */
    size_t count = size / sizeof(cl_performance_counter_codeplay);
    cl_performance_counter_codeplay *counters = malloc(size);
    assert_int_equal(
        clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, size, counters, NULL),
        CL_SUCCESS);
    assert_true(count > 0);

    cl_performance_counter_desc_codeplay desc = {.uuid = counters[0].uuid};
    cl_performance_counter_config_codeplay config = {.count = 1, .descs = &desc};
    cl_queue_properties properties[] = {CL_QUEUE_PERFORMANCE_COUNTERS_CODEPLAY,
                                        (cl_queue_properties)(uintptr_t)&config, 0};
    cl_int err;
    cl_command_queue queue = fx->create_queue_khr(fx->context, fx->device, properties, &err);
    assert_int_equal(err, CL_SUCCESS);

    cl_kernel kernel = build_kernel(fx, empty_kernel, "foo");
    size_t global = 1;
    cl_event event;
    assert_int_equal(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, &event),
                     CL_SUCCESS);
    assert_int_equal(clFinish(queue), CL_SUCCESS);

    size = 0;
    assert_int_equal(clGetEventProfilingInfo(
                         event, CL_PROFILING_COMMAND_PERFORMANCE_COUNTERS_CODEPLAY, 0, NULL, &size),
                     CL_SUCCESS);
    assert_int_equal(size, sizeof(cl_performance_counter_result_codeplay));
    assert_int_equal(size, 8);
    cl_performance_counter_result_codeplay result;
    assert_int_equal(clGetEventProfilingInfo(event,
                                             CL_PROFILING_COMMAND_PERFORMANCE_COUNTERS_CODEPLAY,
                                             size, &result, NULL),
                     CL_SUCCESS);
    assert_in_range(counters[0].storage, CL_PERFORMANCE_COUNTER_RESULT_TYPE_INT32_CODEPLAY,
                    CL_PERFORMANCE_COUNTER_RESULT_TYPE_FLOAT64_CODEPLAY);

    clReleaseEvent(event);
    clReleaseKernel(kernel);
    clReleaseCommandQueue(queue);
    free(counters);
}

static void device_lists_the_catalogue_as_codeplay_records(void **state)
{
    struct cl_fixture *fx = *state;
    const tally_catalogue *cat;
    assert_int_equal(tally_backend_catalogue(NULL, &cat), TALLY_OK);
    uint32_t count = tally_catalogue_counter_count(cat);
    size_t size = 0;
    assert_int_equal(
        clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, 0, NULL, &size),
        CL_SUCCESS);
    assert_int_equal(sizeof(cl_performance_counter_codeplay), 780);
    assert_int_equal(size, count * 780);
    cl_performance_counter_codeplay *records = malloc(size);
    assert_int_equal(
        clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, size, records, NULL),
        CL_SUCCESS);
    for (uint32_t i = 0; i < count; i++) {
        const tally_counter_info *c = tally_catalogue_counter(cat, i);
        assert_string_equal(records[i].name, tally_counter_name_for(c, TALLY_API_CL));
        assert_string_equal(records[i].category, tally_catalogue_group(cat, c->group)->name);
        assert_int_equal(records[i].unit, (cl_int)c->unit);
        assert_int_equal(records[i].storage, (cl_int)c->storage);
        cl_uint uuid = (cl_uint)c->uuid[0] << 24 | (cl_uint)c->uuid[1] << 16 |
                       (cl_uint)c->uuid[2] << 8 | c->uuid[3];
        assert_int_equal(records[i].uuid, uuid);
        assert_int_equal(records[i].description[255], '\0');
        for (uint32_t j = 0; j < i; j++)
            assert_int_not_equal(records[i].uuid, records[j].uuid);
    }
    /* The OpenCL vocabulary: work-items, not invocations. */
    uint32_t index;
    assert_int_equal(tally_catalogue_find(cat, "CsInvocations", &index), TALLY_OK);
    assert_string_equal(records[index].name, "Kernel work-items");
    free(records);
}

static void extension_versions_list_both_extensions(void **state)
{
    struct cl_fixture *fx = *state;
    size_t size = 0;
    assert_int_equal(clGetDeviceInfo(fx->device, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, NULL, &size),
                     CL_SUCCESS);
    cl_name_version *list = malloc(size);
    assert_int_equal(
        clGetDeviceInfo(fx->device, CL_DEVICE_EXTENSIONS_WITH_VERSION, size, list, NULL),
        CL_SUCCESS);
    int found = 0;
    for (size_t i = 0; i < size / sizeof(*list); i++)
        if (strcmp(list[i].name, "cl_codeplay_performance_counters") == 0) {
            assert_int_equal(list[i].version, CL_MAKE_VERSION(0, 1, 0));
            found++;
        }
    assert_int_equal(found, 1);
    free(list);

    assert_int_equal(
        clGetPlatformInfo(fx->platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, 0, NULL, &size),
        CL_SUCCESS);
    list = malloc(size);
    assert_int_equal(
        clGetPlatformInfo(fx->platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, size, list, NULL),
        CL_SUCCESS);
    found = 0;
    for (size_t i = 0; i < size / sizeof(*list); i++)
        found += strcmp(list[i].name, "cl_khr_create_command_queue") == 0;
    assert_int_equal(found, 1);
    free(list);

    /* A buffer one byte short of the longer string is refused. */
    assert_int_equal(clGetDeviceInfo(fx->device, CL_DEVICE_EXTENSIONS, 0, NULL, &size), CL_SUCCESS);
    char *text = malloc(size);
    assert_int_equal(clGetDeviceInfo(fx->device, CL_DEVICE_EXTENSIONS, size - 1, text, NULL),
                     CL_INVALID_VALUE);
    assert_int_equal(clGetDeviceInfo(fx->device, CL_DEVICE_EXTENSIONS, size, text, NULL),
                     CL_SUCCESS);
    assert_int_equal(strlen(text) + 1, size);
    free(text);
}

static void both_lookups_hand_out_the_khr_entry_point(void **state)
{
    struct cl_fixture *fx = *state;
    void *deprecated = clGetExtensionFunctionAddress("clCreateCommandQueueWithPropertiesKHR");
    assert_non_null(deprecated);
    assert_ptr_equal(deprecated, (void *)fx->create_queue_khr);
}

/* CsInvocations = groups x local size and CsWorkgroups = groups, in the
 * order the counters were enabled, each in its storage's union member. */
static void kernel_results_count_its_work_items_and_groups(void **state)
{
    struct cl_fixture *fx = *state;
    cl_uint uuids[] = {uuid_of(fx, "Kernel work-groups"), uuid_of(fx, "Kernel work-items"),
                       uuid_of(fx, "Kernel enqueues"), uuid_of(fx, "Transfer commands")};
    cl_command_queue queue = counter_queue(fx, uuids, 4);
    cl_kernel kernel = build_kernel(fx, empty_kernel, "foo");
    size_t global[2] = {64, 6}, local[2] = {8, 3};
    cl_event event;
    assert_int_equal(clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, local, 0, NULL, &event),
                     CL_SUCCESS);
    assert_int_equal(clWaitForEvents(1, &event), CL_SUCCESS);
    cl_performance_counter_result_codeplay results[4];
    read_results(event, results, 4);
    assert_int_equal(results[0].uint64, 8 * 2);
    assert_int_equal(results[1].uint64, 64 * 6);
    assert_int_equal(results[2].uint64, 1);
    assert_int_equal(results[3].uint64, 0);
    clReleaseEvent(event);
    clReleaseKernel(kernel);
    clReleaseCommandQueue(queue);
}

/* Each event reports its own command, however many ran on the queue. */
static void results_are_per_event(void **state)
{
    struct cl_fixture *fx = *state;
    cl_uint uuid = uuid_of(fx, "Kernel work-items");
    cl_command_queue queue = counter_queue(fx, &uuid, 1);
    cl_kernel kernel = build_kernel(fx, empty_kernel, "foo");
    enum { N = 5 };
    cl_event events[N];
    for (size_t i = 0; i < N; i++) {
        size_t global = 16 * (i + 1), local = 16;
        assert_int_equal(
            clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, &events[i]),
            CL_SUCCESS);
        /* Work without an event in between is not counted by anyone. */
        assert_int_equal(
            clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL),
            CL_SUCCESS);
    }
    assert_int_equal(clFinish(queue), CL_SUCCESS);
    for (size_t i = 0; i < N; i++) {
        cl_performance_counter_result_codeplay result;
        read_results(events[i], &result, 1);
        assert_int_equal(result.uint64, 16 * (i + 1));
        clReleaseEvent(events[i]);
    }
    clReleaseKernel(kernel);
    clReleaseCommandQueue(queue);
}

static const char local_size_kernel[] =
    "kernel void sizes(global uint *out) {\n"
    "  if (get_global_id(0) == 0 && get_global_id(1) == 0 && get_global_id(2) == 0) {\n"
    "    out[0] = get_local_size(0); out[1] = get_local_size(1); out[2] = get_local_size(2);\n"
    "  }\n"
    "}\n";

/* Without a local size, the shim counts the groups the driver really ran:
 * compared with get_local_size() inside the kernel for many shapes, each
 * launched twice in a row (the second from the thread's memo of the last
 * launch, which a new shape must not take). */
static void default_local_size_is_the_one_the_driver_used(void **state)
{
    struct cl_fixture *fx = *state;
    static const size_t shapes[][3] = {
        {1, 1, 1},     {7, 1, 1},    {64, 1, 1},   {100, 1, 1},  {1000, 1, 1}, {4096, 1, 1},
        {65536, 1, 1}, {97, 1, 1},   {24, 1, 1},   {16, 16, 1},  {30, 7, 1},   {512, 512, 1},
        {3, 5, 7},     {64, 64, 64}, {1, 1024, 1}, {8, 8, 1000}, {6, 1, 1},    {4100, 3, 1},
    };
    cl_uint uuids[] = {uuid_of(fx, "Kernel work-groups"), uuid_of(fx, "Kernel work-items")};
    cl_command_queue queue = counter_queue(fx, uuids, 2);
    cl_kernel kernel = build_kernel(fx, local_size_kernel, "sizes");
    cl_int err;
    cl_mem out = clCreateBuffer(fx->context, CL_MEM_READ_WRITE, 3 * sizeof(cl_uint), NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 0, sizeof(out), &out), CL_SUCCESS);
    for (size_t i = 0; i < 2 * (sizeof shapes / sizeof shapes[0]); i++) {
        size_t s = i / 2;
        cl_uint dims = shapes[s][2] > 1 ? 3 : shapes[s][1] > 1 ? 2 : 1;
        cl_event event;
        assert_int_equal(
            clEnqueueNDRangeKernel(queue, kernel, dims, NULL, shapes[s], NULL, 0, NULL, &event),
            CL_SUCCESS);
        cl_uint used[3];
        assert_int_equal(
            clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof used, used, 0, NULL, NULL),
            CL_SUCCESS);
        cl_performance_counter_result_codeplay results[2];
        read_results(event, results, 2);
        uint64_t groups =
            (shapes[s][0] / used[0]) * (shapes[s][1] / used[1]) * (shapes[s][2] / used[2]);
        print_message("global %zux%zux%zu: driver local %ux%ux%u\n", shapes[s][0], shapes[s][1],
                      shapes[s][2], used[0], used[1], used[2]);
        assert_int_equal(results[0].uint64, groups);
        assert_int_equal(results[1].uint64, shapes[s][0] * shapes[s][1] * shapes[s][2]);
        clReleaseEvent(event);
    }
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseCommandQueue(queue);
}

/* Everything but the counter key reaches the driver; profiling is on; the
 * properties array reads back as the program gave it. */
static void other_properties_are_kept_and_profiling_is_enabled(void **state)
{
    struct cl_fixture *fx = *state;
    cl_performance_counter_desc_codeplay desc = {.uuid = uuid_of(fx, "Kernel enqueues")};
    cl_performance_counter_config_codeplay config = {.count = 1, .descs = &desc};
    cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                                        CL_QUEUE_PERFORMANCE_COUNTERS_CODEPLAY,
                                        (cl_queue_properties)(uintptr_t)&config, 0};
    cl_int err;
    cl_command_queue queue = fx->create_queue_khr(fx->context, fx->device, properties, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_command_queue_properties flags = 0;
    assert_int_equal(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof flags, &flags, NULL),
                     CL_SUCCESS);
    assert_true(flags & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    assert_true(flags & CL_QUEUE_PROFILING_ENABLE);
    cl_queue_properties back[5];
    size_t size = 0;
    assert_int_equal(
        clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES_ARRAY, sizeof back, back, &size),
        CL_SUCCESS);
    assert_int_equal(size, sizeof properties);
    assert_memory_equal(back, properties, sizeof properties);

    /* START/END timestamps work without the program asking for profiling,
     * as on the oneAPI Construction Kit. */
    cl_kernel kernel = build_kernel(fx, empty_kernel, "foo");
    size_t global = 4;
    cl_event event;
    assert_int_equal(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, &event),
                     CL_SUCCESS);
    assert_int_equal(clFinish(queue), CL_SUCCESS);
    cl_ulong start = 0, end = 0;
    assert_int_equal(
        clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL),
        CL_SUCCESS);
    assert_int_equal(
        clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL),
        CL_SUCCESS);
    assert_true(end >= start);
    clReleaseEvent(event);
    clReleaseKernel(kernel);
    clReleaseCommandQueue(queue);
}

/* The program may reuse its config as soon as the queue exists. */
static void the_counter_config_is_copied_at_creation(void **state)
{
    struct cl_fixture *fx = *state;
    cl_performance_counter_desc_codeplay *desc = malloc(sizeof(*desc));
    desc->uuid = uuid_of(fx, "Kernel work-items");
    cl_performance_counter_config_codeplay *config = malloc(sizeof(*config));
    *config = (cl_performance_counter_config_codeplay){.count = 1, .descs = desc};
    cl_queue_properties properties[] = {CL_QUEUE_PERFORMANCE_COUNTERS_CODEPLAY,
                                        (cl_queue_properties)(uintptr_t)config, 0};
    cl_int err;
    cl_command_queue queue = fx->create_queue_khr(fx->context, fx->device, properties, &err);
    assert_int_equal(err, CL_SUCCESS);
    desc->uuid = uuid_of(fx, "Kernel enqueues");
    free(desc);
    free(config);
    cl_kernel kernel = build_kernel(fx, empty_kernel, "foo");
    size_t global = 32, local = 8;
    cl_event event;
    assert_int_equal(
        clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, &event),
        CL_SUCCESS);
    assert_int_equal(clFinish(queue), CL_SUCCESS);
    cl_performance_counter_result_codeplay result;
    read_results(event, &result, 1);
    assert_int_equal(result.uint64, 32);
    clReleaseEvent(event);
    clReleaseKernel(kernel);
    clReleaseCommandQueue(queue);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unitcl_default_flow_succeeds),
        cmocka_unit_test(device_lists_the_catalogue_as_codeplay_records),
        cmocka_unit_test(extension_versions_list_both_extensions),
        cmocka_unit_test(both_lookups_hand_out_the_khr_entry_point),
        cmocka_unit_test(kernel_results_count_its_work_items_and_groups),
        cmocka_unit_test(results_are_per_event),
        cmocka_unit_test(default_local_size_is_the_one_the_driver_used),
        cmocka_unit_test(other_properties_are_kept_and_profiling_is_enabled),
        cmocka_unit_test(the_counter_config_is_copied_at_creation),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("cl_counters", tests, cl_fixture_setup, cl_fixture_teardown);
}
