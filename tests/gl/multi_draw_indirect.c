/*
 * One glMultiDrawArraysIndirect of three sub-draws 32 bytes apart and one
 * glMultiDrawElementsIndirect of three sub-draws 28 bytes apart, on a
 * surfaceless EGL context, then exit: the test reads the per-draw report
 * (TALLY_OUTPUT) and checks every sub-draw's row against the records.
 *
 * Arrays: 3 x 1, 6 x 2, 9 x 3 vertices x instances (IaVertices 3, 12, 27).
 * Elements: 6 x 1, 3 x 4, 12 x 2 indices x instances (6, 12, 24).
 */
#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>

#include <stdio.h>

#define PAD 0xdeadbeefu

static GLuint buffer_of(GLenum target, const void *data, GLsizeiptr size)
{
    GLuint buffer;
    glGenBuffers(1, &buffer);
    glBindBuffer(target, buffer);
    glBufferData(target, size, data, GL_STATIC_DRAW);
    return buffer;
}

int main(void)
{
    EGLDisplay display =
        eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, NULL, NULL) ||
        !eglBindAPI(EGL_OPENGL_API)) {
        fprintf(stderr, "multi_draw_indirect: no surfaceless EGL\n");
        return 1;
    }
    EGLContext context = eglCreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, NULL);
    if (context == EGL_NO_CONTEXT ||
        !eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
        fprintf(stderr, "multi_draw_indirect: no context\n");
        return 1;
    }
    /* Surfaceless: draws need a framebuffer of their own. */
    GLuint framebuffer, color;
    glGenRenderbuffers(1, &color);
    glBindRenderbuffer(GL_RENDERBUFFER, color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, 16, 16);
    glGenFramebuffers(1, &framebuffer);
    glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
    glViewport(0, 0, 16, 16);
    GLuint vertex_array;
    glGenVertexArrays(1, &vertex_array);
    glBindVertexArray(vertex_array);

    static const GLuint arrays[] = {
        3, 1, 0, 0, PAD, PAD, PAD, PAD, /* */
        6, 2, 0, 0, PAD, PAD, PAD, PAD, /* */
        9, 3, 0, 0,                     /* the last record needs no padding */
    };
    GLuint arrays_buffer = buffer_of(GL_DRAW_INDIRECT_BUFFER, arrays, sizeof(arrays));
    glMultiDrawArraysIndirect(GL_TRIANGLES, NULL, 3, 32);

    GLuint indices[16];
    for (GLuint i = 0; i < 16; i++)
        indices[i] = i;
    GLuint index_buffer = buffer_of(GL_ELEMENT_ARRAY_BUFFER, indices, sizeof(indices));
    static const GLuint elements[] = {
        6,  1, 0, 0, 0, PAD, PAD, /* */
        3,  4, 3, 0, 0, PAD, PAD, /* */
        12, 2, 1, 2, 0, PAD, PAD, /* */
    };
    GLuint elements_buffer = buffer_of(GL_DRAW_INDIRECT_BUFFER, elements, sizeof(elements));
    glMultiDrawElementsIndirect(GL_TRIANGLES, GL_UNSIGNED_INT, NULL, 3, 28);

    GLenum error = glGetError();
    glDeleteBuffers(1, &arrays_buffer);
    glDeleteBuffers(1, &elements_buffer);
    glDeleteBuffers(1, &index_buffer);
    glDeleteVertexArrays(1, &vertex_array);
    glDeleteFramebuffers(1, &framebuffer);
    glDeleteRenderbuffers(1, &color);
    if (error != GL_NO_ERROR) {
        fprintf(stderr, "multi_draw_indirect: GL error 0x%x\n", error);
        return 1;
    }
    return 0;
}
