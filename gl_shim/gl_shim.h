/*
 * libtally_gl.so internals: the per-context state every part of the shim
 * shares, and the functions that create, find and feed it.
 */
#ifndef TALLY_GL_SHIM_H
#define TALLY_GL_SHIM_H

#include "gl_api.h"
#include "tally/tally.h"
#include "tally_door.h"
#include "tally_preload.h"

#include <stdbool.h>
#include <stdint.h>

#define TALLY_GL_HIDDEN __attribute__((visibility("hidden")))

typedef struct amd_monitor amd_monitor;
typedef struct intel_query intel_query;
typedef struct gl_program gl_program;
typedef struct gl_measuring gl_measuring;

enum { TALLY_GL_MAX_PENDING_ERRORS = 4 };

typedef enum tally_gl_window_api {
    TALLY_GL_EGL = 0,
    TALLY_GL_GLX = 1,
} tally_gl_window_api;

/* One GL context of the program (an EGLContext or GLXContext), attached on
 * its first MakeCurrent. Used by the thread it is current on only, so nothing
 * in it is locked. */
typedef struct tally_gl_context {
    tally_gl_window_api window_api;
    void *handle; /* the EGLContext / GLXContext */
    struct tally_gl_context *next;

    tally_context *engine; /* NULL when no device could be opened */
    bool driver_said;      /* its renderer went to the report's metadata (context.c) */
    tally_stream *stream;  /* the context's commands since its last submission */
    /* The stream's draw lane (set with it, tally_gl_set_stream), or NULL
     * where no draw may take it: no stream, or a device whose backend
     * measures, where each draw brackets the driver's call with queries
     * (driver_queries.c), except while a measured group is open, which
     * the draws join with nothing of their own to measure. */
    tally_draw_lane *lane;
    /* Who would see the context's draws: the device's listeners (its word,
     * tally_device_listeners) and the scopes of the context's own
     * monitors and queries, marker begins recorded and not yet ended
     * (tally_gl_marker_begin). With neither, a draw is not recorded. */
    const tally_listeners *listening;
    uint32_t open_markers;
    /* What the open scopes' counters read (tally_measure_bits), measured
     * with what the device's listeners ask; 0 once none is open. */
    uint32_t scope_measures;
    bool stream_has_work;
    bool
        state_bound; /* render area and program bound in the stream (they carry over submissions) */
    uint64_t last_seqno; /* of the context's last submission */
    bool current;        /* current on some thread */
    bool destroyed;      /* destroyed while current: freed when released */

    /* Errors the extensions raised, oldest first, each code at most once. */
    GLenum pending_errors[TALLY_GL_MAX_PENDING_ERRORS];
    uint32_t pending_error_count;

    /* Extension advertisement, computed once per context. */
    bool version_known;
    bool gles;
    bool compatibility;              /* desktop GL with the compatibility profile's client arrays */
    int version;                     /* major * 10 + minor */
    const GLubyte *real_extensions;  /* what the driver returned last */
    char *extensions;                /* real + the shim's, cached */
    GLint real_extension_count;      /* -1: not asked yet */
    const char *added_extensions[2]; /* the shim's names the driver lacks */
    GLint added_extension_count;

    /* Immediate mode between glBegin and glEnd. */
    bool in_begin;
    GLenum begin_mode;
    uint32_t begin_vertices;

    /* Render area last set with glViewport. */
    GLint viewport_width, viewport_height;
    GLint patch_vertices; /* 0: GL's default, 3 */

    /* GL_AMD_performance_monitor: monitor id = index + 1. */
    amd_monitor **monitors;
    uint32_t monitor_count, monitor_capacity;

    /* GL_INTEL_performance_query: handle = index + 1. */
    intel_query **queries;
    uint32_t query_count, query_capacity;

    /* Program objects with a static profile, and the one in use. */
    gl_program *programs;
    GLuint used_program;

    /* The driver backend's queries and held submissions (driver_queries.h);
     * NULL while the context measures nothing. */
    gl_measuring *measuring;
    bool measuring_known; /* whether it measures was decided */
} tally_gl_context;

/* The calling thread's current context, or NULL. Initial-exec: every draw
 * reads it, and the default model for a shared library (a __tls_get_addr
 * call each time) would put a call on every draw of an idle shim. The
 * shim is preloaded, so a pointer of static TLS is there for it; Mesa's
 * libglapi keeps its current context the same way. */
extern TALLY_GL_HIDDEN _Thread_local tally_gl_context *tally_gl_current_context
    __attribute__((tls_model("initial-exec")));
static inline tally_gl_context *tally_gl_current(void)
{
    return tally_gl_current_context;
}
/* The context's stream from now on, and its draw lane. */
static inline void tally_gl_set_stream(tally_gl_context *ctx, tally_stream *stream)
{
    ctx->stream = stream;
    bool measures = atomic_load_explicit(&tally_gl_device_measures, memory_order_relaxed);
    ctx->lane = stream && !measures ? tally_stream_draw_lane(stream) : NULL;
}
/*
 * Whether nobody would see a draw issued now: the context records (it has a
 * stream), no listener is on the device and no scope of the context's own
 * is open. Such a draw is neither recorded nor, under a measuring backend,
 * measured: a GL command may start when it is issued, so a listener that
 * starts later sees the draws issued after it, as a real GPU's counters
 * would (docs/gl.md, "What an idle shim costs a draw"). Two loads past the
 * context.
 */
static inline bool tally_gl_unheard(const tally_gl_context *ctx)
{
    return ctx->stream && !ctx->open_markers && !tally_listening_now(ctx->listening);
}
/* The shared engine device, or NULL if it cannot be opened. */
TALLY_GL_HIDDEN tally_device *tally_gl_device(void);
/* The catalogue the extensions expose (works without a device). */
TALLY_GL_HIDDEN const tally_catalogue *tally_gl_catalogue(void);

/* Raises a GL error of the shim's on the current context. */
TALLY_GL_HIDDEN void tally_gl_error(tally_gl_context *ctx, GLenum error);

/* Submits what the context recorded; waits for it when wait is true. */
/* Learns once what kind of context this is: GL or GLES, version, profile. */
TALLY_GL_HIDDEN void tally_gl_learn_version(tally_gl_context *ctx);
/* Whether a space-separated list (an extension string) holds word. */
TALLY_GL_HIDDEN bool tally_gl_has_word(const char *list, const char *word);
TALLY_GL_HIDDEN void tally_gl_submit(tally_gl_context *ctx, const char *api_name, bool wait);
/* The same, for the API's explicit flushes (glFlush, glFinish). */
TALLY_GL_HIDDEN void tally_gl_flush(tally_gl_context *ctx, const char *api_name, bool wait);
/* Submits, in order, the held submissions whose measurements GL can give
 * now (driver_readback.c): for availability checks, which submit nothing. */
TALLY_GL_HIDDEN void tally_gl_catch_up(tally_gl_context *ctx);
/* Marks that the stream holds commands to submit. */
static inline void tally_gl_recorded(tally_gl_context *ctx)
{
    ctx->stream_has_work = true;
}
/* driver_queries.c: ends the measurement of a group of commands open in
 * the context, if any, so that what follows is measured apart (a scope's
 * begin or end, a debug group at render-pass granularity, a submission). */
TALLY_GL_HIDDEN void tally_gl_measure_split(tally_gl_context *ctx);
/* A monitor's or query's scope recorded into the context's stream, counted
 * in open_markers as the engine counts them in the stream. Under a
 * measuring backend its counters' inputs are measured while it is open
 * (scope_measures), and no measured group straddles its begin or end. */
static inline tally_status tally_gl_marker_begin(tally_gl_context *ctx, tally_results *results,
                                                 const uint32_t *counters, uint32_t count)
{
    if (atomic_load_explicit(&tally_gl_device_measures, memory_order_relaxed)) {
        if (ctx->measuring) /* set up at the context's first measured command */
            tally_gl_measure_split(ctx);
        ctx->scope_measures |=
            tally_device_measures_of(tally_context_device(ctx->engine), counters, count);
    }
    tally_status status = tally_stream_marker_begin(ctx->stream, results, 0);
    if (status == TALLY_OK) {
        ctx->open_markers++;
        tally_gl_recorded(ctx);
    }
    return status;
}
static inline tally_status tally_gl_marker_end(tally_gl_context *ctx, tally_results *results)
{
    if (ctx->measuring)
        tally_gl_measure_split(ctx);
    tally_status status = tally_stream_marker_end(ctx->stream, results, 0);
    if (status == TALLY_OK) {
        if (ctx->open_markers)
            ctx->open_markers--;
        if (!ctx->open_markers)
            ctx->scope_measures = 0;
        tally_gl_recorded(ctx);
    }
    return status;
}

/* Cleanup of the extensions' objects when a context goes away. */
TALLY_GL_HIDDEN void tally_gl_amd_destroy_all(tally_gl_context *ctx);
TALLY_GL_HIDDEN void tally_gl_intel_destroy_all(tally_gl_context *ctx);
TALLY_GL_HIDDEN void tally_gl_programs_destroy_all(tally_gl_context *ctx);
/* The program bound for draws of the context (NULL: none known). */
TALLY_GL_HIDDEN tally_program *tally_gl_program_for(tally_gl_context *ctx, GLuint name);

/* The catalogue's view for each extension. */
TALLY_GL_HIDDEN const char *tally_gl_counter_name(const tally_counter_info *counter);

/* Copies a string the way the AMD extension does: min(strlen, bufSize)
 * bytes, a terminator only if it fits. */
TALLY_GL_HIDDEN void tally_gl_copy_string_amd(const char *text, GLsizei buf_size, GLsizei *length,
                                              GLchar *buf);

extern tally_preload_symbol tally_gl_symbols[];
extern const size_t tally_gl_symbol_count;

#endif
