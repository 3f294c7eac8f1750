/* Kernel profiles are classified once per kernel (docs/opencl.md): every
 * enqueue of a kernel counts its own argument profile, whatever values its
 * arguments hold, however its kernels were created, cloned, retained and
 * released, and a kernel created where a released one was gets its own. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "cl_fixture.h"

static const char *const instruction_counters[] = {
    "ShaderAluInstructions", "ShaderLoadInstructions", "ShaderStoreInstructions",
    "ShaderTexInstructions"};

/* reader: 1 ALU, a load per read-only pointer (a, b), a store for out; the
 * local pointer and the value count nothing. writer: 1 ALU, 3 stores.
 * copier: writer's arguments with other qualifiers: 1 ALU, 2 loads, a store. */
static const char three_kernels[] =
    "kernel void reader(global const float *a, constant float *b, global float *out,\n"
    "                   local int *scratch, int n) {\n"
    "  out[get_global_id(0)] = a[0] + b[0] + n;\n"
    "}\n"
    "kernel void writer(global float *a, global float *b, global float *c) {\n"
    "  a[0] = 1; b[0] = 2; c[0] = 3;\n"
    "}\n"
    "kernel void copier(global const float *a, constant float *b, global float *c) {\n"
    "  c[0] = a[0] + b[0];\n"
    "}\n";

typedef struct profile {
    uint64_t alu, load, store, tex;
} profile;

static const profile reader_profile = {1, 2, 1, 0};
static const profile writer_profile = {1, 0, 3, 0};
static const profile copier_profile = {1, 2, 1, 0};

enum { BUFFER_FLOATS = 4096 };

static cl_program build_kernels(struct cl_fixture *fx)
{
    cl_int err;
    const char *source = three_kernels;
    cl_program program = clCreateProgramWithSource(fx->context, 1, &source, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clBuildProgram(program, 1, &fx->device, "", NULL, NULL), CL_SUCCESS);
    return program;
}

static cl_mem new_buffer(struct cl_fixture *fx)
{
    cl_int err;
    cl_mem buffer =
        clCreateBuffer(fx->context, CL_MEM_READ_WRITE, BUFFER_FLOATS * sizeof(float), NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    return buffer;
}

static void set_reader_args(cl_kernel kernel, cl_mem a, cl_mem b, cl_mem out, size_t scratch_ints,
                            cl_int n)
{
    assert_int_equal(clSetKernelArg(kernel, 0, sizeof a, &a), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 1, sizeof b, &b), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 2, sizeof out, &out), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 3, scratch_ints * sizeof(cl_int), NULL), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 4, sizeof n, &n), CL_SUCCESS);
}

static void set_writer_args(cl_kernel kernel, cl_mem a, cl_mem b, cl_mem c)
{
    assert_int_equal(clSetKernelArg(kernel, 0, sizeof a, &a), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 1, sizeof b, &b), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 2, sizeof c, &c), CL_SUCCESS);
}

/* Enqueues `items` work-items of the kernel and checks its instruction
 * counters: the profile's count per work-item, times the work-items. */
static void assert_profile(cl_command_queue queue, cl_kernel kernel, size_t items,
                           const profile *expected)
{
    size_t local = 8;
    cl_event event;
    assert_int_equal(
        clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &items, &local, 0, NULL, &event),
        CL_SUCCESS);
    assert_int_equal(clWaitForEvents(1, &event), CL_SUCCESS);
    cl_performance_counter_result_codeplay r[4];
    read_results(event, r, 4);
    assert_int_equal(r[0].uint64, items * expected->alu);
    assert_int_equal(r[1].uint64, items * expected->load);
    assert_int_equal(r[2].uint64, items * expected->store);
    assert_int_equal(r[3].uint64, items * expected->tex);
    assert_int_equal(clReleaseEvent(event), CL_SUCCESS);
}

static cl_kernel kernel_named(const cl_kernel *kernels, cl_uint count, const char *name)
{
    for (cl_uint i = 0; i < count; i++) {
        char found[64];
        assert_int_equal(
            clGetKernelInfo(kernels[i], CL_KERNEL_FUNCTION_NAME, sizeof found, found, NULL),
            CL_SUCCESS);
        if (strcmp(found, name) == 0)
            return kernels[i];
    }
    fail_msg("no kernel %s", name);
    return NULL;
}

/* The program sees its build as it made it: options it gave stay its own,
 * and argument info is CL_KERNEL_ARG_INFO_NOT_AVAILABLE unless it asked for
 * it (piglit cl-api-get-kernel-arg-info), while the profile is still read
 * from the qualifiers (the shim once appended -cl-kernel-arg-info to every
 * build). */
static void the_program_sees_its_own_build_and_the_profile_holds(void **state)
{
    struct cl_fixture *fx = *state;
    cl_command_queue queue = queue_counting(fx, instruction_counters, 4);
    static const char *const option_sets[] = {"-DUNUSED=1", "-cl-kernel-arg-info"};
    for (int i = 0; i < 2; i++) {
        cl_int err;
        const char *source = three_kernels;
        cl_program program = clCreateProgramWithSource(fx->context, 1, &source, NULL, &err);
        assert_int_equal(err, CL_SUCCESS);
        assert_int_equal(clBuildProgram(program, 1, &fx->device, option_sets[i], NULL, NULL),
                         CL_SUCCESS);
        char options[256] = "";
        assert_int_equal(clGetProgramBuildInfo(program, fx->device, CL_PROGRAM_BUILD_OPTIONS,
                                               sizeof options, options, NULL),
                         CL_SUCCESS);
        assert_string_equal(options, option_sets[i]);
        cl_kernel writer = clCreateKernel(program, "writer", &err);
        assert_int_equal(err, CL_SUCCESS);
        cl_kernel_arg_address_qualifier address;
        assert_int_equal(clGetKernelArgInfo(writer, 0, CL_KERNEL_ARG_ADDRESS_QUALIFIER,
                                            sizeof address, &address, NULL),
                         i == 0 ? CL_KERNEL_ARG_INFO_NOT_AVAILABLE : CL_SUCCESS);
        cl_mem buffers[3] = {new_buffer(fx), new_buffer(fx), new_buffer(fx)};
        set_writer_args(writer, buffers[0], buffers[1], buffers[2]);
        assert_profile(queue, writer, 64, &writer_profile);
        for (int b = 0; b < 3; b++)
            clReleaseMemObject(buffers[b]);
        clReleaseKernel(writer);
        cl_uint references = 0;
        assert_int_equal(clGetProgramInfo(program, CL_PROGRAM_REFERENCE_COUNT, sizeof references,
                                          &references, NULL),
                         CL_SUCCESS);
        assert_int_equal(references, 1); /* the shim keeps nothing of it */
        clReleaseProgram(program);
    }
    clReleaseCommandQueue(queue);
}

/* New buffers, local sizes and values between enqueues leave the profile
 * as the argument qualifiers make it. */
static void the_profile_does_not_follow_argument_values(void **state)
{
    struct cl_fixture *fx = *state;
    cl_command_queue queue = queue_counting(fx, instruction_counters, 4);
    cl_program program = build_kernels(fx);
    cl_int err;
    cl_kernel reader = clCreateKernel(program, "reader", &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem buffers[3] = {new_buffer(fx), new_buffer(fx), new_buffer(fx)};
    for (int i = 0; i < 6; i++) {
        set_reader_args(reader, buffers[i % 3], buffers[(i + 1) % 3], buffers[(i + 2) % 3],
                        4 * (size_t)(i + 1), i);
        assert_profile(queue, reader, 32 * (size_t)(i + 1), &reader_profile);
    }
    for (int i = 0; i < 3; i++)
        clReleaseMemObject(buffers[i]);
    clReleaseKernel(reader);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
}

/* Kernels from clCreateKernelsInProgram, clCreateKernel and clCloneKernel,
 * retained and released in mixed order: each keeps its profile while the
 * program holds it (a clone outlives its source), and its record goes with
 * the program's last reference. */
static void kernels_keep_their_profiles_in_any_order(void **state)
{
    struct cl_fixture *fx = *state;
    uint32_t before = live_kernel_records();
    cl_command_queue queue = queue_counting(fx, instruction_counters, 4);
    cl_program program = build_kernels(fx);
    cl_mem a = new_buffer(fx), b = new_buffer(fx), c = new_buffer(fx);

    cl_kernel all[3];
    cl_uint count = 0;
    assert_int_equal(clCreateKernelsInProgram(program, 3, all, &count), CL_SUCCESS);
    assert_int_equal(count, 3);
    assert_int_equal(live_kernel_records(), before + 3);
    cl_kernel reader = kernel_named(all, 3, "reader");
    cl_kernel writer = kernel_named(all, 3, "writer");
    cl_kernel copier = kernel_named(all, 3, "copier");
    set_reader_args(reader, a, b, c, 16, 1);
    assert_profile(queue, reader, 16, &reader_profile);
    assert_int_equal(clReleaseKernel(reader), CL_SUCCESS);
    assert_int_equal(live_kernel_records(), before + 2);
    set_writer_args(writer, a, b, c);
    set_writer_args(copier, a, b, c); /* the same types as writer's */

    cl_int err;
    cl_kernel reader2 = clCreateKernel(program, "reader", &err);
    assert_int_equal(err, CL_SUCCESS);
    set_reader_args(reader2, c, b, a, 8, 2);
    /* A clone takes its source's argument values. */
    cl_kernel writer_clone = clCloneKernel(writer, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(live_kernel_records(), before + 4);

    /* The source goes first; its clone keeps the profile. */
    assert_int_equal(clReleaseKernel(writer), CL_SUCCESS);
    assert_int_equal(live_kernel_records(), before + 3);
    assert_profile(queue, writer_clone, 64, &writer_profile);

    /* Retains keep the record through as many releases. */
    assert_int_equal(clRetainKernel(reader2), CL_SUCCESS);
    assert_int_equal(clRetainKernel(reader2), CL_SUCCESS);
    assert_int_equal(clReleaseKernel(reader2), CL_SUCCESS);
    assert_profile(queue, reader2, 16, &reader_profile);
    assert_int_equal(clReleaseKernel(reader2), CL_SUCCESS);
    assert_int_equal(live_kernel_records(), before + 3);
    assert_profile(queue, reader2, 24, &reader_profile);
    assert_int_equal(clReleaseKernel(reader2), CL_SUCCESS);
    assert_int_equal(live_kernel_records(), before + 2);

    /* A clone of a kernel from clCreateKernelsInProgram, which then goes.
     * (Clones here have no local or by-value arguments: enqueuing such a
     * clone reads past an allocation inside PoCL 3.1, which ASan reports.) */
    cl_kernel copier_clone = clCloneKernel(copier, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_profile(queue, copier, 8, &copier_profile);
    assert_int_equal(clReleaseKernel(copier), CL_SUCCESS);
    assert_profile(queue, copier_clone, 40, &copier_profile);
    assert_profile(queue, writer_clone, 40, &writer_profile);

    /* Without num_kernels_ret the kernels are recorded all the same. */
    assert_int_equal(clCreateKernelsInProgram(program, 3, all, NULL), CL_SUCCESS);
    assert_int_equal(live_kernel_records(), before + 5);
    set_writer_args(kernel_named(all, 3, "writer"), c, a, b);
    assert_profile(queue, kernel_named(all, 3, "writer"), 16, &writer_profile);
    for (int i = 0; i < 3; i++)
        assert_int_equal(clReleaseKernel(all[i]), CL_SUCCESS);

    assert_int_equal(clReleaseKernel(copier_clone), CL_SUCCESS);
    assert_int_equal(clReleaseKernel(writer_clone), CL_SUCCESS);
    assert_int_equal(live_kernel_records(), before);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
}

/* Failed creations leave no record; bad handles get the driver's errors. */
static void failed_kernel_calls_leave_no_record(void **state)
{
    struct cl_fixture *fx = *state;
    uint32_t before = live_kernel_records();
    cl_program program = build_kernels(fx);
    cl_int err = CL_SUCCESS;
    assert_null(clCreateKernel(program, "nowhere", &err));
    assert_int_equal(err, CL_INVALID_KERNEL_NAME);
    assert_null(clCreateKernel(program, "nowhere", NULL));
    cl_kernel one;
    cl_uint count = 0;
    assert_int_equal(clCreateKernelsInProgram(program, 1, &one, &count), CL_INVALID_VALUE);
    assert_int_equal(clCreateKernelsInProgram(program, 0, NULL, &count), CL_SUCCESS);
    assert_int_equal(count, 3);
    assert_int_equal(live_kernel_records(), before);
    assert_int_equal(clRetainKernel(NULL), CL_INVALID_KERNEL);
    assert_int_equal(clReleaseKernel(NULL), CL_INVALID_KERNEL);
    assert_null(clCloneKernel(NULL, &err));
    assert_int_equal(err, CL_INVALID_KERNEL);
    assert_int_equal(live_kernel_records(), before);
    clReleaseProgram(program);
}

/* Once a driver hands a released kernel's address to a new kernel (malloc
 * reusing the freed block), that kernel, of another signature, counts its
 * own profile, not the released one's. Rounds of create writer, count,
 * release, create copier (as many arguments, so the driver allocates the
 * same sizes), count, until the copier lands where the writer was; the
 * copiers that land elsewhere are held so their blocks stay taken.
 * PoCL reuses the block within a few rounds; an allocator that never does
 * (ASan's quarantine) skips the case. */
static void a_kernel_where_a_released_one_was_counts_its_own_profile(void **state)
{
    struct cl_fixture *fx = *state;
    cl_command_queue queue = queue_counting(fx, instruction_counters, 4);
    cl_program program = build_kernels(fx);
    cl_mem a = new_buffer(fx), b = new_buffer(fx), c = new_buffer(fx);
    enum { ROUNDS = 64 };
    cl_kernel copiers[ROUNDS];
    int rounds = 0;
    bool reused = false;
    while (rounds < ROUNDS && !reused) {
        cl_int err;
        cl_kernel writer = clCreateKernel(program, "writer", &err);
        assert_int_equal(err, CL_SUCCESS);
        set_writer_args(writer, a, b, c);
        assert_profile(queue, writer, 32, &writer_profile);
        uintptr_t released = (uintptr_t)writer;
        assert_int_equal(clReleaseKernel(writer), CL_SUCCESS);
        /* PoCL frees a kernel once the commands that used it are cleaned
         * up, which a later command on the queue brings about. */
        cl_event marker;
        assert_int_equal(clEnqueueMarkerWithWaitList(queue, 0, NULL, &marker), CL_SUCCESS);
        assert_int_equal(clWaitForEvents(1, &marker), CL_SUCCESS);
        clReleaseEvent(marker);
        assert_int_equal(clFinish(queue), CL_SUCCESS);

        cl_kernel copier = clCreateKernel(program, "copier", &err);
        assert_int_equal(err, CL_SUCCESS);
        set_writer_args(copier, a, b, c);
        assert_profile(queue, copier, 32, &copier_profile);
        reused = (uintptr_t)copier == released;
        copiers[rounds++] = copier;
    }
    print_message("a copier took a released writer's address: %s, after %d rounds\n",
                  reused ? "yes" : "no", rounds);
    for (int i = 0; i < rounds; i++)
        clReleaseKernel(copiers[i]);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    if (!reused)
        skip();
}

/* Two threads enqueue one kernel (the spec lets threads share a kernel for
 * enqueues) while a third creates, clones and releases kernels of another
 * signature: every event counts the shared kernel's profile. */
enum { SHARED_ENQUEUES = 100, CHURN = 100 };

struct enqueuer {
    cl_command_queue queue;
    cl_kernel kernel;
    int failures;
};

static void *enqueue_shared_kernel(void *arg)
{
    struct enqueuer *e = arg;
    cl_event events[SHARED_ENQUEUES];
    for (size_t i = 0; i < SHARED_ENQUEUES; i++) {
        size_t items = 8 * (i + 1), local = 8;
        if (clEnqueueNDRangeKernel(e->queue, e->kernel, 1, NULL, &items, &local, 0, NULL,
                                   &events[i]) != CL_SUCCESS)
            e->failures++;
    }
    clFinish(e->queue);
    for (size_t i = 0; i < SHARED_ENQUEUES; i++) {
        cl_performance_counter_result_codeplay r[4];
        uint64_t items = 8 * (i + 1);
        if (clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_PERFORMANCE_COUNTERS_CODEPLAY,
                                    sizeof r, r, NULL) != CL_SUCCESS ||
            r[0].uint64 != items * reader_profile.alu ||
            r[1].uint64 != items * reader_profile.load ||
            r[2].uint64 != items * reader_profile.store || r[3].uint64 != 0)
            e->failures++;
        clReleaseEvent(events[i]);
    }
    return NULL;
}

struct churner {
    cl_program program;
    int failures;
};

static void *churn_kernels(void *arg)
{
    struct churner *c = arg;
    for (int i = 0; i < CHURN; i++) {
        cl_int err;
        cl_kernel k = clCreateKernel(c->program, "writer", &err);
        cl_kernel clone = k ? clCloneKernel(k, &err) : NULL;
        if (!k || !clone) {
            c->failures++;
            continue;
        }
        if (i % 2)
            clRetainKernel(clone);
        clReleaseKernel(k);
        clReleaseKernel(clone);
        if (i % 2)
            clReleaseKernel(clone);
    }
    return NULL;
}

static void threads_share_a_kernel_while_others_come_and_go(void **state)
{
    struct cl_fixture *fx = *state;
    uint32_t before = live_kernel_records();
    cl_program program = build_kernels(fx);
    cl_mem a = new_buffer(fx), b = new_buffer(fx), c = new_buffer(fx);
    cl_int err;
    cl_kernel shared = clCreateKernel(program, "reader", &err);
    assert_int_equal(err, CL_SUCCESS);
    set_reader_args(shared, a, b, c, 8, 3);
    struct enqueuer enqueuers[2];
    struct churner churner = {.program = program};
    pthread_t threads[3];
    for (int t = 0; t < 2; t++) {
        enqueuers[t] = (struct enqueuer){.queue = queue_counting(fx, instruction_counters, 4),
                                         .kernel = shared};
        assert_int_equal(pthread_create(&threads[t], NULL, enqueue_shared_kernel, &enqueuers[t]),
                         0);
    }
    assert_int_equal(pthread_create(&threads[2], NULL, churn_kernels, &churner), 0);
    for (int t = 0; t < 3; t++)
        pthread_join(threads[t], NULL);
    assert_int_equal(churner.failures, 0);
    for (int t = 0; t < 2; t++) {
        assert_int_equal(enqueuers[t].failures, 0);
        clReleaseCommandQueue(enqueuers[t].queue);
    }
    assert_int_equal(live_kernel_records(), before + 1);
    clReleaseKernel(shared);
    assert_int_equal(live_kernel_records(), before);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
    clReleaseProgram(program);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_profile_does_not_follow_argument_values),
        cmocka_unit_test(the_program_sees_its_own_build_and_the_profile_holds),
        cmocka_unit_test(kernels_keep_their_profiles_in_any_order),
        cmocka_unit_test(failed_kernel_calls_leave_no_record),
        cmocka_unit_test(a_kernel_where_a_released_one_was_counts_its_own_profile),
        cmocka_unit_test(threads_share_a_kernel_while_others_come_and_go),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("cl_kernels", tests, cl_fixture_setup, cl_fixture_teardown);
}
