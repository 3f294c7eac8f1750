/*
 * A draw's common case, inline in its generated wrapper: a context whose
 * stream has room in its open run of draws, its state bound and a device
 * that measures nothing appends the draw to the stream's lane before the
 * driver's call,
 * which the wrapper then makes as a tail call, as the Vulkan layer's hooks
 * do. An idle shim's whole work per draw is these tests and the lane's
 * 32-byte append (docs/gl.md, "What an idle shim costs a draw"). A draw the
 * lane cannot take returns false and goes the general way (draws.c), after
 * the driver's call.
 */
#ifndef TALLY_GL_DRAW_LANE_H
#define TALLY_GL_DRAW_LANE_H

#include "gl_shim.h"

enum { TALLY_GL_MODES = GL_PATCHES + 1 };
/* The engine's topology of each GL primitive mode below TALLY_GL_MODES. */
extern TALLY_GL_HIDDEN const uint8_t tally_gl_topology_by_mode[TALLY_GL_MODES];

static inline uint8_t tally_gl_index_size(GLenum type)
{
    switch (type) {
    case GL_UNSIGNED_BYTE: return 1;
    case GL_UNSIGNED_SHORT: return 2;
    case GL_UNSIGNED_INT: return 4;
    default: return 0;
    }
}

/* index_size 0: a draw without indices. An indexed draw takes the lane only
 * while its indices are not wanted (tally_gl_context.reads_indices): the
 * lane carries none. */
static inline __attribute__((always_inline)) bool
tally_gl_lane_draw(const char *api_name, GLenum mode, GLsizei count, GLsizei instances,
                   uint32_t first, uint32_t first_instance, int32_t vertex_offset,
                   uint8_t index_size)
{
    tally_gl_context *ctx = tally_gl_current();
    tally_draw_lane *lane = ctx ? ctx->lane : NULL;
    if (__builtin_expect(!lane || lane->next == lane->end || !ctx->state_bound || count < 0 ||
                             instances < 0 || mode >= TALLY_GL_MODES ||
                             (index_size && ctx->reads_indices),
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
        .vertex_offset = vertex_offset,
        .flags = index_size ? TALLY_DRAW_INDEXED : 0,
        .topology = tally_gl_topology_by_mode[mode],
        .patch_control_points = (uint8_t)(ctx->patch_vertices ? ctx->patch_vertices : 3),
        .index_size = index_size,
    };
    /* No tally_gl_recorded: the lane has room only in a run that a draw the
     * general way opened since the last submission, which marked the work. */
    return true;
}

/* An indexed draw's first index: its offset into the element buffer, in
 * indices of size (1, 2 or 4 bytes: a shift, not a division). */
static inline uint32_t tally_gl_first_index(const void *indices, uint8_t size)
{
    return (uint32_t)((uintptr_t)indices >> (size >> 1));
}

static inline __attribute__((always_inline)) bool
tally_gl_lane_elements(const char *api_name, GLenum mode, GLsizei count, GLenum type,
                       const void *indices, GLsizei instances, uint32_t first_instance,
                       int32_t vertex_offset)
{
    uint8_t size = tally_gl_index_size(type);
    return size &&
           tally_gl_lane_draw(api_name, mode, count, instances, tally_gl_first_index(indices, size),
                              first_instance, vertex_offset, size);
}

/* Each lane command's inline form, named for the generated wrappers
 * (gl_commands.txt, role "lane"). */
static inline bool tally_gl_lane_glDrawArrays(GLenum mode, GLint first, GLsizei count)
{
    return tally_gl_lane_draw("glDrawArrays", mode, count, 1, (uint32_t)first, 0, 0, 0);
}

static inline bool tally_gl_lane_glDrawArraysInstanced(GLenum mode, GLint first, GLsizei count,
                                                       GLsizei instancecount)
{
    return tally_gl_lane_draw("glDrawArraysInstanced", mode, count, instancecount, (uint32_t)first,
                              0, 0, 0);
}

static inline bool tally_gl_lane_glDrawArraysInstancedBaseInstance(GLenum mode, GLint first,
                                                                   GLsizei count,
                                                                   GLsizei instancecount,
                                                                   GLuint baseinstance)
{
    return tally_gl_lane_draw("glDrawArraysInstancedBaseInstance", mode, count, instancecount,
                              (uint32_t)first, baseinstance, 0, 0);
}

static inline bool tally_gl_lane_glDrawElements(GLenum mode, GLsizei count, GLenum type,
                                                const void *indices)
{
    return tally_gl_lane_elements("glDrawElements", mode, count, type, indices, 1, 0, 0);
}

static inline bool tally_gl_lane_glDrawElementsInstanced(GLenum mode, GLsizei count, GLenum type,
                                                         const void *indices, GLsizei instancecount)
{
    return tally_gl_lane_elements("glDrawElementsInstanced", mode, count, type, indices,
                                  instancecount, 0, 0);
}

static inline bool tally_gl_lane_glDrawElementsBaseVertex(GLenum mode, GLsizei count, GLenum type,
                                                          const void *indices, GLint basevertex)
{
    return tally_gl_lane_elements("glDrawElementsBaseVertex", mode, count, type, indices, 1, 0,
                                  basevertex);
}

static inline bool tally_gl_lane_glDrawElementsInstancedBaseVertex(GLenum mode, GLsizei count,
                                                                   GLenum type, const void *indices,
                                                                   GLsizei instancecount,
                                                                   GLint basevertex)
{
    return tally_gl_lane_elements("glDrawElementsInstancedBaseVertex", mode, count, type, indices,
                                  instancecount, 0, basevertex);
}

static inline bool tally_gl_lane_glDrawElementsInstancedBaseInstance(GLenum mode, GLsizei count,
                                                                     GLenum type,
                                                                     const void *indices,
                                                                     GLsizei instancecount,
                                                                     GLuint baseinstance)
{
    return tally_gl_lane_elements("glDrawElementsInstancedBaseInstance", mode, count, type, indices,
                                  instancecount, baseinstance, 0);
}

static inline bool tally_gl_lane_glDrawElementsInstancedBaseVertexBaseInstance(
    GLenum mode, GLsizei count, GLenum type, const void *indices, GLsizei instancecount,
    GLint basevertex, GLuint baseinstance)
{
    return tally_gl_lane_elements("glDrawElementsInstancedBaseVertexBaseInstance", mode, count,
                                  type, indices, instancecount, baseinstance, basevertex);
}

static inline bool tally_gl_lane_glDrawRangeElements(GLenum mode, GLuint start, GLuint end,
                                                     GLsizei count, GLenum type,
                                                     const void *indices)
{
    (void)start, (void)end;
    return tally_gl_lane_elements("glDrawRangeElements", mode, count, type, indices, 1, 0, 0);
}

static inline bool tally_gl_lane_glDrawRangeElementsBaseVertex(GLenum mode, GLuint start,
                                                               GLuint end, GLsizei count,
                                                               GLenum type, const void *indices,
                                                               GLint basevertex)
{
    (void)start, (void)end;
    return tally_gl_lane_elements("glDrawRangeElementsBaseVertex", mode, count, type, indices, 1, 0,
                                  basevertex);
}

#endif
