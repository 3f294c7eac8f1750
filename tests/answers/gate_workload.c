/*
 * A small GL program that knows nothing of tally, for the CI gate's tests:
 * FRAMES frames (3) on a surfaceless EGL pbuffer of llvmpipe, each of four
 * passes in KHR_debug groups, ended by eglSwapBuffers:
 *   shadow   two draws (300 and 120 vertices) with the "scene" program
 *   terrain  one draw of 600 vertices
 *   trees    four draws of 36 vertices
 *   post     one full-screen triangle with the "post" program
 * Switches change it the way a commit would:
 *   --more-draws     a fifth draw in the trees pass
 *   --more-vertices  the terrain draw has 900 vertices
 * Usage: gate_workload [--more-draws] [--more-vertices] [--frames N]
 */
#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const vertex_source =
    "#version 130\n"
    "void main() {\n"
    "    float a = float(gl_VertexID) * 0.37;\n"
    "    gl_Position = vec4(0.8 * cos(a), 0.8 * sin(a), 0.0, 1.0);\n"
    "}\n";
static const char *const scene_fragment = "#version 130\n"
                                          "out vec4 color;\n"
                                          "void main() { color = vec4(0.2, 0.6, 0.3, 1.0); }\n";
static const char *const post_vertex =
    "#version 130\n"
    "void main() {\n"
    "    vec2 p = vec2(float((gl_VertexID & 1) * 4 - 1), float((gl_VertexID & 2) * 2 - 1));\n"
    "    gl_Position = vec4(p, 0.0, 1.0);\n"
    "}\n";
static const char *const post_fragment = "#version 130\n"
                                         "out vec4 color;\n"
                                         "void main() { color = vec4(1.0); }\n";

struct options {
    bool more_draws, more_vertices;
    int frames;
};

static GLuint compile(GLenum stage, const char *source)
{
    GLuint shader = glCreateShader(stage);
    glShaderSource(shader, 1, &source, NULL);
    glCompileShader(shader);
    GLint ok = 0;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    return ok ? shader : 0;
}

/* A linked program named by glObjectLabel, or 0. */
static GLuint program(const char *name, const char *vertex, const char *fragment)
{
    GLuint v = compile(GL_VERTEX_SHADER, vertex), f = compile(GL_FRAGMENT_SHADER, fragment);
    if (!v || !f)
        return 0;
    GLuint p = glCreateProgram();
    glAttachShader(p, v);
    glAttachShader(p, f);
    glLinkProgram(p);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    glDeleteShader(v);
    glDeleteShader(f);
    if (!ok)
        return 0;
    glObjectLabel(GL_PROGRAM, p, -1, name);
    return p;
}

static void pass(const char *label)
{
    glPushDebugGroup(GL_DEBUG_SOURCE_APPLICATION, 1, -1, label);
}

static void frame(const struct options *o, GLuint scene, GLuint post)
{
    glClear(GL_COLOR_BUFFER_BIT);
    glUseProgram(scene);
    pass("shadow");
    glDrawArrays(GL_TRIANGLES, 0, 300);
    glDrawArrays(GL_TRIANGLES, 0, 120);
    glPopDebugGroup();
    pass("terrain");
    glDrawArrays(GL_TRIANGLES, 0, o->more_vertices ? 900 : 600);
    glPopDebugGroup();
    pass("trees");
    for (int i = 0; i < (o->more_draws ? 5 : 4); i++)
        glDrawArrays(GL_TRIANGLES, 0, 36);
    glPopDebugGroup();
    glUseProgram(post);
    pass("post");
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glPopDebugGroup();
}

static bool parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){.frames = 3};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--more-draws") == 0)
            o->more_draws = true;
        else if (strcmp(argv[i], "--more-vertices") == 0)
            o->more_vertices = true;
        else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc)
            o->frames = atoi(argv[++i]);
        else
            return false;
    }
    return o->frames > 0;
}

int main(int argc, char **argv)
{
    struct options o;
    if (!parse(argc, argv, &o)) {
        fprintf(stderr, "usage: gate_workload [--more-draws] [--more-vertices] [--frames N]\n");
        return 2;
    }
    EGLDisplay display =
        eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    const EGLint config_attributes[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                        EGL_OPENGL_BIT, EGL_NONE};
    const EGLint pbuffer_attributes[] = {EGL_WIDTH, 128, EGL_HEIGHT, 128, EGL_NONE};
    EGLConfig config;
    EGLint configs = 0;
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, NULL, NULL) ||
        !eglBindAPI(EGL_OPENGL_API) ||
        !eglChooseConfig(display, config_attributes, &config, 1, &configs) || configs < 1) {
        fprintf(stderr, "gate_workload: no surfaceless EGL with pbuffers\n");
        return 1;
    }
    EGLSurface surface = eglCreatePbufferSurface(display, config, pbuffer_attributes);
    EGLContext context = eglCreateContext(display, config, EGL_NO_CONTEXT, NULL);
    if (surface == EGL_NO_SURFACE || context == EGL_NO_CONTEXT ||
        !eglMakeCurrent(display, surface, surface, context)) {
        fprintf(stderr, "gate_workload: no context\n");
        return 1;
    }
    GLuint scene = program("scene", vertex_source, scene_fragment);
    GLuint post = program("post", post_vertex, post_fragment);
    if (!scene || !post) {
        fprintf(stderr, "gate_workload: the shaders do not build\n");
        return 1;
    }
    for (int i = 0; i < o.frames; i++) {
        frame(&o, scene, post);
        eglSwapBuffers(display, surface);
    }
    glFinish();
    GLenum error = glGetError();
    glDeleteProgram(scene);
    glDeleteProgram(post);
    eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroySurface(display, surface);
    eglDestroyContext(display, context);
    eglTerminate(display);
    return error == GL_NO_ERROR ? 0 : 3;
}
