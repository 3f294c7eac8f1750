/*
 * A Vulkan program that knows nothing of tally: one vkCmdDispatch of the
 * given groups, of a shader whose local size (all three dimensions) is given
 * through specialization constants, on tests/layer's vk_context (the layer
 * is activated by whoever runs it).
 *
 * Usage: vk_dispatch_shape SHADER.spv GROUPS_X GROUPS_Y GROUPS_Z LOCAL_X LOCAL_Y LOCAL_Z
 */
#include <stdio.h>
#include <stdlib.h>

#include "vk_context.h"

static VkShaderModule load_module(VkDevice device, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return VK_NULL_HANDLE;
    static uint32_t words[16384];
    size_t bytes = fread(words, 1, sizeof(words), f);
    fclose(f);
    VkShaderModuleCreateInfo info = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, bytes,
                                     words};
    VkShaderModule module = VK_NULL_HANDLE;
    vkCreateShaderModule(device, &info, NULL, &module);
    return module;
}

static VkPipeline shaped_pipeline(vk_context *c, VkShaderModule module, const uint32_t local[3])
{
    VkSpecializationMapEntry entries[3] = {{0, 0, sizeof(uint32_t)},
                                           {1, sizeof(uint32_t), sizeof(uint32_t)},
                                           {2, 2 * sizeof(uint32_t), sizeof(uint32_t)}};
    VkSpecializationInfo specialization = {3, entries, 3 * sizeof(uint32_t), local};
    VkComputePipelineCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
                  VK_SHADER_STAGE_COMPUTE_BIT, module, "main", &specialization},
        .layout = c->layout,
    };
    VkPipeline pipeline = VK_NULL_HANDLE;
    vkCreateComputePipelines(c->device, VK_NULL_HANDLE, 1, &info, NULL, &pipeline);
    return pipeline;
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: %s SHADER.spv GX GY GZ LX LY LZ\n", argv[0]);
        return 2;
    }
    uint32_t groups[3], local[3];
    for (int i = 0; i < 3; i++) {
        groups[i] = (uint32_t)strtoul(argv[2 + i], NULL, 10);
        local[i] = (uint32_t)strtoul(argv[5 + i], NULL, 10);
    }
    vk_context c;
    vk_context_options options = {.keep_environment = true};
    if (!vk_context_create(&c, &options)) {
        fprintf(stderr, "vk_dispatch_shape: no Vulkan device\n");
        vk_context_destroy(&c);
        return 1;
    }
    VkShaderModule module = load_module(c.device, argv[1]);
    VkPipeline pipeline = module ? shaped_pipeline(&c, module, local) : VK_NULL_HANDLE;
    VkResult result = VK_ERROR_INITIALIZATION_FAILED;
    if (pipeline) {
        VkCommandBuffer cb = vk_context_begin(&c);
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        vkCmdDispatch(cb, groups[0], groups[1], groups[2]);
        vkEndCommandBuffer(cb);
        result = vk_context_submit(&c, cb, UINT32_MAX);
    }
    vkDestroyPipeline(c.device, pipeline, NULL);
    vkDestroyShaderModule(c.device, module, NULL);
    vk_context_destroy(&c);
    if (result != VK_SUCCESS) {
        fprintf(stderr, "vk_dispatch_shape: the dispatch failed (%d)\n", result);
        return 1;
    }
    return 0;
}
