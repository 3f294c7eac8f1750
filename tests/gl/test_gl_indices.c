/* Indexed GL draws through libtally_gl.so on llvmpipe: the shim reads the
 * draw's indices where GL reads them (the element buffer the program
 * uploaded, or client memory), so VsInvocations counts the vertices the
 * indices name, never fewer than the distinct ones, and the program sees
 * no GL error from the read. Measured with GL_AMD_performance_monitor. */
#include "gl_fixture.h"
#include "tally/tally.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

static PFNGLGENPERFMONITORSAMDPROC GenMonitors;
static PFNGLDELETEPERFMONITORSAMDPROC DeleteMonitors;
static PFNGLSELECTPERFMONITORCOUNTERSAMDPROC SelectCounters;
static PFNGLBEGINPERFMONITORAMDPROC BeginMonitor;
static PFNGLENDPERFMONITORAMDPROC EndMonitor;
static PFNGLGETPERFMONITORCOUNTERDATAAMDPROC GetCounterData;
static PFNGLGENBUFFERSPROC GenBuffers;
static PFNGLBINDBUFFERPROC BindBuffer;
static PFNGLBUFFERDATAPROC BufferData;
static PFNGLDELETEBUFFERSPROC DeleteBuffers;
static PFNGLMAPBUFFERPROC MapBuffer;
static PFNGLUNMAPBUFFERPROC UnmapBuffer;

enum { INDICES = 30 };

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
    GenBuffers = gl_proc("glGenBuffers");
    BindBuffer = gl_proc("glBindBuffer");
    BufferData = gl_proc("glBufferData");
    DeleteBuffers = gl_proc("glDeleteBuffers");
    MapBuffer = gl_proc("glMapBuffer");
    UnmapBuffer = gl_proc("glUnmapBuffer");
    gl_drain_errors();
    return 0;
}

/* A monitor of VsInvocations alone, begun. */
static GLuint begin_vs_invocations(void)
{
    const tally_catalogue *cat = NULL;
    uint32_t index;
    assert_int_equal(tally_backend_catalogue("simgpu", &cat), TALLY_OK);
    assert_int_equal(tally_catalogue_find(cat, "VsInvocations", &index), TALLY_OK);
    const tally_counter_info *info = tally_catalogue_counter(cat, index);
    const tally_group_info *g = tally_catalogue_group(cat, info->group);
    GLuint counter = 0;
    while (g->counters[counter] != index)
        counter++;
    GLuint m;
    GenMonitors(1, &m);
    SelectCounters(m, GL_TRUE, info->group, 1, &counter);
    BeginMonitor(m);
    return m;
}

/* Ends the monitor, waits for its result and returns the value. */
static uint64_t end_and_read(GLuint m)
{
    EndMonitor(m);
    glFinish();
    GLuint available = 0;
    for (int i = 0; i < 10000 && !available; i++) {
        GetCounterData(m, GL_PERFMON_RESULT_AVAILABLE_AMD, sizeof(available), &available, NULL);
        if (!available)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    assert_int_equal(available, 1);
    GLuint data[4];
    GetCounterData(m, GL_PERFMON_RESULT_AMD, sizeof(data), data, NULL);
    DeleteMonitors(1, &m);
    uint64_t value;
    memcpy(&value, &data[2], sizeof(value));
    return value;
}

static GLuint element_buffer(const GLuint *indices, size_t count)
{
    GLuint buffer;
    GenBuffers(1, &buffer);
    BindBuffer(GL_ELEMENT_ARRAY_BUFFER, buffer);
    BufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)(count * sizeof(*indices)), indices,
               GL_STATIC_DRAW);
    return buffer;
}

static void distinct_indices_in_an_element_buffer_are_each_shaded(void **state)
{
    (void)state;
    GLuint indices[INDICES];
    for (GLuint i = 0; i < INDICES; i++)
        indices[i] = i;
    GLuint buffer = element_buffer(indices, INDICES);
    GLuint m = begin_vs_invocations();
    glDrawElements(GL_TRIANGLES, INDICES, GL_UNSIGNED_INT, NULL);
    /* NVIDIA's driver measures 30 for this draw; no GPU can shade fewer. */
    assert_int_equal(end_and_read(m), INDICES);
    DeleteBuffers(1, &buffer);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void an_offset_into_the_element_buffer_reads_the_drawn_indices(void **state)
{
    (void)state;
    GLuint indices[2 * INDICES];
    for (GLuint i = 0; i < INDICES; i++)
        indices[i] = 0; /* not drawn */
    for (GLuint i = 0; i < INDICES; i++)
        indices[INDICES + i] = i % 3; /* 3 distinct, always in the cache */
    GLuint buffer = element_buffer(indices, 2 * INDICES);
    GLuint m = begin_vs_invocations();
    glDrawElements(GL_TRIANGLES, INDICES, GL_UNSIGNED_INT,
                   (const void *)(uintptr_t)(INDICES * sizeof(GLuint)));
    assert_int_equal(end_and_read(m), 3);
    DeleteBuffers(1, &buffer);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* Before the monitor nothing listens, so the shim records no draw and
 * reads no index (draw_lane.h); from the monitor's begin on, every draw of
 * the context is recorded, an indexed one with the indices it names, and
 * the monitor counts none of the draws before it. */
static void a_monitors_draws_are_recorded_with_their_indices(void **state)
{
    (void)state;
    GLuint indices[2 * INDICES];
    for (GLuint i = 0; i < INDICES; i++)
        indices[i] = i;
    for (GLuint i = 0; i < INDICES; i++)
        indices[INDICES + i] = i % 3;
    GLuint buffer = element_buffer(indices, 2 * INDICES);
    for (int i = 0; i < 5; i++)
        glDrawElements(GL_TRIANGLES, INDICES, GL_UNSIGNED_INT, NULL);
    /* A plain draw first: it opens a run of the stream's lane, which the
     * indexed draws after it must not take (the lane carries no indices). */
    GLuint m = begin_vs_invocations();
    glDrawArrays(GL_TRIANGLES, 0, 3);
    for (int i = 0; i < 3; i++)
        glDrawElements(GL_TRIANGLES, INDICES, GL_UNSIGNED_INT,
                       (const void *)(uintptr_t)(INDICES * sizeof(GLuint)));
    assert_int_equal(end_and_read(m), 3 + 3 * 3);
    for (int i = 0; i < 5; i++)
        glDrawElements(GL_TRIANGLES, INDICES, GL_UNSIGNED_INT, NULL);
    m = begin_vs_invocations();
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glDrawElements(GL_TRIANGLES, INDICES, GL_UNSIGNED_INT, NULL);
    assert_int_equal(end_and_read(m), 3 + INDICES);
    DeleteBuffers(1, &buffer);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void client_side_indices_are_read_in_a_compatibility_context(void **state)
{
    (void)state;
    BindBuffer(GL_ELEMENT_ARRAY_BUFFER, 0);
    GLushort indices[INDICES];
    for (GLushort i = 0; i < INDICES; i++)
        indices[i] = i;
    GLuint m = begin_vs_invocations();
    glDrawElements(GL_TRIANGLES, INDICES, GL_UNSIGNED_SHORT, indices);
    assert_int_equal(end_and_read(m), INDICES);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void a_mapped_element_buffer_is_not_read_and_no_error_shows(void **state)
{
    (void)state;
    GLuint indices[INDICES] = {0};
    GLuint buffer = element_buffer(indices, INDICES);
    void *mapped = MapBuffer(GL_ELEMENT_ARRAY_BUFFER, GL_READ_ONLY);
    assert_non_null(mapped);
    GLuint m = begin_vs_invocations();
    /* Drawing from a mapped buffer is the program's own error; the shim adds
     * none by reading it, and models the count within its bounds. */
    glDrawElements(GL_TRIANGLES, INDICES, GL_UNSIGNED_INT, NULL);
    GLenum drawn = glGetError();
    UnmapBuffer(GL_ELEMENT_ARRAY_BUFFER);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    uint64_t shaded = end_and_read(m);
    if (drawn == GL_NO_ERROR) {
        assert_true(shaded >= 1);
        assert_true(shaded <= INDICES);
    }
    DeleteBuffers(1, &buffer);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(distinct_indices_in_an_element_buffer_are_each_shaded,
                                        setup, gl_fixture_teardown),
        cmocka_unit_test_setup_teardown(an_offset_into_the_element_buffer_reads_the_drawn_indices,
                                        setup, gl_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_monitors_draws_are_recorded_with_their_indices, setup,
                                        gl_fixture_teardown),
        cmocka_unit_test_setup_teardown(client_side_indices_are_read_in_a_compatibility_context,
                                        setup, gl_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_mapped_element_buffer_is_not_read_and_no_error_shows,
                                        setup, gl_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
