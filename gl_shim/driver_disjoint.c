/*
 * GL_EXT_disjoint_timer_query's disjoint events under the driver backend
 * (OpenGL ES). When the GPU's clock may have jumped (a disjoint operation:
 * a power-state or clock change, a context switch on some GPUs), timestamps
 * taken across it cannot be compared. The shim asks once per poll that
 * submits something, after it read the held queries: a disjoint event then
 * means every timestamp query issued so far and not yet submitted may span
 * it, so the commands of the held recordings and of the current one lose
 * their GPU time (they keep their counts) and one warning says so. The
 * driver's flag is cleared by reading it, so the program's reads and the
 * shim's share it (disjoint_flag.h): glGetIntegerv, glGetInteger64v and
 * glGetBooleanv of GL_GPU_DISJOINT_EXT answer the driver's flag or one the
 * shim read since the program last asked. A disjoint event also drops the
 * context's GL_TIMESTAMP/CLOCK_MONOTONIC pair (driver_calibration.c).
 */
#include "driver_queries.h"

#include <limits.h>

void tally_gl_disjoint_check(tally_gl_context *ctx)
{
    gl_measuring *m = ctx->measuring;
    if (!m || !m->has_disjoint)
        return;
    GLint driver = 0;
    REAL_glGetIntegerv(GL_GPU_DISJOINT_EXT, &driver);
    if (!gl_disjoint_shim_reads(&m->disjoint, driver != 0))
        return;
    m->calibration.valid = false; /* the GPU's clock may have jumped since the pair */
    for (tally_held *h = m->held.first; h; h = h->next)
        ((gl_held_queries *)h->payload)->time_lost = true;
    m->recording_time_lost = m->recording.count > 0;
}

void tally_gl_disjoint_strip(tally_gl_context *ctx, tally_held *h)
{
    gl_measuring *m = ctx->measuring;
    if (!m || !((const gl_held_queries *)h->payload)->time_lost)
        return;
    uint32_t lost = 0;
    for (uint32_t i = 0; i < h->count; i++)
        if (h->values[i].valid & TALLY_MEASURE_TIME) {
            h->values[i].valid &= ~TALLY_MEASURE_TIME;
            lost++;
        }
    if (lost && !m->said_disjoint) {
        m->said_disjoint = true;
        tally_log(TALLY_LOG_WARN,
                  "GL: the GPU reported a disjoint operation (GL_GPU_DISJOINT_EXT); the "
                  "commands measured across it take no GPU time (GpuTime 0)");
    }
}

/* The program's own read of the flag: `*driver_set` is what the driver
 * answered it; returns what the program is answered. */
static bool program_reads(bool driver_set)
{
    tally_gl_context *ctx = tally_gl_current();
    gl_measuring *m = ctx ? ctx->measuring : NULL;
    return m && m->has_disjoint ? gl_disjoint_program_reads(&m->disjoint, driver_set) : driver_set;
}

/* Each reads the driver over a sentinel: where the query failed (a context
 * without the extension: GL_INVALID_ENUM) nothing is written, as without
 * the shim. */
void tally_gl_get_disjoint_integer(PFN_glGetIntegerv real, GLint *data)
{
    GLint saved = *data;
    *data = INT_MIN;
    real(GL_GPU_DISJOINT_EXT, data);
    if (*data == INT_MIN)
        *data = saved;
    else
        *data = program_reads(*data != 0);
}

void tally_gl_get_disjoint_integer64(PFN_glGetInteger64v real, GLint64 *data)
{
    GLint64 saved = *data;
    *data = INT64_MIN;
    real(GL_GPU_DISJOINT_EXT, data);
    if (*data == INT64_MIN)
        *data = saved;
    else
        *data = program_reads(*data != 0);
}

void tally_gl_get_disjoint_boolean(PFN_glGetBooleanv real, GLboolean *data)
{
    enum { SENTINEL = 0xa5 }; /* neither GL_TRUE nor GL_FALSE */
    GLboolean saved = *data;
    *data = SENTINEL;
    real(GL_GPU_DISJOINT_EXT, data);
    if (*data == SENTINEL)
        *data = saved;
    else
        *data = program_reads(*data != 0) ? 1 : 0; /* GL_TRUE, GL_FALSE */
}
