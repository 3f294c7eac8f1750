/*
 * The same draw through GL and through the Vulkan layer gives identical
 * canonical counters. gl_same_draws (GL, libtally_gl.so preloaded, llvmpipe
 * on surfaceless EGL) and tests/layer/vk_workload.c (Vulkan, the layer on
 * lavapipe) each write a per-command report of the same triangle-list
 * draws, non-indexed and indexed; the cases compare the two reports counter
 * by counter, and each with values worked out by hand from the Vulkan
 * spec's pipeline-statistics rules and with each driver's own pipeline
 * statistics (lavapipe's queries, llvmpipe's GL_ARB_pipeline_statistics_query).
 *
 * Compared: the catalogue's exact counters that depend only on the draw's
 * parameters (counts, instances, topology, index type) — DrawCalls,
 * IaVertices, IaPrimitives, IaIndexBytes, VsInvocations, VsWaves and
 * ClipperInvocations (no tessellation or geometry stage: every assembled
 * primitive reaches clipping); for the indexed draw VsInvocations and
 * VsWaves are exact only where the indices are known (GL), so each door is
 * checked against them on its own. Not compared: the Shader*Instructions
 * counters, exact too but each stage's static instruction mix times its
 * invocations, and the GL shim profiles GLSL where the layer profiles
 * SPIR-V, so the same shader need not have the same mix; the modeled
 * counters (rasterization, fragment shading, caches, memory, busy cycles,
 * time), which depend on the render target, the covered area and the
 * profile; and the tessellation, geometry and compute counters, zero here.
 * Times are not compared, so the reports need no virtual clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cross_reports.h"

static const char *const COMPARED[] = {"DrawCalls",         "IaVertices",    "IaPrimitives",
                                       "IaIndexBytes",      "VsInvocations", "VsWaves",
                                       "ClipperInvocations"};
enum { COMPARED_COUNT = sizeof(COMPARED) / sizeof(COMPARED[0]) };

/* TALLY_COUNTERS's value: the compared counters, comma-separated. */
static const char *compared_list(void)
{
    static char list[256];
    list[0] = '\0';
    for (size_t i = 0; i < COMPARED_COUNT; i++) {
        if (i)
            strcat(list, ",");
        strcat(list, COMPARED[i]);
    }
    return list;
}

/* vkCmdDrawIndexed's n-th call draws topology n (VkPrimitiveTopology order). */
enum { TRIANGLE_LIST_INDEXED_CALL = 3, UINT32_INDEX_BYTES = 4 };

typedef struct runs {
    run_result gl;
    run_result vulkan;
    json_object *vulkan_lines; /* lavapipe's statistics (line_of_record) */
    json_object *gl_lines;     /* llvmpipe's statistics, one line per draw */
} runs;

static int run_both(void **state)
{
    static runs r;
    char vertices[16], instances[16], indices[16], indexed_instances[16];
    snprintf(vertices, sizeof(vertices), "%d", VK_WORKLOAD_VERTICES);
    snprintf(instances, sizeof(instances), "%d", VK_WORKLOAD_INSTANCES);
    snprintf(indices, sizeof(indices), "%d", VK_WORKLOAD_INDICES);
    snprintf(indexed_instances, sizeof(indexed_instances), "%d", VK_WORKLOAD_INDEXED_INSTANCES);
    const char *gl_argv[] = {GL_SAME_DRAWS, vertices, instances, indices, indexed_instances, NULL};
    static char counters_env[300];
    snprintf(counters_env, sizeof(counters_env), "TALLY_COUNTERS=%s", compared_list());
    const char *gl_env[] = {"LD_PRELOAD=" GL_SHIM_PRELOAD, "EGL_PLATFORM=surfaceless", counters_env,
                            "TSAN_OPTIONS=suppressions=" GL_TSAN_SUPPRESSIONS, NULL};
    r.gl = run_under_layer(gl_argv, ACTIVATE_NONE, gl_env);
    r.vulkan = run_vk_workload(compared_list());
    if (r.gl.exit_code != 0 || !r.gl.report || r.vulkan.exit_code != 0 || !r.vulkan.report) {
        fprintf(stderr, "gl_same_draws (%d):\n%s\nvk_workload (%d):\n%s\n", r.gl.exit_code,
                r.gl.output ? r.gl.output : "", r.vulkan.exit_code,
                r.vulkan.output ? r.vulkan.output : "");
        return -1;
    }
    r.vulkan_lines = output_lines(&r.vulkan);
    r.gl_lines = output_lines(&r.gl);
    *state = &r;
    return 0;
}

static int free_both(void **state)
{
    runs *r = *state;
    json_object_put(r->vulkan_lines);
    json_object_put(r->gl_lines);
    run_result_free(&r->gl);
    run_result_free(&r->vulkan);
    return 0;
}

static unsigned long long line_number(json_object *line, const char *field)
{
    json_object *value = NULL;
    if (!line || !json_object_object_get_ex(line, field, &value))
        return ~0ull;
    return (unsigned long long)json_object_get_uint64(value);
}

/* Indexed draws: VsInvocations and VsWaves are conditional counters, exact
 * only when the front door knows the indices (see docs/counters.md). The GL
 * shim reads them from the element buffer; the Vulkan layer does not read
 * index buffers, so its values are modeled. Those two are checked against
 * their bounds instead, and the rest compared. */
static bool conditional_for_indexed_draws(const char *symbol)
{
    return strcmp(symbol, "VsInvocations") == 0 || strcmp(symbol, "VsWaves") == 0;
}

static void assert_same_counters_of(json_object *gl, json_object *vulkan, bool indexed)
{
    for (size_t i = 0; i < COMPARED_COUNT; i++) {
        if (indexed && conditional_for_indexed_draws(COMPARED[i]))
            continue;
        unsigned long long through_gl = command_value(gl, COMPARED[i]);
        unsigned long long through_vulkan = command_value(vulkan, COMPARED[i]);
        if (through_gl != through_vulkan || through_gl == ~0ull)
            fail_msg("%s: %llu through GL, %llu through Vulkan", COMPARED[i], through_gl,
                     through_vulkan);
    }
}

static void assert_same_counters(json_object *gl, json_object *vulkan)
{
    assert_same_counters_of(gl, vulkan, false);
}

/* A triangle list of n vertices is n / 3 whole triangles (the Vulkan spec's
 * primitive topologies); input assembly fetches every vertex of every
 * instance; without tessellation or geometry shading every primitive
 * reaches clipping. */
static void assert_triangle_list_input(json_object *command, unsigned long long vertices,
                                       unsigned long long instances)
{
    assert_int_equal(command_value(command, "DrawCalls"), 1);
    assert_int_equal(command_value(command, "IaVertices"), vertices * instances);
    assert_int_equal(command_value(command, "IaPrimitives"), vertices / 3 * instances);
    assert_int_equal(command_value(command, "ClipperInvocations"), vertices / 3 * instances);
}

/* What the driver itself counted for a draw: `line` holds its statistics. */
static void assert_driver_agrees(json_object *line, json_object *command, bool indexed)
{
    assert_non_null(line);
    json_object *api = NULL;
    assert_true(json_object_object_get_ex(line, "api", &api));
    assert_string_equal(json_object_get_string(api), command_text(command, "api_name"));
    assert_int_equal(line_number(line, "ia_vertices"), command_value(command, "IaVertices"));
    assert_int_equal(line_number(line, "ia_primitives"), command_value(command, "IaPrimitives"));
    /* Drivers may reuse shaded indexed vertices as they like (lavapipe does
     * not): only non-indexed draws have one invocation per vertex. */
    if (!indexed)
        assert_int_equal(line_number(line, "vs_invocations"),
                         command_value(command, "VsInvocations"));
}

static void non_indexed_draw_counts_the_same_through_gl_and_vulkan(void **state)
{
    runs *r = *state;
    json_object *gl = find_command(report_commands(&r->gl), "glDrawArraysInstanced", NULL, 0, NULL);
    size_t at = 0;
    json_object *vulkan =
        find_command(report_commands(&r->vulkan), "vkCmdDraw", "topologies/triangle_list", 0, &at);
    assert_non_null(gl);
    assert_non_null(vulkan);
    assert_same_counters(gl, vulkan);

    assert_triangle_list_input(gl, VK_WORKLOAD_VERTICES, VK_WORKLOAD_INSTANCES);
    /* Non-indexed: one vertex shader invocation per vertex and instance. */
    assert_int_equal(command_value(gl, "VsInvocations"),
                     VK_WORKLOAD_VERTICES * VK_WORKLOAD_INSTANCES);
    assert_int_equal(command_value(gl, "IaIndexBytes"), 0);

    assert_driver_agrees(line_of_record(r->vulkan_lines, at), vulkan, false);
    json_object *gl_line = json_object_array_get_idx(r->gl_lines, 0);
    assert_driver_agrees(gl_line, gl, false);
    assert_int_equal(line_number(gl_line, "clipper_invocations"),
                     command_value(gl, "ClipperInvocations"));
}

static void indexed_draw_counts_the_same_through_gl_and_vulkan(void **state)
{
    runs *r = *state;
    json_object *gl =
        find_command(report_commands(&r->gl), "glDrawElementsInstanced", NULL, 0, NULL);
    size_t at = 0;
    json_object *vulkan = find_command(report_commands(&r->vulkan), "vkCmdDrawIndexed", NULL,
                                       TRIANGLE_LIST_INDEXED_CALL, &at);
    assert_non_null(gl);
    assert_non_null(vulkan);
    assert_same_counters_of(gl, vulkan, true);

    assert_triangle_list_input(gl, VK_WORKLOAD_INDICES, VK_WORKLOAD_INDEXED_INSTANCES);
    /* 32-bit indices (GL_UNSIGNED_INT, VK_INDEX_TYPE_UINT32), read per instance. */
    assert_int_equal(command_value(gl, "IaIndexBytes"),
                     VK_WORKLOAD_INDICES * VK_WORKLOAD_INDEXED_INSTANCES * UINT32_INDEX_BYTES);
    /* GL's indices 0, 1, 2, ... are all distinct and the shim reads them:
     * every index is shaded once per instance, which no GPU can undercut. */
    assert_int_equal(command_value(gl, "VsInvocations"),
                     VK_WORKLOAD_INDICES * VK_WORKLOAD_INDEXED_INSTANCES);
    /* The layer passes no indices: modeled, within the bounds that hold
     * without them (at least one invocation per instance, at most one per
     * index). */
    unsigned long long shaded = command_value(vulkan, "VsInvocations");
    assert_true(shaded >= VK_WORKLOAD_INDEXED_INSTANCES);
    assert_true(shaded <= VK_WORKLOAD_INDICES * VK_WORKLOAD_INDEXED_INSTANCES);

    json_object *line = line_of_record(r->vulkan_lines, at);
    assert_int_equal(line_number(line, "indexed"), 1);
    assert_driver_agrees(line, vulkan, true);
    json_object *gl_line = json_object_array_get_idx(r->gl_lines, 1);
    assert_driver_agrees(gl_line, gl, true);
    assert_int_equal(line_number(gl_line, "clipper_invocations"),
                     command_value(gl, "ClipperInvocations"));
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(non_indexed_draw_counts_the_same_through_gl_and_vulkan),
        cmocka_unit_test(indexed_draw_counts_the_same_through_gl_and_vulkan),
    };
    return cmocka_run_group_tests(tests, run_both, free_both);
}
