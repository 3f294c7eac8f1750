/*
 * Report writers shared by every front end: the per-command counter report
 * (CSV or JSON) and the timeline as Chrome trace-event JSON, which Perfetto's
 * UI and chrome://tracing open, or as Perfetto's own protobuf trace.
 *
 * Both stream to a temporary file beside the destination through a fixed-size
 * buffer, so memory stays bounded however long the program runs, and rename
 * it over the destination when closed: a reader sees no file or a whole one.
 * A writer is used by one thread at a time.
 */
#ifndef TALLY_REPORT_H
#define TALLY_REPORT_H

#include "tally/catalogue.h"
#include "tally/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tally_report_format {
    TALLY_REPORT_CSV = 0,
    TALLY_REPORT_JSON = 1,
} tally_report_format;

/* By extension, case-insensitive: ".json" is JSON, anything else CSV. */
TALLY_API tally_report_format tally_report_format_for_path(const char *path);

typedef struct tally_command_record {
    uint64_t sequence;       /* per device, counting every executed command */
    const char *api_name;    /* "vkCmdDraw" */
    const char *kind;        /* "draw", "dispatch" or "transfer" */
    uint32_t context;        /* context id */
    const char *context_api; /* "vulkan", "gl", ... */
    uint64_t frame;          /* frames the context had finished before it */
    uint64_t submission;     /* sequence number of its submission */
    uint64_t stream;         /* stream id (command buffer, GL context stream) */
    const char *label;       /* innermost labels joined by '/', or "" */
    /* Where it came from: the thread that submitted it (its Linux thread
     * id; 0: not known), and the pipeline or program it ran with: the
     * process's id for it (0: none bound), its name (the API object's debug
     * name or label, else the front door's: "GL program 3", an OpenCL
     * kernel's name; ""), a hash of its shaders' code that is the same in
     * every run (0: not known), and the size of the render target it drew
     * to (0 x 0: none, as for a dispatch). */
    uint32_t tid;
    uint64_t pipeline;
    const char *pipeline_name;
    uint64_t shader_hash;
    uint32_t target_width, target_height;
    uint64_t begin_ns, end_ns;
    /* Bit i: the value of column i (of the first 64) is not known for this
     * command, because what it is made from was not measured (under the
     * driver backend, an OpenGL ES context's statistics in a process whose
     * catalogue has them). Its value is 0, and the report leaves it out: an
     * empty CSV field, null in JSON (a trace's counter tracks read 0). */
    uint64_t unmeasured;
} tally_command_record;

typedef struct tally_report tally_report;

/* counters: catalogue indices of the columns, in order. */
TALLY_API tally_status tally_report_open(const char *path, tally_report_format format,
                                         const tally_catalogue *catalogue, const uint32_t *counters,
                                         uint32_t count, tally_report **out);
/* values: one per column. TALLY_ERROR_IO once a write to the file has
 * failed (errno said why then): the report can no longer be committed. */
TALLY_API tally_status tally_report_write(tally_report *report, const tally_command_record *record,
                                          const tally_value *values);
/* A CSV report is written in place as it goes (a JSON report, which parses
 * only whole, at close): flushing makes every row written so far reach the
 * file, so that a reader following it, or the file a killed program leaves,
 * ends with the last row written. TALLY_ERROR_IO once a write has failed. */
TALLY_API tally_status tally_report_flush(tally_report *report);

/* What made a report: the run's metadata, for readers that must know which
 * backend, device and driver made the numbers and which of them are exact. */
typedef struct tally_report_driver {
    const char *api;     /* "vulkan", "gl", "gles", "opencl" */
    const char *name;    /* the driver's device name, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)" */
    const char *version; /* the driver's version text */
} tally_report_driver;

typedef struct tally_report_metadata {
    const char *tally_version;
    const char *backend;   /* "simgpu", "driver" */
    const char *device;    /* the backend's device */
    const char *clock;     /* "virtual" or "realtime" (CLOCK_MONOTONIC) */
    const char *program;   /* the program's path, as it was run */
    const char *arguments; /* its arguments, each quoted as a POSIX shell would */
    int64_t pid;
    uint64_t start_unix_ns;             /* when the device opened, UTC */
    const tally_report_driver *drivers; /* the real drivers under the program, as seen */
    uint32_t driver_count;
} tally_report_metadata;

/*
 * Says what made the report; call it any time before close, again to
 * correct it (the latest wins). A JSON report carries the metadata as its
 * "metadata" member, written at close. A CSV report, to a regular file,
 * gets a sidecar CSV beside it (tally_report_metadata_path), replaced
 * whole at each call: rows "key,value", so that CSV readers take both
 * files with no options (docs/reports.md lists the keys). The counters'
 * units and exactness come from the report's catalogue.
 */
TALLY_API tally_status tally_report_describe(tally_report *report,
                                             const tally_report_metadata *metadata);

/* The sidecar of a CSV report at path: its name with ".csv" (or nothing)
 * replaced by ".meta.csv". False if it does not fit size bytes. */
TALLY_API bool tally_report_metadata_path(const char *path, char *out, size_t size);

/* Finishes the file: a CSV report is complete in place, a JSON report gets
 * its name. An error means it was not written whole (a JSON report's
 * temporary file is removed; a CSV report keeps the rows that reached it).
 * Frees the writer either way. */
TALLY_API tally_status tally_report_close(tally_report *report);

/* An output path of this process: "%p" in pattern replaced by its process
 * id and "%%" by "%", so that every process of a run writes files of its
 * own. False if the result does not fit size bytes. */
TALLY_API bool tally_output_path_for_process(const char *pattern, char *out, size_t size);

/* True when two output paths name the same destination (the same existing
 * file, or the same name in the same directory, spelled differently or
 * not): one file takes one writer. */
TALLY_API bool tally_output_same_file(const char *a, const char *b);

/* The errno of a failed open, write or close of a report or trace, in
 * words, for a message that names the path. */
TALLY_API const char *tally_output_strerror(int error);

typedef struct tally_trace tally_trace;

typedef enum tally_trace_arg_type {
    TALLY_TRACE_ARG_U64 = 0,
    TALLY_TRACE_ARG_F64 = 1,
    TALLY_TRACE_ARG_STRING = 2,
} tally_trace_arg_type;

typedef struct tally_trace_arg {
    const char *key;
    tally_trace_arg_type type;
    union {
        uint64_t u64;
        double f64;
        const char *string;
    } value;
} tally_trace_arg;

typedef enum tally_trace_format {
    TALLY_TRACE_JSON = 0,     /* Chrome trace-event JSON */
    TALLY_TRACE_PERFETTO = 1, /* Perfetto's protobuf trace, which its UI opens directly */
} tally_trace_format;

/* By extension, case-insensitive: ".perfetto-trace" or ".pftrace" is
 * Perfetto's format, anything else JSON. */
TALLY_API tally_trace_format tally_trace_format_for_path(const char *path);

/* process_name names the trace's one process in JSON, and the GPU's queue
 * in Perfetto's format, where the process is the program's own (its pid
 * and name); the format follows the path. */
TALLY_API tally_status tally_trace_open(const char *path, const char *process_name,
                                        tally_trace **out);
TALLY_API tally_status tally_trace_name_track(tally_trace *trace, uint32_t track, const char *name);
/* A complete slice ("X") on a track. */
TALLY_API tally_status tally_trace_slice(tally_trace *trace, uint32_t track, const char *name,
                                         uint64_t begin_ns, uint64_t end_ns,
                                         const tally_trace_arg *args, uint32_t arg_count);
/* A slice in two halves, each written when it happens: slices on a track
 * nest, an end closing the latest open begin (with the end's name and
 * arguments in JSON, where the slice is written whole at its end; JSON writes
 * the eight outermost levels of a track). TALLY_ERROR_INVALID_STATE: an end
 * with nothing open. */
TALLY_API tally_status tally_trace_begin(tally_trace *trace, uint32_t track, const char *name,
                                         uint64_t timestamp_ns, const tally_trace_arg *args,
                                         uint32_t arg_count);
TALLY_API tally_status tally_trace_end(tally_trace *trace, uint32_t track, const char *name,
                                       uint64_t timestamp_ns, const tally_trace_arg *args,
                                       uint32_t arg_count);
/* An API call the program's thread tid made (its Linux thread id; 0: not
 * known), as an instant: in JSON on the track, in Perfetto's format on
 * that thread's own track in the program's process (on the track when tid
 * is 0), so that a system trace merged with it shows the call on the
 * thread that made it. */
TALLY_API tally_status tally_trace_call(tally_trace *trace, uint32_t track, uint32_t tid,
                                        const char *name, uint64_t timestamp_ns,
                                        const tally_trace_arg *args, uint32_t arg_count);
/* An instant ("i") on a track. */
TALLY_API tally_status tally_trace_instant(tally_trace *trace, uint32_t track, const char *name,
                                           uint64_t timestamp_ns, const tally_trace_arg *args,
                                           uint32_t arg_count);
/* A value of a counter track ("C"), holding until the next value. */
TALLY_API tally_status tally_trace_counter(tally_trace *trace, const char *name,
                                           uint64_t timestamp_ns, double value);

/* What the commands of a trace ran on: the counters each carries and where
 * the trace's times lie on the system's clock. */
typedef struct tally_trace_gpu {
    const tally_catalogue *catalogue;
    const uint32_t *counters; /* catalogue indices, one per value of a command (copied) */
    uint32_t counter_count;
    uint64_t monotonic_origin_ns; /* CLOCK_MONOTONIC at the trace's time 0 (0: the times are
                                     CLOCK_MONOTONIC's) */
} tally_trace_gpu;

/* Says it before the first event (TALLY_ERROR_INVALID_STATE after). A
 * Perfetto trace then describes the counters (names, units, groups) to
 * Perfetto as a GPU's, and relates its times to CLOCK_MONOTONIC and
 * CLOCK_BOOTTIME, so that a system trace merges with it. */
TALLY_API tally_status tally_trace_describe_gpu(tally_trace *trace, const tally_trace_gpu *gpu);
/* One command's GPU work, from record->begin_ns to end_ns, named for its
 * command and label and carrying its report row's keys (frame, sequence),
 * with its counters' values (one per described counter, in order): in
 * JSON a slice ("X") on the track and the values as one counter event
 * ("C", holding until the next command's, 0 where the GPU is idle); in
 * Perfetto's format a GPU render stage and GPU counter values. Commands
 * come in the order they ran. */
TALLY_API tally_status tally_trace_command(tally_trace *trace, uint32_t track,
                                           const tally_command_record *record,
                                           const tally_value *values);
/* A Perfetto trace is written in place as it goes (a JSON trace, which
 * parses only whole, at close): flushing makes every packet so far reach
 * the file. */
TALLY_API tally_status tally_trace_flush(tally_trace *trace);
TALLY_API tally_status tally_trace_close(tally_trace *trace);

#ifdef __cplusplus
}
#endif

#endif
