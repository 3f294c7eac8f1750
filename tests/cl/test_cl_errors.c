/* Bad input to cl_codeplay_performance_counters gets the error the spec
 * gives, or CL_INVALID_VALUE where it is silent, and leaves nothing behind. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "cl_fixture.h"

static cl_int create_with(struct cl_fixture *fx, const cl_queue_properties *properties)
{
    uint32_t queues_before, queues_after, events;
    live_records(&queues_before, &events);
    cl_int err = CL_SUCCESS;
    cl_command_queue queue = fx->create_queue_khr(fx->context, fx->device, properties, &err);
    if (queue)
        clReleaseCommandQueue(queue);
    else
        assert_int_not_equal(err, CL_SUCCESS);
    live_records(&queues_after, &events);
    assert_int_equal(queues_after, queues_before);
    return err;
}

static cl_int create_with_config(struct cl_fixture *fx,
                                 const cl_performance_counter_config_codeplay *config)
{
    cl_queue_properties properties[] = {CL_QUEUE_PERFORMANCE_COUNTERS_CODEPLAY,
                                        (cl_queue_properties)(uintptr_t)config, 0};
    return create_with(fx, properties);
}

static void queue_creation_rejects_bad_configs(void **state)
{
    struct cl_fixture *fx = *state;
    cl_performance_counter_desc_codeplay desc = {.uuid = uuid_of(fx, "Kernel enqueues")};
    assert_int_equal(create_with_config(fx, NULL), CL_INVALID_VALUE);
    cl_performance_counter_config_codeplay no_descs = {.count = 1, .descs = NULL};
    assert_int_equal(create_with_config(fx, &no_descs), CL_INVALID_VALUE);
    cl_performance_counter_config_codeplay no_counters = {.count = 0, .descs = &desc};
    assert_int_equal(create_with_config(fx, &no_counters), CL_INVALID_VALUE);

    /* A uuid that no counter has. */
    size_t size = 0;
    clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, 0, NULL, &size);
    cl_performance_counter_codeplay *all = malloc(size);
    size_t count = size / sizeof(*all);
    clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, size, all, NULL);
    cl_uint unknown = 1;
    for (bool taken = true; taken; unknown++) {
        taken = false;
        for (size_t i = 0; i < count; i++)
            taken = taken || all[i].uuid == unknown;
        if (!taken)
            break;
    }
    cl_performance_counter_desc_codeplay bad = {.uuid = unknown};
    cl_performance_counter_config_codeplay unknown_uuid = {.count = 1, .descs = &bad};
    assert_int_equal(create_with_config(fx, &unknown_uuid), CL_INVALID_VALUE);

    /* Every counter at once needs more than one pass: a CL command runs once. */
    cl_performance_counter_desc_codeplay *every = calloc(count, sizeof(*every));
    for (size_t i = 0; i < count; i++)
        every[i].uuid = all[i].uuid;
    cl_performance_counter_config_codeplay too_many = {.count = (cl_uint)count, .descs = every};
    uint32_t passes = 0;
    const tally_catalogue *cat;
    tally_backend_catalogue(NULL, &cat);
    uint32_t *indices = calloc(count, sizeof(*indices));
    for (uint32_t i = 0; i < count; i++)
        indices[i] = i;
    assert_int_equal(tally_plan_passes(cat, indices, (uint32_t)count, NULL, &passes), TALLY_OK);
    assert_true(passes > 1);
    assert_int_equal(create_with_config(fx, &too_many), CL_INVALID_VALUE);
    free(indices);
    free(every);
    free(all);

    /* The key named twice. */
    cl_performance_counter_config_codeplay good = {.count = 1, .descs = &desc};
    cl_queue_properties twice[] = {
        CL_QUEUE_PERFORMANCE_COUNTERS_CODEPLAY, (cl_queue_properties)(uintptr_t)&good,
        CL_QUEUE_PERFORMANCE_COUNTERS_CODEPLAY, (cl_queue_properties)(uintptr_t)&good, 0};
    assert_int_equal(create_with(fx, twice), CL_INVALID_VALUE);
    /* And the driver still judges the rest: an unknown key. */
    cl_queue_properties unknown_key[] = {CL_QUEUE_PERFORMANCE_COUNTERS_CODEPLAY,
                                         (cl_queue_properties)(uintptr_t)&good, 0x7777, 1, 0};
    assert_int_equal(create_with(fx, unknown_key), CL_INVALID_VALUE);
}

/* With a device that cannot open (this case runs with TALLY_BACKEND naming
 * no backend) nothing of the extension is offered: a counter queue is the
 * driver's to refuse, as without the shim, instead of a queue whose every
 * event then fails; the device answers no counter list; plain queues work. */
static void without_a_device_counter_queues_are_not_offered(void **state)
{
    struct cl_fixture *fx = *state;
    const char *backend = getenv("TALLY_BACKEND");
    if (!backend || strcmp(backend, "nosuchgpu") != 0)
        skip();
    char extensions[4096] = "";
    assert_int_equal(
        clGetDeviceInfo(fx->device, CL_DEVICE_EXTENSIONS, sizeof extensions, extensions, NULL),
        CL_SUCCESS);
    assert_null(strstr(extensions, "cl_codeplay_performance_counters"));
    size_t size = 0;
    assert_int_equal(
        clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, 0, NULL, &size),
        CL_INVALID_VALUE);
    cl_performance_counter_desc_codeplay desc = {.uuid = 1};
    cl_performance_counter_config_codeplay config = {.count = 1, .descs = &desc};
    cl_queue_properties counting[] = {CL_QUEUE_PERFORMANCE_COUNTERS_CODEPLAY,
                                      (cl_queue_properties)(uintptr_t)&config, 0};
    cl_int err = CL_SUCCESS;
    assert_null(clCreateCommandQueueWithProperties(fx->context, fx->device, counting, &err));
    assert_int_equal(err, CL_INVALID_VALUE);
    cl_command_queue plain =
        clCreateCommandQueueWithProperties(fx->context, fx->device, NULL, &err);
    assert_non_null(plain);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clFinish(plain), CL_SUCCESS);
    assert_int_equal(clReleaseCommandQueue(plain), CL_SUCCESS);
}

static void device_query_rejects_size_and_buffer_mismatches(void **state)
{
    struct cl_fixture *fx = *state;
    size_t size = 0;
    assert_int_equal(
        clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, 0, NULL, &size),
        CL_SUCCESS);
    cl_performance_counter_codeplay *records = malloc(size);
    assert_int_equal(
        clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, 0, records, NULL),
        CL_INVALID_VALUE);
    assert_int_equal(
        clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, size, NULL, NULL),
        CL_INVALID_VALUE);
    assert_int_equal(clGetDeviceInfo(fx->device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY,
                                     size - sizeof(*records), records, NULL),
                     CL_INVALID_VALUE);
    assert_int_equal(clGetDeviceInfo(NULL, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, 0, NULL, &size),
                     CL_INVALID_DEVICE);
    free(records);
}

static cl_int counter_info(cl_event event, size_t size, void *value, size_t *size_ret)
{
    return clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_PERFORMANCE_COUNTERS_CODEPLAY, size,
                                   value, size_ret);
}

static void results_refuse_user_events_and_queues_without_counters(void **state)
{
    struct cl_fixture *fx = *state;
    cl_int err;
    cl_event user = clCreateUserEvent(fx->context, &err);
    assert_int_equal(err, CL_SUCCESS);
    size_t size = 0;
    cl_performance_counter_result_codeplay result;
    assert_int_equal(counter_info(user, 0, NULL, &size), CL_INVALID_VALUE);
    assert_int_equal(clSetUserEventStatus(user, CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(counter_info(user, sizeof result, &result, NULL), CL_INVALID_VALUE);
    clReleaseEvent(user);

    cl_command_queue plain =
        clCreateCommandQueueWithProperties(fx->context, fx->device, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_event marker;
    assert_int_equal(clEnqueueMarkerWithWaitList(plain, 0, NULL, &marker), CL_SUCCESS);
    assert_int_equal(clFinish(plain), CL_SUCCESS);
    assert_int_equal(counter_info(marker, 0, NULL, &size), CL_INVALID_VALUE);
    clReleaseEvent(marker);
    clReleaseCommandQueue(plain);

    assert_int_equal(counter_info(NULL, 0, NULL, &size), CL_INVALID_EVENT);
}

static void results_check_sizes_and_wait_for_completion(void **state)
{
    struct cl_fixture *fx = *state;
    cl_uint uuids[] = {uuid_of(fx, "Kernel enqueues"), uuid_of(fx, "Kernel work-items")};
    cl_command_queue queue = counter_queue(fx, uuids, 2);
    cl_int err;
    cl_event gate = clCreateUserEvent(fx->context, &err);
    cl_event event;
    assert_int_equal(clEnqueueMarkerWithWaitList(queue, 1, &gate, &event), CL_SUCCESS);
    cl_performance_counter_result_codeplay results[2];
    size_t size = 0;
    /* Not complete yet: the size is known, the values are not. */
    assert_int_equal(counter_info(event, sizeof results, results, NULL),
                     CL_PROFILING_INFO_NOT_AVAILABLE);
    assert_int_equal(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(clFinish(queue), CL_SUCCESS);
    assert_int_equal(counter_info(event, 0, NULL, &size), CL_SUCCESS);
    assert_int_equal(size, sizeof results);
    assert_int_equal(counter_info(event, 0, results, NULL), CL_INVALID_VALUE);
    assert_int_equal(counter_info(event, sizeof results, NULL, NULL), CL_INVALID_VALUE);
    assert_int_equal(counter_info(event, sizeof results[0], results, NULL), CL_INVALID_VALUE);
    /* A marker's scope holds no work. */
    assert_int_equal(counter_info(event, sizeof results, results, &size), CL_SUCCESS);
    assert_int_equal(results[0].uint64, 0);
    assert_int_equal(results[1].uint64, 0);
    clReleaseEvent(event);
    clReleaseEvent(gate);
    clReleaseCommandQueue(queue);
}

/* The layer entry points, called as a loader would (Khronos loader rules). */
static void layer_entry_points_follow_the_loader_contract(void **state)
{
    (void)state;
    void *shim = dlopen(getenv("TALLY_CL_SHIM"), RTLD_NOW | RTLD_LOCAL);
    assert_non_null(shim);
    typedef cl_int (*get_info_fn)(cl_uint, size_t, void *, size_t *);
    typedef cl_int (*init_fn)(cl_uint, const void *, cl_uint *, const void **, const cl_ulong *);
    get_info_fn get_info = (get_info_fn)dlsym(shim, "clGetLayerInfo");
    init_fn init = (init_fn)dlsym(shim, "clInitLayerWithProperties");
    assert_non_null(get_info);
    assert_non_null(init);
    assert_non_null(dlsym(shim, "clInitLayer"));
    cl_uint version = 0;
    size_t size = 0;
    assert_int_equal(get_info(0x4240 /* CL_LAYER_API_VERSION */, sizeof version, &version, &size),
                     CL_SUCCESS);
    assert_int_equal(version, 100);
    assert_int_equal(size, sizeof version);
    assert_int_equal(get_info(0x4240, 1, &version, NULL), CL_INVALID_VALUE);
    assert_int_equal(get_info(0x1234, sizeof version, &version, NULL), CL_INVALID_VALUE);
    const cl_ulong properties[] = {0x4242, 1, 0};
    cl_uint entries = 0;
    const void *table = NULL;
    assert_int_equal(init(10, &properties, &entries, &table, properties), CL_INVALID_PROPERTY);
    assert_null(table);
    dlclose(shim);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queue_creation_rejects_bad_configs),
        cmocka_unit_test(without_a_device_counter_queues_are_not_offered),
        cmocka_unit_test(device_query_rejects_size_and_buffer_mismatches),
        cmocka_unit_test(results_refuse_user_events_and_queues_without_counters),
        cmocka_unit_test(results_check_sizes_and_wait_for_completion),
        cmocka_unit_test(layer_entry_points_follow_the_loader_contract),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("cl_errors", tests, cl_fixture_setup, cl_fixture_teardown);
}
