/* A GL shader stage's static profile from its GLSL source, with glslang. */
#ifndef TALLY_GL_GLSL_PROFILE_H
#define TALLY_GL_GLSL_PROFILE_H

#include "tally/device.h"

#include <stdbool.h>

/* Initializes glslang for the process, once. */
__attribute__((visibility("hidden"))) void tally_gl_glsl_initialize(void);

/* Adds the stage's instruction mix (and discards) to out; false if glslang
 * could not compile the source to SPIR-V (out is then unchanged). */
__attribute__((visibility("hidden"))) bool
tally_gl_glsl_profile(tally_stage stage, const char *source, tally_stage_profile *out);

#endif
