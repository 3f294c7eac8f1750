/* A CL command counts what it did: kernels by the catalogue's rules for a
 * dispatch of the shape the driver ran (hand-worked goldens where the local
 * size is given), transfers as the engine counts the same canonical command
 * fed to it directly on a fresh device, with their kind and bytes. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cl_fixture.h"
#include "fixture.h"

static const char *const kernel_counters[] = {"CsInvocations", "CsWorkgroups", "CsWaves",
                                              "Dispatches", "TransferCommands"};
static const char *const transfer_counters[] = {"TransferCommands", "Dispatches",
                                                "L2CacheRequests"};
enum { MAX_COUNTERS = 5 };

typedef struct reference_command {
    const tally_dispatch *dispatch;
    const tally_transfer *transfer;
} reference_command;

/* The values the engine gives one command between a marker pair. */
static void engine_values(const char *const *symbols, uint32_t count, reference_command command,
                          uint64_t *values)
{
    tally_device_options options = {.clock = TALLY_CLOCK_VIRTUAL};
    tally_device *device;
    tally_context *context;
    tally_stream *stream;
    tally_results *results;
    uint32_t indices[MAX_COUNTERS];
    assert_int_equal(tally_device_open(&options, &device, NULL, 0), TALLY_OK);
    for (uint32_t i = 0; i < count; i++)
        assert_int_equal(
            tally_catalogue_find(tally_device_catalogue(device), symbols[i], &indices[i]),
            TALLY_OK);
    assert_int_equal(tally_context_create(device, "reference", &context), TALLY_OK);
    assert_int_equal(tally_stream_create(context, &stream), TALLY_OK);
    assert_int_equal(tally_results_create(device, indices, count, 1, &results), TALLY_OK);
    tally_program_desc desc = {.name = "reference"};
    desc.stages[TALLY_STAGE_COMPUTE].present = true;
    tally_program *program;
    assert_int_equal(tally_program_create(device, &desc, &program), TALLY_OK);
    tally_stream_bind_program(stream, program);
    tally_stream_marker_begin(stream, results, 0);
    if (command.dispatch)
        assert_int_equal(tally_stream_dispatch(stream, command.dispatch), TALLY_OK);
    if (command.transfer)
        assert_int_equal(tally_stream_transfer(stream, command.transfer), TALLY_OK);
    tally_stream_marker_end(stream, results, 0);
    tally_submission submission = {.streams = &stream, .stream_count = 1};
    assert_int_equal(tally_submit(device, &submission, NULL), TALLY_OK);
    assert_int_equal(tally_results_wait(results, 0, UINT64_MAX), TALLY_OK);
    tally_value raw[MAX_COUNTERS];
    assert_int_equal(tally_results_get(results, 0, raw, count, NULL), TALLY_OK);
    for (uint32_t i = 0; i < count; i++)
        values[i] = raw[i].u64;
    tally_results_release(results);
    tally_program_release(program);
    tally_stream_destroy(stream);
    tally_context_destroy(context);
    tally_device_close(device);
}

static void assert_event_counts(cl_event event, const char *const *symbols, uint32_t count,
                                reference_command command)
{
    cl_performance_counter_result_codeplay results[MAX_COUNTERS];
    uint64_t expected[MAX_COUNTERS];
    assert_int_equal(clWaitForEvents(1, &event), CL_SUCCESS);
    read_results(event, results, count);
    engine_values(symbols, count, command, expected);
    for (uint32_t i = 0; i < count; i++) {
        if (results[i].uint64 != expected[i])
            print_error("%s: OpenCL %llu, engine %llu\n", symbols[i],
                        (unsigned long long)results[i].uint64, (unsigned long long)expected[i]);
        assert_int_equal(results[i].uint64, expected[i]);
    }
}

static const char local_size_kernel[] =
    "kernel void sizes(global uint *out) {\n"
    "  if (get_global_id(0) == 0 && get_global_id(1) == 0 && get_global_id(2) == 0) {\n"
    "    out[0] = get_local_size(0); out[1] = get_local_size(1); out[2] = get_local_size(2);\n"
    "  }\n"
    "}\n";

/* The kernel counters of one launch by the catalogue's rules
 * (backends/simgpu/catalogue.toml): CsInvocations are workgroups times the
 * local size, CsWaves workgroups times the local size rounded up to whole
 * waves of wave_size (32 by default), one Dispatch, no transfer. */
enum { WAVE_SIZE = 32 };

static void assert_kernel_counts(cl_event event, const size_t global[3], const cl_uint local[3],
                                 const uint64_t golden[3])
{
    cl_performance_counter_result_codeplay results[MAX_COUNTERS];
    assert_int_equal(clWaitForEvents(1, &event), CL_SUCCESS);
    read_results(event, results, 5);
    uint64_t groups = 1, group_size = 1;
    for (int d = 0; d < 3; d++) {
        assert_int_equal(global[d] % local[d], 0);
        groups *= global[d] / local[d];
        group_size *= local[d];
    }
    uint64_t waves = groups * ((group_size + WAVE_SIZE - 1) / WAVE_SIZE);
    assert_int_equal(results[0].uint64, groups * group_size); /* CsInvocations */
    assert_int_equal(results[1].uint64, groups);              /* CsWorkgroups */
    assert_int_equal(results[2].uint64, waves);               /* CsWaves */
    assert_int_equal(results[3].uint64, 1);                   /* Dispatches */
    assert_int_equal(results[4].uint64, 0);                   /* TransferCommands */
    if (golden) { /* local size given: the numbers worked out by hand */
        assert_int_equal(results[0].uint64, golden[0]);
        assert_int_equal(results[1].uint64, golden[1]);
        assert_int_equal(results[2].uint64, golden[2]);
    }
}

static void kernels_count_their_dispatch_by_the_catalogues_rules(void **state)
{
    struct cl_fixture *fx = *state;
    static const struct {
        size_t global[3];
        size_t local[3]; /* all 0: none given, the driver picks */
        cl_uint dims;
        uint64_t golden[3]; /* invocations, workgroups, waves where local is given */
    } launches[] = {
        {{1, 1, 1}, {0, 0, 0}, 1, {0}},
        {{64, 1, 1}, {8, 1, 1}, 1, {64, 8, 8 * 1}},
        {{96, 1, 1}, {0, 0, 0}, 1, {0}},
        {{1000, 1, 1}, {0, 0, 0}, 1, {0}},
        {{32, 6, 1}, {4, 3, 1}, 2, {192, 8 * 2, 16 * 1}},
        {{512, 512, 1}, {0, 0, 0}, 2, {0}},
        /* 70 work-items a group: 3 waves of 32 */
        {{12, 10, 14}, {2, 5, 7}, 3, {1680, 6 * 2 * 2, 24 * 3}},
        {{3, 5, 7}, {0, 0, 0}, 3, {0}},
    };
    uint32_t count = sizeof kernel_counters / sizeof kernel_counters[0];
    assert_int_equal(count, 5);
    cl_command_queue queue = queue_counting(fx, kernel_counters, count);
    cl_kernel kernel = build_kernel(fx, local_size_kernel, "sizes");
    cl_int err;
    cl_mem out = clCreateBuffer(fx->context, CL_MEM_READ_WRITE, 3 * sizeof(cl_uint), NULL, &err);
    assert_int_equal(clSetKernelArg(kernel, 0, sizeof(out), &out), CL_SUCCESS);
    for (size_t l = 0; l < sizeof launches / sizeof launches[0]; l++) {
        bool given = launches[l].local[0] != 0;
        cl_event event;
        assert_int_equal(clEnqueueNDRangeKernel(queue, kernel, launches[l].dims, NULL,
                                                launches[l].global,
                                                given ? launches[l].local : NULL, 0, NULL, &event),
                         CL_SUCCESS);
        cl_uint used[3]; /* the local size the driver ran, as the kernel saw it */
        assert_int_equal(
            clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof used, used, 0, NULL, NULL),
            CL_SUCCESS);
        for (int d = 0; given && d < 3; d++)
            assert_int_equal(used[d], launches[l].local[d]);
        assert_kernel_counts(event, launches[l].global, used, given ? launches[l].golden : NULL);
        clReleaseEvent(event);
    }
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseCommandQueue(queue);
}

/* A queue without counters records nothing while nobody listens (the shim
 * passes its enqueues straight down), and from the moment a sampler opens
 * on the device its kernels count: the sampler sees every work-item of the
 * kernels enqueued after it opened, and none of those before. */
static void a_plain_queue_counts_from_when_a_sampler_listens(void **state)
{
    struct cl_fixture *fx = *state;
    cl_int err;
    cl_command_queue queue =
        clCreateCommandQueueWithProperties(fx->context, fx->device, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_kernel kernel = build_kernel(fx, local_size_kernel, "sizes");
    cl_mem out = clCreateBuffer(fx->context, CL_MEM_READ_WRITE, 3 * sizeof(cl_uint), NULL, &err);
    assert_int_equal(clSetKernelArg(kernel, 0, sizeof(out), &out), CL_SUCCESS);
    size_t global = 64, local = 8;
    for (int i = 0; i < 3; i++)
        assert_int_equal(
            clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL),
            CL_SUCCESS);
    assert_int_equal(clFinish(queue), CL_SUCCESS);

    tally_device *device = NULL;
    assert_int_equal(tally_device_acquire_shared(&device), TALLY_OK);
    const tally_catalogue *cat = tally_device_catalogue(device);
    uint32_t index = 0;
    assert_int_equal(tally_catalogue_find(cat, "CsInvocations", &index), TALLY_OK);
    uint32_t raw = tally_catalogue_counter(cat, index)->raw_index;
    assert_int_not_equal(raw, TALLY_NOT_RAW);
    tally_sampler *sampler = NULL;
    assert_int_equal(tally_sampler_open(device, 1000000, 4096, &sampler), TALLY_OK);
    for (int i = 0; i < 5; i++)
        assert_int_equal(
            clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL),
            CL_SUCCESS);
    assert_int_equal(clFinish(queue), CL_SUCCESS);
    assert_int_equal(sampler_growth(device, sampler, raw), 5 * 64);
    tally_sampler_close(sampler);
    tally_device_release_shared(device);
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseCommandQueue(queue);
}

static void assert_transfer(cl_event event, tally_transfer_kind kind, uint64_t bytes)
{
    tally_transfer transfer = {.api_name = "reference", .kind = kind, .bytes = bytes};
    assert_event_counts(event, transfer_counters, 3, (reference_command){.transfer = &transfer});
    clReleaseEvent(event);
}

static void buffer_commands_count_as_transfers(void **state)
{
    struct cl_fixture *fx = *state;
    cl_command_queue queue = queue_counting(fx, transfer_counters, 3);
    cl_int err;
    cl_mem a = clCreateBuffer(fx->context, CL_MEM_READ_WRITE, 1 << 16, NULL, &err);
    cl_mem b = clCreateBuffer(fx->context, CL_MEM_READ_WRITE, 1 << 16, NULL, &err);
    static char host[1 << 16];
    cl_event e;

    assert_int_equal(clEnqueueWriteBuffer(queue, a, CL_TRUE, 0, 40000, host, 0, NULL, &e),
                     CL_SUCCESS);
    assert_transfer(e, TALLY_TRANSFER_WRITE, 40000);
    assert_int_equal(clEnqueueReadBuffer(queue, a, CL_TRUE, 100, 1000, host, 0, NULL, &e),
                     CL_SUCCESS);
    assert_transfer(e, TALLY_TRANSFER_READ, 1000);
    assert_int_equal(clEnqueueCopyBuffer(queue, a, b, 0, 64, 20000, 0, NULL, &e), CL_SUCCESS);
    assert_transfer(e, TALLY_TRANSFER_COPY, 20000);
    cl_uint pattern = 7;
    assert_int_equal(clEnqueueFillBuffer(queue, b, &pattern, sizeof pattern, 0, 8192, 0, NULL, &e),
                     CL_SUCCESS);
    assert_transfer(e, TALLY_TRANSFER_FILL, 8192);
    size_t origin[3] = {0, 0, 0}, region[3] = {64, 8, 2};
    assert_int_equal(clEnqueueReadBufferRect(queue, a, CL_TRUE, origin, origin, region, 128, 4096,
                                             64, 512, host, 0, NULL, &e),
                     CL_SUCCESS);
    assert_transfer(e, TALLY_TRANSFER_READ, 64 * 8 * 2);
    assert_int_equal(clEnqueueWriteBufferRect(queue, a, CL_TRUE, origin, origin, region, 128, 4096,
                                              64, 512, host, 0, NULL, &e),
                     CL_SUCCESS);
    assert_transfer(e, TALLY_TRANSFER_WRITE, 64 * 8 * 2);
    assert_int_equal(clEnqueueCopyBufferRect(queue, a, b, origin, origin, region, 128, 4096, 128,
                                             4096, 0, NULL, &e),
                     CL_SUCCESS);
    assert_transfer(e, TALLY_TRANSFER_COPY, 64 * 8 * 2);
    void *mapped = clEnqueueMapBuffer(queue, a, CL_TRUE, CL_MAP_READ, 256, 4096, 0, NULL, &e, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_transfer(e, TALLY_TRANSFER_READ, 4096);
    assert_int_equal(clEnqueueUnmapMemObject(queue, a, mapped, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clFinish(queue), CL_SUCCESS);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseCommandQueue(queue);
}

static void image_commands_count_as_transfers(void **state)
{
    struct cl_fixture *fx = *state;
    cl_bool images = CL_FALSE;
    clGetDeviceInfo(fx->device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
    if (!images)
        skip();
    cl_command_queue queue = queue_counting(fx, transfer_counters, 3);
    cl_image_format format = {CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc = {
        .image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 32, .image_height = 16};
    cl_int err;
    cl_mem image = clCreateImage(fx->context, CL_MEM_READ_WRITE, &format, &desc, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem other = clCreateImage(fx->context, CL_MEM_READ_WRITE, &format, &desc, NULL, &err);
    cl_mem buffer = clCreateBuffer(fx->context, CL_MEM_READ_WRITE, 32 * 16 * 4, NULL, &err);
    static unsigned char host[32 * 16 * 4];
    size_t origin[3] = {0, 0, 0}, region[3] = {32, 16, 1}, part[3] = {8, 4, 1};
    cl_event e;
    assert_int_equal(
        clEnqueueWriteImage(queue, image, CL_TRUE, origin, region, 0, 0, host, 0, NULL, &e),
        CL_SUCCESS);
    assert_transfer(e, TALLY_TRANSFER_WRITE, 32 * 16 * 4);
    assert_int_equal(
        clEnqueueReadImage(queue, image, CL_TRUE, origin, part, 0, 0, host, 0, NULL, &e),
        CL_SUCCESS);
    assert_transfer(e, TALLY_TRANSFER_READ, 8 * 4 * 4);
    assert_int_equal(clEnqueueCopyImage(queue, image, other, origin, origin, part, 0, NULL, &e),
                     CL_SUCCESS);
    assert_transfer(e, TALLY_TRANSFER_COPY, 8 * 4 * 4);
    cl_float color[4] = {1, 0, 0, 1};
    assert_int_equal(clEnqueueFillImage(queue, image, color, origin, region, 0, NULL, &e),
                     CL_SUCCESS);
    assert_transfer(e, TALLY_TRANSFER_FILL, 32 * 16 * 4);
    assert_int_equal(
        clEnqueueCopyImageToBuffer(queue, image, buffer, origin, region, 0, 0, NULL, &e),
        CL_SUCCESS);
    assert_transfer(e, TALLY_TRANSFER_COPY, 32 * 16 * 4);
    assert_int_equal(clEnqueueCopyBufferToImage(queue, buffer, other, 0, origin, part, 0, NULL, &e),
                     CL_SUCCESS);
    assert_transfer(e, TALLY_TRANSFER_COPY, 8 * 4 * 4);
    clReleaseMemObject(buffer);
    clReleaseMemObject(other);
    clReleaseMemObject(image);
    clReleaseCommandQueue(queue);
}

/* The kernel profile classified from the arguments (docs/opencl.md): per
 * work-item 1 ALU, a load per read-only pointer, a store per writable one,
 * a texture read per readable image, a store per writable image. */
static void kernel_profile_follows_its_arguments(void **state)
{
    struct cl_fixture *fx = *state;
    static const char *const symbols[] = {"ShaderAluInstructions", "ShaderLoadInstructions",
                                          "ShaderStoreInstructions", "ShaderTexInstructions"};
    cl_command_queue queue = queue_counting(fx, symbols, 4);
    cl_kernel kernel = build_kernel(fx,
                                    "kernel void k(global const float *a, constant float *b,\n"
                                    "              global float *c, local int *l, int n) {\n"
                                    "  c[get_global_id(0)] = a[0] + b[0] + n;\n"
                                    "}\n",
                                    "k");
    cl_int err;
    cl_mem buffer = clCreateBuffer(fx->context, CL_MEM_READ_WRITE, 64 * sizeof(float), NULL, &err);
    cl_int n = 3;
    assert_int_equal(clSetKernelArg(kernel, 0, sizeof buffer, &buffer), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 1, sizeof buffer, &buffer), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 2, sizeof buffer, &buffer), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 3, 16 * sizeof(int), NULL), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 4, sizeof n, &n), CL_SUCCESS);
    size_t global = 64, local = 8;
    cl_event event;
    assert_int_equal(
        clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, &event),
        CL_SUCCESS);
    cl_performance_counter_result_codeplay r[4];
    assert_int_equal(clWaitForEvents(1, &event), CL_SUCCESS);
    read_results(event, r, 4);
    assert_int_equal(r[0].uint64, 64 * 1);
    assert_int_equal(r[1].uint64, 64 * 2);
    assert_int_equal(r[2].uint64, 64 * 1);
    assert_int_equal(r[3].uint64, 0);
    clReleaseEvent(event);
    clReleaseKernel(kernel);

    cl_bool images = CL_FALSE;
    clGetDeviceInfo(fx->device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
    if (images) {
        kernel = build_kernel(fx,
                              "kernel void m(read_only image2d_t i, write_only image2d_t o) {\n"
                              "  int2 p = (int2)(get_global_id(0), 0);\n"
                              "  write_imagef(o, p, read_imagef(i, p));\n"
                              "}\n",
                              "m");
        cl_image_format format = {CL_RGBA, CL_UNORM_INT8};
        cl_image_desc desc = {
            .image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 64, .image_height = 1};
        cl_mem in = clCreateImage(fx->context, CL_MEM_READ_ONLY, &format, &desc, NULL, &err);
        cl_mem out = clCreateImage(fx->context, CL_MEM_WRITE_ONLY, &format, &desc, NULL, &err);
        assert_int_equal(clSetKernelArg(kernel, 0, sizeof in, &in), CL_SUCCESS);
        assert_int_equal(clSetKernelArg(kernel, 1, sizeof out, &out), CL_SUCCESS);
        assert_int_equal(
            clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, &event),
            CL_SUCCESS);
        assert_int_equal(clWaitForEvents(1, &event), CL_SUCCESS);
        read_results(event, r, 4);
        assert_int_equal(r[0].uint64, 64);
        assert_int_equal(r[1].uint64, 0);
        assert_int_equal(r[2].uint64, 64);
        assert_int_equal(r[3].uint64, 64);
        clReleaseEvent(event);
        clReleaseMemObject(in);
        clReleaseMemObject(out);
        clReleaseKernel(kernel);
    }
    clReleaseMemObject(buffer);
    clReleaseCommandQueue(queue);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernels_count_their_dispatch_by_the_catalogues_rules),
        cmocka_unit_test(a_plain_queue_counts_from_when_a_sampler_listens),
        cmocka_unit_test(buffer_commands_count_as_transfers),
        cmocka_unit_test(image_commands_count_as_transfers),
        cmocka_unit_test(kernel_profile_follows_its_arguments),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("cl_engine", tests, cl_fixture_setup, cl_fixture_teardown);
}
