/* The in-process Vulkan setup of the layer tests (see vk_context.h). */
#include "vk_context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void activate_layer(const char *extra_layer)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/share/vulkan/explicit_layer.d", TALLY_BUILD_DIR);
    setenv("VK_ADD_LAYER_PATH", path, 1);
    /* lavapipe, unless a run on real hardware names its driver (docs/driver.md). */
    const char *driver = getenv("TALLY_TEST_VK_DRIVER_FILES");
    setenv("VK_DRIVER_FILES", driver ? driver : TALLY_LAVAPIPE_ICD, 1);
    unsetenv("DISPLAY");
    char layers[256];
    /* Listed after tally, validation sits below it and checks the layer's own calls. */
    snprintf(layers, sizeof(layers), "VK_LAYER_TALLY_counters%s%s", extra_layer ? ":" : "",
             extra_layer ? extra_layer : "");
    setenv("VK_INSTANCE_LAYERS", layers, 1);
}

static VkShaderModule load(vk_context *c, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.spv", SHADER_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return VK_NULL_HANDLE;
    static uint32_t words[16384];
    size_t bytes = fread(words, 1, sizeof(words), f);
    fclose(f);
    VkShaderModuleCreateInfo info = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, bytes,
                                     words};
    VkShaderModule module = VK_NULL_HANDLE;
    vkCreateShaderModule(c->device, &info, NULL, &module);
    return module;
}

static bool create_device(vk_context *c, const vk_context_options *o)
{
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .apiVersion = VK_API_VERSION_1_3};
    VkDebugUtilsMessengerCreateInfoEXT messenger = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = o->messenger,
        .pUserData = o->messenger_data,
    };
    const char *debug_utils = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkInstanceCreateInfo instance_info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                          .pNext = o->messenger ? &messenger : NULL,
                                          .pApplicationInfo = &app,
                                          .enabledExtensionCount = o->messenger ? 1 : 0,
                                          .ppEnabledExtensionNames = &debug_utils,
                                          .enabledLayerCount = o->enabled_layer ? 1 : 0,
                                          .ppEnabledLayerNames = &o->enabled_layer};
    if (vkCreateInstance(&instance_info, NULL, &c->instance) != VK_SUCCESS)
        return false;
    /* The chained messenger covers instance creation only; this one the rest. */
    PFN_vkCreateDebugUtilsMessengerEXT create_messenger =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(c->instance,
                                                                  "vkCreateDebugUtilsMessengerEXT");
    if (o->messenger && (!create_messenger || create_messenger(c->instance, &messenger, NULL,
                                                               &c->messenger) != VK_SUCCESS))
        return false;
    uint32_t count = 1;
    VkResult r = vkEnumeratePhysicalDevices(c->instance, &count, &c->physical);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || !count)
        return false;
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {
        VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, 0, 1, &priority};
    VkPhysicalDevicePerformanceQueryFeaturesKHR performance = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR,
        .performanceCounterQueryPools = VK_TRUE,
        .performanceCounterMultipleQueryPools = VK_TRUE,
    };
    /* Each feature asked for goes in front of the chain. */
    void *chain = o->performance_query_feature ? &performance : NULL;
    VkPhysicalDeviceDynamicRenderingFeatures dynamic_rendering = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DYNAMIC_RENDERING_FEATURES,
        .pNext = chain,
        .dynamicRendering = VK_TRUE,
    };
    chain = o->dynamic_rendering ? &dynamic_rendering : chain;
    VkPhysicalDeviceMultiviewFeatures multiview = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MULTIVIEW_FEATURES,
        .pNext = chain,
        .multiview = VK_TRUE,
    };
    chain = o->multiview ? &multiview : chain;
    VkPhysicalDeviceTransformFeedbackFeaturesEXT transform_feedback = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TRANSFORM_FEEDBACK_FEATURES_EXT,
        .pNext = chain,
        .transformFeedback = VK_TRUE,
    };
    chain = o->transform_feedback ? &transform_feedback : chain;
    VkPhysicalDeviceTimelineSemaphoreFeatures timeline = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES,
        .pNext = chain,
        .timelineSemaphore = VK_TRUE,
    };
    chain = o->timeline_semaphore ? &timeline : chain;
    VkPhysicalDeviceHostQueryResetFeatures host_reset = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES,
        .pNext = chain,
        .hostQueryReset = VK_TRUE,
    };
    const char *extensions[3];
    uint32_t extension_count = 0;
    if (o->performance_query_extension)
        extensions[extension_count++] = VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME;
    if (o->transform_feedback)
        extensions[extension_count++] = VK_EXT_TRANSFORM_FEEDBACK_EXTENSION_NAME;
    if (o->calibrated_timestamps)
        extensions[extension_count++] = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
    VkDeviceCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &host_reset,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &queue,
        .enabledExtensionCount = extension_count,
        .ppEnabledExtensionNames = extensions,
    };
    if (vkCreateDevice(c->physical, &info, NULL, &c->device) != VK_SUCCESS)
        return false;
    vkGetDeviceQueue(c->device, 0, 0, &c->queue);
    c->enumerate_counters =
        (PFN_vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR)vkGetInstanceProcAddr(
            c->instance, "vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR");
    c->get_passes =
        (PFN_vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR)vkGetInstanceProcAddr(
            c->instance, "vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR");
    c->acquire_lock =
        (PFN_vkAcquireProfilingLockKHR)vkGetDeviceProcAddr(c->device, "vkAcquireProfilingLockKHR");
    c->release_lock =
        (PFN_vkReleaseProfilingLockKHR)vkGetDeviceProcAddr(c->device, "vkReleaseProfilingLockKHR");
    VkCommandPoolCreateInfo pool = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
                                    VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, 0};
    return vkCreateCommandPool(c->device, &pool, NULL, &c->pool) == VK_SUCCESS;
}

static bool create_target(vk_context *c)
{
    VkImageCreateInfo image = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
        .imageType = VK_IMAGE_TYPE_2D,
        .format = VK_FORMAT_R8G8B8A8_UNORM,
        .extent = {VK_CONTEXT_SIZE, VK_CONTEXT_SIZE, 1},
        .mipLevels = 1,
        .arrayLayers = 1,
        .samples = VK_SAMPLE_COUNT_1_BIT,
        .usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
    };
    if (vkCreateImage(c->device, &image, NULL, &c->image) != VK_SUCCESS)
        return false;
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(c->device, c->image, &req);
    uint32_t type = 0;
    while (!(req.memoryTypeBits & (1u << type)))
        type++;
    VkMemoryAllocateInfo alloc = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, type};
    if (vkAllocateMemory(c->device, &alloc, NULL, &c->memory) != VK_SUCCESS ||
        vkBindImageMemory(c->device, c->image, c->memory, 0) != VK_SUCCESS)
        return false;
    VkImageViewCreateInfo view = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
        .image = c->image,
        .viewType = VK_IMAGE_VIEW_TYPE_2D,
        .format = VK_FORMAT_R8G8B8A8_UNORM,
        .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1},
    };
    if (vkCreateImageView(c->device, &view, NULL, &c->view) != VK_SUCCESS)
        return false;
    VkAttachmentDescription attachment = {0,
                                          VK_FORMAT_R8G8B8A8_UNORM,
                                          VK_SAMPLE_COUNT_1_BIT,
                                          VK_ATTACHMENT_LOAD_OP_CLEAR,
                                          VK_ATTACHMENT_STORE_OP_STORE,
                                          VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                                          VK_ATTACHMENT_STORE_OP_DONT_CARE,
                                          VK_IMAGE_LAYOUT_UNDEFINED,
                                          VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkAttachmentReference ref = {0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkSubpassDescription subpass = {.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
                                    .colorAttachmentCount = 1,
                                    .pColorAttachments = &ref};
    VkRenderPassCreateInfo pass = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
                                   .attachmentCount = 1,
                                   .pAttachments = &attachment,
                                   .subpassCount = 1,
                                   .pSubpasses = &subpass};
    if (vkCreateRenderPass(c->device, &pass, NULL, &c->render_pass) != VK_SUCCESS)
        return false;
    VkFramebufferCreateInfo fb = {.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO,
                                  .renderPass = c->render_pass,
                                  .attachmentCount = 1,
                                  .pAttachments = &c->view,
                                  .width = VK_CONTEXT_SIZE,
                                  .height = VK_CONTEXT_SIZE,
                                  .layers = 1};
    return vkCreateFramebuffer(c->device, &fb, NULL, &c->framebuffer) == VK_SUCCESS;
}

static bool create_pipelines(vk_context *c)
{
    c->modules[0] = load(c, "draw.vert");
    c->modules[1] = load(c, "draw.frag");
    c->modules[2] = load(c, "idle.comp");
    if (!c->modules[0] || !c->modules[1] || !c->modules[2])
        return false;
    VkPipelineLayoutCreateInfo layout = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    if (vkCreatePipelineLayout(c->device, &layout, NULL, &c->layout) != VK_SUCCESS)
        return false;
    VkPipelineShaderStageCreateInfo stages[2] = {
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_VERTEX_BIT,
         c->modules[0], "main", NULL},
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_FRAGMENT_BIT,
         c->modules[1], "main", NULL},
    };
    VkPipelineVertexInputStateCreateInfo input = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    VkPipelineInputAssemblyStateCreateInfo assembly = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO,
        .topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST};
    VkViewport viewport = {0, 0, VK_CONTEXT_SIZE, VK_CONTEXT_SIZE, 0, 1};
    VkRect2D scissor = {{0, 0}, {VK_CONTEXT_SIZE, VK_CONTEXT_SIZE}};
    VkPipelineViewportStateCreateInfo viewport_state = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO,
        .viewportCount = 1,
        .pViewports = &viewport,
        .scissorCount = 1,
        .pScissors = &scissor};
    VkPipelineRasterizationStateCreateInfo raster = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO,
        .polygonMode = VK_POLYGON_MODE_FILL,
        .lineWidth = 1.0f};
    VkPipelineMultisampleStateCreateInfo multisample = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO,
        .rasterizationSamples = VK_SAMPLE_COUNT_1_BIT};
    VkPipelineColorBlendAttachmentState blend_attachment = {.colorWriteMask = 0xf};
    VkPipelineColorBlendStateCreateInfo blend = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO,
        .attachmentCount = 1,
        .pAttachments = &blend_attachment};
    VkGraphicsPipelineCreateInfo graphics = {.sType =
                                                 VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
                                             .stageCount = 2,
                                             .pStages = stages,
                                             .pVertexInputState = &input,
                                             .pInputAssemblyState = &assembly,
                                             .pViewportState = &viewport_state,
                                             .pRasterizationState = &raster,
                                             .pMultisampleState = &multisample,
                                             .pColorBlendState = &blend,
                                             .layout = c->layout,
                                             .renderPass = c->render_pass};
    if (vkCreateGraphicsPipelines(c->device, VK_NULL_HANDLE, 1, &graphics, NULL, &c->triangle) !=
        VK_SUCCESS)
        return false;
    uint32_t local_size = VK_CONTEXT_LOCAL_SIZE;
    VkSpecializationMapEntry entry = {0, 0, sizeof(uint32_t)};
    VkSpecializationInfo specialization = {1, &entry, sizeof(local_size), &local_size};
    VkComputePipelineCreateInfo compute = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
                  VK_SHADER_STAGE_COMPUTE_BIT, c->modules[2], "main", &specialization},
        .layout = c->layout,
    };
    return vkCreateComputePipelines(c->device, VK_NULL_HANDLE, 1, &compute, NULL, &c->compute) ==
           VK_SUCCESS;
}

bool vk_context_create(vk_context *c, const vk_context_options *options)
{
    memset(c, 0, sizeof(*c));
    if (!options->keep_environment)
        activate_layer(options->extra_layer);
    return create_device(c, options) && create_target(c) && create_pipelines(c);
}

void vk_context_destroy(vk_context *c)
{
    if (c->device) {
        vkDeviceWaitIdle(c->device);
        vkDestroyPipeline(c->device, c->triangle, NULL);
        vkDestroyPipeline(c->device, c->compute, NULL);
        vkDestroyPipelineLayout(c->device, c->layout, NULL);
        for (int i = 0; i < 3; i++)
            vkDestroyShaderModule(c->device, c->modules[i], NULL);
        vkDestroyFramebuffer(c->device, c->framebuffer, NULL);
        vkDestroyRenderPass(c->device, c->render_pass, NULL);
        vkDestroyImageView(c->device, c->view, NULL);
        vkDestroyImage(c->device, c->image, NULL);
        vkFreeMemory(c->device, c->memory, NULL);
        vkDestroyCommandPool(c->device, c->pool, NULL);
        vkDestroyDevice(c->device, NULL);
    }
    if (c->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger =
            (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
                c->instance, "vkDestroyDebugUtilsMessengerEXT");
        destroy_messenger(c->instance, c->messenger, NULL);
    }
    if (c->instance)
        vkDestroyInstance(c->instance, NULL);
    memset(c, 0, sizeof(*c));
}

VkCommandBuffer vk_context_begin(vk_context *c)
{
    VkCommandBufferAllocateInfo info = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
                                        c->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    VkCommandBuffer cb = VK_NULL_HANDLE;
    vkAllocateCommandBuffers(c->device, &info, &cb);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(cb, &begin);
    return cb;
}

VkResult vk_context_submit(vk_context *c, VkCommandBuffer cb, uint32_t pass_index)
{
    VkPerformanceQuerySubmitInfoKHR pass = {VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR,
                                            NULL, pass_index};
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .pNext = pass_index == UINT32_MAX ? NULL : &pass,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &cb};
    VkResult r = vkQueueSubmit(c->queue, 1, &submit, VK_NULL_HANDLE);
    if (r != VK_SUCCESS)
        return r;
    return vkQueueWaitIdle(c->queue);
}

void vk_context_begin_render_pass(vk_context *c, VkCommandBuffer cb, VkSubpassContents contents)
{
    VkClearValue clear = {{{0, 0, 0, 1}}};
    VkRenderPassBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
                                   .renderPass = c->render_pass,
                                   .framebuffer = c->framebuffer,
                                   .renderArea = {{0, 0}, {VK_CONTEXT_SIZE, VK_CONTEXT_SIZE}},
                                   .clearValueCount = 1,
                                   .pClearValues = &clear};
    vkCmdBeginRenderPass(cb, &begin, contents);
}

VKAPI_ATTR VkBool32 VKAPI_CALL vk_context_count_validation(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)severity;
    /* The loader's notes (which layers the environment added) are not validation. */
    if (!(types & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT))
        return VK_FALSE;
    fprintf(stderr, "validation: %s\n", data->pMessage);
    ++*(unsigned *)user;
    return VK_FALSE;
}

void vk_context_draw_triangle(vk_context *c, VkCommandBuffer cb)
{
    vk_context_begin_render_pass(c, cb, VK_SUBPASS_CONTENTS_INLINE);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, c->triangle);
    vkCmdDraw(cb, 3, 1, 0, 0);
    vkCmdEndRenderPass(cb);
}

void vk_context_dispatch(vk_context *c, VkCommandBuffer cb, uint32_t x, uint32_t y, uint32_t z)
{
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->compute);
    vkCmdDispatch(cb, x, y, z);
}
