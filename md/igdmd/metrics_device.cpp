/*
 * IMetricsDevice: the Metrics-Discovery view of tally's shared device, its
 * global symbols (tally's, plus the names MDAPI tools look up for the same
 * facts), its concurrent groups and the GPU/CPU timestamp pair.
 */
#include <new>
#include <sched.h>
#include <string.h>

#include "igdmd.h"

namespace tally_igdmd
{

/* MDAPI's name for a fact that tally's device publishes under its own. */
struct symbol_alias {
    const char *mdapi_name;
    const char *tally_name;
};
static const symbol_alias aliases[] = {
    {"EuCoresTotalCount", "ShaderCoresTotalCount"},
};
enum { ALIAS_COUNT = sizeof(aliases) / sizeof(aliases[0]) };

TCompletionCode Device::open(Device **out)
{
    Device *device = new (std::nothrow) Device();
    if (!device)
        return CC_ERROR_NO_MEMORY;
    tally_status s = tally_md_device_open_shared(&device->md_);
    if (s != TALLY_OK) {
        delete device;
        return to_completion_code(s);
    }
    const tally_md_device_params *p = tally_md_device_get_params(device->md_);
    device->params_.Version = {api_major, api_minor, api_build};
    device->params_.ConcurrentGroupsCount = p->concurrent_groups_count;
    device->params_.DeviceName = p->device_name;
    /* tally publishes no equations, delta functions or overrides: 0 of each */
    bool ok = device->build_symbols();
    device->groups_.reset(new (std::nothrow) ConcurrentGroup[p->concurrent_groups_count + 1]);
    ok = ok && device->groups_;
    for (uint32_t g = 0; ok && g < p->concurrent_groups_count; g++)
        ok = device->groups_[g].init(device, tally_md_device_get_concurrent_group(device->md_, g));
    if (!ok) {
        delete device;
        return CC_ERROR_NO_MEMORY;
    }
    *out = device;
    return CC_OK;
}

Device::~Device()
{
    for (uint32_t g = 0; groups_ && g < params_.ConcurrentGroupsCount; g++)
        groups_[g].shut_down();
    groups_.reset();
    tally_md_device_close(md_);
}

bool Device::build_symbols()
{
    const tally_md_device_params *p = tally_md_device_get_params(md_);
    uint32_t n = p->global_symbols_count;
    symbols_.reset(new (std::nothrow) TGlobalSymbol_1_0[n + ALIAS_COUNT]);
    if (!symbols_)
        return false;
    uint32_t count = 0;
    for (uint32_t i = 0; i < n; i++) {
        const tally_md_global_symbol *s = tally_md_device_get_global_symbol(md_, i);
        symbols_[count++] = {s->symbol_name, to_typed_value(s->value)};
    }
    for (const symbol_alias &a : aliases) {
        const tally_md_global_symbol *s = tally_md_device_find_global_symbol(md_, a.tally_name);
        if (!s || tally_md_device_find_global_symbol(md_, a.mdapi_name))
            continue;
        TTypedValue_1_0 v = to_typed_value(s->value);
        if (v.ValueType == VALUE_TYPE_UINT64 && v.ValueUInt64 <= UINT32_MAX) {
            uint32_t narrow = (uint32_t)v.ValueUInt64; /* counts are UINT32 in MDAPI */
            v = {};
            v.ValueType = VALUE_TYPE_UINT32;
            v.ValueUInt32 = narrow;
        }
        symbols_[count++] = {a.mdapi_name, v};
    }
    params_.GlobalSymbolsCount = count;
    return true;
}

IConcurrentGroup_1_13 *Device::GetConcurrentGroup(uint32_t index)
{
    if (index >= params_.ConcurrentGroupsCount) {
        fail(CC_ERROR_INVALID_PARAMETER);
        return nullptr;
    }
    return &groups_[index];
}

TGlobalSymbol_1_0 *Device::GetGlobalSymbol(uint32_t index)
{
    if (index >= params_.GlobalSymbolsCount) {
        fail(CC_ERROR_INVALID_PARAMETER);
        return nullptr;
    }
    return &symbols_[index];
}

TTypedValue_1_0 *Device::GetGlobalSymbolValueByName(const char *name)
{
    for (uint32_t i = 0; name && i < params_.GlobalSymbolsCount; i++)
        if (strcmp(symbols_[i].SymbolName, name) == 0)
            return &symbols_[i].SymbolTypedValue;
    fail(CC_ERROR_INVALID_PARAMETER);
    return nullptr;
}

/* The code of the latest call on this device or its objects that failed;
 * CC_OK when none has. */
TCompletionCode Device::GetLastError(void)
{
    return last_error_.load(std::memory_order_relaxed);
}

TCompletionCode Device::GetGpuCpuTimestamps(uint64_t *gpu, uint64_t *cpu, uint32_t *cpuId)
{
    return GetGpuCpuTimestamps(gpu, cpu, cpuId, nullptr);
}

/* GPU time in ns (the clock of report timestamps) and CLOCK_MONOTONIC in ns,
 * read together; the indicator is the width of the window they were read in
 * (0: tally derives both from one clock read). cpuId is the CPU it ran on. */
TCompletionCode Device::GetGpuCpuTimestamps(uint64_t *gpu, uint64_t *cpu, uint32_t *cpuId,
                                            uint64_t *correlationIndicatorNs)
{
    if (!gpu || !cpu)
        return fail(CC_ERROR_INVALID_PARAMETER);
    tally_status s = tally_md_device_get_gpu_cpu_timestamps(md_, gpu, cpu, correlationIndicatorNs);
    if (s != TALLY_OK)
        return fail(to_completion_code(s));
    if (cpuId) {
        int at = sched_getcpu();
        *cpuId = at < 0 ? 0 : (uint32_t)at;
    }
    return CC_OK;
}

/* Overrides (frequency, query period) change the hardware; tally's device
 * has none to offer. */
IOverride_1_2 *Device::GetOverride(uint32_t)
{
    fail(CC_ERROR_INVALID_PARAMETER);
    return nullptr;
}

IOverride_1_2 *Device::GetOverrideByName(const char *)
{
    fail(CC_ERROR_INVALID_PARAMETER);
    return nullptr;
}

} // namespace tally_igdmd
