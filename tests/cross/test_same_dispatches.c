/*
 * Per-event CsInvocations and CsWorkgroups of an OpenCL kernel equal the
 * Vulkan layer's values for a dispatch of the same shape. This program runs
 * with libtally_cl.so preloaded over PoCL and reads its kernels' counters
 * through cl_codeplay_performance_counters (clGetEventProfilingInfo), as a
 * program would; tests/layer/vk_workload.c runs under the layer on lavapipe
 * and its per-command report gives the Vulkan values. Both are compared
 * with each other, with G (work-items) and G/L (work-groups), and with
 * lavapipe's own COMPUTE_SHADER_INVOCATIONS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cl_fixture.h"
#include "cross_reports.h"

static const char FILL_KERNEL[] =
    "kernel void fill(global uint *out)\n"
    "{\n"
    "    size_t index = get_global_id(0) + get_global_id(1) * 1024 + get_global_id(2) * 4096;\n"
    "    out[index % 4096] = (uint)index;\n"
    "}\n";
enum { FILL_BUFFER_BYTES = 4096 * 4 };

typedef struct both {
    struct cl_fixture *cl;
    run_result vulkan;
    json_object *vulkan_lines; /* lavapipe's statistics (line_of_record) */
} both;

static int set_up(void **state)
{
    static both b;
    b.vulkan = run_vk_workload("CsInvocations,CsWorkgroups");
    if (b.vulkan.exit_code != 0 || !b.vulkan.report) {
        fprintf(stderr, "vk_workload (%d):\n%s\n", b.vulkan.exit_code,
                b.vulkan.output ? b.vulkan.output : "");
        return -1;
    }
    b.vulkan_lines = output_lines(&b.vulkan);
    void *cl_state = NULL;
    if (cl_fixture_setup(&cl_state) != 0)
        return -1;
    b.cl = cl_state;
    *state = &b;
    return 0;
}

static int tear_down(void **state)
{
    both *b = *state;
    void *cl_state = b->cl;
    cl_fixture_teardown(&cl_state);
    json_object_put(b->vulkan_lines);
    run_result_free(&b->vulkan);
    return 0;
}

/* The counter's name in OpenCL's vocabulary, from the catalogue. */
static const char *cl_name_of(const char *symbol)
{
    const tally_catalogue *cat;
    uint32_t index;
    assert_int_equal(tally_backend_catalogue(NULL, &cat), TALLY_OK);
    assert_int_equal(tally_catalogue_find(cat, symbol, &index), TALLY_OK);
    return tally_counter_name_for(tally_catalogue_counter(cat, index), TALLY_API_CL);
}

typedef struct kernel_counts {
    unsigned long long invocations, workgroups;
} kernel_counts;

static kernel_counts enqueue_and_count(struct cl_fixture *fx, cl_uint dims, const size_t *global,
                                       const size_t *local)
{
    cl_uint uuids[] = {uuid_of(fx, cl_name_of("CsInvocations")),
                       uuid_of(fx, cl_name_of("CsWorkgroups"))};
    cl_command_queue queue = counter_queue(fx, uuids, 2);
    cl_kernel kernel = build_kernel(fx, FILL_KERNEL, "fill");
    cl_int err;
    cl_mem out = clCreateBuffer(fx->context, CL_MEM_WRITE_ONLY, FILL_BUFFER_BYTES, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 0, sizeof(out), &out), CL_SUCCESS);
    cl_event event;
    assert_int_equal(
        clEnqueueNDRangeKernel(queue, kernel, dims, NULL, global, local, 0, NULL, &event),
        CL_SUCCESS);
    assert_int_equal(clWaitForEvents(1, &event), CL_SUCCESS);
    cl_performance_counter_result_codeplay results[2];
    read_results(event, results, 2);
    clReleaseEvent(event);
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseCommandQueue(queue);
    return (kernel_counts){results[0].uint64, results[1].uint64};
}

static unsigned long long line_number(json_object *line, const char *field)
{
    json_object *value = NULL;
    if (!line || !json_object_object_get_ex(line, field, &value))
        return ~0ull;
    return (unsigned long long)json_object_get_uint64(value);
}

/* The kernel of global size G and local size L against `vulkan`, the report
 * record of a dispatch of G/L groups of local size L. */
static void assert_same_as_vulkan(both *b, json_object *vulkan, cl_uint dims, const size_t *global,
                                  const size_t *local)
{
    unsigned long long items = 1, groups = 1;
    for (cl_uint d = 0; d < dims; d++) {
        items *= global[d];
        groups *= global[d] / local[d];
    }
    kernel_counts cl = enqueue_and_count(b->cl, dims, global, local);
    assert_non_null(vulkan);
    assert_int_equal(cl.invocations, command_value(vulkan, "CsInvocations"));
    assert_int_equal(cl.workgroups, command_value(vulkan, "CsWorkgroups"));
    assert_int_equal(cl.invocations, items);
    assert_int_equal(cl.workgroups, groups);
}

/* vk_workload's dispatch named `api_name`, checked against lavapipe's own
 * COMPUTE_SHADER_INVOCATIONS for it too. */
static json_object *vk_workload_dispatch(both *b, const char *api_name, unsigned long long items)
{
    size_t at = 0;
    json_object *vulkan = find_command(report_commands(&b->vulkan), api_name, NULL, 0, &at);
    assert_non_null(vulkan);
    json_object *line = line_of_record(b->vulkan_lines, at);
    assert_int_equal(line_number(line, "cs_invocations"), items);
    return vulkan;
}

/* vkCmdDispatchBase(1, 0, 0, 5, 1, 1): 5 groups of 8 after a base of 1. */
static void one_dimensional_kernel_counts_like_the_vulkan_dispatch(void **state)
{
    size_t global[1] = {5 * VK_WORKLOAD_LOCAL_SIZE}, local[1] = {VK_WORKLOAD_LOCAL_SIZE};
    json_object *vulkan = vk_workload_dispatch(*state, "vkCmdDispatchBase", global[0]);
    assert_same_as_vulkan(*state, vulkan, 1, global, local);
}

/* vkCmdDispatch(4, 3, 2) of groups of 8x1x1: a 3D range of 1D groups. */
static void three_dimensional_range_counts_like_the_vulkan_dispatch(void **state)
{
    size_t global[3] = {4 * VK_WORKLOAD_LOCAL_SIZE, 3, 2},
           local[3] = {VK_WORKLOAD_LOCAL_SIZE, 1, 1};
    json_object *vulkan =
        vk_workload_dispatch(*state, "vkCmdDispatch", global[0] * global[1] * global[2]);
    assert_same_as_vulkan(*state, vulkan, 3, global, local);
}

/* 3D groups: 2x3x2 groups of 4x2x2 through vk_dispatch_shape. */
static void three_dimensional_workgroups_count_like_the_vulkan_dispatch(void **state)
{
    const char *argv[] = {VK_DISPATCH_SHAPE, SHAPE_SHADER, "2", "3", "2", "4", "2", "2", NULL};
    const char *env[] = {"TALLY_COUNTERS=CsInvocations,CsWorkgroups", NULL};
    run_result run = run_under_layer(argv, ACTIVATE_EXPLICIT, env);
    if (run.exit_code != 0)
        fail_msg("vk_dispatch_shape (%d): %s", run.exit_code, run.output ? run.output : "");
    json_object *vulkan = find_command(report_commands(&run), "vkCmdDispatch", NULL, 0, NULL);
    size_t global[3] = {2 * 4, 3 * 2, 2 * 2}, local[3] = {4, 2, 2};
    assert_same_as_vulkan(*state, vulkan, 3, global, local);
    run_result_free(&run);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_dimensional_kernel_counts_like_the_vulkan_dispatch),
        cmocka_unit_test(three_dimensional_range_counts_like_the_vulkan_dispatch),
        cmocka_unit_test(three_dimensional_workgroups_count_like_the_vulkan_dispatch),
    };
    return cmocka_run_group_tests(tests, set_up, tear_down);
}
