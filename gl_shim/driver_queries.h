/*
 * The driver backend's measurements in GL (docs/driver.md): the shim's own
 * timestamp and pipeline-statistics queries around each draw and dispatch
 * (driver_queries.c), and the submissions that wait, on the application's
 * thread and without blocking it, until those queries can be read
 * (driver_readback.c), whose timestamps are put on CLOCK_MONOTONIC where
 * GL_TIMESTAMP can be read (driver_calibration.c). A context measures only
 * under a device whose backend asks for it (tally_device_info.measures).
 */
#ifndef TALLY_GL_DRIVER_QUERIES_H
#define TALLY_GL_DRIVER_QUERIES_H

#include "disjoint_flag.h"
#include "gl_shim.h"
#include "tally_held.h"

/* Slots of a measured command's queries: the two timestamps, then one per
 * pipeline statistic in tally_measure_bits order. */
enum {
    GL_QUERY_BEGIN_TIME = 0,
    GL_QUERY_END_TIME = 1,
    GL_QUERY_FIRST_STATISTIC = 2,
    GL_QUERIES_PER_COMMAND = GL_QUERY_FIRST_STATISTIC + TALLY_STATISTIC_COUNT,
    GL_QUERY_TARGETS = TALLY_STATISTIC_COUNT + 1, /* pools: each statistic, then timestamps */
};

/* One API command the shim measured: its queries (0 where not used). */
typedef struct gl_measured_command {
    uint32_t valid; /* tally_measure_bits its queries measure */
    GLuint queries[GL_QUERIES_PER_COMMAND];
} gl_measured_command;

/* The measured commands of one stream's recording. */
typedef struct gl_command_list {
    gl_measured_command *commands;
    uint32_t count, capacity;
} gl_command_list;

/* GL's part of a held submission (tally_held.payload, driver_readback.c):
 * its measured commands, and how far into the next one the reads went. */
typedef struct gl_held_queries {
    gl_command_list list;  /* tally_held.count commands; values[i] is commands[i]'s */
    uint32_t read_queries; /* queries of the command at tally_held.read already read */
    bool time_lost;        /* a disjoint event may lie within its timestamps */
} gl_held_queries;

/* A (GPU, CLOCK_MONOTONIC) pair of the context (driver_calibration.c). */
typedef struct gl_calibration {
    bool usable;           /* GL_TIMESTAMP can be read in this context, and calibrating is on */
    bool valid;            /* the pair below holds */
    bool said;             /* the first pair was logged */
    tally_clock_pair pair; /* GL_TIMESTAMP and CLOCK_MONOTONIC, half the bracket apart */
    uint64_t taken_ns;     /* CLOCK_MONOTONIC when it was sampled */
} gl_calibration;

/* A context's measuring state (tally_gl_context.measuring). */
typedef struct gl_measuring {
    uint32_t measures;     /* what this context measures (tally_measure_bits) */
    uint32_t app_active;   /* statistics whose target the program has a query active on */
    uint32_t said_active;  /* of those, the ones already logged */
    bool has_query_buffer; /* GL_QUERY_BUFFER and GL_QUERY_RESULT_NO_WAIT exist */
    /* OpenGL ES: GL_GPU_DISJOINT_EXT says when timestamps cannot be trusted
     * (driver_disjoint.c); the flag is shared with the program. */
    bool has_disjoint;
    gl_disjoint_flag disjoint;
    bool recording_time_lost; /* the current recording's timestamps span a disjoint event */
    bool said_disjoint;
    gl_calibration calibration;
    /* What one measurement brackets (docs/driver.md, "Granularity in GL"):
     * each draw and dispatch (command), the commands within one debug group
     * (render-pass), or within one submission (command-buffer). */
    tally_granularity granularity;
    bool open;        /* the current command's (or group's) queries have begun */
    bool group;       /* the open measurement is a group's, which runs on past its first command */
    bool key_pending; /* for the next recorded draw or dispatch */
    bool pending_group; /* the pending key begins a group */
    uint32_t pending_key;
    gl_command_list recording; /* the commands of the context's current stream */
    /* Free query names per target (statistics in bit order, then timestamps). */
    struct {
        GLuint *names;
        uint32_t count, capacity;
    } pool[GL_QUERY_TARGETS];
    tally_held_queue held; /* submissions waiting for their queries, oldest first */
    bool said_lost;
} gl_measuring;

/* What the shim measures with GL's queries, of what a backend may ask. */
enum { TALLY_GL_QUERY_MEASURES = TALLY_MEASURE_TIME | TALLY_MEASURE_STATISTICS };

/* What the GL context current on this thread can measure
 * (tally_measure_bits: TALLY_MEASURE_TIME and the pipeline statistics);
 * *query_buffer (may be NULL) says whether GL_QUERY_BUFFER exists, and
 * *disjoint (may be NULL) whether GL_GPU_DISJOINT_EXT does (OpenGL ES with
 * GL_EXT_disjoint_timer_query). */
TALLY_GL_HIDDEN uint32_t tally_gl_context_measurable(bool *query_buffer, bool *disjoint);

/* The context's measuring state, set up on its first use; NULL when it
 * measures nothing. Inline: every draw asks, and on simgpu the answer is
 * always the kept NULL. */
TALLY_GL_HIDDEN gl_measuring *tally_gl_measuring_set_up(tally_gl_context *ctx);
static inline gl_measuring *tally_gl_measuring(tally_gl_context *ctx)
{
    if (__builtin_expect(ctx->measuring || ctx->measuring_known, 1))
        return ctx->measuring;
    return tally_gl_measuring_set_up(ctx);
}
/* Before a draw or dispatch is recorded into ctx->stream: the measurement
 * its API command took, if any. */
TALLY_GL_HIDDEN void tally_gl_measure_pending(tally_gl_context *ctx);
static inline void tally_gl_measure_attach(tally_gl_context *ctx)
{
    if (ctx->measuring)
        tally_gl_measure_pending(ctx);
}
/* A debug group is pushed or popped (debug_groups.c). */
TALLY_GL_HIDDEN void tally_gl_measure_debug_group(tally_gl_context *ctx);
/* Query names go back to their pools. */
TALLY_GL_HIDDEN void tally_gl_release_queries(gl_measuring *m, const gl_measured_command *command);

/* At a submission point: when the stream holds measured commands, or
 * earlier submissions are still held, the recording is held (true) and the
 * context records into a fresh stream; false: submit it as usual. */
TALLY_GL_HIDDEN bool tally_gl_hold_submission(tally_gl_context *ctx, const char *api_name,
                                              uint32_t flags);
/* Reads the held submissions' queries whose results are available and
 * submits, in order, those read whole. force: reads every query, waiting
 * for the GPU (glFinish, blocking reads, a context's release). Only while
 * ctx is current on this thread. */
TALLY_GL_HIDDEN void tally_gl_poll_held(tally_gl_context *ctx, bool force);
/* driver_disjoint.c: after the shim read held queries, before it submits
 * them: a disjoint event since the last check discards the timestamps of
 * every command whose queries were issued before it. */
TALLY_GL_HIDDEN void tally_gl_disjoint_check(tally_gl_context *ctx);
/* A held submission goes to the engine: without GPU time if it was lost. */
TALLY_GL_HIDDEN void tally_gl_disjoint_strip(tally_gl_context *ctx, tally_held *h);

/* driver_calibration.c. Whether the context calibrates (allowed: the
 * device's calibrate), decided when it starts measuring. */
TALLY_GL_HIDDEN void tally_gl_calibration_open(gl_measuring *m, const tally_gl_context *ctx,
                                               bool allowed);
/* At a poll about to submit what it read: samples a pair unless the last
 * one is recent. Only while the context is current on this thread. */
TALLY_GL_HIDDEN void tally_gl_calibrate(gl_measuring *m);
/* The held submission's read timestamps on CLOCK_MONOTONIC, where the pair
 * allows (TALLY_MEASURE_TIME_MONOTONIC); the others stay as they are.
 * Returns the earliest converted time (0: none), when the submission's work
 * began on the GPU: its tally_submission.issued_ns. */
TALLY_GL_HIDDEN uint64_t tally_gl_calibration_apply(gl_measuring *m, const tally_held *h);
/* The program's glGetIntegerv, glGetInteger64v and glGetBooleanv of
 * GL_GPU_DISJOINT_EXT (data not NULL), through the real function. */
TALLY_GL_HIDDEN void tally_gl_get_disjoint_integer(PFN_glGetIntegerv real, GLint *data);
TALLY_GL_HIDDEN void tally_gl_get_disjoint_integer64(PFN_glGetInteger64v real, GLint64 *data);
TALLY_GL_HIDDEN void tally_gl_get_disjoint_boolean(PFN_glGetBooleanv real, GLboolean *data);

/* The context is going away: held submissions go to the engine with what
 * was read of them; the state is freed. */
TALLY_GL_HIDDEN void tally_gl_measuring_destroy(tally_gl_context *ctx);

#endif
