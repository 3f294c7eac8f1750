/*
 * Draws one point in each of a nest of GL debug groups (KHR_debug) and
 * group markers (EXT_debug_marker), on a surfaceless EGL context, then
 * exits; the test checks each draw's label in the report against the
 * groups the program opened around it, and the pipeline name of the draws
 * made with a program labelled (glObjectLabel) before it was linked.
 */
#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>

#include <stdio.h>

static GLuint compiled(GLenum type, const char *source)
{
    GLuint shader = glCreateShader(type);
    glShaderSource(shader, 1, &source, NULL);
    glCompileShader(shader);
    return shader;
}

/* A program labelled "sky program" before it is linked, in use. */
static void use_labelled_program(void)
{
    GLuint program = glCreateProgram();
    glAttachShader(program,
                   compiled(GL_VERTEX_SHADER, "void main() { gl_Position = vec4(0.0); }"));
    glAttachShader(program,
                   compiled(GL_FRAGMENT_SHADER, "void main() { gl_FragColor = vec4(1.0); }"));
    glObjectLabel(GL_PROGRAM, program, -1, "sky program");
    glLinkProgram(program);
    glUseProgram(program);
}

int main(void)
{
    EGLDisplay display =
        eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, NULL, NULL) ||
        !eglBindAPI(EGL_OPENGL_API)) {
        fprintf(stderr, "debug_groups: no surfaceless EGL\n");
        return 1;
    }
    EGLContext context = eglCreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, NULL);
    if (context == EGL_NO_CONTEXT ||
        !eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
        fprintf(stderr, "debug_groups: no context\n");
        return 1;
    }
    PFNGLPUSHGROUPMARKEREXTPROC push_marker =
        (PFNGLPUSHGROUPMARKEREXTPROC)eglGetProcAddress("glPushGroupMarkerEXT");
    PFNGLPOPGROUPMARKEREXTPROC pop_marker =
        (PFNGLPOPGROUPMARKEREXTPROC)eglGetProcAddress("glPopGroupMarkerEXT");
    glDrawArrays(GL_POINTS, 0, 1); /* "" */
    glPushDebugGroup(GL_DEBUG_SOURCE_APPLICATION, 1, -1, "frame");
    glDrawArrays(GL_POINTS, 0, 1); /* "frame" */
    glPushDebugGroup(GL_DEBUG_SOURCE_APPLICATION, 2, 6, "shadow pass, cut here");
    use_labelled_program();
    glDrawArrays(GL_POINTS, 0, 1); /* "frame/shadow", "sky program" */
    glPopDebugGroup();
    push_marker(0, "marker");
    glDrawArrays(GL_POINTS, 0, 1); /* "frame/marker" */
    pop_marker();
    glPopDebugGroup();
    glUseProgram(0);
    glDrawArrays(GL_POINTS, 0, 1); /* "" */
    glFinish();
    eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(display, context);
    eglTerminate(display);
    return glGetError() == GL_NO_ERROR ? 0 : 2;
}
