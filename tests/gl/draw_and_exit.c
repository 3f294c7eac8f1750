/*
 * Draws on a surfaceless EGL context and exits with no flush, swap or
 * finish, destroying its context from an exit handler registered first (so
 * it runs after tally's own): the tests check that the draws still reach the
 * report and that nothing breaks at exit. `draw_and_exit es` does the same
 * on an OpenGL ES 2 context.
 */
#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static EGLDisplay display;
static EGLContext context;

static void destroy_late(void)
{
    eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(display, context);
    eglTerminate(display);
}

int main(int argc, char **argv)
{
    bool es = argc > 1 && strcmp(argv[1], "es") == 0;
    static const EGLint es2[] = {EGL_CONTEXT_CLIENT_VERSION, 2, EGL_NONE};
    atexit(destroy_late);
    display = eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, NULL, NULL) ||
        !eglBindAPI(es ? EGL_OPENGL_ES_API : EGL_OPENGL_API)) {
        fprintf(stderr, "draw_and_exit: no surfaceless EGL\n");
        return 1;
    }
    context = eglCreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, es ? es2 : NULL);
    if (context == EGL_NO_CONTEXT ||
        !eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
        fprintf(stderr, "draw_and_exit: no context\n");
        return 1;
    }
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glDrawArrays(GL_POINTS, 0, 7);
    return 0;
}
