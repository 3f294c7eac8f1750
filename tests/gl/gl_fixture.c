#include "gl_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

int gl_fixture_open(struct gl_fixture *fx, EGLenum api, int major)
{
    fx->display = eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (fx->display == EGL_NO_DISPLAY || !eglInitialize(fx->display, NULL, NULL))
        return -1;
    if (!eglBindAPI(api))
        return -1;
    EGLint attributes[] = {EGL_CONTEXT_MAJOR_VERSION, major, EGL_NONE};
    fx->context = eglCreateContext(fx->display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attributes);
    if (fx->context == EGL_NO_CONTEXT)
        return -1;
    if (!eglMakeCurrent(fx->display, EGL_NO_SURFACE, EGL_NO_SURFACE, fx->context))
        return -1;
    /* Surfaceless: draws need a framebuffer of their own. */
    GLuint framebuffer, color;
    glGenRenderbuffers(1, &color);
    glBindRenderbuffer(GL_RENDERBUFFER, color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, GL_FIXTURE_SIZE, GL_FIXTURE_SIZE);
    glGenFramebuffers(1, &framebuffer);
    glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
    glViewport(0, 0, GL_FIXTURE_SIZE, GL_FIXTURE_SIZE);
    return glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE ? 0 : -1;
}

void gl_fixture_close(struct gl_fixture *fx)
{
    eglMakeCurrent(fx->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(fx->display, fx->context);
    eglTerminate(fx->display);
}

int gl_fixture_setup(void **state)
{
    struct gl_fixture *fx = calloc(1, sizeof(*fx));
    if (!fx || gl_fixture_open(fx, EGL_OPENGL_API, 3) != 0) {
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

int gl_fixture_teardown(void **state)
{
    gl_fixture_close(*state);
    free(*state);
    return 0;
}

void *gl_proc(const char *name)
{
    void *proc = (void *)eglGetProcAddress(name);
    assert_non_null(proc);
    return proc;
}

int gl_drain_errors(void)
{
    int count = 0;
    while (glGetError() != GL_NO_ERROR && count < 100)
        count++;
    return count;
}

GLuint gl_build_program(GLenum first_type, const char *first, GLenum second_type,
                        const char *second)
{
    GLuint program = glCreateProgram();
    GLenum types[2] = {first_type, second_type};
    const char *sources[2] = {first, second};
    for (int i = 0; i < 2 && sources[i]; i++) {
        GLuint shader = glCreateShader(types[i]);
        glShaderSource(shader, 1, &sources[i], NULL);
        glCompileShader(shader);
        GLint ok = 0;
        glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
        assert_true(ok);
        glAttachShader(program, shader);
    }
    glLinkProgram(program);
    GLint linked = 0;
    glGetProgramiv(program, GL_LINK_STATUS, &linked);
    assert_true(linked);
    return program;
}
