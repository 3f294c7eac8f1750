/*
 * The shim's entries in the process's preload registry (preload/): its six
 * functions, which no driver defines (shim_only), and its wrappers of
 * eglQueryString and eglGetError. The registry hands them out wherever a
 * program looks EGL functions up: eglGetProcAddress (glvnd would answer the
 * wrapped names with its own exports) and dlsym on a libEGL.so.1 the program
 * opened itself.
 */
#include "egl_shim.h"

_Atomic(void *) real_eglQueryString;
_Atomic(void *) real_eglGetError;

#define SHIM_ONLY(name)                                                                            \
    {                                                                                              \
#name, (void *)name, NULL, true                                                            \
    }

static tally_preload_symbol shim_symbols[] = {
    SHIM_ONLY(eglGetEventConstantBRCM),
    SHIM_ONLY(eglGetEventTrackInfoBRCM),
    SHIM_ONLY(eglGetEventInfoBRCM),
    SHIM_ONLY(eglGetEventDataFieldInfoBRCM),
    SHIM_ONLY(eglSetEventCollectionBRCM),
    SHIM_ONLY(eglGetEventDataBRCM),
    {"eglQueryString", (void *)eglQueryString, &real_eglQueryString, false},
    {"eglGetError", (void *)eglGetError, &real_eglGetError, false},
};

__attribute__((constructor)) static void register_shim_symbols(void)
{
    tally_preload_register("egl", shim_symbols, sizeof(shim_symbols) / sizeof(shim_symbols[0]));
}
