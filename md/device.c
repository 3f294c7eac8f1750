/*
 * The Metrics-Discovery device view: opening and closing it, its global
 * symbols and concurrent groups, derived from the catalogue and the device
 * when the view opens (metric sets: metric_set.c).
 */
#include <stdlib.h>
#include <string.h>

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
    const tally_catalogue *cat = md->catalogue;
    uint32_t constants = tally_catalogue_constant_count(cat);
    md->symbols = calloc(constants + EXTRA_SYMBOLS, sizeof(*md->symbols));
    if (!md->symbols)
        return TALLY_ERROR_OUT_OF_MEMORY;
    uint32_t n = 0;
    for (uint32_t i = 0; i < constants; i++)
        md->symbols[n++] = (tally_md_global_symbol){tally_catalogue_constant(cat, i)->symbol,
                                                    u64_value(md->constants[i])};
    const tally_device_info *info = &md->info;
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

static tally_status build_groups(struct tally_md_device *md)
{
    const tally_catalogue *cat = md->catalogue;
    uint32_t count = tally_catalogue_concurrent_group_count(cat);
    md->params.concurrent_groups_count = count;
    md->groups = calloc(count + 1, sizeof(*md->groups));
    if (!md->groups)
        return TALLY_ERROR_OUT_OF_MEMORY;
    for (uint32_t g = 0; g < count; g++) {
        const tally_concurrent_group_info *info = tally_catalogue_concurrent_group(cat, g);
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
    md->params.device_name = md->info.name;
    md->set_count = tally_catalogue_metric_set_count(md->catalogue);
    md->sets = calloc(md->set_count + 1, sizeof(*md->sets));
    if (!md->sets)
        return TALLY_ERROR_OUT_OF_MEMORY;
    tally_status s = build_symbols(md);
    for (uint32_t i = 0; s == TALLY_OK && i < md->set_count; i++)
        s = md_build_metric_set(md, i);
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
    if (!md) {
        if (shared) /* the reference the caller took is this view's to drop */
            tally_device_release_shared(device);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    md->engine = device;
    md->catalogue = tally_device_catalogue(device);
    md->constants = tally_device_constants(device);
    md->raw_count = tally_catalogue_raw_count(md->catalogue);
    tally_device_get_info(device, &md->info);
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
