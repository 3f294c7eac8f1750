/* Draws and dispatches, recorded into the current context's stream: the
 * common draws by their wrappers, inline, into the stream's lane before the
 * driver's call (draw_lane.h); what the lane cannot take here, after the
 * driver took it. Indirect parameters are read back from the bound
 * indirect buffer (one synchronous read per indirect call, however many
 * draws a multi-draw makes): without them the counts, and so every exact
 * counter, would be unknown. An indexed draw's indices are read back the
 * same way (up to 1 MiB), so the vertex-cache model counts the vertices
 * the draw really names instead of assuming a reuse ratio. */
#include "draw_lane.h"
#include "driver_queries.h"
#include "gl_shim.h"

#include <stdlib.h>
#include <string.h>

const uint8_t tally_gl_topology_by_mode[TALLY_GL_MODES] = {
    [GL_POINTS] = TALLY_TOPOLOGY_POINT_LIST,
    [GL_LINES] = TALLY_TOPOLOGY_LINE_LIST,
    [GL_LINE_LOOP] = TALLY_TOPOLOGY_LINE_LOOP,
    [GL_LINE_STRIP] = TALLY_TOPOLOGY_LINE_STRIP,
    [GL_TRIANGLES] = TALLY_TOPOLOGY_TRIANGLE_LIST,
    [GL_TRIANGLE_STRIP] = TALLY_TOPOLOGY_TRIANGLE_STRIP,
    [GL_TRIANGLE_FAN] = TALLY_TOPOLOGY_TRIANGLE_FAN,
    [GL_QUADS] = TALLY_TOPOLOGY_QUAD_LIST,
    [GL_QUAD_STRIP] = TALLY_TOPOLOGY_QUAD_STRIP,
    [GL_POLYGON] = TALLY_TOPOLOGY_POLYGON,
    [GL_LINES_ADJACENCY] = TALLY_TOPOLOGY_LINE_LIST_WITH_ADJACENCY,
    [GL_LINE_STRIP_ADJACENCY] = TALLY_TOPOLOGY_LINE_STRIP_WITH_ADJACENCY,
    [GL_TRIANGLES_ADJACENCY] = TALLY_TOPOLOGY_TRIANGLE_LIST_WITH_ADJACENCY,
    [GL_TRIANGLE_STRIP_ADJACENCY] = TALLY_TOPOLOGY_TRIANGLE_STRIP_WITH_ADJACENCY,
    [GL_PATCHES] = TALLY_TOPOLOGY_PATCH_LIST,
};

static uint8_t index_size_of(GLenum type)
{
    switch (type) {
    case GL_UNSIGNED_BYTE: return 1;
    case GL_UNSIGNED_SHORT: return 2;
    case GL_UNSIGNED_INT: return 4;
    default: return 0;
    }
}

/* An indexed draw's first index: its offset into the element buffer, in
 * indices of size (1, 2 or 4 bytes). */
static uint32_t first_index(const void *indices, uint8_t size)
{
    return size ? (uint32_t)((uintptr_t)indices / size) : 0;
}

static bool topology_of(GLenum mode, uint8_t *topology)
{
    if (mode >= TALLY_GL_MODES)
        return false;
    *topology = tally_gl_topology_by_mode[mode];
    return true;
}

/* The render area and the program in use are bound before the context's
 * first draw, and again after the program in use is relinked; the engine
 * carries them across submissions (tally_submit_stream). */
static void bind_state(tally_gl_context *ctx)
{
    ctx->state_bound = true;
    if (ctx->viewport_width <= 0 || ctx->viewport_height <= 0) {
        GLint viewport[4] = {0, 0, 0, 0};
        REAL_glGetIntegerv(GL_VIEWPORT, viewport);
        ctx->viewport_width = viewport[2];
        ctx->viewport_height = viewport[3];
    }
    tally_render_state state = {
        .width = (uint32_t)(ctx->viewport_width > 0 ? ctx->viewport_width : 1),
        .height = (uint32_t)(ctx->viewport_height > 0 ? ctx->viewport_height : 1),
        .layers = 1,
        .samples = 1,
        .color_bytes_per_pixel = 4,
        .depth_bytes_per_sample = 4,
    };
    tally_stream_set_render_state(ctx->stream, &state);
    tally_program *program = tally_gl_program_for(ctx, ctx->used_program);
    if (program)
        tally_stream_bind_program(ctx->stream, program);
}

/* The context to record into, with its per-stream state bound; NULL when
 * nothing is recorded (no stream, or nobody would see it). */
static inline tally_gl_context *recording_context(void)
{
    tally_gl_context *ctx = tally_gl_current();
    if (!ctx || !ctx->stream || tally_gl_unheard(ctx))
        return NULL;
    if (__builtin_expect(!ctx->state_bound, 0))
        bind_state(ctx);
    return ctx;
}

/* Any draw, by the engine's checked call: with its indices (which the
 * stream copies), or as record_draw's fast path cannot take it. */
static void record_draw_of(const char *api_name, GLenum mode, int64_t count, int64_t instances,
                           uint32_t first, uint32_t first_instance, int32_t vertex_offset,
                           GLenum index_type, uint32_t flags, const void *index_data)
{
    tally_draw draw = {.api_name = api_name, .flags = flags, .indices = index_data};
    if (count < 0 || instances < 0 || !topology_of(mode, &draw.topology))
        return;
    if (flags & TALLY_DRAW_INDEXED) {
        draw.index_size = index_size_of(index_type);
        if (!draw.index_size)
            return;
    }
    tally_gl_context *ctx = recording_context();
    if (!ctx)
        return;
    draw.count = (uint32_t)count;
    draw.instance_count = (uint32_t)instances;
    draw.first = first;
    draw.first_instance = first_instance;
    draw.vertex_offset = vertex_offset;
    draw.patch_control_points = (uint8_t)(ctx->patch_vertices ? ctx->patch_vertices : 3);
    tally_gl_measure_attach(ctx);
    if (tally_stream_draw(ctx->stream, &draw) == TALLY_OK)
        tally_gl_recorded(ctx);
}

/* A draw without index data: through the lane where it can (a multi-draw's
 * draws, glBegin's), else the general way. */
static void record_draw(const char *api_name, GLenum mode, int64_t count, int64_t instances,
                        uint32_t first, uint32_t first_instance, int32_t vertex_offset,
                        GLenum index_type, uint32_t flags)
{
    if (flags == 0 && count <= INT32_MAX && instances <= INT32_MAX && vertex_offset == 0 &&
        tally_gl_lane_draw(api_name, mode, (GLsizei)count, (GLsizei)instances, first,
                           first_instance))
        return;
    record_draw_of(api_name, mode, count, instances, first, first_instance, vertex_offset,
                   index_type, flags, NULL);
}

static bool read_bound_buffer(GLenum target, GLenum binding, const void *offset, void *out,
                              size_t size);

/* Indices read per draw, up to this many bytes; beyond, the vertex model
 * goes without them (and stays within its bounds). */
enum { MAX_INDEX_BYTES = 1 << 20 };

/* An indexed draw with its indices, read where the GPU reads them (the
 * bound element buffer, or client memory where the context allows it), so
 * the vertex-cache model sees the real indices: one synchronous read per
 * draw, as for indirect parameters, but only while someone counts
 * (tally_stream_observed): an idle shim must not stall the program on a
 * readback. Without them (too many, no way to read, or nobody counting),
 * the draw is recorded without; under a backend that measures the GPU,
 * always without. */
static void record_indexed(const char *api_name, GLenum mode, GLsizei count, GLsizei instances,
                           GLenum type, const void *indices, uint32_t first_instance,
                           int32_t vertex_offset)
{
    uint8_t size = index_size_of(type);
    size_t bytes = count > 0 ? (size_t)count * size : 0;
    tally_gl_context *ctx = tally_gl_current();
    if (!ctx || tally_gl_unheard(ctx))
        return;
    /* A backend that measures the GPU counts what the GPU did, not what a
     * model makes of the indices: it needs none, and each read waits for
     * the GPU (docs/driver.md, "Granularity in GL"). */
    bool wanted = ctx->stream && tally_stream_observed(ctx->stream) &&
                  !atomic_load_explicit(&tally_gl_device_measures, memory_order_relaxed);
    void *data = wanted && bytes && bytes <= MAX_INDEX_BYTES ? malloc(bytes) : NULL;
    if (data && !read_bound_buffer(GL_ELEMENT_ARRAY_BUFFER, GL_ELEMENT_ARRAY_BUFFER_BINDING,
                                   indices, data, bytes)) {
        free(data);
        data = NULL;
    }
    record_draw_of(api_name, mode, count, instances, first_index(indices, size), first_instance,
                   vertex_offset, type, TALLY_DRAW_INDEXED, data);
    free(data); /* the stream keeps a copy */
}

void tally_gl_after_glDrawArrays(GLenum mode, GLint first, GLsizei count)
{
    record_draw("glDrawArrays", mode, count, 1, (uint32_t)first, 0, 0, 0, 0);
}

void tally_gl_after_glDrawArraysInstanced(GLenum mode, GLint first, GLsizei count,
                                          GLsizei instancecount)
{
    record_draw("glDrawArraysInstanced", mode, count, instancecount, (uint32_t)first, 0, 0, 0, 0);
}

void tally_gl_after_glDrawArraysInstancedBaseInstance(GLenum mode, GLint first, GLsizei count,
                                                      GLsizei instancecount, GLuint baseinstance)
{
    record_draw("glDrawArraysInstancedBaseInstance", mode, count, instancecount, (uint32_t)first,
                baseinstance, 0, 0, 0);
}

void tally_gl_after_glDrawElements(GLenum mode, GLsizei count, GLenum type, const void *indices)
{
    record_indexed("glDrawElements", mode, count, 1, type, indices, 0, 0);
}

void tally_gl_after_glDrawElementsInstanced(GLenum mode, GLsizei count, GLenum type,
                                            const void *indices, GLsizei instancecount)
{
    record_indexed("glDrawElementsInstanced", mode, count, instancecount, type, indices, 0, 0);
}

void tally_gl_after_glDrawElementsBaseVertex(GLenum mode, GLsizei count, GLenum type,
                                             const void *indices, GLint basevertex)
{
    record_indexed("glDrawElementsBaseVertex", mode, count, 1, type, indices, 0, basevertex);
}

void tally_gl_after_glDrawElementsInstancedBaseVertex(GLenum mode, GLsizei count, GLenum type,
                                                      const void *indices, GLsizei instancecount,
                                                      GLint basevertex)
{
    record_indexed("glDrawElementsInstancedBaseVertex", mode, count, instancecount, type, indices,
                   0, basevertex);
}

void tally_gl_after_glDrawElementsInstancedBaseInstance(GLenum mode, GLsizei count, GLenum type,
                                                        const void *indices, GLsizei instancecount,
                                                        GLuint baseinstance)
{
    record_indexed("glDrawElementsInstancedBaseInstance", mode, count, instancecount, type, indices,
                   baseinstance, 0);
}

void tally_gl_after_glDrawElementsInstancedBaseVertexBaseInstance(GLenum mode, GLsizei count,
                                                                  GLenum type, const void *indices,
                                                                  GLsizei instancecount,
                                                                  GLint basevertex,
                                                                  GLuint baseinstance)
{
    record_indexed("glDrawElementsInstancedBaseVertexBaseInstance", mode, count, instancecount,
                   type, indices, baseinstance, basevertex);
}

void tally_gl_after_glDrawRangeElements(GLenum mode, GLuint start, GLuint end, GLsizei count,
                                        GLenum type, const void *indices)
{
    (void)start, (void)end;
    record_indexed("glDrawRangeElements", mode, count, 1, type, indices, 0, 0);
}

void tally_gl_after_glDrawRangeElementsBaseVertex(GLenum mode, GLuint start, GLuint end,
                                                  GLsizei count, GLenum type, const void *indices,
                                                  GLint basevertex)
{
    (void)start, (void)end;
    record_indexed("glDrawRangeElementsBaseVertex", mode, count, 1, type, indices, 0, basevertex);
}

void tally_gl_after_glMultiDrawArrays(GLenum mode, const GLint *first, const GLsizei *count,
                                      GLsizei drawcount)
{
    for (GLsizei i = 0; first && count && i < drawcount; i++)
        record_draw("glMultiDrawArrays", mode, count[i], 1, (uint32_t)first[i], 0, 0, 0, 0);
}

void tally_gl_after_glMultiDrawElements(GLenum mode, const GLsizei *count, GLenum type,
                                        const void *const *indices, GLsizei drawcount)
{
    for (GLsizei i = 0; count && indices && i < drawcount; i++)
        record_indexed("glMultiDrawElements", mode, count[i], 1, type, indices[i], 0, 0);
}

void tally_gl_after_glMultiDrawElementsBaseVertex(GLenum mode, const GLsizei *count, GLenum type,
                                                  const void *const *indices, GLsizei drawcount,
                                                  const GLint *basevertex)
{
    for (GLsizei i = 0; count && indices && basevertex && i < drawcount; i++)
        record_indexed("glMultiDrawElementsBaseVertex", mode, count[i], 1, type, indices[i], 0,
                       basevertex[i]);
}

/* Whether [offset, offset + size) lies inside the buffer bound to target,
 * which is not mapped: the driver refused a command whose parameters lie
 * beyond it, and a read there would leave the shim's own GL error behind. */
static bool inside_bound_buffer(GLenum target, const void *offset, size_t size)
{
    PFN_glGetBufferParameteri64v get_size = REAL_glGetBufferParameteri64v;
    GLint64 buffer_size = 0;
    if (!get_size)
        return true; /* cannot tell: the read itself is the check */
    get_size(target, GL_BUFFER_SIZE, &buffer_size);
    /* A buffer the program has mapped cannot be read or mapped again
     * without a GL error it would see. */
    GLint64 mapped = 0;
    get_size(target, GL_BUFFER_MAPPED, &mapped);
    uintptr_t begin = (uintptr_t)offset;
    return !mapped && buffer_size >= 0 && begin <= (uint64_t)buffer_size &&
           size <= (uint64_t)buffer_size - begin;
}

/* Client memory holds a command's parameters or indices when no buffer is
 * bound only where the context allows it: indirect parameters in a
 * compatibility context, indices there and in GLES. Anywhere else the
 * driver refused the call, and `offset` is no pointer. */
static bool client_memory_allowed(tally_gl_context *ctx, GLenum target)
{
    tally_gl_learn_version(ctx);
    if (target == GL_ELEMENT_ARRAY_BUFFER)
        return ctx->compatibility || ctx->gles;
    return target == GL_DRAW_INDIRECT_BUFFER && ctx->compatibility;
}

/* Reads size bytes of the buffer bound to target (binding is its binding
 * query) at offset, or of client memory when none is bound. */
static bool read_bound_buffer(GLenum target, GLenum binding, const void *offset, void *out,
                              size_t size)
{
    tally_gl_context *ctx = tally_gl_current();
    if (!ctx)
        return false;
    GLint buffer = 0;
    REAL_glGetIntegerv(binding, &buffer);
    if (buffer == 0) {
        if (!offset || !client_memory_allowed(ctx, target))
            return false;
        memcpy(out, offset, size);
        return true;
    }
    if (!inside_bound_buffer(target, offset, size))
        return false;
    if (!ctx->gles) {
        PFN_glGetBufferSubData get = REAL_glGetBufferSubData;
        if (!get)
            return false;
        get(target, (GLintptr)offset, (GLsizeiptr)size, out);
        return true;
    }
    PFN_glMapBufferRange map = REAL_glMapBufferRange;
    PFN_glUnmapBuffer unmap = REAL_glUnmapBuffer;
    void *mapped =
        map && unmap ? map(target, (GLintptr)offset, (GLsizeiptr)size, GL_MAP_READ_BIT) : NULL;
    if (!mapped)
        return false;
    memcpy(out, mapped, size);
    unmap(target);
    return true;
}

typedef struct arrays_indirect {
    GLuint count, instance_count, first, base_instance;
} arrays_indirect;

typedef struct elements_indirect {
    GLuint count, instance_count, first_index;
    GLint base_vertex;
    GLuint base_instance;
} elements_indirect;

/* One indirect draw call: `drawcount` records of `record_size` bytes,
 * `step` bytes apart from `offset`. */
typedef struct indirect_call {
    const char *api_name;
    GLenum mode, type;
    const void *offset;
    GLsizei drawcount;
    size_t step, record_size;
    void (*record)(const struct indirect_call *call, const void *params);
} indirect_call;

/* Multi-draws of up to this many bytes of records are read onto the stack. */
#define INDIRECT_STACK_BYTES 1024

/* Reads the span of every record at once, [offset, offset + (drawcount -
 * 1) x step + record_size) (the padding after the last record need not be
 * in the buffer), and records each draw. When no memory can be had for a
 * long span it is read in as many pieces as the stack buffer needs. */
static void record_indirect_call(const indirect_call *call)
{
    if (call->drawcount <= 0 || call->step < call->record_size)
        return; /* the driver refused it */
    if (tally_gl_unheard_context())
        return; /* no read back for draws nobody would see */
    char local[INDIRECT_STACK_BYTES];
    size_t per_read = (size_t)call->drawcount;
    size_t span = (per_read - 1) * call->step + call->record_size;
    char *data = span <= sizeof(local) ? local : malloc(span);
    if (!data) {
        data = local;
        per_read = (sizeof(local) - call->record_size) / call->step + 1;
    }
    for (size_t done = 0; done < (size_t)call->drawcount; done += per_read) {
        size_t n = (size_t)call->drawcount - done;
        n = n < per_read ? n : per_read;
        const char *at = (const char *)call->offset + done * call->step;
        if (!read_bound_buffer(GL_DRAW_INDIRECT_BUFFER, GL_DRAW_INDIRECT_BUFFER_BINDING, at, data,
                               (n - 1) * call->step + call->record_size))
            break;
        for (size_t i = 0; i < n; i++)
            call->record(call, data + i * call->step);
    }
    if (data != local)
        free(data);
}

static void record_arrays(const indirect_call *call, const void *record)
{
    arrays_indirect params;
    memcpy(&params, record, sizeof(params));
    record_draw(call->api_name, call->mode, params.count, params.instance_count, params.first,
                params.base_instance, 0, 0, TALLY_DRAW_INDIRECT);
}

static void record_elements(const indirect_call *call, const void *record)
{
    elements_indirect params;
    memcpy(&params, record, sizeof(params));
    record_draw(call->api_name, call->mode, params.count, params.instance_count, params.first_index,
                params.base_instance, params.base_vertex, call->type,
                TALLY_DRAW_INDEXED | TALLY_DRAW_INDIRECT);
}

static void record_arrays_indirect(const char *api_name, GLenum mode, const void *indirect,
                                   GLsizei drawcount, GLsizei stride)
{
    indirect_call call = {
        .api_name = api_name,
        .mode = mode,
        .offset = indirect,
        .drawcount = drawcount,
        .step = stride > 0 ? (size_t)stride : sizeof(arrays_indirect),
        .record_size = sizeof(arrays_indirect),
        .record = record_arrays,
    };
    if (stride >= 0)
        record_indirect_call(&call);
}

static void record_elements_indirect(const char *api_name, GLenum mode, GLenum type,
                                     const void *indirect, GLsizei drawcount, GLsizei stride)
{
    indirect_call call = {
        .api_name = api_name,
        .mode = mode,
        .type = type,
        .offset = indirect,
        .drawcount = drawcount,
        .step = stride > 0 ? (size_t)stride : sizeof(elements_indirect),
        .record_size = sizeof(elements_indirect),
        .record = record_elements,
    };
    if (stride >= 0)
        record_indirect_call(&call);
}

void tally_gl_after_glDrawArraysIndirect(GLenum mode, const void *indirect)
{
    record_arrays_indirect("glDrawArraysIndirect", mode, indirect, 1, 0);
}

void tally_gl_after_glDrawElementsIndirect(GLenum mode, GLenum type, const void *indirect)
{
    record_elements_indirect("glDrawElementsIndirect", mode, type, indirect, 1, 0);
}

void tally_gl_after_glMultiDrawArraysIndirect(GLenum mode, const void *indirect, GLsizei drawcount,
                                              GLsizei stride)
{
    record_arrays_indirect("glMultiDrawArraysIndirect", mode, indirect, drawcount, stride);
}

void tally_gl_after_glMultiDrawElementsIndirect(GLenum mode, GLenum type, const void *indirect,
                                                GLsizei drawcount, GLsizei stride)
{
    record_elements_indirect("glMultiDrawElementsIndirect", mode, type, indirect, drawcount,
                             stride);
}

static void record_dispatch(const char *api_name, const GLuint groups[3], uint32_t flags)
{
    tally_gl_context *ctx = recording_context();
    if (!ctx)
        return;
    tally_dispatch dispatch = {.api_name = api_name, .flags = flags};
    memcpy(dispatch.groups, groups, sizeof(dispatch.groups));
    tally_gl_measure_attach(ctx);
    if (tally_stream_dispatch(ctx->stream, &dispatch) == TALLY_OK)
        tally_gl_recorded(ctx);
}

void tally_gl_after_glDispatchCompute(GLuint num_groups_x, GLuint num_groups_y, GLuint num_groups_z)
{
    GLuint groups[3] = {num_groups_x, num_groups_y, num_groups_z};
    record_dispatch("glDispatchCompute", groups, 0);
}

void tally_gl_after_glDispatchComputeIndirect(GLintptr indirect)
{
    GLuint groups[3];
    if (!tally_gl_unheard_context() &&
        read_bound_buffer(GL_DISPATCH_INDIRECT_BUFFER, GL_DISPATCH_INDIRECT_BUFFER_BINDING,
                          (const void *)indirect, groups, sizeof(groups)))
        record_dispatch("glDispatchComputeIndirect", groups, TALLY_DISPATCH_INDIRECT);
}

/* Immediate mode: the vertices between glBegin and glEnd make one draw. */
void tally_gl_after_glBegin(GLenum mode)
{
    tally_gl_context *ctx = tally_gl_current();
    if (!ctx)
        return;
    ctx->in_begin = true;
    ctx->begin_mode = mode;
    ctx->begin_vertices = 0;
}

void tally_gl_after_vertex(void)
{
    tally_gl_context *ctx = tally_gl_current();
    if (ctx && ctx->in_begin)
        ctx->begin_vertices++;
}

void tally_gl_after_glEnd(void)
{
    tally_gl_context *ctx = tally_gl_current();
    if (!ctx || !ctx->in_begin)
        return;
    ctx->in_begin = false;
    record_draw("glBegin", ctx->begin_mode, ctx->begin_vertices, 1, 0, 0, 0, 0, 0);
}

void tally_gl_after_glViewport(GLint x, GLint y, GLsizei width, GLsizei height)
{
    (void)x, (void)y;
    tally_gl_context *ctx = tally_gl_current();
    if (!ctx || width < 0 || height < 0)
        return;
    ctx->viewport_width = width;
    ctx->viewport_height = height;
    if (ctx->state_bound) {
        tally_render_state state = {
            (uint32_t)(width ? width : 1), (uint32_t)(height ? height : 1), 1, 1, 4, 4, 0};
        tally_stream_set_render_state(ctx->stream, &state);
    }
}

void tally_gl_after_glPatchParameteri(GLenum pname, GLint value)
{
    tally_gl_context *ctx = tally_gl_current();
    if (ctx && pname == GL_PATCH_VERTICES && value > 0 && value < 256)
        ctx->patch_vertices = value;
}

/* Submission points: what the program waits for has to be executed. */
void tally_gl_after_glFlush(void)
{
    tally_gl_flush(tally_gl_current(), "glFlush", false);
}

void tally_gl_after_glFinish(void)
{
    tally_gl_flush(tally_gl_current(), "glFinish", true);
}

void tally_gl_after_glReadPixels(GLint x, GLint y, GLsizei width, GLsizei height, GLenum format,
                                 GLenum type, void *pixels)
{
    (void)x, (void)y, (void)width, (void)height, (void)format, (void)type, (void)pixels;
    tally_gl_submit(tally_gl_current(), "glReadPixels", true);
}

/* Blocking reads: the program waits for the GPU's work, so it is executed. */
void tally_gl_after_glGetBufferSubData(GLenum target, GLintptr offset, GLsizeiptr size, void *data)
{
    (void)target, (void)offset, (void)size, (void)data;
    tally_gl_submit(tally_gl_current(), "glGetBufferSubData", true);
}

void tally_gl_after_glMapBuffer(void *result, GLenum target, GLenum access)
{
    (void)target;
    if (result && (access == GL_READ_ONLY || access == GL_READ_WRITE))
        tally_gl_submit(tally_gl_current(), "glMapBuffer", true);
}

void tally_gl_after_glMapBufferRange(void *result, GLenum target, GLintptr offset,
                                     GLsizeiptr length, GLbitfield access)
{
    (void)target, (void)offset, (void)length;
    if (result && (access & GL_MAP_READ_BIT))
        tally_gl_submit(tally_gl_current(), "glMapBufferRange", true);
}

void tally_gl_after_glClientWaitSync(GLenum result, GLsync sync, GLbitfield flags, GLuint64 timeout)
{
    (void)sync, (void)flags, (void)timeout;
    /* The engine catches up only when the program's wait was over: a poll
     * that timed out must not block on it. */
    bool signaled = result == GL_ALREADY_SIGNALED || result == GL_CONDITION_SATISFIED;
    tally_gl_submit(tally_gl_current(), "glClientWaitSync", signaled);
}

/* Reading a query's result waits for it; asking for availability flushes. */
static void query_read(GLenum pname, const char *api_name)
{
    tally_gl_submit(tally_gl_current(), api_name, pname == GL_QUERY_RESULT);
}

void tally_gl_after_glGetQueryObjectiv(GLuint id, GLenum pname, GLint *params)
{
    (void)id, (void)params;
    query_read(pname, "glGetQueryObjectiv");
}

void tally_gl_after_glGetQueryObjectuiv(GLuint id, GLenum pname, GLuint *params)
{
    (void)id, (void)params;
    query_read(pname, "glGetQueryObjectuiv");
}

void tally_gl_after_glGetQueryObjecti64v(GLuint id, GLenum pname, GLint64 *params)
{
    (void)id, (void)params;
    query_read(pname, "glGetQueryObjecti64v");
}

void tally_gl_after_glGetQueryObjectui64v(GLuint id, GLenum pname, GLuint64 *params)
{
    (void)id, (void)params;
    query_read(pname, "glGetQueryObjectui64v");
}
