/*
 * Reading indirect parameters back. A submission whose command buffers hold
 * indirect commands gets one more batch, the layer's: a barrier after all
 * earlier work, then a copy of every command's records (and count) into a
 * host-visible buffer. The copy rides in the application's vkQueueSubmit, so
 * the application's fence covers it and no buffer it copies can be destroyed
 * under it. An empty submission then signals the layer's fence, which the
 * engine's queue thread waits on before it executes the submission and asks
 * for the records (tally_indirect_reader). The values read are those at the
 * end of the submission: what the draws read, unless the application rewrote
 * them between the draws and the end of the submission.
 *
 * The readback's buffer, command buffer and fence are host_readback.h's;
 * what is this file's is what it copies: the barrier before the copies
 * names the stages and accesses that can write a buffer on the queue's
 * family (never ALL_COMMANDS), as validation's best practices ask.
 */
#include "array_grow.h"
#include "host_readback.h"

#include <stdlib.h>
#include <string.h>

typedef struct readback_entry {
    uint64_t key;
    VkDeviceSize at;       /* of the records, in the readback buffer */
    VkDeviceSize count_at; /* of the count, when `counted` */
    uint32_t max_count, stride;
    bool counted;
} readback_entry;

struct layer_readback {
    layer_host_readback host; /* first: the free list holds it */
    /* What can have written indirect parameters on this queue family. */
    VkPipelineStageFlags writer_stages;
    VkAccessFlags writer_access;
    readback_entry *entries;
    uint32_t entry_count, entry_capacity;
    tally_indirect_reader reader;
};

static void readback_destroy(layer_host_readback *host)
{
    layer_readback *rb = (layer_readback *)host;
    layer_host_readback_fini(host);
    free(rb->entries);
    free(rb);
}

static void reader_wait(void *user);
static bool reader_read(void *user, uint64_t key, tally_indirect_records *records);
static void reader_release(void *user);

/* The stages (and their accesses) that can write a buffer on queues of the
 * family, as far as the device enabled them: transfers, and shader storage
 * writes of the stages the family runs. Host writes before the submission
 * are visible to it without a barrier. */
static void note_writers(layer_readback *rb, layer_device *device, uint32_t family)
{
    uint32_t count = 0;
    VkQueueFamilyProperties families[16];
    device->instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(device->physical_device,
                                                                      &count, NULL);
    if (count > 16)
        count = 16;
    device->instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(device->physical_device,
                                                                      &count, families);
    VkQueueFlags flags = family < count ? families[family].queueFlags : 0;
    rb->writer_stages = VK_PIPELINE_STAGE_TRANSFER_BIT;
    rb->writer_access = VK_ACCESS_TRANSFER_WRITE_BIT;
    if (flags & (VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT))
        rb->writer_access |= VK_ACCESS_SHADER_WRITE_BIT;
    if (flags & VK_QUEUE_COMPUTE_BIT)
        rb->writer_stages |= VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    if (!(flags & VK_QUEUE_GRAPHICS_BIT))
        return;
    rb->writer_stages |=
        VK_PIPELINE_STAGE_VERTEX_SHADER_BIT | VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT;
    if (device->geometry_shader)
        rb->writer_stages |= VK_PIPELINE_STAGE_GEOMETRY_SHADER_BIT;
    if (device->tessellation_shader)
        rb->writer_stages |= VK_PIPELINE_STAGE_TESSELLATION_CONTROL_SHADER_BIT |
                             VK_PIPELINE_STAGE_TESSELLATION_EVALUATION_SHADER_BIT;
    if (layer_extension_enabled(&device->extensions, LAYER_EXT_EXT_transform_feedback)) {
        rb->writer_stages |= VK_PIPELINE_STAGE_TRANSFORM_FEEDBACK_BIT_EXT;
        rb->writer_access |= VK_ACCESS_TRANSFORM_FEEDBACK_WRITE_BIT_EXT;
    }
}

/* One command buffer: the copies, after the application's batches. */
static layer_host_readback *readback_create(layer_device *device, uint32_t family)
{
    layer_readback *rb = calloc(1, sizeof(*rb));
    if (!rb)
        return NULL;
    rb->reader = (tally_indirect_reader){reader_wait, reader_read, reader_release, rb};
    note_writers(rb, device, family);
    if (!layer_host_readback_init(&rb->host, device, family, 1)) {
        readback_destroy(&rb->host);
        return NULL;
    }
    return &rb->host;
}

/* The last reference gives it back, its fence unsignalled again. */
static void readback_unref(layer_readback *rb)
{
    layer_device *device = rb->host.device;
    if (layer_host_readback_unref(&rb->host))
        layer_host_readback_recycle(&rb->host, &device->free_readbacks, &device->readback_lock);
}

void layer_readbacks_destroy_all(layer_device *device)
{
    layer_host_readback_destroy_all(&device->free_readbacks, readback_destroy);
}

static readback_entry *add_entry(layer_readback *rb)
{
    if (rb->entry_count == rb->entry_capacity) {
        readback_entry *entries = layer_array_grow(rb->entries, &rb->entry_capacity,
                                                   (uint64_t)rb->entry_count + 1, sizeof(*entries));
        if (!entries)
            return NULL;
        rb->entries = entries;
    }
    return &rb->entries[rb->entry_count++];
}

/* Where in the readback buffer `size` bytes go, 4-byte aligned as records are. */
static VkDeviceSize place(layer_readback *rb, VkDeviceSize size)
{
    return layer_host_readback_place(&rb->host, size, 4);
}

/* The records of a command that lie inside its buffer: a valid command's
 * all lie inside, and an invalid one reads no further than the buffer. */
static uint32_t records_inside(const layer_indirect_command *c, const layer_buffer *buffer)
{
    if (!buffer || c->offset > buffer->size || buffer->size - c->offset < c->record_size)
        return 0;
    if (c->max_count <= 1 || c->stride == 0)
        return c->max_count ? 1 : 0;
    VkDeviceSize fit = (buffer->size - c->offset - c->record_size) / c->stride + 1;
    return fit < c->max_count ? (uint32_t)fit : c->max_count;
}

static void plan_entry(layer_readback *rb, const layer_indirect_command *c)
{
    layer_device *device = rb->host.device;
    uint32_t count = records_inside(c, object_map_get(&device->buffers, (uint64_t)c->buffer));
    const layer_buffer *count_buffer =
        c->count_buffer ? object_map_get(&device->buffers, (uint64_t)c->count_buffer) : NULL;
    bool counted = c->count_buffer != VK_NULL_HANDLE;
    if (!count || (counted && (!count_buffer || c->count_offset > count_buffer->size ||
                               count_buffer->size - c->count_offset < sizeof(uint32_t))))
        return; /* never read: the command counts as unknown */
    readback_entry *e = add_entry(rb);
    if (!e)
        return;
    *e = (readback_entry){
        .key = c->key, .max_count = count, .stride = c->stride, .counted = counted};
    e->at = place(rb, (VkDeviceSize)(count - 1) * c->stride + c->record_size);
    if (counted)
        e->count_at = place(rb, sizeof(uint32_t));
}

static void copy(layer_readback *rb, VkBuffer from, VkDeviceSize offset, VkDeviceSize to,
                 VkDeviceSize size)
{
    VkBufferCopy region = {.srcOffset = offset, .dstOffset = to, .size = size};
    rb->host.device->dispatch.CmdCopyBuffer(rb->host.command_buffers[0], from, rb->host.buffer, 1,
                                            &region);
}

/* After everything submitted before, whatever wrote the parameters. */
static void barrier_after_writers(layer_readback *rb)
{
    VkMemoryBarrier memory = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                              .srcAccessMask = rb->writer_access,
                              .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT};
    rb->host.device->dispatch.CmdPipelineBarrier(rb->host.command_buffers[0], rb->writer_stages,
                                                 VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &memory, 0,
                                                 NULL, 0, NULL);
}

static bool record_copies(layer_readback *rb, const layer_command_buffer *const *cbs,
                          uint32_t count)
{
    if (!layer_host_readback_begin(&rb->host))
        return false;
    barrier_after_writers(rb);
    uint32_t e = 0;
    for (uint32_t i = 0; i < count; i++) {
        for (uint32_t j = 0; j < cbs[i]->indirect.count; j++) {
            const layer_indirect_command *c = &cbs[i]->indirect.items[j];
            if (e == rb->entry_count || rb->entries[e].key != c->key)
                continue; /* not planned */
            const readback_entry *entry = &rb->entries[e++];
            copy(rb, c->buffer, c->offset, entry->at,
                 (VkDeviceSize)(entry->max_count - 1) * c->stride + c->record_size);
            if (entry->counted)
                copy(rb, c->count_buffer, c->count_offset, entry->count_at, sizeof(uint32_t));
        }
    }
    return layer_host_readback_end(&rb->host);
}

static int compare_entries(const void *a, const void *b)
{
    uint64_t x = ((const readback_entry *)a)->key, y = ((const readback_entry *)b)->key;
    return (x > y) - (x < y);
}

layer_readback *layer_readback_prepare(layer_device *device, VkQueue queue,
                                       const layer_command_buffer *const *command_buffers,
                                       uint32_t count)
{
    uintptr_t family = (uintptr_t)object_map_get(&device->queues, (uint64_t)(uintptr_t)queue);
    if (!count || !family)
        return NULL;
    layer_readback *rb = (layer_readback *)layer_host_readback_acquire(
        &device->free_readbacks, &device->readback_lock, device, (uint32_t)(family - 1),
        readback_create);
    if (!rb)
        return NULL;
    rb->entry_count = 0;
    for (uint32_t i = 0; i < count; i++)
        for (uint32_t j = 0; j < command_buffers[i]->indirect.count; j++)
            plan_entry(rb, &command_buffers[i]->indirect.items[j]);
    if (!rb->entry_count || !layer_host_readback_reserve(&rb->host) ||
        !record_copies(rb, command_buffers, count)) {
        readback_unref(rb);
        return NULL;
    }
    /* Planned in recording order, which record_copies walks; read by key. */
    qsort(rb->entries, rb->entry_count, sizeof(*rb->entries), compare_entries);
    return rb;
}

VkCommandBuffer layer_readback_command_buffer(const layer_readback *readback)
{
    return readback->host.command_buffers[0];
}

bool layer_readback_submitted(layer_readback *rb, VkQueue queue)
{
    return layer_host_readback_submitted(&rb->host, queue);
}

const tally_indirect_reader *layer_readback_reader(const layer_readback *readback)
{
    return &readback->reader;
}

void layer_readback_release(layer_readback *readback)
{
    if (readback)
        readback_unref(readback);
}

/* The engine takes one reference per submission it accepted with the reader. */
void layer_readback_ref(layer_readback *readback)
{
    layer_host_readback_ref(&readback->host);
}

static void reader_wait(void *user)
{
    layer_readback *rb = user;
    layer_host_readback_wait(&rb->host);
}

static bool reader_read(void *user, uint64_t key, tally_indirect_records *records)
{
    const layer_readback *rb = user;
    readback_entry wanted = {.key = key};
    const readback_entry *e = rb->host.copied ? bsearch(&wanted, rb->entries, rb->entry_count,
                                                        sizeof(*rb->entries), compare_entries)
                                              : NULL;
    if (!e)
        return false;
    uint32_t count = e->max_count;
    if (e->counted) {
        uint32_t written;
        memcpy(&written, rb->host.mapped + e->count_at, sizeof(written));
        count = written < count ? written : count;
    }
    *records = (tally_indirect_records){
        .data = rb->host.mapped + e->at, .count = count, .stride = e->stride};
    return true;
}

static void reader_release(void *user)
{
    readback_unref(user);
}
