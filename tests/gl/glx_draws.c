/*
 * A small GLX program with known draws, traced with apitrace and replayed
 * with glretrace by the tests: FRAMES frames (argv[1], default 3), frame f
 * draws triangles of 3 * (f + 1) vertices, then a strip of 4 vertices
 * instanced twice, then an indexed draw of 6 indices. Needs an X display.
 */
#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>
#include <GL/glx.h>
#include <X11/Xlib.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int frames = argc > 1 ? atoi(argv[1]) : 3;
    Display *display = XOpenDisplay(NULL);
    if (!display) {
        fprintf(stderr, "glx_draws: no X display\n");
        return 1;
    }
    int attributes[] = {GLX_RGBA, GLX_DOUBLEBUFFER, None};
    XVisualInfo *visual = glXChooseVisual(display, DefaultScreen(display), attributes);
    if (!visual) {
        fprintf(stderr, "glx_draws: no visual\n");
        return 1;
    }
    Window root = RootWindow(display, visual->screen);
    XSetWindowAttributes window_attributes = {
        .colormap = XCreateColormap(display, root, visual->visual, AllocNone)};
    Window window = XCreateWindow(display, root, 0, 0, 64, 64, 0, visual->depth, InputOutput,
                                  visual->visual, CWColormap, &window_attributes);
    GLXContext context = glXCreateContext(display, visual, NULL, True);
    glXMakeCurrent(display, window, context);
    glViewport(0, 0, 64, 64);
    static const GLushort indices[6] = {0, 1, 2, 2, 1, 3};
    for (int f = 0; f < frames; f++) {
        glClear(GL_COLOR_BUFFER_BIT);
        glDrawArrays(GL_TRIANGLES, 0, 3 * (f + 1));
        glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, 2);
        glDrawElements(GL_TRIANGLES, 6, GL_UNSIGNED_SHORT, indices);
        glXSwapBuffers(display, window);
    }
    glXMakeCurrent(display, None, NULL);
    glXDestroyContext(display, context);
    XDestroyWindow(display, window);
    XFree(visual);
    XCloseDisplay(display);
    return 0;
}
