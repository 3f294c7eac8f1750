/*
 * Query reports: one command's begin-to-end counters in one report, as the
 * query doors (the CL shim's perf-counters queues) hand them out, and their
 * calculation into the same metric values a stream interval of the same
 * deltas gives (the layout is in md_internal.h).
 */
#include <stdlib.h>
#include <string.h>

#include "md_internal.h"

tally_md_metric_set *tally_md_device_find_query_set(tally_md_device *md, uint32_t query_id)
{
    if (!md || query_id == 0 || query_id > md->set_count)
        return NULL;
    tally_md_metric_set *set = &md->sets[query_id - 1];
    return set->params.query_id == query_id ? set : NULL;
}

tally_status tally_md_encode_query_report(const tally_md_metric_set *set, const uint64_t *raw,
                                          const tally_slot_info *info, uint32_t query_id,
                                          uint32_t core_mhz, void *report, size_t report_size)
{
    if (!set || !raw || !info || !report || set->params.query_report_size == 0 ||
        report_size != set->params.query_report_size)
        return TALLY_ERROR_INVALID_ARGUMENT;
    uint8_t *p = report;
    uint32_t n = set->params.raw_counter_count;
    memset(p, 0, report_size);
    put_u32(p + 0x00, query_id);
    put_u32(p + 0x04, info->context_id ? MD_CONTEXT_VALID : 0);
    put_u32(p + 0x08, info->context_id);
    put_u32(p + 0x0c, core_mhz);
    put_u64(p + 0x10, info->begin_ns);
    put_u64(p + 0x18, info->end_ns);
    put_u16(p + 0x20, (uint16_t)set->index);
    put_u16(p + 0x22, (uint16_t)n);
    put_u32(p + 0x24, MD_QUERY_TAG);
    for (uint32_t k = 0; k < n; k++)
        put_u64(p + MD_QUERY_HEADER_SIZE + 8 * k, raw[set->raw_slots[k]]);
    return TALLY_OK;
}

static bool is_query_report(const tally_md_metric_set *set, const uint8_t *p)
{
    return get_u32(p + 0x24) == MD_QUERY_TAG && get_u16(p + 0x20) == set->index &&
           get_u16(p + 0x22) == set->params.raw_counter_count;
}

static tally_md_typed_value u32_value(uint32_t v)
{
    return (tally_md_typed_value){TALLY_MD_VALUE_UINT32, {.u32 = v}};
}

static tally_md_typed_value flag(bool v)
{
    return (tally_md_typed_value){TALLY_MD_VALUE_BOOL, {.b = v}};
}

/* A query measures its own context's command alone: nothing was lost and
 * no other context ran within it; the frequency is one reading. */
static void query_information(const uint8_t *p, tally_md_typed_value *out)
{
    uint32_t reason = get_u32(p + 0x04);
    out[TALLY_MD_INFO_QUERY_BEGIN_TIME] =
        (tally_md_typed_value){TALLY_MD_VALUE_UINT64, {.u64 = get_u64(p + 0x10)}};
    out[TALLY_MD_INFO_QUERY_END_TIME] =
        (tally_md_typed_value){TALLY_MD_VALUE_UINT64, {.u64 = get_u64(p + 0x18)}};
    out[TALLY_MD_INFO_REPORT_REASON] = u32_value(reason & ~MD_CONTEXT_VALID);
    out[TALLY_MD_INFO_REPORT_ID] = u32_value(get_u32(p + 0x00));
    out[TALLY_MD_INFO_CONTEXT_ID_VALID] = flag((reason & MD_CONTEXT_VALID) != 0);
    out[TALLY_MD_INFO_CONTEXT_ID] = u32_value(get_u32(p + 0x08));
    out[TALLY_MD_INFO_CORE_FREQUENCY_MHZ] = u32_value(get_u32(p + 0x0c));
    out[TALLY_MD_INFO_CORE_FREQUENCY_CHANGED] = flag(false);
    out[TALLY_MD_INFO_QUERY_SPLIT_OCCURRED] = flag(false);
    out[TALLY_MD_INFO_REPORT_LOST] = flag(false);
}

tally_status tally_md_calculate_query_metrics(const tally_md_metric_set *set, const void *reports,
                                              size_t size, tally_md_typed_value *out,
                                              size_t out_size, uint32_t *out_report_count)
{
    if (out_report_count)
        *out_report_count = 0;
    if (!set || (size && !reports) || !out_report_count || (out_size && !out))
        return TALLY_ERROR_INVALID_ARGUMENT;
    size_t report_size = set->params.query_report_size;
    if (report_size == 0 || size % report_size)
        return TALLY_ERROR_INVALID_ARGUMENT;
    size_t count = size / report_size;
    const uint8_t *bytes = reports;
    for (size_t i = 0; i < count; i++)
        if (!is_query_report(set, bytes + i * report_size))
            return TALLY_ERROR_INVALID_ARGUMENT;
    uint64_t *deltas = calloc(set->device->raw_count + 1, sizeof(uint64_t));
    if (!deltas)
        return TALLY_ERROR_OUT_OF_MEMORY;
    size_t values = (size_t)set->params.metrics_count + set->params.information_count;
    uint32_t n = set->params.raw_counter_count, done = 0;
    tally_status status = TALLY_OK;
    for (size_t i = 0; i < count; i++, done++) {
        if ((size_t)(done + 1) * values > out_size) {
            status = TALLY_INCOMPLETE;
            break;
        }
        const uint8_t *p = bytes + i * report_size;
        for (uint32_t k = 0; k < n; k++)
            deltas[set->raw_slots[k]] = get_u64(p + MD_QUERY_HEADER_SIZE + 8 * k);
        tally_md_typed_value *row = out + (size_t)done * values;
        md_evaluate_metrics(set, deltas, row);
        query_information(p, row + set->params.metrics_count);
    }
    free(deltas);
    *out_report_count = done;
    return status;
}
