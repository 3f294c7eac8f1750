/*
 * libtally_preload.so: what every tally preload shim (libtally_gl.so,
 * libtally_egl.so, ...) needs to be seen by programs that open the API
 * libraries themselves, shared once per process.
 *
 * Programs such as piglit (through waffle), glmark2 and apitrace's glretrace
 * dlopen libGL.so.1 / libOpenGL.so.0 / libGLX.so.0 / libEGL.so.1 /
 * libGLESv2.so.2 and look functions up with dlsym(handle, name) or through
 * glXGetProcAddress(ARB) / eglGetProcAddress. Symbols a preload library
 * merely defines are never seen on those paths. This library keeps ONE
 * registry per process of {name, wrapper, real} entries and answers those
 * lookups with the registered wrapper.
 *
 * How a shim uses it
 * ------------------
 * 1. In the shim's CMakeLists.txt:
 *        if(NOT TARGET tally_preload)
 *          add_subdirectory(${PROJECT_SOURCE_DIR}/preload ${PROJECT_BINARY_DIR}/preload)
 *        endif()
 *        tally_preload_add_interposers(tally_egl)
 *    which links libtally_preload.so and compiles interposers.c into the
 *    shim (see 3). The shim needs no GL/EGL library as DT_NEEDED.
 * 2. Define one table of tally_preload_symbol with static storage, one entry
 *    per function the shim wraps, and register it once from a constructor:
 *        static _Atomic(void *) real_glFlush;
 *        static tally_preload_symbol table[] = {
 *            {"glFlush", (void *)glFlush, &real_glFlush}, ...};
 *        tally_preload_register("gl", table, count);
 *    Each wrapper is also exported by the shim under the same name (default
 *    visibility), so programs linked against the API libraries bind to it.
 *    Set shim_only for functions no library defines (extension entry points
 *    the shim implements): they are handed out even when the real lookup
 *    finds nothing. A wrapper calls down with
 *    TALLY_PRELOAD_NEXT(real_glFlush, "glFlush"): the real function, taken
 *    from the slot (filled by lookups the program made, or resolved on first
 *    use from the API libraries already loaded, then the real
 *    eglGetProcAddress / glXGetProcAddressARB). NULL if none can be found: a
 *    wrapper must then return without calling it.
 * 3. Each shim exports the interposers dlsym, glXGetProcAddress,
 *    glXGetProcAddressARB and eglGetProcAddress, compiled from preload/
 *    interposers.c into the shim itself. They must be in the preloaded
 *    object: libc.so.6 (which defines dlsym) comes before a preload's own
 *    dependencies in the global lookup order, so an interposer living only
 *    in libtally_preload.so would never be called. They all forward here,
 *    so with several shims preloaded whichever comes first serves all.
 *
 * Lookup rules
 * ------------
 * - dlsym(handle, name), where handle is RTLD_DEFAULT or a handle of one of
 *   the API libraries above (libGLESv1_CM.so.1 too): the registered wrapper
 *   when the name is registered and the library defines it (or the name is
 *   registered as shim_only); the real dlsym's answer otherwise. The real
 *   address goes into the entry's `real` slot if that is still empty.
 * - dlsym(RTLD_NEXT, name) jumps straight to libc's dlsym with the caller's
 *   return address intact, so "next after the caller" keeps its meaning.
 * - dlsym(RTLD_DEFAULT, name) for a name no shim registered also jumps
 *   straight to libc's dlsym: glibc searches the caller's scope, which for a
 *   library opened with RTLD_LOCAL includes its own group (RenderDoc's
 *   librenderdoc.so finds its replay marker in the Python module that loaded
 *   it that way), and a call from here would search the global scope only.
 *   A registered name answers as above (the global scope finds the shims'
 *   exports first anyway).
 * - dlsym on any other handle is the real dlsym's answer, untouched.
 * - glXGetProcAddress[ARB] / eglGetProcAddress: the real function's answer,
 *   replaced by the wrapper for registered names (and the real answer kept
 *   in the `real` slot).
 * - The real dlsym is libc's, found with dlvsym(RTLD_DEFAULT, "dlsym",
 *   "GLIBC_2.34") and the pre-2.34 version "GLIBC_2.2.5" as fallback
 *   (dlvsym never matches an unversioned interposer). Until this library's
 *   constructor has run, dlsym is only forwarded to libc, on code built
 *   without sanitizer instrumentation: sanitizer runtimes preloaded ahead of
 *   a shim look up their interceptors through it before they are ready.
 * - The EGL/GLX calls that make, destroy and swap contexts are the GL shim's
 *   (eglMakeCurrent, eglDestroyContext, eglSwapBuffers, glXMakeCurrent,
 *   glXMakeContextCurrent, glXDestroyContext, glXSwapBuffers). Another shim
 *   that needs them registers its own wrappers, which then chain (below):
 *   lookups through dlsym/GetProcAddress reach every wrapper in turn, but a
 *   direct call binds to the first preloaded shim's export only.
 * - Registering a name a second time chains: the new entry's `real` slot is
 *   set to the previous wrapper, and lookups return the new wrapper.
 *
 * Nothing here takes a lock on a per-call path of a wrapper: `real` slots
 * are atomics read with acquire ordering; the registry's lock is taken only
 * by registration and by dlsym/GetProcAddress lookups.
 */
#ifndef TALLY_PRELOAD_H
#define TALLY_PRELOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TALLY_PRELOAD_API __attribute__((visibility("default")))

typedef struct tally_preload_symbol {
    const char *name;      /* e.g. "glDrawArrays"; static storage */
    void *wrapper;         /* what lookups of the name return */
    _Atomic(void *) *real; /* filled with the real function; may be NULL */
    bool shim_only;        /* the shim implements it; no library need define it */
} tally_preload_symbol;

/* Adds a shim's table (static storage, never freed). shim names it in logs.
 * Returns 0, or -1 when out of memory (nothing is then registered). */
TALLY_PRELOAD_API int tally_preload_register(const char *shim, tally_preload_symbol *symbols,
                                             size_t count);

/* The registered wrapper for name, or NULL. */
TALLY_PRELOAD_API void *tally_preload_wrapper(const char *name);

/* Finds the real function for name: the API libraries already loaded
 * (RTLD_NOLOAD handles), then the real eglGetProcAddress and
 * glXGetProcAddressARB. NULL if none has it. Never returns a wrapper. */
TALLY_PRELOAD_API void *tally_preload_find_real(const char *name);

/* Slow path of TALLY_PRELOAD_NEXT: resolves and stores into slot. */
TALLY_PRELOAD_API void *tally_preload_resolve_into(_Atomic(void *) *slot, const char *name);

/* The address of libc's dlsym (the exported dlsym interposer jumps there
 * for RTLD_NEXT), and a call of it. */
TALLY_PRELOAD_API void *tally_preload_libc_dlsym_address(void);
TALLY_PRELOAD_API void *tally_preload_libc_dlsym(void *handle, const char *name);

/* Whether handle is RTLD_DEFAULT or a handle of one of the API libraries. */
TALLY_PRELOAD_API bool tally_preload_is_api_handle(void *handle);

/* The GetProcAddress helpers the exported interposers forward to. */
TALLY_PRELOAD_API void *tally_preload_glx_get_proc_address(const char *name);
TALLY_PRELOAD_API void *tally_preload_egl_get_proc_address(const char *name);
/* The dlsym interposer's body for every handle but RTLD_NEXT, and for
 * RTLD_DEFAULT only with registered names. */
TALLY_PRELOAD_API void *tally_preload_dlsym(void *handle, const char *name);
/* Where the interposer jumps for dlsym(RTLD_DEFAULT, name): libc's dlsym
 * (with the caller's return address intact) unless name is registered. */
TALLY_PRELOAD_API void *tally_preload_default_dlsym(const char *name);

static inline void *tally_preload_next(_Atomic(void *) *slot, const char *name)
{
    void *real = atomic_load_explicit(slot, memory_order_acquire);
    return real ? real : tally_preload_resolve_into(slot, name);
}

#define TALLY_PRELOAD_NEXT(slot, name) tally_preload_next(&(slot), (name))

#ifdef __cplusplus
}
#endif

#endif
