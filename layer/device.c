/* Device creation and destruction, the device's engine context, and GetDeviceProcAddr. */
#include "driver_measure.h"
#include "layer_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static VkLayerDeviceCreateInfo *find_device_link(const VkDeviceCreateInfo *info,
                                                 VkLayerFunction function)
{
    for (const VkBaseInStructure *s = info->pNext; s; s = s->pNext) {
        VkLayerDeviceCreateInfo *link = (VkLayerDeviceCreateInfo *)s;
        if (s->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO && link->function == function)
            return link;
    }
    return NULL;
}

static uint32_t effective_api_version(layer_instance *instance, VkPhysicalDevice physical)
{
    VkPhysicalDeviceProperties properties;
    instance->dispatch.GetPhysicalDeviceProperties(physical, &properties);
    uint32_t device_version = properties.apiVersion;
    return instance->api_version < device_version ? instance->api_version : device_version;
}

/* The driver under the device, for the report's metadata: its device name,
 * and the driver's own name and version where it says them (Vulkan 1.2's
 * driver properties), else its numbered version. */
static void say_driver(layer_instance *instance, VkPhysicalDevice physical, tally_context *context)
{
    VkPhysicalDeviceDriverProperties driver = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceProperties2 properties = {.sType =
                                                  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    instance->dispatch.GetPhysicalDeviceProperties(physical, &properties.properties);
    uint32_t api = properties.properties.apiVersion;
    /* The core entry point needs an instance of 1.1, the structure a device of 1.2 */
    bool named = api >= VK_API_VERSION_1_2 && instance->api_version >= VK_API_VERSION_1_1 &&
                 instance->dispatch.GetPhysicalDeviceProperties2;
    if (named) {
        properties.pNext = &driver;
        instance->dispatch.GetPhysicalDeviceProperties2(physical, &properties);
    }
    char version[VK_MAX_DRIVER_NAME_SIZE + VK_MAX_DRIVER_INFO_SIZE + 64];
    if (named && driver.driverName[0])
        snprintf(version, sizeof version, "%s %s, Vulkan %u.%u.%u", driver.driverName,
                 driver.driverInfo, VK_API_VERSION_MAJOR(api), VK_API_VERSION_MINOR(api),
                 VK_API_VERSION_PATCH(api));
    else
        snprintf(version, sizeof version, "driver version 0x%08x, Vulkan %u.%u.%u",
                 properties.properties.driverVersion, VK_API_VERSION_MAJOR(api),
                 VK_API_VERSION_MINOR(api), VK_API_VERSION_PATCH(api));
    tally_context_set_driver(context, properties.properties.deviceName, version);
}

/* The engine side of a device: counting is best effort, the device works without it. */
static void open_engine(layer_device *device, uint32_t measurable)
{
    if (tally_device_acquire_shared_measuring(measurable, &device->engine) != TALLY_OK) {
        device->engine = NULL;
        return;
    }
    if (tally_context_create(device->engine, "vulkan", &device->context) != TALLY_OK ||
        tally_stream_create(device->context, &device->queue_stream) != TALLY_OK) {
        if (device->context)
            tally_context_destroy(device->context);
        tally_device_release_shared(device->engine);
        device->engine = NULL;
        device->context = NULL;
    }
}

static void close_engine(layer_device *device)
{
    if (!device->engine)
        return;
    tally_stream_destroy(device->queue_stream);
    tally_context_destroy(device->context);
    tally_device_release_shared(device->engine);
}

static layer_device *device_record_create(void)
{
    layer_device *device = calloc(1, sizeof(*device));
    if (!device)
        return NULL;
    pthread_mutex_init(&device->queue_lock, NULL);
    object_map_init(&device->command_buffers);
    object_map_init(&device->command_pools);
    object_map_init(&device->shader_modules);
    object_map_init(&device->pipelines);
    object_map_init(&device->render_passes);
    object_map_init(&device->images);
    object_map_init(&device->image_views);
    object_map_init(&device->framebuffers);
    object_map_init(&device->query_pools);
    object_map_init(&device->buffers);
    object_map_init(&device->queues);
    pthread_mutex_init(&device->readback_lock, NULL);
    return device;
}

static void device_record_free(layer_device *device)
{
    object_map_destroy(&device->command_buffers);
    object_map_destroy(&device->command_pools);
    object_map_destroy(&device->shader_modules);
    object_map_destroy(&device->pipelines);
    object_map_destroy(&device->render_passes);
    object_map_destroy(&device->images);
    object_map_destroy(&device->image_views);
    object_map_destroy(&device->framebuffers);
    object_map_destroy(&device->query_pools);
    object_map_destroy(&device->buffers);
    object_map_destroy(&device->queues);
    pthread_mutex_destroy(&device->readback_lock);
    pthread_mutex_destroy(&device->queue_lock);
    free(device);
}

/* The optional shader stages the device enabled (pEnabledFeatures or a
 * VkPhysicalDeviceFeatures2 in the chain). */
static void note_enabled_stages(layer_device *device, const VkDeviceCreateInfo *info)
{
    const VkPhysicalDeviceFeatures *features = info->pEnabledFeatures;
    for (const VkBaseInStructure *s = info->pNext; s && !features; s = s->pNext)
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2)
            features = &((const VkPhysicalDeviceFeatures2 *)s)->features;
    device->geometry_shader = features && features->geometryShader;
    device->tessellation_shader = features && features->tessellationShader;
}

static bool performance_feature_enabled(const VkDeviceCreateInfo *info)
{
    for (const VkBaseInStructure *s = info->pNext; s; s = s->pNext)
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR)
            return ((const VkPhysicalDevicePerformanceQueryFeaturesKHR *)s)
                ->performanceCounterQueryPools;
    return false;
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkCreateDevice(VkPhysicalDevice physicalDevice,
                                                   const VkDeviceCreateInfo *pCreateInfo,
                                                   const VkAllocationCallbacks *pAllocator,
                                                   VkDevice *pDevice)
{
    layer_instance *instance = layer_instance_of(physicalDevice);
    VkLayerDeviceCreateInfo *link = find_device_link(pCreateInfo, VK_LAYER_LINK_INFO);
    VkLayerDeviceCreateInfo *callback = find_device_link(pCreateInfo, VK_LOADER_DATA_CALLBACK);
    if (!instance || !link || !link->u.pLayerInfo)
        return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    PFN_vkCreateDevice next_create =
        (PFN_vkCreateDevice)next_gipa(instance->handle, "vkCreateDevice");
    if (!next_create)
        return VK_ERROR_INITIALIZATION_FAILED;
    layer_device *device = device_record_create();
    if (!device)
        return VK_ERROR_OUT_OF_HOST_MEMORY;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    /* Where the layer provides VK_KHR_performance_query, the driver must not see it. */
    device->performance_query_emulated = layer_performance_query_provided(instance, physicalDevice);
    layer_device_create_copy copy;
    bool requested = false;
    const VkDeviceCreateInfo *down = pCreateInfo;
    if (device->performance_query_emulated) {
        device->performance_query_enabled = performance_feature_enabled(pCreateInfo);
        down = layer_strip_performance_query(pCreateInfo, &copy, &requested);
        device->performance_query_enabled &= requested;
    }
    /* The engine opens first: a measuring one (TALLY_BACKEND=driver) needs
     * the pipelineStatisticsQuery feature for the layer's own queries. */
    open_engine(device, layer_measurable(instance, physicalDevice));
    if (device->context)
        say_driver(instance, physicalDevice, device->context);
    tally_device_info engine_info = {0};
    tally_device_get_info(device->engine, &engine_info);
    VkDeviceCreateInfo measured_copy;
    void *measured_storage = NULL;
    if (engine_info.measures & TALLY_MEASURE_STATISTICS)
        down = layer_measure_device_info(down, &measured_copy, &measured_storage);
    /* And VK_EXT_calibrated_timestamps, to put its timestamps on CLOCK_MONOTONIC. */
    VkDeviceCreateInfo calibrated_copy;
    void *calibrated_storage = NULL;
    bool calibrating = false;
    if ((engine_info.measures & TALLY_MEASURE_TIME) && engine_info.calibrate)
        down = layer_calibration_device_info(instance, physicalDevice, down, &calibrated_copy,
                                             &calibrated_storage, &calibrating);
    /* And bufferDeviceAddress, for the pass that serves copies of the
     * application's statistics pools (statistics_copy.c). */
    VkDeviceCreateInfo address_copy;
    void *address_storage = NULL;
    bool address_enabled = false;
    if (engine_info.measures & TALLY_MEASURE_STATISTICS)
        down = layer_copy_device_info(instance, physicalDevice,
                                      effective_api_version(instance, physicalDevice), down,
                                      &address_copy, &address_storage, &address_enabled);
    VkResult result = next_create(physicalDevice, down, pAllocator, pDevice);
    free(address_storage);
    free(calibrated_storage);
    free(measured_storage);
    if (device->performance_query_emulated)
        layer_device_create_copy_free(&copy);
    if (result != VK_SUCCESS) {
        close_engine(device);
        device_record_free(device);
        return result;
    }
    device->handle = *pDevice;
    device->physical_device = physicalDevice;
    note_enabled_stages(device, pCreateInfo);
    device->instance = instance;
    device->next_gdpa = next_gdpa;
    device->set_loader_data = callback ? callback->u.pfnSetDeviceLoaderData : NULL;
    device->api_version = effective_api_version(instance, physicalDevice);
    device->extensions = instance->extensions;
    for (uint32_t i = 0; i < pCreateInfo->enabledExtensionCount; i++)
        layer_extension_enable(&device->extensions, pCreateInfo->ppEnabledExtensionNames[i]);
    layer_device_dispatch_fill(&device->dispatch, next_gdpa, *pDevice);
    layer_measuring_open(device);
    layer_copy_open(device, address_enabled);
    layer_calibration_open(device, calibrating);
    layer_device_register(device);
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL hook_vkDestroyDevice(VkDevice handle,
                                                const VkAllocationCallbacks *pAllocator)
{
    layer_device *device = handle ? layer_device_of(handle) : NULL;
    if (!device)
        return;
    layer_device_unregister(device);
    /* The engine's queue thread may still be reading indirect parameters
     * back through the device's objects. */
    if (device->engine)
        tally_wait_seqno(device->engine, atomic_load(&device->last_seqno), UINT64_MAX);
    layer_readbacks_destroy_all(device);
    layer_command_buffers_destroy_all(device); /* their query pools are the device's */
    layer_measuring_close(device);
    device->dispatch.DestroyDevice(handle, pAllocator);
    layer_buffers_destroy_all(device);
    layer_pipelines_destroy_all(device);
    layer_render_states_destroy_all(device);
    layer_query_pools_destroy_all(device);
    close_engine(device);
    device_record_free(device);
}

static bool entry_enabled(const layer_device *device, const layer_entry_point *entry)
{
    if (entry->core_version && device->api_version >= entry->core_version)
        return true;
    for (uint16_t i = 0; i < entry->extension_count; i++)
        if (layer_extension_enabled(&device->extensions, entry->extensions[i]))
            return true;
    return false;
}

/* Commands of the extension the layer provides exist whatever the driver has. */
static bool provided_by_layer(const layer_entry_point *entry)
{
    for (uint16_t i = 0; i < entry->extension_count; i++)
        if (entry->extensions[i] == LAYER_EXT_KHR_performance_query)
            return true;
    return false;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL hook_vkGetDeviceProcAddr(VkDevice handle,
                                                                  const char *pName)
{
    if (!pName || !handle)
        return NULL;
    layer_device *device = layer_device_of(handle);
    if (!device)
        return NULL;
    const layer_entry_point *entry = layer_entry_point_find(pName);
    if (entry && strcmp(pName, "vkGetDeviceProcAddr") == 0)
        return entry->function;
    if (entry && entry->device_level) {
        /* Commands of versions and extensions the device did not enable are not handed out. */
        if (!entry_enabled(device, entry))
            return NULL;
        if (device->performance_query_emulated && provided_by_layer(entry))
            return entry->function;
        return device->next_gdpa(handle, pName) ? entry->function : NULL;
    }
    return device->next_gdpa(handle, pName);
}
