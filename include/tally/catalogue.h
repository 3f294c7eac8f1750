/*
 * The counter catalogue of a backend: groups (blocks with a per-pass
 * capacity), counters (raw block events and derived expressions), device
 * constants, hardware units, concurrent groups and metric sets. Every API
 * view (Vulkan, GL AMD and INTEL, OpenCL, EGL, Metrics-Discovery) is derived
 * from these records.
 *
 * A catalogue is immutable and lives as long as the process; it can be read
 * without opening a device (tally_backend_catalogue).
 */
#ifndef TALLY_CATALOGUE_H
#define TALLY_CATALOGUE_H

#include "tally/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The numeric values are Vulkan's VkPerformanceCounterUnitKHR (and Codeplay's). */
typedef enum tally_unit {
    TALLY_UNIT_GENERIC = 0,
    TALLY_UNIT_PERCENTAGE = 1,
    TALLY_UNIT_NANOSECONDS = 2,
    TALLY_UNIT_BYTES = 3,
    TALLY_UNIT_BYTES_PER_SECOND = 4,
    TALLY_UNIT_KELVIN = 5,
    TALLY_UNIT_WATTS = 6,
    TALLY_UNIT_VOLTS = 7,
    TALLY_UNIT_AMPS = 8,
    TALLY_UNIT_HERTZ = 9,
    TALLY_UNIT_CYCLES = 10,
} tally_unit;

/* The numeric values are Vulkan's VkPerformanceCounterStorageKHR. */
typedef enum tally_storage {
    TALLY_STORAGE_INT32 = 0,
    TALLY_STORAGE_INT64 = 1,
    TALLY_STORAGE_UINT32 = 2,
    TALLY_STORAGE_UINT64 = 3,
    TALLY_STORAGE_FLOAT32 = 4,
    TALLY_STORAGE_FLOAT64 = 5,
} tally_storage;

/* What a value means (Metrics Discovery's metric types). */
typedef enum tally_semantic {
    TALLY_SEMANTIC_EVENT = 0,      /* a count of occurrences */
    TALLY_SEMANTIC_DURATION = 1,   /* a span of time */
    TALLY_SEMANTIC_THROUGHPUT = 2, /* an amount per second */
    TALLY_SEMANTIC_RATIO = 3,      /* a fraction, usually a percentage */
    TALLY_SEMANTIC_TIMESTAMP = 4,  /* a point in time */
} tally_semantic;

/* API vocabularies with their own aliases. */
typedef enum tally_api {
    TALLY_API_VULKAN = 0,
    TALLY_API_GL = 1,
    TALLY_API_CL = 2,
    TALLY_API_MD = 3, /* the Metrics-Discovery-style API (DirectX vocabulary) */
    TALLY_API_COUNT
} tally_api;

/* Where a raw counter's value comes from. */
typedef enum tally_counter_source {
    TALLY_SOURCE_WORK = 0,           /* accumulated from the measured commands */
    TALLY_SOURCE_ELAPSED_NS = 1,     /* GPU clock time between begin and end */
    TALLY_SOURCE_ELAPSED_CYCLES = 2, /* core cycles between begin and end */
    TALLY_SOURCE_DERIVED = 3,        /* an expression over raw counters */
} tally_counter_source;

/* An API's name for a counter where its vocabulary differs; NULL: no change.
 * unit_name: what one unit counts in that vocabulary (Intel's VsThreads
 * counts threads where simgpu's VsWaves counts waves). */
typedef struct tally_alias {
    tally_api api;
    const char *symbol;
    const char *name;
    const char *unit_name;
} tally_alias;

#define TALLY_NOT_RAW UINT32_MAX

typedef struct tally_counter_info {
    uint32_t index;          /* position in the catalogue */
    const char *symbol;      /* stable identifier, e.g. "VsInvocations" */
    const char *name;        /* display name */
    const char *description; /* one paragraph */
    uint32_t group;          /* index of its group */
    tally_unit unit;
    const char *unit_name; /* what one unit counts: "vertices", "ns" */
    tally_storage storage;
    tally_semantic semantic;
    tally_counter_source source;
    uint32_t raw_index;     /* slot in raw vectors; TALLY_NOT_RAW if derived */
    const char *expression; /* RPN text of a derived counter, else NULL */
    bool exact;             /* always determined by the commands, not by the model */
    /* Counters exact only under conditions: what they are, and what the model
     * does otherwise (one sentence or two); NULL for always exact or modeled. */
    const char *exact_when;
    tally_value min_value; /* inclusive range, in the storage's member */
    tally_value max_value;
    uint8_t uuid[16]; /* RFC 4122 version 5 UUID of the symbol alone */
    uint32_t alias_count;
    const tally_alias *aliases;
    bool measured; /* measured by the real GPU (the driver backend), not modeled */
} tally_counter_info;

typedef struct tally_group_info {
    uint32_t index;
    const char *symbol;
    const char *name;
    const char *description;
    uint32_t capacity; /* counters of this group one pass can collect */
    uint32_t counter_count;
    const uint32_t *counters; /* catalogue indices, in catalogue order */
} tally_group_info;

/* A named device constant ("ShaderCoresTotalCount"); the value is per device. */
typedef struct tally_constant_info {
    uint32_t index;
    const char *symbol;
    const char *description;
} tally_constant_info;

/* A hardware unit: a track of the timeline. */
typedef struct tally_unit_info {
    uint32_t index;
    const char *symbol;
    const char *description;
    uint32_t busy_raw_index; /* raw slot of its busy cycles, or TALLY_NOT_RAW */
} tally_unit_info;

/* Only one metric set of a concurrent group is collected at a time. */
typedef struct tally_concurrent_group_info {
    uint32_t index;
    const char *symbol;
    const char *description;
    uint32_t metric_set_count;
    const uint32_t *metric_sets;
} tally_concurrent_group_info;

/* A metric set always fits in one pass. */
typedef struct tally_metric_set_info {
    uint32_t index;
    const char *symbol;
    const char *short_name;
    const char *description;
    uint32_t concurrent_group;
    uint32_t counter_count;
    const uint32_t *counters;
} tally_metric_set_info;

typedef struct tally_catalogue tally_catalogue;

/* The catalogue of a backend by name (NULL: TALLY_BACKEND; "": the default
 * backend, simgpu). */
TALLY_API tally_status tally_backend_catalogue(const char *backend, const tally_catalogue **out);
/* The catalogue a device of that backend would have when opened with
 * `measurable` (tally_device_options.measurable); for a simulated backend,
 * the same as tally_backend_catalogue. */
TALLY_API tally_status tally_backend_catalogue_measuring(const char *backend, uint32_t measurable,
                                                         const tally_catalogue **out);
/* Names of the built-in backends, NULL-terminated. */
TALLY_API const char *const *tally_backend_names(void);

TALLY_API const char *tally_catalogue_backend(const tally_catalogue *cat);
TALLY_API uint32_t tally_catalogue_counter_count(const tally_catalogue *cat);
TALLY_API const tally_counter_info *tally_catalogue_counter(const tally_catalogue *cat,
                                                            uint32_t index);
TALLY_API uint32_t tally_catalogue_group_count(const tally_catalogue *cat);
TALLY_API const tally_group_info *tally_catalogue_group(const tally_catalogue *cat, uint32_t index);
TALLY_API uint32_t tally_catalogue_raw_count(const tally_catalogue *cat);
/* The counter whose raw slot is raw_index, or NULL. */
TALLY_API const tally_counter_info *tally_catalogue_raw_counter(const tally_catalogue *cat,
                                                                uint32_t raw_index);
TALLY_API uint32_t tally_catalogue_constant_count(const tally_catalogue *cat);
TALLY_API const tally_constant_info *tally_catalogue_constant(const tally_catalogue *cat,
                                                              uint32_t index);
TALLY_API uint32_t tally_catalogue_unit_count(const tally_catalogue *cat);
TALLY_API const tally_unit_info *tally_catalogue_unit(const tally_catalogue *cat, uint32_t index);
TALLY_API uint32_t tally_catalogue_concurrent_group_count(const tally_catalogue *cat);
TALLY_API const tally_concurrent_group_info *
tally_catalogue_concurrent_group(const tally_catalogue *cat, uint32_t index);
TALLY_API uint32_t tally_catalogue_metric_set_count(const tally_catalogue *cat);
TALLY_API const tally_metric_set_info *tally_catalogue_metric_set(const tally_catalogue *cat,
                                                                  uint32_t index);

/* Lookup by symbol, exact and case-sensitive; API aliases are accepted too. */
TALLY_API tally_status tally_catalogue_find(const tally_catalogue *cat, const char *symbol,
                                            uint32_t *index);

/*
 * Whether one name of a counter list (TALLY_COUNTERS, the options'
 * report_counters) names a counter of a backend's catalogue (backend as
 * tally_backend_catalogue takes it); "all" does. TALLY_OK, or a sentence
 * saying why not in error:
 *   TALLY_ERROR_UNKNOWN_COUNTER  no counter named "X" (did you mean Y?)
 *   TALLY_ERROR_NOT_SUPPORTED    a counter another built-in backend has: what
 *                                this backend measures instead
 *   TALLY_ERROR_UNKNOWN_BACKEND
 * For tools that check a list before a program starts (tally run -c).
 */
TALLY_API tally_status tally_counter_name_check(const char *backend, const char *name, char *error,
                                                size_t error_size);

/* A counter's symbol, name and unit name in an API's vocabulary. */
TALLY_API const char *tally_counter_symbol_for(const tally_counter_info *counter, tally_api api);
TALLY_API const char *tally_counter_name_for(const tally_counter_info *counter, tally_api api);
TALLY_API const char *tally_counter_unit_name_for(const tally_counter_info *counter, tally_api api);

/* Short lowercase words for enums, as the catalogue data spells them. */
TALLY_API const char *tally_unit_string(tally_unit unit);
TALLY_API const char *tally_storage_string(tally_storage storage);
TALLY_API const char *tally_semantic_string(tally_semantic semantic);
TALLY_API const char *tally_api_string(tally_api api);

/*
 * Pass planning. A pass collects at most `capacity` counters of each group;
 * counters listed twice take one place. Each counter goes to the first pass
 * whose group still has room, so the plan is deterministic and uses
 * max over groups of ceil(selected / capacity) passes.
 * pass_of may be NULL; otherwise it receives each listed counter's pass.
 */
TALLY_API tally_status tally_plan_passes(const tally_catalogue *cat, const uint32_t *counters,
                                         uint32_t count, uint32_t *pass_of, uint32_t *pass_count);

/*
 * Derived and raw values from a vector of raw deltas (tally_catalogue_raw_count
 * entries) and device constants (tally_catalogue_constant_count entries).
 * A pure function: the same inputs give the same bits. Division by zero
 * gives 0; integer subtraction that would go below zero gives 0; the result
 * is clamped to the counter's range.
 */
TALLY_API tally_status tally_catalogue_evaluate(const tally_catalogue *cat, uint32_t counter,
                                                const uint64_t *raw, const uint64_t *constants,
                                                tally_value *out);

/*
 * The raw slots a counter's value reads: its own slot for a raw counter, or
 * each slot its expression reads, in order, repeats included. Returns how
 * many there are; at most `capacity` are written to slots (which may be NULL
 * when capacity is 0).
 */
TALLY_API uint32_t tally_catalogue_counter_raw_inputs(const tally_catalogue *cat, uint32_t counter,
                                                      uint32_t *slots, uint32_t capacity);

#ifdef __cplusplus
}
#endif

#endif
