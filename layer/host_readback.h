/*
 * What every readback of the layer's is made of, whatever it copies: a
 * host-visible buffer carved from one block of host-coherent memory, one
 * or two primary command buffers of a transient pool (reset whole at each
 * use), and a fence that an empty submission signals once the copies into
 * the buffer are done. A readback is reserved to a size, recorded, submitted
 * with the application's batches, waited for on the engine's queue thread,
 * and recycled into its owner's free list when its last reference goes.
 *
 * Its owners (indirect_readback.c, driver_readback.c) embed it first in
 * their own struct and keep only what is theirs: what they copy where, and
 * how their reader decodes it. The application's thread never waits here,
 * except on a readback whose fence could not be submitted.
 */
#ifndef TALLY_LAYER_HOST_READBACK_H
#define TALLY_LAYER_HOST_READBACK_H

#include "layer_state.h"

enum { LAYER_HOST_READBACK_MAX_COMMAND_BUFFERS = 2 };

typedef struct layer_host_readback {
    layer_device *device;
    uint32_t family; /* of the queues it is submitted to */
    VkCommandPool pool;
    VkCommandBuffer command_buffers[LAYER_HOST_READBACK_MAX_COMMAND_BUFFERS];
    uint32_t command_buffer_count;
    VkFence fence;
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize memory_size; /* the block; the buffer takes `capacity` of it */
    const uint8_t *mapped;
    VkDeviceSize capacity;
    VkDeviceSize used;    /* by this use's plan, from 0 at each acquire */
    atomic_uint refs;     /* the submitting thread's, and each engine submission's */
    bool fence_submitted; /* and not yet waited for and reset */
    bool copied;          /* the fence signalled: the copies are in the buffer */
    struct layer_host_readback *next_free;
} layer_host_readback;

/* Made by an owner: its struct allocated zeroed, its own fields set, and
 * layer_host_readback_init called on its embedded readback. */
typedef layer_host_readback *(*layer_host_readback_create)(layer_device *device, uint32_t family);
/* Frees an owner's struct, after layer_host_readback_fini. */
typedef void (*layer_host_readback_destroy)(layer_host_readback *readback);

/* The pool, its `command_buffer_count` command buffers and the fence;
 * false if one could not be made (what was made goes with _fini). */
bool layer_host_readback_init(layer_host_readback *readback, layer_device *device, uint32_t family,
                              uint32_t command_buffer_count);
/* Destroys what _init and _reserve made, the buffer before its memory. */
void layer_host_readback_fini(layer_host_readback *readback);

/* A free readback of the family from `*free_list` (guarded by `lock`), or a
 * new one from `create`; one reference, nothing used, nothing copied. */
layer_host_readback *layer_host_readback_acquire(layer_host_readback **free_list,
                                                 pthread_mutex_t *lock, layer_device *device,
                                                 uint32_t family,
                                                 layer_host_readback_create create);
void layer_host_readback_ref(layer_host_readback *readback);
/* True when that was the last reference: the caller recycles it. */
bool layer_host_readback_unref(layer_host_readback *readback);
/* Back into `*free_list`, its fence waited for and unsignalled again; left
 * out for good when the engine's deadline at exit passed first. */
void layer_host_readback_recycle(layer_host_readback *readback, layer_host_readback **free_list,
                                 pthread_mutex_t *lock);
/* At device destruction, when no readback is in use any more. */
void layer_host_readback_destroy_all(layer_host_readback **free_list,
                                     layer_host_readback_destroy destroy);

/* Where `size` bytes go in the buffer, at a multiple of `align` (a power of two). */
VkDeviceSize layer_host_readback_place(layer_host_readback *readback, VkDeviceSize size,
                                       VkDeviceSize align);
/* A buffer of at least `used` bytes, bound and mapped. */
bool layer_host_readback_reserve(layer_host_readback *readback);
/* The pool reset and every command buffer begun, for one submission. */
bool layer_host_readback_begin(layer_host_readback *readback);
/* The copies' writes made visible to the host, at the end of the last
 * command buffer, and every command buffer ended. */
bool layer_host_readback_end(layer_host_readback *readback);
/* After the batches that hold its command buffers: an empty submission
 * signals the fence; false if it could not (the queue is then waited idle,
 * and nothing can be read back). */
bool layer_host_readback_submitted(layer_host_readback *readback, VkQueue queue);
/* On the engine's queue thread: true once the copies are in the buffer;
 * false when the engine's deadline at exit (tally_device_wait_deadline_ns)
 * passed first. */
bool layer_host_readback_wait(layer_host_readback *readback);

#endif
