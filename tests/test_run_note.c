/* TALLY_RUN_NOTE, which `tally run` sets when no file is asked for: the
 * device says at its stop how many commands each front door executed, and
 * how to get a report, so that such a run is never silent; a device that
 * writes a report or a trace says nothing of the kind. Each case is its own
 * process (ctest runs one case per process): the variable is read once. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

static const tally_draw triangles = {.api_name = "vkCmdDraw",
                                     .count = 3,
                                     .instance_count = 1,
                                     .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
static const tally_dispatch one_group = {
    .api_name = "clEnqueueNDRangeKernel", .groups = {1, 1, 1}, .local_size = {64, 1, 1}};

/* Records `draws` draws and `dispatches` dispatches in a context of the
 * API and submits them. */
static void work_of(tally_device *device, const char *api, uint32_t draws, uint32_t dispatches)
{
    tally_context *context = NULL;
    tally_stream *stream = NULL;
    assert_int_equal(tally_context_create(device, api, &context), TALLY_OK);
    assert_int_equal(tally_stream_create(context, &stream), TALLY_OK);
    for (uint32_t i = 0; i < draws; i++)
        assert_int_equal(tally_stream_draw(stream, &triangles), TALLY_OK);
    for (uint32_t i = 0; i < dispatches; i++)
        assert_int_equal(tally_stream_dispatch(stream, &one_group), TALLY_OK);
    tally_submission sub = {.streams = &stream, .stream_count = 1, .api_name = "submit"};
    assert_int_equal(tally_submit(device, &sub, NULL), TALLY_OK);
    tally_stream_destroy(stream);
    tally_context_destroy(context);
}

/* What the device's close writes to stderr, after the work. */
static char *closing_log(tally_device *device)
{
    char path[] = "/tmp/tally-run-note-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    tally_device_close(device);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char *text = calloc(1, 4096);
    assert_true(pread(fd, text, 4095, 0) >= 0);
    close(fd);
    unlink(path);
    return text;
}

static tally_device *device_with(const char *report)
{
    tally_device_options options = {.clock = TALLY_CLOCK_VIRTUAL, .report_path = report};
    tally_device *device = NULL;
    assert_int_equal(tally_device_open(&options, &device, NULL, 0), TALLY_OK);
    return device;
}

static void without_files_each_doors_commands_are_counted(void **state)
{
    (void)state;
    setenv("TALLY_RUN_NOTE", "1", 1);
    tally_device *device = device_with(NULL);
    work_of(device, "vulkan", 1234, 2);
    work_of(device, "gl", 3, 0);
    work_of(device, "gles", 2, 1);
    work_of(device, "opencl", 0, 7);
    char *log = closing_log(device);
    assert_string_equal(log, "tally: 1,236 Vulkan, 6 GL and 7 OpenCL commands seen; no report "
                             "was asked for (tally run -o report.csv -- ...)\n");
    free(log);
}

static void a_door_of_no_commands_says_zero(void **state)
{
    (void)state;
    setenv("TALLY_RUN_NOTE", "1", 1);
    tally_device *device = device_with(NULL);
    work_of(device, "opencl", 0, 1);
    work_of(device, "a-tool", 2, 0); /* a program of its own on libtally */
    char *log = closing_log(device);
    assert_string_equal(log, "tally: 0 Vulkan, 0 GL, 1 OpenCL and 2 other commands seen; no "
                             "report was asked for (tally run -o report.csv -- ...)\n");
    free(log);
}

/* The doors record for the count (the device listens), but nothing reads
 * values: the GL shim must not read index buffers back for it. */
static void the_count_listens_but_observes_nothing(void **state)
{
    (void)state;
    setenv("TALLY_RUN_NOTE", "1", 1);
    tally_device *device = device_with(NULL);
    tally_context *context = NULL;
    tally_stream *stream = NULL;
    assert_int_equal(tally_context_create(device, "gl", &context), TALLY_OK);
    assert_int_equal(tally_stream_create(context, &stream), TALLY_OK);
    assert_true(tally_device_listening(device));
    assert_false(tally_stream_observed(stream));
    tally_stream_destroy(stream);
    tally_context_destroy(context);
    free(closing_log(device));
}

static void a_device_with_a_report_says_nothing_of_it(void **state)
{
    (void)state;
    setenv("TALLY_RUN_NOTE", "1", 1);
    char path[] = "/tmp/tally-run-note-report-XXXXXX.csv";
    int fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    close(fd);
    tally_device *device = device_with(path);
    work_of(device, "vulkan", 5, 0);
    char *log = closing_log(device);
    assert_string_equal(log, "");
    free(log);
    unlink(path);
    char meta[sizeof path + 8];
    if (tally_report_metadata_path(path, meta, sizeof meta))
        unlink(meta);
}

static void without_the_variable_nothing_is_said(void **state)
{
    (void)state;
    unsetenv("TALLY_RUN_NOTE");
    tally_device *device = device_with(NULL);
    work_of(device, "vulkan", 5, 0);
    assert_false(tally_device_listening(device));
    char *log = closing_log(device);
    assert_string_equal(log, "");
    free(log);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    setenv("TALLY_LOG", "warn", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(without_files_each_doors_commands_are_counted),
        cmocka_unit_test(a_door_of_no_commands_says_zero),
        cmocka_unit_test(the_count_listens_but_observes_nothing),
        cmocka_unit_test(a_device_with_a_report_says_nothing_of_it),
        cmocka_unit_test(without_the_variable_nothing_is_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
