/*
 * Performance query pools of VK_KHR_performance_query, owned entirely by the
 * layer: the handle is the layer's record, the driver never sees the pool or
 * its commands, and each query is a slot of an engine results object that
 * begin/end markers in the command buffer's stream fill. Other query pools
 * pass through.
 */
#include "driver_measure.h"
#include "layer_state.h"

#include <stdlib.h>
#include <string.h>

layer_query_pool *layer_query_pool_find(layer_device *device, VkQueryPool pool)
{
    return pool ? object_map_get(&device->query_pools, (uint64_t)pool) : NULL;
}

static const VkQueryPoolPerformanceCreateInfoKHR *
performance_info(const VkQueryPoolCreateInfo *info)
{
    for (const VkBaseInStructure *s = info->pNext; s; s = s->pNext)
        if (s->sType == VK_STRUCTURE_TYPE_QUERY_POOL_PERFORMANCE_CREATE_INFO_KHR)
            return (const VkQueryPoolPerformanceCreateInfoKHR *)s;
    return NULL;
}

static VkResult create_performance_pool(layer_device *device, const VkQueryPoolCreateInfo *info,
                                        VkQueryPool *pool_out)
{
    const VkQueryPoolPerformanceCreateInfoKHR *performance = performance_info(info);
    /* Without the extension and its feature enabled there are no performance
     * pools, as on a driver that lacks them. */
    if (!device->performance_query_enabled || !device->engine || !performance ||
        info->queryCount == 0) {
        tally_log(TALLY_LOG_WARN, "vkCreateQueryPool: performance query pool refused (%s)",
                  !device->performance_query_enabled ? "feature not enabled" : "bad create info");
        return VK_ERROR_FEATURE_NOT_PRESENT;
    }
    layer_query_pool *pool = calloc(1, sizeof(*pool));
    if (!pool)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    pool->catalogue = tally_device_catalogue(device->engine);
    pool->counter_count = performance->counterIndexCount;
    tally_status status =
        tally_results_create(device->engine, performance->pCounterIndices,
                             performance->counterIndexCount, info->queryCount, &pool->results);
    if (status != TALLY_OK) {
        free(pool);
        return status == TALLY_ERROR_OUT_OF_MEMORY ? VK_ERROR_OUT_OF_HOST_MEMORY
                                                   : VK_ERROR_FEATURE_NOT_PRESENT;
    }
    VkQueryPool handle = (VkQueryPool)(uintptr_t)pool;
    if (object_map_put(&device->query_pools, (uint64_t)handle, pool) != pool) {
        tally_results_release(pool->results);
        free(pool);
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    *pool_out = handle;
    return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkCreateQueryPool(VkDevice handle,
                                                      const VkQueryPoolCreateInfo *pCreateInfo,
                                                      const VkAllocationCallbacks *pAllocator,
                                                      VkQueryPool *pQueryPool)
{
    layer_device *device = layer_device_of(handle);
    /* The layer serves these: their begin and end bound its measurements. */
    if (pCreateInfo->queryType == VK_QUERY_TYPE_PERFORMANCE_QUERY_KHR &&
        device->performance_query_emulated) {
        layer_measure_serving_queries(device);
        return create_performance_pool(device, pCreateInfo, pQueryPool);
    }
    if (pCreateInfo->queryType == VK_QUERY_TYPE_PIPELINE_STATISTICS && device->measuring) {
        layer_measure_serving_queries(device);
        return layer_statistics_pool_create(device, pCreateInfo, pQueryPool);
    }
    return device->dispatch.CreateQueryPool(handle, pCreateInfo, pAllocator, pQueryPool);
}

static void pool_free(layer_device *device, layer_query_pool *pool)
{
    layer_copy_pool_destroy(device, pool);
    /* Streams that still mark into the results keep them alive. */
    tally_results_release(pool->results);
    free(pool);
}

VKAPI_ATTR void VKAPI_CALL hook_vkDestroyQueryPool(VkDevice handle, VkQueryPool queryPool,
                                                   const VkAllocationCallbacks *pAllocator)
{
    layer_device *device = layer_device_of(handle);
    layer_query_pool *pool =
        queryPool ? object_map_remove(&device->query_pools, (uint64_t)queryPool) : NULL;
    if (pool) {
        pool_free(device, pool);
        return;
    }
    device->dispatch.DestroyQueryPool(handle, queryPool, pAllocator);
}

static void free_pool_value(void *value, void *user)
{
    pool_free(user, value);
}

/* After vkDestroyDevice: the shadows went before it (layer_copy_close). */
void layer_query_pools_destroy_all(layer_device *device)
{
    object_map_for_each(&device->query_pools, free_pool_value, device);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdBeginQuery(VkCommandBuffer commandBuffer,
                                                VkQueryPool queryPool, uint32_t query,
                                                VkQueryControlFlags flags)
{
    layer_command_buffer *cb;
    layer_device *device = layer_command_buffer_device(commandBuffer, &cb);
    layer_query_pool *pool = layer_query_pool_find(device, queryPool);
    if (!pool) {
        device->dispatch.CmdBeginQuery(commandBuffer, queryPool, query, flags);
        return;
    }
    if (cb && cb->measured)
        layer_measure_split(cb); /* the query sees whole measurements */
    if (cb && cb->stream)
        tally_stream_marker_begin(cb->stream, pool->results, query);
    if (cb && pool->statistics)
        layer_copy_query_begin(cb, pool, query);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdEndQuery(VkCommandBuffer commandBuffer, VkQueryPool queryPool,
                                              uint32_t query)
{
    layer_command_buffer *cb;
    layer_device *device = layer_command_buffer_device(commandBuffer, &cb);
    layer_query_pool *pool = layer_query_pool_find(device, queryPool);
    if (!pool) {
        device->dispatch.CmdEndQuery(commandBuffer, queryPool, query);
        return;
    }
    if (cb && cb->measured)
        layer_measure_split(cb);
    if (cb && cb->stream)
        tally_stream_marker_end(cb->stream, pool->results, query);
    if (cb && pool->statistics)
        layer_copy_query_end(cb, pool, query);
}

/* Under the driver backend, the application's timestamps end the layer's
 * open measurement (where Vulkan allows), so that the program's own
 * timestamps bracket whole measurements, as its queries do. */
static layer_device *split_before_timestamp(VkCommandBuffer commandBuffer)
{
    layer_command_buffer *cb;
    layer_device *device = layer_command_buffer_device(commandBuffer, &cb);
    if (cb && cb->measured) /* only a measuring device's command buffers are */
        layer_measure_split_at_timestamp(cb);
    return device;
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdWriteTimestamp(VkCommandBuffer commandBuffer,
                                                    VkPipelineStageFlagBits pipelineStage,
                                                    VkQueryPool queryPool, uint32_t query)
{
    layer_device *device = split_before_timestamp(commandBuffer);
    device->dispatch.CmdWriteTimestamp(commandBuffer, pipelineStage, queryPool, query);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdWriteTimestamp2(VkCommandBuffer commandBuffer,
                                                     VkPipelineStageFlags2 stage,
                                                     VkQueryPool queryPool, uint32_t query)
{
    layer_device *device = split_before_timestamp(commandBuffer);
    device->dispatch.CmdWriteTimestamp2(commandBuffer, stage, queryPool, query);
}

/* A performance pool has one query per index (index 0): the indexed forms
 * are the plain ones for the layer's pools. */
VKAPI_ATTR void VKAPI_CALL hook_vkCmdBeginQueryIndexedEXT(VkCommandBuffer commandBuffer,
                                                          VkQueryPool queryPool, uint32_t query,
                                                          VkQueryControlFlags flags, uint32_t index)
{
    layer_device *device = layer_device_of(commandBuffer);
    if (layer_query_pool_find(device, queryPool))
        hook_vkCmdBeginQuery(commandBuffer, queryPool, query, flags);
    else
        device->dispatch.CmdBeginQueryIndexedEXT(commandBuffer, queryPool, query, flags, index);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdEndQueryIndexedEXT(VkCommandBuffer commandBuffer,
                                                        VkQueryPool queryPool, uint32_t query,
                                                        uint32_t index)
{
    layer_device *device = layer_device_of(commandBuffer);
    if (layer_query_pool_find(device, queryPool))
        hook_vkCmdEndQuery(commandBuffer, queryPool, query);
    else
        device->dispatch.CmdEndQueryIndexedEXT(commandBuffer, queryPool, query, index);
}

/* Names and tags of the layer's own pools stay with the layer: the driver
 * never saw those handles. */
static bool is_layer_pool(layer_device *device, bool is_query_pool, uint64_t handle)
{
    return is_query_pool && layer_query_pool_find(device, (VkQueryPool)(uintptr_t)handle);
}

VKAPI_ATTR VkResult VKAPI_CALL
hook_vkSetDebugUtilsObjectNameEXT(VkDevice handle, const VkDebugUtilsObjectNameInfoEXT *info)
{
    layer_device *device = layer_device_of(handle);
    if (info &&
        is_layer_pool(device, info->objectType == VK_OBJECT_TYPE_QUERY_POOL, info->objectHandle))
        return VK_SUCCESS;
    if (info && info->objectType == VK_OBJECT_TYPE_PIPELINE)
        layer_pipeline_name(device, info->objectHandle, info->pObjectName);
    return device->dispatch.SetDebugUtilsObjectNameEXT(handle, info);
}

VKAPI_ATTR VkResult VKAPI_CALL
hook_vkSetDebugUtilsObjectTagEXT(VkDevice handle, const VkDebugUtilsObjectTagInfoEXT *info)
{
    layer_device *device = layer_device_of(handle);
    if (info &&
        is_layer_pool(device, info->objectType == VK_OBJECT_TYPE_QUERY_POOL, info->objectHandle))
        return VK_SUCCESS;
    return device->dispatch.SetDebugUtilsObjectTagEXT(handle, info);
}

VKAPI_ATTR VkResult VKAPI_CALL
hook_vkDebugMarkerSetObjectNameEXT(VkDevice handle, const VkDebugMarkerObjectNameInfoEXT *info)
{
    layer_device *device = layer_device_of(handle);
    if (info &&
        is_layer_pool(device, info->objectType == VK_DEBUG_REPORT_OBJECT_TYPE_QUERY_POOL_EXT,
                      info->object))
        return VK_SUCCESS;
    if (info && info->objectType == VK_DEBUG_REPORT_OBJECT_TYPE_PIPELINE_EXT)
        layer_pipeline_name(device, info->object, info->pObjectName);
    return device->dispatch.DebugMarkerSetObjectNameEXT(handle, info);
}

VKAPI_ATTR VkResult VKAPI_CALL
hook_vkDebugMarkerSetObjectTagEXT(VkDevice handle, const VkDebugMarkerObjectTagInfoEXT *info)
{
    layer_device *device = layer_device_of(handle);
    if (info &&
        is_layer_pool(device, info->objectType == VK_DEBUG_REPORT_OBJECT_TYPE_QUERY_POOL_EXT,
                      info->object))
        return VK_SUCCESS;
    return device->dispatch.DebugMarkerSetObjectTagEXT(handle, info);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdResetQueryPool(VkCommandBuffer commandBuffer,
                                                    VkQueryPool queryPool, uint32_t firstQuery,
                                                    uint32_t queryCount)
{
    layer_command_buffer *cb;
    layer_device *device = layer_command_buffer_device(commandBuffer, &cb);
    layer_query_pool *pool = layer_query_pool_find(device, queryPool);
    if (!pool) {
        device->dispatch.CmdResetQueryPool(commandBuffer, queryPool, firstQuery, queryCount);
        return;
    }
    if (cb && cb->stream)
        tally_stream_reset_results(cb->stream, pool->results, firstQuery, queryCount);
    if (cb && pool->statistics)
        layer_copy_cmd_reset(cb, pool, firstQuery, queryCount);
}

VKAPI_ATTR void VKAPI_CALL hook_vkResetQueryPool(VkDevice handle, VkQueryPool queryPool,
                                                 uint32_t firstQuery, uint32_t queryCount)
{
    layer_device *device = layer_device_of(handle);
    layer_query_pool *pool = layer_query_pool_find(device, queryPool);
    if (!pool) {
        device->dispatch.ResetQueryPool(handle, queryPool, firstQuery, queryCount);
        return;
    }
    tally_results_reset(pool->results, firstQuery, queryCount);
    layer_copy_host_reset(pool, firstQuery, queryCount);
}

/* A copy from a served statistics pool reads the queries' shadows on the GPU
 * (statistics_copy.c). Copies from performance pools are not offered
 * (allowCommandBufferQueryCopies is VK_FALSE): such a copy records nothing. */
VKAPI_ATTR void VKAPI_CALL hook_vkCmdCopyQueryPoolResults(
    VkCommandBuffer commandBuffer, VkQueryPool queryPool, uint32_t firstQuery, uint32_t queryCount,
    VkBuffer dstBuffer, VkDeviceSize dstOffset, VkDeviceSize stride, VkQueryResultFlags flags)
{
    layer_command_buffer *cb;
    layer_device *device = layer_command_buffer_device(commandBuffer, &cb);
    layer_query_pool *pool = layer_query_pool_find(device, queryPool);
    if (pool) {
        static atomic_bool said;
        if (pool->statistics &&
            !layer_copy_record(cb, pool, firstQuery, queryCount, dstBuffer, dstOffset, stride,
                               flags) &&
            !atomic_exchange(&said, true))
            tally_log(TALLY_LOG_WARN,
                      "Vulkan layer: vkCmdCopyQueryPoolResults from a pipeline-statistics pool "
                      "served by the driver backend wrote nothing on this device (see the "
                      "warning before); vkGetQueryPoolResults reads them");
        return;
    }
    device->dispatch.CmdCopyQueryPoolResults(commandBuffer, queryPool, firstQuery, queryCount,
                                             dstBuffer, dstOffset, stride, flags);
}

static void store_result(const tally_counter_info *counter, tally_value value,
                         VkPerformanceCounterResultKHR *out)
{
    switch (counter->storage) {
    case TALLY_STORAGE_INT32: out->int32 = (int32_t)value.i64; break;
    case TALLY_STORAGE_INT64: out->int64 = value.i64; break;
    case TALLY_STORAGE_UINT32: out->uint32 = (uint32_t)value.u64; break;
    case TALLY_STORAGE_UINT64: out->uint64 = value.u64; break;
    case TALLY_STORAGE_FLOAT32: out->float32 = (float)value.f64; break;
    case TALLY_STORAGE_FLOAT64: out->float64 = value.f64; break;
    }
}

/* Waits for a slot, but never for one that nothing submitted will fill: once
 * the engine has finished everything submitted, waiting longer cannot help. */
static tally_status wait_slot(layer_device *device, layer_query_pool *pool, uint32_t slot)
{
    for (;;) {
        if (tally_results_wait(pool->results, slot, 10 * 1000 * 1000) == TALLY_OK)
            return TALLY_OK;
        uint64_t submitted = atomic_load(&device->last_seqno);
        if (tally_completed_seqno(device->engine) >= submitted &&
            tally_results_get(pool->results, slot, NULL, 0, NULL) == TALLY_NOT_READY)
            return TALLY_NOT_READY;
    }
}

static VkResult read_pool(layer_device *device, layer_query_pool *pool, uint32_t first,
                          uint32_t count, size_t size, void *data, VkDeviceSize stride,
                          VkQueryResultFlags flags)
{
    uint32_t n = pool->counter_count;
    const uint32_t *counters = tally_results_counters(pool->results);
    tally_value *values = calloc(n ? n : 1, sizeof(*values));
    if (!values)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    VkResult result = VK_SUCCESS;
    for (uint32_t q = 0; q < count; q++) {
        char *at = (char *)data + (size_t)q * stride;
        if ((size_t)q * stride + n * sizeof(VkPerformanceCounterResultKHR) > size)
            break;
        if (flags & VK_QUERY_RESULT_WAIT_BIT)
            wait_slot(device, pool, first + q);
        if (tally_results_get(pool->results, first + q, values, n, NULL) != TALLY_OK) {
            result = VK_NOT_READY;
            continue;
        }
        VkPerformanceCounterResultKHR *out = (VkPerformanceCounterResultKHR *)at;
        for (uint32_t c = 0; c < n; c++) {
            VkPerformanceCounterResultKHR r;
            memset(&r, 0, sizeof(r));
            store_result(tally_catalogue_counter(pool->catalogue, counters[c]), values[c], &r);
            memcpy(&out[c], &r, sizeof(r));
        }
    }
    free(values);
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkGetQueryPoolResults(VkDevice handle, VkQueryPool queryPool,
                                                          uint32_t firstQuery, uint32_t queryCount,
                                                          size_t dataSize, void *pData,
                                                          VkDeviceSize stride,
                                                          VkQueryResultFlags flags)
{
    layer_device *device = layer_device_of(handle);
    layer_query_pool *pool = layer_query_pool_find(device, queryPool);
    if (!pool)
        return device->dispatch.GetQueryPoolResults(handle, queryPool, firstQuery, queryCount,
                                                    dataSize, pData, stride, flags);
    if (firstQuery + (uint64_t)queryCount > tally_results_slot_count(pool->results))
        return VK_ERROR_UNKNOWN;
    if (pool->statistics)
        return layer_statistics_pool_read(device, pool, firstQuery, queryCount, dataSize, pData,
                                          stride, flags);
    return read_pool(device, pool, firstQuery, queryCount, dataSize, pData, stride, flags);
}

/* The simulated GPU needs no exclusive access: the lock is always granted. */
VKAPI_ATTR VkResult VKAPI_CALL
hook_vkAcquireProfilingLockKHR(VkDevice handle, const VkAcquireProfilingLockInfoKHR *pInfo)
{
    layer_device *device = layer_device_of(handle);
    if (!device->performance_query_emulated)
        return device->dispatch.AcquireProfilingLockKHR(handle, pInfo);
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL hook_vkReleaseProfilingLockKHR(VkDevice handle)
{
    layer_device *device = layer_device_of(handle);
    if (!device->performance_query_emulated)
        device->dispatch.ReleaseProfilingLockKHR(handle);
}
