/*
 * A draw's common cases, inline in its generated wrapper, before the
 * driver's call, which the wrapper then makes as a tail call (as the Vulkan
 * layer's hooks do):
 * - nobody would see the draw (tally_gl_unheard): nothing is recorded, and
 *   an idle shim's whole work per draw is that test, two loads past the
 *   current context (docs/gl.md, "What an idle shim costs a draw"); every
 *   draw and dispatch command's wrapper makes it (tally_gl_unheard_context);
 * - a plain draw (role "lane" in gl_commands.txt) with room in the
 *   stream's open run of draws and the context's state bound: the lane's
 *   32-byte append. An indexed draw never takes the lane: its indices are
 *   read back for the engine (draws.c).
 * Anything else returns false and goes the general way (draws.c), after
 * the driver's call.
 */
#ifndef TALLY_GL_DRAW_LANE_H
#define TALLY_GL_DRAW_LANE_H

#include "gl_shim.h"

enum { TALLY_GL_MODES = GL_PATCHES + 1 };
/* The engine's topology of each GL primitive mode below TALLY_GL_MODES. */
extern TALLY_GL_HIDDEN const uint8_t tally_gl_topology_by_mode[TALLY_GL_MODES];

/* The current context, when nobody would see its draws; else NULL. */
static inline tally_gl_context *tally_gl_unheard_context(void)
{
    tally_gl_context *ctx = tally_gl_current();
    return ctx && tally_gl_unheard(ctx) ? ctx : NULL;
}

static inline __attribute__((always_inline)) bool
tally_gl_lane_draw(const char *api_name, GLenum mode, GLsizei count, GLsizei instances,
                   uint32_t first, uint32_t first_instance)
{
    tally_gl_context *ctx = tally_gl_current();
    if (!ctx)
        return false;
    if (tally_gl_unheard(ctx))
        return true;
    tally_draw_lane *lane = ctx->lane;
    if (__builtin_expect(!lane || lane->next == lane->end || !ctx->state_bound || count < 0 ||
                             instances < 0 || mode >= TALLY_GL_MODES,
                         0))
        return false;
    tally_packed_draw *slot = lane->next++;
    tally_draw_lane_prefetch(slot);
    *slot = (tally_packed_draw){
        .api_name = api_name,
        .count = (uint32_t)count,
        .instance_count = (uint32_t)instances,
        .first = first,
        .first_instance = first_instance,
        .topology = tally_gl_topology_by_mode[mode],
        .patch_control_points = (uint8_t)(ctx->patch_vertices ? ctx->patch_vertices : 3),
    };
    /* No tally_gl_recorded: the lane has room only in a run that a draw the
     * general way opened since the last submission, which marked the work. */
    return true;
}

/* Each lane command's inline form, named for the generated wrappers
 * (gl_commands.txt, role "lane"). */
static inline bool tally_gl_lane_glDrawArrays(GLenum mode, GLint first, GLsizei count)
{
    return tally_gl_lane_draw("glDrawArrays", mode, count, 1, (uint32_t)first, 0);
}

static inline bool tally_gl_lane_glDrawArraysInstanced(GLenum mode, GLint first, GLsizei count,
                                                       GLsizei instancecount)
{
    return tally_gl_lane_draw("glDrawArraysInstanced", mode, count, instancecount, (uint32_t)first,
                              0);
}

static inline bool tally_gl_lane_glDrawArraysInstancedBaseInstance(GLenum mode, GLint first,
                                                                   GLsizei count,
                                                                   GLsizei instancecount,
                                                                   GLuint baseinstance)
{
    return tally_gl_lane_draw("glDrawArraysInstancedBaseInstance", mode, count, instancecount,
                              (uint32_t)first, baseinstance);
}

#endif
