/* Pass planning: goldens computed by hand from the group capacities of the
 * catalogue, and multi-pass results becoming available only after every pass. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixture.h"

static const tally_catalogue *simgpu(void)
{
    const tally_catalogue *cat = NULL;
    assert_int_equal(tally_backend_catalogue("simgpu", &cat), TALLY_OK);
    return cat;
}

static uint32_t find(const tally_catalogue *cat, const char *symbol)
{
    uint32_t index = UINT32_MAX;
    assert_int_equal(tally_catalogue_find(cat, symbol, &index), TALLY_OK);
    return index;
}

/* The five counters of the Gpu group (capacity 4), in catalogue order. */
static void gpu_counters(const tally_catalogue *cat, uint32_t out[5])
{
    static const char *const symbols[5] = {"GpuTime", "GpuCoreClocks", "GpuBusyCycles", "GpuBusy",
                                           "AvgGpuCoreFrequency"};
    for (int i = 0; i < 5; i++)
        out[i] = find(cat, symbols[i]);
}

static void no_counters_need_no_passes(void **state)
{
    (void)state;
    uint32_t passes = 99;
    assert_int_equal(tally_plan_passes(simgpu(), NULL, 0, NULL, &passes), TALLY_OK);
    assert_int_equal(passes, 0);
}

static void the_gpu_group_is_five_counters_with_capacity_four(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    const tally_group_info *g =
        tally_catalogue_group(cat, tally_catalogue_counter(cat, find(cat, "GpuTime"))->group);
    assert_string_equal(g->symbol, "Gpu");
    assert_int_equal(g->capacity, 4);
    assert_int_equal(g->counter_count, 5);
}

static void five_counters_of_a_capacity_four_group_need_two_passes(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint32_t counters[5], pass_of[5], passes = 0;
    gpu_counters(cat, counters);
    assert_int_equal(tally_plan_passes(cat, counters, 5, pass_of, &passes), TALLY_OK);
    assert_int_equal(passes, 2);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pass_of[i], 0);
    assert_int_equal(pass_of[4], 1);
}

static void a_counter_listed_twice_takes_one_place(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint32_t g[5];
    gpu_counters(cat, g);
    /* four distinct counters, the first listed twice: fits capacity 4 */
    uint32_t counters[5] = {g[0], g[1], g[0], g[2], g[3]};
    uint32_t pass_of[5], passes = 0;
    assert_int_equal(tally_plan_passes(cat, counters, 5, pass_of, &passes), TALLY_OK);
    assert_int_equal(passes, 1);
    assert_int_equal(pass_of[2], 0);
}

static void counters_of_different_groups_share_a_pass(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint32_t counters[4] = {find(cat, "GpuTime"), find(cat, "DrawCalls"), find(cat, "IaVertices"),
                            find(cat, "L2CacheHits")};
    uint32_t pass_of[4], passes = 0;
    assert_int_equal(tally_plan_passes(cat, counters, 4, pass_of, &passes), TALLY_OK);
    assert_int_equal(passes, 1);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pass_of[i], 0);
}

/* max over groups of ceil(counters / capacity), from the group table. */
static uint32_t expected_passes_for_everything(const tally_catalogue *cat)
{
    uint32_t most = 0;
    for (uint32_t g = 0; g < tally_catalogue_group_count(cat); g++) {
        const tally_group_info *group = tally_catalogue_group(cat, g);
        uint32_t need = (group->counter_count + group->capacity - 1) / group->capacity;
        if (need > most)
            most = need;
    }
    return most;
}

static void all_counters_need_the_most_passes_any_group_needs(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint32_t n = tally_catalogue_counter_count(cat);
    uint32_t *counters = malloc(n * sizeof *counters);
    uint32_t *pass_of = malloc(n * sizeof *pass_of);
    assert_non_null(counters);
    assert_non_null(pass_of);
    for (uint32_t i = 0; i < n; i++)
        counters[i] = i;
    uint32_t passes = 0;
    assert_int_equal(tally_plan_passes(cat, counters, n, pass_of, &passes), TALLY_OK);
    assert_int_equal(passes, expected_passes_for_everything(cat));
    /* no pass holds more of a group than its capacity */
    for (uint32_t g = 0; g < tally_catalogue_group_count(cat); g++) {
        const tally_group_info *group = tally_catalogue_group(cat, g);
        for (uint32_t p = 0; p < passes; p++) {
            uint32_t in_pass = 0;
            for (uint32_t k = 0; k < group->counter_count; k++)
                in_pass += pass_of[group->counters[k]] == p;
            assert_true(in_pass <= group->capacity);
        }
    }
    free(counters);
    free(pass_of);
}

static void an_unknown_counter_index_is_rejected(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint32_t counters[2] = {0, tally_catalogue_counter_count(cat)};
    uint32_t passes = 0;
    assert_int_equal(tally_plan_passes(cat, counters, 2, NULL, &passes),
                     TALLY_ERROR_UNKNOWN_COUNTER);
}

static void null_pointers_are_invalid_arguments(void **state)
{
    (void)state;
    const tally_catalogue *cat = simgpu();
    uint32_t counters[1] = {0}, passes = 0;
    assert_int_equal(tally_plan_passes(NULL, counters, 1, NULL, &passes),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_plan_passes(cat, NULL, 1, NULL, &passes), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_plan_passes(cat, counters, 1, NULL, NULL), TALLY_ERROR_INVALID_ARGUMENT);
}

static void results_report_the_planned_pass_count(void **state)
{
    (void)state;
    tally_device *device = open_virtual_device();
    const tally_catalogue *cat = tally_device_catalogue(device);
    uint32_t n = tally_catalogue_counter_count(cat);
    uint32_t *counters = malloc(n * sizeof *counters);
    assert_non_null(counters);
    for (uint32_t i = 0; i < n; i++)
        counters[i] = i;
    tally_results *results = NULL;
    assert_int_equal(tally_results_create(device, counters, n, 1, &results), TALLY_OK);
    assert_int_equal(tally_results_pass_count(results), expected_passes_for_everything(cat));
    tally_results_release(results);

    uint32_t gpu[5];
    gpu_counters(cat, gpu);
    assert_int_equal(tally_results_create(device, gpu, 5, 1, &results), TALLY_OK);
    assert_int_equal(tally_results_pass_count(results), 2);
    assert_int_equal(tally_results_counter_pass(results, 4), 1);
    tally_results_release(results);
    free(counters);
    tally_device_close(device);
}

static void a_two_pass_slot_is_available_only_after_both_passes(void **state)
{
    (void)state;
    tally_device *device = open_virtual_device();
    const tally_catalogue *cat = tally_device_catalogue(device);
    uint32_t gpu[5];
    gpu_counters(cat, gpu);
    tally_context *context = NULL;
    tally_stream *stream = NULL;
    tally_results *results = NULL;
    assert_int_equal(tally_context_create(device, "test", &context), TALLY_OK);
    assert_int_equal(tally_stream_create(context, &stream), TALLY_OK);
    assert_int_equal(tally_results_create(device, gpu, 5, 1, &results), TALLY_OK);
    tally_draw draw = {.api_name = "draw",
                       .count = 3,
                       .instance_count = 1,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    assert_int_equal(tally_stream_marker_begin(stream, results, 0), TALLY_OK);
    assert_int_equal(tally_stream_draw(stream, &draw), TALLY_OK);
    assert_int_equal(tally_stream_marker_end(stream, results, 0), TALLY_OK);

    tally_submission sub = {
        .streams = &stream, .stream_count = 1, .pass_index = 0, .api_name = "submit"};
    assert_int_equal(tally_submit(device, &sub, NULL), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(device), TALLY_OK);
    tally_value values[5];
    tally_slot_info info;
    assert_int_equal(tally_results_get(results, 0, values, 5, &info), TALLY_NOT_READY);

    sub.pass_index = 1;
    assert_int_equal(tally_submit(device, &sub, NULL), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(device), TALLY_OK);
    assert_int_equal(tally_results_get(results, 0, values, 5, &info), TALLY_OK);
    assert_int_equal(info.passes_done, 3);

    tally_results_release(results);
    tally_stream_destroy(stream);
    tally_context_destroy(context);
    tally_device_close(device);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_counters_need_no_passes),
        cmocka_unit_test(the_gpu_group_is_five_counters_with_capacity_four),
        cmocka_unit_test(five_counters_of_a_capacity_four_group_need_two_passes),
        cmocka_unit_test(a_counter_listed_twice_takes_one_place),
        cmocka_unit_test(counters_of_different_groups_share_a_pass),
        cmocka_unit_test(all_counters_need_the_most_passes_any_group_needs),
        cmocka_unit_test(an_unknown_counter_index_is_rejected),
        cmocka_unit_test(null_pointers_are_invalid_arguments),
        cmocka_unit_test(results_report_the_planned_pass_count),
        cmocka_unit_test(a_two_pass_slot_is_available_only_after_both_passes),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("planning", tests, NULL, NULL);
}
