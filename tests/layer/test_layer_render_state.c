/*
 * The render state the layer gives the engine, seen through the counters
 * that depend on it (simgpu's pixel stages, backends/simgpu/model.c): the
 * same draw into the same attachments counts the same in a VkRenderPass, in
 * dynamic rendering, and recorded in a secondary command buffer that either
 * one executes; and those counts are the catalogue's formulas worked by hand
 * over the attachments' formats, samples and extent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tally/catalogue.h"
#include "vk_context.h"

enum { WIDTH = 16, HEIGHT = 8, MAX_ATTACHMENTS = 3 };

/*
 * simgpu's default profile (catalogue.toml, [[parameter]]): a triangle covers
 * pixels_per_triangle = 256 pixels, never more than the render area; nothing
 * is clipped away (clip_reject_permille = 0, clip_split_permille = 0); L2
 * lines are l2_line_bytes = 64 and every written line reaches DRAM. The layer
 * sets no cull, depth-test, depth-write or blend flag, so early depth and
 * culling reject nothing, and draw.frag does not discard. Shader stores
 * (the outputs' OpStore) write memory_bytes_per_lane = 4 bytes per invocation.
 */
enum { PIXELS_PER_TRIANGLE = 256, LINE_BYTES = 64, MEMORY_BYTES_PER_LANE = 4 };

static const char *const symbols[] = {
    "IaVertices",     "RasterizedPixels", "CoveredSamples",         "FsInvocations",
    "SamplesWritten", "DramWriteBytes",   "ShaderStoreInstructions"};
enum {
    IA_VERTICES,
    RASTERIZED_PIXELS,
    COVERED_SAMPLES,
    FS_INVOCATIONS,
    SAMPLES_WRITTEN,
    DRAM_WRITE_BYTES,
    SHADER_STORES,
    COUNTER_COUNT
};

typedef struct counts {
    uint64_t values[COUNTER_COUNT];
} counts;

/* Attachments: colour formats, then an optional depth format, all of one sample count. */
typedef struct target_desc {
    VkFormat colors[2];
    uint32_t color_count;
    VkFormat depth; /* VK_FORMAT_UNDEFINED: none */
    VkSampleCountFlagBits samples;
    uint32_t view_mask; /* multiview: the views drawn; 0: none */
} target_desc;

/* Layers of each attachment: one per view. */
static uint32_t layers_of(const target_desc *desc)
{
    return desc->view_mask ? (uint32_t)__builtin_popcount(desc->view_mask) : 1;
}

typedef struct target {
    target_desc desc;
    uint32_t attachment_count;
    VkImage images[MAX_ATTACHMENTS];
    VkDeviceMemory memory[MAX_ATTACHMENTS];
    VkImageView views[MAX_ATTACHMENTS];
    VkRenderPass render_pass;
    VkFramebuffer framebuffer;
    VkPipeline pass_pipeline;    /* for the render pass */
    VkPipeline dynamic_pipeline; /* for dynamic rendering */
} target;

typedef struct fixture {
    vk_context c;
    VkShaderModule two_outputs; /* draw_two.frag */
    VkQueryPool pool;
    uint32_t passes;
    uint32_t indices[COUNTER_COUNT];
} fixture;

/* Two colour attachments of 4 and 8 bytes per pixel, and a 4-byte depth one, at 4 samples. */
static const target_desc multisampled = {
    .colors = {VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R16G16B16A16_SFLOAT},
    .color_count = 2,
    .depth = VK_FORMAT_D32_SFLOAT,
    .samples = VK_SAMPLE_COUNT_4_BIT};
static const target_desc depth_only = {.depth = VK_FORMAT_D32_SFLOAT,
                                       .samples = VK_SAMPLE_COUNT_4_BIT};
static const target_desc single_sampled = {
    .colors = {VK_FORMAT_R8G8B8A8_UNORM}, .color_count = 1, .samples = VK_SAMPLE_COUNT_1_BIT};

/* Views 0 and 1 of a two-layer colour attachment: the render area counts twice. */
static const target_desc two_views = {.colors = {VK_FORMAT_B8G8R8A8_UNORM},
                                      .color_count = 1,
                                      .samples = VK_SAMPLE_COUNT_1_BIT,
                                      .view_mask = 0x3};

/* --- counters ---------------------------------------------------------------------- */

static uint32_t counter_index(vk_context *c, const char *symbol)
{
    const tally_catalogue *cat = NULL;
    uint32_t index = 0, n = 0;
    assert_int_equal(tally_backend_catalogue(NULL, &cat), TALLY_OK);
    assert_int_equal(tally_catalogue_find(cat, symbol, &index), TALLY_OK);
    const tally_counter_info *info = tally_catalogue_counter(cat, index);
    assert_int_equal(c->enumerate_counters(c->physical, c->family, &n, NULL, NULL), VK_SUCCESS);
    VkPerformanceCounterKHR *counters = calloc(n, sizeof(*counters));
    for (uint32_t i = 0; i < n; i++)
        counters[i].sType = VK_STRUCTURE_TYPE_PERFORMANCE_COUNTER_KHR;
    assert_int_equal(c->enumerate_counters(c->physical, c->family, &n, counters, NULL), VK_SUCCESS);
    uint32_t found = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (memcmp(counters[i].uuid, info->uuid, VK_UUID_SIZE) == 0)
            found = i;
    free(counters);
    assert_int_not_equal(found, UINT32_MAX);
    return found;
}

static void create_query_pool(fixture *f)
{
    for (uint32_t i = 0; i < COUNTER_COUNT; i++)
        f->indices[i] = counter_index(&f->c, symbols[i]);
    VkQueryPoolPerformanceCreateInfoKHR performance = {
        VK_STRUCTURE_TYPE_QUERY_POOL_PERFORMANCE_CREATE_INFO_KHR, NULL, f->c.family, COUNTER_COUNT,
        f->indices};
    f->c.get_passes(f->c.physical, &performance, &f->passes);
    assert_true(f->passes >= 1);
    VkQueryPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .pNext = &performance,
                                  .queryType = VK_QUERY_TYPE_PERFORMANCE_QUERY_KHR,
                                  .queryCount = 1};
    assert_int_equal(vkCreateQueryPool(f->c.device, &info, NULL, &f->pool), VK_SUCCESS);
}

/* --- attachments, render passes and pipelines ------------------------------------- */

static uint32_t memory_type(uint32_t bits)
{
    uint32_t type = 0;
    while (!(bits & (1u << type)))
        type++;
    return type;
}

static void create_attachment(vk_context *c, target *t, uint32_t i, VkFormat format, bool depth)
{
    VkImageCreateInfo image = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
        .imageType = VK_IMAGE_TYPE_2D,
        .format = format,
        .extent = {WIDTH, HEIGHT, 1},
        .mipLevels = 1,
        .arrayLayers = layers_of(&t->desc),
        .samples = t->desc.samples,
        .usage = depth ? VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT
                       : VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
    };
    assert_int_equal(vkCreateImage(c->device, &image, NULL, &t->images[i]), VK_SUCCESS);
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(c->device, t->images[i], &req);
    VkMemoryAllocateInfo alloc = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size,
                                  memory_type(req.memoryTypeBits)};
    assert_int_equal(vkAllocateMemory(c->device, &alloc, NULL, &t->memory[i]), VK_SUCCESS);
    assert_int_equal(vkBindImageMemory(c->device, t->images[i], t->memory[i], 0), VK_SUCCESS);
    VkImageViewCreateInfo view = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
        .image = t->images[i],
        .viewType = t->desc.view_mask ? VK_IMAGE_VIEW_TYPE_2D_ARRAY : VK_IMAGE_VIEW_TYPE_2D,
        .format = format,
        .subresourceRange = {depth ? VK_IMAGE_ASPECT_DEPTH_BIT : VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0,
                             layers_of(&t->desc)},
    };
    assert_int_equal(vkCreateImageView(c->device, &view, NULL, &t->views[i]), VK_SUCCESS);
}

static void create_render_pass(vk_context *c, target *t)
{
    VkAttachmentDescription attachments[MAX_ATTACHMENTS];
    VkAttachmentReference colors[2],
        depth = {t->desc.color_count, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL};
    for (uint32_t i = 0; i < t->attachment_count; i++) {
        bool is_depth = i == t->desc.color_count;
        VkImageLayout layout = is_depth ? VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL
                                        : VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
        attachments[i] = (VkAttachmentDescription){0,
                                                   is_depth ? t->desc.depth : t->desc.colors[i],
                                                   t->desc.samples,
                                                   VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                                                   VK_ATTACHMENT_STORE_OP_STORE,
                                                   VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                                                   VK_ATTACHMENT_STORE_OP_DONT_CARE,
                                                   VK_IMAGE_LAYOUT_UNDEFINED,
                                                   layout};
        if (!is_depth)
            colors[i] = (VkAttachmentReference){i, layout};
    }
    VkSubpassDescription subpass = {
        .pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
        .colorAttachmentCount = t->desc.color_count,
        .pColorAttachments = colors,
        .pDepthStencilAttachment = t->desc.depth ? &depth : NULL,
    };
    VkRenderPassMultiviewCreateInfo multiview = {
        .sType = VK_STRUCTURE_TYPE_RENDER_PASS_MULTIVIEW_CREATE_INFO,
        .subpassCount = 1,
        .pViewMasks = &t->desc.view_mask};
    VkRenderPassCreateInfo pass = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
                                   .pNext = t->desc.view_mask ? &multiview : NULL,
                                   .attachmentCount = t->attachment_count,
                                   .pAttachments = attachments,
                                   .subpassCount = 1,
                                   .pSubpasses = &subpass};
    assert_int_equal(vkCreateRenderPass(c->device, &pass, NULL, &t->render_pass), VK_SUCCESS);
    VkFramebufferCreateInfo fb = {.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO,
                                  .renderPass = t->render_pass,
                                  .attachmentCount = t->attachment_count,
                                  .pAttachments = t->views,
                                  .width = WIDTH,
                                  .height = HEIGHT,
                                  .layers = 1};
    assert_int_equal(vkCreateFramebuffer(c->device, &fb, NULL, &t->framebuffer), VK_SUCCESS);
}

/* A fragment shader needs a colour attachment to write. */
static bool has_fragment_shader(const target *t)
{
    return t->desc.color_count > 0;
}

/* draw.vert, and draw.frag if it has an attachment; viewport and scissor are dynamic, set where the
 * draw is recorded. */
static VkPipeline create_pipeline_with(fixture *f, const target *t, VkRenderPass render_pass,
                                       uint32_t subpass, VkShaderModule fragment)
{
    vk_context *c = &f->c;
    VkPipelineShaderStageCreateInfo stages[2] = {
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_VERTEX_BIT,
         c->modules[0], "main", NULL},
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_FRAGMENT_BIT,
         fragment, "main", NULL},
    };
    VkPipelineVertexInputStateCreateInfo input = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    VkPipelineInputAssemblyStateCreateInfo assembly = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO,
        .topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST};
    VkPipelineViewportStateCreateInfo viewport = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO,
        .viewportCount = 1,
        .scissorCount = 1};
    VkPipelineRasterizationStateCreateInfo raster = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO,
        .polygonMode = VK_POLYGON_MODE_FILL,
        .lineWidth = 1.0f};
    VkPipelineMultisampleStateCreateInfo multisample = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO,
        .rasterizationSamples = t->desc.samples};
    VkPipelineDepthStencilStateCreateInfo depth = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};
    VkPipelineColorBlendAttachmentState blend_attachments[2] = {{.colorWriteMask = 0xf},
                                                                {.colorWriteMask = 0xf}};
    VkPipelineColorBlendStateCreateInfo blend = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO,
        .attachmentCount = t->desc.color_count,
        .pAttachments = blend_attachments};
    VkDynamicState dynamic_states[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
    VkPipelineDynamicStateCreateInfo dynamic = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO,
        .dynamicStateCount = 2,
        .pDynamicStates = dynamic_states};
    VkPipelineRenderingCreateInfo rendering = {.sType =
                                                   VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO,
                                               .colorAttachmentCount = t->desc.color_count,
                                               .pColorAttachmentFormats = t->desc.colors,
                                               .depthAttachmentFormat = t->desc.depth,
                                               .viewMask = t->desc.view_mask};
    VkGraphicsPipelineCreateInfo info = {.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
                                         .pNext = render_pass ? NULL : &rendering,
                                         .stageCount = has_fragment_shader(t) ? 2 : 1,
                                         .pStages = stages,
                                         .pVertexInputState = &input,
                                         .pInputAssemblyState = &assembly,
                                         .pViewportState = &viewport,
                                         .pRasterizationState = &raster,
                                         .pMultisampleState = &multisample,
                                         .pDepthStencilState = t->desc.depth ? &depth : NULL,
                                         .pColorBlendState = &blend,
                                         .pDynamicState = &dynamic,
                                         .layout = c->layout,
                                         .renderPass = render_pass,
                                         .subpass = subpass};
    VkPipeline pipeline = VK_NULL_HANDLE;
    assert_int_equal(
        vkCreateGraphicsPipelines(c->device, VK_NULL_HANDLE, 1, &info, NULL, &pipeline),
        VK_SUCCESS);
    return pipeline;
}

/* draw.frag, or draw_two.frag for two colour attachments. */
static VkPipeline create_pipeline(fixture *f, const target *t, VkRenderPass render_pass,
                                  uint32_t subpass)
{
    VkShaderModule fragment = t->desc.color_count == 2 ? f->two_outputs : f->c.modules[1];
    return create_pipeline_with(f, t, render_pass, subpass, fragment);
}

static target create_target(fixture *f, const target_desc *desc)
{
    vk_context *c = &f->c;
    target t = {.desc = *desc, .attachment_count = desc->color_count + (desc->depth ? 1 : 0)};
    for (uint32_t i = 0; i < desc->color_count; i++)
        create_attachment(c, &t, i, desc->colors[i], false);
    if (desc->depth)
        create_attachment(c, &t, desc->color_count, desc->depth, true);
    create_render_pass(c, &t);
    t.pass_pipeline = create_pipeline(f, &t, t.render_pass, 0);
    t.dynamic_pipeline = create_pipeline(f, &t, VK_NULL_HANDLE, 0);
    return t;
}

static void destroy_target(vk_context *c, target *t)
{
    vkDeviceWaitIdle(c->device);
    vkDestroyPipeline(c->device, t->pass_pipeline, NULL);
    vkDestroyPipeline(c->device, t->dynamic_pipeline, NULL);
    vkDestroyFramebuffer(c->device, t->framebuffer, NULL);
    vkDestroyRenderPass(c->device, t->render_pass, NULL);
    for (uint32_t i = 0; i < t->attachment_count; i++) {
        vkDestroyImageView(c->device, t->views[i], NULL);
        vkDestroyImage(c->device, t->images[i], NULL);
        vkFreeMemory(c->device, t->memory[i], NULL);
    }
}

/* --- recording --------------------------------------------------------------------- */

typedef enum recording {
    INLINE_RENDER_PASS,
    INLINE_DYNAMIC_RENDERING,
    SECONDARY_IN_RENDER_PASS,
    SECONDARY_IN_RENDER_PASS_NO_FRAMEBUFFER, /* the inheritance info names no framebuffer */
    SECONDARY_IN_DYNAMIC_RENDERING,
} recording;

static bool uses_render_pass(recording how)
{
    return how == INLINE_RENDER_PASS || how == SECONDARY_IN_RENDER_PASS ||
           how == SECONDARY_IN_RENDER_PASS_NO_FRAMEBUFFER;
}

/* One triangle over the whole target, with the viewport and scissor a secondary must set itself. */
static void draw_triangle(VkCommandBuffer cb, VkPipeline pipeline)
{
    VkViewport viewport = {0, 0, WIDTH, HEIGHT, 0, 1};
    VkRect2D scissor = {{0, 0}, {WIDTH, HEIGHT}};
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline);
    vkCmdSetViewport(cb, 0, 1, &viewport);
    vkCmdSetScissor(cb, 0, 1, &scissor);
    vkCmdDraw(cb, 3, 1, 0, 0);
}

static VkCommandBuffer record_secondary(vk_context *c, const target *t, recording how)
{
    VkCommandBufferAllocateInfo alloc = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
                                         c->pool, VK_COMMAND_BUFFER_LEVEL_SECONDARY, 1};
    VkCommandBuffer cb = VK_NULL_HANDLE;
    assert_int_equal(vkAllocateCommandBuffers(c->device, &alloc, &cb), VK_SUCCESS);
    VkCommandBufferInheritanceRenderingInfo rendering = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_RENDERING_INFO,
        .colorAttachmentCount = t->desc.color_count,
        .pColorAttachmentFormats = t->desc.colors,
        .viewMask = t->desc.view_mask,
        .depthAttachmentFormat = t->desc.depth,
        .rasterizationSamples = t->desc.samples};
    VkCommandBufferInheritanceInfo inheritance = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
        .pNext = uses_render_pass(how) ? NULL : &rendering,
        .renderPass = uses_render_pass(how) ? t->render_pass : VK_NULL_HANDLE,
        .framebuffer = how == SECONDARY_IN_RENDER_PASS ? t->framebuffer : VK_NULL_HANDLE};
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT,
                                      .pInheritanceInfo = &inheritance};
    assert_int_equal(vkBeginCommandBuffer(cb, &begin), VK_SUCCESS);
    draw_triangle(cb, uses_render_pass(how) ? t->pass_pipeline : t->dynamic_pipeline);
    assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
    return cb;
}

static void begin_rendering(VkCommandBuffer cb, const target *t, VkRenderingFlags flags)
{
    VkRenderingAttachmentInfo attachments[MAX_ATTACHMENTS];
    for (uint32_t i = 0; i < t->attachment_count; i++) {
        bool is_depth = i == t->desc.color_count;
        attachments[i] = (VkRenderingAttachmentInfo){
            .sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO,
            .imageView = t->views[i],
            .imageLayout = is_depth ? VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL
                                    : VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
            .loadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
            .storeOp = VK_ATTACHMENT_STORE_OP_STORE};
    }
    VkRenderingInfo info = {
        .sType = VK_STRUCTURE_TYPE_RENDERING_INFO,
        .flags = flags,
        .renderArea = {{0, 0}, {WIDTH, HEIGHT}},
        .layerCount = 1,
        .viewMask = t->desc.view_mask,
        .colorAttachmentCount = t->desc.color_count,
        .pColorAttachments = attachments,
        .pDepthAttachment = t->desc.depth ? &attachments[t->desc.color_count] : NULL,
    };
    vkCmdBeginRendering(cb, &info);
}

/* Attachment layouts for dynamic rendering; the old contents are not kept. */
static void to_attachment_layouts(VkCommandBuffer cb, const target *t)
{
    VkImageMemoryBarrier barriers[MAX_ATTACHMENTS];
    for (uint32_t i = 0; i < t->attachment_count; i++) {
        bool is_depth = i == t->desc.color_count;
        barriers[i] = (VkImageMemoryBarrier){
            .sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
            .dstAccessMask = is_depth ? VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT
                                      : VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
            .oldLayout = VK_IMAGE_LAYOUT_UNDEFINED,
            .newLayout = is_depth ? VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL
                                  : VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
            .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
            .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
            .image = t->images[i],
            .subresourceRange = {is_depth ? VK_IMAGE_ASPECT_DEPTH_BIT : VK_IMAGE_ASPECT_COLOR_BIT,
                                 0, 1, 0, layers_of(&t->desc)},
        };
    }
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                         VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT |
                             VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT |
                             VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT,
                         0, 0, NULL, 0, NULL, t->attachment_count, barriers);
}

static void record_render_pass_instance(VkCommandBuffer cb, const target *t, recording how,
                                        VkCommandBuffer secondary)
{
    to_attachment_layouts(cb, t);
    if (uses_render_pass(how)) {
        VkRenderPassBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
                                       .renderPass = t->render_pass,
                                       .framebuffer = t->framebuffer,
                                       .renderArea = {{0, 0}, {WIDTH, HEIGHT}}};
        vkCmdBeginRenderPass(cb, &begin,
                             secondary ? VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS
                                       : VK_SUBPASS_CONTENTS_INLINE);
    } else {
        begin_rendering(cb, t, secondary ? VK_RENDERING_CONTENTS_SECONDARY_COMMAND_BUFFERS_BIT : 0);
    }
    if (secondary)
        vkCmdExecuteCommands(cb, 1, &secondary);
    else
        draw_triangle(cb, uses_render_pass(how) ? t->pass_pipeline : t->dynamic_pipeline);
    if (uses_render_pass(how))
        vkCmdEndRenderPass(cb);
    else
        vkCmdEndRendering(cb);
}

/* Takes the profiling lock and makes the query available again. */
static void start_measurement(fixture *f)
{
    VkAcquireProfilingLockInfoKHR lock = {VK_STRUCTURE_TYPE_ACQUIRE_PROFILING_LOCK_INFO_KHR, NULL,
                                          0, UINT64_MAX};
    assert_int_equal(f->c.acquire_lock(f->c.device, &lock), VK_SUCCESS);
    vkResetQueryPool(f->c.device, f->pool, 0, 1);
}

/* Submits once per pass, releases the profiling lock, and reads the query. */
static counts submit_and_read(fixture *f, VkCommandBuffer cb)
{
    vk_context *c = &f->c;
    for (uint32_t pass = 0; pass < f->passes; pass++)
        assert_int_equal(vk_context_submit(c, cb, pass), VK_SUCCESS);
    c->release_lock(c->device);
    VkPerformanceCounterResultKHR results[COUNTER_COUNT];
    assert_int_equal(vkGetQueryPoolResults(c->device, f->pool, 0, 1, sizeof(results), results,
                                           sizeof(results), VK_QUERY_RESULT_WAIT_BIT),
                     VK_SUCCESS);
    counts out;
    for (uint32_t i = 0; i < COUNTER_COUNT; i++)
        out.values[i] = results[i].uint64;
    return out;
}

/* Ends the query and the command buffer begun for a measurement, submits it
 * and reads the counts; frees it and the secondary it ran, if any. */
static counts end_measure(fixture *f, VkCommandBuffer cb, VkCommandBuffer secondary)
{
    vk_context *c = &f->c;
    vkCmdEndQuery(cb, f->pool, 0);
    assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
    counts out = submit_and_read(f, cb);
    vkFreeCommandBuffers(c->device, c->pool, 1, &cb);
    if (secondary)
        vkFreeCommandBuffers(c->device, c->pool, 1, &secondary);
    return out;
}

/* The counters of one triangle drawn into the target as `how` records it. */
static counts measure(fixture *f, const target *t, recording how)
{
    vk_context *c = &f->c;
    start_measurement(f);
    bool in_secondary = how != INLINE_RENDER_PASS && how != INLINE_DYNAMIC_RENDERING;
    VkCommandBuffer secondary = in_secondary ? record_secondary(c, t, how) : VK_NULL_HANDLE;
    VkCommandBuffer cb = vk_context_begin(c);
    vkCmdBeginQuery(cb, f->pool, 0, 0);
    record_render_pass_instance(cb, t, how, secondary);
    return end_measure(f, cb, secondary);
}

/* --- expectations ------------------------------------------------------------------ */

static uint64_t div_up(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/*
 * model.c's pixel stages for one triangle, worked by hand: the triangle's
 * pixels are capped by the render area; each covers `samples` samples, all
 * written when a colour attachment takes them; each written sample moves
 * the colour attachments' bytes per pixel, and the shaders' stores their
 * bytes, each in whole lines. The shaders' store count is the one input
 * measured, not derived: it is the compiler's SPIR-V, not the render state.
 */
static counts expected(uint32_t color_bytes_per_pixel, uint32_t samples, uint64_t area,
                       bool fragment_shader, uint64_t shader_stores)
{
    uint64_t pixels = PIXELS_PER_TRIANGLE < area ? PIXELS_PER_TRIANGLE : area;
    uint64_t covered = pixels * samples;
    uint64_t written = color_bytes_per_pixel ? covered : 0;
    uint64_t lines = div_up(written * color_bytes_per_pixel, LINE_BYTES) +
                     div_up(shader_stores * MEMORY_BYTES_PER_LANE, LINE_BYTES);
    counts c = {{
        [IA_VERTICES] = 3,
        [RASTERIZED_PIXELS] = pixels,
        [COVERED_SAMPLES] = covered,
        [FS_INVOCATIONS] = fragment_shader ? pixels : 0,
        [SAMPLES_WRITTEN] = written,
        [DRAM_WRITE_BYTES] = lines * LINE_BYTES,
        [SHADER_STORES] = shader_stores,
    }};
    return c;
}

static void assert_counts_equal(const counts *actual, const counts *wanted, const char *what)
{
    for (uint32_t i = 0; i < COUNTER_COUNT; i++)
        if (actual->values[i] != wanted->values[i])
            fail_msg("%s: %s is %llu, expected %llu", what, symbols[i],
                     (unsigned long long)actual->values[i], (unsigned long long)wanted->values[i]);
}

/* --- cases ------------------------------------------------------------------------- */

/* Every recording of the draw counts what the attachments' bytes and samples make of it. */
static void check_recordings(fixture *f, const target_desc *desc, uint32_t color_bytes_per_pixel,
                             uint32_t samples, uint32_t layers)
{
    static const char *const names[] = {
        "render pass", "dynamic rendering", "secondary in a render pass",
        "secondary in a render pass, no framebuffer", "secondary in dynamic rendering"};
    target t = create_target(f, desc);
    uint64_t shader_stores = 0;
    for (recording how = INLINE_RENDER_PASS; how <= SECONDARY_IN_DYNAMIC_RENDERING; how++) {
        counts actual = measure(f, &t, how);
        if (how == INLINE_RENDER_PASS)
            shader_stores = actual.values[SHADER_STORES];
        counts wanted = expected(color_bytes_per_pixel, samples, (uint64_t)WIDTH * HEIGHT * layers,
                                 has_fragment_shader(&t), shader_stores);
        assert_counts_equal(&actual, &wanted, names[how]);
    }
    /* Each fragment stores its colour once: the stores follow the pixels. */
    if (has_fragment_shader(&t))
        assert_true(shader_stores >= WIDTH * HEIGHT);
    destroy_target(&f->c, &t);
}

/* B8G8R8A8_UNORM (4 bytes) + R16G16B16A16_SFLOAT (8 bytes) at 4 samples over
 * 16x8 = 128 pixels (fewer than a triangle's 256): 512 samples, 512 * 12 bytes
 * written. The D32 depth attachment adds no traffic: the layer gives the
 * engine no depth-write flag. */
static void multisampled_colour_and_depth_count_the_same_in_every_recording(void **state)
{
    check_recordings(*state, &multisampled, 4 + 8, 4, 1);
}

/* A depth attachment's samples count; with no colour attachment nothing is written. */
static void depth_only_counts_its_samples_in_every_recording(void **state)
{
    check_recordings(*state, &depth_only, 0, 4, 1);
}

/* Two views over 16x8: 256 pixels, a whole triangle's, where one layer caps it at 128. */
static void multiview_counts_its_views_in_every_recording(void **state)
{
    check_recordings(*state, &two_views, 4, 1, 2);
}

static void single_sampled_colour_counts_the_same_in_every_recording(void **state)
{
    check_recordings(*state, &single_sampled, 4, 1, 1);
}

/* Subpass 0 writes attachment 0 (B8G8R8A8, 4 bytes), subpass 1 attachment 1
 * (R16G16B16A16_SFLOAT, 8 bytes): each subpass's draw counts its own
 * attachment's bytes, not the render pass's 12. */
typedef struct two_subpasses {
    target attachments; /* images and views only */
    VkRenderPass render_pass;
    VkFramebuffer framebuffer;
    VkPipeline pipelines[2];
} two_subpasses;

static two_subpasses create_two_subpasses(fixture *f)
{
    vk_context *c = &f->c;
    two_subpasses p = {.attachments = {.desc = {.colors = {VK_FORMAT_B8G8R8A8_UNORM,
                                                           VK_FORMAT_R16G16B16A16_SFLOAT},
                                                .color_count = 2,
                                                .samples = VK_SAMPLE_COUNT_1_BIT},
                                       .attachment_count = 2}};
    VkAttachmentDescription attachments[2];
    VkAttachmentReference refs[2];
    VkSubpassDescription subpasses[2];
    for (uint32_t i = 0; i < 2; i++) {
        create_attachment(c, &p.attachments, i, p.attachments.desc.colors[i], false);
        attachments[i] = (VkAttachmentDescription){0,
                                                   p.attachments.desc.colors[i],
                                                   VK_SAMPLE_COUNT_1_BIT,
                                                   VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                                                   VK_ATTACHMENT_STORE_OP_STORE,
                                                   VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                                                   VK_ATTACHMENT_STORE_OP_DONT_CARE,
                                                   VK_IMAGE_LAYOUT_UNDEFINED,
                                                   VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
        refs[i] = (VkAttachmentReference){i, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
        subpasses[i] = (VkSubpassDescription){.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
                                              .colorAttachmentCount = 1,
                                              .pColorAttachments = &refs[i]};
    }
    VkRenderPassCreateInfo pass = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
                                   .attachmentCount = 2,
                                   .pAttachments = attachments,
                                   .subpassCount = 2,
                                   .pSubpasses = subpasses};
    assert_int_equal(vkCreateRenderPass(c->device, &pass, NULL, &p.render_pass), VK_SUCCESS);
    VkFramebufferCreateInfo fb = {.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO,
                                  .renderPass = p.render_pass,
                                  .attachmentCount = 2,
                                  .pAttachments = p.attachments.views,
                                  .width = WIDTH,
                                  .height = HEIGHT,
                                  .layers = 1};
    assert_int_equal(vkCreateFramebuffer(c->device, &fb, NULL, &p.framebuffer), VK_SUCCESS);
    target one_colour = {.desc = single_sampled};
    for (uint32_t i = 0; i < 2; i++)
        p.pipelines[i] = create_pipeline(f, &one_colour, p.render_pass, i);
    return p;
}

static void destroy_two_subpasses(vk_context *c, two_subpasses *p)
{
    vkDeviceWaitIdle(c->device);
    for (uint32_t i = 0; i < 2; i++)
        vkDestroyPipeline(c->device, p->pipelines[i], NULL);
    vkDestroyFramebuffer(c->device, p->framebuffer, NULL);
    vkDestroyRenderPass(c->device, p->render_pass, NULL);
    for (uint32_t i = 0; i < 2; i++) {
        vkDestroyImageView(c->device, p->attachments.views[i], NULL);
        vkDestroyImage(c->device, p->attachments.images[i], NULL);
        vkFreeMemory(c->device, p->attachments.memory[i], NULL);
    }
}

/* Subpass 1's draw in a secondary inheriting subpass 1, or inline. */
static counts measure_two_subpasses(fixture *f, two_subpasses *p, bool second_in_secondary)
{
    vk_context *c = &f->c;
    start_measurement(f);
    VkCommandBuffer secondary = VK_NULL_HANDLE;
    if (second_in_secondary) {
        VkCommandBufferAllocateInfo alloc = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
                                             c->pool, VK_COMMAND_BUFFER_LEVEL_SECONDARY, 1};
        assert_int_equal(vkAllocateCommandBuffers(c->device, &alloc, &secondary), VK_SUCCESS);
        VkCommandBufferInheritanceInfo inheritance = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
            .renderPass = p->render_pass,
            .subpass = 1,
            .framebuffer = p->framebuffer};
        VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                          .flags = VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT,
                                          .pInheritanceInfo = &inheritance};
        assert_int_equal(vkBeginCommandBuffer(secondary, &begin), VK_SUCCESS);
        draw_triangle(secondary, p->pipelines[1]);
        assert_int_equal(vkEndCommandBuffer(secondary), VK_SUCCESS);
    }
    VkCommandBuffer cb = vk_context_begin(c);
    vkCmdBeginQuery(cb, f->pool, 0, 0);
    VkRenderPassBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
                                   .renderPass = p->render_pass,
                                   .framebuffer = p->framebuffer,
                                   .renderArea = {{0, 0}, {WIDTH, HEIGHT}}};
    vkCmdBeginRenderPass(cb, &begin, VK_SUBPASS_CONTENTS_INLINE);
    draw_triangle(cb, p->pipelines[0]);
    vkCmdNextSubpass(cb, second_in_secondary ? VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS
                                             : VK_SUBPASS_CONTENTS_INLINE);
    if (second_in_secondary)
        vkCmdExecuteCommands(cb, 1, &secondary);
    else
        draw_triangle(cb, p->pipelines[1]);
    vkCmdEndRenderPass(cb);
    return end_measure(f, cb, secondary);
}

static void check_two_subpasses(fixture *f)
{
    two_subpasses p = create_two_subpasses(f);
    for (int in_secondary = 0; in_secondary < 2; in_secondary++) {
        counts actual = measure_two_subpasses(f, &p, in_secondary);
        /* Two draws of the same shaders over the same pixels store alike. */
        uint64_t stores = actual.values[SHADER_STORES] / 2;
        counts first = expected(4, 1, WIDTH * HEIGHT, true, stores),
               second = expected(8, 1, WIDTH * HEIGHT, true, stores);
        counts wanted;
        for (uint32_t i = 0; i < COUNTER_COUNT; i++)
            wanted.values[i] = first.values[i] + second.values[i];
        assert_counts_equal(&actual, &wanted, in_secondary ? "subpass 1 in a secondary" : "inline");
    }
    destroy_two_subpasses(&f->c, &p);
}

static void each_subpass_counts_its_own_attachments(void **state)
{
    check_two_subpasses(*state);
}

/* vk_context's triangle pipeline fixes its scissor to its 32x32 target: a
 * secondary inheriting its render pass without a framebuffer takes that as
 * its render area, as the primary's render pass instance has it. */
static counts measure_static_scissor(fixture *f, bool in_secondary)
{
    vk_context *c = &f->c;
    start_measurement(f);
    VkCommandBuffer secondary = VK_NULL_HANDLE;
    if (in_secondary) {
        VkCommandBufferAllocateInfo alloc = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
                                             c->pool, VK_COMMAND_BUFFER_LEVEL_SECONDARY, 1};
        assert_int_equal(vkAllocateCommandBuffers(c->device, &alloc, &secondary), VK_SUCCESS);
        VkCommandBufferInheritanceInfo inheritance = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
            .renderPass = c->render_pass};
        VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                          .flags = VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT,
                                          .pInheritanceInfo = &inheritance};
        assert_int_equal(vkBeginCommandBuffer(secondary, &begin), VK_SUCCESS);
        vkCmdBindPipeline(secondary, VK_PIPELINE_BIND_POINT_GRAPHICS, c->triangle);
        vkCmdDraw(secondary, 3, 1, 0, 0);
        assert_int_equal(vkEndCommandBuffer(secondary), VK_SUCCESS);
    }
    VkCommandBuffer cb = vk_context_begin(c);
    vkCmdBeginQuery(cb, f->pool, 0, 0);
    if (in_secondary) {
        vk_context_begin_render_pass(c, cb, VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS);
        vkCmdExecuteCommands(cb, 1, &secondary);
        vkCmdEndRenderPass(cb);
    } else {
        vk_context_draw_triangle(c, cb);
    }
    return end_measure(f, cb, secondary);
}

static void check_static_scissor(fixture *f)
{
    counts inline_counts = measure_static_scissor(f, false);
    counts secondary_counts = measure_static_scissor(f, true);
    /* R8G8B8A8 at one sample; 32x32 holds the whole triangle's 256 pixels. */
    counts wanted = expected(4, 1, VK_CONTEXT_SIZE * VK_CONTEXT_SIZE, true,
                             inline_counts.values[SHADER_STORES]);
    assert_int_equal(wanted.values[RASTERIZED_PIXELS], PIXELS_PER_TRIANGLE);
    assert_counts_equal(&inline_counts, &wanted, "inline");
    assert_counts_equal(&secondary_counts, &wanted, "secondary");
}

static void a_secondary_without_framebuffer_takes_a_pipeline_s_fixed_scissor(void **state)
{
    check_static_scissor(*state);
}

/* A pipeline bound between two draws counts as itself: draw.frag (one
 * output) then draw_two.frag (two; the second has no attachment here, so
 * it is dropped, but the shader still stores it) in one render pass count
 * what each counts alone. The layer records a draw without a call
 * (layer_try_draw) only while the bound program is the stream's; binding
 * another must end that, though no other command comes between. */
static void a_pipeline_bound_between_draws_counts_as_itself(void **state)
{
    fixture *f = *state;
    target t = create_target(f, &single_sampled);
    VkPipeline pipelines[2] = {t.pass_pipeline,
                               create_pipeline_with(f, &t, t.render_pass, 0, f->two_outputs)};
    counts alone[2], both;
    for (int i = 0; i <= 2; i++) {
        start_measurement(f);
        VkCommandBuffer cb = vk_context_begin(&f->c);
        vkCmdBeginQuery(cb, f->pool, 0, 0);
        to_attachment_layouts(cb, &t);
        VkRenderPassBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
                                       .renderPass = t.render_pass,
                                       .framebuffer = t.framebuffer,
                                       .renderArea = {{0, 0}, {WIDTH, HEIGHT}}};
        vkCmdBeginRenderPass(cb, &begin, VK_SUBPASS_CONTENTS_INLINE);
        for (int p = 0; p < 2; p++)
            if (i == 2 || i == p)
                draw_triangle(cb, pipelines[p]);
        vkCmdEndRenderPass(cb);
        counts got = end_measure(f, cb, VK_NULL_HANDLE);
        if (i < 2)
            alone[i] = got;
        else
            both = got;
    }
    assert_true(alone[1].values[SHADER_STORES] > alone[0].values[SHADER_STORES]);
    counts sum;
    for (uint32_t i = 0; i < COUNTER_COUNT; i++)
        sum.values[i] = alone[0].values[i] + alone[1].values[i];
    assert_counts_equal(&both, &sum, "two pipelines' draws in one render pass");
    vkDestroyPipeline(f->c.device, pipelines[1], NULL);
    destroy_target(&f->c, &t);
}

static bool load_two_outputs(fixture *f)
{
    static uint32_t words[4096];
    FILE *file = fopen(SHADER_DIR "/draw_two.frag.spv", "rb");
    if (!file)
        return false;
    size_t bytes = fread(words, 1, sizeof(words), file);
    fclose(file);
    VkShaderModuleCreateInfo info = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, bytes,
                                     words};
    return vkCreateShaderModule(f->c.device, &info, NULL, &f->two_outputs) == VK_SUCCESS;
}

static bool fixture_open(fixture *f, const char *extra_layer, unsigned *messages)
{
    vk_context_options options = {.performance_query_extension = true,
                                  .performance_query_feature = true,
                                  .dynamic_rendering = true,
                                  .multiview = true,
                                  .extra_layer = extra_layer,
                                  .messenger = messages ? vk_context_count_validation : NULL,
                                  .messenger_data = messages};
    if (!vk_context_create(&f->c, &options) || !load_two_outputs(f))
        return false;
    create_query_pool(f);
    return true;
}

static void fixture_close(fixture *f)
{
    vkDestroyShaderModule(f->c.device, f->two_outputs, NULL);
    vkDestroyQueryPool(f->c.device, f->pool, NULL);
    vk_context_destroy(&f->c);
}

/* The layer's new hooks (images, views, framebuffers, subpasses, scissors,
 * inheritance) pass every call down as it came: validation, below the
 * layer, finds nothing wrong with the recordings above. */
static void every_recording_under_validation_gets_no_message(void **state)
{
    (void)state;
    unsigned messages = 0;
    fixture f;
    assert_true(fixture_open(&f, "VK_LAYER_KHRONOS_validation", &messages));
    check_recordings(&f, &multisampled, 4 + 8, 4, 1);
    check_recordings(&f, &depth_only, 0, 4, 1);
    check_recordings(&f, &two_views, 4, 1, 2);
    check_two_subpasses(&f);
    check_static_scissor(&f);
    fixture_close(&f);
    assert_int_equal(messages, 0);
}

static int open_fixture(void **state)
{
    static fixture f;
    if (!fixture_open(&f, NULL, NULL))
        return -1;
    *state = &f;
    return 0;
}

static int close_fixture(void **state)
{
    fixture_close(*state);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(multisampled_colour_and_depth_count_the_same_in_every_recording),
        cmocka_unit_test(depth_only_counts_its_samples_in_every_recording),
        cmocka_unit_test(single_sampled_colour_counts_the_same_in_every_recording),
        cmocka_unit_test(multiview_counts_its_views_in_every_recording),
        cmocka_unit_test(each_subpass_counts_its_own_attachments),
        cmocka_unit_test(a_secondary_without_framebuffer_takes_a_pipeline_s_fixed_scissor),
        cmocka_unit_test(a_pipeline_bound_between_draws_counts_as_itself),
        cmocka_unit_test(every_recording_under_validation_gets_no_message),
    };
    return cmocka_run_group_tests(tests, open_fixture, close_fixture);
}
