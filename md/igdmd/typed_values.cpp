/* Conversions between the C API's values and codes and MDAPI's. */
#include "igdmd.h"

namespace tally_igdmd
{

TTypedValue_1_0 to_typed_value(const tally_md_typed_value &value)
{
    TTypedValue_1_0 out{};
    switch (value.type) {
    case TALLY_MD_VALUE_UINT32:
        out.ValueType = VALUE_TYPE_UINT32;
        out.ValueUInt32 = value.value.u32;
        break;
    case TALLY_MD_VALUE_FLOAT:
        out.ValueType = VALUE_TYPE_FLOAT;
        out.ValueFloat = value.value.f32;
        break;
    case TALLY_MD_VALUE_DOUBLE: /* MDAPI has no 64-bit float: its FLOAT is 32 bits */
        out.ValueType = VALUE_TYPE_FLOAT;
        out.ValueFloat = (float)value.value.f64;
        break;
    case TALLY_MD_VALUE_BOOL:
        out.ValueType = VALUE_TYPE_BOOL;
        out.ValueBool = value.value.b;
        break;
    case TALLY_MD_VALUE_CSTRING:
        out.ValueType = VALUE_TYPE_CSTRING;
        /* MDAPI's member is not const; nothing in tally writes through it */
        out.ValueCString = const_cast<char *>(value.value.cstring);
        break;
    default:
        out.ValueType = VALUE_TYPE_UINT64;
        out.ValueUInt64 = value.value.u64;
        break;
    }
    return out;
}

TMetricResultType to_result_type(tally_md_value_type type)
{
    switch (type) {
    case TALLY_MD_VALUE_UINT32: return RESULT_UINT32;
    case TALLY_MD_VALUE_BOOL: return RESULT_BOOL;
    case TALLY_MD_VALUE_FLOAT:
    case TALLY_MD_VALUE_DOUBLE: return RESULT_FLOAT;
    default: return RESULT_UINT64;
    }
}

TCompletionCode to_completion_code(tally_status status)
{
    switch (status) {
    case TALLY_OK: return CC_OK;
    case TALLY_TIMEOUT: return CC_WAIT_TIMEOUT;
    case TALLY_ERROR_INVALID_ARGUMENT: return CC_ERROR_INVALID_PARAMETER;
    case TALLY_ERROR_OUT_OF_MEMORY: return CC_ERROR_NO_MEMORY;
    case TALLY_ERROR_NOT_SUPPORTED:
    case TALLY_ERROR_UNKNOWN_BACKEND: return CC_ERROR_NOT_SUPPORTED;
    default: return CC_ERROR_GENERAL;
    }
}

/* tally's reasons (tally_md_report_reason) as the OA unit's: an interval
 * boundary is its timer; the stream's first report is the counters being
 * started (GO); a report taken on request is a software (MMIO) trigger. */
uint32_t to_report_reason(uint32_t tally_reasons)
{
    uint32_t out = REPORT_REASON_UNDEFINED;
    if (tally_reasons & TALLY_MD_REPORT_REASON_TIMER)
        out |= REPORT_REASON_INTERNAL_TIMER;
    if (tally_reasons & TALLY_MD_REPORT_REASON_STREAM_START)
        out |= REPORT_REASON_INTERNAL_GO;
    if (tally_reasons & TALLY_MD_REPORT_REASON_FLUSH)
        out |= REPORT_REASON_INTERNAL_MMIO_TRIGGER;
    return out;
}

} // namespace tally_igdmd
