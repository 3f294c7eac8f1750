/* GLSL to SPIR-V with glslang (locations and bindings auto-mapped, as GL
 * shaders seldom give them), then the SPIR-V's instruction mix. */
#include "glsl_profile.h"
#include <tally/spirv.h>

#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t glslang_once = PTHREAD_ONCE_INIT;

static void start_glslang(void)
{
    glslang_initialize_process();
}

static glslang_stage_t glslang_stage_of(tally_stage stage)
{
    switch (stage) {
    case TALLY_STAGE_VERTEX: return GLSLANG_STAGE_VERTEX;
    case TALLY_STAGE_TESS_CONTROL: return GLSLANG_STAGE_TESSCONTROL;
    case TALLY_STAGE_TESS_EVAL: return GLSLANG_STAGE_TESSEVALUATION;
    case TALLY_STAGE_GEOMETRY: return GLSLANG_STAGE_GEOMETRY;
    case TALLY_STAGE_FRAGMENT: return GLSLANG_STAGE_FRAGMENT;
    default: return GLSLANG_STAGE_COMPUTE;
    }
}

/* One attempt for a client: GL first; ES sources (#version 100/300 es) are
 * only accepted by glslang for the Vulkan client. */
static bool compile(tally_stage stage, const char *source, glslang_client_t client,
                    tally_stage_profile *out)
{
    glslang_input_t input = {
        .language = GLSLANG_SOURCE_GLSL,
        .stage = glslang_stage_of(stage),
        .client = client,
        .client_version =
            client == GLSLANG_CLIENT_OPENGL ? GLSLANG_TARGET_OPENGL_450 : GLSLANG_TARGET_VULKAN_1_0,
        .target_language = GLSLANG_TARGET_SPV,
        .target_language_version = GLSLANG_TARGET_SPV_1_0,
        .code = source,
        .default_version = 110,
        .default_profile = GLSLANG_NO_PROFILE,
        .messages = GLSLANG_MSG_DEFAULT_BIT | GLSLANG_MSG_RELAXED_ERRORS_BIT,
        .resource = glslang_default_resource(),
    };
    glslang_shader_t *shader = glslang_shader_create(&input);
    if (!shader)
        return false;
    glslang_shader_set_options(shader, GLSLANG_SHADER_AUTO_MAP_BINDINGS |
                                           GLSLANG_SHADER_AUTO_MAP_LOCATIONS);
    bool ok = false;
    glslang_program_t *program = NULL;
    if (glslang_shader_preprocess(shader, &input) && glslang_shader_parse(shader, &input) &&
        (program = glslang_program_create())) {
        glslang_program_add_shader(program, shader);
        if (glslang_program_link(program, GLSLANG_MSG_SPV_RULES_BIT) &&
            glslang_program_map_io(program)) {
            glslang_program_SPIRV_generate(program, input.stage);
            tally_stage_profile counted = *out;
            ok = tally_spirv_stage_profile(glslang_program_SPIRV_get_ptr(program),
                                           glslang_program_SPIRV_get_size(program), "main", NULL,
                                           &counted);
            if (ok)
                *out = counted;
        }
        glslang_program_delete(program);
    }
    glslang_shader_delete(shader);
    return ok;
}

/* The version a source declares (110 if none), and whether it is ES. */
static int version_of(const char *source, bool *es)
{
    const char *at = strstr(source, "#version");
    *es = false;
    if (!at)
        return 110;
    int version = atoi(at + 8);
    const char *end = strchr(at, '\n');
    const char *profile = strstr(at, " es");
    *es = profile && (!end || profile < end);
    return version;
}

/*
 * glslang makes SPIR-V for GL from GLSL 330 and later only. Older sources
 * (GLSL 1.x, ES 1.00) are rewritten as GLSL 450: attribute/varying become
 * in/out, texture2D/textureCube become texture, gl_FragColor an output. The
 * instruction mix is the same; a source using other legacy built-ins simply
 * fails to compile and keeps the profile's defaults.
 */
static char *modernized(tally_stage stage, const char *source)
{
    const char *header_format =
        "#version 450\n#define attribute in\n#define varying %s\n#define texture2D texture\n"
        "#define textureCube texture\n#define texture2DLod textureLod\n"
        "#define gl_FragColor tally_frag_color\n";
    const char *output = "layout(location = 0) out vec4 tally_frag_color;\n";
    size_t size = strlen(source) + strlen(header_format) + strlen(output) + 16;
    char *text = malloc(size);
    if (!text)
        return NULL;
    int used = snprintf(text, size, header_format, stage == TALLY_STAGE_FRAGMENT ? "in" : "out");
    /* The source after its #version line; #extension lines must precede code. */
    const char *body = source;
    const char *version = strstr(source, "#version");
    if (version) {
        const char *end = strchr(version, '\n');
        body = end ? end + 1 : version + strlen(version);
    }
    const char *code = body;
    for (const char *line = body; *line;) {
        const char *next = strchr(line, '\n');
        const char *first = line;
        while (*first == ' ' || *first == '\t')
            first++;
        if (strncmp(first, "#extension", 10) == 0)
            code = next ? next + 1 : line + strlen(line);
        line = next ? next + 1 : line + strlen(line);
    }
    used += snprintf(text + used, size - (size_t)used, "%.*s", (int)(code - body), body);
    if (stage == TALLY_STAGE_FRAGMENT && strstr(code, "gl_FragColor"))
        used += snprintf(text + used, size - (size_t)used, "%s", output);
    snprintf(text + used, size - (size_t)used, "%s", code);
    return text;
}

void tally_gl_glsl_initialize(void)
{
    pthread_once(&glslang_once, start_glslang);
}

bool tally_gl_glsl_profile(tally_stage stage, const char *source, tally_stage_profile *out)
{
    tally_gl_glsl_initialize();
    bool es = false;
    int version = version_of(source, &es);
    if ((es && version >= 300) || (!es && version >= 330))
        return compile(stage, source, GLSLANG_CLIENT_OPENGL, out) ||
               compile(stage, source, GLSLANG_CLIENT_VULKAN, out);
    char *modern = modernized(stage, source);
    bool ok = modern && compile(stage, modern, GLSLANG_CLIENT_OPENGL, out);
    free(modern);
    return ok;
}
