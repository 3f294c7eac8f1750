/* What the program asks GL about itself: the extension list with the shim's
 * two extensions added (only when the counter device opened: a device that
 * cannot serve them is not advertised), the INTEL limits, and glGetError
 * merged with the errors the extensions raised. */
#include "driver_queries.h"
#include "gl_shim.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char *const shim_extensions[] = {
    "GL_AMD_performance_monitor",
    "GL_INTEL_performance_query",
};
enum { SHIM_EXTENSION_COUNT = sizeof(shim_extensions) / sizeof(shim_extensions[0]) };

/* The INTEL extension's implementation limits. */
enum {
    QUERY_NAME_LENGTH_MAX = 256,
    COUNTER_NAME_LENGTH_MAX = 256,
    COUNTER_DESC_LENGTH_MAX = 1024,
};

bool tally_gl_has_word(const char *list, const char *word)
{
    size_t length = strlen(word);
    for (const char *at = list; (at = strstr(at, word)); at += length) {
        bool starts = at == list || at[-1] == ' ';
        bool ends = at[length] == '\0' || at[length] == ' ';
        if (starts && ends)
            return true;
    }
    return false;
}

void tally_gl_learn_version(tally_gl_context *ctx)
{
    if (ctx->version_known)
        return;
    const char *version = (const char *)REAL_glGetString(GL_VERSION);
    if (!version)
        return;
    ctx->gles = strncmp(version, "OpenGL ES", 9) == 0;
    const char *digits = version;
    while (*digits && (*digits < '0' || *digits > '9'))
        digits++;
    int major = atoi(digits);
    const char *dot = strchr(digits, '.');
    ctx->version = major * 10 + (dot ? atoi(dot + 1) % 10 : 0);
    /* Before 3.2 every desktop context is a compatibility one. */
    GLint profile = GL_CONTEXT_COMPATIBILITY_PROFILE_BIT;
    if (!ctx->gles && ctx->version >= 32)
        REAL_glGetIntegerv(GL_CONTEXT_PROFILE_MASK, &profile);
    ctx->compatibility = !ctx->gles && (profile & GL_CONTEXT_COMPATIBILITY_PROFILE_BIT);
    ctx->version_known = true;
}

/* Whether glGetStringi and GL_NUM_EXTENSIONS exist in this context. */
static bool has_indexed_extensions(tally_gl_context *ctx)
{
    tally_gl_learn_version(ctx);
    return ctx->version >= 30;
}

/* The driver's extension count and which of the shim's it lacks. */
static void learn_extension_count(tally_gl_context *ctx)
{
    if (ctx->real_extension_count >= 0)
        return;
    GLint count = INT_MIN;
    REAL_glGetIntegerv(GL_NUM_EXTENSIONS, &count);
    if (count == INT_MIN)
        return;
    ctx->real_extension_count = count;
    bool present[SHIM_EXTENSION_COUNT] = {false};
    for (GLint i = 0; i < count; i++) {
        const char *name = (const char *)REAL_glGetStringi(GL_EXTENSIONS, (GLuint)i);
        for (int e = 0; name && e < SHIM_EXTENSION_COUNT; e++)
            present[e] = present[e] || strcmp(name, shim_extensions[e]) == 0;
    }
    ctx->added_extension_count = 0;
    for (int e = 0; e < SHIM_EXTENSION_COUNT; e++) {
        if (!present[e])
            ctx->added_extensions[ctx->added_extension_count++] = shim_extensions[e];
    }
}

static const GLubyte *extension_string(tally_gl_context *ctx, const GLubyte *real)
{
    if (ctx->extensions && ctx->real_extensions == real)
        return (const GLubyte *)ctx->extensions;
    const char *base = (const char *)real;
    size_t length = strlen(base) + 1;
    for (int e = 0; e < SHIM_EXTENSION_COUNT; e++)
        length += strlen(shim_extensions[e]) + 1;
    char *text = malloc(length);
    if (!text)
        return real;
    strcpy(text, base);
    for (int e = 0; e < SHIM_EXTENSION_COUNT; e++) {
        if (tally_gl_has_word(base, shim_extensions[e]))
            continue;
        size_t used = strlen(text);
        if (used && text[used - 1] != ' ')
            strcat(text, " ");
        strcat(text, shim_extensions[e]);
    }
    free(ctx->extensions);
    ctx->extensions = text;
    ctx->real_extensions = real;
    return (const GLubyte *)text;
}

__attribute__((visibility("default"))) const GLubyte *glGetString(GLenum name)
{
    PFN_glGetString real = REAL_glGetString;
    const GLubyte *result = real ? real(name) : NULL;
    tally_gl_context *ctx = tally_gl_current();
    if (name != GL_EXTENSIONS || !result || !ctx || !tally_gl_device())
        return result;
    return extension_string(ctx, result);
}

__attribute__((visibility("default"))) const GLubyte *glGetStringi(GLenum name, GLuint index)
{
    tally_gl_context *ctx = tally_gl_current();
    if (name == GL_EXTENSIONS && ctx && has_indexed_extensions(ctx) && tally_gl_device()) {
        learn_extension_count(ctx);
        GLint real_count = ctx->real_extension_count;
        if (real_count >= 0 && index >= (GLuint)real_count &&
            index < (GLuint)real_count + (GLuint)ctx->added_extension_count)
            return (const GLubyte *)ctx->added_extensions[index - (GLuint)real_count];
    }
    PFN_glGetStringi real = REAL_glGetStringi;
    return real ? real(name, index) : NULL;
}

/* The value of one of the shim's own pnames; false if pname is not one. */
static bool shim_integer(GLenum pname, GLint64 *value)
{
    switch (pname) {
    case GL_PERFQUERY_QUERY_NAME_LENGTH_MAX_INTEL: *value = QUERY_NAME_LENGTH_MAX; return true;
    case GL_PERFQUERY_COUNTER_NAME_LENGTH_MAX_INTEL: *value = COUNTER_NAME_LENGTH_MAX; return true;
    case GL_PERFQUERY_COUNTER_DESC_LENGTH_MAX_INTEL: *value = COUNTER_DESC_LENGTH_MAX; return true;
    case GL_PERFQUERY_GPA_EXTENDED_COUNTERS_INTEL: *value = 0; return true;
    default: return false;
    }
}

/* The extensions the shim adds to GL_NUM_EXTENSIONS, after a real query
 * that succeeded (it wrote over the sentinel). */
static GLint added_count(tally_gl_context *ctx)
{
    if (!ctx || !has_indexed_extensions(ctx) || !tally_gl_device())
        return 0;
    learn_extension_count(ctx);
    return ctx->real_extension_count >= 0 ? ctx->added_extension_count : 0;
}

__attribute__((visibility("default"))) void glGetIntegerv(GLenum pname, GLint *data)
{
    GLint64 value;
    if (data && shim_integer(pname, &value)) {
        *data = (GLint)value;
        return;
    }
    PFN_glGetIntegerv real = REAL_glGetIntegerv;
    if (!real)
        return;
    if (pname == GL_GPU_DISJOINT_EXT && data) {
        tally_gl_get_disjoint_integer(real, data);
        return;
    }
    if (pname != GL_NUM_EXTENSIONS || !data) {
        real(pname, data);
        return;
    }
    GLint saved = *data;
    *data = INT_MIN;
    real(pname, data);
    if (*data == INT_MIN)
        *data = saved;
    else
        *data += added_count(tally_gl_current());
}

__attribute__((visibility("default"))) void glGetInteger64v(GLenum pname, GLint64 *data)
{
    GLint64 value;
    if (data && shim_integer(pname, &value)) {
        *data = value;
        return;
    }
    PFN_glGetInteger64v real = REAL_glGetInteger64v;
    if (!real)
        return;
    if (pname == GL_GPU_DISJOINT_EXT && data) {
        tally_gl_get_disjoint_integer64(real, data);
        return;
    }
    if (pname != GL_NUM_EXTENSIONS || !data) {
        real(pname, data);
        return;
    }
    GLint64 saved = *data;
    *data = INT64_MIN;
    real(pname, data);
    if (*data == INT64_MIN)
        *data = saved;
    else
        *data += added_count(tally_gl_current());
}

__attribute__((visibility("default"))) void glGetBooleanv(GLenum pname, GLboolean *data)
{
    GLint64 value;
    if (data && shim_integer(pname, &value)) {
        *data = value != 0;
        return;
    }
    PFN_glGetBooleanv real = REAL_glGetBooleanv;
    if (real && pname == GL_GPU_DISJOINT_EXT && data)
        tally_gl_get_disjoint_boolean(real, data);
    else if (real)
        real(pname, data);
}

__attribute__((visibility("default"))) GLenum glGetError(void)
{
    tally_gl_context *ctx = tally_gl_current();
    if (ctx && ctx->pending_error_count) {
        GLenum error = ctx->pending_errors[0];
        ctx->pending_error_count--;
        memmove(ctx->pending_errors, ctx->pending_errors + 1,
                ctx->pending_error_count * sizeof(ctx->pending_errors[0]));
        return error;
    }
    PFN_glGetError real = REAL_glGetError;
    return real ? real() : GL_NO_ERROR;
}
