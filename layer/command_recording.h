/* Appending the canonical commands of draws and dispatches to a command buffer's stream. */
#ifndef TALLY_LAYER_COMMAND_RECORDING_H
#define TALLY_LAYER_COMMAND_RECORDING_H

#include <stddef.h>
#include <string.h>

#include "layer_state.h"

/* The layout layer_try_draw writes a packed draw in. */
_Static_assert(sizeof(tally_packed_draw) == 32 && offsetof(tally_packed_draw, count) == 8 &&
                   offsetof(tally_packed_draw, first) == 16 &&
                   offsetof(tally_packed_draw, vertex_offset) == 24 &&
                   offsetof(tally_packed_draw, flags) == 28 &&
                   offsetof(tally_packed_draw, topology) == 29 &&
                   offsetof(tally_packed_draw, patch_control_points) == 30 &&
                   offsetof(tally_packed_draw, index_size) == 31,
               "tally_packed_draw is laid out as layer_try_draw writes it");
_Static_assert(offsetof(layer_command_buffer, topology) -
                           offsetof(layer_command_buffer, assembly) ==
                       offsetof(tally_packed_draw, topology) - 24 &&
                   offsetof(layer_command_buffer, index_size) -
                           offsetof(layer_command_buffer, assembly) ==
                       offsetof(tally_packed_draw, index_size) - 24 &&
                   offsetof(layer_command_buffer, assembly) + 8 <= 32,
               "a command buffer's assembly is laid out as a packed draw's last 8 bytes, and "
               "lies within the hot 32 bytes");

/* Binds the program to the command buffer's stream if another is bound there. */
void layer_record_bind(layer_command_buffer *cb, tally_program *program);

/* A draw as the lane stores it, with the command buffer's input-assembly state. */
static inline tally_packed_draw layer_packed_draw(const layer_command_buffer *cb,
                                                  const char *api_name, uint32_t count,
                                                  uint32_t instance_count, uint32_t first,
                                                  uint32_t first_instance, int32_t vertex_offset,
                                                  uint32_t flags)
{
    return (tally_packed_draw){
        .api_name = api_name,
        .count = count,
        .instance_count = instance_count,
        .first = first,
        .first_instance = first_instance,
        .vertex_offset = vertex_offset,
        .flags = (uint8_t)flags,
        .topology = cb->topology,
        .patch_control_points = cb->patch_control_points,
        .index_size = cb->index_size,
    };
}

/* Inline: every vkCmdDraw* wrapper records through here, and a call more
 * per draw is a measurable share of what the layer costs. */
static inline void layer_record_draw(layer_command_buffer *cb, const char *api_name, uint32_t count,
                                     uint32_t instance_count, uint32_t first,
                                     uint32_t first_instance, int32_t vertex_offset, uint32_t flags)
{
    if (__builtin_expect(cb->stream_program != cb->graphics_program, 0))
        layer_record_bind(cb, cb->graphics_program);
    tally_packed_draw draw = layer_packed_draw(cb, api_name, count, instance_count, first,
                                               first_instance, vertex_offset, flags);
    tally_stream_draw_inline(cb->stream, cb->draw_lane, &draw);
}
/* The whole of a plain draw's recording when nothing else is due (the
 * command buffer's ready lane) and the lane has room. False (nothing
 * recorded) otherwise, and layer_record_draw does it all. */
static inline bool layer_try_draw(layer_command_buffer *cb, const char *api_name, uint32_t count,
                                  uint32_t instance_count, uint32_t first, uint32_t first_instance,
                                  int32_t vertex_offset, uint32_t flags)
{
    tally_draw_lane *lane = cb->ready_lane;
    if (lane->next == lane->end) /* no room, or not ready */
        return false;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* The four counts stored as they come, in their registers (gathering
     * them into one SSE2 register took seven shuffles, all on one port),
     * and the input-assembly bytes with vertex_offset and flags from one
     * load and an OR. */
    tally_draw_lane_prefetch(lane->next);
    unsigned char *slot = (unsigned char *)lane->next++;
    uint64_t tail = cb->assembly | (uint32_t)vertex_offset | (uint64_t)flags << 32;
    memcpy(slot, &api_name, 8);
    memcpy(slot + 8, &count, 4);
    memcpy(slot + 12, &instance_count, 4);
    memcpy(slot + 16, &first, 4);
    memcpy(slot + 20, &first_instance, 4);
    memcpy(slot + 24, &tail, 8);
#else
    *lane->next++ = layer_packed_draw(cb, api_name, count, instance_count, first, first_instance,
                                      vertex_offset, flags);
#endif
    return true;
}

void layer_record_multi_draw(layer_command_buffer *cb, const char *api_name, uint32_t draw_count,
                             const VkMultiDrawInfoEXT *draws, uint32_t instance_count,
                             uint32_t first_instance, uint32_t stride);
void layer_record_multi_draw_indexed(layer_command_buffer *cb, const char *api_name,
                                     uint32_t draw_count, const VkMultiDrawIndexedInfoEXT *draws,
                                     uint32_t instance_count, uint32_t first_instance,
                                     uint32_t stride, const int32_t *vertex_offset);
/* An indirect draw or dispatch: its parameters are read back at submission. */
void layer_record_indirect(layer_command_buffer *cb, const char *api_name,
                           tally_indirect_layout layout, VkBuffer buffer, VkDeviceSize offset,
                           uint32_t max_count, uint32_t stride, VkBuffer count_buffer,
                           VkDeviceSize count_offset);
void layer_record_dispatch(layer_command_buffer *cb, const char *api_name, uint32_t x, uint32_t y,
                           uint32_t z, uint32_t base_x, uint32_t base_y, uint32_t base_z,
                           uint32_t flags);

#endif
