/*
 * A VK_KHR_performance_query client: on the first device, one query of
 * every counter the queue family offers around a 3-vertex triangle draw,
 * one around a 2x1x1 dispatch of local size 8, each in its own submission.
 * Prints one JSON line per query: {"query":"draw","GPU time":12345,...},
 * counter display names as keys. The environment chooses driver and layers.
 *
 * Usage: vk_perf_probe (its shaders are the test build's)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_context.h"

enum { MAX_COUNTERS = 256 };

static void print_query(const char *name, uint32_t n, const VkPerformanceCounterKHR *counters,
                        const VkPerformanceCounterDescriptionKHR *descriptions,
                        const VkPerformanceCounterResultKHR *results)
{
    printf("{\"query\":\"%s\"", name);
    for (uint32_t i = 0; i < n; i++) {
        double value = 0;
        switch (counters[i].storage) {
        case VK_PERFORMANCE_COUNTER_STORAGE_INT32_KHR: value = results[i].int32; break;
        case VK_PERFORMANCE_COUNTER_STORAGE_INT64_KHR: value = (double)results[i].int64; break;
        case VK_PERFORMANCE_COUNTER_STORAGE_UINT32_KHR: value = results[i].uint32; break;
        case VK_PERFORMANCE_COUNTER_STORAGE_UINT64_KHR: value = (double)results[i].uint64; break;
        case VK_PERFORMANCE_COUNTER_STORAGE_FLOAT32_KHR: value = results[i].float32; break;
        default: value = results[i].float64; break;
        }
        printf(",\"%s\":%.0f", descriptions[i].name, value);
    }
    printf("}\n");
}

int main(void)
{
    vk_context c;
    vk_context_options options = {.performance_query_extension = true,
                                  .performance_query_feature = true,
                                  .keep_environment = true};
    if (!vk_context_create(&c, &options)) {
        fprintf(stderr, "vk_perf_probe: no device with VK_KHR_performance_query\n");
        return 1;
    }
    static VkPerformanceCounterKHR counters[MAX_COUNTERS];
    static VkPerformanceCounterDescriptionKHR descriptions[MAX_COUNTERS];
    for (uint32_t i = 0; i < MAX_COUNTERS; i++) {
        counters[i].sType = VK_STRUCTURE_TYPE_PERFORMANCE_COUNTER_KHR;
        descriptions[i].sType = VK_STRUCTURE_TYPE_PERFORMANCE_COUNTER_DESCRIPTION_KHR;
    }
    uint32_t n = MAX_COUNTERS;
    c.enumerate_counters(c.physical, c.family, &n, counters, descriptions);
    uint32_t indices[MAX_COUNTERS];
    for (uint32_t i = 0; i < n; i++)
        indices[i] = i;
    VkQueryPoolPerformanceCreateInfoKHR performance = {
        VK_STRUCTURE_TYPE_QUERY_POOL_PERFORMANCE_CREATE_INFO_KHR, NULL, c.family, n, indices};
    uint32_t passes = 0;
    c.get_passes(c.physical, &performance, &passes);
    VkQueryPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .pNext = &performance,
                                  .queryType = VK_QUERY_TYPE_PERFORMANCE_QUERY_KHR,
                                  .queryCount = 2};
    VkQueryPool pool;
    VkAcquireProfilingLockInfoKHR lock = {VK_STRUCTURE_TYPE_ACQUIRE_PROFILING_LOCK_INFO_KHR, NULL,
                                          0, UINT64_MAX};
    if (passes != 1 || vkCreateQueryPool(c.device, &info, NULL, &pool) != VK_SUCCESS ||
        c.acquire_lock(c.device, &lock) != VK_SUCCESS) {
        fprintf(stderr, "vk_perf_probe: %u counters need %u passes\n", n, passes);
        return 1;
    }
    vkResetQueryPool(c.device, pool, 0, 2);
    VkCommandBuffer draw = vk_context_begin(&c);
    vkCmdBeginQuery(draw, pool, 0, 0);
    vk_context_draw_triangle(&c, draw);
    vkCmdEndQuery(draw, pool, 0);
    vkEndCommandBuffer(draw);
    vk_context_submit(&c, draw, 0);
    VkCommandBuffer dispatch = vk_context_begin(&c);
    vkCmdBeginQuery(dispatch, pool, 1, 0);
    vk_context_dispatch(&c, dispatch, 2, 1, 1);
    vkCmdEndQuery(dispatch, pool, 1);
    vkEndCommandBuffer(dispatch);
    vk_context_submit(&c, dispatch, 0);
    c.release_lock(c.device);
    static VkPerformanceCounterResultKHR results[2][MAX_COUNTERS];
    VkResult r = vkGetQueryPoolResults(c.device, pool, 0, 2, sizeof(results), results,
                                       sizeof(results[0]), VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS) {
        fprintf(stderr, "vk_perf_probe: vkGetQueryPoolResults: %d\n", r);
        return 1;
    }
    print_query("draw", n, counters, descriptions, results[0]);
    print_query("dispatch", n, counters, descriptions, results[1]);
    VkCommandBuffer both[] = {draw, dispatch};
    vkFreeCommandBuffers(c.device, c.pool, 2, both);
    vkDestroyQueryPool(c.device, pool, NULL);
    vk_context_destroy(&c);
    return 0;
}
