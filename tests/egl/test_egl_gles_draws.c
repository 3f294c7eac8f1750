/* A GLES 3 program on surfaceless EGL, run with the GL and EGL shims
 * preloaded (as `tally run` does): its draws, recorded by the GL shim into the
 * process's one engine device, read back through EGL_BRCM_event_monitor as
 * exactly one begin/end pair each, with the draw's own numbers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>
#include <stdlib.h>
#include <string.h>

#include "egl_fixture.h"

#define SIZE 64

static const char vertex_source[] = "#version 300 es\n"
                                    "void main() {\n"
                                    "    float x = float(gl_VertexID % 3) - 1.0;\n"
                                    "    gl_Position = vec4(x, float(gl_VertexID % 2), 0.0, 1.0);\n"
                                    "}\n";
static const char fragment_source[] = "#version 300 es\n"
                                      "precision mediump float;\n"
                                      "out vec4 color;\n"
                                      "void main() { color = vec4(1.0); }\n";

static GLuint compile(GLenum stage, const char *source)
{
    GLuint shader = glCreateShader(stage);
    glShaderSource(shader, 1, &source, NULL);
    glCompileShader(shader);
    GLint ok = GL_FALSE;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    assert_int_equal(ok, GL_TRUE);
    return shader;
}

/* A GLES 3 context drawing into a framebuffer of its own (surfaceless). */
static EGLContext make_gles_context(EGLDisplay display)
{
    assert_true(eglBindAPI(EGL_OPENGL_ES_API));
    EGLint attributes[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE};
    EGLContext context = eglCreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attributes);
    assert_true(context != EGL_NO_CONTEXT);
    assert_true(eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context));
    GLuint framebuffer, color;
    glGenRenderbuffers(1, &color);
    glBindRenderbuffer(GL_RENDERBUFFER, color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, SIZE, SIZE);
    glGenFramebuffers(1, &framebuffer);
    glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
    assert_int_equal(glCheckFramebufferStatus(GL_FRAMEBUFFER), GL_FRAMEBUFFER_COMPLETE);
    glViewport(0, 0, SIZE, SIZE);
    GLuint program = glCreateProgram();
    glAttachShader(program, compile(GL_VERTEX_SHADER, vertex_source));
    glAttachShader(program, compile(GL_FRAGMENT_SHADER, fragment_source));
    glLinkProgram(program);
    GLint linked = GL_FALSE;
    glGetProgramiv(program, GL_LINK_STATUS, &linked);
    assert_int_equal(linked, GL_TRUE);
    glUseProgram(program);
    GLuint vertex_array;
    glGenVertexArrays(1, &vertex_array);
    glBindVertexArray(vertex_array);
    return context;
}

#define DRAWS 12

static void each_gles_draw_reads_back_as_one_pair_with_its_numbers(void **state)
{
    struct egl_fixture *fx = *state;
    struct brcm brcm;
    brcm_load(&brcm);
    const char *extensions = eglQueryString(fx->display, EGL_EXTENSIONS);
    assert_non_null(strstr(extensions, "EGL_BRCM_event_monitor"));
    EGLContext context = make_gles_context(fx->display);
    assert_true(brcm.collection(EGL_ACQUIRE_EVENTS_BRCM));
    assert_true(brcm.collection(EGL_START_EVENTS_BRCM));
    /* draw i: 3i vertices, i triangles; then one instanced strip: 5 vertices
     * (3 triangles) times 4 instances */
    for (GLsizei i = 1; i <= DRAWS; i++)
        glDrawArrays(GL_TRIANGLES, 0, 3 * i);
    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 5, 4);
    glFinish();
    assert_int_equal(glGetError(), GL_NO_ERROR);

    static struct egl_record records[8192];
    EGLBoolean lost = EGL_TRUE;
    size_t n = egl_records_read_all(&brcm, records, 8192, &lost);
    assert_false(lost);
    size_t pairs = 0;
    uint64_t last_end = 0;
    for (size_t i = 0; i < n; i++) {
        const struct egl_record *begin = &records[i];
        if (begin->event != TALLY_EVENT_KIND_DRAW || begin->type != 0)
            continue;
        const struct egl_record *end = NULL;
        size_t ends = 0;
        for (size_t j = 0; j < n; j++) {
            if (records[j].type == 1 && records[j].track == begin->track &&
                records[j].id == begin->id) {
                end = &records[j];
                ends++;
            }
        }
        assert_int_equal(ends, 1);
        assert_int_equal(end->event, TALLY_EVENT_KIND_DRAW);
        assert_true(begin->timestamp_us >= last_end);
        assert_true(end->timestamp_us >= begin->timestamp_us);
        last_end = end->timestamp_us;
        if (pairs < DRAWS) {
            uint64_t triangles = pairs + 1;
            assert_int_equal(begin->fields[0], 3 * triangles); /* vertices */
            assert_int_equal(begin->fields[1], 1);             /* instances */
            assert_int_equal(begin->fields[2], triangles);     /* primitives */
            assert_int_equal(begin->fields[4], TALLY_TOPOLOGY_TRIANGLE_LIST);
        } else {
            assert_int_equal(begin->fields[0], 20);
            assert_int_equal(begin->fields[1], 4);
            assert_int_equal(begin->fields[2], 12);
            assert_int_equal(begin->fields[4], TALLY_TOPOLOGY_TRIANGLE_STRIP);
        }
        pairs++;
    }
    assert_int_equal(pairs, DRAWS + 1);
    eglMakeCurrent(fx->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(fx->display, context);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(each_gles_draw_reads_back_as_one_pair_with_its_numbers,
                                        egl_fixture_setup, egl_fixture_teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
