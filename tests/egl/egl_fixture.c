/* The shared starting point of the EGL shim's tests; see fixture.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egl_fixture.h"

int egl_fixture_setup(void **state)
{
    struct egl_fixture *fx = calloc(1, sizeof *fx);
    if (!fx)
        return -1;
    unsetenv("DISPLAY");
    setenv("EGL_PLATFORM", "surfaceless", 1);
    setenv("TALLY_CLOCK", "virtual", 1);
    strcpy(fx->runtime_dir, "/tmp/tally-egl-test-XXXXXX");
    if (!mkdtemp(fx->runtime_dir))
        return -1;
    setenv("XDG_RUNTIME_DIR", fx->runtime_dir, 1);
    fx->display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    if (fx->display == EGL_NO_DISPLAY || !eglInitialize(fx->display, NULL, NULL))
        return -1;
    if (tally_device_acquire_shared(&fx->device) != TALLY_OK ||
        tally_context_create(fx->device, "egl-test", &fx->context) != TALLY_OK ||
        tally_stream_create(fx->context, &fx->stream) != TALLY_OK)
        return -1;
    *state = fx;
    return 0;
}

int egl_fixture_teardown(void **state)
{
    struct egl_fixture *fx = *state;
    struct brcm brcm;
    brcm_load(&brcm);
    brcm.collection(EGL_RELEASE_EVENTS_BRCM); /* whether or not the case acquired it */
    eglGetError();
    tally_stream_destroy(fx->stream);
    tally_context_destroy(fx->context);
    tally_device_release_shared(fx->device);
    eglTerminate(fx->display);
    char path[128];
    snprintf(path, sizeof path, "%s/tally/egl_event_monitor.lock", fx->runtime_dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/tally", fx->runtime_dir);
    rmdir(path);
    rmdir(fx->runtime_dir);
    free(fx);
    return 0;
}

void egl_fixture_submit(struct egl_fixture *fx)
{
    tally_submission sub = {.streams = &fx->stream,
                            .stream_count = 1,
                            .flags = TALLY_SUBMIT_CONSUME,
                            .api_name = "test"};
    assert_int_equal(tally_submit(fx->device, &sub, NULL), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(fx->device), TALLY_OK);
}

void egl_fixture_draw(struct egl_fixture *fx, uint32_t count, uint32_t instances, uint8_t topology)
{
    tally_draw draw = {.api_name = "glDrawArrays",
                       .count = count,
                       .instance_count = instances,
                       .topology = topology};
    assert_int_equal(tally_stream_draw(fx->stream, &draw), TALLY_OK);
}

void brcm_load(struct brcm *brcm)
{
    brcm->constant = (PFNEGLGETEVENTCONSTANTBRCMPROC)eglGetProcAddress("eglGetEventConstantBRCM");
    brcm->track_info =
        (PFNEGLGETEVENTTRACKINFOBRCMPROC)eglGetProcAddress("eglGetEventTrackInfoBRCM");
    brcm->event_info = (PFNEGLGETEVENTINFOBRCMPROC)eglGetProcAddress("eglGetEventInfoBRCM");
    brcm->field_info =
        (PFNEGLGETEVENTDATAFIELDINFOBRCMPROC)eglGetProcAddress("eglGetEventDataFieldInfoBRCM");
    brcm->collection =
        (PFNEGLSETEVENTCOLLECTIONBRCMPROC)eglGetProcAddress("eglSetEventCollectionBRCM");
    brcm->data = (PFNEGLGETEVENTDATABRCMPROC)eglGetProcAddress("eglGetEventDataBRCM");
    assert_non_null(brcm->constant);
    assert_non_null(brcm->track_info);
    assert_non_null(brcm->event_info);
    assert_non_null(brcm->field_info);
    assert_non_null(brcm->collection);
    assert_non_null(brcm->data);
}

static uint64_t read_unsigned(const unsigned char *p, EGLint bytes)
{
    if (bytes == 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

size_t egl_records_decode(const struct brcm *brcm, const unsigned char *data, size_t bytes,
                          struct egl_record *records, size_t max_records)
{
    size_t n = 0, at = 0;
    while (at < bytes) {
        assert_true(n < max_records);
        assert_true(bytes - at >= 24);
        struct egl_record *r = &records[n++];
        memset(r, 0, sizeof *r);
        r->timestamp_us = read_unsigned(data + at, 8);
        r->track = (uint32_t)read_unsigned(data + at + 8, 4);
        r->id = (uint32_t)read_unsigned(data + at + 12, 4);
        r->event = (uint32_t)read_unsigned(data + at + 16, 4);
        r->type = (uint32_t)read_unsigned(data + at + 20, 4);
        at += 24;
        EGLint fields = 0, total = 0;
        assert_true(brcm->event_info((EGLint)r->event, 0, NULL, &fields, &total));
        assert_true(fields <= 8);
        r->field_count = (uint32_t)fields;
        for (EGLint f = 0; f < fields; f++) {
            EGLBoolean is_signed = EGL_TRUE;
            EGLint width = 0;
            assert_true(brcm->field_info((EGLint)r->event, f, 0, NULL, &is_signed, &width));
            assert_true(bytes - at >= (size_t)width);
            r->fields[f] = read_unsigned(data + at, width);
            at += (size_t)width;
        }
    }
    return n;
}

size_t egl_records_read_all(const struct brcm *brcm, struct egl_record *records, size_t max_records,
                            EGLBoolean *lost)
{
    EGLint size = -1;
    assert_true(brcm->data(0, NULL, &size, NULL, NULL));
    assert_true(size >= 0);
    unsigned char *data = malloc((size_t)size + 1);
    assert_non_null(data);
    EGLint written = -1;
    assert_true(brcm->data(size, data, &written, lost, NULL));
    assert_int_equal(written, size);
    size_t n = egl_records_decode(brcm, data, (size_t)written, records, max_records);
    free(data);
    return n;
}

extern char **environ;

/* This process's environment, plus LD_PRELOAD of the shim (behind the
 * sanitizer runtime in sanitizer builds, which must come first), no leak
 * checking, and extra. */
static char **probe_environment(const char *const *extra)
{
    size_t n = 0, extras = 0;
    while (environ[n])
        n++;
    while (extra && extra[extras])
        extras++;
    char **env = calloc(n + extras + 3, sizeof *env);
    assert_non_null(env);
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
            strncmp(environ[i], "ASAN_OPTIONS=", 13) != 0)
            env[at++] = environ[i];
    /* The drivers' own leaks are not ours to report (the in-process tests
     * keep leak checking for the shim). */
    env[at++] = "ASAN_OPTIONS=detect_leaks=0";
    for (size_t i = 0; i < extras; i++)
        env[at++] = (char *)extra[i];
    static char preload[4096];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s%s%s", TALLY_SANITIZER_PRELOAD,
             TALLY_SANITIZER_PRELOAD[0] ? ":" : "", TALLY_EGL_SHIM);
    env[at++] = preload;
    return env;
}

pid_t egl_probe_start(const char *const *args, const char *const *extra_env, int *to_probe,
                      int *from_probe)
{
    return egl_program_start(TALLY_EGL_PROBE, args, extra_env, to_probe, from_probe);
}

pid_t egl_program_start(const char *program, const char *const *args, const char *const *extra_env,
                        int *to_probe, int *from_probe)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    if (to_probe)
        assert_int_equal(pipe(in), 0);
    if (from_probe)
        assert_int_equal(pipe(out), 0);
    char *argv[8] = {(char *)program};
    for (size_t i = 0; args[i] && i < 6; i++)
        argv[i + 1] = (char *)args[i];
    char **env = probe_environment(extra_env);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (to_probe) {
            dup2(in[0], STDIN_FILENO);
            close(in[0]);
            close(in[1]);
        }
        if (from_probe) {
            dup2(out[1], STDOUT_FILENO);
            close(out[0]);
            close(out[1]);
        }
        execve(argv[0], argv, env);
        _exit(127);
    }
    free(env);
    if (to_probe) {
        close(in[0]);
        *to_probe = in[1];
    }
    if (from_probe) {
        close(out[1]);
        *from_probe = out[0];
    }
    return pid;
}

int egl_probe_wait(pid_t pid)
{
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int egl_probe_run(const char *const *args, const char *const *extra_env)
{
    return egl_probe_wait(egl_probe_start(args, extra_env, NULL, NULL));
}
