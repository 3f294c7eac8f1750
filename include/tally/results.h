/*
 * Counter results of marked scopes.
 *
 * A results object is an array of slots for one selection of counters (a
 * Vulkan query pool, a GL monitor or query, the events of a CL queue). Marker
 * commands fill a slot when the queue executes them; a slot becomes available
 * once every pass of the selection has been executed for it. Reading never
 * blocks unless asked to; any thread may read or wait.
 */
#ifndef TALLY_RESULTS_H
#define TALLY_RESULTS_H

#include "tally/device.h"
#include "tally/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tally_results tally_results;

/*
 * counters: catalogue indices, in the order values are returned (repeats
 * allowed); count may be 0. Errors: UNKNOWN_COUNTER for an index outside
 * the catalogue, INVALID_ARGUMENT for NULL pointers or slot_count 0.
 */
TALLY_API tally_status tally_results_create(tally_device *device, const uint32_t *counters,
                                            uint32_t count, uint32_t slot_count,
                                            tally_results **out);
/* Drops the caller's reference; streams that mark into it keep it alive. */
TALLY_API void tally_results_release(tally_results *results);

TALLY_API uint32_t tally_results_slot_count(const tally_results *results);
TALLY_API uint32_t tally_results_counter_count(const tally_results *results);
TALLY_API const uint32_t *tally_results_counters(const tally_results *results);
/* Passes the selection needs, and the pass of each selected counter. */
TALLY_API uint32_t tally_results_pass_count(const tally_results *results);
TALLY_API uint32_t tally_results_counter_pass(const tally_results *results, uint32_t position);

/* Makes slots unavailable now, from the host. */
TALLY_API tally_status tally_results_reset(tally_results *results, uint32_t first, uint32_t count);

/* What else a slot knows. */
typedef struct tally_slot_info {
    uint64_t begin_ns;    /* GPU time of the begin marker */
    uint64_t end_ns;      /* GPU time of the end marker */
    uint32_t context_id;  /* context whose work was measured */
    uint32_t passes_done; /* bit mask of the passes executed */
} tally_slot_info;

/*
 * Non-blocking read: NOT_READY if the slot is not available. Otherwise the
 * selection's values, in selection order, go to values[0..value_count) and
 * TALLY_INCOMPLETE says value_count was less than the selection. info may be
 * NULL.
 */
TALLY_API tally_status tally_results_get(tally_results *results, uint32_t slot, tally_value *values,
                                         uint32_t value_count, tally_slot_info *info);
/* The slot's raw deltas (tally_catalogue_raw_count entries), for tools that
 * calculate themselves. */
TALLY_API tally_status tally_results_get_raw(tally_results *results, uint32_t slot, uint64_t *raw,
                                             uint32_t raw_count);
/* Blocks until the slot is available or timeout_ns passed (UINT64_MAX: no
 * limit), or the device stopped (tally_device_stop): TALLY_OK or
 * TALLY_TIMEOUT. */
TALLY_API tally_status tally_results_wait(tally_results *results, uint32_t slot,
                                          uint64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif
