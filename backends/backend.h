/*
 * The interface a counter backend implements, and all of tally a backend
 * sees besides the public headers: a backend folder includes this file and
 * nothing of the engine's (the build enforces it). The engine owns streams,
 * the queue thread, clocks, markers, results, the timeline and sampling; a
 * backend says what one unit of work did on its GPU. It never knows which API
 * the work came from.
 */
#ifndef TALLY_BACKEND_H
#define TALLY_BACKEND_H

#include "catalogue_data.h"
#include "tally/device.h"
#include "tally/stream.h"

/* The units of GPU work a backend is asked about; markers, labels, state
 * and frames are the engine's. */
typedef enum tally_work_type {
    TALLY_WORK_DRAW,
    TALLY_WORK_DISPATCH,
    TALLY_WORK_TRANSFER,
} tally_work_type;

struct tally_work {
    tally_work_type type;
    union {
        const tally_draw *draw;
        const tally_dispatch *dispatch;
        const tally_transfer *transfer;
    } u;
};

/* The pipeline state bound when the work executes. */
struct tally_exec_state {
    const tally_render_state *render;  /* never NULL */
    const tally_program_desc *program; /* NULL: nothing bound */
    /* The bound program's identity (0: nothing bound): no two programs of
     * the process share one, and a program's description never changes once
     * the queue sees it, so equal ids mean equal descriptions, without
     * comparing them. */
    uint64_t program_id;
};

struct tally_backend_ops {
    const char *name;
    const char *description;
    /* The catalogue when the backend fixes it at build time, so `tally list`
     * shows it without a device; NULL for a backend that finds its
     * catalogue when a device opens. */
    const struct tally_catalogue *static_catalogue;
    /* A backend that finds its catalogue at open: the catalogue a device
     * opened with `measurable` (tally_device_options) has, for as long as
     * the process lives; 0 gives everything the backend knows. NULL for a
     * backend with a static catalogue. */
    const struct tally_catalogue *(*catalogue_for)(uint32_t measurable);

    /* options->profile_path NULL: the embedded default. On failure, a
     * sentence naming the problem goes to error. */
    tally_status (*create)(const tally_device_options *options, void **state, char *error,
                           size_t error_size);
    void (*destroy)(void *state);
    /* The catalogue of this device, for as long as it is open. */
    const struct tally_catalogue *(*catalogue)(const void *state);
    const char *(*device_name)(const void *state);
    uint64_t (*core_clock_hz)(const void *state);
    uint64_t (*timestamp_frequency_hz)(const void *state);
    /* Values of the catalogue's constants, in catalogue order. */
    void (*constants)(const void *state, uint64_t *values);

    /*
     * Costs one unit of work: sets every slot of raw to its counts (zero
     * where the work counts nothing), the engine's elapsed slots aside
     * (the engine writes them after each call), and returns the core
     * cycles it occupies the GPU. Called on the queue thread only.
     */
    uint64_t (*execute)(void *state, const struct tally_work *work,
                        const struct tally_exec_state *exec, uint64_t *raw);

    /* --- backends that measure the real GPU (NULL in a simulated one) --- */
    /* What the front ends should measure per command (tally_measure_bits);
     * the engine hands it to them as tally_device_info.measures. */
    uint32_t (*measures)(const void *state);
    /* What a raw slot of the catalogue needs measured (tally_measure_bits;
     * 0: the commands alone give it). NULL: every slot needs `measures`. */
    uint32_t (*raw_measures)(const void *state, uint32_t raw_slot);
    /*
     * Counts one unit of work from what the GPU measured for its API command
     * (NULL: nothing measured for this unit, e.g. the second draw of a
     * multi-draw): adds its counts into raw like execute. The engine takes
     * the work's time from the measurement's timestamps itself; a backend
     * with execute_measured is never asked to execute. Returns what the
     * measurement lacks that this kind of work would need for the
     * catalogue's counters (tally_measure_bits; 0 for NULL): the counters
     * made from those are not known for this unit (an OpenGL ES context,
     * which has no statistics, in a process whose catalogue has them), not
     * 0. Queue thread only.
     */
    uint32_t (*execute_measured)(void *state, const struct tally_work *work,
                                 const struct tally_exec_state *exec,
                                 const tally_measurement *measured, uint64_t *raw);
};

/* --- the registry (registry.c): every backend built into libtally ---------- */

#define TALLY_DEFAULT_BACKEND "simgpu"

/* The backend of that name; NULL or "" is the default; NULL if unknown. */
const struct tally_backend_ops *tally_find_backend(const char *name);

extern const struct tally_backend_ops tally_simgpu_backend;
extern const struct tally_backend_ops tally_driver_backend;

#endif
