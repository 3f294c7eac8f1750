/* The Metrics-Discovery object model: the device's global symbols, concurrent
 * groups, metric sets, metrics and information items as the catalogue
 * defines them; the one-set-per-group rule; how a stream negotiates its
 * interval and buffer; and waiting for reports with a timeout. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <time.h>

#include "fixture.h"
#include "md_test_util.h"

struct md_fixture {
    struct engine_fixture engine;
    tally_md_device *md;
};

static int setup(void **state)
{
    static struct md_fixture fx;
    memset(&fx, 0, sizeof fx);
    if (engine_fixture_open(&fx.engine) != 0 ||
        tally_md_device_open(fx.engine.device, &fx.md) != TALLY_OK)
        return -1;
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    struct md_fixture *fx = *state;
    tally_md_device_close(fx->md);
    engine_fixture_close(&fx->engine);
    return 0;
}

static void global_symbols_carry_the_catalogue_constants_and_the_device_clocks(void **state)
{
    struct md_fixture *fx = *state;
    const tally_catalogue *cat = tally_device_catalogue(fx->engine.device);
    const uint64_t *constants = tally_device_constants(fx->engine.device);
    for (uint32_t i = 0; i < tally_catalogue_constant_count(cat); i++) {
        const tally_constant_info *c = tally_catalogue_constant(cat, i);
        const tally_md_global_symbol *s = tally_md_device_find_global_symbol(fx->md, c->symbol);
        assert_non_null(s);
        assert_int_equal(s->value.type, TALLY_MD_VALUE_UINT64);
        assert_int_equal(s->value.value.u64, constants[i]);
    }
    tally_device_info info;
    tally_device_get_info(fx->engine.device, &info);
    const tally_md_global_symbol *name = tally_md_device_find_global_symbol(fx->md, "DeviceName");
    assert_non_null(name);
    assert_int_equal(name->value.type, TALLY_MD_VALUE_CSTRING);
    assert_string_equal(name->value.value.cstring, info.name);
    assert_string_equal(tally_md_device_get_params(fx->md)->device_name, info.name);
    /* the default profile's timestamp clock is 19.2 MHz and core clock 1000 MHz */
    const tally_md_global_symbol *ts =
        tally_md_device_find_global_symbol(fx->md, "GpuTimestampFrequency");
    assert_non_null(ts);
    assert_int_equal(ts->value.value.u64, 19200000);
    const tally_md_global_symbol *mhz =
        tally_md_device_find_global_symbol(fx->md, "GpuMaxFrequencyMHz");
    assert_non_null(mhz);
    assert_int_equal(mhz->value.value.u32, 1000);
    const tally_md_device_params *p = tally_md_device_get_params(fx->md);
    for (uint32_t i = 0; i < p->global_symbols_count; i++)
        assert_non_null(tally_md_device_get_global_symbol(fx->md, i)->symbol_name);
    assert_null(tally_md_device_get_global_symbol(fx->md, p->global_symbols_count));
}

static void groups_and_sets_follow_the_catalogue(void **state)
{
    struct md_fixture *fx = *state;
    const tally_catalogue *cat = tally_device_catalogue(fx->engine.device);
    const tally_md_device_params *p = tally_md_device_get_params(fx->md);
    assert_int_equal(p->concurrent_groups_count, tally_catalogue_concurrent_group_count(cat));
    uint32_t sets_seen = 0;
    for (uint32_t g = 0; g < p->concurrent_groups_count; g++) {
        tally_md_concurrent_group *group = tally_md_device_get_concurrent_group(fx->md, g);
        const tally_concurrent_group_info *cg = tally_catalogue_concurrent_group(cat, g);
        const tally_md_concurrent_group_params *gp = tally_md_concurrent_group_get_params(group);
        assert_string_equal(gp->symbol_name, cg->symbol);
        assert_true(gp->measurement_type_mask & TALLY_MD_MEASUREMENT_SNAPSHOT_IO);
        assert_int_equal(gp->metric_sets_count, cg->metric_set_count);
        for (uint32_t s = 0; s < gp->metric_sets_count; s++, sets_seen++) {
            tally_md_metric_set *set = tally_md_concurrent_group_get_metric_set(group, s);
            const tally_metric_set_info *info = tally_catalogue_metric_set(cat, cg->metric_sets[s]);
            const tally_md_metric_set_params *sp = tally_md_metric_set_get_params(set);
            assert_string_equal(sp->symbol_name, info->symbol);
            assert_int_equal(sp->concurrent_group, g);
            assert_ptr_equal(tally_md_metric_set_get_concurrent_group(set), group);
            assert_int_equal(sp->metrics_count, info->counter_count);
            assert_int_equal(sp->information_count, TALLY_MD_INFO_COUNT);
            for (uint32_t m = 0; m < sp->metrics_count; m++) {
                const tally_md_metric_params *mp = tally_md_metric_set_get_metric(set, m);
                const tally_counter_info *c = tally_catalogue_counter(cat, info->counters[m]);
                assert_int_equal(mp->id_in_set, m);
                assert_int_equal(mp->counter, info->counters[m]);
                assert_string_equal(mp->symbol_name, tally_counter_symbol_for(c, TALLY_API_MD));
                assert_string_equal(mp->units, tally_counter_unit_name_for(c, TALLY_API_MD));
                assert_string_equal(mp->long_name, c->description);
                assert_int_equal(mp->derived, c->raw_index == TALLY_NOT_RAW);
            }
            assert_null(tally_md_metric_set_get_metric(set, sp->metrics_count));
        }
        assert_null(tally_md_concurrent_group_get_metric_set(group, gp->metric_sets_count));
    }
    assert_int_equal(sets_seen, tally_catalogue_metric_set_count(cat));
    assert_null(tally_md_device_get_concurrent_group(fx->md, p->concurrent_groups_count));
}

static void metrics_speak_the_metrics_discovery_vocabulary(void **state)
{
    struct md_fixture *fx = *state;
    tally_md_metric_set *render = md_find_set(fx->md, "RenderBasic");
    const tally_md_metric_params *ps =
        tally_md_metric_set_get_metric(render, md_metric_index(render, "PsInvocations"));
    assert_int_equal(ps->metric_type, TALLY_MD_METRIC_EVENT);
    assert_int_equal(ps->result_type, TALLY_MD_VALUE_UINT64);
    assert_string_equal(ps->units, "invocations");
    const tally_md_metric_params *busy =
        tally_md_metric_set_get_metric(render, md_metric_index(render, "GpuBusy"));
    assert_int_equal(busy->metric_type, TALLY_MD_METRIC_RATIO);
    assert_int_equal(busy->result_type, TALLY_MD_VALUE_DOUBLE);
    assert_true(busy->derived);
    assert_true(busy->max_value.value.f64 == 100.0);
    const tally_md_metric_params *time =
        tally_md_metric_set_get_metric(render, md_metric_index(render, "GpuTime"));
    assert_int_equal(time->metric_type, TALLY_MD_METRIC_DURATION);
    assert_string_equal(time->units, "ns");
}

static bool names_threads(const char *symbol)
{
    size_t n = strlen(symbol);
    return n >= 7 && strcmp(symbol + n - 7, "Threads") == 0;
}

/* Intel's VsThreads, PsThreads and CsThreads count EU threads: their unit is
 * threads, not the waves of the same counters' catalogue symbols, in the
 * catalogue's MD view (tally list --api md) and in the sets that hold them. */
static void thread_metrics_are_counted_in_threads(void **state)
{
    struct md_fixture *fx = *state;
    const tally_catalogue *cat = tally_device_catalogue(fx->engine.device);
    uint32_t in_catalogue = 0, in_sets = 0;
    for (uint32_t i = 0; i < tally_catalogue_counter_count(cat); i++) {
        const tally_counter_info *c = tally_catalogue_counter(cat, i);
        if (!names_threads(tally_counter_symbol_for(c, TALLY_API_MD)))
            continue;
        assert_string_equal(tally_counter_unit_name_for(c, TALLY_API_MD), "threads");
        assert_string_equal(tally_counter_unit_name_for(c, TALLY_API_VULKAN), "waves");
        in_catalogue++;
    }
    assert_int_equal(in_catalogue, 3); /* VsThreads, PsThreads, CsThreads */
    const tally_md_device_params *p = tally_md_device_get_params(fx->md);
    for (uint32_t g = 0; g < p->concurrent_groups_count; g++) {
        tally_md_concurrent_group *group = tally_md_device_get_concurrent_group(fx->md, g);
        const tally_md_concurrent_group_params *gp = tally_md_concurrent_group_get_params(group);
        for (uint32_t s = 0; s < gp->metric_sets_count; s++) {
            tally_md_metric_set *set = tally_md_concurrent_group_get_metric_set(group, s);
            const tally_md_metric_set_params *sp = tally_md_metric_set_get_params(set);
            for (uint32_t m = 0; m < sp->metrics_count; m++) {
                const tally_md_metric_params *mp = tally_md_metric_set_get_metric(set, m);
                if (!names_threads(mp->symbol_name))
                    continue;
                assert_string_equal(mp->units, "threads");
                in_sets++;
            }
        }
    }
    assert_true(in_sets >= 1); /* CsThreads in ComputeBasic */
}

static void every_set_has_the_information_items_of_the_spec(void **state)
{
    struct md_fixture *fx = *state;
    static const struct {
        const char *symbol;
        tally_md_information_type type;
        tally_md_value_type result;
    } expected[TALLY_MD_INFO_COUNT] = {
        {"QueryBeginTime", TALLY_MD_INFORMATION_TIMESTAMP, TALLY_MD_VALUE_UINT64},
        {"QueryEndTime", TALLY_MD_INFORMATION_TIMESTAMP, TALLY_MD_VALUE_UINT64},
        {"ReportReason", TALLY_MD_INFORMATION_REPORT_REASON, TALLY_MD_VALUE_UINT32},
        {"ReportId", TALLY_MD_INFORMATION_VALUE, TALLY_MD_VALUE_UINT32},
        {"ContextIdValid", TALLY_MD_INFORMATION_FLAG, TALLY_MD_VALUE_BOOL},
        {"ContextId", TALLY_MD_INFORMATION_CONTEXT_ID_TAG, TALLY_MD_VALUE_UINT32},
        {"CoreFrequencyMHz", TALLY_MD_INFORMATION_VALUE, TALLY_MD_VALUE_UINT32},
        {"CoreFrequencyChanged", TALLY_MD_INFORMATION_FLAG, TALLY_MD_VALUE_BOOL},
        {"QuerySplitOccurred", TALLY_MD_INFORMATION_FLAG, TALLY_MD_VALUE_BOOL},
        {"ReportLost", TALLY_MD_INFORMATION_FLAG, TALLY_MD_VALUE_BOOL},
    };
    tally_md_metric_set *set = md_find_set(fx->md, "PipelineStats");
    for (uint32_t i = 0; i < TALLY_MD_INFO_COUNT; i++) {
        const tally_md_information_params *info = tally_md_metric_set_get_information(set, i);
        assert_int_equal(info->id_in_set, i);
        assert_string_equal(info->symbol_name, expected[i].symbol);
        assert_int_equal(info->info_type, expected[i].type);
        assert_int_equal(info->result_type, expected[i].result);
    }
    assert_null(tally_md_metric_set_get_information(set, TALLY_MD_INFO_COUNT));
}

/* RenderBasic reads 16 raw counters (its raw metrics and the operands of
 * GpuBusy, ShaderBusy and L2CacheHitRate): 32 header bytes + 16 x 5 = 112. */
static void the_raw_report_size_is_the_header_and_five_bytes_a_counter(void **state)
{
    struct md_fixture *fx = *state;
    const tally_md_metric_set_params *p =
        tally_md_metric_set_get_params(md_find_set(fx->md, "RenderBasic"));
    assert_int_equal(p->raw_counter_count, 16);
    assert_int_equal(p->raw_report_size, 112);
}

static void one_set_per_concurrent_group_and_groups_stream_together(void **state)
{
    struct md_fixture *fx = *state;
    tally_md_metric_set *render = md_find_set(fx->md, "RenderBasic");
    tally_md_metric_set *compute = md_find_set(fx->md, "ComputeBasic");
    tally_md_metric_set *pipeline = md_find_set(fx->md, "PipelineStats");
    tally_md_concurrent_group *oa = md_group_of(render);
    tally_md_concurrent_group *stats = md_group_of(pipeline);
    assert_ptr_equal(md_group_of(compute), oa);
    assert_ptr_not_equal(stats, oa);
    uint32_t interval = 0, size = 0;
    assert_int_equal(tally_md_open_io_stream(oa, render, &interval, &size), TALLY_OK);
    interval = 0, size = 0;
    assert_int_equal(tally_md_open_io_stream(oa, compute, &interval, &size),
                     TALLY_ERROR_INVALID_STATE);
    assert_int_equal(tally_md_open_io_stream(oa, render, &interval, &size),
                     TALLY_ERROR_INVALID_STATE);
    /* another view of the same device sees the same hardware */
    tally_md_device *other = NULL;
    assert_int_equal(tally_md_device_open(fx->engine.device, &other), TALLY_OK);
    tally_md_metric_set *other_compute = md_find_set(other, "ComputeBasic");
    assert_int_equal(
        tally_md_open_io_stream(md_group_of(other_compute), other_compute, &interval, &size),
        TALLY_ERROR_INVALID_STATE);
    /* a set of another group is not this group's to open */
    assert_int_equal(tally_md_open_io_stream(stats, render, &interval, &size),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_md_open_io_stream(stats, pipeline, &interval, &size), TALLY_OK);
    assert_int_equal(tally_md_close_io_stream(oa), TALLY_OK);
    assert_int_equal(tally_md_close_io_stream(oa), TALLY_ERROR_INVALID_STATE);
    interval = 0, size = 0;
    assert_int_equal(
        tally_md_open_io_stream(md_group_of(other_compute), other_compute, &interval, &size),
        TALLY_OK);
    tally_md_device_close(other); /* closes its stream and frees the group */
    assert_int_equal(tally_md_open_io_stream(oa, compute, &interval, &size), TALLY_OK);
    assert_int_equal(tally_md_close_io_stream(oa), TALLY_OK);
    assert_int_equal(tally_md_close_io_stream(stats), TALLY_OK);
}

static void negotiate(struct md_fixture *fx, uint32_t interval, uint32_t size,
                      uint32_t want_interval, uint32_t want_size)
{
    tally_md_metric_set *render = md_find_set(fx->md, "RenderBasic");
    tally_md_concurrent_group *oa = md_group_of(render);
    assert_int_equal(tally_md_open_io_stream(oa, render, &interval, &size), TALLY_OK);
    assert_int_equal(interval, want_interval);
    assert_int_equal(size, want_size);
    assert_int_equal(tally_md_close_io_stream(oa), TALLY_OK);
}

/* At 19.2 MHz one tick is 52.083 ns and RenderBasic's report is 112 bytes. */
static void the_interval_and_buffer_are_negotiated_in_and_out(void **state)
{
    struct md_fixture *fx = *state;
    /* 100 us is 1920 ticks exactly; 0 B asks for a second: 10000 reports */
    negotiate(fx, 100000, 0, 100000, 10000 * 112);
    /* 0 ns asks for the recommended 100 us */
    negotiate(fx, 0, 0, 100000, 10000 * 112);
    /* 123457 ns is 2370.37 ticks -> 2370 ticks = 123437.5 ns -> 123438 */
    negotiate(fx, 123457, 1000, 123438, 8 * 112);
    /* 1 ms is 19200 ticks; 1000 B hold 8 whole reports */
    negotiate(fx, 1000000, 1000, 1000000, 8 * 112);
    /* below the 10 us minimum: raised to it (192 ticks); a 1-byte buffer
     * becomes the minimum of 2 reports */
    negotiate(fx, 1000, 1, 10000, 2 * 112);
    /* a huge buffer is capped at 65536 reports */
    negotiate(fx, 1000000, UINT32_MAX, 1000000, 65536 * 112);
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A virtual clock stands still without work: no report comes until some runs. */
static void waiting_without_work_times_out_and_work_ends_the_wait(void **state)
{
    struct md_fixture *fx = *state;
    tally_md_metric_set *render = md_find_set(fx->md, "RenderBasic");
    tally_md_concurrent_group *oa = md_group_of(render);
    assert_int_equal(tally_md_wait_for_reports(oa, 10), TALLY_ERROR_INVALID_STATE);
    uint32_t interval = 10000, size = 0;
    assert_int_equal(tally_md_open_io_stream(oa, render, &interval, &size), TALLY_OK);
    uint64_t before = monotonic_ns();
    assert_int_equal(tally_md_wait_for_reports(oa, 50), TALLY_TIMEOUT);
    assert_true(monotonic_ns() - before >= 50000000u);
    uint32_t count = 4, status = 1;
    uint8_t buffer[4 * 112];
    assert_int_equal(tally_md_read_io_stream(oa, &count, buffer, 0, &status), TALLY_OK);
    assert_int_equal(count, 0);
    assert_int_equal(status, 0);
    tally_program *program = md_create_program(fx->engine.device);
    md_record_draws(fx->engine.stream, program, 4, 300);
    engine_fixture_submit(&fx->engine);
    assert_int_equal(tally_md_wait_for_reports(oa, 10000), TALLY_OK);
    tally_program_release(program);
    assert_int_equal(tally_md_close_io_stream(oa), TALLY_OK);
    count = 4;
    assert_int_equal(tally_md_read_io_stream(oa, &count, buffer, 0, NULL),
                     TALLY_ERROR_INVALID_STATE);
    assert_int_equal(count, 0);
}

static void bad_arguments_are_invalid(void **state)
{
    struct md_fixture *fx = *state;
    tally_md_device *md = NULL;
    assert_int_equal(tally_md_device_open(NULL, &md), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_md_device_open(fx->engine.device, NULL), TALLY_ERROR_INVALID_ARGUMENT);
    tally_md_metric_set *render = md_find_set(fx->md, "RenderBasic");
    tally_md_concurrent_group *oa = md_group_of(render);
    uint32_t interval = 0, size = 0, count = 0;
    assert_int_equal(tally_md_open_io_stream(NULL, render, &interval, &size),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_md_open_io_stream(oa, NULL, &interval, &size),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_md_open_io_stream(oa, render, NULL, &size),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_md_read_io_stream(oa, NULL, NULL, 0, NULL),
                     TALLY_ERROR_INVALID_ARGUMENT);
    count = 1;
    assert_int_equal(tally_md_read_io_stream(oa, &count, NULL, 0, NULL),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_md_close_io_stream(NULL), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_md_wait_for_reports(NULL, 0), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_md_flush_io_stream(oa, 0), TALLY_ERROR_INVALID_STATE);
    assert_null(tally_md_device_get_params(NULL));
    assert_null(tally_md_metric_set_get_params(NULL));
    assert_int_equal(tally_md_device_get_gpu_cpu_timestamps(NULL, NULL, NULL, NULL),
                     TALLY_ERROR_INVALID_ARGUMENT);
    tally_md_device_close(NULL);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            global_symbols_carry_the_catalogue_constants_and_the_device_clocks, setup, teardown),
        cmocka_unit_test_setup_teardown(groups_and_sets_follow_the_catalogue, setup, teardown),
        cmocka_unit_test_setup_teardown(metrics_speak_the_metrics_discovery_vocabulary, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(thread_metrics_are_counted_in_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(every_set_has_the_information_items_of_the_spec, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(the_raw_report_size_is_the_header_and_five_bytes_a_counter,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(one_set_per_concurrent_group_and_groups_stream_together,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(the_interval_and_buffer_are_negotiated_in_and_out, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(waiting_without_work_times_out_and_work_ends_the_wait,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(bad_arguments_are_invalid, setup, teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
