/*
 * Command buffers: one engine stream each, their pools, their lifecycle
 * (allocate, begin, reset, free, pool reset and destroy), secondaries and
 * debug labels.
 */
#include "array_grow.h"
#include "driver_measure.h"
#include "layer_state.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

layer_command_buffer *layer_command_buffer_find(layer_device *device, VkCommandBuffer handle)
{
    return object_map_get(&device->command_buffers, (uint64_t)(uintptr_t)handle);
}

tally_draw_lane layer_lane_never_ready; /* next == end: no room, ever */

/* A record of no command buffer, for threads that have looked none up. */
static layer_command_buffer no_command_buffer = {.handle = LAYER_NO_COMMAND_BUFFER,
                                                 .ready_lane = &layer_lane_never_ready};
__thread layer_command_buffer *layer_last_command_buffer
    __attribute__((tls_model("initial-exec"))) = &no_command_buffer;

layer_command_buffer *layer_command_buffer_lookup(VkCommandBuffer handle)
{
    layer_device *device = layer_device_of(handle);
    layer_command_buffer *cb = device ? layer_command_buffer_find(device, handle) : NULL;
    if (cb)
        layer_last_command_buffer = cb;
    return cb;
}

/* Records go back here, not to free(): a thread's cache may point at one
 * long after its command buffer is gone (layer_state.h). At most as many
 * as were ever live at once; taken on allocation and freed with the
 * process. */
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static layer_command_buffer *spare_records;

_Static_assert(offsetof(layer_command_buffer, handle) == 0,
               "a recycled record is cleared past its handle");

/* A cleared record of no command buffer. */
static layer_command_buffer *command_buffer_new(void)
{
    pthread_mutex_lock(&spare_lock);
    layer_command_buffer *cb = spare_records;
    if (cb)
        spare_records = cb->next_spare;
    pthread_mutex_unlock(&spare_lock);
    if (cb) {
        cb->next_spare = NULL;
        return cb;
    }
    cb = calloc(1, sizeof(*cb));
    if (cb)
        atomic_init(&cb->handle, LAYER_NO_COMMAND_BUFFER);
    return cb;
}

/* The record is out of its map already. Its handle goes first: a thread
 * whose cache points here sees at once that it is no one's. */
static void command_buffer_free(layer_command_buffer *cb)
{
    atomic_store_explicit(&cb->handle, LAYER_NO_COMMAND_BUFFER, memory_order_relaxed);
    if (cb->stream)
        tally_stream_destroy(cb->stream);
    layer_measure_free(cb);
    free(cb->indirect.items);
    memset((char *)cb + sizeof cb->handle, 0, sizeof *cb - sizeof cb->handle);
    cb->ready_lane = &layer_lane_never_ready;
    pthread_mutex_lock(&spare_lock);
    cb->next_spare = spare_records;
    spare_records = cb;
    pthread_mutex_unlock(&spare_lock);
}

static layer_command_pool *pool_get(layer_device *device, VkCommandPool handle)
{
    layer_command_pool *pool = object_map_get(&device->command_pools, (uint64_t)handle);
    if (pool)
        return pool;
    pool = calloc(1, sizeof(*pool));
    if (!pool)
        return NULL;
    pool->handle = handle;
    if (object_map_put(&device->command_pools, (uint64_t)handle, pool) != pool) {
        free(pool);
        return NULL;
    }
    return pool;
}

static bool pool_add(layer_command_pool *pool, VkCommandBuffer cb)
{
    if (pool->count == pool->capacity) {
        VkCommandBuffer *grown = layer_array_grow(pool->command_buffers, &pool->capacity,
                                                  (uint64_t)pool->count + 1, sizeof(*grown));
        if (!grown)
            return false;
        pool->command_buffers = grown;
    }
    pool->command_buffers[pool->count++] = cb;
    return true;
}

static void pool_remove(layer_command_pool *pool, VkCommandBuffer cb)
{
    for (uint32_t i = 0; i < pool->count; i++) {
        if (pool->command_buffers[i] == cb) {
            pool->command_buffers[i] = pool->command_buffers[--pool->count];
            return;
        }
    }
}

/* Removes the record before the free goes down: another thread may be given
 * the same handle value by a concurrent allocation right after. */
static void forget_command_buffer(layer_device *device, VkCommandBuffer handle)
{
    layer_command_buffer *cb =
        object_map_remove(&device->command_buffers, (uint64_t)(uintptr_t)handle);
    if (cb)
        command_buffer_free(cb);
}

VKAPI_ATTR VkResult VKAPI_CALL
hook_vkAllocateCommandBuffers(VkDevice handle, const VkCommandBufferAllocateInfo *pAllocateInfo,
                              VkCommandBuffer *pCommandBuffers)
{
    layer_device *device = layer_device_of(handle);
    VkResult result =
        device->dispatch.AllocateCommandBuffers(handle, pAllocateInfo, pCommandBuffers);
    if (result != VK_SUCCESS)
        return result;
    layer_command_pool *pool = pool_get(device, pAllocateInfo->commandPool);
    for (uint32_t i = 0; i < pAllocateInfo->commandBufferCount; i++) {
        layer_command_buffer *cb = command_buffer_new();
        if (!cb)
            continue; /* the command buffer works, it is just not counted */
        atomic_store_explicit(&cb->handle, pCommandBuffers[i], memory_order_relaxed);
        cb->device = device;
        cb->pool = pAllocateInfo->commandPool;
        cb->topology = TALLY_TOPOLOGY_TRIANGLE_LIST;
        cb->index_size = 4;
        cb->level = pAllocateInfo->level;
        if (device->context && tally_stream_create(device->context, &cb->stream) != TALLY_OK)
            cb->stream = NULL;
        cb->draw_lane = tally_stream_draw_lane(cb->stream);
        layer_command_buffer_ready(cb);
        if (!pool || !pool_add(pool, cb->handle) ||
            object_map_put(&device->command_buffers, (uint64_t)(uintptr_t)cb->handle, cb) != cb) {
            if (pool)
                pool_remove(pool, cb->handle);
            command_buffer_free(cb);
        }
    }
    return result;
}

VKAPI_ATTR void VKAPI_CALL hook_vkFreeCommandBuffers(VkDevice handle, VkCommandPool commandPool,
                                                     uint32_t commandBufferCount,
                                                     const VkCommandBuffer *pCommandBuffers)
{
    layer_device *device = layer_device_of(handle);
    layer_command_pool *pool = object_map_get(&device->command_pools, (uint64_t)commandPool);
    for (uint32_t i = 0; i < commandBufferCount; i++) {
        if (!pCommandBuffers[i])
            continue;
        if (pool)
            pool_remove(pool, pCommandBuffers[i]);
        forget_command_buffer(device, pCommandBuffers[i]);
    }
    device->dispatch.FreeCommandBuffers(handle, commandPool, commandBufferCount, pCommandBuffers);
}

static void reset_recording(layer_command_buffer *cb)
{
    if (cb->stream)
        tally_stream_reset(cb->stream);
    cb->graphics_program = NULL;
    cb->compute_program = NULL;
    cb->compute_pipeline = VK_NULL_HANDLE;
    cb->stream_program = NULL;
    layer_command_buffer_ready(cb);
    cb->topology = TALLY_TOPOLOGY_TRIANGLE_LIST;
    cb->patch_control_points = 0;
    cb->index_size = 4;
    layer_indirect_forget(&cb->indirect);
    cb->render = (layer_render_target){0};
    layer_measure_reset(cb);
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkResetCommandPool(VkDevice handle, VkCommandPool commandPool,
                                                       VkCommandPoolResetFlags flags)
{
    layer_device *device = layer_device_of(handle);
    layer_command_pool *pool = object_map_get(&device->command_pools, (uint64_t)commandPool);
    for (uint32_t i = 0; pool && i < pool->count; i++) {
        layer_command_buffer *cb = layer_command_buffer_find(device, pool->command_buffers[i]);
        if (cb)
            reset_recording(cb);
    }
    return device->dispatch.ResetCommandPool(handle, commandPool, flags);
}

VKAPI_ATTR void VKAPI_CALL hook_vkDestroyCommandPool(VkDevice handle, VkCommandPool commandPool,
                                                     const VkAllocationCallbacks *pAllocator)
{
    layer_device *device = layer_device_of(handle);
    layer_command_pool *pool =
        commandPool ? object_map_remove(&device->command_pools, (uint64_t)commandPool) : NULL;
    if (device->measuring && commandPool)
        object_map_remove(&device->measuring->pool_families, (uint64_t)commandPool);
    if (pool) {
        for (uint32_t i = 0; i < pool->count; i++)
            forget_command_buffer(device, pool->command_buffers[i]);
        free(pool->command_buffers);
        free(pool);
    }
    device->dispatch.DestroyCommandPool(handle, commandPool, pAllocator);
}

static void free_pool_record(void *value, void *user)
{
    (void)user;
    layer_command_pool *pool = value;
    free(pool->command_buffers);
    free(pool);
}

static void free_command_buffer_record(void *value, void *user)
{
    (void)user;
    command_buffer_free(value);
}

void layer_command_buffers_destroy_all(layer_device *device)
{
    object_map_for_each(&device->command_buffers, free_command_buffer_record, NULL);
    object_map_for_each(&device->command_pools, free_pool_record, NULL);
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkBeginCommandBuffer(VkCommandBuffer commandBuffer,
                                                         const VkCommandBufferBeginInfo *pBeginInfo)
{
    layer_device *device = layer_device_of(commandBuffer);
    layer_command_buffer *cb = layer_command_buffer_find(device, commandBuffer);
    if (cb) {
        reset_recording(cb);
        layer_render_state_inherit(cb, pBeginInfo);
        layer_measure_begin_recording(cb, pBeginInfo);
    }
    return device->dispatch.BeginCommandBuffer(commandBuffer, pBeginInfo);
}

/* A command buffer of simultaneous use may be submitted, or executed as a
 * secondary, from several threads at once: its stream must be complete
 * before that, while only its recording thread touches it. */
VKAPI_ATTR VkResult VKAPI_CALL hook_vkEndCommandBuffer(VkCommandBuffer commandBuffer)
{
    layer_command_buffer *cb;
    layer_device *device = layer_command_buffer_device(commandBuffer, &cb);
    if (cb && cb->measured)
        layer_measure_split(cb); /* no query may stay active past the end */
    if (cb && cb->stream)
        tally_stream_end_recording(cb->stream);
    return device->dispatch.EndCommandBuffer(commandBuffer);
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkResetCommandBuffer(VkCommandBuffer commandBuffer,
                                                         VkCommandBufferResetFlags flags)
{
    layer_device *device = layer_device_of(commandBuffer);
    layer_command_buffer *cb = layer_command_buffer_find(device, commandBuffer);
    if (cb)
        reset_recording(cb);
    return device->dispatch.ResetCommandBuffer(commandBuffer, flags);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdExecuteCommands(VkCommandBuffer commandBuffer,
                                                     uint32_t commandBufferCount,
                                                     const VkCommandBuffer *pCommandBuffers)
{
    layer_command_buffer *cb;
    layer_device *device = layer_command_buffer_device(commandBuffer, &cb);
    if (cb && cb->measured)
        layer_measure_split(cb); /* no query of the layer's active across secondaries */
    device->dispatch.CmdExecuteCommands(commandBuffer, commandBufferCount, pCommandBuffers);
    if (!cb || !cb->stream)
        return;
    for (uint32_t i = 0; i < commandBufferCount; i++) {
        layer_command_buffer *secondary = layer_command_buffer_find(device, pCommandBuffers[i]);
        if (secondary && secondary->stream) {
            tally_stream_execute(cb->stream, secondary->stream);
            layer_indirect_inherit(cb, secondary);
            layer_measure_executes(cb, secondary);
            layer_copy_executes(cb, secondary);
        }
    }
    /* Vulkan leaves the primary's bindings undefined after secondaries ran:
     * the next command binds again. */
    cb->stream_program = NULL;
    layer_command_buffer_ready(cb);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdBeginDebugUtilsLabelEXT(VkCommandBuffer commandBuffer,
                                                             const VkDebugUtilsLabelEXT *pLabelInfo)
{
    layer_command_buffer *cb;
    layer_device *device = layer_command_buffer_device(commandBuffer, &cb);
    device->dispatch.CmdBeginDebugUtilsLabelEXT(commandBuffer, pLabelInfo);
    if (cb && cb->stream && pLabelInfo && pLabelInfo->pLabelName)
        tally_stream_label_push(cb->stream, pLabelInfo->pLabelName);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdEndDebugUtilsLabelEXT(VkCommandBuffer commandBuffer)
{
    layer_command_buffer *cb;
    layer_device *device = layer_command_buffer_device(commandBuffer, &cb);
    device->dispatch.CmdEndDebugUtilsLabelEXT(commandBuffer);
    if (cb && cb->stream)
        tally_stream_label_pop(cb->stream);
}
