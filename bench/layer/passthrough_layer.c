/*
 * VK_LAYER_TALLY_passthrough: the least a layer can do, built only as the
 * benchmark's baseline. It intercepts vkCmdDraw like tally does (a lookup of
 * the device by dispatch key, then the next layer's function) and nothing
 * else but what chaining needs. One instance and one device at a time.
 */
#include <stdatomic.h>
#include <string.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#define EXPORT __attribute__((visibility("default")))

static PFN_vkGetInstanceProcAddr next_gipa;
static PFN_vkGetDeviceProcAddr next_gdpa;
static PFN_vkCmdDraw next_cmd_draw;
static _Atomic(void *) device_key;

static void *key_of(const void *handle)
{
    return *(void *const *)handle;
}

static VKAPI_ATTR VkResult VKAPI_CALL create_instance(const VkInstanceCreateInfo *info,
                                                      const VkAllocationCallbacks *allocator,
                                                      VkInstance *instance)
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
    return create(info, allocator, instance);
}

static VKAPI_ATTR VkResult VKAPI_CALL create_device(VkPhysicalDevice physical,
                                                    const VkDeviceCreateInfo *info,
                                                    const VkAllocationCallbacks *allocator,
                                                    VkDevice *device)
{
    VkLayerDeviceCreateInfo *link = (VkLayerDeviceCreateInfo *)info->pNext;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO &&
                     link->function == VK_LAYER_LINK_INFO))
        link = (VkLayerDeviceCreateInfo *)link->pNext;
    if (!link)
        return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa(NULL, "vkCreateDevice");
    VkResult result = create(physical, info, allocator, device);
    if (result == VK_SUCCESS) {
        next_cmd_draw = (PFN_vkCmdDraw)next_gdpa(*device, "vkCmdDraw");
        atomic_store(&device_key, key_of(*device));
    }
    return result;
}

static VKAPI_ATTR void VKAPI_CALL cmd_draw(VkCommandBuffer cb, uint32_t vertices,
                                           uint32_t instances, uint32_t first_vertex,
                                           uint32_t first_instance)
{
    /* The lookup every layer makes: is this our device? */
    if (atomic_load_explicit(&device_key, memory_order_acquire) == key_of(cb))
        next_cmd_draw(cb, vertices, instances, first_vertex, first_instance);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_device_proc_addr(VkDevice device,
                                                                     const char *name);

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_instance_proc_addr(VkInstance instance,
                                                                       const char *name)
{
    if (strcmp(name, "vkCreateInstance") == 0)
        return (PFN_vkVoidFunction)create_instance;
    if (strcmp(name, "vkCreateDevice") == 0)
        return (PFN_vkVoidFunction)create_device;
    if (strcmp(name, "vkGetInstanceProcAddr") == 0)
        return (PFN_vkVoidFunction)get_instance_proc_addr;
    if (strcmp(name, "vkGetDeviceProcAddr") == 0)
        return (PFN_vkVoidFunction)get_device_proc_addr;
    if (strcmp(name, "vkCmdDraw") == 0)
        return (PFN_vkVoidFunction)cmd_draw;
    return next_gipa ? next_gipa(instance, name) : NULL;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_device_proc_addr(VkDevice device,
                                                                     const char *name)
{
    if (strcmp(name, "vkGetDeviceProcAddr") == 0)
        return (PFN_vkVoidFunction)get_device_proc_addr;
    if (strcmp(name, "vkCmdDraw") == 0)
        return (PFN_vkVoidFunction)cmd_draw;
    return next_gdpa(device, name);
}

EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *version)
{
    if (version->loaderLayerInterfaceVersion < 2)
        return VK_ERROR_INITIALIZATION_FAILED;
    version->loaderLayerInterfaceVersion = 2;
    version->pfnGetInstanceProcAddr = get_instance_proc_addr;
    version->pfnGetDeviceProcAddr = get_device_proc_addr;
    version->pfnGetPhysicalDeviceProcAddr = NULL;
    return VK_SUCCESS;
}
