/*
 * The driver backend's device side: what a physical device can measure
 * (pipelineStatisticsQuery gives the eleven statistics; a queue family with
 * timestampValidBits gives GPU time), the pipelineStatisticsQuery feature
 * the layer's queries need, and the per-device measuring state.
 */
#include "driver_measure.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static uint32_t family_count(layer_instance *instance, VkPhysicalDevice physical,
                             VkQueueFamilyProperties **out)
{
    uint32_t n = 0;
    instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(physical, &n, NULL);
    *out = calloc(n ? n : 1, sizeof(**out));
    if (!*out)
        return 0;
    instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(physical, &n, *out);
    return n;
}

uint32_t layer_measurable(layer_instance *instance, VkPhysicalDevice physical)
{
    VkPhysicalDeviceFeatures features;
    instance->dispatch.GetPhysicalDeviceFeatures(physical, &features);
    uint32_t measurable = features.pipelineStatisticsQuery ? TALLY_MEASURE_STATISTICS : 0;
    VkQueueFamilyProperties *families;
    uint32_t n = family_count(instance, physical, &families);
    for (uint32_t i = 0; i < n; i++)
        if (families[i].timestampValidBits &&
            (families[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)))
            measurable |= TALLY_MEASURE_TIME;
    free(families);
    return measurable;
}

static bool statistics_enabled(const VkDeviceCreateInfo *info,
                               const VkPhysicalDeviceFeatures2 **features2)
{
    *features2 = NULL;
    for (const VkBaseInStructure *s = info->pNext; s; s = s->pNext)
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2)
            *features2 = (const VkPhysicalDeviceFeatures2 *)s;
    if (*features2)
        return (*features2)->features.pipelineStatisticsQuery;
    return info->pEnabledFeatures && info->pEnabledFeatures->pipelineStatisticsQuery;
}

const VkDeviceCreateInfo *layer_measure_device_info(const VkDeviceCreateInfo *info,
                                                    VkDeviceCreateInfo *copy, void **storage)
{
    *storage = NULL;
    const VkPhysicalDeviceFeatures2 *features2;
    if (statistics_enabled(info, &features2))
        return info;
    *copy = *info;
    if (features2) {
        const void *chain = layer_chain_enabling(
            info->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
            offsetof(VkPhysicalDeviceFeatures2, features.pipelineStatisticsQuery), storage);
        if (!chain)
            return info;
        copy->pNext = chain;
        return copy;
    }
    VkPhysicalDeviceFeatures *features = malloc(sizeof(*features));
    if (!features)
        return info;
    if (info->pEnabledFeatures)
        *features = *info->pEnabledFeatures;
    else
        memset(features, 0, sizeof(*features));
    features->pipelineStatisticsQuery = VK_TRUE;
    copy->pEnabledFeatures = features;
    *storage = features;
    return copy;
}

/* The statistics a family's command buffers may query: compute alone
 * without graphics; none on a transfer-only family. */
static VkQueryPipelineStatisticFlags family_statistics(const VkQueueFamilyProperties *family,
                                                       uint32_t measures)
{
    VkQueryPipelineStatisticFlags wanted = measures & TALLY_MEASURE_STATISTICS;
    if (family->queueFlags & VK_QUEUE_GRAPHICS_BIT)
        return wanted;
    if (family->queueFlags & VK_QUEUE_COMPUTE_BIT)
        return wanted & VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT;
    return 0;
}

void layer_measuring_open(layer_device *device)
{
    tally_device_info info;
    tally_device_get_info(device->engine, &info);
    if (!device->engine || !info.measures)
        return;
    layer_measuring *m = calloc(1, sizeof(*m));
    if (!m)
        return;
    m->measures = info.measures;
    m->granularity = info.granularity;
    VkPhysicalDeviceProperties properties;
    layer_instance *instance = device->instance;
    instance->dispatch.GetPhysicalDeviceProperties(device->physical_device, &properties);
    m->timestamp_period = properties.limits.timestampPeriod;
    VkQueueFamilyProperties *families;
    m->family_count = family_count(instance, device->physical_device, &families);
    m->families = calloc(m->family_count ? m->family_count : 1, sizeof(*m->families));
    if (!m->families) {
        free(families);
        free(m);
        return;
    }
    for (uint32_t i = 0; i < m->family_count; i++) {
        m->families[i].statistics = family_statistics(&families[i], m->measures);
        m->families[i].compute = families[i].queueFlags & VK_QUEUE_COMPUTE_BIT;
        m->families[i].timestamp_valid_bits =
            (m->measures & TALLY_MEASURE_TIME) ? families[i].timestampValidBits : 0;
    }
    free(families);
    object_map_init(&m->pool_families);
    pthread_mutex_init(&m->lock, NULL);
    device->measuring = m;
}

void layer_measuring_close(layer_device *device)
{
    layer_measuring *m = device->measuring;
    if (!m)
        return;
    layer_measure_readbacks_destroy_all(device);
    layer_copy_close(device);
    object_map_destroy(&m->pool_families);
    pthread_mutex_destroy(&m->lock);
    free(m->families);
    free(m);
    device->measuring = NULL;
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkCreateCommandPool(VkDevice handle,
                                                        const VkCommandPoolCreateInfo *pCreateInfo,
                                                        const VkAllocationCallbacks *pAllocator,
                                                        VkCommandPool *pCommandPool)
{
    layer_device *device = layer_device_of(handle);
    VkResult result =
        device->dispatch.CreateCommandPool(handle, pCreateInfo, pAllocator, pCommandPool);
    if (result == VK_SUCCESS && device->measuring)
        object_map_put(&device->measuring->pool_families, (uint64_t)*pCommandPool,
                       (void *)(uintptr_t)(pCreateInfo->queueFamilyIndex + 1));
    return result;
}
