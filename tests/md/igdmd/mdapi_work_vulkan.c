/* Vulkan compute dispatches on tests/layer's vk_context (its compute
 * pipeline's local size is 8); the layer is activated by whoever runs us. */
#include "mdapi_work.h"
#include "vk_context.h"

int64_t mdapi_work_vulkan(const uint32_t *groups, int count)
{
    vk_context c;
    vk_context_options options = {.keep_environment = true};
    if (!vk_context_create(&c, &options)) {
        vk_context_destroy(&c);
        return -1;
    }
    int64_t invocations = 0;
    for (int i = 0; i < count; i++) {
        VkCommandBuffer cb = vk_context_begin(&c);
        vk_context_dispatch(&c, cb, groups[i], 1, 1);
        if (vk_context_submit(&c, cb, UINT32_MAX) != VK_SUCCESS) {
            invocations = -1;
            break;
        }
        invocations += (int64_t)groups[i] * VK_CONTEXT_LOCAL_SIZE;
    }
    vk_context_destroy(&c);
    return invocations;
}
