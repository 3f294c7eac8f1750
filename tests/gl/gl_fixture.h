/* What the GL shim's tests start from: a desktop GL context made current
 * through surfaceless EGL (no X), with the shim preloaded by ctest. */
#ifndef TALLY_GL_TEST_FIXTURE_H
#define TALLY_GL_TEST_FIXTURE_H

#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>

/* Width and height of the fixture's framebuffer. */
#define GL_FIXTURE_SIZE 64

struct gl_fixture {
    EGLDisplay display;
    EGLContext context;
};

/* api: EGL_OPENGL_API or EGL_OPENGL_ES_API; major: the version asked for. */
int gl_fixture_open(struct gl_fixture *fx, EGLenum api, int major);
void gl_fixture_close(struct gl_fixture *fx);

/* cmocka setup/teardown: a desktop GL context. */
int gl_fixture_setup(void **state);
int gl_fixture_teardown(void **state);

/* An extension function through eglGetProcAddress; fails the test if NULL. */
void *gl_proc(const char *name);

/* A linked program of one or two shaders (second may be NULL); fails the
 * test if a shader does not compile or the program does not link. */
GLuint gl_build_program(GLenum first_type, const char *first, GLenum second_type,
                        const char *second);
/* Pops every pending GL error; returns how many there were. */
int gl_drain_errors(void);

#endif
