/*
 * GL timestamps on CLOCK_MONOTONIC under TALLY_BACKEND=driver and the
 * realtime clock, on llvmpipe (desktop GL 4.5 and OpenGL ES 3.2 with
 * GL_EXT_disjoint_timer_query). The truth is the program's own
 * CLOCK_MONOTONIC: read PAUSE_NS after its draw calls, just before it
 * flushes them (llvmpipe runs nothing before), and after the EGL fence it
 * waits for says the GPU ran them. The shim does not see that wait (it is
 * no GL submission point): it reads the draws' queries and submits them to
 * the engine only at the program's glFinish, PAUSE_NS later. Calibrated,
 * each draw of the engine's timeline lies between the flush and the fence
 * wait; neither where the shim issued its first query (before the pause)
 * nor where it submitted (after the fence wait) would. Placed by the
 * correlation (TALLY_CALIBRATE=0), each lies after the fence wait, where
 * the shim submitted it, and begins before glFinish returned.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "gl_fixture.h"
#include "tally/tally.h"
#include "fixture.h"

/* The shim's pair is off by half its bracket (tens of ns on llvmpipe); this
 * allows for a bracket widened by the scheduler. */
#define TOLERANCE_NS 100000ull
/* Between the fence wait and glFinish: far beyond the tolerance. */
#define PAUSE_NS 5000000l

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct fixture {
    struct gl_fixture gl;
    tally_device *engine;
    tally_subscription *timeline;
    GLuint program, vertex_array;
} fixture;

static const char vertex_source[] = "#version 300 es\n"
                                    "void main() {\n"
                                    "    vec2 p = vec2(gl_VertexID & 1, gl_VertexID >> 1);\n"
                                    "    gl_Position = vec4(4.0 * p - 1.0, 0.0, 1.0);\n"
                                    "}\n";
static const char fragment_source[] = "#version 300 es\n"
                                      "precision mediump float;\n"
                                      "out vec4 color;\n"
                                      "void main() { color = vec4(1.0, 0.5, 0.25, 1.0); }\n";

/* A context of `api` under the driver backend, calibrating or not, and a
 * reader of the engine's timeline. */
static int open_fixture(void **state, EGLenum api, int major, bool calibrate)
{
    static fixture f;
    memset(&f, 0, sizeof(f));
    setenv("TALLY_BACKEND", "driver", 1);
    setenv("TALLY_CLOCK", "realtime", 1);
    setenv("TALLY_GRANULARITY", "command", 1); /* each draw's time: GL's default is per frame */
    if (calibrate)
        unsetenv("TALLY_CALIBRATE");
    else
        setenv("TALLY_CALIBRATE", "0", 1);
    if (gl_fixture_open(&f.gl, api, major) != 0)
        return -1;
    /* The device the shim opened at MakeCurrent: the same shared one. */
    if (tally_device_acquire_shared(&f.engine) != TALLY_OK ||
        tally_timeline_subscribe(f.engine, 4096, &f.timeline) != TALLY_OK)
        return -1;
    f.program =
        gl_build_program(GL_VERTEX_SHADER, vertex_source, GL_FRAGMENT_SHADER, fragment_source);
    glGenVertexArrays(1, &f.vertex_array);
    glBindVertexArray(f.vertex_array);
    glUseProgram(f.program);
    *state = &f;
    return 0;
}

static int open_calibrated(void **state)
{
    return open_fixture(state, EGL_OPENGL_API, 3, true);
}

static int open_gles_calibrated(void **state)
{
    return open_fixture(state, EGL_OPENGL_ES_API, 3, true);
}

static int open_uncalibrated(void **state)
{
    return open_fixture(state, EGL_OPENGL_API, 3, false);
}

static int close_fixture(void **state)
{
    fixture *f = *state;
    glDeleteVertexArrays(1, &f->vertex_array);
    glDeleteProgram(f->program);
    gl_fixture_close(&f->gl);
    tally_timeline_unsubscribe(f->timeline);
    tally_device_release_shared(f->engine);
    return 0;
}

/* CLOCK_MONOTONIC as the program read it around its draws. */
typedef struct window {
    uint64_t before;   /* before its first draw call */
    uint64_t released; /* before it flushed them, PAUSE_NS after the calls */
    uint64_t ran;      /* after its EGL fence wait: the GPU had run the draws */
    uint64_t finished; /* after glFinish, where the shim submitted them */
} window;

static window draw_and_wait(fixture *f)
{
    window w;
    w.before = monotonic_ns();
    /* Work before the first measured draw: llvmpipe writes that draw's
     * first timestamp when it runs (after the flush), not at the call, as
     * it does in an empty batch, so where the shim issued its queries and
     * where the GPU ran them differ by the pause. */
    glClear(GL_COLOR_BUFFER_BIT);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    /* llvmpipe runs nothing before a flush (the fence wait's). */
    nanosleep(&(struct timespec){.tv_nsec = PAUSE_NS}, NULL);
    w.released = monotonic_ns();
    PFNEGLCREATESYNCKHRPROC create_sync = (PFNEGLCREATESYNCKHRPROC)gl_proc("eglCreateSyncKHR");
    PFNEGLCLIENTWAITSYNCKHRPROC wait_sync =
        (PFNEGLCLIENTWAITSYNCKHRPROC)gl_proc("eglClientWaitSyncKHR");
    PFNEGLDESTROYSYNCKHRPROC destroy_sync = (PFNEGLDESTROYSYNCKHRPROC)gl_proc("eglDestroySyncKHR");
    EGLSyncKHR sync = create_sync(f->gl.display, EGL_SYNC_FENCE_KHR, NULL);
    assert_true(sync != EGL_NO_SYNC_KHR);
    assert_int_equal(
        wait_sync(f->gl.display, sync, EGL_SYNC_FLUSH_COMMANDS_BIT_KHR, EGL_FOREVER_KHR),
        EGL_CONDITION_SATISFIED_KHR);
    w.ran = monotonic_ns();
    destroy_sync(f->gl.display, sync);
    nanosleep(&(struct timespec){.tv_nsec = PAUSE_NS}, NULL);
    glFinish();
    w.finished = monotonic_ns();
    return w;
}

typedef monotonic_span span;

/* The queue's draw spans on CLOCK_MONOTONIC, once the engine executed
 * everything submitted. */
static uint32_t draw_spans(fixture *f, span *spans, uint32_t max)
{
    return queue_spans_monotonic(f->engine, f->timeline, 1u << TALLY_EVENT_KIND_DRAW, spans, max);
}

static void check_calibrated(fixture *f)
{
    for (int round = 0; round < 3; round++) {
        window w = draw_and_wait(f);
        span spans[8];
        assert_int_equal(draw_spans(f, spans, 8), 2);
        for (uint32_t i = 0; i < 2; i++) {
            assert_true(spans[i].begin + TOLERANCE_NS >= w.released);
            assert_true(spans[i].end > spans[i].begin); /* measured GPU time */
            assert_true(spans[i].end <= w.ran + TOLERANCE_NS);
        }
        assert_true(spans[1].begin >= spans[0].end);
    }
}

static void calibrated_draws_lie_between_the_flush_and_the_fence_wait(void **state)
{
    check_calibrated(*state);
}

static void gles_calibrated_draws_lie_between_the_flush_and_the_fence_wait(void **state)
{
    check_calibrated(*state);
}

/* The correlation: the draws land where the shim submitted them, after the
 * GPU had run them, and keep their measured durations. */
static void uncalibrated_draws_are_placed_where_the_shim_submitted_them(void **state)
{
    fixture *f = *state;
    for (int round = 0; round < 3; round++) {
        window w = draw_and_wait(f);
        span spans[8];
        assert_int_equal(draw_spans(f, spans, 8), 2);
        assert_true(spans[0].begin > w.ran + TOLERANCE_NS);
        assert_true(spans[0].begin <= w.finished);
        for (uint32_t i = 0; i < 2; i++)
            assert_true(spans[i].end > spans[i].begin);
        assert_true(spans[1].begin >= spans[0].end);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(calibrated_draws_lie_between_the_flush_and_the_fence_wait,
                                        open_calibrated, close_fixture),
        cmocka_unit_test_setup_teardown(
            gles_calibrated_draws_lie_between_the_flush_and_the_fence_wait, open_gles_calibrated,
            close_fixture),
        cmocka_unit_test_setup_teardown(uncalibrated_draws_are_placed_where_the_shim_submitted_them,
                                        open_uncalibrated, close_fixture),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
