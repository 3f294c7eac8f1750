/*
 * Raw reports: writing one from a sampler's sample, and calculating typed
 * metric and information values from consecutive ones (the layout is in
 * md_internal.h and docs/metrics-discovery.md). Calculation is a pure
 * function of the metric set and the bytes: counters are 40 bits wide, like
 * the OA unit's A counters, and deltas are taken modulo 2^40.
 */
#include <stdlib.h>
#include <string.h>

#include "md_internal.h"

void md_encode_report(const tally_md_metric_set *set, const tally_sample *header,
                      const uint64_t *raw, uint32_t reason_mask, void *report)
{
    uint8_t *p = report;
    uint32_t n = set->params.raw_counter_count;
    memset(p, 0, set->params.raw_report_size);
    put_u32(p + 0x00, (uint32_t)header->sequence);
    put_u32(p + 0x04, reason_mask | (header->context_id ? MD_CONTEXT_VALID : 0));
    put_u32(p + 0x08, header->context_id);
    put_u32(p + 0x0c, (uint32_t)(header->core_frequency_hz / 1000000u));
    put_u64(p + 0x10, header->timestamp_ns);
    put_u32(p + 0x18, (uint32_t)header->context_switches);
    put_u16(p + 0x1c, (uint16_t)set->index);
    put_u16(p + 0x1e, (uint16_t)n);
    for (uint32_t k = 0; k < n; k++) {
        uint64_t value = raw[set->raw_slots[k]];
        put_u32(p + MD_HEADER_SIZE + 4 * k, (uint32_t)value);
        p[MD_HEADER_SIZE + 4 * n + k] = (uint8_t)(value >> 32);
    }
}

/* --- calculation ------------------------------------------------------------------ */

struct decoded {
    uint32_t id, reason, context_id, mhz, switches;
    bool context_valid;
    uint64_t timestamp_ns;
};

static bool decode_header(const tally_md_metric_set *set, const uint8_t *p, struct decoded *out)
{
    if (get_u16(p + 0x1c) != set->index || get_u16(p + 0x1e) != set->params.raw_counter_count)
        return false;
    uint32_t reason = get_u32(p + 0x04);
    *out = (struct decoded){
        .id = get_u32(p + 0x00),
        .reason = reason & ~MD_CONTEXT_VALID,
        .context_valid = (reason & MD_CONTEXT_VALID) != 0,
        .context_id = get_u32(p + 0x08),
        .mhz = get_u32(p + 0x0c),
        .timestamp_ns = get_u64(p + 0x10),
        .switches = get_u32(p + 0x18),
    };
    return true;
}

static uint64_t counter_at(const uint8_t *p, uint32_t n, uint32_t k)
{
    return (uint64_t)get_u32(p + MD_HEADER_SIZE + 4 * k) | (uint64_t)p[MD_HEADER_SIZE + 4 * n + k]
                                                               << 32;
}

static tally_md_typed_value typed(tally_md_value_type type, tally_value v)
{
    tally_md_typed_value out = {type, {.u64 = 0}};
    switch (type) {
    case TALLY_MD_VALUE_UINT32: out.value.u32 = (uint32_t)v.u64; break;
    case TALLY_MD_VALUE_FLOAT: out.value.f32 = (float)v.f64; break;
    case TALLY_MD_VALUE_DOUBLE: out.value.f64 = v.f64; break;
    default: out.value.u64 = v.u64; break;
    }
    return out;
}

void md_evaluate_metrics(const tally_md_metric_set *set, const uint64_t *deltas,
                         tally_md_typed_value *out)
{
    const struct tally_md_device *md = set->device;
    for (uint32_t m = 0; m < set->params.metrics_count; m++) {
        tally_value v = {0};
        tally_catalogue_evaluate(md->catalogue, set->metrics[m].counter, deltas, md->constants, &v);
        out[m] = typed(set->metrics[m].result_type, v);
    }
}

static void calculate_metrics(const tally_md_metric_set *set, const uint8_t *prev,
                              const uint8_t *cur, uint64_t *deltas, tally_md_typed_value *out)
{
    uint32_t n = set->params.raw_counter_count;
    for (uint32_t k = 0; k < n; k++)
        deltas[set->raw_slots[k]] =
            (counter_at(cur, n, k) - counter_at(prev, n, k)) & MD_COUNTER_MASK;
    md_evaluate_metrics(set, deltas, out);
}

static void calculate_information(const struct decoded *prev, const struct decoded *cur,
                                  tally_md_typed_value *out)
{
    out[TALLY_MD_INFO_QUERY_BEGIN_TIME] =
        (tally_md_typed_value){TALLY_MD_VALUE_UINT64, {.u64 = prev->timestamp_ns}};
    out[TALLY_MD_INFO_QUERY_END_TIME] =
        (tally_md_typed_value){TALLY_MD_VALUE_UINT64, {.u64 = cur->timestamp_ns}};
    out[TALLY_MD_INFO_REPORT_REASON] =
        (tally_md_typed_value){TALLY_MD_VALUE_UINT32, {.u32 = cur->reason}};
    out[TALLY_MD_INFO_REPORT_ID] = (tally_md_typed_value){TALLY_MD_VALUE_UINT32, {.u32 = cur->id}};
    out[TALLY_MD_INFO_CONTEXT_ID_VALID] =
        (tally_md_typed_value){TALLY_MD_VALUE_BOOL, {.b = cur->context_valid}};
    out[TALLY_MD_INFO_CONTEXT_ID] =
        (tally_md_typed_value){TALLY_MD_VALUE_UINT32, {.u32 = cur->context_id}};
    out[TALLY_MD_INFO_CORE_FREQUENCY_MHZ] =
        (tally_md_typed_value){TALLY_MD_VALUE_UINT32, {.u32 = cur->mhz}};
    out[TALLY_MD_INFO_CORE_FREQUENCY_CHANGED] =
        (tally_md_typed_value){TALLY_MD_VALUE_BOOL, {.b = cur->mhz != prev->mhz}};
    out[TALLY_MD_INFO_QUERY_SPLIT_OCCURRED] =
        (tally_md_typed_value){TALLY_MD_VALUE_BOOL, {.b = cur->switches != prev->switches}};
    out[TALLY_MD_INFO_REPORT_LOST] =
        (tally_md_typed_value){TALLY_MD_VALUE_BOOL, {.b = cur->id - prev->id != 1u}};
}

tally_status tally_md_calculate_metrics(const tally_md_metric_set *set, const void *raw,
                                        size_t raw_size, tally_md_typed_value *out, size_t out_size,
                                        uint32_t *out_report_count)
{
    if (out_report_count)
        *out_report_count = 0;
    if (!set || (raw_size && !raw) || !out_report_count || (out_size && !out))
        return TALLY_ERROR_INVALID_ARGUMENT;
    size_t report_size = set->params.raw_report_size;
    size_t values = (size_t)set->params.metrics_count + set->params.information_count;
    if (raw_size % report_size)
        return TALLY_ERROR_INVALID_ARGUMENT;
    size_t reports = raw_size / report_size;
    const uint8_t *bytes = raw;
    struct decoded prev, cur;
    for (size_t i = 0; i < reports; i++)
        if (!decode_header(set, bytes + i * report_size, &cur))
            return TALLY_ERROR_INVALID_ARGUMENT;
    uint64_t *deltas = calloc(set->device->raw_count + 1, sizeof(uint64_t));
    if (!deltas)
        return TALLY_ERROR_OUT_OF_MEMORY;
    uint32_t done = 0;
    tally_status status = TALLY_OK;
    for (size_t i = 1; i < reports; i++, done++) {
        if ((size_t)(done + 1) * values > out_size) {
            status = TALLY_INCOMPLETE;
            break;
        }
        const uint8_t *a = bytes + (i - 1) * report_size, *b = bytes + i * report_size;
        decode_header(set, a, &prev);
        decode_header(set, b, &cur);
        tally_md_typed_value *row = out + (size_t)done * values;
        calculate_metrics(set, a, b, deltas, row);
        calculate_information(&prev, &cur, row + set->params.metrics_count);
    }
    free(deltas);
    *out_report_count = done;
    return status;
}

double tally_md_typed_value_as_double(const tally_md_typed_value *v)
{
    if (!v)
        return 0.0;
    switch (v->type) {
    case TALLY_MD_VALUE_UINT32: return (double)v->value.u32;
    case TALLY_MD_VALUE_UINT64: return (double)v->value.u64;
    case TALLY_MD_VALUE_FLOAT: return (double)v->value.f32;
    case TALLY_MD_VALUE_BOOL: return v->value.b ? 1.0 : 0.0;
    case TALLY_MD_VALUE_DOUBLE: return v->value.f64;
    default: return 0.0;
    }
}
