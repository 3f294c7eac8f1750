/*
 * A GL program that knows nothing of tally: on a surfaceless EGL context it
 * makes the triangle-list draws tests/layer/vk_workload.c makes through
 * Vulkan, with a vertex shader that, like vk_workload's, places vertices
 * from their index alone (no vertex attributes), then exits.
 *
 * Usage: gl_same_draws VERTICES INSTANCES INDICES INDEXED_INSTANCES
 *   glDrawArraysInstanced(GL_TRIANGLES, 0, VERTICES, INSTANCES), then
 *   glDrawElementsInstanced(GL_TRIANGLES, INDICES, GL_UNSIGNED_INT, 0,
 *   INDEXED_INSTANCES) with indices 0, 1, 2, ... in an element buffer.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gl_fixture.h"

static const char *const VERTEX_SHADER = "#version 130\n"
                                         "void main()\n"
                                         "{\n"
                                         "    float x = float(gl_VertexID % 7) / 3.5 - 1.0;\n"
                                         "    float y = float(gl_VertexID / 7) / 3.5 - 1.0;\n"
                                         "    gl_Position = vec4(x, y, 0.0, 1.0);\n"
                                         "}\n";
static const char *const FRAGMENT_SHADER = "#version 130\n"
                                           "out vec4 color;\n"
                                           "void main() { color = vec4(1.0); }\n";

static GLuint compile(GLenum type, const char *source)
{
    GLuint shader = glCreateShader(type);
    glShaderSource(shader, 1, &source, NULL);
    glCompileShader(shader);
    GLint ok = GL_FALSE;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    return ok ? shader : 0;
}

static GLuint build_program(void)
{
    GLuint vertex = compile(GL_VERTEX_SHADER, VERTEX_SHADER);
    GLuint fragment = compile(GL_FRAGMENT_SHADER, FRAGMENT_SHADER);
    if (!vertex || !fragment)
        return 0;
    GLuint program = glCreateProgram();
    glAttachShader(program, vertex);
    glAttachShader(program, fragment);
    glLinkProgram(program);
    GLint ok = GL_FALSE;
    glGetProgramiv(program, GL_LINK_STATUS, &ok);
    return ok ? program : 0;
}

/* What the driver counts for one draw, as vk_workload measures its draws. */
static const GLenum STATISTICS[] = {GL_VERTICES_SUBMITTED_ARB, GL_PRIMITIVES_SUBMITTED_ARB,
                                    GL_VERTEX_SHADER_INVOCATIONS_ARB,
                                    GL_CLIPPING_INPUT_PRIMITIVES_ARB};
enum { STATISTIC_COUNT = sizeof(STATISTICS) / sizeof(STATISTICS[0]) };

typedef struct measurement {
    GLuint queries[STATISTIC_COUNT];
} measurement;

static measurement measure_begin(void)
{
    measurement m;
    glGenQueries(STATISTIC_COUNT, m.queries);
    for (int i = 0; i < STATISTIC_COUNT; i++)
        glBeginQuery(STATISTICS[i], m.queries[i]);
    return m;
}

static void measure_end_and_print(measurement *m, const char *api)
{
    GLuint64 values[STATISTIC_COUNT];
    for (int i = 0; i < STATISTIC_COUNT; i++)
        glEndQuery(STATISTICS[i]);
    for (int i = 0; i < STATISTIC_COUNT; i++)
        glGetQueryObjectui64v(m->queries[i], GL_QUERY_RESULT, &values[i]);
    glDeleteQueries(STATISTIC_COUNT, m->queries);
    printf("{\"api\":\"%s\",\"ia_vertices\":%llu,\"ia_primitives\":%llu,"
           "\"vs_invocations\":%llu,\"clipper_invocations\":%llu}\n",
           api, (unsigned long long)values[0], (unsigned long long)values[1],
           (unsigned long long)values[2], (unsigned long long)values[3]);
}

static GLuint index_buffer(GLsizei count)
{
    GLuint *indices = malloc(sizeof(*indices) * (size_t)count);
    if (!indices)
        return 0;
    for (GLsizei i = 0; i < count; i++)
        indices[i] = (GLuint)i;
    GLuint buffer;
    glGenBuffers(1, &buffer);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, buffer);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)(sizeof(*indices) * (size_t)count), indices,
                 GL_STATIC_DRAW);
    free(indices);
    return buffer;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s VERTICES INSTANCES INDICES INDEXED_INSTANCES\n", argv[0]);
        return 2;
    }
    GLsizei vertices = atoi(argv[1]), instances = atoi(argv[2]);
    GLsizei indices = atoi(argv[3]), indexed_instances = atoi(argv[4]);
    struct gl_fixture fx;
    if (gl_fixture_open(&fx, EGL_OPENGL_API, 3) != 0) {
        fprintf(stderr, "gl_same_draws: no surfaceless GL context\n");
        return 1;
    }
    GLuint program = build_program();
    if (!program) {
        fprintf(stderr, "gl_same_draws: the shaders did not build\n");
        return 1;
    }
    glUseProgram(program);
    GLuint vertex_array;
    glGenVertexArrays(1, &vertex_array);
    glBindVertexArray(vertex_array);
    measurement m = measure_begin();
    glDrawArraysInstanced(GL_TRIANGLES, 0, vertices, instances);
    measure_end_and_print(&m, "glDrawArraysInstanced");
    GLuint elements = index_buffer(indices);
    m = measure_begin();
    glDrawElementsInstanced(GL_TRIANGLES, indices, GL_UNSIGNED_INT, NULL, indexed_instances);
    measure_end_and_print(&m, "glDrawElementsInstanced");
    glFinish();
    GLenum error = glGetError();
    glDeleteBuffers(1, &elements);
    glDeleteVertexArrays(1, &vertex_array);
    glDeleteProgram(program);
    gl_fixture_close(&fx);
    if (error != GL_NO_ERROR) {
        fprintf(stderr, "gl_same_draws: GL error 0x%x\n", error);
        return 1;
    }
    return 0;
}
