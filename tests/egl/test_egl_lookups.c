/* The extension is reachable however a program finds EGL functions, and a
 * program that never uses EGL pays nothing for the preloaded shim. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <unistd.h>

#include "egl_fixture.h"

static void a_program_that_opens_libegl_itself_finds_the_extension(void **state)
{
    (void)state;
    const char *const args[] = {NULL};
    int status = egl_probe_wait(egl_program_start(TALLY_EGL_DLOPEN_PROBE, args, NULL, NULL, NULL));
    assert_int_equal(status, 0);
}

/* Nothing of the engine starts: no device opens, so no trace is written. */
static void a_program_without_egl_opens_no_device(void **state)
{
    struct egl_fixture *fx = *state;
    char trace_path[128], trace_env[160];
    snprintf(trace_path, sizeof trace_path, "%s/unused-trace.json", fx->runtime_dir);
    snprintf(trace_env, sizeof trace_env, "TALLY_TRACE=%s", trace_path);
    const char *const args[] = {"nothing", NULL};
    const char *const env[] = {trace_env, NULL};
    int status = egl_probe_wait(egl_program_start(TALLY_EGL_DLOPEN_PROBE, args, env, NULL, NULL));
    assert_int_equal(status, 0);
    assert_int_equal(access(trace_path, F_OK), -1);
    /* the same program using the extension does open it */
    const char *const use[] = {NULL};
    status = egl_probe_wait(egl_program_start(TALLY_EGL_DLOPEN_PROBE, use, env, NULL, NULL));
    assert_int_equal(status, 0);
    assert_int_equal(access(trace_path, F_OK), 0);
    unlink(trace_path);
}

/* An exit handler of the program may run after the engine closed the
 * shared device; the extension then fails cleanly. */
static void a_call_after_the_engine_closed_fails_cleanly(void **state)
{
    (void)state;
    const char *const args[] = {"late", NULL};
    assert_int_equal(egl_probe_run(args, NULL), 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_program_that_opens_libegl_itself_finds_the_extension,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_program_without_egl_opens_no_device, egl_fixture_setup,
                                        egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_call_after_the_engine_closed_fails_cleanly,
                                        egl_fixture_setup, egl_fixture_teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
