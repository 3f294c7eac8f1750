/*
 * GL timestamps on CLOCK_MONOTONIC, for the driver backend. GL has no
 * calibration query, but glGetInteger64v(GL_TIMESTAMP) answers the GPU's
 * clock now (ARB_timer_query, GL 3.3; GL_TIMESTAMP_EXT in OpenGL ES 3 with
 * GL_EXT_disjoint_timer_query: the same token), and the shim reads
 * CLOCK_MONOTONIC just before and after it: the GPU's time lies within
 * that bracket, so its midpoint pairs with it, off by at most half the
 * bracket's width (the deviation). The narrowest of a few tries is kept.
 *
 * A pair is sampled on the program's thread, in its context, where the
 * shim reads its held queries anyway (driver_readback.c), before it submits
 * what it read, and at most once per CALIBRATION_PERIOD_NS: never on the
 * per-draw path. Each command's two timestamps are then converted with it
 * and flagged TALLY_MEASURE_TIME_MONOTONIC, so the engine keeps them where
 * the GPU ran them (engine/measured.c); the earliest says when the
 * submission began on the GPU (tally_submission.issued_ns), which the
 * engine's clock must not pass before it (the shim submits later). A disjoint event (OpenGL ES: the
 * GPU's clock may have jumped) drops the pair (driver_disjoint.c), and the
 * next poll samples a fresh one. Where GL_TIMESTAMP cannot be read without
 * an error (no timer query; OpenGL ES 2, where glGetInteger64v does not
 * exist) or TALLY_CALIBRATE=0, the engine's correlation places the times.
 *
 * glGetInteger64v(GL_TIMESTAMP) raises no GL error where it is called, sets
 * no state and flushes nothing: the program cannot observe it.
 */
#include "driver_queries.h"

/* The pair is sampled again when older than this: two clocks that drift
 * apart by 100 ppm part by 1 us in 10 ms. */
#define CALIBRATION_PERIOD_NS (10ull * 1000 * 1000)
/* Tries per sample; the narrowest bracket wins. */
enum { CALIBRATION_TRIES = 3 };

void tally_gl_calibration_open(gl_measuring *m, const tally_gl_context *ctx, bool allowed)
{
    /* In OpenGL ES, glGetInteger64v is core from 3.0 on; the extension's
     * glGetInteger64vEXT of ES 2 is not relied on. */
    m->calibration.usable = allowed && (m->measures & TALLY_MEASURE_TIME) &&
                            (!ctx->gles || ctx->version >= 30) && REAL_glGetInteger64v;
}

/* One (GPU, CLOCK_MONOTONIC) pair: the narrowest of a few brackets. */
static bool sample(gl_calibration *c)
{
    PFN_glGetInteger64v get = REAL_glGetInteger64v;
    for (int i = 0; i < CALIBRATION_TRIES; i++) {
        GLint64 gpu = -1;
        uint64_t before = tally_monotonic_ns();
        get(GL_TIMESTAMP, &gpu);
        uint64_t after = tally_monotonic_ns();
        if (gpu < 0)
            return false; /* nothing written */
        tally_clock_pair pair = tally_clock_pair_bracketed((uint64_t)gpu, before, after);
        if (i == 0 || pair.deviation_ns < c->pair.deviation_ns) {
            c->pair = pair;
            c->taken_ns = after;
        }
    }
    return true;
}

void tally_gl_calibrate(gl_measuring *m)
{
    gl_calibration *c = &m->calibration;
    if (!c->usable || (c->valid && tally_monotonic_ns() - c->taken_ns < CALIBRATION_PERIOD_NS))
        return;
    c->valid = sample(c);
    if (!c->valid && c->said) {
        /* It answered before: the context is no longer current underneath
         * (eglTerminate or eglReleaseThread left the shim's view behind),
         * not one that cannot say. Nothing to say; the next poll retries. */
        return;
    }
    if (!c->valid) {
        c->usable = false;
        tally_log(TALLY_LOG_WARN, "GL: glGetInteger64v(GL_TIMESTAMP) answered nothing; GPU "
                                  "timestamps are placed on the engine's clock instead");
    } else if (!c->said) {
        c->said = true;
        tally_log(TALLY_LOG_INFO,
                  "GL: GPU timestamps calibrated to CLOCK_MONOTONIC (glGetInteger64v(GL_TIMESTAMP) "
                  "between two clock reads, deviation %llu ns)",
                  (unsigned long long)c->pair.deviation_ns);
    }
}

uint64_t tally_gl_calibration_apply(gl_measuring *m, const tally_held *h)
{
    const gl_calibration *c = &m->calibration;
    if (!c->valid)
        return 0;
    return tally_measurements_to_monotonic(&c->pair, h->values, h->read, tally_monotonic_ns());
}
