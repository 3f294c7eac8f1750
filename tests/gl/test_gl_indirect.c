/* Multi-draw indirect: the shim reads every record of a call at its stride
 * (in one read of the buffer) and counts each sub-draw. The counts are
 * checked against sums computed by hand from the records and against
 * llvmpipe's own GL_ARB_pipeline_statistics_query over the same call. */
#include "gl_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "tally/tally.h"

static PFNGLGENPERFMONITORSAMDPROC GenMonitors;
static PFNGLDELETEPERFMONITORSAMDPROC DeleteMonitors;
static PFNGLSELECTPERFMONITORCOUNTERSAMDPROC SelectCounters;
static PFNGLBEGINPERFMONITORAMDPROC BeginMonitor;
static PFNGLENDPERFMONITORAMDPROC EndMonitor;
static PFNGLGETPERFMONITORCOUNTERDATAAMDPROC GetCounterData;

/* Places vertices from their index alone: no vertex attributes. */
static const char *const vertex_shader = "#version 130\n"
                                         "void main() {\n"
                                         "  float x = float(gl_VertexID % 7) / 3.5 - 1.0;\n"
                                         "  float y = float(gl_VertexID / 7) / 3.5 - 1.0;\n"
                                         "  gl_Position = vec4(x, y, 0.0, 1.0);\n"
                                         "}\n";
static const char *const fragment_shader = "#version 130\n"
                                           "out vec4 color;\n"
                                           "void main() { color = vec4(1.0); }\n";

static GLuint program, vertex_array;

static int setup(void **state)
{
    if (gl_fixture_setup(state) != 0)
        return -1;
    GenMonitors = gl_proc("glGenPerfMonitorsAMD");
    DeleteMonitors = gl_proc("glDeletePerfMonitorsAMD");
    SelectCounters = gl_proc("glSelectPerfMonitorCountersAMD");
    BeginMonitor = gl_proc("glBeginPerfMonitorAMD");
    EndMonitor = gl_proc("glEndPerfMonitorAMD");
    GetCounterData = gl_proc("glGetPerfMonitorCounterDataAMD");
    program =
        gl_build_program(GL_VERTEX_SHADER, vertex_shader, GL_FRAGMENT_SHADER, fragment_shader);
    glUseProgram(program);
    glGenVertexArrays(1, &vertex_array);
    glBindVertexArray(vertex_array);
    return gl_drain_errors() == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    glBindVertexArray(0);
    glDeleteVertexArrays(1, &vertex_array);
    glUseProgram(0);
    glDeleteProgram(program);
    return gl_fixture_teardown(state);
}

/* What one scope counted: tally's counters and the driver's statistics. */
typedef struct counts {
    uint64_t draws, vertices, primitives;
} counts;

static const char *const symbols[] = {"DrawCalls", "IaVertices", "IaPrimitives"};
enum { SYMBOLS = 3 };
static const GLenum statistics[] = {GL_VERTICES_SUBMITTED_ARB, GL_PRIMITIVES_SUBMITTED_ARB};
enum { STATISTICS = 2 };

typedef struct measurement {
    GLuint monitor;
    GLuint group[SYMBOLS], counter[SYMBOLS];
    GLuint queries[STATISTICS];
} measurement;

/* The AMD group and counter ids of a catalogue symbol. */
static void ids_of(const char *symbol, GLuint *group, GLuint *counter)
{
    const tally_catalogue *cat = NULL;
    assert_int_equal(tally_backend_catalogue("simgpu", &cat), TALLY_OK);
    uint32_t index;
    assert_int_equal(tally_catalogue_find(cat, symbol, &index), TALLY_OK);
    const tally_counter_info *info = tally_catalogue_counter(cat, index);
    const tally_group_info *g = tally_catalogue_group(cat, info->group);
    *group = info->group;
    for (*counter = 0; g->counters[*counter] != index; (*counter)++)
        ;
}

static void measure_begin(measurement *m)
{
    GenMonitors(1, &m->monitor);
    for (int i = 0; i < SYMBOLS; i++) {
        ids_of(symbols[i], &m->group[i], &m->counter[i]);
        SelectCounters(m->monitor, GL_TRUE, m->group[i], 1, &m->counter[i]);
    }
    glGenQueries(STATISTICS, m->queries);
    BeginMonitor(m->monitor);
    for (int i = 0; i < STATISTICS; i++)
        glBeginQuery(statistics[i], m->queries[i]);
}

static GLuint available(GLuint monitor)
{
    GLuint value = 0;
    GetCounterData(monitor, GL_PERFMON_RESULT_AVAILABLE_AMD, sizeof(value), &value, NULL);
    return value;
}

static uint64_t counter_value(const measurement *m, const GLuint *data, GLsizei bytes, int symbol)
{
    /* Records: group, counter, then a 64-bit value for these counters. */
    for (GLsizei at = 0; at + 16 <= bytes; at += 16) {
        const GLuint *record = data + at / 4;
        if (record[0] == m->group[symbol] && record[1] == m->counter[symbol]) {
            uint64_t value;
            memcpy(&value, record + 2, sizeof(value));
            return value;
        }
    }
    fail_msg("no result for %s", symbols[symbol]);
    return 0;
}

static void measure_end(measurement *m, counts *tally, counts *driver)
{
    for (int i = 0; i < STATISTICS; i++)
        glEndQuery(statistics[i]);
    EndMonitor(m->monitor);
    glFlush();
    for (int i = 0; i < 10000 && !available(m->monitor); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    assert_int_equal(available(m->monitor), 1);
    GLuint data[SYMBOLS * 4];
    GLsizei written = 0;
    GetCounterData(m->monitor, GL_PERFMON_RESULT_AMD, sizeof(data), data, &written);
    assert_int_equal(written, sizeof(data));
    tally->draws = counter_value(m, data, written, 0);
    tally->vertices = counter_value(m, data, written, 1);
    tally->primitives = counter_value(m, data, written, 2);
    GLuint64 values[STATISTICS];
    for (int i = 0; i < STATISTICS; i++)
        glGetQueryObjectui64v(m->queries[i], GL_QUERY_RESULT, &values[i]);
    driver->vertices = values[0];
    driver->primitives = values[1];
    glDeleteQueries(STATISTICS, m->queries);
    DeleteMonitors(1, &m->monitor);
}

/* Checks a scope against the hand-computed sums and the driver. */
static void assert_counts(const counts *tally, const counts *driver, uint64_t draws,
                          uint64_t vertices, uint64_t triangles)
{
    print_message("tally: %llu draws, %llu vertices, %llu primitives; llvmpipe: %llu vertices, "
                  "%llu primitives\n",
                  (unsigned long long)tally->draws, (unsigned long long)tally->vertices,
                  (unsigned long long)tally->primitives, (unsigned long long)driver->vertices,
                  (unsigned long long)driver->primitives);
    assert_int_equal(tally->draws, draws);
    assert_int_equal(tally->vertices, vertices);
    assert_int_equal(tally->primitives, triangles);
    assert_int_equal(driver->vertices, vertices);
    assert_int_equal(driver->primitives, triangles);
}

/* DrawArraysIndirectCommand, then padding up to the stride. */
enum { ARRAYS_STRIDE = 32, ELEMENTS_STRIDE = 28, PAD = 0xdeadbeef };

static GLuint indirect_buffer(const void *data, size_t size)
{
    GLuint buffer;
    glGenBuffers(1, &buffer);
    glBindBuffer(GL_DRAW_INDIRECT_BUFFER, buffer);
    glBufferData(GL_DRAW_INDIRECT_BUFFER, (GLsizeiptr)size, data, GL_STATIC_DRAW);
    return buffer;
}

/* Four triangle-list sub-draws 32 bytes apart from offset 16; the buffer
 * ends with the last record, without the stride's padding (GL needs only
 * the records inside the buffer). */
static void arrays_records_are_read_at_their_stride(void **state)
{
    (void)state;
    static const GLuint records[4 + 3 * 8 + 4] = {
        PAD, PAD, PAD, PAD,                     /* offset 0..15: not a record */
        3,   1,   0,   0,   PAD, PAD, PAD, PAD, /* 3 vertices x 1 */
        6,   2,   3,   0,   PAD, PAD, PAD, PAD, /* 6 x 2 */
        9,   1,   0,   0,   PAD, PAD, PAD, PAD, /* 9 x 1 */
        12,  3,   1,   0,                       /* 12 x 3, no padding after */
    };
    GLuint buffer = indirect_buffer(records, sizeof(records));
    measurement m;
    measure_begin(&m);
    glMultiDrawArraysIndirect(GL_TRIANGLES, (const void *)16, 4, ARRAYS_STRIDE);
    counts tally, driver;
    measure_end(&m, &tally, &driver);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    assert_counts(&tally, &driver, 4, 3 + 12 + 9 + 36, 1 + 4 + 3 + 12);
    glDeleteBuffers(1, &buffer);
}

/* Three indexed sub-draws 28 bytes apart (DrawElementsIndirectCommand is
 * 20), with first indices and a base vertex. */
static void elements_records_are_read_at_their_stride(void **state)
{
    (void)state;
    GLuint indices[32];
    for (GLuint i = 0; i < 32; i++)
        indices[i] = i;
    GLuint elements;
    glGenBuffers(1, &elements);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, elements);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, sizeof(indices), indices, GL_STATIC_DRAW);
    static const GLuint records[3 * 7] = {
        3, 1, 0, 0, 0, PAD, PAD, /* 3 indices x 1 */
        6, 2, 3, 0, 0, PAD, PAD, /* 6 x 2 */
        9, 1, 2, 1, 0, PAD, PAD, /* 9 x 1, from index 2, base vertex 1 */
    };
    GLuint buffer = indirect_buffer(records, sizeof(records));
    measurement m;
    measure_begin(&m);
    glMultiDrawElementsIndirect(GL_TRIANGLES, GL_UNSIGNED_INT, NULL, 3, ELEMENTS_STRIDE);
    counts tally, driver;
    measure_end(&m, &tally, &driver);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    assert_counts(&tally, &driver, 3, 3 + 12 + 9, 1 + 4 + 3);
    glDeleteBuffers(1, &buffer);
    glDeleteBuffers(1, &elements);
}

/* More records than the shim reads onto its stack (1 KiB): sub-draw i
 * draws 3 x (i % 5 + 1) vertices, i % 3 + 1 instances. */
static void a_long_multi_draw_counts_every_sub_draw(void **state)
{
    (void)state;
    enum { DRAWS = 200 };
    static GLuint records[DRAWS * 8];
    uint64_t vertices = 0, triangles = 0;
    for (GLuint i = 0; i < DRAWS; i++) {
        GLuint count = 3 * (i % 5 + 1), instances = i % 3 + 1;
        GLuint *r = &records[i * 8];
        r[0] = count;
        r[1] = instances;
        r[2] = i % 7;
        r[3] = 0;
        for (int p = 4; p < 8; p++)
            r[p] = PAD;
        vertices += (uint64_t)count * instances;
        triangles += (uint64_t)count / 3 * instances;
    }
    GLuint buffer = indirect_buffer(records, sizeof(records));
    measurement m;
    measure_begin(&m);
    glMultiDrawArraysIndirect(GL_TRIANGLES, NULL, DRAWS, ARRAYS_STRIDE);
    counts tally, driver;
    measure_end(&m, &tally, &driver);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    assert_counts(&tally, &driver, DRAWS, vertices, triangles);
    glDeleteBuffers(1, &buffer);
}

static bool compatibility_context(void)
{
    GLint mask = 0;
    glGetIntegerv(GL_CONTEXT_PROFILE_MASK, &mask);
    return (mask & GL_CONTEXT_COMPATIBILITY_PROFILE_BIT) != 0;
}

/* A compatibility context with no indirect buffer bound takes the records
 * from client memory, at their stride all the same. */
static void client_memory_records_are_read_at_their_stride(void **state)
{
    (void)state;
    if (!compatibility_context())
        skip();
    glBindBuffer(GL_DRAW_INDIRECT_BUFFER, 0);
    static const GLuint records[3 * 8] = {
        6, 1, 0, 0, PAD, PAD, PAD, PAD, /* 6 x 1 */
        3, 4, 0, 0, PAD, PAD, PAD, PAD, /* 3 x 4 */
        9, 2, 0, 0, PAD, PAD, PAD, PAD, /* 9 x 2 */
    };
    measurement m;
    measure_begin(&m);
    glMultiDrawArraysIndirect(GL_TRIANGLES, records, 3, ARRAYS_STRIDE);
    counts tally, driver;
    measure_end(&m, &tally, &driver);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    assert_counts(&tally, &driver, 3, 6 + 12 + 18, 2 + 4 + 6);
}

/* Records running past the buffer: the driver refuses the call; the shim
 * counts nothing and leaves no error of its own. */
static void records_past_the_buffer_count_nothing(void **state)
{
    (void)state;
    static const GLuint records[16] = {3, 1, 0, 0, PAD, PAD, PAD, PAD,
                                       3, 1, 0, 0, PAD, PAD, PAD, PAD};
    GLuint buffer = indirect_buffer(records, sizeof(records));
    measurement m;
    measure_begin(&m);
    glMultiDrawArraysIndirect(GL_TRIANGLES, NULL, 3, ARRAYS_STRIDE);
    assert_int_equal(glGetError(), GL_INVALID_OPERATION);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    counts tally, driver;
    measure_end(&m, &tally, &driver);
    assert_counts(&tally, &driver, 0, 0, 0);
    glDeleteBuffers(1, &buffer);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arrays_records_are_read_at_their_stride),
        cmocka_unit_test(elements_records_are_read_at_their_stride),
        cmocka_unit_test(a_long_multi_draw_counts_every_sub_draw),
        cmocka_unit_test(client_memory_records_are_read_at_their_stride),
        cmocka_unit_test(records_past_the_buffer_count_nothing),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("gl_indirect", tests, setup, teardown);
}
