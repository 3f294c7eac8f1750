/*
 * eglGetError for a driver and a shim side by side. Each thread keeps the
 * outcome of its last shim call. A shim call supersedes the driver's error
 * (EGL reports the last call's), so it takes that error off the driver; when
 * eglGetError finds an error on the driver again, a driver call failed after
 * the shim's and its error is the newer one.
 */
#include <stddef.h>

#include "egl_shim.h"

typedef EGLint(EGLAPIENTRYP get_error_fn)(void);

/* 0: the driver's outcome is the last one. */
static _Thread_local EGLint shim_outcome;

static EGLint take_driver_error(void)
{
    get_error_fn driver = (get_error_fn)TALLY_PRELOAD_NEXT(real_eglGetError, "eglGetError");
    return driver ? driver() : EGL_SUCCESS;
}

EGLBoolean egl_error_set(EGLint error)
{
    take_driver_error();
    shim_outcome = error;
    return error == EGL_SUCCESS;
}

void egl_error_pass_down(void)
{
    shim_outcome = 0;
}

SHIM_EXPORT EGLint EGLAPIENTRY eglGetError(void)
{
    EGLint driver = take_driver_error();
    EGLint shim = shim_outcome;
    shim_outcome = 0;
    if (driver != EGL_SUCCESS || !shim)
        return driver;
    return shim;
}
