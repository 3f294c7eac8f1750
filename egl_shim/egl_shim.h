/*
 * What the files of libtally_egl.so share. The shim adds EGL_BRCM_event_monitor
 * to any EGL driver: it answers the extension's six functions from the engine's
 * timeline and wraps eglQueryString (to list the extension), eglGetError (to
 * report its own errors); preload/ hands all of them out to lookups
 * (registration.c).
 */
#ifndef TALLY_EGL_SHIM_H
#define TALLY_EGL_SHIM_H

#define EGL_EGLEXT_PROTOTYPES
#include "tally/egl_event_monitor.h"
#include "tally_preload.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

/* The driver's functions the wrappers call down to (NULL until libEGL is
 * loaded), through TALLY_PRELOAD_NEXT. */
extern _Atomic(void *) real_eglQueryString;
extern _Atomic(void *) real_eglGetError;

/* Errors. EGL keeps one error per thread, the outcome of the thread's last EGL
 * call. A shim function ends with egl_error_set (EGL_SUCCESS included); a
 * wrapper that passes a call down to the driver calls egl_error_pass_down
 * first, so the driver's outcome is the one eglGetError reports. */
EGLBoolean egl_error_set(EGLint error);
void egl_error_pass_down(void);

/* The extension string of a display with EGL_BRCM_event_monitor appended;
 * `driver` when it lists it already. The result lives until exit. */
const char *extension_string_with_ours(const char *driver);

/* The sampler lock, one holder per user at a time across processes: EGL_TRUE
 * when this process got it, EGL_FALSE when another process holds it. */
EGLBoolean sampler_lock_take(void);
void sampler_lock_give_back(void);
/* In a child forked by the holder: the child shares the lock's open file with
 * its parent, so it lets go of the file without unlocking it. */
void sampler_lock_forget(void);

/* The process-wide engine device, opened on first use; NULL if it cannot be. */
struct tally_device *shim_device(void);

#endif
