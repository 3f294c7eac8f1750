/*
 * The static profile of a shader stage, read from its SPIR-V: what every
 * front door that sees shaders (Vulkan pipelines, GL programs compiled with
 * glslang) gives the engine, so the same shader counts the same through
 * every API.
 */
#ifndef TALLY_SPIRV_H
#define TALLY_SPIRV_H

#include "tally/device.h"
#include "tally/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One specialization constant's value: `size` bytes at `offset` of the data
 * (Vulkan's VkSpecializationMapEntry). */
typedef struct tally_spirv_spec_entry {
    uint32_t constant_id;
    uint32_t offset;
    size_t size;
} tally_spirv_spec_entry;

typedef struct tally_spirv_specialization {
    uint32_t entry_count;
    const tally_spirv_spec_entry *entries;
    size_t data_size;
    const void *data;
} tally_spirv_specialization;

/*
 * Fills `profile` for the entry point `entry_point` of the module: the
 * instruction mix, by opcode class, over every function of the module (one
 * invocation's straight-line count); the execution modes: compute local size
 * (LocalSize, LocalSizeId or the WorkgroupSize built-in, specialization
 * applied), tessellation output vertices, geometry invocations; and whether a
 * fragment shader may discard. `specialization` may be NULL. Returns false,
 * leaving `profile` as it was, if the words are not a SPIR-V module with
 * that entry point.
 */
TALLY_API bool tally_spirv_stage_profile(const uint32_t *words, size_t word_count,
                                         const char *entry_point,
                                         const tally_spirv_specialization *specialization,
                                         tally_stage_profile *profile);

#ifdef __cplusplus
}
#endif

#endif
