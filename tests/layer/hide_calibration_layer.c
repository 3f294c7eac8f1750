/*
 * VK_LAYER_TALLYTEST_hide_calibration: a test layer that sits below tally's
 * and makes lavapipe look like a driver that cannot calibrate its
 * timestamps, so the driver backend's fallback (the engine's correlation)
 * is tested on a real driver. TALLY_TEST_HIDE says what it hides:
 *   extension  VK_EXT_calibrated_timestamps from the device's extensions
 *   monotonic  VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT from its time domains
 * and with TALLY_TEST_HIDE=finish it hides nothing, but returns from
 * vkQueueSubmit only once the queue is idle: a driver whose GPU finished the
 * work before the layer above regains control.
 * Everything else passes through. One instance at a time (a test's).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <vulkan/vk_layer.h>

#define LAYER_NAME "VK_LAYER_TALLYTEST_hide_calibration"

static PFN_vkGetInstanceProcAddr next_gipa;
static PFN_vkGetDeviceProcAddr next_gdpa;
static VkInstance instance;
static PFN_vkCreateDevice next_create_device;
static PFN_vkEnumerateDeviceExtensionProperties next_enumerate;
static PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT next_domains;
static PFN_vkQueueSubmit next_queue_submit;
static PFN_vkQueueWaitIdle next_queue_wait_idle;

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_instance_proc_addr(VkInstance handle,
                                                                       const char *name);

static bool hiding(const char *what)
{
    const char *value = getenv("TALLY_TEST_HIDE");
    return value && strcmp(value, what) == 0;
}

static VKAPI_ATTR VkResult VKAPI_CALL create_instance(const VkInstanceCreateInfo *info,
                                                      const VkAllocationCallbacks *allocator,
                                                      VkInstance *out)
{
    VkLayerInstanceCreateInfo *link = (VkLayerInstanceCreateInfo *)info->pNext;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO &&
                     link->function == VK_LAYER_LINK_INFO))
        link = (VkLayerInstanceCreateInfo *)link->pNext;
    if (!link)
        return VK_ERROR_INITIALIZATION_FAILED;
    next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    PFN_vkCreateInstance create = (PFN_vkCreateInstance)next_gipa(NULL, "vkCreateInstance");
    VkResult result = create(info, allocator, out);
    if (result != VK_SUCCESS)
        return result;
    instance = *out;
    /* Now: once the loader finished, the instance's dispatch is the top of
     * the chain, and asking the next layer later would answer this one. */
    next_create_device = (PFN_vkCreateDevice)next_gipa(instance, "vkCreateDevice");
    next_enumerate = (PFN_vkEnumerateDeviceExtensionProperties)next_gipa(
        instance, "vkEnumerateDeviceExtensionProperties");
    next_domains = (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)next_gipa(
        instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
    return result;
}

static VKAPI_ATTR VkResult VKAPI_CALL create_device(VkPhysicalDevice physical,
                                                    const VkDeviceCreateInfo *info,
                                                    const VkAllocationCallbacks *allocator,
                                                    VkDevice *out)
{
    VkLayerDeviceCreateInfo *link = (VkLayerDeviceCreateInfo *)info->pNext;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO &&
                     link->function == VK_LAYER_LINK_INFO))
        link = (VkLayerDeviceCreateInfo *)link->pNext;
    if (!link)
        return VK_ERROR_INITIALIZATION_FAILED;
    next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    VkResult result = next_create_device(physical, info, allocator, out);
    if (result == VK_SUCCESS) {
        next_queue_submit = (PFN_vkQueueSubmit)next_gdpa(*out, "vkQueueSubmit");
        next_queue_wait_idle = (PFN_vkQueueWaitIdle)next_gdpa(*out, "vkQueueWaitIdle");
    }
    return result;
}

static VKAPI_ATTR VkResult VKAPI_CALL queue_submit(VkQueue queue, uint32_t count,
                                                   const VkSubmitInfo *submits, VkFence fence)
{
    VkResult result = next_queue_submit(queue, count, submits, fence);
    if (result == VK_SUCCESS && hiding("finish"))
        result = next_queue_wait_idle(queue);
    return result;
}

/* Copies `n` entries into the caller's array as Vulkan's two-call idiom says. */
static VkResult answer(const void *list, uint32_t n, size_t size, uint32_t *count, void *out)
{
    if (!out) {
        *count = n;
        return VK_SUCCESS;
    }
    uint32_t copied = *count < n ? *count : n;
    memcpy(out, list, copied * size);
    *count = copied;
    return copied < n ? VK_INCOMPLETE : VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL enumerate_extensions(VkPhysicalDevice physical,
                                                           const char *layer, uint32_t *count,
                                                           VkExtensionProperties *out)
{
    if (layer && strcmp(layer, LAYER_NAME) == 0)
        return answer(NULL, 0, sizeof(*out), count, out);
    PFN_vkEnumerateDeviceExtensionProperties next = next_enumerate;
    if (layer || !hiding("extension"))
        return next(physical, layer, count, out);
    uint32_t n = 0;
    VkResult result = next(physical, NULL, &n, NULL);
    VkExtensionProperties *all = calloc(n ? n : 1, sizeof(*all));
    if (result == VK_SUCCESS && all)
        result = next(physical, NULL, &n, all);
    uint32_t kept = 0;
    for (uint32_t i = 0; all && i < n; i++)
        if (strcmp(all[i].extensionName, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME) != 0)
            all[kept++] = all[i];
    if (all && result == VK_SUCCESS)
        result = answer(all, kept, sizeof(*all), count, out);
    free(all);
    return all ? result : VK_ERROR_OUT_OF_HOST_MEMORY;
}

static VKAPI_ATTR VkResult VKAPI_CALL time_domains(VkPhysicalDevice physical, uint32_t *count,
                                                   VkTimeDomainEXT *out)
{
    PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT next = next_domains;
    if (!hiding("monotonic"))
        return next(physical, count, out);
    VkTimeDomainEXT all[16];
    uint32_t n = 16, kept = 0;
    VkResult result = next(physical, &n, all);
    if (result != VK_SUCCESS && result != VK_INCOMPLETE)
        return result;
    for (uint32_t i = 0; i < n; i++)
        if (all[i] != VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT)
            all[kept++] = all[i];
    return answer(all, kept, sizeof(*all), count, out);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_device_proc_addr(VkDevice device,
                                                                     const char *name)
{
    if (strcmp(name, "vkGetDeviceProcAddr") == 0)
        return (PFN_vkVoidFunction)get_device_proc_addr;
    if (strcmp(name, "vkQueueSubmit") == 0)
        return (PFN_vkVoidFunction)queue_submit;
    return next_gdpa(device, name);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_instance_proc_addr(VkInstance handle,
                                                                       const char *name)
{
    static const struct {
        const char *name;
        PFN_vkVoidFunction function;
    } hooks[] = {
        {"vkGetInstanceProcAddr", (PFN_vkVoidFunction)get_instance_proc_addr},
        {"vkGetDeviceProcAddr", (PFN_vkVoidFunction)get_device_proc_addr},
        {"vkCreateInstance", (PFN_vkVoidFunction)create_instance},
        {"vkCreateDevice", (PFN_vkVoidFunction)create_device},
        {"vkEnumerateDeviceExtensionProperties", (PFN_vkVoidFunction)enumerate_extensions},
        {"vkGetPhysicalDeviceCalibrateableTimeDomainsEXT", (PFN_vkVoidFunction)time_domains},
    };
    for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
        if (strcmp(name, hooks[i].name) == 0)
            return hooks[i].function;
    return next_gipa ? next_gipa(handle, name) : NULL;
}

VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *interface)
{
    if (interface->loaderLayerInterfaceVersion < 2)
        return VK_ERROR_INITIALIZATION_FAILED;
    interface->loaderLayerInterfaceVersion = 2;
    interface->pfnGetInstanceProcAddr = get_instance_proc_addr;
    interface->pfnGetDeviceProcAddr = get_device_proc_addr;
    interface->pfnGetPhysicalDeviceProcAddr = NULL;
    return VK_SUCCESS;
}
