/*
 * A GL program (surfaceless EGL, llvmpipe) that ends in the ways a careless
 * program does, for the exit-path tests:
 *
 *   fork     draws, forks a child that only calls exit(0), checks that the
 *            child ended as it would without tally, then draws again and
 *            exits normally.
 *   threads  a second thread draws and flushes on its own context in a
 *            loop while the main thread calls exit(0).
 *   until-killed  draws and finishes, round after round, saying each round
 *            (exit_paths_say_round), until a signal ends it.
 *   _exit    draws and finishes 25 rounds, then calls _exit(0): no exit
 *            handler runs, but the preloaded shim sees the call.
 *
 * Exits 0 when the program's own part went as planned.
 */
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>

#include <string.h>

#include "exit_paths.h"

static EGLDisplay display;

static EGLContext make_current_context(void)
{
    EGLContext context = eglCreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, NULL);
    if (context == EGL_NO_CONTEXT ||
        !eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context))
        return EGL_NO_CONTEXT;
    return context;
}

static void draw_and_flush(void *unused)
{
    (void)unused;
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glFlush();
}

static void child_exits(void)
{
    exit(0);
}

static int fork_mode(void)
{
    if (make_current_context() == EGL_NO_CONTEXT)
        return 1;
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glFinish();
    if (!exit_paths_fork(child_exits))
        return 1;
    glDrawArrays(GL_POINTS, 0, 7);
    glFinish();
    return 0;
}

static void *drawing_thread(void *arg)
{
    struct exit_paths_loop *loop = arg;
    if (make_current_context() == EGL_NO_CONTEXT) {
        fprintf(stderr, "gl_exit_paths: no context on the drawing thread\n");
        _exit(1);
    }
    return exit_paths_loop_main(loop);
}

static int threads_mode(void)
{
    static struct exit_paths_loop loop = {.work = draw_and_flush};
    pthread_t thread;
    if (pthread_create(&thread, NULL, drawing_thread, &loop) != 0)
        return 1;
    while (atomic_load(&loop.rounds) < 50)
        exit_paths_sleep_ms(1);
    exit(0);
}

static int rounds_mode(unsigned rounds)
{
    if (make_current_context() == EGL_NO_CONTEXT)
        return 1;
    for (unsigned round = 1; round <= rounds; round++) {
        glDrawArrays(GL_TRIANGLES, 0, 3);
        glFinish();
        exit_paths_say_round(round);
        exit_paths_sleep_ms(2);
    }
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gl_exit_paths fork|threads|until-killed|_exit\n");
        return 2;
    }
    /* Before tally's exit handlers, so it runs after them. */
    if (strcmp(argv[1], "threads") == 0)
        atexit(exit_paths_linger);
    display = eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, NULL, NULL) ||
        !eglBindAPI(EGL_OPENGL_API)) {
        fprintf(stderr, "gl_exit_paths: no surfaceless EGL\n");
        return 1;
    }
    if (strcmp(argv[1], "fork") == 0)
        return fork_mode();
    if (strcmp(argv[1], "threads") == 0)
        return threads_mode();
    if (strcmp(argv[1], "until-killed") == 0)
        return rounds_mode(UINT32_MAX);
    if (strcmp(argv[1], "_exit") == 0)
        return rounds_mode(25);
    return 2;
}
