/*
 * VK_KHR_performance_query at the physical-device level, on drivers without
 * it: the extension in the device extension list (once), its feature and
 * property structures, the counters of the engine's catalogue per queue
 * family, pass counts, and the extension taken out of device creation on the
 * way down. Where the driver has the extension itself, everything here
 * passes through and the driver's counters are what the application gets.
 */
#include "layer_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAYER_NAME "VK_LAYER_TALLY_counters"

static const VkExtensionProperties performance_query_extension = {
    VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME, VK_KHR_PERFORMANCE_QUERY_SPEC_VERSION};

bool layer_performance_query_native(layer_instance *instance, VkPhysicalDevice physical)
{
    if (!instance->dispatch.GetPhysicalDeviceFeatures2)
        return false;
    VkPhysicalDevicePerformanceQueryFeaturesKHR features = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 features2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                           .pNext = &features};
    instance->dispatch.GetPhysicalDeviceFeatures2(physical, &features2);
    return features.performanceCounterQueryPools == VK_TRUE;
}

static const tally_catalogue *catalogue(void)
{
    const tally_catalogue *cat = NULL;
    return tally_backend_catalogue(NULL, &cat) == TALLY_OK ? cat : NULL;
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkEnumerateDeviceExtensionProperties(
    VkPhysicalDevice physicalDevice, const char *pLayerName, uint32_t *pPropertyCount,
    VkExtensionProperties *pProperties)
{
    if (pLayerName && strcmp(pLayerName, LAYER_NAME) == 0) {
        if (!pProperties) {
            *pPropertyCount = 1;
            return VK_SUCCESS;
        }
        if (*pPropertyCount < 1)
            return VK_INCOMPLETE;
        pProperties[0] = performance_query_extension;
        *pPropertyCount = 1;
        return VK_SUCCESS;
    }
    layer_instance *instance = layer_instance_of(physicalDevice);
    PFN_vkEnumerateDeviceExtensionProperties next =
        instance->dispatch.EnumerateDeviceExtensionProperties;
    if (pLayerName || layer_performance_query_native(instance, physicalDevice))
        return next(physicalDevice, pLayerName, pPropertyCount, pProperties);
    uint32_t below = 0;
    VkResult result = next(physicalDevice, NULL, &below, NULL);
    if (result != VK_SUCCESS)
        return result;
    VkExtensionProperties *all = calloc(below + 1, sizeof(*all));
    if (!all)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    result = next(physicalDevice, NULL, &below, all);
    if (result < 0) {
        free(all);
        return result;
    }
    /* Appended once, even if something below already lists it. */
    bool listed = false;
    for (uint32_t i = 0; i < below; i++)
        listed |= strcmp(all[i].extensionName, VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME) == 0;
    uint32_t total = listed ? below : below + 1;
    if (!listed)
        all[below] = performance_query_extension;
    if (!pProperties) {
        *pPropertyCount = total;
        free(all);
        return VK_SUCCESS;
    }
    uint32_t n = *pPropertyCount < total ? *pPropertyCount : total;
    memcpy(pProperties, all, n * sizeof(*all));
    *pPropertyCount = n;
    free(all);
    return n < total ? VK_INCOMPLETE : VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL hook_vkGetPhysicalDeviceFeatures2(VkPhysicalDevice physicalDevice,
                                                             VkPhysicalDeviceFeatures2 *pFeatures)
{
    layer_instance *instance = layer_instance_of(physicalDevice);
    bool native = layer_performance_query_native(instance, physicalDevice);
    instance->dispatch.GetPhysicalDeviceFeatures2(physicalDevice, pFeatures);
    if (native)
        return;
    for (VkBaseOutStructure *s = (VkBaseOutStructure *)pFeatures->pNext; s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR) {
            VkPhysicalDevicePerformanceQueryFeaturesKHR *f = (void *)s;
            f->performanceCounterQueryPools = VK_TRUE;
            f->performanceCounterMultipleQueryPools = VK_TRUE;
        }
    }
}

VKAPI_ATTR void VKAPI_CALL hook_vkGetPhysicalDeviceProperties2(
    VkPhysicalDevice physicalDevice, VkPhysicalDeviceProperties2 *pProperties)
{
    layer_instance *instance = layer_instance_of(physicalDevice);
    bool native = layer_performance_query_native(instance, physicalDevice);
    instance->dispatch.GetPhysicalDeviceProperties2(physicalDevice, pProperties);
    if (native)
        return;
    for (VkBaseOutStructure *s = (VkBaseOutStructure *)pProperties->pNext; s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_PROPERTIES_KHR)
            ((VkPhysicalDevicePerformanceQueryPropertiesKHR *)s)->allowCommandBufferQueryCopies =
                VK_FALSE;
    }
}

/* Counters are offered on queue families that run draws or dispatches. */
static bool family_has_counters(layer_instance *instance, VkPhysicalDevice physical,
                                uint32_t family)
{
    uint32_t count = 0;
    instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(physical, &count, NULL);
    if (family >= count)
        return false;
    VkQueueFamilyProperties *families = calloc(count, sizeof(*families));
    if (!families)
        return false;
    instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(physical, &count, families);
    bool ok = families[family].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT);
    free(families);
    return ok;
}

static void copy_string(char *dst, const char *src, size_t size)
{
    snprintf(dst, size, "%s", src ? src : "");
}

/* Only the fields after sType and pNext are written: the application's chain stays its own. */
static void describe_counter(const tally_catalogue *cat, uint32_t index,
                             VkPerformanceCounterKHR *counter,
                             VkPerformanceCounterDescriptionKHR *description)
{
    const tally_counter_info *info = tally_catalogue_counter(cat, index);
    if (counter) {
        counter->unit = (VkPerformanceCounterUnitKHR)info->unit;
        counter->scope = VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_KHR;
        counter->storage = (VkPerformanceCounterStorageKHR)info->storage;
        memcpy(counter->uuid, info->uuid, VK_UUID_SIZE);
    }
    if (description) {
        description->flags = 0;
        copy_string(description->name, tally_counter_name_for(info, TALLY_API_VULKAN),
                    sizeof(description->name));
        copy_string(description->category, tally_catalogue_group(cat, info->group)->name,
                    sizeof(description->category));
        copy_string(description->description, info->description, sizeof(description->description));
    }
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR(
    VkPhysicalDevice physicalDevice, uint32_t queueFamilyIndex, uint32_t *pCounterCount,
    VkPerformanceCounterKHR *pCounters, VkPerformanceCounterDescriptionKHR *pCounterDescriptions)
{
    layer_instance *instance = layer_instance_of(physicalDevice);
    if (layer_performance_query_native(instance, physicalDevice))
        return instance->dispatch.EnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR(
            physicalDevice, queueFamilyIndex, pCounterCount, pCounters, pCounterDescriptions);
    const tally_catalogue *cat = catalogue();
    uint32_t total = cat && family_has_counters(instance, physicalDevice, queueFamilyIndex)
                         ? tally_catalogue_counter_count(cat)
                         : 0;
    if (!pCounters && !pCounterDescriptions) {
        *pCounterCount = total;
        return VK_SUCCESS;
    }
    uint32_t n = *pCounterCount < total ? *pCounterCount : total;
    for (uint32_t i = 0; i < n; i++)
        describe_counter(cat, i, pCounters ? &pCounters[i] : NULL,
                         pCounterDescriptions ? &pCounterDescriptions[i] : NULL);
    *pCounterCount = n;
    return n < total ? VK_INCOMPLETE : VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL hook_vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR(
    VkPhysicalDevice physicalDevice,
    const VkQueryPoolPerformanceCreateInfoKHR *pPerformanceQueryCreateInfo, uint32_t *pNumPasses)
{
    layer_instance *instance = layer_instance_of(physicalDevice);
    if (layer_performance_query_native(instance, physicalDevice)) {
        instance->dispatch.GetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR(
            physicalDevice, pPerformanceQueryCreateInfo, pNumPasses);
        return;
    }
    const tally_catalogue *cat = catalogue();
    uint32_t passes = 1;
    if (!cat || tally_plan_passes(cat, pPerformanceQueryCreateInfo->pCounterIndices,
                                  pPerformanceQueryCreateInfo->counterIndexCount, NULL,
                                  &passes) != TALLY_OK)
        passes = 1;
    *pNumPasses = passes ? passes : 1;
}

static size_t chain_struct_size(VkStructureType type)
{
    if (type == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO)
        return sizeof(VkLayerDeviceCreateInfo);
    return layer_struct_size(type);
}

/* A shallow copy of each structure of the chain but the extension's feature
 * structure; structures the registry does not know (the loader's own) keep
 * the rest of the chain as it was. */
static void *copy_chain(const void *pNext, void **storage)
{
    size_t total = 0;
    for (const VkBaseInStructure *s = pNext; s; s = s->pNext) {
        size_t size = chain_struct_size(s->sType);
        if (!size)
            break;
        total += (size + 15) & ~(size_t)15;
    }
    char *block = total ? malloc(total) : NULL;
    *storage = block;
    const void *head = NULL;
    VkBaseOutStructure *tail = NULL;
    const VkBaseInStructure *s = pNext;
    for (; s && block; s = s->pNext) {
        size_t size = chain_struct_size(s->sType);
        if (!size)
            break;
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR)
            continue;
        VkBaseOutStructure *copy = (VkBaseOutStructure *)block;
        memcpy(copy, s, size);
        copy->pNext = NULL;
        block += (size + 15) & ~(size_t)15;
        if (tail)
            tail->pNext = copy;
        else
            head = copy;
        tail = copy;
    }
    if (!*storage)
        return (void *)pNext;
    if (tail)
        tail->pNext = (VkBaseOutStructure *)s;
    else
        head = s;
    return (void *)head;
}

const VkDeviceCreateInfo *layer_strip_performance_query(const VkDeviceCreateInfo *info,
                                                        layer_device_create_copy *copy,
                                                        bool *requested)
{
    memset(copy, 0, sizeof(*copy));
    *requested = false;
    copy->info = *info;
    copy->extension_names = calloc(info->enabledExtensionCount + 1, sizeof(char *));
    if (!copy->extension_names)
        return info;
    uint32_t n = 0;
    for (uint32_t i = 0; i < info->enabledExtensionCount; i++) {
        if (strcmp(info->ppEnabledExtensionNames[i], VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME) == 0)
            *requested = true;
        else
            copy->extension_names[n++] = info->ppEnabledExtensionNames[i];
    }
    copy->info.enabledExtensionCount = n;
    copy->info.ppEnabledExtensionNames = copy->extension_names;
    copy->info.pNext = copy_chain(info->pNext, &copy->chain);
    return &copy->info;
}

void layer_device_create_copy_free(layer_device_create_copy *copy)
{
    free(copy->extension_names);
    free(copy->chain);
}
