/*
 * Metric sets of the Metrics-Discovery view: each set's metrics (catalogue
 * counters in MDAPI's vocabulary), its information items, and which raw
 * counters its reports carry.
 */
#include <stdlib.h>
#include <string.h>

#include "md_internal.h"

/* --- metrics ---------------------------------------------------------------------- */

static tally_md_value_type value_type_of(tally_storage storage)
{
    switch (storage) {
    case TALLY_STORAGE_UINT32:
    case TALLY_STORAGE_INT32: return TALLY_MD_VALUE_UINT32;
    case TALLY_STORAGE_FLOAT32: return TALLY_MD_VALUE_FLOAT;
    case TALLY_STORAGE_FLOAT64: return TALLY_MD_VALUE_DOUBLE;
    default: return TALLY_MD_VALUE_UINT64;
    }
}

static tally_md_metric_type metric_type_of(tally_semantic semantic)
{
    switch (semantic) {
    case TALLY_SEMANTIC_DURATION: return TALLY_MD_METRIC_DURATION;
    case TALLY_SEMANTIC_THROUGHPUT: return TALLY_MD_METRIC_THROUGHPUT;
    case TALLY_SEMANTIC_RATIO: return TALLY_MD_METRIC_RATIO;
    case TALLY_SEMANTIC_TIMESTAMP: return TALLY_MD_METRIC_TIMESTAMP;
    default: return TALLY_MD_METRIC_EVENT;
    }
}

static tally_md_typed_value max_of(const tally_counter_info *c)
{
    tally_md_typed_value v = {value_type_of(c->storage), {.u64 = 0}};
    switch (v.type) {
    case TALLY_MD_VALUE_UINT32:
        v.value.u32 = c->max_value.u64 > UINT32_MAX ? UINT32_MAX : (uint32_t)c->max_value.u64;
        break;
    case TALLY_MD_VALUE_FLOAT: v.value.f32 = (float)c->max_value.f64; break;
    case TALLY_MD_VALUE_DOUBLE: v.value.f64 = c->max_value.f64; break;
    default: v.value.u64 = c->max_value.u64; break;
    }
    return v;
}

static void describe_metric(const tally_catalogue *cat, uint32_t counter, uint32_t id,
                            tally_md_metric_params *m)
{
    const tally_counter_info *c = tally_catalogue_counter(cat, counter);
    *m = (tally_md_metric_params){
        .id_in_set = id,
        .counter = counter,
        .symbol_name = tally_counter_symbol_for(c, TALLY_API_MD),
        .short_name = tally_counter_name_for(c, TALLY_API_MD),
        .long_name = c->description,
        .group_name = tally_catalogue_group(cat, c->group)->name,
        .units = tally_counter_unit_name_for(c, TALLY_API_MD),
        .metric_type = metric_type_of(c->semantic),
        .result_type = value_type_of(c->storage),
        .derived = c->raw_index == TALLY_NOT_RAW,
        .max_value = max_of(c),
    };
}

/* --- information items ------------------------------------------------------------- */

static const tally_md_information_params information_items[TALLY_MD_INFO_COUNT] = {
    {TALLY_MD_INFO_QUERY_BEGIN_TIME, "QueryBeginTime", "Query begin time",
     "GPU time at which the interval of the report begins: the previous report's timestamp.", "ns",
     TALLY_MD_INFORMATION_TIMESTAMP, TALLY_MD_VALUE_UINT64},
    {TALLY_MD_INFO_QUERY_END_TIME, "QueryEndTime", "Query end time",
     "GPU time of the report that ends the interval.", "ns", TALLY_MD_INFORMATION_TIMESTAMP,
     TALLY_MD_VALUE_UINT64},
    {TALLY_MD_INFO_REPORT_REASON, "ReportReason", "Report reason",
     "Why the report ending the interval was taken: 1 timer, 2 stream start, 4 flush.", "",
     TALLY_MD_INFORMATION_REPORT_REASON, TALLY_MD_VALUE_UINT32},
    {TALLY_MD_INFO_REPORT_ID, "ReportId", "Report id",
     "Sequence number of the report ending the interval in its stream.", "",
     TALLY_MD_INFORMATION_VALUE, TALLY_MD_VALUE_UINT32},
    {TALLY_MD_INFO_CONTEXT_ID_VALID, "ContextIdValid", "Context id valid",
     "True when the GPU had executed work of some context by the end of the interval.", "",
     TALLY_MD_INFORMATION_FLAG, TALLY_MD_VALUE_BOOL},
    {TALLY_MD_INFO_CONTEXT_ID, "ContextId", "Context id",
     "The context whose command the GPU executed last by the end of the interval.", "",
     TALLY_MD_INFORMATION_CONTEXT_ID_TAG, TALLY_MD_VALUE_UINT32},
    {TALLY_MD_INFO_CORE_FREQUENCY_MHZ, "CoreFrequencyMHz", "Core frequency",
     "GPU core clock frequency at the end of the interval.", "MHz", TALLY_MD_INFORMATION_VALUE,
     TALLY_MD_VALUE_UINT32},
    {TALLY_MD_INFO_CORE_FREQUENCY_CHANGED, "CoreFrequencyChanged", "Core frequency changed",
     "True when the core frequency differs between the two reports of the interval.", "",
     TALLY_MD_INFORMATION_FLAG, TALLY_MD_VALUE_BOOL},
    {TALLY_MD_INFO_QUERY_SPLIT_OCCURRED, "QuerySplitOccurred", "Query split occurred",
     "True when the GPU switched between contexts within the interval.", "",
     TALLY_MD_INFORMATION_FLAG, TALLY_MD_VALUE_BOOL},
    {TALLY_MD_INFO_REPORT_LOST, "ReportLost", "Report lost",
     "True when reports between the two of the interval were lost (the stream buffer "
     "overflowed or a read dropped old reports), so it spans several intervals.",
     "", TALLY_MD_INFORMATION_FLAG, TALLY_MD_VALUE_BOOL},
};

/* --- metric sets ---------------------------------------------------------------------- */

static bool holds(const uint32_t *slots, uint32_t count, uint32_t slot)
{
    for (uint32_t i = 0; i < count; i++)
        if (slots[i] == slot)
            return true;
    return false;
}

/* The raw counters a set's reports carry: each raw metric's slot and the
 * slots the derived metrics' equations read, in order of first use. */
static uint32_t collect_raw_slots(const tally_catalogue *cat, const tally_metric_set_info *info,
                                  uint32_t *slots)
{
    uint32_t n = 0, inputs[TALLY_MD_MAX_COUNTER_INPUTS];
    for (uint32_t k = 0; k < info->counter_count; k++) {
        uint32_t count = tally_catalogue_counter_raw_inputs(cat, info->counters[k], inputs,
                                                            TALLY_MD_MAX_COUNTER_INPUTS);
        if (count > TALLY_MD_MAX_COUNTER_INPUTS)
            return UINT32_MAX;
        for (uint32_t i = 0; i < count; i++)
            if (!holds(slots, n, inputs[i]))
                slots[n++] = inputs[i];
    }
    return n;
}

tally_status md_build_metric_set(struct tally_md_device *md, uint32_t index)
{
    const tally_catalogue *cat = md->catalogue;
    const tally_metric_set_info *info = tally_catalogue_metric_set(cat, index);
    struct tally_md_metric_set *set = &md->sets[index];
    set->device = md;
    set->index = index;
    set->metrics = calloc(info->counter_count, sizeof(*set->metrics));
    set->raw_slots = calloc(md->raw_count, sizeof(*set->raw_slots));
    if (!set->metrics || !set->raw_slots)
        return TALLY_ERROR_OUT_OF_MEMORY;
    for (uint32_t k = 0; k < info->counter_count; k++)
        describe_metric(cat, info->counters[k], k, &set->metrics[k]);
    memcpy(set->information, information_items, sizeof(information_items));
    uint32_t raw_counters = collect_raw_slots(cat, info, set->raw_slots);
    if (raw_counters == UINT32_MAX)
        return TALLY_ERROR_INVALID_ARGUMENT;
    /* The query doors take what one pass collects (the CL shim's counter
     * queues and GL_INTEL_performance_query both plan one pass): a set the
     * catalogue's plan fits in one pass is served by them too. */
    uint32_t passes = 0;
    bool one_pass =
        tally_plan_passes(cat, info->counters, info->counter_count, NULL, &passes) == TALLY_OK &&
        passes == 1;
    uint32_t query_doors = TALLY_MD_API_OCL | TALLY_MD_API_OGL | TALLY_MD_API_OGL4_X;
    set->params = (tally_md_metric_set_params){
        .symbol_name = info->symbol,
        .short_name = info->short_name,
        .description = info->description,
        .concurrent_group = info->concurrent_group,
        .raw_report_size = (MD_HEADER_SIZE + 5u * raw_counters + 7u) & ~7u,
        .metrics_count = info->counter_count,
        .information_count = TALLY_MD_INFO_COUNT,
        .raw_counter_count = raw_counters,
        .api_mask = TALLY_MD_API_IOSTREAM | (one_pass ? query_doors : 0),
        .query_report_size = one_pass ? MD_QUERY_HEADER_SIZE + 8u * raw_counters : 0,
        .query_id = one_pass ? index + 1 : 0,
    };
    return TALLY_OK;
}

const tally_md_metric_set_params *tally_md_metric_set_get_params(const tally_md_metric_set *set)
{
    return set ? &set->params : NULL;
}

const tally_md_metric_params *tally_md_metric_set_get_metric(const tally_md_metric_set *set,
                                                             uint32_t index)
{
    return set && index < set->params.metrics_count ? &set->metrics[index] : NULL;
}

const tally_md_information_params *
tally_md_metric_set_get_information(const tally_md_metric_set *set, uint32_t index)
{
    return set && index < set->params.information_count ? &set->information[index] : NULL;
}

tally_md_concurrent_group *tally_md_metric_set_get_concurrent_group(tally_md_metric_set *set)
{
    return set ? &set->device->groups[set->params.concurrent_group] : NULL;
}
