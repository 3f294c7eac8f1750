/* Finding real functions and answering dlsym/GetProcAddress lookups with
 * registered wrappers. */
#include "preload_internal.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*get_proc_address_fn)(const char *);

static _Atomic(void *) libc_dlsym;
/* Set by the constructor: before it, sanitizer runtimes may still be setting
 * up (they look up their interceptors with dlsym), so dlsym stays on code
 * that is not instrumented and touches nothing but libc. */
static _Atomic(bool) initialized;

#define NOT_INSTRUMENTED __attribute__((no_sanitize("address,undefined,thread")))

/* The exported dlsym of a preloaded shim shadows libc's; dlvsym asks for
 * libc's own versioned definition, which an unversioned interposer never
 * matches. glibc 2.34 moved dlsym into libc under a new version. */
NOT_INSTRUMENTED void *tally_preload_libc_dlsym_address(void)
{
    void *found = atomic_load_explicit(&libc_dlsym, memory_order_acquire);
    if (found)
        return found;
    found = dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34");
    if (!found)
        found = dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5");
    atomic_store_explicit(&libc_dlsym, found, memory_order_release);
    return found;
}

void *tally_preload_libc_dlsym(void *handle, const char *name)
{
    dlsym_fn real = (dlsym_fn)tally_preload_libc_dlsym_address();
    return real ? real(handle, name) : NULL;
}

static const char *const api_libraries[] = {
    "libGL.so.1",   "libGL.so",          "libOpenGL.so.0",
    "libOpenGL.so", "libGLX.so.0",       "libGLX.so",
    "libEGL.so.1",  "libEGL.so",         "libGLESv2.so.2",
    "libGLESv2.so", "libGLESv1_CM.so.1", "libGLESv1_CM.so",
    NULL,
};

static bool is_api_library_path(const char *path)
{
    if (!path)
        return false;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    for (const char *const *library = api_libraries; *library; library++) {
        if (strcmp(base, *library) == 0)
            return true;
    }
    return false;
}

bool tally_preload_is_api_handle(void *handle)
{
    if (handle == RTLD_DEFAULT)
        return true;
    struct link_map *map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map)
        return false;
    return is_api_library_path(map->l_name);
}

/* A library's own definition, only if the program already loaded it. */
static void *find_in_loaded(const char *const *libraries, const char *name)
{
    for (const char *const *library = libraries; *library; library++) {
        void *handle = dlopen(*library, RTLD_LAZY | RTLD_NOLOAD);
        if (!handle)
            continue;
        void *found = tally_preload_libc_dlsym(handle, name);
        dlclose(handle);
        if (found)
            return found;
    }
    return NULL;
}

static const char *const gl_libraries[] = {"libGL.so.1", "libOpenGL.so.0", "libGLESv2.so.2",
                                           "libGLESv1_CM.so.1", NULL};
static const char *const glx_libraries[] = {"libGLX.so.0", "libGL.so.1", NULL};
static const char *const egl_libraries[] = {"libEGL.so.1", NULL};

void *tally_preload_find_real(const char *name)
{
    if (!name)
        return NULL;
    if (strncmp(name, "egl", 3) == 0)
        return find_in_loaded(egl_libraries, name);
    if (strncmp(name, "glX", 3) == 0)
        return find_in_loaded(glx_libraries, name);
    void *found = find_in_loaded(gl_libraries, name);
    if (found || strncmp(name, "gl", 2) != 0)
        return found;
    /* Extension functions live behind the dispatch of GetProcAddress. */
    get_proc_address_fn egl =
        (get_proc_address_fn)find_in_loaded(egl_libraries, "eglGetProcAddress");
    if (egl && (found = egl(name)))
        return found;
    get_proc_address_fn glx =
        (get_proc_address_fn)find_in_loaded(glx_libraries, "glXGetProcAddressARB");
    return glx ? glx(name) : NULL;
}

void *tally_preload_resolve_into(_Atomic(void *) *slot, const char *name)
{
    void *found = tally_preload_find_real(name);
    if (!found)
        return NULL;
    void *expected = NULL;
    /* Another thread, or a chained registration, may have filled it first. */
    if (!atomic_compare_exchange_strong_explicit(slot, &expected, found, memory_order_acq_rel,
                                                 memory_order_acquire))
        return expected;
    return found;
}

void *tally_preload_substitute(const char *name, void *real, bool keep_real)
{
    tally_preload_symbol *symbol = tally_preload_lookup(name);
    if (!symbol)
        return real;
    if (!real && !symbol->shim_only)
        return NULL;
    if (keep_real && real && symbol->real && real != symbol->wrapper) {
        void *expected = NULL;
        atomic_compare_exchange_strong_explicit(symbol->real, &expected, real, memory_order_acq_rel,
                                                memory_order_acquire);
    }
    return symbol->wrapper;
}

static void *dlsym_after_init(void *handle, const char *name, void *real)
{
    if (!name || !tally_preload_is_api_handle(handle))
        return real;
    /* A global lookup finds the shims' own exports: never a real function. */
    return tally_preload_substitute(name, real, handle != RTLD_DEFAULT);
}

NOT_INSTRUMENTED void *tally_preload_dlsym(void *handle, const char *name)
{
    dlsym_fn libc = (dlsym_fn)tally_preload_libc_dlsym_address();
    void *real = libc ? libc(handle, name) : NULL;
    if (!atomic_load_explicit(&initialized, memory_order_acquire))
        return real;
    return dlsym_after_init(handle, name, real);
}

NOT_INSTRUMENTED void *tally_preload_default_dlsym(const char *name)
{
    void *libc = tally_preload_libc_dlsym_address();
    if (libc && (!atomic_load_explicit(&initialized, memory_order_acquire) || !name ||
                 !tally_preload_lookup(name)))
        return libc;
    return (void *)tally_preload_dlsym;
}

static _Atomic(void *) real_glx_get_proc_address;
static _Atomic(void *) real_glx_get_proc_address_arb;
static _Atomic(void *) real_egl_get_proc_address;

void *tally_preload_glx_get_proc_address(const char *name)
{
    get_proc_address_fn real = (get_proc_address_fn)TALLY_PRELOAD_NEXT(
        real_glx_get_proc_address_arb, "glXGetProcAddressARB");
    return tally_preload_substitute(name, real ? real(name) : NULL, true);
}

void *tally_preload_egl_get_proc_address(const char *name)
{
    get_proc_address_fn real =
        (get_proc_address_fn)TALLY_PRELOAD_NEXT(real_egl_get_proc_address, "eglGetProcAddress");
    return tally_preload_substitute(name, real ? real(name) : NULL, true);
}

static tally_preload_symbol get_proc_address_symbols[] = {
    {"glXGetProcAddress", (void *)tally_preload_glx_get_proc_address, &real_glx_get_proc_address,
     false},
    {"glXGetProcAddressARB", (void *)tally_preload_glx_get_proc_address,
     &real_glx_get_proc_address_arb, false},
    {"eglGetProcAddress", (void *)tally_preload_egl_get_proc_address, &real_egl_get_proc_address,
     false},
};

__attribute__((constructor)) static void register_get_proc_address(void)
{
    tally_preload_libc_dlsym_address();
    atomic_store_explicit(&initialized, true, memory_order_release);
    tally_preload_register("preload", get_proc_address_symbols,
                           sizeof(get_proc_address_symbols) / sizeof(get_proc_address_symbols[0]));
}
