/*
 * The driver backend's queries in GL: around each draw and dispatch the shim
 * writes a GL_TIMESTAMP before and after (ARB_timer_query, GL 3.3) and
 * keeps one pipeline-statistics query per statistic active
 * (ARB_pipeline_statistics_query, GL 4.6), in query objects of its own
 * taken from per-target pools. The program's own queries come first: GL
 * allows one active query per target, so a statistic whose target the
 * program has a query active on is left unmeasured while it is, and said
 * once. Timestamps never collide (glQueryCounter is not a begin/end query,
 * and GL_TIME_ELAPSED is a target of its own).
 *
 * Every GL call here is one that cannot raise an error in the state the
 * shim calls it in (a supported target, a name of the shim's, no query of
 * the target active, outside glBegin/glEnd), so the program's glGetError
 * sees only its own errors.
 */
#include "driver_queries.h"

#include <stdlib.h>
#include <string.h>

/* The query target of each statistic, in tally_measure_bits order. */
static const GLenum statistic_targets[TALLY_STATISTIC_COUNT] = {
    GL_VERTICES_SUBMITTED_ARB,
    GL_PRIMITIVES_SUBMITTED_ARB,
    GL_VERTEX_SHADER_INVOCATIONS_ARB,
    GL_GEOMETRY_SHADER_INVOCATIONS,
    GL_GEOMETRY_SHADER_PRIMITIVES_EMITTED_ARB,
    GL_CLIPPING_INPUT_PRIMITIVES_ARB,
    GL_CLIPPING_OUTPUT_PRIMITIVES_ARB,
    GL_FRAGMENT_SHADER_INVOCATIONS_ARB,
    GL_TESS_CONTROL_SHADER_PATCHES_ARB,
    GL_TESS_EVALUATION_SHADER_INVOCATIONS_ARB,
    GL_COMPUTE_SHADER_INVOCATIONS_ARB,
};
static const char *const statistic_target_names[TALLY_STATISTIC_COUNT] = {
    "GL_VERTICES_SUBMITTED_ARB",
    "GL_PRIMITIVES_SUBMITTED_ARB",
    "GL_VERTEX_SHADER_INVOCATIONS_ARB",
    "GL_GEOMETRY_SHADER_INVOCATIONS",
    "GL_GEOMETRY_SHADER_PRIMITIVES_EMITTED_ARB",
    "GL_CLIPPING_INPUT_PRIMITIVES_ARB",
    "GL_CLIPPING_OUTPUT_PRIMITIVES_ARB",
    "GL_FRAGMENT_SHADER_INVOCATIONS_ARB",
    "GL_TESS_CONTROL_SHADER_PATCHES_ARB",
    "GL_TESS_EVALUATION_SHADER_INVOCATIONS_ARB",
    "GL_COMPUTE_SHADER_INVOCATIONS_ARB",
};

#define GRAPHICS_STATISTICS (TALLY_MEASURE_STATISTICS & ~TALLY_MEASURE_CS_INVOCATIONS)
#define TIMESTAMP_POOL TALLY_STATISTIC_COUNT
/* Names are made this many at a time when a pool runs dry. */
enum { POOL_BLOCK = 64 };

/* ---- What a context can measure ---------------------------------------- */

typedef struct gl_features {
    int version; /* major * 10 + minor; 0: GLES or unknown */
    bool timer_query, pipeline_statistics, query_buffer, geometry, tessellation, compute;
    bool
        disjoint; /* OpenGL ES's GL_EXT_disjoint_timer_query: timestamps, and GL_GPU_DISJOINT_EXT */
} gl_features;

static void note_extension(gl_features *f, const char *name)
{
    if (!name)
        return;
    f->timer_query |= strcmp(name, "GL_ARB_timer_query") == 0;
    f->pipeline_statistics |= strcmp(name, "GL_ARB_pipeline_statistics_query") == 0;
    f->query_buffer |= strcmp(name, "GL_ARB_query_buffer_object") == 0;
    f->geometry |= strcmp(name, "GL_ARB_geometry_shader4") == 0;
    f->tessellation |= strcmp(name, "GL_ARB_tessellation_shader") == 0;
    f->compute |= strcmp(name, "GL_ARB_compute_shader") == 0;
    f->disjoint |= strcmp(name, "GL_EXT_disjoint_timer_query") == 0;
}

/* The driver's own extension list: the REAL_ entry points bypass the
 * shim's additions. glGetString(GL_EXTENSIONS) is an error in a core
 * context, so GL 3.0 and later are asked one name at a time. */
static void learn_extensions(gl_features *f, bool gles)
{
    if (f->version >= 30 && !gles) {
        GLint count = 0;
        REAL_glGetIntegerv(GL_NUM_EXTENSIONS, &count);
        PFN_glGetStringi get = REAL_glGetStringi;
        for (GLint i = 0; get && i < count; i++)
            note_extension(f, (const char *)get(GL_EXTENSIONS, (GLuint)i));
        return;
    }
    /* Every OpenGL ES version answers the whole list (its GL_EXTENSIONS
     * string is not deprecated). */
    const char *list = (const char *)REAL_glGetString(GL_EXTENSIONS);
    static const char *const names[] = {
        "GL_ARB_timer_query",          "GL_ARB_pipeline_statistics_query",
        "GL_ARB_query_buffer_object",  "GL_ARB_geometry_shader4",
        "GL_ARB_tessellation_shader",  "GL_ARB_compute_shader",
        "GL_EXT_disjoint_timer_query",
    };
    for (size_t i = 0; list && i < sizeof(names) / sizeof(names[0]); i++)
        if (tally_gl_has_word(list, names[i]))
            note_extension(f, names[i]);
}

static gl_features features_of_current(void)
{
    gl_features f = {0};
    PFN_glGetString get_string = REAL_glGetString;
    const char *version = get_string ? (const char *)get_string(GL_VERSION) : NULL;
    if (!version)
        return f;
    /* OpenGL ES has no pipeline-statistics query; GL_EXT_disjoint_timer_query
     * gives it glQueryCounterEXT(GL_TIMESTAMP_EXT), the same entry point and
     * token as desktop GL's glQueryCounter(GL_TIMESTAMP). */
    if (strncmp(version, "OpenGL ES", 9) == 0) {
        learn_extensions(&f, true);
        f.timer_query = f.disjoint;
        return f;
    }
    if (version[0] < '1' || version[0] > '9')
        return f;
    const char *dot = strchr(version, '.');
    f.version = atoi(version) * 10 + (dot ? atoi(dot + 1) % 10 : 0);
    f.timer_query = f.version >= 33;
    f.pipeline_statistics = f.version >= 46;
    f.query_buffer = f.version >= 44;
    f.geometry = f.version >= 32;
    f.tessellation = f.version >= 40;
    f.compute = f.version >= 43;
    if (!f.timer_query || !f.pipeline_statistics || !f.query_buffer || !f.tessellation ||
        !f.compute)
        learn_extensions(&f, false);
    return f;
}

uint32_t tally_gl_context_measurable(bool *query_buffer, bool *disjoint)
{
    gl_features f = features_of_current();
    if (query_buffer)
        *query_buffer = f.query_buffer;
    if (disjoint)
        *disjoint = f.disjoint;
    if (!REAL_glGenQueries || !REAL_glGetQueryObjectui64v)
        return 0;
    uint32_t bits = 0;
    if (f.timer_query && REAL_glQueryCounter)
        bits |= TALLY_MEASURE_TIME;
    if (f.pipeline_statistics && REAL_glBeginQuery && REAL_glEndQuery) {
        /* The statistics of a stage exist where the stage does (the
         * extension's rule for its targets). */
        bits |= TALLY_MEASURE_IA_VERTICES | TALLY_MEASURE_IA_PRIMITIVES |
                TALLY_MEASURE_VS_INVOCATIONS | TALLY_MEASURE_CLIPPER_INVOCATIONS |
                TALLY_MEASURE_CLIPPER_PRIMITIVES | TALLY_MEASURE_FS_INVOCATIONS;
        if (f.geometry)
            bits |= TALLY_MEASURE_GS_INVOCATIONS | TALLY_MEASURE_GS_PRIMITIVES;
        if (f.tessellation)
            bits |= TALLY_MEASURE_TESS_CONTROL_PATCHES | TALLY_MEASURE_TESS_EVAL_INVOCATIONS;
        if (f.compute)
            bits |= TALLY_MEASURE_CS_INVOCATIONS;
    }
    return bits;
}

/* ---- A context's state -------------------------------------------------- */

static void note_app_query(gl_measuring *m, int statistic);

gl_measuring *tally_gl_measuring_set_up(tally_gl_context *ctx)
{
    ctx->measuring_known = true;
    if (!ctx->engine)
        return NULL;
    tally_device_info info;
    tally_device_get_info(tally_context_device(ctx->engine), &info);
    uint32_t wanted = info.measures & TALLY_GL_QUERY_MEASURES;
    if (!wanted)
        return NULL; /* simgpu: nothing is measured, nothing is added */
    bool query_buffer = false, disjoint = false;
    uint32_t measures = tally_gl_context_measurable(&query_buffer, &disjoint) & wanted;
    if (!measures) {
        tally_log(TALLY_LOG_INFO, "GL: this context has no timer or pipeline-statistics queries; "
                                  "its draws are counted, not measured");
        return NULL;
    }
    gl_measuring *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->measures = measures;
    /* GL's default is a measurement per submission (frame): its queries
     * cost per statistic, and per draw they serialize the GPU; per draw on
     * demand (docs/driver.md, "Granularity in GL"). */
    m->granularity = info.granularity_given ? info.granularity : TALLY_GRANULARITY_COMMAND_BUFFER;
    m->has_query_buffer = query_buffer;
    m->has_disjoint = disjoint && (measures & TALLY_MEASURE_TIME);
    tally_gl_learn_version(ctx);
    tally_gl_calibration_open(m, ctx, info.calibrate);
    ctx->measuring = m;
    /* Queries the program began before its first draw or query the shim saw. */
    for (int i = 0; i < TALLY_STATISTIC_COUNT; i++)
        if (measures & (1u << i))
            note_app_query(m, i);
    return m;
}

static GLuint take_query(gl_measuring *m, int pool)
{
    if (m->pool[pool].count == 0) {
        if (m->pool[pool].capacity < POOL_BLOCK) {
            GLuint *names = realloc(m->pool[pool].names, POOL_BLOCK * sizeof(*names));
            if (!names)
                return 0;
            m->pool[pool].names = names;
            m->pool[pool].capacity = POOL_BLOCK;
        }
        REAL_glGenQueries(POOL_BLOCK, m->pool[pool].names);
        m->pool[pool].count = POOL_BLOCK;
    }
    return m->pool[pool].names[--m->pool[pool].count];
}

static void give_query(gl_measuring *m, int pool, GLuint name)
{
    if (m->pool[pool].count == m->pool[pool].capacity) {
        uint32_t capacity = m->pool[pool].capacity ? 2 * m->pool[pool].capacity : POOL_BLOCK;
        GLuint *names = realloc(m->pool[pool].names, capacity * sizeof(*names));
        if (!names)
            return; /* the name stays with the context, unused, until it goes */
        m->pool[pool].names = names;
        m->pool[pool].capacity = capacity;
    }
    m->pool[pool].names[m->pool[pool].count++] = name;
}

void tally_gl_release_queries(gl_measuring *m, const gl_measured_command *command)
{
    for (int slot = 0; slot < GL_QUERIES_PER_COMMAND; slot++) {
        GLuint name = command->queries[slot];
        if (name)
            give_query(m,
                       slot < GL_QUERY_FIRST_STATISTIC ? TIMESTAMP_POOL
                                                       : slot - GL_QUERY_FIRST_STATISTIC,
                       name);
    }
}

static gl_measured_command *append_command(gl_command_list *list)
{
    if (list->count == list->capacity) {
        uint32_t capacity = list->capacity ? 2 * list->capacity : 64;
        gl_measured_command *grown = realloc(list->commands, capacity * sizeof(*grown));
        if (!grown)
            return NULL;
        list->commands = grown;
        list->capacity = capacity;
    }
    gl_measured_command *c = &list->commands[list->count++];
    memset(c, 0, sizeof(*c));
    return c;
}

/* ---- Around one command ------------------------------------------------- */

static void end_queries(gl_measuring *m)
{
    gl_measured_command *c = &m->recording.commands[m->recording.count - 1];
    for (int i = TALLY_STATISTIC_COUNT - 1; i >= 0; i--)
        if (c->queries[GL_QUERY_FIRST_STATISTIC + i])
            REAL_glEndQuery(statistic_targets[i]);
    if (c->queries[GL_QUERY_END_TIME])
        REAL_glQueryCounter(c->queries[GL_QUERY_END_TIME], GL_TIMESTAMP);
    m->open = false;
    m->group = false;
}

/* What a measurement begun now brackets: of what the context measures, what
 * the device's listeners and the context's open scopes read, less what the
 * program's own queries hold. A group may hold draws and dispatches. */
static uint32_t bits_for(const tally_gl_context *ctx, const gl_measuring *m, int kind)
{
    uint32_t statistics = m->granularity != TALLY_GRANULARITY_COMMAND ? TALLY_MEASURE_STATISTICS
                          : kind == TALLY_GL_MEASURE_DISPATCH         ? TALLY_MEASURE_CS_INVOCATIONS
                                                                      : GRAPHICS_STATISTICS;
    uint32_t asked =
        tally_device_measures_asked(tally_context_device(ctx->engine)) | ctx->scope_measures;
    return m->measures & asked & (statistics | TALLY_MEASURE_TIME) & ~m->app_active;
}

/* Begins the queries of `bits` for a new measured command; false if none began. */
static bool begin_queries(gl_measuring *m, uint32_t bits)
{
    gl_measured_command *c = append_command(&m->recording);
    if (!c)
        return false;
    if (bits & TALLY_MEASURE_TIME) {
        c->queries[GL_QUERY_BEGIN_TIME] = take_query(m, TIMESTAMP_POOL);
        c->queries[GL_QUERY_END_TIME] = take_query(m, TIMESTAMP_POOL);
        if (!c->queries[GL_QUERY_BEGIN_TIME] || !c->queries[GL_QUERY_END_TIME])
            bits &= ~TALLY_MEASURE_TIME;
        else
            REAL_glQueryCounter(c->queries[GL_QUERY_BEGIN_TIME], GL_TIMESTAMP);
    }
    for (int i = 0; i < TALLY_STATISTIC_COUNT; i++) {
        if (!(bits & (1u << i)))
            continue;
        GLuint name = take_query(m, i);
        if (!name) {
            bits &= ~(1u << i);
            continue;
        }
        c->queries[GL_QUERY_FIRST_STATISTIC + i] = name;
        REAL_glBeginQuery(statistic_targets[i], name);
    }
    c->valid = bits;
    m->open = true;
    return true;
}

/* Returns true when the command's own queries began (command granularity):
 * the wrapper ends them after the real call. A group's queries run on. */
bool tally_gl_measure_begin(int kind)
{
    tally_gl_context *ctx = tally_gl_current();
    if (!ctx || !ctx->stream || ctx->in_begin)
        return false;
    gl_measuring *m = tally_gl_measuring(ctx);
    if (!m || m->group)
        return false; /* an open group measures this command too */
    m->key_pending = false;
    if (m->open)
        end_queries(m); /* a glBegin the driver refused: no glEnd came */
    /* Nobody counts (no report, trace, scope or sampler): nothing to measure. */
    if (!tally_stream_observed(ctx->stream))
        return false;
    uint32_t bits = bits_for(ctx, m, kind);
    if (!bits || !begin_queries(m, bits))
        return false;
    if (m->granularity == TALLY_GRANULARITY_COMMAND)
        return true;
    /* The group's first recorded command carries it (engine/measured.c). */
    m->group = true;
    m->key_pending = true;
    m->pending_group = true;
    m->pending_key = m->recording.count - 1;
    return false;
}

void tally_gl_measure_split(tally_gl_context *ctx)
{
    gl_measuring *m = ctx->measuring;
    /* GL calls go to the context current on this thread, and none is
     * allowed between glBegin and glEnd. */
    if (!m || !m->group || ctx != tally_gl_current() || ctx->in_begin)
        return;
    end_queries(m);
    ctx->lane = NULL; /* the next draw begins the next group */
    if (m->key_pending)
        m->key_pending = false; /* no command carried it: read, unused */
    else if (ctx->stream)
        tally_stream_measure_end(ctx->stream);
}

void tally_gl_measure_end(void)
{
    tally_gl_context *ctx = tally_gl_current();
    gl_measuring *m = ctx ? ctx->measuring : NULL;
    if (!m || !m->open || m->group)
        return; /* after glEnd, GL is out of glBegin even before the shim knows */
    end_queries(m);
    m->key_pending = true;
    m->pending_group = false;
    m->pending_key = m->recording.count - 1;
}

/* The command made no draw or dispatch (the driver refused it): its
 * queries are read with the others and go unused. */
void tally_gl_measure_drop(void)
{
    tally_gl_context *ctx = tally_gl_current();
    if (ctx && ctx->measuring && !ctx->measuring->group)
        ctx->measuring->key_pending = false;
}

void tally_gl_measure_pending(tally_gl_context *ctx)
{
    gl_measuring *m = ctx->measuring;
    if (m->key_pending) {
        if (m->pending_group) {
            tally_stream_measure_group(ctx->stream, m->pending_key);
            /* Until the group ends, a plain draw has nothing to measure of
             * its own: it may take the lane (draw_lane.h), as on simgpu,
             * once a command carries the group's key. */
            ctx->lane = tally_stream_draw_lane(ctx->stream);
        } else {
            tally_stream_measure(ctx->stream, m->pending_key);
        }
        m->key_pending = false;
    }
}

/* ---- The program's own queries ------------------------------------------ */

static int statistic_of(GLenum target)
{
    for (int i = 0; i < TALLY_STATISTIC_COUNT; i++)
        if (statistic_targets[i] == target)
            return i;
    return -1;
}

/* Learns from GL whether the program has a query of the statistic's target
 * active (its begin or end may have failed), and says the first time. */
static void note_app_query(gl_measuring *m, int statistic)
{
    uint32_t bit = 1u << statistic;
    GLint name = 0;
    REAL_glGetQueryiv(statistic_targets[statistic], GL_CURRENT_QUERY, &name);
    if (!name) {
        m->app_active &= ~bit;
        return;
    }
    m->app_active |= bit;
    if (!(m->said_active & bit)) {
        m->said_active |= bit;
        tally_log(TALLY_LOG_WARN,
                  "GL: the program has a %s query of its own active; GL allows one per target, "
                  "so tally leaves that statistic unmeasured (0) for the draws it spans",
                  statistic_target_names[statistic]);
    }
}

static void app_query_changed(GLenum target)
{
    tally_gl_context *ctx = tally_gl_current();
    int statistic = statistic_of(target);
    if (!ctx || statistic < 0 || ctx->in_begin)
        return;
    gl_measuring *m = tally_gl_measuring(ctx);
    if (m && (m->measures & (1u << statistic)))
        note_app_query(m, statistic);
}

/* Before the program begins or ends a query of a statistic's target: a
 * group with a query of that target active ends first. GL allows one
 * active query per target: the program's begin would fail, and its end
 * (of a query it never began, an error it must see) would end the
 * shim's. */
static void before_app_query(GLenum target)
{
    tally_gl_context *ctx = tally_gl_current();
    if (target == GL_TIME_ELAPSED && ctx) {
        tally_gl_measure_split(ctx); /* a span of the program's own: see glQueryCounter */
        return;
    }
    int statistic = statistic_of(target);
    if (!ctx || statistic < 0 || !ctx->measuring || !ctx->measuring->group)
        return;
    const gl_measuring *m = ctx->measuring;
    if (m->recording.commands[m->recording.count - 1].queries[GL_QUERY_FIRST_STATISTIC + statistic])
        tally_gl_measure_split(ctx);
}

/* Before the program writes a timestamp of its own: an open group ends, so
 * that a span the program measures with its own timestamps (or a
 * GL_TIME_ELAPSED query) holds whole groups, whose GpuTime then sums to no
 * more than it, as the Vulkan layer ends its measurement before
 * vkCmdWriteTimestamp. */
void tally_gl_before_glQueryCounter(GLuint id, GLenum target)
{
    (void)id;
    (void)target;
    tally_gl_context *ctx = tally_gl_current();
    if (ctx)
        tally_gl_measure_split(ctx);
}

void tally_gl_after_glQueryCounter(GLuint id, GLenum target)
{
    (void)id; /* the next command begins the next group */
    (void)target;
}

void tally_gl_before_glBeginQuery(GLenum target, GLuint id)
{
    (void)id;
    before_app_query(target);
}

void tally_gl_before_glBeginQueryIndexed(GLenum target, GLuint index, GLuint id)
{
    (void)id;
    if (index == 0)
        before_app_query(target);
}

/* The program asks which query of a target is active: a group's query of
 * the shim's is none of the program's (the program has none of that
 * target active, or the group would not hold one), so it answers 0, as
 * without the shim. */
static void hide_group_query(GLenum target, GLenum pname, GLint *params)
{
    tally_gl_context *ctx = tally_gl_current();
    int statistic = statistic_of(target);
    if (!ctx || !params || pname != GL_CURRENT_QUERY || statistic < 0 || !ctx->measuring ||
        !ctx->measuring->group)
        return;
    const gl_measuring *m = ctx->measuring;
    GLuint ours =
        m->recording.commands[m->recording.count - 1].queries[GL_QUERY_FIRST_STATISTIC + statistic];
    if (ours && (GLuint)*params == ours)
        *params = 0;
}

void tally_gl_after_glGetQueryiv(GLenum target, GLenum pname, GLint *params)
{
    hide_group_query(target, pname, params);
}

void tally_gl_after_glGetQueryIndexediv(GLenum target, GLuint index, GLenum pname, GLint *params)
{
    if (index == 0)
        hide_group_query(target, pname, params);
}

void tally_gl_before_glEndQuery(GLenum target)
{
    before_app_query(target);
}

void tally_gl_before_glEndQueryIndexed(GLenum target, GLuint index)
{
    if (index == 0)
        before_app_query(target);
}

void tally_gl_after_glBeginQuery(GLenum target, GLuint id)
{
    (void)id;
    app_query_changed(target);
}

void tally_gl_after_glEndQuery(GLenum target)
{
    app_query_changed(target);
}

/* Statistics targets have index 0 only. */
void tally_gl_after_glBeginQueryIndexed(GLenum target, GLuint index, GLuint id)
{
    (void)id;
    if (index == 0)
        app_query_changed(target);
}

void tally_gl_after_glEndQueryIndexed(GLenum target, GLuint index)
{
    if (index == 0)
        app_query_changed(target);
}

/* At render-pass granularity a debug group's push and pop end the group
 * measured so far: each range of a debug group is measured apart. */
void tally_gl_measure_debug_group(tally_gl_context *ctx)
{
    if (ctx->measuring && ctx->measuring->granularity == TALLY_GRANULARITY_RENDER_PASS)
        tally_gl_measure_split(ctx);
}
