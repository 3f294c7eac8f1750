/*
 * GPU timestamps on CLOCK_MONOTONIC, for the driver backend
 * (VK_EXT_calibrated_timestamps): whether a physical device can calibrate,
 * the extension enabled at vkCreateDevice without the application seeing
 * it, and a (device, CLOCK_MONOTONIC) pair sampled per readback that turns
 * the layer's timestamps into CLOCK_MONOTONIC nanoseconds.
 *
 * CLOCK_MONOTONIC, not CLOCK_MONOTONIC_RAW: the engine's realtime clock,
 * the program's own clock_gettime, EGL_BRCM timelines and Metrics-Discovery
 * CPU timestamps are all CLOCK_MONOTONIC. MONOTONIC_RAW runs at a different
 * rate (it ignores NTP's slewing), so using it would need a second
 * correlation, between the two CPU clocks; every driver known to offer
 * MONOTONIC_RAW offers CLOCK_MONOTONIC too (lavapipe offers only the
 * latter). A device without the DEVICE and CLOCK_MONOTONIC domains keeps
 * the engine's correlation (engine/measured.c).
 */
#include "driver_measure.h"

#include <stdlib.h>
#include <string.h>

static bool has_extension(layer_instance *instance, VkPhysicalDevice physical)
{
    uint32_t n = 0;
    if (instance->dispatch.EnumerateDeviceExtensionProperties(physical, NULL, &n, NULL) !=
        VK_SUCCESS)
        return false;
    VkExtensionProperties *list = calloc(n ? n : 1, sizeof(*list));
    if (!list)
        return false;
    bool found = false;
    if (instance->dispatch.EnumerateDeviceExtensionProperties(physical, NULL, &n, list) ==
        VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(list[i].extensionName, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME) == 0;
    free(list);
    return found;
}

static bool has_domains(layer_instance *instance, VkPhysicalDevice physical)
{
    PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT domains =
        instance->dispatch.GetPhysicalDeviceCalibrateableTimeDomainsEXT;
    uint32_t n = 0;
    if (!domains || domains(physical, &n, NULL) != VK_SUCCESS || !n)
        return false;
    VkTimeDomainEXT list[16];
    n = n < 16 ? n : 16;
    VkResult r = domains(physical, &n, list);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
        return false;
    bool device = false, monotonic = false;
    for (uint32_t i = 0; i < n; i++) {
        device |= list[i] == VK_TIME_DOMAIN_DEVICE_EXT;
        monotonic |= list[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
    }
    return device && monotonic;
}

static bool named(const VkDeviceCreateInfo *info, const char *extension)
{
    for (uint32_t i = 0; i < info->enabledExtensionCount; i++)
        if (strcmp(info->ppEnabledExtensionNames[i], extension) == 0)
            return true;
    return false;
}

const VkDeviceCreateInfo *layer_calibration_device_info(layer_instance *instance,
                                                        VkPhysicalDevice physical,
                                                        const VkDeviceCreateInfo *info,
                                                        VkDeviceCreateInfo *copy, void **storage,
                                                        bool *calibrating)
{
    *storage = NULL;
    *calibrating = has_extension(instance, physical) && has_domains(instance, physical);
    if (!*calibrating || named(info, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME))
        return info;
    const char **names = malloc((info->enabledExtensionCount + 1) * sizeof(*names));
    if (!names) {
        *calibrating = false;
        return info;
    }
    for (uint32_t i = 0; i < info->enabledExtensionCount; i++)
        names[i] = info->ppEnabledExtensionNames[i];
    names[info->enabledExtensionCount] = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
    *copy = *info;
    copy->enabledExtensionCount = info->enabledExtensionCount + 1;
    copy->ppEnabledExtensionNames = names;
    *storage = names;
    return copy;
}

void layer_calibration_open(layer_device *device, bool calibrating)
{
    layer_measuring *m = device->measuring;
    if (!m || !calibrating || !(m->measures & TALLY_MEASURE_TIME))
        return;
    m->calibrate = device->dispatch.GetCalibratedTimestampsEXT;
    layer_calibration first;
    if (!layer_calibration_sample(device, &first)) {
        m->calibrate = NULL;
        tally_log(TALLY_LOG_WARN, "Vulkan layer: vkGetCalibratedTimestampsEXT failed; GPU "
                                  "timestamps are placed on the engine's clock instead");
        return;
    }
    tally_log(TALLY_LOG_INFO,
              "Vulkan layer: GPU timestamps calibrated to CLOCK_MONOTONIC "
              "(VK_EXT_calibrated_timestamps, max deviation %llu ns)",
              (unsigned long long)first.max_deviation_ns);
}

bool layer_calibration_sample(layer_device *device, layer_calibration *out)
{
    layer_measuring *m = device->measuring;
    out->valid = false;
    if (!m || !m->calibrate)
        return false;
    const VkCalibratedTimestampInfoEXT infos[2] = {
        {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL, VK_TIME_DOMAIN_DEVICE_EXT},
        {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL, VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT},
    };
    uint64_t values[2], deviation = 0;
    if (m->calibrate(device->handle, 2, infos, values, &deviation) != VK_SUCCESS)
        return false;
    *out = (layer_calibration){
        .valid = true,
        .device_ticks = values[0],
        .monotonic_ns = values[1],
        .max_deviation_ns = deviation,
    };
    return true;
}

static bool to_monotonic(const layer_calibration *c, uint64_t ticks, uint64_t mask, double period,
                         uint64_t *ns)
{
    /* The distance from the pair's device time, modulo the valid bits, as
     * a signed number: a timestamp taken before the pair is negative. */
    uint64_t delta = (ticks - c->device_ticks) & mask;
    long double offset = mask == ~0ull       ? (long double)(int64_t)delta
                         : delta > mask >> 1 ? -(long double)((mask - delta) + 1)
                                             : (long double)delta;
    long double at = (long double)c->monotonic_ns + offset * period;
    /* The pair is sampled after the work finished: a time later than it
     * (beyond its deviation) means the calibration cannot be trusted. */
    if (at < 0 || at > (long double)c->monotonic_ns + (long double)c->max_deviation_ns)
        return false;
    *ns = (uint64_t)at;
    return true;
}

void layer_calibration_place(const layer_calibration *c, uint64_t begin_ticks, uint64_t end_ticks,
                             uint64_t mask, double period, tally_measurement *out)
{
    uint64_t begin, end;
    if (!c->valid || !to_monotonic(c, begin_ticks & mask, mask, period, &begin) ||
        !to_monotonic(c, end_ticks & mask, mask, period, &end))
        return;
    out->begin_ns = begin;
    out->end_ns = end;
    out->valid |= TALLY_MEASURE_TIME_MONOTONIC;
}

/* The application's own calls: only handed out where it enabled the
 * extension (hook_vkGetDeviceProcAddr), as without the layer. */
VKAPI_ATTR VkResult VKAPI_CALL hook_vkGetCalibratedTimestampsEXT(
    VkDevice handle, uint32_t timestampCount, const VkCalibratedTimestampInfoEXT *pTimestampInfos,
    uint64_t *pTimestamps, uint64_t *pMaxDeviation)
{
    return layer_device_of(handle)->dispatch.GetCalibratedTimestampsEXT(
        handle, timestampCount, pTimestampInfos, pTimestamps, pMaxDeviation);
}
