/* Program objects: each linked program's static profile (its stages, their
 * instruction mix from the GLSL compiled with glslang, the compute local size
 * GL reports) as an engine program, bound for the draws and dispatches made
 * while it is in use. */
#include "gl_shim.h"
#include "glsl_profile.h"

#include <stdlib.h>

struct gl_program {
    GLuint name;
    tally_program *program;
    gl_program *next;
};

static gl_program *find(tally_gl_context *ctx, GLuint name)
{
    for (gl_program *p = ctx->programs; p; p = p->next) {
        if (p->name == name)
            return p;
    }
    return NULL;
}

static void forget(tally_gl_context *ctx, GLuint name)
{
    for (gl_program **link = &ctx->programs; *link; link = &(*link)->next) {
        if ((*link)->name == name) {
            gl_program *gone = *link;
            *link = gone->next;
            tally_program_release(gone->program);
            free(gone);
            return;
        }
    }
}

static int stage_of(GLint shader_type)
{
    switch (shader_type) {
    case GL_VERTEX_SHADER: return TALLY_STAGE_VERTEX;
    case GL_TESS_CONTROL_SHADER: return TALLY_STAGE_TESS_CONTROL;
    case GL_TESS_EVALUATION_SHADER: return TALLY_STAGE_TESS_EVAL;
    case GL_GEOMETRY_SHADER: return TALLY_STAGE_GEOMETRY;
    case GL_FRAGMENT_SHADER: return TALLY_STAGE_FRAGMENT;
    case GL_COMPUTE_SHADER: return TALLY_STAGE_COMPUTE;
    default: return -1;
    }
}

/* Adds the instruction mix of a shader's GLSL source to a stage's profile. */
static void profile_source(GLuint shader, tally_stage stage, tally_stage_profile *profile)
{
    PFN_glGetShaderiv get_shader = REAL_glGetShaderiv;
    PFN_glGetShaderSource get_source = REAL_glGetShaderSource;
    GLint length = 0;
    get_shader(shader, GL_SHADER_SOURCE_LENGTH, &length);
    if (!get_source || length <= 0)
        return;
    GLchar *source = malloc((size_t)length + 1);
    if (!source)
        return;
    GLsizei got = 0;
    get_source(shader, length + 1, &got, source);
    source[got] = '\0';
    if (!tally_gl_glsl_profile(stage, source, profile))
        tally_log(TALLY_LOG_DEBUG, "GL shim: glslang could not compile shader %u", shader);
    free(source);
}

/* The profile GL can tell about a linked program. */
static bool describe(GLuint name, tally_program_desc *desc)
{
    PFN_glGetProgramiv get_program = REAL_glGetProgramiv;
    PFN_glGetAttachedShaders get_shaders = REAL_glGetAttachedShaders;
    PFN_glGetShaderiv get_shader = REAL_glGetShaderiv;
    if (!get_program || !get_shaders || !get_shader)
        return false;
    GLint linked = 0;
    get_program(name, GL_LINK_STATUS, &linked);
    if (!linked)
        return false;
    GLuint shaders[16];
    GLsizei count = 0;
    get_shaders(name, 16, &count, shaders);
    for (GLsizei i = 0; i < count; i++) {
        GLint type = 0;
        get_shader(shaders[i], GL_SHADER_TYPE, &type);
        int stage = stage_of(type);
        if (stage < 0)
            continue;
        desc->stages[stage].present = true;
        profile_source(shaders[i], (tally_stage)stage, &desc->stages[stage]);
    }
    if (desc->stages[TALLY_STAGE_COMPUTE].present) {
        GLint size[3] = {1, 1, 1};
        get_program(name, GL_COMPUTE_WORK_GROUP_SIZE, size);
        for (int i = 0; i < 3; i++)
            desc->stages[TALLY_STAGE_COMPUTE].local_size[i] = (uint32_t)(size[i] > 0 ? size[i] : 1);
    }
    return true;
}

void tally_gl_after_glLinkProgram(GLuint name)
{
    tally_gl_context *ctx = tally_gl_current();
    if (!ctx || !ctx->engine)
        return;
    forget(ctx, name);
    tally_program_desc desc = {0};
    if (!describe(name, &desc))
        return;
    gl_program *p = calloc(1, sizeof(*p));
    if (!p)
        return;
    if (tally_program_create(tally_context_device(ctx->engine), &desc, &p->program) != TALLY_OK) {
        free(p);
        return;
    }
    p->name = name;
    p->next = ctx->programs;
    ctx->programs = p;
    if (ctx->used_program == name)
        ctx->state_bound = false; /* relinking the program in use changes it */
}

void tally_gl_after_glUseProgram(GLuint name)
{
    tally_gl_context *ctx = tally_gl_current();
    if (!ctx || !ctx->stream)
        return;
    ctx->used_program = name;
    if (!ctx->state_bound)
        return;
    tally_program *program = tally_gl_program_for(ctx, name);
    if (tally_stream_bind_program(ctx->stream, program) == TALLY_OK)
        tally_gl_recorded(ctx);
}

void tally_gl_after_glDeleteProgram(GLuint name)
{
    tally_gl_context *ctx = tally_gl_current();
    /* GL keeps a program in use alive until it is no longer in use. */
    if (ctx && name && name != ctx->used_program)
        forget(ctx, name);
}

tally_program *tally_gl_program_for(tally_gl_context *ctx, GLuint name)
{
    gl_program *p = name ? find(ctx, name) : NULL;
    return p ? p->program : NULL;
}

void tally_gl_programs_destroy_all(tally_gl_context *ctx)
{
    while (ctx->programs)
        forget(ctx, ctx->programs->name);
}
