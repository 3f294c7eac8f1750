/*
 * TALLY_GRANULARITY on lavapipe with the driver backend: one measurement
 * per subpass or run of dispatches ("render-pass"), or as few as Vulkan
 * allows ("command-buffer"). vk_workload (tests/layer/vk_workload.c) runs
 * alone with its own query around each command, which gives lavapipe's
 * statistics of every command; summed per submission they are the truth a
 * coarser measurement must add up to. Under the layer it runs with a query
 * per command (which the layer serves: its groups split there), a query
 * per submission, or none (its groups then run as far as Vulkan lets
 * them), and with the validation layer below tally.
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

enum { SUBMISSIONS = 3 };

static const char *const granularity_env[] = {
    [0] = "TALLY_GRANULARITY=render-pass",
    [1] = "TALLY_GRANULARITY=command-buffer",
};
enum { RENDER_PASS, COMMAND_BUFFER };

#define COUNTERS                                                                                   \
    "TALLY_COUNTERS=GpuTime,DrawCalls,Dispatches,IaVertices,IaPrimitives,VsInvocations,"           \
    "GsInvocations,GsPrimitives,ClipperInvocations,ClipperPrimitives,FsInvocations,"               \
    "TessControlPatches,TessEvalInvocations,CsInvocations"

/* vk_workload in `mode`, under the layer with the driver backend at
 * granularity `g` (or alone when g < 0). */
static run_result workload(int g, const char *mode)
{
    const char *argv[] = {VK_WORKLOAD, SHADER_DIR, mode, NULL};
    if (g < 0)
        return run_under_layer(argv, ACTIVATE_NONE, NULL);
    const char *env[] = {"TALLY_BACKEND=driver", COUNTERS, granularity_env[g], NULL};
    return run_under_layer(argv, ACTIVATE_EXPLICIT, env);
}

/* Lavapipe's statistics of each submission's commands: the sums of the
 * program's per-command lines. */
typedef struct sums {
    unsigned long long statistic[SUBMISSIONS][PIPELINE_STATISTICS];
    unsigned long long records[SUBMISSIONS];
} sums;

static sums truth_sums(void)
{
    sums t = {0};
    run_result alone = workload(-1, "per-command");
    assert_int_equal(alone.exit_code, 0);
    json_object *lines = output_lines(&alone);
    assert_int_equal(json_object_array_length(lines), 34);
    for (size_t i = 0; i < json_object_array_length(lines); i++) {
        json_object *line = json_object_array_get_idx(lines, i);
        unsigned long long s = line_value(line, "submission");
        assert_true(s < SUBMISSIONS);
        for (int k = 0; k < PIPELINE_STATISTICS; k++)
            t.statistic[s][k] += line_value(line, pipeline_statistics[k][0]);
        t.records[s] += line_value(line, "records");
    }
    json_object_put(lines);
    run_result_free(&alone);
    return t;
}

/* The report's submissions, in order: index 0, 1, 2 (its seqnos differ). */
static int submission_index(json_object *report, size_t command)
{
    int index = -1;
    unsigned long long last = ~0ull;
    for (size_t i = 0; i <= command; i++) {
        unsigned long long s = command_number(json_object_array_get_idx(report, i), "submission");
        if (s != last)
            index++;
        last = s;
    }
    return index;
}

static unsigned long long report_sum(json_object *report, int submission, const char *symbol)
{
    unsigned long long sum = 0;
    for (size_t i = 0; i < json_object_array_length(report); i++)
        if (submission_index(report, i) == submission)
            sum += command_value(json_object_array_get_idx(report, i), symbol);
    return sum;
}

/* Every statistic summed over each submission's commands equals
 * lavapipe's, and every draw and dispatch counts. */
static void assert_submission_sums(json_object *report, const sums *truth)
{
    assert_non_null(report);
    assert_int_equal(submission_index(report, json_object_array_length(report) - 1),
                     SUBMISSIONS - 1);
    for (int s = 0; s < SUBMISSIONS; s++) {
        for (int k = 0; k < PIPELINE_STATISTICS; k++) {
            unsigned long long got = report_sum(report, s, pipeline_statistics[k][1]);
            if (got != truth->statistic[s][k])
                print_error("submission %d %s: %llu, lavapipe %llu\n", s, pipeline_statistics[k][1],
                            got, truth->statistic[s][k]);
            assert_int_equal(got, truth->statistic[s][k]);
        }
        assert_int_equal(report_sum(report, s, "DrawCalls") + report_sum(report, s, "Dispatches"),
                         truth->records[s]);
    }
}

/* Without queries of the program's, groups run as far as the granularity
 * lets them; each submission's sums are still lavapipe's. */
static void submission_sums_equal_the_drivers(int g)
{
    sums truth = truth_sums();
    run_result r = workload(g, "none");
    assert_int_equal(r.exit_code, 0);
    assert_submission_sums(report_commands(&r), &truth);
    run_result_free(&r);
}

static void render_pass_submission_sums_equal_the_drivers(void **state)
{
    (void)state;
    submission_sums_equal_the_drivers(RENDER_PASS);
}

static void command_buffer_submission_sums_equal_the_drivers(void **state)
{
    (void)state;
    submission_sums_equal_the_drivers(COMMAND_BUFFER);
}

/*
 * One measurement per group, carried by its first command: the first
 * submission draws in two render pass instances (two groups per render
 * pass, one per command buffer); the second runs a secondary's two draws
 * (one group: the secondary measures itself); the third three dispatches
 * (one run). Each group takes GPU time, the others none, and a
 * submission's groups fit in the span the program's own timestamps measure.
 */
static void groups_take_gpu_time_within_their_span(int g, const int expected[SUBMISSIONS])
{
    run_result r = workload(g, "none");
    assert_int_equal(r.exit_code, 0);
    json_object *report = report_commands(&r), *lines = output_lines(&r);
    assert_non_null(report);
    assert_int_equal(json_object_array_length(lines), SUBMISSIONS);
    int groups[SUBMISSIONS] = {0};
    int last = -1;
    for (size_t i = 0; i < json_object_array_length(report); i++) {
        int s = submission_index(report, i);
        unsigned long long time = command_value(json_object_array_get_idx(report, i), "GpuTime");
        if (s != last) /* a submission's first command carries its first group */
            assert_true(time > 0);
        last = s;
        groups[s] += time > 0;
    }
    for (int s = 0; s < SUBMISSIONS; s++) {
        assert_int_equal(groups[s], expected[s]);
        unsigned long long span = line_value(json_object_array_get_idx(lines, s), "span_ns");
        assert_true(report_sum(report, s, "GpuTime") <= span);
    }
    json_object_put(lines);
    run_result_free(&r);
}

static void render_pass_groups_take_gpu_time_within_their_span(void **state)
{
    (void)state;
    groups_take_gpu_time_within_their_span(RENDER_PASS, (const int[]){2, 1, 1});
}

static void command_buffer_groups_take_gpu_time_within_their_span(void **state)
{
    (void)state;
    groups_take_gpu_time_within_their_span(COMMAND_BUFFER, (const int[]){1, 1, 1});
}

/* The program's query around each command splits the layer's groups there:
 * it reads what it reads without the layer, and so does the report. */
static void per_command_queries_read_the_drivers_values(int g)
{
    run_result alone = workload(-1, "per-command"), r = workload(g, "per-command");
    assert_int_equal(alone.exit_code, 0);
    assert_int_equal(r.exit_code, 0);
    json_object *truth = output_lines(&alone), *lines = output_lines(&r);
    json_object *report = report_commands(&r);
    assert_int_equal(json_object_array_length(lines), json_object_array_length(truth));
    assert_int_equal(json_object_array_length(report), lines_record_count(lines));
    for (size_t i = 0; i < json_object_array_length(truth); i++) {
        json_object *want = json_object_array_get_idx(truth, i);
        json_object *line = json_object_array_get_idx(lines, i);
        for (int k = 0; k < PIPELINE_STATISTICS; k++) {
            assert_int_equal(line_value(line, pipeline_statistics[k][0]),
                             line_value(want, pipeline_statistics[k][0]));
            unsigned long long reported = 0;
            for (size_t c = 0; c < json_object_array_length(report); c++)
                if (line_of_record(lines, c) == line)
                    reported += command_value(json_object_array_get_idx(report, c),
                                              pipeline_statistics[k][1]);
            assert_int_equal(reported, line_value(want, pipeline_statistics[k][0]));
        }
    }
    json_object_put(truth);
    json_object_put(lines);
    run_result_free(&alone);
    run_result_free(&r);
}

static void render_pass_per_command_queries_read_the_drivers_values(void **state)
{
    (void)state;
    per_command_queries_read_the_drivers_values(RENDER_PASS);
}

static void command_buffer_per_command_queries_read_the_drivers_values(void **state)
{
    (void)state;
    per_command_queries_read_the_drivers_values(COMMAND_BUFFER);
}

/* A query of the program's around each submission's commands (spanning its
 * render pass instances) reads lavapipe's sums, and so do the report's. */
static void per_submission_queries_read_the_drivers_sums(int g)
{
    sums truth = truth_sums();
    run_result r = workload(g, "per-submission");
    assert_int_equal(r.exit_code, 0);
    json_object *lines = output_lines(&r);
    assert_int_equal(json_object_array_length(lines), SUBMISSIONS);
    for (int s = 0; s < SUBMISSIONS; s++)
        for (int k = 0; k < PIPELINE_STATISTICS; k++)
            assert_int_equal(
                line_value(json_object_array_get_idx(lines, s), pipeline_statistics[k][0]),
                truth.statistic[s][k]);
    assert_submission_sums(report_commands(&r), &truth);
    json_object_put(lines);
    run_result_free(&r);
}

static void render_pass_per_submission_queries_read_the_drivers_sums(void **state)
{
    (void)state;
    per_submission_queries_read_the_drivers_sums(RENDER_PASS);
}

static void command_buffer_per_submission_queries_read_the_drivers_sums(void **state)
{
    (void)state;
    per_submission_queries_read_the_drivers_sums(COMMAND_BUFFER);
}

/* The validation layer below tally (core, synchronization, best practices)
 * says, for each way the program queries, what it says of the same run on
 * simgpu, which adds no query: nothing about the layer's queries. */
static void validation_sees_what_it_sees_on_simgpu(const char *granularity, const char *mode)
{
    const char *argv[] = {VK_WORKLOAD, SHADER_DIR, mode, NULL};
    const char *layers = "VK_INSTANCE_LAYERS=VK_LAYER_TALLY_counters:VK_LAYER_KHRONOS_validation";
    const char *simulated_env[] = {layers, VALIDATION_BEST_PRACTICES_AND_SYNC,
                                   "TALLY_BACKEND=simgpu", granularity, NULL};
    const char *measured_env[] = {layers, VALIDATION_BEST_PRACTICES_AND_SYNC,
                                  "TALLY_BACKEND=driver", granularity, NULL};
    run_result simulated = run_under_layer(argv, ACTIVATE_EXPLICIT, simulated_env);
    run_result measured = run_under_layer(argv, ACTIVATE_EXPLICIT, measured_env);
    assert_int_equal(simulated.exit_code, 0);
    assert_int_equal(measured.exit_code, 0);
    assert_non_null(strstr(simulated.output, "Validation ")); /* it did run */
    char *added = validation_messages_added(simulated.output, measured.output);
    if (*added)
        print_error("%s: %s\n%s\n", granularity, mode, added);
    assert_string_equal(added, "");
    free(added);
    run_result_free(&simulated);
    run_result_free(&measured);
}

static void render_pass_groups_draw_no_validation_message(void **state)
{
    (void)state;
    validation_sees_what_it_sees_on_simgpu(granularity_env[RENDER_PASS], "none");
    validation_sees_what_it_sees_on_simgpu(granularity_env[RENDER_PASS], "per-command");
}

static void command_buffer_groups_draw_no_validation_message(void **state)
{
    (void)state;
    validation_sees_what_it_sees_on_simgpu(granularity_env[COMMAND_BUFFER], "none");
    validation_sees_what_it_sees_on_simgpu(granularity_env[COMMAND_BUFFER], "per-submission");
}

/*
 * A secondary of simultaneous use executed twice by a primary of
 * simultaneous use, submitted twice in one vkQueueSubmit: queries recorded
 * into the secondary would be written four times between two resets. The
 * layer records none there, at every granularity: the four draws count with
 * no measured work, and a warning says why once. A primary of simultaneous
 * use that draws, repeated in one batch and in the next, is submitted in
 * parts that reset and copy its queries between its runs: its three draws
 * are measured (8 vertices each, lavapipe's count). Validation says nothing
 * new against simgpu.
 */
static void simultaneous_secondaries_are_unmeasured_and_primaries_split(const char *granularity)
{
    const char *argv[] = {VK_WORKLOAD, SHADER_DIR, "simultaneous", NULL};
    const char *layers = "VK_INSTANCE_LAYERS=VK_LAYER_TALLY_counters:VK_LAYER_KHRONOS_validation";
    const char *simulated_env[] = {layers, VALIDATION_BEST_PRACTICES_AND_SYNC,
                                   "TALLY_BACKEND=simgpu", NULL};
    const char *measured_env[] = {
        layers, VALIDATION_BEST_PRACTICES_AND_SYNC, "TALLY_BACKEND=driver", COUNTERS, granularity,
        NULL};
    run_result simulated = run_under_layer(argv, ACTIVATE_EXPLICIT, simulated_env);
    run_result measured = run_under_layer(argv, ACTIVATE_EXPLICIT, measured_env);
    assert_int_equal(simulated.exit_code, 0);
    assert_int_equal(measured.exit_code, 0);
    char *added = validation_messages_added(simulated.output, measured.output);
    if (*added)
        print_error("%s\n", added);
    assert_string_equal(added, "");
    free(added);
    json_object *report = report_commands(&measured);
    assert_non_null(report);
    assert_int_equal(json_object_array_length(report), 7);
    for (size_t i = 0; i < 7; i++) {
        json_object *command = json_object_array_get_idx(report, i);
        bool in_secondary = i < 4;
        assert_int_equal(command_value(command, "DrawCalls"), 1);
        assert_int_equal(command_value(command, "IaVertices"), in_secondary ? 0 : 8);
        if (in_secondary)
            assert_int_equal(command_value(command, "GpuTime"), 0);
        else
            assert_true(command_value(command, "GpuTime") > 0);
    }
    const char *warning = strstr(measured.output, "SIMULTANEOUS_USE are not measured");
    assert_non_null(warning);
    assert_null(strstr(warning + 1, "SIMULTANEOUS_USE are not measured"));
    run_result_free(&simulated);
    run_result_free(&measured);
}

static void simultaneous_secondaries_are_unmeasured_and_primaries_split_per_command(void **state)
{
    (void)state;
    simultaneous_secondaries_are_unmeasured_and_primaries_split("TALLY_GRANULARITY=command");
}

static void
simultaneous_secondaries_are_unmeasured_and_primaries_split_per_command_buffer(void **state)
{
    (void)state;
    simultaneous_secondaries_are_unmeasured_and_primaries_split(granularity_env[COMMAND_BUFFER]);
}

/* An unknown value is said once and read as "command": every command
 * carries its own measurement again (29 of 30 draws: an indirect command
 * of two records is one measurement). */
static void an_unknown_granularity_is_said_once_and_measures_each_command(void **state)
{
    (void)state;
    const char *argv[] = {VK_WORKLOAD, SHADER_DIR, "none", NULL};
    const char *env[] = {"TALLY_BACKEND=driver", COUNTERS, "TALLY_GRANULARITY=per-frame", NULL};
    run_result r = run_under_layer(argv, ACTIVATE_EXPLICIT, env);
    assert_int_equal(r.exit_code, 0);
    const char *said = strstr(r.output, "TALLY_GRANULARITY: \"per-frame\"");
    assert_non_null(said);
    assert_null(strstr(said + 1, "TALLY_GRANULARITY: \"per-frame\""));
    json_object *report = report_commands(&r);
    assert_non_null(report);
    size_t measured = 0;
    for (size_t i = 0; i < json_object_array_length(report); i++)
        measured += command_value(json_object_array_get_idx(report, i), "GpuTime") > 0;
    assert_int_equal(json_object_array_length(report), 35);
    assert_int_equal(measured, 34);
    run_result_free(&r);
}

/* `tally run --granularity render-pass` is TALLY_GRANULARITY=render-pass. */
static void tally_run_passes_the_granularity_on(void **state)
{
    (void)state;
    const char *argv[] = {TALLY_CLI, "run", "--backend", "driver",   "--granularity", "render-pass",
                          "-q",      "--",  VK_WORKLOAD, SHADER_DIR, "none",          NULL};
    /* tally run preloads the (sanitized) shims after what is already preloaded. */
    const char *env[] = {COUNTERS, "LD_PRELOAD=" TALLY_SANITIZER_PRELOAD, NULL};
    run_result r = run_under_layer(argv, ACTIVATE_NONE, env);
    assert_int_equal(r.exit_code, 0);
    json_object *report = report_commands(&r);
    assert_non_null(report);
    size_t measured = 0;
    for (size_t i = 0; i < json_object_array_length(report); i++)
        measured += command_value(json_object_array_get_idx(report, i), "GpuTime") > 0;
    assert_int_equal(measured, 2 + 1 + 1);
    run_result_free(&r);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(render_pass_submission_sums_equal_the_drivers),
        cmocka_unit_test(command_buffer_submission_sums_equal_the_drivers),
        cmocka_unit_test(render_pass_groups_take_gpu_time_within_their_span),
        cmocka_unit_test(command_buffer_groups_take_gpu_time_within_their_span),
        cmocka_unit_test(render_pass_per_command_queries_read_the_drivers_values),
        cmocka_unit_test(command_buffer_per_command_queries_read_the_drivers_values),
        cmocka_unit_test(render_pass_per_submission_queries_read_the_drivers_sums),
        cmocka_unit_test(command_buffer_per_submission_queries_read_the_drivers_sums),
        cmocka_unit_test(render_pass_groups_draw_no_validation_message),
        cmocka_unit_test(command_buffer_groups_draw_no_validation_message),
        cmocka_unit_test(simultaneous_secondaries_are_unmeasured_and_primaries_split_per_command),
        cmocka_unit_test(
            simultaneous_secondaries_are_unmeasured_and_primaries_split_per_command_buffer),
        cmocka_unit_test(an_unknown_granularity_is_said_once_and_measures_each_command),
        cmocka_unit_test(tally_run_passes_the_granularity_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
