/* Reading a catalogue: records by index, lookup by symbol, API vocabularies. */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

const char *tally_catalogue_backend(const tally_catalogue *cat)
{
    return cat->backend;
}

uint32_t tally_catalogue_counter_count(const tally_catalogue *cat)
{
    return cat->counter_count;
}

const tally_counter_info *tally_catalogue_counter(const tally_catalogue *cat, uint32_t index)
{
    return cat && index < cat->counter_count ? &cat->counters[index] : NULL;
}

uint32_t tally_catalogue_group_count(const tally_catalogue *cat)
{
    return cat->group_count;
}

const tally_group_info *tally_catalogue_group(const tally_catalogue *cat, uint32_t index)
{
    return cat && index < cat->group_count ? &cat->groups[index] : NULL;
}

uint32_t tally_catalogue_raw_count(const tally_catalogue *cat)
{
    return cat->raw_count;
}

const tally_counter_info *tally_catalogue_raw_counter(const tally_catalogue *cat,
                                                      uint32_t raw_index)
{
    if (!cat || raw_index >= cat->raw_count)
        return NULL;
    return &cat->counters[cat->raw_counters[raw_index]];
}

uint32_t tally_catalogue_constant_count(const tally_catalogue *cat)
{
    return cat->constant_count;
}

const tally_constant_info *tally_catalogue_constant(const tally_catalogue *cat, uint32_t index)
{
    return cat && index < cat->constant_count ? &cat->constants[index] : NULL;
}

uint32_t tally_catalogue_unit_count(const tally_catalogue *cat)
{
    return cat->unit_count;
}

const tally_unit_info *tally_catalogue_unit(const tally_catalogue *cat, uint32_t index)
{
    return cat && index < cat->unit_count ? &cat->units[index] : NULL;
}

uint32_t tally_catalogue_concurrent_group_count(const tally_catalogue *cat)
{
    return cat->concurrent_group_count;
}

const tally_concurrent_group_info *tally_catalogue_concurrent_group(const tally_catalogue *cat,
                                                                    uint32_t index)
{
    return cat && index < cat->concurrent_group_count ? &cat->concurrent_groups[index] : NULL;
}

uint32_t tally_catalogue_metric_set_count(const tally_catalogue *cat)
{
    return cat->metric_set_count;
}

const tally_metric_set_info *tally_catalogue_metric_set(const tally_catalogue *cat, uint32_t index)
{
    return cat && index < cat->metric_set_count ? &cat->metric_sets[index] : NULL;
}

static const tally_alias *alias_for(const tally_counter_info *counter, tally_api api)
{
    for (uint32_t i = 0; i < counter->alias_count; i++)
        if (counter->aliases[i].api == api)
            return &counter->aliases[i];
    return NULL;
}

const char *tally_counter_symbol_for(const tally_counter_info *counter, tally_api api)
{
    const tally_alias *alias = alias_for(counter, api);
    return alias && alias->symbol ? alias->symbol : counter->symbol;
}

const char *tally_counter_name_for(const tally_counter_info *counter, tally_api api)
{
    const tally_alias *alias = alias_for(counter, api);
    return alias && alias->name ? alias->name : counter->name;
}

const char *tally_counter_unit_name_for(const tally_counter_info *counter, tally_api api)
{
    const tally_alias *alias = alias_for(counter, api);
    return alias && alias->unit_name ? alias->unit_name : counter->unit_name;
}

static bool names_counter(const tally_counter_info *counter, const char *symbol)
{
    if (strcmp(counter->symbol, symbol) == 0)
        return true;
    for (uint32_t i = 0; i < counter->alias_count; i++)
        if (counter->aliases[i].symbol && strcmp(counter->aliases[i].symbol, symbol) == 0)
            return true;
    return false;
}

tally_status tally_catalogue_find(const tally_catalogue *cat, const char *symbol, uint32_t *index)
{
    if (!cat || !symbol || !index)
        return TALLY_ERROR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < cat->counter_count; i++) {
        if (names_counter(&cat->counters[i], symbol)) {
            *index = i;
            return TALLY_OK;
        }
    }
    return TALLY_ERROR_UNKNOWN_COUNTER;
}

const char *tally_unit_string(tally_unit unit)
{
    static const char *const names[] = {
        "generic", "percentage", "nanoseconds", "bytes", "bytes_per_second", "kelvin", "watts",
        "volts",   "amps",       "hertz",       "cycles"};
    return (unsigned)unit < sizeof(names) / sizeof(names[0]) ? names[unit] : "unknown";
}

const char *tally_storage_string(tally_storage storage)
{
    static const char *const names[] = {"int32", "int64", "uint32", "uint64", "float32", "float64"};
    return (unsigned)storage < sizeof(names) / sizeof(names[0]) ? names[storage] : "unknown";
}

const char *tally_semantic_string(tally_semantic semantic)
{
    static const char *const names[] = {"event", "duration", "throughput", "ratio", "timestamp"};
    return (unsigned)semantic < sizeof(names) / sizeof(names[0]) ? names[semantic] : "unknown";
}

const char *tally_api_string(tally_api api)
{
    static const char *const names[] = {"vk", "gl", "cl", "md"};
    return (unsigned)api < sizeof(names) / sizeof(names[0]) ? names[api] : "unknown";
}
