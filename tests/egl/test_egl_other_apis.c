/* Every front door of a process feeds one engine device, so the EGL event
 * monitor shows the work of any API: Vulkan draws and dispatches through the
 * layer, OpenCL kernels through the CL shim (preloaded for this program). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "egl_fixture.h"
#include "vk_context.h"

static size_t find_pairs(const struct egl_record *records, size_t n, uint32_t event,
                         const struct egl_record **begins, size_t max)
{
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        if (records[i].event != event || records[i].type != 0)
            continue;
        size_t ends = 0;
        for (size_t j = i + 1; j < n; j++)
            ends += records[j].type == 1 && records[j].track == records[i].track &&
                    records[j].id == records[i].id;
        assert_int_equal(ends, 1);
        assert_true(found < max);
        begins[found++] = &records[i];
    }
    return found;
}

static void vulkan_draws_and_dispatches_show_on_the_timeline(void **state)
{
    struct egl_fixture *fx = *state;
    struct brcm brcm;
    brcm_load(&brcm);
    assert_true(brcm.collection(EGL_ACQUIRE_EVENTS_BRCM));
    assert_true(brcm.collection(EGL_START_EVENTS_BRCM));
    vk_context vk;
    vk_context_options options = {0};
    assert_true(vk_context_create(&vk, &options));
    for (int i = 0; i < 4; i++) {
        VkCommandBuffer cb = vk_context_begin(&vk);
        vk_context_draw_triangle(&vk, cb);
        assert_int_equal(vk_context_submit(&vk, cb, UINT32_MAX), VK_SUCCESS);
    }
    VkCommandBuffer cb = vk_context_begin(&vk);
    vk_context_dispatch(&vk, cb, 3, 2, 1);
    assert_int_equal(vk_context_submit(&vk, cb, UINT32_MAX), VK_SUCCESS);
    vk_context_destroy(&vk);
    /* the API's wait is for the driver; the engine's queue may still run */
    assert_int_equal(tally_device_wait_idle(fx->device), TALLY_OK);

    static struct egl_record records[4096];
    EGLBoolean lost = EGL_TRUE;
    size_t n = egl_records_read_all(&brcm, records, 4096, &lost);
    assert_false(lost);
    const struct egl_record *pairs[16];
    assert_int_equal(find_pairs(records, n, TALLY_EVENT_KIND_DRAW, pairs, 16), 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pairs[i]->fields[0], 3); /* one triangle */
        assert_int_equal(pairs[i]->fields[1], 1);
        assert_int_equal(pairs[i]->fields[2], 1);
    }
    assert_int_equal(find_pairs(records, n, TALLY_EVENT_KIND_DISPATCH, pairs, 16), 1);
    static const uint64_t groups[3] = {3, 2, 1};
    assert_memory_equal(pairs[0]->fields, groups, sizeof groups);
    assert_int_equal(pairs[0]->fields[3], VK_CONTEXT_LOCAL_SIZE);
}

static const char kernel_source[] = "kernel void fill(global int *out) {\n"
                                    "    out[get_global_id(0)] = 1;\n"
                                    "}\n";

static void opencl_kernels_show_on_the_timeline(void **state)
{
    struct egl_fixture *fx = *state;
    struct brcm brcm;
    brcm_load(&brcm);
    assert_true(brcm.collection(EGL_ACQUIRE_EVENTS_BRCM));
    assert_true(brcm.collection(EGL_START_EVENTS_BRCM));
    cl_platform_id platform;
    cl_device_id device;
    cl_int error = CL_SUCCESS;
    assert_int_equal(clGetPlatformIDs(1, &platform, NULL), CL_SUCCESS);
    assert_int_equal(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), CL_SUCCESS);
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &error);
    assert_int_equal(error, CL_SUCCESS);
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &error);
    assert_int_equal(error, CL_SUCCESS);
    const char *source = kernel_source;
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &error);
    assert_int_equal(clBuildProgram(program, 1, &device, NULL, NULL, NULL), CL_SUCCESS);
    cl_kernel kernel = clCreateKernel(program, "fill", &error);
    assert_int_equal(error, CL_SUCCESS);
    cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, 256 * sizeof(cl_int), NULL, &error);
    assert_int_equal(clSetKernelArg(kernel, 0, sizeof out, &out), CL_SUCCESS);
    size_t global[2] = {64, 4}, local[2] = {16, 2};
    for (int i = 0; i < 2; i++)
        assert_int_equal(
            clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, local, 0, NULL, NULL),
            CL_SUCCESS);
    assert_int_equal(clFinish(queue), CL_SUCCESS);
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    /* clFinish waits for the driver; the engine's queue may still run */
    assert_int_equal(tally_device_wait_idle(fx->device), TALLY_OK);

    static struct egl_record records[4096];
    EGLBoolean lost = EGL_TRUE;
    size_t n = egl_records_read_all(&brcm, records, 4096, &lost);
    assert_false(lost);
    const struct egl_record *pairs[16];
    assert_int_equal(find_pairs(records, n, TALLY_EVENT_KIND_DISPATCH, pairs, 16), 2);
    static const uint64_t expected[6] = {4, 2, 1, 16, 2, 1}; /* groups, then local size */
    for (int i = 0; i < 2; i++)
        assert_memory_equal(pairs[i]->fields, expected, sizeof expected);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(vulkan_draws_and_dispatches_show_on_the_timeline,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(opencl_kernels_show_on_the_timeline, egl_fixture_setup,
                                        egl_fixture_teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
