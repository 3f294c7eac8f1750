/*
 * What tally's own front doors share with the engine beyond the public API:
 * the draw lane (a draw appended inline, a bounds check and a 32-byte copy)
 * and the listeners word (read inline on every call). Internal to the
 * project: the doors reach it through the build's include rules (the
 * tally_door target) and it is not installed, so its layouts may change
 * with the engine.
 */
#ifndef TALLY_DOOR_H
#define TALLY_DOOR_H

#include <stdbool.h>
#include <stdint.h>

#include "tally/device.h"
#include "tally/stream.h"

/* CLOCK_MONOTONIC in nanoseconds: the one reader of the engine's clock base
 * for the engine and the doors (their calibrations, brackets and waits). */
TALLY_API uint64_t tally_monotonic_ns(void);

/*
 * How many listen to the device's work (tally_device_listening). A block of
 * its own, not a field of the device: it outlives the device, reading 0
 * once the device closed, so a door that still holds it (another thread
 * drawing while the program exits) reads "nobody" instead of freed memory.
 */
typedef struct tally_listeners {
    uint32_t count;
} tally_listeners;

/* The device's listeners; for NULL, a block that always reads 0. */
TALLY_API const tally_listeners *tally_device_listeners(const tally_device *device);
static inline bool tally_listening_now(const tally_listeners *listeners)
{
    return __atomic_load_n(&listeners->count, __ATOMIC_RELAXED) != 0;
}

/*
 * Inline draw recording, for front ends where every draw call pays for the
 * append (the Vulkan layer). A stream keeps a lane: the free slots after its
 * open run of draws. Appending is a bounds check and a 32-byte copy, as a
 * driver emits into its command buffer; any other command closes the run.
 * These draws are checked when the queue executes them, not when recorded:
 * one the engine cannot execute (a topology or index size out of range)
 * counts as no work. A packed draw carries no index data.
 */
typedef struct tally_packed_draw {
    const char *api_name; /* static storage */
    uint32_t count, instance_count, first, first_instance;
    int32_t vertex_offset;
    uint8_t flags; /* tally_draw_flags */
    uint8_t topology, patch_control_points, index_size;
} tally_packed_draw;

typedef struct tally_draw_lane {
    tally_packed_draw *next, *end;
} tally_draw_lane;

/* The stream's lane: one pointer for the stream's whole life. */
TALLY_API tally_draw_lane *tally_stream_draw_lane(tally_stream *stream);
/* The out-of-line half of tally_stream_draw_inline: opens a new run. */
TALLY_API tally_status tally_stream_draw_packed(tally_stream *stream,
                                                const tally_packed_draw *draw);

/* Asks for the lane's memory 16 draws ahead of slot. Draws stream through
 * blocks larger than the caches, and without it each new line holds a
 * draw's stores up until it arrives. A hint: it never faults, past a
 * block's end included. */
static inline void tally_draw_lane_prefetch(const tally_packed_draw *slot)
{
    __builtin_prefetch((const void *)((uintptr_t)slot + 16 * sizeof *slot), 1, 3);
}

static inline tally_status tally_stream_draw_inline(tally_stream *stream, tally_draw_lane *lane,
                                                    const tally_packed_draw *draw)
{
    if (__builtin_expect(lane->next != lane->end, 1)) {
        tally_draw_lane_prefetch(lane->next);
        *lane->next++ = *draw;
        return TALLY_OK;
    }
    /* A copy, so that `draw` never escapes and the fast path can store its
     * fields straight into the slot. */
    tally_packed_draw copy = *draw;
    return tally_stream_draw_packed(stream, &copy);
}

#endif
