/*
 * The interface a backend implements. The engine owns streams, the queue
 * thread, clocks, markers, results, the timeline and sampling; a backend only
 * says what one canonical command costs on its GPU. It never knows which API
 * the command came from.
 */
#ifndef TALLY_BACKEND_H
#define TALLY_BACKEND_H

#include "catalogue_data.h"
#include "tally/device.h"
#include "tally/stream.h"

struct tally_command;

/* The pipeline state bound when a command executes. */
struct tally_exec_state {
    const tally_render_state *render;  /* never NULL */
    const tally_program_desc *program; /* NULL: nothing bound */
};

struct tally_backend_ops {
    const char *name;
    const char *description;
    const struct tally_catalogue *catalogue;

    /* profile_path NULL: the embedded default. On failure, a sentence naming
     * the problem goes to error. */
    tally_status (*create)(const char *profile_path, void **state, char *error, size_t error_size);
    void (*destroy)(void *state);
    const char *(*device_name)(const void *state);
    uint64_t (*core_clock_hz)(const void *state);
    uint64_t (*timestamp_frequency_hz)(const void *state);
    /* Values of the catalogue's constants, in catalogue order. */
    void (*constants)(const void *state, uint64_t *values);

    /*
     * Costs one draw, dispatch or transfer: adds the command's work into raw
     * (zeroed by the caller; the elapsed slots are the engine's) and returns
     * the core cycles it occupies the GPU. Called on the queue thread only.
     */
    uint64_t (*execute)(void *state, const struct tally_command *command,
                        const struct tally_exec_state *exec, uint64_t *raw);
};

/* The built-in backends. */
const struct tally_backend_ops *tally_find_backend(const char *name);

extern const struct tally_backend_ops tally_simgpu_backend;

#endif
