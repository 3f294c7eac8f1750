/* Stream mode end to end: reports sampled while work runs add up to the
 * totals the query results (tally_results) give for the same work; reports
 * read while two threads submit lose nothing unless the buffer overflows,
 * and say so when it does; a report's GPU time maps to the CPU time of the
 * submission that caused it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"
#include "md_test_util.h"

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The catalogue indices of a set's metrics whose counters count work (not
 * time, not ratios): those whose sampled deltas must add up exactly. */
static uint32_t work_metrics(const tally_catalogue *cat, const tally_md_metric_set *set,
                             uint32_t *positions, uint32_t *counters)
{
    uint32_t n = 0;
    const tally_md_metric_set_params *p = tally_md_metric_set_get_params(set);
    for (uint32_t m = 0; m < p->metrics_count; m++) {
        const tally_md_metric_params *mp = tally_md_metric_set_get_metric(set, m);
        if (tally_catalogue_counter(cat, mp->counter)->source == TALLY_SOURCE_WORK) {
            positions[n] = m;
            counters[n++] = mp->counter;
        }
    }
    return n;
}

static void sampled_deltas_add_up_to_the_query_results_of_the_same_work(void **state)
{
    (void)state;
    struct engine_fixture fx;
    assert_int_equal(engine_fixture_open(&fx), 0);
    const tally_catalogue *cat = tally_device_catalogue(fx.device);
    tally_md_device *md = NULL;
    assert_int_equal(tally_md_device_open(fx.device, &md), TALLY_OK);
    /* two concurrent groups at once: OA and the pipeline statistics */
    tally_md_metric_set *sets[2] = {md_find_set(md, "RenderBasic"),
                                    md_find_set(md, "PipelineStats")};
    for (int i = 0; i < 2; i++) {
        uint32_t interval = 10000, size = 0;
        assert_int_equal(tally_md_open_io_stream(md_group_of(sets[i]), sets[i], &interval, &size),
                         TALLY_OK);
    }
    uint32_t positions[2][64], counters[2][64], n[2];
    tally_results *results[2];
    for (int i = 0; i < 2; i++) {
        n[i] = work_metrics(cat, sets[i], positions[i], counters[i]);
        assert_true(n[i] >= 5);
        assert_int_equal(tally_results_create(fx.device, counters[i], n[i], 1, &results[i]),
                         TALLY_OK);
        assert_int_equal(tally_stream_marker_begin(fx.stream, results[i], 0), TALLY_OK);
    }
    tally_program *program = md_create_program(fx.device);
    for (uint32_t frame = 0; frame < 20; frame++)
        md_record_draws(fx.stream, program, 25, 300 + 30 * frame);
    for (int i = 0; i < 2; i++)
        assert_int_equal(tally_stream_marker_end(fx.stream, results[i], 0), TALLY_OK);
    engine_fixture_submit(&fx);
    for (int i = 0; i < 2; i++) {
        tally_md_concurrent_group *group = md_group_of(sets[i]);
        assert_int_equal(tally_md_flush_io_stream(group, 1000), TALLY_OK);
        struct md_reports reports = {0};
        md_read_all(group, sets[i], &reports);
        assert_int_equal(reports.status_flags, 0);
        uint32_t rows = 0;
        tally_md_typed_value *values = md_calculate_all(sets[i], &reports, &rows);
        assert_true(rows >= 10); /* the work spans many 10 us intervals */
        tally_value totals[64];
        assert_int_equal(tally_results_get(results[i], 0, totals, n[i], NULL), TALLY_OK);
        for (uint32_t k = 0; k < n[i]; k++)
            assert_int_equal(md_sum_u64(sets[i], values, rows, positions[i][k]), totals[k].u64);
        /* intervals tile the GPU time: the GpuTime deltas add up to the span */
        if (i == 0) {
            uint32_t info = tally_md_metric_set_get_params(sets[i])->metrics_count;
            uint64_t begin =
                md_at(sets[i], values, 0, info + TALLY_MD_INFO_QUERY_BEGIN_TIME)->value.u64;
            uint64_t end =
                md_at(sets[i], values, rows - 1, info + TALLY_MD_INFO_QUERY_END_TIME)->value.u64;
            assert_int_equal(md_sum_u64(sets[i], values, rows, md_metric_index(sets[i], "GpuTime")),
                             end - begin);
            assert_int_equal(md_sum_u64(sets[i], values, rows, info + TALLY_MD_INFO_REPORT_LOST),
                             0);
        }
        free(values);
        md_reports_free(&reports);
        tally_results_release(results[i]);
    }
    tally_program_release(program);
    tally_md_device_close(md);
    engine_fixture_close(&fx);
}

/* --- two submitting threads, one reader ------------------------------------------ */

enum { SUBMISSIONS = 40, DRAWS = 20, VERTICES = 600 };

struct submitter {
    tally_device *device;
    tally_program *program;
};

static void *submit_work(void *arg)
{
    struct submitter *s = arg;
    tally_context *ctx = NULL;
    tally_stream *stream = NULL;
    if (tally_context_create(s->device, "thread", &ctx) != TALLY_OK ||
        tally_stream_create(ctx, &stream) != TALLY_OK)
        return (void *)1;
    for (int i = 0; i < SUBMISSIONS; i++) {
        tally_render_state rs = {.width = 128, .height = 128, .layers = 1, .samples = 1};
        tally_stream_set_render_state(stream, &rs);
        tally_stream_bind_program(stream, s->program);
        for (int d = 0; d < DRAWS; d++) {
            tally_draw draw = {.api_name = "draw",
                               .count = VERTICES,
                               .instance_count = 1,
                               .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
            tally_stream_draw(stream, &draw);
        }
        tally_submission sub = {.streams = &stream,
                                .stream_count = 1,
                                .flags = TALLY_SUBMIT_CONSUME,
                                .api_name = "submit"};
        if (tally_submit(s->device, &sub, NULL) != TALLY_OK)
            return (void *)1;
    }
    tally_device_wait_idle(s->device);
    tally_stream_destroy(stream);
    tally_context_destroy(ctx);
    return NULL;
}

struct reader {
    tally_md_concurrent_group *group;
    tally_md_metric_set *set;
    struct md_reports reports;
    atomic_bool stop;
};

static void *read_reports(void *arg)
{
    struct reader *r = arg;
    while (!atomic_load(&r->stop)) {
        tally_status s = tally_md_wait_for_reports(r->group, 5);
        if (s == TALLY_OK)
            md_read_all(r->group, r->set, &r->reports);
    }
    return NULL;
}

static void run_two_submitters(tally_device *device, tally_md_concurrent_group *group,
                               tally_md_metric_set *set, struct reader *reader)
{
    tally_program *program = md_create_program(device);
    struct submitter s = {device, program};
    pthread_t threads[2], reading;
    reader->group = group;
    reader->set = set;
    atomic_init(&reader->stop, false);
    assert_int_equal(pthread_create(&reading, NULL, read_reports, reader), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, submit_work, &s), 0);
    for (int i = 0; i < 2; i++) {
        void *failed = NULL;
        pthread_join(threads[i], &failed);
        assert_null(failed);
    }
    assert_int_equal(tally_device_wait_idle(device), TALLY_OK);
    assert_int_equal(tally_md_flush_io_stream(group, 1000), TALLY_OK);
    atomic_store(&reader->stop, true);
    pthread_join(reading, NULL);
    md_read_all(group, set, &reader->reports);
    tally_program_release(program);
}

static void a_stream_read_during_two_threads_of_work_loses_nothing(void **state)
{
    (void)state;
    tally_device *device = open_virtual_device();
    tally_md_device *md = NULL;
    assert_int_equal(tally_md_device_open(device, &md), TALLY_OK);
    tally_md_metric_set *set = md_find_set(md, "RenderBasic");
    tally_md_concurrent_group *group = md_group_of(set);
    uint32_t interval = 10000, size = 0;
    assert_int_equal(tally_md_open_io_stream(group, set, &interval, &size), TALLY_OK);
    struct reader reader = {0};
    run_two_submitters(device, group, set, &reader);
    assert_int_equal(reader.reports.status_flags, 0);
    uint32_t rows = 0;
    tally_md_typed_value *values = md_calculate_all(set, &reader.reports, &rows);
    assert_true(rows > 100);
    uint32_t info = tally_md_metric_set_get_params(set)->metrics_count;
    for (uint32_t r = 0; r < rows; r++) {
        assert_int_equal(md_at(set, values, r, info + TALLY_MD_INFO_REPORT_ID)->value.u32, r + 1);
        assert_false(md_at(set, values, r, info + TALLY_MD_INFO_REPORT_LOST)->value.b);
    }
    assert_int_equal(md_sum_u64(set, values, rows, md_metric_index(set, "DrawCalls")),
                     2 * SUBMISSIONS * DRAWS);
    assert_int_equal(md_sum_u64(set, values, rows, md_metric_index(set, "VsInvocations")),
                     2 * SUBMISSIONS * DRAWS * VERTICES);
    /* two contexts took turns, and some interval saw the switch */
    assert_true(md_sum_u64(set, values, rows, info + TALLY_MD_INFO_QUERY_SPLIT_OCCURRED) > 0);
    free(values);
    md_reports_free(&reader.reports);
    tally_md_device_close(md);
    tally_device_close(device);
}

/* With room for two reports and nobody reading, the stream overflows: the
 * read says so, and the interval across the gap is flagged ReportLost. Its
 * deltas still span the gap, so the totals survive; only the resolution went. */
static void an_overflowing_stream_says_so(void **state)
{
    (void)state;
    tally_device *device = open_virtual_device();
    tally_md_device *md = NULL;
    assert_int_equal(tally_md_device_open(device, &md), TALLY_OK);
    tally_md_metric_set *set = md_find_set(md, "RenderBasic");
    tally_md_concurrent_group *group = md_group_of(set);
    uint32_t interval = 10000, size = 1;
    assert_int_equal(tally_md_open_io_stream(group, set, &interval, &size), TALLY_OK);
    assert_int_equal(size, 2 * tally_md_metric_set_get_params(set)->raw_report_size);
    struct engine_fixture fx = {.device = device};
    assert_int_equal(tally_context_create(device, "test", &fx.context), TALLY_OK);
    assert_int_equal(tally_stream_create(fx.context, &fx.stream), TALLY_OK);
    tally_program *program = md_create_program(device);
    md_record_draws(fx.stream, program, 400, 900);
    engine_fixture_submit(&fx);
    struct md_reports reports = {0};
    md_read_all(group, set, &reports);
    assert_int_equal(reports.count, 2);
    assert_true(reports.status_flags & TALLY_MD_IO_STATUS_REPORTS_LOST);
    reports.status_flags = 0;
    assert_int_equal(tally_md_flush_io_stream(group, 1000), TALLY_OK);
    md_read_all(group, set, &reports);
    assert_int_equal(reports.count, 3);
    uint32_t rows = 0;
    tally_md_typed_value *values = md_calculate_all(set, &reports, &rows);
    uint32_t info = tally_md_metric_set_get_params(set)->metrics_count;
    assert_false(md_at(set, values, 0, info + TALLY_MD_INFO_REPORT_LOST)->value.b);
    assert_true(md_at(set, values, 1, info + TALLY_MD_INFO_REPORT_LOST)->value.b);
    assert_int_equal(md_at(set, values, 1, info + TALLY_MD_INFO_REPORT_REASON)->value.u32,
                     TALLY_MD_REPORT_REASON_FLUSH);
    assert_int_equal(md_sum_u64(set, values, rows, md_metric_index(set, "DrawCalls")), 400);
    free(values);
    md_reports_free(&reports);
    tally_program_release(program);
    tally_stream_destroy(fx.stream);
    tally_context_destroy(fx.context);
    tally_md_device_close(md);
    tally_device_close(device);
}

static void dropping_old_reports_returns_the_newest_and_says_so(void **state)
{
    (void)state;
    struct engine_fixture fx;
    assert_int_equal(engine_fixture_open(&fx), 0);
    tally_md_device *md = NULL;
    assert_int_equal(tally_md_device_open(fx.device, &md), TALLY_OK);
    tally_md_metric_set *set = md_find_set(md, "RenderBasic");
    tally_md_concurrent_group *group = md_group_of(set);
    uint32_t interval = 10000, size = 0;
    assert_int_equal(tally_md_open_io_stream(group, set, &interval, &size), TALLY_OK);
    tally_program *program = md_create_program(fx.device);
    md_record_draws(fx.stream, program, 200, 900);
    engine_fixture_submit(&fx);
    assert_int_equal(tally_md_flush_io_stream(group, 1000), TALLY_OK);
    uint32_t report_size = tally_md_metric_set_get_params(set)->raw_report_size;
    uint8_t *buffer = calloc(3, report_size);
    assert_non_null(buffer);
    uint32_t count = 3, status = 0;
    assert_int_equal(tally_md_read_io_stream(group, &count, buffer,
                                             TALLY_MD_IO_READ_FLAG_DROP_OLD_REPORTS, &status),
                     TALLY_OK);
    assert_int_equal(count, 3);
    assert_int_equal(status, TALLY_MD_IO_STATUS_REPORTS_LOST);
    /* the newest three: the last one is the flush */
    tally_md_typed_value values[2 * (16 + TALLY_MD_INFO_COUNT)];
    uint32_t rows = 0;
    assert_int_equal(tally_md_calculate_metrics(set, buffer, 3 * report_size, values,
                                                2 * (16 + TALLY_MD_INFO_COUNT), &rows),
                     TALLY_OK);
    assert_int_equal(rows, 2);
    assert_int_equal(md_at(set, values, 1, 16 + TALLY_MD_INFO_REPORT_REASON)->value.u32,
                     TALLY_MD_REPORT_REASON_FLUSH);
    assert_true(md_at(set, values, 0, 16 + TALLY_MD_INFO_REPORT_ID)->value.u32 > 10);
    count = 3;
    assert_int_equal(tally_md_read_io_stream(group, &count, buffer, 0, &status), TALLY_OK);
    assert_int_equal(count, 0);
    assert_int_equal(status, 0);
    free(buffer);
    tally_program_release(program);
    tally_md_device_close(md);
    engine_fixture_close(&fx);
}

/* --- timestamps -------------------------------------------------------------------- */

static void a_report_maps_to_the_cpu_time_of_the_submission_that_caused_it(void **state)
{
    (void)state;
    tally_device_options options = {.clock = TALLY_CLOCK_REALTIME};
    struct engine_fixture fx = {0};
    assert_int_equal(engine_fixture_open_with(&fx, &options), 0);
    tally_md_device *md = NULL;
    assert_int_equal(tally_md_device_open(fx.device, &md), TALLY_OK);
    tally_md_metric_set *set = md_find_set(md, "RenderBasic");
    tally_md_concurrent_group *group = md_group_of(set);
    uint32_t interval = 1000000, size = 0;
    assert_int_equal(tally_md_open_io_stream(group, set, &interval, &size), TALLY_OK);
    uint64_t gpu_snap = 0, cpu_snap = 0, indicator = 1;
    assert_int_equal(tally_md_device_get_gpu_cpu_timestamps(md, &gpu_snap, &cpu_snap, &indicator),
                     TALLY_OK);
    assert_int_equal(indicator, 0);
    tally_program *program = md_create_program(fx.device);
    uint32_t time_counter = 0;
    assert_int_equal(
        tally_catalogue_find(tally_device_catalogue(fx.device), "GpuTime", &time_counter),
        TALLY_OK);
    tally_results *results = NULL;
    assert_int_equal(tally_results_create(fx.device, &time_counter, 1, 1, &results), TALLY_OK);
    assert_int_equal(tally_stream_marker_begin(fx.stream, results, 0), TALLY_OK);
    md_record_draws(fx.stream, program, 10, 300);
    assert_int_equal(tally_stream_marker_end(fx.stream, results, 0), TALLY_OK);
    /* let the stream's first report come before the work */
    assert_int_equal(tally_md_wait_for_reports(group, 1000), TALLY_OK);
    tally_submission sub = {.streams = &fx.stream,
                            .stream_count = 1,
                            .flags = TALLY_SUBMIT_CONSUME,
                            .api_name = "submit"};
    uint64_t raw_before = clock_ns(CLOCK_MONOTONIC_RAW);
    uint64_t before = clock_ns(CLOCK_MONOTONIC);
    assert_int_equal(tally_submit(fx.device, &sub, NULL), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(fx.device), TALLY_OK);
    uint64_t done = clock_ns(CLOCK_MONOTONIC);
    uint64_t raw_done = clock_ns(CLOCK_MONOTONIC_RAW);
    assert_int_equal(tally_md_flush_io_stream(group, 2000), TALLY_OK);
    tally_value work_ns;
    assert_int_equal(tally_results_get(results, 0, &work_ns, 1, NULL), TALLY_OK);
    struct md_reports reports = {0};
    md_read_all(group, set, &reports);
    uint32_t rows = 0;
    tally_md_typed_value *values = md_calculate_all(set, &reports, &rows);
    uint32_t draws = md_metric_index(set, "DrawCalls");
    uint32_t info = tally_md_metric_set_get_params(set)->metrics_count;
    uint32_t first = rows, last = 0;
    for (uint32_t r = 0; r < rows; r++) {
        if (md_at(set, values, r, draws)->value.u64) {
            first = r < first ? r : first;
            last = r;
        }
    }
    assert_true(first < rows);
    assert_int_equal(md_sum_u64(set, values, rows, draws), 10);
    uint64_t begin = tally_md_gpu_to_monotonic_ns(
        md_at(set, values, first, info + TALLY_MD_INFO_QUERY_BEGIN_TIME)->value.u64, gpu_snap,
        cpu_snap);
    uint64_t end = tally_md_gpu_to_monotonic_ns(
        md_at(set, values, last, info + TALLY_MD_INFO_QUERY_END_TIME)->value.u64, gpu_snap,
        cpu_snap);
    /* The GPU starts the work no earlier than its submission and no later
     * than the CPU saw it done (its clock follows CLOCK_MONOTONIC), so the
     * reports that hold it begin before it was done, end after it was
     * submitted, and end within one interval after the work's end. */
    assert_true(begin < done);
    assert_true(end >= before);
    assert_true(end <= done + work_ns.u64 + interval);
    /* the same through CLOCK_MONOTONIC_RAW, within the two clocks' drift */
    uint64_t raw_end = tally_md_monotonic_to_raw_ns(end);
    const uint64_t drift = 1000000;
    assert_true(raw_end + drift >= raw_before);
    assert_true(raw_end <= raw_done + work_ns.u64 + interval + drift);
    free(values);
    md_reports_free(&reports);
    tally_results_release(results);
    tally_program_release(program);
    tally_md_device_close(md);
    engine_fixture_close(&fx);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sampled_deltas_add_up_to_the_query_results_of_the_same_work),
        cmocka_unit_test(a_stream_read_during_two_threads_of_work_loses_nothing),
        cmocka_unit_test(an_overflowing_stream_says_so),
        cmocka_unit_test(dropping_old_reports_returns_the_newest_and_says_so),
        cmocka_unit_test(a_report_maps_to_the_cpu_time_of_the_submission_that_caused_it),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
