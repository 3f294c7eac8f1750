/* Owns the GL debug groups (KHR_debug's glPushDebugGroup, EXT_debug_marker's
 * glPushGroupMarkerEXT) as the engine's debug labels: each draw's report
 * row is labelled with the groups around it, as Vulkan's debug-utils
 * labels are. */
#include "driver_queries.h"

#include <string.h>

enum { LABEL_MAX = 255 };

/* message of length bytes, or up to its NUL when length < 0 (KHR_debug) or
 * 0 (EXT_debug_marker), cut at LABEL_MAX. */
static void push(const GLchar *message, GLsizei length, bool zero_means_terminated)
{
    tally_gl_context *ctx = tally_gl_current_context;
    if (!ctx || !ctx->stream || !message)
        return;
    char label[LABEL_MAX + 1];
    size_t n = length < 0 || (length == 0 && zero_means_terminated) ? strnlen(message, LABEL_MAX)
                                                                    : (size_t)length;
    n = n < LABEL_MAX ? n : LABEL_MAX;
    memcpy(label, message, n);
    label[n] = '\0';
    tally_gl_measure_debug_group(ctx);
    tally_stream_label_push(ctx->stream, label);
}

static void pop(void)
{
    tally_gl_context *ctx = tally_gl_current_context;
    if (!ctx || !ctx->stream)
        return;
    tally_gl_measure_debug_group(ctx);
    tally_stream_label_pop(ctx->stream); /* with none pushed: the engine ignores it */
}

void tally_gl_after_glPushDebugGroup(GLenum source, GLuint id, GLsizei length,
                                     const GLchar *message)
{
    (void)source, (void)id;
    push(message, length, false);
}

void tally_gl_after_glPopDebugGroup(void)
{
    pop();
}

void tally_gl_after_glPushGroupMarkerEXT(GLsizei length, const GLchar *marker)
{
    push(marker, length, true);
}

void tally_gl_after_glPopGroupMarkerEXT(void)
{
    pop();
}
