/*
 * A second process for the EGL shim's tests, run with libtally_egl.so
 * preloaded, as a program under `tally run` has it:
 *   egl_probe acquire        exit 0 when it got the sampler, 3 on EGL_BAD_ACCESS
 *   egl_probe hold           acquires, says "held" on stdout, keeps the sampler
 *                            until stdin closes, then exits without releasing
 *   egl_probe late           collects, and reads again from an exit handler that
 *                            runs after the engine closed its device: exit 0
 *                            when that call fails cleanly (EGL_NOT_INITIALIZED)
 *   egl_probe timeline FILE  records two frames of six draws and a dispatch on the shared
 *                            device while collecting, and writes every record
 *                            eglGetEventDataBRCM returns into FILE
 * Any other failure exits 1; a missing extension exits 2.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tally/egl_event_monitor.h"
#include "tally/tally.h"

static PFNEGLSETEVENTCOLLECTIONBRCMPROC set_collection;
static PFNEGLGETEVENTDATABRCMPROC get_data;

static int acquire(void)
{
    if (set_collection(EGL_ACQUIRE_EVENTS_BRCM))
        return 0;
    return eglGetError() == EGL_BAD_ACCESS ? 3 : 1;
}

static int hold(void)
{
    int status = acquire();
    if (status)
        return status;
    printf("held\n");
    fflush(stdout);
    char c;
    while (read(STDIN_FILENO, &c, 1) > 0)
        ;
    return 0;
}

static int record_work(void)
{
    tally_device *device = NULL;
    tally_context *context = NULL;
    tally_stream *stream = NULL;
    if (tally_device_acquire_shared(&device) != TALLY_OK ||
        tally_context_create(device, "probe", &context) != TALLY_OK ||
        tally_stream_create(context, &stream) != TALLY_OK)
        return 1;
    tally_submission submission = {.streams = &stream,
                                   .stream_count = 1,
                                   .flags = TALLY_SUBMIT_CONSUME,
                                   .api_name = "eglSwapBuffers"};
    for (uint32_t frame = 0; frame < 2; frame++) {
        for (uint32_t i = 1; i <= 6; i++) {
            tally_draw draw = {.api_name = "glDrawArrays",
                               .count = 300 * i + frame,
                               .instance_count = i,
                               .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
            tally_stream_draw(stream, &draw);
        }
        tally_dispatch dispatch = {.api_name = "glDispatchCompute",
                                   .groups = {16, 4, 1 + frame},
                                   .local_size = {64, 1, 1}};
        tally_stream_dispatch(stream, &dispatch);
        tally_stream_frame_boundary(stream);
        if (tally_submit(device, &submission, NULL) != TALLY_OK)
            return 1;
    }
    tally_device_wait_idle(device);
    tally_stream_destroy(stream);
    tally_context_destroy(context);
    tally_device_release_shared(device);
    return 0;
}

static int timeline(const char *path)
{
    EGLDisplay display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    if (!eglInitialize(display, NULL, NULL))
        return 1;
    const char *extensions = eglQueryString(display, EGL_EXTENSIONS);
    if (!extensions || !strstr(extensions, "EGL_BRCM_event_monitor"))
        return 2;
    if (acquire() || !set_collection(EGL_START_EVENTS_BRCM) || record_work())
        return 1;
    EGLint size = 0;
    if (!get_data(0, NULL, &size, NULL, NULL))
        return 1;
    void *data = malloc((size_t)size + 1);
    EGLint written = 0;
    if (!data || !get_data(size, data, &written, NULL, NULL) || written != size)
        return 1;
    FILE *out = fopen(path, "wb");
    if (!out || fwrite(data, 1, (size_t)written, out) != (size_t)written || fclose(out) != 0)
        return 1;
    free(data);
    eglTerminate(display);
    return 0;
}

static void read_after_the_engine_closed(void)
{
    EGLint written = -1;
    bool clean = !get_data(0, NULL, &written, NULL, NULL) && eglGetError() == EGL_NOT_INITIALIZED;
    _exit(clean ? 0 : 4);
}

static int late(void)
{
    atexit(read_after_the_engine_closed); /* before the engine's: runs after it */
    if (acquire() || !set_collection(EGL_START_EVENTS_BRCM) || record_work())
        return 1;
    return 0;
}

int main(int argc, char **argv)
{
    set_collection =
        (PFNEGLSETEVENTCOLLECTIONBRCMPROC)eglGetProcAddress("eglSetEventCollectionBRCM");
    get_data = (PFNEGLGETEVENTDATABRCMPROC)eglGetProcAddress("eglGetEventDataBRCM");
    if (!set_collection || !get_data)
        return 2;
    if (argc == 2 && strcmp(argv[1], "acquire") == 0)
        return acquire();
    if (argc == 2 && strcmp(argv[1], "late") == 0)
        return late();
    if (argc == 2 && strcmp(argv[1], "hold") == 0)
        return hold();
    if (argc == 3 && strcmp(argv[1], "timeline") == 0)
        return timeline(argv[2]);
    fprintf(stderr, "usage: egl_probe acquire | hold | late | timeline FILE\n");
    return 1;
}
