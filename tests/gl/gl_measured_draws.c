/*
 * A GL program that knows nothing of tally, for the driver backend's GL
 * test (test_gl_driver.c): on a surfaceless GL 4.5 context of llvmpipe it
 * makes a fixed list of commands, each one API call: a quad, an instanced
 * strip, an indexed list with shared vertices, a multi-draw of two, points
 * a geometry shader turns into quads, patches through tessellation, and a
 * compute dispatch.
 *
 * Usage: gl_measured_draws MODE
 *   truth  measures every command with llvmpipe's own eleven
 *          pipeline-statistics queries (GL_ARB_pipeline_statistics_query)
 *          and prints one JSON line per command ("records": the draws it
 *          makes, each a row of a report)
 *   plain  makes the same commands without a query of its own
 *   timed  the same, with a GL_TIMESTAMP of its own just before and just
 *          after each command, printed one JSON line per command as
 *          {"api":..., "records":N, "command_ns":T}
 *   own    the same, with queries of its own the driver backend must
 *          leave alone around the first command: GL_VERTICES_SUBMITTED_ARB
 *          (the target the shim measures too), GL_TIME_ELAPSED and two
 *          GL_TIMESTAMPs, printed as {"own_vertices":N,"own_span_ns":T}; it
 *          also keeps a buffer bound to GL_QUERY_BUFFER throughout and
 *          makes one invalid draw, and fails unless glGetError reports
 *          exactly that draw's GL_INVALID_ENUM and the buffer was never
 *          written
 *   grouped  the plain commands, the second and third inside a debug
 *          group (glPushDebugGroup), then one JSON line of the query
 *          objects someone else (the shim) issued in the context, by
 *          target, from llvmpipe's own state (glIsQuery is true only for a
 *          name a query was begun or written with; GL_QUERY_TARGET):
 *          {"others_ia_vertices":N,...,"others_timestamp":N,"others_other":N}
 *   collide  two strips of 4 vertices in one frame, the second inside a
 *          GL_PRIMITIVES_SUBMITTED_ARB query of the program's own, printed
 *          as {"own_primitives":N}; fails unless glGetError says nothing
 *          but, after the second, its GL_INVALID_OPERATION for ending a
 *          GL_VERTICES_SUBMITTED_ARB query it never began, and unless,
 *          after the first, GL_CURRENT_QUERY of that target is 0
 *   monitor  a GL_AMD_performance_monitor monitor of IaVertices alone
 *          around three strips (4 vertices, 4 vertices 3 times, 4 vertices)
 *          with a glFlush between the second and third, then what it read
 *          and the query objects someone else issued, as in grouped:
 *          {"monitor_ia_vertices":N} and the "others_" line
 *   gles   three draws on an OpenGL ES 3 context (no pipeline statistics;
 *          GL_EXT_disjoint_timer_query where it has it), with timestamp
 *          queries and GL_GPU_DISJOINT_EXT reads of its own and one
 *          GL_INVALID_ENUM (gles_draws)
 *   mixed  one strip of 4 vertices on a desktop GL 4 context, closed, then
 *          what gles does on an OpenGL ES 3 context, in the same process
 *          (the process's catalogue is the desktop context's, with
 *          statistics the ES context cannot measure)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl_fixture.h"

static const GLenum STATISTICS[] = {
    GL_VERTICES_SUBMITTED_ARB,
    GL_PRIMITIVES_SUBMITTED_ARB,
    GL_VERTEX_SHADER_INVOCATIONS_ARB,
    GL_GEOMETRY_SHADER_INVOCATIONS,
    GL_GEOMETRY_SHADER_PRIMITIVES_EMITTED_ARB,
    GL_CLIPPING_INPUT_PRIMITIVES_ARB,
    GL_CLIPPING_OUTPUT_PRIMITIVES_ARB,
    GL_FRAGMENT_SHADER_INVOCATIONS_ARB,
    GL_TESS_CONTROL_SHADER_PATCHES_ARB,
    GL_TESS_EVALUATION_SHADER_INVOCATIONS_ARB,
    GL_COMPUTE_SHADER_INVOCATIONS_ARB,
};
static const char *const FIELDS[] = {
    "ia_vertices",   "ia_primitives",       "vs_invocations",     "gs_invocations",
    "gs_primitives", "clipper_invocations", "clipper_primitives", "fs_invocations",
    "tcs_patches",   "tes_invocations",     "cs_invocations",
};
enum { STATISTIC_COUNT = sizeof(STATISTICS) / sizeof(STATISTICS[0]) };

/* Vertices from their index alone: a grid over the viewport. */
static const char *const VERTEX =
    "#version 450\n"
    "void main() {\n"
    "    vec2 corner = vec2(gl_VertexID & 1, (gl_VertexID >> 1) & 1);\n"
    "    float shift = float(gl_VertexID / 4) * 0.1 + float(gl_InstanceID) * 0.05;\n"
    "    gl_Position = vec4(corner * 1.6 - 0.9 + shift, 0.0, 1.0);\n"
    "}\n";
static const char *const FRAGMENT = "#version 450\n"
                                    "out vec4 color;\n"
                                    "void main() { color = vec4(1.0); }\n";
static const char *const POINT_VERTEX =
    "#version 450\n"
    "void main() { gl_Position = vec4(float(gl_VertexID) * 0.3 - 0.8, 0.0, 0.0, 1.0); }\n";
static const char *const GEOMETRY =
    "#version 450\n"
    "layout(points) in;\n"
    "layout(triangle_strip, max_vertices = 4) out;\n"
    "void main() {\n"
    "    for (int i = 0; i < 4; i++) {\n"
    "        gl_Position = gl_in[0].gl_Position + vec4(i & 1, i >> 1, 0, 0) * 0.2;\n"
    "        EmitVertex();\n"
    "    }\n"
    "}\n";
static const char *const CONTROL = "#version 450\n"
                                   "layout(vertices = 3) out;\n"
                                   "void main() {\n"
                                   "    gl_out[gl_InvocationID].gl_Position =\n"
                                   "        gl_in[gl_InvocationID].gl_Position;\n"
                                   "    gl_TessLevelInner[0] = 2.0;\n"
                                   "    gl_TessLevelOuter[0] = 2.0;\n"
                                   "    gl_TessLevelOuter[1] = 3.0;\n"
                                   "    gl_TessLevelOuter[2] = 4.0;\n"
                                   "}\n";
static const char *const EVALUATION = "#version 450\n"
                                      "layout(triangles) in;\n"
                                      "void main() {\n"
                                      "    gl_Position = gl_TessCoord.x * gl_in[0].gl_Position +\n"
                                      "                  gl_TessCoord.y * gl_in[1].gl_Position +\n"
                                      "                  gl_TessCoord.z * gl_in[2].gl_Position;\n"
                                      "}\n";
static const char *const COMPUTE = "#version 450\n"
                                   "layout(local_size_x = 8, local_size_y = 4) in;\n"
                                   "layout(std430, binding = 0) buffer Out { uint o[]; };\n"
                                   "void main() { o[gl_LocalInvocationIndex] = 1u; }\n";

static GLuint program_of(int count, const GLenum *types, const char *const *sources)
{
    GLuint program = glCreateProgram();
    for (int i = 0; i < count; i++) {
        GLuint shader = glCreateShader(types[i]);
        glShaderSource(shader, 1, &sources[i], NULL);
        glCompileShader(shader);
        GLint ok = GL_FALSE;
        glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
        if (!ok) {
            char log[1024] = "";
            glGetShaderInfoLog(shader, sizeof(log), NULL, log);
            fprintf(stderr, "gl_measured_draws: shader %d: %s\n", i, log);
            exit(1);
        }
        glAttachShader(program, shader);
        glDeleteShader(shader);
    }
    glLinkProgram(program);
    GLint ok = GL_FALSE;
    glGetProgramiv(program, GL_LINK_STATUS, &ok);
    if (!ok) {
        fprintf(stderr, "gl_measured_draws: a program did not link\n");
        exit(1);
    }
    return program;
}

typedef enum mode { TRUTH, PLAIN, OWN, GLES, TIMED, GROUPED, COLLIDE, MONITOR, MIXED } mode;

typedef struct measuring {
    mode mode;
    GLuint queries[STATISTIC_COUNT];
    GLuint stamps[2]; /* TIMED: before and after the command */
} measuring;

static void measure_begin(measuring *m)
{
    if (m->mode == TIMED)
        glQueryCounter(m->stamps[0], GL_TIMESTAMP);
    if (m->mode != TRUTH)
        return;
    for (int i = 0; i < STATISTIC_COUNT; i++)
        glBeginQuery(STATISTICS[i], m->queries[i]);
}

/* records: the draws the call makes (a report row each). */
static void measure_end(measuring *m, const char *api, int records)
{
    if (m->mode == TIMED) {
        GLuint64 before = 0, after = 0;
        glQueryCounter(m->stamps[1], GL_TIMESTAMP);
        glGetQueryObjectui64v(m->stamps[0], GL_QUERY_RESULT, &before);
        glGetQueryObjectui64v(m->stamps[1], GL_QUERY_RESULT, &after);
        printf("{\"api\":\"%s\",\"records\":%d,\"command_ns\":%llu}\n", api, records,
               (unsigned long long)(after - before));
    }
    if (m->mode != TRUTH)
        return;
    GLuint64 values[STATISTIC_COUNT];
    for (int i = 0; i < STATISTIC_COUNT; i++)
        glEndQuery(STATISTICS[i]);
    for (int i = 0; i < STATISTIC_COUNT; i++)
        glGetQueryObjectui64v(m->queries[i], GL_QUERY_RESULT, &values[i]);
    printf("{\"api\":\"%s\",\"records\":%d", api, records);
    for (int i = 0; i < STATISTIC_COUNT; i++)
        printf(",\"%s\":%llu", FIELDS[i], (unsigned long long)values[i]);
    printf("}\n");
}

/* GL_EXT_disjoint_timer_query's names (GLES3/gl3.h has none of them). */
#define GLES_TIMESTAMP_EXT 0x8E28
#define GLES_GPU_DISJOINT_EXT 0x8FBB
typedef void (*query_counter_fn)(GLuint id, GLenum target);
typedef void (*query_result_fn)(GLuint id, GLenum pname, GLuint64 *value);

/* Three draws on an OpenGL ES 3 context; where it has
 * GL_EXT_disjoint_timer_query, the program's own GL_TIMESTAMP_EXT queries
 * around the first and its GL_GPU_DISJOINT_EXT reads, printed as
 * {"own_span_ns":T,"disjoint":D}; a deliberate GL_INVALID_ENUM must be the
 * only error glGetError reports. */
static int gles_draws(void)
{
    struct gl_fixture fx;
    /* As EGL programs do before they make a context: list the display's
     * extensions (where tally's EGL door adds its own). */
    EGLDisplay display =
        eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (display != EGL_NO_DISPLAY && eglInitialize(display, NULL, NULL))
        eglQueryString(display, EGL_EXTENSIONS);
    if (gl_fixture_open(&fx, EGL_OPENGL_ES_API, 3) != 0) {
        fprintf(stderr, "gl_measured_draws: no surfaceless GLES 3 context\n");
        return 1;
    }
    GLenum types[] = {GL_VERTEX_SHADER, GL_FRAGMENT_SHADER};
    const char *sources[] = {
        "#version 300 es\n"
        "void main() { gl_Position = vec4(gl_VertexID & 1, gl_VertexID >> 1, 0.0, 1.0); }\n",
        "#version 300 es\n"
        "out highp vec4 color;\n"
        "void main() { color = vec4(1.0); }\n"};
    glUseProgram(program_of(2, types, sources));
    const char *extensions = (const char *)glGetString(GL_EXTENSIONS);
    bool timer = extensions && strstr(extensions, "GL_EXT_disjoint_timer_query");
    query_counter_fn query_counter = timer ? (query_counter_fn)gl_proc("glQueryCounterEXT") : NULL;
    query_result_fn query_result =
        timer ? (query_result_fn)gl_proc("glGetQueryObjectui64vEXT") : NULL;
    GLuint own[2] = {0, 0};
    GLint disjoint = 0;
    if (query_counter) {
        glGetIntegerv(GLES_GPU_DISJOINT_EXT, &disjoint); /* clears it, as the extension asks */
        glGenQueries(2, own);
        query_counter(own[0], GLES_TIMESTAMP_EXT);
    }
    glDrawArrays(GL_TRIANGLES, 0, 3);
    if (query_counter)
        query_counter(own[1], GLES_TIMESTAMP_EXT);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    glDrawArrays(0x7fff, 0, 3); /* not a primitive: GL_INVALID_ENUM, and no draw */
    glDrawArraysInstanced(GL_TRIANGLES, 0, 3, 2);
    glFinish();
    int status = 0;
    if (query_counter) {
        GLuint64 begin = 0, end = 0;
        query_result(own[0], GL_QUERY_RESULT, &begin);
        query_result(own[1], GL_QUERY_RESULT, &end);
        GLint64 disjoint64 = 0;
        glGetIntegerv(GLES_GPU_DISJOINT_EXT, &disjoint);
        glGetInteger64v(GLES_GPU_DISJOINT_EXT, &disjoint64);
        printf("{\"own_span_ns\":%lld,\"disjoint\":%lld}\n", (long long)(end - begin),
               (long long)(disjoint | disjoint64));
    }
    GLenum first = glGetError(), second = glGetError();
    if (first != GL_INVALID_ENUM || second != GL_NO_ERROR) {
        fprintf(stderr, "gl_measured_draws: GL errors 0x%x then 0x%x\n", first, second);
        status = 1;
    }
    gl_fixture_close(&fx);
    return status;
}

/* Query names below this are scanned for the shim's. */
enum { SCANNED_QUERY_NAMES = 4096 };

/* Prints how many query objects other than the program's own (`ours`,
 * count of them) llvmpipe holds, by target. */
static void print_others_queries(const GLuint *ours, int count)
{
    unsigned long long by_statistic[STATISTIC_COUNT] = {0}, timestamps = 0, other = 0;
    for (GLuint name = 1; name < SCANNED_QUERY_NAMES; name++) {
        bool own = false;
        for (int i = 0; i < count; i++)
            own |= ours[i] == name;
        if (own || !glIsQuery(name))
            continue;
        GLint target = 0;
        glGetQueryObjectiv(name, GL_QUERY_TARGET, &target);
        bool found = false;
        for (int i = 0; i < STATISTIC_COUNT; i++)
            if ((GLenum)target == STATISTICS[i]) {
                by_statistic[i]++;
                found = true;
            }
        if (!found && (GLenum)target == GL_TIMESTAMP)
            timestamps++;
        else if (!found)
            other++;
    }
    printf("{");
    for (int i = 0; i < STATISTIC_COUNT; i++)
        printf("\"others_%s\":%llu,", FIELDS[i], by_statistic[i]);
    printf("\"others_timestamp\":%llu,\"others_other\":%llu}\n", timestamps, other);
}

/* The AMD monitor's group and counter named `name`; false if none. */
static bool amd_counter(const char *name, GLuint *group, GLuint *counter)
{
    PFNGLGETPERFMONITORGROUPSAMDPROC groups = gl_proc("glGetPerfMonitorGroupsAMD");
    PFNGLGETPERFMONITORCOUNTERSAMDPROC counters = gl_proc("glGetPerfMonitorCountersAMD");
    PFNGLGETPERFMONITORCOUNTERSTRINGAMDPROC string = gl_proc("glGetPerfMonitorCounterStringAMD");
    GLint group_count = 0;
    GLuint group_ids[64];
    if (!groups || !counters || !string)
        return false;
    groups(&group_count, 64, group_ids);
    for (GLint g = 0; g < group_count && g < 64; g++) {
        GLint count = 0, max_active = 0;
        GLuint ids[256];
        counters(group_ids[g], &count, &max_active, 256, ids);
        for (GLint c = 0; c < count && c < 256; c++) {
            char text[128] = "";
            string(group_ids[g], ids[c], sizeof(text), NULL, text);
            if (!strcmp(text, name)) {
                *group = group_ids[g];
                *counter = ids[c];
                return true;
            }
        }
    }
    return false;
}

/* MONITOR: an AMD monitor of IaVertices alone around three strips. */
static int monitor_draws(void)
{
    PFNGLGENPERFMONITORSAMDPROC gen = gl_proc("glGenPerfMonitorsAMD");
    PFNGLSELECTPERFMONITORCOUNTERSAMDPROC select = gl_proc("glSelectPerfMonitorCountersAMD");
    PFNGLBEGINPERFMONITORAMDPROC begin = gl_proc("glBeginPerfMonitorAMD");
    PFNGLENDPERFMONITORAMDPROC end = gl_proc("glEndPerfMonitorAMD");
    PFNGLGETPERFMONITORCOUNTERDATAAMDPROC data = gl_proc("glGetPerfMonitorCounterDataAMD");
    GLuint group = 0, counter = 0, monitor = 0;
    if (!gen || !select || !begin || !end || !data ||
        !amd_counter("IaVertices", &group, &counter)) {
        fprintf(stderr, "gl_measured_draws: no GL_AMD_performance_monitor IaVertices\n");
        return 1;
    }
    gen(1, &monitor);
    select(monitor, GL_TRUE, group, 1, &counter);
    begin(monitor);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, 3);
    glFlush();
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    end(monitor);
    glFinish();
    GLuint result[4] = {0, 0, 0, 0}; /* group, counter, a 64-bit value */
    GLsizei written = 0;
    data(monitor, GL_PERFMON_RESULT_AMD, sizeof(result), result, &written);
    GLuint64 value = 0;
    memcpy(&value, &result[2], sizeof(value));
    printf("{\"monitor_ia_vertices\":%llu}\n",
           written == sizeof(result) ? (unsigned long long)value : ~0ull);
    return 0;
}

/* MIXED's first part: one strip of 4 vertices on a desktop GL 4 context,
 * finished and closed. */
static int desktop_strip(void)
{
    struct gl_fixture fx;
    if (gl_fixture_open(&fx, EGL_OPENGL_API, 4) != 0) {
        fprintf(stderr, "gl_measured_draws: no surfaceless GL 4 context\n");
        return 1;
    }
    GLenum types[] = {GL_VERTEX_SHADER, GL_FRAGMENT_SHADER};
    const char *sources[] = {VERTEX, FRAGMENT};
    glUseProgram(program_of(2, types, sources));
    GLuint vertex_array;
    glGenVertexArrays(1, &vertex_array);
    glBindVertexArray(vertex_array);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    glFinish();
    gl_fixture_close(&fx);
    return 0;
}

/* Bytes of the buffer kept bound to GL_QUERY_BUFFER in "own" mode. */
enum { QUERY_BUFFER_BYTES = 256, QUERY_BUFFER_FILL = 0xab };

int main(int argc, char **argv)
{
    mode mode = argc == 2 && !strcmp(argv[1], "truth")     ? TRUTH
                : argc == 2 && !strcmp(argv[1], "own")     ? OWN
                : argc == 2 && !strcmp(argv[1], "gles")    ? GLES
                : argc == 2 && !strcmp(argv[1], "timed")   ? TIMED
                : argc == 2 && !strcmp(argv[1], "grouped") ? GROUPED
                : argc == 2 && !strcmp(argv[1], "collide") ? COLLIDE
                : argc == 2 && !strcmp(argv[1], "monitor") ? MONITOR
                : argc == 2 && !strcmp(argv[1], "mixed")   ? MIXED
                                                           : PLAIN;
    if (argc != 2 || (mode == PLAIN && strcmp(argv[1], "plain"))) {
        fprintf(stderr, "usage: %s truth|plain|own|gles|timed|grouped|collide|monitor|mixed\n",
                argv[0]);
        return 2;
    }
    struct gl_fixture fx;
    if (mode == GLES)
        return gles_draws();
    if (mode == MIXED)
        return desktop_strip() || gles_draws();
    if (gl_fixture_open(&fx, EGL_OPENGL_API, 4) != 0) {
        fprintf(stderr, "gl_measured_draws: no surfaceless GL 4 context\n");
        return 1;
    }
    measuring m = {.mode = mode};
    glGenQueries(STATISTIC_COUNT, m.queries);
    glGenQueries(2, m.stamps);
    GLuint own[4], query_buffer = 0;
    glGenQueries(4, own);
    if (mode == OWN) {
        unsigned char fill[QUERY_BUFFER_BYTES];
        memset(fill, QUERY_BUFFER_FILL, sizeof(fill));
        glGenBuffers(1, &query_buffer);
        glBindBuffer(GL_QUERY_BUFFER, query_buffer);
        glBufferData(GL_QUERY_BUFFER, sizeof(fill), fill, GL_STATIC_DRAW);
    }

    GLenum vf[] = {GL_VERTEX_SHADER, GL_FRAGMENT_SHADER};
    const char *vf_sources[] = {VERTEX, FRAGMENT};
    GLuint plain = program_of(2, vf, vf_sources);
    GLenum vgf[] = {GL_VERTEX_SHADER, GL_GEOMETRY_SHADER, GL_FRAGMENT_SHADER};
    const char *vgf_sources[] = {POINT_VERTEX, GEOMETRY, FRAGMENT};
    GLuint geometry = program_of(3, vgf, vgf_sources);
    GLenum tess[] = {GL_VERTEX_SHADER, GL_TESS_CONTROL_SHADER, GL_TESS_EVALUATION_SHADER,
                     GL_FRAGMENT_SHADER};
    const char *tess_sources[] = {VERTEX, CONTROL, EVALUATION, FRAGMENT};
    GLuint tessellated = program_of(4, tess, tess_sources);
    GLenum c[] = {GL_COMPUTE_SHADER};
    const char *c_sources[] = {COMPUTE};
    GLuint compute = program_of(1, c, c_sources);

    GLuint vertex_array, elements, storage;
    glGenVertexArrays(1, &vertex_array);
    glBindVertexArray(vertex_array);
    static const GLuint indices[] = {0, 1, 2, 2, 1, 3, 4, 5, 6, 6, 5, 7};
    glGenBuffers(1, &elements);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, elements);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, sizeof(indices), indices, GL_STATIC_DRAW);
    glGenBuffers(1, &storage);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, storage);
    glBufferData(GL_SHADER_STORAGE_BUFFER, 4096, NULL, GL_DYNAMIC_DRAW);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, storage);

    glUseProgram(plain);
    if (mode == MONITOR) {
        int failed = monitor_draws();
        print_others_queries(own, 4);
        gl_fixture_close(&fx);
        return failed;
    }
    if (mode == COLLIDE) {
        /* A measurement the shim began at the first draw may still be open
         * when the program begins its own query of the same target. */
        GLuint64 primitives = 0;
        GLint current = 0;
        glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
        /* The program has no query active: GL says so. */
        glGetQueryiv(GL_VERTICES_SUBMITTED_ARB, GL_CURRENT_QUERY, &current);
        if (current != 0) {
            fprintf(stderr, "gl_measured_draws: a query %d is active\n", current);
            return 1;
        }
        glBeginQuery(GL_PRIMITIVES_SUBMITTED_ARB, own[0]);
        glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
        glEndQuery(GL_PRIMITIVES_SUBMITTED_ARB);
        /* Ending a query it never began is the program's error to see. */
        glEndQuery(GL_VERTICES_SUBMITTED_ARB);
        GLenum stray = glGetError();
        if (stray != GL_INVALID_OPERATION) {
            fprintf(stderr, "gl_measured_draws: a stray glEndQuery gave 0x%x\n", stray);
            return 1;
        }
        glFinish();
        glGetQueryObjectui64v(own[0], GL_QUERY_RESULT, &primitives);
        printf("{\"own_primitives\":%llu}\n", (unsigned long long)primitives);
        GLenum error = glGetError();
        if (error != GL_NO_ERROR)
            fprintf(stderr, "gl_measured_draws: GL error 0x%x\n", error);
        gl_fixture_close(&fx);
        return error != GL_NO_ERROR;
    }
    if (mode == OWN) {
        glBeginQuery(GL_VERTICES_SUBMITTED_ARB, own[0]);
        glBeginQuery(GL_TIME_ELAPSED, own[1]);
        glQueryCounter(own[2], GL_TIMESTAMP);
    }
    measure_begin(&m);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    measure_end(&m, "glDrawArrays", 1);
    if (mode == OWN) {
        glQueryCounter(own[3], GL_TIMESTAMP);
        glEndQuery(GL_TIME_ELAPSED);
        glEndQuery(GL_VERTICES_SUBMITTED_ARB);
        glDrawArrays(0x7fff, 0, 3); /* no such mode: GL_INVALID_ENUM, nothing drawn */
        GLenum error = glGetError();
        if (error != GL_INVALID_ENUM || glGetError() != GL_NO_ERROR) {
            fprintf(stderr, "gl_measured_draws: glGetError said 0x%x for an invalid draw\n", error);
            return 1;
        }
    }
    glFlush();
    if (mode == GROUPED)
        glPushDebugGroup(GL_DEBUG_SOURCE_APPLICATION, 1, -1, "pair");
    measure_begin(&m);
    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, 3);
    measure_end(&m, "glDrawArraysInstanced", 1);
    measure_begin(&m);
    glDrawElements(GL_TRIANGLES, 12, GL_UNSIGNED_INT, NULL);
    measure_end(&m, "glDrawElements", 1);
    if (mode == GROUPED)
        glPopDebugGroup();
    static const GLint firsts[] = {0, 4};
    static const GLsizei counts[] = {3, 6};
    measure_begin(&m);
    glMultiDrawArrays(GL_TRIANGLES, firsts, counts, 2);
    measure_end(&m, "glMultiDrawArrays", 2);
    glFlush();
    glUseProgram(geometry);
    measure_begin(&m);
    glDrawArrays(GL_POINTS, 0, 5);
    measure_end(&m, "glDrawArrays", 1);
    glUseProgram(tessellated);
    glPatchParameteri(GL_PATCH_VERTICES, 3);
    measure_begin(&m);
    glDrawArrays(GL_PATCHES, 0, 6);
    measure_end(&m, "glDrawArrays", 1);
    glUseProgram(compute);
    measure_begin(&m);
    glDispatchCompute(4, 2, 1);
    measure_end(&m, "glDispatchCompute", 1);
    glFinish();

    int status = 0;
    if (mode == OWN) {
        GLuint64 vertices = 0, elapsed = 0, begin = 0, end = 0;
        GLint bound = 0;
        glGetIntegerv(GL_QUERY_BUFFER_BINDING, &bound);
        glBindBuffer(GL_QUERY_BUFFER, 0);
        glGetQueryObjectui64v(own[0], GL_QUERY_RESULT, &vertices);
        glGetQueryObjectui64v(own[1], GL_QUERY_RESULT, &elapsed); /* llvmpipe's is not a span */
        glGetQueryObjectui64v(own[2], GL_QUERY_RESULT, &begin);
        glGetQueryObjectui64v(own[3], GL_QUERY_RESULT, &end);
        printf("{\"own_vertices\":%llu,\"own_span_ns\":%lld}\n", (unsigned long long)vertices,
               (long long)(end - begin));
        unsigned char seen[QUERY_BUFFER_BYTES];
        glBindBuffer(GL_COPY_READ_BUFFER, query_buffer);
        glGetBufferSubData(GL_COPY_READ_BUFFER, 0, sizeof(seen), seen);
        for (size_t i = 0; i < sizeof(seen); i++)
            if (seen[i] != QUERY_BUFFER_FILL)
                status = 1;
        if (status || (GLuint)bound != query_buffer)
            fprintf(stderr, "gl_measured_draws: the query buffer was written or unbound\n");
        status |= (GLuint)bound != query_buffer;
    }
    if (mode == GROUPED) {
        GLuint ours[STATISTIC_COUNT + 6];
        memcpy(ours, m.queries, sizeof(m.queries));
        memcpy(ours + STATISTIC_COUNT, m.stamps, sizeof(m.stamps));
        memcpy(ours + STATISTIC_COUNT + 2, own, sizeof(own));
        print_others_queries(ours, STATISTIC_COUNT + 6);
    }
    GLenum error = glGetError();
    if (error != GL_NO_ERROR) {
        fprintf(stderr, "gl_measured_draws: GL error 0x%x\n", error);
        status = 1;
    }
    gl_fixture_close(&fx);
    return status;
}
