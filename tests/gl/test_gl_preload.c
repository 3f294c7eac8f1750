/* libtally_preload through the GL shim: programs that open the GL libraries
 * themselves get the shim's wrappers, and dlsym keeps its meaning for
 * everything else, RTLD_NEXT included. */
#include "gl_fixture.h"
#include "local_scope.h"

#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void *open_library(const char *name)
{
    void *handle = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
    assert_non_null(handle);
    return handle;
}

static void extension_functions_are_found_in_every_gl_library(void **state)
{
    (void)state;
    void *wrapper = gl_proc("glGetPerfMonitorGroupsAMD");
    const char *libraries[] = {"libGL.so.1", "libOpenGL.so.0", "libGLESv2.so.2"};
    for (size_t i = 0; i < 3; i++) {
        void *handle = open_library(libraries[i]);
        assert_ptr_equal(dlsym(handle, "glGetPerfMonitorGroupsAMD"), wrapper);
        assert_ptr_equal(dlsym(handle, "glGetPerfQueryDataINTEL"),
                         gl_proc("glGetPerfQueryDataINTEL"));
        dlclose(handle);
    }
}

static void wrapped_core_functions_resolve_to_the_shim_in_opened_libraries(void **state)
{
    (void)state;
    void *shim_draw = dlsym(RTLD_DEFAULT, "glDrawArrays");
    assert_non_null(shim_draw);
    void *gl = open_library("libGL.so.1");
    assert_ptr_equal(dlsym(gl, "glDrawArrays"), shim_draw);
    assert_ptr_equal(dlsym(gl, "glGetString"), dlsym(RTLD_DEFAULT, "glGetString"));
    /* What the shim does not wrap is the library's own function. */
    void *real_clear = dlsym(gl, "glClear");
    assert_non_null(real_clear);
    Dl_info info;
    assert_true(dladdr(real_clear, &info));
    assert_non_null(strstr(info.dli_fname, "libGL.so"));
    dlclose(gl);
}

static void get_proc_address_found_by_dlsym_answers_with_wrappers(void **state)
{
    (void)state;
    void *gl = open_library("libGL.so.1");
    typedef void *(*gpa_fn)(const GLubyte *);
    gpa_fn glx_gpa = (gpa_fn)dlsym(gl, "glXGetProcAddressARB");
    assert_non_null(glx_gpa);
    assert_ptr_equal(glx_gpa((const GLubyte *)"glBeginPerfMonitorAMD"),
                     gl_proc("glBeginPerfMonitorAMD"));
    assert_ptr_equal(glx_gpa((const GLubyte *)"glGetError"), dlsym(RTLD_DEFAULT, "glGetError"));
    void *egl = open_library("libEGL.so.1");
    typedef void *(*egl_gpa_fn)(const char *);
    egl_gpa_fn egl_gpa = (egl_gpa_fn)dlsym(egl, "eglGetProcAddress");
    assert_ptr_equal(egl_gpa("glGetStringi"), dlsym(RTLD_DEFAULT, "glGetStringi"));
    assert_ptr_equal(dlsym(egl, "eglMakeCurrent"), dlsym(RTLD_DEFAULT, "eglMakeCurrent"));
    dlclose(egl);
    dlclose(gl);
}

/* RTLD_NEXT is relative to the caller: from the program, the next
 * definition of glGetError is the preloaded shim's. */
static void rtld_next_stays_relative_to_the_caller(void **state)
{
    (void)state;
    void *next = dlsym(RTLD_NEXT, "glGetError");
    assert_non_null(next);
    assert_ptr_equal(next, dlsym(RTLD_DEFAULT, "glGetError"));
    Dl_info info;
    assert_true(dladdr(next, &info));
    assert_non_null(strstr(info.dli_fname, "libtally_gl.so"));
    assert_ptr_equal(dlsym(RTLD_NEXT, "cos"), (void *)cos);
}

static void other_libraries_are_untouched(void **state)
{
    (void)state;
    void *libm = open_library("libm.so.6");
    assert_ptr_equal(dlsym(libm, "cos"), (void *)cos);
    assert_null(dlsym(libm, "glDrawArrays"));
    dlclose(libm);
}

static void draws_through_a_dlsym_pointer_are_recorded(void **state)
{
    (void)state;
    PFNGLGENPERFMONITORSAMDPROC gen = gl_proc("glGenPerfMonitorsAMD");
    PFNGLSELECTPERFMONITORCOUNTERSAMDPROC select = gl_proc("glSelectPerfMonitorCountersAMD");
    PFNGLBEGINPERFMONITORAMDPROC begin = gl_proc("glBeginPerfMonitorAMD");
    PFNGLENDPERFMONITORAMDPROC end = gl_proc("glEndPerfMonitorAMD");
    PFNGLGETPERFMONITORCOUNTERDATAAMDPROC data = gl_proc("glGetPerfMonitorCounterDataAMD");
    PFNGLGETPERFMONITORCOUNTERSTRINGAMDPROC string = gl_proc("glGetPerfMonitorCounterStringAMD");
    PFNGLGETPERFMONITORCOUNTERSAMDPROC counters = gl_proc("glGetPerfMonitorCountersAMD");
    PFNGLGETPERFMONITORGROUPSAMDPROC groups = gl_proc("glGetPerfMonitorGroupsAMD");
    GLint group_count = 0;
    groups(&group_count, 0, NULL);
    GLuint group = 0, counter = 0;
    bool found = false;
    for (GLuint g = 0; !found && g < (GLuint)group_count; g++) {
        GLint n = 0;
        counters(g, &n, NULL, 0, NULL);
        for (GLuint c = 0; !found && c < (GLuint)n; c++) {
            char name[64] = {0};
            string(g, c, sizeof(name) - 1, NULL, name);
            found = strcmp(name, "DrawCalls") == 0;
            group = g, counter = c;
        }
    }
    assert_true(found);
    void *gles = open_library("libGLESv2.so.2");
    void (*draw)(GLenum, GLint, GLsizei) =
        (void (*)(GLenum, GLint, GLsizei))dlsym(gles, "glDrawArrays");
    void (*finish)(void) = (void (*)(void))dlsym(gles, "glFinish");
    GLuint m;
    gen(1, &m);
    select(m, GL_TRUE, group, 1, &counter);
    begin(m);
    draw(GL_POINTS, 0, 1);
    draw(GL_POINTS, 0, 1);
    end(m);
    finish();
    GLuint result[4];
    data(m, GL_PERFMON_RESULT_AMD, sizeof(result), result, NULL);
    uint64_t draws;
    memcpy(&draws, &result[2], 8);
    assert_int_equal(draws, 2);
    dlclose(gles);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* dlsym(RTLD_DEFAULT) and dlsym(RTLD_NEXT) called from a library opened
 * with RTLD_LOCAL search that library's scope (itself and its dependencies
 * after the global scope), under the shims as without them: the interposer
 * once searched from inside tally, where the library's own symbols are not
 * in scope (RenderDoc's replay lost its marker that way). The truth is what
 * dlsym finds through the library's own handle, which no caller changes. */
static void lookups_from_a_local_library_keep_its_scope(void **state)
{
    (void)state;
    lookup_fn by_default, by_next;
    void *lib = local_scope_open(&by_default, &by_next);
    local_scope_check_lookups(lib, by_default, by_next);
    assert_ptr_equal(by_default("malloc"), dlsym(RTLD_DEFAULT, "malloc"));
    /* And the shim's wrappers are still what a GL lookup finds. */
    assert_ptr_equal(by_default("glDrawArrays"), dlsym(RTLD_DEFAULT, "glDrawArrays"));
    dlclose(lib);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(extension_functions_are_found_in_every_gl_library),
        cmocka_unit_test(wrapped_core_functions_resolve_to_the_shim_in_opened_libraries),
        cmocka_unit_test(get_proc_address_found_by_dlsym_answers_with_wrappers),
        cmocka_unit_test(rtld_next_stays_relative_to_the_caller),
        cmocka_unit_test(other_libraries_are_untouched),
        cmocka_unit_test(lookups_from_a_local_library_keep_its_scope),
        cmocka_unit_test(draws_through_a_dlsym_pointer_are_recorded),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("gl_preload", tests, gl_fixture_setup, gl_fixture_teardown);
}
