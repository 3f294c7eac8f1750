/*
 * The Metrics-Discovery device view: global symbols, concurrent groups,
 * metric sets, metrics and information items, all derived from the
 * catalogue and the device when the view opens; and GPU/CPU timestamp pairs.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "md_internal.h"

/* --- global symbols ------------------------------------------------------------- */

enum { EXTRA_SYMBOLS = 8 };

static tally_md_typed_value u64_value(uint64_t v)
{
    return (tally_md_typed_value){TALLY_MD_VALUE_UINT64, {.u64 = v}};
}

static tally_md_typed_value u32_value(uint32_t v)
{
    return (tally_md_typed_value){TALLY_MD_VALUE_UINT32, {.u32 = v}};
}

static tally_md_typed_value string_value(const char *v)
{
    return (tally_md_typed_value){TALLY_MD_VALUE_CSTRING, {.cstring = v}};
}

/* The catalogue's constants under their own symbols, then the device facts
 * MDAPI tools look for under MDAPI's names. */
static tally_status build_symbols(struct tally_md_device *md)
{
    const struct tally_catalogue *cat = md->engine->catalogue;
    md->symbols = calloc(cat->constant_count + EXTRA_SYMBOLS, sizeof(*md->symbols));
    if (!md->symbols)
        return TALLY_ERROR_OUT_OF_MEMORY;
    uint32_t n = 0;
    for (uint32_t i = 0; i < cat->constant_count; i++)
        md->symbols[n++] =
            (tally_md_global_symbol){cat->constants[i].symbol, u64_value(md->engine->constants[i])};
    const tally_device_info *info = &md->engine->info;
    uint32_t mhz = (uint32_t)(info->core_clock_hz / 1000000u);
    md->symbols[n++] = (tally_md_global_symbol){"DeviceName", string_value(info->name)};
    md->symbols[n++] = (tally_md_global_symbol){"BackendName", string_value(info->backend)};
    md->symbols[n++] = (tally_md_global_symbol){
        "ClockMode", string_value(info->clock == TALLY_CLOCK_VIRTUAL ? "virtual" : "realtime")};
    md->symbols[n++] =
        (tally_md_global_symbol){"GpuTimestampFrequency", u64_value(info->timestamp_frequency_hz)};
    /* simgpu runs at one fixed clock */
    md->symbols[n++] = (tally_md_global_symbol){"GpuMinFrequencyMHz", u32_value(mhz)};
    md->symbols[n++] = (tally_md_global_symbol){"GpuMaxFrequencyMHz", u32_value(mhz)};
    /* report timestamps are 64-bit nanoseconds: they do not wrap */
    md->symbols[n++] = (tally_md_global_symbol){"MaxTimestamp", u64_value(UINT64_MAX)};
    md->symbols[n++] =
        (tally_md_global_symbol){"RawCounterBits", u32_value(TALLY_MD_RAW_COUNTER_BITS)};
    md->params.global_symbols_count = n;
    return TALLY_OK;
}

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

static void describe_metric(const struct tally_catalogue *cat, uint32_t counter, uint32_t id,
                            tally_md_metric_params *m)
{
    const tally_counter_info *c = &cat->counters[counter];
    *m = (tally_md_metric_params){
        .id_in_set = id,
        .counter = counter,
        .symbol_name = tally_counter_symbol_for(c, TALLY_API_MD),
        .short_name = tally_counter_name_for(c, TALLY_API_MD),
        .long_name = c->description,
        .group_name = cat->groups[c->group].name,
        .units = c->unit_name,
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
static uint32_t collect_raw_slots(const struct tally_catalogue *cat,
                                  const tally_metric_set_info *info, uint32_t *slots)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < info->counter_count; k++) {
        uint32_t counter = info->counters[k];
        uint32_t raw = cat->counters[counter].raw_index;
        if (raw != TALLY_NOT_RAW && !holds(slots, n, raw))
            slots[n++] = raw;
        const struct tally_expr *e = &cat->expressions[counter];
        for (uint32_t op = 0; op < e->op_count; op++)
            if (e->ops[op].opcode == TALLY_EXPR_RAW && !holds(slots, n, e->ops[op].arg))
                slots[n++] = e->ops[op].arg;
    }
    return n;
}

static tally_status build_set(struct tally_md_device *md, uint32_t index)
{
    const struct tally_catalogue *cat = md->engine->catalogue;
    const tally_metric_set_info *info = &cat->metric_sets[index];
    struct tally_md_metric_set *set = &md->sets[index];
    set->device = md;
    set->index = index;
    set->metrics = calloc(info->counter_count, sizeof(*set->metrics));
    set->raw_slots = calloc(cat->raw_count, sizeof(*set->raw_slots));
    if (!set->metrics || !set->raw_slots)
        return TALLY_ERROR_OUT_OF_MEMORY;
    for (uint32_t k = 0; k < info->counter_count; k++)
        describe_metric(cat, info->counters[k], k, &set->metrics[k]);
    memcpy(set->information, information_items, sizeof(information_items));
    uint32_t raw_counters = collect_raw_slots(cat, info, set->raw_slots);
    set->params = (tally_md_metric_set_params){
        .symbol_name = info->symbol,
        .short_name = info->short_name,
        .description = info->description,
        .concurrent_group = info->concurrent_group,
        .raw_report_size = (MD_HEADER_SIZE + 5u * raw_counters + 7u) & ~7u,
        .metrics_count = info->counter_count,
        .information_count = TALLY_MD_INFO_COUNT,
        .raw_counter_count = raw_counters,
    };
    return TALLY_OK;
}

static tally_status build_groups(struct tally_md_device *md)
{
    const struct tally_catalogue *cat = md->engine->catalogue;
    md->params.concurrent_groups_count = cat->concurrent_group_count;
    md->groups = calloc(cat->concurrent_group_count + 1, sizeof(*md->groups));
    if (!md->groups)
        return TALLY_ERROR_OUT_OF_MEMORY;
    for (uint32_t g = 0; g < cat->concurrent_group_count; g++) {
        const tally_concurrent_group_info *info = &cat->concurrent_groups[g];
        struct tally_md_concurrent_group *group = &md->groups[g];
        pthread_mutex_init(&group->lock, NULL);
        group->device = md;
        group->index = g;
        group->params = (tally_md_concurrent_group_params){
            .symbol_name = info->symbol,
            .description = info->description,
            .measurement_type_mask = TALLY_MD_MEASUREMENT_SNAPSHOT_IO,
            .metric_sets_count = info->metric_set_count,
        };
        group->sets = calloc(info->metric_set_count + 1, sizeof(*group->sets));
        if (!group->sets)
            return TALLY_ERROR_OUT_OF_MEMORY;
        for (uint32_t s = 0; s < info->metric_set_count; s++)
            group->sets[s] = &md->sets[info->metric_sets[s]];
    }
    return TALLY_OK;
}

static tally_status build(struct tally_md_device *md)
{
    const struct tally_catalogue *cat = md->engine->catalogue;
    md->params.device_name = md->engine->info.name;
    md->set_count = cat->metric_set_count;
    md->sets = calloc(cat->metric_set_count + 1, sizeof(*md->sets));
    if (!md->sets)
        return TALLY_ERROR_OUT_OF_MEMORY;
    tally_status s = build_symbols(md);
    for (uint32_t i = 0; s == TALLY_OK && i < cat->metric_set_count; i++)
        s = build_set(md, i);
    if (s == TALLY_OK)
        s = build_groups(md);
    return s;
}

static void destroy(struct tally_md_device *md)
{
    for (uint32_t g = 0; md->groups && g < md->params.concurrent_groups_count; g++) {
        md_close_stream(&md->groups[g]);
        pthread_mutex_destroy(&md->groups[g].lock);
        free(md->groups[g].sets);
    }
    for (uint32_t i = 0; md->sets && i < md->set_count; i++) {
        free(md->sets[i].metrics);
        free(md->sets[i].raw_slots);
    }
    free(md->groups);
    free(md->sets);
    free(md->symbols);
    if (md->shared)
        tally_device_release_shared(md->engine);
    free(md);
}

static tally_status open_view(tally_device *device, bool shared, tally_md_device **out)
{
    struct tally_md_device *md = calloc(1, sizeof(*md));
    if (!md)
        return TALLY_ERROR_OUT_OF_MEMORY;
    md->engine = device;
    md->shared = shared;
    tally_status s = build(md);
    if (s != TALLY_OK) {
        destroy(md);
        return s;
    }
    *out = md;
    return TALLY_OK;
}

tally_status tally_md_device_open(tally_device *device, tally_md_device **out)
{
    if (out)
        *out = NULL;
    if (!device || !out)
        return TALLY_ERROR_INVALID_ARGUMENT;
    return open_view(device, false, out);
}

tally_status tally_md_device_open_shared(tally_md_device **out)
{
    if (!out)
        return TALLY_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    tally_device *device = NULL;
    tally_status s = tally_device_acquire_shared(&device);
    if (s != TALLY_OK)
        return s;
    return open_view(device, true, out);
}

void tally_md_device_close(tally_md_device *md)
{
    if (md)
        destroy(md);
}

/* --- getters ------------------------------------------------------------------------ */

const tally_md_device_params *tally_md_device_get_params(const tally_md_device *md)
{
    return md ? &md->params : NULL;
}

tally_device *tally_md_device_engine(const tally_md_device *md)
{
    return md ? md->engine : NULL;
}

const tally_md_global_symbol *tally_md_device_get_global_symbol(const tally_md_device *md,
                                                                uint32_t index)
{
    return md && index < md->params.global_symbols_count ? &md->symbols[index] : NULL;
}

const tally_md_global_symbol *tally_md_device_find_global_symbol(const tally_md_device *md,
                                                                 const char *symbol_name)
{
    if (!md || !symbol_name)
        return NULL;
    for (uint32_t i = 0; i < md->params.global_symbols_count; i++)
        if (strcmp(md->symbols[i].symbol_name, symbol_name) == 0)
            return &md->symbols[i];
    return NULL;
}

tally_md_concurrent_group *tally_md_device_get_concurrent_group(tally_md_device *md, uint32_t index)
{
    return md && index < md->params.concurrent_groups_count ? &md->groups[index] : NULL;
}

const tally_md_concurrent_group_params *
tally_md_concurrent_group_get_params(const tally_md_concurrent_group *group)
{
    return group ? &group->params : NULL;
}

tally_md_metric_set *tally_md_concurrent_group_get_metric_set(tally_md_concurrent_group *group,
                                                              uint32_t index)
{
    return group && index < group->params.metric_sets_count ? group->sets[index] : NULL;
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

/* --- timestamps ------------------------------------------------------------------------- */

tally_status tally_md_device_get_gpu_cpu_timestamps(tally_md_device *md, uint64_t *gpu_ns,
                                                    uint64_t *cpu_ns,
                                                    uint64_t *correlation_indicator_ns)
{
    if (!md)
        return TALLY_ERROR_INVALID_ARGUMENT;
    tally_device_gpu_cpu_timestamps(md->engine, gpu_ns, cpu_ns, correlation_indicator_ns);
    return TALLY_OK;
}

uint64_t tally_md_gpu_to_monotonic_ns(uint64_t gpu_ns, uint64_t gpu_snap_ns, uint64_t cpu_snap_ns)
{
    return gpu_ns > gpu_snap_ns ? cpu_snap_ns + (gpu_ns - gpu_snap_ns)
                                : cpu_snap_ns - (gpu_snap_ns - gpu_ns);
}

static uint64_t read_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tally_md_monotonic_to_raw_ns(uint64_t monotonic_ns)
{
    uint64_t monotonic = read_clock(CLOCK_MONOTONIC);
    uint64_t raw = read_clock(CLOCK_MONOTONIC_RAW);
    return raw > monotonic ? monotonic_ns + (raw - monotonic) : monotonic_ns - (monotonic - raw);
}
