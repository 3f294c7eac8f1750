/*
 * The layer's records of Vulkan objects. Dispatchable objects are found by
 * their dispatch key (the first pointer of the handle, shared by a device and
 * its queues and command buffers, or by an instance and its physical
 * devices); command buffers and non-dispatchable objects by handle value in
 * their device's maps. Records are removed before a destroy or free goes down.
 */
#ifndef TALLY_LAYER_STATE_H
#define TALLY_LAYER_STATE_H

#include "object_map.h"
#include "render_state.h"
#include "vk_tables.h"

#include <tally/tally.h>
#include "tally_door.h"
#include <vulkan/vk_layer.h>

/* Attached to a VkInstance (and its physical devices). */
typedef struct layer_instance {
    VkInstance handle;
    struct layer_instance_dispatch dispatch;
    PFN_vkGetInstanceProcAddr next_gipa;
    uint32_t api_version; /* what the application asked for */
    layer_extension_set extensions;
    /* The KHR names of the queries, called down when the application calls
     * them (the core names are invalid on a 1.0 instance). */
    PFN_vkGetPhysicalDeviceFeatures2KHR features2_khr;
    PFN_vkGetPhysicalDeviceProperties2KHR properties2_khr;
    /* The counter engine, held from the first question about
     * VK_KHR_performance_query to the instance's end, so that what the layer
     * advertises stays servable (performance_query_physical.c). */
    pthread_mutex_t engine_lock;
    bool engine_asked;
    tally_device *engine; /* NULL: it could not be opened */
} layer_instance;

/* Attached to a VkDevice (and its queues and command buffers). */
typedef struct layer_device {
    VkDevice handle;
    VkPhysicalDevice physical_device;
    layer_instance *instance;
    struct layer_device_dispatch dispatch;
    PFN_vkGetDeviceProcAddr next_gdpa;
    PFN_vkSetDeviceLoaderData set_loader_data;
    uint32_t api_version;           /* effective: min(application, physical device) */
    layer_extension_set extensions; /* the instance's and the device's */
    tally_device *engine;           /* the process's shared engine device; NULL: not counting */
    tally_context *context;
    /* Queue-level events (presents, queue labels) go through this stream,
     * under queue_lock; queue submission is externally synchronized per
     * queue but a device may have several queues. */
    tally_stream *queue_stream;
    pthread_mutex_t queue_lock;
    object_map command_buffers; /* VkCommandBuffer -> layer_command_buffer */
    object_map command_pools;   /* VkCommandPool -> layer_command_pool */
    object_map shader_modules;  /* VkShaderModule -> layer_shader_module */
    object_map pipelines;       /* VkPipeline -> layer_pipeline */
    object_map render_passes;   /* VkRenderPass -> layer_render_pass */
    object_map images;          /* VkImage -> layer_image */
    object_map image_views;     /* VkImageView -> layer_image */
    object_map framebuffers;    /* VkFramebuffer -> layer_framebuffer */
    object_map query_pools;     /* VkQueryPool -> layer_query_pool (the layer's own) */
    object_map buffers;         /* VkBuffer -> layer_buffer */
    object_map queues;          /* VkQueue -> its family index + 1 */
    /* Indirect parameters are copied back through these (indirect_readback.c). */
    pthread_mutex_t readback_lock;
    struct layer_host_readback *free_readbacks; /* host_readback.h */
    /* Shader stages the application enabled beyond vertex, fragment and
     * compute: the stages that may have written indirect parameters. */
    bool geometry_shader, tessellation_shader;
    /* VK_KHR_performance_query: the layer provides it (the driver has none),
     * and the application enabled it with performanceCounterQueryPools. */
    bool performance_query_emulated;
    bool performance_query_enabled;
    _Atomic uint64_t last_seqno; /* of the latest engine submission */
    /* The engine measures the GPU (driver backend): driver_measure.h. */
    struct layer_measuring *measuring;
} layer_device;

/* Attached to a performance query pool the layer made; the driver never sees it. */
typedef struct layer_query_pool {
    tally_results *results; /* one slot per query */
    /* Nonzero: the application's pipeline-statistics pool, served from the
     * layer's measurements (driver_statistics.c); zero: a performance pool. */
    VkQueryPipelineStatisticFlags statistics;
    /* A statistics pool's shadow on the GPU, which its copies read
     * (statistics_copy.c); NULL: they are not served. */
    struct layer_gpu_buffer *shadow;
    uint32_t counter_count;
    const tally_catalogue *catalogue;
} layer_query_pool;

/* Attached to a VkCommandPool: the command buffers allocated from it. */
typedef struct layer_command_pool {
    VkCommandPool handle;
    uint32_t count, capacity;
    VkCommandBuffer *command_buffers;
} layer_command_pool;

/* An indirect draw or dispatch recorded into a command buffer: where the GPU
 * reads its parameters. */
typedef struct layer_indirect_command {
    uint64_t key; /* the engine command's: the recording's serial, then the index */
    VkBuffer buffer;
    VkDeviceSize offset;
    VkBuffer count_buffer; /* VK_NULL_HANDLE: max_count records */
    VkDeviceSize count_offset;
    uint32_t max_count, stride, record_size;
} layer_indirect_command;

/* The indirect commands a primary's submission must read back: its own and
 * those of the secondaries it executes. */
typedef struct layer_indirect_list {
    layer_indirect_command *items;
    uint32_t count, capacity;
    uint32_t serial; /* of this recording; 0 until its first indirect command */
} layer_indirect_list;

/* Attached to a VkCommandBuffer: its engine stream and the state draws need. */
typedef struct layer_command_buffer {
    /* What every recorded draw reads (handle, device, ready_lane,
     * assembly) comes first, within 32 bytes: one cache line, two at most. */
    /* The command buffer this record is for now. Records are recycled,
     * never freed (command_buffers.c): a thread's cached record is its
     * command buffer's for as long as this is that handle. Atomic: threads
     * whose cache points here read it while another recycles the record. */
    _Atomic(VkCommandBuffer) handle;
    layer_device *device;
    /* The lane a plain draw appends to (layer_try_draw), or
     * layer_lane_never_ready when something else is due first: no stream,
     * a measured recording, or a program to bind. layer_command_buffer_ready
     * keeps it after every change of the four fields it depends on. */
    tally_draw_lane *ready_lane;
    /* The input-assembly state, laid out as a tally_packed_draw's last 8
     * bytes hold it (vertex_offset and flags 0 here), so that a draw makes
     * them with one load and an OR (layer_try_draw). */
    union {
        struct {
            uint8_t draw_fields[5]; /* vertex_offset and flags: always 0 */
            uint8_t topology;
            uint8_t patch_control_points;
            uint8_t index_size; /* bytes, of the bound index buffer's type */
        };
        uint64_t assembly;
    };
    tally_stream *stream;            /* NULL when not counting */
    tally_draw_lane *draw_lane;      /* the stream's */
    tally_program *graphics_program; /* bound by the application */
    tally_program *stream_program;   /* what the stream has bound now */
    /* The queries around its commands when the engine measures (driver_measure.h). */
    struct layer_measured_cb *measured;
    /* The rest: */
    VkCommandPool pool;
    tally_program *compute_program;
    VkPipeline compute_pipeline; /* the application's, bound again after the layer's pass */
    layer_indirect_list indirect;
    /* Render state (render_state.c): a secondary's inheritance info counts. */
    VkCommandBufferLevel level;
    layer_render_target render;
    struct layer_command_buffer *next_spare; /* while recycled (command_buffers.c) */
} layer_command_buffer;

/* The ready lane of a command buffer that is not: one with no room (next
 * == end), so that a draw's one test of room covers both. */
extern tally_draw_lane layer_lane_never_ready;

static inline void layer_command_buffer_ready(layer_command_buffer *cb)
{
    bool plain = cb->stream && !cb->measured && cb->stream_program == cb->graphics_program;
    cb->ready_lane = plain ? cb->draw_lane : &layer_lane_never_ready;
}

/* Attached to a VkShaderModule: a copy of its SPIR-V. */
typedef struct layer_shader_module {
    size_t word_count;
    uint32_t words[];
} layer_shader_module;

/* Attached to a VkPipeline. */
typedef struct layer_pipeline {
    VkPipelineBindPoint bind_point;
    tally_program *program;
    bool dynamic_topology;
    uint8_t topology;
    uint8_t patch_control_points;
    /* Scissor 0 when the pipeline fixes it: a secondary's render area (render_state.c). */
    bool static_scissor;
    VkExtent2D scissor;
} layer_pipeline;

/* The dispatch key of a dispatchable handle. */
static inline uint64_t layer_dispatch_key(const void *handle)
{
    return (uint64_t)(uintptr_t)(*(void *const *)handle);
}

layer_instance *layer_instance_of(const void *dispatchable);
layer_device *layer_device_of(const void *dispatchable);
void layer_instance_register(layer_instance *instance);
void layer_instance_unregister(layer_instance *instance);
void layer_device_register(layer_device *device);
void layer_device_unregister(layer_device *device);

static inline bool layer_extension_enabled(const layer_extension_set *set, uint32_t index)
{
    return index < LAYER_EXTENSION_COUNT && (set->bits[index / 64] >> (index % 64)) & 1;
}

static inline void layer_extension_enable(layer_extension_set *set, const char *name)
{
    uint32_t index = layer_extension_index(name);
    if (index < LAYER_EXTENSION_COUNT)
        set->bits[index / 64] |= 1ull << (index % 64);
}

/* The entry point of that name the layer intercepts, or NULL. */
const layer_entry_point *layer_entry_point_find(const char *name);

/* Command buffer records (command_buffers.c). */
layer_command_buffer *layer_command_buffer_find(layer_device *device, VkCommandBuffer handle);

/* Every draw looks up its command buffer's record, and a thread records
 * into one command buffer at a time: each thread keeps its last answer, a
 * record, trusted while the record's handle is the one asked for. Records
 * are never freed, only recycled for later command buffers (a freed one's
 * handle becomes LAYER_NO_COMMAND_BUFFER), so a cached record is always
 * memory to read, and a handle the driver gives back for a new command
 * buffer reaches the record made for that one. A new thread's cache holds a
 * record of no command buffer. */
#define LAYER_NO_COMMAND_BUFFER ((VkCommandBuffer)(uintptr_t)1) /* no handle is odd */
extern __thread layer_command_buffer *layer_last_command_buffer
    __attribute__((tls_model("initial-exec")));
/* The record of a command buffer, through the device's map. NULL if the
 * layer has none (its allocation failed, or the handle is not one). */
layer_command_buffer *layer_command_buffer_lookup(VkCommandBuffer handle);

/* The thread's cached record of the command buffer, or NULL (look it up):
 * one load of the thread's record and one compare of its handle. */
static inline layer_command_buffer *layer_command_buffer_cached(VkCommandBuffer handle)
{
    layer_command_buffer *last = layer_last_command_buffer;
    if (!last) /* never: said to the compiler, it spares each draw a test */
        __builtin_unreachable();
    return atomic_load_explicit(&last->handle, memory_order_relaxed) == handle ? last : NULL;
}

static inline layer_command_buffer *layer_command_buffer_of(VkCommandBuffer handle)
{
    layer_command_buffer *last = layer_last_command_buffer;
    if (__builtin_expect(atomic_load_explicit(&last->handle, memory_order_relaxed) == handle, 1))
        return last;
    return layer_command_buffer_lookup(handle);
}
/* The device of a command buffer, and its record (NULL if the layer has
 * none), in the one cached lookup of layer_command_buffer_of. */
static inline layer_device *layer_command_buffer_device(VkCommandBuffer handle,
                                                        layer_command_buffer **record)
{
    *record = layer_command_buffer_of(handle);
    return *record ? (*record)->device : layer_device_of(handle);
}
/* Drops every record of the device's command buffers and pools. */
void layer_command_buffers_destroy_all(layer_device *device);

/* VK_KHR_performance_query (performance_query_physical.c). */
/* Whether the driver below has the extension itself. */
bool layer_performance_query_native(layer_instance *instance, VkPhysicalDevice physical);
/* Whether the layer provides it: the driver lacks it and the counter engine
 * opened (if it cannot, the layer says why once and offers nothing). */
bool layer_performance_query_provided(layer_instance *instance, VkPhysicalDevice physical);
/* Lets go of what the instance holds for the extension. */
void layer_performance_query_instance_end(layer_instance *instance);
/* The application's device create info without the extension's name and
 * feature structure, in storage owned by `copy`; returns what to pass down. */
typedef struct layer_device_create_copy {
    VkDeviceCreateInfo info;
    const char **extension_names;
    void *chain; /* the copied pNext structures, one allocation */
} layer_device_create_copy;
const VkDeviceCreateInfo *layer_strip_performance_query(const VkDeviceCreateInfo *info,
                                                        layer_device_create_copy *copy,
                                                        bool *requested);
void layer_device_create_copy_free(layer_device_create_copy *copy);
layer_query_pool *layer_query_pool_find(layer_device *device, VkQueryPool pool);

/* pipelines.c: the program's debug name for a pipeline (VK_EXT_debug_utils,
 * VK_EXT_debug_marker) names its rows; NULL or "" gives back its handle. */
void layer_pipeline_name(layer_device *device, uint64_t handle, const char *name);
void layer_query_pools_destroy_all(layer_device *device);

/* Attached to a VkBuffer: what copying its indirect parameters needs. */
typedef struct layer_buffer {
    VkDeviceSize size;
} layer_buffer;

/* Indirect commands (indirect_commands.c). */
/* Remembers an indirect command of the command buffer; its engine key, or 0 if out of memory. */
uint64_t layer_indirect_add(layer_command_buffer *cb, const layer_indirect_command *command);
/* A primary executing a secondary reads back the secondary's commands too. */
void layer_indirect_inherit(layer_command_buffer *primary, const layer_command_buffer *secondary);
void layer_indirect_forget(layer_indirect_list *list);
void layer_buffers_destroy_all(layer_device *device);

/* Reading indirect parameters back at submission (indirect_readback.c). */
typedef struct layer_readback layer_readback;
/* A copy of the indirect parameters of these command buffers, recorded into
 * a command buffer of the layer's to run after them on `queue`; NULL when
 * they have none or it cannot be made. */
layer_readback *layer_readback_prepare(layer_device *device, VkQueue queue,
                                       const layer_command_buffer *const *command_buffers,
                                       uint32_t count);
VkCommandBuffer layer_readback_command_buffer(const layer_readback *readback);
/* After the driver took the submission with the copy: submits the signal of
 * the readback's fence; false if that failed (nothing can be read back). */
bool layer_readback_submitted(layer_readback *readback, VkQueue queue);
/* What each engine submission of it reads its indirect parameters through. */
const tally_indirect_reader *layer_readback_reader(const layer_readback *readback);
/* One more engine submission holds it (released through the reader). */
void layer_readback_ref(layer_readback *readback);
/* Ends the submitting thread's use: after the engine submissions. */
void layer_readback_release(layer_readback *readback);
void layer_readbacks_destroy_all(layer_device *device);

/* Pipelines and shader modules (pipelines.c). */
/* Pipelines and shader modules (pipelines.c); render passes and the images
 * they draw into are render_state.c's (render_state.h). */
void layer_pipelines_destroy_all(layer_device *device);

#endif
