/* Draws and dispatches as canonical commands of the command buffer's stream. */
#include "command_recording.h"

/* The stream binds one program at a time; a command buffer has a graphics
 * and a compute binding, so the right one is bound before each command. */
void layer_record_bind(layer_command_buffer *cb, tally_program *program)
{
    if (cb->stream_program == program)
        return;
    if (tally_stream_bind_program(cb->stream, program) == TALLY_OK)
        cb->stream_program = program;
    layer_command_buffer_ready(cb);
}

void layer_record_multi_draw(layer_command_buffer *cb, const char *api_name, uint32_t draw_count,
                             const VkMultiDrawInfoEXT *draws, uint32_t instance_count,
                             uint32_t first_instance, uint32_t stride)
{
    const char *at = (const char *)draws;
    for (uint32_t i = 0; i < draw_count; i++, at += stride) {
        const VkMultiDrawInfoEXT *d = (const VkMultiDrawInfoEXT *)at;
        layer_record_draw(cb, api_name, d->vertexCount, instance_count, d->firstVertex,
                          first_instance, 0, 0);
    }
}

void layer_record_multi_draw_indexed(layer_command_buffer *cb, const char *api_name,
                                     uint32_t draw_count, const VkMultiDrawIndexedInfoEXT *draws,
                                     uint32_t instance_count, uint32_t first_instance,
                                     uint32_t stride, const int32_t *vertex_offset)
{
    const char *at = (const char *)draws;
    for (uint32_t i = 0; i < draw_count; i++, at += stride) {
        const VkMultiDrawIndexedInfoEXT *d = (const VkMultiDrawIndexedInfoEXT *)at;
        layer_record_draw(cb, api_name, d->indexCount, instance_count, d->firstIndex,
                          first_instance, vertex_offset ? *vertex_offset : d->vertexOffset,
                          TALLY_DRAW_INDEXED);
    }
}

void layer_record_dispatch(layer_command_buffer *cb, const char *api_name, uint32_t x, uint32_t y,
                           uint32_t z, uint32_t base_x, uint32_t base_y, uint32_t base_z,
                           uint32_t flags)
{
    layer_record_bind(cb, cb->compute_program);
    tally_dispatch dispatch = {
        .api_name = api_name,
        .groups = {x, y, z},
        .base_group = {base_x, base_y, base_z},
        .flags = flags,
    };
    tally_stream_dispatch(cb->stream, &dispatch);
}

/* IaIndexBytes counts index bytes read: 1, 2 or 4 per index by the bound type. */
static uint8_t index_type_size(VkIndexType type)
{
    switch (type) {
    case VK_INDEX_TYPE_UINT8_EXT: return 1;
    case VK_INDEX_TYPE_UINT16: return 2;
    default: return 4;
    }
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdBindIndexBuffer(VkCommandBuffer commandBuffer, VkBuffer buffer,
                                                     VkDeviceSize offset, VkIndexType indexType)
{
    layer_command_buffer *cb;
    layer_device *device = layer_command_buffer_device(commandBuffer, &cb);
    device->dispatch.CmdBindIndexBuffer(commandBuffer, buffer, offset, indexType);
    if (cb)
        cb->index_size = index_type_size(indexType);
}
