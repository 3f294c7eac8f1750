/*
 * A Metrics-Discovery-style C API (Intel's MDAPI object model, in C).
 *
 *   device             global symbols (core count, clocks, timestamp frequency)
 *   concurrent group   a unit of the GPU that collects one metric set at a time
 *   metric set         the unit of collection: metrics and information items
 *   metric             one value per calculated report, with its metadata
 *   information item   what a report says about itself: reason, timestamps,
 *                      context, core frequency, split and lost flags
 *
 * Stream mode samples a metric set on the GPU clock at an interval while the
 * process submits work through any front door (they all share one device).
 * Reports come out raw (the layout is in docs/metrics-discovery.md) and
 * become typed values through tally_md_calculate_metrics, a pure function of
 * the metric set and the raw bytes.
 *
 * Everything here is derived at run time from the backend's counter catalogue;
 * objects live as long as their device. Errors are tally_status codes:
 * INVALID_ARGUMENT for bad pointers, indices or sizes, INVALID_STATE for a call
 * the object's state does not allow (a second set on a busy concurrent group,
 * reading a stream that is not open).
 */
#ifndef TALLY_METRICS_DISCOVERY_H
#define TALLY_METRICS_DISCOVERY_H

#include "tally/device.h"
#include "tally/results.h"
#include "tally/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tally_md_device tally_md_device;
typedef struct tally_md_concurrent_group tally_md_concurrent_group;
typedef struct tally_md_metric_set tally_md_metric_set;

/* MDAPI's TValueType; DOUBLE is tally's, for 64-bit floating-point metrics. */
typedef enum tally_md_value_type {
    TALLY_MD_VALUE_UINT32 = 0,
    TALLY_MD_VALUE_UINT64 = 1,
    TALLY_MD_VALUE_FLOAT = 2,
    TALLY_MD_VALUE_BOOL = 3,
    TALLY_MD_VALUE_CSTRING = 4,
    TALLY_MD_VALUE_DOUBLE = 5,
} tally_md_value_type;

typedef struct tally_md_typed_value {
    tally_md_value_type type;
    union {
        uint32_t u32;
        uint64_t u64;
        float f32;
        bool b;
        const char *cstring;
        double f64;
    } value;
} tally_md_typed_value;

/* A value as a double (a string is 0): handy for printing and summing. */
TALLY_API double tally_md_typed_value_as_double(const tally_md_typed_value *value);

typedef struct tally_md_global_symbol {
    const char *symbol_name;
    tally_md_typed_value value;
} tally_md_global_symbol;

typedef struct tally_md_device_params {
    const char *device_name;
    uint32_t concurrent_groups_count;
    uint32_t global_symbols_count;
} tally_md_device_params;

/* Opens the Metrics-Discovery view of a device, which must outlive it. */
TALLY_API tally_status tally_md_device_open(tally_device *device, tally_md_device **out);
/* The same on the process-wide device every front door shares
 * (tally_device_acquire_shared); closing releases it. */
TALLY_API tally_status tally_md_device_open_shared(tally_md_device **out);
/* Closes every stream still open, then frees the view. */
TALLY_API void tally_md_device_close(tally_md_device *device);

TALLY_API const tally_md_device_params *tally_md_device_get_params(const tally_md_device *device);
TALLY_API tally_device *tally_md_device_engine(const tally_md_device *device);
/* NULL when index is out of range. */
TALLY_API const tally_md_global_symbol *
tally_md_device_get_global_symbol(const tally_md_device *device, uint32_t index);
TALLY_API const tally_md_global_symbol *
tally_md_device_find_global_symbol(const tally_md_device *device, const char *symbol_name);
TALLY_API tally_md_concurrent_group *tally_md_device_get_concurrent_group(tally_md_device *device,
                                                                          uint32_t index);

/*
 * A simultaneous pair of GPU time (ns, the clock of report timestamps) and
 * CLOCK_MONOTONIC (ns). correlation_indicator_ns receives the width of the
 * window the pair was read in: 0, since simgpu derives both from one clock
 * read. Any output may be NULL. In a virtual-clock device the GPU clock only
 * advances with work, so the pair holds for this instant only.
 */
TALLY_API tally_status tally_md_device_get_gpu_cpu_timestamps(tally_md_device *device,
                                                              uint64_t *gpu_ns, uint64_t *cpu_ns,
                                                              uint64_t *correlation_indicator_ns);
/* The spec's conversions: a GPU time to CLOCK_MONOTONIC through a pair, and
 * a CLOCK_MONOTONIC time to CLOCK_MONOTONIC_RAW through the current offset
 * between the two clocks. */
TALLY_API uint64_t tally_md_gpu_to_monotonic_ns(uint64_t gpu_ns, uint64_t gpu_snap_ns,
                                                uint64_t cpu_snap_ns);
TALLY_API uint64_t tally_md_monotonic_to_raw_ns(uint64_t monotonic_ns);

/* --- concurrent groups ------------------------------------------------------- */

typedef enum tally_md_measurement_type {
    TALLY_MD_MEASUREMENT_SNAPSHOT_IO = 1u << 0, /* stream mode */
    TALLY_MD_MEASUREMENT_SNAPSHOT_QUERY = 1u << 1,
    TALLY_MD_MEASUREMENT_DELTA_QUERY = 1u << 2,
} tally_md_measurement_type;

typedef struct tally_md_concurrent_group_params {
    const char *symbol_name; /* "OA" */
    const char *description;
    uint32_t measurement_type_mask; /* tally_md_measurement_type bits */
    uint32_t metric_sets_count;
} tally_md_concurrent_group_params;

TALLY_API const tally_md_concurrent_group_params *
tally_md_concurrent_group_get_params(const tally_md_concurrent_group *group);
TALLY_API tally_md_metric_set *
tally_md_concurrent_group_get_metric_set(tally_md_concurrent_group *group, uint32_t index);

/* --- metric sets, metrics, information items ------------------------------- */

typedef struct tally_md_metric_set_params {
    const char *symbol_name; /* "RenderBasic" */
    const char *short_name;
    const char *description;
    uint32_t concurrent_group; /* index of its group */
    uint32_t raw_report_size;  /* bytes of one raw report of a stream */
    uint32_t metrics_count;
    uint32_t information_count;
    uint32_t raw_counter_count; /* narrow counters in each raw report */
    /* The doors that serve the set (tally_md_api bits): every set streams;
     * one whose counters fit a single pass of the catalogue's plan is also
     * served per command by the OpenCL door (a perf-counters queue) and the
     * GL door (GL_INTEL_performance_query), both of which take one pass. */
    uint32_t api_mask;
    uint32_t query_report_size; /* bytes of one query report; 0 if no query door */
    /* The set's number in the query doors: the GL_INTEL_performance_query
     * id and the configuration of clCreatePerfCountersCommandQueueINTEL
     * (catalogue index + 1); 0 if no query door serves it. */
    uint32_t query_id;
} tally_md_metric_set_params;

/* MDAPI's TMetricApiType bits, as far as tally's doors serve them. */
enum tally_md_api {
    TALLY_MD_API_IOSTREAM = 1u << 0, /* stream sampling */
    TALLY_MD_API_OGL = 1u << 4,      /* GL_INTEL_performance_query */
    TALLY_MD_API_OGL4_X = 1u << 5,
    TALLY_MD_API_OCL = 1u << 6, /* clCreatePerfCountersCommandQueueINTEL */
};

/* MDAPI's TMetricType. */
typedef enum tally_md_metric_type {
    TALLY_MD_METRIC_DURATION = 0,
    TALLY_MD_METRIC_EVENT = 1,
    TALLY_MD_METRIC_EVENT_WITH_RANGE = 2,
    TALLY_MD_METRIC_THROUGHPUT = 3,
    TALLY_MD_METRIC_TIMESTAMP = 4,
    TALLY_MD_METRIC_FLAG = 5,
    TALLY_MD_METRIC_RATIO = 6,
    TALLY_MD_METRIC_RAW = 7,
} tally_md_metric_type;

typedef struct tally_md_metric_params {
    uint32_t id_in_set;
    uint32_t counter;        /* its counter's catalogue index */
    const char *symbol_name; /* in MDAPI's (DirectX) vocabulary: "PsInvocations" */
    const char *short_name;
    const char *long_name; /* a paragraph */
    const char *group_name;
    const char *units; /* "ns", "cycles", "percent", "invocations" */
    tally_md_metric_type metric_type;
    tally_md_value_type result_type;
    bool derived;                   /* an equation over other counters */
    tally_md_typed_value max_value; /* upper bound of a value */
} tally_md_metric_params;

/* MDAPI's TInformationType. */
typedef enum tally_md_information_type {
    TALLY_MD_INFORMATION_REPORT_REASON = 0,
    TALLY_MD_INFORMATION_VALUE = 1,
    TALLY_MD_INFORMATION_FLAG = 2,
    TALLY_MD_INFORMATION_TIMESTAMP = 3,
    TALLY_MD_INFORMATION_CONTEXT_ID_TAG = 4,
    TALLY_MD_INFORMATION_SAMPLE_PHASE = 5,
    TALLY_MD_INFORMATION_GPU_NODE = 6,
} tally_md_information_type;

typedef struct tally_md_information_params {
    uint32_t id_in_set; /* position among the information items */
    const char *symbol_name;
    const char *short_name;
    const char *long_name;
    const char *units;
    tally_md_information_type info_type;
    tally_md_value_type result_type;
} tally_md_information_params;

/* Report reasons (the ReportReason item is a mask of these). */
enum tally_md_report_reason {
    TALLY_MD_REPORT_REASON_TIMER = 1u << 0,        /* an interval boundary */
    TALLY_MD_REPORT_REASON_STREAM_START = 1u << 1, /* the first report of a stream */
    TALLY_MD_REPORT_REASON_FLUSH = 1u << 2,        /* taken by tally_md_flush_io_stream */
};

/* The information items of every metric set, in this order. */
enum tally_md_information_index {
    TALLY_MD_INFO_QUERY_BEGIN_TIME = 0, /* GPU ns where the interval begins */
    TALLY_MD_INFO_QUERY_END_TIME,       /* GPU ns of the report that ends it */
    TALLY_MD_INFO_REPORT_REASON,
    TALLY_MD_INFO_REPORT_ID,
    TALLY_MD_INFO_CONTEXT_ID_VALID,
    TALLY_MD_INFO_CONTEXT_ID,
    TALLY_MD_INFO_CORE_FREQUENCY_MHZ,
    TALLY_MD_INFO_CORE_FREQUENCY_CHANGED,
    TALLY_MD_INFO_QUERY_SPLIT_OCCURRED,
    TALLY_MD_INFO_REPORT_LOST,
    TALLY_MD_INFO_COUNT
};

TALLY_API const tally_md_metric_set_params *
tally_md_metric_set_get_params(const tally_md_metric_set *set);
TALLY_API const tally_md_metric_params *
tally_md_metric_set_get_metric(const tally_md_metric_set *set, uint32_t index);
TALLY_API const tally_md_information_params *
tally_md_metric_set_get_information(const tally_md_metric_set *set, uint32_t index);
TALLY_API tally_md_concurrent_group *
tally_md_metric_set_get_concurrent_group(tally_md_metric_set *set);

/*
 * Calculation: consecutive raw reports of one stream of this set, as read,
 * become calculated reports, one per pair (the first report of a buffer only
 * opens the first interval: keep the last report of one read and put it in
 * front of the next). Each calculated report is metrics_count metric values
 * followed by information_count information values.
 *
 * raw_size must be a multiple of raw_report_size; out_size is the number of
 * tally_md_typed_value elements of out. A pure function of (set, bytes):
 * counters are deltas modulo 2^40, so they are right across counter wrap.
 * INVALID_ARGUMENT for a report of another set or a bad size;
 * TALLY_INCOMPLETE when out was too small (it holds whole reports).
 */
TALLY_API tally_status tally_md_calculate_metrics(const tally_md_metric_set *set, const void *raw,
                                                  size_t raw_size, tally_md_typed_value *out,
                                                  size_t out_size, uint32_t *out_report_count);

/*
 * Query mode: one report per command, its own begin-to-end counters (the
 * layout is in docs/metrics-discovery.md). tally_md_encode_query_report
 * writes one from a results slot's raw deltas (tally_results_get_raw) and
 * slot info, for the query doors; tally_md_calculate_query_metrics turns
 * query reports into one calculated report each, with the same values the
 * catalogue gives those deltas. report_size must be the set's
 * query_report_size; raw holds tally_catalogue_raw_count deltas.
 * INVALID_ARGUMENT for a set no query door serves, a bad size, or (when
 * calculating) a report that is not a query report of this set.
 */
TALLY_API tally_status tally_md_encode_query_report(const tally_md_metric_set *set,
                                                    const uint64_t *raw,
                                                    const tally_slot_info *info, uint32_t query_id,
                                                    uint32_t core_mhz, void *report,
                                                    size_t report_size);
TALLY_API tally_status tally_md_calculate_query_metrics(const tally_md_metric_set *set,
                                                        const void *reports, size_t size,
                                                        tally_md_typed_value *out, size_t out_size,
                                                        uint32_t *out_report_count);
/* The set whose query_id is `query_id`, or NULL. */
TALLY_API tally_md_metric_set *tally_md_device_find_query_set(tally_md_device *device,
                                                              uint32_t query_id);

/* --- stream mode --------------------------------------------------------------- */

#define TALLY_MD_DEFAULT_INTERVAL_NS 100000u /* the spec's recommended minimum */
#define TALLY_MD_MIN_INTERVAL_NS 10000u
#define TALLY_MD_MIN_BUFFER_REPORTS 2u
#define TALLY_MD_MAX_BUFFER_REPORTS 65536u
#define TALLY_MD_RAW_COUNTER_BITS 40u

enum tally_md_io_read_flags {
    /* When more reports wait than the buffer holds, the oldest are dropped
     * and the newest returned. Without it the oldest come first and the
     * rest stay for the next read. */
    TALLY_MD_IO_READ_FLAG_DROP_OLD_REPORTS = 1u << 0,
};

enum tally_md_io_status_flags {
    /* Reports were lost since the previous read: the stream buffer was full
     * when one was due, or DROP_OLD_REPORTS dropped some. */
    TALLY_MD_IO_STATUS_REPORTS_LOST = 1u << 0,
};

/*
 * Starts sampling `set` (a set of this group) into a new stream.
 * *interval_ns: 0 asks for TALLY_MD_DEFAULT_INTERVAL_NS; the interval is
 * rounded to whole GPU timestamp ticks and raised to TALLY_MD_MIN_INTERVAL_NS
 * (the spec advises at least 100 us: shorter intervals cost more, see
 * docs/metrics-discovery.md). *buffer_size (bytes): 0 asks for about one
 * second of reports; it is rounded down to whole reports and kept within
 * [TALLY_MD_MIN_BUFFER_REPORTS, TALLY_MD_MAX_BUFFER_REPORTS] reports. Both
 * receive the values used. INVALID_STATE if the group already collects a set
 * (one set per concurrent group; different groups may stream together).
 */
TALLY_API tally_status tally_md_open_io_stream(tally_md_concurrent_group *group,
                                               tally_md_metric_set *set, uint32_t *interval_ns,
                                               uint32_t *buffer_size);
/* TALLY_OK once a report is unread, TALLY_TIMEOUT after timeout_ms. */
TALLY_API tally_status tally_md_wait_for_reports(tally_md_concurrent_group *group,
                                                 uint32_t timeout_ms);
/*
 * *report_count: in, how many reports `buffer` holds (raw_report_size each);
 * out, how many were written, oldest first. flags: tally_md_io_read_flags.
 * status_flags (may be NULL) receives tally_md_io_status_flags.
 */
TALLY_API tally_status tally_md_read_io_stream(tally_md_concurrent_group *group,
                                               uint32_t *report_count, void *buffer, uint32_t flags,
                                               uint32_t *status_flags);
/*
 * Makes the stream cover every command executed so far: call after
 * tally_device_wait_idle. A virtual-clock device takes a report now (reason
 * FLUSH); a realtime one takes reports while idle by itself, and this waits
 * (at most timeout_ms) for the one at or after the current GPU time.
 */
TALLY_API tally_status tally_md_flush_io_stream(tally_md_concurrent_group *group,
                                                uint32_t timeout_ms);
/* Ends sampling; unread reports are dropped. */
TALLY_API tally_status tally_md_close_io_stream(tally_md_concurrent_group *group);

#ifdef __cplusplus
}
#endif

#endif
