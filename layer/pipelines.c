/*
 * Shader modules and pipelines: each pipeline becomes an engine program (the
 * static profile of every stage), and binding it sets the command buffer's
 * stream state.
 */
#include "layer_state.h"
#include <tally/spirv.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

VKAPI_ATTR VkResult VKAPI_CALL
hook_vkCreateShaderModule(VkDevice handle, const VkShaderModuleCreateInfo *pCreateInfo,
                          const VkAllocationCallbacks *pAllocator, VkShaderModule *pShaderModule)
{
    layer_device *device = layer_device_of(handle);
    VkResult result =
        device->dispatch.CreateShaderModule(handle, pCreateInfo, pAllocator, pShaderModule);
    if (result != VK_SUCCESS)
        return result;
    size_t words = pCreateInfo->codeSize / 4;
    layer_shader_module *module = malloc(sizeof(*module) + words * 4);
    if (!module)
        return result; /* pipelines of this module go uncounted by stage */
    module->word_count = words;
    memcpy(module->words, pCreateInfo->pCode, words * 4);
    if (object_map_put(&device->shader_modules, (uint64_t)*pShaderModule, module) != module)
        free(module);
    return result;
}

VKAPI_ATTR void VKAPI_CALL hook_vkDestroyShaderModule(VkDevice handle, VkShaderModule shaderModule,
                                                      const VkAllocationCallbacks *pAllocator)
{
    layer_device *device = layer_device_of(handle);
    if (shaderModule)
        free(object_map_remove(&device->shader_modules, (uint64_t)shaderModule));
    device->dispatch.DestroyShaderModule(handle, shaderModule, pAllocator);
}

static int stage_index(VkShaderStageFlagBits stage)
{
    switch (stage) {
    case VK_SHADER_STAGE_VERTEX_BIT: return TALLY_STAGE_VERTEX;
    case VK_SHADER_STAGE_TESSELLATION_CONTROL_BIT: return TALLY_STAGE_TESS_CONTROL;
    case VK_SHADER_STAGE_TESSELLATION_EVALUATION_BIT: return TALLY_STAGE_TESS_EVAL;
    case VK_SHADER_STAGE_GEOMETRY_BIT: return TALLY_STAGE_GEOMETRY;
    case VK_SHADER_STAGE_FRAGMENT_BIT: return TALLY_STAGE_FRAGMENT;
    case VK_SHADER_STAGE_COMPUTE_BIT: return TALLY_STAGE_COMPUTE;
    default: return -1;
    }
}

/* The engine's SPIR-V reader, with Vulkan's specialization map entries
 * restated in its own terms. */
static bool profile_from_spirv(const uint32_t *words, size_t count,
                               const VkPipelineShaderStageCreateInfo *stage,
                               tally_stage_profile *profile)
{
    const VkSpecializationInfo *info = stage->pSpecializationInfo;
    enum { MAX_ENTRIES = 64 };
    tally_spirv_spec_entry entries[MAX_ENTRIES];
    tally_spirv_specialization spec = {0};
    if (info && info->pMapEntries && info->pData) {
        spec.entry_count = info->mapEntryCount < MAX_ENTRIES ? info->mapEntryCount : MAX_ENTRIES;
        for (uint32_t i = 0; i < spec.entry_count; i++)
            entries[i] =
                (tally_spirv_spec_entry){info->pMapEntries[i].constantID,
                                         info->pMapEntries[i].offset, info->pMapEntries[i].size};
        spec.entries = entries;
        spec.data = info->pData;
        spec.data_size = info->dataSize;
    }
    return tally_spirv_stage_profile(words, count, stage->pName, &spec, profile);
}

/* The stage's SPIR-V: its module's, or a module create info chained to the stage. */
static void stage_profile(layer_device *device, const VkPipelineShaderStageCreateInfo *stage,
                          tally_program_desc *desc)
{
    int index = stage_index(stage->stage);
    if (index < 0)
        return;
    const uint32_t *words = NULL;
    size_t count = 0;
    layer_shader_module *module =
        stage->module ? object_map_get(&device->shader_modules, (uint64_t)stage->module) : NULL;
    if (module) {
        words = module->words;
        count = module->word_count;
    }
    for (const VkBaseInStructure *s = stage->pNext; s && !words; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO) {
            const VkShaderModuleCreateInfo *info = (const VkShaderModuleCreateInfo *)s;
            words = info->pCode;
            count = info->codeSize / 4;
        }
    }
    tally_stage_profile *profile = &desc->stages[index];
    if (!words || !profile_from_spirv(words, count, stage, profile))
        profile->present = true; /* the stage runs; its mix is unknown */
    /* The code and its entry point, stage after stage: the same shaders
     * give the same hash in every run. */
    desc->shader_hash = tally_hash_bytes(words, count * sizeof *words, desc->shader_hash + index);
    if (stage->pName)
        desc->shader_hash = tally_hash_bytes(stage->pName, strlen(stage->pName), desc->shader_hash);
}

/* A pipeline's name until the program names it (VK_EXT_debug_utils): its
 * handle, as the validation layers print it. */
static layer_pipeline *pipeline_record(layer_device *device, VkPipelineBindPoint bind_point,
                                       tally_program_desc *desc, VkPipeline handle)
{
    layer_pipeline *pipeline = calloc(1, sizeof(*pipeline));
    if (!pipeline)
        return NULL;
    char name[48];
    snprintf(name, sizeof name, "VkPipeline 0x%llx", (unsigned long long)(uint64_t)handle);
    desc->name = name;
    pipeline->bind_point = bind_point;
    pipeline->topology = TALLY_TOPOLOGY_TRIANGLE_LIST;
    if (device->engine &&
        tally_program_create(device->engine, desc, &pipeline->program) != TALLY_OK)
        pipeline->program = NULL;
    return pipeline;
}

static void pipeline_store(layer_device *device, VkPipeline handle, layer_pipeline *pipeline)
{
    if (!pipeline)
        return;
    if (object_map_put(&device->pipelines, (uint64_t)handle, pipeline) != pipeline) {
        if (pipeline->program)
            tally_program_release(pipeline->program);
        free(pipeline);
    }
}

static uint32_t vertex_input_bytes(const VkPipelineVertexInputStateCreateInfo *input)
{
    uint32_t bytes = 0;
    for (uint32_t i = 0; input && i < input->vertexAttributeDescriptionCount; i++)
        bytes += layer_format_block_size(input->pVertexAttributeDescriptions[i].format);
    return bytes;
}

static bool has_dynamic_state(const VkPipelineDynamicStateCreateInfo *dynamic, VkDynamicState state)
{
    for (uint32_t i = 0; dynamic && i < dynamic->dynamicStateCount; i++)
        if (dynamic->pDynamicStates[i] == state)
            return true;
    return false;
}

/* The viewport state is ignored (and may be any pointer) when rasterization is off. */
static void record_static_scissor(layer_pipeline *pipeline,
                                  const VkGraphicsPipelineCreateInfo *info)
{
    const VkPipelineDynamicStateCreateInfo *dynamic = info->pDynamicState;
    const VkPipelineRasterizationStateCreateInfo *raster = info->pRasterizationState;
    if (raster && raster->rasterizerDiscardEnable &&
        !has_dynamic_state(dynamic, VK_DYNAMIC_STATE_RASTERIZER_DISCARD_ENABLE))
        return;
    if (has_dynamic_state(dynamic, VK_DYNAMIC_STATE_SCISSOR) ||
        has_dynamic_state(dynamic, VK_DYNAMIC_STATE_SCISSOR_WITH_COUNT))
        return;
    const VkPipelineViewportStateCreateInfo *viewport = info->pViewportState;
    if (!viewport || !viewport->scissorCount || !viewport->pScissors)
        return;
    pipeline->static_scissor = true;
    pipeline->scissor = viewport->pScissors[0].extent;
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkCreateGraphicsPipelines(
    VkDevice handle, VkPipelineCache pipelineCache, uint32_t createInfoCount,
    const VkGraphicsPipelineCreateInfo *pCreateInfos, const VkAllocationCallbacks *pAllocator,
    VkPipeline *pPipelines)
{
    layer_device *device = layer_device_of(handle);
    VkResult result = device->dispatch.CreateGraphicsPipelines(
        handle, pipelineCache, createInfoCount, pCreateInfos, pAllocator, pPipelines);
    /* On an error the pipelines that were made are still valid; the ones
     * that failed are VK_NULL_HANDLE (vkCreate*Pipelines). */
    for (uint32_t i = 0; i < createInfoCount; i++) {
        if (!pPipelines[i])
            continue;
        const VkGraphicsPipelineCreateInfo *info = &pCreateInfos[i];
        tally_program_desc desc = {0};
        for (uint32_t s = 0; s < info->stageCount; s++)
            stage_profile(device, &info->pStages[s], &desc);
        desc.stages[TALLY_STAGE_VERTEX].input_bytes = vertex_input_bytes(info->pVertexInputState);
        layer_pipeline *pipeline =
            pipeline_record(device, VK_PIPELINE_BIND_POINT_GRAPHICS, &desc, pPipelines[i]);
        if (pipeline) {
            if (info->pInputAssemblyState)
                pipeline->topology = (uint8_t)info->pInputAssemblyState->topology;
            if (info->pTessellationState)
                pipeline->patch_control_points =
                    (uint8_t)info->pTessellationState->patchControlPoints;
            pipeline->dynamic_topology =
                has_dynamic_state(info->pDynamicState, VK_DYNAMIC_STATE_PRIMITIVE_TOPOLOGY);
            record_static_scissor(pipeline, info);
        }
        pipeline_store(device, pPipelines[i], pipeline);
    }
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkCreateComputePipelines(
    VkDevice handle, VkPipelineCache pipelineCache, uint32_t createInfoCount,
    const VkComputePipelineCreateInfo *pCreateInfos, const VkAllocationCallbacks *pAllocator,
    VkPipeline *pPipelines)
{
    layer_device *device = layer_device_of(handle);
    VkResult result = device->dispatch.CreateComputePipelines(
        handle, pipelineCache, createInfoCount, pCreateInfos, pAllocator, pPipelines);
    /* On an error the pipelines that were made are still valid; the ones
     * that failed are VK_NULL_HANDLE (vkCreate*Pipelines). */
    for (uint32_t i = 0; i < createInfoCount; i++) {
        if (!pPipelines[i])
            continue;
        tally_program_desc desc = {0};
        stage_profile(device, &pCreateInfos[i].stage, &desc);
        pipeline_store(
            device, pPipelines[i],
            pipeline_record(device, VK_PIPELINE_BIND_POINT_COMPUTE, &desc, pPipelines[i]));
    }
    return result;
}

static void pipeline_free(layer_pipeline *pipeline)
{
    if (pipeline->program)
        tally_program_release(pipeline->program);
    free(pipeline);
}

VKAPI_ATTR void VKAPI_CALL hook_vkDestroyPipeline(VkDevice handle, VkPipeline pipeline,
                                                  const VkAllocationCallbacks *pAllocator)
{
    layer_device *device = layer_device_of(handle);
    layer_pipeline *record =
        pipeline ? object_map_remove(&device->pipelines, (uint64_t)pipeline) : NULL;
    if (record)
        pipeline_free(record);
    device->dispatch.DestroyPipeline(handle, pipeline, pAllocator);
}

void layer_pipeline_name(layer_device *device, uint64_t handle, const char *name)
{
    layer_pipeline *record = object_map_get(&device->pipelines, handle);
    if (record && record->program)
        tally_program_set_label(record->program, name);
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdBindPipeline(VkCommandBuffer commandBuffer,
                                                  VkPipelineBindPoint pipelineBindPoint,
                                                  VkPipeline pipeline)
{
    layer_command_buffer *cb = layer_command_buffer_of(commandBuffer);
    layer_device *device = cb ? cb->device : layer_device_of(commandBuffer);
    device->dispatch.CmdBindPipeline(commandBuffer, pipelineBindPoint, pipeline);
    if (!cb)
        return;
    layer_pipeline *record = object_map_get(&device->pipelines, (uint64_t)pipeline);
    tally_program *program = record ? record->program : NULL;
    if (pipelineBindPoint == VK_PIPELINE_BIND_POINT_GRAPHICS) {
        cb->graphics_program = program;
        layer_command_buffer_ready(cb);
        if (record && !record->dynamic_topology)
            cb->topology = record->topology;
        if (record)
            cb->patch_control_points = record->patch_control_points;
        if (record && record->static_scissor)
            layer_render_state_scissor(cb, record->scissor);
    } else if (pipelineBindPoint == VK_PIPELINE_BIND_POINT_COMPUTE) {
        cb->compute_program = program;
        cb->compute_pipeline = pipeline;
    }
}

VKAPI_ATTR void VKAPI_CALL hook_vkCmdSetPrimitiveTopology(VkCommandBuffer commandBuffer,
                                                          VkPrimitiveTopology primitiveTopology)
{
    layer_command_buffer *cb = layer_command_buffer_of(commandBuffer);
    layer_device *device = cb ? cb->device : layer_device_of(commandBuffer);
    device->dispatch.CmdSetPrimitiveTopology(commandBuffer, primitiveTopology);
    if (cb)
        cb->topology = (uint8_t)primitiveTopology;
}

static void free_pipeline_value(void *value, void *user)
{
    (void)user;
    pipeline_free(value);
}

void layer_pipelines_destroy_all(layer_device *device)
{
    object_map_free_values(&device->shader_modules);
    object_map_for_each(&device->pipelines, free_pipeline_value, NULL);
}
