/* The process-wide device of the front doors: one device, counted by
 * reference, configured from the environment, reports finished on release;
 * a forked child leaves its parent's alone and opens its own. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tally/tally.h>

#include "exit_paths.h"

static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/tally-shared-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char command[128];
    snprintf(command, sizeof(command), "rm -rf %s", dir);
    return system(command) == 0 ? 0 : -1;
}

static void draw_three_times(tally_device *device)
{
    tally_context *ctx;
    tally_stream *stream;
    assert_int_equal(tally_context_create(device, "test", &ctx), TALLY_OK);
    assert_int_equal(tally_stream_create(ctx, &stream), TALLY_OK);
    tally_draw draw = {.api_name = "glDrawArrays",
                       .count = 6,
                       .instance_count = 1,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    for (int i = 0; i < 3; i++)
        assert_int_equal(tally_stream_draw(stream, &draw), TALLY_OK);
    tally_submission sub = {.streams = &stream,
                            .stream_count = 1,
                            .flags = TALLY_SUBMIT_CONSUME,
                            .api_name = "glFlush"};
    assert_int_equal(tally_submit(device, &sub, NULL), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(device), TALLY_OK);
    tally_stream_destroy(stream);
    tally_context_destroy(ctx);
}

/* The rows of a JSON report, which is at its destination only once whole:
 * -1 while there is none. */
static int json_rows(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int rows = 0;
    char line[4096];
    while (fgets(line, sizeof line, f))
        rows += strncmp(line, "{\"sequence\":", 12) == 0;
    fclose(f);
    return rows;
}

static void acquiring_twice_gives_the_same_device(void **state)
{
    (void)state;
    tally_device *a, *b;
    assert_int_equal(tally_device_acquire_shared(&a), TALLY_OK);
    assert_int_equal(tally_device_acquire_shared(&b), TALLY_OK);
    assert_ptr_equal(a, b);
    tally_device_release_shared(b);
    tally_device_release_shared(a);
}

static void the_report_is_written_when_the_last_reference_goes(void **state)
{
    (void)state;
    char path[128];
    /* JSON, which is written whole: at its destination only once finished */
    snprintf(path, sizeof(path), "%s/report.json", dir);
    setenv("TALLY_OUTPUT", path, 1);
    tally_device *a, *b;
    assert_int_equal(tally_device_acquire_shared(&a), TALLY_OK);
    assert_int_equal(tally_device_acquire_shared(&b), TALLY_OK);
    draw_three_times(a);
    tally_device_release_shared(a);
    assert_int_equal(access(path, F_OK), -1); /* still open: not finished */
    tally_device_release_shared(b);
    unsetenv("TALLY_OUTPUT");
    assert_int_equal(json_rows(path), 3); /* one row per draw */
}

static void an_unwritable_report_still_gives_a_device(void **state)
{
    (void)state;
    setenv("TALLY_OUTPUT", "/nonexistent-directory/report.csv", 1);
    tally_device *device = NULL;
    assert_int_equal(tally_device_acquire_shared(&device), TALLY_OK);
    assert_non_null(device);
    draw_three_times(device);
    tally_device_release_shared(device);
    unsetenv("TALLY_OUTPUT");
}

static void an_unknown_backend_gives_no_device(void **state)
{
    (void)state;
    setenv("TALLY_BACKEND", "nosuchgpu", 1);
    tally_device *device = (tally_device *)&device;
    assert_int_equal(tally_device_acquire_shared(&device), TALLY_ERROR_UNKNOWN_BACKEND);
    assert_null(device);
    unsetenv("TALLY_BACKEND");
}

/* Without cmocka's asserts: they belong to the parent's run. */
static bool draw_once(tally_device *device)
{
    tally_context *ctx = NULL;
    tally_stream *stream = NULL;
    tally_draw draw = {.api_name = "glDrawArrays",
                       .count = 6,
                       .instance_count = 1,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    bool ok = tally_context_create(device, "child", &ctx) == TALLY_OK &&
              tally_stream_create(ctx, &stream) == TALLY_OK &&
              tally_stream_draw(stream, &draw) == TALLY_OK &&
              tally_submit_stream(device, stream, 0, "glFlush", NULL) == TALLY_OK &&
              tally_device_wait_idle(device) == TALLY_OK;
    tally_stream_destroy(stream);
    tally_context_destroy(ctx);
    return ok;
}

static tally_device *parents;

static void child_exits(void)
{
    exit(0);
}

static void child_draws_on_its_own_device(void)
{
    unsetenv("TALLY_OUTPUT"); /* one file per process is not this test's */
    tally_device *own = NULL;
    if (tally_device_acquire_shared(&own) != TALLY_OK || own == parents || !draw_once(own))
        exit(1);
    tally_device_release_shared(own);
    exit(0);
}

static void a_forked_child_that_exits_leaves_the_parents_device_alone(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof(path), "%s/report.json", dir); /* whole: there once finished */
    setenv("TALLY_OUTPUT", path, 1);
    assert_int_equal(tally_device_acquire_shared(&parents), TALLY_OK);
    draw_three_times(parents);
    assert_true(exit_paths_fork(child_exits));
    assert_int_equal(access(path, F_OK), -1); /* the child finished nothing of the parent's */
    draw_three_times(parents);
    tally_device_release_shared(parents);
    unsetenv("TALLY_OUTPUT");
    assert_int_equal(json_rows(path), 6);
}

static void a_forked_child_opens_its_own_device(void **state)
{
    (void)state;
#ifdef __SANITIZE_THREAD__
    /* The child's device starts a queue thread, which ThreadSanitizer does
     * not support after a multi-threaded fork. */
    skip();
#endif
    assert_int_equal(tally_device_acquire_shared(&parents), TALLY_OK);
    assert_true(exit_paths_fork(child_draws_on_its_own_device));
    draw_three_times(parents);
    tally_device_release_shared(parents);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(acquiring_twice_gives_the_same_device),
        cmocka_unit_test_setup_teardown(the_report_is_written_when_the_last_reference_goes,
                                        make_dir, remove_dir),
        cmocka_unit_test(an_unwritable_report_still_gives_a_device),
        cmocka_unit_test(an_unknown_backend_gives_no_device),
        cmocka_unit_test_setup_teardown(a_forked_child_that_exits_leaves_the_parents_device_alone,
                                        make_dir, remove_dir),
        cmocka_unit_test(a_forked_child_opens_its_own_device),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("shared_device", tests, NULL, NULL);
}
