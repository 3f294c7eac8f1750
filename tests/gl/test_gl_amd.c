/* GL_AMD_performance_monitor through libtally_gl.so on a real llvmpipe
 * context: every error the spec lists, the string rule apitrace relies on,
 * availability only after submission, and exact counts for known draws. */
#include "gl_fixture.h"
#include "tally/tally.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <limits.h>

#include <cmocka.h>

static PFNGLGETPERFMONITORGROUPSAMDPROC GetGroups;
static PFNGLGETPERFMONITORCOUNTERSAMDPROC GetCounters;
static PFNGLGETPERFMONITORGROUPSTRINGAMDPROC GetGroupString;
static PFNGLGETPERFMONITORCOUNTERSTRINGAMDPROC GetCounterString;
static PFNGLGETPERFMONITORCOUNTERINFOAMDPROC GetCounterInfo;
static PFNGLGENPERFMONITORSAMDPROC GenMonitors;
static PFNGLDELETEPERFMONITORSAMDPROC DeleteMonitors;
static PFNGLSELECTPERFMONITORCOUNTERSAMDPROC SelectCounters;
static PFNGLBEGINPERFMONITORAMDPROC BeginMonitor;
static PFNGLENDPERFMONITORAMDPROC EndMonitor;
static PFNGLGETPERFMONITORCOUNTERDATAAMDPROC GetCounterData;

static const tally_catalogue *catalogue(void)
{
    const tally_catalogue *cat = NULL;
    assert_int_equal(tally_backend_catalogue("simgpu", &cat), TALLY_OK);
    return cat;
}

/* The AMD group and counter ids of a catalogue symbol. */
static void ids_of(const char *symbol, GLuint *group, GLuint *counter)
{
    const tally_catalogue *cat = catalogue();
    uint32_t index;
    assert_int_equal(tally_catalogue_find(cat, symbol, &index), TALLY_OK);
    const tally_counter_info *info = tally_catalogue_counter(cat, index);
    const tally_group_info *g = tally_catalogue_group(cat, info->group);
    *group = info->group;
    for (*counter = 0; g->counters[*counter] != index; (*counter)++)
        ;
}

static int setup(void **state)
{
    if (gl_fixture_setup(state) != 0)
        return -1;
    GetGroups = gl_proc("glGetPerfMonitorGroupsAMD");
    GetCounters = gl_proc("glGetPerfMonitorCountersAMD");
    GetGroupString = gl_proc("glGetPerfMonitorGroupStringAMD");
    GetCounterString = gl_proc("glGetPerfMonitorCounterStringAMD");
    GetCounterInfo = gl_proc("glGetPerfMonitorCounterInfoAMD");
    GenMonitors = gl_proc("glGenPerfMonitorsAMD");
    DeleteMonitors = gl_proc("glDeletePerfMonitorsAMD");
    SelectCounters = gl_proc("glSelectPerfMonitorCountersAMD");
    BeginMonitor = gl_proc("glBeginPerfMonitorAMD");
    EndMonitor = gl_proc("glEndPerfMonitorAMD");
    GetCounterData = gl_proc("glGetPerfMonitorCounterDataAMD");
    gl_drain_errors();
    return 0;
}

static void extension_is_in_the_string_and_the_indexed_list(void **state)
{
    (void)state;
    const char *all = (const char *)glGetString(GL_EXTENSIONS);
    assert_non_null(strstr(all, "GL_AMD_performance_monitor"));
    GLint count = 0;
    glGetIntegerv(GL_NUM_EXTENSIONS, &count);
    int found = 0;
    for (GLint i = 0; i < count; i++) {
        const char *name = (const char *)glGetStringi(GL_EXTENSIONS, (GLuint)i);
        assert_non_null(name);
        found += strcmp(name, "GL_AMD_performance_monitor") == 0;
    }
    assert_int_equal(found, 1);
    assert_null(glGetStringi(GL_EXTENSIONS, (GLuint)count));
    assert_int_equal(glGetError(), GL_INVALID_VALUE); /* the driver's own error */
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* simgpu's groups as backends/simgpu/catalogue.toml declares them, written
 * out by hand: symbol, the [[counter]] entries naming the group, capacity. */
static const struct {
    const char *symbol;
    GLint counters, capacity;
} simgpu_groups[] = {
    {"Gpu", 5, 4},          {"CommandProcessor", 3, 4}, {"InputAssembler", 4, 3},
    {"VertexShader", 3, 4}, {"GeometryShader", 4, 4},   {"PrimitiveSetup", 5, 4},
    {"Rasterizer", 4, 4},   {"FragmentShader", 5, 4},   {"ComputeShader", 3, 4},
    {"ShaderCore", 7, 4},   {"TextureUnit", 5, 4},      {"L2Cache", 4, 4},
    {"Memory", 4, 4},
};

static void groups_are_simgpus_groups_with_their_counters_and_capacity(void **state)
{
    (void)state;
    const GLint expected = (GLint)(sizeof simgpu_groups / sizeof simgpu_groups[0]);
    GLint n = -1;
    GetGroups(&n, 0, NULL);
    assert_int_equal(n, expected);
    GLuint groups[64];
    GetGroups(NULL, n, groups);
    for (GLint g = 0; g < n; g++) {
        GLint counters = -1, max_active = -1;
        GetCounters(groups[g], &counters, &max_active, 0, NULL);
        char name[64];
        GLsizei length = -1;
        GetGroupString(groups[g], sizeof(name), &length, name);
        assert_string_equal(name, simgpu_groups[g].symbol);
        assert_int_equal(length, (GLsizei)strlen(simgpu_groups[g].symbol));
        assert_int_equal(counters, simgpu_groups[g].counters);
        assert_int_equal(max_active, simgpu_groups[g].capacity);
    }
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void a_partial_group_array_is_written_up_to_its_size(void **state)
{
    (void)state;
    GLuint groups[4] = {0xdddddddd, 0xdddddddd, 0xdddddddd, 0xdddddddd};
    GLint n = 0;
    GetGroups(&n, 2, groups);
    assert_true(n > 2);
    assert_int_equal(groups[0], 0);
    assert_int_equal(groups[1], 1);
    assert_int_equal(groups[2], 0xdddddddd);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void invalid_group_is_invalid_value_everywhere(void **state)
{
    (void)state;
    GLuint bad = tally_catalogue_group_count(catalogue());
    GLint n;
    GetCounters(bad, &n, NULL, 0, NULL);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GetGroupString(bad, 0, NULL, NULL);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GetCounterString(bad, 0, 0, NULL, NULL);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GLenum type;
    GetCounterInfo(bad, 0, GL_COUNTER_TYPE_AMD, &type);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GLuint m, counter = 0;
    GenMonitors(1, &m);
    SelectCounters(m, GL_TRUE, bad, 1, &counter);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    DeleteMonitors(1, &m);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void invalid_counter_is_invalid_value(void **state)
{
    (void)state;
    GLint n;
    GetCounters(0, &n, NULL, 0, NULL);
    GetCounterString(0, (GLuint)n, 0, NULL, NULL);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GLenum type;
    GetCounterInfo(0, (GLuint)n, GL_COUNTER_TYPE_AMD, &type);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GetCounterInfo(0, 0, GL_TEXTURE_2D, &type);
    assert_int_equal(glGetError(), GL_INVALID_ENUM);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* apitrace asks with bufSize == strlen and reads exactly that many bytes. */
static void strings_copy_min_of_length_and_bufsize_without_forced_terminator(void **state)
{
    (void)state;
    GLuint group, counter;
    ids_of("VsInvocations", &group, &counter);
    GLsizei length = -1;
    GetCounterString(group, counter, 0, &length, NULL);
    assert_int_equal(length, strlen("VsInvocations"));
    char name[32];
    memset(name, '#', sizeof(name));
    GetCounterString(group, counter, length, &length, name);
    assert_int_equal(length, strlen("VsInvocations"));
    assert_memory_equal(name, "VsInvocations", 13);
    assert_int_equal(name[13], '#');
    memset(name, '#', sizeof(name));
    GetCounterString(group, counter, 1, &length, name);
    assert_int_equal(length, 1);
    assert_int_equal(name[0], 'V');
    assert_int_equal(name[1], '#');
    memset(name, '#', sizeof(name));
    GetCounterString(group, counter, 14, &length, name);
    assert_int_equal(length, 13);
    assert_string_equal(name, "VsInvocations");
    GetCounterString(group, counter, -1, &length, name);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    memset(name, '#', sizeof(name));
    GetGroupString(group, 3, &length, name);
    assert_int_equal(length, 3);
    assert_int_equal(name[3], '#');
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void counter_info_gives_type_and_range_from_the_catalogue(void **state)
{
    (void)state;
    GLuint group, counter;
    ids_of("VsInvocations", &group, &counter);
    GLenum type = 0;
    GetCounterInfo(group, counter, GL_COUNTER_TYPE_AMD, &type);
    assert_int_equal(type, GL_UNSIGNED_INT64_AMD);
    /* A uint64 counter without a stated min or max in
     * backends/simgpu/catalogue.toml spans its whole storage: two GLuint64s,
     * nothing written past them. */
    GLuint64 range[3] = {7, 7, 0xffffffff};
    GetCounterInfo(group, counter, GL_COUNTER_RANGE_AMD, range);
    assert_int_equal(range[0], 0);
    assert_int_equal(range[1], UINT64_MAX);
    assert_int_equal(range[2], 0xffffffff);
    ids_of("GpuBusy", &group, &counter);
    GetCounterInfo(group, counter, GL_COUNTER_TYPE_AMD, &type);
    assert_int_equal(type, GL_PERCENTAGE_AMD);
    float percent[3] = {-1, -1, -1};
    GetCounterInfo(group, counter, GL_COUNTER_RANGE_AMD, percent);
    assert_true(percent[0] == 0.0f && percent[1] == 100.0f && percent[2] == -1.0f);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void monitor_errors_follow_the_spec(void **state)
{
    (void)state;
    GLuint junk = 0, bogus = 777;
    GenMonitors(-1, &junk);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    BeginMonitor(bogus);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    EndMonitor(bogus);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    DeleteMonitors(1, &bogus);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    DeleteMonitors(-1, &bogus);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GLuint value;
    GetCounterData(bogus, GL_PERFMON_RESULT_AVAILABLE_AMD, 0, &value, NULL);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    SelectCounters(bogus, GL_FALSE, 0, 0, &junk);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);

    GLuint m;
    GenMonitors(1, &m);
    SelectCounters(m, GL_FALSE, 0, -1, &junk);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GLint n;
    GetCounters(0, &n, NULL, 0, NULL);
    GLuint past_end = (GLuint)n;
    SelectCounters(m, GL_TRUE, 0, 1, &past_end);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    EndMonitor(m);
    assert_int_equal(glGetError(), GL_INVALID_OPERATION);
    BeginMonitor(m);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    BeginMonitor(m);
    assert_int_equal(glGetError(), GL_INVALID_OPERATION);
    GetCounterData(m, GL_PERFMON_RESULT_AVAILABLE_AMD, 4, NULL, NULL);
    assert_int_equal(glGetError(), GL_INVALID_OPERATION);
    GetCounterData(m, GL_TEXTURE_2D, 4, &value, NULL);
    assert_int_equal(glGetError(), GL_INVALID_ENUM);
    GLuint both[2] = {m, bogus};
    DeleteMonitors(2, both); /* deletes m, an active monitor, then fails on bogus */
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    BeginMonitor(m);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* A count no context could hold is GL_OUT_OF_MEMORY and generates nothing,
 * at once: with monitors already there, the capacity once doubled past 2^31
 * into 0 and spun forever (the alarm turns such a hang into a failure). */
static void generating_too_many_monitors_is_out_of_memory_at_once(void **state)
{
    (void)state;
    alarm(60);
    GLuint first[9];
    GenMonitors(9, first);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    GLuint untouched[2] = {0, 0};
    GenMonitors(INT_MAX, untouched);
    assert_int_equal(glGetError(), GL_OUT_OF_MEMORY);
    assert_int_equal(untouched[0], 0);
    GenMonitors(INT_MAX - 8, untouched);
    assert_int_equal(glGetError(), GL_OUT_OF_MEMORY);
    GLuint next;
    GenMonitors(1, &next);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    assert_int_equal(next, first[8] + 1);
    DeleteMonitors(9, first);
    DeleteMonitors(1, &next);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    alarm(0);
}

static void begin_fails_when_the_selection_needs_two_passes(void **state)
{
    (void)state;
    GLint n = 0, max_active = 0;
    GetCounters(0, &n, &max_active, 0, NULL);
    assert_true(n > max_active);
    GLuint ids[64];
    GetCounters(0, NULL, NULL, n, ids);
    GLuint m;
    GenMonitors(1, &m);
    SelectCounters(m, GL_TRUE, 0, max_active, ids);
    BeginMonitor(m);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    EndMonitor(m);
    SelectCounters(m, GL_TRUE, 0, max_active + 1, ids);
    BeginMonitor(m);
    assert_int_equal(glGetError(), GL_INVALID_OPERATION);
    EndMonitor(m); /* not started */
    assert_int_equal(glGetError(), GL_INVALID_OPERATION);
    DeleteMonitors(1, &m);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void a_fresh_monitor_reports_zero_and_small_buffers_get_nothing(void **state)
{
    (void)state;
    GLuint m;
    GenMonitors(1, &m);
    GLenum pnames[3] = {GL_PERFMON_RESULT_AVAILABLE_AMD, GL_PERFMON_RESULT_AMD,
                        GL_PERFMON_RESULT_SIZE_AMD};
    for (int i = 0; i < 3; i++) {
        GLuint value = 0xd0d0d0d0;
        GLsizei written = -1;
        GetCounterData(m, pnames[i], 4, &value, &written);
        assert_int_equal(value, 0);
        assert_int_equal(written, 4);
        value = 0xd0d0d0d0;
        GetCounterData(m, pnames[i], 3, &value, &written);
        assert_int_equal(value, 0xd0d0d0d0);
        assert_int_equal(written, 0);
    }
    DeleteMonitors(1, &m);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static GLuint available(GLuint m)
{
    GLuint value = 0xd0d0d0d0;
    GetCounterData(m, GL_PERFMON_RESULT_AVAILABLE_AMD, sizeof(value), &value, NULL);
    return value;
}

/* Polls as apitrace does after one glFlush; fails after 10 s. */
static void wait_available(GLuint m)
{
    for (int i = 0; i < 10000 && !available(m); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    assert_int_equal(available(m), 1);
}

static void draw_three_triangles(void)
{
    glBegin(GL_TRIANGLES);
    for (int i = 0; i < 9; i++)
        glVertex2f((float)(i % 3) * 0.5f - 0.5f, (float)(i % 2) * 0.5f);
    glEnd();
}

/* A new monitor of DrawCalls and IaVertices, and their AMD ids. */
static GLuint draws_and_vertices_monitor(GLuint *draws_group, GLuint *draws_id,
                                         GLuint *vertices_group, GLuint *vertices_id)
{
    ids_of("IaVertices", vertices_group, vertices_id);
    ids_of("DrawCalls", draws_group, draws_id);
    GLuint m;
    GenMonitors(1, &m);
    SelectCounters(m, GL_TRUE, *vertices_group, 1, vertices_id);
    SelectCounters(m, GL_TRUE, *draws_group, 1, draws_id);
    return m;
}

static void results_are_available_once_submitted_with_exact_counts(void **state)
{
    (void)state;
    GLuint vertices_group, vertices_id, draws_group, draws_id;
    GLuint m = draws_and_vertices_monitor(&draws_group, &draws_id, &vertices_group, &vertices_id);
    BeginMonitor(m);
    glDrawArrays(GL_TRIANGLES, 0, 6); /* no arrays enabled: 6 vertices of nothing */
    draw_three_triangles();
    EndMonitor(m);
    assert_int_equal(available(m), 0); /* nothing was submitted yet */
    glFlush();
    wait_available(m);
    GLuint size = 0;
    GetCounterData(m, GL_PERFMON_RESULT_SIZE_AMD, sizeof(size), &size, NULL);
    assert_int_equal(size, 2 * (8 + 8));
    GLuint data[8];
    GLsizei written = 0;
    GetCounterData(m, GL_PERFMON_RESULT_AMD, sizeof(data), data, &written);
    assert_int_equal(written, size);
    /* Records come group by group in ascending order. */
    bool draws_first = draws_group < vertices_group;
    GLuint *draws = draws_first ? data : data + 4;
    GLuint *vertices = draws_first ? data + 4 : data;
    uint64_t value;
    assert_int_equal(draws[0], draws_group);
    assert_int_equal(draws[1], draws_id);
    memcpy(&value, &draws[2], 8);
    assert_int_equal(value, 2);
    assert_int_equal(vertices[0], vertices_group);
    assert_int_equal(vertices[1], vertices_id);
    memcpy(&value, &vertices[2], 8);
    assert_int_equal(value, 6 + 9);

    /* A short buffer gets the first bytes only. */
    memset(data, 0xee, sizeof(data));
    GetCounterData(m, GL_PERFMON_RESULT_AMD, 12, data, &written);
    assert_int_equal(written, 12);
    assert_int_equal(data[3], 0xeeeeeeee);

    /* Selecting again invalidates the results. */
    SelectCounters(m, GL_FALSE, draws_group, 1, &draws_id);
    assert_int_equal(available(m), 0);
    GetCounterData(m, GL_PERFMON_RESULT_SIZE_AMD, sizeof(size), &size, NULL);
    assert_int_equal(size, 0);
    DeleteMonitors(1, &m);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* One monitored value of the monitor's results, by its group and counter. */
static uint64_t result_of(GLuint m, GLuint group, GLuint counter)
{
    GLuint data[16];
    GLsizei written = 0;
    GetCounterData(m, GL_PERFMON_RESULT_AMD, sizeof(data), data, &written);
    for (GLsizei i = 0; i + 16 <= written; i += 16) {
        const GLuint *record = data + i / 4;
        if (record[0] == group && record[1] == counter) {
            uint64_t value;
            memcpy(&value, &record[2], 8);
            return value;
        }
    }
    fail_msg("no result for group %u counter %u", group, counter);
    return 0;
}

/* Plain draws go inline into the stream's lane, 1024 to a block; a full
 * block, and a command between draws (glUseProgram) that closes the run,
 * take the general way. Every draw counts once, either way. */
static void draws_across_the_lanes_blocks_and_runs_are_each_counted(void **state)
{
    (void)state;
    GLuint vertices_group, vertices_id, draws_group, draws_id;
    GLuint m = draws_and_vertices_monitor(&draws_group, &draws_id, &vertices_group, &vertices_id);
    BeginMonitor(m);
    for (int i = 0; i < 2500; i++)
        glDrawArrays(GL_TRIANGLES, 0, 3);
    glDrawArraysInstanced(GL_TRIANGLES, 0, 6, 2);
    glUseProgram(0);
    for (int i = 0; i < 700; i++)
        glDrawArrays(GL_POINTS, 0, 1);
    glDrawArrays(GL_TRIANGLES, 0, -1); /* GL_INVALID_VALUE: no draw */
    EndMonitor(m);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    glFinish();
    assert_int_equal(available(m), 1);
    assert_int_equal(result_of(m, draws_group, draws_id), 2500 + 1 + 700);
    assert_int_equal(result_of(m, vertices_group, vertices_id), 2500 * 3 + 6 * 2 + 700);
    DeleteMonitors(1, &m);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void glfinish_makes_results_available_at_once(void **state)
{
    (void)state;
    GLuint group, id;
    ids_of("IaPrimitives", &group, &id);
    GLuint m;
    GenMonitors(1, &m);
    SelectCounters(m, GL_TRUE, group, 1, &id);
    BeginMonitor(m);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 5);
    EndMonitor(m);
    glFinish();
    assert_int_equal(available(m), 1);
    GLuint data[4];
    GetCounterData(m, GL_PERFMON_RESULT_AMD, sizeof(data), data, NULL);
    uint64_t value;
    memcpy(&value, &data[2], 8);
    assert_int_equal(value, 3);
    DeleteMonitors(1, &m);
}

/* A read the program blocks on executes the work before it. */
static void blocking_reads_submit_and_wait(void **state)
{
    (void)state;
    GLuint group, id;
    ids_of("DrawCalls", &group, &id);
    GLuint buffer;
    glGenBuffers(1, &buffer);
    glBindBuffer(GL_ARRAY_BUFFER, buffer);
    glBufferData(GL_ARRAY_BUFFER, 16, NULL, GL_STATIC_DRAW);
    GLuint m;
    GenMonitors(1, &m);
    SelectCounters(m, GL_TRUE, group, 1, &id);
    BeginMonitor(m);
    glDrawArrays(GL_POINTS, 0, 1);
    EndMonitor(m);
    assert_int_equal(available(m), 0);
    unsigned char bytes[16];
    glGetBufferSubData(GL_ARRAY_BUFFER, 0, sizeof(bytes), bytes);
    assert_int_equal(available(m), 1);

    BeginMonitor(m);
    glDrawArrays(GL_POINTS, 0, 1);
    EndMonitor(m);
    assert_int_equal(available(m), 0);
    void *mapped = glMapBufferRange(GL_ARRAY_BUFFER, 0, 16, GL_MAP_READ_BIT);
    assert_non_null(mapped);
    assert_int_equal(available(m), 1);
    glUnmapBuffer(GL_ARRAY_BUFFER);

    BeginMonitor(m);
    glDrawArrays(GL_POINTS, 0, 1);
    EndMonitor(m);
    GLsync sync = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    glClientWaitSync(sync, GL_SYNC_FLUSH_COMMANDS_BIT, 1000000000);
    glDeleteSync(sync);
    assert_int_equal(available(m), 1);
    DeleteMonitors(1, &m);
    glDeleteBuffers(1, &buffer);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void driver_and_shim_errors_are_each_reported_once(void **state)
{
    (void)state;
    glEnable(0xffff);  /* the driver's INVALID_ENUM */
    BeginMonitor(777); /* the shim's INVALID_VALUE */
    GLenum first = glGetError(), second = glGetError();
    assert_true((first == GL_INVALID_ENUM && second == GL_INVALID_VALUE) ||
                (first == GL_INVALID_VALUE && second == GL_INVALID_ENUM));
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void destroying_a_context_with_an_active_monitor_is_harmless(void **state)
{
    struct gl_fixture *main_fx = *state;
    struct gl_fixture other;
    assert_int_equal(gl_fixture_open(&other, EGL_OPENGL_API, 3), 0);
    GLuint m;
    GenMonitors(1, &m);
    BeginMonitor(m);
    glDrawArrays(GL_POINTS, 0, 1);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    eglMakeCurrent(other.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    assert_true(eglDestroyContext(other.display, other.context));
    assert_true(eglMakeCurrent(main_fx->display, EGL_NO_SURFACE, EGL_NO_SURFACE, main_fx->context));
    /* The monitor belonged to the destroyed context: unknown here. */
    BeginMonitor(m + 1000);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(extension_is_in_the_string_and_the_indexed_list),
        cmocka_unit_test(groups_are_simgpus_groups_with_their_counters_and_capacity),
        cmocka_unit_test(a_partial_group_array_is_written_up_to_its_size),
        cmocka_unit_test(invalid_group_is_invalid_value_everywhere),
        cmocka_unit_test(invalid_counter_is_invalid_value),
        cmocka_unit_test(strings_copy_min_of_length_and_bufsize_without_forced_terminator),
        cmocka_unit_test(counter_info_gives_type_and_range_from_the_catalogue),
        cmocka_unit_test(monitor_errors_follow_the_spec),
        cmocka_unit_test(generating_too_many_monitors_is_out_of_memory_at_once),
        cmocka_unit_test(begin_fails_when_the_selection_needs_two_passes),
        cmocka_unit_test(a_fresh_monitor_reports_zero_and_small_buffers_get_nothing),
        cmocka_unit_test(results_are_available_once_submitted_with_exact_counts),
        cmocka_unit_test(draws_across_the_lanes_blocks_and_runs_are_each_counted),
        cmocka_unit_test(glfinish_makes_results_available_at_once),
        cmocka_unit_test(blocking_reads_submit_and_wait),
        cmocka_unit_test(driver_and_shim_errors_are_each_reported_once),
        cmocka_unit_test(destroying_a_context_with_an_active_monitor_is_harmless),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("gl_amd", tests, setup, gl_fixture_teardown);
}
