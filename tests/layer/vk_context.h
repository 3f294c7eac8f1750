/*
 * A small Vulkan setup for in-process layer tests: the layer activated
 * explicitly on lavapipe, a device (optionally with VK_KHR_performance_query
 * and its feature), an offscreen render pass with a triangle pipeline, and a
 * compute pipeline whose local size is a specialization constant (8).
 */
#ifndef TALLY_TESTS_LAYER_VK_CONTEXT_H
#define TALLY_TESTS_LAYER_VK_CONTEXT_H

#include <stdbool.h>
#include <vulkan/vulkan.h>

enum { VK_CONTEXT_SIZE = 32, VK_CONTEXT_LOCAL_SIZE = 8 };

typedef struct vk_context {
    VkInstance instance;
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    VkCommandPool pool;
    VkRenderPass render_pass;
    VkFramebuffer framebuffer;
    VkImage image;
    VkImageView view;
    VkDeviceMemory memory;
    VkPipelineLayout layout;
    VkPipeline triangle;
    VkPipeline compute;
    VkShaderModule modules[3];
    VkDebugUtilsMessengerEXT messenger; /* when the options named a callback */
    PFN_vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR enumerate_counters;
    PFN_vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR get_passes;
    PFN_vkAcquireProfilingLockKHR acquire_lock;
    PFN_vkReleaseProfilingLockKHR release_lock;
} vk_context;

typedef struct vk_context_options {
    bool performance_query_extension; /* enable VK_KHR_performance_query */
    bool performance_query_feature;   /* and performanceCounterQueryPools */
    const char *extra_layer;          /* e.g. VK_LAYER_KHRONOS_validation, or NULL */
    bool keep_environment;            /* the caller chose the layers: leave the environment */
    const char *enabled_layer;        /* enabled for this instance by name, or NULL */
    bool dynamic_rendering;           /* enable the dynamicRendering feature */
    bool multiview;                   /* enable the multiview feature */
    bool transform_feedback;          /* enable VK_EXT_transform_feedback and its feature */
    bool calibrated_timestamps;       /* enable VK_EXT_calibrated_timestamps */
    bool timeline_semaphore;          /* enable the timelineSemaphore feature */
    /* Receives the instance's debug messages (VK_EXT_debug_utils), or NULL. */
    PFN_vkDebugUtilsMessengerCallbackEXT messenger;
    void *messenger_data;
} vk_context_options;

/* Sets the environment for the layer (first call only) and creates everything. */
bool vk_context_create(vk_context *c, const vk_context_options *options);
void vk_context_destroy(vk_context *c);

VkCommandBuffer vk_context_begin(vk_context *c);
/* Ends, submits with the pass index (UINT32_MAX: no performance submit info), waits. */
VkResult vk_context_submit(vk_context *c, VkCommandBuffer cb, uint32_t pass_index);
/* Render pass with one 3-vertex triangle draw. */
void vk_context_draw_triangle(vk_context *c, VkCommandBuffer cb);
/* Begins the context's render pass over its whole framebuffer, cleared. */
void vk_context_begin_render_pass(vk_context *c, VkCommandBuffer cb, VkSubpassContents contents);
/* A messenger callback: prints each validation message to stderr and counts
 * it in *(unsigned *)user; the loader's own notes are not counted. */
VKAPI_ATTR VkBool32 VKAPI_CALL vk_context_count_validation(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user);
/* Compute dispatch of groups x, y, z. */
void vk_context_dispatch(vk_context *c, VkCommandBuffer cb, uint32_t x, uint32_t y, uint32_t z);

#endif
