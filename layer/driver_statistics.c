/*
 * The application's pipeline-statistics query pools on a measuring device.
 * Vulkan allows one active query of a type per command buffer, so the
 * application's statistics queries and the layer's per-command ones would
 * collide. The layer therefore owns the application's pools, like
 * performance pools (query_pools.c): the driver never sees them, each query
 * is a slot of an engine results object over the statistics' counters, and
 * vkCmdBeginQuery/vkCmdEndQuery become markers whose value is the sum of the
 * layer's measurements of the commands between them: the driver's own
 * statistics of exactly those commands.
 */
#include "driver_measure.h"

#include <stdlib.h>
#include <string.h>

/* Counter symbols of the statistics, in VkQueryPipelineStatisticFlagBits order. */
static const char *const statistic_symbols[TALLY_STATISTIC_COUNT] = {
    "IaVertices",         "IaPrimitives",        "VsInvocations",     "GsInvocations",
    "GsPrimitives",       "ClipperInvocations",  "ClipperPrimitives", "FsInvocations",
    "TessControlPatches", "TessEvalInvocations", "CsInvocations",
};

VkResult layer_statistics_pool_create(layer_device *device, const VkQueryPoolCreateInfo *info,
                                      VkQueryPool *pool_out)
{
    const tally_catalogue *cat = tally_device_catalogue(device->engine);
    uint32_t counters[TALLY_STATISTIC_COUNT], n = 0;
    VkQueryPipelineStatisticFlags flags = info->pipelineStatistics;
    for (uint32_t bit = 0; bit < TALLY_STATISTIC_COUNT; bit++)
        if ((flags & (1u << bit)) &&
            tally_catalogue_find(cat, statistic_symbols[bit], &counters[n++]) != TALLY_OK)
            return VK_ERROR_FEATURE_NOT_PRESENT; /* the device measures no such statistic */
    if (!n || (flags >> TALLY_STATISTIC_COUNT) || info->queryCount == 0)
        return VK_ERROR_FEATURE_NOT_PRESENT;
    layer_query_pool *pool = calloc(1, sizeof(*pool));
    if (!pool)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    pool->catalogue = cat;
    pool->counter_count = n;
    pool->statistics = flags;
    if (tally_results_create(device->engine, counters, n, info->queryCount, &pool->results) !=
        TALLY_OK) {
        free(pool);
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    layer_copy_pool_create(device, pool, info->queryCount);
    VkQueryPool handle = (VkQueryPool)(uintptr_t)pool;
    if (object_map_put(&device->query_pools, (uint64_t)handle, pool) != pool) {
        layer_copy_pool_destroy(device, pool);
        tally_results_release(pool->results);
        free(pool);
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    *pool_out = handle;
    return VK_SUCCESS;
}

static void put(char *at, uint32_t i, uint64_t value, bool wide)
{
    if (wide) {
        memcpy(at + i * sizeof(uint64_t), &value, sizeof(uint64_t));
    } else {
        uint32_t narrow = (uint32_t)value;
        memcpy(at + i * sizeof(uint32_t), &narrow, sizeof(uint32_t));
    }
}

/* A query is available once the engine executed its end: with WAIT_BIT the
 * engine is waited for (it waits for the GPU); without it, the engine first
 * catches up with every submission the GPU has finished, so a query whose
 * commands completed reads as available, as the driver's own would. */
VkResult layer_statistics_pool_read(layer_device *device, layer_query_pool *pool, uint32_t first,
                                    uint32_t count, size_t size, void *data, VkDeviceSize stride,
                                    VkQueryResultFlags flags)
{
    uint32_t n = pool->counter_count;
    bool wide = flags & VK_QUERY_RESULT_64_BIT;
    bool with_availability = flags & VK_QUERY_RESULT_WITH_AVAILABILITY_BIT;
    size_t word = wide ? sizeof(uint64_t) : sizeof(uint32_t);
    tally_value values[TALLY_STATISTIC_COUNT];
    VkResult result = VK_SUCCESS;
    bool caught_up = false;
    for (uint32_t q = 0; q < count; q++) {
        char *at = (char *)data + (size_t)q * stride;
        if ((size_t)q * stride + (n + with_availability) * word > size)
            break;
        uint32_t slot = first + q;
        if (flags & VK_QUERY_RESULT_WAIT_BIT) {
            while (tally_results_wait(pool->results, slot, 10 * 1000 * 1000) != TALLY_OK &&
                   tally_completed_seqno(device->engine) < atomic_load(&device->last_seqno))
                ;
        } else if (!caught_up &&
                   tally_results_get(pool->results, slot, NULL, 0, NULL) != TALLY_OK) {
            layer_measure_catch_up(device);
            caught_up = true;
        }
        bool available = tally_results_get(pool->results, slot, values, n, NULL) == TALLY_OK;
        if (available)
            for (uint32_t c = 0; c < n; c++)
                put(at, c, values[c].u64, wide);
        else
            result = VK_NOT_READY;
        /* PARTIAL without WAIT: an unavailable query gets a value between
         * zero and its final one; the layer writes zero, as its copies do. */
        if (!available && (flags & VK_QUERY_RESULT_PARTIAL_BIT) &&
            !(flags & VK_QUERY_RESULT_WAIT_BIT))
            for (uint32_t c = 0; c < n; c++)
                put(at, c, 0, wide);
        if (with_availability)
            put(at, n, available, wide);
    }
    return result;
}
