/*
 * OpenCL kernel times on CLOCK_MONOTONIC under TALLY_BACKEND=driver and the
 * realtime clock, on PoCL. The truth is the program's own CLOCK_MONOTONIC:
 * read around its clEnqueueNDRangeKernel (the shim's bracket lies within
 * that one, so the shim's pair is off by at most half of it: the
 * tolerance), before it completes the user event the kernel waits for (the
 * device cannot start it earlier), and once clGetEventInfo says the kernel
 * completed. The shim sees none of those (they are no submission points of
 * its): it reads the kernel's times and submits them only at the program's
 * clFinish, a pause later. Calibrated, the kernel of the engine's timeline
 * lies between the user event and the completion; neither where the shim
 * bracketed the enqueue (before the pause) nor where it submitted (after
 * the completion) would. With TALLY_CALIBRATE=0 the correlation places it
 * where the shim submitted it, after the completion, before clFinish
 * returned.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cl_fixture.h"
#include "fixture.h"

/* Between two moments of the program that the shim must tell apart. */
#define PAUSE_NS 5000000ull

static const char *const kernel_source = "kernel void fill(global int *out) {\n"
                                         "    out[get_global_id(0)] = 1;\n"
                                         "}\n";

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void pause_for(uint64_t ns)
{
    nanosleep(&(struct timespec){.tv_sec = (time_t)(ns / 1000000000u),
                                 .tv_nsec = (long)(ns % 1000000000u)},
              NULL);
}

typedef struct fixture {
    struct cl_fixture *cl;
    cl_command_queue queue;
    cl_kernel kernel;
    cl_mem out;
    tally_device *engine;
    tally_subscription *timeline;
} fixture;

static int open_fixture(void **state, bool calibrate)
{
    static fixture f;
    memset(&f, 0, sizeof(f));
    setenv("TALLY_BACKEND", "driver", 1);
    setenv("TALLY_CLOCK", "realtime", 1);
    if (calibrate)
        unsetenv("TALLY_CALIBRATE");
    else
        setenv("TALLY_CALIBRATE", "0", 1);
    void *cl = NULL;
    if (cl_fixture_setup(&cl) != 0)
        return -1;
    f.cl = cl;
    cl_int err;
    /* No profiling asked: the shim adds it (and hides it). */
    f.queue = clCreateCommandQueueWithProperties(f.cl->context, f.cl->device, NULL, &err);
    if (err != CL_SUCCESS)
        return -1;
    f.kernel = build_kernel(f.cl, kernel_source, "fill");
    f.out = clCreateBuffer(f.cl->context, CL_MEM_READ_WRITE, 1 << 16, NULL, &err);
    if (err != CL_SUCCESS || clSetKernelArg(f.kernel, 0, sizeof(f.out), &f.out) != CL_SUCCESS)
        return -1;
    /* The device the shim opened: the same shared one. */
    if (tally_device_acquire_shared(&f.engine) != TALLY_OK ||
        tally_timeline_subscribe(f.engine, 4096, &f.timeline) != TALLY_OK)
        return -1;
    *state = &f;
    return 0;
}

static int open_calibrated(void **state)
{
    return open_fixture(state, true);
}

static int open_uncalibrated(void **state)
{
    return open_fixture(state, false);
}

static int close_fixture(void **state)
{
    fixture *f = *state;
    clReleaseMemObject(f->out);
    clReleaseKernel(f->kernel);
    clReleaseCommandQueue(f->queue);
    void *cl = f->cl;
    cl_fixture_teardown(&cl);
    tally_timeline_unsubscribe(f->timeline);
    tally_device_release_shared(f->engine);
    return 0;
}

/* CLOCK_MONOTONIC as the program read it around one kernel. */
typedef struct window {
    uint64_t tolerance; /* half its enqueue call's bracket */
    uint64_t released;  /* before it completed the user event the kernel waits for */
    uint64_t ran;       /* after clGetEventInfo said the kernel completed */
    uint64_t finished;  /* after clFinish, where the shim submitted it */
} window;

static window run_kernel(fixture *f)
{
    window w;
    cl_int err;
    cl_event gate = clCreateUserEvent(f->cl->context, &err);
    assert_int_equal(err, CL_SUCCESS);
    size_t global = 4096;
    cl_event done;
    uint64_t before = monotonic_ns();
    assert_int_equal(
        clEnqueueNDRangeKernel(f->queue, f->kernel, 1, NULL, &global, NULL, 1, &gate, &done),
        CL_SUCCESS);
    uint64_t enqueued = monotonic_ns();
    w.tolerance = (enqueued - before) / 2 + 1;
    pause_for(PAUSE_NS + 2 * w.tolerance);
    w.released = monotonic_ns();
    assert_int_equal(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    cl_int status = CL_QUEUED;
    do
        assert_int_equal(
            clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL),
            CL_SUCCESS);
    while (status > CL_COMPLETE);
    assert_int_equal(status, CL_COMPLETE);
    w.ran = monotonic_ns();
    pause_for(PAUSE_NS + 2 * w.tolerance);
    assert_int_equal(clFinish(f->queue), CL_SUCCESS);
    w.finished = monotonic_ns();
    clReleaseEvent(done);
    clReleaseEvent(gate);
    return w;
}

typedef monotonic_span span;

/* The queue's dispatch spans on CLOCK_MONOTONIC, once the engine executed
 * everything submitted. */
static uint32_t dispatch_spans(fixture *f, span *spans, uint32_t max)
{
    return queue_spans_monotonic(f->engine, f->timeline, 1u << TALLY_EVENT_KIND_DISPATCH, spans,
                                 max);
}

static void calibrated_kernels_lie_between_their_release_and_their_completion(void **state)
{
    fixture *f = *state;
    for (int round = 0; round < 3; round++) {
        window w = run_kernel(f);
        span s;
        assert_int_equal(dispatch_spans(f, &s, 1), 1);
        assert_true(s.begin + w.tolerance >= w.released);
        assert_true(s.end > s.begin); /* measured device time */
        assert_true(s.end <= w.ran + w.tolerance);
    }
}

static void uncalibrated_kernels_are_placed_where_the_shim_submitted_them(void **state)
{
    fixture *f = *state;
    for (int round = 0; round < 3; round++) {
        window w = run_kernel(f);
        span s;
        assert_int_equal(dispatch_spans(f, &s, 1), 1);
        assert_true(s.begin > w.ran + w.tolerance);
        assert_true(s.begin <= w.finished);
        assert_true(s.end > s.begin);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            calibrated_kernels_lie_between_their_release_and_their_completion, open_calibrated,
            close_fixture),
        cmocka_unit_test_setup_teardown(
            uncalibrated_kernels_are_placed_where_the_shim_submitted_them, open_uncalibrated,
            close_fixture),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
