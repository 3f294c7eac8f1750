/*
 * The roots of MDAPI: the adapter group (OpenAdapterGroup), its one adapter
 * (tally's shared device), opening and closing the metrics device on it, and
 * the entry points from before adapters existed, which do the same on the
 * default adapter. Opens and closes are counted, as Intel's are: a second
 * open hands out the same object with CC_ALREADY_INITIALIZED, and a close
 * that leaves it open answers CC_STILL_INITIALIZED.
 */
#include <new>
#include <stdio.h>

#include "igdmd.h"

#define IGDMD_EXPORT extern "C" __attribute__((visibility("default")))

namespace tally_igdmd
{

namespace
{
AdapterGroup *the_group; /* guarded by AdapterGroup::lock() */
uint32_t group_refs;
} // namespace

std::mutex &AdapterGroup::lock()
{
    static std::mutex lock;
    return lock;
}

/* --- adapter group --------------------------------------------------------------- */

TCompletionCode AdapterGroup::open(AdapterGroup **out)
{
    if (!out)
        return CC_ERROR_INVALID_PARAMETER;
    std::lock_guard<std::mutex> guard(lock());
    if (the_group) {
        group_refs++;
        *out = the_group;
        return CC_ALREADY_INITIALIZED;
    }
    AdapterGroup *group = new (std::nothrow) AdapterGroup();
    if (!group)
        return CC_ERROR_NO_MEMORY;
    group->params_.Version = {api_major, api_minor, api_build};
    /* The adapter is the process's shared device: without one (an unknown
     * TALLY_BACKEND, say) the group has no adapter, as on a machine with no
     * supported GPU. */
    if (tally_device_acquire_shared(&group->engine_) == TALLY_OK) {
        tally_device_info info;
        tally_device_get_info(group->engine_, &info);
        group->adapter_.reset(new (std::nothrow) Adapter(info.name));
    }
    group->params_.AdapterCount = group->adapter_ ? 1 : 0;
    the_group = group;
    group_refs = 1;
    *out = group;
    return CC_OK;
}

AdapterGroup *AdapterGroup::current()
{
    std::lock_guard<std::mutex> guard(lock());
    return the_group;
}

AdapterGroup::~AdapterGroup()
{
    adapter_.reset(); /* closes a device left open */
    if (engine_)
        tally_device_release_shared(engine_);
}

IAdapter_1_13 *AdapterGroup::GetAdapter(uint32_t index)
{
    return index < params_.AdapterCount ? adapter_.get() : nullptr;
}

TCompletionCode AdapterGroup::Close()
{
    std::lock_guard<std::mutex> guard(lock());
    if (this != the_group || group_refs == 0)
        return CC_ERROR_GENERAL;
    if (--group_refs > 0)
        return CC_STILL_INITIALIZED;
    the_group = nullptr;
    delete this;
    return CC_OK;
}

/* --- adapter ------------------------------------------------------------------------ */

Adapter::Adapter(const char *name)
{
    snprintf(name_, sizeof(name_), "%s", name ? name : "tally");
    params_.ShortName = name_;
    /* A simulated GPU has no PCI or OS identity: those fields stay 0 and
     * the type undefined, rather than pretend to be an Intel part. */
    params_.SystemId.Type = ADAPTER_ID_TYPE_UNDEFINED;
    params_.Type = ADAPTER_TYPE_UNDEFINED;
    params_.CapabilityMask = ADAPTER_CAPABILITY_RENDER_SUPPORTED;
    params_.SubDevicesCount = 0;
}

Adapter::~Adapter()
{
    delete device_;
}

TCompletionCode Adapter::Reset()
{
    /* Nothing to reset; Intel allows it only while no device is open. */
    return device_ ? CC_ERROR_GENERAL : CC_OK;
}

TCompletionCode Adapter::open_device(Device **out)
{
    if (!out)
        return CC_ERROR_INVALID_PARAMETER;
    std::lock_guard<std::mutex> guard(AdapterGroup::lock());
    if (device_) {
        device_refs_++;
        *out = device_;
        return CC_ALREADY_INITIALIZED;
    }
    *out = nullptr;
    TCompletionCode cc = Device::open(&device_);
    if (cc != CC_OK)
        return cc;
    device_refs_ = 1;
    *out = device_;
    return CC_OK;
}

TCompletionCode Adapter::OpenMetricsDevice(IMetricsDevice_1_5 **out)
{
    Device *device = nullptr;
    TCompletionCode cc = open_device(out ? &device : nullptr);
    if (out)
        *out = device;
    return cc;
}

TCompletionCode Adapter::OpenMetricsDevice(IMetricsDevice_1_10 **out)
{
    Device *device = nullptr;
    TCompletionCode cc = open_device(out ? &device : nullptr);
    if (out)
        *out = device;
    return cc;
}

TCompletionCode Adapter::OpenMetricsDevice(IMetricsDevice_1_11 **out)
{
    Device *device = nullptr;
    TCompletionCode cc = open_device(out ? &device : nullptr);
    if (out)
        *out = device;
    return cc;
}

TCompletionCode Adapter::OpenMetricsDevice(IMetricsDevice_1_13 **out)
{
    Device *device = nullptr;
    TCompletionCode cc = open_device(out ? &device : nullptr);
    if (out)
        *out = device;
    return cc;
}

TCompletionCode Adapter::CloseMetricsDevice(IMetricsDevice_1_5 *device)
{
    if (!device)
        return CC_ERROR_INVALID_PARAMETER;
    std::lock_guard<std::mutex> guard(AdapterGroup::lock());
    if (!device_ || device != static_cast<IMetricsDevice_1_5 *>(device_))
        return CC_ERROR_INVALID_PARAMETER;
    if (--device_refs_ > 0)
        return CC_STILL_INITIALIZED;
    delete device_;
    device_ = nullptr;
    return CC_OK;
}

/* Custom metric files are Intel's format for its own equations, which tally
 * does not evaluate: loading and saving them is not supported. */
template <typename T> static TCompletionCode from_file(const char *fileName, T **out)
{
    if (out)
        *out = nullptr;
    if (!fileName || !out)
        return CC_ERROR_INVALID_PARAMETER;
    return CC_ERROR_NOT_SUPPORTED;
}

TCompletionCode Adapter::OpenMetricsDeviceFromFile(const char *fileName, void *,
                                                   IMetricsDevice_1_5 **out)
{
    return from_file(fileName, out);
}

TCompletionCode Adapter::OpenMetricsDeviceFromFile(const char *fileName, void *,
                                                   IMetricsDevice_1_10 **out)
{
    return from_file(fileName, out);
}

TCompletionCode Adapter::OpenMetricsDeviceFromFile(const char *fileName, void *,
                                                   IMetricsDevice_1_11 **out)
{
    return from_file(fileName, out);
}

TCompletionCode Adapter::OpenMetricsDeviceFromFile(const char *fileName, void *,
                                                   IMetricsDevice_1_13 **out)
{
    return from_file(fileName, out);
}

TCompletionCode Adapter::SaveMetricsDeviceToFile(const char *fileName, void *,
                                                 IMetricsDevice_1_5 *device)
{
    return !fileName || !device ? CC_ERROR_INVALID_PARAMETER : CC_ERROR_NOT_SUPPORTED;
}

TCompletionCode Adapter::SaveMetricsDeviceToFile(const char *fileName, void *,
                                                 IMetricsDevice_1_11 *device, const uint32_t,
                                                 const uint32_t)
{
    return !fileName || !device ? CC_ERROR_INVALID_PARAMETER : CC_ERROR_NOT_SUPPORTED;
}

/* --- sub-devices: tally's device has none ---------------------------------------- */

const TSubDeviceParams_1_9 *Adapter::GetSubDeviceParams(const uint32_t)
{
    return nullptr;
}

const TEngineParams_1_13 *Adapter::GetEngineParams(const uint32_t, const uint32_t)
{
    return nullptr;
}

template <typename T> static TCompletionCode no_sub_device(T **out)
{
    if (out)
        *out = nullptr;
    return CC_ERROR_INVALID_PARAMETER; /* every index is out of range */
}

TCompletionCode Adapter::OpenMetricsSubDevice(const uint32_t, IMetricsDevice_1_5 **out)
{
    return no_sub_device(out);
}

TCompletionCode Adapter::OpenMetricsSubDevice(const uint32_t, IMetricsDevice_1_10 **out)
{
    return no_sub_device(out);
}

TCompletionCode Adapter::OpenMetricsSubDevice(const uint32_t, IMetricsDevice_1_11 **out)
{
    return no_sub_device(out);
}

TCompletionCode Adapter::OpenMetricsSubDevice(const uint32_t, IMetricsDevice_1_13 **out)
{
    return no_sub_device(out);
}

TCompletionCode Adapter::OpenMetricsSubDeviceFromFile(const uint32_t, const char *, void *,
                                                      IMetricsDevice_1_5 **out)
{
    return no_sub_device(out);
}

TCompletionCode Adapter::OpenMetricsSubDeviceFromFile(const uint32_t, const char *, void *,
                                                      IMetricsDevice_1_10 **out)
{
    return no_sub_device(out);
}

TCompletionCode Adapter::OpenMetricsSubDeviceFromFile(const uint32_t, const char *, void *,
                                                      IMetricsDevice_1_11 **out)
{
    return no_sub_device(out);
}

TCompletionCode Adapter::OpenMetricsSubDeviceFromFile(const uint32_t, const char *, void *,
                                                      IMetricsDevice_1_13 **out)
{
    return no_sub_device(out);
}

} // namespace tally_igdmd

/* --- the exported entry points ---------------------------------------------------- */

using namespace tally_igdmd;

IGDMD_EXPORT TCompletionCode OpenAdapterGroup(IAdapterGroupLatest **adapterGroup)
{
    AdapterGroup *group = nullptr;
    TCompletionCode cc = AdapterGroup::open(adapterGroup ? &group : nullptr);
    if (adapterGroup)
        *adapterGroup = group;
    return cc;
}

/* The default adapter's device, opening (counting) the group for it.
 * While the device is open (an adapter-group client opened it first, as
 * opencl-intercept-layer's helper does before falling back to this entry
 * point), this returns that same device with CC_ALREADY_INITIALIZED and
 * counts it once more, as Intel's library does: in intel/metrics-discovery,
 * md_main.cpp's OpenMetricsDevice opens the group (already-initialized
 * counts as success), then returns whatever CAdapter::OpenMetricsDevice
 * returns, and md_adapter.cpp's OpenMetricsDeviceByIndex hands an existing
 * device out with CC_ALREADY_INITIALIZED after raising its reference count;
 * both document CC_OK and CC_ALREADY_INITIALIZED as the two successes. A
 * client that only accepts CC_OK fails there with Intel's library too. */
IGDMD_EXPORT TCompletionCode OpenMetricsDevice(IMetricsDeviceLatest **metricsDevice)
{
    if (!metricsDevice)
        return CC_ERROR_INVALID_PARAMETER;
    *metricsDevice = nullptr;
    AdapterGroup *group = nullptr;
    TCompletionCode cc = AdapterGroup::open(&group);
    if (cc != CC_OK && cc != CC_ALREADY_INITIALIZED)
        return cc;
    if (!group->adapter()) {
        group->Close();
        return CC_ERROR_NOT_SUPPORTED; /* no adapter */
    }
    cc = group->adapter()->OpenMetricsDevice(metricsDevice);
    if (cc != CC_OK && cc != CC_ALREADY_INITIALIZED)
        group->Close();
    return cc;
}

IGDMD_EXPORT TCompletionCode OpenMetricsDeviceFromFile(const char *fileName, void *,
                                                       IMetricsDeviceLatest **metricsDevice)
{
    if (metricsDevice)
        *metricsDevice = nullptr;
    if (!fileName || !metricsDevice)
        return CC_ERROR_INVALID_PARAMETER;
    return CC_ERROR_NOT_SUPPORTED;
}

/* Closes what OpenMetricsDevice opened: the device, then the group's count. */
IGDMD_EXPORT TCompletionCode CloseMetricsDevice(IMetricsDeviceLatest *metricsDevice)
{
    if (!metricsDevice)
        return CC_ERROR_INVALID_PARAMETER;
    AdapterGroup *group = AdapterGroup::current();
    if (!group || !group->adapter())
        return CC_ERROR_NOT_SUPPORTED;
    TCompletionCode cc = group->adapter()->CloseMetricsDevice(metricsDevice);
    if (cc == CC_OK || cc == CC_STILL_INITIALIZED)
        group->Close();
    return cc;
}

IGDMD_EXPORT TCompletionCode SaveMetricsDeviceToFile(const char *fileName, void *,
                                                     IMetricsDeviceLatest *metricsDevice)
{
    if (!fileName || !metricsDevice)
        return CC_ERROR_INVALID_PARAMETER;
    return CC_ERROR_NOT_SUPPORTED;
}
