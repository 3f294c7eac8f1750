/* GL_INTEL_performance_query through libtally_gl.so on llvmpipe: ids,
 * names, the data layout, the limits, every error of the spec and the
 * WAIT / FLUSH / DONOT_FLUSH rules, on desktop GL and on GLES 3. */
#include "gl_fixture.h"
#include "tally/tally.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

static PFNGLGETFIRSTPERFQUERYIDINTELPROC GetFirst;
static PFNGLGETNEXTPERFQUERYIDINTELPROC GetNext;
static PFNGLGETPERFQUERYIDBYNAMEINTELPROC GetIdByName;
static PFNGLGETPERFQUERYINFOINTELPROC GetQueryInfo;
static PFNGLGETPERFCOUNTERINFOINTELPROC GetCounterInfo;
static PFNGLCREATEPERFQUERYINTELPROC Create;
static PFNGLDELETEPERFQUERYINTELPROC Delete;
static PFNGLBEGINPERFQUERYINTELPROC Begin;
static PFNGLENDPERFQUERYINTELPROC End;
static PFNGLGETPERFQUERYDATAINTELPROC GetData;

static const tally_catalogue *catalogue(void)
{
    const tally_catalogue *cat = NULL;
    assert_int_equal(tally_backend_catalogue("simgpu", &cat), TALLY_OK);
    return cat;
}

static int setup(void **state)
{
    if (gl_fixture_setup(state) != 0)
        return -1;
    GetFirst = gl_proc("glGetFirstPerfQueryIdINTEL");
    GetNext = gl_proc("glGetNextPerfQueryIdINTEL");
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

static GLuint id_of(const char *name)
{
    GLuint id = 0;
    GetIdByName((GLchar *)name, &id);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    return id;
}

static void query_ids_run_from_one_over_the_metric_sets(void **state)
{
    (void)state;
    const tally_catalogue *cat = catalogue();
    GLuint id = 0, count = 0;
    GetFirst(&id);
    assert_int_equal(id, 1);
    while (id) {
        count++;
        char name[256];
        GetQueryInfo(id, sizeof(name), name, NULL, NULL, NULL, NULL);
        assert_string_equal(name, tally_catalogue_metric_set(cat, id - 1)->symbol);
        assert_int_equal(id_of(name), id);
        GetNext(id, &id);
    }
    assert_int_equal(count, tally_catalogue_metric_set_count(cat));
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void id_errors_give_invalid_value_and_zero(void **state)
{
    (void)state;
    GetFirst(NULL);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GLuint next = 77;
    GetNext(0, &next);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    assert_int_equal(next, 0);
    next = 77;
    GetNext(tally_catalogue_metric_set_count(catalogue()) + 1, &next);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    assert_int_equal(next, 0);
    GetNext(1, NULL);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GLuint id = 55;
    GetIdByName((GLchar *)"NoSuchSet", &id);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    assert_int_equal(id, 55);
    GetIdByName(NULL, &id);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GetQueryInfo(0, 0, NULL, NULL, NULL, NULL, NULL);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GLuint counters = 0;
    GetQueryInfo(1, 0, NULL, NULL, &counters, NULL, NULL);
    GetCounterInfo(1, 0, 0, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GetCounterInfo(1, counters + 1, 0, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void names_are_clipped_and_terminated(void **state)
{
    (void)state;
    char name[8];
    memset(name, '#', sizeof(name));
    GetQueryInfo(1, 4, name, NULL, NULL, NULL, NULL);
    assert_string_equal(name, "Ren"); /* RenderBasic in 4 bytes */
    assert_int_equal(name[4], '#');
    memset(name, '#', sizeof(name));
    GetCounterInfo(1, 1, 3, name, 0, NULL, NULL, NULL, NULL, NULL, NULL);
    assert_string_equal(name, "Gp"); /* GpuTime in 3 bytes */
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* Each counter at the previous end rounded up to its size; no padding after. */
static void data_layout_aligns_each_counter_to_its_size(void **state)
{
    (void)state;
    const tally_catalogue *cat = catalogue();
    for (GLuint id = 1; id <= tally_catalogue_metric_set_count(cat); id++) {
        const tally_metric_set_info *set = tally_catalogue_metric_set(cat, id - 1);
        GLuint size = 0, counters = 0, caps = 99;
        GetQueryInfo(id, 0, NULL, &size, &counters, NULL, &caps);
        assert_int_equal(counters, set->counter_count);
        assert_int_equal(caps, GL_PERFQUERY_SINGLE_CONTEXT_INTEL);
        GLuint end = 0;
        for (GLuint c = 1; c <= counters; c++) {
            GLuint offset, data_size, type, data_type;
            GLuint64 max;
            GetCounterInfo(id, c, 0, NULL, 0, NULL, &offset, &data_size, &type, &data_type, &max);
            const tally_counter_info *counter = tally_catalogue_counter(cat, set->counters[c - 1]);
            bool narrow = counter->storage == TALLY_STORAGE_UINT32 ||
                          counter->storage == TALLY_STORAGE_FLOAT32;
            assert_int_equal(data_size, narrow ? 4 : 8);
            assert_int_equal(offset, (end + data_size - 1) / data_size * data_size);
            if (counter->storage == TALLY_STORAGE_FLOAT64)
                assert_int_equal(data_type, GL_PERFQUERY_COUNTER_DATA_DOUBLE_INTEL);
            if (counter->storage == TALLY_STORAGE_UINT64)
                assert_int_equal(data_type, GL_PERFQUERY_COUNTER_DATA_UINT64_INTEL);
            end = offset + data_size;
        }
        assert_int_equal(size, end);
    }
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void limits_are_the_ones_the_spec_lists(void **state)
{
    (void)state;
    GLint value = 0;
    glGetIntegerv(GL_PERFQUERY_QUERY_NAME_LENGTH_MAX_INTEL, &value);
    assert_int_equal(value, 256);
    glGetIntegerv(GL_PERFQUERY_COUNTER_NAME_LENGTH_MAX_INTEL, &value);
    assert_int_equal(value, 256);
    glGetIntegerv(GL_PERFQUERY_COUNTER_DESC_LENGTH_MAX_INTEL, &value);
    assert_int_equal(value, 1024);
    GLboolean extended = GL_TRUE;
    glGetBooleanv(GL_PERFQUERY_GPA_EXTENDED_COUNTERS_INTEL, &extended);
    assert_int_equal(extended, GL_FALSE);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void query_object_errors_follow_the_spec(void **state)
{
    (void)state;
    GLuint handle = 0, data[64], written = 0;
    Create(0, &handle);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    Create(1, NULL);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    Delete(4242);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    Begin(4242);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    End(4242);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GetData(4242, GL_PERFQUERY_WAIT_INTEL, sizeof(data), data, &written);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);

    Create(1, &handle);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    End(handle);
    assert_int_equal(glGetError(), GL_INVALID_OPERATION);
    GetData(handle, GL_PERFQUERY_WAIT_INTEL, sizeof(data), data, &written);
    assert_int_equal(glGetError(), GL_INVALID_OPERATION); /* never begun */
    Begin(handle);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    Begin(handle);
    assert_int_equal(glGetError(), GL_INVALID_OPERATION);
    GetData(handle, GL_PERFQUERY_WAIT_INTEL, sizeof(data), data, &written);
    assert_int_equal(glGetError(), GL_INVALID_OPERATION); /* still active */
    GetData(handle, GL_PERFQUERY_WAIT_INTEL, sizeof(data), NULL, &written);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    GetData(handle, GL_PERFQUERY_WAIT_INTEL, sizeof(data), data, NULL);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    Delete(handle); /* deleting an active query ends it */
    assert_int_equal(glGetError(), GL_NO_ERROR);
    Begin(handle);
    assert_int_equal(glGetError(), GL_INVALID_VALUE);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void one_metric_set_of_a_concurrent_group_at_a_time(void **state)
{
    (void)state;
    GLuint render, compute, stats;
    Create(id_of("RenderBasic"), &render);
    Create(id_of("ComputeBasic"), &compute);
    Create(id_of("PipelineStats"), &stats);
    Begin(render);
    Begin(compute); /* same group (OA), another set */
    assert_int_equal(glGetError(), GL_INVALID_OPERATION);
    Begin(stats); /* another group */
    assert_int_equal(glGetError(), GL_NO_ERROR);
    GLuint active = 0;
    GetQueryInfo(id_of("ComputeBasic"), 0, NULL, NULL, NULL, &active, NULL);
    assert_int_equal(active, 1);
    End(render);
    End(stats);
    Begin(compute);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    End(compute);
    Delete(render);
    Delete(compute);
    Delete(stats);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static uint64_t u64_at(const unsigned char *data, GLuint query, const char *counter_name)
{
    GLuint counters = 0;
    GetQueryInfo(query, 0, NULL, NULL, &counters, NULL, NULL);
    for (GLuint c = 1; c <= counters; c++) {
        char name[256];
        GLuint offset;
        GetCounterInfo(query, c, sizeof(name), name, 0, NULL, &offset, NULL, NULL, NULL, NULL);
        if (strcmp(name, counter_name) == 0) {
            uint64_t value;
            memcpy(&value, data + offset, 8);
            return value;
        }
    }
    fail_msg("no counter %s", counter_name);
    return 0;
}

static void results_follow_wait_flush_and_donot_flush(void **state)
{
    (void)state;
    GLuint stats = id_of("PipelineStats"), size = 0;
    GetQueryInfo(stats, 0, NULL, &size, NULL, NULL, NULL);
    unsigned char *data = calloc(1, size);
    GLuint handle, written = 99;
    Create(stats, &handle);
    Begin(handle);
    glDrawArrays(GL_TRIANGLES, 0, 12);
    glDrawArraysInstanced(GL_LINES, 0, 4, 3);
    End(handle);
    GetData(handle, GL_PERFQUERY_DONOT_FLUSH_INTEL, (GLsizei)size, data, &written);
    assert_int_equal(written, 0); /* not submitted: never available by itself */
    GetData(handle, GL_PERFQUERY_FLUSH_INTEL, (GLsizei)size, data, &written);
    for (int i = 0; i < 10000 && written == 0; i++) {
        nanosleep(&(struct timespec){0, 1000000}, NULL);
        GetData(handle, GL_PERFQUERY_DONOT_FLUSH_INTEL, (GLsizei)size, data, &written);
    }
    assert_int_equal(written, size);
    assert_int_equal(u64_at(data, stats, "IaVertices"), 12 + 4 * 3);
    assert_int_equal(u64_at(data, stats, "IaPrimitives"), 4 + 2 * 3);

    Begin(handle);
    glDrawArrays(GL_POINTS, 0, 5);
    End(handle);
    GetData(handle, GL_PERFQUERY_WAIT_INTEL, (GLsizei)size, data, &written);
    assert_int_equal(written, size);
    assert_int_equal(u64_at(data, stats, "IaVertices"), 5);
    Delete(handle);
    free(data);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void gles3_contexts_have_both_extensions_and_queries(void **state)
{
    struct gl_fixture *desktop = *state;
    struct gl_fixture es;
    assert_int_equal(gl_fixture_open(&es, EGL_OPENGL_ES_API, 3), 0);
    const char *version = (const char *)glGetString(GL_VERSION);
    assert_non_null(strstr(version, "OpenGL ES"));
    const char *all = (const char *)glGetString(GL_EXTENSIONS);
    assert_non_null(strstr(all, "GL_INTEL_performance_query"));
    assert_non_null(strstr(all, "GL_AMD_performance_monitor"));
    GLint count = 0;
    glGetIntegerv(GL_NUM_EXTENSIONS, &count);
    int found = 0;
    for (GLint i = 0; i < count; i++) {
        const char *name = (const char *)glGetStringi(GL_EXTENSIONS, (GLuint)i);
        found += strcmp(name, "GL_INTEL_performance_query") == 0 ||
                 strcmp(name, "GL_AMD_performance_monitor") == 0;
    }
    assert_int_equal(found, 2);
    GLuint stats = id_of("PipelineStats"), size = 0, handle, written = 0;
    GetQueryInfo(stats, 0, NULL, &size, NULL, NULL, NULL);
    unsigned char *data = calloc(1, size);
    Create(stats, &handle);
    Begin(handle);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    End(handle);
    GetData(handle, GL_PERFQUERY_WAIT_INTEL, (GLsizei)size, data, &written);
    assert_int_equal(written, size);
    assert_int_equal(u64_at(data, stats, "IaVertices"), 3);
    free(data);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    /* The display is shared with the desktop context: destroy, don't terminate. */
    eglMakeCurrent(es.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    assert_true(eglDestroyContext(es.display, es.context));
    assert_true(eglMakeCurrent(desktop->display, EGL_NO_SURFACE, EGL_NO_SURFACE, desktop->context));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(query_ids_run_from_one_over_the_metric_sets),
        cmocka_unit_test(id_errors_give_invalid_value_and_zero),
        cmocka_unit_test(names_are_clipped_and_terminated),
        cmocka_unit_test(data_layout_aligns_each_counter_to_its_size),
        cmocka_unit_test(limits_are_the_ones_the_spec_lists),
        cmocka_unit_test(query_object_errors_follow_the_spec),
        cmocka_unit_test(one_metric_set_of_a_concurrent_group_at_a_time),
        cmocka_unit_test(results_follow_wait_flush_and_donot_flush),
        cmocka_unit_test(gles3_contexts_have_both_extensions_and_queries),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("gl_intel", tests, setup, gl_fixture_teardown);
}
