/*
 * IMetricSet, IMetric and IInformation: a metric set of the C API with its
 * metrics and information items in MDAPI's terms, API filtering, and the
 * calculation of raw reports into typed values (by the C API: this file only
 * converts the values and checks the buffers as MDAPI defines them).
 */
#include <float.h>
#include <new>

#include "igdmd.h"

namespace tally_igdmd
{

/* Every metric is useful at any level of a frame: a stream samples them all. */
constexpr uint32_t usage_flags =
    USAGE_FLAG_SYSTEM | USAGE_FLAG_FRAME | USAGE_FLAG_BATCH | USAGE_FLAG_DRAW;

static TMetricType to_metric_type(tally_md_metric_type type)
{
    return type < TALLY_MD_METRIC_RAW + 1 ? (TMetricType)type : METRIC_TYPE_RAW;
}

/* The catalogue's maximum is a real bound (100 for a percentage) unless it
 * is merely the storage's largest value. */
static bool is_bound(const tally_md_typed_value &max)
{
    switch (max.type) {
    case TALLY_MD_VALUE_UINT32: return max.value.u32 != UINT32_MAX;
    case TALLY_MD_VALUE_UINT64: return max.value.u64 != UINT64_MAX;
    case TALLY_MD_VALUE_FLOAT: return max.value.f32 != FLT_MAX;
    case TALLY_MD_VALUE_DOUBLE: return max.value.f64 != DBL_MAX;
    default: return false;
    }
}

static void describe_metric(const tally_md_metric_params *m, uint32_t api_mask, Metric &out)
{
    TMetricParams_1_13 &p = out.params;
    p = {};
    p.IdInSet = m->id_in_set;
    p.GroupId = 0;
    p.SymbolName = m->symbol_name;
    p.ShortName = m->short_name;
    p.GroupName = m->group_name;
    p.LongName = m->long_name;
    p.DxToOglAlias = ""; /* symbols are already MDAPI's; tally lists other APIs' names */
    p.UsageFlagsMask = usage_flags;
    p.ApiMask = api_mask;
    p.ResultType = to_result_type(m->result_type);
    p.MetricResultUnits = m->units;
    p.MetricType = to_metric_type(m->metric_type);
    p.HwUnitType = HW_UNIT_GPU;
    /* Raw counters are 40-bit deltas between reports; derived metrics are
     * calculated by tally (no equations are published). */
    p.DeltaFunction.FunctionType = m->derived ? DELTA_FUNCTION_NULL : DELTA_N_BITS;
    p.DeltaFunction.BitsCount = m->derived ? 0 : TALLY_MD_RAW_COUNTER_BITS;
    /* A query measures its own command, whatever its kind. */
    p.QueryModeMask = api_mask & ~API_TYPE_IOSTREAM
                          ? QUERY_MODE_MASK_RENDER | QUERY_MODE_MASK_COMPUTE
                          : QUERY_MODE_MASK_NONE;
    out.bounded = is_bound(m->max_value);
    out.max_value = to_typed_value(m->max_value);
}

static void describe_information(const tally_md_information_params *i, uint32_t api_mask,
                                 Information &out)
{
    TInformationParams_1_0 &p = out.params;
    p = {};
    p.IdInSet = i->id_in_set;
    p.SymbolName = i->symbol_name;
    p.ShortName = i->short_name;
    p.GroupName = "Report meta data";
    p.LongName = i->long_name;
    p.ApiMask = api_mask;
    p.InfoType = (TInformationType)i->info_type; /* the same values */
    p.InfoUnits = i->units;
}

bool MetricSet::init(Device *device, ConcurrentGroup *group, tally_md_metric_set *set)
{
    device_ = device;
    group_ = group;
    set_ = set;
    const tally_md_metric_set_params *p = tally_md_metric_set_get_params(set);
    metrics_.reset(new (std::nothrow) Metric[p->metrics_count + 1]);
    information_.reset(new (std::nothrow) Information[p->information_count + 1]);
    if (!metrics_ || !information_)
        return false;
    for (uint32_t m = 0; m < p->metrics_count; m++)
        describe_metric(tally_md_metric_set_get_metric(set, m), p->api_mask, metrics_[m]);
    for (uint32_t i = 0; i < p->information_count; i++)
        describe_information(tally_md_metric_set_get_information(set, i), p->api_mask,
                             information_[i]);
    all_.SymbolName = p->symbol_name;
    all_.ShortName = p->short_name;
    all_.ApiMask = p->api_mask; /* tally_md_api bits are MDAPI's */
    all_.CategoryMask = GPU_GENERIC;
    all_.RawReportSize = p->raw_report_size;
    all_.QueryReportSize = p->query_report_size;
    all_.MetricsCount = p->metrics_count;
    all_.InformationCount = p->information_count;
    all_.ComplementarySetsCount = 0;
    all_.ApiSpecificId.D3D1XDevDependentName = "";
    /* glGetPerfQueryIdByNameINTEL's name for it: the set's symbol */
    all_.ApiSpecificId.OGLQueryIntelName = p->query_id ? p->symbol_name : "";
    /* The query doors' numbers for the set: the GL shim's
     * GL_INTEL_performance_query id, and the configuration the CL shim's
     * clCreatePerfCountersCommandQueueINTEL takes (what Intel's
     * opencl-intercept-layer passes it). */
    all_.ApiSpecificId.OGLQueryIntelId = p->query_id;
    all_.ApiSpecificId.OCL = p->query_id;
    all_.AvailabilityEquation = ""; /* always available */
    none_ = all_;
    none_.MetricsCount = 0;
    none_.InformationCount = 0;
    return true;
}

TMetricSetParams_1_11 *MetricSet::GetParams(void)
{
    return shown_.load();
}

IMetric_1_13 *MetricSet::GetMetric(uint32_t index)
{
    if (index >= GetParams()->MetricsCount) {
        device_->fail(CC_ERROR_INVALID_PARAMETER);
        return nullptr;
    }
    return &metrics_[index];
}

IInformation_1_0 *MetricSet::GetInformation(uint32_t index)
{
    if (index >= GetParams()->InformationCount) {
        device_->fail(CC_ERROR_INVALID_PARAMETER);
        return nullptr;
    }
    return &information_[index];
}

/* One pass collects a whole set: there is no complementary set. */
IMetricSet_1_5 *MetricSet::GetComplementaryMetricSet(uint32_t)
{
    device_->fail(CC_ERROR_INVALID_PARAMETER);
    return nullptr;
}

/* Activation makes a set's configuration available to the graphics APIs'
 * queries; tally's sets are always available (GL_INTEL_performance_query). */
TCompletionCode MetricSet::Activate(void)
{
    return CC_OK;
}

TCompletionCode MetricSet::Deactivate(void)
{
    return CC_OK;
}

/* Custom metrics are defined by Intel's equations, which tally does not
 * evaluate; flexible sets likewise. */
IMetric_1_0 *MetricSet::AddCustomMetric(const char *, const char *, const char *, const char *,
                                        const char *, uint32_t, uint32_t, TMetricResultType,
                                        const char *, TMetricType, int64_t, int64_t, THwUnitType,
                                        const char *, const char *, const char *, const char *,
                                        const char *, const char *)
{
    device_->fail(CC_ERROR_NOT_SUPPORTED);
    return nullptr;
}

IMetric_1_13 *MetricSet::AddCustomMetric(const char *, const char *, const char *, const char *,
                                         const char *, uint32_t, uint32_t, TMetricResultType,
                                         const char *, TMetricType, int64_t, int64_t, THwUnitType,
                                         const char *, const char *, const char *, const char *,
                                         const char *, const char *, uint32_t)
{
    device_->fail(CC_ERROR_NOT_SUPPORTED);
    return nullptr;
}

TCompletionCode MetricSet::Open()
{
    return device_->fail(CC_ERROR_NOT_SUPPORTED);
}

TCompletionCode MetricSet::AddMetric(IMetricPrototype_1_13 *)
{
    return device_->fail(CC_ERROR_NOT_SUPPORTED);
}

TCompletionCode MetricSet::RemoveMetric(IMetricPrototype_1_13 *)
{
    return device_->fail(CC_ERROR_NOT_SUPPORTED);
}

TCompletionCode MetricSet::Finalize()
{
    return device_->fail(CC_ERROR_NOT_SUPPORTED);
}

/* 0 or API_TYPE_ALL shows everything unfiltered; a mask shows what that API
 * can measure: every metric when the set's ApiMask names one of its APIs
 * (IOSTREAM: every set; OCL and OGL: sets a query door serves), none
 * otherwise. Stream and query APIs may not be mixed, and a set being
 * streamed keeps its filter. Calculation needs a filter, and the filter
 * says which reports it gets: stream reports for IOSTREAM, query reports
 * (QueryReportSize each) for a query API, as in Intel's library. */
TCompletionCode MetricSet::SetApiFiltering(uint32_t apiMask)
{
    const uint32_t stream = API_TYPE_IOSTREAM | API_TYPE_BBSTREAM;
    if (apiMask != API_TYPE_ALL && (apiMask & stream) && (apiMask & ~stream))
        return device_->fail(CC_ERROR_INVALID_PARAMETER);
    if (group_->streams(this))
        return device_->fail(CC_ERROR_GENERAL);
    bool filter = apiMask != 0 && apiMask != API_TYPE_ALL;
    shown_.store(!filter || (apiMask & all_.ApiMask) ? &all_ : &none_);
    query_.store(filter && !(apiMask & stream));
    filtered_.store(filter);
    return CC_OK;
}

TCompletionCode MetricSet::CalculateMetrics(const uint8_t *rawData, uint32_t rawDataSize,
                                            TTypedValue_1_0 *out, uint32_t outSize,
                                            uint32_t *outReportCount, bool enableContextFiltering)
{
    if (enableContextFiltering)
        return device_->fail(CC_ERROR_NOT_SUPPORTED);
    return CalculateMetrics(rawData, rawDataSize, out, outSize, outReportCount, nullptr, 0);
}

void MetricSet::convert_row(const tally_md_typed_value *row, TTypedValue_1_0 *out,
                            TTypedValue_1_0 *max_out) const
{
    uint32_t metrics = all_.MetricsCount;
    for (uint32_t v = 0; v < metrics + all_.InformationCount; v++)
        out[v] = to_typed_value(row[v]);
    TTypedValue_1_0 &reason = out[metrics + TALLY_MD_INFO_REPORT_REASON];
    reason.ValueUInt32 = to_report_reason(reason.ValueUInt32);
    /* A metric without a bound is its own maximum, as in Intel's library. */
    for (uint32_t m = 0; max_out && m < metrics; m++)
        max_out[m] = metrics_[m].bounded ? metrics_[m].max_value : out[m];
}

/* Sizes are in bytes. Consecutive raw reports of one stream become one
 * calculated report per pair, each MetricsCount metric values followed by
 * InformationCount information values; outMaxValues (may be null) receives
 * MetricsCount values per calculated report. As in Intel's library, out
 * must have room for as many reports as rawData holds. */
TCompletionCode MetricSet::CalculateMetrics(const uint8_t *rawData, uint32_t rawDataSize,
                                            TTypedValue_1_0 *out, uint32_t outSize,
                                            uint32_t *outReportCount, TTypedValue_1_0 *outMaxValues,
                                            uint32_t outMaxValuesSize)
{
    if (!rawData || !out)
        return device_->fail(CC_ERROR_INVALID_PARAMETER);
    if (outReportCount)
        *outReportCount = 0;
    if (rawDataSize == 0)
        return CC_OK;
    if (!outMaxValues || !outMaxValuesSize) {
        outMaxValues = nullptr;
        outMaxValuesSize = 0;
    }
    if (!filtered_.load())
        return device_->fail(CC_ERROR_GENERAL); /* SetApiFiltering first */
    const TMetricSetParams_1_11 *shown = GetParams();
    uint32_t values = shown->MetricsCount + shown->InformationCount;
    if (values == 0)
        return CC_OK; /* filtered to an API the set does not serve */
    bool query = query_.load();
    uint32_t raw_size = query ? shown->QueryReportSize : shown->RawReportSize;
    uint32_t row_bytes = values * (uint32_t)sizeof(TTypedValue_1_0);
    uint32_t max_bytes = shown->MetricsCount * (uint32_t)sizeof(TTypedValue_1_0);
    /* A stream's first report only opens an interval; a query report is
     * a whole interval. */
    uint32_t reports = rawDataSize / raw_size;
    if (rawDataSize % raw_size || outSize % row_bytes || reports > outSize / row_bytes ||
        (outMaxValues && reports > outMaxValuesSize / max_bytes))
        return device_->fail(CC_ERROR_INVALID_PARAMETER);
    std::unique_ptr<tally_md_typed_value[]> rows(
        new (std::nothrow) tally_md_typed_value[(size_t)reports * values]);
    if (!rows)
        return device_->fail(CC_ERROR_NO_MEMORY);
    uint32_t count = 0;
    tally_status s = query
                         ? tally_md_calculate_query_metrics(set_, rawData, rawDataSize, rows.get(),
                                                            (size_t)reports * values, &count)
                         : tally_md_calculate_metrics(set_, rawData, rawDataSize, rows.get(),
                                                      (size_t)reports * values, &count);
    if (s != TALLY_OK) /* reports of another set, or not reports at all */
        return device_->fail(to_completion_code(s));
    for (uint32_t r = 0; r < count; r++)
        convert_row(&rows[(size_t)r * values], out + (size_t)r * values,
                    outMaxValues ? outMaxValues + (size_t)r * shown->MetricsCount : nullptr);
    if (outReportCount)
        *outReportCount = count;
    return CC_OK;
}

/* outSize is compared with the number of items, as Intel's library does
 * (a size in bytes is larger, so passes too). */
TCompletionCode MetricSet::CalculateIoMeasurementInformation(TTypedValue_1_0 *out, uint32_t outSize)
{
    if (!out || outSize < IO_INFO_COUNT)
        return device_->fail(CC_ERROR_INVALID_PARAMETER);
    group_->io_information(out);
    return CC_OK;
}

} // namespace tally_igdmd
