/*
 * The render state of each render pass instance: render area, layers,
 * samples, and bytes per pixel of the colour and depth/stencil attachments.
 * A render pass gives them per subpass; dynamic rendering through the image
 * views it names (their formats, their images' samples); a secondary
 * continuing a render pass instance through its inheritance info. Records
 * are made when objects are created, so recording a draw looks nothing up.
 */
#include "driver_measure.h"
#include "layer_state.h"

#include <stdlib.h>

static bool is_depth_stencil_format(VkFormat format)
{
    return format >= VK_FORMAT_D16_UNORM && format <= VK_FORMAT_D32_SFLOAT_S8_UINT;
}

/* The one place a format becomes bytes of the render state. */
static void attachments_add(layer_attachments *a, VkFormat format, VkSampleCountFlagBits samples)
{
    if ((uint32_t)samples > a->samples)
        a->samples = (uint32_t)samples;
    if (is_depth_stencil_format(format))
        a->depth_bytes_per_sample += layer_format_block_size(format);
    else
        a->color_bytes_per_pixel += layer_format_block_size(format);
}

static void set_render_state(layer_command_buffer *cb, VkExtent2D extent, uint32_t layers,
                             const layer_attachments *a)
{
    if (!cb->stream)
        return;
    cb->render.state = (tally_render_state){
        .width = extent.width,
        .height = extent.height,
        .layers = layers ? layers : 1,
        .samples = a && a->samples ? a->samples : 1,
        .color_bytes_per_pixel = a ? a->color_bytes_per_pixel : 0,
        .depth_bytes_per_sample = a ? a->depth_bytes_per_sample : 0,
    };
    tally_stream_set_render_state(cb->stream, &cb->render.state);
}

/* --- images, image views and framebuffers ----------------------------------------- */

static void image_store(object_map *map, uint64_t handle, VkFormat format,
                        VkSampleCountFlagBits samples)
{
    layer_image *image = malloc(sizeof(*image));
    if (!image)
        return; /* render passes into it count no attachment bytes */
    *image = (layer_image){format, samples};
    if (object_map_put(map, handle, image) != image)
        free(image);
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkCreateImage(VkDevice handle,
                                                  const VkImageCreateInfo *pCreateInfo,
                                                  const VkAllocationCallbacks *pAllocator,
                                                  VkImage *pImage)
{
    layer_device *device = layer_device_of(handle);
    VkResult result = device->dispatch.CreateImage(handle, pCreateInfo, pAllocator, pImage);
    if (result == VK_SUCCESS)
        image_store(&device->images, (uint64_t)*pImage, pCreateInfo->format, pCreateInfo->samples);
    return result;
}

VKAPI_ATTR void VKAPI_CALL hook_vkDestroyImage(VkDevice handle, VkImage image,
                                               const VkAllocationCallbacks *pAllocator)
{
    layer_device *device = layer_device_of(handle);
    if (image)
        free(object_map_remove(&device->images, (uint64_t)image));
    device->dispatch.DestroyImage(handle, image, pAllocator);
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkCreateImageView(VkDevice handle,
                                                      const VkImageViewCreateInfo *pCreateInfo,
                                                      const VkAllocationCallbacks *pAllocator,
                                                      VkImageView *pView)
{
    layer_device *device = layer_device_of(handle);
    VkResult result = device->dispatch.CreateImageView(handle, pCreateInfo, pAllocator, pView);
    if (result != VK_SUCCESS)
        return result;
    /* Images the layer did not see made (a swapchain's) have one sample. */
    const layer_image *image = object_map_get(&device->images, (uint64_t)pCreateInfo->image);
    VkFormat format = pCreateInfo->format;
    if (format == VK_FORMAT_UNDEFINED && image)
        format = image->format;
    image_store(&device->image_views, (uint64_t)*pView, format,
                image ? image->samples : VK_SAMPLE_COUNT_1_BIT);
    return result;
}

VKAPI_ATTR void VKAPI_CALL hook_vkDestroyImageView(VkDevice handle, VkImageView imageView,
                                                   const VkAllocationCallbacks *pAllocator)
{
    layer_device *device = layer_device_of(handle);
    if (imageView)
        free(object_map_remove(&device->image_views, (uint64_t)imageView));
    device->dispatch.DestroyImageView(handle, imageView, pAllocator);
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkCreateFramebuffer(VkDevice handle,
                                                        const VkFramebufferCreateInfo *pCreateInfo,
                                                        const VkAllocationCallbacks *pAllocator,
                                                        VkFramebuffer *pFramebuffer)
{
    layer_device *device = layer_device_of(handle);
    VkResult result =
        device->dispatch.CreateFramebuffer(handle, pCreateInfo, pAllocator, pFramebuffer);
    if (result != VK_SUCCESS)
        return result;
    layer_framebuffer *fb = malloc(sizeof(*fb));
    if (!fb)
        return result; /* secondaries inheriting it get no render area */
    *fb = (layer_framebuffer){pCreateInfo->width, pCreateInfo->height, pCreateInfo->layers};
    if (object_map_put(&device->framebuffers, (uint64_t)*pFramebuffer, fb) != fb)
        free(fb);
    return result;
}

VKAPI_ATTR void VKAPI_CALL hook_vkDestroyFramebuffer(VkDevice handle, VkFramebuffer framebuffer,
                                                     const VkAllocationCallbacks *pAllocator)
{
    layer_device *device = layer_device_of(handle);
    if (framebuffer)
        free(object_map_remove(&device->framebuffers, (uint64_t)framebuffer));
    device->dispatch.DestroyFramebuffer(handle, framebuffer, pAllocator);
}

/* --- render passes ---------------------------------------------------------------- */

static layer_render_pass *render_pass_create(uint32_t subpass_count)
{
    layer_render_pass *pass =
        calloc(1, sizeof(*pass) + (size_t)subpass_count * sizeof(pass->subpasses[0]));
    if (pass)
        pass->subpass_count = subpass_count;
    return pass;
}

static void render_pass_store(layer_device *device, VkRenderPass handle, layer_render_pass *pass)
{
    if (pass && object_map_put(&device->render_passes, (uint64_t)handle, pass) != pass)
        free(pass);
}

static uint32_t view_count(uint32_t view_mask)
{
    return (uint32_t)__builtin_popcount(view_mask);
}

/* What a subpass writes: its colour attachments and its depth/stencil
 * attachment. Input attachments are read, resolve attachments written once
 * at the end: neither is part of what each sample costs. */
static void subpass_add(layer_subpass *subpass, const VkAttachmentDescription *attachments,
                        uint32_t attachment_count, uint32_t index)
{
    if (index < attachment_count)
        attachments_add(&subpass->attachments, attachments[index].format,
                        attachments[index].samples);
}

static void subpass_add2(layer_subpass *subpass, const VkAttachmentDescription2 *attachments,
                         uint32_t attachment_count, uint32_t index)
{
    if (index < attachment_count)
        attachments_add(&subpass->attachments, attachments[index].format,
                        attachments[index].samples);
}

static const VkRenderPassMultiviewCreateInfo *multiview_of(const VkRenderPassCreateInfo *info)
{
    for (const VkBaseInStructure *s = info->pNext; s; s = s->pNext)
        if (s->sType == VK_STRUCTURE_TYPE_RENDER_PASS_MULTIVIEW_CREATE_INFO)
            return (const VkRenderPassMultiviewCreateInfo *)s;
    return NULL;
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkCreateRenderPass(VkDevice handle,
                                                       const VkRenderPassCreateInfo *pCreateInfo,
                                                       const VkAllocationCallbacks *pAllocator,
                                                       VkRenderPass *pRenderPass)
{
    layer_device *device = layer_device_of(handle);
    VkResult result =
        device->dispatch.CreateRenderPass(handle, pCreateInfo, pAllocator, pRenderPass);
    if (result != VK_SUCCESS)
        return result;
    layer_render_pass *pass = render_pass_create(pCreateInfo->subpassCount);
    const VkRenderPassMultiviewCreateInfo *multiview = multiview_of(pCreateInfo);
    for (uint32_t s = 0; pass && s < pCreateInfo->subpassCount; s++) {
        const VkSubpassDescription *desc = &pCreateInfo->pSubpasses[s];
        layer_subpass *subpass = &pass->subpasses[s];
        for (uint32_t i = 0; i < desc->colorAttachmentCount; i++)
            subpass_add(subpass, pCreateInfo->pAttachments, pCreateInfo->attachmentCount,
                        desc->pColorAttachments[i].attachment);
        if (desc->pDepthStencilAttachment)
            subpass_add(subpass, pCreateInfo->pAttachments, pCreateInfo->attachmentCount,
                        desc->pDepthStencilAttachment->attachment);
        if (multiview && s < multiview->subpassCount && multiview->pViewMasks)
            subpass->view_count = view_count(multiview->pViewMasks[s]);
    }
    render_pass_store(device, *pRenderPass, pass);
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkCreateRenderPass2(VkDevice handle,
                                                        const VkRenderPassCreateInfo2 *pCreateInfo,
                                                        const VkAllocationCallbacks *pAllocator,
                                                        VkRenderPass *pRenderPass)
{
    layer_device *device = layer_device_of(handle);
    VkResult result =
        device->dispatch.CreateRenderPass2(handle, pCreateInfo, pAllocator, pRenderPass);
    if (result != VK_SUCCESS)
        return result;
    layer_render_pass *pass = render_pass_create(pCreateInfo->subpassCount);
    for (uint32_t s = 0; pass && s < pCreateInfo->subpassCount; s++) {
        const VkSubpassDescription2 *desc = &pCreateInfo->pSubpasses[s];
        layer_subpass *subpass = &pass->subpasses[s];
        for (uint32_t i = 0; i < desc->colorAttachmentCount; i++)
            subpass_add2(subpass, pCreateInfo->pAttachments, pCreateInfo->attachmentCount,
                         desc->pColorAttachments[i].attachment);
        if (desc->pDepthStencilAttachment)
            subpass_add2(subpass, pCreateInfo->pAttachments, pCreateInfo->attachmentCount,
                         desc->pDepthStencilAttachment->attachment);
        subpass->view_count = view_count(desc->viewMask);
    }
    render_pass_store(device, *pRenderPass, pass);
    return result;
}

VKAPI_ATTR void VKAPI_CALL hook_vkDestroyRenderPass(VkDevice handle, VkRenderPass renderPass,
                                                    const VkAllocationCallbacks *pAllocator)
{
    layer_device *device = layer_device_of(handle);
    if (renderPass)
        free(object_map_remove(&device->render_passes, (uint64_t)renderPass));
    device->dispatch.DestroyRenderPass(handle, renderPass, pAllocator);
}

/* --- render pass instances -------------------------------------------------------- */

/* The render state of the command buffer's current subpass: its attachments,
 * over the render area and the framebuffer's layers (a multiview subpass's views). */
static void enter_subpass(layer_command_buffer *cb)
{
    const layer_render_pass *pass =
        object_map_get(&cb->device->render_passes, (uint64_t)cb->render.render_pass);
    const layer_subpass *subpass = pass && cb->render.subpass < pass->subpass_count
                                       ? &pass->subpasses[cb->render.subpass]
                                       : NULL;
    uint32_t layers = subpass && subpass->view_count ? subpass->view_count : cb->render.layers;
    set_render_state(cb, cb->render.extent, layers, subpass ? &subpass->attachments : NULL);
}

static void begin_render_pass(layer_command_buffer *cb, const VkRenderPassBeginInfo *begin)
{
    const layer_framebuffer *fb =
        object_map_get(&cb->device->framebuffers, (uint64_t)begin->framebuffer);
    cb->render = (layer_render_target){
        .render_pass = begin->renderPass,
        .extent = begin->renderArea.extent,
        .layers = fb ? fb->layers : 1,
    };
    enter_subpass(cb);
}

/* Whether a measurement begun before the instance may run through it
 * (driver_measure.h): one subpass without multiview, drawn inline. */
static bool render_pass_spannable(layer_command_buffer *cb, const VkRenderPassBeginInfo *begin,
                                  VkSubpassContents contents)
{
    const layer_render_pass *pass =
        object_map_get(&cb->device->render_passes, (uint64_t)begin->renderPass);
    return pass && pass->subpass_count == 1 && !pass->subpasses[0].view_count &&
           contents == VK_SUBPASS_CONTENTS_INLINE;
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdBeginRenderPass(VkCommandBuffer commandBuffer,
                                                     const VkRenderPassBeginInfo *pRenderPassBegin,
                                                     VkSubpassContents contents)
{
    layer_command_buffer *cb = layer_command_buffer_of(commandBuffer);
    layer_device *device = cb ? cb->device : layer_device_of(commandBuffer);
    if (cb && cb->measured)
        layer_measure_pass_begin(cb, render_pass_spannable(cb, pRenderPassBegin, contents));
    if (cb && cb->measured)
        layer_copy_pass_begin(cb, false);
    device->dispatch.CmdBeginRenderPass(commandBuffer, pRenderPassBegin, contents);
    if (cb)
        begin_render_pass(cb, pRenderPassBegin);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdBeginRenderPass2(VkCommandBuffer commandBuffer,
                                                      const VkRenderPassBeginInfo *pRenderPassBegin,
                                                      const VkSubpassBeginInfo *pSubpassBeginInfo)
{
    layer_command_buffer *cb = layer_command_buffer_of(commandBuffer);
    layer_device *device = cb ? cb->device : layer_device_of(commandBuffer);
    if (cb && cb->measured)
        layer_measure_pass_begin(
            cb, render_pass_spannable(cb, pRenderPassBegin, pSubpassBeginInfo->contents));
    if (cb && cb->measured)
        layer_copy_pass_begin(cb, false);
    device->dispatch.CmdBeginRenderPass2(commandBuffer, pRenderPassBegin, pSubpassBeginInfo);
    if (cb)
        begin_render_pass(cb, pRenderPassBegin);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdNextSubpass(VkCommandBuffer commandBuffer,
                                                 VkSubpassContents contents)
{
    layer_command_buffer *cb = layer_command_buffer_of(commandBuffer);
    layer_device *device = cb ? cb->device : layer_device_of(commandBuffer);
    if (cb && cb->measured)
        layer_measure_pass_next(cb);
    device->dispatch.CmdNextSubpass(commandBuffer, contents);
    if (cb) {
        cb->render.subpass++;
        enter_subpass(cb);
    }
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdNextSubpass2(VkCommandBuffer commandBuffer,
                                                  const VkSubpassBeginInfo *pSubpassBeginInfo,
                                                  const VkSubpassEndInfo *pSubpassEndInfo)
{
    layer_command_buffer *cb = layer_command_buffer_of(commandBuffer);
    layer_device *device = cb ? cb->device : layer_device_of(commandBuffer);
    if (cb && cb->measured)
        layer_measure_pass_next(cb);
    device->dispatch.CmdNextSubpass2(commandBuffer, pSubpassBeginInfo, pSubpassEndInfo);
    if (cb) {
        cb->render.subpass++;
        enter_subpass(cb);
    }
}

/* A view the layer has no record of adds nothing. */
static void view_add(layer_device *device, layer_attachments *a, VkImageView view)
{
    const layer_image *record = view ? object_map_get(&device->image_views, (uint64_t)view) : NULL;
    if (record)
        attachments_add(a, record->format, record->samples);
}

static uint32_t rendering_layers(uint32_t view_mask, uint32_t layer_count)
{
    return view_mask ? view_count(view_mask) : layer_count;
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdBeginRendering(VkCommandBuffer commandBuffer,
                                                    const VkRenderingInfo *pRenderingInfo)
{
    layer_command_buffer *cb = layer_command_buffer_of(commandBuffer);
    layer_device *device = cb ? cb->device : layer_device_of(commandBuffer);
    /* Any flag (secondaries, suspending, resuming) keeps measurements out of it. */
    if (cb && cb->measured)
        layer_measure_pass_begin(cb, !pRenderingInfo->flags && !pRenderingInfo->viewMask);
    if (cb && cb->measured)
        layer_copy_pass_begin(cb, pRenderingInfo->flags & VK_RENDERING_SUSPENDING_BIT);
    device->dispatch.CmdBeginRendering(commandBuffer, pRenderingInfo);
    if (!cb)
        return;
    const VkRenderingInfo *info = pRenderingInfo;
    layer_attachments a = {0};
    for (uint32_t i = 0; i < info->colorAttachmentCount; i++)
        view_add(device, &a, info->pColorAttachments[i].imageView);
    VkImageView depth = info->pDepthAttachment ? info->pDepthAttachment->imageView : VK_NULL_HANDLE;
    VkImageView stencil =
        info->pStencilAttachment ? info->pStencilAttachment->imageView : VK_NULL_HANDLE;
    /* One depth/stencil image is one attachment, as in a render pass. */
    view_add(device, &a, depth);
    if (stencil != depth)
        view_add(device, &a, stencil);
    cb->render = (layer_render_target){.extent = info->renderArea.extent,
                                       .layers = info->layerCount,
                                       .view_count = view_count(info->viewMask)};
    set_render_state(cb, info->renderArea.extent,
                     rendering_layers(info->viewMask, info->layerCount), &a);
}

/* --- secondaries ------------------------------------------------------------------ */

static const VkCommandBufferInheritanceRenderingInfo *
rendering_inheritance_of(const VkCommandBufferInheritanceInfo *info)
{
    for (const VkBaseInStructure *s = info->pNext; s; s = s->pNext)
        if (s->sType == VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_RENDERING_INFO)
            return (const VkCommandBufferInheritanceRenderingInfo *)s;
    return NULL;
}

/* Dynamic rendering names formats, not views: the same sums, from the formats. */
static void inherit_rendering(layer_command_buffer *cb,
                              const VkCommandBufferInheritanceRenderingInfo *info)
{
    layer_attachments a = {0};
    for (uint32_t i = 0; i < info->colorAttachmentCount; i++)
        if (info->pColorAttachmentFormats[i] != VK_FORMAT_UNDEFINED)
            attachments_add(&a, info->pColorAttachmentFormats[i], info->rasterizationSamples);
    if (info->depthAttachmentFormat != VK_FORMAT_UNDEFINED)
        attachments_add(&a, info->depthAttachmentFormat, info->rasterizationSamples);
    if (info->stencilAttachmentFormat != VK_FORMAT_UNDEFINED &&
        info->stencilAttachmentFormat != info->depthAttachmentFormat)
        attachments_add(&a, info->stencilAttachmentFormat, info->rasterizationSamples);
    if (!a.samples)
        a.samples = (uint32_t)info->rasterizationSamples;
    /* The render area is the executing primary's, which recording cannot
     * know: the secondary's scissor gives it (scissor_set). */
    cb->render = (layer_render_target){
        .layers = 1, .area_from_scissor = true, .view_count = view_count(info->viewMask)};
    set_render_state(cb, cb->render.extent, rendering_layers(info->viewMask, 1), &a);
}

void layer_render_state_inherit(layer_command_buffer *cb, const VkCommandBufferBeginInfo *begin)
{
    const VkCommandBufferInheritanceInfo *info = begin->pInheritanceInfo;
    /* A primary's inheritance info is ignored, and may be any pointer. */
    if (cb->level != VK_COMMAND_BUFFER_LEVEL_SECONDARY || !info ||
        !(begin->flags & VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT))
        return;
    if (!info->renderPass) {
        const VkCommandBufferInheritanceRenderingInfo *rendering = rendering_inheritance_of(info);
        if (rendering)
            inherit_rendering(cb, rendering);
        return;
    }
    /* The render area is the primary's, which recording cannot know: the
     * framebuffer's whole extent when it is given, the secondary's scissor
     * otherwise (scissor_set). */
    const layer_framebuffer *fb =
        info->framebuffer ? object_map_get(&cb->device->framebuffers, (uint64_t)info->framebuffer)
                          : NULL;
    cb->render = (layer_render_target){
        .render_pass = info->renderPass,
        .subpass = info->subpass,
        .extent = fb ? (VkExtent2D){fb->width, fb->height} : (VkExtent2D){0, 0},
        .layers = fb ? fb->layers : 1,
        .area_from_scissor = !fb,
    };
    enter_subpass(cb);
}

/* Scissor 0 of a secondary that does not know its render area bounds its draws. */
void layer_render_state_scissor(layer_command_buffer *cb, VkExtent2D extent)
{
    if (!cb->render.area_from_scissor || !cb->stream)
        return;
    if (extent.width == cb->render.state.width && extent.height == cb->render.state.height)
        return;
    cb->render.state.width = extent.width;
    cb->render.state.height = extent.height;
    tally_stream_set_render_state(cb->stream, &cb->render.state);
}

static void scissor_set(layer_command_buffer *cb, uint32_t first, uint32_t count,
                        const VkRect2D *scissors)
{
    if (first == 0 && count > 0)
        layer_render_state_scissor(cb, scissors[0].extent);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdSetScissor(VkCommandBuffer commandBuffer,
                                                uint32_t firstScissor, uint32_t scissorCount,
                                                const VkRect2D *pScissors)
{
    layer_command_buffer *cb = layer_command_buffer_of(commandBuffer);
    layer_device *device = cb ? cb->device : layer_device_of(commandBuffer);
    device->dispatch.CmdSetScissor(commandBuffer, firstScissor, scissorCount, pScissors);
    if (cb)
        scissor_set(cb, firstScissor, scissorCount, pScissors);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdSetScissorWithCount(VkCommandBuffer commandBuffer,
                                                         uint32_t scissorCount,
                                                         const VkRect2D *pScissors)
{
    layer_command_buffer *cb = layer_command_buffer_of(commandBuffer);
    layer_device *device = cb ? cb->device : layer_device_of(commandBuffer);
    device->dispatch.CmdSetScissorWithCount(commandBuffer, scissorCount, pScissors);
    if (cb)
        scissor_set(cb, 0, scissorCount, pScissors);
}

void layer_render_states_destroy_all(layer_device *device)
{
    object_map_free_values(&device->render_passes);
    object_map_free_values(&device->framebuffers);
    object_map_free_values(&device->image_views);
    object_map_free_values(&device->images);
}

/* --- the end of a render pass instance --------------------------------------------- */

/* A measurement begun in its last subpass ends before it does (the command
 * goes down after this); after it, commands record outside any subpass: no views. */
static layer_command_buffer *end_render_pass(VkCommandBuffer commandBuffer)
{
    layer_command_buffer *cb = layer_command_buffer_of(commandBuffer);
    if (cb) {
        if (cb->measured)
            layer_measure_pass_end(cb);
        cb->render.render_pass = VK_NULL_HANDLE;
        cb->render.view_count = 0;
    }
    return cb;
}

/* After the driver's end of the instance: what the served queries that
 * ended inside it need is recorded now (statistics_copy.c). */
static void render_pass_ended(layer_command_buffer *cb)
{
    if (cb && cb->measured)
        layer_copy_pass_end(cb);
}

static layer_device *device_of(layer_command_buffer *cb, VkCommandBuffer commandBuffer)
{
    return cb ? cb->device : layer_device_of(commandBuffer);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdEndRenderPass(VkCommandBuffer commandBuffer)
{
    layer_command_buffer *cb = end_render_pass(commandBuffer);
    device_of(cb, commandBuffer)->dispatch.CmdEndRenderPass(commandBuffer);
    render_pass_ended(cb);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdEndRenderPass2(VkCommandBuffer commandBuffer,
                                                    const VkSubpassEndInfo *pSubpassEndInfo)
{
    layer_command_buffer *cb = end_render_pass(commandBuffer);
    device_of(cb, commandBuffer)->dispatch.CmdEndRenderPass2(commandBuffer, pSubpassEndInfo);
    render_pass_ended(cb);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdEndRendering(VkCommandBuffer commandBuffer)
{
    layer_command_buffer *cb = end_render_pass(commandBuffer);
    device_of(cb, commandBuffer)->dispatch.CmdEndRendering(commandBuffer);
    render_pass_ended(cb);
}
