/*
 * libigdmd.so: Intel's Metrics Discovery interface over libtally's public
 * Metrics-Discovery C API (tally/metrics_discovery.h). Each class below is
 * one MDAPI interface at its newest version (which holds every older version
 * as the prefix of its vtable) and owns the translation of its calls into the
 * C API and back; no counter is computed here.
 *
 *   AdapterGroup   process-wide, counted by OpenAdapterGroup/Close
 *   Adapter        the one adapter: tally's shared device
 *   Device         IMetricsDevice, counted by OpenMetricsDevice/Close
 *   ConcurrentGroup, MetricSet, Metric, Information: live as long as the Device
 *
 * Every object belongs to one Device (or to the group); they are built when
 * the device opens and freed when it closes, as Intel's are. Failed calls
 * record their completion code for IMetricsDevice::GetLastError.
 */
#ifndef TALLY_IGDMD_H
#define TALLY_IGDMD_H

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "mdapi_abi.h"
#include "tally/metrics_discovery.h"
#include "tally/tally.h"

namespace tally_igdmd
{
using namespace MetricsDiscovery;

/* The interface version implemented: every interface up to 1.13. */
constexpr uint32_t api_major = MD_API_MAJOR_NUMBER_1;
constexpr uint32_t api_minor = MD_API_MINOR_NUMBER_13;
constexpr uint32_t api_build = MD_API_BUILD_NUMBER_CURRENT;

/* typed_values.cpp: conversions between the C API's values and MDAPI's. */
TTypedValue_1_0 to_typed_value(const tally_md_typed_value &value);
TMetricResultType to_result_type(tally_md_value_type type);
TCompletionCode to_completion_code(tally_status status);
/* tally's report reason mask in MDAPI's TReportReason bits. */
uint32_t to_report_reason(uint32_t tally_reasons);

class Device;
class ConcurrentGroup;

class Information final : public IInformation_1_0
{
  public:
    TInformationParams_1_0 params{};
    TInformationParams_1_0 *GetParams() override { return &params; }
};

class Metric final : public IMetric_1_13
{
  public:
    TMetricParams_1_13 params{};
    bool bounded = false;           /* the catalogue gives a maximum */
    TTypedValue_1_0 max_value = {}; /* it, when bounded */
    TMetricParams_1_13 *GetParams() override { return &params; }
};

class MetricSet final : public IMetricSet_1_13
{
  public:
    bool init(Device *device, ConcurrentGroup *group, tally_md_metric_set *set);
    tally_md_metric_set *c_set() const { return set_; }
    ConcurrentGroup *group() const { return group_; }

    TMetricSetParams_1_11 *GetParams(void) override;
    IMetric_1_13 *GetMetric(uint32_t index) override;
    IInformation_1_0 *GetInformation(uint32_t index) override;
    IMetricSet_1_5 *GetComplementaryMetricSet(uint32_t index) override;
    TCompletionCode Activate(void) override;
    TCompletionCode Deactivate(void) override;
    IMetric_1_0 *AddCustomMetric(const char *, const char *, const char *, const char *,
                                 const char *, uint32_t, uint32_t, TMetricResultType, const char *,
                                 TMetricType, int64_t, int64_t, THwUnitType, const char *,
                                 const char *, const char *, const char *, const char *,
                                 const char *) override;
    TCompletionCode SetApiFiltering(uint32_t apiMask) override;
    TCompletionCode CalculateMetrics(const uint8_t *rawData, uint32_t rawDataSize,
                                     TTypedValue_1_0 *out, uint32_t outSize,
                                     uint32_t *outReportCount,
                                     bool enableContextFiltering) override;
    TCompletionCode CalculateIoMeasurementInformation(TTypedValue_1_0 *out,
                                                      uint32_t outSize) override;
    TCompletionCode CalculateMetrics(const uint8_t *rawData, uint32_t rawDataSize,
                                     TTypedValue_1_0 *out, uint32_t outSize,
                                     uint32_t *outReportCount, TTypedValue_1_0 *outMaxValues,
                                     uint32_t outMaxValuesSize) override;
    TCompletionCode Open() override;
    TCompletionCode AddMetric(IMetricPrototype_1_13 *metricPrototype) override;
    TCompletionCode RemoveMetric(IMetricPrototype_1_13 *metricPrototype) override;
    TCompletionCode Finalize() override;
    IMetric_1_13 *AddCustomMetric(const char *, const char *, const char *, const char *,
                                  const char *, uint32_t, uint32_t, TMetricResultType, const char *,
                                  TMetricType, int64_t, int64_t, THwUnitType, const char *,
                                  const char *, const char *, const char *, const char *,
                                  const char *, uint32_t) override;

  private:
    void convert_row(const tally_md_typed_value *row, TTypedValue_1_0 *out,
                     TTypedValue_1_0 *max_out) const;

    Device *device_ = nullptr;
    ConcurrentGroup *group_ = nullptr;
    tally_md_metric_set *set_ = nullptr;
    /* SetApiFiltering swaps what GetParams shows: every metric (no filter,
     * or a filter naming an API of the set's ApiMask) or none; query_: the
     * filter names query APIs, so CalculateMetrics takes query reports. */
    TMetricSetParams_1_11 all_{};
    TMetricSetParams_1_11 none_{};
    std::atomic<TMetricSetParams_1_11 *> shown_{&all_};
    std::atomic<bool> filtered_{false};
    std::atomic<bool> query_{false};
    std::unique_ptr<Metric[]> metrics_;
    std::unique_ptr<Information[]> information_;
};

/* IO measurement information: what the latest ReadIoStream saw. */
enum { IO_INFO_CORE_FREQUENCY_MHZ, IO_INFO_REPORT_LOST, IO_INFO_COUNT };

class ConcurrentGroup final : public IConcurrentGroup_1_13
{
  public:
    bool init(Device *device, tally_md_concurrent_group *group);
    /* Closes the stream if one is open (the device is closing). */
    void shut_down();
    /* The set of this group that `set` points to, or NULL. */
    MetricSet *find(const IMetricSet_1_0 *set) const;
    bool streams(const MetricSet *set);
    void io_information(TTypedValue_1_0 *out);

    TConcurrentGroupParams_1_13 *GetParams(void) override { return &params_; }
    IMetricSet_1_13 *GetMetricSet(uint32_t index) override;
    TCompletionCode OpenIoStream(IMetricSet_1_0 *metricSet, uint32_t processId,
                                 uint32_t *nsTimerPeriod, uint32_t *oaBufferSize) override;
    TCompletionCode ReadIoStream(uint32_t *reportsCount, char *reportData,
                                 uint32_t readFlags) override;
    TCompletionCode CloseIoStream(void) override;
    TCompletionCode WaitForReports(uint32_t milliseconds) override;
    IInformation_1_0 *GetIoMeasurementInformation(uint32_t index) override;
    IInformation_1_0 *GetIoGpuContextInformation(uint32_t index) override;
    TCompletionCode SetIoStreamSamplingType(TSamplingType type) override;
    IMetricEnumerator_1_13 *GetMetricEnumerator(void) override;
    IMetricEnumerator_1_13 *GetMetricEnumeratorFromFile(const char *fileName) override;
    IMetricSet_1_13 *AddMetricSet(const char *symbolName, const char *shortName) override;
    TCompletionCode RemoveMetricSet(IMetricSet_1_13 *metricSet) override;

  private:
    TCompletionCode close_locked(std::unique_lock<std::mutex> &lock);

    Device *device_ = nullptr;
    tally_md_concurrent_group *group_ = nullptr;
    TConcurrentGroupParams_1_13 params_{};
    std::unique_ptr<MetricSet[]> sets_;
    Information io_info_[IO_INFO_COUNT];

    /* The stream's state. A wait runs outside the lock in short slices, so
     * a close (from any thread) marks `closing_`, interrupts the waits and
     * frees the C stream only once no wait is inside it. */
    std::mutex lock_;
    std::condition_variable no_waiters_;
    MetricSet *streaming_ = nullptr;
    bool closing_ = false;
    uint32_t waiters_ = 0;
    std::atomic<uint32_t> io_mhz_{0};
    std::atomic<bool> io_lost_{false};
};

class Device final : public IMetricsDevice_1_13
{
  public:
    /* Opens the Metrics-Discovery view of tally's shared device. */
    static TCompletionCode open(Device **out);
    ~Device() override;

    tally_md_device *c_device() const { return md_; }
    /* Records a failed call's code for GetLastError and returns it. */
    TCompletionCode fail(TCompletionCode code)
    {
        last_error_.store(code, std::memory_order_relaxed);
        return code;
    }

    TMetricsDeviceParams_1_2 *GetParams(void) override { return &params_; }
    IConcurrentGroup_1_13 *GetConcurrentGroup(uint32_t index) override;
    TGlobalSymbol_1_0 *GetGlobalSymbol(uint32_t index) override;
    TTypedValue_1_0 *GetGlobalSymbolValueByName(const char *name) override;
    TCompletionCode GetLastError(void) override;
    TCompletionCode GetGpuCpuTimestamps(uint64_t *gpuTimestampNs, uint64_t *cpuTimestampNs,
                                        uint32_t *cpuId) override;
    IOverride_1_2 *GetOverride(uint32_t index) override;
    IOverride_1_2 *GetOverrideByName(const char *symbolName) override;
    TCompletionCode GetGpuCpuTimestamps(uint64_t *gpuTimestampNs, uint64_t *cpuTimestampNs,
                                        uint32_t *cpuId, uint64_t *correlationIndicatorNs) override;

  private:
    Device() = default;
    bool build_symbols();

    tally_md_device *md_ = nullptr;
    TMetricsDeviceParams_1_2 params_{};
    std::unique_ptr<TGlobalSymbol_1_0[]> symbols_;
    std::unique_ptr<ConcurrentGroup[]> groups_;
    std::atomic<TCompletionCode> last_error_{CC_OK};
};

class Adapter final : public IAdapter_1_13
{
  public:
    explicit Adapter(const char *name);
    ~Adapter() override;
    bool has_device() const { return device_ != nullptr; }

    const TAdapterParams_1_9 *GetParams(void) const override { return &params_; }
    TCompletionCode Reset() override;
    TCompletionCode OpenMetricsDevice(IMetricsDevice_1_5 **metricsDevice) override;
    TCompletionCode OpenMetricsDeviceFromFile(const char *fileName, void *openParams,
                                              IMetricsDevice_1_5 **metricsDevice) override;
    TCompletionCode CloseMetricsDevice(IMetricsDevice_1_5 *metricsDevice) override;
    TCompletionCode SaveMetricsDeviceToFile(const char *fileName, void *saveParams,
                                            IMetricsDevice_1_5 *metricsDevice) override;
    const TSubDeviceParams_1_9 *GetSubDeviceParams(const uint32_t subDeviceIndex) override;
    TCompletionCode OpenMetricsSubDevice(const uint32_t subDeviceIndex,
                                         IMetricsDevice_1_5 **metricsDevice) override;
    TCompletionCode OpenMetricsSubDeviceFromFile(const uint32_t subDeviceIndex,
                                                 const char *fileName, void *openParams,
                                                 IMetricsDevice_1_5 **metricsDevice) override;
    TCompletionCode OpenMetricsDevice(IMetricsDevice_1_10 **metricsDevice) override;
    TCompletionCode OpenMetricsDeviceFromFile(const char *fileName, void *openParams,
                                              IMetricsDevice_1_10 **metricsDevice) override;
    TCompletionCode OpenMetricsSubDevice(const uint32_t subDeviceIndex,
                                         IMetricsDevice_1_10 **metricsDevice) override;
    TCompletionCode OpenMetricsSubDeviceFromFile(const uint32_t subDeviceIndex,
                                                 const char *fileName, void *openParams,
                                                 IMetricsDevice_1_10 **metricsDevice) override;
    TCompletionCode OpenMetricsDevice(IMetricsDevice_1_11 **metricsDevice) override;
    TCompletionCode OpenMetricsDeviceFromFile(const char *fileName, void *openParams,
                                              IMetricsDevice_1_11 **metricsDevice) override;
    TCompletionCode OpenMetricsSubDevice(const uint32_t subDeviceIndex,
                                         IMetricsDevice_1_11 **metricsDevice) override;
    TCompletionCode OpenMetricsSubDeviceFromFile(const uint32_t subDeviceIndex,
                                                 const char *fileName, void *openParams,
                                                 IMetricsDevice_1_11 **metricsDevice) override;
    TCompletionCode SaveMetricsDeviceToFile(const char *fileName, void *saveParams,
                                            IMetricsDevice_1_11 *metricsDevice,
                                            const uint32_t minMajorApiVersion,
                                            const uint32_t minMinorApiVersion) override;
    TCompletionCode OpenMetricsDevice(IMetricsDevice_1_13 **metricsDevice) override;
    TCompletionCode OpenMetricsDeviceFromFile(const char *fileName, void *openParams,
                                              IMetricsDevice_1_13 **metricsDevice) override;
    TCompletionCode OpenMetricsSubDevice(const uint32_t subDeviceIndex,
                                         IMetricsDevice_1_13 **metricsDevice) override;
    TCompletionCode OpenMetricsSubDeviceFromFile(const uint32_t subDeviceIndex,
                                                 const char *fileName, void *openParams,
                                                 IMetricsDevice_1_13 **metricsDevice) override;
    const TEngineParams_1_13 *GetEngineParams(const uint32_t subDeviceIndex,
                                              const uint32_t engineIndex) override;

  private:
    /* Every overload of the same call ends here. */
    TCompletionCode open_device(Device **out);

    TAdapterParams_1_9 params_{};
    char name_[128] = {0};
    Device *device_ = nullptr; /* guarded by the group's lock */
    uint32_t device_refs_ = 0;
};

class AdapterGroup final : public IAdapterGroup_1_13
{
  public:
    /* OpenAdapterGroup: the one group, created or counted once more. */
    static TCompletionCode open(AdapterGroup **out);
    /* The group if one is open (the legacy entry points use it). */
    static AdapterGroup *current();
    /* Guards the group and the adapter's device (open and close only). */
    static std::mutex &lock();

    Adapter *adapter() { return adapter_.get(); }

    const TAdapterGroupParams_1_6 *GetParams(void) const override { return &params_; }
    IAdapter_1_13 *GetAdapter(uint32_t index) override;
    TCompletionCode Close() override;

  private:
    AdapterGroup() = default;
    ~AdapterGroup() override;

    TAdapterGroupParams_1_6 params_{};
    std::unique_ptr<Adapter> adapter_;
    tally_device *engine_ = nullptr; /* the shared device, held while the group is open */
};

} // namespace tally_igdmd

#endif
