/*
 * eglQueryString: EGL_BRCM_event_monitor joins the extensions of every
 * initialized display. The client extensions (EGL_NO_DISPLAY) stay the
 * driver's, and so does every failure (an uninitialized display).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "egl_shim.h"

static const char our_extension[] = "EGL_BRCM_event_monitor";

/* Every string the driver returned, with ours appended: a display's string
 * must stay valid while the display lives, and few distinct ones exist. */
struct extended {
    struct extended *next;
    char *driver; /* a copy: the driver may reuse its storage */
    char *ours;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct extended *cache;

static bool lists(const char *extensions, const char *name)
{
    size_t length = strlen(name);
    for (const char *p = extensions; (p = strstr(p, name)); p += length) {
        bool starts = p == extensions || p[-1] == ' ';
        bool ends = p[length] == '\0' || p[length] == ' ';
        if (starts && ends)
            return true;
    }
    return false;
}

static struct extended *extend(const char *driver)
{
    size_t length = strlen(driver);
    struct extended *e = calloc(1, sizeof *e);
    char *copy = strdup(driver);
    char *ours = malloc(length + sizeof(our_extension) + 1);
    if (!e || !copy || !ours) {
        free(e);
        free(copy);
        free(ours);
        return NULL;
    }
    memcpy(ours, driver, length);
    size_t at = length;
    if (length && driver[length - 1] != ' ')
        ours[at++] = ' ';
    memcpy(ours + at, our_extension, sizeof(our_extension));
    e->driver = copy;
    e->ours = ours;
    return e;
}

const char *extension_string_with_ours(const char *driver)
{
    if (lists(driver, our_extension))
        return driver;
    const char *result = driver; /* out of memory: the driver's, untouched */
    pthread_mutex_lock(&cache_lock);
    struct extended *e = cache;
    while (e && strcmp(e->driver, driver) != 0)
        e = e->next;
    if (!e && (e = extend(driver))) {
        e->next = cache;
        cache = e;
    }
    if (e)
        result = e->ours;
    pthread_mutex_unlock(&cache_lock);
    return result;
}

/* Whether the device can serve the extension. Under the driver backend
 * the device's catalogue is what the first door that measures could
 * measure (docs/driver.md): listing EGL's extensions, which every EGL
 * program does before it makes a context, must not open it first, so
 * there the extension is offered and the device opens at its first use. */
static bool device_serves(void)
{
    const char *backend = secure_getenv("TALLY_BACKEND");
    if (backend && strcmp(backend, "driver") == 0)
        return true;
    return shim_device() != NULL;
}

typedef const char *(EGLAPIENTRYP query_string_fn)(EGLDisplay, EGLint);

SHIM_EXPORT const char *EGLAPIENTRY eglQueryString(EGLDisplay display, EGLint name)
{
    egl_error_pass_down();
    query_string_fn driver =
        (query_string_fn)TALLY_PRELOAD_NEXT(real_eglQueryString, "eglQueryString");
    if (!driver) {
        egl_error_set(EGL_NOT_INITIALIZED); /* no EGL in this process */
        return NULL;
    }
    const char *value = driver(display, name);
    /* A device that cannot open cannot serve the extension: not offered. */
    if (!value || name != EGL_EXTENSIONS || display == EGL_NO_DISPLAY || !device_serves())
        return value;
    return extension_string_with_ours(value);
}
