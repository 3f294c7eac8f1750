/* The static profile of one shader stage, read from its SPIR-V. */
#ifndef TALLY_LAYER_SPIRV_PROFILE_H
#define TALLY_LAYER_SPIRV_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <tally/device.h>
#include <vulkan/vulkan.h>

/*
 * Fills the instruction mix (by opcode class, over every function of the
 * module) and the entry point's execution modes: compute local size (from
 * LocalSize, LocalSizeId or the WorkgroupSize built-in, specialization
 * constants applied), tessellation output vertices, geometry invocations,
 * fragment discard. Returns false if the words are not a SPIR-V module with
 * that entry point.
 */
bool layer_spirv_profile(const uint32_t *words, size_t word_count, const char *entry_point,
                         const VkSpecializationInfo *specialization, tally_stage_profile *profile);

#endif
