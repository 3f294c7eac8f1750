/*
 * A program that opens libEGL.so.1 itself (RTLD_LOCAL) and finds every EGL
 * function with dlsym on that handle, as waffle, epoxy and glretrace do. It
 * links no EGL library and is run with libtally_egl.so preloaded.
 *   egl_dlopen_probe          exit 0 when the extension is found and works
 *                             that way; otherwise the number of the failed check
 *   egl_dlopen_probe nothing  touches no EGL at all and exits 0
 */
#include <dlfcn.h>
#include <string.h>

#include "tally/egl_event_monitor.h"

static const char *const shim_names[] = {
    "eglGetEventConstantBRCM",      "eglGetEventTrackInfoBRCM",  "eglGetEventInfoBRCM",
    "eglGetEventDataFieldInfoBRCM", "eglSetEventCollectionBRCM", "eglGetEventDataBRCM",
};
#define SHIM_NAMES (sizeof(shim_names) / sizeof(shim_names[0]))

typedef void *(*get_proc_address_fn)(const char *);
typedef EGLDisplay (*get_display_fn)(EGLNativeDisplayType);
typedef EGLBoolean (*initialize_fn)(EGLDisplay, EGLint *, EGLint *);
typedef EGLBoolean (*terminate_fn)(EGLDisplay);
typedef const char *(*query_string_fn)(EGLDisplay, EGLint);
typedef EGLint (*get_error_fn)(void);

static int use_the_extension(void *egl)
{
    get_proc_address_fn get_proc_address = (get_proc_address_fn)dlsym(egl, "eglGetProcAddress");
    if (!get_proc_address)
        return 11;
    for (size_t i = 0; i < SHIM_NAMES; i++) {
        void *found = dlsym(egl, shim_names[i]);
        if (!found || get_proc_address(shim_names[i]) != found)
            return 12;
    }
    get_display_fn get_display = (get_display_fn)dlsym(egl, "eglGetDisplay");
    initialize_fn initialize = (initialize_fn)dlsym(egl, "eglInitialize");
    terminate_fn terminate = (terminate_fn)dlsym(egl, "eglTerminate");
    query_string_fn query_string = (query_string_fn)dlsym(egl, "eglQueryString");
    get_error_fn get_error = (get_error_fn)dlsym(egl, "eglGetError");
    if (!get_display || !initialize || !terminate || !query_string || !get_error)
        return 13;
    EGLDisplay display = get_display(EGL_DEFAULT_DISPLAY);
    if (!initialize(display, NULL, NULL))
        return 14;
    const char *extensions = query_string(display, EGL_EXTENSIONS);
    if (!extensions || !strstr(extensions, "EGL_BRCM_event_monitor"))
        return 15;
    PFNEGLGETEVENTCONSTANTBRCMPROC constant =
        (PFNEGLGETEVENTCONSTANTBRCMPROC)dlsym(egl, "eglGetEventConstantBRCM");
    PFNEGLGETEVENTTRACKINFOBRCMPROC track_info =
        (PFNEGLGETEVENTTRACKINFOBRCMPROC)dlsym(egl, "eglGetEventTrackInfoBRCM");
    if (constant(EGL_NUM_EVENTS_BRCM) != 7)
        return 16;
    /* the handle's eglGetError reports the shim's errors */
    if (track_info(-1, 0, NULL) || get_error() != EGL_BAD_PARAMETER)
        return 17;
    terminate(display);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "nothing") == 0)
        return 0;
    void *egl = dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!egl)
        return 10;
    int status = use_the_extension(egl);
    dlclose(egl);
    return status;
}
