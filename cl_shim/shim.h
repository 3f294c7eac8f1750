/* What the parts of libtally_cl share: the next layer's entry points, the
 * side records of queues and events, and the engine session. */
#ifndef TALLY_CL_SHIM_H
#define TALLY_CL_SHIM_H

#include <pthread.h>
#include <stdbool.h>

#include "cl_api.h"
#include "handle_map.h"
#include "tally/tally.h"
#include "tally_door.h"

#define SHIM_HIDDEN __attribute__((visibility("hidden")))

/* --- next.c: where calls go down to ------------------------------------- */

/* The entry points below the shim: the loader's exports in preload mode
 * (dlsym(RTLD_NEXT)), the target dispatch in layer mode. Never NULL, but
 * slots may be, when the program does not use OpenCL through the loader. */
SHIM_HIDDEN const struct _cl_icd_dispatch *next_cl(void);
/* next_cl's table once it is known, else NULL: for inline tests. */
extern SHIM_HIDDEN _Atomic(const struct _cl_icd_dispatch *) next_table;
/* Replies to a clGet*Info with `size` bytes of `data`: CL_INVALID_VALUE when
 * the program's buffer is too small, the size alone when it gave none. */
SHIM_HIDDEN cl_int shim_answer_info(const void *data, size_t size, size_t value_size, void *value,
                                    size_t *size_ret);
/* Layer mode: the loader's target table (entries beyond num_entries stay NULL). */
SHIM_HIDDEN void next_cl_set_target(const struct _cl_icd_dispatch *target, cl_uint num_entries);
/* True when this process's global cl* symbols are a libtally_cl's exports
 * (any copy): then that copy counts, and a layer instance passes through. */
SHIM_HIDDEN bool preload_is_active(void);

/* --- catalogue_view.c: the catalogue as Codeplay records -------------------- */

SHIM_HIDDEN const tally_catalogue *cl_catalogue(void);
/* The 32-bit Codeplay uuid of a counter: the first four bytes of its
 * catalogue UUID, big-endian. */
SHIM_HIDDEN cl_uint counter_cl_uuid(const tally_counter_info *counter);
/* The catalogue index of a Codeplay uuid; false if none has it. */
SHIM_HIDDEN bool counter_index_of_uuid(cl_uint uuid, uint32_t *index);
SHIM_HIDDEN cl_int device_performance_counters(size_t size, void *value, size_t *size_ret);

/* --- session.c: the engine device every queue records into ------------- */

/* The shared device, opened on first use; NULL if it cannot be (the shim
 * then passes everything through and logs why once). */
SHIM_HIDDEN tally_device *session_device(void);
/* --- kernel_profile.c, kernels.c, arg_info.c ----------------------------- */

/* Where argument qualifiers come from when a program's own build withholds
 * them (arg_info.c): a private twin of the program, built at most once per
 * shim call with -cl-kernel-arg-info and released when the call is done. */
typedef struct arg_info_source {
    cl_program program; /* the application's */
    cl_program twin;    /* NULL: not built (yet, or it cannot be) */
    bool tried;
} arg_info_source;
SHIM_HIDDEN void arg_info_source_init(arg_info_source *source, cl_program program);
/* The twin's kernel of the same name as kernel (the caller releases it with
 * next_cl()->clReleaseKernel); NULL if there is none. */
SHIM_HIDDEN cl_kernel arg_info_twin_kernel(arg_info_source *source, cl_kernel kernel);
SHIM_HIDDEN void arg_info_source_release(arg_info_source *source);

/* A kernel's static profile (docs/opencl.md), from its arguments'
 * qualifiers: 1 + 3 x arguments driver calls, on the kernel or, when its
 * program withholds them and source is given, on its twin. */
SHIM_HIDDEN tally_instruction_mix kernel_classify(cl_kernel kernel, arg_info_source *source);
/* The engine program of a profile, shared by kernels of the same profile;
 * NULL if none can be created. Lock-free once the profile has been seen. */
SHIM_HIDDEN tally_program *mix_program(tally_device *device, const tally_instruction_mix *mix);
/* A kernel's own engine program: its mix, named for the kernel function in
 * reports, with the hash of its code (kernel_code_hash). NULL: no memory. */
SHIM_HIDDEN tally_program *kernel_program(tally_device *device, const tally_instruction_mix *mix,
                                          const char *function_name, uint64_t code_hash);
/* The kernel function's name (malloc'd; NULL if the driver cannot say) and
 * a hash of its program's source with that name, the same in every run (0:
 * neither known). */
SHIM_HIDDEN char *kernel_function_name(cl_kernel kernel);
SHIM_HIDDEN uint64_t kernel_code_hash(cl_kernel kernel, const char *function_name);
SHIM_HIDDEN uint32_t kernels_live(void);

/* --- queues.c ---------------------------------------------------------------- */

typedef struct device_limits {
    size_t max_item_sizes[3];
    size_t max_group_size;
    cl_uint compute_units;
} device_limits;

/* The side record of a cl_command_queue. */
typedef struct queue_record {
    handle_entry entry; /* key: the cl_command_queue */
    cl_command_queue queue;
    cl_device_id device;
    device_limits limits;
    /* Counters enabled at creation, as catalogue indices in enable order;
     * count 0: a queue without counters. Immutable. */
    uint32_t *counters;
    uint32_t counter_count;
    /* The application's property list (terminator included) when it named
     * counters, returned for CL_QUEUE_PROPERTIES_ARRAY. */
    cl_queue_properties *app_properties;
    size_t app_property_count;

    pthread_mutex_t lock;   /* recording: CL queues may be shared by threads */
    tally_context *context; /* NULL: the engine is unavailable */
    tally_stream *stream;
    /* The device's listeners (tally_device_listeners); NULL while the
     * queue has no stream. */
    const tally_listeners *listening;
    /* Counters: every command is recorded, for its events' scopes. */
    bool always_heard;
    tally_program *bound_program; /* the stream's; it stays bound across submissions */
    uint32_t unsubmitted;         /* commands recorded since the last submission */
    /* The driver backend's kernel timing (driver_profiling.c); NULL when the
     * device measures no time. */
    struct cl_profiling *profiling;
    /* The shim added CL_QUEUE_PROFILING_ENABLE the program did not ask for:
     * the queue's info and its events' profiling answer as without it. */
    bool profiling_hidden;
    bool out_of_order; /* CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE */
    /* A perf-counters queue's metric set (its query_id: catalogue index +
     * 1); 0 for every other queue. Immutable. */
    uint32_t query_set;
} queue_record;

/* The record of a queue, or NULL for a queue the shim did not see created. */
SHIM_HIDDEN queue_record *queue_find(cl_command_queue queue);
/*
 * Whether anyone would see the queue's next command: a queue with counters
 * (its events' scopes), or a listener of the whole device (a report, trace, timeline reader or
 * sampler: tally_device_listening). A scope of another queue counts only
 * its own queue's work. Otherwise an enqueue records nothing and goes
 * straight down, as through no shim (docs/opencl.md, "What an idle shim
 * costs an enqueue"), under the driver backend too: nobody reads a time
 * nobody listens for, so no event is made and no enqueue bracketed for
 * it. A listener that starts later sees the commands
 * enqueued after it started: a CL command may start as soon as it is
 * enqueued (PoCL's do; clFlush only guarantees it), so that is where a real
 * device's counters would start seeing it too.
 */
SHIM_HIDDEN bool queue_heard(cl_command_queue queue);
static inline bool queue_record_heard(const queue_record *q)
{
    return q->listening && (q->always_heard || tally_listening_now(q->listening));
}
/* The queue table and the thread's memo of it, for queue_idle_next. */
extern SHIM_HIDDEN handle_map queue_records;
extern SHIM_HIDDEN _Thread_local handle_memo queue_memo;
/*
 * The table to pass a kernel enqueue straight down to, inline, when nobody
 * would see it (queue_heard) and its answer is at hand: the queue in the
 * thread's memo, the table below known. NULL: the enqueue goes the general
 * way, which asks again. Nothing here calls out (the memo's TLS access is a
 * TLS descriptor's, which keeps every register but its result), so the
 * enqueue's arguments stay in their registers for the tail call.
 */
static inline const struct _cl_icd_dispatch *queue_idle_next(cl_command_queue queue)
{
    const queue_record *q =
        (const queue_record *)handle_map_memo_hit(&queue_records, &queue_memo, queue);
    if (!q || q->always_heard || (q->listening && tally_listening_now(q->listening)))
        return NULL;
    return atomic_load_explicit(&next_table, memory_order_acquire);
}
/* A counter queue made by the driver's clCreateCommandQueue, for a
 * perf-counters queue of metric set query_set (perf_counters.c); takes
 * ownership of counters. */
SHIM_HIDDEN cl_command_queue queue_create_counting(cl_context context, cl_device_id device,
                                                   cl_command_queue_properties flags,
                                                   uint32_t *counters, uint32_t count,
                                                   uint32_t query_set, cl_int *err);
/* Submits what the queue recorded (a CL submission point). */
SHIM_HIDDEN void queue_submit(queue_record *q, const char *api_name);
SHIM_HIDDEN void queue_submit_locked(queue_record *q, const char *api_name, uint32_t flags);
/* queue_submit for the API's explicit flushes (clFlush, clFinish). */
SHIM_HIDDEN void queue_flush(queue_record *q, const char *api_name);
/* At exit: every queue's work submitted, and what waits for its kernels'
 * times left to profiling_finish_all; the records are kept (another thread
 * may still be inside a call on the queue) but no longer found. */
SHIM_HIDDEN void queues_settle_all(void);
/* In a forked child: the records (of the parent's device) are forgotten. */
SHIM_HIDDEN void queues_forget(void);
SHIM_HIDDEN uint32_t queues_live(void);

/* --- events.c ----------------------------------------------------------------- */

/* The side record of an event of a counter-enabled queue. */
typedef struct event_record {
    handle_entry entry;     /* key: the cl_event */
    tally_results *results; /* one slot: the command's marker pair */
    uint32_t query_set;     /* its queue's (perf-counters queues) */
    uint32_t report_id;     /* its query report's number, from 1; 0: none */
} event_record;

/* Creates the record of a new event with counter results; NULL on failure
 * (the event then reports no counters). */
SHIM_HIDDEN event_record *event_track(cl_event event, queue_record *q);
/* The record of an event, or NULL. */
SHIM_HIDDEN event_record *event_find(cl_event event);
/* The command's execution status (clGetEventInfo); its error if `event`
 * is not an event. */
SHIM_HIDDEN cl_int event_execution_status(cl_event event, cl_int *status);
/* Writes an event's results of one kind (Codeplay's counters, an MDAPI
 * query report) into value, `size` bytes. */
typedef cl_int (*event_results_writer)(event_record *e, const void *kind, void *value, size_t size);
/*
 * The end of a result query of clGetEventProfilingInfo, in the order both
 * kinds check (the spec's, and the oneAPI Construction Kit's): a buffer
 * smaller than the `needed` bytes, then a command not complete (its
 * `status`), then the results, written once the command's recording was
 * let go (profiling_settle_event).
 */
SHIM_HIDDEN cl_int event_results_answer(cl_event event, cl_int status, event_record *e,
                                        size_t needed, size_t size, void *value, size_t *size_ret,
                                        event_results_writer write, const void *kind);
/* In a forked child: the records (of the parent's device) are forgotten. */
SHIM_HIDDEN void events_forget(void);
SHIM_HIDDEN uint32_t events_live(void);

/* --- perf_counters.c: MDAPI query mode ---------------------------------------- */

#define CL_PROFILING_COMMAND_PERFCOUNTERS_INTEL 0x407F
SHIM_HIDDEN cl_command_queue CL_API_CALL shim_clCreatePerfCountersCommandQueueINTEL(
    cl_context context, cl_device_id device, cl_command_queue_properties properties,
    cl_uint configuration, cl_int *errcode_ret);
/* The next query report's number. */
SHIM_HIDDEN uint32_t perf_counters_next_report_id(void);
/* clGetEventProfilingInfo(CL_PROFILING_COMMAND_PERFCOUNTERS_INTEL). */
SHIM_HIDDEN cl_int perf_counters_report(cl_event event, size_t size, void *value, size_t *size_ret);

/* --- driver_calibration.c: kernel times on CLOCK_MONOTONIC ---------------- */

/* CLOCK_MONOTONIC just before and after a kernel's clEnqueue* call; before
 * 0: not read (the device does not calibrate). */
typedef struct cl_enqueue_bracket {
    uint64_t before, after;
} cl_enqueue_bracket;
/* A (device time, CLOCK_MONOTONIC) pair, at most deviation_ns apart. */
typedef struct cl_calibration {
    bool valid;
    tally_clock_pair pair; /* gpu_ns: the device's QUEUED time */
} cl_calibration;
/* A kernel's CL_PROFILING_COMMAND_QUEUED and its enqueue's bracket: kept
 * when narrower than the pair held. */
SHIM_HIDDEN void calibration_note(cl_calibration *c, uint64_t queued, cl_enqueue_bracket bracket);
/* Converts the measured times the pair allows, flagging them
 * TALLY_MEASURE_TIME_MONOTONIC; returns the earliest converted time (0:
 * none), when the recording began on the device (its issued_ns). */
SHIM_HIDDEN uint64_t calibration_apply(const cl_calibration *c, tally_measurement *values,
                                       uint32_t count);

/* --- driver_profiling.c: GPU time for the driver backend ------------------ */

typedef struct cl_profiling cl_profiling;
/* Whether the session's device measures GPU time (the driver backend). */
SHIM_HIDDEN bool profiling_measures(void);
/* Whether a property list asks for CL_QUEUE_PROFILING_ENABLE. */
SHIM_HIDDEN bool profiling_asked(const cl_queue_properties *properties);
/* A queue's timing state; NULL when nothing is measured. */
SHIM_HIDDEN cl_profiling *profiling_create(void);
/* Whether a command with this wait list waits on a user event the program
 * has not completed, directly or through a command that does (a gate: the
 * command may never run; gates.c). */
SHIM_HIDDEN bool profiling_gated(cl_uint num_events, const cl_event *wait_list);
/* Where an enqueue returns its event: the program's, or `own` (which the
 * caller releases) when it asked for none and the queue measures, or the
 * command is gated. */
SHIM_HIDDEN cl_event *profiling_event(cl_command_queue queue, cl_event *event, bool gated,
                                      cl_event *own);
/* Before a gated command is recorded: the recording is cut there, and what
 * follows is held until `command` (its event) completed; never reported if
 * it never ran. */
SHIM_HIDDEN void profiling_gate_locked(queue_record *q, cl_event command, cl_uint num_events,
                                       const cl_event *wait_list, const char *api_name);
/* Whether kernel enqueues are bracketed for calibration (the driver
 * backend with TALLY_CALIBRATE on: driver_calibration.c). */
SHIM_HIDDEN bool profiling_calibrates(void);
/* Before a kernel's dispatch is recorded: measured under the event. */
SHIM_HIDDEN void profiling_record_locked(queue_record *q, cl_event event,
                                         cl_enqueue_bracket bracket);
/* At a submission point: holds the recording if it (or an earlier one)
 * waits for its kernels (true); false: submit it as usual. */
SHIM_HIDDEN bool profiling_hold_locked(queue_record *q, const char *api_name, uint32_t flags);
/* Submits, in order, the held recordings whose kernels all completed. */
SHIM_HIDDEN void profiling_poll_locked(queue_record *q);
SHIM_HIDDEN void profiling_poll_orphans(void);
/* The queue's record goes: what it holds waits on for the process. */
SHIM_HIDDEN void profiling_queue_gone(queue_record *q);
/* The same at exit, the record staying: its held recordings go to the
 * process's, which profiling_finish_all waits for. */
SHIM_HIDDEN void profiling_orphan_held_locked(queue_record *q);
/* In a forked child: the held recordings (of the parent's device) are
 * forgotten. */
SHIM_HIDDEN void profiling_forget(void);
/* The event completed: what its queue held up to it goes to the engine. */
SHIM_HIDDEN void profiling_settle_event(cl_event event);
/* Whether the event's queue has profiling the program did not ask for. */
SHIM_HIDDEN bool profiling_hidden(cl_event event);
/* At exit: waits, a bounded time, for every held kernel. */
SHIM_HIDDEN void profiling_finish_all(void);

/* --- local_size.c ------------------------------------------------------------- */

/* The local size the driver chose when the program passed none (PoCL's rule,
 * docs/opencl.md). global has three entries (1 beyond work_dim). */
SHIM_HIDDEN void default_local_size(const device_limits *limits, size_t preferred_multiple,
                                    const size_t global[3], size_t local[3]);
/* What a launch of the kernel on the queue needs, from one lookup of its
 * record (kernels.c): its engine program (classified once when the kernel
 * was created; on the spot for a kernel the shim did not see created), and,
 * when chosen_local is given (the program passed no local size), the local
 * size the driver takes: the size the kernel was compiled to require,
 * otherwise default_local_size over its preferred multiple. */
SHIM_HIDDEN tally_program *kernel_launch(const queue_record *q, cl_kernel kernel,
                                         const size_t global[3], size_t *chosen_local);

#endif
