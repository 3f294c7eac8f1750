/*
 * GL submissions that wait for their measurements. The engine's queue thread
 * cannot read GL queries (they belong to the context, current on the
 * program's thread), and the program's thread must not wait for the GPU, so
 * at a submission point whose recording holds measured commands the shim
 * holds the recording (in its own stream; the context goes on in a fresh
 * one) and reads its queries at later submission points, on the program's
 * thread, once GL says each result is available. The holding, the order
 * and the submission with the values read are the engine's (tally_held.h);
 * this file reads the queries. Where the program itself waits for the GPU
 * (glFinish, a blocking read, releasing the context, exit) the reads wait
 * too.
 *
 * The reads never touch what the program sees: a buffer bound to
 * GL_QUERY_BUFFER would receive the results, so it is unbound for them and
 * bound again after.
 */
#include "driver_queries.h"

#include <stdlib.h>

/* One query's result; false if it is not available yet (never when forced). */
static bool read_query(const gl_measuring *m, GLuint query, bool force, GLuint64 *value)
{
    if (force) {
        REAL_glGetQueryObjectui64v(query, GL_QUERY_RESULT, value);
        return true;
    }
    if (m->has_query_buffer) {
        /* Written only when available: one call instead of two. No counter
         * or timestamp reaches the sentinel. */
        GLuint64 result = UINT64_MAX;
        REAL_glGetQueryObjectui64v(query, GL_QUERY_RESULT_NO_WAIT, &result);
        if (result == UINT64_MAX)
            return false;
        *value = result;
        return true;
    }
    GLuint available = 0;
    REAL_glGetQueryObjectuiv(query, GL_QUERY_RESULT_AVAILABLE, &available);
    if (!available)
        return false;
    REAL_glGetQueryObjectui64v(query, GL_QUERY_RESULT, value);
    return true;
}

/* Reads on from where the last poll stopped; true when all was read. */
static bool read_held(void *user, tally_held *h, bool force)
{
    gl_measuring *m = ((tally_gl_context *)user)->measuring;
    gl_held_queries *q = h->payload;
    for (; h->read < h->count; h->read++, q->read_queries = 0) {
        const gl_measured_command *c = &q->list.commands[h->read];
        tally_measurement *v = &h->values[h->read];
        for (; q->read_queries < GL_QUERIES_PER_COMMAND; q->read_queries++) {
            uint32_t slot = q->read_queries;
            GLuint64 value = 0;
            if (!c->queries[slot])
                continue;
            if (!read_query(m, c->queries[slot], force, &value))
                return false;
            if (slot == GL_QUERY_BEGIN_TIME)
                v->begin_ns = value; /* GL timestamps count nanoseconds */
            else if (slot == GL_QUERY_END_TIME)
                v->end_ns = value;
            else
                v->statistics[slot - GL_QUERY_FIRST_STATISTIC] = value;
        }
        v->valid = c->valid;
        tally_gl_release_queries(m, c);
    }
    return true;
}

/* Once a poll has something to submit: a disjoint event since the last
 * check takes the time of what was held across it, and the clock pair is
 * sampled after the check, since a disjoint event drops it. */
static void ready_to_submit(void *user)
{
    tally_gl_context *ctx = user;
    tally_gl_disjoint_check(ctx);
    tally_gl_calibrate(ctx->measuring);
}

static uint64_t prepare_held(void *user, tally_held *h)
{
    tally_gl_context *ctx = user;
    tally_gl_disjoint_strip(ctx, h);
    return tally_gl_calibration_apply(ctx->measuring, h);
}

static void release_held(void *user, tally_held *h)
{
    (void)user;
    gl_held_queries *q = h->payload;
    free(q->list.commands);
    free(q);
}

static const tally_held_door held_door = {
    .read = read_held, .ready = ready_to_submit, .prepare = prepare_held, .release = release_held};

bool tally_gl_hold_submission(tally_gl_context *ctx, const char *api_name, uint32_t flags)
{
    gl_measuring *m = ctx->measuring;
    if (m)
        tally_gl_measure_split(ctx); /* a group ends with its submission */
    if (!m || (m->recording.count == 0 && tally_held_empty(&m->held)))
        return false;
    m->key_pending = false;
    if (!m->held.door)
        m->held = (tally_held_queue){.door = &held_door, .user = ctx};
    gl_held_queries *queries = calloc(1, sizeof(*queries));
    tally_stream *stream = ctx->stream;
    if (!queries || !tally_held_push(&m->held, ctx->engine, &stream, api_name, flags,
                                     m->recording.count, true, queries)) {
        /* No memory: the recording goes now, unmeasured. */
        free(queries);
        for (uint32_t i = 0; i < m->recording.count; i++)
            tally_gl_release_queries(m, &m->recording.commands[i]);
        m->recording.count = 0;
        return false;
    }
    queries->list = m->recording;
    queries->time_lost = m->recording_time_lost;
    m->recording_time_lost = false;
    m->recording = (gl_command_list){0};
    tally_gl_set_stream(ctx, stream);
    ctx->state_bound = false; /* the fresh stream binds the render state and program again */
    return true;
}

void tally_gl_poll_held(tally_gl_context *ctx, bool force)
{
    gl_measuring *m = ctx ? ctx->measuring : NULL;
    /* GL calls go to the context current on this thread, and none is
     * allowed between glBegin and glEnd. */
    if (!m || tally_held_empty(&m->held) || ctx != tally_gl_current() || ctx->in_begin)
        return;
    GLint query_buffer = 0;
    if (m->has_query_buffer) {
        REAL_glGetIntegerv(GL_QUERY_BUFFER_BINDING, &query_buffer);
        if (query_buffer)
            REAL_glBindBuffer(GL_QUERY_BUFFER, 0);
    }
    uint64_t seqno = tally_held_poll(&m->held, force);
    if (seqno)
        ctx->last_seqno = seqno;
    if (query_buffer)
        REAL_glBindBuffer(GL_QUERY_BUFFER, (GLuint)query_buffer);
}

void tally_gl_catch_up(tally_gl_context *ctx)
{
    tally_gl_poll_held(ctx, false);
}

void tally_gl_measuring_destroy(tally_gl_context *ctx)
{
    gl_measuring *m = ctx->measuring;
    if (!m)
        return;
    /* The context's queries are gone (or not current here): what was not
     * read is lost, but the commands still count. */
    uint64_t lost = tally_held_drain(&m->held);
    if (lost)
        tally_log(TALLY_LOG_WARN,
                  "GL: %u measured commands of a context released on another thread or never "
                  "released were not measured (their queries went with the context)",
                  (unsigned)lost);
    free(m->recording.commands);
    for (int i = 0; i < GL_QUERY_TARGETS; i++)
        free(m->pool[i].names);
    free(m);
    ctx->measuring = NULL;
}
