/* One process at a time holds the event sampler: another is refused with
 * EGL_BAD_ACCESS until the holder releases it or exits, however it exits. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EGL_EGLEXT_PROTOTYPES
#include "egl_fixture.h"

#define PROBE_GOT_IT 0
#define PROBE_REFUSED 3

static const char *const acquire_args[] = {"acquire", NULL};
static const char *const hold_args[] = {"hold", NULL};

static void another_process_is_refused_while_this_one_holds_the_sampler(void **state)
{
    (void)state;
    assert_int_equal(egl_probe_run(acquire_args, NULL), PROBE_GOT_IT);
    assert_true(eglSetEventCollectionBRCM(EGL_ACQUIRE_EVENTS_BRCM));
    assert_int_equal(egl_probe_run(acquire_args, NULL), PROBE_REFUSED);
    assert_true(eglSetEventCollectionBRCM(EGL_RELEASE_EVENTS_BRCM));
    assert_int_equal(egl_probe_run(acquire_args, NULL), PROBE_GOT_IT);
}

static pid_t start_holder(int *to_probe)
{
    int from_probe = -1;
    pid_t pid = egl_probe_start(hold_args, NULL, to_probe, &from_probe);
    char said[8] = "";
    assert_int_equal(read(from_probe, said, 5), 5);
    assert_memory_equal(said, "held\n", 5);
    close(from_probe);
    return pid;
}

static void this_process_is_refused_until_the_holder_exits(void **state)
{
    (void)state;
    int to_probe = -1;
    pid_t holder = start_holder(&to_probe);
    assert_false(eglSetEventCollectionBRCM(EGL_ACQUIRE_EVENTS_BRCM));
    assert_int_equal(eglGetError(), EGL_BAD_ACCESS);
    EGLint written = 0;
    assert_false(eglGetEventDataBRCM(0, NULL, &written, NULL, NULL));
    assert_int_equal(eglGetError(), EGL_BAD_ACCESS);
    close(to_probe); /* it exits without releasing */
    assert_int_equal(egl_probe_wait(holder), 0);
    assert_true(eglSetEventCollectionBRCM(EGL_ACQUIRE_EVENTS_BRCM));
}

static void a_killed_holder_leaves_the_sampler_free(void **state)
{
    (void)state;
    int to_probe = -1;
    pid_t holder = start_holder(&to_probe);
    assert_false(eglSetEventCollectionBRCM(EGL_ACQUIRE_EVENTS_BRCM));
    kill(holder, SIGKILL);
    assert_int_equal(egl_probe_wait(holder), 128 + SIGKILL);
    close(to_probe);
    assert_true(eglSetEventCollectionBRCM(EGL_ACQUIRE_EVENTS_BRCM));
}

/* A child forked by the holder shares its lock file, but is another
 * process: it must be refused, and its exit must not free the sampler. */
static void a_forked_child_of_the_holder_does_not_hold_the_sampler(void **state)
{
    (void)state;
    assert_true(eglSetEventCollectionBRCM(EGL_ACQUIRE_EVENTS_BRCM));
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        EGLint written = 0;
        bool refused_data =
            !eglGetEventDataBRCM(0, NULL, &written, NULL, NULL) && eglGetError() == EGL_BAD_ACCESS;
        bool refused =
            !eglSetEventCollectionBRCM(EGL_ACQUIRE_EVENTS_BRCM) && eglGetError() == EGL_BAD_ACCESS;
        _exit(refused_data && refused ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(egl_probe_run(acquire_args, NULL), PROBE_REFUSED);
    EGLint written = -1;
    assert_true(eglGetEventDataBRCM(0, NULL, &written, NULL, NULL)); /* still ours */
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(another_process_is_refused_while_this_one_holds_the_sampler,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(this_process_is_refused_until_the_holder_exits,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_killed_holder_leaves_the_sampler_free, egl_fixture_setup,
                                        egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_forked_child_of_the_holder_does_not_hold_the_sampler,
                                        egl_fixture_setup, egl_fixture_teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
