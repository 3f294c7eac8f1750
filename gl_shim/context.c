/* GL contexts: attaching shim state to EGL/GLX contexts as they become
 * current, freeing it when they are destroyed, and submitting their work. */
#include "driver_queries.h"
#include "gl_shim.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static tally_gl_context *contexts; /* every attached context; touched at MakeCurrent/destroy */
_Thread_local tally_gl_context *tally_gl_current_context;

/* The device is asked for once per process (a forked child asks again):
 * device_asked says it was, set under device_lock, and shared_device is
 * what came of it (NULL: it did not open). */
static pthread_mutex_t device_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool device_asked;
static tally_device *shared_device;
_Atomic _Bool tally_gl_device_measures;

/* Set when the process exits: the engine stops the shared device in its
 * exit handler (session/shared_device.c), after which GL calls from later
 * exit handlers or static destructors attach and free nothing. Another
 * thread still drawing meanwhile reaches a device that is stopped, never
 * freed (the shim holds its reference to the end): its submissions are
 * refused and its waits return. */
static _Atomic(bool) exiting;

/* Work the exiting thread recorded after its last submission point still
 * executes: run as the shared device stops at the program's end, before it
 * finishes its reports (on tally's own thread for a signal, where no
 * context is current: what was not flushed is not counted). */
static void submit(tally_gl_context *ctx, const char *api_name, uint32_t flags, bool wait,
                   bool force);

static void submit_at_exit(void)
{
    if (tally_gl_current_context)
        submit(tally_gl_current_context, "exit", 0, false, true);
    atomic_store_explicit(&exiting, true, memory_order_release);
}

static void open_device(void)
{
    /* A measuring backend offers GL what its commands say and what the
     * first context's queries can measure (docs/driver.md). */
    uint32_t measurable = TALLY_MEASURE_COMMANDS | TALLY_MEASURE_CS_INVOCATIONS |
                          tally_gl_context_measurable(NULL, NULL);
    if (tally_device_acquire_shared_measuring(measurable, &shared_device) != TALLY_OK) {
        shared_device = NULL;
        tally_log(TALLY_LOG_WARN, "GL shim: the counter device did not open (see above); "
                                  "GL_AMD_performance_monitor and GL_INTEL_performance_query "
                                  "are not offered and GL calls pass through unmeasured");
        return;
    }
    tally_device_info info;
    tally_device_get_info(shared_device, &info);
    atomic_store_explicit(&tally_gl_device_measures, (info.measures & TALLY_GL_QUERY_MEASURES) != 0,
                          memory_order_relaxed);
    /* Once per process: a forked child asks for its device again. */
    tally_device_on_shared_stop(submit_at_exit);
}

tally_device *tally_gl_device(void)
{
    if (!atomic_load_explicit(&device_asked, memory_order_acquire)) {
        pthread_mutex_lock(&device_lock);
        if (!atomic_load_explicit(&device_asked, memory_order_relaxed)) {
            open_device();
            atomic_store_explicit(&device_asked, true, memory_order_release);
        }
        pthread_mutex_unlock(&device_lock);
    }
    return shared_device;
}

const tally_catalogue *tally_gl_catalogue(void)
{
    tally_device *device = tally_gl_device();
    if (device)
        return tally_device_catalogue(device);
    const tally_catalogue *cat = NULL;
    if (tally_backend_catalogue_measuring(
            NULL, TALLY_MEASURE_COMMANDS | TALLY_MEASURE_CS_INVOCATIONS, &cat) != TALLY_OK)
        tally_backend_catalogue("", &cat); /* the default backend's */
    return cat;
}

static tally_gl_context *create_context(tally_gl_window_api window_api, void *handle)
{
    tally_gl_context *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return NULL;
    ctx->window_api = window_api;
    ctx->handle = handle;
    ctx->real_extension_count = -1;
    tally_device *device = tally_gl_device();
    ctx->listening = tally_device_listeners(device);
    /* Attached right after its first MakeCurrent, so GL_VERSION is the
     * context's own: "OpenGL ES ..." names an ES one, whichever window
     * system made it (EGL's bound API, GLX_EXT_create_context_es_profile),
     * and the report's context_api says so. */
    tally_gl_learn_version(ctx);
    const char *api = ctx->gles ? "gles" : "gl";
    if (device && tally_context_create(device, api, &ctx->engine) == TALLY_OK) {
        tally_stream *stream = NULL;
        if (tally_stream_create(ctx->engine, &stream) == TALLY_OK) {
            tally_gl_set_stream(ctx, stream);
        } else {
            tally_context_destroy(ctx->engine);
            ctx->engine = NULL;
        }
    }
    return ctx;
}

static void free_context(tally_gl_context *ctx)
{
    if (atomic_load_explicit(&exiting, memory_order_acquire))
        return; /* the device is gone with everything made from it */
    tally_gl_amd_destroy_all(ctx);
    tally_gl_intel_destroy_all(ctx);
    tally_gl_programs_destroy_all(ctx);
    tally_gl_measuring_destroy(ctx);
    if (ctx->stream)
        tally_stream_destroy(ctx->stream);
    if (ctx->engine)
        tally_context_destroy(ctx->engine);
    free(ctx->extensions);
    free(ctx);
}

/* The state of a context, attached on first sight; NULL if out of memory. */
static tally_gl_context *find_or_attach_locked(tally_gl_window_api window_api, void *handle)
{
    for (tally_gl_context *ctx = contexts; ctx; ctx = ctx->next) {
        if (ctx->window_api == window_api && ctx->handle == handle && !ctx->destroyed)
            return ctx;
    }
    tally_gl_context *ctx = create_context(window_api, handle);
    if (ctx) {
        ctx->next = contexts;
        contexts = ctx;
    }
    return ctx;
}

static void unlink_locked(tally_gl_context *gone)
{
    for (tally_gl_context **link = &contexts; *link; link = &(*link)->next) {
        if (*link == gone) {
            *link = gone->next;
            return;
        }
    }
}

/* The driver under the context, for the report's metadata: the first time
 * it is current, the only time its strings can be asked for. */
static void say_driver(tally_gl_context *ctx)
{
    ctx->driver_said = true;
    const char *renderer = (const char *)REAL_glGetString(GL_RENDERER);
    const char *version = (const char *)REAL_glGetString(GL_VERSION);
    if (renderer)
        tally_context_set_driver(ctx->engine, renderer, version);
}

/* After a successful MakeCurrent of handle (NULL: none) on this thread. */
static void make_current(tally_gl_window_api window_api, void *handle)
{
    if (atomic_load_explicit(&exiting, memory_order_acquire))
        return;
    tally_gl_context *previous = tally_gl_current_context;
    if (previous && previous->window_api == window_api && previous->handle == handle)
        return;
    pthread_mutex_lock(&contexts_lock);
    tally_gl_context *next = handle ? find_or_attach_locked(window_api, handle) : NULL;
    bool free_previous = false;
    if (previous) {
        previous->current = false;
        if (previous->destroyed) {
            unlink_locked(previous);
            free_previous = true;
        }
    }
    if (next)
        next->current = true;
    tally_gl_current_context = next;
    pthread_mutex_unlock(&contexts_lock);
    if (free_previous)
        free_context(previous);
    if (next && next->engine && !next->driver_said)
        say_driver(next);
}

/* Before a MakeCurrent of handle (NULL: none) on this thread. Releasing a
 * context flushes it (EGL and GLX say so): its recorded work must not wait
 * for a context that may never be current again. It is submitted while the
 * context is still current, so that the driver backend's queries can be
 * read; a release to no context at all reads them to the end. */
static void before_make_current(tally_gl_window_api window_api, void *handle)
{
    tally_gl_context *previous = tally_gl_current_context;
    if (atomic_load_explicit(&exiting, memory_order_acquire) || !previous ||
        (previous->window_api == window_api && previous->handle == handle))
        return;
    submit(previous, "MakeCurrent", 0, false, handle == NULL);
}

/* After a context was destroyed; a context still current somewhere lives on
 * until it is released (EGL's and GLX's rule). */
static void destroy_context(tally_gl_window_api window_api, void *handle)
{
    tally_gl_context *gone = NULL;
    pthread_mutex_lock(&contexts_lock);
    for (tally_gl_context *ctx = contexts; ctx; ctx = ctx->next) {
        if (ctx->window_api == window_api && ctx->handle == handle && !ctx->destroyed) {
            if (ctx->current) {
                ctx->destroyed = true;
            } else {
                unlink_locked(ctx);
                gone = ctx;
            }
            break;
        }
    }
    pthread_mutex_unlock(&contexts_lock);
    if (gone)
        free_context(gone);
}

void tally_gl_error(tally_gl_context *ctx, GLenum error)
{
    if (!ctx)
        return;
    for (uint32_t i = 0; i < ctx->pending_error_count; i++) {
        if (ctx->pending_errors[i] == error)
            return;
    }
    if (ctx->pending_error_count < TALLY_GL_MAX_PENDING_ERRORS)
        ctx->pending_errors[ctx->pending_error_count++] = error;
}

/* force: read the driver backend's held measurements to the end, waiting
 * for the GPU (implied by wait, where the program waits for it too). */
static void submit(tally_gl_context *ctx, const char *api_name, uint32_t flags, bool wait,
                   bool force)
{
    if (!ctx || !ctx->stream)
        return;
    tally_device *device = tally_context_device(ctx->engine);
    if (ctx->stream_has_work) {
        uint64_t seqno = 0;
        if (!tally_gl_hold_submission(ctx, api_name, flags) &&
            tally_submit_stream(device, ctx->stream, flags, api_name, &seqno) == TALLY_OK)
            ctx->last_seqno = seqno;
        ctx->stream_has_work = false;
    }
    tally_gl_poll_held(ctx, wait || force);
    if (wait && ctx->last_seqno)
        tally_wait_seqno(device, ctx->last_seqno, UINT64_MAX);
}

void tally_gl_submit(tally_gl_context *ctx, const char *api_name, bool wait)
{
    submit(ctx, api_name, 0, wait, false);
}

void tally_gl_flush(tally_gl_context *ctx, const char *api_name, bool wait)
{
    submit(ctx, api_name, TALLY_SUBMIT_FLUSH, wait, false);
}

/* ---- EGL and GLX entry points that make, destroy and swap contexts ---- */

/* A swap ends the current context's frame: its recording is submitted. */
static void frame_end(const char *api_name)
{
    tally_gl_context *ctx = tally_gl_current();
    if (ctx && ctx->stream) {
        if (tally_stream_frame_boundary(ctx->stream) == TALLY_OK)
            tally_gl_recorded(ctx);
        tally_gl_submit(ctx, api_name, false);
    }
}

/* The hooks, one per entry point, and their table window_symbols, generated
 * from window_hooks.txt with the signatures of glx.xml and EGL/egl.h
 * (gen_window_hooks.py). */
#include "window_hooks.inc"

/* ---- fork ---- */

/* The locks in the order the shim takes them (a context attaches under
 * contexts_lock and may open the device), so no thread holds one across
 * the fork. */
static void lock_before_fork(void)
{
    pthread_mutex_lock(&contexts_lock);
    pthread_mutex_lock(&device_lock);
}

static void unlock_after_fork(void)
{
    pthread_mutex_unlock(&device_lock);
    pthread_mutex_unlock(&contexts_lock);
}

/* A forked child owns nothing its parent opened (session/shared_device.c
 * forgets the device): the contexts' engine objects belong to that device,
 * so the shim forgets them too, leaving their memory as it is, and the GL
 * context current on the forking thread goes on unmeasured. A context the
 * child makes current later attaches to the child's own device, opened
 * then. */
static void forget_in_child(void)
{
    contexts = NULL;
    tally_gl_current_context = NULL;
    shared_device = NULL;
    atomic_store_explicit(&device_asked, false, memory_order_relaxed);
    atomic_store_explicit(&tally_gl_device_measures, false, memory_order_relaxed);
    unlock_after_fork();
}

__attribute__((constructor)) static void register_gl_shim(void)
{
    pthread_atfork(lock_before_fork, unlock_after_fork, forget_in_child);
    tally_preload_register("gl", tally_gl_symbols, tally_gl_symbol_count);
    tally_preload_register("gl", window_symbols,
                           sizeof(window_symbols) / sizeof(window_symbols[0]));
}
