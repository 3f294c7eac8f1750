/*
 * TALLY_GRANULARITY in GL under the driver backend, on llvmpipe:
 * gl_measured_draws' grouped workload (three submissions, a debug group in
 * the second) runs alone, measuring each command with llvmpipe's own
 * pipeline-statistics queries (the truth), and under the shim per draw
 * (command), per debug group (render-pass) and per frame (the default).
 * A group's first command carries the group's measurement: every statistic
 * equals the sum of llvmpipe's over the group's commands, and the other
 * commands read 0, while DrawCalls stay 1 a draw. The shim begins queries
 * of the asked counters' targets only: the program reads, from llvmpipe's
 * own query objects (glIsQuery, GL_QUERY_TARGET), which targets someone
 * else used in its context. The program's own query of a target an open
 * measurement holds ends that measurement first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "layer_harness.h"

#define ALL_COUNTERS                                                                               \
    "TALLY_COUNTERS=GpuTime,DrawCalls,Dispatches,IaVertices,IaPrimitives,VsInvocations,"           \
    "GsInvocations,GsPrimitives,ClipperInvocations,ClipperPrimitives,FsInvocations,"               \
    "TessControlPatches,TessEvalInvocations,CsInvocations"

/* The grouped workload's report rows: eight (the multi-draw makes two). */
enum { ROWS = 8 };

typedef struct runs {
    run_result alone;
    json_object *truth; /* llvmpipe's statistics per command */
} runs;

/* granularity: NULL for the default. */
static run_result run_mode(const char *mode, const char *granularity, const char *counters)
{
    char level[64] = "TALLY_GRANULARITY=";
    if (granularity)
        strncat(level, granularity, sizeof(level) - strlen(level) - 1);
    const char *argv[] = {GL_MEASURED_DRAWS, mode, NULL};
    const char *env[] = {"LD_PRELOAD=" GL_SHIM_PRELOAD,
                         "EGL_PLATFORM=surfaceless",
                         "TALLY_BACKEND=driver",
                         "TALLY_LOG=warn",
                         "TSAN_OPTIONS=suppressions=" GL_TSAN_SUPPRESSIONS,
                         counters,
                         level, /* "TALLY_GRANULARITY=": unset, as a shell has it */
                         NULL};
    return run_under_layer(argv, ACTIVATE_NONE, env);
}

static run_result run_shimmed(const char *granularity, const char *counters)
{
    return run_mode("grouped", granularity, counters);
}

static int run_truth(void **state)
{
    static runs r;
    const char *argv[] = {GL_MEASURED_DRAWS, "truth", NULL};
    const char *env[] = {"EGL_PLATFORM=surfaceless",
                         "TSAN_OPTIONS=suppressions=" GL_TSAN_SUPPRESSIONS, NULL};
    r.alone = run_under_layer(argv, ACTIVATE_NONE, env);
    r.truth = output_lines(&r.alone);
    if (r.alone.exit_code != 0 || !r.truth || lines_record_count(r.truth) != ROWS) {
        fprintf(stderr, "%s\n", r.alone.output);
        return -1;
    }
    *state = &r;
    return 0;
}

static int free_truth(void **state)
{
    runs *r = *state;
    json_object_put(r->truth);
    run_result_free(&r->alone);
    return 0;
}

/* llvmpipe's value of a statistic for report row i: its command's line for
 * the command's first row, 0 for the others (a multi-draw is one command). */
static unsigned long long truth_of_row(runs *r, size_t i, const char *field)
{
    json_object *line = line_of_record(r->truth, i);
    if (i > 0 && line_of_record(r->truth, i - 1) == line)
        return 0;
    return line_value(line, field);
}

static bool same_text(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

/* Whether report row i begins a measured group at this level: at
 * command-buffer a submission, at render-pass also a debug group's push or
 * pop (the label changes), at command every command. */
static bool begins_group(runs *r, json_object *report, size_t i, const char *level)
{
    if (i == 0)
        return true;
    json_object *row = json_object_array_get_idx(report, i);
    json_object *previous = json_object_array_get_idx(report, i - 1);
    if (command_number(row, "submission") != command_number(previous, "submission"))
        return true;
    if (!strcmp(level, "command"))
        return line_of_record(r->truth, i) != line_of_record(r->truth, i - 1);
    return !strcmp(level, "render-pass") &&
           !same_text(command_text(row, "label"), command_text(previous, "label"));
}

/* Every group's first row holds the sum of llvmpipe's statistics over the
 * group's commands and a GPU time; every other row 0; every row its draw. */
static void check_groups(runs *r, const char *level, const char *granularity, size_t want_groups)
{
    run_result run = run_shimmed(granularity, ALL_COUNTERS);
    assert_int_equal(run.exit_code, 0);
    json_object *report = report_commands(&run);
    assert_non_null(report);
    assert_int_equal(json_object_array_length(report), ROWS);
    size_t groups = 0;
    for (size_t first = 0; first < ROWS; groups++) {
        size_t end = first + 1;
        while (end < ROWS && !begins_group(r, report, end, level))
            end++;
        json_object *carrier = json_object_array_get_idx(report, first);
        assert_true(command_value(carrier, "GpuTime") > 0);
        for (int s = 0; s < PIPELINE_STATISTICS; s++) {
            unsigned long long want = 0;
            for (size_t i = first; i < end; i++)
                want += truth_of_row(r, i, pipeline_statistics[s][0]);
            unsigned long long got = command_value(carrier, pipeline_statistics[s][1]);
            if (got != want)
                print_error("%s: rows %zu-%zu %s: %llu, llvmpipe %llu\n", level, first, end - 1,
                            pipeline_statistics[s][1], got, want);
            assert_int_equal(got, want);
            for (size_t i = first + 1; i < end; i++)
                assert_int_equal(
                    command_value(json_object_array_get_idx(report, i), pipeline_statistics[s][1]),
                    0);
        }
        for (size_t i = first + 1; i < end; i++)
            assert_int_equal(command_value(json_object_array_get_idx(report, i), "GpuTime"), 0);
        first = end;
    }
    assert_int_equal(groups, want_groups);
    /* The commands' own counts are exact whatever the granularity. */
    for (size_t i = 0; i < ROWS; i++) {
        json_object *row = json_object_array_get_idx(report, i);
        bool draw = !strcmp(command_text(row, "kind"), "draw");
        assert_int_equal(command_value(row, "DrawCalls"), draw ? 1 : 0);
        assert_int_equal(command_value(row, "Dispatches"), draw ? 0 : 1);
    }
    run_result_free(&run);
}

/* The default: one measurement per submission (glFlush, glFlush, glFinish). */
static void by_default_each_frame_is_measured_whole_and_carried_by_its_first_draw(void **state)
{
    check_groups(*state, "command-buffer", NULL, 3);
}

static void command_buffer_is_the_frame_granularity(void **state)
{
    check_groups(*state, "command-buffer", "command-buffer", 3);
}

/* Submission 2 is the debug group's two draws, then the multi-draw. */
static void render_pass_measures_each_debug_group_apart(void **state)
{
    check_groups(*state, "render-pass", "render-pass", 4);
}

static void command_measures_each_command(void **state)
{
    check_groups(*state, "command", "command", 7);
}

/* The shim's query objects in the program's context, by target. */
static json_object *others_queries(run_result *run)
{
    json_object *lines = output_lines(run);
    json_object *found = NULL;
    for (size_t i = 0; lines && i < json_object_array_length(lines); i++)
        if (line_value(json_object_array_get_idx(lines, i), "others_timestamp") != ~0ull)
            found = json_object_get(json_object_array_get_idx(lines, i));
    json_object_put(lines);
    return found;
}

static void only_the_asked_counters_are_queried(const char *granularity)
{
    run_result run = run_shimmed(granularity, "TALLY_COUNTERS=IaVertices,DrawCalls");
    assert_int_equal(run.exit_code, 0);
    json_object *others = others_queries(&run);
    assert_non_null(others);
    assert_true(line_value(others, "others_ia_vertices") > 0);
    for (int s = 1; s < PIPELINE_STATISTICS; s++) {
        char field[64];
        snprintf(field, sizeof(field), "others_%s", pipeline_statistics[s][0]);
        if (line_value(others, field) != 0)
            print_error("%s: %s\n", field, json_object_to_json_string(others));
        assert_int_equal(line_value(others, field), 0);
    }
    assert_int_equal(line_value(others, "others_timestamp"), 0);
    assert_int_equal(line_value(others, "others_other"), 0);
    json_object_put(others);
    run_result_free(&run);
}

static void per_draw_only_the_asked_counters_are_queried(void **state)
{
    (void)state;
    only_the_asked_counters_are_queried("command");
}

static void per_frame_only_the_asked_counters_are_queried(void **state)
{
    (void)state;
    only_the_asked_counters_are_queried(NULL);
}

/* GL allows one active query per target: the program's own begin of a
 * target the frame's open measurement holds ends that measurement first
 * (the program sees no error and reads its own count; before it, GL says
 * no query of the program's is active), and the statistic
 * is left to the program for the draws its query spans. */
static void the_programs_own_query_ends_the_frames_measurement(void **state)
{
    (void)state;
    run_result run = run_mode("collide", NULL, ALL_COUNTERS);
    assert_int_equal(run.exit_code, 0); /* glGetError said nothing */
    json_object *lines = output_lines(&run);
    assert_non_null(lines);
    /* A strip of 4 vertices is 2 triangles (GL 4.6, 10.1.2). */
    assert_int_equal(line_value(json_object_array_get_idx(lines, 0), "own_primitives"), 2);
    json_object *report = report_commands(&run);
    assert_non_null(report);
    assert_int_equal(json_object_array_length(report), 2);
    json_object *first = json_object_array_get_idx(report, 0);
    json_object *second = json_object_array_get_idx(report, 1);
    assert_int_equal(command_value(first, "IaVertices"), 4);
    assert_int_equal(command_value(first, "IaPrimitives"), 2);
    assert_int_equal(command_value(second, "IaVertices"), 4);
    assert_int_equal(command_value(second, "IaPrimitives"), 0);
    assert_true(command_value(second, "GpuTime") > 0);
    json_object_put(lines);
    run_result_free(&run);
}

/* Per frame (the default), the program's own GL_TIMESTAMPs just before and
 * just after each command end the frame's open measurement, as Vulkan's
 * layer ends one before vkCmdWriteTimestamp: each command is a group of its
 * own, and its GpuTime (on its first row; a multi-draw's second row reads
 * 0) lies within the span the program measured around it. Without the
 * split, the frame's first command carried the whole frame's time. */
static void the_programs_own_timestamps_end_the_frames_measurement(void **state)
{
    (void)state;
    run_result run = run_mode("timed", NULL, ALL_COUNTERS);
    assert_int_equal(run.exit_code, 0);
    json_object *lines = output_lines(&run);
    json_object *report = report_commands(&run);
    assert_non_null(lines);
    assert_non_null(report);
    assert_int_equal(json_object_array_length(report), ROWS);
    size_t row = 0;
    for (size_t i = 0; i < json_object_array_length(lines); i++) {
        json_object *line = json_object_array_get_idx(lines, i);
        unsigned long long own = line_value(line, "command_ns");
        unsigned long long records = line_value(line, "records");
        for (unsigned long long k = 0; k < records; k++, row++) {
            unsigned long long gpu_time =
                command_value(json_object_array_get_idx(report, row), "GpuTime");
            if (k == 0 && (gpu_time == 0 || gpu_time > own))
                print_error("command %zu: GpuTime %llu, the program's own span %llu ns\n", i,
                            gpu_time, own);
            if (k == 0)
                assert_true(gpu_time > 0 && gpu_time <= own);
            else
                assert_int_equal(gpu_time, 0);
        }
    }
    assert_int_equal(row, ROWS);
    json_object_put(lines);
    run_result_free(&run);
}

/* A monitor asks for its counters: with a report that asks for nothing
 * measured, a GL_AMD_performance_monitor monitor of IaVertices makes the
 * shim query GL_VERTICES_SUBMITTED_ARB alone, and reads the vertices its
 * draws submitted (4 + 4 x 3 + 4: a strip's count times its instances,
 * GL 4.6's definition of the statistic), across a flush. */
static void a_monitor_is_measured_with_its_own_counters_only(void **state)
{
    (void)state;
    run_result run = run_mode("monitor", NULL, "TALLY_COUNTERS=DrawCalls");
    assert_int_equal(run.exit_code, 0);
    json_object *lines = output_lines(&run);
    assert_non_null(lines);
    json_object *others = NULL;
    unsigned long long monitored = ~0ull;
    for (size_t i = 0; i < json_object_array_length(lines); i++) {
        json_object *line = json_object_array_get_idx(lines, i);
        if (line_value(line, "monitor_ia_vertices") != ~0ull)
            monitored = line_value(line, "monitor_ia_vertices");
        if (line_value(line, "others_timestamp") != ~0ull)
            others = line;
    }
    assert_int_equal(monitored, 20);
    assert_non_null(others);
    assert_true(line_value(others, "others_ia_vertices") > 0);
    for (int s = 1; s < PIPELINE_STATISTICS; s++) {
        char field[64];
        snprintf(field, sizeof(field), "others_%s", pipeline_statistics[s][0]);
        assert_int_equal(line_value(others, field), 0);
    }
    assert_int_equal(line_value(others, "others_timestamp"), 0);
    json_object_put(lines);
    run_result_free(&run);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(by_default_each_frame_is_measured_whole_and_carried_by_its_first_draw),
        cmocka_unit_test(command_buffer_is_the_frame_granularity),
        cmocka_unit_test(render_pass_measures_each_debug_group_apart),
        cmocka_unit_test(command_measures_each_command),
        cmocka_unit_test(per_draw_only_the_asked_counters_are_queried),
        cmocka_unit_test(per_frame_only_the_asked_counters_are_queried),
        cmocka_unit_test(the_programs_own_query_ends_the_frames_measurement),
        cmocka_unit_test(the_programs_own_timestamps_end_the_frames_measurement),
        cmocka_unit_test(a_monitor_is_measured_with_its_own_counters_only),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, run_truth, free_truth);
}
