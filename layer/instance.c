/* The layer's front: loader negotiation, instance creation and GetInstanceProcAddr. */
#include "layer_state.h"

#include <stdlib.h>
#include <string.h>

#define LAYER_EXPORT __attribute__((visibility("default")))

static VkLayerInstanceCreateInfo *find_instance_link(const VkInstanceCreateInfo *info,
                                                     VkLayerFunction function)
{
    for (const VkBaseInStructure *s = info->pNext; s; s = s->pNext) {
        VkLayerInstanceCreateInfo *link = (VkLayerInstanceCreateInfo *)s;
        if (s->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO && link->function == function)
            return link;
    }
    return NULL;
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkCreateInstance(const VkInstanceCreateInfo *pCreateInfo,
                                                     const VkAllocationCallbacks *pAllocator,
                                                     VkInstance *pInstance)
{
    VkLayerInstanceCreateInfo *link = find_instance_link(pCreateInfo, VK_LAYER_LINK_INFO);
    if (!link || !link->u.pLayerInfo)
        return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkCreateInstance next_create =
        (PFN_vkCreateInstance)next_gipa(VK_NULL_HANDLE, "vkCreateInstance");
    if (!next_create)
        return VK_ERROR_INITIALIZATION_FAILED;
    layer_instance *instance = calloc(1, sizeof(*instance));
    if (!instance)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    VkResult result = next_create(pCreateInfo, pAllocator, pInstance);
    if (result != VK_SUCCESS) {
        free(instance);
        return result;
    }
    instance->handle = *pInstance;
    instance->next_gipa = next_gipa;
    instance->api_version =
        pCreateInfo->pApplicationInfo && pCreateInfo->pApplicationInfo->apiVersion
            ? pCreateInfo->pApplicationInfo->apiVersion
            : VK_API_VERSION_1_0;
    for (uint32_t i = 0; i < pCreateInfo->enabledExtensionCount; i++)
        layer_extension_enable(&instance->extensions, pCreateInfo->ppEnabledExtensionNames[i]);
    layer_instance_dispatch_fill(&instance->dispatch, next_gipa, *pInstance);
    instance->features2_khr = (PFN_vkGetPhysicalDeviceFeatures2KHR)next_gipa(
        *pInstance, "vkGetPhysicalDeviceFeatures2KHR");
    instance->properties2_khr = (PFN_vkGetPhysicalDeviceProperties2KHR)next_gipa(
        *pInstance, "vkGetPhysicalDeviceProperties2KHR");
    pthread_mutex_init(&instance->engine_lock, NULL);
    layer_instance_register(instance);
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL hook_vkDestroyInstance(VkInstance instance,
                                                  const VkAllocationCallbacks *pAllocator)
{
    layer_instance *record = instance ? layer_instance_of(instance) : NULL;
    if (!record)
        return;
    layer_instance_unregister(record);
    record->dispatch.DestroyInstance(instance, pAllocator);
    layer_performance_query_instance_end(record);
    pthread_mutex_destroy(&record->engine_lock);
    free(record);
}

/* What the layer answers itself, whatever the next layer has. */
static bool is_layer_front(const char *name)
{
    return strcmp(name, "vkGetInstanceProcAddr") == 0 || strcmp(name, "vkCreateInstance") == 0 ||
           strcmp(name, "vkDestroyInstance") == 0 || strcmp(name, "vkCreateDevice") == 0 ||
           strcmp(name, "vkGetDeviceProcAddr") == 0;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL hook_vkGetInstanceProcAddr(VkInstance instance,
                                                                    const char *pName)
{
    if (!pName)
        return NULL;
    const layer_entry_point *entry = layer_entry_point_find(pName);
    if (entry && is_layer_front(pName))
        return entry->function;
    if (!instance)
        return NULL;
    layer_instance *record = layer_instance_of(instance);
    if (!record)
        return NULL;
    PFN_vkVoidFunction next = record->next_gipa(instance, pName);
    /* An intercepted command is handed out only where the chain below has it. */
    return entry && next ? entry->function : next;
}

LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *pVersionStruct)
{
    if (!pVersionStruct || pVersionStruct->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT)
        return VK_ERROR_INITIALIZATION_FAILED;
    if (pVersionStruct->loaderLayerInterfaceVersion < 2)
        return VK_ERROR_INITIALIZATION_FAILED;
    pVersionStruct->loaderLayerInterfaceVersion = 2;
    pVersionStruct->pfnGetInstanceProcAddr = hook_vkGetInstanceProcAddr;
    pVersionStruct->pfnGetDeviceProcAddr = hook_vkGetDeviceProcAddr;
    pVersionStruct->pfnGetPhysicalDeviceProcAddr = NULL;
    return VK_SUCCESS;
}
