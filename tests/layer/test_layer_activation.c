/* Both ways of turning the layer on, and TALLY_DISABLE=1 turning it off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "layer_harness.h"

static const char *const workload[] = {VK_WORKLOAD, SHADER_DIR, NULL};

/* The workload prints one line per measured command; an active layer reports each. */
static void assert_reported_every_command(run_result *r)
{
    assert_int_equal(r->exit_code, 0);
    assert_non_null(r->report);
    json_object *lines = output_lines(r);
    assert_true(json_object_array_length(lines) > 0);
    assert_int_equal(json_object_array_length(report_commands(r)), lines_record_count(lines));
    json_object_put(lines);
}

static void explicit_activation_through_vk_instance_layers_reports(void **state)
{
    (void)state;
    run_result r = run_under_layer(workload, ACTIVATE_EXPLICIT, NULL);
    assert_reported_every_command(&r);
    run_result_free(&r);
}

static void implicit_activation_with_tally_1_reports(void **state)
{
    (void)state;
    const char *env[] = {"TALLY=1", NULL};
    run_result r = run_under_layer(workload, ACTIVATE_IMPLICIT, env);
    assert_reported_every_command(&r);
    run_result_free(&r);
}

static void implicit_layer_stays_off_without_tally_1(void **state)
{
    (void)state;
    run_result r = run_under_layer(workload, ACTIVATE_IMPLICIT, NULL);
    assert_int_equal(r.exit_code, 0);
    assert_null(r.report);
    run_result_free(&r);
}

static void tally_disable_1_turns_the_implicit_layer_off(void **state)
{
    (void)state;
    const char *env[] = {"TALLY=1", "TALLY_DISABLE=1", NULL};
    run_result r = run_under_layer(workload, ACTIVATE_IMPLICIT, env);
    assert_int_equal(r.exit_code, 0);
    assert_null(r.report);
    run_result_free(&r);
}

static void without_activation_nothing_is_reported(void **state)
{
    (void)state;
    run_result r = run_under_layer(workload, ACTIVATE_NONE, NULL);
    assert_int_equal(r.exit_code, 0);
    assert_null(r.report);
    run_result_free(&r);
}

/* `tally run` needs nothing installed: it finds the explicit manifest beside itself. */
static void tally_run_activates_the_layer_for_the_program(void **state)
{
    (void)state;
    const char *argv[] = {TALLY_CLI, "run", "--", VK_WORKLOAD, SHADER_DIR, NULL};
    /* tally run preloads the (sanitized) shims after what is already preloaded. */
    const char *env[] = {"LD_PRELOAD=" TALLY_SANITIZER_PRELOAD, NULL};
    run_result r = run_under_layer(argv, ACTIVATE_NONE, env);
    assert_reported_every_command(&r);
    run_result_free(&r);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(explicit_activation_through_vk_instance_layers_reports),
        cmocka_unit_test(implicit_activation_with_tally_1_reports),
        cmocka_unit_test(implicit_layer_stays_off_without_tally_1),
        cmocka_unit_test(tally_disable_1_turns_the_implicit_layer_off),
        cmocka_unit_test(without_activation_nothing_is_reported),
        cmocka_unit_test(tally_run_activates_the_layer_for_the_program),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
