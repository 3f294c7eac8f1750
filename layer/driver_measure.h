/*
 * The Vulkan side of the driver backend (TALLY_BACKEND=driver): the layer
 * measures each draw and dispatch with the GPU's own queries, inside the
 * application's command buffers, and reads the results back after the
 * submission's fence on the engine's queue thread. See docs/driver.md.
 *
 *   driver_device.c      what a physical device can measure; the device's
 *                        pipelineStatisticsQuery feature; the per-device state
 *   driver_queries.c     the layer's query pools per command buffer, and the
 *                        timestamps and statistics query around each command
 *                        or, at a coarser granularity, each group of them
 *   driver_readback.c    per submission: resetting those queries before the
 *                        application's batches, copying them after, and the
 *                        engine's measurement reader
 *   driver_statistics.c  the application's own pipeline-statistics pools,
 *                        served from the layer's per-command measurements
 *   statistics_copy.c    vkCmdCopyQueryPoolResults from those pools, served
 *                        on the GPU from a shadow of each query
 */
#ifndef TALLY_LAYER_DRIVER_MEASURE_H
#define TALLY_LAYER_DRIVER_MEASURE_H

#include "layer_state.h"

#include <stdatomic.h>

/* Commands per block of the layer's query pools. */
#define LAYER_MEASURE_BLOCK 256u

/* A buffer of the layer's that shaders reach by address (statistics_copy.c). */
typedef struct layer_gpu_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceAddress address;
    void *mapped; /* host-visible and coherent */
} layer_gpu_buffer;

/* One pair of the layer's query pools: 2 timestamps and 1 statistics query
 * per command and view. */
typedef struct layer_measure_block {
    VkQueryPool timestamps; /* VK_NULL_HANDLE: the family writes none */
    VkQueryPool statistics; /* VK_NULL_HANDLE: the family counts none */
    uint32_t used;          /* statistics queries written by the recording */
    /* The statistics copied out for a served query's shadow (statistics_copy.c);
     * made when first needed. */
    layer_gpu_buffer mirror;
} layer_measure_block;

/* What a queue family of the device can measure. */
typedef struct layer_measure_family {
    VkQueryPipelineStatisticFlags statistics;
    uint32_t timestamp_valid_bits;
    bool compute; /* its command buffers may dispatch (the copy's summing pass) */
} layer_measure_family;

/* The device's means of serving copies of statistics pools (statistics_copy.c). */
typedef struct layer_copy_device {
    bool address_enabled; /* bufferDeviceAddress is on (the layer enabled it) */
    pthread_mutex_t lock; /* guards what follows */
    bool tried, ready;    /* the pipeline and the arena were made */
    VkShaderModule module;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    uint32_t memory_type;   /* host-visible, coherent */
    layer_gpu_buffer arena; /* the summing pass's parameters, one slot per dispatch */
    uint32_t *free_slots;
    uint32_t free_count;
} layer_copy_device;

/* Attached to a VkDevice whose engine measures (layer_device.measuring). */
typedef struct layer_measuring {
    uint32_t measures; /* the engine's tally_measure_bits */
    tally_granularity granularity;
    /* The application has made a query pool the layer serves (pipeline
     * statistics, or performance where the layer provides them): its
     * begin/end may come inside any render pass instance, where only a
     * group begun in the same subpass can end, so no group spans one. */
    atomic_bool serves_queries;
    atomic_bool said_simultaneous; /* the warning about simultaneous secondaries */
    atomic_bool said_unsplit;      /* the warning about a repeat it could not split */
    double timestamp_period;
    uint32_t family_count;
    layer_measure_family *families;
    object_map pool_families; /* VkCommandPool -> queue family index + 1 */
    pthread_mutex_t lock;     /* guards the readbacks below */
    struct layer_host_readback *free_readbacks;
    struct layer_measure_readback *in_flight; /* handed to the engine, not yet released */
    /* VK_EXT_calibrated_timestamps, enabled by the layer: NULL where the
     * device cannot calibrate (driver_calibration.c). */
    PFN_vkGetCalibratedTimestampsEXT calibrate;
    layer_copy_device copy;
} layer_measuring;

/* Attached to a layer_command_buffer of a measuring device. */
typedef struct layer_measured_cb {
    uint32_t family;
    uint32_t serial; /* of the recording: the high half of its keys */
    uint32_t block;  /* the block being filled */
    uint32_t block_count, block_capacity;
    layer_measure_block *blocks;
    uint32_t views; /* of the open measurement */
    bool open;      /* a measurement was begun and not yet ended */
    /* The open measurement's key went into the stream: a command carries it. */
    bool carried;
    uint64_t key;
    /* The open measurement was begun outside any render pass instance (it
     * may span one; it must end outside). */
    bool outside;
    /* The recording is inside a render pass instance (a secondary that
     * continues one is, from its start). */
    bool inside;
    /* Begun with SIMULTANEOUS_USE: a submission may hold it twice. */
    bool simultaneous;
    /* Secondaries it executes: their queries go with its submissions. */
    struct layer_command_buffer **secondaries;
    uint32_t secondary_count, secondary_capacity;
    /* Served statistics queries it ends, and copies of them (statistics_copy.c). */
    struct layer_copy_cb *copies;
} layer_measured_cb;

/* driver_device.c */
/* What the engine could measure on this physical device (tally_measure_bits). */
uint32_t layer_measurable(layer_instance *instance, VkPhysicalDevice physical);
/* The create info with pipelineStatisticsQuery enabled, in storage owned by
 * *storage (free it after the device is created); `info` itself if the
 * feature is on already or not wanted. */
const VkDeviceCreateInfo *layer_measure_device_info(const VkDeviceCreateInfo *info,
                                                    VkDeviceCreateInfo *copy, void **storage);
/* feature_chain.c: shallow copies of a pNext chain up to the structure of
 * `type`, whose copy has the VkBool32 at byte `field` set; the rest of the
 * chain stays the application's. NULL when a structure before it is not in
 * the registry, or without memory; *storage (one block) is the caller's to
 * free. */
const void *layer_chain_enabling(const void *pNext, VkStructureType type, size_t field,
                                 void **storage);
/* Sets device->measuring when the engine measures; after the device exists. */
void layer_measuring_open(layer_device *device);
void layer_measuring_close(layer_device *device);

/* driver_calibration.c */
/* A (device, CLOCK_MONOTONIC) pair of vkGetCalibratedTimestampsEXT. */
typedef struct layer_calibration {
    bool valid;
    uint64_t device_ticks, monotonic_ns, max_deviation_ns;
} layer_calibration;
/* The create info with VK_EXT_calibrated_timestamps enabled, in storage
 * owned by *storage (free it after the device is created); *calibrating
 * says whether the device can calibrate (the extension, with the DEVICE and
 * CLOCK_MONOTONIC time domains). */
const VkDeviceCreateInfo *layer_calibration_device_info(layer_instance *instance,
                                                        VkPhysicalDevice physical,
                                                        const VkDeviceCreateInfo *info,
                                                        VkDeviceCreateInfo *copy, void **storage,
                                                        bool *calibrating);
/* After layer_measuring_open: calibrates from now on where it can. */
void layer_calibration_open(layer_device *device, bool calibrating);
/* A pair, now; false where the device does not calibrate or the call failed. */
bool layer_calibration_sample(layer_device *device, layer_calibration *out);
/* A command's begin and end timestamps (ticks) in CLOCK_MONOTONIC ns, with
 * TALLY_MEASURE_TIME_MONOTONIC, where the pair can place both; else `out`
 * keeps the GPU's own times. */
void layer_calibration_place(const layer_calibration *c, uint64_t begin_ticks, uint64_t end_ticks,
                             uint64_t mask, double period, tally_measurement *out);

/* driver_queries.c */
void layer_measure_begin_recording(layer_command_buffer *cb, const VkCommandBufferBeginInfo *begin);
void layer_measure_reset(layer_command_buffer *cb);
void layer_measure_free(layer_command_buffer *cb);
void layer_measure_executes(layer_command_buffer *primary, layer_command_buffer *secondary);
/* Around the driver's draw or dispatch (the generated wrappers call these). */
void layer_measure_before(layer_command_buffer *cb);
void layer_measure_after(layer_command_buffer *cb);
/* Group boundaries at a coarser granularity, each called before the
 * command goes down: a render pass instance's begin (`spannable`: one
 * subpass, inline contents, no multiview, no suspending or resuming, so a
 * group begun outside may run through it), its next subpass and its end;
 * and what no group may straddle (vkCmdExecuteCommands, the begin and end
 * of a query the layer serves, the end of the recording). */
void layer_measure_pass_begin(layer_command_buffer *cb, bool spannable);
void layer_measure_pass_next(layer_command_buffer *cb);
void layer_measure_pass_end(layer_command_buffer *cb);
void layer_measure_split(layer_command_buffer *cb);
/* Before the application's timestamp: ends the open measurement where
 * Vulkan allows it (not one that runs through the current render pass
 * instance), saying nothing. */
void layer_measure_split_at_timestamp(layer_command_buffer *cb);
/* The application made a query pool the layer serves. */
void layer_measure_serving_queries(layer_device *device);
/* The key of a command's measurement, and back. */
static inline uint64_t layer_measure_key(uint32_t serial, uint32_t block, uint32_t index,
                                         uint32_t views)
{
    return (uint64_t)serial << 32 | (uint64_t)block << 14 | (uint64_t)(views - 1) << 9 | index;
}

/* driver_readback.c */
typedef struct layer_measure_readback layer_measure_readback;
/* The reset and copy of the queries of a submission's command buffers
 * (`count` primaries, with what they execute); NULL if none measured anything. */
layer_measure_readback *layer_measure_readback_prepare(layer_device *device, VkQueue queue,
                                                       layer_command_buffer *const *cbs,
                                                       uint32_t count);
VkCommandBuffer layer_measure_readback_before(const layer_measure_readback *rb);
VkCommandBuffer layer_measure_readback_after(const layer_measure_readback *rb);
bool layer_measure_readback_submitted(layer_measure_readback *rb, VkQueue queue);
const tally_measurement_reader *layer_measure_readback_reader(const layer_measure_readback *rb);
/* One more engine submission holds it (released through the reader). */
void layer_measure_readback_ref(layer_measure_readback *rb);
/* The engine accepted submission `seqno` with it, after its fence was submitted. */
void layer_measure_readback_note(layer_measure_readback *rb, uint64_t seqno);
void layer_measure_readback_release(layer_measure_readback *rb);
/* Waits for the engine to execute every submission whose GPU work is done,
 * without waiting for the GPU. */
void layer_measure_catch_up(layer_device *device);
void layer_measure_readbacks_destroy_all(layer_device *device);

/* driver_statistics.c */
VkResult layer_statistics_pool_create(layer_device *device, const VkQueryPoolCreateInfo *info,
                                      VkQueryPool *pool);
VkResult layer_statistics_pool_read(layer_device *device, layer_query_pool *pool, uint32_t first,
                                    uint32_t count, size_t size, void *data, VkDeviceSize stride,
                                    VkQueryResultFlags flags);

/* statistics_copy.c: vkCmdCopyQueryPoolResults from a served statistics pool.
 * Each application query has a shadow slot in a buffer of the layer's, which
 * a small compute pass fills (at the query's end, or after the render pass
 * instance it ends in) with the sum of the layer's statistics queries of its
 * commands; the application's copy becomes a vkCmdCopyBuffer from it. */
/* The create info with bufferDeviceAddress enabled, in storage owned by
 * *storage (free it after the device is created); *enabled says whether it
 * is (Vulkan 1.2 and the feature). */
const VkDeviceCreateInfo *layer_copy_device_info(layer_instance *instance,
                                                 VkPhysicalDevice physical, uint32_t api_version,
                                                 const VkDeviceCreateInfo *info,
                                                 VkDeviceCreateInfo *copy, void **storage,
                                                 bool *enabled);
/* After layer_measuring_open. */
void layer_copy_open(layer_device *device, bool address_enabled);
void layer_copy_close(layer_device *device);
/* A served statistics pool's shadow, or why its copies are not served. */
void layer_copy_pool_create(layer_device *device, layer_query_pool *pool, uint32_t query_count);
void layer_copy_pool_destroy(layer_device *device, layer_query_pool *pool);
void layer_copy_host_reset(layer_query_pool *pool, uint32_t first, uint32_t count);
void layer_copy_cmd_reset(layer_command_buffer *cb, layer_query_pool *pool, uint32_t first,
                          uint32_t count);
/* After the layer's split at the application's begin and end. */
void layer_copy_query_begin(layer_command_buffer *cb, layer_query_pool *pool, uint32_t query);
void layer_copy_query_end(layer_command_buffer *cb, layer_query_pool *pool, uint32_t query);
void layer_copy_executes(layer_command_buffer *primary, layer_command_buffer *secondary);
/* A render pass instance begins (`suspending`: it goes on in a later one);
 * after the driver's end of one. */
void layer_copy_pass_begin(layer_command_buffer *cb, bool suspending);
void layer_copy_pass_end(layer_command_buffer *cb);
/* The application's copy; false where it cannot be served. */
bool layer_copy_record(layer_command_buffer *cb, layer_query_pool *pool, uint32_t first,
                       uint32_t count, VkBuffer dst, VkDeviceSize offset, VkDeviceSize stride,
                       VkQueryResultFlags flags);
void layer_copy_cb_reset(layer_command_buffer *cb);
void layer_copy_cb_free(layer_command_buffer *cb);
void layer_copy_buffer_destroy(layer_device *device, layer_gpu_buffer *b);

#endif
