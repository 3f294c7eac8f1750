/*
 * A Vulkan program that knows nothing of tally: it draws every topology,
 * indexed draws, a multi-draw, indirect draws (one of parameters the GPU
 * writes), a draw in a secondary command buffer and three dispatches offscreen on whatever device
 * comes first, measures each with the driver's own pipeline-statistics query, and prints one JSON
 * line per command in submission order:
 *   {"api":"vkCmdDraw","label":"topologies/line_strip","indexed":0,
 *    "ia_vertices":22,"ia_primitives":20,"vs_invocations":22,"cs_invocations":0,
 *    "index_size":0,"records":1}
 * "records" is how many draws the command made: an indirect command of
 * several records is measured by one query. "index_size" is the bytes per
 * index of an indexed draw's index type, 0 for other commands.
 * Every line also carries the other pipeline statistics (gs_invocations,
 * gs_primitives, clipper_invocations, clipper_primitives, fs_invocations,
 * tcs_patches, tes_invocations) and "span_ns": the GPU time of its whole
 * submission, from the program's own timestamps at the start and the end of
 * the primary command buffer. With VK_WORKLOAD_COMMAND_TIMES set, each
 * per-command line also has "command_ns": the GPU time between the
 * program's own timestamps just before and just after the command (inside
 * its query).
 * Tests run it under the layer and compare these lines with tally's report.
 *
 * Usage: vk_workload SHADER_DIR [MODE]
 *   per-command     (the default) one query and one line per command, as above
 *   per-submission  one query around each submission's commands (inside the
 *                   secondary for the secondary's), one line each ("api" is
 *                   "submission", "records" its commands' draws and dispatches)
 *   none            no statistics query at all: the same lines without
 *                   statistics (what a program that measures nothing does)
 * In the last two the first submission's draws go into two render pass
 * instances, so that per-render-pass and per-command-buffer measurement differ.
 *   simultaneous    a secondary of simultaneous use executed twice by a primary
 *                   of simultaneous use, which is submitted twice in one
 *                   vkQueueSubmit: four draws of 8 vertices; then a primary of
 *                   simultaneous use with one draw of 8 vertices, submitted
 *                   twice in one batch and once in the next: seven draws, one line
 * Every line says its "submission" (0, 1, 2).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        VkResult check_result = (call);                                                            \
        if (check_result != VK_SUCCESS) {                                                          \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, check_result);    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum { SIZE = 64, MAX_QUERIES = 64 };
/* Byte offset of the 16-bit copy of the indices in the index buffer. */
enum { SHORT_INDICES = 1024 };

/* All eleven, so results come in bit order (see print_results). */
static const VkQueryPipelineStatisticFlags STATISTICS = (1u << 11) - 1;
enum { STATISTIC_COUNT = 11, SUBMISSIONS = 3 };

static const char *const TOPOLOGY_NAMES[] = {
    "point_list",
    "line_list",
    "line_strip",
    "triangle_list",
    "triangle_strip",
    "triangle_fan",
    "line_list_with_adjacency",
    "line_strip_with_adjacency",
    "triangle_list_with_adjacency",
    "triangle_strip_with_adjacency",
    "patch_list",
};
enum { TOPOLOGY_COUNT = 11, PATCH_CONTROL_POINTS = 3 };

typedef enum mode { PER_COMMAND, PER_SUBMISSION, NO_QUERIES, SIMULTANEOUS } mode;

typedef struct app {
    mode mode;
    uint32_t open_query; /* the submission's line, outside PER_COMMAND */
    VkInstance instance;
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
    VkCommandPool pool;
    VkRenderPass render_pass;
    VkFramebuffer framebuffer;
    VkImage image;
    VkImageView view;
    VkDeviceMemory image_memory;
    VkBuffer buffer; /* indices, then compute output */
    VkDeviceMemory buffer_memory;
    VkBuffer indirect; /* indirect parameters, see write_indirect_parameters */
    VkDeviceMemory indirect_memory;
    VkPipelineLayout graphics_layout;
    VkPipelineLayout compute_layout;
    VkDescriptorSetLayout set_layout;
    VkDescriptorPool descriptor_pool;
    VkDescriptorSet set;
    VkPipeline topology_pipelines[TOPOLOGY_COUNT];
    VkPipeline compute_pipeline;
    VkShaderModule vert, frag, comp, tesc, tese;
    VkQueryPool queries;
    VkQueryPool timestamps; /* two per submission: its start and end */
    /* With VK_WORKLOAD_COMMAND_TIMES set, in PER_COMMAND mode: two per
     * measured command, just inside its pipeline-statistics query. */
    VkQueryPool command_times;
    float timestamp_period;
    uint32_t submission; /* of the command buffer being recorded */
    uint32_t query_submission[MAX_QUERIES];
    PFN_vkCmdBeginDebugUtilsLabelEXT begin_label;
    PFN_vkCmdEndDebugUtilsLabelEXT end_label;
    PFN_vkCmdDrawMultiEXT draw_multi;
    PFN_vkSetDebugUtilsObjectNameEXT name_object;
    /* The debug names the program gives its pipelines, and the ones bound
     * when the next command is measured. */
    char topology_pipeline_names[TOPOLOGY_COUNT][48];
    const char *bound_graphics, *bound_compute;
    /* What each query measured, to print. */
    uint32_t query_count;
    const char *query_api[MAX_QUERIES];
    char query_label[MAX_QUERIES][96];
    bool query_indexed[MAX_QUERIES];
    const char *query_pipeline[MAX_QUERIES];
    uint32_t query_index_size[MAX_QUERIES]; /* bytes per index, 0 if not indexed */
    uint32_t query_records[MAX_QUERIES];
} app;

static VkShaderModule load_shader(app *a, const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s.spv", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    static uint32_t words[65536];
    size_t bytes = fread(words, 1, sizeof(words), f);
    fclose(f);
    VkShaderModuleCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = bytes,
        .pCode = words,
    };
    VkShaderModule module;
    CHECK(vkCreateShaderModule(a->device, &info, NULL, &module));
    return module;
}

static uint32_t memory_type(app *a, uint32_t bits, VkMemoryPropertyFlags flags)
{
    VkPhysicalDeviceMemoryProperties properties;
    vkGetPhysicalDeviceMemoryProperties(a->physical, &properties);
    for (uint32_t i = 0; i < properties.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (properties.memoryTypes[i].propertyFlags & flags) == flags)
            return i;
    fprintf(stderr, "no memory type\n");
    exit(1);
}

static void create_device(app *a)
{
    const char *instance_extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    VkApplicationInfo app_info = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "vk_workload",
        .apiVersion = VK_API_VERSION_1_3,
    };
    VkInstanceCreateInfo instance_info = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &app_info,
        .enabledExtensionCount = 1,
        .ppEnabledExtensionNames = instance_extensions,
    };
    CHECK(vkCreateInstance(&instance_info, NULL, &a->instance));
    uint32_t count = 1;
    VkResult result = vkEnumeratePhysicalDevices(a->instance, &count, &a->physical);
    if ((result != VK_SUCCESS && result != VK_INCOMPLETE) || count == 0) {
        fprintf(stderr, "no physical device\n");
        exit(1);
    }
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = 0,
        .queueCount = 1,
        .pQueuePriorities = &priority,
    };
    VkPhysicalDeviceMultiDrawFeaturesEXT multi_draw = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MULTI_DRAW_FEATURES_EXT,
        .multiDraw = VK_TRUE,
    };
    VkPhysicalDeviceVulkan12Features features12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .pNext = &multi_draw,
        .drawIndirectCount = VK_TRUE,
    };
    VkPhysicalDeviceVulkan13Features features13 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
        .pNext = &features12,
        .synchronization2 = VK_TRUE,
    };
    VkPhysicalDeviceFeatures2 features = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
        .pNext = &features13,
        .features = {.geometryShader = VK_TRUE,
                     .tessellationShader = VK_TRUE,
                     .multiDrawIndirect = VK_TRUE,
                     .pipelineStatisticsQuery = VK_TRUE},
    };
    const char *device_extensions[] = {VK_EXT_MULTI_DRAW_EXTENSION_NAME};
    VkDeviceCreateInfo device_info = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &features,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &queue_info,
        .enabledExtensionCount = 1,
        .ppEnabledExtensionNames = device_extensions,
    };
    CHECK(vkCreateDevice(a->physical, &device_info, NULL, &a->device));
    vkGetDeviceQueue(a->device, 0, 0, &a->queue);
    a->begin_label = (PFN_vkCmdBeginDebugUtilsLabelEXT)vkGetDeviceProcAddr(
        a->device, "vkCmdBeginDebugUtilsLabelEXT");
    a->end_label = (PFN_vkCmdEndDebugUtilsLabelEXT)vkGetDeviceProcAddr(
        a->device, "vkCmdEndDebugUtilsLabelEXT");
    a->draw_multi = (PFN_vkCmdDrawMultiEXT)vkGetDeviceProcAddr(a->device, "vkCmdDrawMultiEXT");
    a->name_object = (PFN_vkSetDebugUtilsObjectNameEXT)vkGetDeviceProcAddr(
        a->device, "vkSetDebugUtilsObjectNameEXT");
    if (!a->begin_label || !a->end_label || !a->draw_multi || !a->name_object) {
        fprintf(stderr, "missing entry points\n");
        exit(1);
    }
    VkCommandPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = 0,
    };
    CHECK(vkCreateCommandPool(a->device, &pool_info, NULL, &a->pool));
}

static void create_target(app *a)
{
    VkImageCreateInfo image_info = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
        .imageType = VK_IMAGE_TYPE_2D,
        .format = VK_FORMAT_R8G8B8A8_UNORM,
        .extent = {SIZE, SIZE, 1},
        .mipLevels = 1,
        .arrayLayers = 1,
        .samples = VK_SAMPLE_COUNT_1_BIT,
        .tiling = VK_IMAGE_TILING_OPTIMAL,
        .usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
    };
    CHECK(vkCreateImage(a->device, &image_info, NULL, &a->image));
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(a->device, a->image, &req);
    VkMemoryAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = memory_type(a, req.memoryTypeBits, 0),
    };
    CHECK(vkAllocateMemory(a->device, &alloc, NULL, &a->image_memory));
    CHECK(vkBindImageMemory(a->device, a->image, a->image_memory, 0));
    VkImageViewCreateInfo view_info = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
        .image = a->image,
        .viewType = VK_IMAGE_VIEW_TYPE_2D,
        .format = VK_FORMAT_R8G8B8A8_UNORM,
        .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1},
    };
    CHECK(vkCreateImageView(a->device, &view_info, NULL, &a->view));
    VkAttachmentDescription attachment = {
        .format = VK_FORMAT_R8G8B8A8_UNORM,
        .samples = VK_SAMPLE_COUNT_1_BIT,
        .loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
        .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
        .stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
        .stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
        .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
        .finalLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
    };
    VkAttachmentReference reference = {0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkSubpassDescription subpass = {
        .pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
        .colorAttachmentCount = 1,
        .pColorAttachments = &reference,
    };
    VkRenderPassCreateInfo pass_info = {
        .sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
        .attachmentCount = 1,
        .pAttachments = &attachment,
        .subpassCount = 1,
        .pSubpasses = &subpass,
    };
    CHECK(vkCreateRenderPass(a->device, &pass_info, NULL, &a->render_pass));
    VkFramebufferCreateInfo fb_info = {
        .sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO,
        .renderPass = a->render_pass,
        .attachmentCount = 1,
        .pAttachments = &a->view,
        .width = SIZE,
        .height = SIZE,
        .layers = 1,
    };
    CHECK(vkCreateFramebuffer(a->device, &fb_info, NULL, &a->framebuffer));
}

/* A buffer in host-visible, coherent memory. */
static void create_host_buffer(app *a, VkDeviceSize size, VkBufferUsageFlags usage,
                               VkBuffer *buffer, VkDeviceMemory *memory)
{
    VkBufferCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = usage,
    };
    CHECK(vkCreateBuffer(a->device, &info, NULL, buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(a->device, *buffer, &req);
    VkMemoryAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex =
            memory_type(a, req.memoryTypeBits,
                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT),
    };
    CHECK(vkAllocateMemory(a->device, &alloc, NULL, memory));
    CHECK(vkBindBufferMemory(a->device, *buffer, *memory, 0));
}

static void create_buffer(app *a)
{
    create_host_buffer(a, 65536,
                       VK_BUFFER_USAGE_INDEX_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                       &a->buffer, &a->buffer_memory);
    uint32_t *indices;
    CHECK(vkMapMemory(a->device, a->buffer_memory, 0, 4096, 0, (void **)&indices));
    /* Indices repeat, so a post-transform cache would reuse vertices. */
    static const uint32_t pattern[] = {0, 1, 2, 2, 1, 3, 3, 4, 0, 5, 6, 7};
    memcpy(indices, pattern, sizeof(pattern));
    uint16_t *short_indices = (uint16_t *)(indices + SHORT_INDICES / sizeof(uint32_t));
    for (size_t i = 0; i < sizeof(pattern) / sizeof(pattern[0]); i++)
        short_indices[i] = (uint16_t)pattern[i];
    vkUnmapMemory(a->device, a->buffer_memory);
}

/* Byte offsets in the indirect buffer. */
enum {
    INDIRECT_DRAWS = 0, /* two VkDrawIndirectCommand, 32 bytes apart */
    INDIRECT_STRIDE = 32,
    INDIRECT_INDEXED = 64,   /* a VkDrawIndexedIndirectCommand */
    INDIRECT_COUNT = 96,     /* 1: of the two draws, a count draw takes one */
    INDIRECT_DISPATCH = 128, /* a VkDispatchIndirectCommand */
    INDIRECT_GPU = 192,      /* a VkDrawIndirectCommand the command buffer rewrites */
};
static const VkDrawIndirectCommand GPU_WRITTEN_DRAW = {9, 2, 0, 0};

static void write_indirect_parameters(app *a)
{
    create_host_buffer(a, 4096,
                       VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                       &a->indirect, &a->indirect_memory);
    uint8_t *at;
    CHECK(vkMapMemory(a->device, a->indirect_memory, 0, VK_WHOLE_SIZE, 0, (void **)&at));
    memset(at, 0, 4096);
    const VkDrawIndirectCommand draws[2] = {{12, 2, 0, 0}, {6, 1, 3, 0}};
    memcpy(at + INDIRECT_DRAWS, &draws[0], sizeof(draws[0]));
    memcpy(at + INDIRECT_DRAWS + INDIRECT_STRIDE, &draws[1], sizeof(draws[1]));
    const VkDrawIndexedIndirectCommand indexed = {12, 3, 0, 0, 0};
    memcpy(at + INDIRECT_INDEXED, &indexed, sizeof(indexed));
    const uint32_t count = 1;
    memcpy(at + INDIRECT_COUNT, &count, sizeof(count));
    const VkDispatchIndirectCommand dispatch = {2, 3, 1};
    memcpy(at + INDIRECT_DISPATCH, &dispatch, sizeof(dispatch));
    /* What the host wrote is not what the draw reads. */
    const VkDrawIndirectCommand stale = {3, 1, 0, 0};
    memcpy(at + INDIRECT_GPU, &stale, sizeof(stale));
    vkUnmapMemory(a->device, a->indirect_memory);
}

/* Named after they are made, as engines name theirs for debuggers. */
static void name_pipelines(app *a)
{
    for (uint32_t t = 0; t < TOPOLOGY_COUNT; t++) {
        snprintf(a->topology_pipeline_names[t], sizeof a->topology_pipeline_names[t], "pipeline %s",
                 TOPOLOGY_NAMES[t]);
        VkDebugUtilsObjectNameInfoEXT name = {
            .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
            .objectType = VK_OBJECT_TYPE_PIPELINE,
            .objectHandle = (uint64_t)a->topology_pipelines[t],
            .pObjectName = a->topology_pipeline_names[t],
        };
        CHECK(a->name_object(a->device, &name));
    }
    VkDebugUtilsObjectNameInfoEXT name = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
        .objectType = VK_OBJECT_TYPE_PIPELINE,
        .objectHandle = (uint64_t)a->compute_pipeline,
        .pObjectName = "fill compute",
    };
    CHECK(a->name_object(a->device, &name));
}

static void bind_topology(app *a, VkCommandBuffer cb, uint32_t topology)
{
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, a->topology_pipelines[topology]);
    a->bound_graphics = a->topology_pipeline_names[topology];
}

static void bind_compute(app *a, VkCommandBuffer cb)
{
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, a->compute_pipeline);
    a->bound_compute = "fill compute";
}

static void create_pipelines(app *a, const char *shader_dir)
{
    a->vert = load_shader(a, shader_dir, "draw.vert");
    a->frag = load_shader(a, shader_dir, "draw.frag");
    a->comp = load_shader(a, shader_dir, "fill.comp");
    a->tesc = load_shader(a, shader_dir, "patch.tesc");
    a->tese = load_shader(a, shader_dir, "patch.tese");
    VkPipelineLayoutCreateInfo empty_layout = {.sType =
                                                   VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    CHECK(vkCreatePipelineLayout(a->device, &empty_layout, NULL, &a->graphics_layout));
    VkPipelineShaderStageCreateInfo stages[4] = {
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_VERTEX_BIT,
         a->vert, "main", NULL},
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_FRAGMENT_BIT,
         a->frag, "main", NULL},
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
         VK_SHADER_STAGE_TESSELLATION_CONTROL_BIT, a->tesc, "main", NULL},
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
         VK_SHADER_STAGE_TESSELLATION_EVALUATION_BIT, a->tese, "main", NULL},
    };
    VkPipelineTessellationStateCreateInfo tessellation = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_TESSELLATION_STATE_CREATE_INFO,
        .patchControlPoints = PATCH_CONTROL_POINTS,
    };
    VkPipelineVertexInputStateCreateInfo vertex_input = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    VkViewport viewport = {0, 0, SIZE, SIZE, 0, 1};
    VkRect2D scissor = {{0, 0}, {SIZE, SIZE}};
    VkPipelineViewportStateCreateInfo viewport_state = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO,
        .viewportCount = 1,
        .pViewports = &viewport,
        .scissorCount = 1,
        .pScissors = &scissor,
    };
    VkPipelineRasterizationStateCreateInfo raster = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO,
        .polygonMode = VK_POLYGON_MODE_FILL,
        .cullMode = VK_CULL_MODE_NONE,
        .lineWidth = 1.0f,
    };
    VkPipelineMultisampleStateCreateInfo multisample = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO,
        .rasterizationSamples = VK_SAMPLE_COUNT_1_BIT,
    };
    VkPipelineColorBlendAttachmentState blend_attachment = {.colorWriteMask = 0xf};
    VkPipelineColorBlendStateCreateInfo blend = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO,
        .attachmentCount = 1,
        .pAttachments = &blend_attachment,
    };
    for (uint32_t t = 0; t < TOPOLOGY_COUNT; t++) {
        VkPipelineInputAssemblyStateCreateInfo assembly = {
            .sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO,
            .topology = (VkPrimitiveTopology)t,
        };
        bool patches = t == VK_PRIMITIVE_TOPOLOGY_PATCH_LIST;
        VkGraphicsPipelineCreateInfo info = {
            .sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
            .stageCount = patches ? 4 : 2,
            .pStages = stages,
            .pTessellationState = patches ? &tessellation : NULL,
            .pVertexInputState = &vertex_input,
            .pInputAssemblyState = &assembly,
            .pViewportState = &viewport_state,
            .pRasterizationState = &raster,
            .pMultisampleState = &multisample,
            .pColorBlendState = &blend,
            .layout = a->graphics_layout,
            .renderPass = a->render_pass,
        };
        CHECK(vkCreateGraphicsPipelines(a->device, VK_NULL_HANDLE, 1, &info, NULL,
                                        &a->topology_pipelines[t]));
    }
    VkDescriptorSetLayoutBinding binding = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                            VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo set_info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = 1,
        .pBindings = &binding,
    };
    CHECK(vkCreateDescriptorSetLayout(a->device, &set_info, NULL, &a->set_layout));
    VkPipelineLayoutCreateInfo layout_info = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &a->set_layout,
    };
    CHECK(vkCreatePipelineLayout(a->device, &layout_info, NULL, &a->compute_layout));
    uint32_t local_size_x = 8;
    VkSpecializationMapEntry entry = {0, 0, sizeof(uint32_t)};
    VkSpecializationInfo specialization = {1, &entry, sizeof(local_size_x), &local_size_x};
    VkComputePipelineCreateInfo compute_info = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT,
        .stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
                  VK_SHADER_STAGE_COMPUTE_BIT, a->comp, "main", &specialization},
        .layout = a->compute_layout,
    };
    CHECK(vkCreateComputePipelines(a->device, VK_NULL_HANDLE, 1, &compute_info, NULL,
                                   &a->compute_pipeline));
    name_pipelines(a);
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = 1,
        .poolSizeCount = 1,
        .pPoolSizes = &size,
    };
    CHECK(vkCreateDescriptorPool(a->device, &pool_info, NULL, &a->descriptor_pool));
    VkDescriptorSetAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = a->descriptor_pool,
        .descriptorSetCount = 1,
        .pSetLayouts = &a->set_layout,
    };
    CHECK(vkAllocateDescriptorSets(a->device, &alloc, &a->set));
    VkDescriptorBufferInfo buffer_info = {a->buffer, 4096, 4096 * 4};
    VkWriteDescriptorSet write = {
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstSet = a->set,
        .descriptorCount = 1,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = &buffer_info,
    };
    vkUpdateDescriptorSets(a->device, 1, &write, 0, NULL);
    VkQueryPoolCreateInfo query_info = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_PIPELINE_STATISTICS,
        .queryCount = MAX_QUERIES,
        .pipelineStatistics = STATISTICS,
    };
    if (a->mode != NO_QUERIES)
        CHECK(vkCreateQueryPool(a->device, &query_info, NULL, &a->queries));
    VkQueryPoolCreateInfo timestamp_info = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = 2 * SUBMISSIONS,
    };
    CHECK(vkCreateQueryPool(a->device, &timestamp_info, NULL, &a->timestamps));
    if (a->mode == PER_COMMAND && getenv("VK_WORKLOAD_COMMAND_TIMES")) {
        timestamp_info.queryCount = 2 * MAX_QUERIES;
        CHECK(vkCreateQueryPool(a->device, &timestamp_info, NULL, &a->command_times));
    }
    VkPhysicalDeviceProperties properties;
    vkGetPhysicalDeviceProperties(a->physical, &properties);
    a->timestamp_period = properties.limits.timestampPeriod;
}

/* The start of a primary's submission: its first timestamp. */
static void span_begin(app *a, VkCommandBuffer cb, uint32_t submission)
{
    a->submission = submission;
    vkCmdResetQueryPool(cb, a->timestamps, 2 * submission, 2);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, a->timestamps, 2 * submission);
}

static void span_end(app *a, VkCommandBuffer cb, uint32_t submission)
{
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, a->timestamps,
                        2 * submission + 1);
}

static void label_begin(app *a, VkCommandBuffer cb, const char *name)
{
    VkDebugUtilsLabelEXT label = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
                                  .pLabelName = name};
    a->begin_label(cb, &label);
}

/* A submission's line, and its query in PER_SUBMISSION mode: around all of
 * its commands (outside PER_COMMAND mode). */
static void submission_begin(app *a, VkCommandBuffer cb)
{
    if (a->mode == PER_COMMAND)
        return;
    uint32_t q = a->open_query = a->query_count++;
    a->query_api[q] = "submission";
    a->query_label[q][0] = '\0';
    a->query_indexed[q] = false;
    a->query_index_size[q] = 0;
    a->query_records[q] = 0;
    a->query_submission[q] = a->submission;
    if (a->mode == PER_SUBMISSION)
        vkCmdBeginQuery(cb, a->queries, q, 0);
}

static void submission_end(app *a, VkCommandBuffer cb)
{
    if (a->mode == PER_SUBMISSION)
        vkCmdEndQuery(cb, a->queries, a->open_query);
}

/* Starts measuring the next command; returns its query index (its
 * submission's outside PER_COMMAND mode). */
static uint32_t measure_begin(app *a, VkCommandBuffer cb, const char *api, const char *label,
                              bool indexed)
{
    if (a->mode != PER_COMMAND) {
        a->query_records[a->open_query]++;
        return a->open_query;
    }
    uint32_t q = a->query_count++;
    a->query_api[q] = api;
    snprintf(a->query_label[q], sizeof(a->query_label[q]), "%s", label);
    a->query_indexed[q] = indexed;
    a->query_pipeline[q] = strstr(api, "Dispatch") ? a->bound_compute : a->bound_graphics;
    a->query_index_size[q] = indexed ? 4 : 0;
    a->query_records[q] = 1;
    a->query_submission[q] = a->submission;
    vkCmdBeginQuery(cb, a->queries, q, 0);
    if (a->command_times)
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, a->command_times, 2 * q);
    return q;
}

static void measure_end(app *a, VkCommandBuffer cb, uint32_t q)
{
    if (a->command_times)
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, a->command_times, 2 * q + 1);
    if (a->mode == PER_COMMAND)
        vkCmdEndQuery(cb, a->queries, q);
}

/* The command makes `records` draws. */
static void measure_records(app *a, uint32_t q, uint32_t records)
{
    a->query_records[q] += records - 1;
}

static VkCommandBuffer allocate(app *a, VkCommandBufferLevel level)
{
    VkCommandBufferAllocateInfo info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = a->pool,
        .level = level,
        .commandBufferCount = 1,
    };
    VkCommandBuffer cb;
    CHECK(vkAllocateCommandBuffers(a->device, &info, &cb));
    return cb;
}

static void begin_pass(app *a, VkCommandBuffer cb, VkSubpassContents contents)
{
    VkClearValue clear = {{{0, 0, 0, 1}}};
    VkRenderPassBeginInfo info = {
        .sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
        .renderPass = a->render_pass,
        .framebuffer = a->framebuffer,
        .renderArea = {{0, 0}, {SIZE, SIZE}},
        .clearValueCount = 1,
        .pClearValues = &clear,
    };
    vkCmdBeginRenderPass(cb, &info, contents);
}

/* Indirect draws of every kind, triangle lists, inside the render pass. */
static void record_indirect_draws(app *a, VkCommandBuffer cb)
{
    uint32_t q = measure_begin(a, cb, "vkCmdDrawIndirect", "", false);
    measure_records(a, q, 2);
    vkCmdDrawIndirect(cb, a->indirect, INDIRECT_DRAWS, 2, INDIRECT_STRIDE);
    measure_end(a, cb, q);
    q = measure_begin(a, cb, "vkCmdDrawIndexedIndirect", "", true);
    vkCmdDrawIndexedIndirect(cb, a->indirect, INDIRECT_INDEXED, 1, 0);
    measure_end(a, cb, q);
    q = measure_begin(a, cb, "vkCmdDrawIndirectCount", "", false);
    vkCmdDrawIndirectCount(cb, a->indirect, INDIRECT_DRAWS, a->indirect, INDIRECT_COUNT, 2,
                           INDIRECT_STRIDE);
    measure_end(a, cb, q);
    q = measure_begin(a, cb, "vkCmdDrawIndirect", "", false);
    vkCmdDrawIndirect(cb, a->indirect, INDIRECT_GPU, 1, 0);
    measure_end(a, cb, q);
}

/* Every topology, non-indexed and (for lists and strips) indexed, a
 * multi-draw, and indirect draws. */
static VkCommandBuffer record_topologies(app *a)
{
    VkCommandBuffer cb = allocate(a, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(cb, &begin));
    span_begin(a, cb, 0);
    if (a->queries)
        vkCmdResetQueryPool(cb, a->queries, 0, MAX_QUERIES);
    if (a->command_times)
        vkCmdResetQueryPool(cb, a->command_times, 0, 2 * MAX_QUERIES);
    submission_begin(a, cb);
    vkCmdUpdateBuffer(cb, a->indirect, INDIRECT_GPU, sizeof(GPU_WRITTEN_DRAW), &GPU_WRITTEN_DRAW);
    VkMemoryBarrier written = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                               .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_INDIRECT_COMMAND_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT, 0,
                         1, &written, 0, NULL, 0, NULL);
    begin_pass(a, cb, VK_SUBPASS_CONTENTS_INLINE);
    label_begin(a, cb, "topologies");
    for (uint32_t t = 0; t < TOPOLOGY_COUNT; t++) {
        char label[96];
        snprintf(label, sizeof(label), "topologies/%s", TOPOLOGY_NAMES[t]);
        label_begin(a, cb, TOPOLOGY_NAMES[t]);
        bind_topology(a, cb, t);
        uint32_t q = measure_begin(a, cb, "vkCmdDraw", label, false);
        /* 12 vertices make whole primitives in every topology: the spec lets
         * vertices of an incomplete primitive count or not, and lavapipe and
         * tally differ there. */
        vkCmdDraw(cb, 12, 2, 1, 0);
        measure_end(a, cb, q);
        a->end_label(cb);
    }
    a->end_label(cb);
    if (a->mode != PER_COMMAND) { /* a second render pass instance */
        vkCmdEndRenderPass(cb);
        begin_pass(a, cb, VK_SUBPASS_CONTENTS_INLINE);
    }
    vkCmdBindIndexBuffer(cb, a->buffer, 0, VK_INDEX_TYPE_UINT32);
    for (uint32_t t = 0; t < TOPOLOGY_COUNT; t++) {
        bind_topology(a, cb, t);
        uint32_t q = measure_begin(a, cb, "vkCmdDrawIndexed", "", true);
        vkCmdDrawIndexed(cb, 12, 3, 0, 0, 0);
        measure_end(a, cb, q);
    }
    bind_topology(a, cb, VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST);
    /* A multi-draw is one query but one record per draw: measured alone, each. */
    VkMultiDrawInfoEXT draws[2] = {{0, 6}, {3, 9}};
    for (uint32_t i = 0; i < 2; i++) {
        uint32_t q = measure_begin(a, cb, "vkCmdDrawMultiEXT", "", false);
        a->draw_multi(cb, 1, &draws[i], 1, 0, sizeof(draws[0]));
        measure_end(a, cb, q);
    }
    /* 16-bit indices read half the bytes. */
    vkCmdBindIndexBuffer(cb, a->buffer, SHORT_INDICES, VK_INDEX_TYPE_UINT16);
    uint32_t q = measure_begin(a, cb, "vkCmdDrawIndexed", "", true);
    if (a->mode == PER_COMMAND)
        a->query_index_size[q] = 2;
    vkCmdDrawIndexed(cb, 12, 3, 0, 0, 0);
    measure_end(a, cb, q);
    vkCmdBindIndexBuffer(cb, a->buffer, 0, VK_INDEX_TYPE_UINT32);
    record_indirect_draws(a, cb);
    vkCmdEndRenderPass(cb);
    submission_end(a, cb);
    span_end(a, cb, 0);
    CHECK(vkEndCommandBuffer(cb));
    return cb;
}

/* A secondary begun to continue the render pass's subpass, with `flags` more. */
static VkCommandBuffer begin_secondary(app *a, VkCommandBufferUsageFlags flags)
{
    VkCommandBuffer secondary = allocate(a, VK_COMMAND_BUFFER_LEVEL_SECONDARY);
    VkCommandBufferInheritanceInfo inheritance = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
        .renderPass = a->render_pass,
        .framebuffer = a->framebuffer,
    };
    VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT | flags,
        .pInheritanceInfo = &inheritance,
    };
    CHECK(vkBeginCommandBuffer(secondary, &begin));
    return secondary;
}

/* A primary that runs a secondary's draw inside its render pass. */
static VkCommandBuffer record_with_secondary(app *a, VkCommandBuffer *secondary_out)
{
    VkCommandBuffer secondary = begin_secondary(a, 0);
    a->submission = 1;
    submission_begin(a, secondary);
    bind_topology(a, secondary, VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP);
    uint32_t q = measure_begin(a, secondary, "vkCmdDraw", "secondary", false);
    label_begin(a, secondary, "secondary");
    vkCmdDraw(secondary, 8, 1, 0, 0);
    a->end_label(secondary);
    measure_end(a, secondary, q);
    /* A secondary's indirect parameters are read back with its primary's submission. */
    q = measure_begin(a, secondary, "vkCmdDrawIndirect", "secondary", false);
    label_begin(a, secondary, "secondary");
    vkCmdDrawIndirect(secondary, a->indirect, INDIRECT_DRAWS + INDIRECT_STRIDE, 1, 0);
    a->end_label(secondary);
    measure_end(a, secondary, q);
    submission_end(a, secondary);
    CHECK(vkEndCommandBuffer(secondary));

    VkCommandBuffer cb = allocate(a, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(cb, &begin));
    span_begin(a, cb, 1);
    begin_pass(a, cb, VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS);
    vkCmdExecuteCommands(cb, 1, &secondary);
    vkCmdEndRenderPass(cb);
    span_end(a, cb, 1);
    CHECK(vkEndCommandBuffer(cb));
    *secondary_out = secondary;
    return cb;
}

static VkCommandBuffer record_compute(app *a)
{
    VkCommandBuffer cb = allocate(a, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(cb, &begin));
    span_begin(a, cb, 2);
    submission_begin(a, cb);
    bind_compute(a, cb);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, a->compute_layout, 0, 1, &a->set, 0,
                            NULL);
    label_begin(a, cb, "compute");
    uint32_t q = measure_begin(a, cb, "vkCmdDispatch", "compute", false);
    vkCmdDispatch(cb, 4, 3, 2);
    measure_end(a, cb, q);
    q = measure_begin(a, cb, "vkCmdDispatchBase", "compute", false);
    vkCmdDispatchBase(cb, 1, 0, 0, 5, 1, 1);
    measure_end(a, cb, q);
    q = measure_begin(a, cb, "vkCmdDispatchIndirect", "compute", false);
    vkCmdDispatchIndirect(cb, a->indirect, INDIRECT_DISPATCH);
    measure_end(a, cb, q);
    a->end_label(cb);
    submission_end(a, cb);
    span_end(a, cb, 2);
    CHECK(vkEndCommandBuffer(cb));
    return cb;
}

static void submit_and_wait(app *a, VkCommandBuffer cb, bool use_submit2)
{
    if (use_submit2) {
        VkCommandBufferSubmitInfo cb_info = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
            .commandBuffer = cb,
        };
        VkSubmitInfo2 submit = {
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
            .commandBufferInfoCount = 1,
            .pCommandBufferInfos = &cb_info,
        };
        CHECK(vkQueueSubmit2(a->queue, 1, &submit, VK_NULL_HANDLE));
    } else {
        VkSubmitInfo submit = {
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .commandBufferCount = 1,
            .pCommandBuffers = &cb,
        };
        CHECK(vkQueueSubmit(a->queue, 1, &submit, VK_NULL_HANDLE));
    }
    CHECK(vkQueueWaitIdle(a->queue));
}

static void print_results(app *a)
{
    /* Statistics come in bit order: IA vertices and primitives, VS, GS invocations and
     * primitives, clipping invocations and primitives, FS, TCS patches, TES, CS. */
    uint64_t values[MAX_QUERIES][STATISTIC_COUNT];
    if (a->queries)
        CHECK(vkGetQueryPoolResults(a->device, a->queries, 0, a->query_count, sizeof(values),
                                    values, sizeof(values[0]), VK_QUERY_RESULT_64_BIT));
    uint64_t ticks[2 * SUBMISSIONS];
    CHECK(vkGetQueryPoolResults(a->device, a->timestamps, 0, 2 * SUBMISSIONS, sizeof(ticks), ticks,
                                sizeof(ticks[0]), VK_QUERY_RESULT_64_BIT));
    uint64_t command_ticks[2 * MAX_QUERIES] = {0};
    if (a->command_times)
        CHECK(vkGetQueryPoolResults(a->device, a->command_times, 0, 2 * a->query_count,
                                    sizeof(command_ticks), command_ticks, sizeof(command_ticks[0]),
                                    VK_QUERY_RESULT_64_BIT));
    for (uint32_t q = 0; q < a->query_count; q++) {
        const uint64_t *v = values[q];
        uint32_t s = a->query_submission[q];
        double span_ns = (double)(ticks[2 * s + 1] - ticks[2 * s]) * a->timestamp_period;
        if (!a->queries) {
            printf("{\"api\":\"%s\",\"label\":\"\",\"indexed\":0,\"records\":%u,"
                   "\"submission\":%u,\"span_ns\":%.0f}\n",
                   a->query_api[q], a->query_records[q], s, span_ns);
            continue;
        }
        printf("{\"api\":\"%s\",\"label\":\"%s\",\"indexed\":%d,\"ia_vertices\":%llu,"
               "\"ia_primitives\":%llu,\"vs_invocations\":%llu,\"cs_invocations\":%llu,"
               "\"index_size\":%u,\"records\":%u,\"gs_invocations\":%llu,"
               "\"gs_primitives\":%llu,\"clipper_invocations\":%llu,"
               "\"clipper_primitives\":%llu,\"fs_invocations\":%llu,\"tcs_patches\":%llu,"
               "\"tes_invocations\":%llu,\"submission\":%u,\"span_ns\":%.0f,"
               "\"pipeline\":\"%s\",\"tid\":%d,\"target\":%d",
               a->query_api[q], a->query_label[q], a->query_indexed[q] ? 1 : 0,
               (unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)v[2],
               (unsigned long long)v[10], a->query_index_size[q], a->query_records[q],
               (unsigned long long)v[3], (unsigned long long)v[4], (unsigned long long)v[5],
               (unsigned long long)v[6], (unsigned long long)v[7], (unsigned long long)v[8],
               (unsigned long long)v[9], s, span_ns,
               a->query_pipeline[q] ? a->query_pipeline[q] : "", (int)gettid(), SIZE);
        if (a->command_times)
            printf(",\"command_ns\":%.0f",
                   (double)(command_ticks[2 * q + 1] - command_ticks[2 * q]) * a->timestamp_period);
        printf("}\n");
    }
}

static void destroy(app *a)
{
    if (a->queries)
        vkDestroyQueryPool(a->device, a->queries, NULL);
    vkDestroyQueryPool(a->device, a->timestamps, NULL);
    if (a->command_times)
        vkDestroyQueryPool(a->device, a->command_times, NULL);
    for (uint32_t t = 0; t < TOPOLOGY_COUNT; t++)
        vkDestroyPipeline(a->device, a->topology_pipelines[t], NULL);
    vkDestroyPipeline(a->device, a->compute_pipeline, NULL);
    vkDestroyDescriptorPool(a->device, a->descriptor_pool, NULL);
    vkDestroyPipelineLayout(a->device, a->compute_layout, NULL);
    vkDestroyPipelineLayout(a->device, a->graphics_layout, NULL);
    vkDestroyDescriptorSetLayout(a->device, a->set_layout, NULL);
    vkDestroyShaderModule(a->device, a->vert, NULL);
    vkDestroyShaderModule(a->device, a->frag, NULL);
    vkDestroyShaderModule(a->device, a->comp, NULL);
    vkDestroyShaderModule(a->device, a->tesc, NULL);
    vkDestroyShaderModule(a->device, a->tese, NULL);
    vkDestroyFramebuffer(a->device, a->framebuffer, NULL);
    vkDestroyRenderPass(a->device, a->render_pass, NULL);
    vkDestroyImageView(a->device, a->view, NULL);
    vkDestroyImage(a->device, a->image, NULL);
    vkFreeMemory(a->device, a->image_memory, NULL);
    vkDestroyBuffer(a->device, a->buffer, NULL);
    vkDestroyBuffer(a->device, a->indirect, NULL);
    vkFreeMemory(a->device, a->indirect_memory, NULL);
    vkFreeMemory(a->device, a->buffer_memory, NULL);
    vkDestroyCommandPool(a->device, a->pool, NULL);
    vkDestroyDevice(a->device, NULL);
    vkDestroyInstance(a->instance, NULL);
}

/* A secondary of simultaneous use executed twice by a primary of
 * simultaneous use, submitted twice in one vkQueueSubmit: valid Vulkan, and
 * the same recording runs four times before anything could reset a query
 * it holds. Then a primary of simultaneous use that draws, three times in
 * one submission. */
static void run_simultaneous(app *a)
{
    VkCommandBuffer secondary = begin_secondary(a, VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT);
    bind_topology(a, secondary, VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP);
    vkCmdDraw(secondary, 8, 1, 0, 0);
    CHECK(vkEndCommandBuffer(secondary));
    VkCommandBuffer cb = allocate(a, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
    CHECK(vkBeginCommandBuffer(cb, &begin));
    begin_pass(a, cb, VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS);
    VkCommandBuffer twice[2] = {secondary, secondary};
    vkCmdExecuteCommands(cb, 2, twice);
    vkCmdEndRenderPass(cb);
    CHECK(vkEndCommandBuffer(cb));
    VkCommandBuffer both[2] = {cb, cb};
    VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 2, .pCommandBuffers = both};
    CHECK(vkQueueSubmit(a->queue, 1, &submit, VK_NULL_HANDLE));
    CHECK(vkQueueWaitIdle(a->queue));
    /* A primary of simultaneous use drawing itself, twice in one batch and
     * once more in the next batch of the same submission. */
    VkCommandBuffer direct = allocate(a, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    CHECK(vkBeginCommandBuffer(direct, &begin));
    begin_pass(a, direct, VK_SUBPASS_CONTENTS_INLINE);
    bind_topology(a, direct, VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP);
    vkCmdDraw(direct, 8, 1, 0, 0);
    vkCmdEndRenderPass(direct);
    CHECK(vkEndCommandBuffer(direct));
    VkCommandBuffer direct_twice[2] = {direct, direct};
    VkSubmitInfo repeats[2] = {
        {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
         .commandBufferCount = 2,
         .pCommandBuffers = direct_twice},
        {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
         .commandBufferCount = 1,
         .pCommandBuffers = &direct},
    };
    CHECK(vkQueueSubmit(a->queue, 2, repeats, VK_NULL_HANDLE));
    CHECK(vkQueueWaitIdle(a->queue));
    printf("{\"api\":\"simultaneous\",\"records\":7,\"submission\":0}\n");
    VkCommandBuffer all[] = {cb, secondary, direct};
    vkFreeCommandBuffers(a->device, a->pool, 3, all);
}

int main(int argc, char **argv)
{
    static const char *const modes[] = {"per-command", "per-submission", "none", "simultaneous"};
    app a = {0};
    if (argc > 2) {
        a.mode = SIMULTANEOUS + 1;
        for (int m = 0; m <= SIMULTANEOUS; m++)
            if (strcmp(argv[2], modes[m]) == 0)
                a.mode = (mode)m;
    }
    if (argc < 2 || a.mode > SIMULTANEOUS) {
        fprintf(stderr, "usage: %s SHADER_DIR [per-command|per-submission|none|simultaneous]\n",
                argv[0]);
        return 2;
    }
    create_device(&a);
    create_target(&a);
    create_buffer(&a);
    write_indirect_parameters(&a);
    create_pipelines(&a, argv[1]);
    if (a.mode == SIMULTANEOUS) {
        run_simultaneous(&a);
        destroy(&a);
        return 0;
    }
    VkCommandBuffer topologies = record_topologies(&a);
    submit_and_wait(&a, topologies, false);
    VkCommandBuffer secondary;
    VkCommandBuffer with_secondary = record_with_secondary(&a, &secondary);
    submit_and_wait(&a, with_secondary, true);
    VkCommandBuffer compute = record_compute(&a);
    submit_and_wait(&a, compute, false);
    print_results(&a);
    VkCommandBuffer all[] = {topologies, with_secondary, compute, secondary};
    vkFreeCommandBuffers(a.device, a.pool, 4, all);
    destroy(&a);
    return 0;
}
