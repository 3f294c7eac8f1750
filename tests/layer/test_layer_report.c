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
    json_object *commands; /* what tally reported, one per line (see one_per_line) */
} workload_run;

static unsigned long long line_number(json_object *line, const char *field);

/* The program measures an indirect command of several records with one
 * query; tally reports each record. One command per line: the sum of that
 * line's records, which must all carry the command's name. NULL if the
 * report does not divide so. */
static json_object *one_per_line(json_object *lines, json_object *records)
{
    json_object *merged = json_object_new_array();
    size_t next = 0, total = json_object_array_length(records);
    for (size_t i = 0; i < json_object_array_length(lines); i++) {
        unsigned long long n = line_number(json_object_array_get_idx(lines, i), "records");
        if (n == 0 || next + n > total)
            goto mismatch;
        json_object *first = json_object_array_get_idx(records, next);
        json_object *command = NULL;
        if (json_object_deep_copy(first, &command, NULL) != 0)
            goto mismatch;
        json_object_array_add(merged, command);
        json_object *sum = NULL;
        json_object_object_get_ex(command, "values", &sum);
        for (unsigned long long r = 1; r < n; r++) {
            json_object *record = json_object_array_get_idx(records, next + r);
            if (strcmp(command_text(record, "api_name"), command_text(first, "api_name")) != 0)
                goto mismatch;
            json_object_object_foreach(sum, symbol, value)
            {
                unsigned long long add = command_value(record, symbol);
                json_object_set_uint64(value, json_object_get_uint64(value) + add);
            }
        }
        next += n;
    }
    if (next == total)
        return merged;
mismatch:
    json_object_put(merged);
    return NULL;
}

static int run_workload(void **state)
{
    static workload_run w;
    const char *argv[] = {VK_WORKLOAD, SHADER_DIR, NULL};
    const char *env[] = {
        "TALLY_COUNTERS=IaVertices,IaPrimitives,VsInvocations,CsInvocations,IaIndexBytes", NULL};
    w.run = run_under_layer(argv, ACTIVATE_EXPLICIT, env);
    if (w.run.exit_code != 0 || !w.run.report)
        return -1;
    w.lines = output_lines(&w.run);
    json_object *records = report_commands(&w.run);
    w.commands = records && w.lines ? one_per_line(w.lines, records) : NULL;
    if (!w.commands)
        return -1;
    *state = &w;
    return 0;
}

static int free_workload(void **state)
{
    workload_run *w = *state;
    json_object_put(w->lines);
    json_object_put(w->commands);
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

/* The program names its pipelines with VK_EXT_debug_utils after making
 * them; every row names the pipeline bound for it, the thread that
 * submitted it, and a draw's render target. */
static void rows_name_their_pipeline_thread_and_target(void **state)
{
    workload_run *w = *state;
    FOR_EACH_COMMAND(w, i, line, command)
    {
        if (!*line_text(line, "pipeline"))
            continue; /* a line of a whole submission */
        assert_string_equal(command_text(command, "pipeline_name"), line_text(line, "pipeline"));
        assert_true(command_number(command, "pipeline") > 0);
        assert_int_equal(command_number(command, "tid"), line_number(line, "tid"));
        bool draw = strcmp(command_text(command, "kind"), "draw") == 0;
        assert_int_equal(command_number(command, "target_width"),
                         draw ? line_number(line, "target") : 0);
        assert_int_equal(command_number(command, "target_height"),
                         draw ? line_number(line, "target") : 0);
    }
}

/* A pipeline's shader hash is its shaders' code: pipelines that differ only
 * in topology share it, a tessellated one and the compute one do not. */
static void pipelines_of_the_same_shaders_share_their_hash(void **state)
{
    workload_run *w = *state;
    const char *list = NULL, *strip = NULL, *patches = NULL, *compute = NULL;
    FOR_EACH_COMMAND(w, i, line, command)
    {
        const char *name = command_text(command, "pipeline_name");
        const char *hash = command_text(command, "shader_hash");
        assert_int_equal(strlen(hash), 16);
        if (strcmp(name, "pipeline triangle_list") == 0)
            list = hash;
        else if (strcmp(name, "pipeline triangle_strip") == 0)
            strip = hash;
        else if (strcmp(name, "pipeline patch_list") == 0)
            patches = hash;
        else if (strcmp(name, "fill compute") == 0)
            compute = hash;
    }
    assert_non_null(list);
    assert_non_null(strip);
    assert_non_null(patches);
    assert_non_null(compute);
    assert_string_not_equal(list, "0000000000000000");
    assert_string_equal(list, strip);
    assert_string_not_equal(list, patches);
    assert_string_not_equal(list, compute);
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
    assert_int_equal(dispatches, 3);
}

/* Each index read is as wide as the bound index type: 4 or 2 bytes here. */
static void index_bytes_follow_the_bound_index_type(void **state)
{
    workload_run *w = *state;
    size_t short_draws = 0;
    FOR_EACH_COMMAND(w, i, line, command)
    {
        unsigned long long size = line_number(line, "index_size");
        assert_int_equal(command_value(command, "IaIndexBytes"),
                         line_number(line, "ia_vertices") * size);
        short_draws += size == 2;
    }
    assert_int_equal(short_draws, 1);
}

/* Indirect parameters are read back from the GPU: the values the draws
 * read (hand values of vk_workload.c's write_indirect_parameters), not what
 * the host wrote, and a count buffer's count, not the maximum. */
static void indirect_commands_count_the_parameters_the_gpu_read(void **state)
{
    workload_run *w = *state;
    /* IaVertices of each indirect command, in order: two draws of 12x2 and 6x1;
     * 12 indices x3; the count draw takes the first only; 9x2 written by the
     * GPU over the host's 3x1; the second record again, from a secondary. The
     * dispatch: 2x3x1 groups of 8. */
    static const unsigned long long vertices[] = {30, 36, 24, 18, 6, 0};
    size_t n = 0;
    FOR_EACH_COMMAND(w, i, line, command)
    {
        if (!strstr(line_text(line, "api"), "Indirect"))
            continue;
        assert_true(n < sizeof(vertices) / sizeof(vertices[0]));
        assert_int_equal(line_number(line, "ia_vertices"), vertices[n]);
        assert_int_equal(command_value(command, "IaVertices"), vertices[n]);
        if (strstr(line_text(line, "api"), "Dispatch"))
            assert_int_equal(command_value(command, "CsInvocations"), 2 * 3 * 1 * 8);
        n++;
    }
    assert_int_equal(n, 6);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_command_is_reported_under_the_name_the_program_called),
        cmocka_unit_test(labels_are_the_debug_utils_labels_around_each_command),
        cmocka_unit_test(rows_name_their_pipeline_thread_and_target),
        cmocka_unit_test(pipelines_of_the_same_shaders_share_their_hash),
        cmocka_unit_test(submissions_and_command_buffers_follow_the_program),
        cmocka_unit_test(ia_vertices_and_primitives_equal_the_drivers_for_every_topology),
        cmocka_unit_test(vs_invocations_equal_the_drivers_for_non_indexed_draws),
        cmocka_unit_test(cs_invocations_equal_the_drivers),
        cmocka_unit_test(index_bytes_follow_the_bound_index_type),
        cmocka_unit_test(indirect_commands_count_the_parameters_the_gpu_read),
    };
    return cmocka_run_group_tests(tests, run_workload, free_workload);
}
