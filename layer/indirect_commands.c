/*
 * Indirect draws and dispatches: the layer remembers where each reads its
 * parameters, so that a submission can copy them back (indirect_readback.c).
 * Indirect buffers are created with transfer-source usage added for that
 * copy; the application never sees the difference.
 */
#include "array_grow.h"
#include "command_recording.h"

#include <stdlib.h>
#include <string.h>

/* Keys name one command of one recording: serials are never reused, so a
 * submission never reads another recording's parameters. */
static _Atomic uint32_t next_serial;

static bool list_reserve(layer_indirect_list *list, uint32_t more)
{
    if ((uint64_t)list->count + more <= list->capacity)
        return true;
    layer_indirect_command *items = layer_array_grow(list->items, &list->capacity,
                                                     (uint64_t)list->count + more, sizeof(*items));
    if (!items)
        return false;
    list->items = items;
    return true;
}

uint64_t layer_indirect_add(layer_command_buffer *cb, const layer_indirect_command *command)
{
    layer_indirect_list *list = &cb->indirect;
    if (!list_reserve(list, 1))
        return 0;
    if (!list->serial)
        list->serial = atomic_fetch_add(&next_serial, 1) + 1;
    layer_indirect_command *item = &list->items[list->count];
    *item = *command;
    item->key = (uint64_t)list->serial << 32 | list->count;
    list->count++;
    return item->key;
}

void layer_indirect_inherit(layer_command_buffer *primary, const layer_command_buffer *secondary)
{
    const layer_indirect_list *from = &secondary->indirect;
    if (!from->count || !list_reserve(&primary->indirect, from->count))
        return;
    memcpy(&primary->indirect.items[primary->indirect.count], from->items,
           from->count * sizeof(*from->items));
    primary->indirect.count += from->count;
}

void layer_indirect_forget(layer_indirect_list *list)
{
    list->count = 0;
    list->serial = 0;
}

static uint32_t record_size(tally_indirect_layout layout)
{
    switch (layout) {
    case TALLY_INDIRECT_DRAW: return sizeof(VkDrawIndirectCommand);
    case TALLY_INDIRECT_DRAW_INDEXED: return sizeof(VkDrawIndexedIndirectCommand);
    default: return sizeof(VkDispatchIndirectCommand);
    }
}

void layer_record_indirect(layer_command_buffer *cb, const char *api_name,
                           tally_indirect_layout layout, VkBuffer buffer, VkDeviceSize offset,
                           uint32_t max_count, uint32_t stride, VkBuffer count_buffer,
                           VkDeviceSize count_offset)
{
    bool dispatch = layout == TALLY_INDIRECT_DISPATCH;
    layer_record_bind(cb, dispatch ? cb->compute_program : cb->graphics_program);
    layer_indirect_command command = {
        .buffer = buffer,
        .offset = offset,
        .count_buffer = count_buffer,
        .count_offset = count_offset,
        .max_count = max_count,
        .stride = stride,
        .record_size = record_size(layout),
    };
    tally_indirect indirect = {
        .api_name = api_name,
        .key = max_count ? layer_indirect_add(cb, &command) : 0,
        .layout = layout,
        .topology = dispatch ? 0 : cb->topology,
        .patch_control_points = dispatch ? 0 : cb->patch_control_points,
        .index_size = cb->index_size,
    };
    tally_stream_indirect(cb->stream, &indirect);
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkCreateBuffer(VkDevice handle,
                                                   const VkBufferCreateInfo *pCreateInfo,
                                                   const VkAllocationCallbacks *pAllocator,
                                                   VkBuffer *pBuffer)
{
    layer_device *device = layer_device_of(handle);
    VkBufferCreateInfo info = *pCreateInfo;
    /* A protected buffer cannot be copied into the layer's unprotected one. */
    bool indirect = (info.usage & VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT) &&
                    !(info.flags & VK_BUFFER_CREATE_PROTECTED_BIT);
    if (indirect)
        info.usage |= VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    VkResult result = device->dispatch.CreateBuffer(handle, &info, pAllocator, pBuffer);
    if (result != VK_SUCCESS || !indirect)
        return result;
    layer_buffer *record = malloc(sizeof(*record));
    if (record) {
        record->size = info.size;
        if (object_map_put(&device->buffers, (uint64_t)*pBuffer, record) != record)
            free(record); /* its indirect commands are not read back */
    }
    return result;
}

VKAPI_ATTR void VKAPI_CALL hook_vkDestroyBuffer(VkDevice handle, VkBuffer buffer,
                                                const VkAllocationCallbacks *pAllocator)
{
    layer_device *device = layer_device_of(handle);
    if (buffer)
        free(object_map_remove(&device->buffers, (uint64_t)buffer));
    device->dispatch.DestroyBuffer(handle, buffer, pAllocator);
}

void layer_buffers_destroy_all(layer_device *device)
{
    object_map_free_values(&device->buffers);
}

/* Queues are recorded with their family: the layer's copy command buffers
 * come from a pool of that family. */
static void remember_queue(layer_device *device, VkQueue queue, uint32_t family)
{
    if (queue)
        object_map_put(&device->queues, (uint64_t)(uintptr_t)queue,
                       (void *)(uintptr_t)(family + 1u));
}

VKAPI_ATTR void VKAPI_CALL hook_vkGetDeviceQueue(VkDevice handle, uint32_t queueFamilyIndex,
                                                 uint32_t queueIndex, VkQueue *pQueue)
{
    layer_device *device = layer_device_of(handle);
    device->dispatch.GetDeviceQueue(handle, queueFamilyIndex, queueIndex, pQueue);
    remember_queue(device, *pQueue, queueFamilyIndex);
}

VKAPI_ATTR void VKAPI_CALL hook_vkGetDeviceQueue2(VkDevice handle,
                                                  const VkDeviceQueueInfo2 *pQueueInfo,
                                                  VkQueue *pQueue)
{
    layer_device *device = layer_device_of(handle);
    device->dispatch.GetDeviceQueue2(handle, pQueueInfo, pQueue);
    remember_queue(device, *pQueue, pQueueInfo->queueFamilyIndex);
}
