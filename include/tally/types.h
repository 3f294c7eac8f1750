/* Status codes and value types every part of tally's interface shares. */
#ifndef TALLY_TYPES_H
#define TALLY_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TALLY_API __attribute__((visibility("default")))

#define TALLY_VERSION_MAJOR 0
#define TALLY_VERSION_MINOR 1
#define TALLY_VERSION_PATCH 0

/* Non-negative values are successes, negative values errors. */
typedef enum tally_status {
    TALLY_OK = 0,
    TALLY_NOT_READY = 1,  /* a result is not available yet */
    TALLY_TIMEOUT = 2,    /* a wait ended before its condition held */
    TALLY_INCOMPLETE = 3, /* an output array was too small; it is full */

    TALLY_ERROR_INVALID_ARGUMENT = -1,
    TALLY_ERROR_OUT_OF_MEMORY = -2,
    TALLY_ERROR_UNKNOWN_BACKEND = -3,
    TALLY_ERROR_UNKNOWN_COUNTER = -4,
    TALLY_ERROR_OVER_CAPACITY = -5, /* does not fit in one pass or a buffer */
    TALLY_ERROR_INVALID_STATE = -6, /* the object is not in a state that allows it */
    TALLY_ERROR_IO = -7,
    TALLY_ERROR_BAD_PROFILE = -8, /* a device profile file could not be used */
    TALLY_ERROR_NOT_SUPPORTED = -9,
} tally_status;

/* A short constant English phrase for a status ("invalid argument"). */
TALLY_API const char *tally_status_string(tally_status status);

/*
 * One counter value. Which member holds it follows the counter's storage:
 * u64 for UINT32 and UINT64, i64 for INT32 and INT64, f64 for FLOAT32 and
 * FLOAT64. Narrow storages are widened here; API front-ends narrow them back.
 */
typedef union tally_value {
    uint64_t u64;
    int64_t i64;
    double f64;
} tally_value;

#ifdef __cplusplus
}
#endif

#endif
