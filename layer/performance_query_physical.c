/*
 * VK_KHR_performance_query at the physical-device level, on drivers without
 * it: the extension in the device extension list (once), its feature and
 * property structures, the counters of the engine's catalogue per queue
 * family, pass counts, and the extension taken out of device creation on the
 * way down. Where the driver has the extension itself, everything here
 * passes through and the driver's counters are what the application gets.
 * Where the counter engine cannot open (an unknown TALLY_BACKEND, a bad
 * TALLY_PROFILE), nothing is advertised either: the layer says why once and
 * the application sees its driver as it is.
 *
 * The layer's own questions to the driver are valid on any instance: whether
 * the driver has the extension is read from its extension list (core 1.0),
 * never from vkGetPhysicalDeviceFeatures2, which an instance created for
 * Vulkan 1.0 must not call.
 */
#include "layer_state.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAYER_NAME "VK_LAYER_TALLY_counters"

static const VkExtensionProperties performance_query_extension = {
    VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME, VK_KHR_PERFORMANCE_QUERY_SPEC_VERSION};

/* The device extensions of the layers and driver below; NULL if none can be
 * read (then *count is 0). */
static VkExtensionProperties *extensions_below(layer_instance *instance, VkPhysicalDevice physical,
                                               uint32_t *count)
{
    PFN_vkEnumerateDeviceExtensionProperties next =
        instance->dispatch.EnumerateDeviceExtensionProperties;
    *count = 0;
    if (next(physical, NULL, count, NULL) != VK_SUCCESS)
        return NULL;
    VkExtensionProperties *all = calloc((size_t)*count + 1, sizeof(*all));
    if (!all || next(physical, NULL, count, all) < 0) {
        free(all);
        *count = 0;
        return NULL;
    }
    return all;
}

bool layer_performance_query_native(layer_instance *instance, VkPhysicalDevice physical)
{
    uint32_t count = 0;
    VkExtensionProperties *all = extensions_below(instance, physical, &count);
    bool listed = false;
    for (uint32_t i = 0; i < count; i++)
        listed |= strcmp(all[i].extensionName, VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME) == 0;
    free(all);
    return listed;
}

/* Whether the engine opened, asked once per instance and held until its end. */
static bool engine_opened(layer_instance *instance)
{
    static atomic_flag said_why = ATOMIC_FLAG_INIT;
    pthread_mutex_lock(&instance->engine_lock);
    if (!instance->engine_asked) {
        instance->engine_asked = true;
        if (tally_device_acquire_shared(&instance->engine) != TALLY_OK)
            instance->engine = NULL;
        if (!instance->engine && !atomic_flag_test_and_set(&said_why))
            tally_log(TALLY_LOG_WARN,
                      "Vulkan layer: the counter device did not open (see above); "
                      "VK_KHR_performance_query is not offered and Vulkan calls pass through "
                      "unmeasured");
    }
    bool opened = instance->engine != NULL;
    pthread_mutex_unlock(&instance->engine_lock);
    return opened;
}

bool layer_performance_query_provided(layer_instance *instance, VkPhysicalDevice physical)
{
    return !layer_performance_query_native(instance, physical) && engine_opened(instance);
}

void layer_performance_query_instance_end(layer_instance *instance)
{
    if (instance->engine)
        tally_device_release_shared(instance->engine);
    instance->engine = NULL;
}

/* The counters query pools count (query_pools.c): the engine device's. */
static const tally_catalogue *catalogue(layer_instance *instance)
{
    return engine_opened(instance) ? tally_device_catalogue(instance->engine) : NULL;
}

static VkResult list_extensions(const VkExtensionProperties *all, uint32_t total,
                                uint32_t *pPropertyCount, VkExtensionProperties *pProperties)
{
    if (!pProperties) {
        *pPropertyCount = total;
        return VK_SUCCESS;
    }
    uint32_t n = *pPropertyCount < total ? *pPropertyCount : total;
    if (n)
        memcpy(pProperties, all, n * sizeof(*all));
    *pPropertyCount = n;
    return n < total ? VK_INCOMPLETE : VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkEnumerateDeviceExtensionProperties(
    VkPhysicalDevice physicalDevice, const char *pLayerName, uint32_t *pPropertyCount,
    VkExtensionProperties *pProperties)
{
    layer_instance *instance = layer_instance_of(physicalDevice);
    if (pLayerName && strcmp(pLayerName, LAYER_NAME) == 0)
        return list_extensions(&performance_query_extension, engine_opened(instance) ? 1 : 0,
                               pPropertyCount, pProperties);
    PFN_vkEnumerateDeviceExtensionProperties next =
        instance->dispatch.EnumerateDeviceExtensionProperties;
    if (pLayerName || !layer_performance_query_provided(instance, physicalDevice))
        return next(physicalDevice, pLayerName, pPropertyCount, pProperties);
    uint32_t below = 0;
    VkExtensionProperties *all = extensions_below(instance, physicalDevice, &below);
    if (!all)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    all[below] = performance_query_extension; /* not listed below: the layer provides it */
    VkResult result = list_extensions(all, below + 1, pPropertyCount, pProperties);
    free(all);
    return result;
}

static void add_features(VkPhysicalDeviceFeatures2 *features)
{
    for (VkBaseOutStructure *s = (VkBaseOutStructure *)features->pNext; s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR) {
            VkPhysicalDevicePerformanceQueryFeaturesKHR *f = (void *)s;
            f->performanceCounterQueryPools = VK_TRUE;
            f->performanceCounterMultipleQueryPools = VK_TRUE;
        }
    }
}

static void add_properties(VkPhysicalDeviceProperties2 *properties)
{
    for (VkBaseOutStructure *s = (VkBaseOutStructure *)properties->pNext; s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_PROPERTIES_KHR)
            ((VkPhysicalDevicePerformanceQueryPropertiesKHR *)s)->allowCommandBufferQueryCopies =
                VK_FALSE;
    }
}

/* Each name calls down the same name: the application chose the one its
 * instance may call. */
VKAPI_ATTR void VKAPI_CALL hook_vkGetPhysicalDeviceFeatures2(VkPhysicalDevice physicalDevice,
                                                             VkPhysicalDeviceFeatures2 *pFeatures)
{
    layer_instance *instance = layer_instance_of(physicalDevice);
    instance->dispatch.GetPhysicalDeviceFeatures2(physicalDevice, pFeatures);
    if (layer_performance_query_provided(instance, physicalDevice))
        add_features(pFeatures);
}

VKAPI_ATTR void VKAPI_CALL hook_vkGetPhysicalDeviceFeatures2KHR(
    VkPhysicalDevice physicalDevice, VkPhysicalDeviceFeatures2 *pFeatures)
{
    layer_instance *instance = layer_instance_of(physicalDevice);
    PFN_vkGetPhysicalDeviceFeatures2KHR next = instance->features2_khr
                                                   ? instance->features2_khr
                                                   : instance->dispatch.GetPhysicalDeviceFeatures2;
    next(physicalDevice, pFeatures);
    if (layer_performance_query_provided(instance, physicalDevice))
        add_features(pFeatures);
}

VKAPI_ATTR void VKAPI_CALL hook_vkGetPhysicalDeviceProperties2(
    VkPhysicalDevice physicalDevice, VkPhysicalDeviceProperties2 *pProperties)
{
    layer_instance *instance = layer_instance_of(physicalDevice);
    instance->dispatch.GetPhysicalDeviceProperties2(physicalDevice, pProperties);
    if (layer_performance_query_provided(instance, physicalDevice))
        add_properties(pProperties);
}

VKAPI_ATTR void VKAPI_CALL hook_vkGetPhysicalDeviceProperties2KHR(
    VkPhysicalDevice physicalDevice, VkPhysicalDeviceProperties2 *pProperties)
{
    layer_instance *instance = layer_instance_of(physicalDevice);
    PFN_vkGetPhysicalDeviceProperties2KHR next =
        instance->properties2_khr ? instance->properties2_khr
                                  : instance->dispatch.GetPhysicalDeviceProperties2;
    next(physicalDevice, pProperties);
    if (layer_performance_query_provided(instance, physicalDevice))
        add_properties(pProperties);
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
    const tally_catalogue *cat = catalogue(instance);
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
    const tally_catalogue *cat = catalogue(instance);
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
