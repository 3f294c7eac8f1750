/*
 * TALLY_BACKEND=driver on lavapipe: an unmodified program that measures its
 * own pipeline statistics per command (tests/layer/vk_workload.c) runs once
 * without the layer, which gives the driver's own values, and once under
 * the layer with the driver backend. The report's statistics must equal the
 * driver's for every command, indexed and indirect ones included; the
 * program's own queries, which the layer now serves, must read the same;
 * every command's GPU time lies within the program's own timestamps of it
 * (written inside its pipeline-statistics query, just around it), and a
 * submission's commands take no more than the span the program's own
 * timestamps measure around it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "layer_harness.h"

typedef struct runs {
    run_result alone, measured;
    json_object *truth;  /* the program's lines without the layer */
    json_object *lines;  /* its lines under the layer */
    json_object *report; /* the report's commands */
} runs;

static int run_both(void **state)
{
    static runs r;
    const char *argv[] = {VK_WORKLOAD, SHADER_DIR, NULL};
    r.alone = run_under_layer(argv, ACTIVATE_NONE, NULL);
    const char *env[] = {"TALLY_BACKEND=driver", "VK_WORKLOAD_COMMAND_TIMES=1",
                         "TALLY_COUNTERS=GpuTime,DrawCalls,Dispatches,IaVertices,IaPrimitives,"
                         "VsInvocations,GsInvocations,GsPrimitives,ClipperInvocations,"
                         "ClipperPrimitives,FsInvocations,TessControlPatches,TessEvalInvocations,"
                         "CsInvocations",
                         NULL};
    r.measured = run_under_layer(argv, ACTIVATE_EXPLICIT, env);
    if (r.alone.exit_code != 0 || r.measured.exit_code != 0 || !r.measured.report)
        return -1;
    r.truth = output_lines(&r.alone);
    r.lines = output_lines(&r.measured);
    r.report = report_commands(&r.measured);
    if (!r.truth || !r.lines || !r.report ||
        json_object_array_length(r.truth) != json_object_array_length(r.lines) ||
        lines_record_count(r.lines) != json_object_array_length(r.report))
        return -1;
    *state = &r;
    return 0;
}

static int free_both(void **state)
{
    runs *r = *state;
    json_object_put(r->truth);
    json_object_put(r->lines);
    run_result_free(&r->alone);
    run_result_free(&r->measured);
    return 0;
}

/* The report's value of a counter summed over the records of program line i
 * (an indirect command of several records is one line). */
static unsigned long long reported(runs *r, size_t line, const char *symbol)
{
    unsigned long long sum = 0;
    json_object *want = json_object_array_get_idx(r->lines, line);
    for (size_t i = 0; i < json_object_array_length(r->report); i++)
        if (line_of_record(r->lines, i) == want)
            sum += command_value(json_object_array_get_idx(r->report, i), symbol);
    return sum;
}

static void every_statistic_of_every_command_equals_the_drivers(void **state)
{
    runs *r = *state;
    size_t indexed = 0;
    for (size_t i = 0; i < json_object_array_length(r->truth); i++) {
        json_object *truth = json_object_array_get_idx(r->truth, i);
        for (int s = 0; s < PIPELINE_STATISTICS; s++) {
            if (reported(r, i, pipeline_statistics[s][1]) !=
                line_value(truth, pipeline_statistics[s][0]))
                print_error("line %zu %s\n", i, pipeline_statistics[s][1]);
            assert_int_equal(reported(r, i, pipeline_statistics[s][1]),
                             line_value(truth, pipeline_statistics[s][0]));
        }
        indexed += line_value(truth, "indexed") == 1;
    }
    assert_true(indexed >= 11);
}

/* The program's own pipeline-statistics queries go to the layer now: they still read the driver's
 * values. */
static void the_programs_own_queries_read_the_drivers_values(void **state)
{
    runs *r = *state;
    for (size_t i = 0; i < json_object_array_length(r->truth); i++)
        for (int s = 0; s < PIPELINE_STATISTICS; s++)
            assert_int_equal(
                line_value(json_object_array_get_idx(r->lines, i), pipeline_statistics[s][0]),
                line_value(json_object_array_get_idx(r->truth, i), pipeline_statistics[s][0]));
}

/* The layer's timestamps of a command lie between the program's own,
 * written just before and just after it (lavapipe runs a command buffer's
 * commands in order): GpuTime is positive and within the driver's own
 * time of the same command. */
static void every_commands_gpu_time_is_within_the_programs_timestamps_of_it(void **state)
{
    runs *r = *state;
    for (size_t i = 0; i < json_object_array_length(r->lines); i++) {
        unsigned long long gpu_time = reported(r, i, "GpuTime");
        unsigned long long own = line_value(json_object_array_get_idx(r->lines, i), "command_ns");
        assert_true(own != ~0ull); /* the program printed its own time */
        if (gpu_time == 0 || gpu_time > own)
            print_error("line %zu: GpuTime %llu, the program's own %llu ns\n", i, gpu_time, own);
        assert_true(gpu_time > 0);
        assert_true(gpu_time <= own);
    }
}

/* Commands tile their submission: their times add up to no more than the
 * span between the program's timestamps at its start and its end. */
static void a_submissions_commands_fit_in_its_gpu_span(void **state)
{
    runs *r = *state;
    unsigned long long sum = 0, submission = ~0ull, span = 0;
    size_t submissions = 0;
    for (size_t i = 0; i < json_object_array_length(r->report); i++) {
        json_object *command = json_object_array_get_idx(r->report, i);
        unsigned long long s = command_number(command, "submission");
        if (s != submission) {
            assert_true(sum <= span);
            submission = s;
            sum = 0;
            submissions++;
        }
        sum += command_value(command, "GpuTime");
        span = line_value(line_of_record(r->lines, i), "span_ns");
    }
    assert_true(sum <= span);
    assert_int_equal(submissions, 3);
}

/* Draws and dispatches are counted from the commands, one per record. */
static void draws_and_dispatches_count_the_records(void **state)
{
    runs *r = *state;
    unsigned long long draws = 0, dispatches = 0;
    for (size_t i = 0; i < json_object_array_length(r->report); i++) {
        json_object *command = json_object_array_get_idx(r->report, i);
        draws += command_value(command, "DrawCalls");
        dispatches += command_value(command, "Dispatches");
    }
    assert_int_equal(draws + dispatches, lines_record_count(r->lines));
    assert_int_equal(dispatches, 3);
}

/* VK_KHR_performance_query, which the layer provides, reads the same
 * measurements: a 3-vertex triangle and a 2x1x1 dispatch of local size 8. */
static void performance_queries_read_measured_values(void **state)
{
    (void)state;
    const char *argv[] = {VK_PERF_PROBE, NULL};
    const char *env[] = {"TALLY_BACKEND=driver", NULL};
    run_result probe = run_under_layer(argv, ACTIVATE_EXPLICIT, env);
    assert_int_equal(probe.exit_code, 0);
    json_object *lines = output_lines(&probe);
    assert_non_null(lines);
    assert_int_equal(json_object_array_length(lines), 2);
    json_object *draw = json_object_array_get_idx(lines, 0);
    json_object *dispatch = json_object_array_get_idx(lines, 1);
    assert_int_equal(line_value(draw, "Input assembly vertices"), 3);
    assert_int_equal(line_value(draw, "Input assembly primitives"), 1);
    assert_int_equal(line_value(draw, "Draw calls"), 1);
    assert_true(line_value(draw, "GPU time") > 0);
    assert_int_equal(line_value(dispatch, "Compute shader invocations"), 2 * 8);
    assert_int_equal(line_value(dispatch, "Compute workgroups"), 2);
    assert_true(line_value(dispatch, "GPU time") > 0);
    /* Counters the driver cannot measure are not offered at all. */
    json_object *v = NULL;
    assert_false(json_object_object_get_ex(draw, "Rasterized pixels", &v));
    json_object_put(lines);
    run_result_free(&probe);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_statistic_of_every_command_equals_the_drivers),
        cmocka_unit_test(the_programs_own_queries_read_the_drivers_values),
        cmocka_unit_test(every_commands_gpu_time_is_within_the_programs_timestamps_of_it),
        cmocka_unit_test(a_submissions_commands_fit_in_its_gpu_span),
        cmocka_unit_test(draws_and_dispatches_count_the_records),
        cmocka_unit_test(performance_queries_read_measured_values),
    };
    return cmocka_run_group_tests(tests, run_both, free_both);
}
