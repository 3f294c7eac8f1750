/* Program objects: each linked program's static profile (its stages, their
 * instruction mix from the GLSL compiled with glslang, the compute local size
 * GL reports) as an engine program, bound for the draws and dispatches made
 * while it is in use, and named in reports by its KHR_debug or
 * EXT_debug_label label, else "GL program N". */
#include "gl_shim.h"
#include "glsl_worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gl_program {
    GLuint name;
    tally_program *program; /* NULL: not linked (yet), only labelled */
    char *label;            /* the program's label for it; NULL: none */
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
            if (gone->program)
                tally_program_release(gone->program);
            free(gone->label);
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

/* A shader's GLSL source, malloc'd; NULL if GL has none. */
static char *source_of(GLuint shader)
{
    PFN_glGetShaderiv get_shader = REAL_glGetShaderiv;
    PFN_glGetShaderSource get_source = REAL_glGetShaderSource;
    GLint length = 0;
    get_shader(shader, GL_SHADER_SOURCE_LENGTH, &length);
    if (!get_source || length <= 0)
        return NULL;
    GLchar *source = malloc((size_t)length + 1);
    if (!source)
        return NULL;
    GLsizei got = 0;
    get_source(shader, length + 1, &got, source);
    source[got] = '\0';
    return source;
}

/* What GL can tell about a linked program: its stages, their sources (the
 * worker compiles them) and the compute local size. */
static bool describe(GLuint name, tally_gl_glsl_job *job)
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
    GLuint shaders[TALLY_GL_MAX_SHADERS];
    GLsizei count = 0;
    get_shaders(name, TALLY_GL_MAX_SHADERS, &count, shaders);
    tally_program_desc *desc = &job->desc;
    for (GLsizei i = 0; i < count; i++) {
        GLint type = 0;
        get_shader(shaders[i], GL_SHADER_TYPE, &type);
        int stage = stage_of(type);
        if (stage < 0)
            continue;
        desc->stages[stage].present = true;
        char *source = source_of(shaders[i]);
        if (source) /* the same sources hash the same in every run */
            desc->shader_hash = tally_hash_bytes(source, strlen(source), desc->shader_hash + stage);
        if (source) {
            job->stages[job->shader_count] = (tally_stage)stage;
            job->sources[job->shader_count++] = source;
        }
    }
    if (desc->stages[TALLY_STAGE_COMPUTE].present) {
        GLint size[3] = {1, 1, 1};
        get_program(name, GL_COMPUTE_WORK_GROUP_SIZE, size);
        for (int i = 0; i < 3; i++)
            desc->stages[TALLY_STAGE_COMPUTE].local_size[i] = (uint32_t)(size[i] > 0 ? size[i] : 1);
    }
    return true;
}

static void job_free(tally_gl_glsl_job *job)
{
    for (uint32_t i = 0; i < job->shader_count; i++)
        free(job->sources[i]);
    free(job);
}

/* The program's engine program, pending until the worker has its profile. */
static tally_program *profile_program(tally_gl_context *ctx, GLuint name)
{
    tally_gl_glsl_job *job = calloc(1, sizeof(*job));
    if (!job)
        return NULL;
    tally_program *program = NULL;
    char created_name[32];
    snprintf(created_name, sizeof created_name, "GL program %u", name);
    if (!describe(name, job) || tally_program_create_pending(tally_context_device(ctx->engine),
                                                             created_name, &program) != TALLY_OK) {
        job_free(job);
        return NULL;
    }
    tally_program_ref(program);
    job->program = program;
    tally_gl_glsl_submit(job);
    return program;
}

/* The context's record of a program name, made if there is none. */
static gl_program *record_of(tally_gl_context *ctx, GLuint name)
{
    gl_program *p = find(ctx, name);
    if (p || !(p = calloc(1, sizeof(*p))))
        return p;
    p->name = name;
    p->next = ctx->programs;
    ctx->programs = p;
    return p;
}

/* The label names the program's rows from its link on, or at once if it
 * is linked (a label given before linking is kept for the link). */
static void relabel(GLuint name, GLsizei length, const GLchar *label)
{
    enum { LABEL_MAX = 255 };
    tally_gl_context *ctx = tally_gl_current();
    gl_program *p = ctx && ctx->engine && name ? record_of(ctx, name) : NULL;
    if (!p)
        return;
    free(p->label);
    p->label = NULL;
    if (label) {
        size_t n = length < 0 ? strnlen(label, LABEL_MAX) : (size_t)length;
        n = n < LABEL_MAX ? n : LABEL_MAX;
        if ((p->label = malloc(n + 1))) {
            memcpy(p->label, label, n);
            p->label[n] = '\0';
        }
    }
    if (p->program)
        tally_program_set_label(p->program, p->label);
}

void tally_gl_after_glObjectLabel(GLenum identifier, GLuint name, GLsizei length,
                                  const GLchar *label)
{
    if (identifier == GL_PROGRAM)
        relabel(name, length, label);
}

/* EXT_debug_label: a length of 0 means a NUL-terminated label. */
void tally_gl_after_glLabelObjectEXT(GLenum type, GLuint object, GLsizei length,
                                     const GLchar *label)
{
    if (type == GL_PROGRAM_OBJECT_EXT)
        relabel(object, length ? length : -1, label);
}

void tally_gl_after_glLinkProgram(GLuint name)
{
    tally_gl_context *ctx = tally_gl_current();
    if (!ctx || !ctx->engine)
        return;
    gl_program *p = record_of(ctx, name);
    if (!p)
        return;
    if (p->program) /* relinked: a new profile */
        tally_program_release(p->program);
    if ((p->program = profile_program(ctx, name)) && p->label)
        tally_program_set_label(p->program, p->label);
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
