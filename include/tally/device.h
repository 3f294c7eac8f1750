/*
 * Devices, contexts and programs.
 *
 * A device is one instance of a backend: a simulated (or real) GPU with one
 * queue that executes submitted streams on its own thread. Every front door
 * of a process shares one device (tally_device_acquire_shared), as programs
 * share one GPU. A context is one API client of the device (a VkDevice, a GL
 * context, a CL queue): markers measure the work of their own context.
 */
#ifndef TALLY_DEVICE_H
#define TALLY_DEVICE_H

#include "tally/catalogue.h"
#include "tally/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tally_device tally_device;
typedef struct tally_context tally_context;
typedef struct tally_program tally_program;

typedef enum tally_clock_mode {
    /* The GPU clock follows CLOCK_MONOTONIC while idle: a submission starts no
     * earlier than the CPU time it was submitted at. Timestamps correlate with
     * CPU time; elapsed times of scopes that span idle time vary run to run. */
    TALLY_CLOCK_REALTIME = 0,
    /* The GPU clock advances only by executed work: every value, timestamps
     * included, is the same on every run. */
    TALLY_CLOCK_VIRTUAL = 1,
} tally_clock_mode;

/* How finely a backend that measures the real GPU brackets the work with
 * the GPU's own queries (TALLY_GRANULARITY; docs/driver.md). Simulated
 * backends add no queries: for them it changes nothing. */
typedef enum tally_granularity {
    TALLY_GRANULARITY_COMMAND = 0,        /* each draw and dispatch ("command") */
    TALLY_GRANULARITY_RENDER_PASS = 1,    /* each subpass, each run of dispatches ("render-pass") */
    TALLY_GRANULARITY_COMMAND_BUFFER = 2, /* as few as the API allows ("command-buffer") */
} tally_granularity;

typedef struct tally_device_options {
    const char *backend;      /* NULL: "simgpu" */
    const char *profile_path; /* NULL: the backend's embedded default profile */
    tally_clock_mode clock;
    const char *report_path;     /* per-command report (.csv or .json); NULL: none */
    const char *trace_path;      /* Chrome trace-event JSON timeline; NULL: none */
    const char *report_counters; /* comma-separated symbols; NULL: a default set */
    /* For a backend that measures the real GPU: what the front end opening
     * the device can measure there (tally_measure_bits, tally/stream.h); the
     * catalogue offers only counters these give. 0: everything the backend
     * knows. Ignored by simulated backends. */
    uint32_t measurable;
    tally_granularity granularity; /* for a backend that measures the real GPU */
    /* Whether granularity was asked for (TALLY_GRANULARITY set): where it
     * was not, each front end uses its own default (docs/driver.md). */
    bool granularity_given;
    /* TALLY_CALIBRATE=0: front ends place the GPU's timestamps by the
     * correlation (docs/driver.md, "GPU time") instead of calibrating them
     * to CLOCK_MONOTONIC. */
    bool uncalibrated;
    /* What part of the run the report and trace hold (docs/reports.md,
     * "Capturing part of a run"); NULL: all of it. frames: "A-B", "A-" or
     * "A", counted from 0, inclusive. delay, duration: "2s", "500ms" from
     * the device's open. trigger: "SIGUSR1" or "SIGUSR2" (each one toggles
     * capture, which starts off), or an absolute path (capture while the
     * file exists). */
    const char *capture_frames, *capture_delay, *capture_duration, *capture_trigger;
} tally_device_options;

/*
 * Options from the environment (read with secure_getenv): TALLY_BACKEND,
 * TALLY_PROFILE, TALLY_CLOCK ("realtime" or "virtual"), TALLY_OUTPUT,
 * TALLY_TRACE, TALLY_COUNTERS, TALLY_GRANULARITY ("command", "render-pass"
 * or "command-buffer"), TALLY_CALIBRATE ("1", the default, or "0"),
 * TALLY_CAPTURE_FRAMES, TALLY_CAPTURE_DELAY, TALLY_CAPTURE_DURATION and
 * TALLY_CAPTURE_TRIGGER. The strings point into the environment.
 */
TALLY_API void tally_device_options_from_env(tally_device_options *options);
/* Whether the options' capture window is one tally_device_open takes;
 * if not, error says why (for a tool that checks before it starts a
 * program). */
TALLY_API bool tally_capture_options_valid(const tally_device_options *options, char *error,
                                           size_t error_size);

/* Opens a device. On failure *out is NULL and, when error is not NULL, a
 * sentence saying why is written into it (at most error_size bytes). */
TALLY_API tally_status tally_device_open(const tally_device_options *options, tally_device **out,
                                         char *error, size_t error_size);
/* Drains the queue, finishes the report and trace files, frees everything.
 * Objects created from the device must be released first. */
TALLY_API void tally_device_close(tally_device *device);
/* tally_device_close, saying whether the report and trace files were
 * written: TALLY_ERROR_IO (each failure logged with its path and reason)
 * if one was not, so a tool does not announce a file it failed to write. */
TALLY_API tally_status tally_device_finish(tally_device *device);
/*
 * Ends the device's work but frees nothing, for a process that exits while
 * other threads may still be inside a front door's call: the queue refuses
 * submissions from now on (TALLY_ERROR_INVALID_STATE), executes what was
 * submitted before, ends its thread and the report's, and finishes the
 * report and trace files (the result is tally_device_finish's). After that,
 * waits for completion return at once (TALLY_TIMEOUT for what never
 * executed). Every wait on the GPU that the queue thread runs for a front
 * end's reader ends within timeout_ns in all (UINT64_MAX: no limit); what
 * had not finished by then is reported without it, and logged once.
 * tally_device_finish frees the device afterwards; neither runs
 * concurrently with the other or itself. Neither touches a device this
 * process inherited through fork(): its threads are not here and its files
 * are its parent's.
 */
TALLY_API tally_status tally_device_stop(tally_device *device, uint64_t timeout_ns);
/* For a front end's reader that waits on the GPU on the queue thread
 * (tally_indirect_reader, tally_measurement_reader): the CLOCK_MONOTONIC
 * time, in ns, by which the wait must end; UINT64_MAX while the device is
 * not stopping under a time limit. */
TALLY_API uint64_t tally_device_wait_deadline_ns(const tally_device *device);

/*
 * The process-wide device of the front doors, opened from the environment on
 * first use, and counted by reference. Its reports are finished when the last
 * reference is released or, failing that, when the process ends: at exit,
 * or when SIGINT, SIGTERM or SIGHUP ends it (a signal the program leaves at
 * its default action is taken, the files are finished on a thread of
 * tally's, and the signal then ends the program), or at _exit where a
 * preload shim sees it. Then it stops (tally_device_stop, waits on the GPU
 * limited to a second) and is freed only if no reference is left. A forked
 * child does not share its parent's: the first front door that asks there
 * opens its own.
 */
TALLY_API tally_status tally_device_acquire_shared(tally_device **out);
TALLY_API void tally_device_release_shared(tally_device *device);
/* The same device, opened (by the first front door to ask) with `measurable`
 * as tally_device_options.measurable; later callers share it as it is. */
TALLY_API tally_status tally_device_acquire_shared_measuring(uint32_t measurable,
                                                             tally_device **out);
/* For a front door that holds work of its own (recorded, not yet
 * submitted): hook runs once when the process ends, before the shared device
 * stops, on the thread that ends it (the exiting one, or tally's own for a
 * signal). At most 8; false when full. A forked child forgets its parent's
 * hooks. */
TALLY_API bool tally_device_on_shared_stop(void (*hook)(void));
/* Finishes the shared device now, as exit would: for a program about to
 * end without exit handlers (_exit). Does nothing in a process that did not
 * open it (a vfork child). */
TALLY_API void tally_device_exit_shared(void);

typedef struct tally_device_info {
    const char *backend;
    const char *name;
    tally_clock_mode clock;
    uint64_t core_clock_hz;
    uint64_t timestamp_frequency_hz;
    /* What front ends should measure with the GPU's own queries for each
     * draw and dispatch (tally_measure_bits); 0: nothing (a simulated GPU),
     * and the front ends add no queries. */
    uint32_t measures;
    /* How finely front ends group those measurements (the options'). */
    tally_granularity granularity;
    bool granularity_given; /* the options': else a front end's own default */
    /* Whether front ends put measured GPU timestamps on CLOCK_MONOTONIC
     * where they can (not the options' uncalibrated). */
    bool calibrate;
} tally_device_info;

TALLY_API void tally_device_get_info(const tally_device *device, tally_device_info *info);
TALLY_API const tally_catalogue *tally_device_catalogue(const tally_device *device);
/* Of `measures`, what the device's own listeners read now: the inputs of
 * the report's and trace's counters, and everything while a sampler or a
 * timeline reader is open. A front end whose queries cost per statistic
 * (GL) measures only these, and what its own scopes' counters read. */
TALLY_API uint32_t tally_device_measures_asked(const tally_device *device);
/* Of `measures`, what the given catalogue counters read. */
TALLY_API uint32_t tally_device_measures_of(const tally_device *device, const uint32_t *counters,
                                            uint32_t count);
/* Values of the catalogue's constants for this device, in catalogue order. */
TALLY_API const uint64_t *tally_device_constants(const tally_device *device);
/*
 * Whether anything listens to the whole device's work now: a per-command
 * report or trace, a timeline reader that is not paused, or a sampler.
 * Markers are not counted: a scope counts the work of its own context, so a
 * front end knows its own. A few loads, for front ends that skip recording
 * work nobody would see as it is issued (the GL and OpenCL shims): a
 * listener that starts later sees what is issued after it started.
 */
TALLY_API bool tally_device_listening(const tally_device *device);

/*
 * Clocks. GPU time is in nanoseconds since the device opened; in realtime mode
 * CLOCK_MONOTONIC = epoch + GPU time exactly.
 */
TALLY_API uint64_t tally_device_gpu_time_ns(tally_device *device);
/* The GPU time by which everything submitted so far has run: the clock now,
 * or the executor's clock when the queue ran ahead of it (virtual mode). */
TALLY_API uint64_t tally_device_covered_gpu_ns(tally_device *device);
/* Adds a point to a counter track of the device's trace (TALLY_TRACE, or the
 * options' trace_path), so a tool's own series shows beside the GPU's work.
 * TALLY_OK and nothing written when no trace is being written. */
TALLY_API tally_status tally_device_trace_counter(tally_device *device, const char *track,
                                                  uint64_t gpu_ns, double value);
/* A simultaneous pair: GPU ns and CLOCK_MONOTONIC ns. correlation_ns (may be
 * NULL) receives the width of the window in which the pair was read, which is
 * 0 because both derive from one clock read. */
TALLY_API void tally_device_gpu_cpu_timestamps(tally_device *device, uint64_t *gpu_ns,
                                               uint64_t *cpu_ns, uint64_t *correlation_ns);
/* GPU timestamp ticks (at timestamp_frequency_hz) for a GPU time, and back. */
TALLY_API uint64_t tally_device_ns_to_ticks(const tally_device *device, uint64_t gpu_ns);
TALLY_API uint64_t tally_device_ticks_to_ns(const tally_device *device, uint64_t ticks);

/* Contexts. api_name names the client in reports and traces ("vulkan"). */
TALLY_API tally_status tally_context_create(tally_device *device, const char *api_name,
                                            tally_context **out);
/* Pending work of the context still executes; its streams must be destroyed. */
TALLY_API void tally_context_destroy(tally_context *context);
TALLY_API uint32_t tally_context_id(const tally_context *context);
/* The real driver the context's API runs on (Vulkan's device name and
 * driver info, GL's GL_RENDERER and GL_VERSION, OpenCL's device name and
 * driver version), for the report's metadata: said once per driver. */
TALLY_API tally_status tally_context_set_driver(tally_context *context, const char *name,
                                                const char *version);
TALLY_API tally_device *tally_context_device(const tally_context *context);

/* Programs: the static profile of each shader stage of a pipeline. */
typedef enum tally_stage {
    TALLY_STAGE_VERTEX = 0,
    TALLY_STAGE_TESS_CONTROL = 1,
    TALLY_STAGE_TESS_EVAL = 2,
    TALLY_STAGE_GEOMETRY = 3,
    TALLY_STAGE_FRAGMENT = 4,
    TALLY_STAGE_COMPUTE = 5,
    TALLY_STAGE_COUNT
} tally_stage;

/* Static instruction counts of one stage, one invocation's straight-line path. */
typedef struct tally_instruction_mix {
    uint32_t alu;
    uint32_t tex;
    uint32_t load;
    uint32_t store;
    uint32_t branch;
} tally_instruction_mix;

typedef struct tally_stage_profile {
    bool present;
    tally_instruction_mix mix;
    /* vertex: attribute bytes per vertex (0: the profile's default) */
    uint32_t input_bytes;
    /* tessellation control: output control points (0: the input count) */
    uint32_t output_vertices;
    /* geometry: invocations per input primitive (0: 1) and primitives
     * emitted per invocation (0: 1) */
    uint32_t invocations;
    uint32_t output_primitives;
    /* fragment: the shader may discard */
    bool discards;
    /* compute: the local size (0: 1) */
    uint32_t local_size[3];
} tally_stage_profile;

typedef struct tally_program_desc {
    const char *name; /* for reports; copied; may be NULL */
    tally_stage_profile stages[TALLY_STAGE_COUNT];
    /* The stages' code hashed (tally_hash_bytes), so that a report names
     * the same shaders with the same hash in every run; 0: not known. */
    uint64_t shader_hash;
} tally_program_desc;

/* Programs are counted by reference: streams that bind one keep it alive. */
TALLY_API tally_status tally_program_create(tally_device *device, const tally_program_desc *desc,
                                            tally_program **out);
TALLY_API void tally_program_ref(tally_program *program);
TALLY_API void tally_program_release(tally_program *program);
/* A program whose description comes later, from any thread: a front end
 * that works it out off the program's thread (the GL shim compiles GLSL on a
 * worker) creates it pending and completes it once. Streams bind it at once;
 * the queue waits for the description before it executes a command bound to
 * it, so a pending program that is never completed stalls the device. */
TALLY_API tally_status tally_program_create_pending(tally_device *device, const char *name,
                                                    tally_program **out);
/* The name a report gives the program from now on (the API object's debug
 * name or label, set by the program after creating it); copied. Any
 * thread; NULL or "" goes back to the name it was created with. */
TALLY_API tally_status tally_program_set_label(tally_program *program, const char *label);
/* A 64-bit hash of bytes (XXH3), for tally_program_desc.shader_hash: seed
 * chains several pieces of code (the previous piece's hash). */
TALLY_API uint64_t tally_hash_bytes(const void *bytes, size_t size, uint64_t seed);
/* Gives a pending program its description (its name stays the pending one's).
 * TALLY_ERROR_INVALID_ARGUMENT if the program is not pending. */
TALLY_API tally_status tally_program_complete(tally_program *program,
                                              const tally_program_desc *desc);

/* Log lines go to stderr, prefixed "tally: ", at or above TALLY_LOG's level
 * (error, warn, info, debug; default warn). */
typedef enum tally_log_level {
    TALLY_LOG_ERROR = 0,
    TALLY_LOG_WARN = 1,
    TALLY_LOG_INFO = 2,
    TALLY_LOG_DEBUG = 3,
} tally_log_level;

TALLY_API void tally_log(tally_log_level level, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Text from outside the program (the environment, a command line) made safe
 * to show on a terminal as tally_log shows it: control characters and bytes
 * that are not UTF-8 as \xNN. At most size bytes go to out, terminated. */
TALLY_API void tally_escape_text(char *out, size_t size, const char *text);

#ifdef __cplusplus
}
#endif

#endif
