/* Working out programs' GLSL profiles away from the program's own thread. */
#ifndef TALLY_GL_GLSL_WORKER_H
#define TALLY_GL_GLSL_WORKER_H

#include "tally/device.h"

enum { TALLY_GL_MAX_SHADERS = 16 };

/* What a linked program's profile is made of: its shaders' GLSL, read on
 * the GL thread, and what GL reported (stages present, local size). */
typedef struct tally_gl_glsl_job {
    struct tally_gl_glsl_job *next;
    tally_program *program; /* pending; the job holds a reference */
    tally_program_desc desc;
    uint32_t shader_count;
    tally_stage stages[TALLY_GL_MAX_SHADERS];
    char *sources[TALLY_GL_MAX_SHADERS]; /* malloc'd */
} tally_gl_glsl_job;

/* Takes the job: its profile is compiled, the program completed and the job
 * freed, on the worker thread (or here, if no worker can run). */
__attribute__((visibility("hidden"))) void tally_gl_glsl_submit(tally_gl_glsl_job *job);

#endif
