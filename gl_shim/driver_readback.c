/*
 * GL submissions that wait for their measurements. The engine's queue thread
 * cannot read GL queries (they belong to the context, current on the
 * program's thread), and the program's thread must not wait for the GPU, so
 * at a submission point whose recording holds measured commands the shim
 * holds the recording (in its own stream; the context goes on in a fresh
 * one) and reads its queries at later submission points, on the program's
 * thread, once GL says each result is available. A held recording goes to
 * the engine, with a measurement reader over the values already read, when
 * all of it was read; recordings go in the order they were made. Where the
 * program itself waits for the GPU (glFinish, a blocking read, releasing
 * the context, exit) the reads wait too.
 *
 * The reads never touch what the program sees: a buffer bound to
 * GL_QUERY_BUFFER would receive the results, so it is unbound for them and
 * bound again after.
 */
#include "driver_queries.h"

#include <stdlib.h>

bool tally_gl_hold_submission(tally_gl_context *ctx, const char *api_name, uint32_t flags)
{
    gl_measuring *m = ctx->measuring;
    if (m)
        tally_gl_measure_split(ctx); /* a group ends with its submission */
    if (!m || (m->recording.count == 0 && !m->held))
        return false;
    m->key_pending = false;
    gl_held_submission *h = calloc(1, sizeof(*h));
    tally_measurement *values =
        calloc(m->recording.count ? m->recording.count : 1, sizeof(*values));
    tally_stream *fresh = NULL;
    if (!h || !values || tally_stream_create(ctx->engine, &fresh) != TALLY_OK) {
        /* No memory: the recording goes now, unmeasured. */
        free(h);
        free(values);
        for (uint32_t i = 0; i < m->recording.count; i++)
            tally_gl_release_queries(m, &m->recording.commands[i]);
        m->recording.count = 0;
        return false;
    }
    h->stream = ctx->stream;
    h->api_name = api_name;
    h->flags = flags;
    h->list = m->recording;
    h->values = values;
    h->time_lost = m->recording_time_lost;
    m->recording_time_lost = false;
    m->recording = (gl_command_list){0};
    if (m->held_tail)
        m->held_tail->next = h;
    else
        m->held = h;
    m->held_tail = h;
    tally_gl_set_stream(ctx, fresh);
    ctx->state_bound = false; /* the fresh stream binds the render state and program again */
    return true;
}

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
static bool read_held(gl_measuring *m, gl_held_submission *h, bool force)
{
    for (; h->read_commands < h->list.count; h->read_commands++, h->read_queries = 0) {
        const gl_measured_command *c = &h->list.commands[h->read_commands];
        tally_measurement *v = &h->values[h->read_commands];
        for (; h->read_queries < GL_QUERIES_PER_COMMAND; h->read_queries++) {
            uint32_t slot = h->read_queries;
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

static void submit_held(tally_gl_context *ctx, gl_held_submission *h)
{
    tally_gl_disjoint_strip(ctx, h);
    uint64_t began = tally_gl_calibration_apply(ctx->measuring, h);
    uint64_t seqno = 0;
    if (tally_submit_stream_measured(tally_context_device(ctx->engine), h->stream, h->flags,
                                     h->api_name, h->values, h->list.count, began,
                                     &seqno) == TALLY_OK)
        ctx->last_seqno = seqno;
    tally_stream_destroy(h->stream);
    free(h->list.commands);
    free(h);
}

void tally_gl_poll_held(tally_gl_context *ctx, bool force)
{
    gl_measuring *m = ctx ? ctx->measuring : NULL;
    /* GL calls go to the context current on this thread, and none is
     * allowed between glBegin and glEnd. */
    if (!m || !m->held || ctx != tally_gl_current() || ctx->in_begin)
        return;
    GLint query_buffer = 0;
    if (m->has_query_buffer) {
        REAL_glGetIntegerv(GL_QUERY_BUFFER_BINDING, &query_buffer);
        if (query_buffer)
            REAL_glBindBuffer(GL_QUERY_BUFFER, 0);
    }
    bool checked = false;
    while (m->held && read_held(m, m->held, force)) {
        if (!checked) {
            checked = true;
            tally_gl_disjoint_check(ctx);
            tally_gl_calibrate(m); /* after the check: a disjoint event drops the pair */
        }
        gl_held_submission *h = m->held;
        m->held = h->next;
        if (!m->held)
            m->held_tail = NULL;
        submit_held(ctx, h);
    }
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
    uint32_t lost = 0;
    while (m->held) {
        gl_held_submission *h = m->held;
        m->held = h->next;
        lost += h->list.count - h->read_commands;
        submit_held(ctx, h);
    }
    if (lost)
        tally_log(TALLY_LOG_WARN,
                  "GL: %u measured commands of a context released on another thread or never "
                  "released were not measured (their queries went with the context)",
                  lost);
    free(m->recording.commands);
    for (int i = 0; i < GL_QUERY_TARGETS; i++)
        free(m->pool[i].names);
    free(m);
    ctx->measuring = NULL;
}
