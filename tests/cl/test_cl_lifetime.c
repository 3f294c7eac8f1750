/* The shim's side records follow the program's retains and releases, and
 * queues used from several threads keep their counts apart. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>

#include "cl_fixture.h"

static const char empty_kernel[] = "void kernel foo() {}";

static void releasing_queues_and_events_leaves_no_record(void **state)
{
    struct cl_fixture *fx = *state;
    uint32_t queues0, events0, queues, events;
    live_records(&queues0, &events0);
    cl_uint uuid = uuid_of(fx, "Kernel work-items");
    cl_command_queue queue = counter_queue(fx, &uuid, 1);
    cl_kernel kernel = build_kernel(fx, empty_kernel, "foo");
    size_t global = 8;
    cl_event event;
    assert_int_equal(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, &event),
                     CL_SUCCESS);
    live_records(&queues, &events);
    assert_int_equal(queues, queues0 + 1);
    assert_int_equal(events, events0 + 1);

    /* A retained event outlives one release; the queue's record outlives
     * the queue's retain. */
    assert_int_equal(clRetainEvent(event), CL_SUCCESS);
    assert_int_equal(clRetainCommandQueue(queue), CL_SUCCESS);
    assert_int_equal(clReleaseEvent(event), CL_SUCCESS);
    assert_int_equal(clReleaseCommandQueue(queue), CL_SUCCESS);
    live_records(&queues, &events);
    assert_int_equal(queues, queues0 + 1);
    assert_int_equal(events, events0 + 1);

    /* The event still answers after its queue is gone. */
    assert_int_equal(clWaitForEvents(1, &event), CL_SUCCESS);
    assert_int_equal(clReleaseCommandQueue(queue), CL_SUCCESS);
    live_records(&queues, &events);
    assert_int_equal(queues, queues0);
    cl_performance_counter_result_codeplay result;
    read_results(event, &result, 1);
    assert_int_equal(result.uint64, 8);
    assert_int_equal(clReleaseEvent(event), CL_SUCCESS);
    live_records(&queues, &events);
    assert_int_equal(events, events0);
    clReleaseKernel(kernel);
}

/* A context of its own, released with everything in it. */
static void releasing_a_whole_context_leaves_no_record(void **state)
{
    struct cl_fixture *fx = *state;
    uint32_t queues0, events0, queues, events;
    live_records(&queues0, &events0);
    cl_int err;
    cl_context context = clCreateContext(NULL, 1, &fx->device, NULL, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    struct cl_fixture own = *fx;
    own.context = context;
    cl_uint uuid = uuid_of(fx, "Kernel enqueues");
    for (int i = 0; i < 3; i++) {
        cl_command_queue queue = counter_queue(&own, &uuid, 1);
        cl_command_queue plain =
            clCreateCommandQueueWithProperties(context, fx->device, NULL, &err);
        cl_event marker;
        assert_int_equal(clEnqueueMarkerWithWaitList(queue, 0, NULL, &marker), CL_SUCCESS);
        assert_int_equal(clFinish(queue), CL_SUCCESS);
        clReleaseEvent(marker);
        clReleaseCommandQueue(plain);
        clReleaseCommandQueue(queue);
    }
    clReleaseContext(context);
    live_records(&queues, &events);
    assert_int_equal(queues, queues0);
    assert_int_equal(events, events0);
}

struct worker {
    struct cl_fixture *fx;
    cl_command_queue queue;
    cl_kernel kernel;
    size_t base; /* the thread's global sizes are base x (i + 1) */
    int failures;
};

enum { ENQUEUES_PER_THREAD = 200 };

static void *enqueue_and_check(void *arg)
{
    struct worker *w = arg;
    cl_event events[ENQUEUES_PER_THREAD];
    for (size_t i = 0; i < ENQUEUES_PER_THREAD; i++) {
        size_t global = w->base * (i + 1), local = w->base;
        if (clEnqueueNDRangeKernel(w->queue, w->kernel, 1, NULL, &global, &local, 0, NULL,
                                   &events[i]) != CL_SUCCESS)
            w->failures++;
    }
    clFinish(w->queue);
    for (size_t i = 0; i < ENQUEUES_PER_THREAD; i++) {
        cl_performance_counter_result_codeplay r[2];
        if (clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_PERFORMANCE_COUNTERS_CODEPLAY,
                                    sizeof r, r, NULL) != CL_SUCCESS ||
            r[0].uint64 != w->base * (i + 1) || r[1].uint64 != i + 1)
            w->failures++;
        clReleaseEvent(events[i]);
    }
    return NULL;
}

static void two_threads_on_two_queues_count_their_own_work(void **state)
{
    struct cl_fixture *fx = *state;
    cl_uint uuids[] = {uuid_of(fx, "Kernel work-items"), uuid_of(fx, "Kernel work-groups")};
    struct worker workers[2];
    pthread_t threads[2];
    for (int t = 0; t < 2; t++) {
        /* A kernel object per thread: clSetKernelArg-free, but CL kernels
         * are not meant to be shared across threads. */
        workers[t] = (struct worker){.fx = fx,
                                     .queue = counter_queue(fx, uuids, 2),
                                     .kernel = build_kernel(fx, empty_kernel, "foo"),
                                     .base = t == 0 ? 4 : 16};
    }
    for (int t = 0; t < 2; t++)
        assert_int_equal(pthread_create(&threads[t], NULL, enqueue_and_check, &workers[t]), 0);
    for (int t = 0; t < 2; t++) {
        pthread_join(threads[t], NULL);
        assert_int_equal(workers[t].failures, 0);
        clReleaseKernel(workers[t].kernel);
        clReleaseCommandQueue(workers[t].queue);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(releasing_queues_and_events_leaves_no_record),
        cmocka_unit_test(releasing_a_whole_context_leaves_no_record),
        cmocka_unit_test(two_threads_on_two_queues_count_their_own_work),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("cl_lifetime", tests, cl_fixture_setup, cl_fixture_teardown);
}
