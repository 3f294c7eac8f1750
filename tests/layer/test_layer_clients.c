/*
 * Unmodified third-party programs under the layer (label "client"): vkcube
 * under Xvfb, and a gfxreconstruct capture of it replayed. vkcube draws its
 * cube as one vkCmdDraw of 12 triangles (36 vertices) per frame.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "layer_harness.h"

enum { FRAMES = 50 };

/* One draw of the cube per frame, frames 0 to FRAMES-1 in order. */
static void assert_cube_frames(run_result *r)
{
    assert_int_equal(r->exit_code, 0);
    assert_non_null(r->report);
    json_object *commands = report_commands(r);
    assert_int_equal(json_object_array_length(commands), FRAMES);
    for (size_t i = 0; i < FRAMES; i++) {
        json_object *c = json_object_array_get_idx(commands, i);
        assert_string_equal(command_text(c, "api_name"), "vkCmdDraw");
        assert_int_equal(command_number(c, "frame"), i);
        assert_int_equal(command_value(c, "IaVertices"), 36);
        assert_int_equal(command_value(c, "IaPrimitives"), 12);
        assert_int_equal(command_value(c, "VsInvocations"), 36);
    }
}

static char *preload_env(void)
{
    static char env[4096];
    snprintf(env, sizeof(env), "LD_PRELOAD=%s", TALLY_SANITIZER_PRELOAD);
    return env;
}

/* Each xvfb-run starts its search for a free display at a number of its
 * own (as tests/gl's do): ctest runs these tests side by side, and two
 * `xvfb-run -a` that start at the same number can take the same display. */
static void vkcube_50_frames_report_one_cube_per_frame(void **state)
{
    (void)state;
    const char *argv[] = {"/usr/bin/xvfb-run", "-a", "-n", "330", "vkcube", "--c", "50", NULL};
    const char *env[] = {preload_env(), "TALLY_COUNTERS=IaVertices,IaPrimitives,VsInvocations",
                         NULL};
    run_result r = run_under_layer(argv, ACTIVATE_EXPLICIT, env);
    assert_cube_frames(&r);
    run_result_free(&r);
}

/* vkcube (an instance for Vulkan 1.0) under validation with best practices
 * and synchronization on: the same messages with the layer as without. */
static void vkcube_under_validation_gets_nothing_new_with_the_layer(void **state)
{
    (void)state;
    const char *argv[] = {"/usr/bin/xvfb-run", "-a", "-n", "337", "vkcube", "--c", "5", NULL};
    const char *alone_env[] = {"VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation",
                               VALIDATION_BEST_PRACTICES_AND_SYNC, NULL};
    run_result alone = run_under_layer(argv, ACTIVATE_NONE, alone_env);
    assert_int_equal(alone.exit_code, 0);
    const char *both_env[] = {
        preload_env(), "VK_INSTANCE_LAYERS=VK_LAYER_TALLY_counters:VK_LAYER_KHRONOS_validation",
        VALIDATION_BEST_PRACTICES_AND_SYNC, NULL};
    run_result both = run_under_layer(argv, ACTIVATE_EXPLICIT, both_env);
    assert_int_equal(both.exit_code, 0);
    assert_non_null(both.report);
    char *added = validation_messages_added(alone.output, both.output);
    if (*added)
        print_error("messages only with the layer:\n%s", added);
    assert_string_equal(added, "");
    free(added);
    run_result_free(&alone);
    run_result_free(&both);
}

static void gfxreconstruct_capture_replays_under_the_layer(void **state)
{
    (void)state;
    char capture[] = "/tmp/tally_vkcube_XXXXXX";
    int fd = mkstemp(capture);
    assert_true(fd >= 0);
    close(fd);
    char file_env[sizeof(capture) + 32];
    snprintf(file_env, sizeof(file_env), "GFXRECON_CAPTURE_FILE=%s", capture);
    const char *record_argv[] = {
        "/usr/bin/xvfb-run", "-a", "-n", "344", "vkcube", "--c", "50", NULL};
    const char *record_env[] = {file_env, "GFXRECON_CAPTURE_FILE_TIMESTAMP=false",
                                "VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct", NULL};
    run_result recorded = run_under_layer(record_argv, ACTIVATE_NONE, record_env);
    assert_int_equal(recorded.exit_code, 0);
    assert_null(recorded.report);
    run_result_free(&recorded);

    const char *replay_argv[] = {"/usr/bin/xvfb-run", "-a",    "-n", "351",
                                 "gfxrecon-replay",   capture, NULL};
    const char *replay_env[] = {preload_env(),
                                "TALLY_COUNTERS=IaVertices,IaPrimitives,VsInvocations", NULL};
    run_result replayed = run_under_layer(replay_argv, ACTIVATE_EXPLICIT, replay_env);
    unlink(capture);
    assert_cube_frames(&replayed);
    run_result_free(&replayed);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vkcube_50_frames_report_one_cube_per_frame),
        cmocka_unit_test(vkcube_under_validation_gets_nothing_new_with_the_layer),
        cmocka_unit_test(gfxreconstruct_capture_replays_under_the_layer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
