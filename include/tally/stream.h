/*
 * Streams of canonical commands and their submission to the device's queue.
 *
 * A stream belongs to a context and records commands: one per Vulkan command
 * buffer, GL context or CL queue. Each execution of a stream (and of a
 * secondary stream) starts with no program bound and the default render state
 * (no render area, one layer, one sample); what it binds lasts until its end. Recording is
 * externally synchronized (one thread at a time per stream) and takes no lock. A submission
 * executes the commands recorded so far on the queue thread; the stream may then go on recording,
 * be submitted again, or be reset, while the queue still executes what was submitted.
 */
#ifndef TALLY_STREAM_H
#define TALLY_STREAM_H

#include "tally/device.h"
#include "tally/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tally_stream tally_stream;
typedef struct tally_results tally_results;

/* The values 0 to 10 are Vulkan's VkPrimitiveTopology; the rest are GL's. */
typedef enum tally_topology {
    TALLY_TOPOLOGY_POINT_LIST = 0,
    TALLY_TOPOLOGY_LINE_LIST = 1,
    TALLY_TOPOLOGY_LINE_STRIP = 2,
    TALLY_TOPOLOGY_TRIANGLE_LIST = 3,
    TALLY_TOPOLOGY_TRIANGLE_STRIP = 4,
    TALLY_TOPOLOGY_TRIANGLE_FAN = 5,
    TALLY_TOPOLOGY_LINE_LIST_WITH_ADJACENCY = 6,
    TALLY_TOPOLOGY_LINE_STRIP_WITH_ADJACENCY = 7,
    TALLY_TOPOLOGY_TRIANGLE_LIST_WITH_ADJACENCY = 8,
    TALLY_TOPOLOGY_TRIANGLE_STRIP_WITH_ADJACENCY = 9,
    TALLY_TOPOLOGY_PATCH_LIST = 10,
    TALLY_TOPOLOGY_LINE_LOOP = 11,
    TALLY_TOPOLOGY_QUAD_LIST = 12,
    TALLY_TOPOLOGY_QUAD_STRIP = 13,
    TALLY_TOPOLOGY_POLYGON = 14,
    TALLY_TOPOLOGY_COUNT
} tally_topology;

/* Complete primitives of `vertices` vertices of one instance. */
TALLY_API uint64_t tally_topology_primitives(tally_topology topology, uint64_t vertices,
                                             uint32_t patch_control_points);

enum tally_draw_flags {
    TALLY_DRAW_INDEXED = 1u << 0,
    TALLY_DRAW_INDIRECT = 1u << 1, /* counts were read back by the front end */
};

typedef struct tally_draw {
    const char *api_name; /* the API command, e.g. "vkCmdDrawIndexed"; static storage */
    uint32_t count;       /* vertices, or indices if indexed, per instance */
    uint32_t instance_count;
    uint32_t first; /* first vertex or index */
    uint32_t first_instance;
    int32_t vertex_offset; /* added to indices */
    uint32_t flags;        /* tally_draw_flags */
    uint8_t topology;      /* tally_topology */
    uint8_t patch_control_points;
    uint8_t index_size; /* 1, 2 or 4 for indexed draws */
    /* Optional: the `count` indices of an indexed draw. They are copied into
     * the stream and run through the vertex cache model; without them the
     * profile's reuse ratio applies. */
    const void *indices;
} tally_draw;

enum tally_dispatch_flags {
    TALLY_DISPATCH_INDIRECT = 1u << 0,
};

typedef struct tally_dispatch {
    const char *api_name; /* static storage */
    uint32_t groups[3];
    uint32_t base_group[3];
    uint32_t local_size[3]; /* 0s: the bound program's compute local size */
    uint32_t flags;
} tally_dispatch;

typedef enum tally_transfer_kind {
    TALLY_TRANSFER_COPY = 0,  /* read source, write destination */
    TALLY_TRANSFER_FILL = 1,  /* write only */
    TALLY_TRANSFER_READ = 2,  /* device to host */
    TALLY_TRANSFER_WRITE = 3, /* host to device */
} tally_transfer_kind;

typedef struct tally_transfer {
    const char *api_name; /* static storage */
    tally_transfer_kind kind;
    uint64_t bytes;
} tally_transfer;

enum tally_render_flags {
    TALLY_RENDER_DEPTH_TEST = 1u << 0,
    TALLY_RENDER_DEPTH_WRITE = 1u << 1,
    TALLY_RENDER_BLEND = 1u << 2,
    TALLY_RENDER_CULL = 1u << 3,
    TALLY_RENDER_SAMPLE_SHADING = 1u << 4,
    TALLY_RENDER_RASTERIZER_DISCARD = 1u << 5,
};

typedef struct tally_render_state {
    uint32_t width, height, layers, samples;
    uint32_t color_bytes_per_pixel;  /* summed over color attachments */
    uint32_t depth_bytes_per_sample; /* 0: no depth attachment */
    uint32_t flags;                  /* tally_render_flags */
} tally_render_state;

/* Closes the stream's open run of draws. The engine does so itself at the
 * stream's next command, submission or execution as a secondary; a stream
 * that may be submitted or executed from several threads at once (a Vulkan
 * command buffer of simultaneous use) must have it closed first, by the
 * thread that recorded it, as at vkEndCommandBuffer. */
TALLY_API tally_status tally_stream_end_recording(tally_stream *stream);
/*
 * Whether work recorded into the stream now is likely to be counted: the
 * device writes a report or trace, has a timeline reader or a sampler, or a
 * marker scope is open (in this stream's recording, or executing anywhere).
 * The queue decides for itself when it executes; front ends ask this only
 * to skip costly extra reads that just counting needs (GL's index readback),
 * and work recorded while it is false is counted without them.
 */
TALLY_API bool tally_stream_observed(const tally_stream *stream);
/* One record of an indirect command's parameters as the GPU reads them from
 * memory; Vulkan and GL lay them out alike. */
typedef enum tally_indirect_layout {
    TALLY_INDIRECT_DRAW,         /* count, instance count, first, first instance */
    TALLY_INDIRECT_DRAW_INDEXED, /* count, instance count, first, vertex offset, first instance */
    TALLY_INDIRECT_DISPATCH,     /* groups x, y, z */
    TALLY_INDIRECT_LAYOUT_COUNT
} tally_indirect_layout;

/*
 * A draw or dispatch whose parameters are in GPU memory. The queue asks the
 * submission's tally_indirect_reader for the records of `key` when it
 * executes the command, and runs one draw or dispatch per record. Without a
 * reader, or when it has no records for the key, the command counts as one
 * draw or dispatch of no work, flagged indirect.
 */
typedef struct tally_indirect {
    const char *api_name; /* static storage */
    uint64_t key;         /* the front end's name for this command's records */
    tally_indirect_layout layout;
    uint8_t topology, patch_control_points, index_size; /* as in tally_draw */
} tally_indirect;

typedef struct tally_indirect_records {
    const void *data; /* `count` records, `stride` bytes apart */
    uint32_t count;
    uint32_t stride;
} tally_indirect_records;

/* How the queue reads the indirect parameters of one submission. The
 * functions run on the queue thread; the records stay valid until release. */
typedef struct tally_indirect_reader {
    /* Before the submission's first read (never, when no work of the
     * submission is simulated: see "Listening" in docs/engine.md): returns
     * once the GPU has written the parameters (or will never). */
    void (*wait)(void *user);
    /* The records of command `key`; false if they cannot be known. */
    bool (*read)(void *user, uint64_t key, tally_indirect_records *records);
    /* Once per submission accepted with the reader, after it executed. */
    void (*release)(void *user);
    void *user;
} tally_indirect_reader;

/*
 * Measured work (backends that measure the real GPU; tally_device_info's
 * `measures` says which). A front end that instruments its API's commands
 * with the GPU's own queries records tally_stream_measure(key) before the
 * work of one API command; the queue asks the submission's
 * tally_measurement_reader for what the GPU measured for `key` when it
 * executes that work. One API command that makes several draws (a
 * multi-draw, an indirect command of several records) is measured as one:
 * its first draw carries the measurement, the others none.
 */
enum tally_measure_bits {
    /* Bits 0 to 10: the pipeline statistics, in the order and with the
     * values of Vulkan's VkQueryPipelineStatisticFlagBits. */
    TALLY_MEASURE_IA_VERTICES = 1u << 0,
    TALLY_MEASURE_IA_PRIMITIVES = 1u << 1,
    TALLY_MEASURE_VS_INVOCATIONS = 1u << 2,
    TALLY_MEASURE_GS_INVOCATIONS = 1u << 3,
    TALLY_MEASURE_GS_PRIMITIVES = 1u << 4,
    TALLY_MEASURE_CLIPPER_INVOCATIONS = 1u << 5,
    TALLY_MEASURE_CLIPPER_PRIMITIVES = 1u << 6,
    TALLY_MEASURE_FS_INVOCATIONS = 1u << 7,
    TALLY_MEASURE_TESS_CONTROL_PATCHES = 1u << 8,
    TALLY_MEASURE_TESS_EVAL_INVOCATIONS = 1u << 9,
    TALLY_MEASURE_CS_INVOCATIONS = 1u << 10,
    TALLY_MEASURE_STATISTICS = (1u << 11) - 1,
    /* GPU timestamps before and after the command. */
    TALLY_MEASURE_TIME = 1u << 16,
    /* What the commands themselves say (draws, dispatches, workgroups and,
     * from the local size, compute invocations): a front end that measures
     * nothing else on the GPU opens a measuring device with this alone. */
    TALLY_MEASURE_COMMANDS = 1u << 17,
    /* In a measurement's `valid`, with TALLY_MEASURE_TIME: its begin_ns and
     * end_ns are CLOCK_MONOTONIC nanoseconds (the front end calibrated the
     * GPU's clock, e.g. with VK_EXT_calibrated_timestamps), which the
     * engine's realtime clock keeps as they are instead of placing them. */
    TALLY_MEASURE_TIME_MONOTONIC = 1u << 18,
};
#define TALLY_STATISTIC_COUNT 11

/* What the GPU measured for one API command. */
typedef struct tally_measurement {
    uint32_t valid;            /* tally_measure_bits: which of the fields below hold a value */
    uint64_t begin_ns, end_ns; /* GPU timestamps, in ns of the GPU's own clock or
                                * of CLOCK_MONOTONIC (TALLY_MEASURE_TIME_MONOTONIC) */
    uint64_t statistics[TALLY_STATISTIC_COUNT]; /* bit i of valid: statistics[i] */
} tally_measurement;

/* A moment of the GPU's clock (ns) and of CLOCK_MONOTONIC, at most
 * deviation_ns apart: what a front end's calibration gives. */
typedef struct tally_clock_pair {
    uint64_t gpu_ns, monotonic_ns, deviation_ns;
} tally_clock_pair;

/* The pair of a GPU time read between two CLOCK_MONOTONIC reads (a
 * front end's bracket around a call that reads or stamps the GPU's clock):
 * the bracket's midpoint, off by at most half its width. A front end keeps
 * the narrowest of its brackets. */
TALLY_API tally_clock_pair tally_clock_pair_bracketed(uint64_t gpu_ns, uint64_t before,
                                                      uint64_t after);

/*
 * Puts the measured times of `values` (GPU ns, not yet on CLOCK_MONOTONIC) on CLOCK_MONOTONIC with
 * `pair`, flagging them TALLY_MEASURE_TIME_MONOTONIC, for a front end that
 * read them at `read_ns` (CLOCK_MONOTONIC), after the GPU wrote them. A
 * measurement the pair would put after read_ns by more than its deviation
 * is left as it was (the pair is not to be trusted for it); within the
 * deviation, the converted times move back together to end by read_ns.
 * Returns the earliest converted begin, for tally_submission.issued_ns (0:
 * none converted).
 */
TALLY_API uint64_t tally_measurements_to_monotonic(const tally_clock_pair *pair,
                                                   tally_measurement *values, uint32_t count,
                                                   uint64_t read_ns);

/* How the queue reads the measurements of one submission; like
 * tally_indirect_reader, its functions run on the queue thread. */
typedef struct tally_measurement_reader {
    /* Before the submission's first command: returns once the GPU finished
     * the submission (or never will). */
    void (*wait)(void *user);
    /* The measurement of `key`; false if there is none. */
    bool (*read)(void *user, uint64_t key, tally_measurement *measurement);
    /* Once per submission accepted with the reader, after it executed. */
    void (*release)(void *user);
    void *user;
} tally_measurement_reader;

/* The next API command's work is measured under `key`. */
TALLY_API tally_status tally_stream_measure(tally_stream *stream, uint64_t key);
/* A coarser granularity: the API commands from the next one up to
 * tally_stream_measure_end were measured together under `key` (one query
 * around a render pass, say). The first carries the measurement; the
 * others count as what they are (DrawCalls, Dispatches, workgroups) with
 * no measured work of their own: no time, statistics 0, where the group's
 * measurement holds them. A group ends at tally_stream_measure_end, at the
 * next tally_stream_measure or _group, or with its submission. */
TALLY_API tally_status tally_stream_measure_group(tally_stream *stream, uint64_t key);
TALLY_API tally_status tally_stream_measure_end(tally_stream *stream);

TALLY_API tally_status tally_stream_create(tally_context *context, tally_stream **out);
/* The stream's pending submissions still execute. */
TALLY_API void tally_stream_destroy(tally_stream *stream);
/* Forgets every recorded command. */
TALLY_API tally_status tally_stream_reset(tally_stream *stream);
TALLY_API uint64_t tally_stream_id(const tally_stream *stream);
TALLY_API uint32_t tally_stream_command_count(const tally_stream *stream);

/* Recording. Each returns TALLY_OK, or an error for bad input or no memory;
 * a failed append records nothing. */
TALLY_API tally_status tally_stream_draw(tally_stream *stream, const tally_draw *draw);
TALLY_API tally_status tally_stream_dispatch(tally_stream *stream, const tally_dispatch *dispatch);
TALLY_API tally_status tally_stream_transfer(tally_stream *stream, const tally_transfer *transfer);
TALLY_API tally_status tally_stream_indirect(tally_stream *stream, const tally_indirect *indirect);
/* NULL unbinds. */
TALLY_API tally_status tally_stream_bind_program(tally_stream *stream, tally_program *program);
TALLY_API tally_status tally_stream_set_render_state(tally_stream *stream,
                                                     const tally_render_state *state);
/* Scope markers: the counters of the context's work between begin and end
 * go to the slot. The stream keeps the results object alive. */
TALLY_API tally_status tally_stream_marker_begin(tally_stream *stream, tally_results *results,
                                                 uint32_t slot);
TALLY_API tally_status tally_stream_marker_end(tally_stream *stream, tally_results *results,
                                               uint32_t slot);
/* Makes slots unavailable when the queue reaches this point. */
TALLY_API tally_status tally_stream_reset_results(tally_stream *stream, tally_results *results,
                                                  uint32_t first, uint32_t count);
/* Debug labels; the text is copied. Labels nest across streams of a context. */
TALLY_API tally_status tally_stream_label_push(tally_stream *stream, const char *label);
TALLY_API tally_status tally_stream_label_pop(tally_stream *stream);
/* The end of a frame of the context (a present or a buffer swap). */
TALLY_API tally_status tally_stream_frame_boundary(tally_stream *stream);
/* Executes what `secondary` holds when this command executes (Vulkan's
 * vkCmdExecuteCommands); the secondary's recording is kept alive. */
TALLY_API tally_status tally_stream_execute(tally_stream *stream, tally_stream *secondary);

enum tally_submit_flags {
    /* After submitting, the streams start over empty but for what they had
     * bound (GL and CL semantics; see tally_submit_stream). */
    TALLY_SUBMIT_CONSUME = 1u << 0,
    /* The submitting call is the API's explicit flush (glFlush, glFinish,
     * clFlush, clFinish): the timeline shows a Flush on the driver track. */
    TALLY_SUBMIT_FLUSH = 1u << 1,
};

typedef struct tally_submission {
    tally_stream *const *streams;
    uint32_t stream_count;
    uint32_t pass_index;  /* which pass of multi-pass selections this is */
    uint32_t flags;       /* tally_submit_flags */
    const char *api_name; /* the API call, e.g. "vkQueueSubmit"; static storage */
    /* Optional: where the streams' indirect commands find their parameters.
     * Copied; its release runs once the submission executed, and never if
     * tally_submit fails. */
    const tally_indirect_reader *indirect_reader;
    /* Optional: what the GPU measured of the streams' measured commands;
     * copied and released like the indirect reader. */
    const tally_measurement_reader *measurement_reader;
    /* Optional (0: none): a CLOCK_MONOTONIC time, in ns, no later than the
     * streams' work began on the GPU, where that is earlier than this call:
     * the Vulkan layer's time from just before it handed the batches to the
     * driver (which may run them before tally_submit is called), GL's and
     * OpenCL's earliest calibrated time of a recording they submit only once
     * they read its measurements, after the GPU ran it. In realtime mode the
     * engine's clock starts the submission there, so measured times
     * (TALLY_MEASURE_TIME_MONOTONIC) are not pushed after the submit call. */
    uint64_t issued_ns;
} tally_submission;

/* Queues the streams for execution, in order; *seqno (may be NULL) receives
 * the submission's sequence number, which increases by one per submission. */
TALLY_API tally_status tally_submit(tally_device *device, const tally_submission *submission,
                                    uint64_t *seqno);
/*
 * Submits one stream consumed, as GL and CL do at each submission point: its
 * recording is queued (TALLY_SUBMIT_CONSUME is implied) and the stream starts
 * over, still bound to the program and render state it last recorded, which
 * its next recording binds again first, so a front end never rebinds. If the
 * submission is refused, the recording is dropped all the same: work
 * recorded before one submission point never runs with the next.
 */
TALLY_API tally_status tally_submit_stream(tally_device *device, tally_stream *stream,
                                           uint32_t flags, const char *api_name, uint64_t *seqno);
/*
 * tally_submit_stream for a front end that read what the GPU measured before
 * submitting (GL and OpenCL read their queries and event profiles on the
 * application's thread): key k of the stream's tally_stream_measure reads
 * measurements[k] where its `valid` is not 0. The array (count entries,
 * malloc'ed) is the engine's from this call on, whatever it returns.
 * issued_ns: tally_submission.issued_ns (0: none).
 */
TALLY_API tally_status tally_submit_stream_measured(tally_device *device, tally_stream *stream,
                                                    uint32_t flags, const char *api_name,
                                                    tally_measurement *measurements, uint32_t count,
                                                    uint64_t issued_ns, uint64_t *seqno);
/* The highest sequence number whose execution finished. */
TALLY_API uint64_t tally_completed_seqno(tally_device *device);
/* Waits until `seqno` finished or timeout_ns passed (UINT64_MAX: forever),
 * or the device stopped (tally_device_stop) without executing it. */
TALLY_API tally_status tally_wait_seqno(tally_device *device, uint64_t seqno, uint64_t timeout_ns);
TALLY_API tally_status tally_device_wait_idle(tally_device *device);

#ifdef __cplusplus
}
#endif

#endif
