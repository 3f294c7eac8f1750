/* A shader stage's static profile from its SPIR-V. */
#ifndef TALLY_GL_SPIRV_MIX_H
#define TALLY_GL_SPIRV_MIX_H

#include "tally/device.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Adds the instruction counts of the module's functions to out->mix and sets
 * out->discards if the module can discard. False for a malformed module. */
__attribute__((visibility("hidden"))) bool tally_spirv_mix(const uint32_t *words, size_t count,
                                                           tally_stage_profile *out);

#endif
