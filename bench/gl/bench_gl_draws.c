/*
 * The CPU a GL program's thread spends per draw: FRAMES frames of DRAWS
 * one-pixel draws each (glDrawArrays, or glDrawElements from an element
 * buffer with "elements") on a surfaceless llvmpipe context, a glFlush
 * ending each frame (a submission point, where the driver backend reads its
 * queries), one glFinish at the end, after as many frames untimed (and at
 * least half a second of them). Prints the calling thread's CPU time and
 * the wall time per draw, and the thread's CPU time in the draw loops alone
 * (the flushes left out) per draw, after a line naming the renderer;
 * tally_bench_gl_driver runs it with and without
 * the shim and backends (docs/benchmarks.md).
 *
 * usage: bench_gl_draws [FRAMES [DRAWS [arrays|elements]]]
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
#include <time.h>

static const char *const vertex_source =
    "#version 330\n"
    "void main() {\n"
    "    vec2 corner = vec2(gl_VertexID & 1, gl_VertexID >> 1) * 0.02;\n"
    "    gl_Position = vec4(corner - 0.5, 0.0, 1.0);\n"
    "}\n";
static const char *const fragment_source = "#version 330\n"
                                           "out vec4 color;\n"
                                           "void main() { color = vec4(1.0); }\n";

static GLuint shader(GLenum type, const char *source)
{
    GLuint s = glCreateShader(type);
    glShaderSource(s, 1, &source, NULL);
    glCompileShader(s);
    return s;
}

static int open_context(void)
{
    /* Mesa's surfaceless platform; a driver without it (NVIDIA's) gives its
     * default display, which renders offscreen as well. */
    EGLDisplay display =
        eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, NULL, NULL))
        display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, NULL, NULL) ||
        !eglBindAPI(EGL_OPENGL_API))
        return -1;
    EGLint attributes[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_NONE};
    EGLContext context = eglCreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attributes);
    if (context == EGL_NO_CONTEXT ||
        !eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context))
        return -1;
    GLuint framebuffer, color;
    glGenRenderbuffers(1, &color);
    glBindRenderbuffer(GL_RENDERBUFFER, color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, 64, 64);
    glGenFramebuffers(1, &framebuffer);
    glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
    glViewport(0, 0, 64, 64);
    return 0;
}

static double seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The calling thread's CPU time in the draw loops alone, the flushes left
 * out: what recording a draw costs, as bench_overhead's recording figure
 * for Vulkan (a clock read per frame, the same in every configuration). */
static double draw_loops_cpu;

static void run_frames(int frames, int draws, bool elements)
{
    draw_loops_cpu = 0;
    for (int f = 0; f < frames; f++) {
        double loop_start = seconds(CLOCK_THREAD_CPUTIME_ID);
        if (elements) {
            for (int d = 0; d < draws; d++)
                glDrawElements(GL_TRIANGLE_STRIP, 4, GL_UNSIGNED_SHORT, NULL);
        } else {
            for (int d = 0; d < draws; d++)
                glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
        }
        draw_loops_cpu += seconds(CLOCK_THREAD_CPUTIME_ID) - loop_start;
        glFlush();
    }
    glFinish();
}

static void bind_element_buffer(void)
{
    static const GLushort corners[] = {0, 1, 2, 3};
    GLuint buffer;
    glGenBuffers(1, &buffer);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, buffer);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, sizeof(corners), corners, GL_STATIC_DRAW);
}

static void report(double cpu_start, double wall_start, double draws)
{
    double cpu = seconds(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
    double wall = seconds(CLOCK_MONOTONIC) - wall_start;
    /* The renderer on a line of its own, before the figures' line. */
    printf("renderer: %s\n", (const char *)glGetString(GL_RENDERER));
    printf("thread_ns_per_draw %.1f wall_ns_per_draw %.1f draw_loop_ns_per_draw %.1f error 0x%x\n",
           cpu / draws * 1e9, wall / draws * 1e9, draw_loops_cpu / draws * 1e9, glGetError());
}

int main(int argc, char **argv)
{
    int frames = argc > 1 ? atoi(argv[1]) : 100;
    int draws = argc > 2 ? atoi(argv[2]) : 200;
    bool elements = argc > 3 && strcmp(argv[3], "elements") == 0;
    if (argc > 3 && !elements && strcmp(argv[3], "arrays") != 0)
        draws = 0;
    if (frames <= 0 || draws <= 0 || open_context() != 0) {
        fprintf(stderr, "bench_gl_draws: no surfaceless GL 4 context or bad arguments\n");
        return 1;
    }
    GLuint program = glCreateProgram();
    glAttachShader(program, shader(GL_VERTEX_SHADER, vertex_source));
    glAttachShader(program, shader(GL_FRAGMENT_SHADER, fragment_source));
    glLinkProgram(program);
    glUseProgram(program);
    GLuint vertex_array;
    glGenVertexArrays(1, &vertex_array);
    glBindVertexArray(vertex_array);
    if (elements)
        bind_element_buffer();
    /* Warm-up, untimed: the driver compiles its shaders at the first draw,
     * and the shim profiles the program's GLSL on a thread of its own
     * (glslang, tens of ms), which on one CPU would otherwise share the
     * timed frames' core and caches. As many frames as are timed, and at
     * least half a second of them. */
    double warm_until = seconds(CLOCK_MONOTONIC) + 0.5;
    for (int round = 0; round == 0 || seconds(CLOCK_MONOTONIC) < warm_until; round++)
        run_frames(frames, draws, elements);
    double cpu = seconds(CLOCK_THREAD_CPUTIME_ID), wall = seconds(CLOCK_MONOTONIC);
    run_frames(frames, draws, elements);
    report(cpu, wall, (double)frames * draws);
    return 0;
}
