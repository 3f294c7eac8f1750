/*
 * TALLY_BACKEND=driver in GL, on llvmpipe: gl_measured_draws (a program
 * that knows nothing of tally) runs once without the shim, measuring each of
 * its commands with llvmpipe's own GL_ARB_pipeline_statistics_query, and
 * once under the shim with the driver backend and no query of its own. The
 * report's statistics must equal llvmpipe's for every command (indexed,
 * instanced, multi-draw, geometry, tessellation and compute included), and
 * every measured command's GPU time lies within the program's own
 * GL_TIMESTAMPs just before and after it (a third run, "timed"). Run with queries of its own, the
 * program's queries, its GL errors and its GL_QUERY_BUFFER binding are
 * untouched, and the statistic whose target it holds is left unmeasured and
 * said. An OpenGL ES 3 context measures GpuTime with
 * GL_EXT_disjoint_timer_query, leaving the program's own timestamp queries,
 * GL_GPU_DISJOINT_EXT reads and GL errors alone; one without the extension
 * is offered no measured counter; the ES catalogue is the same with tally's
 * EGL door preloaded. Per draw (TALLY_GRANULARITY=command): GL's default
 * is per frame (test_gl_granularity.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "layer_harness.h"

#define COUNTERS                                                                                   \
    "TALLY_COUNTERS=GpuTime,DrawCalls,Dispatches,IaVertices,IaPrimitives,VsInvocations,"           \
    "GsInvocations,GsPrimitives,ClipperInvocations,ClipperPrimitives,FsInvocations,"               \
    "TessControlPatches,TessEvalInvocations,CsInvocations"

typedef struct runs {
    run_result alone, plain, own, timed;
    json_object *truth;       /* llvmpipe's statistics per command, without the shim */
    json_object *own_lines;   /* what the program's own queries read under the shim */
    json_object *timed_lines; /* the program's own timestamps around each command, shimmed */
} runs;

/* extra: one more environment entry, or NULL. */
static run_result run_shimmed_with(const char *mode, const char *counters, const char *extra)
{
    const char *argv[] = {GL_MEASURED_DRAWS, mode, NULL};
    const char *env[] = {"LD_PRELOAD=" GL_SHIM_PRELOAD,
                         "EGL_PLATFORM=surfaceless",
                         "TALLY_BACKEND=driver",
                         "TALLY_LOG=warn",
                         "TALLY_GRANULARITY=command", /* per draw: GL's default is per frame */
                         counters,
                         "TSAN_OPTIONS=suppressions=" GL_TSAN_SUPPRESSIONS,
                         extra,
                         NULL};
    return run_under_layer(argv, ACTIVATE_NONE, env);
}

static run_result run_shimmed(const char *mode, const char *counters)
{
    return run_shimmed_with(mode, counters, NULL);
}

static int run_all(void **state)
{
    static runs r;
    const char *argv[] = {GL_MEASURED_DRAWS, "truth", NULL};
    const char *env[] = {"EGL_PLATFORM=surfaceless",
                         "TSAN_OPTIONS=suppressions=" GL_TSAN_SUPPRESSIONS, NULL};
    r.alone = run_under_layer(argv, ACTIVATE_NONE, env);
    r.plain = run_shimmed("plain", COUNTERS);
    r.own = run_shimmed("own", COUNTERS);
    r.timed = run_shimmed("timed", COUNTERS);
    if (r.alone.exit_code != 0 || r.plain.exit_code != 0 || !r.plain.report) {
        fprintf(stderr, "%s\n%s\n", r.alone.output, r.plain.output);
        return -1;
    }
    r.truth = output_lines(&r.alone);
    r.own_lines = output_lines(&r.own);
    r.timed_lines = output_lines(&r.timed);
    if (json_object_array_length(r.truth) != 7 ||
        lines_record_count(r.truth) != json_object_array_length(report_commands(&r.plain)))
        return -1;
    *state = &r;
    return 0;
}

static int free_all(void **state)
{
    runs *r = *state;
    json_object_put(r->truth);
    json_object_put(r->own_lines);
    json_object_put(r->timed_lines);
    run_result_free(&r->alone);
    run_result_free(&r->plain);
    run_result_free(&r->own);
    run_result_free(&r->timed);
    return 0;
}

/* A report's value of a counter summed over the rows of truth line i (a
 * multi-draw is one line, and one row per draw). */
static unsigned long long reported(runs *r, const run_result *run, size_t line, const char *symbol)
{
    json_object *report = report_commands(run);
    json_object *want = json_object_array_get_idx(r->truth, line);
    unsigned long long sum = 0;
    for (size_t i = 0; report && i < json_object_array_length(report); i++)
        if (line_of_record(r->truth, i) == want)
            sum += command_value(json_object_array_get_idx(report, i), symbol);
    return sum;
}

/* The report's first row of truth line i. */
static json_object *first_row(runs *r, const run_result *run, size_t line)
{
    json_object *report = report_commands(run);
    json_object *want = json_object_array_get_idx(r->truth, line);
    for (size_t i = 0; report && i < json_object_array_length(report); i++)
        if (line_of_record(r->truth, i) == want)
            return json_object_array_get_idx(report, i);
    return NULL;
}

/* The report's value of symbol in row is null: not measured, not 0. */
static bool unmeasured(json_object *row, const char *symbol)
{
    json_object *values = NULL, *value = NULL;
    return json_object_object_get_ex(row, "values", &values) &&
           json_object_object_get_ex(values, symbol, &value) && value == NULL;
}

static void every_statistic_of_every_command_equals_llvmpipes(void **state)
{
    runs *r = *state;
    for (size_t i = 0; i < json_object_array_length(r->truth); i++) {
        json_object *truth = json_object_array_get_idx(r->truth, i);
        for (int s = 0; s < PIPELINE_STATISTICS; s++) {
            unsigned long long want = line_value(truth, pipeline_statistics[s][0]);
            unsigned long long got = reported(r, &r->plain, i, pipeline_statistics[s][1]);
            if (got != want)
                print_error("command %zu (%s) %s: %llu, llvmpipe %llu\n", i,
                            command_text(first_row(r, &r->plain, i), "api_name"),
                            pipeline_statistics[s][1], got, want);
            assert_int_equal(got, want);
        }
    }
    /* The workload reaches every statistic: none of the checks is 0 = 0 only. */
    for (int s = 0; s < PIPELINE_STATISTICS; s++) {
        unsigned long long total = 0;
        for (size_t i = 0; i < json_object_array_length(r->truth); i++)
            total += line_value(json_object_array_get_idx(r->truth, i), pipeline_statistics[s][0]);
        assert_true(total > 0);
    }
}

/* The shim's GL_TIMESTAMPs of a command are written between the program's
 * own, just before and just after it: each command's GpuTime is positive
 * and within llvmpipe's own time of it. */
static void every_measured_commands_gpu_time_is_within_the_programs_timestamps_of_it(void **state)
{
    runs *r = *state;
    for (size_t i = 0; i < json_object_array_length(r->truth); i++) {
        json_object *row = first_row(r, &r->plain, i);
        assert_non_null(row);
        unsigned long long gpu_time = command_value(row, "GpuTime");
        assert_true(gpu_time > 0 && gpu_time != ~0ull);
        /* The engine's span of the command is the measured time. */
        assert_int_equal(command_number(row, "duration_ns"), gpu_time);
    }
    assert_int_equal(r->timed.exit_code, 0);
    assert_non_null(r->timed_lines);
    assert_int_equal(json_object_array_length(r->timed_lines), json_object_array_length(r->truth));
    for (size_t i = 0; i < json_object_array_length(r->truth); i++) {
        unsigned long long gpu_time = reported(r, &r->timed, i, "GpuTime");
        json_object *line = json_object_array_get_idx(r->timed_lines, i);
        unsigned long long own = line_value(line, "command_ns");
        assert_true(own != ~0ull);
        if (gpu_time == 0 || gpu_time > own)
            print_error("command %zu: GpuTime %llu, the program's own %llu ns\n", i, gpu_time, own);
        assert_true(gpu_time > 0);
        assert_true(gpu_time <= own);
    }
}

static void the_programs_own_queries_errors_and_query_buffer_are_untouched(void **state)
{
    runs *r = *state;
    /* gl_measured_draws exits 1 if glGetError said anything but its own
     * invalid draw's GL_INVALID_ENUM, or its GL_QUERY_BUFFER changed. */
    assert_int_equal(r->own.exit_code, 0);
    json_object *own = NULL;
    for (size_t i = 0; i < json_object_array_length(r->own_lines); i++)
        if (line_value(json_object_array_get_idx(r->own_lines, i), "own_vertices") != ~0ull)
            own = json_object_array_get_idx(r->own_lines, i);
    assert_non_null(own);
    json_object *first = json_object_array_get_idx(r->truth, 0);
    assert_int_equal(line_value(own, "own_vertices"), line_value(first, "ia_vertices"));
    assert_true((long long)line_value(own, "own_span_ns") > 0);
}

static void a_statistic_the_program_measures_itself_is_left_and_said(void **state)
{
    runs *r = *state;
    assert_non_null(r->own.report);
    /* The first command ran inside the program's GL_VERTICES_SUBMITTED_ARB
     * query: that statistic is not measured (null in the report), every
     * other one is. */
    assert_true(unmeasured(first_row(r, &r->own, 0), "IaVertices"));
    json_object *first = json_object_array_get_idx(r->truth, 0);
    for (int s = 1; s < PIPELINE_STATISTICS; s++)
        assert_int_equal(reported(r, &r->own, 0, pipeline_statistics[s][1]),
                         line_value(first, pipeline_statistics[s][0]));
    for (size_t i = 1; i < json_object_array_length(r->truth); i++)
        assert_int_equal(reported(r, &r->own, i, "IaVertices"),
                         line_value(json_object_array_get_idx(r->truth, i), "ia_vertices"));
    const char *said = strstr(r->own.output, "GL_VERTICES_SUBMITTED_ARB query of its own");
    assert_non_null(said);
    assert_null(strstr(said + 1, "GL_VERTICES_SUBMITTED_ARB query of its own"));
}

static bool offers(const run_result *run, const char *symbol)
{
    json_object *counters = NULL;
    if (!run->report || !json_object_object_get_ex(run->report, "counters", &counters))
        return false;
    for (size_t i = 0; i < json_object_array_length(counters); i++) {
        json_object *symbol_field = NULL;
        json_object_object_get_ex(json_object_array_get_idx(counters, i), "symbol", &symbol_field);
        if (symbol_field && !strcmp(json_object_get_string(symbol_field), symbol))
            return true;
    }
    return false;
}

static void a_context_without_queries_is_offered_no_measured_counter(void **state)
{
    runs *r = *state;
    /* OpenGL ES without GL_EXT_disjoint_timer_query (Mesa hides it on request). */
    run_result gles =
        run_shimmed_with("gles", COUNTERS, "MESA_EXTENSION_OVERRIDE=-GL_EXT_disjoint_timer_query");
    assert_int_equal(gles.exit_code, 0);
    assert_true(offers(&gles, "DrawCalls"));
    assert_true(offers(&gles, "CsInvocations")); /* exact from the local size */
    for (int s = 0; s < PIPELINE_STATISTICS - 1; s++)
        assert_false(offers(&gles, pipeline_statistics[s][1]));
    assert_false(offers(&gles, "GpuTime"));
    /* A context of GL 4.5 offers them all. */
    assert_true(offers(&r->plain, "GpuTime"));
    for (int s = 0; s < PIPELINE_STATISTICS; s++)
        assert_true(offers(&r->plain, pipeline_statistics[s][1]));
    run_result_free(&gles);
}

/* The EGL door (EGL_BRCM_event_monitor) measures nothing: listing EGL's
 * extensions before the first context, as every EGL program does, must not
 * open the device with a catalogue of its own. The ES context's catalogue
 * is the same with the door as without: GpuTime and no statistic, with the
 * default counters. */
static void an_es_contexts_catalogue_is_the_same_with_the_egl_door(void **state)
{
    (void)state;
    const char *argv[] = {GL_MEASURED_DRAWS, "gles", NULL};
    const char *with_door[] = {"LD_PRELOAD=" GL_SHIM_PRELOAD ":" EGL_SHIM_PRELOAD,
                               "EGL_PLATFORM=surfaceless", "TALLY_BACKEND=driver",
                               "TSAN_OPTIONS=suppressions=" GL_TSAN_SUPPRESSIONS, NULL};
    const char *without_door[] = {"LD_PRELOAD=" GL_SHIM_PRELOAD, "EGL_PLATFORM=surfaceless",
                                  "TALLY_BACKEND=driver",
                                  "TSAN_OPTIONS=suppressions=" GL_TSAN_SUPPRESSIONS, NULL};
    run_result with = run_under_layer(argv, ACTIVATE_NONE, with_door);
    run_result without = run_under_layer(argv, ACTIVATE_NONE, without_door);
    assert_int_equal(with.exit_code, 0);
    assert_int_equal(without.exit_code, 0);
    for (int s = 0; s < PIPELINE_STATISTICS - 1; s++) {
        if (offers(&with, pipeline_statistics[s][1]))
            print_error("with the EGL door, an ES context is offered %s\n",
                        pipeline_statistics[s][1]);
        assert_false(offers(&with, pipeline_statistics[s][1]));
        assert_false(offers(&without, pipeline_statistics[s][1]));
    }
    assert_true(offers(&with, "GpuTime"));
    assert_true(offers(&without, "GpuTime"));
    run_result_free(&with);
    run_result_free(&without);
}

/* OpenGL ES 3 on llvmpipe has GL_EXT_disjoint_timer_query: GpuTime, and no
 * statistic. */
static void gles_draws_take_gpu_time_and_the_programs_queries_and_errors_stay_its_own(void **state)
{
    (void)state;
    run_result gles = run_shimmed("gles", COUNTERS);
    assert_int_equal(gles.exit_code, 0); /* its GL_INVALID_ENUM, and only that */
    assert_true(offers(&gles, "GpuTime"));
    for (int s = 0; s < PIPELINE_STATISTICS - 1; s++)
        assert_false(offers(&gles, pipeline_statistics[s][1]));
    json_object *report = report_commands(&gles);
    assert_non_null(report);
    assert_int_equal(json_object_array_length(report), 3); /* the refused draw is none */
    for (size_t i = 0; i < 3; i++) {
        json_object *row = json_object_array_get_idx(report, i);
        assert_true(command_value(row, "GpuTime") > 0);
        assert_int_equal(command_value(row, "DrawCalls"), 1);
    }
    json_object *lines = output_lines(&gles);
    assert_non_null(lines);
    assert_int_equal(json_object_array_length(lines), 1);
    json_object *own = json_object_array_get_idx(lines, 0);
    assert_true(line_value(own, "own_span_ns") > 0);  /* its timestamps, read by itself */
    assert_int_equal(line_value(own, "disjoint"), 0); /* llvmpipe has no disjoint events */
    json_object_put(lines);
    run_result_free(&gles);
}

/* One catalogue per process: a desktop GL 4 context opened the device (its
 * catalogue has the statistics), then an OpenGL ES 3 context draws, which
 * has none. The ES draws' statistics are not known: null, never a 0 that
 * looks measured; their GpuTime is measured, and a draw's CsInvocations is
 * 0 by what it is. The desktop strip's statistics are llvmpipe's: 4 vertices,
 * 2 triangles. */
static void an_es_context_after_a_desktop_one_leaves_its_statistics_unmeasured(void **state)
{
    (void)state;
    run_result mixed = run_shimmed("mixed", COUNTERS);
    assert_int_equal(mixed.exit_code, 0);
    json_object *report = report_commands(&mixed);
    assert_non_null(report);
    assert_int_equal(json_object_array_length(report), 4);
    json_object *strip = json_object_array_get_idx(report, 0);
    assert_string_equal(command_text(strip, "context_api"), "gl");
    assert_int_equal(command_value(strip, "IaVertices"), 4);
    assert_int_equal(command_value(strip, "IaPrimitives"), 2);
    for (size_t i = 1; i < 4; i++) {
        json_object *row = json_object_array_get_idx(report, i);
        assert_string_equal(command_text(row, "context_api"), "gles");
        for (int s = 0; s < PIPELINE_STATISTICS - 1; s++) {
            if (!unmeasured(row, pipeline_statistics[s][1]))
                print_error("ES row %zu: %s is not null\n", i, pipeline_statistics[s][1]);
            assert_true(unmeasured(row, pipeline_statistics[s][1]));
        }
        assert_int_equal(command_value(row, "CsInvocations"), 0);
        assert_false(unmeasured(row, "CsInvocations"));
        assert_true(command_value(row, "GpuTime") > 0);
        assert_int_equal(command_value(row, "DrawCalls"), 1);
    }
    run_result_free(&mixed);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_statistic_of_every_command_equals_llvmpipes),
        cmocka_unit_test(every_measured_commands_gpu_time_is_within_the_programs_timestamps_of_it),
        cmocka_unit_test(gles_draws_take_gpu_time_and_the_programs_queries_and_errors_stay_its_own),
        cmocka_unit_test(the_programs_own_queries_errors_and_query_buffer_are_untouched),
        cmocka_unit_test(a_statistic_the_program_measures_itself_is_left_and_said),
        cmocka_unit_test(a_context_without_queries_is_offered_no_measured_counter),
        cmocka_unit_test(an_es_contexts_catalogue_is_the_same_with_the_egl_door),
        cmocka_unit_test(an_es_context_after_a_desktop_one_leaves_its_statistics_unmeasured),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, run_all, free_all);
}
