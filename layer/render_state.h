/*
 * What the engine's render state needs of Vulkan objects: the format and
 * sample count of images and image views, the extent of framebuffers, and
 * each render pass's subpasses; and what a command buffer is rendering into.
 * A render pass instance (vkCmdBeginRenderPass, vkCmdBeginRendering) and a
 * secondary continuing one (its inheritance info) set its stream's render state.
 */
#ifndef TALLY_LAYER_RENDER_STATE_H
#define TALLY_LAYER_RENDER_STATE_H

#include <tally/stream.h>
#include <vulkan/vulkan.h>

/* The attachments one subpass (or dynamic rendering instance) draws into. */
typedef struct layer_attachments {
    uint32_t samples; /* the largest attachment's; 0: no attachment */
    uint32_t color_bytes_per_pixel;
    uint32_t depth_bytes_per_sample;
} layer_attachments;

/* Attached to a VkImage, and to a VkImageView (its own format, its image's samples). */
typedef struct layer_image {
    VkFormat format;
    VkSampleCountFlagBits samples;
} layer_image;

/* Attached to a VkFramebuffer. */
typedef struct layer_framebuffer {
    uint32_t width, height, layers;
} layer_framebuffer;

typedef struct layer_subpass {
    layer_attachments attachments;
    uint32_t view_count; /* multiview: views of the view mask; 0 without multiview */
} layer_subpass;

/* Attached to a VkRenderPass. */
typedef struct layer_render_pass {
    uint32_t subpass_count;
    layer_subpass subpasses[];
} layer_render_pass;

/* A command buffer's render pass instance, for vkCmdNextSubpass to move on. */
typedef struct layer_render_target {
    VkRenderPass render_pass; /* VK_NULL_HANDLE: dynamic rendering or none */
    uint32_t subpass;
    VkExtent2D extent; /* of the render area */
    uint32_t layers;   /* of the framebuffer */
    /* A secondary that cannot know its render area takes its first scissor's
     * extent: no fragment lies outside it. */
    bool area_from_scissor;
    uint32_t view_count;      /* dynamic rendering: views of its view mask; 0 without multiview */
    tally_render_state state; /* what the stream was given last */
} layer_render_target;

struct layer_device;
struct layer_command_buffer;

/* A secondary begun to continue a render pass instance starts with the
 * render state its inheritance info describes. */
void layer_render_state_inherit(struct layer_command_buffer *cb,
                                const VkCommandBufferBeginInfo *begin);
/* Scissor 0 was set (dynamically, or by binding a pipeline that fixes it). */
void layer_render_state_scissor(struct layer_command_buffer *cb, VkExtent2D extent);
/* Frees every image, view, framebuffer and render pass record of the device. */
void layer_render_states_destroy_all(struct layer_device *device);

#endif
