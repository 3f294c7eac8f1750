/*
 * IConcurrentGroup: a unit that samples one metric set at a time into an IO
 * stream (the C API's stream on its concurrent group), the waits on it, and
 * the IO measurement information of the latest read.
 */
#include <new>
#include <unistd.h>

#include "igdmd.h"

namespace tally_igdmd
{

/* A wait runs in slices of at most this long, so that a close from another
 * thread interrupts it within one slice. */
constexpr uint32_t wait_slice_ms = 10;

static void describe_io_info(Information &info, uint32_t id, const char *symbol, const char *name,
                             const char *description, TInformationType type, const char *units)
{
    info.params = {};
    info.params.IdInSet = id;
    info.params.SymbolName = symbol;
    info.params.ShortName = name;
    info.params.GroupName = "IO stream";
    info.params.LongName = description;
    info.params.ApiMask = API_TYPE_IOSTREAM;
    info.params.InfoType = type;
    info.params.InfoUnits = units;
}

bool ConcurrentGroup::init(Device *device, tally_md_concurrent_group *group)
{
    device_ = device;
    group_ = group;
    const tally_md_concurrent_group_params *p = tally_md_concurrent_group_get_params(group);
    params_.SymbolName = p->symbol_name;
    params_.Description = p->description;
    params_.MeasurementTypeMask = p->measurement_type_mask; /* same bits as MDAPI's */
    params_.MetricSetsCount = p->metric_sets_count;
    params_.IoMeasurementInformationCount = IO_INFO_COUNT;
    params_.IoGpuContextInformationCount = 0;
    params_.StreamEventName = "";
    describe_io_info(io_info_[IO_INFO_CORE_FREQUENCY_MHZ], IO_INFO_CORE_FREQUENCY_MHZ,
                     "CoreFrequencyMHz", "Core frequency",
                     "GPU core frequency of the latest report the latest read returned.",
                     INFORMATION_TYPE_VALUE, "MHz");
    describe_io_info(io_info_[IO_INFO_REPORT_LOST], IO_INFO_REPORT_LOST, "ReportLost",
                     "Report lost",
                     "True when reports were lost before the latest read: the stream buffer was "
                     "full when one was due, or the read dropped old reports.",
                     INFORMATION_TYPE_FLAG, "");
    sets_.reset(new (std::nothrow) MetricSet[p->metric_sets_count + 1]);
    if (!sets_)
        return false;
    for (uint32_t s = 0; s < p->metric_sets_count; s++)
        if (!sets_[s].init(device, this, tally_md_concurrent_group_get_metric_set(group, s)))
            return false;
    return true;
}

void ConcurrentGroup::shut_down()
{
    std::unique_lock<std::mutex> lock(lock_);
    if (streaming_)
        close_locked(lock);
}

MetricSet *ConcurrentGroup::find(const IMetricSet_1_0 *set) const
{
    for (uint32_t s = 0; set && s < params_.MetricSetsCount; s++)
        if (static_cast<const IMetricSet_1_0 *>(&sets_[s]) == set)
            return &sets_[s];
    return nullptr;
}

bool ConcurrentGroup::streams(const MetricSet *set)
{
    std::lock_guard<std::mutex> guard(lock_);
    return streaming_ == set;
}

void ConcurrentGroup::io_information(TTypedValue_1_0 *out)
{
    out[IO_INFO_CORE_FREQUENCY_MHZ] = {};
    out[IO_INFO_CORE_FREQUENCY_MHZ].ValueType = VALUE_TYPE_UINT32;
    out[IO_INFO_CORE_FREQUENCY_MHZ].ValueUInt32 = io_mhz_.load();
    out[IO_INFO_REPORT_LOST] = {};
    out[IO_INFO_REPORT_LOST].ValueType = VALUE_TYPE_BOOL;
    out[IO_INFO_REPORT_LOST].ValueBool = io_lost_.load();
}

IMetricSet_1_13 *ConcurrentGroup::GetMetricSet(uint32_t index)
{
    if (index >= params_.MetricSetsCount) {
        device_->fail(CC_ERROR_INVALID_PARAMETER);
        return nullptr;
    }
    return &sets_[index];
}

/* --- the stream ----------------------------------------------------------------------- */

/* processId: tally samples its own process, so 0 (every context) and this
 * process's id mean the same; another process cannot be sampled from here.
 * The period (ns) and buffer size (bytes) are adjusted to what is used. */
TCompletionCode ConcurrentGroup::OpenIoStream(IMetricSet_1_0 *metricSet, uint32_t processId,
                                              uint32_t *nsTimerPeriod, uint32_t *oaBufferSize)
{
    if (processId != 0 && processId != (uint32_t)getpid())
        return device_->fail(CC_ERROR_NOT_SUPPORTED);
    MetricSet *set = find(metricSet);
    if (!set || !nsTimerPeriod || !oaBufferSize)
        return device_->fail(CC_ERROR_INVALID_PARAMETER);
    std::lock_guard<std::mutex> guard(lock_);
    if (streaming_)
        return device_->fail(CC_CONCURRENT_GROUP_LOCKED);
    tally_status s = tally_md_open_io_stream(group_, set->c_set(), nsTimerPeriod, oaBufferSize);
    if (s == TALLY_ERROR_INVALID_STATE) /* another view of the device holds the group */
        return device_->fail(CC_CONCURRENT_GROUP_LOCKED);
    if (s != TALLY_OK)
        return device_->fail(to_completion_code(s));
    streaming_ = set;
    io_mhz_ = 0;
    io_lost_ = false;
    return CC_OK;
}

/* *reportsCount: in, how many reports reportData holds; out, how many were
 * written. CC_READ_PENDING when more wait than it held. */
TCompletionCode ConcurrentGroup::ReadIoStream(uint32_t *reportsCount, char *reportData,
                                              uint32_t readFlags)
{
    if (!reportsCount || !reportData)
        return device_->fail(CC_ERROR_INVALID_PARAMETER);
    std::lock_guard<std::mutex> guard(lock_);
    if (!streaming_) {
        *reportsCount = 0;
        return device_->fail(CC_ERROR_GENERAL);
    }
    uint32_t want = *reportsCount;
    if (want == 0)
        return CC_OK;
    uint32_t flags = readFlags & IO_READ_FLAG_DROP_OLD_REPORTS
                         ? (uint32_t)TALLY_MD_IO_READ_FLAG_DROP_OLD_REPORTS
                         : 0u;
    uint32_t status_flags = 0;
    tally_status s =
        tally_md_read_io_stream(group_, reportsCount, reportData, flags, &status_flags);
    if (s != TALLY_OK)
        return device_->fail(to_completion_code(s));
    tally_device_info info;
    tally_device_get_info(tally_md_device_engine(device_->c_device()), &info);
    io_mhz_ = (uint32_t)(info.core_clock_hz / 1000000u);
    io_lost_ = (status_flags & TALLY_MD_IO_STATUS_REPORTS_LOST) != 0;
    /* A full buffer may have left reports behind: a zero-time wait says. */
    if (*reportsCount == want && tally_md_wait_for_reports(group_, 0) == TALLY_OK)
        return CC_READ_PENDING;
    return CC_OK;
}

TCompletionCode ConcurrentGroup::close_locked(std::unique_lock<std::mutex> &lock)
{
    closing_ = true;
    no_waiters_.wait(lock, [this] { return waiters_ == 0; });
    tally_status s = tally_md_close_io_stream(group_);
    streaming_ = nullptr;
    closing_ = false;
    return s == TALLY_OK ? CC_OK : device_->fail(to_completion_code(s));
}

TCompletionCode ConcurrentGroup::CloseIoStream(void)
{
    std::unique_lock<std::mutex> lock(lock_);
    if (!streaming_ || closing_)
        return device_->fail(CC_ERROR_GENERAL);
    return close_locked(lock);
}

/* CC_OK once a report is unread, CC_WAIT_TIMEOUT after `milliseconds`,
 * CC_INTERRUPTED when the stream is closed meanwhile. */
TCompletionCode ConcurrentGroup::WaitForReports(uint32_t milliseconds)
{
    {
        std::lock_guard<std::mutex> guard(lock_);
        if (!streaming_ || closing_)
            return device_->fail(CC_ERROR_GENERAL);
        waiters_++;
    }
    TCompletionCode cc = CC_WAIT_TIMEOUT;
    uint32_t left = milliseconds;
    for (;;) {
        uint32_t slice = left < wait_slice_ms ? left : wait_slice_ms;
        tally_status s = tally_md_wait_for_reports(group_, slice);
        if (s != TALLY_TIMEOUT) {
            cc = to_completion_code(s);
            break;
        }
        left -= slice;
        std::lock_guard<std::mutex> guard(lock_);
        if (closing_) {
            cc = CC_INTERRUPTED;
            break;
        }
        if (left == 0)
            break;
    }
    std::lock_guard<std::mutex> guard(lock_);
    if (--waiters_ == 0)
        no_waiters_.notify_all();
    return cc == CC_OK || cc == CC_WAIT_TIMEOUT || cc == CC_INTERRUPTED ? cc : device_->fail(cc);
}

IInformation_1_0 *ConcurrentGroup::GetIoMeasurementInformation(uint32_t index)
{
    if (index >= IO_INFO_COUNT) {
        device_->fail(CC_ERROR_INVALID_PARAMETER);
        return nullptr;
    }
    return &io_info_[index];
}

/* Context tags come with IO_READ_FLAG_GET_CONTEXT_ID_TAGS on Intel's
 * hardware; tally's reports carry the context id themselves. */
IInformation_1_0 *ConcurrentGroup::GetIoGpuContextInformation(uint32_t)
{
    device_->fail(CC_ERROR_INVALID_PARAMETER);
    return nullptr;
}

/* Reports are taken on a timer, like the OA unit's. */
TCompletionCode ConcurrentGroup::SetIoStreamSamplingType(TSamplingType type)
{
    return type == SAMPLING_TYPE_OA_TIMER ? CC_OK : device_->fail(CC_ERROR_NOT_SUPPORTED);
}

/* Flexible metric sets (1.13) are built from Intel's metric prototypes,
 * which tally does not have. */
IMetricEnumerator_1_13 *ConcurrentGroup::GetMetricEnumerator(void)
{
    device_->fail(CC_ERROR_NOT_SUPPORTED);
    return nullptr;
}

IMetricEnumerator_1_13 *ConcurrentGroup::GetMetricEnumeratorFromFile(const char *)
{
    device_->fail(CC_ERROR_NOT_SUPPORTED);
    return nullptr;
}

IMetricSet_1_13 *ConcurrentGroup::AddMetricSet(const char *, const char *)
{
    device_->fail(CC_ERROR_NOT_SUPPORTED);
    return nullptr;
}

TCompletionCode ConcurrentGroup::RemoveMetricSet(IMetricSet_1_13 *metricSet)
{
    /* None was added, so no set can be removed. */
    return device_->fail(metricSet ? CC_ERROR_NOT_SUPPORTED : CC_ERROR_INVALID_PARAMETER);
}

} // namespace tally_igdmd
