/* The simgpu catalogue: identity of counters (symbols, UUIDs checked against
 * an independent RFC 4122 v5 implementation), completeness, consistency of
 * groups and raw slots, lookup, API names, and the evaluator's rules. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "tally/tally.h"

static const tally_catalogue *simgpu(void)
{
    const tally_catalogue *cat = NULL;
    assert_int_equal(tally_backend_catalogue("simgpu", &cat), TALLY_OK);
    assert_non_null(cat);
    return cat;
}

static bool is_float(tally_storage s)
{
    return s == TALLY_STORAGE_FLOAT32 || s == TALLY_STORAGE_FLOAT64;
}

static bool is_signed(tally_storage s)
{
    return s == TALLY_STORAGE_INT32 || s == TALLY_STORAGE_INT64;
}

static double as_double(const tally_counter_info *c, tally_value v)
{
    if (is_float(c->storage))
        return v.f64;
    if (is_signed(c->storage))
        return (double)v.i64;
    return (double)v.u64;
}

static uint32_t find(const tally_catalogue *cat, const char *symbol)
{
    uint32_t index = UINT32_MAX;
    assert_int_equal(tally_catalogue_find(cat, symbol, &index), TALLY_OK);
    return index;
}

static void every_counter_symbol_and_alias_symbol_is_unique(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint32_t n = tally_catalogue_counter_count(cat);
    const char **symbols = calloc(n * 8u, sizeof *symbols);
    assert_non_null(symbols);
    uint32_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        const tally_counter_info *c = tally_catalogue_counter(cat, i);
        symbols[total++] = c->symbol;
        for (uint32_t a = 0; a < c->alias_count; a++)
            if (c->aliases[a].symbol)
                symbols[total++] = c->aliases[a].symbol;
    }
    for (uint32_t i = 0; i < total; i++)
        for (uint32_t j = i + 1; j < total; j++)
            if (strcmp(symbols[i], symbols[j]) == 0)
                fail_msg("symbol %s appears twice", symbols[i]);
    free(symbols);
}

static void every_counter_uuid_is_unique(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint32_t n = tally_catalogue_counter_count(cat);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n; j++)
            assert_memory_not_equal(tally_catalogue_counter(cat, i)->uuid,
                                    tally_catalogue_counter(cat, j)->uuid, 16);
}

static void every_uuid_is_the_rfc4122_v5_uuid_of_the_symbol_alone(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uuid_t ns;
    assert_int_equal(uuid_parse("6f1c0b9e-3d2a-4e51-9a7c-2b8d4e6f1a30", ns), 0);
    for (uint32_t i = 0; i < tally_catalogue_counter_count(cat); i++) {
        const tally_counter_info *c = tally_catalogue_counter(cat, i);
        uuid_t expected;
        uuid_generate_sha1(expected, ns, c->symbol, strlen(c->symbol));
        if (memcmp(expected, c->uuid, 16) != 0)
            fail_msg("uuid of %s is not uuid5(namespace, symbol)", c->symbol);
        assert_int_equal(c->uuid[6] >> 4, 5);      /* version 5 */
        assert_int_equal(c->uuid[8] & 0xc0, 0x80); /* RFC 4122 variant */
    }
}

static void every_required_symbol_exists(void **state)
{
    (void)state;
    static const char *const required[] = {"GpuTime",
                                           "GpuCoreClocks",
                                           "GpuBusy",
                                           "DrawCalls",
                                           "Dispatches",
                                           "IaVertices",
                                           "IaPrimitives",
                                           "VsInvocations",
                                           "ClipperInvocations",
                                           "ClipperPrimitives",
                                           "RasterizedPixels",
                                           "FsInvocations",
                                           "CsInvocations",
                                           "CsWorkgroups",
                                           "ShaderAluInstructions",
                                           "ShaderTexInstructions",
                                           "L2CacheHits",
                                           "L2CacheMisses",
                                           "DramReadBytes",
                                           "DramWriteBytes"};
    const tally_catalogue *cat = simgpu();
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        uint32_t index = UINT32_MAX;
        if (tally_catalogue_find(cat, required[i], &index) != TALLY_OK)
            fail_msg("%s is missing", required[i]);
        assert_string_equal(tally_catalogue_counter(cat, index)->symbol, required[i]);
    }
}

static void the_catalogue_has_at_least_40_counters_in_at_least_8_groups(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    assert_true(tally_catalogue_counter_count(cat) >= 40);
    assert_true(tally_catalogue_group_count(cat) >= 8);
}

static void every_counter_has_enums_in_range_and_a_nonempty_range(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    for (uint32_t i = 0; i < tally_catalogue_counter_count(cat); i++) {
        const tally_counter_info *c = tally_catalogue_counter(cat, i);
        assert_int_equal(c->index, i);
        assert_true((unsigned)c->unit <= TALLY_UNIT_CYCLES);
        assert_true((unsigned)c->storage <= TALLY_STORAGE_FLOAT64);
        assert_true((unsigned)c->semantic <= TALLY_SEMANTIC_TIMESTAMP);
        assert_true((unsigned)c->source <= TALLY_SOURCE_DERIVED);
        assert_true(c->group < tally_catalogue_group_count(cat));
        if (is_float(c->storage))
            assert_true(c->min_value.f64 < c->max_value.f64);
        else if (is_signed(c->storage))
            assert_true(c->min_value.i64 < c->max_value.i64);
        else
            assert_true(c->min_value.u64 < c->max_value.u64);
    }
}

static void percentage_counters_range_from_0_to_100(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint32_t seen = 0;
    for (uint32_t i = 0; i < tally_catalogue_counter_count(cat); i++) {
        const tally_counter_info *c = tally_catalogue_counter(cat, i);
        if (c->unit != TALLY_UNIT_PERCENTAGE)
            continue;
        seen++;
        if (as_double(c, c->min_value) != 0.0 || as_double(c, c->max_value) != 100.0)
            fail_msg("%s ranges %g to %g", c->symbol, as_double(c, c->min_value),
                     as_double(c, c->max_value));
    }
    assert_true(seen >= 1);
}

static void every_group_has_capacity_and_lists_exactly_its_counters(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint32_t n = tally_catalogue_counter_count(cat);
    for (uint32_t g = 0; g < tally_catalogue_group_count(cat); g++) {
        const tally_group_info *group = tally_catalogue_group(cat, g);
        assert_int_equal(group->index, g);
        assert_true(group->capacity >= 1);
        uint32_t listed = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (tally_catalogue_counter(cat, i)->group != g)
                continue;
            assert_true(listed < group->counter_count);
            assert_int_equal(group->counters[listed], i); /* catalogue order */
            listed++;
        }
        assert_int_equal(listed, group->counter_count);
    }
}

static void raw_indices_agree_with_the_raw_counter_lookup(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint32_t raw_seen = 0;
    for (uint32_t i = 0; i < tally_catalogue_counter_count(cat); i++) {
        const tally_counter_info *c = tally_catalogue_counter(cat, i);
        if (c->source == TALLY_SOURCE_DERIVED) {
            assert_int_equal(c->raw_index, TALLY_NOT_RAW);
            assert_non_null(c->expression);
            continue;
        }
        raw_seen++;
        assert_true(c->raw_index < tally_catalogue_raw_count(cat));
        assert_ptr_equal(tally_catalogue_raw_counter(cat, c->raw_index), c);
    }
    assert_int_equal(raw_seen, tally_catalogue_raw_count(cat));
    assert_null(tally_catalogue_raw_counter(cat, tally_catalogue_raw_count(cat)));
}

static void every_metric_set_fits_in_one_pass(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    assert_true(tally_catalogue_metric_set_count(cat) >= 1);
    for (uint32_t m = 0; m < tally_catalogue_metric_set_count(cat); m++) {
        const tally_metric_set_info *set = tally_catalogue_metric_set(cat, m);
        uint32_t passes = 99;
        assert_int_equal(tally_plan_passes(cat, set->counters, set->counter_count, NULL, &passes),
                         TALLY_OK);
        if (passes != 1)
            fail_msg("metric set %s needs %u passes", set->symbol, passes);
    }
}

static void find_accepts_api_aliases(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    assert_int_equal(find(cat, "PsInvocations"), find(cat, "FsInvocations"));
    assert_int_equal(find(cat, "CsThreads"), find(cat, "CsWaves"));
}

static void find_rejects_unknown_and_differently_cased_symbols(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint32_t index = 0;
    assert_int_equal(tally_catalogue_find(cat, "NoSuchCounter", &index),
                     TALLY_ERROR_UNKNOWN_COUNTER);
    assert_int_equal(tally_catalogue_find(cat, "vsinvocations", &index),
                     TALLY_ERROR_UNKNOWN_COUNTER);
}

static void opencl_calls_cs_invocations_kernel_work_items(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    const tally_counter_info *c = tally_catalogue_counter(cat, find(cat, "CsInvocations"));
    assert_string_equal(tally_counter_name_for(c, TALLY_API_CL), "Kernel work-items");
    assert_string_equal(tally_counter_symbol_for(c, TALLY_API_CL), "CsInvocations");
    assert_string_equal(tally_counter_name_for(c, TALLY_API_VULKAN), c->name);
}

static void an_unknown_backend_has_no_catalogue(void **state)
{
    (void)state;
    const tally_catalogue *cat = NULL;
    assert_int_equal(tally_backend_catalogue("nosuchgpu", &cat), TALLY_ERROR_UNKNOWN_BACKEND);
}

static tally_value evaluate(const tally_catalogue *cat, const char *symbol, const uint64_t *raw)
{
    tally_value v = {.u64 = 12345};
    assert_int_equal(tally_catalogue_evaluate(cat, find(cat, symbol), raw, NULL, &v), TALLY_OK);
    return v;
}

static uint32_t raw_slot(const tally_catalogue *cat, const char *symbol)
{
    uint32_t raw = tally_catalogue_counter(cat, find(cat, symbol))->raw_index;
    assert_int_not_equal(raw, TALLY_NOT_RAW);
    return raw;
}

static void division_by_zero_evaluates_to_zero(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint64_t *raw = calloc(tally_catalogue_raw_count(cat), sizeof *raw);
    assert_non_null(raw);
    raw[raw_slot(cat, "GpuBusyCycles")] = 500;
    raw[raw_slot(cat, "GpuCoreClocks")] = 0;
    assert_true(evaluate(cat, "GpuBusy", raw).f64 == 0.0);
    free(raw);
}

static void busy_percentage_is_busy_cycles_over_core_clocks(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint64_t *raw = calloc(tally_catalogue_raw_count(cat), sizeof *raw);
    assert_non_null(raw);
    raw[raw_slot(cat, "GpuBusyCycles")] = 25;
    raw[raw_slot(cat, "GpuCoreClocks")] = 100;
    assert_true(evaluate(cat, "GpuBusy", raw).f64 == 25.0);
    free(raw);
}

static void percentages_clamp_at_100(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint64_t *raw = calloc(tally_catalogue_raw_count(cat), sizeof *raw);
    assert_non_null(raw);
    raw[raw_slot(cat, "GpuBusyCycles")] = 300;
    raw[raw_slot(cat, "GpuCoreClocks")] = 100;
    raw[raw_slot(cat, "L2CacheHits")] = 10; /* inconsistent on purpose: 200 % */
    raw[raw_slot(cat, "L2CacheRequests")] = 5;
    assert_true(evaluate(cat, "GpuBusy", raw).f64 == 100.0);
    assert_true(as_double(tally_catalogue_counter(cat, find(cat, "L2CacheHitRate")),
                          evaluate(cat, "L2CacheHitRate", raw)) == 100.0);
    free(raw);
}

static void visible_primitives_never_go_below_zero(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint64_t *raw = calloc(tally_catalogue_raw_count(cat), sizeof *raw);
    assert_non_null(raw);
    const tally_counter_info *c = tally_catalogue_counter(cat, find(cat, "VisiblePrimitives"));
    raw[raw_slot(cat, "ClipperPrimitives")] = 3;
    raw[raw_slot(cat, "CulledPrimitives")] = 5;
    assert_true(as_double(c, evaluate(cat, "VisiblePrimitives", raw)) == 0.0);
    raw[raw_slot(cat, "ClipperPrimitives")] = 9;
    assert_true(as_double(c, evaluate(cat, "VisiblePrimitives", raw)) == 4.0);
    free(raw);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_counter_symbol_and_alias_symbol_is_unique),
        cmocka_unit_test(every_counter_uuid_is_unique),
        cmocka_unit_test(every_uuid_is_the_rfc4122_v5_uuid_of_the_symbol_alone),
        cmocka_unit_test(every_required_symbol_exists),
        cmocka_unit_test(the_catalogue_has_at_least_40_counters_in_at_least_8_groups),
        cmocka_unit_test(every_counter_has_enums_in_range_and_a_nonempty_range),
        cmocka_unit_test(percentage_counters_range_from_0_to_100),
        cmocka_unit_test(every_group_has_capacity_and_lists_exactly_its_counters),
        cmocka_unit_test(raw_indices_agree_with_the_raw_counter_lookup),
        cmocka_unit_test(every_metric_set_fits_in_one_pass),
        cmocka_unit_test(find_accepts_api_aliases),
        cmocka_unit_test(find_rejects_unknown_and_differently_cased_symbols),
        cmocka_unit_test(opencl_calls_cs_invocations_kernel_work_items),
        cmocka_unit_test(an_unknown_backend_has_no_catalogue),
        cmocka_unit_test(division_by_zero_evaluates_to_zero),
        cmocka_unit_test(busy_percentage_is_busy_cycles_over_core_clocks),
        cmocka_unit_test(percentages_clamp_at_100),
        cmocka_unit_test(visible_primitives_never_go_below_zero),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("catalogue", tests, NULL, NULL);
}
