/*
 * The layer together with VK_LAYER_KHRONOS_validation: nothing the layer
 * does on the application's behalf (its calls to lavapipe, the extension it
 * provides and strips, its copies of indirect parameters) draws a validation
 * message, with the best-practices and synchronization checks on as well.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "layer_harness.h"
#include "vk_context.h"

static const char *const workload[] = {VK_WORKLOAD, SHADER_DIR, NULL};

static int strcmp_indirect(const char *const *a, const char *const *b)
{
    return strcmp(*a, *b);
}

static unsigned count_messages(const char *output)
{
    unsigned n = 0;
    for (const char *at = output; (at = strstr(at, "Validation ")); at++)
        n++;
    return n;
}

/* The workload is valid on its own: with the layer it stays so. */
static void workload_under_validation_gets_no_message_with_the_layer(void **state)
{
    (void)state;
    const char *alone_env[] = {"VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation", NULL};
    run_result alone = run_under_layer(workload, ACTIVATE_NONE, alone_env);
    assert_int_equal(alone.exit_code, 0);
    assert_int_equal(count_messages(alone.output), 0);
    const char *both_env[] = {
        "VK_INSTANCE_LAYERS=VK_LAYER_TALLY_counters:VK_LAYER_KHRONOS_validation", NULL};
    run_result both = run_under_layer(workload, ACTIVATE_EXPLICIT, both_env);
    assert_int_equal(both.exit_code, 0);
    assert_non_null(both.report); /* the layer was active */
    if (count_messages(both.output))
        print_error("%s\n", both.output);
    assert_int_equal(count_messages(both.output), 0);
    run_result_free(&alone);
    run_result_free(&both);
}

/* The distinct message IDs of a run's validation messages, sorted, one per
 * line. Distinct: how often the layer's indirect readback draws its
 * messages depends on how many readbacks were in flight, which varies. */
static char *message_ids(const char *output)
{
    size_t n = 0, capacity = 64;
    char **ids = malloc(capacity * sizeof(*ids));
    for (const char *at = output; ids && (at = strstr(at, "Validation ")); at++) {
        const char *open = strstr(at, "[ "), *close = open ? strstr(open, " ]") : NULL;
        if (!close)
            break;
        if (n == capacity)
            ids = realloc(ids, (capacity *= 2) * sizeof(*ids));
        ids[n++] = strndup(open + 2, (size_t)(close - open - 2));
    }
    qsort(ids, n, sizeof(*ids), (int (*)(const void *, const void *))strcmp_indirect);
    size_t length = 1;
    for (size_t i = 0; i < n; i++)
        length += strlen(ids[i]) + 1;
    char *joined = calloc(1, length);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(ids[i], ids[i - 1]) != 0) {
            strcat(joined, ids[i]);
            strcat(joined, "\n");
        }
    }
    for (size_t i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
    return joined;
}

/*
 * TALLY_BACKEND=driver adds the layer's own queries to the application's
 * command buffers, resets them before and copies them after its batches.
 * With core, synchronization and best-practices validation below the layer,
 * none of that draws a message: the run reports the kinds of messages the
 * same run on simgpu does (whatever those are; the simulated backend adds
 * no query), and no other.
 */
static void driver_backend_queries_under_sync_and_best_practices_get_no_message(void **state)
{
    (void)state;
    char dir[] = "/tmp/tally-validation-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof(path), "%s/vk_layer_settings.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(
        "khronos_validation.report_flags = error,warn,perf\n"
        "khronos_validation.debug_action = VK_DBG_LAYER_ACTION_LOG_MSG\n"
        "khronos_validation.enables = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT,"
        "VK_VALIDATION_FEATURE_ENABLE_BEST_PRACTICES_EXT\n",
        f);
    fclose(f);
    char settings[300];
    snprintf(settings, sizeof(settings), "VK_LAYER_SETTINGS_PATH=%s", dir);
    const char *layers = "VK_INSTANCE_LAYERS=VK_LAYER_TALLY_counters:VK_LAYER_KHRONOS_validation";
    const char *simulated_env[] = {layers, settings, "TALLY_BACKEND=simgpu", NULL};
    const char *measured_env[] = {layers, settings, "TALLY_BACKEND=driver", NULL};
    run_result simulated = run_under_layer(workload, ACTIVATE_EXPLICIT, simulated_env);
    run_result measured = run_under_layer(workload, ACTIVATE_EXPLICIT, measured_env);
    unlink(path);
    rmdir(dir);
    assert_int_equal(simulated.exit_code, 0);
    assert_int_equal(measured.exit_code, 0);
    char *expected = message_ids(simulated.output), *got = message_ids(measured.output);
    assert_true(count_messages(simulated.output) > 0); /* best practices did run */
    if (strcmp(expected, got) != 0)
        print_error("%s\n", measured.output);
    assert_string_equal(got, expected);
    free(expected);
    free(got);
    run_result_free(&simulated);
    run_result_free(&measured);
}

/* A performance query pool, its commands and a multi-pass submission never reach the driver. */
static void performance_queries_under_validation_get_no_message(void **state)
{
    (void)state;
    unsigned messages = 0;
    vk_context c;
    vk_context_options options = {.performance_query_extension = true,
                                  .performance_query_feature = true,
                                  .extra_layer = "VK_LAYER_KHRONOS_validation",
                                  .messenger = vk_context_count_validation,
                                  .messenger_data = &messages};
    assert_true(vk_context_create(&c, &options));
    uint32_t indices[] = {0, 1, 2, 3};
    VkQueryPoolPerformanceCreateInfoKHR performance = {
        VK_STRUCTURE_TYPE_QUERY_POOL_PERFORMANCE_CREATE_INFO_KHR, NULL, 0, 4, indices};
    uint32_t passes = 0;
    c.get_passes(c.physical, &performance, &passes);
    VkQueryPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .pNext = &performance,
                                  .queryType = VK_QUERY_TYPE_PERFORMANCE_QUERY_KHR,
                                  .queryCount = 1};
    VkQueryPool pool;
    assert_int_equal(vkCreateQueryPool(c.device, &info, NULL, &pool), VK_SUCCESS);
    VkAcquireProfilingLockInfoKHR lock = {VK_STRUCTURE_TYPE_ACQUIRE_PROFILING_LOCK_INFO_KHR, NULL,
                                          0, UINT64_MAX};
    assert_int_equal(c.acquire_lock(c.device, &lock), VK_SUCCESS);
    vkResetQueryPool(c.device, pool, 0, 1);
    VkCommandBuffer cb = vk_context_begin(&c);
    vkCmdBeginQuery(cb, pool, 0, 0);
    vk_context_draw_triangle(&c, cb);
    vkCmdEndQuery(cb, pool, 0);
    vk_context_dispatch(&c, cb, 2, 1, 1);
    vkEndCommandBuffer(cb);
    for (uint32_t pass = 0; pass < passes; pass++)
        assert_int_equal(vk_context_submit(&c, cb, pass), VK_SUCCESS);
    c.release_lock(c.device);
    VkPerformanceCounterResultKHR results[4];
    assert_int_equal(vkGetQueryPoolResults(c.device, pool, 0, 1, sizeof(results), results,
                                           sizeof(results), VK_QUERY_RESULT_WAIT_BIT),
                     VK_SUCCESS);
    vkFreeCommandBuffers(c.device, c.pool, 1, &cb);
    vkDestroyQueryPool(c.device, pool, NULL);
    vk_context_destroy(&c);
    assert_int_equal(messages, 0);
}

/* With best practices and synchronization validation on, the workload (its
 * indirect draws and dispatches included, whose parameters the layer copies
 * back) draws exactly the messages it draws without the layer: no
 * ALL_COMMANDS barrier, small allocation, resettable command buffer or
 * buffer freed before its memory of the layer's own. */
static void best_practices_and_synchronization_see_nothing_new_with_the_layer(void **state)
{
    (void)state;
    const char *alone_env[] = {"VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation",
                               VALIDATION_BEST_PRACTICES_AND_SYNC, NULL};
    run_result alone = run_under_layer(workload, ACTIVATE_NONE, alone_env);
    assert_int_equal(alone.exit_code, 0);
    const char *both_env[] = {
        "VK_INSTANCE_LAYERS=VK_LAYER_TALLY_counters:VK_LAYER_KHRONOS_validation",
        VALIDATION_BEST_PRACTICES_AND_SYNC, NULL};
    run_result both = run_under_layer(workload, ACTIVATE_EXPLICIT, both_env);
    assert_int_equal(both.exit_code, 0);
    assert_non_null(both.report); /* the layer was active */
    char *added = validation_messages_added(alone.output, both.output);
    if (*added)
        print_error("messages only with the layer:\n%s", added);
    assert_string_equal(added, "");
    free(added);
    run_result_free(&alone);
    run_result_free(&both);
}

/* An instance created for Vulkan 1.0 without
 * VK_KHR_get_physical_device_properties2 may not call
 * vkGetPhysicalDeviceFeatures2: the layer's own questions (is the extension
 * native? can it be provided?) stay within what such an instance may call. */
static void an_instance_for_vulkan_1_0_gets_no_message_from_the_layer(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof(path), "%s/share/vulkan/explicit_layer.d", TALLY_BUILD_DIR);
    setenv("VK_ADD_LAYER_PATH", path, 1);
    setenv("VK_DRIVER_FILES", TALLY_LAVAPIPE_ICD, 1);
    setenv("VK_INSTANCE_LAYERS", "VK_LAYER_TALLY_counters:VK_LAYER_KHRONOS_validation", 1);
    unsigned messages = 0;
    VkDebugUtilsMessengerCreateInfoEXT messenger = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
        .pfnUserCallback = vk_context_count_validation,
        .pUserData = &messages,
    };
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .apiVersion = VK_API_VERSION_1_0};
    const char *debug_utils = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkInstanceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                 .pNext = &messenger,
                                 .pApplicationInfo = &app,
                                 .enabledExtensionCount = 1,
                                 .ppEnabledExtensionNames = &debug_utils};
    VkInstance instance;
    assert_int_equal(vkCreateInstance(&info, NULL, &instance), VK_SUCCESS);
    PFN_vkCreateDebugUtilsMessengerEXT create_messenger =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(instance,
                                                                  "vkCreateDebugUtilsMessengerEXT");
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
            instance, "vkDestroyDebugUtilsMessengerEXT");
    VkDebugUtilsMessengerEXT handle;
    assert_int_equal(create_messenger(instance, &messenger, NULL, &handle), VK_SUCCESS);
    uint32_t count = 1;
    VkPhysicalDevice physical;
    VkResult r = vkEnumeratePhysicalDevices(instance, &count, &physical);
    assert_true(r == VK_SUCCESS || r == VK_INCOMPLETE);
    uint32_t extensions = 0;
    assert_int_equal(vkEnumerateDeviceExtensionProperties(physical, NULL, &extensions, NULL),
                     VK_SUCCESS);
    VkExtensionProperties *list = calloc(extensions, sizeof(*list));
    assert_int_equal(vkEnumerateDeviceExtensionProperties(physical, NULL, &extensions, list),
                     VK_SUCCESS);
    bool offered = false;
    for (uint32_t i = 0; i < extensions; i++)
        offered |= strcmp(list[i].extensionName, VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME) == 0;
    assert_true(offered); /* the layer answered */
    free(list);
    VkPhysicalDeviceFeatures features;
    vkGetPhysicalDeviceFeatures(physical, &features);
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {
        VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, 0, 1, &priority};
    VkDeviceCreateInfo device_info = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                                      .queueCreateInfoCount = 1,
                                      .pQueueCreateInfos = &queue};
    VkDevice device;
    assert_int_equal(vkCreateDevice(physical, &device_info, NULL, &device), VK_SUCCESS);
    vkDestroyDevice(device, NULL);
    destroy_messenger(instance, handle, NULL);
    vkDestroyInstance(instance, NULL);
    assert_int_equal(messages, 0);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(workload_under_validation_gets_no_message_with_the_layer),
        cmocka_unit_test(performance_queries_under_validation_get_no_message),
        cmocka_unit_test(driver_backend_queries_under_sync_and_best_practices_get_no_message),
        cmocka_unit_test(best_practices_and_synchronization_see_nothing_new_with_the_layer),
        cmocka_unit_test(an_instance_for_vulkan_1_0_gets_no_message_from_the_layer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
