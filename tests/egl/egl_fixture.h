/* What the EGL shim's tests start from: a surfaceless EGL display, a private
 * runtime directory for the sampler lock, and a stream on the process-wide
 * engine device the shim reads its events from. */
#ifndef TALLY_TEST_EGL_FIXTURE_H
#define TALLY_TEST_EGL_FIXTURE_H

#include <stddef.h>
#include <sys/types.h>

#include "tally/egl_event_monitor.h"
#include "tally/tally.h"

struct egl_fixture {
    EGLDisplay display;
    tally_device *device; /* the shared one */
    tally_context *context;
    tally_stream *stream;
    char runtime_dir[64];
};

/* Sets the environment every case runs in (surfaceless EGL, virtual clock,
 * its own runtime directory) before anything reads it. */
int egl_fixture_setup(void **state);
int egl_fixture_teardown(void **state);

/* Submits the stream (consumed) and waits until the queue ran it. */
void egl_fixture_submit(struct egl_fixture *fx);
void egl_fixture_draw(struct egl_fixture *fx, uint32_t count, uint32_t instances, uint8_t topology);

/* The extension's functions, found the way a client finds them. */
struct brcm {
    PFNEGLGETEVENTCONSTANTBRCMPROC constant;
    PFNEGLGETEVENTTRACKINFOBRCMPROC track_info;
    PFNEGLGETEVENTINFOBRCMPROC event_info;
    PFNEGLGETEVENTDATAFIELDINFOBRCMPROC field_info;
    PFNEGLSETEVENTCOLLECTIONBRCMPROC collection;
    PFNEGLGETEVENTDATABRCMPROC data;
};
void brcm_load(struct brcm *brcm);

/* One record of eglGetEventDataBRCM, decoded the way a client decodes it: by
 * the widths eglGetEventDataFieldInfoBRCM gives. */
struct egl_record {
    uint64_t timestamp_us;
    uint32_t track, id, event, type;
    uint32_t field_count;
    uint64_t fields[8];
};

/* Decodes every record of the buffer; fails the test if one is cut short. */
size_t egl_records_decode(const struct brcm *brcm, const unsigned char *data, size_t bytes,
                          struct egl_record *records, size_t max_records);
/* Reads and decodes everything collected so far (one size query, one read). */
size_t egl_records_read_all(const struct brcm *brcm, struct egl_record *records, size_t max_records,
                            EGLBoolean *lost);

#endif

/* egl_probe (see egl_probe.c) in a process of its own, with libtally_egl.so
 * preloaded and `extra_env` ("NAME=value", NULL-terminated; may be NULL) added
 * to this process's environment. With pipes given, *to_probe writes its stdin
 * and *from_probe reads its stdout. */
pid_t egl_probe_start(const char *const *args, const char *const *extra_env, int *to_probe,
                      int *from_probe);
/* The same for any program: program is its path, args follow it. */
pid_t egl_program_start(const char *program, const char *const *args, const char *const *extra_env,
                        int *to_probe, int *from_probe);
/* Its exit status, or 128 + the signal that ended it. */
int egl_probe_wait(pid_t pid);
/* Runs it to the end. */
int egl_probe_run(const char *const *args, const char *const *extra_env);
