/*
 * eglGetError for a driver and a shim side by side. EGL reports the outcome
 * of the thread's last EGL call, and most of those calls go straight to the
 * driver without passing the shim, so the shim cannot see when its own error
 * has been superseded. It lets the driver tell instead: when a shim call
 * fails, the shim leaves a mark in the driver's error state, EGL_BAD_PARAMETER
 * from eglBindAPI(EGL_NONE) (a call that changes nothing else). Any driver
 * call after that replaces the mark (EGL_SUCCESS or its own error), so
 * eglGetError reports the shim's error only while the driver still holds the
 * mark, and the driver's outcome otherwise.
 *
 * What this cannot tell apart: a later driver call that itself fails with
 * EGL_BAD_PARAMETER after a shim error of another kind (EGL_BAD_ACCESS,
 * EGL_NOT_INITIALIZED) reads as the shim's. And a program that installed an
 * EGL_KHR_debug callback hears of each shim error as eglBindAPI's.
 */
#include <stdbool.h>
#include <stddef.h>

#include "egl_shim.h"

typedef EGLint(EGLAPIENTRYP get_error_fn)(void);
typedef EGLBoolean(EGLAPIENTRYP bind_api_fn)(EGLenum);

#define MARK EGL_BAD_PARAMETER

static _Atomic(void *) real_eglBindAPI;

/* The thread's last shim error; 0 when the driver's outcome is the last. */
static _Thread_local EGLint shim_error;
/* Whether the driver holds the mark for shim_error (false only when no
 * libEGL is loaded, and then no driver call can supersede it). */
static _Thread_local bool marked;

static EGLint take_driver_error(void)
{
    get_error_fn driver = (get_error_fn)TALLY_PRELOAD_NEXT(real_eglGetError, "eglGetError");
    return driver ? driver() : EGL_SUCCESS;
}

static bool leave_mark(void)
{
    bind_api_fn bind = (bind_api_fn)TALLY_PRELOAD_NEXT(real_eglBindAPI, "eglBindAPI");
    if (!bind)
        return false;
    bind(EGL_NONE);
    return true;
}

EGLBoolean egl_error_set(EGLint error)
{
    take_driver_error(); /* this call's outcome replaces the driver's */
    if (error == EGL_SUCCESS) {
        shim_error = 0;
        return EGL_TRUE;
    }
    marked = leave_mark();
    shim_error = error;
    return EGL_FALSE;
}

void egl_error_pass_down(void)
{
    shim_error = 0;
}

SHIM_EXPORT EGLint EGLAPIENTRY eglGetError(void)
{
    EGLint driver = take_driver_error();
    EGLint shim = shim_error;
    shim_error = 0;
    if (!shim)
        return driver;
    if (marked)
        return driver == MARK ? shim : driver;
    return driver != EGL_SUCCESS ? driver : shim;
}
