/*
 * The per-command report of an unmodified program (tests/layer/vk_workload.c)
 * run under the layer: one record per draw and dispatch with the API command
 * name, frame, submission, command buffer and label, and counters equal to
 * lavapipe's own pipeline statistics for the same commands.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "layer_harness.h"

typedef struct workload_run {
    run_result run;
    json_object *lines;    /* what the program measured, in order */
    json_object *commands; /* what tally reported, in order */
} workload_run;

static int run_workload(void **state)
{
    static workload_run w;
    const char *argv[] = {VK_WORKLOAD, SHADER_DIR, NULL};
    const char *env[] = {"TALLY_COUNTERS=IaVertices,IaPrimitives,VsInvocations,CsInvocations",
                         NULL};
    w.run = run_under_layer(argv, ACTIVATE_EXPLICIT, env);
    if (w.run.exit_code != 0 || !w.run.report)
        return -1;
    w.lines = output_lines(&w.run);
    w.commands = report_commands(&w.run);
    if (!w.commands || json_object_array_length(w.commands) != json_object_array_length(w.lines))
        return -1;
    *state = &w;
    return 0;
}

static int free_workload(void **state)
{
    workload_run *w = *state;
    json_object_put(w->lines);
    run_result_free(&w->run);
    return 0;
}

static const char *line_text(json_object *line, const char *field)
{
    json_object *v = NULL;
    json_object_object_get_ex(line, field, &v);
    return v ? json_object_get_string(v) : "";
}

static unsigned long long line_number(json_object *line, const char *field)
{
    json_object *v = NULL;
    json_object_object_get_ex(line, field, &v);
    return v ? (unsigned long long)json_object_get_uint64(v) : ~0ull;
}

#define FOR_EACH_COMMAND(w, i, line, command)                                                      \
    for (size_t i = 0; i < json_object_array_length((w)->lines); i++)                              \
        for (json_object *line = json_object_array_get_idx((w)->lines, i),                         \
                         *command = json_object_array_get_idx((w)->commands, i);                   \
             line; line = NULL)

static void every_command_is_reported_under_the_name_the_program_called(void **state)
{
    workload_run *w = *state;
    FOR_EACH_COMMAND(w, i, line, command)
    {
        assert_string_equal(command_text(command, "api_name"), line_text(line, "api"));
        const char *kind = strstr(line_text(line, "api"), "Dispatch") ? "dispatch" : "draw";
        assert_string_equal(command_text(command, "kind"), kind);
        assert_string_equal(command_text(command, "context_api"), "vulkan");
    }
}

static void labels_are_the_debug_utils_labels_around_each_command(void **state)
{
    workload_run *w = *state;
    FOR_EACH_COMMAND(w, i, line, command)
    assert_string_equal(command_text(command, "label"), line_text(line, "label"));
}

/* The program submits three command buffers, one per submission, with no present. */
static void submissions_and_command_buffers_follow_the_program(void **state)
{
    workload_run *w = *state;
    unsigned long long submission = 0, stream = 0;
    FOR_EACH_COMMAND(w, i, line, command)
    {
        assert_int_equal(command_number(command, "frame"), 0);
        unsigned long long s = command_number(command, "submission");
        unsigned long long c = command_number(command, "stream");
        if (i == 0) {
            submission = s;
            stream = c;
            continue;
        }
        if (s != submission) {
            assert_int_equal(s, submission + 1);
            assert_int_not_equal(c, stream); /* a new command buffer */
            submission = s;
            stream = c;
        } else {
            assert_int_equal(c, stream);
        }
    }
    /* vkQueueSubmit, vkQueueSubmit2 (with a secondary), vkQueueSubmit */
    json_object *first = json_object_array_get_idx(w->commands, 0);
    json_object *last =
        json_object_array_get_idx(w->commands, json_object_array_length(w->commands) - 1);
    assert_int_equal(command_number(last, "submission") - command_number(first, "submission"), 2);
}

static void ia_vertices_and_primitives_equal_the_drivers_for_every_topology(void **state)
{
    workload_run *w = *state;
    size_t draws = 0;
    FOR_EACH_COMMAND(w, i, line, command)
    {
        assert_int_equal(command_value(command, "IaVertices"), line_number(line, "ia_vertices"));
        assert_int_equal(command_value(command, "IaPrimitives"),
                         line_number(line, "ia_primitives"));
        draws += line_number(line, "ia_vertices") > 0;
    }
    assert_true(draws >= 22); /* 11 topologies, non-indexed and indexed */
}

static void vs_invocations_equal_the_drivers_for_non_indexed_draws(void **state)
{
    workload_run *w = *state;
    FOR_EACH_COMMAND(w, i, line, command)
    {
        if (line_number(line, "indexed"))
            continue; /* the post-transform cache is modeled, not exact */
        assert_int_equal(command_value(command, "VsInvocations"),
                         line_number(line, "vs_invocations"));
    }
}

/* The local size is a specialization constant (8): the layer must apply it. */
static void cs_invocations_equal_the_drivers(void **state)
{
    workload_run *w = *state;
    size_t dispatches = 0;
    FOR_EACH_COMMAND(w, i, line, command)
    {
        assert_int_equal(command_value(command, "CsInvocations"),
                         line_number(line, "cs_invocations"));
        dispatches += line_number(line, "cs_invocations") > 0;
    }
    assert_int_equal(dispatches, 2);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_command_is_reported_under_the_name_the_program_called),
        cmocka_unit_test(labels_are_the_debug_utils_labels_around_each_command),
        cmocka_unit_test(submissions_and_command_buffers_follow_the_program),
        cmocka_unit_test(ia_vertices_and_primitives_equal_the_drivers_for_every_topology),
        cmocka_unit_test(vs_invocations_equal_the_drivers_for_non_indexed_draws),
        cmocka_unit_test(cs_invocations_equal_the_drivers),
    };
    return cmocka_run_group_tests(tests, run_workload, free_workload);
}
