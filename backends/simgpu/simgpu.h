/* simgpu's internal interface between its backend entry, profile and model. */
#ifndef TALLY_SIMGPU_H
#define TALLY_SIMGPU_H

#include "backend.h"
#include "simgpu_catalogue.h"

/* A divisor of the model, fixed with the profile: most are powers of two,
 * and a shift is much cheaper than a 64-bit division (which a draw would
 * otherwise pay about fifteen times). The quotients are the same. */
struct simgpu_divisor {
    uint64_t value;
    int shift; /* log2(value) when value is a power of two, else -1 */
};

/* The profile's rates and sizes that the model divides by. */
struct simgpu_divisors {
    struct simgpu_divisor wave, line, shader_rate, texel_rate, l2_requests, dram_bytes, raster, rop,
        ia_vertices, setup_primitives;
};

/*
 * The last draw's counts and what they were computed from: a draw that
 * repeats it (the same mesh drawn again with the same state, as frames do)
 * takes its counts without running the model. The key is everything the
 * model reads of a draw without index data: its counts, topology and flags,
 * the render state and the bound program, by its identity (backend.h: equal
 * ids, equal descriptions; a program freed and another made at the same
 * address have different ids). When many draws in a row differ, the memo
 * rests for a while, so that a stream of distinct draws pays little for it.
 */
struct simgpu_draw_memo {
    bool valid;
    uint64_t program_id;
    tally_render_state render;
    uint32_t count, instance_count, flags;
    uint8_t topology, patch_control_points, index_size;
    uint64_t cycles;
    uint64_t raw[SIMGPU_RAW_COUNT];
    uint32_t misses;  /* in a row */
    uint32_t resting; /* draws left without looking */
};

struct simgpu {
    struct simgpu_profile profile;
    struct simgpu_draw_memo memo;
    struct simgpu_divisors div; /* from the profile, by simgpu_divisors_init */
    char name[64];
    uint32_t *cache_ring; /* vertex cache model scratch */
};

/* profile.c: the defaults, and a profile file's settings over them. On an
 * error the profile is unchanged and `error` names the file (`name` for
 * text) and the line. */
void simgpu_profile_defaults(struct simgpu_profile *profile);
tally_status simgpu_profile_load(struct simgpu_profile *profile, const char *path, char *error,
                                 size_t error_size);
tally_status simgpu_profile_parse(struct simgpu_profile *profile, const char *name,
                                  const char *text, size_t size, char *error, size_t error_size);

/* vertex_cache.c: vertex shader invocations of one instance of an indexed
 * draw, through a FIFO post-transform cache of `entries` entries. */
uint64_t simgpu_vertex_cache_misses(const void *indices, uint32_t index_size, uint32_t count,
                                    uint32_t entries, uint32_t *ring);

/* model.c */
void simgpu_divisors_init(struct simgpu *g);
uint64_t simgpu_execute(void *state, const struct tally_work *work,
                        const struct tally_exec_state *exec, uint64_t *raw);

#endif
