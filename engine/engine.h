/*
 * The engine's internal objects: what a device, context, program, recorded
 * command, results object, subscription and sampler hold, and which thread
 * may touch each field.
 */
#ifndef TALLY_ENGINE_H
#define TALLY_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>

#include "backend.h"
#include "catalogue_data.h"
#include "tally/tally.h"
#include "tally_door.h"

#define TALLY_HIDDEN __attribute__((visibility("hidden")))

/* --- recorded commands ------------------------------------------------------ */

enum tally_command_type {
    TALLY_CMD_DRAW,
    TALLY_CMD_DISPATCH,
    TALLY_CMD_TRANSFER,
    TALLY_CMD_BIND_PROGRAM,
    TALLY_CMD_RENDER_STATE,
    TALLY_CMD_MARKER_BEGIN,
    TALLY_CMD_MARKER_END,
    TALLY_CMD_RESET_RESULTS,
    TALLY_CMD_LABEL_PUSH,
    TALLY_CMD_LABEL_POP,
    TALLY_CMD_FRAME,
    TALLY_CMD_EXECUTE,
    TALLY_CMD_DRAW_RUN, /* consecutive packed draws, appended through a stream's lane */
    TALLY_CMD_INDIRECT,
    TALLY_CMD_MEASURE,       /* the next API command's work is measured under u.measure_key */
    TALLY_CMD_MEASURE_GROUP, /* so are the API commands up to TALLY_CMD_MEASURE_END */
    TALLY_CMD_MEASURE_END,
};

struct tally_recording;

/* One canonical command as a stream stores it; pointers point into the
 * recording's arena or at objects the recording holds a reference to. */
struct tally_command {
    uint32_t type;
    union {
        tally_draw draw;
        tally_dispatch dispatch;
        tally_transfer transfer;
        tally_render_state render;
        struct tally_program *program;
        struct {
            struct tally_results *results;
            uint32_t first, count;
        } marker;
        const char *label;
        struct {
            struct tally_recording *recording;
            uint32_t count;
        } execute;
        tally_indirect indirect;
        uint64_t measure_key;
        struct {
            const tally_packed_draw *first;
            uint32_t count; /* fixed when the run closes */
        } run;
    } u;
};

/* Whether the queue can execute a draw; tally_stream_draw refuses the rest. */
static inline bool tally_packed_draw_valid(const tally_packed_draw *d)
{
    if (d->topology >= TALLY_TOPOLOGY_COUNT)
        return false;
    if (d->flags & TALLY_DRAW_INDEXED)
        return d->index_size == 1 || d->index_size == 2 || d->index_size == 4;
    return true;
}

#define TALLY_CHUNK_COMMANDS 511u

struct tally_chunk {
    struct tally_chunk *next;
    struct tally_command commands[TALLY_CHUNK_COMMANDS];
};

/* 32 KiB of packed draws; runs of draws fill them in order. */
#define TALLY_DRAW_BLOCK_DRAWS 1024u

struct tally_draw_block {
    struct tally_draw_block *next;
    tally_packed_draw draws[TALLY_DRAW_BLOCK_DRAWS];
};

/* Objects a recording keeps alive until it is freed. */
enum tally_held_kind { TALLY_HELD_PROGRAM, TALLY_HELD_RESULTS, TALLY_HELD_RECORDING };

struct tally_held {
    enum tally_held_kind kind;
    void *object;
};

/*
 * The commands recorded into a stream since its last reset. Counted by
 * reference: the stream, every pending submission and every stream that
 * executes it as a secondary. Only the recording thread appends; readers
 * (the queue thread) read a prefix of `count` fixed at submission, so
 * appending never races with execution.
 */
struct tally_recording {
    atomic_uint refs;
    uint32_t count;    /* command slots, a run of draws taking one */
    uint32_t commands; /* canonical commands, each draw of a closed run counting one */
    struct tally_chunk *first, *last;
    uint32_t used_in_last;
    struct tally_draw_block *first_draws, *last_draws; /* kept, like chunks, by a rewind */
    /* variable-size data (indices, labels), freed with the recording */
    struct tally_block *blocks;
    struct tally_held *held;
    uint32_t held_count, held_capacity;
    const void *last_held; /* skips holding the same object twice in a row */
};

struct tally_stream {
    tally_draw_lane lane;           /* next == end while no run is open */
    struct tally_command *open_run; /* the run the lane appends to, or NULL */
    tally_packed_draw *draws_end;   /* the end of the lane's block */
    struct tally_context *context;
    struct tally_recording *recording; /* NULL until the first append */
    uint64_t id;
    /* What the stream last bound. GL and CL keep their state across
     * submissions, so after a consuming submission the next recording
     * starts by binding it again (rebind_pending); a reset forgets it. */
    struct tally_program *bound_program; /* a reference, or NULL */
    tally_render_state bound_render;
    bool has_bound_render;
    bool rebind_pending;
    uint32_t open_markers; /* marker begins recorded and not yet ended, across recordings */
};

/* --- contexts and programs ---------------------------------------------------- */

#define TALLY_MAX_LABEL_DEPTH 32

struct tally_context {
    atomic_uint refs; /* the creator, and each pending submission */
    struct tally_device *device;
    uint32_t id;
    char *api_name;
    /* Queue thread only: */
    uint64_t *accumulators; /* cumulative raw work of this context */
    uint64_t frame;
    uint32_t label_depth;
    uint64_t label_changes; /* pushes and pops executed, so reports know when to rebuild the path */
    const char *labels[TALLY_MAX_LABEL_DEPTH]; /* point into held recordings */
    struct tally_recording *label_owners[TALLY_MAX_LABEL_DEPTH];
};

struct tally_program {
    atomic_uint refs;
    atomic_bool ready; /* false while pending: its desc is not written yet */
    uint64_t id;       /* the process's count of programs made: never reused */
    tally_program_desc desc;
    char *name;
    /* tally_program_set_label's latest (NULL: none): read by the queue
     * thread per row, so labels it replaced are kept, on retired_labels
     * (under context.c's lock), until the program is freed. */
    _Atomic(struct tally_program_label *) label;
    struct tally_program_label *retired_labels;
};

struct tally_program_label {
    struct tally_program_label *retired; /* the one retired before it */
    char text[];
};

/* The name a report gives it now; valid while the program is. */
static inline const char *tally_program_report_name(struct tally_program *program)
{
    struct tally_program_label *label = atomic_load_explicit(&program->label, memory_order_acquire);
    return label ? label->text : program->name ? program->name : "";
}

/* --- submissions and the queue ----------------------------------------------- */

struct tally_pending_stream {
    struct tally_recording *recording;
    uint32_t count;    /* command slots executed */
    uint32_t commands; /* canonical commands among them */
    struct tally_context *context;
    uint64_t stream_id;
};

struct tally_pending {
    struct tally_pending *next;
    uint64_t seqno;
    uint64_t submit_gpu_ns; /* realtime mode: GPU time of the submit call */
    uint64_t start_gpu_ns;  /* realtime mode: no earlier than this (issued_ns, or the call) */
    uint32_t pass_index;
    uint32_t flags; /* tally_submit_flags */
    uint32_t tid;   /* the thread that submitted it */
    bool captured;  /* the capture window may be open: its rows are kept if theirs is */
    const char *api_name;
    tally_indirect_reader indirect_reader;       /* all NULL: none */
    tally_measurement_reader measurement_reader; /* all NULL: none */
    uint32_t stream_count;
    struct tally_pending_stream streams[];
};

/* The simulated GPU's running state; the queue thread's alone. */
/* run_note.c: commands executed per front door, for TALLY_RUN_NOTE's line;
 * the queue thread's alone, read once it ended. Doors: Vulkan, GL, GLES,
 * OpenCL, any other. */
enum { TALLY_RUN_NOTE_DOORS = 5 };
struct tally_run_note {
    uint64_t commands[TALLY_RUN_NOTE_DOORS];
    uint32_t last_context_id, last_door;
};

struct tally_executor {
    uint64_t gpu_ns;
    uint64_t cycles;       /* core cycles elapsed since the device opened */
    uint64_t ns_remainder; /* of cycles not yet worth a whole ns */
    uint64_t ns_per_cycle; /* when the clock makes it whole (1000 MHz: 1), else 0 */
    uint64_t *global;      /* cumulative raw work of every context */
    uint64_t *delta;       /* one command's raw deltas */
    uint64_t *snapshot;    /* scratch for markers */
    uint64_t command_sequence;
    uint32_t last_context_id;
    uint64_t context_switches;    /* commands whose context differs from the last one's */
    uint64_t submission;          /* seqno being executed */
    uint64_t submitted_ns;        /* when the driver was handed it: its driver-side events' time */
    uint32_t submission_event_id; /* its begin and end events share it */
    uint64_t submission_commands; /* commands it holds */
    uint32_t pass_index;
    const tally_indirect_reader *indirect_reader; /* of the submission, or NULL */
    /* Measured devices (measured.c): the submission's reader, the
     * measurement the next unit of work carries, and where the GPU's clock
     * of this submission lies on the engine's. */
    const tally_measurement_reader *measurement_reader;
    tally_measurement measurement;
    bool has_measurement;
    /* Inside a measured group (tally_stream_measure_group): what its first
     * command's measurement held, which the others' work is part of. */
    uint32_t group_valid;
    /* What the last unit of work's own measurement lacked (the backend's
     * execute_measured): its counters made from those are not known. A
     * group's other commands lack nothing: theirs is in the group's. */
    uint32_t unknown_measures;
    bool anchored;
    uint64_t anchor_gpu_ns, anchor_engine_ns;
    tally_render_state render;
    const tally_program_desc *program;
    uint64_t program_id;         /* tally_exec_state.program_id */
    struct tally_program *bound; /* whose program and program_id they are; NULL: none */
    uint32_t submitting_thread;  /* the submission's tid */
    bool captured;               /* the submission's tally_pending.captured */
    const char *submission_call; /* the API call that made it ("vkQueueSubmit") */
    uint64_t next_sample_ns;     /* earliest interval boundary of any sampler */
    /* The command whose span samples are being taken in (run_work), its
     * counts not yet accumulated: its cycle counters count up from its
     * beginning, so a sample inside it takes the part elapsed by then. */
    bool crossing;
    uint64_t crossing_begin_ns, crossing_cycles;
    uint32_t *cycle_slots; /* raw work counters counted in cycles (busy cycles) */
    uint32_t cycle_slot_count;
    /* Who listens (listening.c), fixed when a submission begins: work is
     * simulated only while someone does (a marker scope opening mid-way
     * counts at once, through open_scopes), and accumulated only while a
     * marker scope or a sampler can read the accumulators. */
    bool observed;      /* a report, trace, timeline reader or sampler */
    bool sampling;      /* a sampler */
    bool reader_waited; /* the submission's indirect reader's wait ran */
    bool noting;        /* TALLY_RUN_NOTE: commands are counted per door (run_note.c) */
    tally_value *report_values;
    tally_event *events; /* batch published at the end of each submission */
    uint32_t event_count, event_capacity;
};

/* The part of the run the report and trace hold (capture.c). */
struct tally_capture {
    bool windowed;                     /* any window set; false: everything is captured */
    uint64_t first_frame, last_frame;  /* inclusive; 0, UINT64_MAX: every frame */
    uint64_t begin_ns, end_ns;         /* device time of the submission; 0, UINT64_MAX */
    int trigger_signal;                /* 0: none */
    char *trigger_file;                /* NULL: none */
    atomic_bool triggered;             /* true without a trigger */
    atomic_uint_fast64_t frames_begun; /* frame boundaries the program's threads recorded */
    bool was_open;                     /* the queue thread's: as its last tick saw it */
    uint64_t next_poll_ns;             /* the queue thread's: the trigger's next look */
};

struct tally_device {
    const struct tally_backend_ops *backend;
    void *backend_state;
    const struct tally_catalogue *catalogue;
    uint64_t *constants;
    tally_device_info info;
    uint32_t raw_count;
    uint32_t elapsed_ns_slot, elapsed_cycles_slot;
    uint64_t epoch_cpu_ns;
    unsigned generation; /* the process's tally_fork_generation when it opened */
    struct tally_capture capture;

    /* Stopping (tally_device_stop): readers' waits on the GPU end by
     * wait_deadline_ns (CLOCK_MONOTONIC; UINT64_MAX: no limit), and the
     * queue thread counts the submissions it executed past it. stopped and
     * outputs belong to the thread that stops the device. */
    atomic_uint_fast64_t wait_deadline_ns;
    uint32_t executed_late;
    bool stopped;
    tally_status outputs; /* what finishing the report and trace gave */

    atomic_uint next_context_id;
    atomic_uint_fast64_t next_stream_id;
    atomic_uint next_event_id;
    atomic_uint_fast64_t published_gpu_ns; /* executor's clock, for virtual mode */
    atomic_uint sampler_count;             /* samplers open, for tally_stream_observed */
    /* Listeners of the whole device's work: the report, an active timeline
     * (a reader not paused, or the trace) and each sampler, recounted under
     * listeners_lock (tally_listening_update). A block of its own that
     * outlives the device (door/tally_door.h): front ends read it inline
     * on every call. */
    tally_listeners *listeners;
    atomic_uint open_scopes; /* marker scopes begun and not ended, of every results object */

    /* The queue: lock guards the list, stopping, drained and next_seqno.
     * Once stopping, submissions are refused; once drained (the queue
     * thread ended), nothing will complete any more and waits return. */
    pthread_mutex_t lock;
    pthread_cond_t work_ready;
    pthread_cond_t progress; /* broadcast after every submission, and when drained */
    struct tally_pending *head, *tail;
    bool stopping;
    bool drained;
    /* The queue thread waits for work with no linger left (queue.c): the
     * next submission must wake it. */
    bool queue_asleep;
    bool thread_started;
    uint64_t next_seqno;
    atomic_uint_fast64_t completed_seqno;
    pthread_t thread;
    struct tally_executor exec;

    /* Listeners: listeners_lock guards both lists and the trace writer. */
    pthread_mutex_t listeners_lock;
    struct tally_subscription *subscriptions;
    struct tally_sampler *samplers;
    atomic_bool samplers_changed;
    atomic_bool timeline_active;
    tally_trace *trace;

    /* Per-command report, written by the queue thread only. */
    tally_report *report;
    uint32_t *report_counters;
    uint32_t report_counter_count;
    /* What the report's and trace's counters read (tally_measure_bits):
     * fixed at open (measures_asked.c). */
    uint32_t report_measures;
    char *report_path, *trace_path;          /* copies, for messages at close */
    bool report_failed;                      /* a write failed; the report was dropped */
    struct command_report_rows *report_rows; /* command_report.c: the hand-off to the writer */
    struct tally_run_metadata *run_metadata; /* run_metadata.c: what the report says of the run */
    struct tally_run_note run_note;          /* run_note.c */
};

/* --- results, subscriptions, samplers -------------------------------------------- */

struct tally_slot {
    atomic_uint available;
    uint32_t passes_done;
    uint32_t context_id;
    uint64_t begin_ns, end_ns;
    bool open; /* begun and not ended: the device counts it in open_scopes */
};

struct tally_results {
    atomic_uint refs;
    struct tally_device *device;
    uint32_t counter_count;
    uint32_t *counters;
    uint32_t *pass_of;
    uint32_t pass_count;
    uint32_t slot_count;
    struct tally_slot *slots;
    pthread_mutex_t lock; /* guards the two raw arrays and passes_done */
    uint64_t *begin;      /* slot_count x raw_count */
    uint64_t *values;     /* slot_count x raw_count */
};

struct tally_subscription {
    struct tally_subscription *next;
    struct tally_device *device;
    pthread_mutex_t lock;
    tally_event *ring;
    uint32_t capacity, head, count;
    bool lost;
    bool paused; /* under the device's listeners_lock */
};

struct tally_sampler {
    struct tally_sampler *next;
    struct tally_device *device;
    uint64_t interval_ns;
    uint64_t next_ns;  /* queue thread only */
    bool has_baseline; /* queue thread only */
    pthread_mutex_t lock;
    pthread_cond_t ready;
    tally_sample *headers;
    uint64_t *raw; /* capacity x raw_count */
    uint32_t capacity, head, count;
    bool lost;
    uint64_t taken;         /* samples taken, dropped ones included */
    uint64_t last_taken_ns; /* GPU time of the latest one */
    uint64_t last_cycles;   /* its elapsed cycles: no later sample has fewer */
};

/* --- functions shared between engine files ------------------------------------------ */

/* tally_monotonic_ns: tally_door.h. */
/* The calling thread's Linux thread id (gettid); _forget: in a forked
 * child, before anything asks. */
TALLY_HIDDEN uint32_t tally_thread_id(void);
TALLY_HIDDEN void tally_thread_id_forget(void);
/* Condition variables on CLOCK_MONOTONIC. A deadline is timeout_ns from now,
 * kept in *storage, or NULL (no deadline) for UINT64_MAX. tally_cond_wait
 * returns false once the deadline has passed. */
TALLY_HIDDEN const struct timespec *tally_deadline(uint64_t timeout_ns, struct timespec *storage);
TALLY_HIDDEN void tally_cond_init(pthread_cond_t *cond);
TALLY_HIDDEN bool tally_cond_wait(pthread_cond_t *cond, pthread_mutex_t *lock,
                                  const struct timespec *deadline);
TALLY_HIDDEN void tally_copy_error(char *error, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* evaluate.c: whether a counter is one raw slot as it is (no expression, a
 * clamp that cannot change it), and which. */
TALLY_HIDDEN bool tally_counter_is_plain_raw(const struct tally_catalogue *catalogue,
                                             uint32_t counter, uint32_t *raw_index);

/* recording.c */
TALLY_HIDDEN struct tally_recording *tally_recording_create(void);
TALLY_HIDDEN void tally_recording_ref(struct tally_recording *recording);
TALLY_HIDDEN void tally_recording_unref(struct tally_recording *recording);
TALLY_HIDDEN struct tally_command *tally_recording_append(struct tally_recording *recording);
TALLY_HIDDEN void tally_recording_unappend(struct tally_recording *recording);
TALLY_HIDDEN void tally_recording_rewind(struct tally_recording *recording);
/* The program's description, once it is complete (the queue thread waits). */
TALLY_HIDDEN const tally_program_desc *tally_program_desc_when_ready(struct tally_program *program);
/* The first of TALLY_DRAW_BLOCK_DRAWS free packed draws, or NULL if out of memory. */
TALLY_HIDDEN tally_packed_draw *tally_recording_next_draws(struct tally_recording *recording);
/* Fixes the stream's open run of draws, if any: before anything else is
 * appended, or anything reads the recording. */
TALLY_HIDDEN void tally_stream_close_run(struct tally_stream *stream);
/* After a consuming submission: the stream starts over, keeping its bound state. */
TALLY_HIDDEN void tally_stream_consume(struct tally_stream *stream);
TALLY_HIDDEN void *tally_recording_store(struct tally_recording *recording, const void *data,
                                         size_t size);
TALLY_HIDDEN tally_status tally_recording_hold(struct tally_recording *recording,
                                               enum tally_held_kind kind, void *object);
TALLY_HIDDEN const struct tally_command *tally_recording_at(const struct tally_chunk **chunk,
                                                            uint32_t index);

/* context.c */
TALLY_HIDDEN void tally_context_ref(struct tally_context *context);
TALLY_HIDDEN void tally_context_unref(struct tally_context *context);

/* results.c */
TALLY_HIDDEN void tally_results_ref(struct tally_results *results);
TALLY_HIDDEN void tally_results_begin(struct tally_results *results, uint32_t slot,
                                      const uint64_t *snapshot, uint64_t gpu_ns);
TALLY_HIDDEN void tally_results_end(struct tally_results *results, uint32_t slot,
                                    const uint64_t *snapshot, uint64_t gpu_ns, uint32_t context_id,
                                    uint32_t pass_index);

/* device.c: whether the device was opened by the parent of this process (a
 * fork): its threads did not come along and its files are not this
 * process's, so the engine leaves it alone (docs/engine.md, "Exit, fork and
 * work in flight"). */
TALLY_HIDDEN bool tally_device_inherited(const struct tally_device *device);

/* queue.c */
TALLY_HIDDEN tally_status tally_queue_start(struct tally_device *device);
/* Refuses further submissions, executes what was submitted, ends the
 * thread, then wakes every waiter (drained). */
TALLY_HIDDEN void tally_queue_stop(struct tally_device *device);

/* executor.c */
TALLY_HIDDEN tally_status tally_executor_init(struct tally_device *device);
TALLY_HIDDEN void tally_executor_finish(struct tally_device *device);
TALLY_HIDDEN void tally_execute_submission(struct tally_device *device,
                                           struct tally_pending *pending);
TALLY_HIDDEN void tally_executor_idle_until(struct tally_device *device, uint64_t gpu_ns);
TALLY_HIDDEN void tally_executor_snapshot(struct tally_device *device, const uint64_t *accumulators,
                                          uint64_t gpu_ns, uint64_t *out);

/* listening.c */
TALLY_HIDDEN void tally_listening_begin_submission(struct tally_device *device);
/* The device's listeners block, or NULL without memory; retired (read as
 * 0 from then on, never freed) when the device closes. */
TALLY_HIDDEN tally_listeners *tally_listeners_create(void);
TALLY_HIDDEN void tally_listeners_retire(tally_listeners *listeners);
/* Recounts device->listeners; callers hold listeners_lock, or own the
 * device alone (while it opens). */
TALLY_HIDDEN void tally_listening_update(struct tally_device *device);
/* measures_asked.c: report_measures, once the report is open. */
TALLY_HIDDEN void tally_measures_asked_open(struct tally_device *device);
/* Whether the command about to execute has anyone to see its work. */
static inline bool tally_work_observed(struct tally_device *device)
{
    return device->exec.observed ||
           atomic_load_explicit(&device->open_scopes, memory_order_relaxed) != 0;
}
/* Whether the accumulators must follow the work: something reads them. */
static inline bool tally_work_accumulated(struct tally_device *device)
{
    return device->exec.sampling ||
           atomic_load_explicit(&device->open_scopes, memory_order_relaxed) != 0;
}

/* measured.c: the executor's half for backends that measure the real GPU. */
TALLY_HIDDEN void tally_measured_begin_submission(struct tally_device *device,
                                                  struct tally_pending *pending);
TALLY_HIDDEN void tally_measured_end_submission(struct tally_device *device);
/* A TALLY_CMD_MEASURE, _MEASURE_GROUP or _MEASURE_END command. */
TALLY_HIDDEN void tally_measured_select(struct tally_device *device, uint32_t type, uint64_t key);
/* Counts one unit of work into the executor's delta and moves the clock by
 * its measured time; returns the time it began. */
TALLY_HIDDEN uint64_t tally_measured_work(struct tally_device *device,
                                          const struct tally_work *work,
                                          const struct tally_exec_state *exec);

/* timeline.c */
TALLY_HIDDEN void tally_timeline_push(struct tally_device *device, const tally_event *event);
TALLY_HIDDEN void tally_timeline_flush(struct tally_device *device);
TALLY_HIDDEN void tally_timeline_update_active(struct tally_device *device);

/* sampler.c */
TALLY_HIDDEN void tally_samplers_advance(struct tally_device *device, uint64_t before_ns,
                                         bool inclusive);
TALLY_HIDDEN uint64_t tally_samplers_next_ns(struct tally_device *device);

/* escape.c: text from the environment or the command line made safe to show:
 * control characters (C0, DEL, C1) and bytes that are not UTF-8 as \xNN.
 * Escapes at most `most` bytes of text into out (always terminated) and
 * returns how many it read; tally_log does this to every line. */
TALLY_HIDDEN size_t tally_escape_controls(char *out, size_t size, const char *text, size_t most);
/* text in double quotes, escaped, cut with "..." to fit out; returns out. */
TALLY_HIDDEN const char *tally_quote(char *out, size_t size, const char *text);
/* util.c: reads TALLY_LOG now, so that an unknown level is said even in a process
 * that logs nothing else (once per process). */
TALLY_HIDDEN void tally_log_level_check(void);

/* counter_names.c: why `name` is none of cat's counters, as a sentence in
 * text: TALLY_ERROR_NOT_SUPPORTED for a counter the backend's whole
 * catalogue (then "here") or another backend's has, with what cat measures;
 * TALLY_ERROR_UNKNOWN_COUNTER for any other name, with the nearest ones. */
TALLY_HIDDEN tally_status tally_counter_name_explain(const tally_catalogue *cat, const char *name,
                                                     char *text, size_t size);

/* nearest_names.c: for "did you mean": the indices of the candidates
 * nearest to name (case ignored, a swap of neighbours one edit), nearest
 * first, among those close enough to be a typo of it; at most capacity
 * (and at most 8). Returns how many. */
TALLY_HIDDEN uint32_t tally_nearest_names(const char *name, const char *const *candidates,
                                          uint32_t count, uint32_t *nearest, uint32_t capacity);

/* run_note.c: whether TALLY_RUN_NOTE asks for the note (read once per
 * process); counting `commands` of a context (queue thread); saying the
 * line, once the queue ended, if the device wrote no report or trace. */
TALLY_HIDDEN bool tally_run_note_asked(void);
TALLY_HIDDEN void tally_run_note_count(struct tally_device *device,
                                       const struct tally_context *context, uint64_t commands);
TALLY_HIDDEN void tally_run_note_say(const struct tally_device *device);

/* env_options.c: TALLY_CLOCK's value (NULL: unset), and TALLY_COUNTERS's list
 * (NULL: the default set) as catalogue indices, one per column; *out is the
 * caller's to free. */
TALLY_HIDDEN tally_clock_mode tally_clock_mode_parse(const char *text);
TALLY_HIDDEN tally_granularity tally_granularity_parse(const char *text);
TALLY_HIDDEN bool tally_calibrate_parse(const char *text);
TALLY_HIDDEN tally_status tally_counter_list_parse(const tally_catalogue *catalogue,
                                                   const char *list, uint32_t **out,
                                                   uint32_t *count);

/* command_report.c: the report and trace files. Open says why it failed in
 * `error`; close returns TALLY_ERROR_IO, the reason logged, when either file
 * could not be written. */
TALLY_HIDDEN tally_status tally_command_report_open(struct tally_device *device,
                                                    const tally_device_options *options,
                                                    char *error, size_t error_size);
TALLY_HIDDEN void tally_command_report_write(struct tally_device *device,
                                             const struct tally_command *command,
                                             const struct tally_context *context,
                                             uint64_t stream_id, uint64_t begin_ns,
                                             uint64_t end_ns);
/* Queue thread: rows and trace events written so far go to their files
 * once they have waited long enough (report_ring.h); returns when that is
 * next due (CLOCK_MONOTONIC ns), UINT64_MAX if nothing waits. */
TALLY_HIDDEN uint64_t tally_command_report_tick(struct tally_device *device, uint64_t now_ns);
TALLY_HIDDEN tally_status tally_command_report_close(struct tally_device *device);

/* capture.c: the capture window. parse fills it from the options (error
 * says why not); start and end watch the trigger's signal. open_now: the
 * window may be open at that device time (listeners, and submissions'
 * stamps); takes: a row of that frame, of a submission stamped open, is
 * in it. frame_begun: a frame boundary was recorded on the program's
 * thread. tick: the queue thread follows the trigger and the time window's
 * edges; returns when it is next due (device time; UINT64_MAX: never). */
TALLY_HIDDEN tally_status tally_capture_parse(const tally_device_options *options,
                                              struct tally_capture *capture, char *error,
                                              size_t error_size);
TALLY_HIDDEN void tally_capture_start(struct tally_device *device);
TALLY_HIDDEN void tally_capture_end(struct tally_device *device);
TALLY_HIDDEN bool tally_capture_open_now(struct tally_device *device, uint64_t device_ns);
TALLY_HIDDEN bool tally_capture_takes(const struct tally_device *device, uint64_t frame);
TALLY_HIDDEN void tally_capture_frame_begun(struct tally_device *device);
TALLY_HIDDEN uint64_t tally_capture_tick(struct tally_device *device, uint64_t device_ns);

/* run_metadata.c: the run's metadata, from the device's open to its close,
 * and the report's description of it (at the report's open and close). */
TALLY_HIDDEN tally_status tally_run_metadata_open(struct tally_device *device);
TALLY_HIDDEN void tally_run_metadata_close(struct tally_device *device);
TALLY_HIDDEN tally_status tally_run_metadata_describe(struct tally_device *device,
                                                      tally_report *report);

#endif
