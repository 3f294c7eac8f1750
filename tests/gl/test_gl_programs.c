/* Programs: each linked program's profile comes from its GLSL (compiled by
 * the shim with glslang) and its compute local size from GL, so counters
 * that multiply a per-invocation count are exact for known shaders. */
#include "gl_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static PFNGLGETPERFQUERYIDBYNAMEINTELPROC GetIdByName;
static PFNGLGETPERFQUERYINFOINTELPROC GetQueryInfo;
static PFNGLGETPERFCOUNTERINFOINTELPROC GetCounterInfo;
static PFNGLCREATEPERFQUERYINTELPROC Create;
static PFNGLDELETEPERFQUERYINTELPROC Delete;
static PFNGLBEGINPERFQUERYINTELPROC Begin;
static PFNGLENDPERFQUERYINTELPROC End;
static PFNGLGETPERFQUERYDATAINTELPROC GetData;

static int setup(void **state)
{
    if (gl_fixture_setup(state) != 0)
        return -1;
    GetIdByName = gl_proc("glGetPerfQueryIdByNameINTEL");
    GetQueryInfo = gl_proc("glGetPerfQueryInfoINTEL");
    GetCounterInfo = gl_proc("glGetPerfCounterInfoINTEL");
    Create = gl_proc("glCreatePerfQueryINTEL");
    Delete = gl_proc("glDeletePerfQueryINTEL");
    Begin = gl_proc("glBeginPerfQueryINTEL");
    End = gl_proc("glEndPerfQueryINTEL");
    GetData = gl_proc("glGetPerfQueryDataINTEL");
    gl_drain_errors();
    return 0;
}

typedef struct measured {
    GLuint query;
    unsigned char data[1024];
} measured;

static void begin_measuring(measured *m, const char *set, GLuint *handle)
{
    GetIdByName((GLchar *)set, &m->query);
    Create(m->query, handle);
    Begin(*handle);
}

static void end_measuring(measured *m, GLuint handle)
{
    End(handle);
    GLuint written = 0;
    GetData(handle, GL_PERFQUERY_WAIT_INTEL, sizeof(m->data), m->data, &written);
    assert_true(written > 0);
    Delete(handle);
}

static uint64_t value_of(const measured *m, const char *counter_name)
{
    GLuint counters = 0;
    GetQueryInfo(m->query, 0, NULL, NULL, &counters, NULL, NULL);
    for (GLuint c = 1; c <= counters; c++) {
        char name[256];
        GLuint offset;
        GetCounterInfo(m->query, c, sizeof(name), name, 0, NULL, &offset, NULL, NULL, NULL, NULL);
        if (strcmp(name, counter_name) == 0) {
            uint64_t value;
            memcpy(&value, m->data + offset, 8);
            return value;
        }
    }
    fail_msg("no counter %s", counter_name);
    return 0;
}

/* One store per invocation; GL says the local size is 4x2x1. */
static const char *const store_one_value = "#version 430\n"
                                           "layout(local_size_x = 4, local_size_y = 2) in;\n"
                                           "layout(std430, binding = 0) buffer Out { uint v[]; };\n"
                                           "void main() { v[gl_LocalInvocationIndex] = 7u; }\n";

static void compute_counts_use_the_local_size_and_the_glsl(void **state)
{
    (void)state;
    GLuint program = gl_build_program(GL_COMPUTE_SHADER, store_one_value, 0, NULL);
    GLuint buffer;
    glGenBuffers(1, &buffer);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buffer);
    glBufferData(GL_SHADER_STORAGE_BUFFER, 64 * sizeof(GLuint), NULL, GL_DYNAMIC_DRAW);
    glUseProgram(program);
    measured m;
    GLuint handle;
    begin_measuring(&m, "ComputeBasic", &handle);
    glDispatchCompute(3, 1, 1);
    end_measuring(&m, handle);
    assert_int_equal(value_of(&m, "CsWorkgroups"), 3);
    assert_int_equal(value_of(&m, "CsInvocations"), 3 * 4 * 2);
    assert_int_equal(value_of(&m, "ShaderStoreInstructions"), 3 * 4 * 2);
    glUseProgram(0);
    glDeleteProgram(program);
    glDeleteBuffers(1, &buffer);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static const char *const passthrough = "#version 110\n"
                                       "attribute vec2 position;\n"
                                       "void main() { gl_Position = vec4(position, 0.0, 1.0); }\n";
/* One texture fetch per fragment; the vertex shader has none. */
static const char *const sample_once =
    "#version 110\n"
    "uniform sampler2D image;\n"
    "void main() { gl_FragColor = texture2D(image, vec2(0.5)); }\n";

static void texture_instructions_are_one_per_fragment_invocation(void **state)
{
    (void)state;
    GLuint program =
        gl_build_program(GL_VERTEX_SHADER, passthrough, GL_FRAGMENT_SHADER, sample_once);
    static const float quad[8] = {-1, -1, 1, -1, -1, 1, 1, 1};
    GLuint buffer;
    glGenBuffers(1, &buffer);
    glBindBuffer(GL_ARRAY_BUFFER, buffer);
    glBufferData(GL_ARRAY_BUFFER, sizeof(quad), quad, GL_STATIC_DRAW);
    GLint position = glGetAttribLocation(program, "position");
    glVertexAttribPointer((GLuint)position, 2, GL_FLOAT, GL_FALSE, 0, NULL);
    glEnableVertexAttribArray((GLuint)position);
    glUseProgram(program);
    measured m;
    GLuint handle;
    begin_measuring(&m, "RenderBasic", &handle);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    end_measuring(&m, handle);
    uint64_t fragments = value_of(&m, "FsInvocations");
    assert_true(fragments > 0);
    assert_int_equal(value_of(&m, "ShaderTexInstructions"), fragments);
    glDisableVertexAttribArray((GLuint)position);
    glUseProgram(0);
    glDeleteProgram(program);
    glDeleteBuffers(1, &buffer);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static const char *const green = "#version 110\n"
                                 "void main() { gl_FragColor = vec4(0.0, 1.0, 0.0, 1.0); }\n";

/* The shim passes every draw down: the driver really renders it. */
static void draws_reach_the_driver(void **state)
{
    (void)state;
    GLuint program = gl_build_program(GL_VERTEX_SHADER, passthrough, GL_FRAGMENT_SHADER, green);
    static const float quad[8] = {-1, -1, 1, -1, -1, 1, 1, 1};
    GLuint buffer;
    glGenBuffers(1, &buffer);
    glBindBuffer(GL_ARRAY_BUFFER, buffer);
    glBufferData(GL_ARRAY_BUFFER, sizeof(quad), quad, GL_STATIC_DRAW);
    GLint position = glGetAttribLocation(program, "position");
    glVertexAttribPointer((GLuint)position, 2, GL_FLOAT, GL_FALSE, 0, NULL);
    glEnableVertexAttribArray((GLuint)position);
    glClearColor(1, 0, 0, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    glUseProgram(program);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    unsigned char pixel[4] = {0, 0, 0, 0};
    glReadPixels(GL_FIXTURE_SIZE / 2, GL_FIXTURE_SIZE / 2, 1, 1, GL_RGBA, GL_UNSIGNED_BYTE, pixel);
    assert_int_equal(pixel[0], 0);
    assert_int_equal(pixel[1], 255);
    glDisableVertexAttribArray((GLuint)position);
    glUseProgram(0);
    glDeleteProgram(program);
    glDeleteBuffers(1, &buffer);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* Indirect parameters come from client memory only for draws of a
 * compatibility context; a dispatch with no buffer bound is the driver's
 * error, and its "offset" is not a pointer the shim may read. */
static void indirect_dispatch_without_a_buffer_is_the_drivers_error(void **state)
{
    (void)state;
    glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, 0);
    glDispatchComputeIndirect(16);
    assert_int_equal(glGetError(), GL_INVALID_OPERATION);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compute_counts_use_the_local_size_and_the_glsl),
        cmocka_unit_test(texture_instructions_are_one_per_fragment_invocation),
        cmocka_unit_test(draws_reach_the_driver),
        cmocka_unit_test(indirect_dispatch_without_a_buffer_is_the_drivers_error),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("gl_programs", tests, setup, gl_fixture_teardown);
}
