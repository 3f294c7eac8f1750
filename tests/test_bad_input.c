/* Bad input at every public entry point: NULL pointers, unknown backends and
 * counters, broken profile files, out-of-range commands. Errors record
 * nothing and say what was wrong. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tally/tally.h"

#define INVALID TALLY_ERROR_INVALID_ARGUMENT

struct fixture {
    tally_device *device;
    tally_context *context;
    tally_stream *stream;
    tally_results *results; /* 2 slots of GpuTime */
    tally_program *program;
    char profile[64];
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    if (!fx)
        return -1;
    tally_device_options options = {.clock = TALLY_CLOCK_VIRTUAL};
    uint32_t counter = 0;
    tally_program_desc desc = {.name = "p"};
    desc.stages[TALLY_STAGE_VERTEX].present = true;
    if (tally_device_open(&options, &fx->device, NULL, 0) != TALLY_OK ||
        tally_context_create(fx->device, "test", &fx->context) != TALLY_OK ||
        tally_stream_create(fx->context, &fx->stream) != TALLY_OK ||
        tally_results_create(fx->device, &counter, 1, 2, &fx->results) != TALLY_OK ||
        tally_program_create(fx->device, &desc, &fx->program) != TALLY_OK)
        return -1;
    strcpy(fx->profile, "/tmp/tally-profile-XXXXXX");
    int fd = mkstemp(fx->profile);
    if (fd < 0)
        return -1;
    close(fd);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    tally_program_release(fx->program);
    tally_results_release(fx->results);
    tally_stream_destroy(fx->stream);
    tally_context_destroy(fx->context);
    tally_device_close(fx->device);
    unlink(fx->profile);
    free(fx);
    return 0;
}

static void null_pointers_to_catalogue_functions_are_invalid_arguments(void **state)
{
    struct fixture *fx = *state;
    const tally_catalogue *cat = tally_device_catalogue(fx->device);
    uint32_t index = 0, passes = 0;
    uint64_t raw[64] = {0};
    tally_value v;
    assert_int_equal(tally_backend_catalogue("simgpu", NULL), INVALID);
    assert_int_equal(tally_catalogue_find(NULL, "GpuTime", &index), INVALID);
    assert_int_equal(tally_catalogue_find(cat, NULL, &index), INVALID);
    assert_int_equal(tally_catalogue_find(cat, "GpuTime", NULL), INVALID);
    assert_int_equal(tally_plan_passes(NULL, &index, 1, NULL, &passes), INVALID);
    assert_int_equal(tally_catalogue_evaluate(NULL, 0, raw, NULL, &v), INVALID);
    assert_int_equal(tally_catalogue_evaluate(cat, 0, NULL, NULL, &v), INVALID);
    assert_int_equal(tally_catalogue_evaluate(cat, 0, raw, NULL, NULL), INVALID);
}

static void
null_pointers_to_device_context_and_program_functions_are_invalid_arguments(void **state)
{
    struct fixture *fx = *state;
    tally_context *context = NULL;
    tally_program *program = NULL;
    tally_program_desc desc = {0};
    assert_int_equal(tally_device_open(NULL, NULL, NULL, 0), INVALID);
    assert_int_equal(tally_context_create(NULL, "x", &context), INVALID);
    assert_int_equal(tally_context_create(fx->device, "x", NULL), INVALID);
    assert_int_equal(tally_program_create(NULL, &desc, &program), INVALID);
    assert_int_equal(tally_program_create(fx->device, NULL, &program), INVALID);
    assert_int_equal(tally_program_create(fx->device, &desc, NULL), INVALID);
}

static void destroying_or_releasing_null_is_harmless(void **state)
{
    (void)state;
    tally_device_close(NULL);
    tally_context_destroy(NULL);
    tally_program_release(NULL);
    tally_stream_destroy(NULL);
    tally_results_release(NULL);
    tally_timeline_unsubscribe(NULL);
    tally_sampler_close(NULL);
    tally_device_release_shared(NULL);
}

static void null_pointers_to_stream_functions_are_invalid_arguments(void **state)
{
    struct fixture *fx = *state;
    tally_stream *s = fx->stream, *out = NULL;
    tally_draw draw = {.api_name = "d", .count = 3, .instance_count = 1};
    tally_dispatch dispatch = {.api_name = "c", .groups = {1, 1, 1}};
    tally_transfer transfer = {.api_name = "t", .bytes = 4};
    tally_render_state rs = {.layers = 1, .samples = 1};
    assert_int_equal(tally_stream_create(NULL, &out), INVALID);
    assert_int_equal(tally_stream_create(fx->context, NULL), INVALID);
    assert_int_equal(tally_stream_reset(NULL), INVALID);
    assert_int_equal(tally_stream_draw(NULL, &draw), INVALID);
    assert_int_equal(tally_stream_draw(s, NULL), INVALID);
    assert_int_equal(tally_stream_dispatch(NULL, &dispatch), INVALID);
    assert_int_equal(tally_stream_dispatch(s, NULL), INVALID);
    assert_int_equal(tally_stream_transfer(NULL, &transfer), INVALID);
    assert_int_equal(tally_stream_transfer(s, NULL), INVALID);
    assert_int_equal(tally_stream_bind_program(NULL, fx->program), INVALID);
    assert_int_equal(tally_stream_set_render_state(NULL, &rs), INVALID);
    assert_int_equal(tally_stream_set_render_state(s, NULL), INVALID);
    assert_int_equal(tally_stream_marker_begin(NULL, fx->results, 0), INVALID);
    assert_int_equal(tally_stream_marker_begin(s, NULL, 0), INVALID);
    assert_int_equal(tally_stream_marker_end(NULL, fx->results, 0), INVALID);
    assert_int_equal(tally_stream_marker_end(s, NULL, 0), INVALID);
    assert_int_equal(tally_stream_reset_results(NULL, fx->results, 0, 1), INVALID);
    assert_int_equal(tally_stream_reset_results(s, NULL, 0, 1), INVALID);
    assert_int_equal(tally_stream_label_push(NULL, "l"), INVALID);
    assert_int_equal(tally_stream_label_push(s, NULL), INVALID);
    assert_int_equal(tally_stream_label_pop(NULL), INVALID);
    assert_int_equal(tally_stream_frame_boundary(NULL), INVALID);
    assert_int_equal(tally_stream_execute(NULL, s), INVALID);
    assert_int_equal(tally_stream_execute(s, NULL), INVALID);
    assert_int_equal(tally_stream_command_count(s), 0);
}

static void null_pointers_to_submission_functions_are_invalid_arguments(void **state)
{
    struct fixture *fx = *state;
    tally_submission sub = {.streams = &fx->stream, .stream_count = 1, .api_name = "s"};
    assert_int_equal(tally_submit(NULL, &sub, NULL), INVALID);
    assert_int_equal(tally_submit(fx->device, NULL, NULL), INVALID);
    tally_submission no_streams = {.streams = NULL, .stream_count = 1, .api_name = "s"};
    assert_int_equal(tally_submit(fx->device, &no_streams, NULL), INVALID);
    assert_int_equal(tally_wait_seqno(NULL, 0, 0), INVALID);
    assert_int_equal(tally_device_wait_idle(NULL), INVALID);
}

static void null_pointers_to_results_functions_are_invalid_arguments(void **state)
{
    struct fixture *fx = *state;
    uint32_t counter = 0;
    tally_results *out = NULL;
    tally_value v;
    uint64_t raw[64];
    assert_int_equal(tally_results_create(NULL, &counter, 1, 1, &out), INVALID);
    assert_int_equal(tally_results_create(fx->device, NULL, 1, 1, &out), INVALID);
    assert_int_equal(tally_results_create(fx->device, &counter, 1, 1, NULL), INVALID);
    assert_int_equal(tally_results_reset(NULL, 0, 1), INVALID);
    assert_int_equal(tally_results_get(NULL, 0, &v, 1, NULL), INVALID);
    assert_int_equal(tally_results_get_raw(NULL, 0, raw, 64), INVALID);
    assert_int_equal(tally_results_get_raw(fx->results, 0, NULL, 64), INVALID);
    assert_int_equal(tally_results_wait(NULL, 0, 0), INVALID);
}

static void null_pointers_to_timeline_and_sampler_functions_are_invalid_arguments(void **state)
{
    struct fixture *fx = *state;
    tally_subscription *sub = NULL;
    tally_sampler *sampler = NULL;
    tally_event events[4];
    tally_sample samples[4];
    uint64_t raw[4 * 64];
    uint32_t count = 0;
    assert_int_equal(tally_timeline_subscribe(NULL, 8, &sub), INVALID);
    assert_int_equal(tally_timeline_subscribe(fx->device, 8, NULL), INVALID);
    assert_int_equal(tally_timeline_read(NULL, events, 4, &count, NULL), INVALID);
    assert_int_equal(tally_timeline_subscribe(fx->device, 8, &sub), TALLY_OK);
    assert_int_equal(tally_timeline_read(sub, NULL, 4, &count, NULL), INVALID);
    assert_int_equal(tally_timeline_read(sub, events, 4, NULL, NULL), INVALID);
    tally_timeline_unsubscribe(sub);
    assert_int_equal(tally_sampler_open(NULL, 1000, 4, &sampler), INVALID);
    assert_int_equal(tally_sampler_open(fx->device, 1000, 4, NULL), INVALID);
    assert_int_equal(tally_sampler_read(NULL, samples, raw, 4, &count, NULL), INVALID);
    assert_int_equal(tally_sampler_wait(NULL, 0), INVALID);
}

static void null_pointers_to_report_and_trace_writers_are_invalid_arguments(void **state)
{
    struct fixture *fx = *state;
    const tally_catalogue *cat = tally_device_catalogue(fx->device);
    uint32_t counter = 0;
    tally_report *report = NULL;
    tally_trace *trace = NULL;
    assert_int_equal(tally_report_open(NULL, TALLY_REPORT_CSV, cat, &counter, 1, &report), INVALID);
    assert_int_equal(tally_report_open("/tmp/x.csv", TALLY_REPORT_CSV, NULL, &counter, 1, &report),
                     INVALID);
    assert_int_equal(tally_report_open("/tmp/x.csv", TALLY_REPORT_CSV, cat, &counter, 1, NULL),
                     INVALID);
    assert_int_equal(tally_report_write(NULL, NULL, NULL), INVALID);
    assert_int_equal(tally_report_close(NULL), INVALID);
    assert_int_equal(tally_trace_open(NULL, "p", &trace), INVALID);
    assert_int_equal(tally_trace_open("/tmp/x.json", "p", NULL), INVALID);
    assert_int_equal(tally_trace_name_track(NULL, 0, "t"), INVALID);
    assert_int_equal(tally_trace_slice(NULL, 0, "s", 0, 1, NULL, 0), INVALID);
    assert_int_equal(tally_trace_instant(NULL, 0, "i", 0, NULL, 0), INVALID);
    assert_int_equal(tally_trace_counter(NULL, "c", 0, 1.0), INVALID);
    assert_int_equal(tally_trace_close(NULL), INVALID);
}

static void an_unknown_backend_is_refused_with_a_message_naming_it(void **state)
{
    (void)state;
    tally_device_options options = {.backend = "nosuchgpu"};
    tally_device *device = (tally_device *)&options; /* must become NULL */
    char error[256] = "";
    assert_int_equal(tally_device_open(&options, &device, error, sizeof error),
                     TALLY_ERROR_UNKNOWN_BACKEND);
    assert_null(device);
    assert_non_null(strstr(error, "nosuchgpu"));
}

static void write_profile(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

/* Opens a device with the profile text; returns the status and the message. */
static tally_status open_with_profile(struct fixture *fx, const char *text, char *error,
                                      size_t size)
{
    write_profile(fx->profile, text);
    tally_device_options options = {.profile_path = fx->profile, .clock = TALLY_CLOCK_VIRTUAL};
    tally_device *device = NULL;
    error[0] = '\0';
    tally_status s = tally_device_open(&options, &device, error, size);
    if (s == TALLY_OK)
        tally_device_close(device);
    else
        assert_null(device);
    return s;
}

static void a_profile_with_an_unknown_parameter_is_refused_naming_the_line(void **state)
{
    struct fixture *fx = *state;
    char error[512];
    assert_int_equal(
        open_with_profile(fx, "# comment\n[clock]\nno_such_parameter = 5\n", error, sizeof error),
        TALLY_ERROR_BAD_PROFILE);
    assert_non_null(strstr(error, "line 3"));
}

static void a_profile_with_a_non_integer_value_is_refused_naming_the_line(void **state)
{
    struct fixture *fx = *state;
    char error[512];
    assert_int_equal(open_with_profile(fx, "[clock]\ncore_clock_mhz = fast\n", error, sizeof error),
                     TALLY_ERROR_BAD_PROFILE);
    assert_non_null(strstr(error, "line 2"));
}

static void a_profile_with_an_out_of_range_value_is_refused_naming_the_line(void **state)
{
    struct fixture *fx = *state;
    char error[512];
    assert_int_equal(open_with_profile(fx, "[clock]\n\ncore_clock_mhz = 0\n", error, sizeof error),
                     TALLY_ERROR_BAD_PROFILE);
    assert_non_null(strstr(error, "line 3"));
    assert_int_equal(
        open_with_profile(fx, "[clock]\ncore_clock_mhz = 100001\n", error, sizeof error),
        TALLY_ERROR_BAD_PROFILE);
    assert_non_null(strstr(error, "line 2"));
}

static void a_valid_profile_changes_the_device(void **state)
{
    struct fixture *fx = *state;
    write_profile(fx->profile, "; a slower clock\n[clock]\ncore_clock_mhz = 500\n");
    tally_device_options options = {.profile_path = fx->profile, .clock = TALLY_CLOCK_VIRTUAL};
    tally_device *device = NULL;
    char error[256] = "";
    assert_int_equal(tally_device_open(&options, &device, error, sizeof error), TALLY_OK);
    tally_device_info info;
    tally_device_get_info(device, &info);
    assert_int_equal(info.core_clock_hz, 500000000ull);
    tally_device_close(device);
}

static void results_of_an_unknown_counter_or_no_slots_are_refused(void **state)
{
    struct fixture *fx = *state;
    uint32_t n = tally_catalogue_counter_count(tally_device_catalogue(fx->device));
    uint32_t counters[2] = {0, n};
    tally_results *out = NULL;
    assert_int_equal(tally_results_create(fx->device, counters, 2, 1, &out),
                     TALLY_ERROR_UNKNOWN_COUNTER);
    assert_int_equal(tally_results_create(fx->device, counters, 1, 0, &out), INVALID);
}

static void draws_with_a_bad_topology_or_index_size_record_nothing(void **state)
{
    struct fixture *fx = *state;
    static const uint8_t indices[6] = {0, 1, 2, 3, 4, 5};
    tally_draw bad_topology = {
        .api_name = "d", .count = 3, .instance_count = 1, .topology = TALLY_TOPOLOGY_COUNT};
    tally_draw bad_index_size = {.api_name = "d",
                                 .count = 2,
                                 .instance_count = 1,
                                 .flags = TALLY_DRAW_INDEXED,
                                 .index_size = 3,
                                 .topology = TALLY_TOPOLOGY_POINT_LIST,
                                 .indices = indices};
    tally_draw good = {
        .api_name = "d", .count = 3, .instance_count = 1, .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    assert_int_equal(tally_stream_draw(fx->stream, &good), TALLY_OK);
    uint32_t before = tally_stream_command_count(fx->stream);
    assert_int_equal(tally_stream_draw(fx->stream, &bad_topology), INVALID);
    assert_int_equal(tally_stream_command_count(fx->stream), before);
    bad_topology.topology = 255;
    assert_int_equal(tally_stream_draw(fx->stream, &bad_topology), INVALID);
    assert_int_equal(tally_stream_command_count(fx->stream), before);
    assert_int_equal(tally_stream_draw(fx->stream, &bad_index_size), INVALID);
    assert_int_equal(tally_stream_command_count(fx->stream), before);
}

static void markers_with_a_slot_out_of_range_record_nothing(void **state)
{
    struct fixture *fx = *state;
    assert_int_equal(tally_stream_marker_begin(fx->stream, fx->results, 2), INVALID);
    assert_int_equal(tally_stream_marker_end(fx->stream, fx->results, UINT32_MAX), INVALID);
    assert_int_equal(tally_stream_command_count(fx->stream), 0);
}

static void a_submission_with_a_null_stream_is_refused(void **state)
{
    struct fixture *fx = *state;
    tally_stream *streams[2] = {fx->stream, NULL};
    tally_submission sub = {.streams = streams, .stream_count = 2, .api_name = "s"};
    uint64_t before = tally_completed_seqno(fx->device);
    assert_int_equal(tally_submit(fx->device, &sub, NULL), INVALID);
    assert_int_equal(tally_device_wait_idle(fx->device), TALLY_OK);
    assert_int_equal(tally_completed_seqno(fx->device), before);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(null_pointers_to_catalogue_functions_are_invalid_arguments,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            null_pointers_to_device_context_and_program_functions_are_invalid_arguments, setup,
            teardown),
        cmocka_unit_test(destroying_or_releasing_null_is_harmless),
        cmocka_unit_test_setup_teardown(null_pointers_to_stream_functions_are_invalid_arguments,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(null_pointers_to_submission_functions_are_invalid_arguments,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(null_pointers_to_results_functions_are_invalid_arguments,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            null_pointers_to_timeline_and_sampler_functions_are_invalid_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(
            null_pointers_to_report_and_trace_writers_are_invalid_arguments, setup, teardown),
        cmocka_unit_test(an_unknown_backend_is_refused_with_a_message_naming_it),
        cmocka_unit_test_setup_teardown(
            a_profile_with_an_unknown_parameter_is_refused_naming_the_line, setup, teardown),
        cmocka_unit_test_setup_teardown(
            a_profile_with_a_non_integer_value_is_refused_naming_the_line, setup, teardown),
        cmocka_unit_test_setup_teardown(
            a_profile_with_an_out_of_range_value_is_refused_naming_the_line, setup, teardown),
        cmocka_unit_test_setup_teardown(a_valid_profile_changes_the_device, setup, teardown),
        cmocka_unit_test_setup_teardown(results_of_an_unknown_counter_or_no_slots_are_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(draws_with_a_bad_topology_or_index_size_record_nothing,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(markers_with_a_slot_out_of_range_record_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_submission_with_a_null_stream_is_refused, setup,
                                        teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("bad_input", tests, NULL, NULL);
}
